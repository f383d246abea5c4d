"""Atomic file writes: a crash or an interrupt never leaves a half-written file behind.

Every file the project writes whole goes through :func:`atomic_write`: the bot
runtime's pictures and records as well as training's checkpoints and the arena's
reports. Logs that grow while they are written (TensorBoard's event files, the
demo's training log) are appended to instead. A process killed inside
:func:`atomic_write` can leave its temporary ``.<name>.<random>.tmp`` beside
``path`` (never a damaged ``path``); a training run's folder is cleared of them
when it resumes.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_write",
    "atomic_write_all",
    "atomic_write_json",
    "atomic_write_text",
    "file_problem",
    "folder_problem",
    "lookup_problem",
    "make_folder",
]


def _temporary_beside(target: Path) -> Path:
    """A new empty file ``.<name>.<random>.tmp`` in ``target``'s folder, with the mode
    a plain ``open()`` would give ``target`` (mkstemp makes it private, 0600)."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp_name, 0o666 & ~umask)
    return Path(tmp_name)


def _write_synced(tmp: Path, write: Callable[[Path], object]) -> None:
    write(tmp)
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temporary_beside(target)
    try:
        _write_synced(tmp, write)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def atomic_write_all(
    folder: str | Path, files: Mapping[str, Callable[[Path], object] | None]
) -> list[Path]:
    """Switch ``folder`` to a set of files as a whole: ``files`` maps each file's name
    to what writes it (``write(path)``, as :func:`atomic_write` calls it), or to None
    for a file the set does not have. Every file is written to a temporary beside it
    first; only when all are written is a file the set does not have removed and each
    temporary renamed to its name. If a write fails, the temporaries are removed and
    ``folder`` holds what it held. A name taken by a folder, which no rename or
    removal could replace, is refused (``IsADirectoryError``) before anything is
    written, so that the switch cannot stop halfway. Returns the paths written."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for name in files:
        if (out / name).is_dir():
            raise IsADirectoryError(
                errno.EISDIR, "a folder where a file of the set is to be written", str(out / name)
            )
    staged: list[tuple[Path, Path]] = []
    try:
        for name, write in files.items():
            if write is not None:
                tmp = _temporary_beside(out / name)
                staged.append((tmp, out / name))
                _write_synced(tmp, write)
        for name, write in files.items():
            if write is None:
                (out / name).unlink(missing_ok=True)  # an earlier set's, not this one's
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
    return [path for _, path in staged]


def atomic_write_text(path: str | Path, text: str) -> Path:
    def write(tmp: Path) -> None:
        tmp.write_text(text)

    return atomic_write(path, write)


def atomic_write_json(path: str | Path, data: Any) -> Path:
    return atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def lookup_problem(path: str | Path) -> str | None:
    """Why the system cannot look ``path`` up, or None (whether it exists or not):
    ``Path.exists`` answers False for a path that is not there, but raises for one
    whose name is longer than the file system takes, or behind a folder it may not
    search. For command lines to name such a path instead of ending in a traceback."""
    try:
        Path(path).exists()
    except OSError as e:
        return e.strerror or str(e)
    return None


def folder_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be a folder to write into, or None: it, or a folder it would
    lie in, exists and is not a folder; the nearest folder of it that exists takes no
    new entry (read-only, not ours, or a file system such as ``/proc`` that takes
    none); or the system cannot look it up (see :func:`lookup_problem`). (For command
    lines to refuse such an output folder before their work, not after it.)"""
    out = Path(path)
    if str(path) == "":
        return "an empty path is not a folder"
    # Looked up whole first: once ``out`` can be, so can each folder on its way.
    why = lookup_problem(out)
    if why is not None:
        return f"{out} cannot be used ({why})"
    for part in (out, *out.parents):
        if part.exists():
            if part.is_dir():
                return _entry_problem(out, part)
            where = "exists" if part == out else f"lies in {part}, which exists"
            return f"{out} {where} and is not a folder"
    return None


def _entry_problem(out: Path, folder: Path) -> str | None:
    """Why ``folder`` (``out`` or the nearest of its folders that exists) takes no new
    entry, or None. Tried with an empty folder made and removed at once: permission
    bits do not tell (root passes them, yet ``/proc`` and read-only mounts refuse)."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".write-check-", dir=folder))
    except OSError as e:
        why = e.strerror or str(e)
        if folder == out:
            return f"{out} cannot be written into ({why})"
        return f"{out} cannot be made: {folder} takes no new folder ({why})"
    return None


def file_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be a file to write, or None: it cannot be looked up, it is a
    folder, or its folder cannot be one (see :func:`folder_problem`). (For command
    lines to refuse an output file before their work, not after it.)"""
    out = Path(path)
    why = lookup_problem(out)
    if why is not None:
        return f"{out} cannot be used ({why})"
    if out.is_dir():
        return f"{out} is a folder; give a file"
    return folder_problem(out.parent)


def make_folder(path: str | Path) -> str | None:
    """Make the folder ``path`` (with its parents) unless it is there; what stopped
    that, or None."""
    problem = folder_problem(path)
    if problem is not None:
        return problem
    try:
        Path(path).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        return f"{path} cannot be made ({e.strerror})"
    return None


def folder_arg(text: str) -> Path:
    """An argparse ``type`` for an output folder: the path, refusing an empty one (which
    ``Path`` would read as the current folder)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path is not a folder")
    return Path(text)


def file_arg(text: str) -> Path:
    """An argparse ``type`` for an output file: the path, refusing an empty one (which
    ``Path`` would read as the current folder)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path is not a file")
    return Path(text)
