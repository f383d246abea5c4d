"""Self-play training of a MaskablePPO agent: ``python -m train --preset standard ...``.

One run writes everything into its folder (``runs/{exp}__{preset}__{seed}__{time}``
unless ``--out`` names it)::

    args.json            the arguments (also a table in TensorBoard)
    pretrain/            the teacher's decisions cloned before PPO (--bc-decisions,
                         see pretrain.py), collected in chunks an interrupted run reuses
    checkpoint/          model.zip + state.json, rewritten atomically every
                         --checkpoint-every steps; --resume continues from here
    pool/step_<N>/       frozen snapshots of the learner (opponents, see selfplay.py)
    best/, final/        model.zip + policy.onnx + policy.json (the exported policy)
    tb/                  TensorBoard logs
    evaluations.jsonl    one line per periodic evaluation
    learning_curve.png   evaluation figures against the step count
    summary.json/.md     the final evaluation of the best policy

The exported policy plays as the agent ``policy:<run>/best`` and needs no torch.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .args import parse
from .files import atomic_write_json


@dataclass
class TrainArgs:
    """Self-play MaskablePPO training for Matador."""

    exp_name: str = "ppo"
    """Experiment name: the first part of the run folder's name."""
    preset: str = "standard"
    """Rules preset to train on (see matador_env.engine.PRESETS)."""
    seed: int = 1
    """Seed of the model, the environments and the evaluations."""
    timesteps: int = 1_800_000
    """Total learner steps of PPO (a resumed run counts the steps it had; the warm
    start counts none). The default recipe, warm start and 1.8M steps, fits in an
    hour on two cores (see README, Training)."""
    out: str | None = None
    """Run folder; default runs/{exp_name}__{preset}__{seed}__{unix time}."""
    resume: str | None = None
    """A run folder to continue from its last checkpoint (its arguments are reused,
    except --timesteps when given)."""
    n_envs: int = 2
    """Environments, each in its own process (SubprocVecEnv) when more than one."""
    n_steps: int = 1024
    """Steps per environment between updates."""
    batch_size: int = 256
    """Minibatch size of the PPO update."""
    n_epochs: int = 6
    """Passes over each rollout."""
    learning_rate: float = 1e-4
    """Adam step size (small, with --clip-range, so that PPO refines the warm start
    instead of unlearning it)."""
    gamma: float = 0.995
    """Discount (a hand is about 15 learner decisions)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.1
    """PPO clip range."""
    ent_coef: float = 0.003
    """Entropy bonus."""
    net_arch: str = "256,256"
    """Hidden layer sizes of the policy and value networks."""
    reward: str = "score"
    """Environment reward: score, win or normalised."""
    reward_scale: float = 0.05
    """Multiplier on the reward given to PPO (points per hand run to about 60)."""
    baselines: str = "expert:0.8,greedy:0.1,random:0.1"
    """Baseline opponents and their weights, name:weight pairs."""
    snapshot_every: int = 100_000
    """Steps between frozen snapshots of the learner added to the opponent pool."""
    snapshot_share: float = 0.5
    """Chance that an episode's opponent is a snapshot (once there is one)."""
    latest_share: float = 0.5
    """Chance that a snapshot opponent is the newest snapshot."""
    pool_size: int = 10
    """How many of the newest snapshots stay in the pool."""
    checkpoint_every: int = 50_000
    """Steps between checkpoints."""
    eval_every: int = 150_000
    """Steps between evaluations against random and expert (0: only at the end)."""
    eval_hands: int = 300
    """Duplicate deals per opponent in each periodic evaluation."""
    final_eval_hands: int = 1000
    """Duplicate deals per opponent in the final evaluation of the best policy."""
    eval_workers: int = 2
    """Processes for the evaluations."""
    torch_threads: int = 1
    """Torch threads of the learner process; more than one thrashes on two shared cores
    (measured: 2 threads made a run about 10x slower while another process was busy)."""
    progress: bool = True
    """Show a progress bar."""
    bc_decisions: int = -1
    """Warm start: decisions of the teacher to clone before PPO (0: none, PPO starts
    from a random network; -1: a twelfth of --timesteps, 150,000 for the default
    recipe, fixed in args.json when the run starts). See train/pretrain.py."""
    bc_teacher: str = "search:samples=16"
    """Agent spec of the teacher whose moves are cloned: the determinized search
    (about 3 ms a move, stronger than expert), or e.g. expert (0.1 ms a move)."""
    bc_opponent: str = "expert"
    """Agent spec of the opponent the teacher plays while its decisions are collected."""
    bc_epochs: int = 8
    """Passes over the cloned decisions."""
    bc_batch_size: int = 512
    """Minibatch size of the cloning fit."""
    bc_learning_rate: float = 1e-3
    """Adam step size of the cloning fit (cosine-decayed to zero over the fit)."""
    bc_vf_coef: float = 0.5
    """Weight of the value head's squared error (against the discounted return) in the
    cloning loss."""
    bc_workers: int = 2
    """Processes collecting the teacher's decisions."""


def run_name(args: TrainArgs) -> str:
    return f"{args.exp_name}__{args.preset}__{args.seed}__{int(time.time())}"


def main(argv: list[str] | None = None) -> Path:
    args = parse(TrainArgs, argv, prog="python -m train")
    return train(args)


def train(args: TrainArgs) -> Path:
    """Run (or resume) a training run; returns its folder."""
    # Imported here so that `python -m train --help` answers at once.
    from .loop import Trainer

    if args.resume:
        run_dir = Path(args.resume)
        saved = run_dir / "args.json"
        if not saved.is_file():
            sys.exit(f"--resume {run_dir}: no args.json there; is it a training run folder?")
        stored = json.loads(saved.read_text())
        given = {f.name: getattr(args, f.name) for f in dataclasses.fields(args)}
        default = TrainArgs()
        merged = dict(stored)
        if given["timesteps"] != default.timesteps:
            merged["timesteps"] = given["timesteps"]
        merged["resume"] = str(run_dir)
        merged["progress"] = given["progress"]
        args = TrainArgs(**{k: v for k, v in merged.items() if k in given})
    else:
        run_dir = Path(args.out or Path("runs") / run_name(args))
        if (run_dir / "checkpoint" / "model.zip").exists():
            sys.exit(f"{run_dir} already holds a run; use --resume {run_dir} to continue it")
        run_dir.mkdir(parents=True, exist_ok=True)
        args.out = str(run_dir)
        if args.bc_decisions < 0:
            args.bc_decisions = args.timesteps // 12
        atomic_write_json(run_dir / "args.json", dataclasses.asdict(args))
    trainer = Trainer(args, run_dir)
    # SIGTERM (a scheduler stopping the job) is handled like Ctrl-C: save, then stop.
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        trainer.learn()
    except KeyboardInterrupt:
        saved = trainer.save_checkpoint()
        what = "checkpoint saved" if saved else "warm start unfinished, its collected data kept"
        print(
            f"\ninterrupted at step {trainer.steps}; {what}. "
            f"Continue with: python -m train --resume {run_dir}",
            file=sys.stderr,
        )
        trainer.close()
        raise SystemExit(130) from None
    trainer.finish()
    trainer.close()
    return run_dir


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def copy_dir_atomic(src: Path, dst: Path) -> None:
    """Replace ``dst`` by a copy of ``src`` (via a temporary sibling and a rename)."""
    tmp = dst.with_name(f".{dst.name}.tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(src, tmp)
    old = dst.with_name(f".{dst.name}.old")
    if dst.exists():
        if old.exists():
            shutil.rmtree(old)
        dst.rename(old)
    tmp.rename(dst)
    if old.exists():
        shutil.rmtree(old)


__all__ = ["TrainArgs", "main", "train", "copy_dir_atomic"]
