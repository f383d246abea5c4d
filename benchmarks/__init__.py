"""The benchmarks' command lines share the argparse types of their budgets."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def positive_number(text: str) -> float:
    """An argparse ``type``: a finite number above 0 (a time budget), else one line
    naming what is allowed (``float`` alone lets ``0``, ``-1``, ``nan`` and ``inf``
    through, which the measurements then divide by or never end on)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; allowed: a number above 0")
    return value


def int_at_least(minimum: int, why: str = "") -> Callable[[str], int]:
    """An argparse ``type``: an integer, ``minimum`` or more, else one line naming what
    is allowed (and ``why``, appended to it)."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not allowed; allowed: an integer, {minimum} or more{why}"
            )
        return value

    return convert


positive_int = int_at_least(1)
"""An argparse ``type``: an integer, 1 or more (a count)."""
