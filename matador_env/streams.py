"""The commands' standard streams, closed from the start or during the run, and how a
command ends.

A command started with a descriptor closed (``<&-``, ``>&-``, ``2>&-``, as a detached
job or a service may start it) finds Python's ``sys.stdin``, ``sys.stdout`` or
``sys.stderr`` None; the commands run on as they would with ``/dev/null`` there: a
closed input reads as ended, a closed output keeps nothing.

- :func:`run_main` runs a command's ``main`` as its process: it first puts ``/dev/null``
  on a closed output (:func:`null_closed_outputs`, which opens it on the descriptor, so
  that code needing a real file there, as Ray does, finds one), and ends the command in
  one line on Ctrl-C and quietly when the reader of its output goes away (``| head``).
- For callers in process whose streams are None: :func:`standard_streams` resolves the
  streams of the functions that take them as arguments (terminal play, replay);
  :func:`progress_bar` makes every progress bar, which tqdm would otherwise write to
  None and fail on (its issues #1523 and #1593); ``train.rllib`` calls
  :func:`null_closed_outputs` before Ray starts. ``print`` needs none of them: it
  writes nothing to a None ``sys.stdout``.
- :func:`note_when_slow` says on the error stream why a block that is quick once its
  work is cached is taking long (numba compiling kernels on their first use)."""

from __future__ import annotations

import contextlib
import io
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, TextIO, cast

__all__ = [
    "INTERRUPTED",
    "NUMBA_FIRST_USE",
    "READER_GONE",
    "command_name",
    "interrupted",
    "note_when_slow",
    "null_closed_outputs",
    "progress_bar",
    "run_main",
    "standard_streams",
]


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


NUMBA_FIRST_USE = (
    "numba's first use on this install: about 30 s; later runs load them from its cache"
)
"""How long numba's first compile of a set of kernels takes: the words the project's
notes (:func:`note_when_slow`) put in brackets after what is compiling."""


@contextlib.contextmanager
def note_when_slow(message: str, after_s: float = 2.0) -> Iterator[None]:
    """Write ``message`` as a line on the error stream if the block is still running
    ``after_s`` seconds after it began; nothing if it ends sooner. For work that takes
    a fraction of a second once cached and half a minute the first time (numba
    compiling kernels into its cache on disk), so that a command that has printed
    nothing yet does not sit silent. A closed or broken error stream gets nothing."""

    def write() -> None:
        with contextlib.suppress(OSError, ValueError):  # closed, or its reader gone
            if sys.stderr:
                print(message, file=sys.stderr, flush=True)

    timer = threading.Timer(after_s, write)
    timer.daemon = True  # never keeps the process alive
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        timer.join()  # no thread left behind (a fork or the next note must not see it)


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
        except OSError:  # closed
            _devnull_onto(fd)
        # The process's own stream from now on, so never closed by a context manager.
        stream = open(fd, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
        setattr(sys, name, stream)


INTERRUPTED = 130
"""Exit status of a command stopped by Ctrl-C: 128 + SIGINT, as a shell reports it."""

READER_GONE = 141
"""Exit status of a command whose output's reader went away: 128 + SIGPIPE, the status a
shell gives a program that a closed pipe stopped (``seq 1000000 | head -1``)."""


_ctrl_c: list[int] = []
"""Non-empty once :func:`run_main`'s handler has seen Ctrl-C (see :func:`interrupted`)."""


def _note_ctrl_c(signum: int, frame: object) -> None:
    _ctrl_c.append(signum)
    raise KeyboardInterrupt


def interrupted() -> bool:
    """Whether this command was stopped by Ctrl-C (under :func:`run_main`). A Ctrl-C
    that lands while a native library is imported can surface as an ``ImportError``
    with no trace of the interrupt (onnxruntime's ``import numpy failed``), which a
    lazy import would report as the library missing, or take as a reason to fall back
    to a slower path and go on: such code asks this first."""
    return bool(_ctrl_c)


def run_main(main: Callable[[], object]) -> NoReturn:
    """Run a command's ``main`` as its process: exit with the status it returns (an int;
    anything else is 0), never with a traceback for these two ends:

    - Ctrl-C that ``main`` leaves to it ends the command with one line on the error
      stream, ``python -m NAME: interrupted``, and :data:`INTERRUPTED`; so does an
      error, or a status other than 0 and 130, that follows a Ctrl-C (a library can
      turn the interrupt into another error: :func:`interrupted`). (Commands that
      keep their work on Ctrl-C, as training does, say so and return 130 themselves.)
    - When the reader of its output goes away (``| head``), the write that finds the
      pipe closed raises ``BrokenPipeError``; the command stops there and exits quietly
      with :data:`READER_GONE`. Each broken output is pointed at ``/dev/null``, so that
      Python's own flush at exit has nothing to fail on. A ``BrokenPipeError`` of
      another pipe (a socket, a child's input) is raised.

    Either way everything on the way up has run (files are written atomically,
    processes stopped). A standard output or error closed from the start is
    ``/dev/null`` for the whole run (:func:`null_closed_outputs`): Python would leave
    it None, and what goes there would land elsewhere (``print(file=None)`` and
    argparse's usage write to the output instead) or fail."""
    null_closed_outputs()
    # Ctrl-C noted as well as raised, so that an interrupt that surfaced as another
    # error (see interrupted()) still ends the command as one; a process that ignores
    # SIGINT (started in the background) keeps ignoring it.
    previous = signal.getsignal(signal.SIGINT)
    noting = (
        previous is signal.default_int_handler
        and threading.current_thread() is threading.main_thread()
    )
    _ctrl_c.clear()
    if noting:
        signal.signal(signal.SIGINT, _note_ctrl_c)
    try:
        try:
            code = main()
        except KeyboardInterrupt:
            _say_interrupted()
        except BrokenPipeError:
            if not _null_broken_outputs():
                raise
            raise SystemExit(READER_GONE) from None
        except Exception:
            if not interrupted():
                raise
            _say_interrupted()
        if interrupted() and code not in (0, None, INTERRUPTED):  # a refusal it caused
            _say_interrupted()
        raise SystemExit(code if isinstance(code, int) else 0)
    finally:
        if noting:  # for a caller in the same process (a test)
            signal.signal(signal.SIGINT, previous)


def _say_interrupted() -> NoReturn:
    if sys.stderr:  # print(file=None) would write to the output instead
        print(f"\n{command_name()}: interrupted", file=sys.stderr)
    raise SystemExit(INTERRUPTED) from None


def command_name() -> str:
    """How the running command was started: ``python -m NAME`` for a module run with
    ``-m`` (a package's ``__main__`` named by its package), else the script's name."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    name = getattr(spec, "name", None)
    if isinstance(name, str) and name:
        return "python -m " + name.removesuffix(".__main__")
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "python"


def _null_broken_outputs() -> bool:
    """Point the standard outputs whose reader is gone at ``/dev/null``; whether there
    was one. A flush cannot tell (the failed write's bytes are dropped, and the next
    flush succeeds), so the pipe is asked: ``poll`` reports an error on a pipe's
    writing end once no one reads it."""
    broken = False
    for stream in (sys.stdout, sys.stderr):
        try:
            fd = stream.fileno() if stream is not None else -1
        except (OSError, ValueError):  # closed, or not a file: no pipe of ours
            continue
        if fd >= 0 and _unread(fd):
            _devnull_onto(fd)
            broken = True
    return broken


def _unread(fd: int) -> bool:
    """Whether the pipe or socket written through ``fd`` has lost its reader."""
    if not hasattr(select, "poll"):  # Windows: never said
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _devnull_onto(fd: int) -> None:
    """Descriptor ``fd`` leads to ``/dev/null`` from now on, open or closed before."""
    null = os.open(os.devnull, os.O_WRONLY)
    if null != fd:  # with fd closed, the lowest free descriptor may be fd itself
        os.dup2(null, fd)
        os.close(null)
