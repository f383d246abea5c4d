"""Checks of the numbers the environments, the batch engine and the agents take as
arguments and actions: integers (a Python int, a numpy integer scalar or a 0-d
integer array, never a bool, since ``True`` is no seat or action), integers in a
range, seeds, and finite real numbers (rewards), each refused with an error naming
the argument, the value and what is allowed; and the comparison of saved values
with current ones (:func:`same_value`)."""

from __future__ import annotations

import math
import numbers
from typing import Protocol

import numpy as np

from .engine.state import SEED_RANGE, checked_seed, seat_number, seed_number
from .engine.tiles import INTEGER_KINDS, INTEGER_TYPES, same_value, shown_value, whole_number

__all__ = [
    "INTEGER_KINDS",
    "SEED_RANGE",
    "IntegerCheck",
    "as_integer",
    "as_seed",
    "checked_seed",
    "finite_real",
    "integer_check",
    "integer_value",
    "same_value",
    "seat_value",
]


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


class IntegerCheck(Protocol):
    """A check made by :func:`integer_check`: ``check(name, value, low, high)``; ``types``
    is what its refusal of a value of another type says it takes."""

    def __call__(
        self, name: str, value: object, low: int, high: int | None = None, types: str = ...
    ) -> int: ...


def integer_check(
    error: type[Exception], type_error: type[Exception] | None = None
) -> IntegerCheck:
    """The check of an integer argument that raises ``error``: ``check(name, value,
    low, high)`` is ``value`` as a plain ``int`` from ``low`` to ``high`` (no top when
    None), read as the engine reads integers (:func:`integer_value`: numpy integers
    too, never a bool or a float); else ``error`` (``type_error``, when given, for a
    value that is no integer at all) naming ``name``, the value and what is allowed.

    One check for the batch engine (:class:`~matador_env.batch.BatchError` either
    way) and the agents' constructors (``TypeError``, then ``ValueError``), which
    differ only in what they raise. ``types`` says which types are taken where a
    caller takes more than integers (a flag that takes a bool). A closure rather than
    a function taking the error classes, because the batch engine's check is on the
    search's path (each ``deal_hidden_hands`` call checks its numbers): calling it
    costs what a plain function's call costs."""
    wrong_type = error if type_error is None else type_error

    def check(
        name: str, value: object, low: int, high: int | None = None, types: str = INTEGER_TYPES
    ) -> int:
        # A plain int, the usual case, is taken without a call.
        number = value if type(value) is int else whole_number(value)
        if number is not None and low <= number and (high is None or number <= high):
            return number
        if high is None:
            span = f"an integer >= {low}"
        elif high == low + 1:
            span = f"{low} or {high}"
        else:
            span = f"an integer from {low} to {high}"
        if number is None:
            raise wrong_type(
                f"{name}={shown_value(value)} is not allowed; allowed: {span} ({types})"
            )
        raise error(f"{name}={shown_value(value)} is not allowed; allowed: {span}")

    return check


_SEEDS = f"None or {SEED_RANGE}"


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
