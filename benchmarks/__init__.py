"""Benchmarks of the engine, the environments, the bots, training and strength;
their command lines share the number flags of :mod:`matador_env.flags`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

from matador_env.streams import run_main


def run_command(main: Callable[[], object], name: str) -> NoReturn:
    """Run a benchmark's ``main`` as its command (:func:`matador_env.streams.run_main`):
    Ctrl-C ends it with one line and exit status 130, as the project's other commands
    end, instead of a traceback. The lines printed before it stay as they were printed."""

    def interrupted_in_one_line() -> object:
        try:
            return main()
        except KeyboardInterrupt:
            print(f"\npython -m benchmarks.{name}: interrupted", file=sys.stderr)
            raise SystemExit(130) from None

    run_main(interrupted_in_one_line)
