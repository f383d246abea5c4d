"""What the strength matrix, ``train.bots`` and ``train.expert_fit`` promise that no other
fast test held them to (found by mutation testing): the hands and matches each bar asks,
the side of a pairing each figure is read from, what ``measure`` plays and ``main`` hands
it, how ``--combine`` pools seeds, the commands ``train.bots`` runs, and the units and
confirmation of ``train.expert_fit``. Games are never played here: ``measure``'s arena
and the expert fit's labelling and confirming games are replaced by stand-ins, so the
whole file runs in seconds."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import benchmarks.strength as strength
from benchmarks.strength import (
    BENCHES,
    BOTS_DIR,
    MATRIX_COLUMNS,
    ConfigurationResult,
    Verdict,
    across_seeds,
    read_matrix,
    verdict,
)
from evaluate.report import PairingSummary
from evaluate.stats import Estimate
from matador_env.configs import CONFIGURATIONS, configuration
from tests.test_benchmark_refusals import refused
from tests.test_strength_bench import _bench, _summary
from tests.test_train_inputs import _InProcessPool

FAST_SEARCH = "search:samples=2"


def _bar(column: str) -> Any:
    return next(bar for bar in MATRIX_COLUMNS if bar.column == column)


def _column(bench_a: str, bench_b: str, summary: PairingSummary, column: str) -> Verdict:
    return next(v for v in verdict(_bench(bench_a, bench_b), summary) if v.bar.column == column)


# -- the bars: how many hands and matches, and which figure --------------------------------


def test_each_pairing_asks_the_hands_and_matches_of_the_documented_table() -> None:
    # The module docstring and the bots README: 1000 hands a pairing, 2000 hands and
    # 200 matches for bot vs expert; fewer would pass a smaller sample as a full one.
    assert [(b.name, b.hands, b.matches) for b in BENCHES] == [
        ("expert vs greedy", 1000, 0),
        ("search vs expert", 1000, 0),
        ("bot vs expert", 2000, 200),
        ("bot vs search", 1000, 0),
        ("bot vs greedy", 1000, 0),
    ]


@pytest.mark.parametrize(("a", "b"), [(x.a, x.b) for x in BENCHES if x.bars])
def test_exactly_the_hands_and_matches_a_bar_asks_are_a_full_measurement(a: str, b: str) -> None:
    bench = _bench(a, b)
    points = Estimate(3.0, 2.5, 3.5, 500)
    rate = Estimate(0.6, 0.55, 0.65, 100)
    full = _summary(points=points, match_win=rate, hands=bench.hands, matches=bench.matches)
    assert not any(v.short for v in verdict(bench, full))
    # One hand fewer is short (a match fewer too, where the bar asks for matches).
    fewer = replace(full, hands=bench.hands - 1)
    assert all(v.short for v in verdict(bench, fewer))
    if bench.matches:
        assert all(v.short for v in verdict(bench, replace(full, matches=bench.matches - 1)))


def test_time_per_move_is_not_measured_when_a_side_made_no_move() -> None:
    # No move by the search (A): its time per move is no figure, however the seconds
    # read, and "<= 50 ms" is not met by a figure that was never measured.
    idle = replace(_summary(points=Estimate(3.0, 2.5, 3.5, 500)), moves=(0, 100))
    ms = _column("search", "expert", idle, "search ms/move")
    assert ms.value is None and not ms.met
    # The speed-up needs both sides' moves: none by either is no ratio.
    for moves in ((0, 100), (100, 0)):
        summary = replace(_summary(seconds=(0.001, 0.05)), moves=moves)
        speed = _column("bot", "search", summary, "bot speed")
        assert speed.value is None and not speed.met, moves


def test_the_time_bars_read_the_time_per_move_not_per_choice() -> None:
    # The docstring: "The bars on time use the time per move" (forced moves included).
    summary = replace(
        _summary(points=Estimate(3.0, 2.5, 3.5, 500), seconds=(0.04, 0.002)),
        seconds_per_choice=(0.06, 0.0),
    )
    ms = _column("search", "expert", summary, "search ms/move")
    assert ms.value == pytest.approx(40.0) and ms.met


def test_a_time_bar_margin_counts_below_its_threshold_as_on_the_right_side() -> None:
    # "<= 50 ms": 40 ms is 10 ms inside the bar, 60 ms 10 ms outside; the JSON's margin
    # and --combine's choice of the worst seed read that sign.
    bar = _bar("search ms/move")
    assert Verdict(bar, 40.0).margin == pytest.approx(10.0)
    assert Verdict(bar, 60.0).margin == pytest.approx(-10.0)
    assert Verdict(bar, 40.0).to_dict()["margin"] == pytest.approx(10.0)


def test_the_json_verdict_says_met_only_when_the_figure_meets_its_bar() -> None:
    bar = _bar("search>expert")
    assert Verdict(bar, 1.5).to_dict()["met"] is False
    assert Verdict(bar, 2.5).to_dict()["met"] is True
    assert Verdict(bar, None).to_dict()["met"] is False


# -- measure: what each pairing plays -----------------------------------------------------


def _figures(agents: list[str]) -> PairingSummary:
    """A pairing's figures for ``agents`` (A, B), as the arena's report gives them."""
    return replace(
        _summary(
            points=Estimate(3.0, 2.5, 3.5, 500),
            match_win=Estimate(0.6, 0.55, 0.65, 100),
            hands=2000,
            matches=200,
        ),
        a=agents[0],
        b=agents[1],
    )


def _measured(
    monkeypatch: pytest.MonkeyPatch, name: str, bots_dir: Path, fraction: float = 1.0
) -> tuple[ConfigurationResult, list[Any], list[str]]:
    """``measure`` of configuration ``name`` with the arena replaced: the result, the
    plans it would have played and the lines it printed."""
    plans: list[Any] = []

    def run_with_bar(plan: Any, workers: int, desc: str, show: bool = True) -> list[Any]:
        plans.append(plan)
        return []

    def summarize(results: Any, pairings: Any, agents: list[str], settings: Any) -> Any:
        return SimpleNamespace(pairings=[_figures(agents)])

    monkeypatch.setattr(strength, "run_with_bar", run_with_bar)
    monkeypatch.setattr(strength, "summarize", summarize)
    lines: list[str] = []
    result = strength.measure(
        configuration(name),
        search=FAST_SEARCH,
        seed=5,
        workers=1,
        fraction=fraction,
        bots_dir=bots_dir,
        echo=lines.append,
    )
    return result, plans, lines


def test_measure_plays_each_pairing_with_its_agents_and_the_hands_its_bars_ask(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    result, plans, _ = _measured(monkeypatch, "standard_3p", BOTS_DIR)
    bot = result.bot
    assert bot is not None and bot.startswith("policy:")
    # A is the candidate of each pairing: its figures are the ones judged.
    assert [(p.pairings[0].a, p.pairings[0].b) for p in plans] == [
        ("expert", "greedy"),
        (FAST_SEARCH, "expert"),
        (bot, "expert"),
        (bot, FAST_SEARCH),
        (bot, "greedy"),
    ]
    # Three seats, three field seatings a deal: whole deals for at least 1000 hands
    # (334 deals), 2000 hands (667) and 200 matches (67); no matches for the others.
    assert [(p.deals, p.matches) for p in plans] == [
        (334, 0),
        (334, 0),
        (667, 67),
        (334, 0),
        (334, 0),
    ]
    # The master seed deals every pairing, each played against a field.
    assert all(p.seed == 5 and p.field for p in plans)
    digest = hashlib.sha256((BOTS_DIR / "standard_3p" / "policy.onnx").read_bytes()).hexdigest()
    assert result.bot_sha256 == digest


def test_measure_scales_the_deals_by_the_fraction_and_rounds_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A tenth of 1000 hands on three seatings is 33.3 deals: 34, never fewer hands.
    _, plans, _ = _measured(monkeypatch, "standard_3p", BOTS_DIR, fraction=0.1)
    assert [(p.deals, p.matches) for p in plans] == [(34, 0), (34, 0), (67, 7), (34, 0), (34, 0)]


def test_measure_without_a_bot_plays_the_expert_and_search_rows_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    result, plans, lines = _measured(monkeypatch, "standard", tmp_path)
    assert [(p.pairings[0].a, p.pairings[0].b) for p in plans] == [
        ("expert", "greedy"),
        (FAST_SEARCH, "expert"),
    ]
    assert result.bot is None and result.bot_sha256 is None
    assert "bot vs expert, search and greedy: not played; the bot is missing" in lines[-1]


# -- main: what it hands measure ----------------------------------------------------------


def _main_calls(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> list[dict[str, Any]]:
    """The calls ``main(argv)`` makes to ``measure`` (replaced: nothing is played), each
    its keyword arguments and the configuration's name."""
    calls: list[dict[str, Any]] = []

    def measure(config: Any, **kwargs: Any) -> ConfigurationResult:
        calls.append({"name": config.name, **kwargs})
        return ConfigurationResult(config, kwargs["search"], None, "missing (stand-in)", [])

    monkeypatch.setattr(strength, "measure", measure)
    assert strength.main(argv) == 0
    capsys.readouterr()
    return calls


def test_main_measures_at_the_readmes_master_seed_unless_told(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The bots README's matrix is measured at master seed 2026; --seed replaces it.
    (call,) = _main_calls(monkeypatch, ["--no-progress"], capsys)
    assert (call["name"], call["seed"], call["fraction"]) == ("standard", 2026, 1.0)
    (call,) = _main_calls(monkeypatch, ["--seed", "7", "--no-progress"], capsys)
    assert call["seed"] == 7


def test_quick_plays_a_tenth_and_a_fraction_up_to_a_hundred_is_taken(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (call,) = _main_calls(monkeypatch, ["--quick"], capsys)
    assert call["fraction"] == 0.1
    (call,) = _main_calls(monkeypatch, ["--fraction", "100"], capsys)
    assert call["fraction"] == 100.0


def test_quick_and_fraction_together_are_refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def measured(*args: object, **kwargs: object) -> None:
        raise AssertionError("measured: the command line was not refused")

    monkeypatch.setattr(strength, "measure", measured)
    line = refused(strength.main, ["--quick", "--fraction", "0.5"], capsys)
    assert line.endswith("give --quick or --fraction, not both")


def test_a_configuration_named_twice_is_measured_once_and_all_measures_every_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--preset", "leiden", "--config", "standard", "--preset", "leiden"]
    calls = _main_calls(monkeypatch, argv, capsys)
    assert [c["name"] for c in calls] == ["leiden", "standard"]
    calls = _main_calls(monkeypatch, ["--all"], capsys)
    assert [c["name"] for c in calls] == list(CONFIGURATIONS)


def test_main_hands_measure_the_bots_folder_and_the_progress_switch(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (call,) = _main_calls(monkeypatch, ["--bots-dir", str(tmp_path), "--no-progress"], capsys)
    assert call["bots_dir"] == tmp_path and call["progress"] is False
    (call,) = _main_calls(monkeypatch, [], capsys)
    assert call["bots_dir"] == BOTS_DIR and call["progress"] is True


def test_strength_json_records_the_fraction_played(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --combine reads it back to say when seeds played different shares of the hands.
    _main_calls(monkeypatch, ["--fraction", "0.5", "--out", str(tmp_path)], capsys)
    data = json.loads((tmp_path / "strength.json").read_text())
    assert (data["fraction"], data["seed"]) == (0.5, 2026)


@pytest.mark.parametrize("flags", [["--search", FAST_SEARCH], ["--bots-dir", "."]])
def test_combine_refuses_the_search_and_bots_folder_of_a_measurement(
    flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    line = refused(strength.main, ["--combine", "a.json", *flags], capsys)
    assert f"--combine measures nothing, so {flags[0]} would be ignored" in line


# -- --combine: pooling seeds --------------------------------------------------------------


def _config(
    name: str,
    values: Mapping[str, float | None],
    *,
    bot: str | None = None,
    digest: str | None = None,
    short: bool = False,
) -> dict[str, Any]:
    """One configuration of a strength.json: a verdict per column of ``values``."""
    verdicts = [{"column": c, "value": v, "short": short} for c, v in values.items()]
    return {
        "configuration": name,
        "search": "search:samples=64",
        "bot": bot,
        "bot_sha256": digest,
        "pairings": [{"verdicts": verdicts}],
    }


def _one_verdict(value: Any, short: Any) -> dict[str, Any]:
    """A matrix of standard's search > expert alone, its value and short as given."""
    config = _config("standard", {})
    verdict = {"column": "search>expert", "value": value, "short": short}
    return {"seed": 1, "configurations": [{**config, "pairings": [{"verdicts": [verdict]}]}]}


def _matrix(path: Path, seed: int, *configs: dict[str, Any], **extra: Any) -> Path:
    path.write_text(json.dumps({"seed": seed, "configurations": list(configs), **extra}))
    return path


def _table(paths: list[Path]) -> dict[str, dict[str, str]]:
    """The rows of ``across_seeds`` over ``paths``, by configuration and column."""
    rows, _ = across_seeds([read_matrix(p) for p in paths])
    return {row[0]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}


def test_combine_counts_a_bar_over_the_seeds_that_measured_it(tmp_path: Path) -> None:
    # Seed 1 measured the bot, seed 2 had none: bot > expert is 1 of 1, not 1 of 2.
    bot = {"search>expert": 2.5, "bot>expert": 0.5}
    a = _matrix(tmp_path / "a.json", 1, _config("standard", bot, bot="policy:x", digest="d"))
    b = _matrix(tmp_path / "b.json", 2, _config("standard", {"search>expert": 2.25}))
    row = _table([a, b])["standard"]
    assert row["bot>expert"] == "1/1 +0.50"
    assert row["search>expert"] == "2/2 +2.25"
    # A bar no seed measured is "-".
    assert row["bot speed"] == "-"


def test_combine_lists_the_seeds_in_order_and_the_configurations_in_the_tables(
    tmp_path: Path,
) -> None:
    a = _matrix(tmp_path / "a.json", 3, _config("leiden", {"search>expert": 2.5}))
    b = _matrix(
        tmp_path / "b.json",
        1,
        _config("leiden", {"search>expert": 2.5}),
        _config("standard", {"search>expert": 2.5}),
    )
    rows, _ = across_seeds([read_matrix(a), read_matrix(b)])
    assert [row[0] for row in rows[1:]] == ["standard", "leiden"]  # CONFIGURATIONS' order
    assert rows[2][-1] == "1,3"


def test_combine_takes_a_seed_not_measured_as_its_worst_figure(tmp_path: Path) -> None:
    # An unbounded interval (one deal) is read back as null: it met nothing, so the
    # worst figure of the bar is "n/a", not the other seed's.
    a = _matrix(tmp_path / "a.json", 1, _config("standard", {"search>expert": 2.5}))
    b = _matrix(tmp_path / "b.json", 2, _config("standard", {"search>expert": None}))
    assert _table([a, b])["standard"]["search>expert"] == "1/2 n/a"


def test_combine_takes_the_slowest_seed_as_the_worst_time(tmp_path: Path) -> None:
    # "<= 50 ms": the worst of 40 ms and 45 ms is 45 ms (the margin, not the figure,
    # is lowest there).
    a = _matrix(tmp_path / "a.json", 1, _config("standard", {"search ms/move": 40.0}))
    b = _matrix(tmp_path / "b.json", 2, _config("standard", {"search ms/move": 45.0}))
    assert _table([a, b])["standard"]["search ms/move"] == "2/2 45.00ms"


def test_combine_marks_seeds_read_back_short(tmp_path: Path) -> None:
    a = _matrix(tmp_path / "a.json", 1, _config("standard", {"search>expert": 2.5}, short=True))
    assert _table([a])["standard"]["search>expert"] == "1/1* +2.50"


def test_combine_notes_nothing_for_configurations_without_a_bot_or_older_files(
    tmp_path: Path,
) -> None:
    # No bot: no digest to compare ("not recorded" is for a bot measured without one);
    # no "fraction" in the file (written before it was recorded): the bars' hands, 1.
    a = _matrix(tmp_path / "a.json", 1, _config("standard", {"search>expert": 2.5}))
    b = _matrix(tmp_path / "b.json", 2, _config("standard", {"search>expert": 2.5}), fraction=1)
    _, notes = across_seeds([read_matrix(a), read_matrix(b)])
    assert notes == []
    c = _matrix(tmp_path / "c.json", 3, _config("standard", {"bot>expert": 1.0}, bot="policy:x"))
    _, notes = across_seeds([read_matrix(a), read_matrix(c)])
    assert notes == [
        "which bot each seed measured is not recorded (a file written before the bot's "
        "digest was) for: standard"
    ]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        ({"seed": 1, "configurations": [_config("standard_5p", {})]}, "unknown configuration"),
        ({"seed": "x", "configurations": []}, "not a strength.json written by"),
        (
            {"seed": 1, "fraction": "half", "configurations": []},
            "not a strength.json written by",
        ),
        # Converted, these counted silently: a seed of 1.5 as 1, "7" as 7, a short of
        # "false" as true, a figure "2.5" as 2.5 and NaN as a figure.
        ({"seed": 1.5, "configurations": []}, "'seed' is 1.5, not a whole number"),
        ({"seed": "7", "configurations": []}, "'seed' is '7', not a whole number"),
        ({"seed": True, "configurations": []}, "'seed' is True, not a whole number"),
        ({"seed": 1, "fraction": 0, "configurations": []}, "'fraction' is 0, not a number"),
        (
            {"seed": 1, "configurations": [_config("standard", {"search>expert": math.nan})]},
            "standard's 'search>expert': value nan and short False, not a finite number",
        ),
        (_one_verdict("2.5", False), "standard's 'search>expert': value '2.5' and short False"),
        (_one_verdict(2.5, "false"), "value 2.5 and short 'false'"),
        (
            {"seed": 1, "configurations": [{**_config("standard", {}), "search": 64}]},
            "standard: its search, bot or bot's digest is not a text",
        ),
        (
            {
                "seed": 1,
                "configurations": [{**_config("standard", {}, bot="policy:x"), "bot_sha256": 5}],
            },
            "standard: its search, bot or bot's digest is not a text",
        ),
    ],
)
def test_combine_refuses_a_file_of_an_unknown_configuration_or_a_bad_number(
    data: dict[str, Any], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    assert strength.main(["--combine", str(path)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err


def test_seeds_md_keeps_the_notes_on_what_the_seeds_measured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _matrix(tmp_path / "a.json", 1, _config("standard", {"search>expert": 2.5}))
    b = _matrix(tmp_path / "b.json", 2, _config("standard", {"search>expert": 2.5}), fraction=3)
    assert strength.main(["--combine", str(a), str(b), "--out", str(tmp_path / "o")]) == 0
    capsys.readouterr()
    seeds = (tmp_path / "o" / "seeds.md").read_text()
    assert f"- the files played different shares of the bars' hands (--fraction): {a} 1, {b} 3" in (
        seeds
    )


# -- train.bots: the commands it runs -------------------------------------------------------


def test_a_run_folder_with_its_args_is_resumed_without_progress_bars(tmp_path: Path) -> None:
    import train.bots as bots

    run = tmp_path / "leiden"
    fresh = bots.train_command(configuration("leiden"), run, 1, ["--timesteps", "64"])
    assert "--resume" not in fresh and fresh[fresh.index("--out") + 1] == str(run)
    run.mkdir()
    (run / "args.json").write_text("{}")
    resumed = bots.train_command(configuration("leiden"), run, 1, ["--timesteps", "64"])
    # A resumed run keeps its own flags: none of the recipe's or those after --.
    assert resumed[1:] == ["-m", "train", "--resume", str(run), "--no-progress"]


def test_the_flags_after_the_dashes_change_the_recipe_of_a_new_run() -> None:
    from train.args import parse
    from train.bots import RECIPE_FLAGS, _new_run_flags
    from train.run import TrainArgs

    leiden = configuration("leiden")
    plain = parse(TrainArgs, _new_run_flags(leiden, Path("r"), 1))
    recipe = parse(TrainArgs, RECIPE_FLAGS["leiden"])
    # The configuration's recipe flags are in every new run of it...
    assert (plain.bc_decisions, plain.bc_soft_temperature) == (
        recipe.bc_decisions,
        recipe.bc_soft_temperature,
    )
    assert plain.exp_name == "bot" and plain.progress is False
    # ...and flags after -- come last, so that they win.
    changed = parse(TrainArgs, _new_run_flags(leiden, Path("r"), 1, ["--bc-decisions", "300"]))
    assert changed.bc_decisions == 300


def test_the_rebuild_command_of_a_plain_run_in_the_default_folders_is_the_shortest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Seed 1, runs/bots and the shipped bots folder are the defaults: not repeated; nor
    # are the decisions the recipe chose for pagat (no RECIPE_FLAGS entry names them).
    import train.bots as bots
    from tests.test_train_inputs import _finished_run

    monkeypatch.chdir(tmp_path)
    run = _finished_run(Path(bots.DEFAULT_RUNS), "pagat", "pagat", 1, [])
    assert bots.rebuild_command(configuration("pagat"), run) == "python -m train.bots --only pagat"


def test_train_bots_takes_the_seeds_from_zero_to_the_largest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from train.bots import _parse
    from train.run import LARGEST_SEED

    runs = ["--only", "pagat", "--runs", str(tmp_path)]
    assert _parse([*runs, "--seed", "0"]).seed == 0
    assert _parse([*runs, "--seed", str(LARGEST_SEED)]).seed == LARGEST_SEED
    for seed in (-1, LARGEST_SEED + 1):
        # Refused by train.bots itself, not left to a new run's checks (which a run
        # already in --runs, resumed, skips).
        line = refused(_parse, [*runs, "--seed", str(seed)], capsys)
        assert line == (
            f"python -m train.bots: error: --seed: {seed} is not allowed; allowed: an "
            f"integer from 0 to {LARGEST_SEED}"
        )


def test_a_run_whose_seed_is_not_an_integer_holds_no_seed_to_refuse(tmp_path: Path) -> None:
    # true is a bool in JSON, not seed 1: it does not stand against --seed 0.
    from train.bots import _parse

    (tmp_path / "pagat").mkdir()
    (tmp_path / "pagat" / "args.json").write_text(json.dumps({"seed": True}))
    assert _parse(["--only", "pagat", "--runs", str(tmp_path), "--seed", "0"]).seed == 0


def test_the_flags_after_the_dashes_are_not_checked_against_a_run_that_is_resumed(
    tmp_path: Path,
) -> None:
    # Standard's recipe asks for soft targets, which an expert teacher cannot give: a
    # new run refuses it, but an existing run is resumed with its own flags.
    from train.bots import _parse

    (tmp_path / "standard").mkdir()
    (tmp_path / "standard" / "args.json").write_text(json.dumps({"seed": 1}))
    argv = ["--only", "standard", "--runs", str(tmp_path), "--", "--bc-teacher", "expert"]
    assert _parse(argv).train_flags == ["--bc-teacher", "expert"]


def _bots_main(
    monkeypatch: pytest.MonkeyPatch, argv: list[str], codes: dict[str, int] | None = None
) -> tuple[int, list[list[str]]]:
    """``train.bots.main(argv)`` with its processes and the install replaced: the exit
    status and the commands it ran (a command exits with ``codes``' status for the
    module it runs, else 0)."""
    import train.bots as bots

    calls: list[list[str]] = []

    def call(command: list[str]) -> int:
        calls.append(command)
        return (codes or {}).get(command[2], 0)

    monkeypatch.setattr(bots, "install", lambda config, run, where: Path(where) / config.name)
    monkeypatch.setattr(bots.subprocess, "call", call)
    return bots.main(argv), calls


def test_train_bots_resumes_an_unfinished_run_and_stops_at_a_failed_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    (runs / "pagat").mkdir(parents=True)
    (runs / "pagat" / "args.json").write_text(json.dumps({"seed": 1}))  # no summary.json
    argv = ["--only", "pagat", "--runs", str(runs), "--bots-dir", str(tmp_path / "bots")]
    code, calls = _bots_main(monkeypatch, [*argv, "--no-matrix"])
    assert code == 0 and [c[1:4] for c in calls] == [["-m", "train", "--resume"]]
    # Training's exit status is the command's, and nothing after it runs.
    code, calls = _bots_main(monkeypatch, argv, {"train": 3})
    assert code == 3 and len(calls) == 1
    # So is the matrix's.
    code, calls = _bots_main(monkeypatch, argv, {"benchmarks.strength": 4})
    assert code == 4 and [c[2] for c in calls] == ["train", "benchmarks.strength"]
    capsys.readouterr()


def test_train_bots_writes_the_training_table_and_the_matrix_to_its_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    (runs / "pagat").mkdir(parents=True)
    (runs / "pagat" / "summary.json").write_text("{}")  # a finished run: reused
    argv = ["--only", "pagat", "--runs", str(runs), "--bots-dir", str(tmp_path / "bots")]
    code, calls = _bots_main(monkeypatch, [*argv, "--matrix-out", str(tmp_path / "m")])
    (matrix,) = calls
    assert code == 0 and matrix[matrix.index("--out") + 1] == str(tmp_path / "m")
    assert "| pagat |" in (runs / "training.md").read_text()
    # --no-matrix: no matrix.
    code, calls = _bots_main(monkeypatch, [*argv, "--no-matrix"])
    assert code == 0 and calls == []
    capsys.readouterr()


def test_the_training_table_counts_dagger_rounds_only_beyond_one(tmp_path: Path) -> None:
    from train.bots import training_table

    figure = {"points": 1.5, "points_lo": 0.5, "points_hi": 2.5, "deals": 10}
    run = tmp_path / "leiden"
    (run / "best").mkdir(parents=True)
    args = {"bc_teacher": "expert", "bc_decisions": 300, "bc_dagger_decisions": 60_000}
    (run / "args.json").write_text(json.dumps({**args, "bc_dagger_rounds": 1}))
    summary = {"minutes": 1.0, "final_evaluation": {"expert": figure, "random": figure}}
    (run / "summary.json").write_text(json.dumps(summary))
    (run / "best" / "policy.json").write_text(json.dumps({"provenance": {"steps": 64}}))
    row = training_table(tmp_path, ["leiden"]).splitlines()[2]
    assert "| expert x 300 + DAgger 60,000 |" in row


@pytest.mark.parametrize(
    ("summary", "says"),
    [
        ({}, "no 'final_evaluation'"),
        ([], "list indices must be integers"),
        ({"minutes": 1.0, "final_evaluation": {"expert": {}}}, "no 'bc_teacher'"),
    ],
)
def test_the_training_table_names_run_files_it_cannot_read(
    summary: object, says: str, tmp_path: Path
) -> None:
    """JSON of another shape (edited by hand, another version) is a row saying so; a
    KeyError ended train.bots after its training and install."""
    from train.bots import training_table

    run = tmp_path / "pagat"
    (run / "best").mkdir(parents=True)
    (run / "args.json").write_text("{}")
    (run / "summary.json").write_text(json.dumps(summary))
    (run / "best" / "policy.json").write_text(json.dumps({"provenance": {"steps": 64}}))
    row = training_table(tmp_path, ["pagat"]).splitlines()[2]
    assert row.startswith(f"| pagat | (run files in {run} are not as train writes them: {says}")


# -- train.expert_fit: units of work and the confirmation -----------------------------------


def test_a_units_file_name_depends_on_everything_that_makes_the_unit(tmp_path: Path) -> None:
    # A run with other arguments must find no file of its own in OUT.work/.
    from train.expert_fit import unit_path, work_folder

    assert work_folder(tmp_path / "w.json") == tmp_path / "w.json.work"
    unit = ("leiden", 7, 50, 128, 6, 0.5)
    names = {unit_path(tmp_path, unit)}
    for i, other in enumerate(("standard", 8, 49, 64, 5, 0.25)):
        names.add(unit_path(tmp_path, (*unit[:i], other, *unit[i + 1 :])))  # type: ignore[arg-type]
    assert len(names) == 7
    assert unit_path(tmp_path, unit) == unit_path(tmp_path, tuple(unit))  # type: ignore[arg-type]


@pytest.mark.parametrize("damage", ["one candidate", "infinite feature"])
def test_a_unit_file_with_a_position_the_fit_cannot_use_is_refused(
    damage: str, tmp_path: Path
) -> None:
    from train.expert_fit import FEATURES, Labelled, load_unit, save_unit

    unit = ("leiden", 7, 1, 4, 6, 0.5)
    features = np.ones((2, len(FEATURES)))
    values = np.array([0.5, -0.5])
    if damage == "one candidate":  # nothing to tell apart
        features, values = features[:1], values[:1]
    else:
        features[1, 0] = math.inf
    path = tmp_path / "unit.json"
    save_unit(path, unit, [Labelled(features, values)])
    with pytest.raises(ValueError, match="holds a position that is not one"):
        load_unit(path, unit)


def _positions(count: int) -> list[Any]:
    """``count`` positions whose values the base set ranks backwards: base agrees with
    the search nowhere, a fitted set everywhere."""
    from dataclasses import astuple

    from agents.expert import ExpertWeights
    from train.expert_fit import FEATURES, Labelled

    rng = np.random.default_rng(3)
    truth = -np.array(astuple(ExpertWeights()), dtype=np.float64)
    out = []
    for _ in range(count):
        x = rng.normal(size=(3, len(FEATURES)))
        out.append(Labelled(x, x @ truth))
    return out


def _fit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str], lo: float
) -> tuple[dict[str, Any], list[Any], list[Any]]:
    """``train.expert_fit.main`` with its labelling and confirming games replaced (the
    fitted set's points against base have lower bound ``lo``): the written file's
    configurations, the units labelled and the plans confirmed."""
    import train.expert_fit as expert_fit

    units: list[Any] = []
    plans: list[Any] = []

    def label(unit: Any) -> list[Any]:
        units.append(unit)
        return _positions(unit[2])

    def confirm(plan: Any, *_: object, **__: object) -> list[Any]:
        plans.append(plan)
        return []

    monkeypatch.setattr(expert_fit, "_label_unit", label)
    monkeypatch.setattr(
        expert_fit.multiprocessing,
        "get_context",
        lambda kind: SimpleNamespace(Pool=_InProcessPool),
    )
    monkeypatch.setattr(expert_fit, "run_with_bar", confirm)
    monkeypatch.setattr(
        expert_fit, "duplicate_figures", lambda results: (None, Estimate(1.0, lo, 2.0, 10))
    )
    out = tmp_path / "w.json"
    assert expert_fit.main([*argv, "--out", str(out), "--no-progress"]) == 0
    return json.loads(out.read_text())["configurations"], units, plans


def test_the_fit_labels_units_of_fifty_each_with_its_own_seed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaluate.arena import derive

    argv = ["--only", "leiden", "--positions", "120", "--samples", "4", "--width", "3"]
    _, units, _ = _fit(monkeypatch, tmp_path, [*argv, "--seed", "9", "--keep", "0.25"], 1.0)
    assert units == [
        ("leiden", derive(9, "leiden", k), n, 4, 3, 0.25) for k, n in ((0, 50), (1, 50), (2, 20))
    ]
    capsys.readouterr()


@pytest.mark.parametrize(("lo", "kept"), [(0.25, True), (0.0, False), (-0.25, False)])
def test_a_fitted_set_is_kept_only_when_the_lower_bound_is_above_zero(
    lo: float,
    kept: bool,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--only", "leiden", "--positions", "6", "--confirm-hands", "7", "--seed", "3"]
    entries, _, _ = _fit(monkeypatch, tmp_path, [*argv, "--confirm-seed", "21"], lo)
    assert entries["leiden"]["kept"] is kept
    capsys.readouterr()


def test_the_confirming_games_play_the_fitted_set_as_a_on_their_own_seed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agents.expert import ExpertWeights
    from train.expert_fit import BASE_SPEC, weights_spec

    argv = ["--only", "leiden", "--positions", "6", "--confirm-hands", "7", "--seed", "3"]
    entries, _, plans = _fit(monkeypatch, tmp_path, [*argv, "--confirm-seed", "21"], 1.0)
    (plan,) = plans
    entry = entries["leiden"]
    fitted = weights_spec(ExpertWeights(**entry["weights"]))
    assert [(p.a, p.b) for p in plan.pairings] == [(fitted, BASE_SPEC)]
    # At least the hands asked: 7 hands on two seatings are 4 deals, 8 hands.
    assert (plan.seed, plan.deals, plan.matches, plan.field) == (21, 4, 0, True)
    assert entry["confirm"]["hands"] == 8 and entry["confirm"]["seed"] == 21
    assert entry["method"]["seed"] == 3
    # The positions' labels are ranked backwards by base and forwards by the fit.
    assert entry["agreement_with_search"] == {"base": 0.0, "fitted": 1.0}
    capsys.readouterr()


def test_expert_fit_refuses_no_samples_no_confirming_hands_and_no_keep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import train.expert_fit as expert_fit
    from train.expert_fit import main

    def no_work(kind: str) -> None:
        raise AssertionError("work started: the command line was not refused")

    # A keep of 0 would look for positions for ever: fail at once instead.
    monkeypatch.setattr(expert_fit.multiprocessing, "get_context", no_work)
    out = ["--out", str(tmp_path / "w.json"), "--no-progress"]
    for argv, says in (
        (["--samples", "0"], "--samples must be at least 1, got 0"),
        (["--confirm-hands", "0"], "--confirm-hands must be at least 1, got 0"),
        (["--keep", "0"], "--keep must be in (0, 1], got 0.0"),
    ):
        assert says in refused(main, [*argv, *out], capsys)


def test_expert_fit_takes_a_ridge_of_zero(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No pull towards base is a plain least squares fit, not a refused flag.
    argv = ["--only", "leiden", "--positions", "6", "--ridge", "0"]
    entries, _, _ = _fit(monkeypatch, tmp_path, argv, 1.0)
    assert entries["leiden"]["method"]["ridge"] == 0.0
    capsys.readouterr()


def test_expert_play_positions_are_choices(tmp_path: Path) -> None:
    # A forced move teaches the fit nothing: every position has two moves or more.
    from itertools import islice

    from train.expert_fit import positions

    views = list(islice(positions(configuration("leiden"), 1, 1.0), 60))
    assert all(len(v.legal_moves) > 1 for v in views)


def test_train_bots_would_clone_each_shipped_bot_as_it_was_cloned() -> None:
    """Every shipped bot's recorded command and a new run of ``train.bots`` agree on the
    warm start: teacher, decisions, soft targets and DAgger (a configuration's
    RECIPE_FLAGS entry lost would rebuild a weaker bot without a word)."""
    from matador_env.policy import load_policy
    from train.args import parse
    from train.bots import _new_run_flags
    from train.run import TrainArgs, recipe_decisions, recipe_teacher

    fields = ("bc_teacher", "bc_decisions", "bc_soft_temperature", "bc_dagger_decisions")
    for name, config in CONFIGURATIONS.items():
        command = (load_policy(BOTS_DIR / name).info.provenance or {})["command"].split()
        recorded = parse(TrainArgs, command[3:])
        new = parse(TrainArgs, _new_run_flags(config, Path("r"), 1))
        new.bc_decisions = recipe_decisions(new.bc_decisions, config.rules())
        new.bc_teacher = recipe_teacher(new.bc_teacher, config.rules())
        for field in fields:
            assert getattr(new, field) == getattr(recorded, field), (name, field)


# -- the matrix's legend --------------------------------------------------------------------


def _result(short: bool) -> ConfigurationResult:
    """A measured standard configuration (expert vs greedy only), its verdict ``short``."""
    from benchmarks.strength import PairingResult

    bench = _bench("expert", "greedy")
    hands = bench.hands - 1 if short else bench.hands
    summary = _summary(points=Estimate(3.0, 2.5, 3.5, 500), hands=hands)
    pairing = PairingResult(bench, "expert", "greedy", summary, 1.0, verdict(bench, summary))
    return ConfigurationResult(configuration("standard"), FAST_SEARCH, None, "missing", [pairing])


def test_the_matrix_legend_names_the_searches_and_explains_a_star_only_when_one_is_shown() -> None:
    star = "*: fewer hands or matches than the bar asks"
    full = strength.matrix([_result(short=False)])
    assert f"search specs: standard {FAST_SEARCH}" in full
    assert "+2.50 met" in full and star not in full
    short = strength.matrix([_result(short=True)])
    assert "+2.50 met*" in short and star in short
    markdown = strength.matrix_markdown([_result(short=True)], "cmd", 1)
    assert f"- {star}" in markdown and f"- search specs: standard {FAST_SEARCH}" in markdown
