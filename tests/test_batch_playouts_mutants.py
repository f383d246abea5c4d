"""Behaviours of the search agent's compiled playouts and dealer
(``matador_env/batch/_playouts.py``, ``matador_env/batch/_worlds.py`` and their
wrappers ``WorldPlayouts`` and ``deal_hidden_hands``) that the other tests reach too
rarely to guard, found by mutation testing: each test here failed on an altered copy
of that code that every earlier test passed. Where a promise is a distribution the
checks count many deals of a fixed seed, with margins of several standard deviations.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import numpy as np
import pytest

pytest.importorskip("numba")

import agents.search as search_module  # noqa: E402
from agents.knowledge import Knowledge  # noqa: E402
from matador_env.batch import BatchError, WorldPlayouts, deal_hidden_hands  # noqa: E402
from matador_env.engine import HandState, Rules  # noqa: E402
from tests.test_batch_inputs import _playouts  # noqa: E402
from tests.test_batch_playouts import (  # noqa: E402
    assert_plays_as_the_engine_rollouts,
    whole_weights,
)


def _uniform_marginals(
    unseen: int, sizes: list[int], allows: list[list[tuple[int, int]]]
) -> dict[tuple[int, int], float]:
    """Each hand's chance to hold each tile, uniform over every deal of ``unseen`` to
    hands of ``sizes`` (the rest to the boneyard) that keeps the caps ``allows[h]``
    (``(mask, most)`` pairs), counted by enumeration."""
    tiles = [t for t in range(unseen.bit_length()) if unseen >> t & 1]
    counts: dict[tuple[int, int], int] = {}
    total = 0

    def deal(h: int, left: list[int], hands: list[int]) -> None:
        nonlocal total
        if h == len(sizes):
            total += 1
            for g, mask in enumerate(hands):
                for t in tiles:
                    counts[g, t] = counts.get((g, t), 0) + (mask >> t & 1)
            return
        for combo in itertools.combinations(left, sizes[h]):
            mask = sum(1 << t for t in combo)
            if all((mask & m).bit_count() <= most for m, most in allows[h]):
                deal(h + 1, [t for t in left if t not in combo], [*hands, mask])

    deal(0, tiles, [])
    return {key: c / total for key, c in counts.items()}


# -- deal_hidden_hands: the construction -----------------------------------------------------


def test_the_seat_with_the_least_room_takes_its_tiles_first() -> None:
    # Hand 0 may hold 5 tiles and needs all 5 (no room); hand 1 may hold 4 and needs
    # one (room 3), and only tile 5 is left for it once hand 0 has its tiles. Dealt
    # least room first, one construction always succeeds; hand 1 first (most room
    # first, or by the tiles it may hold alone) takes a tile hand 0 needs 3 times in 4.
    deals = deal_hidden_hands(0b111111, [5, 1], [0b100000, 0b000011], [], 60, seed=1, tries=1)
    assert deals == [([0b011111, 0b100000], [])] * 60


def test_seats_with_equal_room_are_dealt_first_at_random() -> None:
    # Both hands have room 2 (caps do not count); hand 1 may hold none of tiles 0-1. Hand 1
    # first always succeeds; hand 0 first only when it draws exactly tiles 0 and 1 (1 in
    # 6). Ties at random: 1/2 + 1/2 * 1/6 = 7/12 of single constructions succeed (sd 0.025
    # in 400); a fixed order gives 1/6 or 1.
    deals = deal_hidden_hands(0b1111, [2, 2], [0, 0], [(1, 0b0011, 0)], 400, seed=2, tries=1)
    share = sum(d is not None for d in deals) / len(deals)
    assert 0.45 < share < 0.72, share
    for deal in deals:
        if deal is not None:
            assert deal == ([0b0011, 0b1100], [])


def test_a_hand_of_no_tiles_is_dealt_empty_and_takes_no_swaps() -> None:
    # A hidden hand of size 0 holds nothing to swap: the swaps pick among the hands that
    # hold tiles (else a tile is drawn from an empty hand).
    deals = deal_hidden_hands(0b111111, [0, 2, 2], [0, 0, 0], [], 50, seed=4)
    for deal in deals:
        assert deal is not None
        (empty, a, b), rest = deal
        assert empty == 0 and a.bit_count() == b.bit_count() == 2 and len(rest) == 2
        assert a | b | sum(1 << t for t in rest) == 0b111111 and not a & b


# -- deal_hidden_hands: the mixing and the boneyard ------------------------------------------


def test_one_capped_hand_with_a_boneyard_is_mixed_towards_uniform() -> None:
    # One hand of 2 from tiles 0-3, at most one of {0, 1} and at most one of {1, 2}: 4
    # deals keep both caps, each 1/4, so tile 1 is held 1/4 of the time. The construction
    # alone (the first tiles of a random order that keep the caps) holds it 1/3 of the
    # time; the swaps with the boneyard mix that towards uniform (sd 0.007 in 4000).
    caps = [(0, 0b0011, 1), (0, 0b0110, 1)]
    deals = deal_hidden_hands(0b1111, [2], [0], caps, 4000, seed=5)
    exact = _uniform_marginals(0b1111, [2], [[(0b0011, 1), (0b0110, 1)]])
    for t in range(4):
        got = sum(d[0][0] >> t & 1 for d in deals if d is not None) / len(deals)
        assert abs(got - exact[0, t]) < 0.03, (t, got, exact[0, t])


def test_the_boneyard_comes_in_a_random_order() -> None:
    # Each unseen tile is first to be drawn about equally often (1/6, sd 0.007 in 3000);
    # unshuffled, the boneyard would start with its lowest tile.
    deals = deal_hidden_hands(0b111111, [1, 1], [0, 0], [], 3000, seed=3)
    for place in (0, 3):
        for t in range(6):
            got = sum(d[1][place] == t for d in deals if d is not None) / len(deals)
            assert abs(got - 1 / 6) < 0.04, (place, t, got)


# -- deal_hidden_hands: what it checks -------------------------------------------------------


def test_tile_61_is_dealt_and_tile_62_refused() -> None:
    """Masks are 64-bit integers: tiles 0 to 61 (the double-nine set's 55 and fewer)."""
    ((hands, rest),) = deal_hidden_hands(1 << 61 | 1, [1], [0], [], 1, seed=0)  # type: ignore[misc]
    assert sorted([hands[0].bit_length() - 1, *rest]) == [0, 61]
    with pytest.raises(BatchError, match="tile index 62 > 61; at most 62 tiles"):
        deal_hidden_hands(1 << 62 | 1, [1], [0], [], 1, seed=0)


def test_a_void_mask_for_a_hand_that_is_not_there_is_refused() -> None:
    # As many voids as sizes: a longer list is a mistake (a seat count off by one), not
    # to be dropped silently.
    with pytest.raises(BatchError, match="2 sizes, 3 voids"):
        deal_hidden_hands(0b1111, [1, 1], [0, 0, 0], [], 1, seed=0)


# -- WorldPlayouts ------------------------------------------------------------------------------


def test_a_boneyard_entry_one_past_the_last_tile_is_refused() -> None:
    # Tile indices run 0 to T - 1: T itself is outside (the kernel indexes by it unchecked).
    runner, worlds, legal, view = _playouts()
    hands, boneyard = worlds[0]
    with pytest.raises(
        BatchError, match=r"world 0: boneyard entry 28 is no tile index \(0 to 27\)"
    ):
        runner.run([(hands, [28, *boneyard[1:]])], legal)


def test_each_repeat_is_a_playout_of_its_own() -> None:
    # With jitter the repeats of a world and action play differently, so their mean is
    # not one playout's result (as it would be if every repeat replayed one stream).
    rules = Rules.preset("standard")
    state = HandState.deal(rules, 11)
    view = state.view(state.to_move)
    weights = search_module.policy_weights()
    weights[-1] = 20.0  # _JITTER
    runner = WorldPlayouts(view, weights)
    worlds = [Knowledge(view).sample_masks(random.Random(s)) for s in range(4)]
    legal = [runner.enc.index[m] for m in view.legal_moves]
    once = runner.run(worlds, legal, repeats=1, rng_seed=9)
    many = runner.run(worlds, legal, repeats=8, rng_seed=9)
    assert (once != many).any()
    # Means of eight integer results: some are not whole numbers.
    assert (many != many.round()).any()


# -- WorldPlayouts: the state a playout starts from is the view's --------------------------------


def _states_where(
    rules: Rules, keep: Callable[[HandState], bool], want: int, seed: int
) -> list[HandState]:
    """``want`` states of random play under ``rules`` for which ``keep`` holds."""
    rng = random.Random(seed)
    found: list[HandState] = []
    for _ in range(2000):
        state = HandState.deal(rules, rng.randrange(2**32))
        while not state.is_over and len(found) < want:
            if keep(state):
                found.append(state)
                break
            state = state.apply(rng.choice(state.legal_moves()))
        if len(found) >= want:
            return found
    raise AssertionError(f"only {len(found)} states found")  # pragma: no cover


def test_a_playout_after_a_draw_this_turn_keeps_the_turns_draw_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Kardinal draws up to two a turn: after one draw, a second is the last, and a
    # mover still stuck then passes (the view's draws this turn carry into the playout).
    whole_weights(monkeypatch)
    rules = Rules.preset("kardinal")
    states = _states_where(
        rules,
        lambda s: s.view(s.to_move).draws_this_turn == 1 and s.legal_moves()[-1][0] == "draw",
        25,
        seed=1,
    )
    assert assert_plays_as_the_engine_rollouts(rules, states) >= 25


def test_a_playout_from_a_crosswise_end_answers_both_its_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A matador laid crosswise opens an end that takes either of two values: both come
    # from the view's end into the playout.
    whole_weights(monkeypatch)
    rules = Rules(matador_placement="crosswise_choice")
    states = _states_where(
        rules,
        lambda s: any(e.value2 is not None and e.value2 != e.value for e in s.ends),
        25,
        seed=2,
    )
    assert assert_plays_as_the_engine_rollouts(rules, states) >= 25


@pytest.mark.parametrize("cut", [1, 13])
def test_a_boneyard_shorter_than_the_views_is_refused_as_such(cut: int) -> None:
    # The boneyard's size is public: a world whose boneyard is short is named as that,
    # whether or not the short rows would broadcast into the view's size.
    runner, worlds, legal, view = _playouts()
    assert view.boneyard_size == 14
    short = [(hands, boneyard[:cut]) for hands, boneyard in worlds]
    with pytest.raises(BatchError, match="every boneyard must hold the view's 14 tiles"):
        runner.run(short, legal)


def test_no_actions_as_an_empty_integer_array_are_refused() -> None:
    # "one or more of the view's legal actions": an empty integer array too, not only
    # an empty list (which numpy makes a float array, refused for its type).
    runner, worlds, legal, view = _playouts()
    with pytest.raises(BatchError, match="is not allowed; allowed: one or more"):
        runner.run(worlds, np.zeros(0, np.int64))


@pytest.mark.parametrize("bad", [float("inf"), float("-inf")])
def test_infinite_weights_are_refused(bad: float) -> None:
    # "not all finite numbers": an infinite weight makes every score of its term
    # infinite (and inf - inf a NaN), so it is refused like a NaN.
    view = _playouts()[3]
    weights = search_module.policy_weights()
    weights[0] = bad
    with pytest.raises(BatchError, match="are not all finite numbers"):
        WorldPlayouts(view, weights)
