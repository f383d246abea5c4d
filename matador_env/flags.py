"""Argparse ``type``s for the command lines' numbers: counts, seeds and time budgets,
each refused in one line that names what is allowed (the paths' are
:func:`matador_env.files.folder_arg` and :func:`~matador_env.files.file_arg`).

An integer is written in the digits 0-9 alone (:func:`~matador_env.engine.tiles.parse_digits`),
as the rules' text form and terminal play read them: ``int`` would also take ``"３"``,
``"1_000"``, ``" +3"`` and refuse more than 4,300 digits with its own error."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from .engine.state import SEED_LIMIT
from .engine.tiles import parse_digits, shown_value

__all__ = [
    "LARGEST_TRAINING_SEED",
    "int_at_least",
    "integer_arg",
    "positive_int",
    "positive_number",
    "seed_arg",
    "seed_at_most",
    "training_seed_arg",
]


def positive_number(text: str) -> float:
    """A finite number above 0 (a time budget), else one line naming what is allowed
    (``float`` alone lets ``0``, ``-1``, ``nan`` and ``inf`` through, which the
    measurements then divide by or never end on)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; allowed: a number above 0")
    return value


def int_at_least(minimum: int, why: str = "") -> Callable[[str], int]:
    """An integer, ``minimum`` (0 or more) or more, else one line naming what is
    allowed (and ``why``, appended to it)."""
    if minimum < 0:
        raise ValueError(f"int_at_least: minimum={minimum}; allowed: 0 or more")

    def convert(text: str) -> int:
        value = parse_digits(text)
        if value is None or value < minimum:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not allowed; allowed: an integer, {minimum} or more{why}"
            )
        return value

    return convert


def integer_arg(text: str) -> int:
    """An integer with an optional leading ``-``, in the digits 0-9 (for flags whose
    range the command checks after parsing, naming the flag); else one line naming
    what is allowed."""
    value = parse_digits(text[1:] if text.startswith("-") else text)
    if value is None:
        raise argparse.ArgumentTypeError(
            f"{shown_value(text)} is not allowed; allowed: an integer in the digits 0-9"
        )
    return -value if text.startswith("-") else value


positive_int = int_at_least(1)
"""An integer, 1 or more (a count)."""


LARGEST_TRAINING_SEED = 2**32 - 1
"""The largest seed of a training run: Stable-Baselines3 and RLlib seed numpy with it,
which takes no more (2**32 died in the environments' processes)."""


def seed_at_most(largest: int, why: str) -> Callable[[str], int]:
    """A seed from 0 to ``largest`` (``why``: that bound in words), else one line
    naming what is allowed."""

    def convert(text: str) -> int:
        value = parse_digits(text)
        if value is None or value > largest:
            raise argparse.ArgumentTypeError(
                f"{shown_value(text)} is not allowed; allowed: an integer from 0 to "
                f"{largest} ({why})"
            )
        return value

    return convert


seed_arg = seed_at_most(SEED_LIMIT - 1, "2**64 - 1")
"""A seed, as the engine takes them: an integer from 0 to 2**64 - 1 (a negative one
would deal as its absolute value)."""

training_seed_arg = seed_at_most(
    LARGEST_TRAINING_SEED, "2**32 - 1, the most numpy's seeding takes: it seeds training"
)
"""A seed that also seeds a training run (:data:`LARGEST_TRAINING_SEED`)."""
