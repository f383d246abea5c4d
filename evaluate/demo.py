"""The main job (``make demo``): a hand shown move by move, a short self-play training
run, its evaluation against the baselines, and the shipped bot's evaluation.

``python -m evaluate.demo [--seed N] [--timesteps N] [--hands N] [--quick]``
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

from agents import make_agent
from matador_env.engine import HandState, Rules, render_layout, render_table
from matador_env.policy import BOTS_DIR

from .__main__ import main as arena_main

# Relative to the checkout when run from it (shorter names in the tables).
_bot = BOTS_DIR / "standard"
SHIPPED_BOT = f"policy:{_bot.relative_to(Path.cwd()) if _bot.is_relative_to(Path.cwd()) else _bot}"


def show_hand(rules: Rules, seed: int, specs: list[str], labels: list[str]) -> None:
    agents = [make_agent(s) for s in specs]
    names = [f"P{i} ({label})" for i, label in enumerate(labels)]
    rng = random.Random(seed)
    state = HandState.deal(rules, seed)
    print(f"== One hand of Matador (preset 'standard', seed {seed}): {' vs '.join(names)}")
    print(render_table(state, names=names))
    print()
    while not state.is_over:
        seat = state.to_move
        move = agents[seat].act(state.view(seat), rng)
        note = f" (took {state.boneyard[0]})" if move.kind == "draw" else ""
        state = state.apply(move)
        ends = " ".join(str(e) for e in state.ends)
        print(f"  {state.n_actions:3d}. {names[seat]:<16} {str(move):<10}{note:<13} ends: {ends}")
    print()
    print(render_layout(state))
    print(f"Result: {state.outcome}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=2026, help="seed of the hand, run and arena")
    parser.add_argument(
        "--timesteps", type=int, default=150_000, help="steps of the short training run"
    )
    parser.add_argument("--hands", type=int, default=600, help="hands per pairing in the arena")
    parser.add_argument("--quick", action="store_true", help="tiny budgets (a smoke run)")
    args = parser.parse_args()
    if args.quick:
        args.timesteps, args.hands = 2048, 40
    show_hand(Rules.preset("standard"), args.seed, [SHIPPED_BOT, "expert"], ["bot", "expert"])

    run_dir = Path("runs") / f"demo__standard__{args.seed}__{int(time.time())}"
    print(f"\n== Self-play training, {args.timesteps} steps on two cores -> {run_dir}")
    from train.run import main as train_main

    train_main(
        [
            "--exp-name", "demo", "--timesteps", str(args.timesteps), "--out", str(run_dir),
            "--seed", str(args.seed), "--eval-every", "0",
            "--snapshot-every", str(max(1024, args.timesteps // 3)),
            "--final-eval-hands", str(max(20, args.hands // 3)),
        ]
    )  # fmt: skip

    print(f"\n== The freshly trained policy against the baselines ({args.hands} hands each)")
    arena_main(
        [
            "--vs", f"policy:{run_dir / 'best'}", "--agents", "random", "greedy", "expert",
            "--hands", str(args.hands), "--seed", str(args.seed),
            "--out", str(run_dir / "arena"),
        ]
    )  # fmt: skip

    print("\n== The shipped bot (matador_env/bots/standard) against the baselines")
    arena_main(
        [
            "--vs", SHIPPED_BOT, "--agents", "random", "greedy", "expert",
            "--hands", str(args.hands), "--seed", str(args.seed),
            "--out", str(Path("reports") / "shipped_bot"),
        ]
    )  # fmt: skip


if __name__ == "__main__":
    main()
