"""Checkpoints and run folders of ``python -m train`` (issue #14): no pickle on resume,
resume does the updates of an uninterrupted run, one trainer per folder, input checked
before any folder is written, rule overrides on the command line."""

from __future__ import annotations

import base64
import copy
import dataclasses
import io
import json
import math
import os
import pickle
import random
import re
import shutil
import signal
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from matador_env.engine import Rules
from tests.train_runs import (
    ROOT,
    final_weights_differ,
    interrupt_at_first_checkpoint,
    new_run,
    run_train,
)
from train.args import ArgsError, flag_name
from train.files import FolderBusyError, FolderLock
from train.run import TrainArgs, check_args, finished_summary, main

# 256 steps a rollout, one pass over it: an update per rollout; 2048 steps are 8 updates.
TINY = [
    "--n-envs", "1", "--n-steps", "256", "--batch-size", "256", "--n-epochs", "1",
    "--net-arch", "16", "--eval-workers", "1", "--bc-decisions", "0", "--no-progress",
    "--eval-every", "0", "--final-eval-hands", "2", "--baselines", "random:1",
]  # fmt: skip
STEPS = 2048
UPDATES = STEPS // 256
STANDARD = Rules.preset("standard")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of :data:`STEPS` steps, with snapshots and checkpoints."""
    run = tmp_path_factory.mktemp("train") / "uninterrupted"
    done = run_train(*new_run(TINY, STEPS, run))
    assert done.returncode == 0, done.stderr
    return run


def _copy(run: Path, dst: Path) -> Path:
    shutil.copytree(run, dst)
    (dst / "summary.json").unlink()
    return dst


# -- resume does what an uninterrupted run does ----------------------------------------


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["killed", "ctrl-c"])
def test_a_resumed_run_does_the_updates_and_steps_of_an_uninterrupted_one(
    tmp_path: Path, finished_run: Path, how: signal.Signals
) -> None:
    whole = json.loads((finished_run / "summary.json").read_text())
    assert (whole["steps"], whole["n_updates"]) == (STEPS, UPDATES)

    run = tmp_path / "run"
    returncode, err = interrupt_at_first_checkpoint(new_run(TINY, STEPS, run), run, how)
    saved = json.loads((run / "checkpoint" / "state.json").read_text())
    assert 0 < saved["steps"] < STEPS
    # A checkpoint lies between two updates: one update per 256-step rollout behind it.
    assert saved["steps"] % 256 == 0
    assert saved["n_updates"] == saved["steps"] // 256
    if how == signal.SIGINT:
        assert returncode == 130, err
        assert "checkpoint of step" in err and "--resume" in err

    done = run_train("--resume", str(run), "--no-progress")
    assert done.returncode == 0, done.stderr
    resumed = json.loads((run / "summary.json").read_text())
    assert (resumed["steps"], resumed["n_updates"]) == (whole["steps"], whole["n_updates"])
    # The same games and the same updates: the same policy to the bit, the same figures.
    assert final_weights_differ(run, finished_run) == []
    assert resumed["final_evaluation"] == whole["final_evaluation"]
    # The run's clock goes on from the checkpoint's: its minutes count the time before
    # the interruption too (they once counted only the last call's).
    assert isinstance(saved["seconds"], float) and saved["seconds"] > 0
    assert resumed["minutes"] * 60 >= saved["seconds"] - 3  # minutes are rounded to 0.1


def test_ctrl_c_to_a_run_with_environment_processes_saves_and_stops_cleanly(
    tmp_path: Path,
) -> None:
    """Ctrl-C in a terminal reaches the environments' processes too; they leave the
    interrupt to the trainer, which saves, closes them and exits with 130."""
    run = tmp_path / "run"
    # Rollouts of 2 x 1024 expert-opponent steps: the signal comes while the trainer
    # waits on the environments.
    slow = [*TINY, "--n-envs", "2", "--n-steps", "1024", "--baselines", "expert"]
    args = new_run(slow, 8 * STEPS, run)
    returncode, err = interrupt_at_first_checkpoint(args, run, signal.SIGINT, group=True)
    assert returncode == 130, err
    assert "Traceback" not in err and "Error" not in err, err
    assert "checkpoint of step" in err and "--resume" in err


def test_resuming_a_finished_run_leaves_it_as_it_is(tmp_path: Path, finished_run: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    summary = run / "summary.json"
    before, stamp = summary.read_bytes(), summary.stat().st_mtime_ns
    best = (run / "best" / "policy.onnx").stat().st_mtime_ns
    done = run_train("--resume", str(run), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert f"{run} has finished its {STEPS} steps" in done.stdout
    assert "| opponent | deals |" in done.stdout
    assert summary.read_bytes() == before and summary.stat().st_mtime_ns == stamp
    assert (run / "best" / "policy.onnx").stat().st_mtime_ns == best
    # A larger --timesteps continues it; an unreadable summary is written again.
    assert finished_summary(run, STEPS + 256) is None
    summary.write_text("{not json")
    assert finished_summary(run, STEPS) is None
    # A checkpoint ahead of the summary (a longer run, interrupted) is not finished.
    summary.write_bytes(before)
    assert finished_summary(run, STEPS) is not None
    state_path = run / "checkpoint" / "state.json"
    state = json.loads(state_path.read_text())
    state["steps"] = STEPS + 256
    state_path.write_text(json.dumps(state))
    assert finished_summary(run, STEPS) is None


def test_a_larger_timesteps_on_resume_becomes_the_runs(tmp_path: Path, finished_run: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    done = run_train("--resume", str(run), "--no-progress", "--timesteps", str(STEPS + 256))
    assert done.returncode == 0, done.stderr
    assert json.loads((run / "args.json").read_text())["timesteps"] == STEPS + 256
    assert json.loads((run / "summary.json").read_text())["steps"] == STEPS + 256
    # So a plain --resume (after an interrupt, say) goes on to the same end.
    again = run_train("--resume", str(run), "--no-progress")
    assert again.returncode == 0 and f"has finished its {STEPS + 256} steps" in again.stdout


def test_a_checkpoint_with_a_bad_clock_is_refused(tmp_path: Path, finished_run: Path) -> None:
    run = _copy(finished_run, tmp_path / "run")
    state_path = run / "checkpoint" / "state.json"
    state = json.loads(state_path.read_text())
    state["seconds"] = "ten"
    state_path.write_text(json.dumps(state))
    done = run_train("--resume", str(run), "--no-progress")
    assert done.returncode != 0
    assert "'seconds' is 'ten'" in done.stderr and "set it to 0" in done.stderr


def _resume_edited(
    run: Path, good: str, edit: Callable[[dict[str, Any]], object]
) -> subprocess.CompletedProcess[str]:
    """``--resume`` of ``run`` to a larger ``--timesteps``, its state.json the text
    ``good`` with ``edit`` made to it."""
    state = json.loads(good)
    edit(state)
    (run / "checkpoint" / "state.json").write_text(json.dumps(state))
    return run_train("--resume", str(run), "--no-progress", "--timesteps", str(STEPS + 256))


def _refused_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line of a resume refused with status 2."""
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    return lines[0]


def test_a_checkpoint_with_a_damaged_best_score_is_refused_before_training(
    tmp_path: Path, finished_run: Path
) -> None:
    # Read unchecked, it ended the resumed run in a traceback at its first evaluation.
    run = _copy(finished_run, tmp_path / "run")
    state_path = run / "checkpoint" / "state.json"
    done = _resume_edited(run, state_path.read_text(), lambda state: state.update(best="x"))
    assert "'best' is 'x', where the evaluations' best score" in _refused_line(done)
    assert json.loads(state_path.read_text())["steps"] == STEPS  # nothing trained


def test_saved_environments_that_do_not_fit_are_refused_and_can_be_dropped(
    tmp_path: Path, finished_run: Path
) -> None:
    run = _copy(finished_run, tmp_path / "run")
    good = (run / "checkpoint" / "state.json").read_text()

    def illegal(state: dict[str, Any]) -> None:
        state["envs"]["states"][0]["game"]["actions"].append(10**6)

    line = _refused_line(_resume_edited(run, good, illegal))
    assert "the saved environments do not fit: environment 0" in line
    assert "is not legal there" in line and "delete its 'envs' entry" in line

    # An episode saved as over: its first step would raise inside SB3.
    def over(state: dict[str, Any]) -> None:
        state["envs"]["states"][0]["over"] = True

    assert "environment 0: its episode is over" in _refused_line(_resume_edited(run, good, over))
    # Without them the run resumes on new deals, and says so.
    done = _resume_edited(run, good, lambda state: state.pop("envs"))
    assert done.returncode == 0, done.stderr
    assert "no saved environments; resuming on new deals" in done.stdout
    assert json.loads((run / "summary.json").read_text())["steps"] == STEPS + 256


def test_a_folder_swap_cut_short_is_put_right_and_old_temporaries_are_removed(
    tmp_path: Path,
) -> None:
    from train.files import recover_run_folder, replace_dir

    def folder(path: Path, text: str) -> Path:
        path.mkdir(parents=True)
        (path / "policy.json").write_text(text)
        return path

    run = tmp_path / "run"
    # Killed between the two renames: the old folder moved aside, the new one not in.
    folder(run / ".best.old", "old best")
    folder(run / ".best.tmp", "new best, not swapped in")
    # Killed after the swap, before the old folder was removed.
    folder(run / "warm_start", "new warm start")
    folder(run / ".warm_start.old", "old warm start")
    # Killed inside atomic_write.
    (run / "checkpoint").mkdir()
    (run / "checkpoint" / ".state.json.k3j2x.tmp").write_text("{half")
    recover_run_folder(run)
    assert (run / "best" / "policy.json").read_text() == "old best"
    assert (run / "warm_start" / "policy.json").read_text() == "new warm start"
    assert sorted(p.name for p in run.rglob("*")) == sorted(
        ["best", "policy.json", "warm_start", "policy.json", "checkpoint"]
    )
    # replace_dir puts a cut swap right before its own.
    (run / "best").rename(run / ".best.old")
    replace_dir(run / "best", lambda tmp: folder(tmp, "newer best"))
    assert (run / "best" / "policy.json").read_text() == "newer best"
    assert not (run / ".best.old").exists()


def test_a_folder_swap_starts_over_from_a_temporary_a_killed_one_left(tmp_path: Path) -> None:
    from train.files import replace_dir

    stale = tmp_path / ".best.tmp"
    stale.mkdir()
    (stale / "half.onnx").write_text("half")
    replace_dir(tmp_path / "best", lambda tmp: tmp.mkdir())
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["best"]


def test_recovery_removes_a_linked_temporary_and_not_what_it_links_to(tmp_path: Path) -> None:
    from train.files import recover_run_folder

    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run.mkdir()
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not the run's")
    (run / ".pool.tmp").symlink_to(elsewhere, target_is_directory=True)
    recover_run_folder(run)
    assert list(run.iterdir()) == []
    assert (elsewhere / "keep.txt").read_text() == "not the run's"


def test_a_resumed_run_keeps_the_best_policy_a_cut_swap_had_moved_aside(
    tmp_path: Path, finished_run: Path
) -> None:
    run = _copy(finished_run, tmp_path / "run")
    (run / "best").rename(run / ".best.old")
    stale = run / "checkpoint" / ".state.json.a1b2c3.tmp"
    stale.write_text("{half")
    done = run_train("--resume", str(run), "--no-progress", "--timesteps", str(STEPS + 256))
    assert done.returncode == 0, done.stderr
    # Not replaced by a copy of final/ (which finishing does when there is no best/).
    best = (run / "best" / "policy.onnx").read_bytes()
    assert best == (finished_run / "best" / "policy.onnx").read_bytes()
    assert not (run / ".best.old").exists() and not stale.exists()


def _model(net_arch: list[int] | None = None) -> Any:
    """A fresh MaskablePPO of the tiny network (``net_arch``: another one) on the standard rules."""
    from sb3_contrib import MaskablePPO

    from matador_env.gym_env import MatadorSingleEnv

    return MaskablePPO(
        "MlpPolicy", MatadorSingleEnv(rules=STANDARD), n_steps=256, batch_size=256, seed=99,
        device="cpu", policy_kwargs={"net_arch": net_arch or [16]},
    )  # fmt: skip


def test_resume_continues_with_the_saved_weights_and_random_state(
    tmp_path: Path, finished_run: Path
) -> None:
    """The tensors are loaded (not a fresh network), and the counters with them."""
    from train import checkpoint

    folder = finished_run / "checkpoint"
    state = checkpoint.read_state(folder, STANDARD)
    model = _model()
    checkpoint.restore(model, folder, state)
    saved = torch.load(folder / state["weights"], weights_only=True)
    for key, value in model.policy.state_dict().items():
        assert torch.equal(value, saved["policy"][key]), key
    assert (model.num_timesteps, model._n_updates) == (STEPS, UPDATES)
    assert torch.get_rng_state().tolist() == state["rng"]["torch"]


def _draws() -> list[float]:
    """A draw of each generator a checkpoint saves; the gaussians use up a cached half."""
    return [
        random.gauss(0, 1), random.random(), float(np.random.standard_normal()),
        float(np.random.random()), torch.rand(1).item(),
    ]  # fmt: skip


def test_the_saved_random_generators_draw_on_as_they_would_have(tmp_path: Path) -> None:
    from train import checkpoint

    model = _model()
    _draws()  # each gaussian now holds the second of its pair, as part of its state
    checkpoint.write(tmp_path, checkpoint.capture(model, {}), STANDARD)
    after = _draws()
    checkpoint.restore(model, tmp_path, checkpoint.read_state(tmp_path, STANDARD))
    assert _draws() == after


def _pcg64_state(**change: Any) -> dict[str, Any]:
    """A PCG64 generator's state with ``change`` made to it (``state``/``inc`` inside)."""
    state: dict[str, Any] = json.loads(json.dumps(np.random.default_rng(1).bit_generator.state))
    for key, value in change.items():
        (state["state"] if key in ("state", "inc") else state)[key] = value
    return state


@pytest.mark.parametrize(
    "state",
    [
        None,
        {"bit_generator": "PCG64"},
        {"bit_generator": "MT19937", "state": {}},
        # numpy's setter raised OverflowError for these, or took them as another state.
        _pcg64_state(state=2**128),
        _pcg64_state(inc=-1),
        _pcg64_state(state=1.5),
        _pcg64_state(uinteger=2**32),
        _pcg64_state(uinteger=-1),
        _pcg64_state(has_uint32=5),
        _pcg64_state(has_uint32=True),
        {**_pcg64_state(), "extra": 0},
    ],
    ids=[
        "not-a-dict",
        "no-state",
        "another-generator",
        "state-too-large",
        "negative-inc",
        "float-state",
        "uinteger-too-large",
        "negative-uinteger",
        "has-uint32-5",
        "has-uint32-bool",
        "an-extra-key",
    ],
)
def test_a_saved_generator_state_that_is_not_a_pcg64s_is_a_value_error(state: Any) -> None:
    """The one error the saved environments' checks turn into a refusal."""
    from train.checkpoint import generator_from_state

    with pytest.raises(ValueError, match="not the state of a PCG64 generator"):
        generator_from_state(state)


def test_a_saved_generator_state_draws_on_as_the_generator_would_have() -> None:
    from train.checkpoint import generator_from_state

    rng = np.random.default_rng(7)
    rng.integers(0, 2**32, dtype=np.uint32)  # a 32-bit draw leaves half a word cached
    state = json.loads(json.dumps(rng.bit_generator.state))
    assert state["has_uint32"] == 1
    restored = generator_from_state(state)
    assert restored.integers(0, 2**32, size=5).tolist() == rng.integers(0, 2**32, size=5).tolist()


def test_a_captured_checkpoint_stays_as_the_boundary_was_while_the_model_learns_on(
    tmp_path: Path,
) -> None:
    """An interrupt in the middle of an update saves the boundary before it, whole:
    weights, optimizer and the trainer's data are copies, not the live ones."""
    from train import checkpoint

    model = _model()
    model.learn(256)  # the optimizer has moments to copy
    extra: dict[str, Any] = {"evaluations": [{"steps": 256}]}
    ckpt = checkpoint.capture(model, extra)
    policy = {k: v.clone() for k, v in model.policy.state_dict().items()}
    moments = copy.deepcopy(model.policy.optimizer.state_dict()["state"])
    model.learn(256, reset_num_timesteps=False)
    extra["evaluations"].append({"steps": 512})
    checkpoint.write(tmp_path, ckpt, STANDARD)
    state = checkpoint.read_state(tmp_path, STANDARD)
    assert (state["steps"], state["n_updates"]) == (256, 10)
    assert state["evaluations"] == [{"steps": 256}]
    saved = torch.load(tmp_path / "weights_256.pt", weights_only=True)
    assert all(torch.equal(saved["policy"][k], v) for k, v in policy.items())
    for number, values in moments.items():
        for name, value in values.items():
            assert torch.equal(saved["optimizer"]["state"][number][name], value), name


def test_a_checkpoint_keeps_only_the_weights_file_of_its_step(tmp_path: Path) -> None:
    from train import checkpoint

    ckpt = checkpoint.capture(_model(), {})
    for steps in (256, 512):
        checkpoint.write(tmp_path, dataclasses.replace(ckpt, steps=steps), STANDARD)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json", "weights_512.pt"]
    assert checkpoint.read_state(tmp_path, STANDARD)["weights"] == "weights_512.pt"


DROP = object()
"""In place of a value: delete that entry."""


@pytest.mark.parametrize(
    ("where", "value", "says"),
    [
        (("seconds",), 0, None),  # what the message says to write
        (("seconds",), DROP, None),
        (("format",), 2, "checkpoint format 2 is not the format 1 this version reads"),
        (("format",), DROP, "checkpoint format None is not the format 1 this version reads"),
        (("n_updates",), "8", "'n_updates' is '8', not a int"),
        (("n_updates",), 2.5, "'n_updates' is 2.5, not a int"),
        (("n_updates",), True, "'n_updates' is True, not a int"),
        (("n_updates",), None, "'n_updates' is None, not a int"),
        # NaN is neither >= 0 nor < 0: only "not >= 0" refuses it.
        (("seconds",), math.nan, "'seconds' is nan, not a number of seconds >= 0"),
        (("steps",), True, "'steps' is True, not a int"),
        (("weights",), 5, "'weights' is 5, not a str"),
        (("steps",), -256, "negative step or update count"),
        (("n_updates",), -1, "negative step or update count"),
        (("seconds",), True, "'seconds' is True, not a number of seconds >= 0"),
        (("seconds",), -1.0, "'seconds' is -1.0, not a number of seconds >= 0"),
        (("weights",), "../weights_0.pt", "'weights' must name a .pt file inside"),
        (("weights",), "weights_0.bin", "'weights' must name a .pt file inside"),
        (("rules",), [], "'rules' is not a JSON object"),
        (("rules",), {"players": 1}, "its 'rules' are not valid (players=1 is not allowed"),
        (("rules",), Rules.preset("leiden").to_dict(), "was trained on"),
        # Rules differing only in the target, the saved ones named first.
        (
            ("rules",),
            Rules.preset("standard", target_score=150).to_dict(),
            f"was trained on {Rules.preset('standard', target_score=150).to_text()}, "
            f"but the run's arguments give {STANDARD.to_text()}",
        ),
        (("rng",), DROP, "the saved random state is damaged"),
        (("rng", "python", 1), [0] * 624, "the python random state is damaged"),
        (("rng", "python", 1, 0), True, "the python random state is damaged"),
        (("rng", "python", 2), "x", "the python random state is damaged"),
        # Each of these was taken and then failed in restore, or resumed another stream.
        (("rng", "python", 0), 9, "the python random state is damaged"),
        (("rng", "python", 1, 0), 2**40, "the python random state is damaged"),
        (("rng", "python", 1, 0), -1, "the python random state is damaged"),
        (("rng", "python", 1, 624), 625, "the python random state is damaged"),
        (("rng", "numpy", 2), 700, "the numpy random state is damaged"),
        (("rng", "numpy", 2), "x", "the numpy random state is damaged"),
        (("rng", "numpy", 3), 2, "the numpy random state is damaged"),
        (("rng", "numpy", 4), "x", "the numpy random state is damaged"),
        (
            ("rng", "torch"),
            [0] * torch.get_rng_state().numel(),
            "the torch random state is damaged",
        ),
        (("rng", "numpy", 0), "PCG64", "the numpy random state is damaged"),
        (("rng", "numpy", 1), [0] * 623, "the numpy random state is damaged"),
        (("rng", "numpy", 1, 0), 2**32, "the numpy random state is damaged"),
        (("rng", "numpy", 1, 0), -1, "the numpy random state is damaged"),
        (("rng", "torch", 0), -1, "the torch random state is damaged"),
        (("rng", "numpy", 4), DROP, "the numpy random state is damaged"),
        (("rng", "torch", 0), 256, "the torch random state is damaged"),
        (("rng", "torch"), [], "the torch random state is damaged"),
        ((), [1, 2], "is not a JSON object"),
        ((), b"\xff{}", "cannot be read"),
    ],
)
def test_a_damaged_or_foreign_checkpoint_state_is_refused_naming_what(
    tmp_path: Path, where: tuple[str | int, ...], value: Any, says: str | None
) -> None:
    from train import checkpoint

    checkpoint.write(tmp_path, checkpoint.capture(_model(), {"seconds": 12.5}), STANDARD)
    path = tmp_path / "state.json"
    state: Any = json.loads(path.read_text())
    if not where:
        state = value
    else:
        *outer, last = where
        part = state
        for key in outer:
            part = part[key]
        if value is DROP:
            del part[last]
        else:
            part[last] = value
    path.write_bytes(state if isinstance(state, bytes) else json.dumps(state).encode())
    if says is None:
        assert checkpoint.read_state(tmp_path, STANDARD) == state
        return
    with pytest.raises(checkpoint.CheckpointError, match=re.escape(says)) as refused:
        checkpoint.read_state(tmp_path, STANDARD)
    assert str(path) in str(refused.value)
    assert "restore" in str(refused.value) or "set it to 0" in str(refused.value)


def test_an_old_model_zip_alone_is_refused_as_an_older_version(tmp_path: Path) -> None:
    from train import checkpoint

    (tmp_path / "model.zip").write_bytes(b"PK\x03\x04")
    with pytest.raises(checkpoint.CheckpointError, match="model.zip checkpoint of an older"):
        checkpoint.read_state(tmp_path, STANDARD)


@pytest.mark.parametrize(
    ("tensors", "says"),
    [
        (lambda saved, other: None, "is missing"),
        (lambda saved, other: {"policy": saved["policy"]}, "does not hold the policy and"),
        (lambda saved, other: {**saved, "value": saved["policy"]}, "does not hold the policy"),
        (
            lambda saved, other: {**saved, "optimizer": other.optimizer.state_dict()},
            "does not fit the network of the run's arguments (loaded state dict contains",
        ),
    ],
    ids=["missing", "no-optimizer", "more-than-both", "another-networks-optimizer"],
)
def test_a_weights_file_that_is_not_the_runs_is_refused_naming_it(
    tmp_path: Path, tensors: Any, says: str
) -> None:
    from train import checkpoint

    checkpoint.write(tmp_path, checkpoint.capture(_model(), {}), STANDARD)
    state = checkpoint.read_state(tmp_path, STANDARD)
    weights = tmp_path / state["weights"]
    saved = torch.load(weights, weights_only=True)
    replaced = tensors(saved, _model([16, 16]).policy)
    weights.unlink()
    if replaced is not None:
        torch.save(replaced, weights)
    with pytest.raises(
        checkpoint.CheckpointError, match=f"{re.escape(str(weights))}.*{re.escape(says)}"
    ):
        checkpoint.restore(_model(), tmp_path, state)


# -- nothing is unpickled ---------------------------------------------------------------


class _CreatesAFile:
    """Unpickling this creates a file: the proof that a loader ran a pickle's code."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (self.path, "w"))


def _sb3_zip_with_payload(path: Path, marker: Path) -> None:
    """An SB3 model.zip (what checkpoints used to be) whose data entry holds a pickle."""
    payload = base64.b64encode(pickle.dumps(_CreatesAFile(marker))).decode()
    data = {
        "policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": payload},
        "num_timesteps": 512,
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("_stable_baselines3_version", "2.9.2")
    path.write_bytes(buf.getvalue())


def _run_folder(run: Path) -> None:
    args = TrainArgs(out=str(run), timesteps=STEPS, n_envs=1, n_steps=256, batch_size=256,
                     n_epochs=1, net_arch="16", bc_decisions=0, eval_every=0,
                     final_eval_hands=2, baselines="random:1", progress=False)  # fmt: skip
    run.mkdir(parents=True)
    (run / "args.json").write_text(json.dumps(dataclasses.asdict(args)))


def test_an_old_pickled_checkpoint_is_refused_and_never_unpickled(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _run_folder(run)
    marker = tmp_path / "pwned"
    (run / "checkpoint").mkdir()
    _sb3_zip_with_payload(run / "checkpoint" / "model.zip", marker)
    (run / "checkpoint" / "state.json").write_text(json.dumps({"steps": 512, "best": None}))
    done = run_train("--resume", str(run))
    assert not marker.exists(), "resume unpickled the crafted model.zip"
    assert done.returncode == 2, done.stderr
    assert "model.zip" in done.stderr and "not loaded" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_crafted_weights_file_is_refused_and_never_unpickled(
    tmp_path: Path, finished_run: Path
) -> None:
    marker = tmp_path / "pwned"
    for name, write in (
        ("torch zip", lambda p: torch.save({"policy": _CreatesAFile(marker)}, p)),
        ("bare pickle", lambda p: p.write_bytes(pickle.dumps(_CreatesAFile(marker)))),
    ):
        run = _copy(finished_run, tmp_path / name.replace(" ", "_"))
        state = json.loads((run / "checkpoint" / "state.json").read_text())
        write(run / "checkpoint" / state["weights"])
        done = run_train("--resume", str(run), "--timesteps", str(2 * STEPS))
        assert not marker.exists(), f"resume unpickled the crafted weights ({name})"
        assert done.returncode == 2, done.stderr
        assert state["weights"] in done.stderr and "not loaded" in done.stderr, done.stderr


def test_train_never_loads_pickles() -> None:
    """No loader of arbitrary objects anywhere under train/: torch only with
    weights_only=True, numpy only with allow_pickle=False."""
    banned = re.compile(r"\bpickle\.loads?\(|cloudpickle|PPO\.load\(|allow_pickle=True")
    for path in sorted((ROOT / "train").glob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"train/{path.name}:{number}: {line.strip()}"
            assert not banned.search(line), where
            if "torch.load(" in line:
                assert "weights_only=True" in line, where
            if "np.load(" in line:
                assert "allow_pickle=False" in line, where


# -- corrupt files name themselves ------------------------------------------------------


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        (lambda run: (run / "args.json").write_text("{not json"), "args.json"),
        (lambda run: (run / "args.json").write_text('{"n_steps": "many"}'), "args.json"),
        (lambda run: (run / "checkpoint/state.json").write_text("[1, 2"), "state.json"),
        (lambda run: (run / "checkpoint/state.json").write_text('{"format": 1}'), "state.json"),
        (lambda run: (run / "pool/step_2048/policy.json").write_text("{}"), "step_2048"),
        (lambda run: shutil.rmtree(run / "pool/step_1024"), "step_1024"),
    ],
    ids=["args-json", "args-types", "state-json", "state-keys", "pool-sidecar", "pool-missing"],
)
def test_a_damaged_run_folder_names_the_file_and_what_to_do(
    tmp_path: Path, finished_run: Path, damage: object, named: str
) -> None:
    run = _copy(finished_run, tmp_path / "run")
    damage(run)  # type: ignore[operator]
    done = run_train("--resume", str(run), "--timesteps", str(2 * STEPS))
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert named in line
    assert any(w in line for w in ("restore", "delete", "start a new run")), line


def test_a_damaged_or_pickled_warm_start_chunk_names_the_file(tmp_path: Path) -> None:
    import numpy as np

    from train.files import RunFolderError
    from train.pretrain import collect

    def get() -> dict[str, np.ndarray]:
        return collect(
            tmp_path, STANDARD, "random", "random", 20, seed=1, gamma=0.99,
            reward_scale=0.05, workers=1, progress=False,
        )  # fmt: skip

    get()
    (chunk,) = tmp_path.glob("chunk_*.npz")
    marker = tmp_path / "pwned"
    objects = np.array([_CreatesAFile(marker)], dtype=object)
    with open(chunk, "wb") as f:  # an object array: only a pickle can hold it
        np.savez(f, obs=objects, mask=objects, action=objects, ret=objects)
    with pytest.raises(RunFolderError, match=f"{chunk}.*delete it"):
        get()
    assert not marker.exists()
    chunk.write_bytes(b"PK\x03\x04 truncated")
    with pytest.raises(RunFolderError, match=f"{chunk}.*delete it"):
        get()


# -- one trainer per folder -------------------------------------------------------------


def test_a_folder_lock_is_exclusive_and_dies_with_its_process(tmp_path: Path) -> None:
    with FolderLock(tmp_path), pytest.raises(FolderBusyError, match=f"pid {os.getpid()}"):
        FolderLock(tmp_path).acquire()
    lock = FolderLock(tmp_path).acquire()
    lock.release()  # released on exit
    lock.release()  # and again (as a with block's exit after a release) does nothing
    # A process that held the lock and died leaves its pid in the file, not the lock.
    code = "import sys; from train.files import FolderLock; FolderLock(sys.argv[1]).acquire()"
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], cwd=ROOT, check=True)
    assert (tmp_path / "train.lock").read_text().strip().isdigit()
    (tmp_path / "train.lock").write_text("4194304999\n")  # a longer pid than ours
    with FolderLock(tmp_path):
        assert (tmp_path / "train.lock").read_text() == f"{os.getpid()}\n"


def test_a_second_trainer_on_a_run_folder_gets_a_clear_error(
    tmp_path: Path, finished_run: Path
) -> None:
    run = _copy(finished_run, tmp_path / "run")
    with FolderLock(run):  # the first trainer, as far as the second can tell
        done = run_train("--resume", str(run), "--timesteps", str(2 * STEPS))
        fresh = run_train(*TINY, "--timesteps", "256", "--out", str(tmp_path / "run"))
    for result in (done, fresh):
        assert result.returncode == 2, result.stderr
        assert f"{run} is in use by another trainer (pid {os.getpid()})" in result.stderr
    assert not (run / "summary.json").exists()


# -- input checked before any folder is made --------------------------------------------


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--preset", "nope"], "--preset"),
        (["--net-arch", "64,x"], "--net-arch"),
        (["--net-arch", "0"], "--net-arch"),
        (["--reward", "cash"], "--reward"),
        (["--baselines", "expert:-1"], "--baselines"),
        (["--baselines", "nobody:1"], "--baselines"),
        (["--bc-teacher", "wizard"], "--bc-teacher"),
        (["--timesteps", "0"], "--timesteps"),
        (["--timesteps", "-5"], "--timesteps"),
        (["--n-envs", "0"], "--n-envs"),
        (["--n-steps", "0"], "--n-steps"),
        (["--batch-size", "1"], "--batch-size"),
        (["--learning-rate", "0"], "--learning-rate"),
        (["--gamma", "nan"], "--gamma"),
        (["--checkpoint-every", "0"], "--checkpoint-every"),
        (["--snapshot-share", "1.5"], "--snapshot-share"),
        (["--bc-soft-temperature", "-1"], "--bc-soft-temperature"),
        (["--bc-soft-temperature", "2", "--bc-teacher", "expert"], "--bc-soft-temperature"),
        (["--bc-dagger-rounds", "0"], "--bc-dagger-rounds"),
        (["--bc-dagger-rounds", "2"], "--bc-dagger-rounds"),
        (["--players", "9"], "--players"),
        (["--rules", "colour=red"], "--rules"),
        (["--players", "3", "--rules", "players=4"], "--rules"),
        (["--no-teams", "--rules", "teams=true"], "--rules"),
    ],
)
def test_a_bad_argument_is_one_line_and_exit_2_before_any_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], named: str
) -> None:
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as stop:
        main([*flags, "--out", str(out), "--no-progress"])
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith(f"python -m train: error: {named}: "), line
    assert "allowed" in line or "known specs" in line, line
    assert not out.exists()


def test_a_resume_folder_too_long_to_look_up_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long = tmp_path / ("x" * 300)  # looking it up raised OSError (ENAMETOOLONG)
    with pytest.raises(SystemExit) as stop:
        main(["--resume", str(long), "--no-progress"])
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"python -m train: error: --resume {long}: it cannot be looked up " + (
        "(File name too long)"
    )


@pytest.mark.parametrize(
    ("name", "value", "allowed"),
    [
        ("gamma", 1.0, True),  # "at most 1"
        ("gae_lambda", 0.0, True),  # "from 0 to 1"
        ("snapshot_share", 1.0, True),
        ("ent_coef", 0.0, True),  # "0 or more"
        ("gamma", 0.0, False),  # "above 0"
        ("gamma", True, False),  # a Python caller's bool is no number
        ("learning_rate", math.inf, False),
    ],
)
def test_the_ends_of_a_range_are_allowed_as_its_words_say(
    name: str, value: Any, allowed: bool
) -> None:
    args = dataclasses.replace(TrainArgs(), **{name: value})
    if allowed:
        check_args(args)
        return
    with pytest.raises(ArgsError, match=f"^{flag_name(name)}: {value!r} is not allowed"):
        check_args(args)


@pytest.mark.parametrize(
    ("name", "value"),
    [("net_arch", ""), ("net_arch", "64,,64"), ("exp_name", "a/b"), ("exp_name", ".hidden")],
)
def test_a_net_arch_missing_a_size_or_an_exp_name_outside_runs_is_refused(
    name: str, value: Any
) -> None:
    args = dataclasses.replace(TrainArgs(), **{name: value})
    with pytest.raises(ArgsError, match=f"^{flag_name(name)}: {value!r} is not allowed"):
        check_args(args)


@pytest.mark.parametrize(
    "flags, words",
    [(["--eval-hands", "x"], "argument --eval-hands: invalid int value: 'x'"),
     (["--nope"], "unrecognized arguments: --nope")],
)  # fmt: skip
def test_a_value_argparse_cannot_read_is_one_line_too(
    capsys: pytest.CaptureFixture[str], flags: list[str], words: str
) -> None:
    with pytest.raises(SystemExit) as stop:
        main(flags)
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == f"python -m train: error: {words} (--help lists the flags)"


def test_an_out_folder_inside_a_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("not a folder")
    with pytest.raises(SystemExit) as stop:
        main(["--out", str(file / "run"), "--no-progress"])
    assert stop.value.code == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"python -m train: error: --out: {file / 'run'} lies in {file}, which exists and is "
        "not a folder; give a folder"
    )


def test_unknown_rules_keys_get_the_engines_list(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--rules", "colour=red", "--out", "/nonexistent/never"])
    err = capsys.readouterr().err
    assert "colour" in err and "players" in err and "matador_placement" in err


def test_the_command_line_refuses_before_writing_anything(tmp_path: Path) -> None:
    done = run_train("--timesteps", "0", "--out", str(tmp_path / "run"))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "python -m train: error: --timesteps: 0 is not allowed; allowed: an integer, 1 or more"
    )
    assert not (tmp_path / "run").exists()


def test_a_resumed_run_refuses_to_change_its_arguments(tmp_path: Path, finished_run: Path) -> None:
    run = _copy(finished_run, tmp_path / "run")
    done = run_train("--resume", str(run), "--n-steps", "512")
    assert done.returncode == 2
    assert "--n-steps: 512 differs from the run's 256" in done.stderr


# -- rule overrides ---------------------------------------------------------------------


def test_players_and_rules_overrides_train_and_resume_on_those_rules(tmp_path: Path) -> None:
    run = tmp_path / "run"
    flags = ["--preset", "polish", "--players", "3", "--rules", "target_score=150"]
    done = run_train(*TINY, *flags, "--timesteps", "256", "--out", str(run))
    assert done.returncode == 0, done.stderr
    rules = Rules.preset("polish", players=3, target_score=150)
    saved = json.loads((run / "args.json").read_text())
    assert (saved["preset"], saved["players"], saved["rules"]) == (
        "polish", 3, ["target_score=150"]
    )  # fmt: skip
    side = json.loads((run / "best" / "policy.json").read_text())
    assert Rules.from_dict(side["rules"]) == rules
    assert "--players 3" in side["provenance"]["command"]
    assert side["provenance"]["rules"] == rules.to_text()
    state = json.loads((run / "checkpoint" / "state.json").read_text())
    assert Rules.from_dict(state["rules"]) == rules
    again = run_train("--resume", str(run), "--timesteps", "512", "--no-progress")
    assert again.returncode == 0, again.stderr
    assert json.loads((run / "summary.json").read_text())["steps"] == 512
    # The arena refuses the policy for the preset's own rules.
    from evaluate.__main__ import parse_args

    with pytest.raises(SystemExit):
        parse_args(["--vs", f"policy:{run / 'best'}", "--agents", "random", "--preset", "polish"])
