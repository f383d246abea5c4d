"""Checks of the numbers the environments take as arguments and actions: integers
(a Python int, a numpy integer scalar or a 0-d integer array, never a bool, since
``True`` is no seat or action) and finite real numbers (rewards), each refused with an
error naming the argument, the value and what is allowed."""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["INTEGER_KINDS", "as_integer", "as_seed", "finite_real", "integer_value", "seat_value"]

INTEGER_KINDS = "an integer (int, a numpy integer or a 0-d integer array; not a bool)"
"""What :func:`as_integer` takes, as its errors name it."""


def integer_value(value: object) -> int | None:
    """``value`` as a plain ``int`` if it is an integer (see :data:`INTEGER_KINDS`),
    else None. ``np.bool_`` is no ``np.integer``; Python's ``bool`` is refused here."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value)
    return None


def as_integer(value: object, name: str = "action", allowed: str = INTEGER_KINDS) -> int:
    """``value`` as a plain ``int``, else ``TypeError`` naming ``name``, the value, its
    type and ``allowed``. Callers on a hot path test ``type(value) is int`` first, so
    that the common case pays nothing."""
    number = integer_value(value)
    if number is None:
        raise TypeError(
            f"{name}={value!r} ({type(value).__name__}) is not allowed; allowed: {allowed}"
        )
    return number


def as_seed(seed: object) -> int | None:
    """A seed: None, or an integer as :func:`as_integer` reads it (else ``TypeError``
    naming ``seed``)."""
    return None if seed is None else as_integer(seed, "seed", f"None or {INTEGER_KINDS}")


def seat_value(value: object, players: int) -> int | None:
    """``value`` as a seat from 0 to ``players - 1`` (an integer as
    :func:`integer_value` reads it), else None; the caller names the argument."""
    seat = integer_value(value)
    return seat if seat is not None and 0 <= seat < players else None


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
