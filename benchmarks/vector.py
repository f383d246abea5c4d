"""Batch engine and vector environment speed, side by side with today's Python paths.

``python -m benchmarks.vector [--seconds S] [--threads N] [--ppo-steps N] [--quick]
[--section NAME ...]`` prints, in one run (so that every pair sees the same machine
load):

- ``compile``: the first use of the kernels in a fresh process with an empty numba
  cache (it compiles and caches them), and a second process on that cache;
- ``engine``: random legal actions/s of the batch engine (one thread, and
  ``--threads`` threads) beside the Python engine (``benchmarks.engine``'s loop),
  on every preset;
- ``env``: agent-steps/s with observations and masks built: ``matador_v0.raw_env``
  beside ``matador_env.vector.VectorEnv`` (self-play mode, 256 slots);
- ``make_vec``: learner steps/s of ``gymnasium.make_vec("Matador-v0")`` over 64
  games, ``vectorization_mode="sync"`` (64 single envs) beside the compiled default,
  with random and with the shipped ``"trained"`` opponents, on standard and
  pagat_teams (medians of three runs each way, taken in turn);
- ``perft``: lines of play counted per second by :func:`matador_env.engine.perft`
  beside :func:`matador_env.batch.perft`, from the deal of seed 1 of every preset,
  at the first depth with at least ``--seconds`` times 30,000 lines (medians of
  three counts each way, taken in turn);
- ``search``: playouts per second of the search agent (``samples`` worlds per
  candidate; a playout is one candidate played out in one world) with its old
  playouts (``fast=0``) and on the batch engine, on standard and leiden;
- ``ppo``: MaskablePPO training steps/s (collection and updates, ``python -m train``'s
  hyperparameters) on today's setup (train's self-play environment, two copies in a
  DummyVecEnv), on ``MatadorSingleEnv`` with random opponents, and on the vector
  environment (learner mode, random opponents, 64 slots); then ``python -m train``'s
  own loop (``Trainer.learn``, no warm start, random baselines) with its default two
  processes beside ``--vector-envs 64``.

Figures, not tests: the bars of issue #13 (15x engine on standard, 10x env, 5x
search) head their sections, and each row prints its ratio (new over old, so above 1
is faster) for them to be read against.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from matador_env.engine import PRESETS, HandState, Rules
from matador_env.flags import positive_int, positive_number
from matador_env.streams import run_main

SECTIONS = ("compile", "engine", "env", "make_vec", "perft", "search", "ppo")
PERFT_LINES_PER_SECOND = 30_000
"""Lines per ``--seconds`` that a perft row's depth reaches: about a second of the
Python engine's counting at the default."""

_FIRST_USE = """
import numpy as np
from matador_env.batch import BatchEngine, WorldPlayouts, random_hands
from matador_env.engine import Rules
from matador_env.vector import VectorEnv
rules = Rules.preset("standard")
env = VectorEnv(4, rules)
obs, masks, seats = env.reset([1, 2, 3, 4])
env.step(masks.argmax(axis=1))
random_hands(rules, [1, 2])
from matador_env.engine import HandState
state = HandState.deal(rules, 1)
world = ([state.hand_mask(s) for s in range(2)], [t.index for t in state.boneyard])
runner = WorldPlayouts(state.view(state.to_move), [1.0] * 14)
runner.run([world], [int(np.flatnonzero(runner.enc.action_mask(state.legal_moves()))[0])])
"""


def compile_times() -> tuple[float, float]:
    """Seconds of the first use in a fresh process with an empty cache, then of a second."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        times = []
        for _ in range(2):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", _FIRST_USE], env=env, check=True, capture_output=True
            )
            times.append(time.perf_counter() - start)
    return times[0], times[1]


def python_engine(preset: str, seconds: float) -> float:
    from benchmarks.engine import run

    return float(run(preset, seconds)["actions_per_s"])


def batch_engine(preset: str, seconds: float, threads: int) -> float:
    from matador_env.batch import random_hands

    rules = Rules.preset(preset)
    random_hands(rules, [0, 1], threads=threads)  # compiled (or loaded) outside the timing
    actions = 0
    chunk = 2000
    seed = 0
    start = time.perf_counter()
    deadline = start + seconds
    while seed == 0 or time.perf_counter() < deadline:  # at least one chunk
        _, played = random_hands(rules, range(seed, seed + chunk), rng_seed=seed, threads=threads)
        actions += played
        seed += chunk
    return actions / (time.perf_counter() - start)


def raw_env_steps(preset: str, seconds: float) -> float:
    from matador_env.matador_v0 import raw_env

    env = raw_env(preset=preset)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while steps == 0 or time.perf_counter() < deadline:  # at least one game
        env.reset(seed=int(rng.integers(1 << 30)))
        while not any(env.terminations.values()):
            mask = env.observe(env.agent_selection)["action_mask"]
            legal = np.flatnonzero(mask)
            env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
    return steps / (time.perf_counter() - start)


def vector_env_steps(preset: str, seconds: float, slots: int = 256) -> float:
    from matador_env.batch import _kernels
    from matador_env.vector import VectorEnv

    env = VectorEnv(slots, preset=preset)
    obs, masks, _ = env.reset()
    rows = np.arange(slots, dtype=np.int64)
    actions = np.empty(slots, np.int64)
    state = np.array([12345], np.uint64)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while steps == 0 or time.perf_counter() < deadline:  # at least one step
        _kernels.random_choices(masks, rows, state, actions)
        obs, masks, *_ = env.step(actions)
        steps += slots
    return steps / (time.perf_counter() - start)


def make_vec_steps(config: str, opponents: str, mode: str | None, seconds: float) -> float:
    """Learner steps/s of ``gymnasium.make_vec`` over 64 games: the compiled env
    (``mode=None``, the default) or ``"sync"``, both resetting in the same step (so
    that every step counted is a decision), the actions drawn from
    ``infos["action_mask"]``."""
    import gymnasium
    from gymnasium.vector import AutoresetMode

    import matador_env
    from matador_env.configs import configuration

    same_step = AutoresetMode.SAME_STEP
    extra: dict[str, Any] = {"autoreset_mode": same_step}
    if mode is not None:
        extra = {"vectorization_mode": mode, "vector_kwargs": {"autoreset_mode": same_step}}
    rules = configuration(config).rules()
    envs = gymnasium.make_vec(
        matador_env.GYM_ID, num_envs=64, rules=rules, opponents=opponents, **extra
    )
    _, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    deadline = start + seconds
    while steps == 0 or time.perf_counter() < deadline:  # at least one step
        masks = infos["action_mask"]
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        *_, infos = envs.step(actions)
        steps += len(actions)
    envs.close()
    return steps / (time.perf_counter() - start)


def perft_rates(preset: str, lines: int, repeats: int = 3) -> tuple[int, int, float, float]:
    """The depth and lines of the first perft count from the deal of seed 1 with at
    least ``lines`` lines (or the whole hand), and the Python and batch engines' lines
    per second counting it (medians of ``repeats``, taken in turn)."""
    from matador_env.batch import perft as batch_perft
    from matador_env.engine import perft
    from matador_env.perft import batch_position

    rules = Rules.preset(preset)
    state = HandState.deal(rules, 1)
    engine = batch_position(rules, 1, [])  # compiled (or loaded) outside the timing
    depth, count = 1, batch_perft(engine, 0, 1).lines
    while count < lines:
        deeper = batch_perft(engine, 0, depth + 1).lines
        if deeper == 0:
            break  # every line has ended the hand
        depth, count = depth + 1, deeper
    walks = {"python": lambda: perft(state, depth), "batch": lambda: batch_perft(engine, 0, depth)}
    times: dict[str, list[float]] = {name: [] for name in walks}
    for _ in range(repeats):
        for name, walk in walks.items():
            start = time.perf_counter()
            walk()
            times[name].append(time.perf_counter() - start)
    python, batch = (count / float(np.median(times[name])) for name in walks)
    return depth, count, python, batch


def search_views(preset: str, count: int) -> list[Any]:
    rules = Rules.preset(preset)
    rng = random.Random(3)
    views: list[Any] = []
    seed = 0
    while len(views) < count:
        s = HandState.deal(rules, seed)
        seed += 1
        for _ in range(rng.randrange(1, 10)):
            if s.is_over:
                break
            s = s.apply(rng.choice(s.legal_moves()))
        if not s.is_over and len(s.legal_moves()) > 1:
            views.append(s.view(s.to_move))
    return views


def search_playouts(preset: str, fast: int, decisions: int, samples: int = 64) -> float:
    from agents.search import SearchAgent

    agent = SearchAgent(samples=samples, fast=fast)
    views = search_views(preset, decisions)
    for view in search_views(preset, 4):  # kernels and tables loaded outside the timing
        agent.evaluate(view, random.Random(0))
    playouts = 0
    start = time.perf_counter()
    for k, view in enumerate(views):
        _, values = agent.evaluate(view, random.Random(k))
        playouts += samples * len(values) if len(values) > 1 else 0
    return playouts / (time.perf_counter() - start)


def ppo_steps(setup: str, timesteps: int) -> float:
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import DummyVecEnv

    torch.set_num_threads(1)
    venv: Any
    if setup == "vector":
        from matador_env.vector import VectorEnv, sb3_vec_env

        venv = sb3_vec_env(VectorEnv(64, preset="standard", mode="learner", seed=1))
        n_steps = 32  # 64 x 32 = 2048 steps per rollout, as 2 x 1024 below
    else:
        if setup == "today":
            from train.selfplay import OpponentPool, SelfPlayEnv

            def make() -> Any:
                return SelfPlayEnv(pool=OpponentPool(None), rules=Rules.preset("standard"))
        else:
            from matador_env.gym_env import MatadorSingleEnv

            def make() -> Any:
                return MatadorSingleEnv(preset="standard", opponents="random")

        venv = DummyVecEnv([make, make])
        venv.seed(1)
        n_steps = 1024
    model = MaskablePPO(
        "MlpPolicy",
        venv,
        learning_rate=1e-4,
        n_steps=n_steps,
        batch_size=256,
        n_epochs=6,
        gamma=0.995,
        gae_lambda=0.95,
        clip_range=0.1,
        ent_coef=0.003,
        policy_kwargs={"net_arch": [256, 256]},
        seed=1,
        device="cpu",
        verbose=0,
    )
    # A logger with no outputs: SB3's default makes an empty folder in the temp dir.
    model.set_logger(Logger(folder=None, output_formats=[]))
    start = time.perf_counter()
    model.learn(timesteps)
    return model.num_timesteps / (time.perf_counter() - start)


def trainer_steps(vector_envs: int, timesteps: int) -> float:
    """Steps/s of ``python -m train --baselines random --bc-decisions 0`` (with
    ``--vector-envs``), its PPO loop only: no evaluation, no final files."""
    import tempfile

    from train.loop import Trainer
    from train.run import TrainArgs, check_args

    args = TrainArgs(
        timesteps=timesteps,
        baselines="random",
        bc_decisions=0,
        eval_every=0,
        progress=False,
        vector_envs=vector_envs,
    )
    rules = check_args(args)
    with tempfile.TemporaryDirectory() as tmp:
        args.out = tmp
        trainer = Trainer(args, Path(tmp), rules)
        try:
            start = time.perf_counter()
            trainer.learn()
            seconds = time.perf_counter() - start
        finally:
            trainer.close()
    return trainer.steps / seconds


def _ratio(new: float, old: float) -> str:
    return f"{new / old:.1f}x" if old > 0 else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vector", description=__doc__)
    parser.add_argument("--seconds", type=positive_number, default=2.0, help="time per measurement")
    parser.add_argument(
        "--threads", type=positive_int, default=2, help="threads of the parallel row"
    )
    parser.add_argument("--ppo-steps", type=positive_int, default=8192, help="PPO steps per setup")
    parser.add_argument(
        "--search-decisions", type=positive_int, default=30, help="search decisions per setup"
    )
    parser.add_argument("--quick", action="store_true", help="a quarter of the time")
    parser.add_argument(
        "--section",
        choices=SECTIONS,
        nargs="+",
        action="extend",
        help="measure only these sections (several names, repeatable; default: all)",
    )
    args = parser.parse_args()
    sections = set(args.section or SECTIONS)
    seconds = args.seconds / 4 if args.quick else args.seconds
    decisions = max(4, args.search_decisions // 4) if args.quick else args.search_decisions
    ppo = max(2048, args.ppo_steps // 4) if args.quick else args.ppo_steps
    cores = os.cpu_count()
    print(f"machine: {cores} cores; numba threads for the parallel row: {args.threads}")

    if "compile" in sections:
        first, second = compile_times()
        print(f"compile: first use (compiles, caches) {first:.1f} s; second process {second:.2f} s")
    if "engine" in sections:
        engine_rows(seconds, args.threads)
    if "env" in sections:
        env_rows(seconds)
    if "make_vec" in sections:
        make_vec_rows(seconds)
    if "perft" in sections:
        perft_rows(seconds)
    if "search" in sections:
        search_rows(decisions)
    if "ppo" in sections:
        ppo_rows(ppo)


def engine_rows(seconds: float, threads: int) -> None:
    print("engine, random legal actions/s (bar: 15x on standard)")
    for preset in PRESETS:
        py = python_engine(preset, seconds)
        one = batch_engine(preset, seconds, 1)
        many = batch_engine(preset, seconds, threads)
        print(
            f"  {preset:14s} python {py:>11,.0f}  batch 1 thread {one:>12,.0f} ({_ratio(one, py)})"
            f"  {threads} threads {many:>12,.0f} ({_ratio(many, py)})",
            flush=True,
        )


def env_rows(seconds: float) -> None:
    print("env, agent-steps/s with observations and masks (bar: 10x)")
    for preset in ("standard", "leiden"):
        raw = raw_env_steps(preset, seconds)
        vec = vector_env_steps(preset, seconds)
        ratio = _ratio(vec, raw)
        print(f"  {preset:14s} raw_env {raw:>10,.0f}  VectorEnv(256) {vec:>12,.0f} ({ratio})")


def make_vec_rows(seconds: float, repeats: int = 3) -> None:
    print(
        "make_vec, learner steps/s of gymnasium.make_vec over 64 games, medians of "
        f"{repeats} runs each way in turn (no bar)"
    )
    for config in ("standard", "pagat_teams"):
        for opponents in ("random", "trained"):
            runs: dict[str | None, list[float]] = {"sync": [], None: []}
            for _ in range(repeats):
                for mode, rates in runs.items():
                    rates.append(make_vec_steps(config, opponents, mode, seconds))
            sync, compiled = (float(np.median(rates)) for rates in runs.values())
            print(
                f"  {config:12s} {opponents:8s} sync {sync:>9,.0f}  compiled {compiled:>9,.0f}"
                f" ({_ratio(compiled, sync)})",
                flush=True,
            )


def perft_rows(seconds: float) -> None:
    lines = max(1, round(seconds * PERFT_LINES_PER_SECOND))
    print(f"perft, lines counted/s from the deal of seed 1, at least {lines:,} lines (no bar)")
    for preset in PRESETS:
        depth, count, python, batch = perft_rates(preset, lines)
        print(
            f"  {preset:14s} depth {depth:2d}  lines {count:>9,}  python {python:>10,.0f}"
            f"  batch {batch:>11,.0f} ({_ratio(batch, python)})",
            flush=True,
        )


def search_rows(decisions: int) -> None:
    print("search, playouts/s at samples=64 (bar: 5x)")
    for preset in ("standard", "leiden"):
        old = search_playouts(preset, 0, decisions)
        new = search_playouts(preset, 1, decisions)
        print(
            f"  {preset:14s} old {old:>10,.0f}  batch {new:>10,.0f} ({_ratio(new, old)})",
            flush=True,
        )


def ppo_rows(ppo: int) -> None:
    print(f"ppo, MaskablePPO training steps/s over {ppo} steps (train's hyperparameters)")
    today = ppo_steps("today", ppo)
    single = ppo_steps("single", ppo)
    vector = ppo_steps("vector", ppo)
    print(f"  today (train self-play env, expert/greedy/random baselines, 2 envs) {today:>8,.0f}")
    print(f"  MatadorSingleEnv, random opponents, 2 envs                        {single:>8,.0f}")
    print(
        f"  VectorEnv learner mode, random opponents, 64 slots                 {vector:>8,.0f}"
        f" ({_ratio(vector, today)} today, {_ratio(vector, single)} single env)"
    )
    print(f"python -m train --baselines random --bc-decisions 0, steps/s over {ppo} steps")
    processes = trainer_steps(0, ppo)
    batched = trainer_steps(64, ppo)
    print(f"  today's setup (--n-envs 2, two processes)                         {processes:>8,.0f}")
    print(
        f"  --vector-envs 64 (one process)                                    {batched:>8,.0f}"
        f" ({_ratio(batched, processes)})"
    )


if __name__ == "__main__":
    run_main(main)
