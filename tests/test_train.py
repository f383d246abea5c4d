"""Training end to end with tiny budgets: run, resume, export, load, refuse mismatches."""

from __future__ import annotations

import dataclasses
import json
import math
import random
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # type: ignore[import-untyped]

from agents import make_agent
from matador_env.encoding import encoding_for
from matador_env.engine import HandState, Rules
from matador_env.gym_env import MatadorSingleEnv
from matador_env.policy import BOTS_DIR, PolicyMismatchError, load_policy
from tests.train_runs import final_weights_differ, interrupt_at_first_checkpoint, run_train
from train.export import export_policy
from train.loop import (
    check_best_against_warm_start,
    describe_selection,
    kept_by_lead,
    policy_step,
)

TINY = [
    "--n-envs",
    "1",
    "--n-steps",
    "256",
    "--batch-size",
    "64",
    "--n-epochs",
    "1",
    "--net-arch",
    "32",
    "--eval-workers",
    "1",
    "--bc-decisions",
    "0",
    "--no-progress",
]


def _measured(figures: dict[str, float | None]) -> dict[str, float]:
    """A warm start's figures, every one measured (these fits hold out choices)."""
    assert None not in figures.values(), figures
    return {k: v for k, v in figures.items() if v is not None}


def _train(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run_train(*TINY, *args, timeout=timeout)


def _resume(run: Path) -> subprocess.CompletedProcess[str]:
    """``--resume`` alone: the run's own arguments (TINY could differ from them)."""
    return run_train("--resume", str(run), "--no-progress")


def test_tiny_training_run_end_to_end(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = _train(
        "--timesteps", "1024", "--out", str(run), "--snapshot-every", "512",
        "--checkpoint-every", "512", "--eval-every", "512", "--eval-hands", "4",
        "--final-eval-hands", "6", "--baselines", "random:1,expert:1",
        "--bc-decisions", "600", "--bc-teacher", "expert", "--bc-epochs", "1", "--bc-workers", "1",
        "--select-hands", "6",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "warm start (expert)" in done.stdout
    for name in ("args.json", "summary.json", "summary.md", "learning_curve.png"):
        assert (run / name).is_file(), name
    for folder in ("warm_start", "best", "final", "checkpoint", "pool/step_512", "pool/step_1024"):
        assert (run / folder).is_dir(), folder
    summary = json.loads((run / "summary.json").read_text())
    # A PPO step stays best only after the check against the warm start kept it.
    selection = summary["selection"]
    if policy_step(run / "best") != 0:
        assert selection["kept"] == "ppo" and selection["deals"] == 6
    elif selection is not None:
        assert selection["kept"] == "warm start"
        assert (run / "best" / "policy.onnx").read_bytes() == (
            run / "warm_start" / "policy.onnx"
        ).read_bytes()
    assert summary["steps"] == 1024
    assert set(summary["final_evaluation"]) == {"random", "expert"}
    assert summary["final_evaluation"]["random"]["deals"] == 6
    # The warm start is evaluated at step 0, then every 512 steps.
    assert [e["steps"] for e in summary["evaluations"]] == [0, 512, 1024]
    assert summary["pretrain"]["decisions"] == 600
    # ... and each evaluation, the first included, is in TensorBoard.
    events = EventAccumulator(str(run / "tb" / "ppo_0"))
    events.Reload()
    logged = [e.step for e in events.Scalars("eval/expert_points")]
    assert logged == [0, 512, 1024]
    assert (run / "pretrain" / "chunk_0000_600.npz").is_file()
    assert (run / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # The exported policy is an agent of the arena and plays legal moves.
    agent = make_agent(f"policy:{run / 'best'}")
    rules = Rules.preset("standard")
    rng = random.Random(0)
    for seed in range(3):
        s = HandState.deal(rules, seed)
        while not s.is_over:
            move = agent.act(s.view(s.to_move), rng)
            assert move in s.legal_moves()
            s = s.apply(move)
    # Its sidecar says where it came from.
    side = json.loads((run / "best" / "policy.json").read_text())
    assert side["provenance"]["command"].startswith("python -m train")


def test_an_interrupted_run_resumes_where_it_stopped(tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = [
        *TINY, "--timesteps", "4096", "--out", str(run), "--checkpoint-every", "512",
        "--snapshot-every", "100000", "--eval-every", "0", "--final-eval-hands", "2",
        "--baselines", "random:1",
    ]  # fmt: skip
    # SIGKILL: no chance to save, the last checkpoint counts.
    interrupt_at_first_checkpoint(args, run, signal.SIGKILL)
    saved = json.loads((run / "checkpoint" / "state.json").read_text())["steps"]
    assert 0 < saved < 4096
    assert not (run / "summary.json").exists()
    done = _train("--resume", str(run))
    assert done.returncode == 0, done.stderr
    assert f"resuming {run} at step {saved} of 4096" in done.stdout
    summary = json.loads((run / "summary.json").read_text())
    assert summary["steps"] == 4096
    # The same run folder again without --resume is refused, not overwritten.
    again = _train("--timesteps", "512", "--out", str(run))
    assert again.returncode != 0 and "--resume" in again.stderr


def test_a_run_stopped_in_its_warm_start_resumes_with_the_data_it_had(tmp_path: Path) -> None:
    run = tmp_path / "run"
    bc = ["--bc-decisions", "300", "--bc-teacher", "expert", "--bc-epochs", "1",
          "--select-hands", "0"]  # fmt: skip
    first = _train("--timesteps", "256", "--out", str(run), "--eval-every", "0",
                   "--final-eval-hands", "2", *bc)  # fmt: skip
    assert first.returncode == 0, first.stderr
    # As if stopped after collecting, before the first checkpoint: only args and data.
    chunk = run / "pretrain" / "chunk_0000_300.npz"
    stamp = chunk.stat().st_mtime_ns
    for name in ("checkpoint", "best", "final"):
        shutil.rmtree(run / name)
    (run / "summary.json").unlink()
    done = _resume(run)
    assert done.returncode == 0, done.stderr
    assert chunk.stat().st_mtime_ns == stamp  # the collected decisions were reused
    assert json.loads((run / "summary.json").read_text())["steps"] == 256


def test_resume_of_a_folder_without_a_run_is_refused(tmp_path: Path) -> None:
    done = _train("--resume", str(tmp_path))
    assert done.returncode == 2
    assert "no args.json" in done.stderr


def test_a_seed_numpy_cannot_take_is_refused_before_the_run(tmp_path: Path) -> None:
    # SB3 seeds numpy with it: 2**32 died in the environments' processes.
    done = _train("--seed", str(2**32), "--out", str(tmp_path / "run"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "--seed: 4294967296 is not allowed; allowed: an integer from 0 to 4294967295" in (
        done.stderr
    )
    assert not (tmp_path / "run").exists()


def test_a_new_run_in_a_folder_that_holds_one_is_refused(tmp_path: Path) -> None:
    # The same words as train.rllib's and benchmarks.training's, with the command that
    # continues the run; the folder's run is left as it was.
    (tmp_path / "args.json").write_text("{}")
    done = _train("--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip().endswith(
        f"--out: {tmp_path} already holds a run; use --resume {tmp_path} to continue it"
    )
    assert (tmp_path / "args.json").read_text() == "{}"


def test_training_evaluations_use_the_arena_reports_intervals() -> None:
    """One place for the 95% intervals: train's summary equals the arena report's."""
    from evaluate.arena import Pairing, RunPlan, run
    from evaluate.report import summarize
    from train.loop import summarise

    plan = RunPlan(Rules.preset("standard"), [Pairing("greedy", "random")], 12, 0, seed=3)
    results = run(plan)
    ours = summarise(results)
    theirs = summarize(results, plan.pairings, ["greedy", "random"], {}).pairings[0]
    assert theirs.win is not None and theirs.points is not None
    assert ours["deals"] == theirs.deals == 12
    for key, est in (("win_rate", theirs.win), ("points", theirs.points)):
        assert (ours[key], ours[f"{key}_lo"], ours[f"{key}_hi"]) == (est.mean, est.lo, est.hi)
    # No half width: a rate's interval is not symmetric about it.
    assert not any(key.endswith("_ci") for key in ours)


def test_cloned_decisions_are_reproducible_and_reused(tmp_path: Path) -> None:
    from train.pretrain import collect

    def get() -> dict[str, np.ndarray]:
        return collect(
            tmp_path / "pre", Rules.preset("standard"), "expert", "random", 300, seed=4, gamma=0.99,
            reward_scale=0.05, workers=1, progress=False,
        )  # fmt: skip

    first = get()
    assert first["obs"].shape == (300, encoding_for(Rules.preset("standard")).obs_size)
    # Every recorded action is legal, and the returns are those of hands of points.
    assert first["mask"][np.arange(300), first["action"]].all()
    assert np.abs(first["ret"]).max() > 0
    chunk = tmp_path / "pre" / "chunk_0000_300.npz"
    stamp = chunk.stat().st_mtime_ns
    again = get()  # reuses the chunk on disk
    assert chunk.stat().st_mtime_ns == stamp
    chunk.unlink()
    fresh = get()  # collected again from the same seed: the same decisions
    for key in first:
        assert np.array_equal(first[key], again[key])
        assert np.array_equal(first[key], fresh[key])


def test_cloning_fit_learns_the_teachers_moves(tmp_path: Path) -> None:
    from train.pretrain import collect, fit

    data = collect(
        tmp_path / "pre", Rules.preset("standard"), "expert", "random", 4000, seed=2, gamma=0.99,
        reward_scale=0.05, workers=1, progress=False,
    )  # fmt: skip
    env = MatadorSingleEnv(preset="standard")

    def fitted(epochs: int) -> dict[str, float]:
        model = MaskablePPO(
            "MlpPolicy", env, seed=5, device="cpu", policy_kwargs={"net_arch": [64, 64]}
        )
        return _measured(fit(model.policy, data, epochs, 128, 3e-3, 0.5, seed=5, progress=False))

    before, after = fitted(0), fitted(6)
    assert before["held_out"] == after["held_out"] == 200
    # The same held-out decisions: the fit must move the policy towards the teacher's
    # choices (an untrained network picks among the legal moves about at random).
    assert after["held_out_agreement"] > before["held_out_agreement"] + 0.2
    assert after["held_out_cross_entropy"] < before["held_out_cross_entropy"]
    assert after["held_out_value_mse"] < before["held_out_value_mse"]


@pytest.fixture(scope="module")
def tiny_model() -> MaskablePPO:
    env = MatadorSingleEnv(preset="standard")
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=3, device="cpu")
    model.learn(256)
    return model


def test_onnx_and_torch_policies_choose_the_same_actions(
    tmp_path: Path, tiny_model: MaskablePPO
) -> None:
    rules = Rules.preset("standard")
    export_policy(tiny_model.policy, rules, tmp_path / "p")
    onnx = load_policy(tmp_path / "p", rules=rules)
    env = MatadorSingleEnv(rules=rules)
    compared = 0
    for seed in range(20):
        obs, _ = env.reset(seed=seed)
        done = False
        while not done:
            mask = env.action_masks()
            torch_action, _ = tiny_model.predict(obs, action_masks=mask, deterministic=True)
            assert onnx.act(obs, mask) == int(torch_action)
            with torch.no_grad():
                t_obs = torch.as_tensor(obs[None, :])
                dist = tiny_model.policy.get_distribution(t_obs)
                categorical = cast(torch.distributions.Categorical, dist.distribution)
                torch_logits = categorical.logits.numpy()[0]
            # Same logits up to float error (the distribution normalises them).
            onnx_logits = onnx.logits(obs)
            shift = onnx_logits - torch_logits
            assert np.allclose(shift, shift[0], atol=1e-4)
            compared += 1
            obs, _, done, _, _ = env.step(int(torch_action))
    assert compared > 100


def test_a_policy_is_refused_for_other_rules(tmp_path: Path, tiny_model: MaskablePPO) -> None:
    standard = Rules.preset("standard")
    export_policy(tiny_model.policy, standard, tmp_path / "p")
    with pytest.raises(PolicyMismatchError, match="matador_placement: policy 'inline'"):
        load_policy(tmp_path / "p", rules=Rules.preset("polish"))
    policy = load_policy(tmp_path / "p")
    polish_view = HandState.deal(Rules.preset("polish"), 1).view(0)
    with pytest.raises(PolicyMismatchError, match="trained for standard"):
        policy.choose(polish_view)
    # A sidecar from another encoding version is refused as well.
    side = tmp_path / "p" / "policy.json"
    data = json.loads(side.read_text())
    data["encoding_version"] += 1
    side.write_text(json.dumps(data))
    with pytest.raises(PolicyMismatchError, match="encoding version"):
        load_policy(tmp_path / "p")


def test_loading_names_what_is_missing(tmp_path: Path) -> None:
    from matador_env.policy import PolicyError

    with pytest.raises(PolicyError, match="does not exist"):
        load_policy(tmp_path / "nothing")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "policy.onnx").write_bytes(b"not onnx")
    with pytest.raises(PolicyError, match="no sidecar"):
        load_policy(tmp_path / "x")


def test_the_encoding_sizes_match_the_exported_graph(
    tmp_path: Path, tiny_model: MaskablePPO
) -> None:
    rules = Rules.preset("standard")
    export_policy(tiny_model.policy, rules, tmp_path / "p")
    policy = load_policy(tmp_path / "p")
    enc = encoding_for(rules)
    batch = np.zeros((5, enc.obs_size), np.float32)
    assert policy.logits(batch).shape == (5, enc.num_actions)


def _dagger_run(run: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """A tiny run cloning expert from 400 decisions, with DAgger rounds of 300."""
    return _train(
        "--timesteps", "256", "--out", str(run), "--eval-every", "0", "--eval-hands", "2",
        "--final-eval-hands", "2", "--bc-decisions", "400", "--bc-teacher", "expert",
        "--bc-epochs", "1", "--bc-workers", "1", "--bc-dagger-decisions", "300",
        "--select-hands", "0", *extra,
    )  # fmt: skip


def test_dagger_round_collects_under_the_clone_and_refits_on_both(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = _dagger_run(run)
    assert done.returncode == 0, done.stderr
    pretrain = json.loads((run / "summary.json").read_text())["pretrain"]
    assert pretrain["dagger_decisions"] == 300
    assert pretrain["decisions"] == 700  # the second fit sees both rounds
    assert 0.0 <= pretrain["first_round_agreement"] <= 1.0
    load_policy(run / "pretrain" / "dagger_driver", rules=Rules.preset("standard"))
    assert [p.name for p in (run / "pretrain" / "dagger").glob("*.npz")] == ["chunk_0000_300.npz"]


def test_dagger_rounds_each_collect_under_the_latest_fit(tmp_path: Path) -> None:
    run = tmp_path / "run"
    done = _dagger_run(run, "--bc-dagger-rounds", "2")
    assert done.returncode == 0, done.stderr
    assert "warm start, DAgger round 1:" in done.stdout
    pretrain = json.loads((run / "summary.json").read_text())["pretrain"]
    assert pretrain["decisions"] == 1000  # the last fit sees every collection
    assert pretrain["dagger_rounds"] == 2
    rules = Rules.preset("standard")
    first, second = run / "pretrain" / "dagger_driver", run / "pretrain" / "dagger_driver_2"
    load_policy(first, rules=rules)
    load_policy(second, rules=rules)
    # The second round's driver is the fit on the first two collections, not the first fit.
    assert (first / "policy.onnx").read_bytes() != (second / "policy.onnx").read_bytes()
    from train.pretrain import _load_chunk

    one = _load_chunk(run / "pretrain" / "dagger" / "chunk_0000_300.npz")
    two = _load_chunk(run / "pretrain" / "dagger_2" / "chunk_0000_300.npz")
    # Seeded apart: the rounds do not deal the same hands.
    assert not np.array_equal(one["obs"][0], two["obs"][0])


def test_a_driver_plays_the_learner_seat_while_the_teacher_labels(tmp_path: Path) -> None:
    from train.pretrain import ChunkJob, _collect_chunk, _load_chunk

    rules = Rules.preset("standard")
    # An untrained network plays differently from expert: the states part ways.
    driver = tmp_path / "driver"
    model = MaskablePPO("MlpPolicy", MatadorSingleEnv(rules=rules), seed=3, device="cpu")
    export_policy(model.policy, rules, driver)

    def chunk(name: str, with_driver: bool) -> dict[str, np.ndarray]:
        job = ChunkJob(
            rules.to_dict(), "expert", "expert", 120, 7, 0.99, 0.05, str(tmp_path / name),
            str(driver) if with_driver else None,
        )  # fmt: skip
        return _load_chunk(Path(_collect_chunk(job)))

    plain, dagger = chunk("plain.npz", False), chunk("dagger.npz", True)
    # The same deals, so the first decision is the same; later states differ.
    assert np.array_equal(plain["obs"][0], dagger["obs"][0])
    assert not np.array_equal(plain["obs"], dagger["obs"])
    # Every label is a legal action of its state, and it is the teacher's (expert is
    # deterministic: where the states agree, the labels agree).
    assert dagger["mask"][np.arange(120), dagger["action"]].all()
    same = (plain["obs"] == dagger["obs"]).all(axis=1)
    assert same.sum() >= 1
    assert np.array_equal(plain["action"][same], dagger["action"][same])


def test_skip_forced_records_only_real_choices(tmp_path: Path) -> None:
    from train.pretrain import ChunkJob, _collect_chunk, _load_chunk

    rules = Rules.preset("kardinal")  # draws one tile at a time: many forced moves

    def chunk(name: str, skip: bool) -> dict[str, np.ndarray]:
        job = ChunkJob(
            rules.to_dict(), "expert", "expert", 300, 7, 0.99, 0.05, str(tmp_path / name),
            None, skip,
        )  # fmt: skip
        return _load_chunk(Path(_collect_chunk(job)))

    every, choices = chunk("every.npz", False), chunk("choices.npz", True)
    assert len(choices["action"]) == 300
    assert (every["mask"].sum(axis=1) == 1).sum() > 50
    assert (choices["mask"].sum(axis=1) > 1).all()
    # The same hands: the choices are the recorded-everything rows with a choice, in
    # order, with the same labels and returns (the return still counts every step).
    real = every["mask"].sum(axis=1) > 1
    n = min(int(real.sum()), 300)
    for key in ("obs", "action", "ret"):
        assert np.array_equal(every[key][real][:n], choices[key][:n])


def test_a_search_teacher_records_its_candidates_and_their_values(tmp_path: Path) -> None:
    from train.pretrain import ChunkJob, _collect_chunk, _load_chunk

    rules = Rules.preset("leiden")
    job = ChunkJob(
        rules.to_dict(), "search:samples=4", "expert", 120, 3, 0.99, 0.05, str(tmp_path / "c.npz")
    )
    data = _load_chunk(Path(_collect_chunk(job)))
    cands, values = data["cand"], data["value"]
    assert cands.shape == values.shape == (120, 6)  # the search's width
    several = (cands >= 0).sum(axis=1) > 1
    assert several.sum() > 10
    for row in np.flatnonzero(several):
        valid = cands[row] >= 0
        # Candidates come first, are legal, and the teacher's choice ranks first.
        assert valid[: valid.sum()].all()
        assert data["mask"][row, cands[row][valid]].all()
        assert cands[row][np.argmax(np.where(valid, values[row], -np.inf))] == data["action"][row]
    # The choices are those the same teacher makes through act(): the same decisions.
    plain = _collect_chunk(
        ChunkJob(rules.to_dict(), "search:samples=4", "expert", 120, 3, 0.99, 0.05,
                 str(tmp_path / "p.npz"))
    )  # fmt: skip
    assert np.array_equal(_load_chunk(Path(plain))["action"], data["action"])
    # A teacher that only chooses records no candidates.
    job = ChunkJob(rules.to_dict(), "expert", "expert", 50, 3, 0.99, 0.05, str(tmp_path / "e.npz"))
    assert _load_chunk(Path(_collect_chunk(job)))["cand"].shape == (50, 0)


def test_the_warm_start_collects_the_returns_of_the_runs_reward(tmp_path: Path) -> None:
    """The value head is fitted to the returns PPO will see: under --reward win they are
    the win reward's (it fitted the score's, about 60 times larger), and a chunk
    collected under another reward is refused, not mixed in."""
    from train.files import RunFolderError
    from train.pretrain import collect

    rules = Rules.preset("standard")

    def returns(folder: str, reward: str) -> np.ndarray:
        data = collect(
            tmp_path / folder, rules, "expert", "expert", 200, seed=4, gamma=1.0,
            reward_scale=1.0, workers=1, progress=False, reward=reward,
        )  # fmt: skip
        return np.asarray(data["ret"])

    win, score = returns("win", "win"), returns("score", "score")
    # Undiscounted: every decision's return is its hand's result for the learner.
    assert set(np.unique(win)) <= {-1.0, 0.0, 1.0} and len(np.unique(win)) >= 2
    assert np.abs(score).max() > 5
    assert np.array_equal(np.sign(win), np.sign(score))  # the same hands, won and lost
    with pytest.raises(RunFolderError, match=r"holds returns of the 'win' reward, .* 'score'"):
        returns("win", "score")
    # The US spelling is the same reward; a chunk collected before the reward was
    # recorded is a score chunk.
    returns("normalised", "normalized")
    chunk = next((tmp_path / "score").glob("chunk_*.npz"))
    with np.load(chunk) as data:
        old = {k: data[k] for k in data.files if k != "reward"}
    np.savez(chunk, **old)
    assert np.array_equal(returns("score", "score"), score)
    with pytest.raises(RunFolderError, match="'score' reward"):
        returns("score", "win")


def test_soft_targets_spread_over_the_candidates_by_their_values() -> None:
    from train.pretrain import soft_targets

    cands = torch.tensor([[3, 1, 4, -1], [2, -1, -1, -1], [-1, -1, -1, -1]])
    values = torch.tensor([[2.0, 0.0, 2.0, 0.0], [5.0, 0, 0, 0], [0.0, 0, 0, 0]])
    actions = torch.tensor([3, 2, 0])
    target = soft_targets(cands, values, actions, 6, temperature=2.0)
    assert torch.allclose(target.sum(dim=1), torch.ones(3))
    e = float(np.exp(1.0))
    spread = [0, 1 / (2 * e + 1), 0, e / (2 * e + 1), e / (2 * e + 1), 0]
    assert torch.allclose(target[0], torch.tensor(spread, dtype=torch.float32))
    # One candidate, or none recorded (a forced move): all on the teacher's action.
    assert target[1].tolist() == [0, 0, 1, 0, 0, 0]
    assert target[2].tolist() == [1, 0, 0, 0, 0, 0]
    # A cold softmax is the hard target.
    cold = soft_targets(cands[:1], torch.tensor([[3.0, 0.0, 2.0, 0.0]]), actions[:1], 6, 0.01)
    assert cold[0].argmax().item() == 3 and cold[0, 3].item() > 0.999


def test_soft_target_cloning_learns_and_needs_candidate_values(tmp_path: Path) -> None:
    from train.files import RunFolderError
    from train.pretrain import collect, fit

    rules = Rules.preset("standard")
    data = collect(
        tmp_path / "pre", rules, "search:samples=8,width=3", "random", 3000, seed=2, gamma=0.99,
        reward_scale=0.05, workers=1, progress=False,
    )  # fmt: skip
    env = MatadorSingleEnv(rules=rules)

    def fitted(epochs: int, data: dict[str, np.ndarray]) -> dict[str, float]:
        model = MaskablePPO(
            "MlpPolicy", env, seed=5, device="cpu", policy_kwargs={"net_arch": [64, 64]}
        )
        return _measured(
            fit(model.policy, data, epochs, 128, 3e-3, 0.5, 5, False, soft_temperature=1.0)
        )

    before, after = fitted(0, data), fitted(6, data)
    assert after["held_out_agreement"] > before["held_out_agreement"] + 0.1
    assert after["held_out_cross_entropy"] < before["held_out_cross_entropy"]
    assert after["held_out_value_mse"] < before["held_out_value_mse"]
    old = {k: v for k, v in data.items() if k not in ("cand", "value")}  # an older run's data
    with pytest.raises(RunFolderError, match="delete the run's pretrain/"):
        fitted(1, old)


def test_the_recipe_choices_are_fixed_in_args_json(tmp_path: Path) -> None:
    from train.args import ArgsError
    from train.run import TrainArgs, load_run_args, recipe_decisions, recipe_teacher

    four = Rules.preset("standard", players=4)
    assert recipe_teacher("auto", Rules.preset("standard")) == "search:samples=64"
    assert recipe_teacher("auto", Rules.preset("double_twelve")) == "search:samples=32"
    assert recipe_teacher("auto", four) == "search:samples=256"
    four_nine = Rules.preset("double_nine", players=4)
    assert recipe_teacher("auto", four_nine) == "search:samples=32"
    assert recipe_teacher("expert", four) == "expert"
    assert [recipe_decisions(-1, r) for r in (Rules.preset("leiden"), four, four_nine)] == [
        150_000,
        150_000,
        100_000,
    ]
    assert recipe_decisions(5, four_nine) == 5
    # A run folder whose args.json left the teacher to be chosen cannot be resumed.
    run = tmp_path / "run"
    run.mkdir()
    args = TrainArgs(out=str(run), bc_decisions=500)  # bc_teacher: "auto"
    (run / "args.json").write_text(json.dumps(dataclasses.asdict(args)))
    with pytest.raises(ArgsError, match="bc_teacher is 'auto', not fixed"):
        load_run_args(run, {})
    # A run from before --bc-skip-forced recorded forced moves: it resumes so.
    stored = dataclasses.asdict(dataclasses.replace(args, bc_teacher="expert"))
    del stored["bc_skip_forced"]
    (run / "args.json").write_text(json.dumps(stored))
    assert load_run_args(run, {}).bc_skip_forced is False
    stored["bc_skip_forced"] = True
    (run / "args.json").write_text(json.dumps(stored))
    assert load_run_args(run, {}).bc_skip_forced is True


def _policy_at_step(src: Path, dst: Path, step: int) -> None:
    """A copy of the exported policy ``src`` whose provenance says it was taken at ``step``."""
    shutil.copytree(src, dst)
    sidecar = json.loads((dst / "policy.json").read_text())
    sidecar["provenance"] = {**(sidecar.get("provenance") or {}), "steps": step}
    (dst / "policy.json").write_text(json.dumps(sidecar))


@pytest.mark.parametrize("ppo_is_strong", [True, False])
def test_the_best_ppo_policy_stays_only_if_it_beats_the_warm_start(
    tmp_path: Path, tiny_model: MaskablePPO, ppo_is_strong: bool
) -> None:
    rules = Rules.preset("standard")
    strong, weak = tmp_path / "strong", tmp_path / "weak"
    shutil.copytree(BOTS_DIR / "standard", strong)
    export_policy(tiny_model.policy, rules, weak)  # 256 steps of PPO from scratch
    run = tmp_path / "run"
    _policy_at_step(strong if ppo_is_strong else weak, run / "best", 51_200)
    _policy_at_step(weak if ppo_is_strong else strong, run / "warm_start", 0)
    candidate = (run / "best" / "policy.onnx").read_bytes()
    record = check_best_against_warm_start(run, rules, deals=30, seed=4, workers=1)
    assert record is not None
    assert record["candidate_step"] == 51_200 and record["deals"] == 30
    assert json.loads((run / "selection.json").read_text()) == record
    if ppo_is_strong:
        assert record["kept"] == "ppo" and record["lead_lo"] > 0
        assert (run / "best" / "policy.onnx").read_bytes() == candidate
    else:
        assert record["kept"] == "warm start" and record["lead_hi"] < 0
        assert (run / "best" / "policy.onnx").read_bytes() == (
            run / "warm_start" / "policy.onnx"
        ).read_bytes()
        # The check is done: asked again (a finish interrupted after it), the warm
        # start stays and the record is the same, without playing again.
        assert check_best_against_warm_start(run, rules, 30, 4, 1) == record
    # Without a warm start, or with no deals, there is nothing to check.
    assert check_best_against_warm_start(tmp_path / "strong", rules, 30, 4, 1) is None
    assert check_best_against_warm_start(run, rules, 0, 4, 1) is None


def _strict_json(text: str) -> Any:
    """``text`` read as strict JSON (RFC 8259, as JavaScript and jq read it): no
    ``Infinity`` or ``NaN``."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def test_a_one_deal_check_writes_its_unbounded_interval_as_null(
    tmp_path: Path, tiny_model: MaskablePPO
) -> None:
    # One deal gives the lead no interval: (-inf, +inf) in memory, null in the file,
    # and the sentence reads the same from either.
    rules = Rules.preset("standard")
    run = tmp_path / "run"
    _policy_at_step(BOTS_DIR / "standard", run / "best", 51_200)
    export_policy(tiny_model.policy, rules, run / "warm_start")
    record = check_best_against_warm_start(run, rules, deals=1, seed=4, workers=1)
    assert record is not None and record["lead_lo"] == -math.inf
    written = _strict_json((run / "selection.json").read_text())
    assert written["lead_lo"] is None and written["lead_hi"] is None
    assert written["lead_points"] == record["lead_points"]
    assert describe_selection(written) == describe_selection(record)
    assert "[-inf, +inf] points per hand" in describe_selection(written)


def test_one_deal_evaluations_are_written_as_strict_json(tmp_path: Path) -> None:
    # The evaluations' and the summary's unbounded figures are null, and a finished
    # run's summary is still read back (a resume prints it) with them.
    from train.run import finished_summary

    run = tmp_path / "run"
    done = _train(
        "--timesteps", "256", "--out", str(run), "--eval-every", "256", "--eval-hands", "1",
        "--final-eval-hands", "1", "--select-hands", "0", "--baselines", "random",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = (run / "evaluations.jsonl").read_text().splitlines()
    assert lines and all(_strict_json(line)["expert/points_lo"] is None for line in lines)
    summary = _strict_json((run / "summary.json").read_text())
    assert summary["final_evaluation"]["expert"]["points_lo"] is None
    text = finished_summary(run, 256)
    assert text is not None and "[-inf, +inf] |" in text


def test_the_check_keeps_the_higher_mean_lead_significant_or_not() -> None:
    # Fresh deals make the mean an unbiased estimate: a lead the interval cannot
    # separate from 0 still keeps the PPO policy, and only a tie or a loss keeps the
    # warm start.
    assert kept_by_lead(1.77) == "ppo"
    assert kept_by_lead(0.01) == "ppo"
    assert kept_by_lead(0.0) == "warm start"
    assert kept_by_lead(-0.06) == "warm start"


def test_a_ppo_policy_no_better_than_the_warm_start_is_not_kept(tmp_path: Path) -> None:
    # The same policy twice: every deal plays out the same, the lead is exactly 0.
    rules = Rules.preset("standard")
    run = tmp_path / "run"
    _policy_at_step(BOTS_DIR / "standard", run / "best", 51_200)
    _policy_at_step(BOTS_DIR / "standard", run / "warm_start", 0)
    record = check_best_against_warm_start(run, rules, deals=10, seed=4, workers=1)
    assert record is not None
    assert record["lead_points"] == 0 and record["kept"] == "warm start"
    assert policy_step(run / "best") == 0


def test_a_run_stopped_in_its_warm_start_evaluation_evaluates_it_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The warm start's checkpoint is written before its evaluation; a run stopped
    between the two does that evaluation when it resumes, as an uninterrupted run did."""
    from train.loop import Trainer
    from train.run import main

    args = [
        *TINY, "--timesteps", "256", "--eval-every", "256", "--eval-hands", "2",
        "--final-eval-hands", "2", "--bc-decisions", "300", "--bc-teacher", "expert",
        "--bc-epochs", "1", "--bc-workers", "1", "--select-hands", "0", "--baselines", "random",
    ]  # fmt: skip
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    main([*args, "--out", str(whole)])
    evaluate = Trainer.periodic_evaluation

    def stopped_at_step_0(self: Trainer) -> None:
        if self.steps == 0:
            raise KeyboardInterrupt
        evaluate(self)

    with monkeypatch.context() as patch:
        patch.setattr(Trainer, "periodic_evaluation", stopped_at_step_0)
        with pytest.raises(KeyboardInterrupt):
            main([*args, "--out", str(cut)])
    assert json.loads((cut / "checkpoint" / "state.json").read_text())["evaluations"] == []
    main(["--resume", str(cut), "--no-progress"])
    expected = json.loads((whole / "summary.json").read_text())["evaluations"]
    got = json.loads((cut / "summary.json").read_text())["evaluations"]
    assert [e["steps"] for e in got] == [e["steps"] for e in expected] == [0, 256]
    drop = {"elapsed"}
    assert [{k: v for k, v in e.items() if k not in drop} for e in got] == [
        {k: v for k, v in e.items() if k not in drop} for e in expected
    ]
    # From the step-0 checkpoint, SB3 deals the environments as the whole run did.
    assert final_weights_differ(cut, whole) == []
