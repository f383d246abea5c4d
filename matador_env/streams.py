"""The commands' standard streams, any of them closed.

A command started with a descriptor closed (``<&-``, ``>&-``, ``2>&-``, as a detached
job or a service may start it) finds Python's ``sys.stdin``, ``sys.stdout`` or
``sys.stderr`` None. The commands run on as they would with ``/dev/null`` there: a
closed input reads as ended and a closed output keeps nothing.
:func:`standard_streams` resolves the streams of the commands that take them as
arguments (terminal play, replay); :func:`progress_bar` is every command's progress
bar, which tqdm would otherwise write to None and fail on (its issues #1523 and
#1593). ``print`` needs neither: it writes nothing to a None ``sys.stdout``.
:func:`null_closed_outputs` goes deeper, for the commands that start Ray, which
needs a real file there (a descriptor, which it hands to ``faulthandler`` and to the
processes it starts)."""

from __future__ import annotations

import io
import os
import sys
from typing import Any, TextIO, cast

__all__ = ["null_closed_outputs", "progress_bar", "standard_streams"]


class _DiscardedOutput(io.TextIOBase):
    """An output that keeps nothing, as ``/dev/null`` would."""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        return len(text)


def standard_streams(
    stdin: TextIO | None, stdout: TextIO | None, stderr: TextIO | None
) -> tuple[TextIO, TextIO, TextIO]:
    """The input, output and error streams of a command: those given (tests pass
    ``io.StringIO`` objects), else the process's, a closed input as an empty one and a
    closed output as one that keeps nothing."""
    source = stdin or sys.stdin or io.StringIO()
    out = stdout or sys.stdout or cast(TextIO, _DiscardedOutput())
    err = stderr or sys.stderr or cast(TextIO, _DiscardedOutput())
    return source, out, err


def progress_bar(**options: Any) -> Any:
    """A tqdm bar on the error stream (``options`` go to ``tqdm``), drawn nowhere when
    that stream is closed. tqdm is imported here, on first use: the package itself
    does not need it."""
    from tqdm import tqdm

    return tqdm(file=sys.stderr, disable=not sys.stderr, **options)


def null_closed_outputs() -> None:
    """Put ``/dev/null`` in the place of a closed standard output or error: a closed
    descriptor 1 or 2 is opened on it, for this process and those it starts, and a None
    ``sys.stdout`` or ``sys.stderr`` becomes a text file on that descriptor. Ray's
    ``ray.init`` enables ``faulthandler`` on ``sys.stderr`` and fails when it is None,
    so ``python -m train.rllib 2>&-`` ended before its first step."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:  # closed: the lowest free descriptor may be another
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
        # The process's own stream from now on, so never closed by a context manager.
        stream = open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        setattr(sys, name, stream)
