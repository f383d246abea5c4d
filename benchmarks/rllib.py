"""Training throughput: RLlib PPO with 1 and 2 env runners beside ``python -m train``.

``python -m benchmarks.rllib [--game standard] [--iterations 2] [--sb3-timesteps 8192]``
prints, on this machine, in one run:

- RLlib (``python -m train.rllib``'s configuration: PPO self-play, shared masked
  module, its defaults: batches of 4000 env steps, 8 environments per env runner):
  env-steps/s with 1 env runner and with 2, each from the wall-clock time of
  ``--iterations`` whole training iterations (sampling and the PPO update) after one
  warm-up iteration. An env step is one
  seat's move; every move is a learning step of the shared policy.
- SB3 (``python -m train`` itself, run as a subprocess with its defaults but a
  ``--timesteps`` budget, no warm start and the smallest evaluations): the steps/s
  its MaskablePPO logs as ``time/fps`` to TensorBoard, last value. A step there is
  one learner move; the opponents' moves (the baselines, mostly the expert search
  agent) happen inside the environment step and are not counted. Its seconds, marked
  ``*``, are the whole command's (start-up, evaluations and export included), so its
  rate is not its steps over its seconds, as RLlib's is.

Ray runs locally on ``--num-cpus`` CPUs (default 2, and at least 2: each of the two
env runners takes one), without its dashboard, and is shut down at the end. A bad
argument ends the command with one line naming it and what is allowed (exit status
2), before Ray starts. Figures vary with the machine's load: compare them within one
run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from matador_env.flags import int_at_least, positive_int
from matador_env.streams import run_main

GAMES: dict[str, dict[str, Any]] = {
    "standard": {"preset": "standard"},
    "pagat-4-teams": {"preset": "pagat", "players": 4, "teams": True},
}


RUNNERS = (1, 2)
"""The env runners of the measured RLlib configurations."""


def rllib_args(game: str, runners: int, seed: int, num_cpus: int | None = None) -> Any:
    """The ``train.rllib.RllibArgs`` of a measured configuration."""
    from train.rllib import RllibArgs

    spec = GAMES[game]
    return RllibArgs(
        preset=spec["preset"],
        players=spec.get("players"),
        teams=spec.get("teams"),
        num_env_runners=runners,
        seed=seed,
        num_cpus=num_cpus,
    )


def rllib_rate(game: str, runners: int, iterations: int, seed: int) -> dict[str, float]:
    """Env-steps/s of whole RLlib training iterations with ``runners`` env runners."""
    from train.rllib import build_config, check_args, iteration_summary

    args = rllib_args(game, runners, seed)
    rules, hidden = check_args(args)
    algo = build_config(args, rules, hidden).build_algo()
    try:
        start = iteration_summary(algo.train())  # warm-up: actors, first weights sync
        began = time.perf_counter()
        for _ in range(iterations):
            end = iteration_summary(algo.train())
        seconds = time.perf_counter() - began
    finally:
        algo.stop()
    steps = end["env_steps"] - start["env_steps"]
    return {"steps": steps, "seconds": seconds, "rate": steps / seconds}


def sb3_rate(timesteps: int, seed: int) -> dict[str, float]:
    """The last ``time/fps`` that ``python -m train`` logs for a short run."""
    from tensorboard.backend.event_processing.event_accumulator import (  # type: ignore[import-untyped]
        EventAccumulator,
    )

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        command = [
            sys.executable,
            "-m",
            "train",
            "--timesteps",
            str(timesteps),
            "--bc-decisions",
            "0",
            "--eval-every",
            "0",
            "--eval-hands",
            "10",
            "--final-eval-hands",
            "10",
            "--no-progress",
            "--seed",
            str(seed),
            "--out",
            str(out),
        ]
        began = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
        seconds = time.perf_counter() - began
        if done.returncode != 0:
            raise RuntimeError(f"python -m train failed:\n{done.stderr[-2000:]}")
        fps: list[float] = []
        for events in sorted((out / "tb").rglob("events.out.tfevents.*")):
            acc = EventAccumulator(str(events.parent))
            acc.Reload()
            if "time/fps" in acc.Tags().get("scalars", []):
                fps += [e.value for e in acc.Scalars("time/fps")]
        if not fps:
            raise RuntimeError("python -m train logged no time/fps")
    return {"steps": timesteps, "seconds": seconds, "rate": fps[-1]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rllib", description=__doc__)
    parser.add_argument("--game", choices=sorted(GAMES), default="standard")
    parser.add_argument("--iterations", type=positive_int, default=2, help="timed RLlib iterations")
    parser.add_argument(
        "--sb3-timesteps", type=positive_int, default=8192, help="python -m train budget"
    )
    parser.add_argument(
        "--num-cpus",
        type=int_at_least(max(RUNNERS), f" (an env runner takes one; {max(RUNNERS)} run at once)"),
        default=2,
        help="CPUs of the local Ray",
    )
    # As python -m train.rllib checks it: numpy's generators, which RLlib seeds, take
    # none below 0.
    parser.add_argument("--seed", type=int_at_least(0), default=1)
    args = parser.parse_args(argv)
    from train.args import ArgsError
    from train.rllib import check_args

    for runners in RUNNERS:
        # python -m train.rllib's own checks of each configuration, before Ray starts.
        try:
            check_args(rllib_args(args.game, runners, args.seed, args.num_cpus))
        except ArgsError as refused:
            parser.error(str(refused))

    import ray
    import torch

    from matador_env.rllib import register_env

    torch.set_num_threads(1)
    print(
        f"game: {args.game}; Ray on {args.num_cpus} CPUs; PPO batches of 4000 env steps, "
        "8 envs per env runner",
        flush=True,
    )
    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False)
    register_env()
    rows: list[tuple[str, dict[str, float], str]] = []
    # SB3's rate is the fps its PPO logged; its seconds, the whole command's.
    whole_command = "SB3 MaskablePPO (python -m train)"
    try:
        for runners in RUNNERS:
            figures = rllib_rate(args.game, runners, args.iterations, args.seed)
            rows.append((f"RLlib PPO, {runners} env runner(s)", figures, "env-steps/s"))
            print(f"  done: {rows[-1][0]}", flush=True)
    finally:
        ray.shutdown()
    if args.game == "standard":
        try:
            figures = sb3_rate(args.sb3_timesteps, args.seed)
            rows.append((whole_command, figures, "learner steps/s"))
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"  python -m train not measured: {e}", flush=True)
    else:
        print("  python -m train trains the standard game only here: not measured")
    print()
    print(f"{'trainer':38s} {'steps':>8s} {'seconds':>8s} {'rate':>9s}  unit")
    for name, figures, unit in rows:
        seconds = f"{figures['seconds']:.1f}" + ("*" if name == whole_command else "")
        print(f"{name:38s} {int(figures['steps']):8d} {seconds:>8s} {figures['rate']:9.0f}  {unit}")
    if any(name == whole_command for name, _, _ in rows):
        print(
            "* the whole python -m train command (start-up, evaluations, export); its rate is "
            "the time/fps its MaskablePPO logged, not steps / seconds"
        )


if __name__ == "__main__":
    run_main(main)
