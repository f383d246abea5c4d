"""Behaviours of the batch engine that the other batch tests left unguarded, found by
mutation testing of ``matador_env/batch``: each test here failed on some altered copy
of the kernels (or of their Python wrapper) that every earlier batch test passed.

The engine (``matador_env.engine``) and the encoding stay the references: where a
test compares, it compares with them.
"""

from __future__ import annotations

import json
import random
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from agents.knowledge import Knowledge  # noqa: E402
from agents.search import policy_weights  # noqa: E402
from matador_env.batch import (  # noqa: E402
    BatchEngine,
    BatchError,
    WorldPlayouts,
    deal_hidden_hands,
    random_hands,
)
from matador_env.batch import _kernels as K  # noqa: E402
from matador_env.batch import _playouts as PL  # noqa: E402
from matador_env.engine import HandState, Rules  # noqa: E402
from matador_env.engine.rules import PRESETS  # noqa: E402

from .test_batch_differential import random_rules  # noqa: E402


def _observations(eng: BatchEngine, seats: np.ndarray) -> np.ndarray:
    """Seat ``seats[b]``'s observation of every slot, by the kernel the vector
    environments use (no match scores)."""
    enc = eng.enc
    fc = np.array([enc.inv_tiles, enc.inv_players, enc.target_value, enc.score_scale])
    out = np.empty((eng.size, enc.obs_size), np.float32)
    K.observe_rows(
        np.arange(eng.size, dtype=np.int64),
        seats.astype(np.int64),
        np.zeros(eng.size, np.bool_),
        eng.br.rp,
        fc,
        eng.loc,
        eng.hsize,
        eng.ends,
        eng.st,
        eng.cannot,
        eng.totals,
        out,
    )
    return out


def _play_and_compare_public_tables(rules: Rules, seeds: list[int], rng: random.Random) -> None:
    """Random legal play of ``seeds`` in the batch engine and the engine; after every
    step each slot's cannot-answer table equals the encoding's table of the engine's
    history, and each seat's observation equals ``Encoding.observation`` of its view."""
    eng = BatchEngine(rules, len(seeds))
    eng.deal(seeds)
    states = [HandState.deal(rules, s) for s in seeds]
    enc = eng.enc
    n = rules.players
    step = 0
    while not all(s.is_over for s in states):
        for b, s in enumerate(states):
            want = enc.cannot_answer_table(s.history)
            assert eng.cannot[b].tolist() == want.astype(np.uint8).tolist(), (
                f"cannot-answer table of seed {s.seed} after {[str(m) for m in s.moves]}"
            )
        seats = np.array([(step + b) % n for b in range(len(seeds))], np.int64)
        got = _observations(eng, seats)
        for b, s in enumerate(states):
            want_obs = enc.observation(s.view(int(seats[b])))
            np.testing.assert_array_equal(
                got[b], want_obs, err_msg=f"observation of seed {s.seed}, seat {seats[b]}"
            )
        acts = np.full(len(seeds), -1, np.int64)
        for b, s in enumerate(states):
            if not s.is_over:
                move = rng.choice(s.legal_moves())
                acts[b] = enc.index[move]
                states[b] = s.apply(move)
        eng.step(acts)
        step += 1


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_cannot_answer_marks_and_observations_follow_the_encoding_in_every_preset(
    preset: str,
) -> None:
    # The differential tests compare hands, ends, moves and outcomes, but not the
    # cannot-answer table the kernels keep as moves are made (the vector environments'
    # observations read it), nor the observation rows: a draw under voluntary_draw
    # "always" marking the seat, a pass not marking the matador column, a blank end
    # not marked as "needs a blank" all went unseen.
    rules = Rules.preset(preset)
    _play_and_compare_public_tables(rules, list(range(24)), random.Random(preset))


def test_cannot_answer_marks_and_observations_follow_the_encoding_under_random_rules() -> None:
    # Every option value, including lead_tile "double_not_blank" (passes at the lead
    # mark nothing), voluntary_draw "never" (a draw marks the matador column too) and
    # the spinner cross that must be filled first (only its ends are marked).
    rng = random.Random(20261129)
    for _ in range(12):
        rules = random_rules(rng)
        _play_and_compare_public_tables(rules, [rng.randrange(2**32) for _ in range(12)], rng)


# -- matches in reused slots, and next_hands' refusals ---------------------------------------------


def _random_steps(eng: BatchEngine, rng: np.random.Generator, slots: list[int]) -> None:
    """One uniformly random legal action in each running slot of ``slots``."""
    masks = eng.legal_masks()
    acts = np.full(eng.size, -1, np.int64)
    for b in slots:
        if not eng.over[b]:
            acts[b] = rng.choice(np.flatnonzero(masks[b]))
    eng.step(acts)


def _finish_match(eng: BatchEngine, b: int, rng: np.random.Generator) -> None:
    """Random legal play in slot ``b`` until its match is over."""
    while not eng.match_over[b]:
        if eng.over[b]:
            eng.next_hands([b])
        _random_steps(eng, rng, [b])


def test_a_new_match_in_a_slot_whose_match_ended_starts_from_zero() -> None:
    # new_matches clears the totals, leads and winners a finished match left (as
    # MatchState.new starts them): a slot reused by a vector environment must not
    # carry the last match's scores or winners into the next.
    rules = Rules.preset("standard").replace(target_score=30)
    eng = BatchEngine(rules, 2)
    eng.new_matches([11, 12])
    _finish_match(eng, 0, np.random.default_rng(5))
    assert eng.match_winners(0) is not None and eng.totals[0].any() and eng.leads[0].any()
    eng.new_matches([13], slots=[0])
    fresh = BatchEngine(rules, 2)
    fresh.new_matches([13, 12])
    for name in ("totals", "leads", "mst", "winners", "in_match", "st", "loc"):
        assert getattr(eng, name)[0].tolist() == getattr(fresh, name)[0].tolist(), name
    assert eng.match_winners(0) is None and eng.totals[0].tolist() == [0, 0]


def test_a_hand_dealt_into_a_match_slot_leaves_the_match() -> None:
    # deal() makes the slot a lone hand: its end is not scored into the old match's
    # totals, and next_hands refuses it as no match slot.
    rules = Rules.preset("standard")
    eng = BatchEngine(rules, 1)
    eng.new_matches([3])
    eng.deal([4])
    assert not eng.in_match[0]
    rng = np.random.default_rng(1)
    while not eng.over[0]:
        _random_steps(eng, rng, [0])
    assert eng.totals[0].tolist() == [0, 0] and eng.match_winners(0) is None
    with pytest.raises(BatchError, match="slot 0 is not playing a match"):
        eng.next_hands([0])


def test_next_hands_refuses_a_running_hand_an_ended_match_and_a_lone_hand() -> None:
    # Each refusal names the slot and leaves every slot as it was; the default (no
    # slots) deals only match slots whose hand is over and whose match is not.
    rules = Rules.preset("standard").replace(target_score=30)
    eng = BatchEngine(rules, 3)
    eng.new_matches([21, 22], slots=[0, 1])
    eng.deal([23], slots=[2])
    _finish_match(eng, 1, np.random.default_rng(2))
    before = eng.get_state()
    for slot, why in (
        (0, "slot 0: the current hand is not over yet"),
        (1, "slot 1: the match is over; no further hand is dealt"),
        (2, "slot 2 is not playing a match"),
    ):
        with pytest.raises(BatchError, match=why):
            eng.next_hands([slot])
        assert eng.get_state() == before
    assert eng.next_hands().tolist() == []
    assert eng.get_state() == before


# -- the cached legal masks ------------------------------------------------------------------------


def test_legal_masks_after_play_random_until_are_those_of_the_new_state() -> None:
    # The engine caches the masks of a state; the compiled random play moves every
    # slot, so the masks asked for after it must be computed anew, as a fresh engine
    # taking the same state computes them.
    rules = Rules.preset("standard")
    eng = BatchEngine(rules, 6)
    eng.deal(range(6))
    eng.legal_masks()  # cached for the dealt state
    eng.play_random_until((eng.to_move.astype(np.int64) + 1) % 2, np.arange(1, 7, dtype=np.uint64))
    other = BatchEngine(rules, 6)
    other.set_state(eng.get_state())
    np.testing.assert_array_equal(eng.legal_masks(), other.legal_masks())


# -- refusals of arguments -------------------------------------------------------------------------


def test_play_random_until_refuses_the_seat_number_equal_to_the_player_count() -> None:
    # Seats run 0 to players - 1: seat 2 of a two-seat game is out of range (the
    # kernel would play on until a seat that never moves).
    eng = BatchEngine(Rules.preset("standard"), 2)
    eng.deal([1, 2])
    before = eng.get_state()
    with pytest.raises(BatchError, match="seats: slot 1: 2 is not a seat; allowed: 0 to 1"):
        eng.play_random_until(np.array([0, 2]), np.array([1, 2], np.uint64))
    assert eng.get_state() == before


def test_deal_refuses_repeated_or_negative_slots_and_a_leader_past_the_last_seat() -> None:
    eng = BatchEngine(Rules.preset("standard"), 3)
    before = eng.get_state()
    with pytest.raises(BatchError, match=r"slots must be distinct, got \[1, 1\]"):
        eng.deal([5, 6], slots=[1, 1])
    with pytest.raises(BatchError, match="slot -1 does not exist; allowed: 0 to 2"):
        eng.deal([5], slots=[-1])
    with pytest.raises(BatchError, match="leader of slot 0: 2 is not a seat; allowed: 0 to 1"):
        eng.deal([5], slots=[0], leaders=[2])
    assert eng.get_state() == before


@pytest.mark.parametrize("masks_first", [False, True], ids=["compiled-check", "mask-lookup"])
def test_a_negative_action_other_than_minus_one_is_refused(masks_first: bool) -> None:
    # Only -1 leaves a slot as it is; -2 is out of range, refused whether step() checks
    # by move generation or by the masks of the same state, and nothing moves.
    eng = BatchEngine(Rules.preset("standard"), 2)
    eng.deal([1, 2])
    if masks_first:
        eng.legal_masks()
    before = eng.get_state()
    with pytest.raises(BatchError, match="slot 1: action -2 is out of range 0-127; allowed: "):
        eng.step(np.array([-1, -2]))
    assert eng.get_state() == before


# -- random_hands ----------------------------------------------------------------------------------


def test_random_hands_on_threads_give_each_range_its_own_stream() -> None:
    # threads=k splits the hands into k ranges, range c playing from stream
    # rng_seed + c: the same results as one thread per range with that seed (so a
    # run is reproducible, and two ranges do not replay the same random moves).
    rules = Rules.preset("standard")
    seeds = [7] * 8  # one deal throughout: the ranges differ by their streams alone
    both, total = random_hands(rules, seeds, rng_seed=40, threads=2)
    first, n1 = random_hands(rules, seeds[:4], rng_seed=40)
    second, n2 = random_hands(rules, seeds[4:], rng_seed=41)
    np.testing.assert_array_equal(both, np.concatenate([first, second]))
    assert total == n1 + n2
    assert not np.array_equal(first, second)


def test_random_hands_report_the_winning_side_not_the_winning_seat() -> None:
    # With teams of two, sides are 0 and 1 whoever of the four seats won; a hand won
    # by domino names its side, and its points are what the other side holds.
    rules = Rules.preset("standard").replace(players=4, teams=True)
    results, _ = random_hands(rules, range(60), rng_seed=9)
    term, side = results[:, 0], results[:, 1]
    assert set(side.tolist()) <= {-1, 0, 1}
    assert (side[term == K.DOMINO] >= 0).all()
    assert {0, 1} <= set(side[term == K.DOMINO].tolist())


# -- deal_hidden_hands -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, why",
    [
        ({"unseen": 1 << 62}, "tile index 62 > 61; at most 62 tiles"),
        ({"voids": [0]}, "2 sizes, 1 voids"),
        ({"caps": [(-1, 1, 0)]}, "caps\\[0\\]'s hand is not allowed; allowed: 0 to 1"),
    ],
)
def test_deal_hidden_hands_refuses_what_the_kernel_cannot_deal(
    kwargs: dict[str, object], why: str
) -> None:
    # Each of these would index or shift past the kernel's arrays and masks.
    args: dict[str, object] = {
        "unseen": 0b1111, "sizes": [1, 1], "voids": [0, 0], "caps": [], "count": 2, "seed": 1,
    }  # fmt: skip
    with pytest.raises(BatchError, match=why):
        deal_hidden_hands(**{**args, **kwargs})  # type: ignore[arg-type]


def test_the_hand_with_the_least_room_is_dealt_first() -> None:
    # Hand 0 may hold only tile 3 (void of 0-2): dealt first it always gets it, so a
    # single try never hits a dead end; dealt after hand 1 it would lose tile 3 to
    # hand 1 about half the time.
    worlds = deal_hidden_hands(0b1111, [1, 2], [0b0111, 0], [], 60, seed=4, tries=1)
    assert all(world is not None for world in worlds)
    for world in worlds:
        assert world is not None
        (h0, h1), rest = world
        assert h0 == 0b1000 and h1.bit_count() == 2 and len(rest) == 1


def test_the_hidden_boneyard_comes_in_a_random_order() -> None:
    # The draw order of the boneyard is part of the world: each order about as often
    # as any other, not the tiles in index order (nor that order with a few swapped
    # in). With no hidden hand to swap with, only the final shuffle orders it.
    alone = deal_hidden_hands(0b1111, [0], [0], [], 40, seed=2)
    assert len({tuple(world[1]) for world in alone if world is not None}) > 8
    worlds = deal_hidden_hands(0b111111, [1, 1], [0, 0], [], 400, seed=2)
    rests = [world[1] for world in worlds if world is not None]
    assert len(rests) == 400
    in_order = sum(rest == sorted(rest) for rest in rests)
    assert in_order < 400 * 0.15  # one order in 24 is ascending


def test_a_dead_end_of_the_constructive_deal_is_tried_again() -> None:
    # Hand 1 may hold only tile 3 by a cap (a cap is not counted in a hand's room, so
    # hand 0 is dealt first and takes tile 3 about half the time): each such dead end
    # starts over, up to ``tries`` times, so every world is dealt.
    worlds = deal_hidden_hands(0b1111, [2, 1], [0, 0], [(1, 0b0111, 0)], 40, seed=3)
    assert all(world is not None and world[0][1] == 0b1000 for world in worlds)
    single = deal_hidden_hands(0b1111, [2, 1], [0, 0], [(1, 0b0111, 0)], 40, seed=3, tries=1)
    assert any(world is None for world in single)


# -- set_state's checks, one per field -------------------------------------------------------------


def _saved_engine() -> tuple[BatchEngine, dict[str, Any]]:
    """A two-seat engine: slot 0 a running match hand, slot 1 a lone hand played to
    its end, slot 2 never dealt; and its state as JSON data."""
    eng = BatchEngine(Rules.preset("standard"), 3)
    eng.new_matches([31], slots=[0])
    eng.deal([32], slots=[1])
    rng = np.random.default_rng(3)
    _random_steps(eng, rng, [0])
    while not eng.over[1]:
        _random_steps(eng, rng, [1])
    return eng, json.loads(json.dumps(eng.get_state()))


def _tamper(case: str, s: dict[str, Any]) -> None:
    run, end = s["st"][0], s["st"][1]
    if case == "loc_below_int8":
        s["loc"][0][0] = -200
    elif case == "bools_for_ints":
        s["hsize"] = [[True, False]] * 3
    elif case == "pos_before_the_deal":
        run[K.POS] = 0
    elif case == "passes":
        run[K.PASSES] = 3
    elif case == "draws":
        run[K.DRAWS] = -1
    elif case == "leader":
        run[K.LEADER] = 2
    elif case == "winner":
        end[K.WINNER] = 2
    elif case == "running_counts":
        s["counts"][0][0] = 5
    elif case == "ended_counts":
        s["counts"][1][0] += 1
    elif case == "winning_side":
        end[K.WINNER] = 1 - end[K.WINNER] if end[K.WINNER] >= 0 else 0
        end[K.WSIDE] = 1 - end[K.WINNER]
    elif case == "armed":
        s["mst"][0][K.M_ARMED] = 2
    elif case == "no_deal":
        s["mst"][0][K.M_DEALS] = 0
    elif case == "boneyard_not_the_stock_tail":
        # The next tile to draw trades places with one of seat 0's: every seat still
        # holds as many tiles as hsize says, but the boneyard is no longer the stock's
        # tail, so a draw would hand out a tile that is in a hand.
        loc, next_tile = s["loc"][0], s["stock"][0][run[K.POS]]
        held = loc.index(0)
        assert loc[next_tile] == K.BONEYARD
        loc[next_tile], loc[held] = 0, K.BONEYARD
    elif case == "tiles_down_without_ends":
        # Tiles on the table but no open end: each end field is itself well formed.
        assert run[K.NENDS] > 0
        run[K.NENDS] = 0
        s["ends"][0] = [[-1, -1, -1] for _ in s["ends"][0]]
    elif case == "untouched":
        s["hsize"][2][0] = 0
        s["totals"][2][1] = 4
    else:
        raise AssertionError(case)


@pytest.mark.parametrize(
    "case, why",
    [
        ("loc_below_int8", "'loc' holds -200; allowed: integers that fit int8"),
        ("bools_for_ints", "'hsize' is not an array of int32 \\(it holds bool values\\)"),
        ("pos_before_the_deal", "slot 0: the boneyard position .* is 0; allowed: 14 to 28"),
        ("passes", "slot 0: the passes in a row .* is 3; allowed: 0 to 2"),
        ("draws", "slot 0: the draws this turn .* is -1; allowed: 0 to 28"),
        ("leader", "slot 0: the leader .* is 2; allowed: 0 to 1"),
        ("winner", "slot 1: the winner .* is 2; allowed: -1 to 1"),
        ("running_counts", "slot 0: the hand runs .* but has a termination, winner, points or"),
        ("ended_counts", "slot 1: the hand is over but its counts are not the pips"),
        ("winning_side", "slot 1: the winning side is not the winner's side"),
        ("armed", "slot 0: a match flag \\(armed, over, winners\\) is not 0 or 1"),
        ("no_deal", "slot 0: the match state disagrees with itself"),
        ("boneyard_not_the_stock_tail", "slot 0: the boneyard .* is not the deal's order"),
        ("tiles_down_without_ends", "slot 0: the open ends and the tiles played disagree"),
        ("untouched", "slot 2: over with no termination .* but not empty"),
    ],
)
def test_set_state_refuses_each_tampered_field_by_its_own_check(case: str, why: str) -> None:
    # Each check names what is wrong; a later, looser check catching the same state
    # (or none at all) would leave the kernels indexing by an unchecked number.
    eng, state = _saved_engine()
    before = eng.get_state()
    _tamper(case, state)
    with pytest.raises(BatchError, match=why):
        eng.set_state(state)
    assert eng.get_state() == before
    eng.set_state(json.loads(json.dumps(before)))  # the untampered state is taken


# -- WorldPlayouts ---------------------------------------------------------------------------------


def _runner_and_worlds(
    weights: list[float] | None = None,
) -> tuple[WorldPlayouts, list[Any], list[int], Any]:
    rules = Rules.preset("standard")
    state = HandState.deal(rules, 8)
    view = state.view(state.to_move)
    runner = WorldPlayouts(view, weights if weights is not None else policy_weights())
    worlds = [Knowledge(view).sample_masks(random.Random(s)) for s in range(4)]
    legal = [runner.enc.index[m] for m in view.legal_moves]
    return runner, worlds, legal, view


def test_playout_values_are_means_over_the_repeats() -> None:
    # Without jitter every repeat of a playout plays the same moves, so the mean over
    # three repeats is the value of one (a sum would be three times it).
    weights = list(policy_weights())
    weights[PL.PW_JITTER] = 0.0
    runner, worlds, legal, _ = _runner_and_worlds(weights)
    once = runner.run(worlds, legal, repeats=1, rng_seed=5)
    assert np.abs(once).max() > 0
    np.testing.assert_array_equal(runner.run(worlds, legal, repeats=3, rng_seed=5), once)


def test_world_playouts_refuse_a_boneyard_of_another_size_than_the_views() -> None:
    runner, worlds, legal, view = _runner_and_worlds()
    hands, boneyard = worlds[0]
    assert len(boneyard) == view.boneyard_size > 1
    for wrong in (boneyard[:-1], [*boneyard, boneyard[0]]):
        with pytest.raises(BatchError, match=f"must hold the view's {view.boneyard_size} tiles"):
            runner.run([worlds[1], (hands, wrong)], legal)


def test_world_playouts_refuse_a_boneyard_entry_equal_to_the_tile_count() -> None:
    # Tile indices run 0 to num_tiles - 1: an entry of num_tiles would be read and
    # written one past the kernel's per-tile arrays (numba does not check bounds).
    runner, worlds, legal, _ = _runner_and_worlds()
    hands, boneyard = worlds[0]
    T = runner.enc.num_tiles
    with pytest.raises(BatchError, match=f"world 0: boneyard entry {T} is no tile index"):
        runner.run([(hands, [T, *boneyard[1:]])], legal)
