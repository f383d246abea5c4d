"""The training loop behind ``python -m train``: model, environments, callbacks, files."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import multiprocessing
import shutil
import signal
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import configure_logger
from stable_baselines3.common.vec_env import (
    DummyVecEnv,
    SubprocVecEnv,
    VecEnv,
    VecEnvWrapper,
    VecMonitor,
)

from evaluate.arena import GameResult, Pairing, RunPlan, duplicate_figures, duplicate_lead, run
from evaluate.stats import interval_text, json_ready
from matador_env.engine import Rules
from matador_env.engine.tiles import is_json_int, is_json_number
from matador_env.files import atomic_write, atomic_write_json, atomic_write_text
from matador_env.policy import SIDECAR_FILE, PolicyError, load_policy
from matador_env.streams import progress_bar

from . import checkpoint
from .checkpoint import Checkpoint, CheckpointError
from .export import export_policy
from .files import recover_run_folder
from .run import TrainArgs, copy_dir_atomic, parse_net_arch, parse_weights
from .selfplay import (
    BatchOpponentPool,
    OpponentPool,
    SelfPlayEnv,
    check_live_state,
    is_snapshot_folder,
    snapshot_dirs,
)

if TYPE_CHECKING:
    from matador_env.vector import VectorEnv

EVAL_OPPONENTS = ("random", "expert")
WARM_START = "warm_start"
"""The run folder's copy of the policy right after the warm start (step 0)."""


class ScaledSelfPlayEnv(SelfPlayEnv):
    """The self-play environment with the reward multiplied by ``reward_scale``."""

    def __init__(self, reward_scale: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reward_scale = reward_scale

    def step(self, action: int) -> Any:
        obs, reward, terminated, truncated, info = super().step(action)
        info["raw_reward"] = reward
        return obs, reward * self.reward_scale, terminated, truncated, info


def _env_factory(args: TrainArgs, rules: Rules, pool_dir: Path, rank: int) -> Any:
    def make() -> ScaledSelfPlayEnv:
        if multiprocessing.parent_process() is not None:
            # An environment's own process (SubprocVecEnv). Ctrl-C and a scheduler's
            # SIGTERM reach the whole process group; the trainer handles them (it
            # saves, then closes this process), which it cannot do once a signal has
            # killed this end of its pipe.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        pool = OpponentPool(
            pool_dir,
            baseline_weights=parse_weights(args.baselines),
            snapshot_share=args.snapshot_share,
            latest_share=args.latest_share,
            pool_size=args.pool_size,
        )
        env = ScaledSelfPlayEnv(
            reward_scale=args.reward_scale, pool=pool, rules=rules, reward=args.reward
        )
        env.reset(seed=env_seed(args) + rank)
        return env

    return make


ENV_SEED_STRIDE = 2**24
"""Runs' environment seeds lie this far apart: above the most environments a run can
have (``matador_env.batch.MAX_SIZE`` slots), so runs of different ``--seed`` share no
deal stream."""


def env_seed(args: TrainArgs) -> int:
    """The seed of the run's first environment (or slot); environment ``i`` takes this
    plus ``i``."""
    return args.seed * ENV_SEED_STRIDE


class ScaledVecEnv(VecEnvWrapper):
    """A vector environment with the reward multiplied by ``reward_scale``."""

    def __init__(self, venv: VecEnv, reward_scale: float) -> None:
        super().__init__(venv)
        self.reward_scale = reward_scale

    def reset(self) -> Any:
        return self.venv.reset()

    def step_wait(self) -> Any:
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, rewards * self.reward_scale, dones, infos


def make_venv(args: TrainArgs, rules: Rules, pool_dir: Path) -> VecEnv:
    """The learner's environments: ``--n-envs`` self-play environments (in processes
    when more than one), or with ``--vector-envs N`` one batched vector environment
    whose opponents play inside the batch."""
    if args.vector_envs > 0:
        from matador_env.vector import VectorEnv, sb3_vec_env

        opponents = BatchOpponentPool(
            pool_dir,
            snapshot_share=args.snapshot_share,
            latest_share=args.latest_share,
            pool_size=args.pool_size,
            seed=args.seed,
        )
        batch = VectorEnv(
            args.vector_envs,
            rules,
            mode="learner",
            reward=args.reward,
            opponents=opponents,
            opponent_slots=True,
            seed=env_seed(args),
        )
        return ScaledVecEnv(sb3_vec_env(batch), args.reward_scale)
    factories = [_env_factory(args, rules, pool_dir, i) for i in range(args.n_envs)]
    if args.n_envs > 1:
        return SubprocVecEnv(factories, start_method="spawn")
    return DummyVecEnv(factories)


def rollout_steps_per_env(args: TrainArgs) -> int:
    """PPO's ``n_steps``: --n-steps, or with --vector-envs N the rollout split N ways."""
    if args.vector_envs > 0:
        return args.n_steps * args.n_envs // args.vector_envs
    return args.n_steps


def summarise(results: Sequence[GameResult]) -> dict[str, float]:
    """Hand win rate and points differential of agent A, with 95% intervals.

    The intervals are those of the arena's report (:func:`evaluate.stats.paired`):
    the games of one deal are averaged first, so the interval is over deals.
    ``*_lo``/``*_hi`` are the interval's ends; a rate's is not symmetric about it (300
    deals all won: 100% in [98.7%, 100%]), so no half width is given.
    """
    win, points = duplicate_figures(results)
    return {
        "deals": win.n,
        "win_rate": win.mean,
        "win_rate_lo": win.lo,
        "win_rate_hi": win.hi,
        "points": points.mean,
        "points_lo": points.lo,
        "points_hi": points.hi,
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


class _Callback(BaseCallback):
    def __init__(self, trainer: Trainer) -> None:
        super().__init__()
        self.trainer = trainer

    def _on_step(self) -> bool:
        self.trainer.on_step(self.locals.get("infos", ()))
        return True

    def _on_rollout_start(self) -> None:
        # The last PPO update is done and the next rollout not begun: a boundary.
        self.trainer.on_update_boundary()


class Trainer:
    """Owns the model, the environments and the run folder of one training run."""

    def __init__(self, args: TrainArgs, run_dir: Path, rules: Rules) -> None:
        self.args = args
        self.run_dir = run_dir
        # Before anything reads the folder: a trainer killed mid-write left it so.
        recover_run_folder(run_dir)
        torch.set_num_threads(max(1, args.torch_threads))
        self.rules = rules
        self.pool_dir = run_dir / "pool"
        self.ckpt_dir = run_dir / "checkpoint"
        state: dict[str, Any] = {}
        resuming = bool(args.resume) and (
            (self.ckpt_dir / checkpoint.STATE).is_file() or (self.ckpt_dir / "model.zip").is_file()
        )
        if resuming:
            # Every file is checked before the environments start.
            state = checkpoint.read_state(self.ckpt_dir, rules)
            self._check_pool(state)
            self._check_progress(state)
            self._check_saved_envs(state)
        self.venv = VecMonitor(make_venv(args, rules, self.pool_dir))
        self.model = MaskablePPO(
            "MlpPolicy",
            self.venv,
            learning_rate=args.learning_rate,
            n_steps=rollout_steps_per_env(args),
            batch_size=args.batch_size,
            n_epochs=args.n_epochs,
            gamma=args.gamma,
            gae_lambda=args.gae_lambda,
            clip_range=args.clip_range,
            ent_coef=args.ent_coef,
            policy_kwargs={"net_arch": parse_net_arch(args.net_arch)},
            seed=args.seed,
            device="cpu",
            verbose=0,
        )
        # MaskablePPO(seed=S) seeds environment i with S + i for its first reset, so
        # runs of adjacent seeds would play the same deals, seats and opponents (S + 1's
        # environment 0 is S's environment 1); they take the run's own seeds instead.
        self.venv.seed(env_seed(args))
        if resuming:
            try:
                checkpoint.restore(self.model, self.ckpt_dir, state)
                self._restore_envs(state)
            except CheckpointError:
                self.venv.close()
                raise
        self.resumed_from = self.steps if resuming else 0
        # A fresh model starts with the warm start (when asked for); until it is done
        # there is nothing worth a checkpoint.
        self.warm = resuming
        # The logger SB3 would make when learning starts (tb/ppo_0, continued by a resumed
        # run), made now: the evaluation after the warm start comes before learning.
        tb = str(run_dir / "tb")
        self.model.set_logger(configure_logger(0, tb, "ppo", reset_num_timesteps=False))
        self.best: float | None = state.get("best")
        self.pretrain: dict[str, Any] | None = state.get("pretrain")
        self.evaluations: list[dict[str, Any]] = state.get("evaluations", [])
        # The clock of the whole run: a resumed run goes on from the seconds its
        # checkpoint had spent (summary.json's minutes, the evaluations' elapsed);
        # read_state checked them.
        self.started = time.time() - float(state.get("seconds", 0.0))
        self._bar: Any = None
        self._episode_rewards: list[float] = []
        self._boundary: Checkpoint | None = None
        self._next = {
            "checkpoint": self._after(args.checkpoint_every),
            "snapshot": self._after(args.snapshot_every),
            "eval": self._after(args.eval_every),
        }

    @property
    def steps(self) -> int:
        return int(self.model.num_timesteps)

    @property
    def n_updates(self) -> int:
        return int(self.model._n_updates)

    def _after(self, every: int) -> float:
        if every <= 0:
            return math.inf
        return (self.steps // every + 1) * every

    def _check_pool(self, state: dict[str, Any]) -> None:
        """Every snapshot of the checkpoint's pool loads for the run's rules; snapshots
        written after the checkpoint are removed (the resumed run writes them again at
        the same steps, from its own weights)."""
        names = state.get("pool", [])
        where = self.ckpt_dir / checkpoint.STATE
        # Names, never paths: a folder elsewhere that did not load would be named as one
        # to delete.
        if not isinstance(names, list) or not all(
            isinstance(n, str) and is_snapshot_folder(n) for n in names
        ):
            raise CheckpointError(
                f"{where}: 'pool' is not a list of snapshot folder names (step_<N>); "
                f"{checkpoint.what_to_do(self.ckpt_dir)}"
            )
        for folder in snapshot_dirs(self.pool_dir):
            if int(folder.name.removeprefix("step_")) > state["steps"]:
                shutil.rmtree(folder)
        for name in names[-self.args.pool_size :]:
            folder = self.pool_dir / name
            if not folder.is_dir():
                raise CheckpointError(
                    f"{folder}, a snapshot of the pool in {where}, is missing; restore it, or "
                    f"remove {name!r} from the 'pool' list of {where}"
                )
            try:
                load_policy(folder, rules=self.rules)
            except PolicyError as e:
                raise CheckpointError(
                    f"{folder}: {e}; delete that snapshot folder and remove {name!r} from "
                    f"the 'pool' list of {where} (the run goes on without it), or restore it"
                ) from None

    def _check_progress(self, state: dict[str, Any]) -> None:
        """The checkpoint's evaluations and best score are what a run writes. Read
        unchecked, a damaged one ended the resumed run in a traceback after its
        training, at its first evaluation, or (a best score of NaN, which no score
        beats) kept the best policy from ever being replaced."""
        where = self.ckpt_dir / checkpoint.STATE

        def bad(what: str) -> CheckpointError:
            return CheckpointError(f"{where}: {what}; {checkpoint.what_to_do(self.ckpt_dir)}")

        evaluations = state.get("evaluations", [])
        if not isinstance(evaluations, list):
            raise bad("'evaluations' is not a list")
        last = 0
        for i, record in enumerate(evaluations):
            if not (
                isinstance(record, dict)
                and {"steps", "elapsed", "expert/points"} <= set(record)
                and all(is_json_number(v) for v in record.values())
            ):
                raise bad(
                    f"evaluation {i} is not an object of numbers with 'steps', 'elapsed' and "
                    "'expert/points'"
                )
            steps = record["steps"]
            if not (is_json_int(steps) and last <= steps <= state["steps"]):
                raise bad(
                    f"evaluation {i} is at step {steps!r}; allowed: a whole number from {last} "
                    f"(the evaluation before) to {state['steps']} (the checkpoint's steps)"
                )
            last = steps
            for opp in EVAL_OPPONENTS:
                for figure in ("points", "win_rate"):
                    key = f"{opp}/{figure}"
                    if key in record and not (
                        math.isfinite(record[key]) and {f"{key}_lo", f"{key}_hi"} <= set(record)
                    ):
                        raise bad(f"evaluation {i}'s {key!r} is not a figure with its interval")
        if not (state.get("pretrain") is None or isinstance(state["pretrain"], dict)):
            raise bad("'pretrain' is neither null nor the warm start's record (an object)")
        best = state.get("best")
        kept = max((r["expert/points"] for r in evaluations), default=None)
        if not (best == kept and (best is None or is_json_number(best))):
            raise bad(
                f"'best' is {best!r}, where the evaluations' best score against expert is {kept!r}"
            )

    # -- the environments in a checkpoint ------------------------------------------------

    def _batch(self) -> VectorEnv:
        """The batched vector environment under the wrappers (``--vector-envs``)."""
        scaled = self.venv.venv
        assert isinstance(scaled, ScaledVecEnv)
        batch: VectorEnv = scaled.venv.venv  # type: ignore[attr-defined]  # sb3_vec_env's
        return batch

    def _env_state(self) -> dict[str, Any] | None:
        """The environments between two steps as plain data, with what SB3 and the
        monitor hold of them; None before learning began (SB3 resets them then, with
        the model's seeds)."""
        model = self.model
        if model._last_obs is None or model._last_episode_starts is None:
            return None
        states: Any
        if self.args.vector_envs > 0:
            batch = self._batch()
            assert isinstance(batch.opponents, BatchOpponentPool)
            states = {"vector": batch.get_state(), "opponents": batch.opponents.live_state()}
        else:
            states = self.venv.env_method("live_state")
        infos = model.ep_info_buffer or ()
        return {
            "states": states,
            "episode_starts": [bool(x) for x in model._last_episode_starts],
            "monitor": {
                "returns": [float(x) for x in self.venv.episode_returns],
                "lengths": [int(x) for x in self.venv.episode_lengths],
                "count": int(self.venv.episode_count),
            },
            "episode_infos": [
                {"r": float(i["r"]), "l": int(i["l"]), "t": float(i["t"])} for i in infos
            ],
        }

    def _saved_envs_error(self, what: str) -> CheckpointError:
        where = self.ckpt_dir / checkpoint.STATE
        return CheckpointError(
            f"{where}: the saved environments {what}; restore that file from a copy, or "
            "delete its 'envs' entry (the run then resumes on new deals: the same updates, "
            "not the same games)"
        )

    def _check_saved_envs(self, state: dict[str, Any]) -> None:
        """The checkpoint's environments fit the run (checked before any process starts;
        the vector environment's arrays are checked as they are restored)."""
        envs = state.get("envs")
        if envs is None:
            return
        n = self.args.n_envs if self.args.vector_envs <= 0 else self.args.vector_envs
        if not isinstance(envs, dict) or set(envs) != {
            "states",
            "episode_starts",
            "monitor",
            "episode_infos",
        }:
            raise self._saved_envs_error("are not a JSON object of the keys this version writes")
        monitor = envs["monitor"]
        # SB3 logs these means after the first rollout: a text or a NaN there ended the
        # resumed run in a traceback, or logged NaN for the rest of it.
        if not (
            _list_of(envs["episode_starts"], bool, n)
            and isinstance(monitor, dict)
            and _list_of(monitor.get("returns"), float, n)
            and all(math.isfinite(r) for r in monitor["returns"])
            and _list_of(monitor.get("lengths"), int, n)
            and min(monitor["lengths"], default=0) >= 0
            and _list_of([monitor.get("count")], int, 1)
            and monitor["count"] >= 0
            and isinstance(envs["episode_infos"], list)
            and all(
                isinstance(i, dict)
                and set(i) == {"r", "l", "t"}
                and all(is_json_number(i[k]) and math.isfinite(i[k]) for k in ("r", "t"))
                and i["t"] >= 0
                and is_json_int(i["l"])
                and i["l"] >= 1
                for i in envs["episode_infos"]
            )
        ):
            raise self._saved_envs_error(f"do not hold the episode counters of {n} environments")
        if self.args.vector_envs > 0:
            if not isinstance(envs["states"], dict) or set(envs["states"]) != {
                "vector",
                "opponents",
            }:
                raise self._saved_envs_error("are not those of a --vector-envs run")
            return
        states = envs["states"]
        if not isinstance(states, list) or len(states) != n:
            raise self._saved_envs_error(f"are not a list of {n} (--n-envs)")
        scratch = _env_factory(self.args, self.rules, self.pool_dir, 0)()
        for i, saved in enumerate(states):
            try:
                check_live_state(saved, scratch)
            except ValueError as e:
                raise self._saved_envs_error(f"do not fit: environment {i}: {e}") from None
            if saved["over"]:
                # SB3's vector envs reset an episode in the step that ends it, so none
                # is ever saved ended; resumed, its first step would raise.
                raise self._saved_envs_error(
                    f"do not fit: environment {i}: its episode is over, which a checkpoint "
                    "never holds (an ended episode is reset in the step that ends it)"
                )

    def _restore_envs(self, state: dict[str, Any]) -> None:
        """Put the environments, SB3's last observations and the monitor's counters as
        the checkpoint saved them, so that the run goes on with the same games."""
        if "envs" not in state:
            # A checkpoint of a version that did not save them: new deals.
            self.venv.seed(self.args.seed * 1_000_003 + self.steps)
            print(f"{self.ckpt_dir}: no saved environments; resuming on new deals")
            return
        envs = state["envs"]
        if envs is None:
            return  # step 0, before learning: SB3 resets them with env_seed(args)
        model = self.model
        if self.args.vector_envs > 0:
            batch = self._batch()
            assert isinstance(batch.opponents, BatchOpponentPool)
            try:
                batch.opponents.restore_live_state(envs["states"]["opponents"])
                obs, _, _ = batch.set_state(envs["states"]["vector"])
            except ValueError as e:
                raise self._saved_envs_error(f"do not fit ({e})") from None
        else:
            obs = np.stack(
                [
                    self.venv.env_method("restore_live_state", saved, indices=[i])[0]
                    for i, saved in enumerate(envs["states"])
                ]
            )
        model._last_obs = obs
        model._last_episode_starts = np.array(envs["episode_starts"], dtype=bool)
        monitor = envs["monitor"]
        self.venv.episode_returns = np.array(monitor["returns"], dtype=np.float32)
        self.venv.episode_lengths = np.array(monitor["lengths"], dtype=np.int32)
        self.venv.episode_count = monitor["count"]
        window = model._stats_window_size
        model.ep_info_buffer = deque(envs["episode_infos"], maxlen=window)
        model.ep_success_buffer = deque(maxlen=window)

    # -- the loop ---------------------------------------------------------------------

    def learn(self) -> None:
        if not self.warm:
            self.warm_start()
        elif self._warm_start_unevaluated():
            # Stopped during the warm start's evaluation, after its checkpoint.
            self._evaluate_warm_start()
        remaining = self.args.timesteps - self.steps
        if self.resumed_from:
            print(f"resuming {self.run_dir} at step {self.steps} of {self.args.timesteps}")
        if remaining <= 0:
            return
        if self.args.progress:
            self._bar = progress_bar(
                total=self.args.timesteps, initial=self.steps, unit="step", dynamic_ncols=True
            )
        self._log_hparams()
        self.model.learn(
            total_timesteps=remaining,
            callback=_Callback(self),
            reset_num_timesteps=False,
        )
        # learn() returns after its last update: the final boundary.
        self.on_update_boundary(checkpoint_now=True)

    def warm_start(self) -> None:
        """Behaviour cloning of the teacher (train/pretrain.py), then a checkpoint and an
        evaluation at step 0; nothing when ``--bc-decisions`` is 0."""
        args = self.args
        if args.bc_decisions <= 0:
            self.warm = True
            return
        from .export import export_policy
        from .pretrain import collect, fit

        # A DAgger round refits from the same initial weights, on both rounds' data.
        initial = (
            {k: v.detach().clone() for k, v in self.model.policy.state_dict().items()}
            if args.bc_dagger_decisions > 0
            else None
        )

        def gather(
            folder: Path, decisions: int, driver: str | None = None, dagger_round: int = 1
        ) -> Any:
            return collect(
                folder,
                rules=self.rules,
                teacher=args.bc_teacher,
                opponent=args.bc_opponent,
                decisions=decisions,
                seed=args.seed,
                gamma=args.gamma,
                reward_scale=args.reward_scale,
                workers=args.bc_workers,
                progress=args.progress,
                driver=driver,
                skip_forced=args.bc_skip_forced,
                dagger_round=dagger_round,
                reward=args.reward,
            )

        def clone(data: Any) -> dict[str, Any]:
            return fit(
                self.model.policy,
                data,
                epochs=args.bc_epochs,
                batch_size=args.bc_batch_size,
                learning_rate=args.bc_learning_rate,
                vf_coef=args.bc_vf_coef,
                seed=args.seed,
                progress=args.progress,
                soft_temperature=args.bc_soft_temperature,
            )

        data = gather(self.run_dir / "pretrain", args.bc_decisions)
        self.pretrain = clone(data)
        if initial is not None:
            first = self.pretrain
            print(f"warm start, first round: {json.dumps(first)}", flush=True)
            collections = [data]
            for r in range(1, args.bc_dagger_rounds + 1):
                # Round 1 keeps the folder names of the runs made before rounds could repeat.
                suffix = "" if r == 1 else f"_{r}"
                driver = self.run_dir / "pretrain" / f"dagger_driver{suffix}"
                export_policy(self.model.policy, self.rules, driver, self.provenance())
                collections.append(
                    gather(
                        self.run_dir / "pretrain" / f"dagger{suffix}",
                        args.bc_dagger_decisions,
                        str(driver),
                        dagger_round=r,
                    )
                )
                self.model.policy.load_state_dict(initial)
                self.pretrain = clone(
                    {k: np.concatenate([c[k] for c in collections]) for k in data}
                )
                if r < args.bc_dagger_rounds:
                    print(f"warm start, DAgger round {r}: {json.dumps(self.pretrain)}", flush=True)
            self.pretrain["dagger_decisions"] = args.bc_dagger_decisions
            if args.bc_dagger_rounds > 1:
                self.pretrain["dagger_rounds"] = args.bc_dagger_rounds
            self.pretrain["first_round_agreement"] = first["held_out_agreement"]
        self.pretrain["minutes"] = round((time.time() - self.started) / 60, 1)
        print(f"warm start ({args.bc_teacher}): {json.dumps(self.pretrain)}", flush=True)
        # Only now is the model worth a checkpoint: one interrupted before this point
        # restarts the warm start (reusing the collected decisions).
        self.warm = True
        self.save_model_atomic(WARM_START)
        self._boundary = checkpoint.capture(self.model, self._plain_state())
        self.save_checkpoint()
        if args.eval_every > 0:
            self._evaluate_warm_start()

    def _warm_start_unevaluated(self) -> bool:
        """Whether a resumed run lacks the evaluation due right after its warm start."""
        return (
            self.steps == 0
            and self.pretrain is not None
            and self.args.eval_every > 0
            and not any(e["steps"] == 0 for e in self.evaluations)
        )

    def _evaluate_warm_start(self) -> None:
        self.periodic_evaluation()
        self._boundary = checkpoint.capture(self.model, self._plain_state())
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

    def on_update_boundary(self, checkpoint_now: bool = False) -> None:
        """Between two PPO updates: snapshot and evaluate when due, then take the
        checkpoint in memory, and write it when due (or ``checkpoint_now``)."""
        steps = self.steps
        if steps >= self._next["snapshot"]:
            self._next["snapshot"] = self._after(self.args.snapshot_every)
            self.snapshot()
        if steps >= self._next["eval"]:
            self._next["eval"] = self._after(self.args.eval_every)
            self.periodic_evaluation()
        self._boundary = checkpoint.capture(self.model, self._plain_state())
        if checkpoint_now or steps >= self._next["checkpoint"]:
            self._next["checkpoint"] = self._after(self.args.checkpoint_every)
            self.save_checkpoint()

    # -- files --------------------------------------------------------------------------

    def provenance(self) -> dict[str, Any]:
        return {
            "run": self.run_dir.name,
            "steps": self.steps,
            "preset": self.args.preset,
            "rules": self.rules.to_text(),
            "command": f"python -m train {_command_line(self.args)}",
        }

    def save_model(self, folder: Path) -> None:
        """weights.pt (the policy's tensors) and the exported policy, written atomically."""
        folder.mkdir(parents=True, exist_ok=True)
        weights = {k: v.detach().clone() for k, v in self.model.policy.state_dict().items()}
        atomic_write(folder / "weights.pt", lambda tmp: torch.save(weights, tmp))
        export_policy(self.model.policy, self.rules, folder, self.provenance())

    def save_model_atomic(self, name: str) -> None:
        """:meth:`save_model` into the run folder's ``name``, replacing it in one rename."""
        self.save_model(self.run_dir / f"{name}_tmp")
        copy_dir_atomic(self.run_dir / f"{name}_tmp", self.run_dir / name)

    def _plain_state(self) -> dict[str, Any]:
        return {
            "envs": self._env_state(),
            "best": self.best,
            "evaluations": self.evaluations,
            "pretrain": self.pretrain,
            "pool": [d.name for d in snapshot_dirs(self.pool_dir)],
            "seconds": round(time.time() - self.started, 1),
        }

    def save_checkpoint(self) -> int | None:
        """Write the checkpoint of the last update boundary; returns its step, or None
        (nothing written) while the warm start is unfinished."""
        if not self.warm or self._boundary is None:
            return None
        checkpoint.write(self.ckpt_dir, self._boundary, self.rules)
        return self._boundary.steps

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
            "".join(json.dumps(json_ready(r)) + "\n" for r in self.evaluations),
        )
        score = figures["expert"]["points"]
        if self.best is None or score > self.best:
            self.best = score
            self.save_model_atomic("best")
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
        for tmp in ("best_tmp", f"{WARM_START}_tmp", "eval_current"):
            path = self.run_dir / tmp
            if path.is_dir():
                shutil.rmtree(path)
        # Fresh deals: the final evaluation plays seed + 1.
        selection = check_best_against_warm_start(
            self.run_dir,
            self.rules,
            self.args.select_hands,
            self.args.seed + 2,
            self.args.eval_workers,
        )
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
            "n_updates": self.n_updates,
            "minutes": round((time.time() - self.started) / 60, 1),
            "best_policy": str(self.run_dir / "best"),
            "final_evaluation": figures,
            "pretrain": self.pretrain,
            "evaluations": self.evaluations,
            "selection": selection,
        }
        atomic_write_json(self.run_dir / "summary.json", json_ready(summary))
        atomic_write_text(self.run_dir / "summary.md", summary_markdown(summary))
        plot_learning_curve(self.evaluations, self.run_dir / "learning_curve.png")
        print(summary_markdown(summary))

    def close(self, interrupted: bool = False) -> None:
        """Close the progress bar and the environments. ``interrupted``: a signal may
        have cut a step short, leaving answers of the environments' processes unread,
        so they are told to stop without the reads SB3's close would wait on for ever."""
        if self._bar is not None:
            self._bar.close()
        workers = self.venv.venv
        if not (interrupted and isinstance(workers, SubprocVecEnv)):
            self.venv.close()
            return
        for remote in workers.remotes:
            with contextlib.suppress(OSError):  # that process has ended already
                remote.send(("close", None))
        for process in workers.processes:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
        workers.closed = True

    def _log_hparams(self) -> None:
        rows = "\n".join(f"|{k}|{v}|" for k, v in sorted(dataclasses.asdict(self.args).items()))
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError:  # pragma: no cover - tensorboard is in the train extra
            return
        with SummaryWriter(str(self.run_dir / "tb" / "hparams")) as writer:
            writer.add_text("hyperparameters", "|param|value|\n|-|-|\n" + rows)


def _list_of(value: Any, kind: type, n: int) -> bool:
    """Whether ``value`` is a list of ``n`` values of ``kind`` (ints count as floats;
    bools as neither)."""
    kinds = (int, float) if kind is float else (kind,)
    return (
        isinstance(value, list)
        and len(value) == n
        and all(isinstance(v, kinds) and (kind is bool or not isinstance(v, bool)) for v in value)
    )


def _command_line(args: TrainArgs) -> str:
    default = TrainArgs()
    parts = []
    for f in dataclasses.fields(args):
        value = getattr(args, f.name)
        if f.name in ("out", "resume", "progress") or value == getattr(default, f.name):
            continue
        flag = f"--{f.name.replace('_', '-')}"
        if isinstance(value, bool):
            parts.append(flag if value else f"--no-{flag[2:]}")
        elif isinstance(value, list):
            parts.append(" ".join([flag, *map(str, value)]))
        else:
            parts.append(f"{flag} {value}")
    return " ".join(parts)


def check_best_against_warm_start(
    run_dir: Path, rules: Rules, deals: int, seed: int, workers: int
) -> dict[str, Any] | None:
    """Keep a PPO policy as the run's ``best/`` only if it beats the warm start; the
    record of the check (also written to ``selection.json``), or None when there was
    none (``deals`` 0, no ``warm_start/``, or the warm start is best already and no
    earlier check is recorded).

    The periodic evaluations pick their best on --eval-hands deals (300: about +-2
    points per hand), while PPO's steps move a cloned policy by about a point: a pick
    among them is mostly noise, and biased upwards by the picking (polish's
    450,000-decision run picked a step that measured worse than its warm start in the
    strength matrix). So both play the same ``deals`` fresh deals against expert, and
    the policy with the higher mean lead stays (a tie keeps the warm start):
    :func:`kept_by_lead`. The record carries the lead's 95% interval.
    """
    best, warm = run_dir / "best", run_dir / WARM_START
    record_file = run_dir / "selection.json"
    if deals <= 0 or not warm.is_dir():
        return None
    step = policy_step(best)
    if step == 0:
        # The warm start is best already: by its evaluations, or by an earlier check
        # (an interrupted finish, or a resumed run with no better evaluation since).
        return json.loads(record_file.read_text()) if record_file.is_file() else None
    plan = RunPlan(
        rules=rules,
        pairings=[Pairing(f"policy:{best}", "expert"), Pairing(f"policy:{warm}", "expert")],
        deals=deals,
        matches=0,
        seed=seed,
    )
    results = run(plan, workers=workers)
    lead = duplicate_lead(
        [r for r in results if r.pairing == 0], [r for r in results if r.pairing == 1]
    )
    kept = kept_by_lead(lead.mean)
    record = {
        "candidate_step": step,
        "deals": lead.n,
        "lead_points": lead.mean,
        "lead_lo": lead.lo,
        "lead_hi": lead.hi,
        "kept": kept,
    }
    atomic_write_json(record_file, json_ready(record))
    print(describe_selection(record), flush=True)
    if kept == "warm start":
        copy_dir_atomic(warm, best)
    return record


def kept_by_lead(lead_points: float) -> str:
    """Which policy the best-policy check keeps: ``"ppo"`` when the PPO policy's mean
    lead over the warm start is above 0, else ``"warm start"``.

    The check's deals are fresh, so its mean is an unbiased estimate of the lead and
    the higher mean is the better bet whether or not the interval excludes 0. Asking
    for a significant lead instead kept the warm start wherever points vary widely
    (double-twelve: bots README, the double_twelve bullet).
    """
    return "ppo" if lead_points > 0 else "warm start"


def describe_selection(record: dict[str, Any]) -> str:
    """One sentence of a :func:`check_best_against_warm_start` record."""
    kept = "PPO policy" if record["kept"] == "ppo" else "warm start"
    return (
        f"Best-policy check: the step-{record['candidate_step']:,} policy against the warm "
        f"start, both against expert on {record['deals']} fresh deals: "
        f"{interval_text(record['lead_points'], record['lead_lo'], record['lead_hi'])} "
        f"points per hand; kept the {kept}."
    )


def policy_step(folder: Path) -> int:
    """The learner step at which the policy exported in ``folder`` was taken (its
    sidecar's provenance; 0: the warm start)."""
    sidecar = json.loads((folder / SIDECAR_FILE).read_text(encoding="utf-8"))
    return int(sidecar["provenance"]["steps"])


def summary_markdown(summary: dict[str, Any]) -> str:
    """summary.md: the steps, minutes and best policy, the final evaluation's table and
    the check of the best policy against the warm start."""
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
            f"| {opp} | {f['deals']} "
            f"| {f['win_rate']:.1%} [{f['win_rate_lo']:.1%}, {f['win_rate_hi']:.1%}] "
            f"| {interval_text(f['points'], f['points_lo'], f['points_hi'])} |"
        )
    if summary.get("selection"):
        lines += ["", describe_selection(summary["selection"])]
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
            shown = [e for e in evaluations if f"{opp}/{key}" in e]
            ys = [e[f"{opp}/{key}"] for e in shown]
            # Each side on its own: a rate's interval is not symmetric about it.
            below = [y - e[f"{opp}/{key}_lo"] for y, e in zip(ys, shown, strict=True)]
            above = [e[f"{opp}/{key}_hi"] - y for y, e in zip(ys, shown, strict=True)]
            ax.errorbar(steps, ys, yerr=[below, above], marker="o", capsize=3, label=f"vs {opp}")
            ax.set_xlabel("learner steps")
            ax.set_title(label)
    axes[0].axhline(0, color="grey", lw=0.8)
    axes[1].axhline(0.5, color="grey", lw=0.8)
    axes[0].legend()
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png", dpi=100))
    plt.close(fig)
