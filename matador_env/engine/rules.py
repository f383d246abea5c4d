"""The rules configuration: every option of ``docs/rules.md`` as one frozen dataclass.

Rule variants are data. Only move generation and scoring read a ``Rules``; the
adapters never branch on it. Impossible combinations are refused when the
configuration is built, with a :class:`RulesError` that names the field, the
value and what is allowed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from types import MappingProxyType
from typing import Any, ClassVar, Literal

from .tiles import (
    INTEGER_KINDS,
    Tile,
    parse_digits,
    same_value,
    shown_value,
    tile_count,
    whole_number,
)

__all__ = [
    "Rules",
    "RulesError",
    "PRESETS",
    "LARGEST_SETTING",
    "checked_value",
    "a_type",
    "rules_differences",
]

HandSize = int | Literal["by_players", "all"]

_BY_PLAYERS = {2: 7, 3: 6, 4: 5}
_DRAW_LIMITS = {"until_playable": 10**9, "up_to_two": 2, "one": 1, "none": 0}

LARGEST_SETTING = 10**9
"""The largest ``target_score`` and ``boneyard_reserve`` (docs/rules.md, "Options"):
far beyond any game, small enough that every text form prints it (Python refuses
to print an int of more than 4,300 digits)."""


_NAME_MOST = 80  # a longer field name in a message is cut by shown_value, as values are


def a_type(value: object) -> str:
    """``value``'s type as error messages name it, with its article: a builtin's bare
    (``an int``), any other with its module (``a numpy.bool``), so that a numpy bool
    refused where a bool is needed is not "a bool, not a bool"."""
    kind = type(value)
    name = kind.__qualname__
    if kind.__module__ != "builtins":
        name = f"{kind.__module__}.{name}"
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def rules_differences(
    first: Mapping[str, object], second: Mapping[str, object], sides: tuple[str, str]
) -> list[str]:
    """Each field where two rules' dicts (:meth:`Rules.to_dict`, or one read back from
    a file) differ, in the first's order, as ``"target_score: saved 50, now 100"`` for
    ``sides=("saved", "now")``: the one text every "made for other rules" message lists
    (a policy, a saved encoding, a saved batch state). A field missing on one side
    shows as ``<missing>``; values differ by type too (``True`` is not the ``1`` a file
    may hold for ``players``)."""
    missing = "<missing>"
    out = []
    for field in [*first, *(k for k in second if k not in first)]:
        a, b = first.get(field, missing), second.get(field, missing)
        if not same_value(a, b):
            out.append(f"{field}: {sides[0]} {shown_value(a)}, {sides[1]} {shown_value(b)}")
    return out


class RulesError(ValueError):
    """An unknown or impossible rules setting.

    ``field`` names the offending option, ``value`` the value given and
    ``allowed`` what would have been accepted. The message shows the value by
    :func:`~matador_env.engine.tiles.shown_value` (at most 80 characters), so any
    value can be reported.
    """

    def __init__(self, field: str, value: object, allowed: str, why: str = "") -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        # An unknown key comes from the caller (from_dict, from_text) and may be anything.
        name = field if isinstance(field, str) and len(field) <= _NAME_MOST else shown_value(field)
        msg = f"{name}={shown_value(value)} is not allowed"
        if why:
            msg += f": {why}"
        msg += f"; allowed: {allowed}"
        super().__init__(msg)


# Allowed values of the enumerated options; the first is the default.
# Read-only, as PRESETS: a caller's edit would change what every later Rules accepts.
CHOICES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "first_leader": ("random", "highest_double"),
        "lead_tile": ("any", "highest_double", "double_not_blank"),
        "next_leader": ("rotate", "loser", "winner"),
        "draw_rule": ("until_playable", "up_to_two", "one", "none"),
        "voluntary_draw": ("only_matadors", "never", "always"),
        "matador_placement": (
            "inline",
            "crosswise_choice",
            "crosswise_on_blank",
            "upright",
            "branching",
        ),
        "spinner": ("none", "first_double", "lead_double_cross"),
        "blocked_scoring": ("others_minus_own", "others", "others_plus_own"),
        "tie": ("void", "redeal"),
        "match_end": ("first_to_target", "complete_round"),
    }
)


@dataclass(frozen=True)
class Rules:
    """One Matador rules configuration (see ``docs/rules.md``, section "Options").

    Build one directly (``Rules(players=3)``) or from a named preset
    (``Rules.preset("leiden")``, ``Rules.preset("polish", players=3)``).

    Every way of building one (the constructor, :meth:`preset`, :meth:`replace`,
    :meth:`from_dict`, :meth:`from_text`) raises :class:`RulesError` (a
    ``ValueError``) for an unknown field name, a value of the wrong type (a bool
    or float where an integer is needed, None, a list...), a value out of range
    or a combination docs/rules.md refuses; never a bare ``TypeError``.

    The integer fields (``set_max``, ``players``, ``boneyard_reserve``,
    ``target_score``, a numeric ``hand_size``) take an ``int``, a numpy integer or a
    0-d integer array and hold it as a plain ``int``; never a bool. The flags take
    ``True`` or ``False`` alone (not 0 or 1, not a numpy bool). The enumerated fields
    and ``hand_size``'s words take a ``str`` (a numpy array holding one is refused).
    See :func:`checked_value`.
    """

    set_max: int = 6
    """Double-N set; the link sum S is N + 1. Any N from 3 to 15."""
    players: int = 2
    """Number of seats, 2 or more (more than 4 needs a bigger set and an integer hand_size
    or "all"; never more than the set has tiles)."""
    teams: bool = False
    """Four players as two partnerships: seats 0 and 2 against 1 and 3."""
    hand_size: HandSize = "by_players"
    """Tiles dealt to each seat: "by_players" (7/6/5 for 2/3/4), an integer, or "all"."""
    first_leader: str = "random"
    """Who leads the first hand: a random seat, or the holder of the highest double."""
    lead_tile: str = "any"
    """What the leader may lead: any tile, his highest double, or a double other than 0-0."""
    next_leader: str = "rotate"
    """Who leads later hands: left of the seat that placed the last lead, the last loser,
    or the last winner (after a tie: docs/rules.md, ``next_leader`` and ``tie``)."""
    draw_rule: str = "until_playable"
    """Draws allowed per turn: no limit, 2, 1 or none at all."""
    boneyard_reserve: int = 2
    """The last this-many boneyard tiles are never drawn: 0 to :data:`LARGEST_SETTING`."""
    voluntary_draw: str = "only_matadors"
    """When a player who could play may draw instead."""
    matador_placement: str = "inline"
    """How matadors lie: inline, crosswise_choice, crosswise_on_blank, upright, branching."""
    matador_as_regular: bool = False
    """A matador that fits by the sum rule may be laid in line as an ordinary tile."""
    matador_only_when_stuck: bool = False
    """Matadors may be played only when no other tile in the hand can be placed."""
    spinner: str = "none"
    """none, first_double (the first double opens all its sides) or lead_double_cross."""
    blocked_scoring: str = "others_minus_own"
    """What the lowest count scores after a block."""
    tie: str = "void"
    """A tie for the lowest count after a block: nobody scores, or the hand is redealt."""
    target_score: int = 100
    """The match target: 1 to :data:`LARGEST_SETTING` (10**9)."""
    match_end: str = "first_to_target"
    """first_to_target, or complete_round (play on until every seat has led equally often)."""

    PRESET_NAMES: ClassVar[tuple[str, ...]] = ()

    def __new__(cls, *args: Any, **kwargs: Any) -> Rules:
        # Runs before the generated __init__, which would answer an unknown keyword or
        # too many positional values with a bare TypeError.
        if len(args) > len(_FIELD_NAMES):
            raise RulesError(
                "positional values",
                len(args),
                f"at most {len(_FIELD_NAMES)} (better: keywords, one of the fields "
                + ", ".join(_FIELD_NAMES)
                + ")",
            )
        _check_fields(kwargs)
        for name in _FIELD_NAMES[: len(args)]:
            if name in kwargs:
                raise RulesError(name, kwargs[name], "each field given once", "given twice")
        return super().__new__(cls)

    def __post_init__(self) -> None:
        _validate(self)

    # -- derived values -------------------------------------------------------------

    @property
    def link_sum(self) -> int:
        """S: touching halves sum to this, and matadors (besides 0-0) have these pips."""
        return self.set_max + 1

    def is_matador(self, tile: Tile) -> bool:
        """Whether ``tile`` is a matador: 0-0, or a tile whose pips sum to S."""
        return tile.pips == 0 or tile.pips == self.link_sum

    @property
    def tile_count(self) -> int:
        return tile_count(self.set_max)

    @property
    def tiles_per_seat(self) -> tuple[int, ...]:
        """How many tiles each seat is dealt."""
        n, hs = self.players, self.hand_size
        if hs == "all":
            total = self.tile_count
            return tuple(total // n + (1 if s < total % n else 0) for s in range(n))
        if hs == "by_players":
            return (_BY_PLAYERS[n],) * n
        return (int(hs),) * n

    @property
    def boneyard_size(self) -> int:
        """Tiles left in the boneyard after the deal."""
        return self.tile_count - sum(self.tiles_per_seat)

    @property
    def draw_limit(self) -> int:
        """Draws allowed in one turn (a very large number for until_playable)."""
        return _DRAW_LIMITS[self.draw_rule]

    @property
    def max_hand_actions(self) -> int:
        """The most actions one hand under these rules can hold before its end.

        Placements are at most the tiles of the set and draws at most the boneyard;
        between two of them (and before the first and after the last) fewer than
        ``players`` passes can follow one another, since ``players`` passes in a row
        (or, before the lead, in all) end the hand.
        """
        progress = self.tile_count + self.boneyard_size
        return progress + (progress + 1) * (self.players - 1)

    @property
    def sides(self) -> int:
        """Scoring units: two teams, or one per seat."""
        return 2 if self.teams else self.players

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.teams else seat

    # -- presets and text form -----------------------------------------------------------

    @classmethod
    def preset(cls, name: str, /, **overrides: Any) -> Rules:
        """A named preset of docs/rules.md, with any field overridden.

        Raises :class:`RulesError` for an unknown preset or field name (the error
        lists the allowed ones) and for any value the constructor refuses. ``name``
        is positional only, so that an override named ``name`` is an unknown field.
        """
        if not isinstance(name, str) or name not in PRESETS:
            raise RulesError("preset", name, ", ".join(PRESETS))
        settings = dict(PRESETS[name])
        _check_fields(overrides)
        settings.update(overrides)
        return cls(**settings)

    def replace(self, /, **changes: Any) -> Rules:
        """These rules with some fields changed (an unknown field is a RulesError)."""
        _check_fields(changes)
        return dataclasses.replace(self, **changes)

    def changes(self) -> dict[str, Any]:
        """The fields that differ from the defaults."""
        default = Rules()
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if getattr(self, f.name) != getattr(default, f.name)
        }

    def preset_name(self) -> str | None:
        """The name of the preset these rules equal, if any."""
        for name, settings in PRESETS.items():
            if all(getattr(self, k) == v for k, v in settings.items()) and all(
                getattr(self, f) == getattr(Rules(), f) for f in _FIELD_NAMES if f not in settings
            ):
                return name
        return None

    def to_text(self) -> str:
        """``key=value`` pairs of every field; :meth:`from_text` reads it back."""
        return " ".join(f"{f}={getattr(self, f)}" for f in _FIELD_NAMES)

    def to_dict(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in _FIELD_NAMES}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Rules:
        """The rules of :meth:`to_dict`'s mapping (missing fields keep their defaults)."""
        if not isinstance(data, Mapping):
            raise RulesError("rules", data, "a mapping of field names to values")
        _check_fields(data)
        return cls(**data)

    @classmethod
    def from_text(cls, text: str) -> Rules:
        """The rules of :meth:`to_text`'s ``key=value`` pairs (missing fields keep their
        defaults, a later pair wins; each pair's value must be allowed on its own, so
        ``tie=draw tie=void`` is refused for its first pair).

        Pairs are separated by whitespace and hold none themselves: ``players = 3`` is
        refused (with a :class:`RulesError` saying so), as is a value in other digits
        than 0-9, with a sign, underscores or more than 4,300 digits. A flag
        (``teams``, ``matador_as_regular``, ``matador_only_when_stuck``) is ``true``,
        ``True`` or ``1``, or ``false``, ``False`` or ``0``.
        """
        if not isinstance(text, str):
            raise RulesError("rules text", text, "a string of key=value pairs")
        spaced = _spaced_pair(text)
        if spaced is not None:
            raise RulesError(
                "rules text",
                spaced,
                _PAIRS,
                "a space next to '=' splits the pair (write players=3, not players = 3)",
            )
        values: dict[str, Any] = {}
        for part in text.split():
            key, sep, raw = part.partition("=")
            if not sep:
                raise RulesError("rules text", part, _PAIRS)
            if key not in _FIELD_NAMES:
                raise RulesError(key, raw, "one of the fields " + ", ".join(_FIELD_NAMES))
            # Each pair is checked as it is read: a later pair for the same field wins,
            # but does not excuse a value that would be refused on its own.
            values[key] = checked_value(key, _parse_value(key, raw))
        return cls(**values)


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))
_PAIRS = "key=value pairs separated by spaces, with no space around '='"
_SPACE_BESIDE_EQUALS = re.compile(r"\s=|=\s")


def _spaced_pair(text: str) -> str | None:
    """The first pair split by whitespace around its '=' ("players = 3", "players= 3"),
    with the words on either side, or None: the split into pairs would read it as a
    key without a value, or an empty value. Found in one pass over ``text`` (a pattern
    that matched the words around the '=' itself backtracked over every long word: 80
    s for a text of 100,000 characters)."""
    found = _SPACE_BESIDE_EQUALS.search(text)
    if found is None:
        return None
    equals = found.start() if text[found.start()] == "=" else found.start() + 1
    start, end = equals, equals + 1
    while start > 0 and text[start - 1].isspace():
        start -= 1
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and text[end].isspace():
        end += 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end]


def _check_fields(values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        if key not in _FIELD_NAMES:
            raise RulesError(key, value, "one of the fields " + ", ".join(_FIELD_NAMES))


_INT_FIELDS = ("set_max", "players", "boneyard_reserve", "target_score")
_BOOL_FIELDS = ("teams", "matador_as_regular", "matador_only_when_stuck")
# Each field is checked on its own in this order before the combinations.
_CHECK_ORDER = (*_INT_FIELDS, *_BOOL_FIELDS, *CHOICES, "hand_size")


def _parse_value(key: str, raw: str) -> Any:
    if key in _BOOL_FIELDS:
        if raw in ("True", "true", "1"):
            return True
        if raw in ("False", "false", "0"):
            return False
        raise RulesError(key, raw, "true or false (True, 1; False, 0)")
    if key in _INT_FIELDS or key == "hand_size":
        number = parse_digits(raw)
        if number is not None:
            return number
        if key in _INT_FIELDS:
            raise RulesError(key, raw, _INT_RANGES[key], "not a number in the digits 0-9")
    return raw  # hand_size "by_players" or "all"; anything else is refused by _validate


_INT_RANGES = {
    "set_max": "an integer from 3 to 15",
    "players": f"an integer, 2 or more (at most the set's tiles: {tile_count(6)} for "
    f"double-six, {tile_count(15)} for double-15)",
    "boneyard_reserve": f"an integer from 0 to {LARGEST_SETTING}",
    "target_score": f"an integer from 1 to {LARGEST_SETTING}",
}
_INT_BOUNDS: dict[str, tuple[int, int]] = {
    "set_max": (3, 15),
    # At most the largest set's tiles; the set's own count is checked in _validate.
    "players": (2, tile_count(15)),
    "boneyard_reserve": (0, LARGEST_SETTING),
    "target_score": (1, LARGEST_SETTING),
}
_HAND_SIZES = ("by_players", "all")


def checked_value(name: str, value: object) -> Any:
    """``value`` as field ``name`` of :class:`Rules` holds it, checked on its own.

    An integer field takes :data:`~matador_env.engine.tiles.INTEGER_KINDS` and holds
    a plain ``int`` (so ``Rules(players=np.int64(3)) == Rules(players=3)``, with the
    same hash and text form); a flag takes ``True`` or ``False`` alone (no numpy
    bool, no 0 or 1); an enumerated field takes one of its strings (a ``str``: an
    array holding one is refused). Raises :class:`RulesError` as the constructor does
    for a wrong type or a value out of the field's own range; what depends on other
    fields (players for the set, teams, the deal) is :class:`Rules`' to check.
    """
    if name in _INT_BOUNDS:
        number = whole_number(value)
        if number is None:
            raise RulesError(
                name, value, _INT_RANGES[name], f"{a_type(value)}, not {INTEGER_KINDS}"
            )
        low, high = _INT_BOUNDS[name]
        if not low <= number <= high:
            allowed = _INT_RANGES[name]
            if name == "set_max":
                allowed += " (6, 9 and 12 are usual)"
            raise RulesError(name, number, allowed)
        return number
    if name in _BOOL_FIELDS:
        if not isinstance(value, bool):
            raise RulesError(name, value, "True or False", f"{a_type(value)}, not a bool")
        return value
    if name == "hand_size":
        if isinstance(value, str):
            if value not in _HAND_SIZES:
                raise RulesError(name, value, "'by_players', 'all' or an integer >= 1")
            return _HAND_SIZES[_HAND_SIZES.index(value)]
        number = whole_number(value)
        if number is None:
            raise RulesError(
                name,
                value,
                "'by_players', 'all' or an integer >= 1",
                f"{a_type(value)}, not a str or {INTEGER_KINDS}",
            )
        if number < 1:
            raise RulesError(name, number, "an integer >= 1, 'by_players' or 'all'")
        return number
    choices = CHOICES.get(name)
    if choices is None:
        raise RulesError(name, value, "one of the fields " + ", ".join(_FIELD_NAMES))
    listed = ", ".join(repr(a) for a in choices)
    # isinstance first: ``value in choices`` compares, and a numpy array's == answers
    # an array (truthy, or "ambiguous"), which would let it through.
    if not isinstance(value, str):
        raise RulesError(name, value, listed, f"{a_type(value)}, not a str")
    if value not in choices:
        raise RulesError(name, value, listed)
    return choices[choices.index(value)]  # the plain str, for a str subclass


def _validate(r: Rules) -> None:
    for name in _CHECK_ORDER:
        given = getattr(r, name)
        value = checked_value(name, given)
        if value is not given:
            # The plain int (str) of a numpy integer (str subclass): equality, hash and
            # the text form are then those of the plain value.
            object.__setattr__(r, name, value)
    total = tile_count(r.set_max)
    if r.players > total:
        raise RulesError(
            "players",
            r.players,
            f"at most {total} players with a double-{r.set_max} set",
            "the deal would leave a seat without a tile",
        )
    if r.teams and r.players != 4:
        raise RulesError(
            "teams", r.teams, "teams=True only with players=4", f"players is {r.players}"
        )
    hs = r.hand_size
    if hs == "by_players":
        if r.players not in _BY_PLAYERS:
            raise RulesError(
                "hand_size",
                hs,
                "an integer or 'all' for more than 4 players",
                f"'by_players' covers 2-4 players, not {r.players}",
            )
        per = _BY_PLAYERS[r.players]
    elif hs == "all":
        per = total // r.players
    else:
        assert isinstance(hs, int)
        per = hs
    if per * r.players > total:
        raise RulesError(
            "hand_size",
            hs,
            f"at most {total // r.players} tiles each for {r.players} players "
            f"with a double-{r.set_max} set",
            # per may be any size; the product is printed only when it is small.
            f"the deal needs {per * r.players} tiles and the set has {total}"
            if per <= total
            else f"the set has {total} tiles",
        )
    if r.spinner == "lead_double_cross" and r.lead_tile != "double_not_blank":
        raise RulesError(
            "spinner",
            r.spinner,
            "'lead_double_cross' only with lead_tile='double_not_blank'",
            f"lead_tile is {r.lead_tile!r}",
        )
    if r.match_end == "complete_round" and r.next_leader != "rotate":
        raise RulesError(
            "match_end",
            r.match_end,
            "'complete_round' only with next_leader='rotate'",
            f"next_leader is {r.next_leader!r}",
        )
    if r.match_end == "complete_round" and r.lead_tile == "double_not_blank":
        # docs/rules.md, match_end: a lead that passes to the left leaves the lead counts
        # uneven for good, so the round would never complete and the match never end.
        raise RulesError(
            "match_end",
            r.match_end,
            "'complete_round' only with lead_tile 'any' or 'highest_double'",
            "lead_tile is 'double_not_blank', under which the lead counts never even out",
        )


_KARDINAL: dict[str, Any] = {
    "draw_rule": "up_to_two",
    "boneyard_reserve": 0,
    "voluntary_draw": "never",
    "matador_placement": "branching",
    "matador_only_when_stuck": True,
    "next_leader": "rotate",
    "match_end": "complete_round",
}

_PRESET_SETTINGS: dict[str, dict[str, Any]] = {
    "standard": {},
    # pagat: teams are allowed, not imposed: Rules.preset("pagat", players=4, teams=True).
    "pagat": {"hand_size": 7, "first_leader": "random"},
    "kardinal": dict(_KARDINAL),
    "kardinal_hard": {**_KARDINAL, "draw_rule": "until_playable", "boneyard_reserve": 2},
    "polish": {
        "first_leader": "highest_double",
        "boneyard_reserve": 0,
        "voluntary_draw": "never",
        "matador_placement": "upright",
        "blocked_scoring": "others",
    },
    "leiden": {
        "players": 2,
        "hand_size": 6,
        "first_leader": "highest_double",
        "lead_tile": "double_not_blank",
        "next_leader": "loser",
        "spinner": "lead_double_cross",
        "voluntary_draw": "always",
        "blocked_scoring": "others_plus_own",
        "tie": "redeal",
    },
    "double_nine": {"set_max": 9},
    "double_twelve": {"set_max": 12},
}
PRESETS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {name: MappingProxyType(dict(settings)) for name, settings in _PRESET_SETTINGS.items()}
)
"""The presets of docs/rules.md by name: each the fields it sets (the others keep their
defaults). Read-only: an edit would change every later :meth:`Rules.preset`."""
Rules.PRESET_NAMES = tuple(PRESETS)
