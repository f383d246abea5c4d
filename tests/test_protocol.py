"""The JSON protocol: views and moves round-trip, match their schemas, and every
malformed or inconsistent message is refused with the path of the field at fault."""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matador_env.engine import PRESETS, HandState, Move, Rules, Tile
from matador_env.protocol import (
    MAX_ITEMS,
    MAX_TEXT,
    ProtocolError,
    loads,
    max_history,
    move_from_json,
    move_to_json,
    rules_from_json,
    schema,
    view_from_json,
    view_to_json,
)

STANDARD = Rules.preset("standard")
VIEW_SCHEMA = jsonschema.Draft202012Validator(schema("view"))
MOVE_SCHEMA = jsonschema.Draft202012Validator(schema("move"))


def test_schemas_are_valid_json_schemas() -> None:
    jsonschema.Draft202012Validator.check_schema(schema("view"))
    jsonschema.Draft202012Validator.check_schema(schema("move"))
    with pytest.raises(ValueError, match="'view' or 'move'"):
        schema("state")


def random_states(rules: Rules, hands: int, seed: int) -> list[HandState]:
    """Every state of a few random hands (the finished ones left out)."""
    rng = random.Random(seed)
    out = []
    for k in range(hands):
        s = HandState.deal(rules, seed * 1000 + k)
        while s.outcome is None:
            out.append(s)
            moves = s.legal_moves()
            s = s.apply(moves[rng.randrange(len(moves))])
    return out


@pytest.mark.parametrize(
    "rules",
    [Rules.preset(p) for p in PRESETS] + [Rules.preset("pagat", players=4, teams=True)],
    ids=[*PRESETS, "pagat_teams"],
)
def test_view_round_trips_through_json_text(rules: Rules) -> None:
    for state in random_states(rules, 2, 7)[::3]:
        for seat in range(rules.players):
            scores = tuple(range(rules.sides))
            view = state.view(seat, scores)
            message = json.loads(json.dumps(view_to_json(view)))
            VIEW_SCHEMA.validate(message)
            assert view_from_json(message) == view
            # The five needed fields alone give the same view.
            needed = {k: message[k] for k in ("rules", "seat", "hand", "first", "history")}
            assert view_from_json({**needed, "scores": message["scores"]}) == view
            for move in view.legal_moves:
                written = json.loads(json.dumps(move_to_json(move)))
                MOVE_SCHEMA.validate(written)
                assert move_from_json(written) == move
                assert move_from_json({"move": str(move)}) == move


def test_rules_forms() -> None:
    assert rules_from_json("leiden") == Rules.preset("leiden")
    assert rules_from_json({"preset": "polish", "players": 3}) == Rules.preset("polish", players=3)
    assert rules_from_json({"players": 3}) == Rules(players=3)
    assert rules_from_json(Rules.preset("kardinal").to_dict()) == Rules.preset("kardinal")
    custom = Rules(players=3, blocked_scoring="others")
    assert view_to_json(HandState.deal(custom, 1).view(0))["rules"] == custom.to_dict()


@pytest.mark.parametrize(
    ("value", "field", "words"),
    [
        ("chess", "rules", "preset"),
        ({"preset": "chess"}, "rules.preset", "standard"),
        ({"preset": "standard", "players": 1}, "rules.players", "2 or more"),
        ({"colour": "red"}, "rules.colour", "one of the fields"),
        ({"preset": 6}, "rules.preset", "preset name"),
        # null is no preset (the schema's preset is a string): leave the field out.
        ({"preset": None}, "rules.preset", "leave preset out"),
        ({"preset": None, "players": 4}, "rules.preset", "leave preset out"),
        ({"preset": "standard", "players": None}, "rules.players", "got null"),
        (6, "rules", "preset name or an object"),
    ],
)
def test_bad_rules_are_named(value: Any, field: str, words: str) -> None:
    with pytest.raises(ProtocolError) as info:
        rules_from_json(value)
    assert info.value.field == field and words in info.value.message


def sample_message() -> dict[str, Any]:
    """Seat to move after four moves of a standard hand, with every field."""
    state = HandState.deal(STANDARD, 4)
    for _ in range(4):
        state = state.apply(state.legal_moves()[0])
    return view_to_json(state.view(state.to_move))


def _refused(message: Any, rules: Rules | None = None) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        view_from_json(message, rules=rules)
    assert info.value.to_json()["field"] == info.value.field
    return info.value


def edit(**changes: Any) -> dict[str, Any]:
    message = sample_message()
    for key, value in changes.items():
        if value is KeyError:
            del message[key]
        else:
            message[key] = value
    return message


M = sample_message()
ON_TABLE = M["layout"][0]


@pytest.mark.parametrize(
    ("message", "field", "words"),
    [
        ([1, 2], "(message)", "JSON object"),
        (edit(seat=KeyError), "seat", "missing"),
        (edit(history=KeyError), "history", "missing"),
        (edit(colour="red"), "colour", "unknown field"),
        (edit(format="matador-move"), "format", "matador-view"),
        (edit(version=2), "version", "version 1"),
        (edit(seat=2), "seat", "from 0 to 1"),
        (edit(seat=True), "seat", "integer"),
        (edit(seat="0"), "seat", "integer"),
        (edit(first=-1), "first", "from 0 to 1"),
        (edit(hand="2-5 3-3"), "hand", "list"),
        (edit(hand=[*M["hand"], "7-7"]), f"hand[{len(M['hand'])}]", "double-6 set"),
        (edit(hand=[*M["hand"], "two-five"]), f"hand[{len(M['hand'])}]", "not a tile"),
        (edit(hand=[*M["hand"], 25]), f"hand[{len(M['hand'])}]", "string"),
        (edit(hand=[*M["hand"], M["hand"][0]]), "hand", "listed twice"),
        (edit(hand=[*M["hand"], ON_TABLE]), "history[0].move", "also in the seat's hand"),
        (edit(hand=M["hand"][1:]), "hand", "the history leaves it"),
        (edit(history={"seat": 0}), "history", "list"),
        (edit(history=["6-6"]), "history[0]", "JSON object"),
        (edit(history=[{"seat": M["first"]}]), "history[0].move", "missing"),
        (edit(history=[{"seat": M["first"], "move": "6-6", "at": 1}]), "history[0].at", "unknown"),
        (edit(history=[{"seat": 1 - M["first"], "move": "6-6"}]), "history[0].seat", "was to act"),
        (edit(history=[{"seat": M["first"], "move": "lay 6-6"}]), "history[0].move", "not a move"),
        (edit(history=[*M["history"], M["history"][1]]), "history[4].seat", "was to act"),
        (edit(scores=[1, 2, 3]), "scores", "expected 2 totals"),
        (edit(scores=[1, -2]), "scores[1]", ">= 0"),
        (edit(to_move=1 - M["to_move"]), "to_move", "disagrees"),
        (edit(open_ends=["9", "9"]), "open_ends", "disagrees"),
        (edit(open_ends=["x"]), "open_ends[0]", "not an open end"),
        (edit(layout=M["layout"][::-1]), "layout", "disagrees"),
        (edit(hand_sizes=[7, 7]), "hand_sizes", "disagrees"),
        (edit(boneyard_size=0), "boneyard_size", "disagrees"),
        (edit(legal_moves=["draw"]), "legal_moves", "disagrees"),
        (edit(rules="leiden"), "history[2].move", "not a legal placement"),
    ],
)
def test_malformed_views_are_refused_with_the_field(message: Any, field: str, words: str) -> None:
    err = _refused(message)
    assert err.field == field, err
    assert words in err.message, err


def test_a_bot_for_one_rules_refuses_others() -> None:
    message = edit(rules={"preset": "standard", "boneyard_reserve": 0})
    err = _refused(message, rules=STANDARD)
    assert err.field == "rules" and "boneyard_reserve=0" in err.message
    assert view_from_json(sample_message(), rules=STANDARD).seat == M["seat"]


def test_refusal_leaves_the_message_untouched() -> None:
    message = edit(hand=[*M["hand"], ON_TABLE])
    before = copy.deepcopy(message)
    _refused(message)
    assert message == before


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"kind": "draw"}, "move"),
        ({"move": "sideways"}, "move"),
        ({"move": 5}, "move"),
        ({"move": "draw", "kind": "pass"}, "kind"),
        ({"move": "2-5@1>5", "end": 0}, "end"),
        ({"move": "2-5@1>5", "shows": 2}, "shows"),
        ({"move": "draw", "format": "matador-view"}, "format"),
        ({"move": "draw", "why": "stuck"}, "why"),
        ("draw", "(message)"),
    ],
)
def test_malformed_moves_are_refused(message: Any, field: str) -> None:
    with pytest.raises(ProtocolError) as info:
        move_from_json(message)
    assert info.value.field == field


def test_move_json_fields() -> None:
    assert move_to_json(Move.parse("2-5@1>5")) == {
        "format": "matador-move",
        "version": 1,
        "move": "2-5@1>5",
        "kind": "play",
        "tile": "2-5",
        "end": 1,
        "shows": 5,
        "mode": "inline",
    }
    assert move_to_json(Move.parse("pass"))["tile"] is None


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 30)
    | st.floats(allow_nan=False)
    | st.sampled_from(["", "2-5", "6-6", "9-9", "draw", "pass", "2-5@0>5", "standard", "x"]),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = sorted(M)


@settings(max_examples=300, deadline=None)
@given(
    key=st.sampled_from(FIELDS),
    value=JSON_VALUES,
    position=st.integers(0, 20),
    how=st.sampled_from(["replace", "delete", "item"]),
)
def test_any_mangled_view_is_refused_cleanly_or_read(
    key: str, value: Any, position: int, how: str
) -> None:
    """Whatever a frontend sends, the answer is a view or a ProtocolError: never another
    exception (a crash) and never a view of something else than was sent."""
    message = sample_message()
    if how == "replace":
        message[key] = value
    elif how == "delete":
        del message[key]
    elif isinstance(message[key], list) and message[key]:
        items = message[key]
        if key == "history" and position % 2:
            entry = dict(items[position % len(items)])
            entry[["seat", "move"][position % 4 // 2]] = value
            items[position % len(items)] = entry
        else:
            items[position % len(items)] = value
    try:
        view = view_from_json(message)
    except ProtocolError as err:
        assert err.field and err.message
        return
    # Accepted: then it is the same game, only the optional claims may have gone.
    assert view_to_json(view)["history"] == message["history"]
    assert view_to_json(view)["hand"] == sorted(message["hand"], key=lambda t: Tile.parse(t).index)


def test_a_reply_may_name_its_bot() -> None:
    reply = {**move_to_json(Move.parse("draw")), "bot": "greedy"}
    MOVE_SCHEMA.validate(reply)
    assert move_from_json(reply) == Move.parse("draw")
    with pytest.raises(ProtocolError) as info:
        move_from_json({**reply, "bot": 3})
    assert info.value.field == "bot"


# -- issue #14: booleans are not numbers; sizes are bounded before any work ----------------


def _as_bool(value: int) -> bool:
    """The JSON boolean Python would take as equal to ``value`` (0 or 1)."""
    assert value in (0, 1)
    return bool(value)


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (edit(seat=_as_bool(M["seat"])), "seat"),
        (edit(first=_as_bool(M["first"])), "first"),
        (edit(to_move=_as_bool(M["to_move"])), "to_move"),
        (edit(leader=_as_bool(M["leader"])), "leader"),
        (edit(draws_this_turn=_as_bool(M["draws_this_turn"])), "draws_this_turn"),
        (edit(passes_in_row=_as_bool(M["passes_in_row"])), "passes_in_row"),
        (edit(version=True), "version"),
        (edit(scores=[True, False]), "scores[0]"),
        (
            edit(history=[{"seat": _as_bool(M["first"]), "move": M["history"][0]["move"]}]),
            "history[0].seat",
        ),
    ],
)
def test_json_booleans_are_not_numbers(message: dict[str, Any], field: str) -> None:
    assert not VIEW_SCHEMA.is_valid(message)
    err = _refused(message)
    assert err.field == field and ("integer" in err.message or "version 1" in err.message)


def test_json_booleans_are_not_numbers_in_claimed_sizes() -> None:
    message = edit(hand_sizes=[*M["hand_sizes"][:-1], True])
    assert not VIEW_SCHEMA.is_valid(message)
    assert _refused(message).field == f"hand_sizes[{len(M['hand_sizes']) - 1}]"


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"move": "2-5@1>5", "end": True}, "end"),
        ({"move": "2-5@0>5", "end": False}, "end"),
        ({"move": "1-2@0>1", "shows": True}, "shows"),
        ({"move": "draw", "version": True}, "version"),
    ],
)
def test_json_booleans_are_not_numbers_in_moves(message: dict[str, Any], field: str) -> None:
    assert not MOVE_SCHEMA.is_valid(message)
    with pytest.raises(ProtocolError) as info:
        move_from_json(message)
    assert info.value.field == field


def test_a_huge_history_is_refused_before_any_work() -> None:
    """200,000 actions were read one by one before the refusal (4-7 s); the size is now
    checked first: even 200,000 garbage items give the size error, not an item's."""
    message = edit(history=[None] * 200_000)
    assert not VIEW_SCHEMA.is_valid(message)
    err = _refused(message)
    assert err.field == "history"
    assert f"at most {MAX_ITEMS['history']} items" in err.message and "200000" in err.message


def test_a_history_longer_than_a_hand_is_refused_before_any_work() -> None:
    longest = max_history(STANDARD)
    err = _refused(edit(history=[None] * (longest + 1)))
    assert err.field == "history"
    assert f"at most {longest} actions" in err.message


@pytest.mark.parametrize("field", sorted(MAX_ITEMS))
def test_every_list_is_bounded(field: str) -> None:
    message = edit(**{field: ["x"] * (MAX_ITEMS[field] + 1)})
    assert not VIEW_SCHEMA.is_valid(message)
    err = _refused(message)
    assert err.field == field and str(MAX_ITEMS[field]) in err.message


@pytest.mark.parametrize(
    ("message", "field"),
    [
        (edit(hand=["1" * 100_000 + "-2"]), "hand[0]"),
        (edit(history=[{"seat": M["first"], "move": " " * 100_000 + "6-6"}]), "history[0].move"),
        (edit(open_ends=["3" * 1000]), "open_ends[0]"),
        (edit(layout=["x" * 1000]), "layout[0]"),
        (edit(legal_moves=["draw" * 1000]), "legal_moves[0]"),
        (edit(rules="standard" * 1000), "rules"),
        (edit(rules={"preset": "standard", "tie": "v" * 1000}), "rules.tie"),
        (edit(rules={"preset": "standard", "tie": ["void"] * 1000}), "rules.tie"),
    ],
)
def test_long_strings_are_refused_by_length(message: dict[str, Any], field: str) -> None:
    assert not VIEW_SCHEMA.is_valid(message)
    err = _refused(message)
    assert err.field == field
    assert len(err.message) < 500  # the refusal does not echo the whole value


def test_a_long_move_or_bot_name_is_refused() -> None:
    for message, field in (
        ({"move": "d" * 10_000}, "move"),
        ({"move": "draw", "bot": "b" * 300}, "bot"),
    ):
        assert not MOVE_SCHEMA.is_valid(message)
        with pytest.raises(ProtocolError) as info:
            move_from_json(message)
        assert info.value.field == field and "at most" in info.value.message


def test_the_schemas_carry_the_codes_bounds_and_fields() -> None:
    view, move = schema("view"), schema("move")
    assert set(view["properties"]) == set(M) | {"format", "version"}
    assert set(move["properties"]) == set(move_to_json(Move.parse("draw"))) | {"bot"}
    for field, limit in MAX_ITEMS.items():
        prop = view["properties"][field]
        arrays = [prop] if "type" in prop else [p for p in prop["oneOf"] if p["type"] == "array"]
        assert [a["maxItems"] for a in arrays] == [limit], field
    for name in ("tile", "end", "move"):
        assert view["$defs"][name]["maxLength"] == MAX_TEXT
    assert move["properties"]["move"]["maxLength"] == MAX_TEXT
    assert move["properties"]["move"]["pattern"] == view["$defs"]["move"]["pattern"]
    # No rules Rules accepts allow a hand longer than the schema's history bound.
    for players in range(2, 137):
        rules = Rules(set_max=15, players=players, hand_size=1, boneyard_reserve=0)
        assert max_history(rules) <= MAX_ITEMS["history"]


# -- the schemas and the reader agree ----------------------------------------------------


def other_digits(text: str, zero: str = "٠") -> str:
    """``text`` with its digits 0-9 written in another script (Arabic-Indic by default)."""
    return text.translate({ord("0") + i: ord(zero) + i for i in range(10)})


def fullwidth(text: str) -> str:
    return other_digits(text, "０")


FIRST = M["history"][0]

# (what is wrong, the message, the field the reader names)
BOTH_REFUSE: list[tuple[str, dict[str, Any], str]] = [
    ("preset null", edit(rules={"preset": None}), "rules.preset"),
    ("a rules field null", edit(rules={"preset": "standard", "players": None}), "rules.players"),
    (
        "a rules field name too long",
        edit(rules={"preset": "standard", "x" * (MAX_TEXT + 1): "y"}),
        "rules",
    ),
    ("target 0", edit(rules={"preset": "standard", "target_score": 0}), "rules.target_score"),
    (
        "tile in arabic-indic digits",
        edit(hand=[other_digits(M["hand"][0]), *M["hand"][1:]]),
        "hand[0]",
    ),
    ("tile in fullwidth digits", edit(hand=[fullwidth(M["hand"][0]), *M["hand"][1:]]), "hand[0]"),
    (
        "move in arabic-indic digits",
        edit(history=[{**FIRST, "move": other_digits(FIRST["move"])}, *M["history"][1:]]),
        "history[0].move",
    ),
    (
        "move in fullwidth digits",
        edit(history=[{**FIRST, "move": fullwidth(FIRST["move"])}, *M["history"][1:]]),
        "history[0].move",
    ),
    ("layout in other digits", edit(layout=[other_digits(t) for t in M["layout"]]), "layout[0]"),
    (
        "end in other digits",
        edit(open_ends=[other_digits(e) for e in M["open_ends"]]),
        "open_ends[0]",
    ),
    ("end after a space", edit(open_ends=[" " + e for e in M["open_ends"]]), "open_ends[0]"),
    ("end before a space", edit(open_ends=[e + " " for e in M["open_ends"]]), "open_ends[0]"),
    ("end of three digits", edit(open_ends=["00" + e for e in M["open_ends"]]), "open_ends[0]"),
]


@pytest.mark.parametrize(
    ("message", "field"), [case[1:] for case in BOTH_REFUSE], ids=[case[0] for case in BOTH_REFUSE]
)
def test_what_the_reader_refuses_the_schema_refuses(message: dict[str, Any], field: str) -> None:
    """Python's jsonschema reads a pattern's \\d as any script's digit; the schemas write
    [0-9], so that every validator reads them as ECMA-262 does."""
    assert not VIEW_SCHEMA.is_valid(message)
    assert _refused(message).field == field


@pytest.mark.parametrize("move", ["١-٦@٠>١", "1-６", "1-6@0>²"])
def test_a_move_in_other_digits_is_refused_by_both(move: str) -> None:
    assert not MOVE_SCHEMA.is_valid({"move": move})
    with pytest.raises(ProtocolError) as info:
        move_from_json({"move": move})
    assert info.value.field == "move"


@pytest.mark.parametrize("key", ["seat", "first", "version"])
def test_a_number_with_a_fraction_is_no_integer_though_the_schema_takes_it(key: str) -> None:
    """JSON Schema counts 1.0 as the integer 1; the reader does not (nor does the
    server): the README's protocol section says the reader is the stricter."""
    message = edit(**{key: float(M[key])})
    assert VIEW_SCHEMA.is_valid(message)
    assert _refused(message).field == key


def test_the_schemas_write_digits_as_0_to_9_and_bound_rules_field_names() -> None:
    for name in ("view", "move"):
        assert "\\d" not in json.dumps(schema(name)), name
    rules_object = next(
        s for s in schema("view")["properties"]["rules"]["oneOf"] if s["type"] == "object"
    )
    assert rules_object["propertyNames"] == {"maxLength": MAX_TEXT}


# -- JSON text ------------------------------------------------------------------------------


def test_json_text_is_read_strictly() -> None:
    text = json.dumps(M)
    assert loads(text) == loads(text.encode()) == M
    bad_texts: list[tuple[str | bytes, str]] = [
        (text.replace('"seat": ', '"seat": 0, "seat": ', 1), 'the key "seat" appears twice'),
        ('{"history": [{"seat": 0, "move": "6-6", "move": "5-5"}]}', '"move" appears twice'),
        ('{"seat": NaN}', "NaN is not JSON"),
        ('{"seat": ', "not JSON: Expecting value at line 1 column 10"),
        ("", "is empty"),
        (b'{"rules": "\xff"}', "not UTF-8"),
    ]
    for bad, words in bad_texts:
        with pytest.raises(ProtocolError) as info:
            loads(bad)
        assert info.value.field == "(message)" and words in info.value.message, info.value


# -- every claim is checked, whole and in order ----------------------------------------------


@pytest.mark.parametrize(
    "key", ["to_move", "leader", "boneyard_size", "draws_this_turn", "passes_in_row"]
)
def test_a_claimed_count_one_off_the_history_is_refused(key: str) -> None:
    # Each count a frontend may claim is compared, not just read as an integer: a
    # frontend that lost a draw or a pass claims a count one off.
    claimed = M[key] + 1
    err = _refused(edit(**{key: claimed}))
    assert err.field == key and f"{claimed} disagrees" in err.message


@pytest.mark.parametrize("seat", [0, 1])
def test_a_claimed_hand_size_wrong_for_any_one_seat_is_refused(seat: int) -> None:
    # The last seat's size counts as much as the first's.
    sizes = list(M["hand_sizes"])
    sizes[seat] += 1
    assert _refused(edit(hand_sizes=sizes)).field == "hand_sizes"


def test_claimed_open_ends_in_another_order_are_refused() -> None:
    # The ends are numbered in layout order (moves name them by index): the same ends
    # in another order would have the bot answer the wrong end.
    assert len(set(M["open_ends"])) > 1
    err = _refused(edit(open_ends=M["open_ends"][::-1]))
    assert err.field == "open_ends" and "disagrees" in err.message


@pytest.mark.parametrize("change", ["one left out", "one added"])
def test_claimed_legal_moves_must_be_all_of_them(change: str) -> None:
    # Fewer moves than the rules allow is a disagreement too, not only moves they forbid.
    legal = list(M["legal_moves"])
    assert len(legal) > 1 and "draw" not in legal
    claimed = legal[:-1] if change == "one left out" else [*legal, "draw"]
    err = _refused(edit(legal_moves=claimed))
    assert err.field == "legal_moves" and "disagrees" in err.message
    assert view_from_json(edit(legal_moves=legal[::-1])).legal_moves  # any order is fine


def test_a_view_whose_first_seat_did_not_lead_round_trips() -> None:
    """No double to lead and no drawing: seat 0 passes and seat 1 leads. ``first`` is
    the seat of the first action (0), not the leader (1); written as the leader, the
    view would be refused (its history would begin with the wrong seat)."""
    rules = Rules(lead_tile="double_not_blank", draw_rule="none")
    state = HandState.deal(rules, 9)
    assert state.to_move == 0 and [str(m) for m in state.legal_moves()] == ["pass"]
    state = state.apply("pass")
    state = state.apply(state.legal_moves()[-1])
    assert state.leader == 1
    for seat in (0, 1):
        view = state.view(seat)
        message = json.loads(json.dumps(view_to_json(view)))
        assert message["first"] == 0 and message["leader"] == 1
        assert view_from_json(message) == view


def test_too_few_scores_are_refused() -> None:
    err = _refused(edit(scores=[3]))
    assert err.field == "scores" and "expected 2 totals" in err.message


@pytest.mark.parametrize(
    ("move", "mode"), [("2-5@1>5", "cross"), ("3-4@1x", "inline"), ("2-5@0^", "cross")]
)
def test_a_claimed_mode_must_agree_with_the_move(move: str, mode: str) -> None:
    # A frontend that reads ``mode`` to draw the tile must not be told another way.
    message = {**move_to_json(Move.parse(move)), "mode": mode}
    with pytest.raises(ProtocolError) as info:
        move_from_json(message)
    assert info.value.field == "mode" and "disagrees" in info.value.message
