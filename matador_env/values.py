"""Checks of the numbers the environments take as arguments and actions: integers
(a Python int, a numpy integer scalar or a 0-d integer array, never a bool, since
``True`` is no seat or action) and finite real numbers (rewards), each refused with an
error naming the argument, the value and what is allowed."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .engine.state import SEED_LIMIT, seat_number, seed_number
from .engine.tiles import INTEGER_KINDS, shown_value, whole_number

__all__ = ["INTEGER_KINDS", "as_integer", "as_seed", "finite_real", "integer_value", "seat_value"]


integer_value = whole_number
"""``value`` as a plain ``int`` if it is an integer (see :data:`INTEGER_KINDS`), else
None: the engine's own reading, so that the environments and the engine take the same
numbers."""


def as_integer(value: object, name: str = "action", allowed: str = INTEGER_KINDS) -> int:
    """``value`` as a plain ``int``, else ``TypeError`` naming ``name``, the value, its
    type and ``allowed``. Callers on a hot path test ``type(value) is int`` first, so
    that the common case pays nothing."""
    number = integer_value(value)
    if number is None:
        raise TypeError(
            f"{name}={shown_value(value)} ({type(value).__name__}) is not allowed; "
            f"allowed: {allowed}"
        )
    return number


_SEEDS = f"None or {INTEGER_KINDS} from 0 to {SEED_LIMIT - 1} (2**64 - 1)"


def as_seed(seed: object) -> int | None:
    """A seed: None, or an integer as :func:`as_integer` reads it from 0 to
    ``SEED_LIMIT - 1`` (2**64 - 1), the seeds ``HandState.deal`` takes. ``TypeError``
    naming ``seed`` when it is not an integer, ``ValueError`` when it is out of that
    range (a negative seed, which Gymnasium refuses too, would deal what its absolute
    value deals)."""
    if seed is None:
        return None
    number = as_integer(seed, "seed", _SEEDS)
    if seed_number(number) is None:
        raise ValueError(f"seed={shown_value(number)} is not allowed; allowed: {_SEEDS}")
    return number


seat_value = seat_number
"""``value`` as a seat from 0 to ``players - 1`` (an integer as :func:`integer_value`
reads it), else None: the engine's own reading; the caller names the argument."""


def finite_real(name: str, value: object) -> float:
    """``value`` as a float if it is a finite real number (an int, a float or a numpy
    number; not a bool, a string or nan/inf), else ``ValueError`` naming ``name``."""
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
    ):
        raise ValueError(f"{name}={value!r} is not allowed; allowed: a finite real number")
    return float(value)
