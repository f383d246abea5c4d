"""Run folders: swapping a folder in whole, and the lock a trainer holds on its run
folder (atomic file writes are :mod:`matador_env.files`)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from matador_env.files import folder_problem

RUN_ARGS_FILE = "args.json"
"""The file that makes a folder a run's: ``python -m train`` writes a run's arguments
there first, ``train.rllib`` once its algorithm is built (a run that fails to start
leaves none)."""


def new_run_problem(folder: str | Path) -> str | None:
    """Why ``folder`` cannot take a new run, or None: :func:`matador_env.files.folder_problem`'s
    reason, or that it holds a run already (its :data:`RUN_ARGS_FILE`). Every command
    that starts a run asks this, so they refuse the same folders in the same words."""
    problem = folder_problem(folder)
    if problem is None and (Path(folder) / RUN_ARGS_FILE).exists():
        problem = f"{folder} already holds a run"
    return problem


def replace_dir(dst: Path, fill: Callable[[Path], object]) -> Path:
    """Replace the folder ``dst`` by the one ``fill(tmp)`` creates at ``tmp``, a sibling
    path that does not exist yet, swapped in by renames: a crash leaves the old folder
    or the new one in place, never a half-written one. A crash between the two renames
    leaves the old one as ``.<name>.old``, which :func:`recover_dir` (called here
    first) puts back."""
    recover_dir(dst)
    tmp = dst.with_name(f".{dst.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    fill(tmp)
    old = dst.with_name(f".{dst.name}.old")
    if dst.exists():
        if old.exists():
            shutil.rmtree(old)
        dst.rename(old)
    tmp.rename(dst)
    if old.exists():
        shutil.rmtree(old)
    return dst


def recover_dir(dst: Path) -> None:
    """Finish or undo a :func:`replace_dir` of ``dst`` that a crash cut short: the old
    folder goes back where the swap had moved it away, or is removed once the new one
    is in place."""
    old = dst.with_name(f".{dst.name}.old")
    if not old.is_dir():
        return
    if dst.exists():
        shutil.rmtree(old)
    else:
        old.rename(dst)


def recover_run_folder(run_dir: Path) -> None:
    """Undo what a killed trainer left half done in ``run_dir`` (whose lock the caller
    holds, so nothing else is writing there): folder swaps cut between their renames
    are recovered (:func:`recover_dir`), and the temporaries of writes that never
    finished (``.<name>.tmp`` and ``.<name>.<random>.tmp``) are removed."""
    for path in sorted(run_dir.rglob(".*.old"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and path.name.endswith(".old"):
            recover_dir(path.with_name(path.name[1 : -len(".old")]))
    for path in sorted(run_dir.rglob(".*.tmp"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


class RunFolderError(ValueError):
    """A file of a run folder that cannot be used; the message names it and what to do."""


class FolderBusyError(ValueError):
    """Another process holds the lock of a folder; the message names it and its pid."""


class FolderLock:
    """An exclusive lock on a folder while one process works in it.

    ``fcntl.flock`` on ``<folder>/<name>``, which holds the holder's pid. The kernel
    drops the lock when its process ends, however it ends, so a lock file left by
    a dead process does not block anyone.
    """

    def __init__(self, folder: str | Path, name: str = "train.lock") -> None:
        self.path = Path(folder) / name
        self._fd: int | None = None

    def acquire(self) -> FolderLock:
        import fcntl

        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise FolderBusyError(
                f"{self.path.parent} is in use by another trainer (pid {holder}); "
                "wait for it to end or stop it, or give another folder"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor releases the flock
            self._fd = None

    def __enter__(self) -> FolderLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
