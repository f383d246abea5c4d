"""Benchmarks of the engine, the environments, the bots, training and strength;
their command lines share the number flags of :mod:`matador_env.flags`."""

from __future__ import annotations

import sys
from collections.abc import Callable


def run_command(main: Callable[[], object], name: str) -> None:
    """Run a benchmark's ``main`` as its command: Ctrl-C ends it with one line and exit
    status 130, as the project's other commands end, instead of a traceback. The
    lines printed before it stay as they were printed."""
    try:
        main()
    except KeyboardInterrupt:
        print(f"\npython -m benchmarks.{name}: interrupted", file=sys.stderr)
        raise SystemExit(130) from None
