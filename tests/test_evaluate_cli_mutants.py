"""The arena's command line and the agent specs, where mutation testing found them
unguarded: the defaults ``python -m evaluate`` documents, the plan it hands the arena
(deals and matches rounded up to whole duplicate sets, the default matches, the seed,
--field, --records, the worker count), the lines it prints before the games, Ctrl-C's
count of the games played, the run's settings in report.json, the refusals that keep
make_agent's message or add the known specs; and in agents/base.py the random agent's
use of its generator, spaces around a spec's name, keys and values, the number and flag
readers' bounds and messages, and checked_count's names (repeated and positional options
are refused in tests/test_agents.py's table of bad specs).

The arena's games are stood in for (evaluate.__main__.run is replaced) except where a
two-hand run is the cheapest way to get a report."""

from __future__ import annotations

import json
import os
import random
import shlex
from pathlib import Path
from typing import Any

import pytest

import agents.base
import evaluate.__main__ as cli
from agents import AgentSpecError, RandomAgent, known_specs, make_agent
from agents.base import checked_count, spec_bool, spec_count, spec_number
from evaluate.__main__ import main, parse_args
from evaluate.arena import RunPlan
from evaluate.arena import run as real_run
from matador_env.engine import HandState, Rules
from tests.test_benchmark_refusals import refused

TWO = ["--agents", "greedy", "random"]


def _interrupting_run(seen: list[tuple[RunPlan, int]]) -> Any:
    """A stand-in for the arena's run: records the plan and the worker count, reports
    3 then 4 games played, then stops as Ctrl-C would, so no game is played."""

    def fake(plan: RunPlan, workers: int, progress: Any) -> list[object]:
        seen.append((plan, workers))
        progress(3)
        progress(4)
        raise KeyboardInterrupt

    return fake


def _spy_run(seen: list[int]) -> Any:
    """The arena's run, with the worker count recorded and one worker used."""

    def spy(plan: RunPlan, workers: int, progress: Any) -> list[object]:
        seen.append(workers)
        return real_run(plan, 1, progress)  # type: ignore[return-value]

    return spy


# -- the defaults and what is accepted ----------------------------------------------------


def test_the_defaults_are_the_documented_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --out's default is a folder under the working directory: made in tmp_path.
    monkeypatch.chdir(tmp_path)
    args, rules, _ = parse_args(TWO)
    assert (args.hands, args.matches, args.seed) == (1000, None, 2026)
    assert args.workers == (os.cpu_count() or 1)
    assert args.out == Path("reports/arena") and (tmp_path / "reports" / "arena").is_dir()
    assert (args.plot, args.progress, args.records, args.field) == (True, True, False, False)
    assert (args.preset, args.rules) == ("standard", [])
    assert rules == Rules.preset("standard")


def test_the_least_counts_and_an_empty_rules_list_are_taken(tmp_path: Path) -> None:
    argv = [*TWO, "--hands", "1", "--matches", "0", "--workers", "1", "--rules"]
    args, rules, _ = parse_args([*argv, "--out", str(tmp_path)])
    assert (args.hands, args.matches, args.workers, rules) == (1, 0, 1, Rules())


def test_the_skip_flags_turn_off_the_plot_and_the_bar(tmp_path: Path) -> None:
    args, _, _ = parse_args([*TWO, "--no-plot", "--no-progress", "--out", str(tmp_path)])
    assert (args.plot, args.progress) == (False, False)


# -- refusals -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "spec"),
    [
        (["--agents", "nope", "random"], "nope"),
        # An empty candidate is a candidate given, refused as any spec is (it was left
        # unbuilt and then looked up: a KeyError traceback, exit status 1).
        ([*TWO, "--vs", ""], ""),
    ],
    ids=["in-agents", "empty-vs"],
)
def test_an_unknown_agent_is_refused_with_make_agents_own_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], spec: str
) -> None:
    assert refused(parse_args, [*argv, "--out", str(tmp_path)], capsys) == (
        f"python -m evaluate: error: unknown agent {spec!r} in spec {spec!r}; known specs: "
        + ", ".join(known_specs())
    )


def test_an_agent_that_cannot_be_built_is_refused_naming_the_spec_and_the_known_specs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A registered agent whose factory fails with a ValueError that is no
    # AgentSpecError (the shipped agents wrap theirs): the arena still refuses in one
    # line, naming the spec and the known specs.
    def broken(options: dict[str, str]) -> RandomAgent:
        raise ValueError("no such table")

    monkeypatch.setattr(agents.base, "_REGISTRY", dict(agents.base._REGISTRY))
    agents.base.register("broken", broken, "broken")
    argv = ["--agents", "broken", "random", "--out", str(tmp_path)]
    assert refused(parse_args, argv, capsys) == (
        "python -m evaluate: error: agent spec 'broken': no such table; known specs: "
        + ", ".join(known_specs())
    )


def test_an_unknown_preset_is_refused_listing_the_presets(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*TWO, "--preset", "nope", "--out", str(tmp_path)]
    assert "unknown preset 'nope'; presets: standard, " in refused(parse_args, argv, capsys)


# -- the plan and the lines printed before the games ----------------------------------------


def test_the_plan_rounds_up_to_whole_duplicate_sets_and_is_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[RunPlan, int]] = []
    monkeypatch.setattr(cli, "run", _interrupting_run(seen))
    out = tmp_path / "my out"  # a space, quoted in the command to reproduce
    argv = ["--agents", "greedy", "random", "--vs", "expert", "--hands", "5", "--seed", "9"]
    argv += ["--matches", "3", "--workers", "5", "--no-progress", "--out", str(out)]
    assert main(argv) == 130
    ((plan, workers),) = seen
    # Two seat patterns: 5 hands are 3 deals, 3 matches are 2 duplicate sets.
    assert (plan.deals, plan.matches, plan.seed, workers) == (3, 2, 9, 5)
    assert (plan.field, plan.keep_records) == (False, False)
    printed = capsys.readouterr()
    assert printed.out.splitlines() == [
        "arena: 2 pairing(s) of expert, greedy, random; preset standard",
        "rules: (defaults)",
        "master seed 9: 3 deals x 2 seat patterns = 6 hands per pairing; "
        "4 matches per pairing; 5 worker(s)",
        "reproduce: python -m evaluate " + shlex.join(argv),
    ]
    # The games played so far, of all the plan's games; with --no-progress no bar.
    assert printed.err.strip().splitlines() == [
        f"interrupted after 7 of {plan.games()} games; nothing written "
        f"(what {out} held is as it was)"
    ]
    assert plan.games() == (3 + 2) * 2 * 2


def test_the_default_matches_are_a_twentieth_of_the_hands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[RunPlan, int]] = []
    monkeypatch.setattr(cli, "run", _interrupting_run(seen))
    common = [*TWO, "--no-progress", "--out", str(tmp_path)]
    assert main([*common, "--hands", "100"]) == 130
    assert main([*common, "--hands", "100", "--matches", "0"]) == 130
    # 100 hands: 5 matches, rounded up to 3 sets of two; --matches 0: none at all.
    assert [(plan.deals, plan.matches) for plan, _ in seen] == [(50, 3), (50, 0)]


def test_field_and_records_reach_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[RunPlan, int]] = []
    monkeypatch.setattr(cli, "run", _interrupting_run(seen))
    argv = ["--agents", "random", "--vs", "greedy", "--rules", "players=4", "--hands", "8"]
    argv += ["--field", "--records", "--no-progress", "--out", str(tmp_path)]
    assert main(argv) == 130
    ((plan, _),) = seen
    # Four seats, --field: A alone in each seat, 4 patterns, so 8 hands are 2 deals.
    assert (plan.field, plan.keep_records, plan.deals) == (True, True, 2)
    assert "2 deals x 4 seat patterns = 8 hands per pairing" in capsys.readouterr().out


def test_a_configuration_is_named_with_its_preset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[tuple[RunPlan, int]] = []
    monkeypatch.setattr(cli, "run", _interrupting_run(seen))
    argv = [*TWO, "--config", "pagat_teams", "--no-progress", "--out", str(tmp_path)]
    assert main(argv) == 130
    assert capsys.readouterr().out.splitlines()[0] == (
        "arena: 1 pairing(s) of greedy, random; configuration pagat_teams (pagat)"
    )


def test_the_progress_bar_is_shown_unless_turned_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "run", _interrupting_run([]))
    assert main([*TWO, "--out", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert "game" in err.strip().splitlines()[0]  # the bar, before the last line
    assert len(err.strip().splitlines()) >= 2


# -- the report's settings ------------------------------------------------------------------


def test_the_report_holds_the_runs_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    workers: list[int] = []
    monkeypatch.setattr(cli, "run", _spy_run(workers))
    argv = [*TWO, "--config", "pagat_teams", "--rules", "target_score=50", "--hands", "2"]
    argv += ["--matches", "1", "--seed", "4", "--workers", "3", "--no-plot", "--no-progress"]
    argv += ["--out", str(tmp_path)]
    assert main(argv) == 0
    assert workers == [3]
    rules = Rules.preset("pagat", players=4, teams=True, target_score=50)
    settings = json.loads((tmp_path / "report.json").read_text())["settings"]
    assert settings["preset"] == "pagat" and settings["rules"] == rules.to_text()
    assert (settings["players"], settings["teams"], settings["field"]) == (4, True, False)
    assert (settings["deals"], settings["patterns"], settings["matches"]) == (1, 2, 2)
    assert (settings["seed"], settings["workers"]) == (4, 3)
    assert settings["command"] == "python -m evaluate " + shlex.join(argv)
    # Two hands and two matches, one pairing.
    assert capsys.readouterr().out.splitlines()[-1].startswith("4 games in ")


@pytest.mark.parametrize(("players", "field"), [(2, False), (3, True)])
def test_the_reports_figures_are_against_the_field_only_beyond_two_sides(
    tmp_path: Path, players: int, field: bool
) -> None:
    # --field changes nothing at two sides, so the report does not call it the field's.
    argv = ["--agents", "random", "--vs", "greedy", "--rules", f"players={players}"]
    argv += ["--hands", str(players), "--matches", "0", "--workers", "1", "--field"]
    assert main([*argv, "--no-plot", "--no-progress", "--out", str(tmp_path)]) == 0
    settings = json.loads((tmp_path / "report.json").read_text())["settings"]
    assert (settings["field"], settings["patterns"]) == (field, players)


# -- agents/base.py ---------------------------------------------------------------------------


def test_the_random_agent_draws_its_move_from_the_generator() -> None:
    state = HandState.deal(Rules(), 3)
    while len(state.view(state.to_move).legal_moves) < 3:
        state = state.apply(state.view(state.to_move).legal_moves[0])
    view = state.view(state.to_move)
    agent = RandomAgent()
    for seed in range(8):
        expected = view.legal_moves[random.Random(seed).randrange(len(view.legal_moves))]
        assert agent.act(view, random.Random(seed)) == expected
    assert repr(agent) == "<RandomAgent random>"


def test_spaces_around_the_name_keys_and_values_are_dropped() -> None:
    plain = make_agent("search:samples=16,width=3").spec
    assert make_agent(" search : samples = 16 , width = 3 ").spec == plain
    assert make_agent("random: ").spec == "random"
    policy = make_agent("policy:matador_env/bots/standard").spec
    assert make_agent("policy: matador_env/bots/standard ,sample=0").spec == policy


def test_spec_count_needs_one_or_more_by_default_and_names_the_value() -> None:
    assert spec_count("x", "k", "1") == 1
    with pytest.raises(AgentSpecError, match=r"^x option k=0: must be >= 1$"):
        spec_count("x", "k", "0")
    with pytest.raises(AgentSpecError, match=r"^x option k='-1': expected an integer >= 1 "):
        spec_count("x", "k", "-1")


def test_spec_number_reads_exponents_and_trailing_points() -> None:
    assert spec_number("x", "k", "1e-3") == 0.001
    assert spec_number("x", "k", "2.") == 2.0
    with pytest.raises(AgentSpecError, match=r"^x option k='inf': expected a number \(finite"):
        spec_number("x", "k", "inf")


def test_spec_bool_reads_any_case_and_names_the_value() -> None:
    assert [spec_bool("x", "k", raw) for raw in ("TRUE", "Yes", "FALSE", "NO")] == [
        True,
        True,
        False,
        False,
    ]
    with pytest.raises(AgentSpecError, match=r"^x option k='maybe': expected true or false"):
        spec_bool("x", "k", "maybe")


def test_checked_count_names_the_agent_and_keeps_the_upper_bound() -> None:
    assert checked_count("SomeAgent", "k", 1, 0, 1) == 1
    with pytest.raises(ValueError, match=r"SomeAgent: k=2 is not allowed; allowed: 0 or 1"):
        checked_count("SomeAgent", "k", 2, 0, 1)
