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

import operator
import re
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
    "tile_count",
    "set_tiles",
    "parse_digits",
    "whole_number",
    "INTEGER_KINDS",
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


INTEGER_KINDS = "an integer (int, a numpy integer or a 0-d integer array; not a bool)"
"""What :func:`whole_number` takes, as errors name it."""


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


def _need_int(value: object, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise MoveParseError(f"{what} must be an int, got {value!r}")
    return value


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
        """The tile with halves ``a`` and ``b`` in either order (:class:`MoveParseError`
        for a half that is not an int >= 0)."""
        _need_int(a, "a tile half")
        _need_int(b, "a tile half")
        if a < 0 or b < 0:
            raise MoveParseError(f"tile halves must be >= 0, got {a}-{b}")
        return cls(a, b) if a <= b else cls(b, a)

    @classmethod
    def from_index(cls, index: int) -> Tile:
        """The tile of a triangular index (``ValueError`` for anything but an int >= 0)."""
        _need_int(index, "a tile index")
        if index < 0:
            raise ValueError(f"tile index must be >= 0, got {index}")
        high = int(((8 * index + 1) ** 0.5 - 1) // 2)
        while high * (high + 1) // 2 > index:
            high -= 1
        while (high + 1) * (high + 2) // 2 <= index:
            high += 1
        return cls(index - high * (high + 1) // 2, high)

    @classmethod
    def parse(cls, text: str) -> Tile:
        """The tile of ``'a-b'`` text; :class:`MoveParseError` for anything else."""
        m = _TILE_RE.match(_need_text(text, "a tile", "2-5"))
        if not m:
            raise MoveParseError(f"not a tile: {text!r} (expected 'a-b', e.g. '2-5')")
        return cls.of(int(m.group(1)), int(m.group(2)))


def tile_count(set_max: int) -> int:
    return (set_max + 1) * (set_max + 2) // 2


def set_tiles(set_max: int) -> tuple[Tile, ...]:
    """Every tile of a double-``set_max`` set, in index order."""
    return tuple(Tile.from_index(i) for i in range(tile_count(set_max)))


class End(NamedTuple):
    """An open end of the layout.

    ``value`` is the number shown (None for a needs-a-blank end); ``value2`` is
    the second number of a crosswise two-valued end.
    """

    kind: str
    value: int | None
    value2: int | None = None

    def __reduce__(self) -> tuple[Any, tuple[str, int | None, int | None]]:
        # The engine compares kinds by identity (``kind is BLANK``, the hot path of move
        # generation); an unpickled string is a new object, so rebuild the end with the
        # module's own kind constant or a pickled state would get other legal moves.
        return (_end_of_kind, (self.kind, self.value, self.value2))

    def __str__(self) -> str:
        k = self.kind
        if k is PLAIN:
            return str(self.value)
        if k is SPINNER:
            return f"{self.value}*"
        if k is BRANCH:
            return f"{self.value}b"
        if k is CROSS:
            return f"{self.value}/{self.value2}"
        return "_"

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


def _end_of_kind(kind: str, value: int | None, value2: int | None) -> End:
    """An :class:`End` whose kind is the module's constant (unpickling)."""
    if kind not in _KIND_CONSTANTS:
        raise ValueError(f"not an end kind: {kind!r}; allowed: {', '.join(END_KINDS)}")
    return End(_KIND_CONSTANTS[kind], value, value2)


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

    @classmethod
    def lead(cls, tile: Tile) -> Move:
        return cls("play", tile, None, None, "lead")

    @classmethod
    def inline(cls, tile: Tile, end: int, shows: int) -> Move:
        return cls("play", tile, end, shows, "inline")

    @classmethod
    def cross(cls, tile: Tile, end: int) -> Move:
        return cls("play", tile, end, None, "cross")

    @classmethod
    def upright(cls, tile: Tile, end: int) -> Move:
        return cls("play", tile, end, None, "upright")

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
