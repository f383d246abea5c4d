"""The batch engine's public API: deals equal to the engine's, and bad input refused
with a message naming the slot and what was allowed, leaving every slot unchanged."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from matador_env.batch import BatchEngine, BatchError, random_hands  # noqa: E402
from matador_env.encoding import encoding_for  # noqa: E402
from matador_env.engine import HandState, Rules, RulesError  # noqa: E402


def _snapshot(eng: BatchEngine) -> list[np.ndarray]:
    return [a.copy() for a in (eng.loc, eng.hsize, eng.stock, eng.ends, eng.st, eng.cannot)]


def _unchanged(eng: BatchEngine, before: list[np.ndarray]) -> bool:
    return all(np.array_equal(a, b) for a, b in zip(_snapshot(eng), before, strict=True))


@pytest.fixture
def eng() -> BatchEngine:
    e = BatchEngine(Rules.preset("standard"), 3)
    e.deal([7, 8, 9])
    return e


def test_a_slot_holds_the_engines_deal_for_any_seed() -> None:
    rules = Rules.preset("leiden")
    seeds = [0, 1, 2**32, 2**63, 2**64 - 1, 123456789]  # the engine's seeds: 0 to 2**64 - 1
    eng = BatchEngine(rules, len(seeds))
    eng.deal(seeds)
    for b, seed in enumerate(seeds):
        hand = HandState.deal(rules, seed)
        assert eng.hand_masks(b) == tuple(hand.hand_mask(s) for s in range(2))
        assert eng.boneyard(b) == hand.boneyard
        assert int(eng.to_move[b]) == hand.to_move


def test_chosen_leaders_and_slots() -> None:
    rules = Rules.preset("standard", players=3)
    eng = BatchEngine(rules, 4)
    eng.deal([5, 6], slots=[3, 1], leaders=[2, None])
    assert int(eng.to_move[3]) == 2
    assert eng.hand_masks(1) == tuple(HandState.deal(rules, 6).hand_mask(s) for s in range(3))
    assert eng.over.tolist() == [True, False, True, False]


def test_out_of_range_action_names_slot_and_legal_moves(eng: BatchEngine) -> None:
    before = _snapshot(eng)
    legal = eng.legal_masks()
    acts = np.array([int(np.flatnonzero(legal[b])[0]) for b in range(3)])
    acts[1] = 500
    with pytest.raises(BatchError, match=r"slot 1: action 500 is out of range 0-127; allowed: "):
        eng.step(acts)
    assert _unchanged(eng, before)


def test_illegal_action_is_refused_and_nothing_changes(eng: BatchEngine) -> None:
    before = _snapshot(eng)
    legal = eng.legal_masks()
    acts = np.array([int(np.flatnonzero(legal[b])[0]) for b in range(3)])
    acts[2] = int(np.flatnonzero(legal[2] == 0)[0])
    with pytest.raises(BatchError, match=r"slot 2: action \d+ is .* is not legal; allowed: "):
        eng.step(acts)
    assert _unchanged(eng, before)
    eng.step(np.array([int(np.flatnonzero(legal[b])[0]) for b in range(3)]))
    assert not _unchanged(eng, before)


@pytest.mark.parametrize(
    "actions, message",
    [
        (np.zeros(2, np.int64), r"shape \(3,\)"),
        (np.zeros((3, 1), np.int64), r"shape \(3,\)"),
        (np.zeros(3, np.float32), "integers"),
        (np.zeros(3, np.bool_), "integers"),
        (["a", "b", "c"], "integers"),
    ],
)
def test_wrong_shape_or_dtype(eng: BatchEngine, actions: object, message: str) -> None:
    before = _snapshot(eng)
    with pytest.raises(BatchError, match=message):
        eng.step(actions)  # type: ignore[arg-type]
    assert _unchanged(eng, before)


def test_finished_slots_take_minus_one_only() -> None:
    rules = Rules.preset("standard")
    eng = BatchEngine(rules, 2)
    eng.deal([1], slots=[0])
    legal = eng.legal_masks()
    with pytest.raises(
        BatchError, match="slot 1: action 0 given but the hand is over; allowed: -1"
    ):
        eng.step(np.array([int(np.flatnonzero(legal[0])[0]), 0]))
    eng.step(np.array([int(np.flatnonzero(legal[0])[0]), -1]))


@pytest.mark.parametrize(
    "seeds, message",
    [
        (
            [1, 2**64],
            "seed of slot 1: 18446744073709551616 is not allowed; .* to 18446744073709551615",
        ),
        ([1.5, 2], "seed of slot 0: 1.5 is not allowed; allowed: an integer"),
        ([True, 2], "seed of slot 0: True is not allowed"),
        (["3", 2], "seed of slot 0: '3' is not allowed"),
        # As HandState.deal: random.Random would deal -5 as 5.
        (
            [1, -5],
            r"seed of slot 1: -5 is not allowed; .* from 0 to 18446744073709551615 \(2\*\*64 - 1\)",
        ),
    ],
)
def test_bad_seeds(seeds: list[object], message: str) -> None:
    eng = BatchEngine(Rules.preset("standard"), 2)
    eng.deal([4, 5])
    before = _snapshot(eng)
    with pytest.raises(BatchError, match=message):
        eng.deal(seeds)  # type: ignore[arg-type]
    with pytest.raises(BatchError, match=message):
        eng.new_matches(seeds)  # type: ignore[arg-type]
    assert _unchanged(eng, before)


def test_bad_slots_leaders_and_sizes() -> None:
    rules = Rules.preset("standard")
    eng = BatchEngine(rules, 2)
    with pytest.raises(BatchError, match="slot 5 does not exist; allowed: 0 to 1"):
        eng.deal([1], slots=[5])
    with pytest.raises(BatchError, match=r"leader of slot 0: 2 is not a seat; allowed: 0 to 1"):
        eng.deal([1, 2], leaders=[2, 0])
    with pytest.raises(BatchError, match="seeds: expected 2"):
        eng.deal([1, 2, 3])
    with pytest.raises(BatchError, match="size=0"):
        BatchEngine(rules, 0)
    with pytest.raises(RulesError, match="rules"):
        BatchEngine("standard", 2)  # type: ignore[arg-type]
    with pytest.raises(RulesError, match="players=136 .* at most 127 players"):
        BatchEngine(Rules(set_max=15, players=136, hand_size=1), 1)


def test_masks_use_the_encodings_action_ids() -> None:
    rules = Rules.preset("kardinal", players=3)
    enc = encoding_for(rules)
    eng = BatchEngine(rules, 1)
    eng.deal([42])
    hand = HandState.deal(rules, 42)
    assert np.array_equal(eng.legal_masks()[0], enc.action_mask(hand.legal_moves()))


def test_random_hands_end_with_valid_outcomes() -> None:
    results, actions = random_hands(Rules.preset("standard"), range(200), rng_seed=3)
    assert actions > 200 * 5
    assert set(results[:, 0].tolist()) <= {0, 1, 2}
    assert (results[:, 2] >= 0).all()


def test_illegal_action_refused_whether_or_not_masks_were_asked_for() -> None:
    rules = Rules.preset("leiden")
    enc = encoding_for(rules)
    hand = HandState.deal(rules, 3)
    legal = enc.action_mask(hand.legal_moves())
    wrong = int(np.flatnonzero(legal == 0)[0])
    for ask_first in (False, True):
        eng = BatchEngine(rules, 1)
        eng.deal([3])
        if ask_first:
            eng.legal_masks()
        before = _snapshot(eng)
        with pytest.raises(BatchError, match=f"slot 0: action {wrong} is .* not legal"):
            eng.step(np.array([wrong]))
        assert _unchanged(eng, before)
        eng.step(np.array([int(np.flatnonzero(legal)[0])]))


@pytest.mark.parametrize(
    "rules",
    [
        Rules.preset("standard"),
        Rules.preset("leiden"),
        Rules.preset("pagat").replace(players=4, teams=True),
        Rules.preset("kardinal").replace(players=3),
    ],
    ids=["standard", "leiden", "pagat-teams", "kardinal-3"],
)
def test_play_random_until_is_legal_steps_one_slot_at_a_time(rules: Rules) -> None:
    # The compiled loop against the same choices made one step() at a time (which
    # checks each action's legality): the same states, scores and ended slots.
    from matador_env.batch import _kernels as K

    B = 40
    fast, slow = BatchEngine(rules, B), BatchEngine(rules, B)
    for e in (fast, slow):
        e.new_matches(range(100, 100 + B // 2), slots=range(B // 2))
        e.deal(range(200, 200 + B - B // 2), slots=range(B // 2, B))
    seats = np.arange(B, dtype=np.int64) % rules.players
    rng_fast = np.arange(1, B + 1, dtype=np.uint64) * np.uint64(88172645463325252)
    rng_slow = rng_fast.copy()
    ended_any = 0
    for _ in range(40):
        ended_fast = fast.play_random_until(seats, rng_fast)
        ended_any += len(ended_fast)
        ended_slow: list[int] = []
        br = slow.br
        legal = np.zeros(slow.num_actions, np.int64)
        for b in range(B):
            while not slow.st[b, K.OVER] and slow.st[b, K.TO_MOVE] != seats[b]:
                m = K.legal_list(b, br.rp, br.tab, slow.loc, slow.ends, slow.st, legal)
                actions = np.full(B, -1, np.int64)
                own = rng_slow[b : b + 1]  # each slot draws from its own state
                actions[b] = legal[int(K._xorshift(own) % np.uint64(m))]
                ended_slow += slow.step(actions).tolist()
        assert sorted(ended_fast.tolist()) == sorted(ended_slow)
        assert np.array_equal(rng_fast, rng_slow)
        for name in ("loc", "hsize", "stock", "ends", "st", "counts", "cannot", "totals", "mst"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
        assert ((fast.to_move == seats) | fast.over).all()
        seats = (seats + 1) % rules.players  # the next round stops at other seats
    assert ended_any > B // 2  # hands and matches ran to their ends
