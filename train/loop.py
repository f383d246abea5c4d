"""The training loop behind ``python -m train``: model, environments, callbacks, files."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import configure_logger
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv, VecMonitor

from evaluate.arena import Pairing, RunPlan, run
from matador_env.engine import Rules

from .export import export_policy
from .files import atomic_write, atomic_write_json, atomic_write_text
from .run import TrainArgs, copy_dir_atomic
from .selfplay import OpponentPool, SelfPlayEnv

EVAL_OPPONENTS = ("random", "expert")


def parse_weights(text: str) -> dict[str, float]:
    """``"expert:0.6,greedy:0.2"`` -> ``{"expert": 0.6, "greedy": 0.2}``."""
    out: dict[str, float] = {}
    for part in text.split(","):
        name, sep, weight = part.partition(":")
        try:
            out[name.strip()] = float(weight) if sep else 1.0
        except ValueError:
            raise ValueError(f"--baselines: {part!r} is not name:weight") from None
    return out


class ScaledSelfPlayEnv(SelfPlayEnv):
    """The self-play environment with the reward multiplied by ``reward_scale``."""

    def __init__(self, reward_scale: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reward_scale = reward_scale

    def step(self, action: int) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info["raw_reward"] = reward
        return obs, reward * self.reward_scale, terminated, truncated, info


def _env_factory(args: TrainArgs, pool_dir: Path, rank: int) -> Any:
    def make() -> ScaledSelfPlayEnv:
        pool = OpponentPool(
            pool_dir,
            baseline_weights=parse_weights(args.baselines),
            snapshot_share=args.snapshot_share,
            latest_share=args.latest_share,
            pool_size=args.pool_size,
        )
        env = ScaledSelfPlayEnv(
            reward_scale=args.reward_scale, pool=pool, preset=args.preset, reward=args.reward
        )
        env.reset(seed=args.seed * 1000 + rank)
        return env

    return make


def summarise(results: list[Any]) -> dict[str, float]:
    """Hand win rate and points differential of agent A, with 95% intervals.

    Duplicate games of one deal are averaged first, so the interval is over deals.
    """
    per_deal: dict[int, list[tuple[float, float]]] = {}
    for r in results:
        per_deal.setdefault(r.deal, []).append((r.score, r.diff))
    scores = np.array([np.mean([s for s, _ in g]) for g in per_deal.values()])
    diffs = np.array([np.mean([d for _, d in g]) for g in per_deal.values()])
    n = len(per_deal)

    def half_width(x: np.ndarray) -> float:
        return float(1.96 * x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else float("nan")

    return {
        "deals": n,
        "win_rate": float(scores.mean()),
        "win_rate_ci": half_width(scores),
        "points": float(diffs.mean()),
        "points_ci": half_width(diffs),
    }


def evaluate_policy(
    policy_dir: Path, rules: Rules, hands: int, seed: int, workers: int
) -> dict[str, dict[str, float]]:
    """The exported policy in ``policy_dir`` against each of :data:`EVAL_OPPONENTS`."""
    spec = f"policy:{policy_dir}"
    plan = RunPlan(
        rules=rules,
        pairings=[Pairing(spec, opp) for opp in EVAL_OPPONENTS],
        deals=hands,
        matches=0,
        seed=seed,
    )
    results = run(plan, workers=workers)
    return {
        opp: summarise([r for r in results if r.pairing == i])
        for i, opp in enumerate(EVAL_OPPONENTS)
    }


def save_sb3(model: MaskablePPO, target: Path) -> None:
    """``model.save`` to a temporary zip beside ``target``, then rename (atomic)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.stem}.tmp.zip")
    model.save(tmp)
    tmp.replace(target)


class _Callback(BaseCallback):
    def __init__(self, trainer: Trainer) -> None:
        super().__init__()
        self.trainer = trainer

    def _on_step(self) -> bool:
        self.trainer.on_step(self.locals.get("infos", ()))
        return True


class Trainer:
    """Owns the model, the environments and the run folder of one training run."""

    def __init__(self, args: TrainArgs, run_dir: Path) -> None:
        self.args = args
        self.run_dir = run_dir
        torch.set_num_threads(max(1, args.torch_threads))
        self.rules = Rules.preset(args.preset)
        self.pool_dir = run_dir / "pool"
        self.ckpt_dir = run_dir / "checkpoint"
        factories = [_env_factory(args, self.pool_dir, i) for i in range(args.n_envs)]
        venv: VecEnv = (
            SubprocVecEnv(factories, start_method="spawn")
            if args.n_envs > 1
            else DummyVecEnv(factories)
        )
        self.venv = VecMonitor(venv)
        tb = str(run_dir / "tb")
        state_file = self.ckpt_dir / "state.json"
        if args.resume and (self.ckpt_dir / "model.zip").is_file():
            self.model = MaskablePPO.load(self.ckpt_dir / "model.zip", env=self.venv, device="cpu")
            state = json.loads(state_file.read_text()) if state_file.is_file() else {}
            self.resumed_from = self.model.num_timesteps
            self.warm = True
        else:
            arch = [int(x) for x in args.net_arch.split(",") if x.strip()]
            self.model = MaskablePPO(
                "MlpPolicy",
                self.venv,
                learning_rate=args.learning_rate,
                n_steps=args.n_steps,
                batch_size=args.batch_size,
                n_epochs=args.n_epochs,
                gamma=args.gamma,
                gae_lambda=args.gae_lambda,
                clip_range=args.clip_range,
                ent_coef=args.ent_coef,
                policy_kwargs={"net_arch": arch},
                seed=args.seed,
                device="cpu",
                verbose=0,
            )
            state = {}
            self.resumed_from = 0
            # A fresh model starts with the warm start (when asked for); until it is
            # done there is nothing worth a checkpoint.
            self.warm = False
        # The logger SB3 would make when learning starts (tb/ppo_0, continued by a resumed
        # run), made now: the evaluation after the warm start comes before learning.
        self.model.set_logger(configure_logger(0, tb, "ppo", reset_num_timesteps=False))
        self.best: float | None = state.get("best")
        self.pretrain: dict[str, Any] | None = state.get("pretrain")
        self.evaluations: list[dict[str, Any]] = state.get("evaluations", [])
        self.started = time.time()
        self._bar: Any = None
        self._episode_rewards: list[float] = []
        self._next = {
            "checkpoint": self._after(args.checkpoint_every),
            "snapshot": self._after(args.snapshot_every),
            "eval": self._after(args.eval_every),
        }

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    def _after(self, every: int) -> float:
        if every <= 0:
            return math.inf
        return (self.steps // every + 1) * every

    # -- the loop ---------------------------------------------------------------------

    def learn(self) -> None:
        if not self.warm:
            self.warm_start()
        remaining = self.args.timesteps - self.steps
        if self.resumed_from:
            print(f"resuming {self.run_dir} at step {self.steps} of {self.args.timesteps}")
        if remaining <= 0:
            return
        if self.args.progress:
            from tqdm import tqdm

            self._bar = tqdm(
                total=self.args.timesteps, initial=self.steps, unit="step", dynamic_ncols=True
            )
        self._log_hparams()
        self.model.learn(
            total_timesteps=remaining,
            callback=_Callback(self),
            reset_num_timesteps=False,
        )
        self.save_checkpoint()

    def warm_start(self) -> None:
        """Behaviour cloning of the teacher (train/pretrain.py), then a checkpoint and an
        evaluation at step 0; nothing when ``--bc-decisions`` is 0."""
        args = self.args
        if args.bc_decisions <= 0:
            self.warm = True
            return
        from .pretrain import collect, fit

        data = collect(
            self.run_dir / "pretrain",
            preset=args.preset,
            teacher=args.bc_teacher,
            opponent=args.bc_opponent,
            decisions=args.bc_decisions,
            seed=args.seed,
            gamma=args.gamma,
            reward_scale=args.reward_scale,
            workers=args.bc_workers,
            progress=args.progress,
        )
        self.pretrain = fit(
            self.model.policy,
            data,
            epochs=args.bc_epochs,
            batch_size=args.bc_batch_size,
            learning_rate=args.bc_learning_rate,
            vf_coef=args.bc_vf_coef,
            seed=args.seed,
            progress=args.progress,
        )
        self.pretrain["minutes"] = round((time.time() - self.started) / 60, 1)
        print(f"warm start ({args.bc_teacher}): {json.dumps(self.pretrain)}", flush=True)
        # Only now is the model worth a checkpoint: one interrupted before this point
        # restarts the warm start (reusing the collected decisions).
        self.warm = True
        self.save_checkpoint()
        if args.eval_every > 0:
            self.periodic_evaluation()
            self.save_checkpoint()

    def on_step(self, infos: Any) -> None:
        for info in infos:
            episode = info.get("episode")
            if episode is not None:
                self._episode_rewards.append(float(episode["r"]) / self.args.reward_scale)
        if self._bar is not None:
            self._bar.n = self.steps
            if self._episode_rewards:
                recent = self._episode_rewards[-200:]
                self._bar.set_postfix(points=f"{np.mean(recent):+.2f}", best=self.best)
            self._bar.refresh()
        steps = self.steps
        if steps >= self._next["snapshot"]:
            self._next["snapshot"] = self._after(self.args.snapshot_every)
            self.snapshot()
        if steps >= self._next["checkpoint"]:
            self._next["checkpoint"] = self._after(self.args.checkpoint_every)
            self.save_checkpoint()
        if steps >= self._next["eval"]:
            self._next["eval"] = self._after(self.args.eval_every)
            self.periodic_evaluation()

    # -- files --------------------------------------------------------------------------

    def provenance(self) -> dict[str, Any]:
        return {
            "run": self.run_dir.name,
            "steps": self.steps,
            "preset": self.args.preset,
            "command": f"python -m train {_command_line(self.args)}",
        }

    def save_model(self, folder: Path) -> None:
        """model.zip (torch, for resuming) and the exported policy, written atomically."""
        folder.mkdir(parents=True, exist_ok=True)
        save_sb3(self.model, folder / "model.zip")
        export_policy(self.model.policy, self.rules, folder, self.provenance())

    def save_checkpoint(self) -> bool:
        """Write the checkpoint (model and state); False (nothing written) while the
        warm start is unfinished."""
        if not self.warm:
            return False
        save_sb3(self.model, self.ckpt_dir / "model.zip")
        atomic_write_json(
            self.ckpt_dir / "state.json",
            {
                "steps": self.steps,
                "best": self.best,
                "evaluations": self.evaluations,
                "pretrain": self.pretrain,
            },
        )
        return True

    def snapshot(self) -> None:
        export_policy(
            self.model.policy, self.rules, self.pool_dir / f"step_{self.steps}", self.provenance()
        )

    # -- evaluation ---------------------------------------------------------------------

    def periodic_evaluation(self) -> None:
        current = self.run_dir / "eval_current"
        export_policy(self.model.policy, self.rules, current, self.provenance())
        figures = evaluate_policy(
            current, self.rules, self.args.eval_hands, self.args.seed, self.args.eval_workers
        )
        record = {"steps": self.steps, "elapsed": round(time.time() - self.started, 1)}
        for opp, fig in figures.items():
            for key, value in fig.items():
                record[f"{opp}/{key}"] = value
                self.model.logger.record(f"eval/{opp}_{key}", value)
        self.model.logger.dump(self.steps)
        self.evaluations.append(record)
        atomic_write_text(
            self.run_dir / "evaluations.jsonl",
            "".join(json.dumps(r) + "\n" for r in self.evaluations),
        )
        score = figures["expert"]["points"]
        if self.best is None or score > self.best:
            self.best = score
            self.save_model(self.run_dir / "best_tmp")
            copy_dir_atomic(self.run_dir / "best_tmp", self.run_dir / "best")
        msg = ", ".join(
            f"vs {o}: {f['win_rate']:.1%} hands, {f['points']:+.2f} pts/hand"
            for o, f in figures.items()
        )
        line = f"step {self.steps}: {msg}"
        if self._bar is not None:
            self._bar.write(line)
        else:
            print(line)

    def finish(self) -> None:
        """Save final/ (and best/ if no evaluation made one), evaluate best, plot, summarise."""
        self.save_model(self.run_dir / "final")
        if not (self.run_dir / "best").is_dir():
            copy_dir_atomic(self.run_dir / "final", self.run_dir / "best")
        for tmp in ("best_tmp", "eval_current"):
            path = self.run_dir / tmp
            if path.is_dir():
                import shutil

                shutil.rmtree(path)
        figures = evaluate_policy(
            self.run_dir / "best",
            self.rules,
            self.args.final_eval_hands,
            self.args.seed + 1,
            self.args.eval_workers,
        )
        summary = {
            "run": self.run_dir.name,
            "steps": self.steps,
            "minutes": round((time.time() - self.started) / 60, 1),
            "best_policy": str(self.run_dir / "best"),
            "final_evaluation": figures,
            "pretrain": self.pretrain,
            "evaluations": self.evaluations,
        }
        atomic_write_json(self.run_dir / "summary.json", summary)
        atomic_write_text(self.run_dir / "summary.md", _summary_markdown(summary))
        plot_learning_curve(self.evaluations, self.run_dir / "learning_curve.png")
        print(_summary_markdown(summary))

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        self.venv.close()

    def _log_hparams(self) -> None:
        rows = "\n".join(f"|{k}|{v}|" for k, v in sorted(dataclasses.asdict(self.args).items()))
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # pragma: no cover - tensorboard is in the train extra
            return
        with SummaryWriter(str(self.run_dir / "tb" / "hparams")) as writer:
            writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + rows)


def _command_line(args: TrainArgs) -> str:
    default = TrainArgs()
    parts = []
    for f in dataclasses.fields(args):
        value = getattr(args, f.name)
        if f.name in ("out", "resume", "progress") or value == getattr(default, f.name):
            continue
        parts.append(f"--{f.name.replace('_', '-')} {value}")
    return " ".join(parts)


def _summary_markdown(summary: dict[str, Any]) -> str:
    lines = [
        f"# Training run {summary['run']}",
        "",
        f"{summary['steps']} steps in {summary['minutes']} minutes; best policy: "
        f"`{summary['best_policy']}`",
        "",
        "| opponent | deals | hand win rate | points per hand |",
        "|---|---|---|---|",
    ]
    for opp, f in summary["final_evaluation"].items():
        lines.append(
            f"| {opp} | {f['deals']} | {f['win_rate']:.1%} ± {f['win_rate_ci']:.1%} "
            f"| {f['points']:+.2f} ± {f['points_ci']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def plot_learning_curve(evaluations: list[dict[str, Any]], path: Path) -> None:
    """Points per hand and hand win rate against each opponent, over the steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for opp in EVAL_OPPONENTS:
        steps = [e["steps"] for e in evaluations if f"{opp}/points" in e]
        for ax, key, label in (
            (axes[0], "points", "points per hand (duplicate)"),
            (axes[1], "win_rate", "hand win rate"),
        ):
            ys = [e[f"{opp}/{key}"] for e in evaluations if f"{opp}/{key}" in e]
            cis = [e[f"{opp}/{key}_ci"] for e in evaluations if f"{opp}/{key}_ci" in e]
            ax.errorbar(steps, ys, yerr=cis, marker="o", capsize=3, label=f"vs {opp}")
            ax.set_xlabel("learner steps")
            ax.set_title(label)
    axes[0].axhline(0, color="grey", lw=0.8)
    axes[1].axhline(0.5, color="grey", lw=0.8)
    axes[0].legend()
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=100))
    plt.close(fig)
