"""What ``make demo`` (``evaluate.demo``) promises that no other fast test held it to
(found by mutation testing): the hand it tells move by move, the seed, budgets and
folders it hands its arena and its training runs (``--quick`` and the defaults), the
training arguments a curve point is made with, when a finished run is reused (its
arguments, its :func:`code_fingerprint` and which files that digest covers), where a
run's training output goes, the learning curve's table and plot, the time each step
announces, the paths it refuses before it plays, and how the shipped bot's making is
told. Nothing is trained or played at length here: the arena and ``python -m train``
are replaced by stand-ins that record what they are handed, so the whole file runs in
seconds."""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure

import evaluate.demo as demo
import train.run
from agents import make_agent
from evaluate.report import RUN_FILES
from evaluate.stats import interval_text
from matador_env.engine import HandState, Rules
from matador_env.play import draw_layout, narrate
from matador_env.policy import BOTS_DIR, SIDECAR_FILE, read_policy_info
from tests.test_demo import ROOT
from tests.test_speed_bench_mutants import _clock
from train.args import parse
from train.run import TrainArgs

PROG = "python -m train"


def figure(points: float, win_rate: float = 0.5, deals: int = 20) -> dict[str, Any]:
    """A curve point's evaluation against one opponent, as summary.json writes it; the
    ends lie unequally far from the figure, so that swapping them shows."""
    return {
        "points": points, "points_lo": points - 1.0, "points_hi": points + 2.0,
        "win_rate": win_rate, "win_rate_lo": win_rate - 0.1, "win_rate_hi": win_rate + 0.2,
        "deals": deals,
    }  # fmt: skip


def expert_points(decisions: int) -> float:
    return decisions / 100 - 3.0


def random_points(decisions: int) -> float:
    return 4.0 + decisions / 1000


def fake_train(calls: list[list[str]]) -> Callable[[list[str]], int]:
    """A stand-in for ``train.run.main``: records its arguments, refuses an ``--out``
    that exists (as the real trainer does: it asks for --resume), prints a line (the
    real one's output must go to the run's log) and writes the files a finished run
    has, its figures depending on the decisions cloned."""

    def main(argv: list[str]) -> int:
        calls.append(argv)
        args = parse(TrainArgs, argv, prog=PROG)
        out = Path(str(args.out))
        assert not out.exists(), f"the trainer was handed {out}, which holds a run"
        out.mkdir()
        (out / "args.json").write_text(json.dumps(dataclasses.asdict(args)))
        d, hands = args.bc_decisions, args.final_eval_hands
        evaluation = {"expert": figure(expert_points(d), deals=hands),
                      "random": figure(random_points(d), deals=hands)}  # fmt: skip
        (out / "summary.json").write_text(json.dumps({"final_evaluation": evaluation}))
        print(f"training {d}")
        return 0

    return main


@dataclasses.dataclass
class Parts:
    """What the demo handed its parts: the hand, the arena and the trainer."""

    hands: list[tuple[Rules, int, list[str], list[str]]] = dataclasses.field(default_factory=list)
    arenas: list[list[str]] = dataclasses.field(default_factory=list)
    trainings: list[list[str]] = dataclasses.field(default_factory=list)


def stand_ins(monkeypatch: pytest.MonkeyPatch) -> Parts:
    parts = Parts()

    def hand(rules: Rules, seed: int, specs: list[str], labels: list[str]) -> None:
        parts.hands.append((rules, seed, specs, labels))

    def arena(argv: list[str]) -> int:
        parts.arenas.append(argv)
        return 0

    monkeypatch.setattr(demo, "show_hand", hand)
    monkeypatch.setattr(demo, "arena_main", arena)
    monkeypatch.setattr(train.run, "main", fake_train(parts.trainings))
    # A clock that moves 100 s at each reading: each run is "trained in 100 s".
    _clock(monkeypatch, demo, step=100.0)
    return parts


@pytest.mark.parametrize("status", [130, 2])
def test_the_demo_stops_where_its_arena_stopped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, status: int
) -> None:
    # Ctrl-C in the arena: it said how far it got and returned 130, and the demo went
    # on to train its curve, ending with status 0. A refusal (2) stops it as well.
    parts = stand_ins(monkeypatch)
    monkeypatch.setattr(demo, "arena_main", lambda argv: status)
    if status == 130:
        with pytest.raises(SystemExit) as exited:
            demo.main(["--quick", "--out", str(tmp_path)])
        assert exited.value.code == 130
    else:
        assert demo.main(["--quick", "--out", str(tmp_path)]) == status
    assert parts.trainings == []


def trained(argv: list[str]) -> dict[str, Any]:
    """The training arguments that matter to a curve point."""
    args = parse(TrainArgs, argv, prog=PROG)
    keys = ("preset", "seed", "bc_teacher", "bc_decisions", "timesteps", "n_envs", "n_steps",
            "batch_size", "n_epochs", "final_eval_hands", "eval_every", "select_hands",
            "progress", "out")  # fmt: skip
    return {k: getattr(args, k) for k in keys}


def curve_point(out: Path, decisions: int, eval_hands: int, seed: int) -> dict[str, Any]:
    """What a curve point's training run must be made with: ``expert``'s decisions
    cloned on the standard preset, one token PPO update of 64 steps, no evaluation
    during the run, no check of the best policy against the warm start, no progress
    bar (its output goes to a log)."""
    return {
        "preset": "standard", "seed": seed, "bc_teacher": "expert", "bc_decisions": decisions,
        "timesteps": 64, "n_envs": 1, "n_steps": 64, "batch_size": 64, "n_epochs": 1,
        "final_eval_hands": eval_hands, "eval_every": 0, "select_hands": 0,
        "progress": False, "out": str(out / "clone" / f"decisions_{decisions}"),
    }  # fmt: skip


def row(decisions: int, note: str) -> str:
    """A line of the learning curve's table."""
    expert = interval_text(expert_points(decisions), *_ends(expert_points(decisions)), width=6)
    rand = interval_text(random_points(decisions), *_ends(random_points(decisions)), width=6)
    return f"\n  {decisions:>16,}  {expert:<30}{rand:<24}{note}\n"


def _ends(points: float) -> tuple[float, float]:
    return points - 1.0, points + 2.0


def shipped_story() -> str:
    info = read_policy_info(BOTS_DIR / "standard" / SIDECAR_FILE)
    return demo.shipped_bot_story(info.provenance or {})


# -- the demo's parts, with stand-ins ---------------------------------------------------------


def test_the_quick_demo_hands_its_parts_the_seed_budgets_and_folders_and_reuses_its_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parts = stand_ins(monkeypatch)
    # A path of the full curve's, not of the quick one's: the quick demo writes nothing there.
    (tmp_path / "clone").mkdir()
    (tmp_path / "clone" / "decisions_1000").write_text("")
    assert demo.main(["--quick", "--seed", "5", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    [(rules, seed, specs, labels)] = parts.hands
    assert (rules, seed) == (Rules.preset("standard"), 5)
    assert (specs, labels) == ([demo.SHIPPED_BOT, "expert"], ["bot", "expert"])
    assert "== 1/4 One hand of Matador (preset standard, seed 5): bot vs expert\n" in out
    assert parts.arenas == [
        ["--vs", demo.SHIPPED_BOT, "--agents", "expert", "greedy", "random", "--hands", "40",
         "--seed", "5", "--out", str(tmp_path / "arena"), "--no-progress"]
    ]  # fmt: skip
    assert "greedy and random, 40 hands each on duplicate deals (about 5 s)\n" in out
    assert "\n\n== 2/4 Arena" in out  # each step's heading after a blank line
    assert [trained(a) for a in parts.trainings] == [
        curve_point(tmp_path, d, 20, 5) for d in (0, 500)
    ]
    # 5 s, 0.0012 s a decision cloned and 0.02 s a deal evaluated per run to train.
    assert "2 training runs of 0, 500 decisions, each then evaluated (about 6 s)\n" in out
    assert f"a later demo reuses finished runs from {tmp_path / 'clone'}.\n" in out
    for decisions in (0, 500):
        assert row(decisions, "trained in 100 s") in out
        # the trainer's output goes to the run's log, beside its folder, not to the terminal
        log = tmp_path / "clone" / f"decisions_{decisions}.log"
        assert log.read_text() == f"training {decisions}\n"
        assert f"training {decisions}" not in out
    curve = tmp_path / "clone" / "learning_curve.png"
    assert f"learning curve: {curve}\n" in out and curve.read_bytes()[:4] == b"\x89PNG"
    assert "Against expert: -3.0 points per hand with 0 decisions cloned, +2.0 with 500.\n" in out
    assert shipped_story() + "\nStep 2 shows where that got it." in out
    assert f"everything is in {tmp_path}.\n" in out

    # Again: both runs reused, nothing trained, and step 3 announced as a moment's work.
    parts = stand_ins(monkeypatch)
    assert demo.main(["--quick", "--seed", "5", "--out", str(tmp_path)]) == 0
    again = capsys.readouterr().out
    assert parts.trainings == []
    assert "2 training runs of 0, 500 decisions, each then evaluated (about 5 s)\n" in again
    assert row(0, "reused") in again and row(500, "reused") in again
    # With another seed, nothing is reused.
    parts = stand_ins(monkeypatch)
    assert demo.main(["--quick", "--seed", "6", "--out", str(tmp_path)]) == 0
    capsys.readouterr()
    assert [trained(a) for a in parts.trainings] == [
        curve_point(tmp_path, d, 20, 6) for d in (0, 500)
    ]


def test_quick_keeps_the_budgets_given_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # --quick replaced --hands 7 and --eval-hands 3 by 40 and 20 without a word.
    parts = stand_ins(monkeypatch)
    argv = ["--quick", "--hands", "7", "--eval-hands", "3", "--seed", "5", "--out", str(tmp_path)]
    assert demo.main(argv) == 0
    capsys.readouterr()
    [arena] = parts.arenas
    assert arena[arena.index("--hands") + 1] == "7"
    assert [trained(a) for a in parts.trainings] == [
        curve_point(tmp_path, d, 3, 5) for d in (0, 500)
    ]


def test_the_demo_by_default_plays_600_hands_and_a_curve_of_five_runs_into_runs_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    parts = stand_ins(monkeypatch)
    assert demo.main([]) == 0
    out = capsys.readouterr().out
    home = Path("runs/demo")
    assert [seed for _, seed, _, _ in parts.hands] == [2026]
    [arena] = parts.arenas
    assert arena[arena.index("--hands") :] == [
        "--hands", "600", "--seed", "2026", "--out", str(home / "arena"), "--no-progress"
    ]  # fmt: skip
    # 600 hands at 40 a second; then 5 + 0.0012 * 44,000 + 0.02 * 150 * 5 seconds.
    assert "600 hands each on duplicate deals (about 15 s)\n" in out
    points = (0, 1_000, 3_000, 10_000, 30_000)
    assert [trained(a) for a in parts.trainings] == [
        curve_point(home, d, 150, 2026) for d in points
    ]
    runs = "5 training runs of 0, 1,000, 3,000, 10,000, 30,000 decisions, each then evaluated"
    assert f"{runs} (about 73 s)\n" in out
    assert row(1_000, "trained in 100 s") in out
    # the first point and the last, each against expert
    assert "-3.0 points per hand with 0 decisions cloned, +297.0 with 30,000.\n" in out
    assert (home / "clone" / "learning_curve.png").is_file()

    # Three runs left unfinished: only they are trained again, and only they are timed.
    for decisions in points[2:]:
        (home / "clone" / f"decisions_{decisions}" / "summary.json").unlink()
    parts = stand_ins(monkeypatch)
    assert demo.main([]) == 0
    again = capsys.readouterr().out
    assert [trained(a)["bc_decisions"] for a in parts.trainings] == list(points[2:])
    assert f"{runs} (about 66 s)\n" in again
    assert row(0, "reused") in again and row(3_000, "trained in 100 s") in again


def test_a_long_arena_is_announced_in_minutes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_ins(monkeypatch)
    # 4,000 hands at 40 a second: 100 s, told as minutes past 90 s
    assert demo.main(["--hands", "4000", "--eval-hands", "20", "--out", str(tmp_path)]) == 0
    assert "4000 hands each on duplicate deals (about 2 minutes)\n" in capsys.readouterr().out


def test_the_demo_names_the_shipped_bot_by_its_path_in_the_checkout_when_run_from_it(
    tmp_path: Path,
) -> None:
    # Shorter names in the arena's tables; from elsewhere, the whole path.
    code = "from evaluate.demo import SHIPPED_BOT; print(SHIPPED_BOT)"
    names = [
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=where,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for where in (ROOT, tmp_path)
    ]
    assert names == ["policy:matador_env/bots/standard", f"policy:{BOTS_DIR / 'standard'}"]


# -- what the demo refuses before it plays ----------------------------------------------------


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (
            "file clone/decisions_0",
            "{out}/clone/decisions_0 exists and is not a folder, where the demo writes the "
            "training run of 0 decisions",
        ),
        (
            "file clone/decisions_10000",
            "{out}/clone/decisions_10000 exists and is not a folder, where the demo writes "
            "the training run of 10,000 decisions",
        ),
        (
            "folder clone/decisions_30000.log",
            "{out}/clone/decisions_30000.log is a folder, where the demo writes the log of "
            "the run of 30,000 decisions",
        ),
    ],
)
def test_the_full_demo_refuses_each_curve_points_folder_and_log_it_cannot_write(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    make: str,
    says: str,
) -> None:
    parts = stand_ins(monkeypatch)
    kind, name = make.split()
    path = tmp_path / name
    path.parent.mkdir(parents=True)
    if kind == "file":
        path.write_text("")
    else:
        path.mkdir()
    with pytest.raises(SystemExit) as exited:
        demo.main(["--out", str(tmp_path)])
    assert exited.value.code == 2 and parts == Parts()
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == (
        f"python -m evaluate.demo: error: --out: {says.format(out=tmp_path)}; give another "
        "--out, or move it away"
    )


def test_an_out_holding_a_finished_demos_files_is_not_refused(tmp_path: Path) -> None:
    # A second demo writes over its own files: only a folder where one goes is refused.
    (tmp_path / "arena").mkdir()
    for name in RUN_FILES:
        (tmp_path / "arena" / name).write_text("")
    for decisions in demo.CURVE:
        (tmp_path / "clone" / f"decisions_{decisions}").mkdir(parents=True)
        (tmp_path / "clone" / f"decisions_{decisions}.log").write_text("")
    (tmp_path / "clone" / "learning_curve.png").write_text("")
    assert demo.output_problem(tmp_path, demo.CURVE) is None


# -- a curve point's run: trained, logged and reused ------------------------------------------


def finished_run(run: Path, decisions: int = 300, eval_hands: int = 20, seed: int = 5) -> None:
    """``run`` made as a finished cloning run of this code with those arguments."""
    run.mkdir(parents=True)
    figures = {"points": 1.5, "points_lo": None, "points_hi": 3.0, "win_rate": 0.5}
    figures |= {"win_rate_lo": 0.25, "win_rate_hi": 0.75}
    final = {"expert": figures, "random": figures}
    (run / "summary.json").write_text(json.dumps({"final_evaluation": final}))
    (run / demo.CODE_FILE).write_text(json.dumps({"code": demo.code_fingerprint()}))
    argv = demo.clone_argv(run, decisions, eval_hands, seed)
    (run / "args.json").write_text(json.dumps(dataclasses.asdict(parse(TrainArgs, argv))))


def _edit_args(key: str, value: Any) -> Callable[[Path], None]:
    def edit(run: Path) -> None:
        stored = json.loads((run / "args.json").read_text())
        if value is None:
            del stored[key]
        else:
            stored[key] = value
        (run / "args.json").write_text(json.dumps(stored))

    return edit


def _write(name: str, text: str) -> Callable[[Path], object]:
    return lambda run: (run / name).write_text(text)


def _edit_final(opp: str, key: str, value: Any) -> Callable[[Path], object]:
    """An edit of the summary's final figure ``key`` against ``opp``."""

    def edit(run: Path) -> None:
        summary = json.loads((run / "summary.json").read_text())
        summary["final_evaluation"][opp] = dict(summary["final_evaluation"][opp], **{key: value})
        (run / "summary.json").write_text(json.dumps(summary))

    return edit


@pytest.mark.parametrize(
    ("why", "edit"),
    [
        ("no summary: unfinished", lambda run: (run / "summary.json").unlink()),
        # a damaged summary: trained again, not shown wrong or ended in a traceback
        ("a summary that is not JSON", _write("summary.json", "{")),
        ("a summary of a text", _write("summary.json", json.dumps("x"))),
        (
            "a summary missing a figure",
            _write("summary.json", json.dumps({"final_evaluation": {"expert": {}}})),
        ),
        ("a figure that is text", _edit_final("expert", "points", "1.5")),
        ("an interval's end that is text", _edit_final("random", "win_rate_hi", "x")),
        ("a figure that is null", _edit_final("random", "points", None)),
        # made by other code: its figures are that code's
        ("another code", _write(demo.CODE_FILE, json.dumps({"code": "other code"}))),
        ("a code record that is not an object", _write(demo.CODE_FILE, "[1]")),
        ("a code record that is not JSON", _write(demo.CODE_FILE, "{")),
        ("arguments that are not JSON", _write("args.json", "{")),
        ("another seed", _edit_args("seed", 6)),
        ("another evaluation", _edit_args("final_eval_hands", 21)),
        ("another count of decisions", _edit_args("bc_decisions", 301)),
        ("another folder", _edit_args("out", "elsewhere")),
        ("another teacher", _edit_args("bc_teacher", "greedy")),
        ("an argument not recorded", _edit_args("n_epochs", None)),
    ],
)
def test_a_run_is_not_reused_unless_it_is_finished_with_every_argument_of_this_point(
    tmp_path: Path, why: str, edit: Callable[[Path], object]
) -> None:
    run = tmp_path / "decisions_300"
    finished_run(run)
    assert demo.finished(run, 300, 20, 5)
    edit(run)
    assert not demo.finished(run, 300, 20, 5), why


def test_a_finished_run_is_reused_only_for_its_own_arguments(tmp_path: Path) -> None:
    run = tmp_path / "decisions_300"
    finished_run(run, 300, 20, 5)
    assert demo.finished(run, 300, 20, 5)
    assert not demo.finished(run, 300, 20, 6)
    assert not demo.finished(run, 300, 21, 5)
    assert not demo.finished(run, 301, 20, 5)


def test_a_run_is_trained_into_a_fresh_folder_with_its_log_beside_it_then_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(train.run, "main", fake_train(calls))
    first = tmp_path / "out" / "clone" / "decisions_300"
    summary = demo.clone_run(first, 300, 20, 5)  # its parent folders made on the way
    assert summary["reused"] is False and summary["final_evaluation"]["expert"]["deals"] == 20
    # A run left by other arguments (or unfinished), and the log of an earlier try.
    run = tmp_path / "decisions_300"
    run.mkdir()
    (run / "stale").write_text("")
    (tmp_path / "decisions_300.log").write_text("an earlier try\n")
    summary = demo.clone_run(run, 300, 20, 5)
    assert summary == {
        "final_evaluation": {
            "expert": figure(expert_points(300)),
            "random": figure(random_points(300)),
        },
        "reused": False,
    }
    assert trained(calls[-1]) == curve_point(tmp_path, 300, 20, 5) | {"out": str(run)}
    assert not (run / "stale").exists()
    assert (tmp_path / "decisions_300.log").read_text() == "training 300\n"
    assert capsys.readouterr().out == ""
    assert json.loads((run / demo.CODE_FILE).read_text()) == {"code": demo.code_fingerprint()}
    summary = demo.clone_run(run, 300, 20, 5)
    assert summary["reused"] is True and len(calls) == 2


# -- the digest of the code a run was made by -------------------------------------------------


def _fake_packages(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The four packages the digest covers, as small folders under ``root``."""
    for name in ("matador_env", "agents", "train", "evaluate"):
        package = root / name
        (package / "sub").mkdir(parents=True)
        (package / "__init__.py").write_text(f"# {name}\n")
        (package / "sub" / "util.py").write_text("X = 1\n")
        (package / "data.json").write_text("{}\n")
        (package / "notes.txt").write_text("notes\n")
        module = types.ModuleType(name)
        module.__file__ = str(package / "__init__.py")
        monkeypatch.setitem(sys.modules, name, module)


def _rename(old: str, new: str) -> Callable[[Path], object]:
    return lambda root: (root / old).rename(root / new)


@pytest.mark.parametrize(
    ("edit", "changes"),
    [
        (lambda root: (root / "evaluate" / "sub" / "util.py").write_text("X = 2\n"), True),
        (lambda root: (root / "matador_env" / "data.json").write_text("[]\n"), True),
        (lambda root: (root / "agents" / "new.py").write_text(""), True),
        (_rename("train/sub/util.py", "train/sub/other.py"), True),
        (lambda root: (root / "train" / "notes.txt").write_text("other notes\n"), False),
        (lambda root: (root / "setup.py").write_text("# beside the packages\n"), False),
    ],
    ids=[
        "a py edited",
        "a json edited",
        "a py added",
        "a py renamed",
        "a txt edited",
        "a py outside",
    ],  # fmt: skip
)
def test_the_code_fingerprint_covers_the_py_and_json_files_of_the_four_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Callable[[Path], object], changes: bool
) -> None:
    _fake_packages(tmp_path, monkeypatch)
    digest = demo.code_fingerprint.__wrapped__  # the uncached digest: the code changes here
    before = digest()
    assert digest() == before
    edit(tmp_path)
    assert (digest() != before) == changes


# -- the learning curve's plot ----------------------------------------------------------------


def test_the_curve_plots_points_and_win_rates_with_their_intervals_per_decisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    figures: list[Figure] = []
    subplots = plt.subplots

    def keep(*args: Any, **kwargs: Any) -> Any:
        made = subplots(*args, **kwargs)
        figures.append(made[0])
        return made

    monkeypatch.setattr(plt, "subplots", keep)
    one_deal = figure(1.0, 1.0, deals=1) | {"points_lo": None, "points_hi": None}
    rows = [
        (0, {"expert": figure(-3.0, 0.2), "random": figure(1.0, 0.6)}),
        (1_000, {"expert": figure(-1.0, 0.4), "random": figure(2.0, 0.7)}),
        (30_000, {"expert": one_deal, "random": figure(3.0, 0.8)}),
    ]
    path = tmp_path / "curve.png"
    assert demo.plot_curve(rows, 20, path) == path
    assert path.read_bytes()[:4] == b"\x89PNG"
    [fig] = figures
    assert "evaluated on 20 duplicate deals (40 hands) per opponent" in fig.get_suptitle()
    points, wins = fig.axes[:2]
    for ax in (points, wins):
        assert [t.get_text() for t in ax.get_xticklabels()] == ["untrained", "1,000", "30,000"]
    for ax, key, scale, even in ((points, "points", 1, 0), (wins, "win_rate", 100, 50)):
        bars = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
        assert [c.get_label() for c in bars] == ["vs expert", "vs random"]
        for bar, opp in zip(bars, ("expert", "random"), strict=True):
            line, _, (ranges, *_) = bar.lines
            assert values(line.get_xdata()) == [0, 1, 2]
            assert values(line.get_ydata()) == pytest.approx([scale * f[opp][key] for _, f in rows])
            ends = [[float(y) for _, y in seg] for seg in ranges.get_segments()]
            # an end summary.json wrote as null (one deal) is unbounded: no bar is drawn
            assert ends == [
                []
                if f[opp][f"{key}_lo"] is None
                else pytest.approx([scale * f[opp][f"{key}_lo"], scale * f[opp][f"{key}_hi"]])
                for _, f in rows
            ]
        # the line of an even match: 0 points, 50% of the hands
        assert [even, even] in [values(h.get_ydata()) for h in ax.lines]


def values(data: Any) -> list[float]:
    """A plotted line's coordinates, as floats."""
    return [float(v) for v in np.asarray(data)]


# -- the hand ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seed", "result"),
    [
        (3, "Result: rnd (P0) had the lowest count and scores {points} points."),
        (6, "Result: rnd (P0) played out (domino) and scores {points} points."),
        (0, "Result: exp (P1) played out (domino) and scores {points} points."),
        (59, "Result: {outcome}"),  # a tie: no winner
    ],
)
def test_the_hand_is_the_seeds_deal_told_move_by_move_to_its_result(
    seed: int, result: str, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = Rules.preset("standard")
    demo.show_hand(rules, seed, ["random", "expert"], ["rnd", "exp"])
    out = capsys.readouterr().out
    names = ["rnd (P0)", "exp (P1)"]
    # The same hand played again (the agents draw on one generator of the seed).
    agents = [make_agent("random"), make_agent("expert")]
    rng = random.Random(seed)
    state = HandState.deal(rules, seed)
    told = [
        f"  {name:<14} holds {' '.join(map(str, state.hand(i)))}" for i, name in enumerate(names)
    ]
    told.append(f"  boneyard: {state.boneyard_size} tiles, face down")
    draws = 0
    while not state.is_over:
        seat = state.to_move
        move = agents[seat].act(state.view(seat), rng)
        after = state.apply(move)
        line = narrate(names[seat], move, after.history[-1].ends, rules)
        if move.kind == "draw":  # the tile drawn: the one the drawer's hand gained
            [tile] = set(after.hand(seat)) - set(state.hand(seat))
            line += f" {tile}"
            draws += 1
        told.append(f"  {after.n_actions:3d}. {line}")
        state = after
    assert draws > 0
    outcome = state.outcome
    assert outcome is not None
    assert out.startswith("\n".join([*told[:3], "", *told[3:], ""]) + "\n")
    assert f"\n{draw_layout(state)}\n" in out
    assert out.endswith(result.format(points=outcome.points, outcome=outcome) + "\n")


# -- how the shipped bot was made -------------------------------------------------------------


def test_a_decisions_flag_given_last_without_a_count_is_no_count() -> None:
    story = demo.shipped_bot_story(
        {"command": "python -m train --bc-teacher greedy --bc-decisions"}
    )
    assert story == "The shipped bot went further: it cloned greedy."


def test_steps_recorded_as_other_than_an_integer_tell_nothing_of_ppo() -> None:
    story = demo.shipped_bot_story({"command": "--bc-decisions 3000", "steps": "64"})
    assert story == "The shipped bot went further: it cloned 3,000 decisions of the search agent."
