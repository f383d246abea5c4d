"""Engine speed: random legal hands for each preset for a fixed time (at least one hand).

``python -m benchmarks.engine [--seconds S] [--preset NAME ...]`` prints one JSON
line per preset: hands/s, actions/s and mean actions per hand. Each action is a
full ``legal_moves()`` + ``apply()`` (legality checked) on an immutable state.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from matador_env.engine import PRESETS, HandState, Rules
from matador_env.flags import positive_number
from matador_env.streams import run_main


def run(preset: str, seconds: float, seed: int = 0) -> dict[str, float | str | int]:
    rules = Rules.preset(preset)
    rng = random.Random(seed)
    hands = actions = 0
    randrange = rng.randrange
    start = time.perf_counter()
    deadline = start + seconds
    # At least one hand, however small the budget: the figures divide by it.
    while hands == 0 or time.perf_counter() < deadline:
        s = HandState.deal(rules, randrange(1 << 30))
        while not s.is_over:
            moves = s.legal_moves()
            s = s.apply(moves[randrange(len(moves))])
            actions += 1
        hands += 1
    elapsed = time.perf_counter() - start
    return {
        "preset": preset,
        "seconds": round(elapsed, 2),
        "hands": hands,
        "hands_per_s": round(hands / elapsed, 1),
        "actions_per_s": round(actions / elapsed),
        "mean_actions_per_hand": round(actions / hands, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.engine", description=__doc__)
    parser.add_argument("--seconds", type=positive_number, default=3.0, help="time per preset")
    parser.add_argument("--preset", nargs="+", default=list(PRESETS), choices=list(PRESETS))
    args = parser.parse_args()
    for name in args.preset:
        print(json.dumps(run(name, args.seconds)), flush=True)


if __name__ == "__main__":
    run_main(main)
