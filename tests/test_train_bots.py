"""``python -m train.bots`` end to end on tiny recipes: train, export, install, load, play.

Leiden (spinner, voluntary draws) and a four-seat table (standard_4p) go through the
whole path a shipped bot takes, into a temporary bots folder; the shipped bots
themselves are never touched.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from matador_env.configs import configuration
from matador_env.engine import HandState
from matador_env.policy import BOTS_DIR, PolicyMismatchError, load_policy
from tests.train_runs import ROOT
from train.args import given_fields, parse
from train.bots import RECIPE_FLAGS, _parse, training_table
from train.run import TrainArgs

TRAIN_PREFIX = ("python", "-m", "train")
"""How a sidecar's recorded command begins, before the flags."""

TINY_RECIPE = [
    "--timesteps", "256", "--n-envs", "1", "--n-steps", "256", "--batch-size", "64",
    "--n-epochs", "1", "--net-arch", "32", "--eval-workers", "1", "--eval-every", "0",
    "--eval-hands", "2", "--final-eval-hands", "2", "--bc-decisions", "300",
    "--bc-epochs", "1", "--bc-workers", "1", "--select-hands", "4",
]  # fmt: skip


def _tiny_recipe(name: str) -> tuple[list[str], str]:
    """TINY_RECIPE fitted to ``name``'s recipe flags, and the teacher it names: soft
    targets need a search teacher (two worlds keep it tiny), otherwise expert; a DAgger
    round is cut to 200 decisions."""
    flags = RECIPE_FLAGS.get(name, [])
    teacher = "search:samples=2" if "--bc-soft-temperature" in flags else "expert"
    tiny = [*TINY_RECIPE, "--bc-teacher", teacher]
    if "--bc-dagger-decisions" in flags:
        tiny += ["--bc-dagger-decisions", "200"]
    return tiny, teacher


def _bots(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "train.bots", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _play_hand(folder: Path, name: str, seed: int) -> int:
    """A whole hand with the installed policy in every seat; the moves made."""
    rules = configuration(name).rules()
    policy = load_policy(folder, rules=rules)
    state = HandState.deal(rules, seed=seed)
    rng = random.Random(seed)
    moves = 0
    while not state.is_over:
        view = state.view(state.to_move)
        move = policy.choose(view, rng)
        assert move in view.legal_moves
        state = state.apply(move)
        moves += 1
    return moves


@pytest.mark.parametrize("name", ["leiden", "standard_4p"])
def test_tiny_bot_recipe_trains_installs_and_plays(tmp_path: Path, name: str) -> None:
    runs, bots = tmp_path / "runs", tmp_path / "bots"
    args = ["--only", name, "--runs", str(runs), "--bots-dir", str(bots), "--no-matrix"]
    tiny, teacher = _tiny_recipe(name)
    done = _bots(*args, "--", *tiny)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"installed {bots / name}" in done.stdout

    run_args = json.loads((runs / name / "args.json").read_text())
    config = configuration(name)
    assert (run_args["preset"], run_args["seed"]) == (config.preset, 1)
    assert (runs / name / "summary.json").is_file()

    sidecar = json.loads((bots / name / "policy.json").read_text())
    assert sidecar["provenance"]["configuration"] == name
    # The command that rebuilds this bot: its folders and the tiny recipe's flags.
    rebuild = sidecar["provenance"]["rebuild"]
    assert rebuild.startswith(
        f"python -m train.bots --only {name} --runs {runs} --bots-dir {bots} -- "
    )
    assert "--timesteps 256" in rebuild and f"--bc-teacher {teacher}" in rebuild
    assert sorted(p.name for p in (bots / name).iterdir()) == ["policy.json", "policy.onnx"]
    assert _play_hand(bots / name, name, seed=3) > 0
    # The run's own figures, as a table row.
    row = next(line for line in (runs / "training.md").read_text().splitlines() if name in line)
    assert f"{teacher} x 300" in row and "(2 deals)" in row

    # The bot plays its own configuration only.
    other = "standard" if name != "standard" else "leiden"
    with pytest.raises(PolicyMismatchError):
        load_policy(bots / name, rules=configuration(other).rules())

    # Run again: the finished run is reused, not retrained, and installed again.
    again = _bots(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"trained already in {runs / name}" in again.stdout


def test_unknown_configuration_is_refused_before_anything_runs(tmp_path: Path) -> None:
    done = _bots("--only", "double_six", "--runs", str(tmp_path / "runs"), "--no-matrix")
    assert done.returncode == 2
    assert "unknown configuration 'double_six'" in done.stderr
    assert "standard_4p" in done.stderr
    assert not (tmp_path / "runs").exists()


def test_folders_and_a_reused_runs_seed_are_checked_before_any_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("x")
    for flag in ("--runs", "--matrix-out", "--bots-dir"):
        with pytest.raises(SystemExit) as stop:
            _parse(["--only", "standard", flag, str(tmp_path / "file" / "sub")])
        assert stop.value.code == 2
        assert f"{flag}: {tmp_path / 'file' / 'sub'} lies in" in capsys.readouterr().err
    run = tmp_path / "runs" / "standard"
    run.mkdir(parents=True)
    (run / "args.json").write_text(json.dumps({"seed": 3}))
    with pytest.raises(SystemExit):
        _parse(["--only", "standard", "--runs", str(tmp_path / "runs"), "--seed", "1"])
    assert "holds a run of seed 3, not 1, and would be reused; give --seed 3" in (
        capsys.readouterr().err
    )
    assert _parse(["--only", "standard", "--runs", str(tmp_path / "runs"), "--seed", "3"])


def test_the_matrix_measures_the_bots_installed_where_they_were_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --bots-dir elsewhere, the strength matrix at the end measures those bots."""
    import train.bots as bots

    calls: list[list[str]] = []

    def call(command: list[str]) -> int:
        calls.append(command)
        return 0

    monkeypatch.setattr(bots, "install", lambda config, run, where: where / config.name)
    monkeypatch.setattr(bots.subprocess, "call", call)
    runs = tmp_path / "runs"
    (runs / "pagat").mkdir(parents=True)
    (runs / "pagat" / "summary.json").write_text("{}")  # a finished run: reused
    mine = tmp_path / "mine"
    assert bots.main(["--only", "pagat", "--runs", str(runs), "--bots-dir", str(mine)]) == 0
    (matrix,) = calls
    assert matrix[1:3] == ["-m", "benchmarks.strength"]
    assert matrix[matrix.index("--bots-dir") + 1] == str(mine)


def test_only_given_twice_builds_both_configurations() -> None:
    names = [c.name for c in _parse(["--only", "kardinal_hard", "--only", "leiden"]).configs]
    assert names == ["kardinal_hard", "leiden"]
    assert [c.name for c in _parse(["--only", "polish", "pagat"]).configs] == ["polish", "pagat"]


def test_the_training_table_names_how_each_bot_was_cloned(tmp_path: Path) -> None:
    figure = {"points": 1.5, "points_lo": 0.5, "points_hi": 2.5, "deals": 1000}
    rounds = {"bc_dagger_decisions": 60_000, "bc_dagger_rounds": 3}
    for name, extra in (
        ("kardinal", {}),
        ("polish", {"bc_soft_temperature": 4.0}),
        ("double_twelve", rounds),
    ):
        run = tmp_path / name
        (run / "best").mkdir(parents=True)
        args = {"bc_teacher": "search:samples=64", "bc_decisions": 150_000, **extra}
        summary = {
            "minutes": 5.0,
            "pretrain": {"held_out_agreement": 0.66},
            "final_evaluation": {"expert": figure, "random": figure},
        }
        (run / "args.json").write_text(json.dumps(args))
        (run / "summary.json").write_text(json.dumps(summary))
        (run / "best" / "policy.json").write_text(json.dumps({"provenance": {"steps": 0}}))
    names = ["kardinal", "polish", "double_twelve", "leiden"]
    rows = training_table(tmp_path, names).splitlines()[2:]
    assert "| search:samples=64 x 150,000 |" in rows[0]
    assert "| search:samples=64 x 150,000, soft targets at 4 points |" in rows[1]
    assert "+1.50 [+0.50, +2.50] (1000 deals)" in rows[1]
    assert "| search:samples=64 x 150,000 + DAgger 60,000 x 3 rounds |" in rows[2]
    assert "no finished run" in rows[3]


def test_each_shipped_bot_was_trained_with_its_recipe_flags() -> None:
    """A rebuild repeats the shipped bot: every cloning flag of RECIPE_FLAGS has the
    same value in the training command its sidecar records, both read by the recipe's
    own parser."""
    cloning = {"bc_decisions", "bc_soft_temperature", "bc_dagger_decisions"}
    checked = 0
    for name, flags in RECIPE_FLAGS.items():
        provenance = load_policy(BOTS_DIR / name).info.provenance or {}
        command = provenance["command"].split()
        assert tuple(command[: len(TRAIN_PREFIX)]) == TRAIN_PREFIX, (name, command)
        recorded = parse(TrainArgs, command[len(TRAIN_PREFIX) :])
        asked = parse(TrainArgs, flags)
        for field in sorted(given_fields(TrainArgs, flags) & cloning):
            assert getattr(recorded, field) == getattr(asked, field), (name, field)
            checked += 1
    assert checked >= 10
