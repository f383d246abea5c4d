"""Issue #14: every bad input to an engine entry point is a documented error (a
RulesError, IllegalMoveError or other ValueError that says what was wrong), never a
bare TypeError or AttributeError, and a refused input changes nothing."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from matador_env.engine import (
    End,
    HandState,
    HistoryError,
    IllegalMoveError,
    MatchState,
    Move,
    MoveParseError,
    Rules,
    RulesError,
    Tile,
    hand_record,
    parse_hand_record,
    public_view,
)
from matador_env.engine.tiles import is_text

STANDARD = Rules.preset("standard")
STATE = HandState.deal(STANDARD, 1)
FIELD_NAMES = [f for f in Rules().to_dict()]


# -- Rules -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "build",
    [lambda: Rules(colour="red"), lambda: Rules.preset("standard", colour=1)],  # type: ignore[call-arg]
    ids=["constructor", "preset"],
)
def test_unknown_rules_keyword_lists_the_fields(build: Callable[[], Rules]) -> None:
    with pytest.raises(RulesError) as info:
        build()
    assert info.value.field == "colour"
    assert all(name in str(info.value) for name in FIELD_NAMES)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("players", "2"),
        ("players", 2.0),
        ("players", None),
        ("players", True),
        ("set_max", 6.5),
        ("boneyard_reserve", [2]),
        ("target_score", "100"),
        ("teams", 1),
        ("teams", None),
        ("matador_as_regular", "yes"),
        ("hand_size", 5.0),
        ("hand_size", True),
        ("lead_tile", ["any"]),
        ("lead_tile", None),
        ("draw_rule", 2),
    ],
)
def test_wrong_type_names_field_value_and_what_is_allowed(field: str, value: Any) -> None:
    for build in (lambda: Rules(**{field: value}), lambda: Rules.preset("pagat", **{field: value})):
        with pytest.raises(RulesError) as info:
            build()
        assert info.value.field == field
        assert info.value.value is value or info.value.value == value
        assert repr(value) in str(info.value) and "allowed" in str(info.value)


def test_rules_built_other_ways_refuse_bad_input() -> None:
    with pytest.raises(RulesError, match="preset"):
        Rules.preset(["standard"])  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="mapping"):
        Rules.from_dict(["players", 2])  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="key=value"):
        Rules.from_text(b"players=2")  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="at most 18"):
        Rules(*range(19))
    with pytest.raises(RulesError, match="given twice"):
        Rules(6, set_max=6)  # type: ignore[misc]
    # The checks sit in front of the constructor, not in the way of copies.
    leiden = Rules.preset("leiden")
    assert pickle.loads(pickle.dumps(leiden)) == leiden == copy.deepcopy(leiden)


def test_complete_round_refuses_a_lead_that_passes() -> None:
    """Defect 1: kardinal with double_not_blank drifted for 2,000 deals without ending."""
    for build in (
        lambda: Rules.preset("kardinal", lead_tile="double_not_blank", players=4),
        lambda: Rules(match_end="complete_round", lead_tile="double_not_blank"),
        lambda: Rules.preset("leiden", match_end="complete_round", next_leader="rotate"),
        lambda: Rules.preset("kardinal").replace(lead_tile="double_not_blank"),
    ):
        with pytest.raises(RulesError) as info:
            build()
        assert info.value.field == "match_end"
        assert "double_not_blank" in str(info.value)


# -- HandState, MatchState, tiles and moves ------------------------------------------------


@pytest.mark.parametrize(
    "move",
    [
        3.5,
        None,
        b"draw",
        7,
        ("play",),
        [],
        object(),
        Move("play", "x", 0, 0, "inline"),  # type: ignore[arg-type]
        Move("play", Tile(-1, 3), None, None, "lead"),
        Move("play", None),
        Move("fly"),
    ],
    # A bare object's repr holds its address; test ids must be the same in every
    # process (pytest-xdist's workers collect the suite each on their own).
    ids=lambda move: "object()" if type(move) is object else repr(move),
)
def test_apply_refuses_what_is_not_a_move_and_changes_nothing(move: Any) -> None:
    before = (STATE.history, STATE.hands, STATE.boneyard, STATE.to_move, STATE.legal_moves())
    with pytest.raises(IllegalMoveError) as info:
        STATE.apply(move)
    assert "legal moves" in str(info.value)
    assert (
        STATE.history,
        STATE.hands,
        STATE.boneyard,
        STATE.to_move,
        STATE.legal_moves(),
    ) == before
    match = MatchState.new(STANDARD, 3)
    with pytest.raises(IllegalMoveError):
        match.apply(move)
    assert match == MatchState.new(STANDARD, 3)


def test_apply_keeps_the_engines_own_move() -> None:
    """A stand-in equal to a legal move (a numpy half) must not reach the history. (A
    bool half is refused: tests/test_engine_inputs_state.py.)"""
    lead = next(m for m in STATE.legal_moves() if m.tile is not None and m.tile.low == 1)
    assert lead.tile is not None
    odd = Move("play", Tile(np.int64(1), lead.tile.high), None, None, "lead")  # type: ignore[arg-type]
    after = STATE.apply(odd)
    assert str(after.history[0].move) == str(lead)
    assert parse_hand_record(hand_record(after)).replay() == after


@pytest.mark.parametrize("seat", ["1", True, -1, 2, 1.0, None], ids=repr)
def test_view_refuses_what_is_not_a_seat(seat: Any) -> None:
    with pytest.raises(ValueError, match="seat must be a seat number: .* from 0 to 1;"):
        STATE.view(seat)
    with pytest.raises(ValueError, match="seat must be"):
        MatchState.new(STANDARD, 1).view(seat)
    with pytest.raises(ValueError, match="seat must be"):
        STATE.hand(seat)


@pytest.mark.parametrize("scores", ["x", (1,), (1, 2, 3), (1, "2"), (True, 0)], ids=repr)
def test_view_refuses_scores_that_are_not_one_total_per_side(scores: Any) -> None:
    with pytest.raises(ValueError, match="scores"):
        STATE.view(0, scores)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (lambda: HandState.deal(STANDARD, seed="x"), ValueError),  # type: ignore[arg-type]
        (lambda: HandState.deal(STANDARD, seed=True), ValueError),
        (lambda: HandState.deal("standard", 1), RulesError),  # type: ignore[arg-type]
        (lambda: HandState.deal(STANDARD, 1, leader=True), ValueError),
        (lambda: HandState.from_deal(STANDARD, [["1-1"], 5]), ValueError),  # type: ignore[list-item]
        (lambda: HandState.from_deal(["standard"], [[], []]), RulesError),  # type: ignore[arg-type]
        (lambda: HandState.from_deal(STANDARD, "ab"), ValueError),
        (lambda: HandState.from_deal(STANDARD, [[Tile(-1, 2)], []]), ValueError),
        (lambda: HandState.from_view("view", [], []), ValueError),  # type: ignore[arg-type]
        (lambda: MatchState.new(STANDARD, "x"), ValueError),  # type: ignore[arg-type]
        (lambda: MatchState.new(None, 1), RulesError),  # type: ignore[arg-type]
        (lambda: Move.parse(None), MoveParseError),  # type: ignore[arg-type]
        (lambda: Move.parse(b"draw"), MoveParseError),  # type: ignore[arg-type]
        (lambda: Tile.parse(5), MoveParseError),  # type: ignore[arg-type]
        (lambda: Tile.of("a", 1), MoveParseError),  # type: ignore[arg-type]
        (lambda: Tile.of(1.0, 2), MoveParseError),  # type: ignore[arg-type]
        (lambda: Tile.from_index("a"), ValueError),  # type: ignore[arg-type]
        (lambda: End.parse(3), MoveParseError),  # type: ignore[arg-type]
        (lambda: parse_hand_record(b"# Matador hand record v1"), MoveParseError),  # type: ignore[arg-type]
        (lambda: parse_hand_record(None), MoveParseError),  # type: ignore[arg-type]
    ],
)
def test_entry_points_refuse_wrong_types_with_a_message(
    call: Callable[[], object], error: type[ValueError]
) -> None:
    with pytest.raises(error) as info:
        call()
    assert str(info.value)


def test_hand_record_with_a_leader_that_is_no_seat_is_refused() -> None:
    text = hand_record(STATE).replace("leader: 0", "leader: 9").replace("leader: 1", "leader: 9")
    with pytest.raises(MoveParseError, match="leader 9 is not a seat"):
        parse_hand_record(text)


# Digits of other scripts pass str.isdigit and Python's \d, and int() reads most of them
# (and refuses "²" with a bare ValueError); the text forms are ASCII, as the protocol's
# JSON Schemas say.
OTHER_DIGITS = {"arabic-indic 1": "١", "fullwidth 3": "３", "superscript 2": "²"}


PARSERS: dict[str, Callable[[str], object]] = {
    "tile": Tile.parse,
    "move": Move.parse,
    "end": End.parse,
}


@pytest.mark.parametrize(
    ("form", "text"),
    [
        *(("tile", f"{d}-6") for d in OTHER_DIGITS.values()),
        *(("move", f"{d}-6") for d in OTHER_DIGITS.values()),
        *(("move", f"1-6@{d}>1") for d in OTHER_DIGITS.values()),
        ("move", "1-6@0>¹"),
        *(("end", d) for d in OTHER_DIGITS.values()),
        ("end", "３*"),
        ("end", "2/٥"),
        # int() also takes a sign, underscores and spaces; the end's text form has none.
        ("end", "+6"),
        ("end", "-1"),
        ("end", "1_2"),
        ("end", " 6"),
        ("end", "6 "),
        ("end", "006"),
    ],
    ids=ascii,
)
def test_text_forms_take_the_digits_0_to_9_only(form: str, text: str) -> None:
    with pytest.raises(MoveParseError, match=f"not an? {'open end' if form == 'end' else form}"):
        PARSERS[form](text)


def test_text_forms_still_read_what_they_documented() -> None:
    assert Tile.parse(" 6 - 1 ") == Tile(1, 6)
    assert Move.parse(" DRAW ") == Move("draw")
    assert End.parse("06") == End.parse("6")  # two digits, as the schema's end allows
    assert [str(End.parse(t)) for t in ("3", "3*", "3b", "2/5", "_")] == [
        "3",
        "3*",
        "3b",
        "2/5",
        "_",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "players=٣",
        "players=３",
        "set_max=²",
        "target_score=1_000",
        "target_score=+50",
        "hand_size=١",
        "hand_size=²",
        "target_score=" + "9" * 5000,
    ],
    ids=lambda t: t[:24],
)
def test_rules_text_takes_numbers_in_the_digits_0_to_9_only(text: str) -> None:
    key = text.partition("=")[0]
    with pytest.raises(RulesError) as info:
        Rules.from_text(text)
    assert info.value.field == key


# -- public_view -------------------------------------------------------------------------------

HAND = [str(t) for t in STATE.hand(0)]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"hand": 5}, "hand"),
        ({"hand": None}, "hand"),
        ({"hand": "1-1 2-2"}, "hand"),
        ({"hand": [Tile(-1, 2)]}, "hand"),
        ({"history": 5}, "history"),
        ({"history": [5]}, "history"),
        ({"history": [(0,)]}, "history"),
        ({"history": [("0", "6-6")]}, "history"),
        ({"history": [(0, Move("play", "x", None, None, "lead"))]}, "history"),  # type: ignore[arg-type]
        ({"history": [(0, Move("play", None))]}, "history"),
        ({"history": [(0, Move("draw", Tile(1, 1)))]}, "history"),
        ({"history": [(0, Move("fly"))]}, "history"),
        ({"scores": 5}, "scores"),
        ({"scores": (1, 2, 3)}, "scores"),
        ({"seat": True}, "seat"),
        ({"first": "0"}, "first"),
    ],
)
def test_public_view_refuses_wrong_types_naming_the_argument(
    kwargs: dict[str, Any], field: str
) -> None:
    args: dict[str, Any] = {
        "rules": STANDARD,
        "seat": 0,
        "hand": HAND,
        "history": [],
        "first": 0,
        **kwargs,
    }
    with pytest.raises(HistoryError) as info:
        public_view(**args)
    assert info.value.field == field


def test_public_view_refuses_what_is_not_rules() -> None:
    with pytest.raises(RulesError):
        public_view("standard", 0, HAND, [], 0)  # type: ignore[arg-type]


def test_a_move_with_fields_of_the_wrong_type_gets_its_message() -> None:
    """Found by benchmarks.fuzz: the message itself raised TypeError (a kind that is
    not text, an end that is not a number)."""
    led = STATE.apply(STATE.legal_moves()[0])
    held = led.hand(led.to_move)[0]
    for move in (Move(5), Move("play", held, "0", held.low, "inline"), Move("fly")):  # type: ignore[arg-type]
        with pytest.raises(IllegalMoveError) as info:
            led.apply(move)
        assert "legal moves" in str(info.value)
    with pytest.raises(IllegalMoveError, match="not a kind of move"):
        led.apply(Move("fly"))


def test_a_tile_outside_the_set_is_named_in_its_text_form() -> None:
    """Terminal play printed ``Tile(low=9, high=9) is not a tile of the double-6 set``
    for ``9-9``; a malformed tile still shows its repr, which says what is wrong."""
    with pytest.raises(IllegalMoveError, match=r": 9-9 is not a tile of the double-6 set"):
        STATE.apply(Move.parse("9-9"))
    with pytest.raises(HistoryError, match=r": 9-9 is not a tile of the double-6 set"):
        public_view(STANDARD, 0, [*HAND[:-1], "9-9"], [], 0)
    with pytest.raises(ValueError, match=r": 7-8 is not a tile of the double-6 set"):
        HandState.from_deal(STANDARD, [[Tile(7, 8)], [Tile(1, 1)]])
    with pytest.raises(HistoryError, match=r"Tile\(low=5, high=2\) is not a tile"):
        public_view(STANDARD, 0, [*HAND[:-1], Tile(5, 2)], [], 0)


def test_a_stream_of_distinct_rules_does_not_grow_the_table_cache() -> None:
    """Rules arrive from the JSON protocol and the HTTP server: one lookup table per
    configuration ever seen would grow for as long as the process lives."""
    from matador_env.engine import state as state_module

    for target in range(1, 3 * state_module._TABLES_KEPT):
        HandState.deal(Rules(target_score=target), target)
    assert len(state_module._TABLES) <= state_module._TABLES_KEPT
    assert HandState.deal(Rules(target_score=1), 1) == HandState.deal(Rules(target_score=1), 1)


@pytest.mark.parametrize("value", ["6-6", b"66", bytearray(b"66"), memoryview(b"66")])
def test_text_and_bytes_are_text(value: Any) -> None:
    # The bytes kinds iterate as integers: read as a list, bytearray(b"66") is [54, 54].
    assert is_text(value)


@pytest.mark.parametrize("value", [[54, 54], (54,), range(2), np.array([54]), 54, None])
def test_lists_of_items_are_no_text(value: Any) -> None:
    assert not is_text(value)
