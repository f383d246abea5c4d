"""The benchmarks' command lines share the argparse types of their budgets."""

from __future__ import annotations

import argparse
import math


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


def positive_int(text: str) -> int:
    """An argparse ``type``: an integer, 1 or more, else one line naming what is allowed."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; allowed: an integer, 1 or more")
    return value
