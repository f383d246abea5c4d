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

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["atomic_write", "atomic_write_json", "atomic_write_text"]


def atomic_write(path: str | Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it into place."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    # mkstemp makes the file private (0600); give it the mode a plain open() would.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        write(tmp)
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def atomic_write_text(path: str | Path, text: str) -> Path:
    def write(tmp: Path) -> None:
        tmp.write_text(text)

    return atomic_write(path, write)


def atomic_write_json(path: str | Path, data: Any) -> Path:
    return atomic_write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")
