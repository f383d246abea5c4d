"""The rules configuration: every option of ``docs/rules.md`` as one frozen dataclass.

Rule variants are data. Only move generation and scoring read a ``Rules``; the
adapters never branch on it. Impossible combinations are refused when the
configuration is built, with a :class:`RulesError` that names the field, the
value and what is allowed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from .tiles import Tile, parse_digits, tile_count

__all__ = ["Rules", "RulesError", "PRESETS"]

HandSize = int | Literal["by_players", "all"]

_BY_PLAYERS = {2: 7, 3: 6, 4: 5}
_DRAW_LIMITS = {"until_playable": 10**9, "up_to_two": 2, "one": 1, "none": 0}


class RulesError(ValueError):
    """An unknown or impossible rules setting.

    ``field`` names the offending option, ``value`` the value given and
    ``allowed`` what would have been accepted.
    """

    def __init__(self, field: str, value: object, allowed: str, why: str = "") -> None:
        self.field = field
        self.value = value
        self.allowed = allowed
        msg = f"{field}={value!r} is not allowed"
        if why:
            msg += f": {why}"
        msg += f"; allowed: {allowed}"
        super().__init__(msg)


# Allowed values of the enumerated options; the first is the default.
CHOICES: dict[str, tuple[str, ...]] = {
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
    """

    set_max: int = 6
    """Double-N set; the link sum S is N + 1. Any N from 3 to 15."""
    players: int = 2
    """Number of seats, 2 or more (more than 4 needs a bigger set and an integer hand_size)."""
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
    """The last this-many boneyard tiles are never drawn."""
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
    """The match target."""
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
    def sides(self) -> int:
        """Scoring units: two teams, or one per seat."""
        return 2 if self.teams else self.players

    def side_of(self, seat: int) -> int:
        return seat % 2 if self.teams else seat

    # -- presets and text form -----------------------------------------------------------

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> Rules:
        """A named preset of docs/rules.md, with any field overridden.

        Raises :class:`RulesError` for an unknown preset or field name (the error
        lists the allowed ones) and for any value the constructor refuses.
        """
        if not isinstance(name, str) or name not in PRESETS:
            raise RulesError("preset", name, ", ".join(PRESETS))
        settings = dict(PRESETS[name])
        _check_fields(overrides)
        settings.update(overrides)
        return cls(**settings)

    def replace(self, **changes: Any) -> Rules:
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
        """The rules of :meth:`to_text`'s ``key=value`` pairs."""
        if not isinstance(text, str):
            raise RulesError("rules text", text, "a string of key=value pairs")
        values: dict[str, Any] = {}
        for part in text.split():
            key, sep, raw = part.partition("=")
            if not sep:
                raise RulesError("rules text", part, "key=value pairs")
            if key not in _FIELD_NAMES:
                raise RulesError(key, raw, "one of the fields " + ", ".join(_FIELD_NAMES))
            values[key] = _parse_value(key, raw)
        return cls(**values)


_FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules))


def _check_fields(values: Mapping[str, Any]) -> None:
    for key, value in values.items():
        if key not in _FIELD_NAMES:
            raise RulesError(key, value, "one of the fields " + ", ".join(_FIELD_NAMES))


_INT_FIELDS = ("set_max", "players", "boneyard_reserve", "target_score")
_BOOL_FIELDS = ("teams", "matador_as_regular", "matador_only_when_stuck")


def _parse_value(key: str, raw: str) -> Any:
    if key in _BOOL_FIELDS:
        if raw in ("True", "true", "1"):
            return True
        if raw in ("False", "false", "0"):
            return False
        raise RulesError(key, raw, "true or false")
    if key in _INT_FIELDS or key == "hand_size":
        number = parse_digits(raw)
        if number is not None:
            return number
        if key in _INT_FIELDS:
            raise RulesError(key, raw, _INT_RANGES[key], "not a number in the digits 0-9")
    return raw  # hand_size "by_players" or "all"; anything else is refused by _validate


_INT_RANGES = {
    "set_max": "an integer from 3 to 15",
    "players": "an integer, 2 or more",
    "boneyard_reserve": "an integer >= 0",
    "target_score": "a positive integer",
}


def _validate(r: Rules) -> None:
    for name in _INT_FIELDS:
        v = getattr(r, name)
        if not isinstance(v, int) or isinstance(v, bool):
            raise RulesError(name, v, _INT_RANGES[name], f"a {type(v).__name__}, not an int")
    for name in _BOOL_FIELDS:
        v = getattr(r, name)
        if not isinstance(v, bool):
            raise RulesError(name, v, "True or False", f"a {type(v).__name__}, not a bool")
    for name, allowed in CHOICES.items():
        if getattr(r, name) not in allowed:
            raise RulesError(name, getattr(r, name), ", ".join(repr(a) for a in allowed))
    if not 3 <= r.set_max <= 15:
        raise RulesError("set_max", r.set_max, "an integer from 3 to 15 (6, 9 and 12 are usual)")
    if r.players < 2:
        raise RulesError("players", r.players, "2 or more")
    if r.teams and r.players != 4:
        raise RulesError(
            "teams", r.teams, "teams=True only with players=4", f"players is {r.players}"
        )
    if r.boneyard_reserve < 0:
        raise RulesError("boneyard_reserve", r.boneyard_reserve, "an integer >= 0")
    if r.target_score <= 0:
        raise RulesError("target_score", r.target_score, "a positive integer")
    total = tile_count(r.set_max)
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
    elif isinstance(hs, int) and not isinstance(hs, bool):
        if hs < 1:
            raise RulesError("hand_size", hs, "an integer >= 1, 'by_players' or 'all'")
        per = hs
    else:
        raise RulesError("hand_size", hs, "'by_players', 'all' or an integer >= 1")
    if per < 1:
        raise RulesError(
            "players",
            r.players,
            f"at most {total} players with a double-{r.set_max} set",
            "the deal would leave a seat without a tile",
        )
    if per * r.players > total:
        raise RulesError(
            "hand_size",
            hs,
            f"at most {total // r.players} tiles each for {r.players} players "
            f"with a double-{r.set_max} set",
            f"the deal needs {per * r.players} tiles and the set has {total}",
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

PRESETS: dict[str, dict[str, Any]] = {
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
Rules.PRESET_NAMES = tuple(PRESETS)
