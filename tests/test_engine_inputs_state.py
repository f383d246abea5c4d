"""Input handling of the engine's tiles, ends, moves, deals, views and seat views: bad
input gets a clear error naming what is wrong and what is allowed, and leaves every
object as it was; integers are the engine's (an int, a numpy integer or a 0-d integer
array, never a bool), and seeds run from 0 to 2**64 - 1."""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
import random
import time
from typing import Any

import numpy as np
import pytest

from matador_env.engine import (
    BLANK,
    BRANCH,
    CROSS,
    DRAW,
    PLAIN,
    SPINNER,
    End,
    HandState,
    HistoryError,
    IllegalMoveError,
    Move,
    MoveParseError,
    Rules,
    SeatView,
    Tile,
    blocked_points,
    hand_record,
    public_view,
    set_tiles,
    tile_count,
)
from matador_env.engine.state import SCORE_LIMIT, SEED_LIMIT
from matador_env.engine.tiles import END_KINDS, INTEGER_KINDS, MAX_HALF

STANDARD = Rules.preset("standard")
HUGE = 10**5000  # more digits than Python prints (4,300): its repr raises ValueError


def _played(rules: Rules, seed: int, actions: int) -> HandState:
    """The hand of ``seed`` after ``actions`` random legal moves (seeded)."""
    s = HandState.deal(rules, seed)
    rng = random.Random(seed)
    for _ in range(actions):
        moves = s.legal_moves()
        s = s.apply(moves[rng.randrange(len(moves))])
    return s


LED = _played(STANDARD, 1, 1)  # seat 1 to move after seat 0 led 3-3 (two ends showing 3)


def _snapshot(s: HandState) -> tuple[Any, ...]:
    return (s.hands, s.boneyard, s.history, s.to_move, s.ends, s.legal_moves(), s.outcome)


def _a_state_that_may_draw() -> HandState:
    """A standard hand where drawing is legal (deterministic: the first found)."""
    for seed in range(200):
        s = HandState.deal(STANDARD, seed)
        rng = random.Random(seed)
        while not s.is_over:
            moves = s.legal_moves()
            if DRAW in moves and s.ends:
                return s
            s = s.apply(moves[rng.randrange(len(moves))])
    raise AssertionError("no hand of seeds 0-199 let a seat draw")


def _a_state_with_a_blank_end() -> HandState:
    """A hand under matador_placement="upright" where a needs-a-blank end is open and
    the seat to move can place a tile (deterministic: the first such seed)."""
    rules = Rules.preset("standard", matador_placement="upright")
    for seed in range(200):
        s = HandState.deal(rules, seed)
        rng = random.Random(seed)
        while not s.is_over:
            moves = s.legal_moves()
            if any(e.kind == BLANK for e in s.ends) and moves[0].kind == "play":
                return s
            s = s.apply(moves[rng.randrange(len(moves))])
    raise AssertionError("no hand of seeds 0-199 opened a needs-a-blank end")


def _world(s: HandState) -> tuple[SeatView, list[list[Tile]], list[Tile]]:
    """The arguments of from_view that rebuild ``s`` from the view of the seat to move."""
    return s.view(s.to_move), [list(h) for h in s.hands], list(s.boneyard)


# -- 1. end kinds --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", END_KINDS)
def test_an_end_stores_the_modules_own_kind_however_the_string_was_made(kind: str) -> None:
    made = json.loads(json.dumps(kind))  # equal to the constant, another object
    assert made == kind and made is not kind
    values: tuple[int | None, int | None] = {
        BLANK: (None, None),
        CROSS: (2, 5),
    }.get(kind, (3, None))
    end = End(made, *values)
    assert end.kind is kind
    assert end == End(kind, *values)
    assert End.parse(str(end)) == end
    assert end._replace(kind=made).kind is kind
    assert pickle.loads(pickle.dumps(end)).kind is kind
    assert copy.deepcopy(end).kind is kind


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        (("weird", 3), "not an end kind: 'weird'; allowed: plain, cross, blank, branch, spinner"),
        ((None, 3), "not an end kind: None"),
        ((PLAIN, None), "value of an end of kind 'plain': None is not allowed"),
        ((PLAIN, True), "True is not allowed"),
        ((SPINNER, 3.0), "3.0 is not allowed"),
        ((BRANCH, -1), "-1 is not allowed"),
        ((PLAIN, MAX_HALF + 1), "from 0 to 99"),
        ((PLAIN, HUGE), "<an integer of 5001 digits> is not allowed"),
        ((PLAIN, 3, 4), "value2 must be None"),
        ((CROSS, 2), "value2 of an end of kind 'cross': None is not allowed"),
        ((BLANK, 0), "shows no number"),
    ],
)
def test_an_end_refuses_what_it_cannot_be(fields: tuple[Any, ...], says: str) -> None:
    with pytest.raises(ValueError) as info:
        End(*fields)
    assert says in str(info.value)


def test_replace_cannot_make_an_unknown_end() -> None:
    with pytest.raises(ValueError, match="not an end kind: 'weird'"):
        End(PLAIN, 3)._replace(kind="weird")


def test_an_end_reads_numpy_values_as_ints() -> None:
    end = End(CROSS, np.int64(2), np.array(5))  # type: ignore[arg-type]
    assert end == End(CROSS, 2, 5) and type(end.value) is int and type(end.value2) is int


def test_from_view_reads_ends_whatever_their_kind_strings_are() -> None:
    """An end kind equal to the constant but not it (from JSON, or in a plain tuple that
    no End constructor saw) made from_view's states give other legal moves, or crash
    (int - None) at a needs-a-blank end."""
    s = _a_state_with_a_blank_end()
    view, hands, boneyard = _world(s)
    for stand_in in (
        lambda e: tuple.__new__(End, (json.loads(json.dumps(e.kind)), e.value, e.value2)),
        lambda e: (json.loads(json.dumps(e.kind)), e.value, e.value2),
    ):
        odd = dataclasses.replace(view, ends=tuple(stand_in(e) for e in view.ends))  # type: ignore[misc]
        world = HandState.from_view(odd, hands, boneyard)
        assert world.legal_moves() == s.legal_moves()
        assert all(any(e.kind is own for own in END_KINDS) and type(e) is End for e in world.ends)


@pytest.mark.parametrize(
    ("ends", "says"),
    [
        (("3", "6"), "from_view: view.ends[0] is '3', not an End"),
        (((PLAIN, 3, None), ("weird", 6, None)), "view.ends[1]: not an end kind: 'weird'"),
        (((PLAIN, 7, None), (PLAIN, 6, None)), "view.ends[0] is 7, which shows a number above 6"),
        # A crosswise end shows two numbers; the second must be of the set as well.
        ((End("cross", 3, 9), End(PLAIN, 3)), "view.ends[0] is 3/9, which shows a number above 6"),
        (3, "from_view: view.ends must be a tuple of End, got 3"),
    ],
    ids=repr,
)
def test_from_view_refuses_ends_that_are_not_ends_of_the_set(ends: Any, says: str) -> None:
    view, hands, boneyard = _world(LED)
    with pytest.raises(ValueError) as info:
        HandState.from_view(dataclasses.replace(view, ends=ends), hands, boneyard)
    assert says in str(info.value)


# -- 2. tile indices -------------------------------------------------------------------------


def test_from_index_is_exact_and_refuses_indices_beyond_the_largest_tile() -> None:
    every = set_tiles(MAX_HALF)
    assert [Tile.from_index(i) for i in range(len(every))] == list(every)
    assert all(t.index == i for i, t in enumerate(every))
    assert set_tiles(6) == tuple(sorted(set_tiles(6), key=lambda t: t.index))
    start = time.perf_counter()
    for index in (len(every), 2**200, HUGE):
        with pytest.raises(ValueError, match=r"is out of range; allowed: 0 to 5049"):
            Tile.from_index(index)
    assert time.perf_counter() - start < 1.0  # 2**200 hung (a float root stepped by one)


# -- 3. huge integers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: HandState.deal(STANDARD, HUGE),
        lambda: HandState.deal(STANDARD, 1, leader=HUGE),
        lambda: HandState.from_deal(STANDARD, LED.dealt().hands, LED.dealt().boneyard, 0, HUGE),
        lambda: LED.view(HUGE),
        lambda: LED.view(0, (HUGE, 0)),
        lambda: LED.hand(-HUGE),
        lambda: Tile.of(HUGE, 1),
        lambda: Move.inline(Tile(1, 1), HUGE, 1),
        lambda: public_view(STANDARD, HUGE, [], [], 0),
        lambda: public_view(STANDARD, 0, [], [(HUGE, "6-6")], 0),
    ],
)
def test_huge_integers_get_the_engines_error_not_pythons(call: Any) -> None:
    with pytest.raises(ValueError) as info:
        call()
    assert "integer of 5001 digits>" in str(info.value)
    assert "Exceeds the limit" not in str(info.value)


@pytest.mark.parametrize(
    "move",
    [
        Move("play", Tile(0, 4), HUGE, 0, "inline"),  # 0-4 is held: "no open end ..."
        Move("play", Tile(1, HUGE), 0, 1, "inline"),
        Move("play", Tile(0, 4), 0, HUGE, "inline"),
        Move(HUGE),  # type: ignore[arg-type]
    ],
    ids=["end", "half", "shows", "kind"],
)
def test_a_move_with_a_huge_number_is_an_illegal_move(move: Move) -> None:
    before = _snapshot(LED)
    with pytest.raises(IllegalMoveError) as info:
        LED.apply(move)
    assert "Exceeds the limit" not in str(info.value)
    assert len(str(info.value)) < 600
    assert _snapshot(LED) == before


# -- 4. from_view -----------------------------------------------------------------------------


def test_from_view_takes_tiles_as_text_as_from_deal_does() -> None:
    view, hands, boneyard = _world(LED)
    as_text = [[str(t) for t in h] for h in hands]
    assert HandState.from_view(view, as_text, [str(t) for t in boneyard]) == HandState.from_view(
        view, hands, boneyard
    )


def _swap_first_hidden(hands: list[list[Tile]], viewer: int, tile: object) -> list[list[Any]]:
    out: list[list[Any]] = [list(h) for h in hands]
    other = 1 - viewer
    out[other][0] = tile
    return out


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            lambda v, h, b: (v, _swap_first_hidden(h, v.seat, None), b),
            "from_view: hand of seat 0: None is not a tile (expected a Tile or its text",
        ),
        (
            lambda v, h, b: (v, _swap_first_hidden(h, v.seat, (2, 5)), b),
            "from_view: hand of seat 0: (2, 5) is not a tile",
        ),
        (
            lambda v, h, b: (v, _swap_first_hidden(h, v.seat, Tile(True, 5)), b),
            "its halves must be an integer",
        ),
        (
            lambda v, h, b: (v, _swap_first_hidden(h, v.seat, Tile(5, 0)), b),
            "Tile(low=5, high=0) is not a tile: its low half is above its high half (Tile.of(5, 0)",
        ),
        (lambda v, h, b: (v, iter(h), b), "from_view: hands must be a list or tuple of 2 hands"),
        (lambda v, h, b: (v, h[:1], b), "from_view: hands must be a list or tuple of 2 hands"),
        (lambda v, h, b: (v, [h[0], "1-1 2-2"], b), "hand of seat 1: expected a list of tiles"),
        (lambda v, h, b: (v, h, None), "from_view: boneyard: expected a list of tiles, got None"),
        (lambda v, h, b: (v, h, b + [b[0]]), "from_view: boneyard: "),
        (lambda v, h, b: (v, h, b[:-1]), "boneyard of 13 tiles, the view has 14"),
        # The viewer's hand traded for other tiles: same sizes, every tile once.
        (
            lambda v, h, b: (v, [[h[1][0], *h[0][1:]], [h[0][0], *h[1][1:]]], b),
            "the viewer's hand must be the view's hand",
        ),
        (
            lambda v, h, b: (dataclasses.replace(v, to_move=5), h, b),
            "from_view: view.to_move must be a seat number: ",
        ),
        (
            lambda v, h, b: (dataclasses.replace(v, seat=True), h, b),
            "from_view: view.seat must be a seat number: ",
        ),
        (
            lambda v, h, b: (dataclasses.replace(v, leader=-1), h, b),
            "from_view: view.leader must be a seat number: ",
        ),
        (
            lambda v, h, b: (dataclasses.replace(v, layout=(Tile(9, 9),)), h, b),
            "from_view: view.layout: 9-9 is not a tile of the double-6 set",
        ),
        (
            lambda v, h, b: (dataclasses.replace(v, draws_this_turn=-1), h, b),
            "from_view: view.draws_this_turn=-1 is not allowed",
        ),
        (
            lambda v, h, b: (dataclasses.replace(v, history=("P0 1-6",)), h, b),
            "from_view: view.history[0] is 'P0 1-6', not an Event with a Move",
        ),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_from_view_refuses_what_from_deal_refuses_with_a_message(change: Any, says: str) -> None:
    view, hands, boneyard = _world(LED)
    with pytest.raises(ValueError) as info:
        HandState.from_view(*change(view, hands, boneyard))
    assert says in str(info.value)


def test_from_view_refuses_text_that_is_not_a_tile() -> None:
    view, hands, boneyard = _world(LED)
    with pytest.raises(MoveParseError, match="from_view: hand of seat 0: not a tile: 'x'"):
        HandState.from_view(view, _swap_first_hidden(hands, view.seat, "x"), boneyard)


# -- 5. seeds --------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [-5, -1, SEED_LIMIT, 2**70], ids=repr)
def test_seeds_outside_0_to_2_64_are_refused(seed: int) -> None:
    """random.Random shuffles with abs(seed): -5 dealt what 5 deals."""
    allowed = f"allowed: {INTEGER_KINDS} from 0 to 18446744073709551615 (2**64 - 1)"
    with pytest.raises(ValueError) as info:
        HandState.deal(STANDARD, seed)
    assert f"seed={seed} is not allowed; {allowed}" in str(info.value)
    dealt = LED.dealt()
    with pytest.raises(ValueError, match="seed="):
        HandState.from_deal(STANDARD, dealt.hands, dealt.boneyard, 0, seed)


def test_the_seeds_at_the_ends_of_the_range_deal_and_record() -> None:
    for seed in (0, SEED_LIMIT - 1):
        s = HandState.deal(STANDARD, seed)
        assert s.seed == seed and f"seed={seed}" in repr(s)
        assert f"seed: {seed}" in hand_record(s)


# -- 6. bools and floats inside a move ---------------------------------------------------------


def _inline_on_end_1() -> Move:
    """A legal in-line placement on end 1 of LED, of a tile with the low half 0 or 1 (so
    that a bool can stand in for it)."""
    return next(
        m
        for m in LED.legal_moves()
        if m.mode == "inline" and m.end == 1 and m.tile is not None and m.tile.low in (0, 1)
    )


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("end", True, "the open end must be an integer"),
        ("end", 1.0, "the open end must be an integer"),
        ("shows", "half-float", "the outward half must be a half of"),
        ("tile", "bool-half", "its halves must be an integer"),
        ("tile", "float-half", "its halves must be an integer"),
        ("tile", "plain-tuple", "the tile must be a Tile (e.g. Tile.parse('2-5')"),
    ],
)
def test_apply_refuses_a_bool_or_a_float_equal_to_a_legal_moves_number(
    field: str, value: object, says: str
) -> None:
    legal = _inline_on_end_1()
    assert legal.tile is not None and legal.shows is not None
    low, high = legal.tile
    changes: dict[str, object] = {
        "half-float": float(legal.shows),
        "bool-half": Tile(bool(low), high),
        "float-half": Tile(float(low), high),  # type: ignore[arg-type]
        "plain-tuple": (low, high),
    }
    odd = legal._replace(**{field: changes.get(str(value), value)})  # type: ignore[arg-type]
    assert odd == legal  # equal to a legal move: the lookup alone accepted it
    before = _snapshot(LED)
    with pytest.raises(IllegalMoveError) as info:
        LED.apply(odd)
    assert says in str(info.value) and "legal moves: " in str(info.value)
    assert _snapshot(LED) == before


def test_apply_refuses_a_tuple_equal_to_a_legal_move() -> None:
    legal = _inline_on_end_1()
    with pytest.raises(IllegalMoveError, match="expected a Move or its text form, got tuple"):
        LED.apply(tuple(legal))  # type: ignore[arg-type]


def test_apply_takes_numpy_numbers_and_keeps_the_engines_own_move() -> None:
    legal = _inline_on_end_1()
    assert legal.tile is not None and legal.end is not None and legal.shows is not None
    odd = Move(
        "play",
        Tile(np.int64(legal.tile.low), np.int32(legal.tile.high)),
        np.int64(legal.end),
        np.array(legal.shows),  # type: ignore[arg-type]
        "inline",
    )
    after = LED.apply(odd)  # type: ignore[arg-type]
    assert after.history[-1].move is legal


def test_public_view_refuses_a_bool_equal_to_a_legal_moves_number() -> None:
    legal = _inline_on_end_1()
    after = LED.apply(legal)
    viewer = after.to_move
    history: list[tuple[int, Move | str]] = [(e.seat, e.move) for e in after.history]
    assert public_view(STANDARD, viewer, after.hand(viewer), history, 0) == after.view(viewer)
    history[1] = (LED.to_move, legal._replace(end=True))
    with pytest.raises(HistoryError, match=r"history\[1\]: the open end must be an integer"):
        public_view(STANDARD, viewer, after.hand(viewer), history, 0)


def test_public_view_keeps_the_engines_own_draw() -> None:
    """A draw equal to DRAW but not it (a Move subclass) went into the history itself."""

    class OddMove(Move):
        __slots__ = ()

    s = _a_state_that_may_draw()
    drawn = s.apply(DRAW)
    history: list[tuple[int, Move | str]] = [(e.seat, e.move) for e in s.history]
    history.append((s.to_move, OddMove("draw")))
    viewer = (s.to_move + 1) % 2
    view = public_view(STANDARD, viewer, drawn.hand(viewer), history, s.dealt_leader)
    assert type(view.history[-1].move) is Move
    assert view == drawn.view(viewer)


# -- 7. numpy integers ---------------------------------------------------------------------------


def test_numpy_integers_are_read_as_ints_across_the_engine() -> None:
    seven = np.int64(7)
    dealt = HandState.deal(STANDARD, seven, leader=np.int64(1))
    assert dealt == HandState.deal(STANDARD, 7, leader=1)
    assert type(dealt.seed) is int and type(dealt.to_move) is int
    view = LED.view(np.int64(0), scores=(np.int64(1), np.array(2)))  # type: ignore[arg-type]
    assert view == LED.view(0, scores=(1, 2))
    assert type(view.seat) is int and all(type(x) is int for x in view.scores or ())
    assert LED.hand(np.int64(0)) == LED.hand(0)
    assert LED.hand_mask(np.uint8(1)) == LED.hand_mask(1)
    assert Tile.of(np.int64(3), np.int8(2)) == Tile(2, 3)
    assert type(Tile.of(np.int64(3), 2).high) is int
    assert Tile.from_index(np.int64(5)) == Tile(2, 2)
    again = HandState.from_deal(
        STANDARD, LED.dealt().hands, LED.dealt().boneyard, np.int64(0), np.int64(1)
    )
    assert again.seed == 1 and type(again.to_move) is int
    seat_view = LED.view(LED.to_move)
    history = [(np.int64(e.seat), e.move) for e in LED.history]
    assert (
        public_view(STANDARD, np.int64(seat_view.seat), seat_view.hand, history, np.int64(0))
        == seat_view
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda: HandState.deal(STANDARD, True),
        lambda: HandState.deal(STANDARD, np.bool_(True)),  # type: ignore[arg-type]
        lambda: HandState.deal(STANDARD, 7.0),  # type: ignore[arg-type]
        lambda: HandState.deal(STANDARD, 7, leader=np.bool_(False)),  # type: ignore[arg-type]
        lambda: LED.view(np.float64(0)),
        lambda: LED.view(0, scores=(True, 0)),
        lambda: LED.view(0, scores=(-1, 0)),
        lambda: LED.view(0, scores=(SCORE_LIMIT, 0)),
    ],
)
def test_bools_floats_and_out_of_range_numbers_name_the_integer_kinds(call: Any) -> None:
    with pytest.raises(ValueError) as info:
        call()
    assert INTEGER_KINDS in str(info.value)


def test_tile_halves_and_indices_refuse_bools_and_floats() -> None:
    for bad in (True, np.bool_(False), 2.0, "2"):
        with pytest.raises(MoveParseError, match="a tile half must be an integer"):
            Tile.of(bad, 3)  # type: ignore[arg-type]
        with pytest.raises(MoveParseError, match="a tile index must be an integer"):
            Tile.from_index(bad)  # type: ignore[arg-type]
    with pytest.raises(MoveParseError, match="a tile half must be from 0 to 99, got 100"):
        Tile.of(100, 1)


# -- 8. messages ---------------------------------------------------------------------------------


def test_a_draw_with_a_tile_says_a_draw_carries_none() -> None:
    s = _a_state_that_may_draw()
    with pytest.raises(IllegalMoveError) as info:
        s.apply(Move("draw", Tile(1, 1)))
    message = str(info.value)
    assert "a draw carries no tile, open end, outward half or mode" in message
    assert "drawing is not allowed" not in message


def test_a_move_built_with_text_for_its_tile_names_tile_parse() -> None:
    with pytest.raises(MoveParseError, match=r"not text: Tile.parse\('2-5'\) reads it"):
        Move.inline("2-5", 0, 5)  # type: ignore[arg-type]
    with pytest.raises(IllegalMoveError, match=r"not text: Tile.parse\('2-5'\) reads it"):
        LED.apply(Move("play", "2-5", 0, 5, "inline"))  # type: ignore[arg-type]


def test_a_tile_with_its_halves_out_of_order_names_tile_of() -> None:
    with pytest.raises(MoveParseError, match=r"low half is above its high half \(Tile.of\(5, 0\)"):
        Move.inline(Tile(5, 0), 0, 5)
    with pytest.raises(IllegalMoveError, match=r"Tile\(low=5, high=0\) is not a tile: its low"):
        LED.apply(Move("play", Tile(5, 0), 0, 5, "inline"))


@pytest.mark.parametrize(
    ("build", "says"),
    [
        (lambda: Move.lead(None), "a move's tile must be a Tile"),  # type: ignore[arg-type]
        (lambda: Move.cross(Tile(1, 2), -1), "a move's open end must be an integer"),
        (lambda: Move.upright(Tile(1, 2), True), "a move's open end must be an integer"),
        (lambda: Move.inline(Tile(1, 2), 0, 3), "the outward half 3 is not a half of 1-2"),
        (lambda: Move.inline(Tile(1, 2), 0, 2.0), "the outward half 2.0 is not a half of 1-2"),  # type: ignore[arg-type]
    ],
)
def test_the_move_constructors_check_their_arguments(build: Any, says: str) -> None:
    with pytest.raises(MoveParseError) as info:
        build()
    assert says in str(info.value)


def test_the_move_constructors_read_numpy_numbers_as_ints() -> None:
    move = Move.inline(Tile(np.int64(1), np.int64(2)), np.int64(0), np.int64(2))
    assert move == Move.inline(Tile(1, 2), 0, 2)
    assert all(type(x) is int for x in (move.end, move.shows, *(move.tile or ())))


@pytest.mark.parametrize("bad", [-1, True, 6.5, "6", None, MAX_HALF + 1], ids=repr)
def test_set_tiles_and_tile_count_refuse_what_is_no_set(bad: object) -> None:
    for call in (set_tiles, tile_count):
        with pytest.raises(ValueError) as info:
            call(bad)  # type: ignore[arg-type]
        assert f"set_max={bad!r} is not allowed; allowed: {INTEGER_KINDS} from 0 to 99" in str(
            info.value
        )
    assert tile_count(np.int64(6)) == 28 and set_tiles(np.int64(6)) == set_tiles(6)


# -- 9. empty hands ------------------------------------------------------------------------------


def test_from_deal_refuses_a_seat_without_tiles() -> None:
    """A deal gives every seat at least one tile (hand_size is 1 or more) and a hand ends
    when a seat lays its last: with every hand empty, seat 0 'won' 0 after two moves."""
    every = [str(t) for t in set_tiles(6)]
    with pytest.raises(ValueError, match="hand of seat 1: no tiles; every seat must be dealt"):
        HandState.from_deal(STANDARD, [every[:1], []], every[1:])
    with pytest.raises(ValueError, match="hand of seat 0: no tiles"):
        HandState.from_deal(STANDARD, [[], []], every)
    assert HandState.from_deal(STANDARD, [every[:1], every[1:2]], every[2:]).hand_sizes == (1, 1)


# -- 10. blocked scoring -------------------------------------------------------------------------


def test_blocked_points_refuses_an_unknown_scoring() -> None:
    assert [
        blocked_points(s, 3, 10) for s in ("others_minus_own", "others", "others_plus_own")
    ] == [
        7,
        10,
        13,
    ]
    with pytest.raises(
        ValueError, match="scoring='bogus' is not allowed; allowed: others_minus_own"
    ):
        blocked_points("bogus", 3, 10)
