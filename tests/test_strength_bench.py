"""The strength matrix benchmark: its verdicts on constructed summaries, and tiny runs
that produce the table, including a four-seat configuration and a missing bot."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from benchmarks.strength import (
    BENCHES,
    BOTS_DIR,
    SEARCH_SPECS,
    Bar,
    Bench,
    Verdict,
    bot_spec,
    build_parser,
    deals_for,
    main,
    verdict,
)
from evaluate.report import PairingSummary
from evaluate.stats import Estimate
from matador_env.configs import CONFIGURATIONS, configuration

FAST_SEARCH = "search:samples=2"


def _summary(
    *,
    points: Estimate | None = None,
    match_win: Estimate | None = None,
    seconds: tuple[float, float] = (0.001, 0.001),
    hands: int = 5000,
    matches: int = 500,
) -> PairingSummary:
    return PairingSummary(
        a="a",
        b="b",
        deals=hands // 2,
        hands=hands,
        win=Estimate(0.5, 0.4, 0.6, hands // 2),
        points=points,
        matches=matches,
        match_win=match_win,
        match_points=None,
        terminations={},
        seconds_per_move=seconds,
        seconds_per_choice=seconds,
        moves=(100, 100),
    )


def _bench(a: str, b: str) -> Bench:
    return next(x for x in BENCHES if (x.a, x.b) == (a, b))


def _verdicts(bench: Bench, summary: PairingSummary) -> dict[str, tuple[bool, bool]]:
    return {v.bar.column: (v.met, v.short) for v in verdict(bench, summary)}


def test_every_configuration_has_a_search_spec() -> None:
    assert set(SEARCH_SPECS) == set(CONFIGURATIONS)


def test_the_recipe_clones_the_search_the_bots_are_measured_against() -> None:
    """The training recipe's teacher is the matrix's search, save on double-twelve
    (where 64 worlds a move would not fit the recipe's 20 minutes)."""
    from train.run import recipe_teacher

    for name, config in CONFIGURATIONS.items():
        teacher = recipe_teacher("auto", config.rules())
        if name == "double_twelve":
            assert teacher == "search:samples=32"
        else:
            assert teacher == SEARCH_SPECS[name], name


@pytest.mark.parametrize(
    ("lo", "met"), [(0.01, True), (0.0, False), (-1.0, False)], ids=["above", "at", "below"]
)
def test_expert_vs_greedy_needs_a_positive_lower_bound(lo: float, met: bool) -> None:
    v = _verdicts(_bench("expert", "greedy"), _summary(points=Estimate(3.0, lo, 6.0, 500)))
    assert v == {"expert>greedy": (met, False)}


@pytest.mark.parametrize(
    ("lo", "seconds", "points_met", "time_met"),
    [
        (2.0, 0.0499, True, True),
        (1.99, 0.0499, False, True),
        (2.5, 0.0501, True, False),
    ],
)
def test_search_vs_expert_needs_two_points_within_fifty_ms(
    lo: float, seconds: float, points_met: bool, time_met: bool
) -> None:
    summary = _summary(points=Estimate(5.0, lo, 8.0, 500), seconds=(seconds, 0.0002))
    v = _verdicts(_bench("search", "expert"), summary)
    assert v == {"search>expert": (points_met, False), "search ms/move": (time_met, False)}


@pytest.mark.parametrize(
    ("rate", "lo", "rate_met", "points_met"),
    [(0.55, 0.1, True, True), (0.549, 0.1, False, True), (0.7, 0.0, True, False)],
)
def test_bot_vs_expert_needs_matches_and_points(
    rate: float, lo: float, rate_met: bool, points_met: bool
) -> None:
    summary = _summary(
        points=Estimate(2.0, lo, 4.0, 1000), match_win=Estimate(rate, rate - 0.05, rate + 0.05, 100)
    )
    v = _verdicts(_bench("bot", "expert"), summary)
    assert v == {"bot match win": (rate_met, False), "bot>expert": (points_met, False)}


@pytest.mark.parametrize(
    ("hi", "search_seconds", "even_met", "speed_met"),
    [(0.0, 0.02, True, True), (-0.01, 0.02, False, True), (1.0, 0.0199, True, False)],
)
def test_bot_vs_search_needs_no_significant_loss_at_a_twentieth_of_the_time(
    hi: float, search_seconds: float, even_met: bool, speed_met: bool
) -> None:
    summary = _summary(points=Estimate(-2.0, -4.0, hi, 500), seconds=(0.001, search_seconds))
    v = _verdicts(_bench("bot", "search"), summary)
    assert v == {"bot~search": (even_met, False), "bot speed": (speed_met, False)}


def test_verdict_lines_give_the_margin_and_mark_short_samples() -> None:
    bench = _bench("search", "expert")
    small = _summary(points=Estimate(3.0, 1.25, 5.0, 50), seconds=(0.04, 0.0), hands=100)
    points, speed = verdict(bench, small)
    assert points.short and speed.short
    assert points.line() == ("points/hand CI lower bound >= +2: NOT met* (+1.25, short by 0.75)")
    assert speed.line() == "search's time per move <= 50.00 ms: met* (40.00 ms, by 10.00 ms)"
    assert points.cell() == "+1.25 NOT*"
    # Fewer matches than the bar asks marks the verdicts too, however many hands.
    bot = _bench("bot", "expert")
    few = _summary(
        points=Estimate(2.0, 1.0, 3.0, 1000), match_win=Estimate(0.6, 0.5, 0.7, 50), matches=100
    )
    assert all(v.short for v in verdict(bot, few))
    # A figure the pairing did not measure is not met.
    unmeasured = verdict(bot, _summary(points=Estimate(2.0, 1.0, 3.0, 1000)))
    assert [v.met for v in unmeasured] == [False, True]
    assert "not measured" in unmeasured[0].line()


@pytest.mark.parametrize(
    ("column", "figure", "cell", "tail"),
    [
        # The seed-2028 matrix's pagat_teams search cell, once printed as +2.00 NOT.
        ("search>expert", 1.9971204, "+1.997 NOT", "(+1.997, short by 0.003)"),
        ("search>expert", 2.004, "+2.004 met", "(+2.004, by 0.004)"),
        ("search>expert", 1.23, "+1.23 NOT", "(+1.23, short by 0.77)"),
        ("search>expert", 2.0, "+2.00 met", "(+2.00, by 0.00)"),
        ("bot match win", 0.5499, "54.99% NOT", "(54.99%, short by 0.01 points)"),
        ("bot match win", 0.532, "53.2% NOT", "(53.2%, short by 1.8 points)"),
        # 110 of 200 four-seat field matches, a mean of sixths that float sums leave
        # at 0.5499999999999998: exactly on the bar, which it meets.
        ("bot match win", 0.5499999999999998, "55.0% met", "(55.0%, by 0.0 points)"),
        ("bot>expert", -0.0001, "-0.0001 NOT", "(-0.0001, short by 0.0001)"),
        ("bot>expert", 0.0, "+0.00 NOT", "(+0.00, short by 0.00)"),
    ],
)
def test_figures_get_the_digits_that_show_which_side_of_the_bar_they_are(
    column: str, figure: float, cell: str, tail: str
) -> None:
    """Rounding never puts a figure on the other side of its bar, nor prints a margin of
    0 for a figure off its threshold; a figure exactly on it keeps the usual digits."""
    if column == "bot match win":
        bench = _bench("bot", "expert")
        summary = _summary(
            points=Estimate(2.0, 1.0, 3.0, 2000), match_win=Estimate(figure, 0.5, 0.6, 200)
        )
    else:
        bench = _bench(*column.split(">"))
        summary = _summary(points=Estimate(figure + 1, figure, figure + 2, 2000))
    v = next(v for v in verdict(bench, summary) if v.bar.column == column)
    assert v.cell() == cell
    assert v.line().endswith(tail)


def test_bar_refuses_an_unknown_comparison() -> None:
    with pytest.raises(ValueError, match="unknown comparison"):
        Bar("x", "x", lambda p: 0.0, "==", 1.0).met(1.0)


def test_missing_and_refused_bots_are_reported(tmp_path: Path) -> None:
    assert bot_spec(configuration("leiden"), tmp_path) == (
        None,
        f"missing (no {tmp_path / 'leiden'}/policy.onnx)",
    )
    # A folder holding the standard bot under leiden's name: it plays other rules.
    (tmp_path / "leiden").symlink_to(BOTS_DIR / "standard")
    spec, problem = bot_spec(configuration("leiden"), tmp_path)
    assert spec is None and problem is not None
    assert problem.startswith("refused: ") and "leiden" in problem


def test_quick_run_prints_the_matrix_and_reports_a_missing_bot(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "standard").symlink_to(BOTS_DIR / "standard")
    out = tmp_path / "out"
    argv = ["--preset", "standard", "--preset", "standard_4p", "--fraction", "0.002"]
    argv += ["--search", FAST_SEARCH, "--workers", "1", "--no-progress", "--out", str(out)]
    assert main(argv, bots_dir=bots) == 0
    printed = capsys.readouterr().out
    assert "standard_4p: standard, 4 players, each for himself" in printed
    assert "A alone in each seat in turn" in printed
    assert "bot vs expert, search and greedy: not played; the bot is missing" in printed
    rows = {line.split()[0]: line for line in printed.splitlines() if line.strip()}
    assert rows["standard_4p"].count("no bot") == 4
    assert "no bot" not in rows["standard"]
    assert rows["configuration"].split() == [
        "configuration",
        "expert>greedy",
        "search>expert",
        "search",
        "ms/move",
        "bot",
        "match",
        "win",
        "bot>expert",
        "bot~search",
        "bot",
        "speed",
    ]
    data = json.loads((out / "strength.json").read_text())
    first, second = data["configurations"]
    assert first["search"] == FAST_SEARCH and first["bot"] is not None
    assert [p["pairing"] for p in first["pairings"]] == [b.name for b in BENCHES]
    # Four seats: each deal replayed with the candidate alone in each seat.
    assert [p["summary"]["hands"] for p in second["pairings"]] == [4, 4]
    assert second["bot"] is None and second["bot_problem"].startswith("missing")
    bot_expert = first["pairings"][2]
    assert bot_expert["summary"]["matches"] == 2
    assert all(v["short"] for p in first["pairings"] for v in p["verdicts"])
    markdown = (out / "strength.md").read_text()
    assert markdown.startswith("| configuration | expert>greedy |")
    assert "| standard_4p |" in markdown and "no bot" in markdown
    # The bot measured is recorded by its digest, so seeds can be compared.
    digest = hashlib.sha256((BOTS_DIR / "standard" / "policy.onnx").read_bytes()).hexdigest()
    assert first["bot_sha256"] == digest and second["bot_sha256"] is None


def _saved(
    source: Path, path: Path, seed: int, search_lo: float, digest: str | None, **extra: Any
) -> Path:
    """``source`` (a strength.json from --out) at ``seed``, the search's lower bound
    ``search_lo`` and the bot's digest ``digest``, its verdicts updated by ``extra``."""
    data = json.loads(source.read_text())
    data["seed"] = seed
    config = next(c for c in data["configurations"] if c["configuration"] == "standard")
    config["bot_sha256"] = digest
    for pairing in config["pairings"]:
        for v in pairing["verdicts"]:
            if v["column"] == "search>expert":
                v["value"] = search_lo
            v.update(extra)
    data["configurations"] = [config]
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def quick_matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real strength.json of a tiny standard run (a few hands a pairing)."""
    out = tmp_path_factory.mktemp("quick")
    argv = ["--preset", "standard", "--fraction", "0.002", "--search", FAST_SEARCH]
    assert main([*argv, "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    return out / "strength.json"


def test_combine_counts_the_seeds_that_meet_each_bar(
    quick_matrix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    a = _saved(quick_matrix, tmp_path / "a.json", 1, 2.5, "d1", short=False)
    b = _saved(quick_matrix, tmp_path / "b.json", 2, 1.5, "d1", short=False)
    c = _saved(quick_matrix, tmp_path / "c.json", 3, 2.25, "d1", short=False)
    assert main(["--combine", str(a), str(b), str(c), "--out", str(tmp_path / "seeds")]) == 0
    printed = capsys.readouterr().out
    assert "different bots" not in printed and "not recorded" not in printed
    assert "different shares" not in printed  # every file played 0.002 of the hands
    table = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in (tmp_path / "seeds" / "seeds.md").read_text().splitlines()
        if line.startswith("| ")
    ]
    row = dict(zip(table[0], table[1], strict=True))
    assert row["configuration"] == "standard" and row["seeds"] == "1,2,3"
    assert row["search>expert"] == "2/3 +1.50"  # met at seeds 1 and 3; 1.50 the worst
    assert row["search>expert"] in printed
    # Every other bar read the same run thrice: its one figure, at 0 or 3 seeds of 3.
    assert all(
        row[k].split()[0] in ("0/3", "3/3")
        for k in row
        if k not in ("configuration", "seeds", "search>expert")
    )
    # Different bots, and a file that does not say which bot it measured, are told.
    d = _saved(quick_matrix, tmp_path / "d.json", 4, 2.5, "d2")
    assert main(["--combine", str(a), str(d)]) == 0
    printed = capsys.readouterr().out
    assert "standard: the seeds measured 2 different bots" in printed
    assert "2/2* +2.50" in printed  # d's verdicts are short (its run's 4 hands)
    e = _saved(quick_matrix, tmp_path / "e.json", 5, 2.5, None)
    assert main(["--combine", str(a), str(e)]) == 0
    assert "is not recorded (a file written before the bot's digest was) for: standard" in (
        capsys.readouterr().out
    )
    # A run at three times the bars' hands counts as one seed; the table says so.
    f = _saved(quick_matrix, tmp_path / "f.json", 6, 2.5, "d1", short=False)
    data = json.loads(f.read_text())
    data["fraction"] = 3
    f.write_text(json.dumps(data))
    assert main(["--combine", str(a), str(f)]) == 0
    assert f"different shares of the bars' hands (--fraction): {a} 0.002, {f} 3" in (
        capsys.readouterr().out
    )


def test_combine_refuses_what_it_cannot_count(
    quick_matrix: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _saved(quick_matrix, tmp_path / "a.json", 1, 2.5, "d1")
    twice = _saved(quick_matrix, tmp_path / "twice.json", 1, 1.0, "d1")
    assert main(["--combine", str(a), str(twice)]) == 2
    assert "standard is measured at seed 1 in both" in capsys.readouterr().err
    (tmp_path / "notjson.json").write_text("matrix")
    assert main(["--combine", str(tmp_path / "notjson.json")]) == 2
    assert "notjson.json: not JSON" in capsys.readouterr().err
    assert main(["--combine", str(tmp_path / "missing.json")]) == 2
    assert "missing.json: cannot read it" in capsys.readouterr().err
    odd = _saved(quick_matrix, tmp_path / "odd.json", 2, 2.5, "d1", column="bot>search")
    assert main(["--combine", str(odd)]) == 2
    assert "a bar this code does not know, 'bot>search'" in capsys.readouterr().err
    (tmp_path / "other.json").write_text(json.dumps({"seed": 1, "hands": []}))
    assert main(["--combine", str(tmp_path / "other.json")]) == 2
    assert "not a strength.json written by" in capsys.readouterr().err


def test_cli_refuses_an_unknown_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--preset", "standard_5p"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown configuration 'standard_5p'" in err and "pagat_teams" in err


def test_cli_takes_config_as_the_same_flag_as_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args(["--config", "pagat_teams", "--preset", "leiden"]).preset == [
        "pagat_teams",
        "leiden",
    ]
    with pytest.raises(SystemExit):
        main(["--config", "standard_5p"])
    assert "unknown configuration 'standard_5p'" in capsys.readouterr().err


@pytest.mark.parametrize("fraction", ["0", "-1", "nan", "inf", "101"])
def test_cli_refuses_a_fraction_outside_its_range(
    fraction: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--preset", "standard", "--fraction", fraction])
    assert exc.value.code == 2
    assert f"--fraction must be in (0, 100], got {float(fraction)}" in capsys.readouterr().err


def test_a_fraction_above_one_plays_more_than_the_bars_ask() -> None:
    # Three seat patterns: the 1,000 hands of a bar are 334 deals, and three times
    # that is 1,000 deals; the same master seed deals the first 334 alike.
    assert deals_for(1000, 3, 1.0) == 334
    assert deals_for(1000, 3, 3.0) == 1000
    assert deals_for(200, 3, 3.0) == 200


def test_one_deal_measures_no_interval_bar() -> None:
    # One deal gives points no interval: an upper bound of +inf met "CI upper bound
    # >= 0" before (a bot that lost its only deal by 30 points), and read back from
    # strength.json's null it was "n/a" there: both are "not measured" now.
    one = _summary(points=Estimate(-30.0, -math.inf, math.inf, 1), hands=2)
    for bench in (_bench("bot", "search"), _bench("expert", "greedy")):
        points = verdict(bench, one)[0]
        assert not points.met and points.value is None
        assert points.line().endswith("NOT met* (not measured)")


def test_an_unbounded_figure_is_null_in_strength_json() -> None:
    """One deal gives a points figure no interval: strict JSON has no Infinity."""
    bar = next(b for bench in BENCHES for b in bench.bars if b.column == "bot~search")
    data = Verdict(bar, math.inf, True).to_dict()
    assert data["value"] is None and data["margin"] is None
    json.loads(json.dumps(data), parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))


def test_cli_refuses_an_out_folder_inside_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(tmp_path / "file" / "out")])
    assert stop.value.code == 2
    assert "which exists and is not a folder; give a folder" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--bots-dir", str(tmp_path / "nowhere")])
    assert f"--bots-dir: {tmp_path / 'nowhere'} is not a folder" in capsys.readouterr().err


def test_a_refused_command_line_leaves_no_out_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    for bad in (["--config", "nope"], ["--fraction", "0"], ["--workers", "0"]):
        with pytest.raises(SystemExit) as stop:
            main([*bad, "--out", str(out)])
        assert stop.value.code == 2
        assert not out.exists(), bad
    capsys.readouterr()


@pytest.mark.parametrize(
    "flags",
    [["--workers", "2"], ["--seed", "5"], ["--fraction", "nan"], ["--quick"], ["--no-progress"]],
)
def test_combine_refuses_the_flags_of_a_measurement(
    flags: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--combine", str(tmp_path / "a.json"), *flags, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    assert f"--combine measures nothing, so {flags[0]} would be ignored" in (
        capsys.readouterr().err
    )
    assert not (tmp_path / "out").exists()


def test_an_interrupted_run_keeps_the_configurations_it_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import benchmarks.strength as strength

    bots = tmp_path / "bots"
    bots.mkdir()
    (bots / "standard").symlink_to(BOTS_DIR / "standard")
    measure = strength.measure

    def stopped_in_the_second(config: Any, **kwargs: Any) -> Any:
        if config.name != "standard":
            raise KeyboardInterrupt
        return measure(config, **kwargs)

    monkeypatch.setattr(strength, "measure", stopped_in_the_second)
    out = tmp_path / "out"
    argv = ["--preset", "standard", "--preset", "pagat", "--fraction", "0.002"]
    argv += ["--search", FAST_SEARCH, "--workers", "1", "--no-progress", "--out", str(out)]
    assert main([*argv, "--bots-dir", str(bots)]) == 130
    assert (
        capsys.readouterr().err.strip()
        == f"interrupted in pagat; {out} holds the 1 measured before it"
    )
    (saved,) = json.loads((out / "strength.json").read_text())["configurations"]
    assert saved["configuration"] == "standard"
    assert saved["bot"] == f"policy:{bots / 'standard'}"
