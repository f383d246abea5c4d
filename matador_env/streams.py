"""The commands' standard streams, any of them closed.

A command started with a descriptor closed (``<&-``, ``>&-``, ``2>&-``, as a detached
job or a service may start it) finds Python's ``sys.stdin``, ``sys.stdout`` or
``sys.stderr`` None. The commands run on as they would with ``/dev/null`` there: a
closed input reads as ended and a closed output keeps nothing.
:func:`standard_streams` resolves the streams of the commands that take them as
arguments (terminal play, replay); :func:`progress_bar` is every command's progress
bar, which tqdm would otherwise write to None and fail on (its issues #1523 and
#1593). ``print`` needs neither: it writes nothing to a None ``sys.stdout``."""

from __future__ import annotations

import io
import sys
from typing import Any, TextIO, cast

__all__ = ["progress_bar", "standard_streams"]


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
