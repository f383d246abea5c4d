"""Environment speed: agent-steps/s of random masked play, Matador beside PettingZoo's classics.

``python -m benchmarks.env [--seconds S] [--slices K] [--preset NAME] [--render]`` plays uniform
random legal actions (drawn from each observation's ``action_mask``) through:

- ``matador_v0 env()``: our environment in all of PettingZoo's standard wrappers,
  the observation built at every step by ``last()``;
- ``matador_v0 raw_env()``: the same without the wrappers;
- ``connect_four_v3`` and ``texas_holdem_v4``: PettingZoo's classic environments
  through their wrappers (they need ``pygame-ce`` and ``rlcard``; skipped if absent);
- ``python_block_dominoes`` through Shimmy, when ``shimmy`` and ``open_spiel`` are
  installed (skipped otherwise).

Every environment is driven by the same loop and the same sampler, in the same
process, so the rates compare. An agent-step is one ``step()`` with an action (the
``step(None)`` of finished seats is timed but not counted). Each environment runs
in ``--slices`` slices, round-robin with the others, so that all see the same
machine load; the rate is over all its slices. The last line compares matador's wrapped rate with
connect_four's (the target is at least 1.3x).

With ``--render`` every environment is made with ``render_mode="rgb_array"`` and
``render()`` is called after every agent-step, so the rates are those of recording a
video of every game (the Shimmy environment is skipped: it draws no pictures).
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from matador_env.engine import PRESETS
from matador_env.flags import positive_int, positive_number
from matador_env.streams import run_main

EnvFactory = Callable[[], Any]


class Runner:
    """Random masked play on one environment, run in slices of time."""

    def __init__(self, make: EnvFactory, seed: int = 0, render: bool = False) -> None:
        self.env = make()
        self.render = render
        self.env.reset(seed=seed)
        self.rng = np.random.default_rng(seed)
        self.steps = self.games = 0
        self.elapsed = 0.0

    def run(self, seconds: float) -> None:
        """Play whole games for about ``seconds``, at least one (the rates divide by it)."""
        env = self.env
        integers = self.rng.integers
        flatnonzero = np.flatnonzero
        render = self.render
        steps = games = 0
        start = time.perf_counter()
        deadline = start + seconds
        while games == 0 or time.perf_counter() < deadline:
            env.reset()
            for _agent in env.agent_iter():
                obs, _, terminated, truncated, info = env.last()
                if terminated or truncated:
                    action = None
                else:
                    mask = obs["action_mask"] if "action_mask" in obs else info["action_mask"]
                    legal = flatnonzero(mask)
                    action = int(legal[integers(len(legal))])
                    steps += 1
                env.step(action)
                if render and action is not None:
                    env.render()
            games += 1
        self.elapsed += time.perf_counter() - start
        self.steps += steps
        self.games += games

    def result(self) -> dict[str, float | int]:
        return {
            "seconds": round(self.elapsed, 2),
            "games": self.games,
            "agent_steps": self.steps,
            "agent_steps_per_s": round(self.steps / self.elapsed),
            "steps_per_game": round(self.steps / self.games, 1),
        }


def _pettingzoo_classic(name: str, registry_id: str, mode: str | None) -> EnvFactory | str:
    """A PettingZoo classic game's factory, or why it is skipped. PettingZoo 1.27's
    registry (``pettingzoo.make``) builds the same wrapped env as the module's
    ``env()``, whose import is deprecated there; older versions have only the module."""
    import pettingzoo  # type: ignore[import-untyped]

    make = getattr(pettingzoo, "make", None)
    try:
        if make is not None:
            # The registry imports the game (and its extras, e.g. rlcard) when it
            # builds one, so one is built here to find a missing extra.
            make("aec", registry_id, render_mode=mode).close()
            return lambda: make("aec", registry_id, render_mode=mode)
        module = importlib.import_module(f"pettingzoo.classic.{name}")
    except ImportError as e:
        return f"skipped: {e}"
    return lambda: module.env(render_mode=mode)


def factories(preset: str, render: bool = False) -> dict[str, EnvFactory | str]:
    """Each environment's factory, or why it is skipped; ``render``: made to draw
    ``rgb_array`` pictures."""
    from matador_env import env, raw_env

    mode = "rgb_array" if render else None
    out: dict[str, EnvFactory | str] = {
        f"matador_v0 env() {preset}": lambda: env(preset=preset, render_mode=mode),
        f"matador_v0 raw_env() {preset}": lambda: raw_env(preset=preset, render_mode=mode),
    }
    for name, registry_id in (
        ("connect_four_v3", "classic/connect_four-v3"),
        ("texas_holdem_v4", "classic/texas_holdem-v4"),
    ):
        out[f"{name} env()"] = _pettingzoo_classic(name, registry_id, mode)
    if render:
        out["python_block_dominoes (shimmy)"] = "skipped: it draws no rgb_array pictures"
        return out
    try:
        import open_spiel.python.games.block_dominoes  # noqa: F401 - registers the game
        from shimmy import OpenSpielCompatibilityV0

        out["python_block_dominoes (shimmy)"] = lambda: OpenSpielCompatibilityV0(
            game_name="python_block_dominoes"
        )
    except ImportError as e:
        out["python_block_dominoes (shimmy)"] = f"skipped: {e}"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.env", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--seconds", type=positive_number, default=6.0, help="total time per environment"
    )
    parser.add_argument(
        "--slices", type=positive_int, default=30, help="round-robin slices per environment"
    )
    parser.add_argument("--preset", default="standard", choices=list(PRESETS))
    parser.add_argument(
        "--render", action="store_true", help="draw an rgb_array picture after every step"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    makers = factories(args.preset, args.render)
    runners = {
        name: Runner(make, render=args.render)
        for name, make in makers.items()
        if not isinstance(make, str)
    }
    # Round-robin slices, so that every environment sees the same machine load.
    for _ in range(args.slices):
        for runner in runners.values():
            runner.run(args.seconds / args.slices)
    for name, make in makers.items():
        if isinstance(make, str):
            print(json.dumps({"env": name, "result": make}), flush=True)
        else:
            print(json.dumps({"env": name, **runners[name].result()}), flush=True)
    ours = runners.get(f"matador_v0 env() {args.preset}")
    c4 = runners.get("connect_four_v3 env()")
    if ours and c4 and args.render:
        # The 1.3x target is for plain steps; drawing is compared without one.
        ratio = ours.steps / ours.elapsed / (c4.steps / c4.elapsed)
        print(json.dumps({"matador_env_over_connect_four_drawing": round(ratio, 2)}), flush=True)
    elif ours and c4:
        ratio = ours.steps / ours.elapsed / (c4.steps / c4.elapsed)
        verdict = "meets" if ratio >= 1.3 else "below"
        print(
            json.dumps(
                {
                    "matador_env_over_connect_four": round(ratio, 2),
                    "target": 1.3,
                    "verdict": verdict,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    run_main(main)
