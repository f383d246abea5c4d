"""Training strength: the default recipe, then the result against the baselines.

``python -m benchmarks.training [--hands 3000] [--matches 500] [--out runs/NAME |
--policy runs/NAME/best] [--no-progress]`` trains with the documented default recipe
(``python -m train`` with its defaults, stopped by its step budget, which fits in
the time budget on two cores) into ``--out`` (default ``runs/benchmark__{unix time}``),
then evaluates the best policy with duplicate deals:

- against ``expert``: hand win rate and points per hand over ``--hands`` deals,
  match win rate to the target over ``--matches`` match seeds, each with a 95%
  interval over deals;
- against ``random``: the same over ``max(200, hands // 5)`` deals (a fifth of
  ``--hands``, but never under 200, which the interval of the bar below needs: so
  more deals than against expert when ``--hands`` is under 200) and ``matches // 5``
  match seeds (a fifth of ``--matches``, rounded down: none when it is under 5).

With ``--policy`` it skips training and evaluates that policy (``--out``, the folder
of a training, is then refused). The training and each evaluation show their
progress on stderr (``--no-progress``: none). The bar of the
issue: at least 55% of matches and a positive points differential against
expert, significant at 95%; a wide margin against random, taken as the bar that
``expert`` itself must clear against random in ``benchmarks.strength`` (+13 points
per hand, here the lower end of the 95% interval); and, when it trains, at most
20 minutes of training (the budget of the default recipe, for any configuration).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from benchmarks.strength import EXPERT_VS_RANDOM_MIN_POINTS
from evaluate.arena import Pairing, RunPlan, duplicate_figures, run_with_bar
from evaluate.stats import finite_or_none
from matador_env.engine import Rules
from matador_env.engine.state import SEED_LIMIT
from matador_env.files import folder_arg
from matador_env.flags import int_at_least, positive_int, seed_arg
from matador_env.streams import run_main
from train.files import new_run_problem

DEFAULT_RECIPE = ["--exp-name", "default", "--preset", "standard"]


def evaluate(
    policy: str, opponent: str, hands: int, matches: int, seed: int, progress: bool = False
) -> dict[str, float | None]:
    rules = Rules.preset("standard")
    plan = RunPlan(rules, [Pairing(f"policy:{policy}", opponent)], hands, matches, seed)
    results = run_with_bar(plan, 2, f"vs {opponent}", progress)
    out: dict[str, float | None] = {"opponent": opponent}  # type: ignore[dict-item]
    for kind, count in (("hand", hands), ("match", matches)):
        games = [r for r in results if r.kind == kind]
        if not games:
            continue
        # The arena report's intervals: over deals, each deal's replays averaged first.
        win, pts = duplicate_figures(games)
        out[f"{kind}_deals"] = count
        # One deal gives points no interval: null, as in the arena's report.json.
        out[f"{kind}_win_rate"] = round(win.mean, 4)
        # Both ends, no half width: a rate's interval is not symmetric about it.
        out[f"{kind}_win_rate_lo95"] = finite_or_none(round(win.lo, 4))
        out[f"{kind}_win_rate_hi95"] = finite_or_none(round(win.hi, 4))
        out[f"{kind}_points"] = round(pts.mean, 3)
        out[f"{kind}_points_lo95"] = finite_or_none(round(pts.lo, 3))
        out[f"{kind}_points_hi95"] = finite_or_none(round(pts.hi, 3))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.training", description=__doc__.splitlines()[0]
    )
    # Either a policy to evaluate or the folder of a training, not both.
    given = parser.add_mutually_exclusive_group()
    given.add_argument("--policy", help="evaluate this exported policy instead of training")
    parser.add_argument(
        "--hands", type=positive_int, default=3000, help="duplicate deals vs expert"
    )
    parser.add_argument(
        "--matches", type=int_at_least(0), default=500, help="duplicate matches vs expert"
    )
    parser.add_argument("--seed", type=seed_arg, default=20261122, help="evaluation master seed")
    given.add_argument(
        "--out",
        type=folder_arg,
        default=None,
        help="run folder of the training (default runs/benchmark__{unix time})",
    )
    parser.add_argument(
        "--no-progress", dest="progress", action="store_false", help="no progress bars"
    )
    args = parser.parse_args(argv)
    if args.out is not None:
        # Checked before the training, under this command's name (python -m train checks
        # it too, but only after the training is set up, and names itself).
        problem = new_run_problem(args.out)
        if problem is not None:
            parser.error(f"--out: {problem}; give another folder")
    policy = args.policy
    if policy is not None:
        # Checked before any game: a path with no policy, or one of other rules.
        from agents import make_agent
        from evaluate.arena import check_agent

        spec = f"policy:{policy}"
        try:
            check_agent(Rules.preset("standard"), spec, make_agent(spec))
        except ValueError as refused:  # AgentSpecError, AgentRulesError
            parser.error(f"--policy: {refused}")
    if policy is None:
        from train.run import main as train_main

        out = str(args.out) if args.out is not None else f"runs/benchmark__{int(time.time())}"
        start = time.time()
        # The recipe takes up to 20 minutes: its progress bars are all that shows them.
        quiet = [] if args.progress else ["--no-progress"]
        run_dir = train_main([*DEFAULT_RECIPE, "--out", out, *quiet])
        minutes = (time.time() - start) / 60
        print(json.dumps({"trained": str(run_dir), "minutes": round(minutes, 1)}), flush=True)
        policy = str(Path(run_dir) / "best")
    else:
        minutes = None
    figures = [
        evaluate(policy, "expert", args.hands, args.matches, args.seed, args.progress),
        evaluate(
            policy,
            "random",
            max(200, args.hands // 5),
            args.matches // 5,
            (args.seed + 1) % SEED_LIMIT,  # the arena's master seeds end at 2**64 - 1
            args.progress,
        ),
    ]
    for f in figures:
        print(json.dumps({"policy": policy, **f}), flush=True)
    e, r = figures
    # Lower ends of the 95% intervals of the points per hand.
    expert_low = e["hand_points_lo95"]
    random_low = r["hand_points_lo95"]
    verdict = {
        "matches_vs_expert_at_least_55%": (e.get("match_win_rate") or 0.0) >= 0.55,
        "points_vs_expert_significantly_positive": expert_low is not None and expert_low > 0,
        "points_vs_random_at_least_13": random_low is not None
        and random_low >= EXPERT_VS_RANDOM_MIN_POINTS,
    }
    if minutes is not None:
        verdict["trained_within_20_minutes"] = minutes <= 20.0
    print(json.dumps({"verdict": verdict}), flush=True)


if __name__ == "__main__":
    run_main(main)
