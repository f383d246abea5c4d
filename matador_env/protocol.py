"""The JSON protocol between a game frontend and a Matador bot (version 1).

A frontend that keeps its own game state describes the seat the bot plays as a
*view* and gets a *move* back. Both are plain JSON objects; their JSON Schemas
are ``matador_env/schema/view.schema.json`` and ``move.schema.json``
(:func:`schema` loads them). Field names never change within a version; a new
field that an old reader could not ignore means a new version.

A view
======

=================  ========  ====================================================
field              needed    meaning
=================  ========  ====================================================
``format``         no        ``"matador-view"``
``version``        no        ``1`` (another number is refused)
``rules``          yes       a preset name (``"standard"``), or an object:
                             ``{"preset": "leiden", "players": 3}`` (a preset with
                             fields changed) or the fields of ``Rules`` without a
                             preset (unnamed fields keep their defaults)
``seat``           yes       the seat the bot plays, 0 .. players - 1
``hand``           yes       that seat's tiles now, e.g. ``["2-5", "0-0"]``
``first``          yes       the seat that was first to act in this hand
``history``        yes       every public action of the hand so far, in order:
                             ``{"seat": 1, "move": "6-6"}``; moves in the text form
                             of the README (``6-6``, ``1-6@0>1``, ``3-4@1x``,
                             ``2-5@0^``, ``draw``, ``pass``); draws name no tile
``scores``         no        match totals, one per side (team, or seat)
``to_move``        no        checked: the seat to act
``leader``         no        checked: the seat that placed the lead
``open_ends``      no        checked: the open ends in layout order (``"3"``,
                             ``"3*"``, ``"3b"``, ``"2/5"``, ``"_"``)
``layout``         no        checked: the tiles on the table in the order placed
``hand_sizes``     no        checked: tiles held per seat
``boneyard_size``  no        checked: tiles left in the boneyard
``draws_this_turn`` no       checked
``passes_in_row``  no        checked
``legal_moves``    no        checked: the seat's legal moves, any order
=================  ========  ====================================================

The bot rebuilds the game from ``rules``, ``hand``, ``first`` and ``history``
(:func:`matador_env.engine.public_view`), so the optional fields are never
needed; when a frontend sends them they must agree with that rebuild, which
catches a frontend whose own state has drifted. :func:`view_to_json` writes
every field.

A move
======

``{"format": "matador-move", "version": 1, "move": "2-5@1>5", "kind": "play",
"tile": "2-5", "end": 1, "shows": 5, "mode": "inline"}``; for ``draw`` and
``pass`` the last four are ``null``. ``move`` alone is enough for
:func:`move_from_json`; the other fields, when present, must agree with it. A
reply may name the bot that chose it (``"bot": "trained"``, as the HTTP server
does); readers ignore that name.

Errors
======

Anything malformed or inconsistent raises :class:`ProtocolError` (a
``ValueError``) whose ``field`` is the path of the value at fault
(``"history[3].move"``, ``"hand[0]"``, ``"rules.players"``) and whose message says
what was wrong and what is allowed. Nothing is guessed or repaired: JSON
``true``/``false`` are not numbers (``"seat": true`` is refused), nor is ``1.0``
an integer (JSON Schema counts it as one: here the reader is stricter than the
schemas), ``null`` is no rules value (``"preset": null`` is refused: leave the
field out), and numbers in text (tiles, moves, ends) are written in the digits
0-9 alone, as the schemas' patterns say. JSON text read with :func:`loads` (as
``Bot.move_json`` and the HTTP server do) is refused as a whole (``field``
``"(message)"``) when it is not UTF-8 JSON, or when readers would take it
differently: a key twice in one object, ``NaN``.

Sizes are bounded before any other work, so a huge message costs nothing to
refuse: lists at most :data:`MAX_ITEMS` long (``history`` also at most what the
rules allow in one hand: :func:`max_history`), strings at most
:data:`MAX_TEXT` characters. The schemas carry the same bounds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from .configs import configuration_of
from .engine import (
    PRESETS,
    End,
    HistoryError,
    Move,
    MoveParseError,
    Rules,
    RulesError,
    SeatView,
    Tile,
    public_view,
)
from .engine.tiles import is_json_int

__all__ = [
    "MAX_ITEMS",
    "MAX_TEXT",
    "PROTOCOL_VERSION",
    "VIEW_FORMAT",
    "MOVE_FORMAT",
    "ProtocolError",
    "loads",
    "rules_from_json",
    "rules_to_json",
    "view_from_json",
    "view_to_json",
    "move_from_json",
    "move_to_json",
    "max_history",
    "schema",
]

PROTOCOL_VERSION = 1
VIEW_FORMAT = "matador-view"
MOVE_FORMAT = "matador-move"
SCHEMA_DIR = Path(__file__).resolve().parent / "schema"

_VIEW_FIELDS = frozenset(
    [
        "format",
        "version",
        "rules",
        "seat",
        "hand",
        "first",
        "history",
        "scores",
        "to_move",
        "leader",
        "open_ends",
        "layout",
        "hand_sizes",
        "boneyard_size",
        "draws_this_turn",
        "passes_in_row",
        "legal_moves",
    ]
)
_MOVE_FIELDS = frozenset(
    ["format", "version", "move", "kind", "tile", "end", "shows", "mode", "bot"]
)

_MESSAGE = "(message)"
"""The ``field`` of an error in the message as a whole (not JSON, not an object)."""

MAX_TEXT = 64
"""The longest string a message may hold (a tile, a move, an end, a rules value)."""
MAX_BOT_NAME = 256
"""The longest bot name a move reply may carry (a policy path, for exported policies)."""
_LARGEST_SET = 136  # the double-15 set, the largest Rules allows
MAX_ITEMS: dict[str, int] = {
    "hand": _LARGEST_SET,
    "layout": _LARGEST_SET,
    "hand_sizes": _LARGEST_SET,  # one seat per tile at most
    "scores": _LARGEST_SET,
    "open_ends": 256,  # a placement adds at most one end (the spinner two): 4 + 2 + 136
    "history": 20_000,  # above max_history of every Rules (18,631: double-15, 136 seats)
    "legal_moves": 20_000,
}
"""The longest each list of a view may be, whatever the rules."""


def max_history(rules: Rules) -> int:
    """The most actions one hand under ``rules`` can hold before its end
    (:attr:`Rules.max_hand_actions`, which says why)."""
    return rules.max_hand_actions


class ProtocolError(ValueError):
    """A protocol message that is malformed or disagrees with itself or the rules.

    ``field`` is the path of the offending value, e.g. ``history[3].move``.
    """

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")

    def to_json(self) -> dict[str, str]:
        return {"error": "invalid", "field": self.field, "message": self.message}


# -- JSON text -----------------------------------------------------------------------


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object's fields, refused when a key comes twice: json.loads would keep the
    last value, another reader the first, and the message would mean two things."""
    data: dict[str, Any] = {}
    for key, value in pairs:
        if key in data:
            raise ValueError(f"the key {_show(key)} appears twice in one object")
        data[key] = value
    return data


def loads(text: str | bytes | bytearray, what: str = "the text") -> Any:
    """A message's JSON text (bytes: UTF-8) as Python values, read strictly.

    Refused with :class:`ProtocolError` (``field`` ``"(message)"``; the message
    begins with ``what``): text that is not UTF-8 or not JSON, and JSON that readers
    take differently: a key twice in one object, ``NaN`` or ``Infinity``, a number
    too long to read, nesting too deep. :meth:`matador_env.bot.Bot.move_json` and
    the HTTP server read JSON text with it.
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(_MESSAGE, f"{what} is not UTF-8: {exc}") from None
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise ProtocolError(
            _MESSAGE,
            f"{what} is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            + (f" ({what} is empty)" if not text.strip() else ""),
        ) from None
    except (ValueError, RecursionError) as exc:  # a key twice, NaN, a huge number, deep nesting
        raise ProtocolError(_MESSAGE, f"{what} is not usable JSON: {exc}") from None


# -- small typed readers -------------------------------------------------------------


def _rules_name(rules: Rules) -> str:
    """The configuration (or preset) ``rules`` are, for messages; else "other rules"."""
    config = configuration_of(rules)
    return config.name if config else rules.preset_name() or "other rules"


def _show(value: Any) -> str:
    """A value for an error message, cut short: a refusal must not cost what the
    message it refuses would have."""
    if isinstance(value, list):
        return f"a list of {len(value)} items"
    if isinstance(value, Mapping):
        return f"an object of {len(value)} fields"
    if isinstance(value, str) and len(value) > MAX_TEXT:
        return json.dumps(value[:MAX_TEXT]) + f"... ({len(value)} characters)"
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return type(value).__name__


def _int(value: Any, field: str, low: int | None = None, high: int | None = None) -> int:
    if not is_json_int(value):
        raise ProtocolError(field, f"expected an integer, got {_show(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"from {low} to {high}" if high is not None else f">= {low}"
        raise ProtocolError(field, f"expected an integer {bounds}, got {value}")
    return int(value)


def _list(value: Any, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise ProtocolError(field, f"expected a list, got {_show(value)}")
    return value


def _text(value: Any, field: str, example: str, limit: int = MAX_TEXT) -> str:
    if not isinstance(value, str):
        raise ProtocolError(field, f"expected a string like {example!r}, got {_show(value)}")
    if len(value) > limit:
        raise ProtocolError(
            field, f"at most {limit} characters are allowed, got {len(value)} ({_show(value)})"
        )
    return value


def _check_sizes(data: Mapping[str, Any]) -> None:
    """Every list of a view within :data:`MAX_ITEMS`, before anything is parsed."""
    for key, limit in MAX_ITEMS.items():
        value = data.get(key)
        if isinstance(value, list) and len(value) > limit:
            raise ProtocolError(key, f"at most {limit} items are allowed, got {len(value)}")


def _tile(value: Any, field: str, rules: Rules) -> Tile:
    text = _text(value, field, "2-5")
    try:
        tile = Tile.parse(text)
    except MoveParseError:
        raise ProtocolError(
            field, f"not a tile: {text!r} (expected 'a-b' in the digits 0-9, e.g. '2-5')"
        ) from None
    if tile.high > rules.set_max:
        raise ProtocolError(
            field, f"{text!r} is not a tile of the double-{rules.set_max} set of these rules"
        )
    return tile


def _move(value: Any, field: str) -> Move:
    text = _text(value, field, "2-5@1>5")
    try:
        return Move.parse(text)
    except MoveParseError:
        raise ProtocolError(
            field,
            f"not a move: {text!r} (expected a lead '3-3', a placement '2-5@1>5', "
            "'3-4@0x' or '2-5@1^', 'draw' or 'pass'; numbers in the digits 0-9)",
        ) from None


def _object(value: Any, field: str, known: frozenset[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ProtocolError(
            field or _MESSAGE, f"expected a JSON object, got {type(value).__name__}"
        )
    unknown = sorted(set(value) - known)
    if unknown:
        prefix = f"{field}." if field else ""
        raise ProtocolError(
            prefix + unknown[0], f"unknown field; the fields are {', '.join(sorted(known))}"
        )
    return value


def _header(data: Mapping[str, Any], expected: str) -> None:
    if "format" in data and data["format"] != expected:
        raise ProtocolError("format", f"expected {expected!r}, got {_show(data['format'])}")
    if "version" in data and (
        not is_json_int(data["version"]) or data["version"] != PROTOCOL_VERSION
    ):
        raise ProtocolError(
            "version",
            f"this library speaks protocol version {PROTOCOL_VERSION}, got "
            f"{_show(data['version'])}",
        )


# -- rules ---------------------------------------------------------------------------


def rules_from_json(value: Any, field: str = "rules") -> Rules:
    """A preset name, or an object of ``Rules`` fields with an optional ``preset``."""
    if isinstance(value, str):
        _text(value, field, "standard")
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str) or len(key) > MAX_TEXT:
                raise ProtocolError(
                    field,
                    f"field names are strings of at most {MAX_TEXT} characters, got {_show(key)}",
                )
            if key == "preset" and not isinstance(item, str):
                # null too: a null preset read as "no preset" would be a guess (the
                # schema's preset is a string).
                raise ProtocolError(
                    f"{field}.preset",
                    f"expected a preset name ({', '.join(PRESETS)}), got {_show(item)}; "
                    "leave preset out for rules of the fields alone",
                )
            if isinstance(item, str):
                _text(item, f"{field}.{key}", "standard")
            elif not isinstance(item, (int, bool)):
                raise ProtocolError(
                    f"{field}.{key}", f"expected a string, integer or boolean, got {_show(item)}"
                )
    try:
        if isinstance(value, str):
            return Rules.preset(value)
        if isinstance(value, Mapping):
            settings = dict(value)
            if "preset" not in settings:
                return Rules.from_dict(settings)
            return Rules.preset(settings.pop("preset"), **settings)
    except RulesError as exc:
        path = f"{field}.{exc.field}" if isinstance(value, Mapping) else field
        raise ProtocolError(path, str(exc)) from None
    except TypeError as exc:  # a value of the wrong type deep in Rules' own checks
        raise ProtocolError(field, str(exc)) from None
    raise ProtocolError(
        field, f"expected a preset name or an object of rules fields, got {_show(value)}"
    )


def rules_to_json(rules: Rules) -> str | dict[str, Any]:
    """The preset name when the rules are a preset, else every field."""
    return rules.preset_name() or rules.to_dict()


# -- views ---------------------------------------------------------------------------


def view_to_json(view: SeatView) -> dict[str, Any]:
    """Every field of a view (the checked ones included), JSON-ready."""
    history = view.history
    return {
        "format": VIEW_FORMAT,
        "version": PROTOCOL_VERSION,
        "rules": rules_to_json(view.rules),
        "seat": view.seat,
        "hand": [str(t) for t in view.hand],
        "first": history[0].seat if history else view.leader,
        "history": [{"seat": e.seat, "move": str(e.move)} for e in history],
        "scores": list(view.scores) if view.scores is not None else None,
        "to_move": view.to_move,
        "leader": view.leader,
        "open_ends": [str(e) for e in view.ends],
        "layout": [str(t) for t in view.layout],
        "hand_sizes": list(view.hand_sizes),
        "boneyard_size": view.boneyard_size,
        "draws_this_turn": view.draws_this_turn,
        "passes_in_row": view.passes_in_row,
        "legal_moves": [str(m) for m in view.legal_moves],
    }


def view_from_json(data: Any, rules: Rules | None = None) -> SeatView:
    """The :class:`SeatView` a JSON view describes (see the module docstring).

    ``rules``, when given, are the only rules accepted (a bot trained for one
    configuration passes its own); ``data["rules"]`` must then equal them.
    Raises :class:`ProtocolError` naming the field at fault.
    """
    data = _object(data, "", _VIEW_FIELDS)
    _check_sizes(data)
    _header(data, VIEW_FORMAT)
    for key in ("rules", "seat", "hand", "first", "history"):
        if key not in data:
            raise ProtocolError(key, "missing; a view needs rules, seat, hand, first and history")
    game_rules = rules_from_json(data["rules"])
    if rules is not None and game_rules != rules:
        theirs = {k: v for k, v in game_rules.to_dict().items() if rules.to_dict()[k] != v}
        raise ProtocolError(
            "rules",
            f"this bot plays {_rules_name(rules)} only; these rules differ in "
            + ", ".join(f"{k}={v!r} (bot: {rules.to_dict()[k]!r})" for k, v in theirs.items()),
        )
    n = game_rules.players
    seat = _int(data["seat"], "seat", 0, n - 1)
    first = _int(data["first"], "first", 0, n - 1)
    hand = [_tile(v, f"hand[{i}]", game_rules) for i, v in enumerate(_list(data["hand"], "hand"))]
    history: list[tuple[int, Move]] = []
    longest = max_history(game_rules)
    raw_history = _list(data["history"], "history")
    if len(raw_history) > longest:
        raise ProtocolError(
            "history",
            f"at most {longest} actions fit in one hand under these rules, got {len(raw_history)}",
        )
    for i, item in enumerate(raw_history):
        entry = _object(item, f"history[{i}]", frozenset(("seat", "move")))
        for key in ("seat", "move"):
            if key not in entry:
                raise ProtocolError(f"history[{i}].{key}", "missing; an action is {seat, move}")
        who = _int(entry["seat"], f"history[{i}].seat", 0, n - 1)
        history.append((who, _move(entry["move"], f"history[{i}].move")))
    scores = None
    if data.get("scores") is not None:
        raw = _list(data["scores"], "scores")
        if len(raw) != game_rules.sides:
            raise ProtocolError(
                "scores",
                f"expected {game_rules.sides} totals (one per "
                f"{'team' if game_rules.teams else 'seat'}), got {len(raw)}",
            )
        scores = tuple(_int(v, f"scores[{i}]", 0) for i, v in enumerate(raw))
    try:
        view = public_view(game_rules, seat, hand, history, first, scores)
    except HistoryError as exc:
        path = exc.field if exc.index is None else f"{exc.field}[{exc.index}].{exc.part}"
        raise ProtocolError(path, exc.message) from None
    _check_claims(data, view)
    return view


def _check_claims(data: Mapping[str, Any], view: SeatView) -> None:
    """The optional fields must agree with the view rebuilt from the history."""
    rebuilt = view_to_json(view)
    for key in ("to_move", "leader", "boneyard_size", "draws_this_turn", "passes_in_row"):
        if key in data and (claimed_count := _int(data[key], key, 0)) != rebuilt[key]:
            raise ProtocolError(
                key, f"{claimed_count} disagrees with the history, which gives {rebuilt[key]}"
            )
    if "hand_sizes" in data:
        sizes = [
            _int(v, f"hand_sizes[{i}]", 0)
            for i, v in enumerate(_list(data["hand_sizes"], "hand_sizes"))
        ]
        if sizes != rebuilt["hand_sizes"]:
            raise ProtocolError(
                "hand_sizes",
                f"{sizes} disagrees with the history, which gives {rebuilt['hand_sizes']}",
            )
    if "open_ends" in data:
        claimed = _list(data["open_ends"], "open_ends")
        ends: list[str] = []
        for i, e in enumerate(claimed):
            text = _text(e, f"open_ends[{i}]", "3")
            try:
                ends.append(str(End.parse(text)))
            except MoveParseError:
                raise ProtocolError(
                    f"open_ends[{i}]",
                    f"not an open end: {e!r} (e.g. '3', '3*', '3b', '2/5', '_', with the "
                    "digits 0-9 and no spaces)",
                ) from None
        if ends != rebuilt["open_ends"]:
            raise ProtocolError(
                "open_ends",
                f"{claimed} disagrees with the history, which leaves {rebuilt['open_ends']}",
            )
    if "layout" in data:
        claimed = [
            str(_tile(v, f"layout[{i}]", view.rules))
            for i, v in enumerate(_list(data["layout"], "layout"))
        ]
        if claimed != rebuilt["layout"]:
            raise ProtocolError(
                "layout", f"{claimed} disagrees with the history, which placed {rebuilt['layout']}"
            )
    if "legal_moves" in data:
        claimed_moves = {
            str(_move(v, f"legal_moves[{i}]"))
            for i, v in enumerate(_list(data["legal_moves"], "legal_moves"))
        }
        if claimed_moves != set(rebuilt["legal_moves"]):
            raise ProtocolError(
                "legal_moves",
                f"disagrees with the rules, which allow {sorted(rebuilt['legal_moves'])}",
            )


# -- moves ---------------------------------------------------------------------------


def move_to_json(move: Move) -> dict[str, Any]:
    return {
        "format": MOVE_FORMAT,
        "version": PROTOCOL_VERSION,
        "move": str(move),
        "kind": move.kind,
        "tile": str(move.tile) if move.tile is not None else None,
        "end": move.end,
        "shows": move.shows,
        "mode": move.mode,
    }


def move_from_json(data: Any) -> Move:
    """The move of a JSON move object (``move`` is enough; the rest must agree)."""
    data = _object(data, "", _MOVE_FIELDS)
    _header(data, MOVE_FORMAT)
    if "move" not in data:
        raise ProtocolError("move", "missing; a move object needs its text form, e.g. '2-5@1>5'")
    move = _move(data["move"], "move")
    if "bot" in data:
        _text(data["bot"], "bot", "trained", MAX_BOT_NAME)
    written = move_to_json(move)
    for key in ("kind", "tile", "end", "shows", "mode"):
        if key not in data:
            continue
        claimed = data[key]
        # Compared by type as well: JSON true is not the end 1 (True == 1 in Python).
        if type(claimed) is not type(written[key]) or claimed != written[key]:
            raise ProtocolError(
                key,
                f"{_show(claimed)} disagrees with move {str(move)!r}, "
                f"which has {json.dumps(written[key])}",
            )
    return move


@cache
def _load_schema(name: str) -> str:
    return (SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8")


def schema(name: str) -> dict[str, Any]:
    """The JSON Schema of ``"view"`` or ``"move"`` (a fresh copy)."""
    if name not in ("view", "move"):
        raise ValueError(f"schema: 'view' or 'move', got {name!r}")
    loaded: dict[str, Any] = json.loads(_load_schema(name))
    return loaded
