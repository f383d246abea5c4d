"""Strength benchmarks: fixed pairings on the standard preset, printed with their bars.

``python -m benchmarks.strength [--workers N] [--seed S] [--search SPEC] [--quick] [--only P]``

=====================  ==========================================================
pairing                bar
=====================  ==========================================================
expert vs random       at least 62% of hands and +13 points per hand
expert vs greedy       at least 55% of hands
search vs expert       at least +4 points per hand, significant at 95%, over at
                       least 3,000 duplicate hands; time per move printed
=====================  ==========================================================

Every pairing is played on duplicate deals by the arena (:mod:`evaluate.arena`):
each deal twice, the agents swapping seats, so the luck of the deal cancels; the
95% intervals are over per-deal means. Figures, not tests: the bars are printed
beside the measurements, met or not. ``--quick`` plays a tenth of the deals;
``--only`` runs some pairings only (``--only search`` the last; names: ``random``,
``greedy``, ``search``, repeatable).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

from evaluate.arena import Pairing, RunPlan, run, seat_patterns
from evaluate.report import PairingSummary, summarize
from matador_env.engine import Rules

EXPERT_VS_RANDOM_MIN_POINTS = 13.0
"""Points per hand ``expert`` must win by against ``random``; also the wide margin
``benchmarks.training`` asks of a trained policy."""


@dataclass(frozen=True)
class Bench:
    key: str
    """The name ``--only`` selects it by."""
    a: str
    b: str
    deals: int
    min_win: float | None = None
    min_points: float | None = None
    significant: bool = False


def benches(search: str, quick: bool) -> list[Bench]:
    f = 10 if quick else 1
    return [
        Bench(
            "random",
            "expert",
            "random",
            2000 // f,
            min_win=0.62,
            min_points=EXPERT_VS_RANDOM_MIN_POINTS,
        ),
        Bench("greedy", "expert", "greedy", 2000 // f, min_win=0.55),
        Bench("search", search, "expert", 1500 // f, min_points=4.0, significant=True),
    ]


def verdict(b: Bench, p: PairingSummary) -> list[str]:
    out = []
    assert p.win is not None and p.points is not None
    if b.min_win is not None:
        ok = p.win.mean >= b.min_win
        out.append(f"hand win >= {b.min_win:.0%}: {'met' if ok else 'NOT met'}")
    if b.min_points is not None:
        ok = p.points.mean >= b.min_points
        out.append(f"points/hand >= {b.min_points:+.0f}: {'met' if ok else 'NOT met'}")
    if b.significant:
        sig = p.points.lo > 0
        out.append(f"better at 95%: {'yes' if sig else 'NO'} (CI lower bound {p.points.lo:+.2f})")
        if b.min_points is not None:
            strict = p.points.lo >= b.min_points
            out.append(f"CI lower bound >= {b.min_points:+.0f}: {'yes' if strict else 'no'}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--search", default="search", help="the search agent's spec")
    parser.add_argument("--quick", action="store_true", help="a tenth of the deals")
    parser.add_argument(
        "--only",
        action="append",
        choices=("random", "greedy", "search"),
        help="run this pairing only (repeatable): expert vs random, expert vs greedy, "
        "search vs expert",
    )
    parser.add_argument("--no-progress", dest="progress", action="store_false")
    args = parser.parse_args(argv)
    rules = Rules.preset("standard")
    patterns = len(seat_patterns(rules))
    print(f"Strength benchmarks, preset standard, master seed {args.seed}, {args.workers} workers")
    print("duplicate deals: each deal played twice, the agents swapping seats; 95% CIs over deals")
    total = time.perf_counter()
    for b in benches(args.search, args.quick):
        if args.only and b.key not in args.only:
            continue
        plan = RunPlan(rules, [Pairing(b.a, b.b)], b.deals, 0, args.seed)
        bar = None
        if args.progress:
            from tqdm import tqdm

            bar = tqdm(total=plan.games(), unit="hand", desc=f"{b.a} vs {b.b}", file=sys.stderr)
        start = time.perf_counter()
        results = run(plan, args.workers, bar.update if bar else None)
        if bar is not None:
            bar.close()
        elapsed = time.perf_counter() - start
        rep = summarize(results, plan.pairings, [b.a, b.b], {"preset": "standard"})
        p = rep.pairings[0]
        assert p.win is not None and p.points is not None
        print()
        print(f"{b.a} vs {b.b}: {p.deals} deals x {patterns} = {p.hands} hands, {elapsed:.0f} s")
        print(f"  hand win rate  {p.win.mean:6.1%}  95% CI [{p.win.lo:.1%}, {p.win.hi:.1%}]")
        print(
            f"  points/hand    {p.points.mean:+6.2f}  95% CI [{p.points.lo:+.2f}, "
            f"{p.points.hi:+.2f}]"
        )
        print(
            f"  time per move  {b.a}: {1000 * p.seconds_per_move[0]:.2f} ms "
            f"({1000 * p.seconds_per_choice[0]:.2f} ms per move with a choice); "
            f"{b.b}: {1000 * p.seconds_per_move[1]:.2f} ms"
        )
        for line in verdict(b, p):
            print(f"  bar: {line}")
    print()
    print(f"total {time.perf_counter() - total:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
