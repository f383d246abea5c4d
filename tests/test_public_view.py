"""public_view: a seat's view rebuilt from its hand and the public history.

The property: at every point of random hands, under every configuration of the
property tests, the rebuilt view of every seat equals the engine's own view.
Then each checkable rule of the history, broken once, gives a HistoryError that
names the field and the position.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from matador_env.engine import HandState, HistoryError, Move, Rules, public_view
from tests.scripted import deal
from tests.test_properties import CONFIG_IDS, CONFIGS

STANDARD = Rules.preset("standard")


def rebuilt(state: HandState, seat: int) -> object:
    return public_view(state.rules, seat, state.hand(seat), state.history, state.dealt_leader)


@pytest.mark.parametrize("rules", list(CONFIGS.values()), ids=CONFIG_IDS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deal_seed=st.integers(0, 2**32 - 1), choice_seed=st.integers(0, 2**32 - 1))
def test_rebuilt_view_equals_engine_view(rules: Rules, deal_seed: int, choice_seed: int) -> None:
    state = HandState.deal(rules, deal_seed)
    rng = random.Random(choice_seed)
    while state.outcome is None:
        for seat in range(rules.players):
            assert rebuilt(state, seat) == state.view(seat)
        moves = state.legal_moves()
        state = state.apply(moves[rng.randrange(len(moves))])


def test_scores_and_text_forms_are_accepted() -> None:
    state = HandState.deal(STANDARD, 3)
    for _ in range(5):
        state = state.apply(state.legal_moves()[0])
    history = [(e.seat, str(e.move)) for e in state.history]
    hand = [str(t) for t in state.hand(state.to_move)]
    view = public_view(STANDARD, state.to_move, hand, history, state.dealt_leader, (10, 40))
    assert view == state.view(state.to_move, (10, 40))


def test_empty_history_gives_the_opening_view() -> None:
    state = HandState.deal(STANDARD, 11)
    for seat in (0, 1):
        assert public_view(STANDARD, seat, state.hand(seat), [], state.dealt_leader) == state.view(
            seat
        )


# A scripted opening: seat 0 leads 6-6, seat 1 lays 1-6 on it (6 + 1 = 7).
#   [6-6] -> 6|6 ; then 1-6 on end 0 shows 1:  1-6|6-6
OPENING = deal(STANDARD, ["6-6 5-5 4-4 0-1 0-2 0-3 0-4", "1-6 1-1 2-2 3-3 1-2 1-3 1-4"])
HAND0 = ["5-5", "4-4", "0-1", "0-2", "0-3", "0-4"]


def _error(
    hand: list[str], history: Sequence[tuple[int, Move | str]], **kw: object
) -> HistoryError:
    args: dict[str, object] = {"seat": 0, "first": 0, **kw}
    with pytest.raises(HistoryError) as info:
        public_view(STANDARD, args["seat"], hand, history, args["first"])  # type: ignore[arg-type]
    return info.value


def test_scripted_opening_rebuilds() -> None:
    state = OPENING.apply("6-6").apply("1-6@0>1")
    view = public_view(STANDARD, 0, HAND0, [(0, "6-6"), (1, "1-6@0>1")], 0)
    assert view == state.view(0)
    assert [str(e) for e in view.ends] == ["1", "6"]


@pytest.mark.parametrize(
    ("history", "hand", "field", "index", "words"),
    [
        ([(1, "6-6")], HAND0, "history", 0, "seat 1 acted, but seat 0 was to act"),
        ([(0, "6-6"), (1, "6-6@0>6")], HAND0, "history", 1, "on the table already"),
        ([(0, "6-6"), (1, "5-5@0>5")], HAND0, "history", 1, "also in the seat's hand"),
        ([(0, "6-6"), (1, "2-3@0>3")], HAND0, "history", 1, "not a legal placement"),
        ([(0, "6-6"), (1, "pass")], HAND0, "history", 1, "only when no draw is possible"),
        ([(0, "6-6"), (1, "2-9@0>2")], HAND0, "history", 1, "not a tile of the double-6 set"),
        ([(0, "6-6"), (1, "sideways")], HAND0, "history", 1, "not"),
        ([(0, "6-6")], HAND0 + ["6-5"], "hand", None, "holds 7 tiles, but the history leaves it 6"),
        ([(0, "6-6")], HAND0[:-1] + ["5-5"], "hand", None, "listed twice"),
        ([(0, "6-6")], HAND0[:-1] + ["7-7"], "hand", None, "not a tile of the double-6 set"),
    ],
)
def test_bad_history_is_named(
    history: list[tuple[int, str]], hand: list[str], field: str, index: int | None, words: str
) -> None:
    err = _error(hand, history)
    assert err.field == field
    assert err.index == index
    assert words in str(err)


def test_bad_seats_are_named() -> None:
    assert _error(HAND0, [], seat=2).field == "seat"
    assert _error(HAND0, [], first=-1).field == "first"


def test_draws_stop_at_the_reserve() -> None:
    # Standard: 14 tiles in the boneyard, 2 stay there (boneyard_reserve): 12 draws at most.
    state = HandState.deal(STANDARD, 5)
    first = state.dealt_leader
    history: list[tuple[int, Move | str]] = [(first, state.legal_moves()[0])]
    other = 1 - first
    history += [(other, "draw")] * 12
    hand = [str(t) for t in state.hand(first)][1:]
    view = public_view(STANDARD, first, hand, history, first)
    assert view.boneyard_size == 2 and view.hand_sizes[other] == 19
    err = _error(hand, [*history, (other, "draw")], first=first, seat=first)
    assert err.index == 13 and "2 must stay there" in str(err)


def test_nothing_after_the_hand_ends() -> None:
    # Two tiles each. 3-3 | 4-5 on end 0 (3 + 4 = 7) shows 5 | 4-4 on end 1 shows 4:
    #   5-4|3-3|4-4   and seat 0 is out. Any further action is refused, and so is the
    # finished hand itself (it has no move to make).
    rules = Rules.preset("standard", hand_size=2)
    played = [(0, "3-3"), (1, "4-5@0>5"), (0, "4-4@1>4")]
    state = deal(rules, ["3-3 4-4", "4-5 6-6"])
    for _, move in played:
        state = state.apply(move)
    assert state.outcome is not None
    with pytest.raises(HistoryError, match="ends the hand"):
        public_view(rules, 1, ["6-6"], played, 0)
    with pytest.raises(HistoryError, match=r"history\[3\]: the hand ended"):
        public_view(rules, 1, ["6-6"], [*played, (1, "draw")], 0)


def test_a_placement_given_in_numpy_integers_goes_on_as_the_engines_own_move() -> None:
    # As HandState.apply does (and public_view does for a draw): the view's history holds
    # the engine's own Move, whose numbers are ints, not the caller's numpy integers
    # (json.dumps refuses those).
    state = OPENING.apply("6-6")
    legal = next(m for m in state.legal_moves() if str(m) == "1-6@0>1")
    odd = legal._replace(end=np.int64(0), shows=np.int64(1))
    view = public_view(STANDARD, 0, HAND0, [(0, "6-6"), (1, odd)], 0)
    assert view == state.apply(legal).view(0)
    placed = view.history[-1].move
    assert placed == legal and type(placed) is Move
    assert type(placed.end) is int and type(placed.shows) is int
