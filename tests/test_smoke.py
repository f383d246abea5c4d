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
