"""Tiles, open ends and moves: small value objects with a text form that round-trips.

Text forms (documented in the README, parsed by ``parse``):

=========  ==============  =====================================================
object     example         meaning
=========  ==============  =====================================================
Tile       ``2-5``         low half first; ``5-2`` parses to the same tile
lead       ``3-3``         the first tile of a hand (no end)
in line    ``2-5@1>5``     tile on open end 1, the half 5 facing outward
crosswise  ``3-4@0x``      laid across end 0 (two-valued end, needs-a-blank end,
                           or two branch ends, by ``matador_placement``)
upright    ``2-5@1^``      stood upright on end 1 (``matador_placement="upright"``)
draw       ``draw``        take the next boneyard tile
pass       ``pass``        cannot play and may not draw
End        ``3``           plain end showing 3
           ``3*``          a side of the spinner showing 3
           ``3b``          a branch end showing 3 (no second crosswise matador)
           ``2/5``         crosswise two-valued end: links to 2 or to 5
           ``_``           needs a blank (after a crosswise-on-blank or upright matador)
=========  ==============  =====================================================

Tile indices are triangular (``high * (high + 1) // 2 + low``), so the index of a
tile does not depend on the set: ``0-0`` is 0, ``0-1`` 1, ``1-1`` 2, ``0-2`` 3 ...
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

__all__ = [
    "Tile",
    "End",
    "Move",
    "DRAW",
    "PASS",
    "MoveParseError",
    "PLAIN",
    "CROSS",
    "BLANK",
    "BRANCH",
    "SPINNER",
    "END_KINDS",
    "MAX_HALF",
    "MAX_END",
    "tile_count",
    "set_tiles",
    "parse_digits",
    "whole_number",
    "is_json_int",
    "is_json_number",
    "INTEGER_KINDS",
    "INTEGER_TYPES",
    "same_value",
    "shown_value",
]

# End kinds. Strings rather than an Enum: they are compared in the hottest loop of
# move generation, where interned-string identity is the cheapest test there is.
PLAIN = "plain"
CROSS = "cross"
BLANK = "blank"
BRANCH = "branch"
SPINNER = "spinner"
END_KINDS = (PLAIN, CROSS, BLANK, BRANCH, SPINNER)


class MoveParseError(ValueError):
    """Text that is not a tile, end or move in the documented text form (or not text)."""


def _need_text(text: object, what: str, example: str) -> str:
    if not isinstance(text, str):
        raise MoveParseError(
            f"not {what}: {text!r} is a {type(text).__name__}, not text like {example!r}"
        )
    return text


INTEGER_TYPES = "int, a numpy integer or a 0-d integer array; not a bool"
"""The Python types :func:`whole_number` reads as integers, for messages that already
say "an integer"."""

INTEGER_KINDS = f"an integer ({INTEGER_TYPES})"
"""What :func:`whole_number` takes, as errors name it."""


def same_value(a: object, b: object) -> bool:
    """Equal and of the same type, for a saved value against the current one: a saved
    ``True`` or ``1.0`` is not the setting ``1``, though Python compares them equal.
    Dicts are compared key by key the same way (a saved encoding signature holds
    the rules' dict)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return a == b


def is_json_int(value: object) -> bool:
    """Whether ``value`` is an integer as loaded JSON holds one: an ``int``, never a bool
    (``true`` loads as ``True``, which Python counts as an int)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_json_number(value: object) -> bool:
    """Whether ``value`` is a number as loaded JSON holds one: an ``int`` or a ``float``
    (nan and the infinities included, which Python's JSON reads), never a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_text(value: object) -> bool:
    """Whether ``value`` is text or bytes (``str``, ``bytes``, ``bytearray``,
    ``memoryview``): a sequence of characters or byte values, never a list of items,
    though the bytes ones iterate as integers (``bytearray(b"6-6")`` as 54, 45, 54)."""
    return isinstance(value, (str, bytes, bytearray, memoryview))


def whole_number(value: object) -> int | None:
    """``value`` as a plain ``int`` if it is an integer (see :data:`INTEGER_KINDS`:
    anything ``operator.index`` takes, which is how numpy's integers and 0-d integer
    arrays say they are integers, the engine needing no numpy), else None. Booleans
    (Python's and numpy's) are no integers here: ``True`` is no seat, seed or count."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None


_SHOWN_MOST = 80  # characters of a value's repr that an error message shows
_SHOWN_DIGITS = 40  # an int with more digits is shown by its length


def shown_value(value: object) -> str:
    """``repr(value)`` cut to at most 80 characters, for error messages: a huge int
    is shown by its number of digits (``repr`` raises ``ValueError`` past 4,300
    digits), a long string or list by its start, and a value whose ``repr`` fails by
    its type, so that reporting bad input can never fail on it."""
    if isinstance(value, int) and not isinstance(value, bool):
        digits = _digit_count(value)
        if digits > _SHOWN_DIGITS:
            sign = "a negative" if value < 0 else "an"
            return f"<{sign} integer of {digits} digits>"
    try:
        text = repr(value)
    except Exception:  # a huge int inside a tuple, or a stand-in whose repr fails
        return f"<a {type(value).__name__} that cannot be shown>"
    return text if len(text) <= _SHOWN_MOST else text[: _SHOWN_MOST - 3] + "..."


def _digit_count(number: int) -> int:
    """The decimal digits of ``number``, without printing it (which fails past 4,300)."""
    number = abs(number)
    # floor(bits * log10(2)) is the digit count or one less; one comparison decides.
    estimate = max(1, int(number.bit_length() * 0.30102999566398120))
    return estimate + 1 if number >= 10**estimate else estimate


MAX_HALF = 99
"""The largest half a tile may have: the text forms write a half in at most two
digits, so a tile with a bigger one would not round-trip (the rules' sets go up to
double-15)."""


def _tile_half(value: object) -> int:
    """``value`` as a tile half (an int from 0 to :data:`MAX_HALF`), else
    :class:`MoveParseError`."""
    half = whole_number(value)
    if half is None:
        raise MoveParseError(
            f"a tile half must be {INTEGER_KINDS}, got {shown_value(value)} "
            f"({type(value).__name__})"
        )
    if not 0 <= half <= MAX_HALF:
        raise MoveParseError(f"a tile half must be from 0 to {MAX_HALF}, got {shown_value(half)}")
    return half


# Digits are [0-9], not \d: Python's \d (and str.isdigit) take the digits of every
# script ("١", "３"), which int() then reads; the text forms, like the protocol's JSON
# Schemas (whose ECMA-262 \d is ASCII), are written in 0-9 alone.
_TILE_RE = re.compile(r"^\s*([0-9]{1,2})\s*-\s*([0-9]{1,2})\s*$")
_MOVE_RE = re.compile(
    r"^\s*([0-9]{1,2})-([0-9]{1,2})(?:@([0-9]{1,2})(?:>([0-9]{1,2})|(x)|(\^)))?\s*$"
)
_END_RE = re.compile(r"([0-9]{1,2})([*b]?)|([0-9]{1,2})/([0-9]{1,2})|_")
_END_MARKS = {"": PLAIN, "*": SPINNER, "b": BRANCH}  # the kind of "3", "3*" and "3b"
_DIGITS_RE = re.compile(r"[0-9]+")
INT_MAX_DIGITS = 4300
"""The longest number ``int`` reads from text (its default limit, past which it raises)."""


def parse_digits(text: str, most: int = INT_MAX_DIGITS) -> int | None:
    """The number ``text`` writes in the ASCII digits 0-9 alone, at most ``most`` of
    them; None for any other text.

    For the numbers people and programs type (a choice, a rules value, a header):
    ``str.isdigit`` is also true of other scripts' digits (``"١"``, ``"３"``), which
    ``int`` reads, and of ``"²"``, which it refuses with a ``ValueError``; ``int``
    also takes a sign, spaces and underscores, and refuses more than 4,300 digits.
    """
    if len(text) > most or not _DIGITS_RE.fullmatch(text):
        return None
    return int(text)


class Tile(NamedTuple):
    """A domino (low, high) with low <= high."""

    low: int
    high: int

    # Shadows tuple.index on purpose: a tile's index in the set is what callers need.
    @property
    def index(self) -> int:  # type: ignore[override]
        return self.high * (self.high + 1) // 2 + self.low

    @property
    def pips(self) -> int:
        return self.low + self.high

    @property
    def is_double(self) -> bool:
        return self.low == self.high

    def other(self, half: int) -> int:
        """The half opposite ``half`` (which must be one of the tile's halves)."""
        if half == self.low:
            return self.high
        if half == self.high:
            return self.low
        raise ValueError(f"tile {self} has no half {half}")

    def __str__(self) -> str:
        return f"{self.low}-{self.high}"

    @classmethod
    def of(cls, a: int, b: int) -> Tile:
        """The tile with halves ``a`` and ``b`` in either order.

        Each half is an integer (see :data:`INTEGER_KINDS`; a numpy integer becomes
        an ``int``) from 0 to :data:`MAX_HALF`; :class:`MoveParseError` names a half
        that is not (a bool, a float, text, a negative or too large number).
        """
        low = _tile_half(a)
        high = _tile_half(b)
        return cls(low, high) if low <= high else cls(high, low)

    @classmethod
    def from_index(cls, index: int) -> Tile:
        """The tile of a triangular index (see the module's docstring).

        ``index`` is an integer (see :data:`INTEGER_KINDS`) from 0 to
        ``tile_count(MAX_HALF) - 1``: :class:`MoveParseError` (a ``ValueError``) for
        anything that is not an integer, ``ValueError`` for one out of that range.
        """
        number = whole_number(index)
        if number is None:
            raise MoveParseError(
                f"a tile index must be {INTEGER_KINDS}, got {shown_value(index)} "
                f"({type(index).__name__})"
            )
        if not 0 <= number < _INDEX_LIMIT:
            raise ValueError(
                f"tile index {shown_value(number)} is out of range; allowed: 0 to "
                f"{_INDEX_LIMIT - 1} (the tiles with halves up to {MAX_HALF})"
            )
        # isqrt is exact for any int, where a float square root is not.
        high = (math.isqrt(8 * number + 1) - 1) // 2
        return cls(number - high * (high + 1) // 2, high)

    @classmethod
    def parse(cls, text: str) -> Tile:
        """The tile of ``'a-b'`` text; :class:`MoveParseError` for anything else."""
        m = _TILE_RE.match(_need_text(text, "a tile", "2-5"))
        if not m:
            raise MoveParseError(f"not a tile: {text!r} (expected 'a-b', e.g. '2-5')")
        return cls.of(int(m.group(1)), int(m.group(2)))


def _checked_set_max(set_max: object) -> int:
    """``set_max`` as an int from 0 to :data:`MAX_HALF`, else ``ValueError``."""
    if type(set_max) is int and 0 <= set_max <= MAX_HALF:
        return set_max  # the engine's own calls: nothing more to do
    return _number_up_to_max_half(
        set_max, "set_max=", " (the highest half of the set: 6 for double-six)"
    )


def _number_up_to_max_half(value: object, what: str, why: str = "") -> int:
    """``value`` as an int from 0 to :data:`MAX_HALF`, else ``ValueError`` naming it
    after ``what`` (and ``why`` after what is allowed)."""
    number = whole_number(value)
    if number is None or not 0 <= number <= MAX_HALF:
        raise ValueError(
            f"{what}{shown_value(value)} is not allowed; allowed: {INTEGER_KINDS} "
            f"from 0 to {MAX_HALF}{why}"
        )
    return number


def tile_count(set_max: int) -> int:
    """The number of tiles of a double-``set_max`` set (28 for double-six).

    ``ValueError`` when ``set_max`` is not an integer (see :data:`INTEGER_KINDS`)
    from 0 to :data:`MAX_HALF`.
    """
    n = _checked_set_max(set_max)
    return (n + 1) * (n + 2) // 2


def set_tiles(set_max: int) -> tuple[Tile, ...]:
    """Every tile of a double-``set_max`` set, in index order.

    ``ValueError`` when ``set_max`` is not an integer (see :data:`INTEGER_KINDS`)
    from 0 to :data:`MAX_HALF`.
    """
    n = _checked_set_max(set_max)
    return tuple(Tile(low, high) for high in range(n + 1) for low in range(high + 1))


_INDEX_LIMIT = tile_count(MAX_HALF)


class _EndFields(NamedTuple):
    kind: str
    value: int | None
    value2: int | None = None


class End(_EndFields):
    """An open end of the layout.

    ``kind`` is one of :data:`END_KINDS`; ``value`` is the number shown (None for a
    needs-a-blank end); ``value2`` is the second number of a crosswise two-valued
    end (None for every other kind).

    ``End(kind, value, value2)`` checks its fields and stores the module's own kind
    constant, however the kind string was made (``json.loads('"plain"')`` is an
    equal but distinct object): the engine compares kinds by identity in move
    generation. ``ValueError`` names what is wrong: a kind not in
    :data:`END_KINDS`, a value that is not an integer (see :data:`INTEGER_KINDS`)
    from 0 to :data:`MAX_HALF`, or a value given where the kind has none. (The
    engine builds its ends from its own constants without this check.)
    """

    __slots__ = ()

    def __new__(cls, kind: str, value: int | None, value2: int | None = None) -> End:
        return tuple.__new__(cls, _end_fields(kind, value, value2))

    # NamedTuple's _make (and _replace, which calls it) builds the tuple without
    # __new__: it checks too. (mypy types NamedTuple's as generic in the class.)
    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> End:  # type: ignore[override]
        return cls(*iterable)

    def __reduce__(self) -> tuple[Any, tuple[str, int | None, int | None]]:
        # Pickles made before End checked its fields name _end_of_kind: kept so
        # that old and new pickles load the same way.
        return (_end_of_kind, (self.kind, self.value, self.value2))

    def __str__(self) -> str:
        k = self.kind
        if k == PLAIN:
            return str(self.value)
        if k == SPINNER:
            return f"{self.value}*"
        if k == BRANCH:
            return f"{self.value}b"
        if k == CROSS:
            return f"{self.value}/{self.value2}"
        return "_"  # BLANK: End refuses every other kind

    @classmethod
    def parse(cls, text: str) -> End:
        """The end of its text form, exactly (no spaces around it, as in the protocol's
        schema); :class:`MoveParseError` for anything else."""
        m = _END_RE.fullmatch(_need_text(text, "an open end", "3*"))
        if not m:
            raise MoveParseError(
                f"not an open end: {text!r} (expected '3', '3*', '3b', '2/5' or '_', "
                "with the digits 0-9 and no spaces)"
            )
        value, mark, low, high = m.groups()
        if value is not None:
            return cls(_END_MARKS[mark], int(value), None)
        if low is not None:
            return cls(CROSS, int(low), int(high))
        return cls(BLANK, None, None)


_KIND_CONSTANTS = {k: k for k in END_KINDS}


def _end_fields(kind: object, value: object, value2: object) -> tuple[str, int | None, int | None]:
    """The fields of an :class:`End`, checked: the kind as the module's constant,
    the values as plain ints (or None where the kind has none); else ``ValueError``."""
    canonical = _KIND_CONSTANTS.get(kind) if isinstance(kind, str) else None
    if canonical is None:
        raise ValueError(f"not an end kind: {shown_value(kind)}; allowed: {', '.join(END_KINDS)}")
    if canonical is BLANK:
        if value is not None or value2 is not None:
            raise ValueError(
                "a needs-a-blank end (kind 'blank') shows no number: value and value2 "
                f"must be None, got {shown_value(value)} and {shown_value(value2)}"
            )
        return canonical, None, None
    shown = _end_value(value, canonical, "value")
    if canonical is CROSS:
        return canonical, shown, _end_value(value2, canonical, "value2")
    if value2 is not None:
        raise ValueError(
            f"an end of kind {canonical!r} shows one number: value2 must be None "
            f"(only a 'cross' end has two), got {shown_value(value2)}"
        )
    return canonical, shown, None


def _end_value(value: object, kind: str, name: str) -> int:
    return _number_up_to_max_half(value, f"{name} of an end of kind {kind!r}: ")


def _end_of_kind(kind: str, value: int | None, value2: int | None) -> End:
    """An :class:`End` (unpickling; ``ValueError`` as :class:`End` gives it)."""
    return End(kind, value, value2)


class Move(NamedTuple):
    """One action: a placement (``kind == "play"``), ``draw`` or ``pass``.

    ``mode`` of a placement is ``"lead"`` (no end), ``"inline"`` (with ``shows``,
    the outward half), ``"cross"`` or ``"upright"``.
    """

    kind: str
    tile: Tile | None = None
    end: int | None = None
    shows: int | None = None
    mode: str | None = None

    @property
    def is_play(self) -> bool:
        return self.kind == "play"

    def __str__(self) -> str:
        kind = self.kind
        if kind != "play":
            return str(kind)
        mode = self.mode
        if mode == "lead":
            return str(self.tile)
        if mode == "inline":
            return f"{self.tile}@{self.end}>{self.shows}"
        if mode == "cross":
            return f"{self.tile}@{self.end}x"
        return f"{self.tile}@{self.end}^"

    # The constructors below check their arguments; a Move built field by field
    # with Move(...) is checked when it is applied (HandState.apply).

    @classmethod
    def lead(cls, tile: Tile) -> Move:
        """The lead of ``tile``.

        Every constructor below takes a :class:`Tile` with integer halves (see
        :data:`INTEGER_KINDS`) from 0 to :data:`MAX_HALF`, low half first (text is
        refused: ``Tile.parse('2-5')`` reads it), and raises :class:`MoveParseError`
        naming the argument that is not allowed.
        """
        return cls("play", _move_tile(tile), None, None, "lead")

    @classmethod
    def inline(cls, tile: Tile, end: int, shows: int) -> Move:
        """``tile`` in line on open end ``end`` (an integer from 0 to 99), its half
        ``shows`` facing outward (one of the tile's halves)."""
        placed = _move_tile(tile)
        outward = whole_number(shows)
        if outward is None or outward not in placed:
            raise MoveParseError(f"the outward half {shown_value(shows)} is not a half of {placed}")
        return cls("play", placed, _move_end(end), outward, "inline")

    @classmethod
    def cross(cls, tile: Tile, end: int) -> Move:
        """``tile`` laid across open end ``end`` (an integer from 0 to 99)."""
        return cls("play", _move_tile(tile), _move_end(end), None, "cross")

    @classmethod
    def upright(cls, tile: Tile, end: int) -> Move:
        """``tile`` stood upright on open end ``end`` (an integer from 0 to 99)."""
        return cls("play", _move_tile(tile), _move_end(end), None, "upright")

    @classmethod
    def parse(cls, text: str) -> Move:
        """The move of its text form; :class:`MoveParseError` for anything else."""
        t = _need_text(text, "a move", "2-5@1>5").strip().lower()
        if t == "draw":
            return DRAW
        if t == "pass":
            return PASS
        m = _MOVE_RE.match(t)
        if not m:
            raise MoveParseError(
                f"not a move: {text!r} (expected 'draw', 'pass', a lead like '3-3', "
                "or a placement like '2-5@1>5', '3-4@0x', '2-5@1^')"
            )
        a, b, end, shows, cross, upright = m.groups()
        tile = Tile.of(int(a), int(b))
        if end is None:
            return cls.lead(tile)
        if shows is not None:
            if int(shows) not in (tile.low, tile.high):
                raise MoveParseError(
                    f"not a move: {text!r}: the outward half {shows} is not a half of {tile}"
                )
            return cls.inline(tile, int(end), int(shows))
        if cross:
            return cls.cross(tile, int(end))
        return cls.upright(tile, int(end))


DRAW = Move("draw")
PASS = Move("pass")

MAX_END = 99
"""The highest open end a move may name: the text form writes it in two digits (a
layout has far fewer open ends)."""


def _move_tile(tile: object) -> Tile:
    """The tile of a placement: a :class:`Tile` with integer halves (see
    :data:`INTEGER_KINDS`) from 0 to :data:`MAX_HALF`, low half first; else
    :class:`MoveParseError` saying which and how to build one."""
    if not isinstance(tile, Tile):
        if isinstance(tile, str):
            raise MoveParseError(
                f"a move's tile must be a Tile, not text: Tile.parse({shown_value(tile)}) "
                "reads it (or give the whole move as text, e.g. '2-5@0>5')"
            )
        raise MoveParseError(
            f"a move's tile must be a Tile (e.g. Tile.parse('2-5') or Tile.of(2, 5)), "
            f"got {shown_value(tile)}"
        )
    low, high = _tile_half(tile[0]), _tile_half(tile[1])
    if low > high:
        raise MoveParseError(
            f"{shown_value(tile)} is not a tile: its low half is above its high half "
            f"(Tile.of({low}, {high}) puts the halves in order)"
        )
    return tile if type(tile[0]) is int and type(tile[1]) is int else Tile(low, high)


def _move_end(end: object) -> int:
    number = whole_number(end)
    if number is None or not 0 <= number <= MAX_END:
        raise MoveParseError(
            f"a move's open end must be {INTEGER_KINDS} from 0 to {MAX_END}, got {shown_value(end)}"
        )
    return number
