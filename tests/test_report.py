"""Arena reports people read: names that tell runs apart, counts in the titles, and the
95% intervals drawn on the plot (a small real arena, ``python -m evaluate ... --hands 20``)."""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaluate.__main__ import main as arena_main
from evaluate.report import aliases
from matador_env.policy import BOTS_DIR


def test_aliases_keep_short_names_and_tell_long_ones_apart() -> None:
    names = [
        "expert",
        "policy:runs/demo__standard__5__1795456510/best",
        "policy:runs/demo__standard__5__1795456667/best",
        "search:samples=16,playouts=64,seed=1",
    ]
    short = aliases(names)
    assert short["expert"] == "expert"
    assert len(set(short.values())) == len(names)
    assert short[names[1]] == "policy#1" and short[names[2]] == "policy#2"
    assert short[names[3]] == "search#1"
    # an agent literally named like an alias keeps its name; the alias moves on
    clash = aliases(["policy#1", names[1]])
    assert clash == {"policy#1": "policy#1", names[1]: "policy#2"}
    # up to 18 characters a name is its own alias; a longer kind is cut to 15
    exact, over = "x" * 18, "y" * 19
    assert aliases([exact, over]) == {exact: exact, over: "y" * 15 + "#1"}
    long_kind = "averyveryverylongkind:" + "z" * 20
    assert aliases([long_kind])[long_kind] == "averyveryverylo#1"


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[str, str]:
    """The shipped bot copied into two run folders whose paths differ only at the end."""
    specs = []
    for run in ("demo__standard__5__1795456510", "demo__standard__5__1795456667"):
        best = tmp_path / "runs" / run / "best"
        best.mkdir(parents=True)
        for name in ("policy.onnx", "policy.json"):
            shutil.copy(BOTS_DIR / "standard" / name, best / name)
        specs.append(f"policy:{best}")
    return specs[0], specs[1]


def test_a_small_arena_reports_full_names_counts_and_intervals(
    two_runs: tuple[str, str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import matplotlib.axes

    drawn: list[dict[str, Any]] = []
    original = matplotlib.axes.Axes.errorbar

    def spy(self: matplotlib.axes.Axes, x: Any, y: Any, **kwargs: Any) -> Any:
        drawn.append({"x": list(x), "xerr": kwargs.get("xerr")})
        return original(self, x, y, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "errorbar", spy)
    out = tmp_path / "report"
    first, second = two_runs
    args = ["--vs", first, "--agents", second, "greedy", "--hands", "20", "--matches", "4"]
    arena_main([*args, "--workers", "1", "--no-progress", "--out", str(out)])
    table = capsys.readouterr().out

    # the table: counts in its title, aliases that differ, and a legend with full names
    assert (
        "20 hands (10 deals x 2 seatings) and 4 matches (2 match seeds x 2 seatings) per pairing"
        in table
    )
    assert f"policy#1 = {first}" in table and f"policy#2 = {second}" in table
    rows = [line.split() for line in table.splitlines() if line.startswith("policy#1 ")]
    assert [r[1] for r in rows] == ["policy#2", "greedy"]

    # the Markdown report names every agent in full and gives the counts
    md = (out / "report.md").read_text()
    assert f"`{first}`" in md and f"`{second}`" in md
    assert (
        "20 hands (10 deals x 2 seatings) and 4 matches (2 match seeds x 2 seatings) per pairing"
        in md
    )

    # the plot: one error bar per pairing in each panel (points, hand wins, match wins),
    # spanning the reported 95% intervals
    assert (out / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = json.loads((out / "report.json").read_text())
    points = [p["points"] for p in report["pairings"]]
    assert len(drawn) == 3
    assert drawn[0]["x"] == pytest.approx([p["mean"] for p in points])
    low, high = drawn[0]["xerr"]
    assert low == pytest.approx([p["mean"] - p["lo"] for p in points])
    assert high == pytest.approx([p["hi"] - p["mean"] for p in points])
    wins = [p["win"] for p in report["pairings"]]
    assert drawn[1]["x"] == pytest.approx([100 * w["mean"] for w in wins])


def test_the_plot_draws_an_unbeaten_pairing(tmp_path: Path) -> None:
    # Every hand and match won: each rate's interval ends at exactly 100%. Rounding
    # once put that end a hair below the rate, and matplotlib refused the negative
    # error bar, which stopped `make demo` (its bot won 30 of 30 matches).
    from evaluate.arena import GameResult, Pairing
    from evaluate.report import summarize

    results = [
        GameResult(0, kind, k, p, 1.0, 10.0)
        for kind, count in (("hand", 15), ("match", 15))
        for k in range(count)
        for p in range(2)
    ]
    report = summarize(results, [Pairing("expert", "random")], ["expert", "random"], {"seed": 1})
    pairing = report.pairings[0]
    assert pairing.win is not None and pairing.match_win is not None
    for rate in (pairing.win, pairing.match_win):
        assert rate.mean == rate.hi == 1.0 and rate.lo < 1.0
    assert report.plot(tmp_path / "unbeaten.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _arena_argv(out: Path, *extra: str) -> list[str]:
    argv = ["--agents", "greedy", "random", "--hands", "4", "--matches", "0", "--workers", "1"]
    return [*argv, "--no-progress", "--out", str(out), *extra]


def test_a_run_that_cannot_write_a_file_leaves_the_earlier_runs_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: report.json and report.md were replaced, then the plot failed, and the
    # folder held the new run's report beside the old run's picture and records.
    import matplotlib.figure

    out = tmp_path / "report"
    assert arena_main(_arena_argv(out, "--records", "--seed", "1")) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == ["records.jsonl", "report.json", "report.md", "report.png"]

    def full(self: object, *args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full)
    capsys.readouterr()
    assert arena_main(_arena_argv(out, "--records", "--seed", "2")) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"python -m evaluate: error: cannot write the report in {out} (No space left on "
        "device); nothing written (what it held is as it was)"
    )
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporary left
    # And a run that writes them all replaces them all.
    monkeypatch.undo()
    assert arena_main(_arena_argv(out, "--records", "--seed", "2")) == 0
    assert json.loads((out / "report.json").read_text())["settings"]["seed"] == 2
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(after) == sorted(before)
    assert all(after[name] != before[name] for name in before)


def test_a_field_report_says_what_its_figures_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: report.md and the PNG called the field's figures "A hand win %" and
    # "A-B points/hand", and the PNG's title named no seats or mode.
    import matplotlib.figure

    titles: list[str] = []
    original = matplotlib.figure.Figure.suptitle

    def spy(self: matplotlib.figure.Figure, t: str, **kwargs: Any) -> Any:
        titles.append(t)
        return original(self, t, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "suptitle", spy)
    argv = ["--vs", "greedy", "--agents", "random", "--players", "3", "--field"]
    argv += ["--hands", "6", "--matches", "3", "--workers", "1", "--no-progress"]
    out = tmp_path / "field"
    assert arena_main([*argv, "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "A hand win %" not in md and "A-B points" not in md and "A match win %" not in md
    assert (
        "| A | B | hands | A ahead of field seats, % of hands | A - field mean, points/hand "
        "| matches | A ahead of field seats, % of matches |"
    ) in md
    assert "- --field: A alone against a field of B's" in md
    report = json.loads((out / "report.json").read_text())
    assert report["settings"]["field"] is True and report["settings"]["players"] == 3
    assert report["figures"]["points"] == (
        "points per hand, A's minus the mean of the field's seats' points"
    )
    (title,) = titles
    assert title.startswith("preset standard, 3 players, each for himself; --vs greedy, --field")
    assert "A alone against a field of B's" in title

    # Two sides: --field changes nothing, nor do the names of the figures.
    titles.clear()
    argv = ["--vs", "greedy", "--agents", "random", "--field", "--hands", "4", "--matches", "0"]
    assert arena_main([*argv, "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "| A hand win % | A-B points/hand |" in md and "field seats" not in md
    assert json.loads((out / "report.json").read_text())["figures"]["points"] == (
        "points per hand, A's seats minus B's seats"
    )
    assert titles[0].startswith("preset standard, 2 players; --vs greedy, --field; seed 2026")


def _record_calls(
    monkeypatch: pytest.MonkeyPatch, method: str, pick: Callable[..., Any]
) -> list[Any]:
    """What ``pick(*args, **kwargs)`` gives for each later call of matplotlib's
    ``Axes.<method>``, which still draws."""
    import matplotlib.axes

    calls: list[Any] = []
    real = getattr(matplotlib.axes.Axes, method)

    def spy(self: matplotlib.axes.Axes, *args: Any, **kwargs: Any) -> Any:
        calls.append(pick(*args, **kwargs))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, method, spy)
    return calls


def test_the_plot_draws_each_side_of_an_interval_and_the_even_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A Wilson interval is not symmetric about its rate (here 75% [18.9%, 97.5%]): each
    # side of the error bar must be its own side of the interval. The grey line marks
    # an even pairing: 0 points, and 50% of hands and matches.
    from evaluate.arena import GameResult, Pairing
    from evaluate.report import summarize

    bars = _record_calls(monkeypatch, "errorbar", lambda x, y, **kwargs: kwargs.get("xerr"))
    lines = _record_calls(monkeypatch, "axvline", lambda x=0, **kwargs: x)
    # Per deal, the two replays' hand wins (ties half): 1 and 1, 1 and 0, 1/2 and 1.
    results = [
        GameResult(0, "hand", 0, 0, 1.0, 12.0),
        GameResult(0, "hand", 0, 1, 1.0, 8.0),
        GameResult(0, "hand", 1, 0, 1.0, 5.0),
        GameResult(0, "hand", 1, 1, 0.0, -3.0),
        GameResult(0, "hand", 2, 0, 0.5, 0.0),
        GameResult(0, "hand", 2, 1, 1.0, 4.0),
        GameResult(0, "match", 0, 0, 1.0, 30.0),
        GameResult(0, "match", 0, 1, 0.0, -20.0),
    ]
    report = summarize(results, [Pairing("a", "b")], ["a", "b"], {"seed": 1})
    win = report.pairings[0].win
    assert win is not None and win.mean == 0.75
    assert (round(win.lo, 3), round(win.hi, 3)) == (0.189, 0.975)
    report.plot(tmp_path / "bars.png")
    assert len(bars) == 3  # points, hand wins, match wins
    low, high = bars[1]
    assert (low, high) == (
        [pytest.approx(100 * (0.75 - win.lo))],
        [pytest.approx(100 * (win.hi - 0.75))],
    )
    assert lines == [0.0, 50.0, 50.0]


def test_the_plot_marks_a_point_without_an_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One deal: the points have no interval. Before, the point was drawn with an
    # infinite error bar, which matplotlib leaves out: it looked exact.
    from evaluate.arena import GameResult, Pairing
    from evaluate.report import summarize

    bars = _record_calls(monkeypatch, "errorbar", lambda x, y, **kwargs: kwargs.get("xerr"))
    notes = _record_calls(monkeypatch, "annotate", lambda text, *args, **kwargs: text)
    results = [GameResult(0, "hand", 0, p, 1.0, d) for p, d in ((0, 30.0), (1, 24.0))]
    settings = {"preset": "standard", "seed": 1, "deals": 1, "patterns": 2}
    report = summarize(results, [Pairing("a", "b")], ["a", "b"], settings)
    assert report.plot(tmp_path / "one.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    for xerr in bars:
        assert all(math.isfinite(v) for side in xerr for v in side)
    assert notes[0] == "+27.0, no interval"  # the points panel
    assert notes[1] == "100.0"  # the win rate has Wilson's interval of one deal


def test_the_api_refuses_an_agent_named_twice() -> None:
    # Before: aliases gave one entry (`policy#2`) for two, and summarize failed in the
    # ratings with "bradley_terry: a player cannot play itself".
    from evaluate.arena import GameResult, Pairing
    from evaluate.report import summarize

    name = "policy:runs/a/very/long/path/best"
    with pytest.raises(ValueError, match=f"aliases: agent '{name}' is listed twice"):
        aliases([name, name])
    results = [GameResult(0, "hand", 0, p, 1.0, 5.0) for p in range(2)]
    with pytest.raises(ValueError, match="summarize: agent 'random' is listed twice"):
        summarize(results, [Pairing("random", "random")], ["random", "random"], {})
    with pytest.raises(ValueError, match="pairs an agent with itself"):
        summarize(results, [Pairing("random", "random")], ["random"], {})
    with pytest.raises(ValueError, match="names 'expert', which is not one of the agents"):
        summarize(results, [Pairing("random", "expert")], ["random", "greedy"], {})
