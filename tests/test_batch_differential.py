"""The batch engine against the Python engine: random legal play in both, compared at
every step (legal moves, ends, hands, boneyard, seat to move, leader, outcome, scores).

CI runs a sample on every preset and on seeded random rule sets; ``pytest --long -s``
covers 100,000 hands per preset (and prints its figures).
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from matador_env.batch import BatchEngine  # noqa: E402
from matador_env.batch import _kernels as K  # noqa: E402
from matador_env.encoding import KINDS  # noqa: E402
from matador_env.engine import HandState, MatchState, Rules, RulesError  # noqa: E402
from matador_env.engine.rules import CHOICES, PRESETS  # noqa: E402

LONG_HANDS = 100_000
LANES = 256


def _end_codes(ends: Any) -> list[list[int]]:
    return [
        [
            KINDS.index(e.kind),
            -1 if e.value is None else e.value,
            -1 if e.value2 is None else e.value2,
        ]
        for e in ends
    ]


def _hand_masks(eng: BatchEngine) -> list[list[int]]:
    """Every slot's hands as the engine's bit masks, read from the tile-location array."""
    T = eng.enc.num_tiles
    weights = [1 << k for k in range(T)]
    out = []
    for row in eng.loc.tolist():
        masks = [0] * eng.rules.players
        for k, where in enumerate(row):
            if where >= 0:
                masks[where] |= weights[k]
        out.append(masks)
    return out


def _compare(eng: BatchEngine, states: list[HandState], masks: np.ndarray, where: str) -> None:
    index = eng.enc.index
    br = eng.br
    T = eng.enc.num_tiles
    scratch = np.empty(eng.num_actions, np.int64)
    hands = _hand_masks(eng)
    st = eng.st.tolist()
    for b, s in enumerate(states):
        row = st[b]
        ctx = f"{where}, slot {b}, seed {s.seed}, after {list(map(str, s.moves))}"
        legal = sorted({index[m] for m in s.legal_moves()})
        assert np.flatnonzero(masks[b]).tolist() == legal, f"legal moves differ: {ctx}"
        # The kernels' action list (what playouts draw from) names each action once.
        listed = K.legal_list(b, br.rp, br.tab, eng.loc, T, eng.ends, eng.st, scratch)
        assert listed == len(legal), f"legal action list has repeats: {ctx}"
        assert hands[b] == [s.hand_mask(x) for x in range(s.rules.players)], f"hands: {ctx}"
        assert eng.hsize[b].tolist() == list(s.hand_sizes), f"hand sizes: {ctx}"
        assert eng.enc.num_tiles - row[K.POS] == s.boneyard_size, f"boneyard size: {ctx}"
        assert eng.ends[b, : row[K.NENDS]].tolist() == _end_codes(s.ends), f"ends: {ctx}"
        assert row[K.TO_MOVE] == s.to_move, f"to move: {ctx}"
        assert row[K.LEADER] == s.leader, f"leader: {ctx}"
        assert row[K.PASSES] == s.passes_in_row, f"passes: {ctx}"
        assert row[K.DRAWS] == s.draws_this_turn, f"draws: {ctx}"
        assert eng.outcome(b) == s.outcome, f"outcome: {ctx}"


def play_hands(rules: Rules, seeds: list[int], rng: random.Random, where: str) -> int:
    """Random legal play of ``seeds`` in both engines, lane by lane; returns actions."""
    actions = 0
    for start in range(0, len(seeds), LANES):
        chunk = seeds[start : start + LANES]
        eng = BatchEngine(rules, len(chunk))
        eng.deal(chunk)
        states = [HandState.deal(rules, s) for s in chunk]
        for b, s in enumerate(states):
            assert eng.boneyard(b) == s.boneyard, f"{where}: boneyard of seed {s.seed}"
        index = eng.enc.index
        while True:
            masks = eng.legal_masks()
            _compare(eng, states, masks, where)
            if all(s.is_over for s in states):
                break
            acts = np.full(len(chunk), -1, np.int64)
            for b, s in enumerate(states):
                if not s.is_over:
                    move = rng.choice(s.legal_moves())
                    acts[b] = index[move]
                    states[b] = s.apply(move)
                    actions += 1
            eng.step(acts)
        for b, s in enumerate(states):
            assert eng.boneyard(b) == s.boneyard, f"{where}: final boneyard of seed {s.seed}"
    return actions


def play_matches(rules: Rules, seeds: list[int], rng: random.Random, max_hands: int = 60) -> int:
    """Random matches in both engines: totals, leads, winners and each new deal."""
    eng = BatchEngine(rules, len(seeds))
    eng.new_matches(seeds)
    matches = [MatchState.new(rules, s) for s in seeds]
    index = eng.enc.index
    hands = 0
    for _ in range(max_hands):
        states = [m.hand for m in matches]
        while not all(s.is_over for s in states):
            masks = eng.legal_masks()
            _compare(eng, states, masks, "match")
            acts = np.full(len(seeds), -1, np.int64)
            for b, m in enumerate(matches):
                if not m.hand.is_over:
                    move = rng.choice(m.legal_moves())
                    acts[b] = index[move]
                    matches[b] = m.apply(move)
            eng.step(acts)
            states = [m.hand for m in matches]
        _compare(eng, states, eng.legal_masks(), "match end of hand")
        for b, m in enumerate(matches):
            assert eng.totals[b].tolist() == list(m.totals), f"totals of match {m.seed}"
            assert eng.leads[b].tolist() == list(m.leads), f"leads of match {m.seed}"
            assert eng.match_winners(b) == m.winners, f"winners of match {m.seed}"
            assert bool(eng.mst[b, K.M_ARMED]) == m.armed, f"armed: match {m.seed}"
        hands += len(seeds)
        live = [b for b, m in enumerate(matches) if not m.is_over]
        if not live:
            break
        eng.next_hands()
        for b in live:
            matches[b] = matches[b].next_hand()
            assert eng.hand_seeds[b] == matches[b].hand.seed
    return hands


def random_rules(rng: random.Random) -> Rules:
    """A random valid rules configuration over every option."""
    while True:
        settings: dict[str, Any] = {name: rng.choice(values) for name, values in CHOICES.items()}
        settings["set_max"] = rng.choice((3, 4, 6, 6, 6, 9, 12))
        settings["players"] = rng.choice((2, 2, 3, 4, 4, 5))
        settings["teams"] = settings["players"] == 4 and rng.random() < 0.5
        settings["hand_size"] = rng.choice(("by_players", "all", 3, 5, 7))
        settings["boneyard_reserve"] = rng.choice((0, 1, 2, 3))
        settings["matador_as_regular"] = rng.random() < 0.5
        settings["matador_only_when_stuck"] = rng.random() < 0.5
        settings["target_score"] = rng.choice((10, 30, 100))
        try:
            return Rules(**settings)
        except RulesError:
            continue


@pytest.mark.parametrize("preset", list(PRESETS))
def test_presets_agree_move_by_move(preset: str, long_run: bool) -> None:
    rules = Rules.preset(preset)
    hands = LONG_HANDS if long_run else 300
    rng = random.Random(f"batch/{preset}")
    seeds = [rng.randrange(-(2**63), 2**63) for _ in range(hands)]
    t0 = time.perf_counter()
    actions = 0
    for start in range(0, hands, 4096):
        actions += play_hands(rules, seeds[start : start + 4096], rng, preset)
        if long_run:
            print(
                f"\r{preset}: {min(start + 4096, hands)}/{hands} hands, {actions} actions, "
                f"{time.perf_counter() - t0:.0f} s",
                end="",
                file=sys.stderr,
                flush=True,
            )
    if long_run:
        print(
            f"\n{preset}: {hands} hands, {actions} actions agree "
            f"({time.perf_counter() - t0:.0f} s)",
            file=sys.stderr,
        )


def test_preset_variants_agree() -> None:
    rng = random.Random("batch/variants")
    variants = [
        Rules.preset("pagat", players=4, teams=True),
        Rules.preset("standard", players=3),
        Rules.preset("polish", players=4, matador_as_regular=True),
        Rules.preset("kardinal", players=3),
        Rules.preset("standard", matador_placement="crosswise_choice"),
        Rules.preset("standard", matador_placement="crosswise_on_blank", draw_rule="none"),
        Rules.preset("standard", spinner="first_double", matador_placement="branching"),
        Rules.preset("double_nine", players=4, hand_size="all", teams=True),
        Rules.preset("leiden", draw_rule="one", boneyard_reserve=0),
    ]
    for rules in variants:
        play_hands(rules, [rng.randrange(2**40) for _ in range(120)], rng, str(rules.changes()))


def test_random_rule_sets_agree(long_run: bool) -> None:
    rng = random.Random("batch/random-rules")
    for _ in range(400 if long_run else 40):
        rules = random_rules(rng)
        seeds = [rng.randrange(2**64) for _ in range(200 if long_run else 25)]
        play_hands(rules, seeds, rng, rules.to_text())


@pytest.mark.parametrize("preset", ["standard", "kardinal", "leiden", "polish"])
def test_matches_agree(preset: str) -> None:
    rng = random.Random(f"batch/match/{preset}")
    rules = Rules.preset(preset, target_score=40)
    play_matches(rules, list(range(24)), rng)


def test_random_rule_set_matches_agree() -> None:
    rng = random.Random("batch/match/random")
    for _ in range(12):
        rules = random_rules(rng).replace(target_score=25)
        play_matches(rules, [rng.randrange(2**32) for _ in range(8)], rng)
