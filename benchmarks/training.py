"""Training strength: the default recipe, then the result against the baselines.

``python -m benchmarks.training [--hands 3000] [--matches 500] [--out runs/NAME]
[--policy runs/NAME/best]`` trains with the documented default recipe
(``python -m train`` with its defaults, stopped by its step budget, which fits in
the time budget on two cores), then evaluates the best policy with duplicate deals:

- against ``expert``: hand win rate and points per hand over ``--hands`` deals,
  match win rate to the target over ``--matches`` match seeds, each with a 95%
  interval over deals;
- against ``random``: the same over fewer deals.

With ``--policy`` it skips training and evaluates that policy. The bar of the
issue: at least 55% of matches and a positive points differential against
expert, significant at 95%; a wide margin against random, taken as the bar that
``expert`` itself must clear against random in ``benchmarks.strength`` (+13 points
per hand, here the lower end of the 95% interval); and, when it trains, at most
60 minutes of training.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from benchmarks.strength import EXPERT_VS_RANDOM_MIN_POINTS
from evaluate.arena import Pairing, RunPlan, run
from matador_env.engine import Rules

DEFAULT_RECIPE = ["--exp-name", "default", "--preset", "standard"]


def _interval(values: list[float]) -> tuple[float, float]:
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return float(x.mean()), float("nan")
    return float(x.mean()), float(1.96 * x.std(ddof=1) / math.sqrt(len(x)))


def evaluate(policy: str, opponent: str, hands: int, matches: int, seed: int) -> dict[str, float]:
    rules = Rules.preset("standard")
    plan = RunPlan(rules, [Pairing(f"policy:{policy}", opponent)], hands, matches, seed)
    results = run(plan, workers=2)
    out: dict[str, float] = {"opponent": opponent}  # type: ignore[dict-item]
    for kind, count in (("hand", hands), ("match", matches)):
        per_deal: dict[int, list[tuple[float, float]]] = {}
        for r in results:
            if r.kind == kind:
                per_deal.setdefault(r.deal, []).append((r.score, r.diff))
        if not per_deal:
            continue
        scores = [float(np.mean([s for s, _ in g])) for g in per_deal.values()]
        diffs = [float(np.mean([d for _, d in g])) for g in per_deal.values()]
        win, win_ci = _interval(scores)
        pts, pts_ci = _interval(diffs)
        out[f"{kind}_deals"] = count
        out[f"{kind}_win_rate"] = round(win, 4)
        out[f"{kind}_win_rate_ci95"] = round(win_ci, 4)
        out[f"{kind}_points"] = round(pts, 3)
        out[f"{kind}_points_ci95"] = round(pts_ci, 3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", help="evaluate this exported policy instead of training")
    parser.add_argument("--hands", type=int, default=3000, help="duplicate deals vs expert")
    parser.add_argument("--matches", type=int, default=500, help="duplicate matches vs expert")
    parser.add_argument("--seed", type=int, default=20261122, help="evaluation master seed")
    parser.add_argument("--out", default=None, help="run folder of the training")
    args = parser.parse_args()
    policy = args.policy
    if policy is None:
        from train.run import main as train_main

        out = args.out or f"runs/benchmark__{int(time.time())}"
        start = time.time()
        run_dir = train_main([*DEFAULT_RECIPE, "--out", out, "--no-progress"])
        minutes = (time.time() - start) / 60
        print(json.dumps({"trained": str(run_dir), "minutes": round(minutes, 1)}), flush=True)
        policy = str(Path(run_dir) / "best")
    else:
        minutes = None
    figures = [
        evaluate(policy, "expert", args.hands, args.matches, args.seed),
        evaluate(policy, "random", max(200, args.hands // 5), args.matches // 5, args.seed + 1),
    ]
    for f in figures:
        print(json.dumps({"policy": policy, **f}), flush=True)
    e, r = figures
    # Lower ends of the 95% intervals of the points per hand.
    expert_low = e["hand_points"] - e["hand_points_ci95"]
    random_low = r["hand_points"] - r["hand_points_ci95"]
    verdict = {
        "matches_vs_expert_at_least_55%": e.get("match_win_rate", 0) >= 0.55,
        "points_vs_expert_significantly_positive": expert_low > 0,
        "points_vs_random_at_least_13": random_low >= EXPERT_VS_RANDOM_MIN_POINTS,
    }
    if minutes is not None:
        verdict["trained_within_60_minutes"] = minutes <= 60.0
    print(json.dumps({"verdict": verdict}), flush=True)


if __name__ == "__main__":
    main()
