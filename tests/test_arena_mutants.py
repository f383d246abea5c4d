"""Gaps that mutation testing of evaluate/arena.py and evaluate/report.py found: each test
here fails on a small change to one of them (a bound, a field, a branch) that the other
tests of the arena let through."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

import evaluate.arena as arena
from agents import make_agent
from evaluate.arena import (
    GameResult,
    Pairing,
    RunPlan,
    field_figures,
    hand_result,
    match_result,
    play_hand,
    play_match,
    run,
)
from evaluate.report import Report, summarize
from matador_env.bot import rules_refusal
from matador_env.engine import MatchState, Rules
from matador_env.engine.tiles import shown_value
from tests.scripted import deal
from tests.test_evaluate import _game
from tests.test_report import _record_calls

# -- the arena ----------------------------------------------------------------------------------


def test_a_match_that_does_not_end_is_cut_off_at_the_hand_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Greedy against greedy, match seed 0, takes 7 hands. A limit of 7 lets it end; a
    # limit of 6 stops it after its 6th hand, naming the match and the limit.
    greedy = (make_agent("greedy"), make_agent("greedy"))
    match, _ = play_match(Rules(), 0, greedy, (0, 1), 1)
    assert match.is_over and match.deals == 7
    monkeypatch.setattr(arena, "_MAX_MATCH_HANDS", 7)
    assert play_match(Rules(), 0, greedy, (0, 1), 1)[0].deals == 7
    monkeypatch.setattr(arena, "_MAX_MATCH_HANDS", 6)
    with pytest.raises(RuntimeError, match="match 0 did not end within 6 hands"):
        play_match(Rules(), 0, greedy, (0, 1), 1)


@pytest.mark.parametrize("play", [play_hand, play_match])
@pytest.mark.parametrize(
    ("agents", "pattern", "rng_seed", "error", "message"),
    [
        (2, (0, 1), 1, ValueError, r"pattern \(0, 1\) names 2 seats; .* each of the 3 seats"),
        (2, (0, 1, 1, 1), 1, ValueError, r"names 4 seats"),
        (2, (0, 1, 2), 1, ValueError, r"seat 2 has 2; allowed: 0 \(A\) or 1 \(B\)"),
        (2, (0, 1, True), 1, ValueError, r"seat 2 has True"),
        (2, (0, "1", 1), 1, ValueError, r"seat 1 has '1'"),
        (1, (0, 0, 0), 1, ValueError, r"agents: 1 given; allowed: two, A and B"),
        (2, (0, 1, 1), "x", TypeError, r"rng_seed='x' is not allowed"),
        (2, (0, 1, 1), -1, ValueError, r"rng_seed=-1 is not allowed"),
    ],
)
def test_a_game_the_arena_cannot_seat_is_refused_before_its_first_move(
    play: Any, agents: int, pattern: tuple[Any, ...], rng_seed: Any, error: type, message: str
) -> None:
    # A short pattern had failed with an IndexError mid-hand, a long one or a slot of 2
    # or True had played on, and any object was taken as the agents' seed.
    greedy = [make_agent("greedy") for _ in range(agents)]
    with pytest.raises(error, match=message):
        play(Rules(players=3), 5, greedy, pattern, rng_seed)


def test_a_pattern_of_numpy_integers_is_seated_as_its_ints() -> None:
    np = pytest.importorskip("numpy")
    greedy = (make_agent("greedy"), make_agent("random"))
    state, _ = play_hand(Rules(players=3), 5, greedy, np.array([0, 1, 1]), 1)
    assert state.outcome == play_hand(Rules(players=3), 5, greedy, (0, 1, 1), 1)[0].outcome


def test_field_figures_refuse_a_pattern_whose_other_sides_are_not_a_field() -> None:
    # Teams: team 0 (seats 0 and 2) is A's alone, but team 1 holds A and B, so there is
    # no side of the field's: refused as such, not a ZeroDivisionError.
    teams = Rules.preset("pagat", players=4, teams=True)
    with pytest.raises(ValueError, match=r"pattern \(0, 1, 0, 0\) does not put A alone"):
        field_figures(teams, (0, 1, 0, 0), (10, 5))


def _clock() -> arena._Clock:
    """A clock whose every figure differs, A's from B's and each from the others."""
    clock = arena._Clock()
    clock.seconds = [3.0, 5.0]
    clock.moves = [7, 11]
    clock.choices = [2, 4]
    clock.choice_seconds = [1.5, 2.5]
    return clock


def test_a_game_result_keeps_each_sides_clock_and_the_hands_termination() -> None:
    """``seconds``, ``moves``, ``choices`` and ``choice_seconds`` are (A's, B's) as the
    clock counted them; a hand's ``termination`` is its outcome's."""
    state = deal(Rules(), ["3-4", "0-0"]).apply("3-4")
    assert state.outcome is not None
    g = hand_result(Rules(), 0, 0, 0, state, _clock(), False)
    over = dataclasses.replace(MatchState.new(Rules(), 1), totals=(120, 30), winners=(0,))
    m = match_result(Rules(), 0, 0, 0, over, _clock())
    for r in (g, m):
        assert r.seconds == (3.0, 5.0)
        assert r.moves == (7, 11)
        assert r.choices == (2, 4)
        assert r.choice_seconds == (1.5, 2.5)
    assert g.termination == state.outcome.termination != ""
    assert m.termination == "match"


def test_a_rules_refusal_names_each_field_that_differs_with_both_values() -> None:
    leiden, standard = Rules.preset("leiden"), Rules()
    text = rules_refusal(make_agent("policy:matador_env/bots/leiden"), standard)
    assert text is not None
    assert text.startswith("plays leiden only, not the chosen rules standard")
    differ = [k for k, v in leiden.to_dict().items() if getattr(standard, k) != v]
    assert differ and "tie" in differ
    for k in differ:
        assert f"{k}: its {shown_value(getattr(leiden, k))}, chosen " in text
    # A field both rules share is no difference.
    assert "players:" not in text


def test_a_plan_is_cut_into_chunks_of_deals_matches_first() -> None:
    """Every deal and match of each pairing is in one unit, ``chunk`` of them at most;
    the matches (the longest units) are started first."""
    plan = RunPlan(
        Rules(), [Pairing("greedy", "random"), Pairing("expert", "random")], 7, 2, 1, chunk=3
    )
    units = plan.build()
    kinds = [u.kind for u in units]
    assert kinds == ["match"] * 2 + ["hand"] * 6
    for i in (0, 1):
        hands = [u.deals for u in units if u.pairing == i and u.kind == "hand"]
        assert hands == [(0, 1, 2), (3, 4, 5), (6,)]
        assert [u.deals for u in units if u.pairing == i and u.kind == "match"] == [(0, 1)]


@pytest.mark.parametrize(
    ("deals", "matches", "hand_chunk", "match_chunk"),
    [(100, 40, 12, 4), (1000, 16, 50, 2), (5, 3, 1, 1)],
)
def test_the_default_chunk_is_an_eighth_within_bounds(
    deals: int, matches: int, hand_chunk: int, match_chunk: int
) -> None:
    # Without ``chunk``: an eighth of the count, at least 1, at most 50 deals or 4
    # matches a unit (the last unit takes what is left).
    units = RunPlan(Rules(), [Pairing("greedy", "random")], deals, matches, 1).build()
    assert {len(u.deals) for u in units if u.kind == "hand" and u.deals[-1] < deals - 1} == {
        hand_chunk
    }
    assert len(units[0].deals) == match_chunk and units[0].kind == "match"
    assert sorted(k for u in units if u.kind == "hand" for k in u.deals) == list(range(deals))


def test_progress_is_told_of_every_game() -> None:
    plan = RunPlan(Rules(), [Pairing("greedy", "random")], 3, 1, 2, chunk=1)
    told: list[int] = []
    results = run(plan, progress=told.append)
    assert sum(told) == len(results) == plan.games() == 8
    assert told == [2, 2, 2, 2]  # one call per unit, of its games


# -- the report ---------------------------------------------------------------------------------


def _report(settings: dict[str, Any], **kwargs: Any) -> Report:
    return Report(settings, ["a", "b"], [], {"a": 1500.0, "b": 1500.0}, {}, {}, **kwargs)


@pytest.mark.parametrize(
    ("settings", "says"),
    [
        ({}, "preset ?"),
        ({"preset": "pagat", "players": 2, "teams": False}, "preset pagat, 2 players"),
        (
            {"preset": "standard", "players": 3, "teams": False, "mode": "round robin"},
            "preset standard, 3 players, each for himself; round robin",
        ),
        (
            {"preset": "pagat", "players": 4, "teams": True, "mode": "--vs greedy"},
            "preset pagat, 4 players, two teams; --vs greedy",
        ),
        ({"preset": "standard", "teams": True}, "preset standard, two teams"),
    ],
)
def test_the_table_setting_names_the_seats_and_the_mode(
    settings: dict[str, Any], says: str
) -> None:
    assert _report(settings).table_setting() == says


def _pairing_games(pairing: int, hand_deals: int, match_seeds: int) -> list[GameResult]:
    return [_game(pairing, k, p, 1.0, 5.0) for k in range(hand_deals) for p in (0, 1)] + [
        _game(pairing, k, p, 1.0, 5.0, "match") for k in range(match_seeds) for p in (0, 1)
    ]


@pytest.mark.parametrize(
    ("settings", "match_seeds", "says"),
    [
        ({"deals": 3, "patterns": 2}, 0, "6 hands (3 deals x 2 seatings) per pairing"),
        ({"deals": 3}, 0, "6 hands per pairing"),
        (
            {"deals": 3, "patterns": 2},
            1,
            "6 hands (3 deals x 2 seatings) and 2 matches (1 match seed x 2 seatings) per pairing",
        ),
        ({"deals": 3}, 2, "6 hands and 4 matches per pairing"),
    ],
)
def test_the_counts_say_what_was_played(
    settings: dict[str, Any], match_seeds: int, says: str
) -> None:
    rep = summarize(_pairing_games(0, 3, match_seeds), [Pairing("a", "b")], ["a", "b"], settings)
    assert rep.counts() == says


def test_the_legend_and_the_columns_are_of_the_short_names() -> None:
    long = "policy:runs/a/long/path/to/its/best"
    rep = summarize(_pairing_games(0, 3, 0), [Pairing(long, "b")], [long, "b"], {})
    assert rep.legend() == [f"policy#1 = {long}"]  # "b" keeps its name: nothing to say
    table = rep.table().splitlines()
    # The columns are as wide as the longest short name (plus two), not the full name.
    w = len("policy#1") + 2
    assert table[2].startswith(f"{'A':<{w}}{'B':<{w}}{'hands':>7}")
    assert f"{'policy#1':<{w}}{'b':<{w}}{6:>7}" in [line[: 2 * w + 7] for line in table]
    assert table[-2:] == ["agents:", f"  policy#1 = {long}"]


def test_a_figure_not_measured_is_a_dash() -> None:
    # Pairing a-b played hands only, a-c matches only.
    results = _pairing_games(0, 3, 0) + _pairing_games(1, 0, 2)
    rep = summarize(results, [Pairing("a", "b"), Pairing("a", "c")], ["a", "b", "c"], {})
    rows = [line.split() for line in rep.table().splitlines() if line.startswith("a  ")]
    assert rows[0][-2:] == ["0", "-"]
    assert rows[1][:5] == ["a", "c", "0", "-", "-"]
    md = rep.markdown().splitlines()
    assert any(line.startswith("| `a` | `b` | 6 |") and line.endswith("| 0 | - |") for line in md)
    assert any(line.startswith("| `a` | `c` | 0 | - | - | 4 |") for line in md)


def test_the_markdown_gives_the_command_to_reproduce_and_the_notes() -> None:
    settings = {"seed": 7, "command": "python -m evaluate --agents a b --seed 7"}
    rep = _report(settings, notes=["the first note", "the second"])
    md = rep.markdown().splitlines()
    assert "- master seed: 7 (reproduce: `python -m evaluate --agents a b --seed 7`)" in md
    assert md[-4:] == ["## Notes", "", "- the first note", "- the second"]
    assert "## Notes" not in _report(settings).markdown()


def test_the_figures_say_ties_count_half() -> None:
    figures = _report({}).figures()
    assert "ties count half" in figures["win"]
    assert "shared wins count half" in figures["match_win"]
    assert _report({"field": False}).figures() == figures
    assert "field" in _report({"field": True}).figures()["win"]


def test_ratings_without_hands_are_even() -> None:
    # Matches alone: the ratings are a fit of the hands, so there is none, and every
    # agent is at the mean 1500.
    results = [_game(0, k, p, 1.0, 30, "match") for k in range(3) for p in (0, 1)]
    rep = summarize(results, [Pairing("a", "b")], ["a", "b"], {})
    assert rep.ratings == {"a": 1500.0, "b": 1500.0}


def test_an_agents_time_per_move_is_over_all_its_pairings() -> None:
    # _game: A spends 0.5 s over 10 moves, B 0.25 s over 5, each game. "a" is A in
    # pairing 0 and B in pairing 1: (0.5 + 0.25) s over 15 moves a game pair.
    results = _pairing_games(0, 2, 0) + _pairing_games(1, 2, 0)
    rep = summarize(results, [Pairing("a", "b"), Pairing("c", "a")], ["a", "b", "c"], {})
    assert rep.seconds_per_move["a"] == pytest.approx(0.75 / 15)
    assert rep.seconds_per_choice["a"] == pytest.approx((0.4 + 0.25) / 9)


def test_the_field_plot_says_a_plays_against_a_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    titles = _record_calls(monkeypatch, "set_title", lambda label, **kwargs: label)
    ticks = _record_calls(monkeypatch, "set_yticks", lambda ticks, labels=None, **kw: labels)
    results = _pairing_games(0, 3, 2)
    rep = summarize(results, [Pairing("a", "b")], ["a", "b"], {"field": True})
    rep.plot(tmp_path / "field.png")
    assert titles == [
        "A minus field mean, points per hand, 95% CI",
        "A ahead of field seats, % of hands, 95% CI",
        "A ahead of field seats, % of matches, 95% CI",
    ]
    assert ticks == [["a vs field of b"]]


def test_the_plot_has_a_match_panel_when_any_pairing_played_matches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    titles = _record_calls(monkeypatch, "set_title", lambda label, **kwargs: label)
    results = _pairing_games(0, 3, 2) + _pairing_games(1, 3, 0)
    rep = summarize(results, [Pairing("a", "b"), Pairing("a", "c")], ["a", "b", "c"], {})
    rep.plot(tmp_path / "some.png")
    assert titles[-1] == "A match win %, 95% CI" and len(titles) == 3


@pytest.mark.parametrize(
    ("changes", "error", "says"),
    [
        ({"deals": -3}, ValueError, "RunPlan: deals=-3 is not allowed; allowed: an integer >= 0"),
        ({"chunk": -1}, ValueError, "RunPlan: chunk=-1 is not allowed"),
        ({"matches": 2.0}, TypeError, "RunPlan: matches=2.0 is not allowed"),
        ({"seed": None}, TypeError, "RunPlan: seed=None is not allowed"),
        ({"seed": "abc"}, TypeError, "seed='abc' (str) is not allowed"),
        ({"seed": -1}, ValueError, "seed=-1 is not allowed"),
        ({"rules": "standard"}, TypeError, "RunPlan: rules='standard' is not allowed"),
        ({"pairings": [("random", "greedy")]}, TypeError, "RunPlan: pairings="),
    ],
)
def test_a_run_plan_refuses_what_it_cannot_play_when_made(
    changes: dict[str, object], error: type[Exception], says: str
) -> None:
    """A negative count or chunk played no game without a word (a negative progress
    total too); other types failed inside the workers."""
    plan: dict[str, object] = {
        "rules": Rules.preset("standard"),
        "pairings": [Pairing("random", "greedy")],
        "deals": 2,
        "matches": 0,
        "seed": 1,
    }
    with pytest.raises(error, match=re.escape(says)):
        RunPlan(**(plan | changes))  # type: ignore[arg-type]


def test_run_refuses_a_worker_count_that_is_no_count() -> None:
    plan = RunPlan(Rules.preset("standard"), [Pairing("random", "greedy")], 1, 0, 1)
    with pytest.raises(TypeError, match="run: workers='2' is not allowed"):
        run(plan, workers="2")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="run: workers=0 is not allowed; allowed: an integer >= 1"):
        run(plan, workers=0)
