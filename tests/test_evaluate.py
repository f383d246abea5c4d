"""The arena: statistics against hand-computed cases, duplicate deals, summaries, the CLI."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from agents import make_agent
from evaluate.__main__ import parse_args
from evaluate.arena import (
    AgentRulesError,
    GameResult,
    Pairing,
    RunPlan,
    Work,
    deal_seed,
    derive,
    duplicate_figures,
    duplicate_lead,
    field_figures,
    hand_result,
    match_result,
    match_seed,
    run,
    run_work,
    seat_patterns,
)
from evaluate.report import summarize
from evaluate.stats import (
    Estimate,
    bradley_terry,
    interval_text,
    json_ready,
    mean_ci,
    paired,
    t_quantile,
    wilson,
)
from matador_env.configs import CONFIGURATIONS, configuration
from matador_env.engine import HandState, MatchState, Rules
from tests.scripted import deal

ROOT = Path(__file__).resolve().parents[1]

# -- statistics, against values worked out by hand ----------------------------------------------


def test_wilson_interval() -> None:
    # 8 of 10: p = 0.8, z^2 = 3.8415; centre = (0.8 + 0.19207) / 1.38415 = 0.71674,
    # half = 1.95996 * sqrt(0.016 + 0.0096037) / 1.38415 = 0.22656.
    e = wilson(8, 10)
    assert e.mean == 0.8
    assert e.lo == pytest.approx(0.4902, abs=1e-4)
    assert e.hi == pytest.approx(0.9433, abs=1e-4)
    # 0 of 20: the interval starts at 0 and reaches z^2 / (n + z^2) = 0.16113.
    e = wilson(0, 20)
    assert e.lo == 0.0 and e.hi == pytest.approx(3.8415 / 23.8415, abs=1e-4)
    with pytest.raises(ValueError):
        wilson(3, 2)
    # No trials: refused as such, not a ZeroDivisionError from k / n.
    with pytest.raises(ValueError, match="n must be positive"):
        wilson(0, 0)


def test_wilson_interval_holds_the_rate() -> None:
    # Rounding once left the end a hair inside at k = 0 or k = n (30 of 30 gave
    # hi = 0.9999999999999999 < 1), and the report's error bars refused it.
    for n in range(1, 401):
        for k in range(n + 1):
            e = wilson(k, n)
            assert 0.0 <= e.lo <= k / n <= e.hi <= 1.0, (k, n)
    assert wilson(30, 30).hi == 1.0 and wilson(0, 7).lo == 0.0
    unbeaten = paired([[1.0]] * 30, rate=True)
    assert unbeaten.mean == unbeaten.hi == 1.0


def test_t_quantile_matches_the_tables() -> None:
    # Two-sided 95% (0.975 one-sided) quantiles from the standard t tables.
    for df, t in [(1, 12.7062047), (2, 4.3026527), (3, 3.1824463), (5, 2.5705818),
                  (10, 2.2281389), (30, 2.0422725), (100, 1.9839715), (1000, 1.9623391),
                  (1001, 1.9623367), (10**6, 1.9599664)]:  # fmt: skip
        assert t_quantile(df) == pytest.approx(t, abs=1e-7), df
    # Other levels, either side of the series' threshold: 90% and 99%.
    assert t_quantile(4, 0.90) == pytest.approx(2.1318468, abs=1e-7)
    assert t_quantile(20, 0.99) == pytest.approx(2.8453397, abs=1e-7)
    # Up to df 1000 the exact sum, not the series: at df 25 the series is 6e-7 off.
    assert t_quantile(25, 0.99) == pytest.approx(2.7874358, abs=1e-7)
    assert t_quantile(5000, 0.99) == pytest.approx(2.5768130, abs=1e-7)
    # Falling with df towards the normal quantile 1.959964.
    qs = [t_quantile(df) for df in range(1, 1100, 7)]
    assert all(a > b > 1.959963 for a, b in zip(qs, qs[1:], strict=False))
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="df must be a positive integer"):
            t_quantile(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        t_quantile(5, 1.0)


def test_mean_interval() -> None:
    # 1, 2, 3, 4: mean 2.5, sample sd sqrt(5/3) = 1.29099, se 0.645497, half
    # t(3) * se = 3.182446 * 0.645497 = 2.054268.
    e = mean_ci([1, 2, 3, 4])
    assert e.mean == 2.5
    assert e.lo == pytest.approx(2.5 - 2.054268, abs=1e-5)
    assert e.hi == pytest.approx(2.5 + 2.054268, abs=1e-5)
    assert e.significant(0.0) and not e.significant(1.0)
    # One value: a mean, but no interval, and never significant.
    one = mean_ci([5.0])
    assert (one.mean, one.lo, one.hi, one.n) == (5.0, -math.inf, math.inf, 1)
    assert not one.significant(0.0) and not one.significant(100.0)
    assert one.to_dict() == {"mean": 5.0, "lo": None, "hi": None, "n": 1}
    json.dumps(one.to_dict(), allow_nan=False)


@pytest.mark.parametrize("n", [2, 3, 10])
def test_mean_interval_covers_95_percent_with_few_values(n: int) -> None:
    # Normal samples of n values: the interval holds the true mean 95% of the time
    # (4,000 tries: +-0.007 sd). The normal quantile 1.96 would cover 70%, 81%, 92%.
    rng = random.Random(20261128 + n)
    held = sum(
        e.lo <= 3.0 <= e.hi
        for e in (mean_ci([rng.gauss(3.0, 2.0) for _ in range(n)]) for _ in range(4000))
    )
    assert 0.93 <= held / 4000 <= 0.97


def test_a_rate_whose_deals_are_all_alike_takes_the_wilson_interval() -> None:
    # 1/3 and k/12 means are no binary fractions: their variance rounded to about
    # 1e-33, not 0, and the rate got an interval 1e-16 wide instead of Wilson's.
    flat = paired([[1.0, 0.25, 0.0]] * 40, rate=True)
    w = wilson(sum([1.25 / 3] * 40), 40)
    assert (flat.lo, flat.hi) == (w.lo, w.hi) and flat.hi - flat.lo > 0.2
    assert mean_ci([1 / 3] * 5) == Estimate(1 / 3, 1 / 3, 1 / 3, 5)


@pytest.mark.parametrize("rate, deals", [(0.95, 50), (0.9, 25), (0.98, 200), (0.5, 30)])
def test_a_rate_interval_covers_95_percent_near_0_and_1(rate: float, deals: int) -> None:
    # Each deal two replays, each a win with probability `rate`: 2,000 tries. A t
    # interval on the deals' means covered 88% at 0.95 over 50 deals, 92% at 0.98.
    rng = random.Random(int(rate * 1000) + deals)
    held = 0
    for _ in range(2000):
        per_deal = [[float(rng.random() < rate) for _ in range(2)] for _ in range(deals)]
        e = paired(per_deal, rate=True)
        held += e.lo <= rate <= e.hi
    assert 0.935 <= held / 2000 <= 0.985


def test_paired_interval_is_over_deals() -> None:
    # Three deals, two replays each: per-deal means 0.5, 1, 0 -> mean 0.5, sd 0.5,
    # se 0.288675, half t(2) * se. As a rate: the Wilson interval at the effective
    # sample size 0.5 * 0.5 * 3 / 0.25 = 3, times (1.96 / t(2))^2 = 0.2075: 0.6225.
    deals = [[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]]
    e = paired(deals)
    assert e.mean == 0.5 and e.n == 3
    assert e.hi == pytest.approx(0.5 + t_quantile(2) * 0.5 / math.sqrt(3))
    r = paired(deals, rate=True)
    n_eff = 3 * (1.959964 / 4.302653) ** 2
    z2 = 1.959964**2
    centre, half = 0.5, 1.959964 * math.sqrt(0.25 / n_eff + z2 / (4 * n_eff**2))
    half /= 1 + z2 / n_eff
    assert (r.mean, r.n) == (0.5, 3)
    assert (r.lo, r.hi) == (pytest.approx(centre - half), pytest.approx(centre + half))
    assert 0.0 < r.lo < 0.5 < r.hi < 1.0
    # Point differences: per deal (+10 - 4) / 2 = 3 and (+2 + 0) / 2 = 1 -> mean 2,
    # sd sqrt(2), se 1, half t(1) = 12.7062.
    d = paired([[10.0, -4.0], [2.0, 0.0]])
    assert d.mean == 2.0
    assert (d.lo, d.hi) == (pytest.approx(2 - 12.7062047), pytest.approx(2 + 12.7062047))
    # No spread between deals (each split 1-1): the rate takes the Wilson interval
    # of the 2 deals (1 success), not of the 4 games, which are not independent.
    w = paired([[1.0, 0.0], [0.0, 1.0]], rate=True)
    assert w.n == 2 and (w.lo, w.hi) == (wilson(1, 2).lo, wilson(1, 2).hi)
    assert w.hi - w.lo > wilson(2, 4).hi - wilson(2, 4).lo
    # One deal: no points interval; a rate still gets the Wilson interval of 1 deal.
    assert paired([[27.0, 27.0]]) == Estimate(27.0, -math.inf, math.inf, 1)
    one = paired([[1.0, 0.5]], rate=True)
    assert (one.mean, one.lo, one.hi) == (0.75, wilson(0.75, 1).lo, wilson(0.75, 1).hi)
    assert not one.significant(0.5)


def test_bradley_terry_ratings() -> None:
    # 75 of 100: odds 3, so 400 * log10(3) = 190.85 Elo apart, centred on 1500.
    r = bradley_terry(["a", "b"], [(0, 1, 75, 100)], prior=0)
    assert r["a"] - r["b"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r["a"] + r["b"] == pytest.approx(3000)
    # A transitive league: a beats b 2:1, b beats c 2:1, a beats c 4:1 -> exact fit,
    # 120.41 Elo per step.
    r = bradley_terry(["a", "b", "c"], [(0, 1, 20, 30), (1, 2, 20, 30), (0, 2, 24, 30)], prior=0)
    step = 400 * math.log10(2)
    assert r["a"] - r["b"] == pytest.approx(step, abs=1e-6)
    assert r["b"] - r["c"] == pytest.approx(step, abs=1e-6)
    # Ties count half; an unbeaten record stays finite with the default prior.
    assert bradley_terry(["a", "b"], [(0, 1, 5, 10)], prior=0)["a"] == pytest.approx(1500)
    r = bradley_terry(["a", "b"], [(0, 1, 10, 10)])
    assert 1500 < r["a"] < 2500


def test_bradley_terry_prior_is_one_drawn_game_against_an_average_player() -> None:
    # 10 of 10 with the default prior: the fit is the maximum-likelihood one with each
    # player also holding half a point of one game against a player rated 1500 (adding
    # both players' equations puts that player at exactly the mean, 1500). Each player's
    # expected score then equals its actual score; a prior of a whole win, or of half a
    # game, gives other ratings.
    r = bradley_terry(["a", "b"], [(0, 1, 10, 10)])

    def p(x: float, y: float) -> float:
        return 1 / (1 + 10 ** ((y - x) / 400))

    assert 10 * p(r["a"], r["b"]) + p(r["a"], 1500) == pytest.approx(10 + 0.5, abs=1e-6)
    assert 10 * p(r["b"], r["a"]) + p(r["b"], 1500) == pytest.approx(0 + 0.5, abs=1e-6)
    # The ratings are centred on 1500 with the prior as without it.
    r = bradley_terry(["a", "b", "c"], [(0, 1, 7, 10), (1, 2, 9, 10)])
    assert sum(r.values()) == pytest.approx(3 * 1500)


def test_significant_needs_the_whole_interval_strictly_on_one_side() -> None:
    # An interval that reaches the value does not exclude it: a pairing against itself
    # (lead 0 [0, 0]) is no lead, and a rate whose interval starts at 50% is no edge.
    assert not Estimate(0.0, 0.0, 0.0, 5).significant()
    assert not Estimate(0.6, 0.5, 0.7, 10).significant(0.5)
    assert not Estimate(0.4, 0.3, 0.5, 10).significant(0.5)
    assert Estimate(0.6, 0.51, 0.7, 10).significant(0.5)
    assert Estimate(0.4, 0.3, 0.49, 10).significant(0.5)


def test_unbounded_ends_go_to_json_as_null_and_read_back_as_infinite() -> None:
    # json_ready: every float that is not finite becomes null, in tuples too (an
    # Estimate's fields, a pair of ends), so that strict JSON parsers read the record.
    record = {"lead": (2.0, -math.inf, math.inf), "runs": [{"hi": math.nan}], "n": 3}
    assert json_ready(record) == {"lead": [2.0, None, None], "runs": [{"hi": None}], "n": 3}
    json.dumps(json_ready(record), allow_nan=False)
    # interval_text reads a null end back as the infinite one it was: the text is the
    # same before and after the JSON (one deal: no interval).
    one = paired([[3.0, -1.0]])
    written = json.loads(json.dumps(one.to_dict()))
    assert written == {"mean": 1.0, "lo": None, "hi": None, "n": 1}
    assert interval_text(written["mean"], written["lo"], written["hi"]) == "+1.00 [-inf, +inf]"
    assert interval_text(one.mean, one.lo, one.hi) == "+1.00 [-inf, +inf]"
    assert interval_text(-2.5, -4.0, -1.0, width=6) == " -2.50 [-4.00, -1.00]"


def test_paired_leaves_out_empty_deals_and_refuses_none() -> None:
    # A deal with no replays has no mean: it is left out (not a ZeroDivisionError), and
    # with no deal at all there is nothing to estimate.
    assert paired([[], [1.0, 3.0], [5.0]]) == paired([[1.0, 3.0], [5.0]])
    assert paired([[], [1.0, 0.0]], rate=True) == paired([[1.0, 0.0]], rate=True)
    nothing: list[list[list[float]]] = [[], [[]], [[], []]]
    for deals in nothing:
        with pytest.raises(ValueError, match="paired: no deals"):
            paired(deals)


# -- seat patterns and duplicate deals ------------------------------------------------------------


def test_seat_patterns() -> None:
    assert seat_patterns(Rules()) == ((0, 1), (1, 0))
    assert seat_patterns(Rules.preset("pagat", players=4, teams=True)) == (
        (0, 1, 0, 1),
        (1, 0, 1, 0),
    )
    three = seat_patterns(Rules(players=3))
    assert len(three) == 6 and len(set(three)) == 6
    # Every seat is A's in half of the games: the deal's luck cancels.
    for seat in range(3):
        assert sum(p[seat] == 0 for p in three) == 3
    # In this order: A alone in seat r, then B alone in seat r. The pattern's index is
    # in records.jsonl and in the seeds of the agents (:func:`derive`), so another order
    # would play other games from the same master seed.
    assert three == ((0, 1, 1), (1, 0, 1), (1, 1, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1))


def test_seeds_are_63_bit_and_pinned() -> None:
    # A printed master seed reproduces its run in later versions only if deal, match and
    # agent seeds derive from it as they did: these values are what seed 2026 gave.
    assert derive(2026, "hand", 0) == deal_seed(2026, 0) == 1475403190937045184
    assert deal_seed(2026, 1) == 8389436025492507637
    assert match_seed(2026, 0) == 4187746460707066820
    for k in range(200):
        for seed in (deal_seed(k, k), match_seed(k, 0), derive(k, "hand", k, 1, "agents")):
            assert 0 <= seed < 2**63


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules.preset("pagat", players=4, teams=True), Rules.preset("kardinal", players=3)],
    ids=["two", "teams", "three"],
)
def test_duplicate_deals_give_each_agent_the_same_hands(rules: Rules) -> None:
    """Every replay of a deal starts from the same hands, boneyard and leader, and each
    dealt hand is played by A in as many replays as by B."""
    work = Work(rules.to_dict(), 0, "greedy", "random", "hand", 99, (0, 1, 2), keep_deals=True)
    results = run_work(work)
    patterns = seat_patterns(rules)
    assert len(results) == 3 * len(patterns)
    for k in range(3):
        games = [r for r in results if r.deal == k]
        assert [g.pattern for g in games] == list(range(len(patterns)))
        first = HandState.deal(rules, deal_seed(99, k))
        expected = tuple(" ".join(str(t) for t in h) for h in first.hands)
        for g in games:
            assert g.dealt == expected
        held = {0: [], 1: []}  # type: dict[int, list[str]]
        for g in games:
            for seat, hand in enumerate(g.dealt):
                held[patterns[g.pattern][seat]].append(hand)
        assert sorted(held[0]) == sorted(held[1])
        assert set(held[0]) == set(expected)
    # Each deal of the run is another deal: the same hands in every replay of a deal
    # (above), not in every deal of the run.
    assert len({g.dealt for g in results}) == 3


def test_runs_reproduce_across_worker_counts() -> None:
    plan = RunPlan(Rules(), [Pairing("greedy", "random")], deals=6, matches=2, seed=5, chunk=2)
    one = run(plan, workers=1)
    two = run(RunPlan(Rules(), plan.pairings, 6, 2, 5, chunk=2), workers=2)
    key = [(r.kind, r.deal, r.pattern, r.score, r.diff, r.hands, r.termination) for r in one]
    assert key == [
        (r.kind, r.deal, r.pattern, r.score, r.diff, r.hands, r.termination) for r in two
    ]
    assert len([r for r in one if r.kind == "match"]) == 4
    other = run(RunPlan(Rules(), plan.pairings, 6, 0, 6, chunk=2), workers=1)
    assert [r.diff for r in other] != [r.diff for r in one if r.kind == "hand"]
    assert derive(1, "hand", 0) != derive(1, "hand", 1)


def test_hand_results_score_from_a_side() -> None:
    """Replaying a game by hand: the winner's points count for A when A sits there."""
    rules = Rules()
    work = Work(rules.to_dict(), 0, "greedy", "greedy", "hand", 3, (0,))
    results = run_work(work)
    for g in results:
        state = HandState.deal(rules, deal_seed(3, 0))
        agent = make_agent("greedy")
        rngs = [random.Random(derive(derive(3, "hand", 0, g.pattern, "agents"), s)) for s in (0, 1)]
        while not state.is_over:
            seat = state.to_move
            state = state.apply(agent.act(state.view(seat), rngs[seat]))
        out = state.outcome
        assert out is not None
        a_seat = seat_patterns(rules)[g.pattern].index(0)
        if out.winning_side is None:
            assert (g.score, g.diff) == (0.5, 0.0)
        elif out.winning_side == a_seat:
            assert (g.score, g.diff) == (1.0, out.points)
        else:
            assert (g.score, g.diff) == (0.0, -out.points)


def test_a_tied_hand_is_half_for_a_and_a_domino_that_scores_nothing_a_win() -> None:
    """The rules of the module's docstring on hands that nobody wins and on a win that
    scores 0, by default and against a field, from either seat of A."""
    import evaluate.arena as arena

    def figures(rules: Rules, state: HandState, p: int, field: bool) -> tuple[float, float]:
        g = hand_result(rules, 0, 0, p, state, arena._Clock(), False, field)
        return g.score, g.diff

    # Blocked with counts 12 and 12 (tie="void"): nobody wins, 1/2 to A in each seat.
    two = Rules(draw_rule="none", next_leader="loser", tie="void")
    tie = deal(two, ["5-6 0-1", "0-0 6-6"], leader=1).apply("0-0").apply("pass").apply("pass")
    assert tie.outcome is not None and tie.outcome.winning_side is None
    for p in (0, 1):
        assert figures(two, tie, p, field=False) == figures(two, tie, p, field=True) == (0.5, 0)
    # Three seats, counts 12, 5, 5 (a shared lowest count): A alone is level with each
    # seat of the field, wherever A sits.
    three = Rules(players=3, draw_rule="none", tie="void")
    tie = deal(three, ["5-5 1-1", "0-0 1-4", "2-3"], leader=1).apply("0-0")
    for _ in range(3):
        tie = tie.apply("pass")
    assert tie.outcome is not None and tie.outcome.winning_side is None
    for p in range(3):
        assert figures(three, tie, p, field=True) == (0.5, 0.0)
    # Seat 0 goes out against 0-0 alone: a win worth 0 points, for A when A sits there,
    # with --field as without it (at two seats --field changes nothing).
    zero = deal(Rules(), ["3-4", "0-0"]).apply("3-4")
    for field in (False, True):
        assert figures(Rules(), zero, 0, field) == (1.0, 0.0)
        assert figures(Rules(), zero, 1, field) == (0.0, 0.0)


def test_match_results_replay_from_one_match_seed_with_a_seed_per_seat() -> None:
    """Every seat pattern of a match plays the same match seed (duplicate matches), each
    seat with its own agent seed; score, diff and hands follow from the final totals."""
    rules = Rules()
    results = run_work(Work(rules.to_dict(), 0, "greedy", "random", "match", 4, (1,)))
    assert [g.pattern for g in results] == [0, 1]
    for g in results:
        pattern = seat_patterns(rules)[g.pattern]
        match = MatchState.new(rules, match_seed(4, 1))
        seeds = derive(4, "match", 1, g.pattern, "agents")
        rngs = [random.Random(derive(seeds, seat)) for seat in (0, 1)]
        agents = (make_agent("greedy"), make_agent("random"))
        while not match.is_over:
            if match.hand_over:
                match = match.next_hand()
                continue
            seat = match.to_move
            move = agents[pattern[seat]].act(match.view(seat), rngs[seat])
            match = match.apply(move)
        a = pattern.index(0)
        assert g.hands == match.deals > 1
        assert g.diff == match.totals[a] - match.totals[1 - a]
        scores: dict[tuple[int, ...], float] = {(a,): 1.0, (1 - a,): 0.0}  # else shared
        assert g.score == scores.get(match.winners or (), 0.5)


def test_a_shared_match_win_counts_half() -> None:
    import evaluate.arena as arena

    # Seats 0 and 2 tie for the top at 160 (three seats, each for himself): A shares the
    # win when A sits in one of them and a B in the other, wins it when A holds both,
    # and loses it when A holds neither. diff: A's seats' totals minus B's seats'.
    three = Rules(players=3)
    over = dataclasses.replace(
        MatchState.new(three, 1), totals=(160, 40, 160), winners=(0, 2), deals=6
    )
    expected: dict[tuple[int, ...], tuple[float, int]] = {
        (0, 1, 1): (0.5, 160 - 200),
        (1, 0, 1): (0.0, 40 - 320),
        (1, 1, 0): (0.5, 160 - 200),
        (1, 0, 0): (0.5, 200 - 160),
        (0, 1, 0): (1.0, 320 - 40),
        (0, 0, 1): (0.5, 200 - 160),
    }
    for p, pattern in enumerate(seat_patterns(three)):
        g = match_result(three, 0, 0, p, over, arena._Clock())
        assert (g.score, g.diff, g.hands) == (*expected[pattern], 6), pattern
    # Against a field: A alone in seat 0 is level with seat 2 and ahead of seat 1.
    assert seat_patterns(three, field=True)[0] == (0, 1, 1)
    field = match_result(three, 0, 0, 0, over, arena._Clock(), field=True)
    assert (field.score, field.diff) == (0.75, 160 - (40 + 160) / 2)
    # Two seats tied at the top: half to A from either seat.
    two = Rules()
    tied = dataclasses.replace(MatchState.new(two, 1), totals=(120, 120), winners=(0, 1))
    for p in (0, 1):
        g = match_result(two, 0, 0, p, tied, arena._Clock())
        assert (g.score, g.diff) == (0.5, 0.0)


def test_field_patterns_put_a_alone_in_each_seat_once() -> None:
    for n in (3, 4):
        field = seat_patterns(Rules(players=n), field=True)
        assert len(field) == n
        for seat in range(n):
            assert [p[seat] for p in field].count(0) == 1
        assert all(p.count(0) == 1 for p in field)
        assert set(field) < set(seat_patterns(Rules(players=n)))
    # Two seats and two partnerships: the field is the other side, as by default.
    for rules in (Rules(), Rules.preset("pagat", players=4, teams=True)):
        assert seat_patterns(rules, field=True) == seat_patterns(rules)


def test_field_figures_compare_a_with_each_seat_of_the_field() -> None:
    three = Rules(players=3)
    # A sits in seat 1 with 9 points; the field's seats have 5 and 9: A is ahead of one
    # and level with the other, and 9 - (5 + 9) / 2 = 2 points ahead of their mean.
    assert field_figures(three, (1, 0, 1), (5, 9, 9)) == (0.75, 2.0)
    # A hand won by a seat of the field: A is behind it and level with the other.
    assert field_figures(three, (0, 1, 1), (0, 12, 0)) == (0.25, -6.0)
    assert field_figures(Rules(), (1, 0), (0, 7)) == (1.0, 7.0)
    # A goes out while the other hand holds only 0-0: a win that scores 0, which the
    # hand's winner breaks as the default scoring does (it was 1/2 with --field).
    zero = deal(Rules(), ["3-4", "0-0"]).apply("3-4").outcome
    assert zero is not None and zero.winning_side == 0 and zero.side_points(2) == (0, 0)
    assert field_figures(Rules(), (0, 1), (0, 0), winner=0) == (1.0, 0.0)
    assert field_figures(Rules(), (0, 1), (0, 0), winner=1) == (0.0, 0.0)
    assert field_figures(Rules(), (0, 1), (0, 0)) == (0.5, 0.0)
    with pytest.raises(ValueError, match="alone"):
        field_figures(three, (1, 0, 0), (1, 2, 3))
    # A partnership of A and B is no side of A's alone, though A sits in it.
    teams = Rules.preset("pagat", players=4, teams=True)
    with pytest.raises(ValueError, match="alone"):
        field_figures(teams, (0, 1, 1, 1), (10, 5))


@pytest.mark.parametrize("players", [3, 4])
def test_field_run_plays_a_alone_against_the_same_deal(players: int) -> None:
    """With ``field``, each deal is replayed once per seat with A alone there, from the
    same hands; each game's figures are A's points against the field's mean."""
    rules = Rules(players=players)
    work = Work(rules.to_dict(), 0, "greedy", "random", "hand", 7, (0, 1), True, field=True)
    results = run_work(work)
    patterns = seat_patterns(rules, field=True)
    assert len(results) == 2 * players
    for k in range(2):
        games = [r for r in results if r.deal == k]
        assert sorted(patterns[g.pattern].index(0) for g in games) == list(range(players))
        first = HandState.deal(rules, deal_seed(7, k))
        assert {g.dealt for g in games} == {tuple(" ".join(map(str, h)) for h in first.hands)}
    for g in results:
        a_seat = seat_patterns(rules, field=True)[g.pattern].index(0)
        assert g.moves[0] > 0 and g.moves[1] > 0
        # Replay the game as the arena does and score it by hand.
        state = HandState.deal(rules, deal_seed(7, g.deal))
        rngs = [
            random.Random(derive(derive(7, "hand", g.deal, g.pattern, "agents"), s))
            for s in range(players)
        ]
        agents = {0: make_agent("greedy"), 1: make_agent("random")}
        while not state.is_over:
            seat = state.to_move
            slot = 0 if seat == a_seat else 1
            state = state.apply(agents[slot].act(state.view(seat), rngs[seat]))
        out = state.outcome
        assert out is not None
        if out.winning_side is None:
            assert (g.score, g.diff) == (0.5, 0.0)
        elif out.winning_side == a_seat:
            assert (g.score, g.diff) == (1.0, out.points)
        else:
            share = (players - 2) / (2 * players - 2)
            assert g.score == pytest.approx(share)
            assert g.diff == pytest.approx(-out.points / (players - 1))


def test_field_plan_counts_and_matches() -> None:
    rules = Rules(players=3)
    plan = RunPlan(rules, [Pairing("greedy", "random")], 2, 1, seed=4, field=True)
    assert plan.games() == (2 + 1) * 3
    results = run(plan)
    assert [(r.kind, r.pattern) for r in results if r.kind == "match"] == [
        ("match", 0),
        ("match", 1),
        ("match", 2),
    ]
    assert all(0 <= r.score <= 1 for r in results)


def _game(pairing: int, deal: int, pattern: int, score: float, diff: float, kind: str = "hand"):
    return GameResult(
        pairing,
        kind,
        deal,
        pattern,
        score,
        diff,
        1,
        "domino",
        (0.5, 0.25),
        (10, 5),
        (4, 5),
        choice_seconds=(0.4, 0.25),
    )


def test_one_deal_reports_points_without_an_interval(tmp_path: Path) -> None:
    # One deal: the points have no interval (printed as such, null in strict JSON);
    # the hand win rate gets the Wilson interval of one deal, and nothing is significant.
    results = [_game(0, 0, 0, 1, 30), _game(0, 0, 1, 1, 24)]
    settings = {"preset": "standard", "seed": 1, "deals": 1, "patterns": 2}
    rep = summarize(results, [Pairing("a", "b")], ["a", "b"], settings)
    p = rep.pairings[0]
    assert p.points is not None and p.win is not None
    assert (p.points.mean, p.points.lo, p.points.hi) == (27.0, -math.inf, math.inf)
    assert not p.points.significant() and not p.win.significant(0.5)
    assert "+27.00 [-inf, +inf]" in rep.table() and "(1 deal x 2 seatings)" in rep.table()
    rep.write(tmp_path, plot=True)
    data = json.loads((tmp_path / "report.json").read_text())
    assert data["pairings"][0]["points"] == {"mean": 27.0, "lo": None, "hi": None, "n": 1}
    json.dumps(data, allow_nan=False)


def _hand_computed_games() -> list[GameResult]:
    """Three deals and one match seed of a pairing, two replays each, as (score, diff)."""
    return [
        _game(0, 0, 0, 1, 12),
        _game(0, 0, 1, 1, 8),
        _game(0, 1, 0, 1, 5),
        _game(0, 1, 1, 0, -3),
        _game(0, 2, 0, 0.5, 0),
        _game(0, 2, 1, 1, 4),
        _game(0, 0, 0, 1, 30, "match"),
        _game(0, 0, 1, 0, -20, "match"),
    ]


def test_summary_matches_hand_computation() -> None:
    # A beats B: deals with (score, diff) per replay; per-deal means: win 1, 0.5, 0.5,
    # diff (12 + 8) / 2 = 10, (5 - 3) / 2 = 1, (0 + 4) / 2 = 2 -> mean 13/3.
    results = _hand_computed_games()
    rep = summarize(results, [Pairing("a", "b")], ["a", "b"], {"preset": "standard", "seed": 1})
    p = rep.pairings[0]
    assert (p.deals, p.hands, p.matches) == (3, 6, 2)
    assert p.win is not None and p.win.mean == pytest.approx((1 + 0.5 + 0.75) / 3)
    assert p.points is not None and p.points.mean == pytest.approx(13 / 3)
    sd = math.sqrt(((10 - 13 / 3) ** 2 + (1 - 13 / 3) ** 2 + (2 - 13 / 3) ** 2) / 2)
    assert p.points.hi - p.points.mean == pytest.approx(t_quantile(2) * sd / math.sqrt(3))
    assert p.match_win is not None and p.match_win.mean == 0.5
    # Time: 8 games x 0.5 s over 8 x 10 moves for A, 0.25 s over 5 moves for B; of it,
    # 0.4 s over A's 4 moves with a choice and all of B's over its 5 (before: A's 0.5 s
    # over its 4 choices, the forced moves' time counted as the choices').
    assert p.seconds_per_move == (pytest.approx(0.05), pytest.approx(0.05))
    assert p.seconds_per_choice == (pytest.approx(0.1), pytest.approx(0.05))
    assert rep.seconds_per_choice == {"a": pytest.approx(0.1), "b": pytest.approx(0.05)}
    # The rating: A scored 4.5 of 6 hands -> odds 3 (with the prior, slightly less).
    gap = rep.ratings["a"] - rep.ratings["b"]
    assert 0 < gap < 400 * math.log10(3)
    assert "a" in rep.table() and "| `a` | `b` | 6 |" in rep.markdown()
    # The rating is of the hands alone (the report says "fit of every hand"), not the
    # matches too; the terminations are the hands'.
    assert rep.ratings == bradley_terry(["a", "b"], [(0, 1, 4.5, 6)])
    assert p.terminations == {"domino": 6}
    assert rep.seconds_per_move == {"a": pytest.approx(0.05), "b": pytest.approx(0.05)}


def test_the_table_and_markdown_show_the_summary_as_computed() -> None:
    # The games of test_summary_matches_hand_computation, with A named "b": a hand win
    # rate of 75% with the asymmetric interval [18.9%, 97.5%], ratings 1586 and 1414,
    # A's 50 ms a move and 100 ms a choice, B's 50 and 50.
    games = _hand_computed_games()
    rep = summarize(games, [Pairing("b", "a")], ["a", "b"], {"preset": "standard", "seed": 1})
    table = rep.table().splitlines()
    assert (
        "b  a        6   75.0 [18.9, 97.5]      +4.33 [-7.92, +16.59]"
        "          2   50.0 [ 5.5, 94.5]"
    ) in table
    # The best rating first (here the agent listed second), with its own times in ms.
    assert table[-2:] == ["   1586     50.00     100.00  b", "   1414     50.00      50.00  a"]
    md = rep.markdown().splitlines()
    assert (
        "| `b` | `a` | 6 |  75.0 [18.9, 97.5] |  +4.33 [-7.92, +16.59] | 2 |  50.0 [ 5.5, 94.5] |"
        in md
    )
    assert md[-2:] == ["| `b` | 1586 | 50.00 | 100.00 |", "| `a` | 1414 | 50.00 | 50.00 |"]


# -- the command line -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--agents", "nope", "random"], "unknown agent 'nope'"),
        (["--agents", "search:samples", "random"], "malformed agent spec"),
        (["--agents", "search:samples=0", "random"], "samples=0: must be from 1 to 100,000"),
        (["--agents", "expert", "random", "--preset", "nope"], "unknown preset 'nope'"),
        (["--agents", "expert", "random", "--rules", "players=9"], "--rules: hand_size"),
        (["--agents", "expert", "random", "--rules", "teams=true"], "teams=True only"),
        (["--agents", "expert", "random", "--rules", "colour=red"], "one of the fields"),
        (["--agents", "expert", "random", "--rules", "players"], "key=value"),
        (["--agents", "expert", "random", "--hands", "0"], "--hands must be from 1 to 10,000,000"),
        # Listed up front, 10**12 hands ended in a MemoryError.
        (["--agents", "expert", "random", "--hands", "10" + "0" * 11], "--hands must be from 1"),
        (["--agents", "expert", "random", "--matches", "1000001"], "--matches must be from 0 to"),
        (
            ["--agents", "expert", "random", "--hands", "x"],
            "argument --hands: 'x' is not allowed; allowed: an integer in the digits 0-9",
        ),
        (
            ["--agents", "expert", "random", "--matches", "-1"],
            "--matches must be from 0 to 1,000,000",
        ),
        (["--agents", "expert", "random", "--workers", "0"], "--workers must be at least 1"),
        (["--agents", "expert"], "at least two --agents"),
        (["--agents", "expert", "expert"], "listed twice"),
        (["--agents", "expert", "random", "--vs", "expert"], "cannot play itself"),
        (
            ["--agents", "random:", "greedy", "--vs", "random"],
            "--vs 'random' is the same agent as 'random:' in --agents (random); "
            "a candidate cannot play itself",
        ),
        (
            ["--agents", "search:samples=64", "--vs", "search"],
            "--vs 'search' is the same agent as 'search:samples=64' in --agents",
        ),
        (
            ["--agents", "random", "random "],
            "agents 'random' and 'random ' in --agents are the same agent (random)",
        ),
        (
            ["--agents", "search", "search:samples=64,fast=1"],
            "agents 'search' and 'search:samples=64,fast=1' in --agents are the same agent",
        ),
        (["--agents", "search:samples=16", "search:samples=１６"], "in the digits 0-9"),
        (["--agents", "random", "expert:partner=nan"], "partner='nan': expected a number"),
        (["--agents", "random", "expert:partner=1e400"], "partner='1e400': expected a number"),
        (["--agents", "random", "search:halving=-1"], "halving='-1': expected 0 or 1"),
        (["--agents", "random", "search:halving=5,fast=7"], "halving='5': expected 0 or 1"),
        (
            ["--agents", "random", "policy:matador_env/bots/standard,sample=maybe"],
            "sample='maybe': expected true or false",
        ),
        (["--hands", "10"], "--agents"),
    ],
)
def test_cli_rejects_bad_arguments(argv: list[str], says: str, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as info:
        parse_args(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert says in err
    if "unknown agent" in says:
        assert "known specs: random, greedy, expert[:weights=fitted|base," in err
        assert "policy:" in err and "search[" in err


@pytest.mark.parametrize("name", list(CONFIGURATIONS))
def test_cli_takes_each_configuration_by_name_and_by_its_flags(name: str) -> None:
    config = configuration(name)
    _, by_name, _ = parse_args(["--config", name, "--agents", "greedy", "random"])
    _, by_flags, _ = parse_args([*config.flags(), "--agents", "greedy", "random"])
    assert by_name == by_flags == config.rules()
    _, changed, _ = parse_args(
        ["--config", name, "--rules", "target_score=150", "--agents", "greedy", "random"]
    )
    assert changed == config.rules().replace(target_score=150)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--config", "nope"], "--config: unknown configuration 'nope'; known: standard,"),
        (["--config", "pagat_teams", "--preset", "pagat"], "drop --preset (other changes"),
        (["--config", "standard_4p", "--players", "3", "--no-teams"], "drop --players and --teams"),
        (["--players", "9"], "--players: hand_size="),
        (["--players", "3", "--teams"], "--players with --teams: "),
    ],
)
def test_cli_rejects_bad_seats(argv: list[str], says: str, capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as info:
        parse_args([*argv, "--agents", "greedy", "random"])
    assert info.value.code == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize(
    "out, says",
    [
        ("file", "--out: {tmp}/file exists and is not a folder; give a folder"),
        ("file/sub", "--out: {tmp}/file/sub lies in {tmp}/file, which exists and is not a folder"),
        ("", "argument --out: an empty path is not a folder"),
    ],
)
def test_cli_rejects_an_out_path_it_cannot_write_before_any_game(  # type: ignore[no-untyped-def]
    tmp_path: Path, capsys, out: str, says: str
) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit) as stop:
        parse_args(["--agents", "greedy", "random", "--out", str(tmp_path / out) if out else ""])
    assert stop.value.code == 2
    assert says.format(tmp=tmp_path) in capsys.readouterr().err


def test_a_report_folder_holds_one_runs_files(tmp_path: Path) -> None:
    """A run without --records or the plot removes an earlier run's records.jsonl and
    report.png, which would otherwise lie beside a report they do not belong to."""
    from evaluate.__main__ import main

    argv = ["--agents", "greedy", "random", "--hands", "2", "--matches", "0", "--workers", "1"]
    argv += ["--no-progress", "--out", str(tmp_path)]
    assert main([*argv, "--records"]) == 0
    assert (tmp_path / "records.jsonl").is_file() and (tmp_path / "report.png").is_file()
    assert main([*argv, "--no-plot"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "report.md"]


def test_ctrl_c_is_one_line_and_keeps_the_earlier_report(tmp_path: Path) -> None:
    """Ctrl-C reaches the worker processes too; the arena stops them, writes nothing and
    says how far it got, with no traceback."""
    import os
    import signal
    import time

    (tmp_path / "report.json").write_text('{"earlier": true}\n')
    argv = ["--agents", "search:samples=32", "expert", "--hands", "6000", "--matches", "0"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "evaluate", *argv, "--workers", "2", "--out", str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # As a terminal leaves it: a job started in the background of a shell without
        # job control (as a CI runner may start this test) inherits SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("reproduce:"):  # printed as the games begin
                break
        time.sleep(2)
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted after ") and last.endswith(
        f"of 6000 games; nothing written (what {tmp_path} held is as it was)"
    )
    assert (tmp_path / "report.json").read_text() == '{"earlier": true}\n'


def test_cli_pairings_and_rules() -> None:
    args, rules, pairings = parse_args(
        [
            "--agents",
            "greedy",
            "random",
            "--vs",
            "expert",
            "--preset",
            "pagat",
            "--rules",
            "players=4",
            "teams=true",
        ]
    )
    assert rules == Rules.preset("pagat", players=4, teams=True)
    assert pairings == [Pairing("expert", "greedy"), Pairing("expert", "random")]
    _, _, robin = parse_args(["--agents", "greedy", "random", "expert"])
    assert robin == [
        Pairing("greedy", "random"),
        Pairing("greedy", "expert"),
        Pairing("random", "expert"),
    ]


def test_cli_field_plays_the_candidate_alone(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from evaluate.__main__ import main

    argv = ["--agents", "random", "--vs", "greedy", "--rules", "players=3", "--hands", "6"]
    argv += ["--matches", "0", "--workers", "1", "--no-plot", "--no-progress"]
    assert main([*argv, "--field", "--out", str(tmp_path)]) == 0
    assert "A alone against a field" in capsys.readouterr().out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["settings"]["patterns"] == 3 and report["settings"]["deals"] == 2
    assert report["settings"]["mode"] == "--vs greedy, --field"
    assert report["pairings"][0]["hands"] == 6
    assert parse_args(argv)[0].field is False


def test_cli_records_replay_every_game_to_its_result(tmp_path: Path) -> None:
    """--records writes each game's seats and hand records; every record replays move
    for move, and the hands' points give back the game's score and diff."""
    from evaluate.__main__ import main
    from matador_env.engine import parse_hand_record

    argv = ["--agents", "random", "--vs", "greedy", "--rules", "players=3", "--hands", "6"]
    argv += ["--matches", "3", "--field", "--seed", "5", "--workers", "1"]
    argv += ["--no-plot", "--no-progress", "--out"]
    assert main([*argv, str(tmp_path / "none")]) == 0
    assert not (tmp_path / "none" / "records.jsonl").exists()
    assert main([*argv, str(tmp_path), "--records"]) == 0
    games = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    rules = Rules.preset("standard", players=3)
    patterns = seat_patterns(rules, field=True)
    assert [(g["kind"], g["deal"], g["pattern"]) for g in games] == [
        *[("hand", k, p) for k in range(2) for p in range(3)],
        *[("match", 0, p) for p in range(3)],
    ]
    for g in games:
        assert (g["a"], g["b"]) == ("greedy", "random")
        pattern = patterns[g["pattern"]]
        assert g["seats"] == [("greedy", "random")[slot] for slot in pattern]
        points = [0] * rules.sides
        for text in g["records"]:
            record = parse_hand_record(text)
            assert record.rules == rules
            outcome = record.replay().outcome
            assert outcome is not None
            points = [t + p for t, p in zip(points, outcome.side_points(rules.sides), strict=True)]
        if g["kind"] == "hand":
            assert len(g["records"]) == 1
            assert parse_hand_record(g["records"][0]).seed == deal_seed(5, g["deal"])
        else:
            assert len(g["records"]) >= 1 and max(points) >= rules.target_score
        assert field_figures(rules, pattern, points) == pytest.approx((g["score"], g["diff"]))


SHIPPED_BOT = "policy:matador_env/bots/standard"


def test_cli_refuses_an_agent_for_other_rules(capsys) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as info:
        parse_args(["--vs", SHIPPED_BOT, "--agents", "random", "--preset", "leiden"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"agent {SHIPPED_BOT!r} plays standard only, not the chosen rules leiden" in err
    # The same agent on its own rules, with an override that changes nothing, is fine.
    parse_args(["--vs", SHIPPED_BOT, "--agents", "random", "--rules", "players=2"])


def test_cli_refuses_a_bot_level_for_rules_no_bot_plays(capsys) -> None:  # type: ignore[no-untyped-def]
    # bot:trained plays every shipped configuration; a target no bot was made for is refused.
    with pytest.raises(SystemExit) as info:
        parse_args(["--vs", "bot:trained", "--agents", "random", "--rules", "target_score=37"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "agent 'bot:trained' cannot play the chosen rules" in err
    assert "standard" in err  # the shipped configurations are named
    parse_args(["--vs", "bot:trained", "--agents", "random", "--preset", "standard"])


def test_run_refuses_an_agent_for_other_rules_before_any_game() -> None:
    leiden = Rules.preset("leiden")
    plan = RunPlan(leiden, [Pairing("random", SHIPPED_BOT)], deals=2, matches=0, seed=1)
    with pytest.raises(AgentRulesError, match="plays standard only, not the chosen rules leiden"):
        run(plan, workers=2)
    assert plan.units == []  # refused before the work was cut into units
    # Other rules are named by the nearest preset and the fields that differ from it.
    custom = Rules.preset("standard", target_score=150)
    plan = RunPlan(custom, [Pairing(SHIPPED_BOT, "random")], deals=2, matches=0, seed=1)
    with pytest.raises(AgentRulesError, match=r"rules standard, 2 players, target_score=150 "):
        run(plan)


def test_cli_refusal_is_one_error_not_a_worker_traceback(tmp_path: Path) -> None:
    argv = ["--vs", SHIPPED_BOT, "--agents", "random", "--preset", "leiden", "--hands", "4"]
    proc = subprocess.run(
        [sys.executable, "-m", "evaluate", *argv, "--workers", "2", "--out", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("python -m evaluate: error: agent")
    assert not (tmp_path / "report.json").exists()


def test_cli_end_to_end(tmp_path: Path) -> None:
    """A small run in worker processes writes the table and the three report files."""
    out = tmp_path / "report"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluate",
            "--agents",
            "expert",
            "greedy",
            "random",
            "--hands",
            "40",
            "--matches",
            "2",
            "--workers",
            "2",
            "--seed",
            "7",
            "--out",
            str(out),
            "--no-progress",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "master seed 7: 20 deals x 2 seat patterns = 40 hands per pairing" in proc.stdout
    assert "rating (Bradley-Terry, Elo scale)" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["seed"] == 7
    assert [(p["a"], p["b"]) for p in report["pairings"]] == [
        ("expert", "greedy"),
        ("expert", "random"),
        ("greedy", "random"),
    ]
    assert all(p["hands"] == 40 and p["matches"] == 2 for p in report["pairings"])
    assert set(report["ratings"]) == {"expert", "greedy", "random"}
    assert (out / "report.md").read_text().startswith("# Arena report")
    assert (out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_duplicate_lead_is_the_per_deal_difference_of_two_pairings_on_the_same_deals() -> None:
    plan = RunPlan(
        Rules.preset("standard"),
        [Pairing("greedy", "random"), Pairing("random", "random")],
        deals=40,
        matches=0,
        seed=8,
    )
    results = run(plan)
    first = [r for r in results if r.pairing == 0]
    second = [r for r in results if r.pairing == 1]
    lead = duplicate_lead(first, second)
    assert lead.n == 40
    # The mean lead is the difference of the two pairings' mean points...
    assert lead.mean == pytest.approx(
        duplicate_figures(first)[1].mean - duplicate_figures(second)[1].mean
    )
    # ... its interval over deals; a pairing has no lead over itself.
    assert lead.lo < lead.mean < lead.hi
    same = duplicate_lead(first, first)
    assert (same.mean, same.lo, same.hi) == (0.0, 0.0, 0.0)


def test_duplicate_lead_counts_only_the_deals_both_pairings_played() -> None:
    # Deals 0-2 against deals 1-3: the lead is over deals 1 and 2, where A's mean
    # differentials are (5 - 3) / 2 = 1 and 4, against 2 and 0: leads -1 and +4.
    first = [
        _game(0, k, p, 0.5, d)
        for k, ds in ((0, (9, 9)), (1, (5, -3)), (2, (4, 4)))
        for p, d in enumerate(ds)
    ]
    second = [
        _game(1, k, p, 0.5, d)
        for k, ds in ((1, (2, 2)), (2, (0, 0)), (3, (7, 7)))
        for p, d in enumerate(ds)
    ]
    lead = duplicate_lead(first, second)
    assert (lead.n, lead.mean) == (2, 1.5)


def test_cli_keeps_other_players_of_one_agent_apart(tmp_path: Path) -> None:
    _, _, pairings = parse_args(
        ["--agents", "search:samples=16", "search", "--vs", "search:halving=0"]
        + ["--out", str(tmp_path)]
    )
    assert pairings == [
        Pairing("search:halving=0", "search:samples=16"),
        Pairing("search:halving=0", "search"),
    ]


def test_a_run_in_process_plays_the_policy_file_as_it_is_now(tmp_path: Path) -> None:
    """Training exports each evaluation's policy to one folder and measures it with one
    worker in its own process: a run must not play the network an earlier run loaded
    from that path (every evaluation measured the first policy, and best/ was never
    replaced)."""
    import shutil

    import numpy as np
    import onnx
    from onnx import numpy_helper

    folder = tmp_path / "eval_current"
    shutil.copytree("matador_env/bots/standard", folder)
    plan = RunPlan(Rules(), [Pairing(f"policy:{folder}", "expert")], deals=4, matches=0, seed=3)
    first = [r.diff for r in run(plan, workers=1)]
    model = onnx.load(folder / "policy.onnx")
    for weights in model.graph.initializer:
        if weights.name.startswith("policy.action_net."):
            # The opposite preferences: the least likely move is played.
            weights.CopyFrom(numpy_helper.from_array(-numpy_helper.to_array(weights), weights.name))
    onnx.save(model, folder / "policy.onnx")
    second = [r.diff for r in run(plan, workers=1)]
    assert second != first
    # And the same figures as a fresh process would measure (workers=2: spawned).
    assert second == [r.diff for r in run(plan, workers=2)]
    assert np.mean(second) < np.mean(first)


@pytest.mark.parametrize("name", ["report.json", "report.md", "report.png", "records.jsonl"])
def test_cli_refuses_an_out_whose_report_name_is_a_folder_before_any_game(  # type: ignore[no-untyped-def]
    tmp_path: Path, capsys, name: str
) -> None:
    # Before: every game was played, then writing (or, for records.jsonl without
    # --records, removing) that name stopped with an IsADirectoryError traceback.
    (tmp_path / name).mkdir()
    with pytest.raises(SystemExit) as stop:
        parse_args(["--agents", "greedy", "random", "--out", str(tmp_path)])
    assert stop.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"python -m evaluate: error: --out: {tmp_path / name} is a folder, where the arena "
        f"writes (or removes) its {name}; give another --out, or move it away"
    )


def test_the_time_per_choice_counts_the_moves_with_a_choice_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A clock that moves one second a reading: each act takes one second. Before, the
    # time per choice was all of an agent's time over its choices, forced moves' too.
    import itertools

    import evaluate.arena as arena

    ticks = itertools.count()
    monkeypatch.setattr(arena.time, "perf_counter", lambda: float(next(ticks)))
    agents = (make_agent("greedy"), make_agent("random"))
    rules = Rules.preset("standard")
    forced_somewhere = False
    for seed in range(6):
        _, clock = arena.play_hand(rules, seed, agents, (0, 1), seed)
        assert clock.seconds == [float(m) for m in clock.moves]
        assert clock.choice_seconds == [float(c) for c in clock.choices]
        forced_somewhere |= clock.choices != clock.moves
    assert forced_somewhere
