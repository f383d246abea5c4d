"""Behaviours of the batch kernels (``matador_env/batch/_kernels.py``) that the other
batch tests reach too rarely to guard, found by mutation testing: each test here failed
on an altered copy of the kernels that every earlier batch test passed. The engine
(``matador_env.engine``) stays the reference where a test compares.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("numba")

from matador_env.batch import deal_hidden_hands  # noqa: E402
from matador_env.engine import Rules  # noqa: E402
from tests.test_batch_differential import play_matches  # noqa: E402


def test_after_a_void_tie_of_two_seats_the_first_seat_leads_under_next_leader_loser() -> None:
    # Two seats that block with equal counts tie for the highest count as well: the
    # lower seat leads the next deal (``MatchState.next_leader``), not the later one.
    rules = Rules(set_max=3, hand_size=3, draw_rule="none", next_leader="loser", target_score=60)
    rng = random.Random("batch/kernel-mutants/void-tie-loser")
    play_matches(rules, [rng.randrange(2**32) for _ in range(64)], rng)


def test_the_seed_whose_stream_state_would_be_zero_still_deals_at_random() -> None:
    # seed_stream's LCG step maps exactly one seed of stream 0 to the all-zero state,
    # which xorshift never leaves: the kernel swaps in another state, so that seed's
    # deals differ from one another like any other seed's.
    mult, inc = 6364136223846793005, 1442695040888963407
    zero_seed = -inc * pow(mult, -1, 2**64) % 2**64
    deals = deal_hidden_hands((1 << 12) - 1, [4, 4], [0, 0], [], 16, zero_seed)
    assert all(d is not None for d in deals)
    assert len({repr(d) for d in deals}) > 1, deals
