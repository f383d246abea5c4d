"""Arena reports people read: names that tell runs apart, counts in the titles, and the
95% intervals drawn on the plot (a small real arena, ``python -m evaluate ... --hands 20``)."""

from __future__ import annotations

import json
import shutil
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
