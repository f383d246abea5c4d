"""Every preset plays random legal hands to the end without an error."""

from __future__ import annotations

import random

import pytest

from matador_env.engine import PRESETS, HandState, Rules


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_random_hands_finish(name: str) -> None:
    rules = Rules.preset(name)
    bound = (2 * rules.tile_count + 1) * rules.players
    for seed in range(50):
        rng = random.Random(seed)
        s = HandState.deal(rules, seed)
        while not s.is_over:
            moves = s.legal_moves()
            assert moves
            s = s.apply(moves[rng.randrange(len(moves))])
            assert s.n_actions <= bound
        assert s.outcome is not None and s.outcome.points >= 0


def test_dealt_of_a_state_from_a_view_says_why_it_cannot() -> None:
    s = HandState.deal(Rules(), 5)
    rng = random.Random(1)
    while s.boneyard_size > 10:
        s = s.apply(rng.choice(s.legal_moves()))
    rebuilt = HandState.from_view(s.view(0), s.hands, s.boneyard)
    with pytest.raises(ValueError, match="drawn tiles are not known"):
        rebuilt.dealt()
    # A state from a view before any draw still knows its whole deal.
    fresh = HandState.deal(Rules(), 5)
    assert HandState.from_view(fresh.view(0), fresh.hands, fresh.boneyard).dealt() == fresh
