"""``python -m train --vector-envs N`` (issue #13): MaskablePPO on the batched vector
environment, opponents played inside the batch, checkpoints and resume as without it."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from matador_env.batch import _kernels as K
from matador_env.engine import Rules
from matador_env.vector import VectorEnv
from tests.train_runs import (
    final_weights_differ,
    interrupt_at_first_checkpoint,
    new_run,
    run_train,
)
from train.selfplay import BatchOpponentPool, snapshot_dirs

# 8 slots of 32 steps: 256 steps a rollout, one pass over it, an update per rollout.
TINY = [
    "--vector-envs", "8", "--n-envs", "1", "--n-steps", "256", "--batch-size", "256",
    "--n-epochs", "1", "--net-arch", "16", "--eval-workers", "1", "--bc-decisions", "0",
    "--no-progress", "--eval-every", "0", "--final-eval-hands", "2", "--baselines", "random",
]  # fmt: skip
STEPS = 6144
UPDATES = STEPS // 256


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted vector run of :data:`STEPS` steps, with snapshots."""
    run = tmp_path_factory.mktemp("train_vector") / "uninterrupted"
    done = run_train(*new_run(TINY, STEPS, run))
    assert done.returncode == 0, done.stderr
    return run


def test_a_vector_run_trains_snapshots_and_exports(finished_run: Path) -> None:
    summary = json.loads((finished_run / "summary.json").read_text())
    assert (summary["steps"], summary["n_updates"]) == (STEPS, UPDATES)
    assert [d.name for d in snapshot_dirs(finished_run / "pool")][:2] == ["step_512", "step_1024"]
    for folder in ("best", "final"):
        assert (finished_run / folder / "policy.onnx").is_file()
    assert json.loads((finished_run / "args.json").read_text())["vector_envs"] == 8


def test_a_resumed_vector_run_does_the_updates_and_steps_of_an_uninterrupted_one(
    tmp_path: Path, finished_run: Path
) -> None:
    run = tmp_path / "run"
    interrupt_at_first_checkpoint(new_run(TINY, STEPS, run), run)
    saved = json.loads((run / "checkpoint" / "state.json").read_text())
    assert 0 < saved["steps"] < STEPS
    assert saved["steps"] % 256 == 0
    assert saved["n_updates"] == saved["steps"] // 256

    done = run_train("--resume", str(run), "--no-progress")
    assert done.returncode == 0, done.stderr
    assert f"resuming {run} at step {saved['steps']}" in done.stdout
    resumed = json.loads((run / "summary.json").read_text())
    assert (resumed["steps"], resumed["n_updates"]) == (STEPS, UPDATES)
    # The same games and the same updates: the same policy to the bit.
    assert final_weights_differ(run, finished_run) == []


def test_a_vector_checkpoint_whose_games_no_play_reaches_is_refused(
    tmp_path: Path, finished_run: Path
) -> None:
    # A state.json edited or damaged: a hand running with as many passes in a row as
    # there are seats, which end it. The batch kernels index by such counters
    # unchecked, so resuming from one must stop with the value named.
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    state_path = run / "checkpoint" / "state.json"
    state = json.loads(state_path.read_text())
    engine = state["envs"]["states"]["vector"]["engine"]
    running = [b for b, st in enumerate(engine["st"]) if st[K.OVER] == 0][0]
    engine["st"][running][K.PASSES] = 2
    state_path.write_text(json.dumps(state))
    done = run_train("--resume", str(run), "--no-progress", "--timesteps", str(STEPS + 256))
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "the saved environments do not fit" in lines[0]
    assert f"slot {running}: the hand runs but has 2 passes in a row" in lines[0]


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--baselines", "expert:0.8,random:0.2"], ["--baselines", "'expert'", "random"]),
        (["--baselines", "greedy"], ["--baselines", "'greedy'", "--vector-envs"]),
        (["--vector-envs", "3"], ["--vector-envs", "divide", "256"]),
        (["--vector-envs", "-1"], ["--vector-envs", "0 or more"]),
    ],
)
def test_vector_flags_the_batch_cannot_play_are_refused_before_any_folder(
    tmp_path: Path, flags: list[str], words: list[str]
) -> None:
    run = tmp_path / "run"
    done = run_train(*TINY, "--timesteps", "256", "--out", str(run), *flags)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("python -m train: error: ")
    for word in words:
        assert word in lines[0]
    assert not run.exists()


class _Recorder(BatchOpponentPool):
    """The pool, recording which opponent each (slot, episode) played."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.played: dict[tuple[int, int], set[str]] = defaultdict(set)

    def __call__(
        self, obs: np.ndarray, masks: np.ndarray, slots: np.ndarray, episodes: np.ndarray
    ) -> np.ndarray:
        actions = super().__call__(obs, masks, slots, episodes)
        assert masks[np.arange(len(slots)), actions].all()
        for slot, episode in zip(slots.tolist(), episodes.tolist(), strict=True):
            self.played[(slot, episode)].add(self.current[slot])
        return actions


def _play(pool: BatchOpponentPool, steps: int = 200) -> None:
    env = VectorEnv(16, Rules(), mode="learner", opponents=pool, opponent_slots=True, seed=3)
    _, masks, _ = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(steps):
        actions = [int(rng.choice(np.flatnonzero(m))) for m in masks]
        _, masks, *_ = env.step(actions)


def test_each_slot_keeps_its_opponent_for_an_episode_and_snapshots_play(
    finished_run: Path,
) -> None:
    pool = _Recorder(finished_run / "pool", snapshot_share=0.5, latest_share=0.5, seed=1)
    _play(pool)
    assert all(len(names) == 1 for names in pool.played.values())
    names = set().union(*pool.played.values())
    assert "random" in names
    assert len({n for n in names if n.startswith("snapshot:step_")}) >= 2
    # Several episodes per slot, drawn again at each.
    assert max(episode for _, episode in pool.played) >= 3


def test_without_snapshots_the_batch_opponents_are_random(tmp_path: Path) -> None:
    pool = _Recorder(tmp_path / "no_pool", snapshot_share=1.0, seed=1)
    _play(pool, steps=50)
    assert set().union(*pool.played.values()) == {"random"}


def _peaked_snapshot(pool_dir: Path) -> Path:
    """A real exported policy whose logits are far from uniform (its action layer drawn
    large), so that sampling it differs from a uniform choice."""
    import torch
    from sb3_contrib import MaskablePPO

    from matador_env.vector import sb3_vec_env
    from train.export import export_policy

    torch.manual_seed(0)
    env = sb3_vec_env(VectorEnv(2, Rules(), mode="learner"))
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=8, seed=0,
                        policy_kwargs={"net_arch": [16]}, device="cpu")  # fmt: skip
    with torch.no_grad():
        cast(torch.nn.Linear, model.policy.action_net).weight.normal_(0.0, 3.0)
    export_policy(model.policy, Rules(), pool_dir / "step_1")
    return pool_dir / "step_1"


def test_a_snapshot_opponent_samples_its_network(tmp_path: Path) -> None:
    from matador_env.policy import load_policy

    snapshot = _peaked_snapshot(tmp_path / "pool")
    pool = BatchOpponentPool(tmp_path / "pool", snapshot_share=1.0, latest_share=1.0)
    net = load_policy(snapshot)
    env = VectorEnv(64, Rules(), mode="self_play", seed=5)
    obs, masks, _ = env.reset()
    slots = np.arange(64)
    draws = 400
    counts = np.zeros(masks.shape)
    for _ in range(draws):
        chosen = pool(obs, masks, slots, np.zeros(64, np.int64))
        counts[slots, chosen] += 1
    assert set(pool.current.values()) == {"snapshot:step_1"}
    legal = masks.astype(bool)
    assert (counts[~legal] == 0).all()
    logits = np.where(legal, net.logits(obs), -np.inf)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs /= probs.sum(axis=1, keepdims=True)
    uniform = legal / legal.sum(axis=1, keepdims=True)
    off_net = np.abs(counts / draws - probs).sum(axis=1).mean()
    net_vs_uniform = np.abs(probs - uniform).sum(axis=1).mean()
    # Sampling noise is far below the network's distance from a uniform choice.
    assert net_vs_uniform > 0.5
    assert off_net < net_vs_uniform / 4


@pytest.mark.parametrize("vector", [True, False], ids=["vector-envs", "n-envs"])
def test_runs_of_adjacent_seeds_play_no_common_deal(tmp_path: Path, vector: bool) -> None:
    """MaskablePPO(seed=S) seeds environment i with S + i: --seed 2's first environment
    played --seed 1's second one's deals, seats and opponents. Each run's environments
    take seeds of their own (train.loop.env_seed)."""
    from train.loop import Trainer, env_seed
    from train.run import TrainArgs

    def first_deals(seed: int) -> list[int]:
        out = tmp_path / f"run_{seed}_{vector}"
        args = TrainArgs(
            out=str(out), bc_decisions=0, progress=False, eval_every=0, seed=seed,
            n_steps=256, batch_size=64, net_arch="16", baselines="random",
            vector_envs=4 if vector else 0, n_envs=1 if vector else 2,
        )  # fmt: skip
        trainer = Trainer(args, out, Rules.preset("standard"))
        try:
            trainer.venv.reset()  # what learn() does first
            if vector:
                return [int(s) for s in trainer._batch().eng.hand_seeds]
            return [state["game"]["seed"] for state in trainer.venv.env_method("live_state")]
        finally:
            trainer.venv.close()

    one, two = first_deals(1), first_deals(2)
    assert len(set(one)) == len(one) and not set(one) & set(two)
    if vector:
        # The slots are those of the vector env seeded with the run's env_seed.
        env = VectorEnv(
            4, Rules.preset("standard"), mode="learner", seed=env_seed(TrainArgs(seed=1))
        )
        env.reset()
        assert [int(s) for s in env.eng.hand_seeds] == one
