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


_END_CODES: dict[Any, tuple[int, int, int]] = {}


def _end_codes(ends: Any) -> list[tuple[int, int, int]]:
    out = []
    for e in ends:
        code = _END_CODES.get(e)
        if code is None:
            code = _END_CODES[e] = (
                KINDS.index(e.kind),
                -1 if e.value is None else e.value,
                -1 if e.value2 is None else e.value2,
            )
        out.append(code)
    return out


def _hand_masks(eng: BatchEngine) -> list[list[int]]:
    """Every slot's hands as the engine's bit masks, read from the tile-location array."""
    T = eng.enc.num_tiles
    n = eng.rules.players
    if T <= 63:
        weights = np.left_shift(np.int64(1), np.arange(T, dtype=np.int64))
        held = eng.loc[:, None, :] == np.arange(n, dtype=np.int8)[None, :, None]
        return (held * weights).sum(axis=2).tolist()  # type: ignore[no-any-return]
    out = []
    for row in eng.loc.tolist():
        masks = [0] * n
        for k, where in enumerate(row):
            if where >= 0:
                masks[where] |= 1 << k
        out.append(masks)
    return out


def _fail(what: str, where: str, b: int, s: HandState, batch: object, engine: object) -> None:
    raise AssertionError(
        f"{what} differ: {where}, slot {b}, seed {s.seed}, after {[str(m) for m in s.moves]}: "
        f"batch {batch!r}, engine {engine!r}"
    )


def _compare(
    eng: BatchEngine,
    states: list[HandState],
    masks: np.ndarray,
    where: str,
    settled: set[int] | None = None,
) -> None:
    """Compare every slot with its engine state; ``settled`` collects the finished slots
    already compared, which are skipped from then on."""
    index = eng.enc.index
    br = eng.br
    T = eng.enc.num_tiles
    n = eng.rules.players
    scratch = np.empty(eng.num_actions, np.int64)
    hands = _hand_masks(eng)
    st = eng.st.tolist()
    sizes = eng.hsize.tolist()
    ends = eng.ends.tolist()
    for b, s in enumerate(states):
        row = st[b]
        if settled is not None and b in settled:
            continue
        legal = sorted({index[m] for m in s.legal_moves()})
        got = np.flatnonzero(masks[b]).tolist()
        if got != legal:
            _fail("legal moves", where, b, s, got, legal)
        # The kernels' action list (what playouts draw from) names each action once.
        listed = K.legal_list(b, br.rp, br.tab, eng.loc, eng.ends, eng.st, scratch)
        if listed != len(legal):
            _fail("legal action counts", where, b, s, listed, len(legal))
        mine = [s.hand_mask(x) for x in range(n)]
        if hands[b] != mine:
            _fail("hands", where, b, s, hands[b], mine)
        if sizes[b] != list(s.hand_sizes):
            _fail("hand sizes", where, b, s, sizes[b], s.hand_sizes)
        if T - row[K.POS] != s.boneyard_size:
            _fail("boneyard sizes", where, b, s, T - row[K.POS], s.boneyard_size)
        got_ends = [tuple(e) for e in ends[b][: row[K.NENDS]]]
        if got_ends != _end_codes(s.ends):
            _fail("ends", where, b, s, got_ends, s.ends)
        got_state = [row[K.TO_MOVE], row[K.LEADER], row[K.PASSES], row[K.DRAWS], row[K.NACT]]
        want = [s.to_move, s.leader, s.passes_in_row, s.draws_this_turn, s.n_actions]
        if got_state != want:
            _fail("to move, leader, passes, draws, actions", where, b, s, got_state, want)
        if bool(row[K.OVER]) != s.is_over or (s.is_over and eng.outcome(b) != s.outcome):
            _fail("outcomes", where, b, s, eng.outcome(b), s.outcome)
        if settled is not None and s.is_over:
            settled.add(b)


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
        settled: set[int] = set()
        while True:
            masks = eng.legal_masks()
            _compare(eng, states, masks, where, settled)
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
    """A random valid rules configuration over every option. The usual sets, seat
    counts and hand sizes come most often; every other value the rules allow up to
    double-fifteen and eight seats comes one time in five (hands of 1 to 12 tiles)."""
    while True:
        settings: dict[str, Any] = {name: rng.choice(values) for name, values in CHOICES.items()}
        if rng.random() < 0.2:
            settings["set_max"] = rng.choice((5, 7, 8, 10, 11, 13, 14, 15))
            settings["players"] = rng.choice((2, 3, 4, 5, 6, 7, 8))
            settings["hand_size"] = rng.choice(("by_players", 1, 2, 4, 6, 8, 10, 12))
        else:
            settings["set_max"] = rng.choice((3, 4, 6, 6, 6, 9, 12))
            settings["players"] = rng.choice((2, 2, 3, 4, 4, 5))
            settings["hand_size"] = rng.choice(("by_players", "all", 3, 5, 7))
        settings["teams"] = settings["players"] == 4 and rng.random() < 0.5
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
    hands = LONG_HANDS if long_run else 1000
    rng = random.Random(f"batch/{preset}")
    # The engine's seeds run from 0 to 2**64 - 1 (a negative one is refused); this
    # draws as many bits as the range -2**63 to 2**63 it drew from before.
    seeds = [rng.randrange(2**64) for _ in range(hands)]
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
    for _ in range(400 if long_run else 80):
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


# Fixed rule sets for situations the random sample above reaches rarely or never (counted
# by replaying its games): ties between teams, rounds of lead passes, the next leader of
# three seats or of teams, shared match wins, complete_round with teams, the largest sets.
# Rounds of lead passes that deal again: double_not_blank, a big set, two-tile hands.
LEAD_PASSES = Rules(
    set_max=12,
    hand_size=2,
    lead_tile="double_not_blank",
    draw_rule="one",
    voluntary_draw="always",
    boneyard_reserve=1,
)
THREE_SEATS = Rules(set_max=4, players=3, hand_size=4, draw_rule="one", target_score=60)
TEAMS = Rules(players=4, teams=True, draw_rule="none")
ROUND = Rules(draw_rule="none", match_end="complete_round")
RARE_HANDS = [
    # ties between teams (void and redeal) and the lower-count partner of a blocked team
    (TEAMS.replace(set_max=5, hand_size=5, tie="redeal"), 1000),
    (LEAD_PASSES, 200),
    # a matador double held back but laid as a regular tile while the spinner is pending
    (
        Rules(
            set_max=3,
            hand_size=5,
            matador_as_regular=True,
            matador_only_when_stuck=True,
            spinner="first_double",
        ),
        200,
    ),
    # beyond random_rules: double-fifteen, eight players
    (
        Rules(
            set_max=15,
            players=8,
            hand_size=10,
            matador_placement="branching",
            spinner="first_double",
        ),
        40,
    ),
]
RARE_MATCHES = [
    # next_leader loser and winner with three seats, after dominoes, blocks and void ties
    (THREE_SEATS.replace(next_leader="loser"), 48),
    (THREE_SEATS.replace(next_leader="winner"), 48),
    # next_leader loser with teams: the losing partner with the higher count
    (TEAMS.replace(set_max=5, hand_size=4, next_leader="loser", target_score=60), 16),
    # complete_round: redeal ties, shared wins (common with one-tile hands), teams
    (ROUND.replace(set_max=4, hand_size=3, tie="redeal", target_score=1), 256),
    (ROUND.replace(set_max=3, players=4, hand_size=1, target_score=5), 128),
    (
        TEAMS.replace(
            set_max=4, hand_size=3, tie="redeal", match_end="complete_round", target_score=5
        ),
        32,
    ),
    # rounds of lead passes inside a match: the seat that was due leads the new deal
    (LEAD_PASSES.replace(next_leader="loser", tie="redeal", target_score=60), 16),
]


def test_rare_hand_situations_agree() -> None:
    rng = random.Random("batch/rare-hands")
    for rules, hands in RARE_HANDS:
        play_hands(rules, [rng.randrange(2**40) for _ in range(hands)], rng, rules.to_text())


def test_rare_match_situations_agree() -> None:
    rng = random.Random("batch/rare-matches")
    for rules, matches in RARE_MATCHES:
        play_matches(rules, [rng.randrange(2**32) for _ in range(matches)], rng)
