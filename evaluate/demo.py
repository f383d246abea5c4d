"""The main job until training exists: one readable hand, then a table of many hands.

``python -m evaluate.demo [--seed N] [--hands N]``
"""

from __future__ import annotations

import argparse
import random
import time

from agents import make_agent
from matador_env.engine import PRESETS, HandState, Rules, render_layout, render_table


def show_hand(rules: Rules, seed: int, specs: list[str]) -> None:
    agents = [make_agent(s) for s in specs]
    names = [f"P{i} ({s})" for i, s in enumerate(specs)]
    rng = random.Random(seed)
    state = HandState.deal(rules, seed)
    print(f"One hand of Matador, preset 'standard', seed {seed}: {' vs '.join(names)}")
    print(render_table(state, names=names))
    print()
    while not state.is_over:
        seat = state.to_move
        move = agents[seat].act(state.view(seat), rng)
        note = f" (took {state.boneyard[0]})" if move.kind == "draw" else ""
        state = state.apply(move)
        ends = " ".join(str(e) for e in state.ends)
        print(f"  {state.n_actions:3d}. {names[seat]:<14} {str(move):<10}{note:<13} ends: {ends}")
    print()
    print(render_layout(state))
    print(f"Result: {state.outcome}")


def table(hands: int, specs: list[str], seed: int) -> None:
    print()
    print(f"{specs[0]} vs {specs[1]}, {hands} hands per preset, seats alternating, seed {seed}")
    header = f"{'preset':<14}{'hands/s':>9}{specs[0] + ' wins':>14}{'ties':>7}{'pts/hand':>10}"
    print(header)
    print("-" * len(header))
    agents = [make_agent(s) for s in specs]
    for name in PRESETS:
        rules = Rules.preset(name)
        rng = random.Random(seed)
        wins = ties = 0
        diff = 0
        start = time.perf_counter()
        for k in range(hands):
            first = k % 2  # the seat agent 0 takes this hand
            seats = {first: agents[0], 1 - first: agents[1]}
            s = HandState.deal(rules, seed * 1_000_003 + k)
            while not s.is_over:
                s = s.apply(seats[s.to_move].act(s.view(s.to_move), rng))
            out = s.outcome
            assert out is not None
            if out.winner is None:
                ties += 1
            elif out.winner == first:
                wins += 1
                diff += out.points
            else:
                diff -= out.points
        rate = hands / (time.perf_counter() - start)
        row = f"{name:<14}{rate:>9.0f}{wins / hands:>14.1%}{ties / hands:>7.1%}"
        print(f"{row}{diff / hands:>+10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=2026, help="seed of the shown hand and table")
    parser.add_argument("--hands", type=int, default=2000, help="hands per preset in the table")
    args = parser.parse_args()
    specs = ["greedy", "random"]
    show_hand(Rules.preset("standard"), args.seed, specs)
    table(args.hands, specs, args.seed)


if __name__ == "__main__":
    main()
