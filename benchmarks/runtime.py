"""The shipped bots' move in each runtime: onnxruntime against numpy, cold and warm.

``python -m benchmarks.runtime [--configuration NAME ...] [--decisions N] [--sweep-mb M]
[--seed S]``

Per shipped configuration (default: all of them), the same decisions with a choice
(from expert play of that configuration's deals) go to ``OnnxPolicy.choose`` of the
bot loaded twice: ``runtime="onnxruntime"`` and ``runtime="auto"`` (a plain MLP in
numpy, :mod:`matador_env.onnx_mlp`). The two take turns view by view, in a random
order per view, so the machine's drift falls on both. Each view is timed

- cold: right after summing an array of ``--sweep-mb`` MB, which evicts the network
  and the runtime's own state from the caches, as the search's playouts do between
  the bot's moves in the strength matrix's bot ~ search pairing;
- warm: after three untimed calls on the same view.

Printed per configuration: the median microseconds of each, the ratio of the medians
(numpy over onnxruntime) and how many of the decisions the two runtimes answered
with the same move. Figures, not tests: nothing is asserted on time.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import numpy as np

from agents import make_agent
from matador_env.configs import CONFIGURATIONS, configuration
from matador_env.engine import HandState, SeatView
from matador_env.flags import positive_int, seed_arg
from matador_env.policy import OnnxPolicy, bots_dir, load_policy, shipped_configurations
from matador_env.streams import run_main


def decisions(name: str, count: int, seed: int) -> list[SeatView]:
    """The first ``count`` views with two or more legal moves of expert play."""
    rules = configuration(name).rules()
    expert = make_agent("expert")
    rng = random.Random(seed)
    views: list[SeatView] = []
    deal = seed
    while len(views) < count:
        state = HandState.deal(rules, seed=deal)
        deal += 1
        while not state.is_over:
            view = state.view(state.to_move)
            if len(view.legal_moves) > 1:
                views.append(view)
            state = state.apply(expert.act(view, rng))
    return views[:count]


def compare(name: str, count: int, sweep_mb: int, seed: int) -> dict[str, float | int | str]:
    """One configuration's medians (µs), their ratios and the moves in common."""
    folder = bots_dir() / name
    runtimes: dict[str, OnnxPolicy] = {
        "onnxruntime": load_policy(folder, runtime="onnxruntime"),
        "numpy": load_policy(folder, runtime="auto"),
    }
    if runtimes["numpy"].runtime != "numpy":
        raise SystemExit(f"{name}: the shipped network is not a plain MLP; numpy does not run it")
    views = decisions(name, count, seed)
    sweep = np.ones((sweep_mb << 20) // 8)
    order = random.Random(seed)
    clock = time.perf_counter
    times: dict[tuple[str, str], list[float]] = {
        (k, c): [] for k in runtimes for c in ("cold", "warm")
    }
    same = 0
    for view in views:
        same += runtimes["onnxruntime"].choose(view) == runtimes["numpy"].choose(view)
        kinds = list(runtimes)
        order.shuffle(kinds)
        for kind in kinds:
            policy = runtimes[kind]
            sweep.sum()
            t0 = clock()
            policy.choose(view)
            times[(kind, "cold")].append(clock() - t0)
            for _ in range(3):
                policy.choose(view)
            t0 = clock()
            policy.choose(view)
            times[(kind, "warm")].append(clock() - t0)
    med = {key: statistics.median(values) * 1e6 for key, values in times.items()}
    return {
        "configuration": name,
        "cold_onnxruntime_us": round(med[("onnxruntime", "cold")], 1),
        "cold_numpy_us": round(med[("numpy", "cold")], 1),
        "cold_ratio": round(med[("numpy", "cold")] / med[("onnxruntime", "cold")], 2),
        "warm_onnxruntime_us": round(med[("onnxruntime", "warm")], 1),
        "warm_numpy_us": round(med[("numpy", "warm")], 1),
        "warm_ratio": round(med[("numpy", "warm")] / med[("onnxruntime", "warm")], 2),
        "same_moves": same,
        "decisions": len(views),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.runtime",
        description="The shipped bots' move in onnxruntime and in numpy, cold and warm.",
    )
    parser.add_argument(
        "--configuration",
        action="append",
        choices=list(CONFIGURATIONS),
        help="a shipped configuration (repeatable; default: every shipped one)",
    )
    parser.add_argument(
        "--decisions", type=positive_int, default=1000, help="views per configuration"
    )
    parser.add_argument(
        "--sweep-mb",
        type=positive_int,
        default=32,
        help="memory summed before each cold call (MB)",
    )
    parser.add_argument("--seed", type=seed_arg, default=0, help="first deal and the turn order")
    args = parser.parse_args()
    shipped = [c.name for c in shipped_configurations()]
    # A configuration named twice is measured once (dict keeps the order given).
    names = list(dict.fromkeys(args.configuration or shipped))
    missing = [n for n in names if n not in shipped]
    if missing:
        parser.error(f"no shipped bot for {', '.join(missing)}; shipped: {', '.join(shipped)}")
    header = (
        f"{'configuration':14s} {'cold onnxrt':>11s} {'cold numpy':>10s} {'ratio':>6s} "
        f"{'warm onnxrt':>11s} {'warm numpy':>10s} {'ratio':>6s} {'same moves':>11s}"
    )
    print(f"median µs of a move, {args.decisions} decisions each, sweep {args.sweep_mb} MB")
    print("ratio: numpy's median over onnxruntime's (below 1: numpy is faster)")
    print(header)
    print("-" * len(header))
    for name in names:
        row = compare(name, args.decisions, args.sweep_mb, args.seed)
        print(
            f"{name:14s} {row['cold_onnxruntime_us']:11.1f} {row['cold_numpy_us']:10.1f} "
            f"{row['cold_ratio']:6.2f} {row['warm_onnxruntime_us']:11.1f} "
            f"{row['warm_numpy_us']:10.1f} {row['warm_ratio']:6.2f} "
            f"{str(row['same_moves']) + '/' + str(row['decisions']):>11s}",
            flush=True,
        )


if __name__ == "__main__":
    run_main(main)
