"""The evaluation arena: ``python -m evaluate --agents expert search random --hands 4000``.

Plays a round robin of the agents (or, with ``--vs CANDIDATE``, the candidate
against each agent of ``--agents``) on duplicate deals: each deal is replayed
with the agents rotated through the seats, so deal luck cancels. Work is spread
over worker processes; the master seed is printed and every deal, match and
agent seed derives from it, so any result reproduces.

With more than two seats and no partnerships, each deal is played by default
with A alone against B's and with B alone against A's; ``--field`` plays only the
first kind (A alone in each seat in turn, A being the candidate of ``--vs`` or
the first of a round-robin pair) and reports A's points minus the mean of the
field's seats' points, and the share of the field's seats A finished ahead of
(see :mod:`evaluate.arena`).

The table is ``--preset`` (default standard) with ``--players``, ``--teams`` and
``--rules KEY=VALUE`` changes, spelled as for ``python -m train``; or ``--config
NAME``, one of the shipped bots' configurations (e.g. ``pagat_teams``), with
``--rules`` on top.

Output: a table in the terminal, and ``report.json``, ``report.md`` and
``report.png`` (ratings and pairwise point differentials) in ``--out``; with
``--records``, also ``records.jsonl``: every game with the agent in each seat, its
result and the record of each hand it played, which
``matador_env.engine.parse_hand_record(text).replay()`` plays again move for move
(see :func:`evaluate.arena.write_records`). The folder holds one run's files: they
replace an earlier run's as a whole, or not at all if one cannot be written, and an
earlier run's ``report.png`` or ``records.jsonl`` is removed when this run writes none
(:func:`matador_env.files.atomic_write_all`). With ``--field`` at more than two sides the
report's names for the figures say that they are A's against the field.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from matador_env.configs import (
    CONFIGURATIONS,
    configuration,
    seated_rules,
    seated_rules_flag,
)
from matador_env.engine import PRESETS, Rules, RulesError
from matador_env.files import folder_arg, make_folder
from matador_env.flags import integer_arg, seed_arg
from matador_env.streams import progress_bar, run_main

from .arena import (
    AgentRulesError,
    Pairing,
    RunPlan,
    check_agent,
    run,
    seat_patterns,
    write_records,
)
from .report import run_files_problem, summarize

__all__ = ["Args", "main", "parse_args"]

# The most hands and matches per pairing: 10 million hands are days of play; what lies
# beyond does not fit the arena's work list in memory (its units are listed at start).
MAX_HANDS = 10_000_000
MAX_MATCHES = 1_000_000


@dataclass
class Args:
    """The arena's arguments."""

    agents: list[str]
    """Agent specs (``random``, ``greedy``, ``expert``, ``search:samples=32`` ...)."""
    vs: str | None
    """A candidate spec that plays each of ``agents``; None for a round robin."""
    preset: str | None
    """A preset of docs/rules.md (None: ``config``'s, else standard)."""
    config: str | None
    """A configuration of :data:`matador_env.configs.CONFIGURATIONS` (its preset and
    seats), instead of ``preset``, ``players`` and ``teams``."""
    players: int | None
    """Players, when not the preset's."""
    teams: bool | None
    """Partnerships (True) or every seat for itself (False), when not the preset's."""
    rules: list[str]
    """``key=value`` changes on top (e.g. ``target_score=150``); later pairs win."""
    hands: int
    """Hands per pairing, rounded up to whole duplicate deals."""
    matches: int | None
    """Matches to the target per pairing, rounded up to whole duplicate sets
    (default: hands / 20; 0 for none)."""
    field: bool
    """Only A alone against a field of B's (more than two seats, no teams)."""
    seed: int
    """The master seed."""
    workers: int
    """Worker processes (default: every core)."""
    out: Path
    """Directory for report.json, report.md and report.png."""
    records: bool
    """Also write records.jsonl: every game's hand records."""
    plot: bool
    progress: bool


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m evaluate",
        description="Duplicate-deal arena for Matador agents: round robin or one candidate "
        "against a list, with confidence intervals, ratings and a report.",
    )
    p.add_argument("--agents", nargs="+", required=True, metavar="SPEC", help="agent specs")
    p.add_argument("--vs", metavar="SPEC", help="a candidate that plays each of --agents")
    p.add_argument("--preset", help=f"one of: {', '.join(PRESETS)} (default standard)")
    p.add_argument(
        "--config",
        metavar="NAME",
        help="a configuration of the shipped bots, instead of --preset, --players and "
        f"--teams: {', '.join(CONFIGURATIONS)}",
    )
    p.add_argument("--players", type=integer_arg, help="number of players (default: the preset's)")
    p.add_argument(
        "--teams",
        action=argparse.BooleanOptionalAction,
        help="two partnerships, seats 0+2 against 1+3 (four players only, so with --players 4 "
        "unless the preset seats four; --no-teams: each for himself)",
    )
    p.add_argument(
        "--rules",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="changes of the rules on top (docs/rules.md), e.g. target_score=150",
    )
    p.add_argument(
        "--hands", type=integer_arg, default=1000, help="hands per pairing (default 1000)"
    )
    p.add_argument(
        "--matches", type=integer_arg, default=None, help="matches per pairing (default hands/20)"
    )
    p.add_argument(
        "--field",
        action="store_true",
        help="more than two seats, no teams: play only A alone against a field of B's, "
        "A in each seat in turn (points: A minus the field's mean)",
    )
    p.add_argument("--seed", type=seed_arg, default=2026, help="master seed (default 2026)")
    p.add_argument(
        "--workers",
        type=integer_arg,
        default=os.cpu_count() or 1,
        help="processes (default: all cores)",
    )
    p.add_argument(
        "--out",
        type=folder_arg,
        default=Path("reports/arena"),
        help="report directory (default: reports/arena)",
    )
    p.add_argument(
        "--records",
        action="store_true",
        help="also write records.jsonl in --out: each game's seats, result and hand records",
    )
    p.add_argument("--no-plot", dest="plot", action="store_false", help="skip report.png")
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    return p


def parse_args(argv: list[str] | None = None) -> tuple[Args, Rules, list[Pairing]]:
    """Parse and check the arguments; errors exit with status 2 and a clear message."""
    from agents import AgentSpecError, known_specs, make_agent

    parser = build_parser()
    ns = parser.parse_args(argv)
    args = Args(**vars(ns))
    if args.config is not None:
        given = [
            f
            for f, v in (
                ("--preset", args.preset),
                ("--players", args.players),
                ("--teams", args.teams),
            )
            if v is not None
        ]
        if given:
            parser.error(
                f"--config {args.config} chooses the preset, players and teams; drop "
                f"{' and '.join(given)} (other changes go in --rules)"
            )
        try:
            config = configuration(args.config)
        except ValueError as e:
            parser.error(f"--config: {e}")
        args.preset, args.players, args.teams = config.preset, config.players, config.teams
    elif args.preset is None:
        args.preset = "standard"
    if args.preset not in PRESETS:
        parser.error(f"unknown preset {args.preset!r}; presets: {', '.join(PRESETS)}")
    try:
        rules = seated_rules(args.preset, args.players, args.teams, args.rules)
    except RulesError as e:
        parser.error(f"{seated_rules_flag(e, args.players, args.teams, args.rules)}: {e}")
    if not 1 <= args.hands <= MAX_HANDS:
        parser.error(f"--hands must be from 1 to {MAX_HANDS:,}, got {args.hands}")
    if args.matches is not None and not 0 <= args.matches <= MAX_MATCHES:
        parser.error(f"--matches must be from 0 to {MAX_MATCHES:,}, got {args.matches}")
    if args.workers < 1:
        parser.error(f"--workers must be at least 1, got {args.workers}")
    specs = [*args.agents, *([args.vs] if args.vs is not None else [])]
    canonical: dict[str, str] = {}  # spec as given -> the player it builds (Agent.spec)
    for spec in dict.fromkeys(specs):
        try:
            agent = make_agent(spec)
        except AgentSpecError as e:
            parser.error(str(e))
        except ValueError as e:
            parser.error(f"agent spec {spec!r}: {e}; known specs: {', '.join(known_specs())}")
        try:
            check_agent(rules, spec, agent)
        except AgentRulesError as e:
            parser.error(str(e))
        canonical[spec] = agent.spec
    # Two spellings of one player (``random`` and ``random ``, ``search`` and
    # ``search:samples=64``) are one agent: compared by the player they build.
    for i, a in enumerate(args.agents):
        for b in args.agents[i + 1 :]:
            if canonical[a] == canonical[b]:
                if a == b:
                    parser.error(f"agent {a!r} is listed twice in --agents")
                parser.error(
                    f"agents {a!r} and {b!r} in --agents are the same agent "
                    f"({canonical[a]}); list it once"
                )
    if args.vs is not None:
        same = next((a for a in args.agents if canonical[a] == canonical[args.vs]), None)
        if same is not None:
            also = (
                "also in --agents"
                if same == args.vs
                else f"the same agent as {same!r} in --agents ({canonical[same]})"
            )
            parser.error(f"--vs {args.vs!r} is {also}; a candidate cannot play itself")
        pairings = [Pairing(args.vs, b) for b in args.agents]
    else:
        if len(args.agents) < 2:
            parser.error("a round robin needs at least two --agents (or give --vs CANDIDATE)")
        pairings = [Pairing(a, b) for i, a in enumerate(args.agents) for b in args.agents[i + 1 :]]
    # Last, once everything else is known good; before any game, not after them all.
    problem = make_folder(args.out)
    if problem is not None:
        parser.error(f"--out: {problem}; give a folder")
    problem = run_files_problem(args.out)
    if problem is not None:
        parser.error(f"--out: {problem}; give another --out, or move it away")
    return args, rules, pairings


def main(argv: list[str] | None = None) -> int:
    args, rules, pairings = parse_args(argv)
    patterns = len(seat_patterns(rules, args.field))
    deals = -(-args.hands // patterns)
    matches = args.hands // 20 if args.matches is None else args.matches
    match_sets = -(-matches // patterns)
    agents = [*([args.vs] if args.vs is not None else []), *args.agents]
    plan = RunPlan(
        rules,
        pairings,
        deals,
        match_sets,
        args.seed,
        field=args.field,
        keep_records=args.records,
    )
    command = "python -m evaluate " + shlex.join(argv if argv is not None else sys.argv[1:])
    rules_text = " ".join(f"{k}={v}" for k, v in rules.changes().items()) or "(defaults)"
    table = (
        f"configuration {args.config} ({args.preset})" if args.config else f"preset {args.preset}"
    )
    print(f"arena: {len(pairings)} pairing(s) of {', '.join(agents)}; {table}")
    print(f"rules: {rules_text}")
    print(
        f"master seed {args.seed}: {deals} deals x {patterns} seat patterns = "
        f"{deals * patterns} hands per pairing; {match_sets * patterns} matches per pairing; "
        f"{args.workers} worker(s)"
    )
    if args.field:
        print(
            "--field: A alone against a field of B's; points = A's minus the field seats' "
            "mean, win % = share of field seats A finished ahead of"
        )
    print(f"reproduce: {command}")
    start = time.perf_counter()
    bar = None
    if args.progress:
        bar = progress_bar(total=plan.games(), unit="game", smoothing=0.05)
    played = [0]

    def progress(games: int) -> None:
        played[0] += games
        if bar is not None:
            bar.update(games)

    try:
        results = run(plan, args.workers, progress)
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print(
            f"\ninterrupted after {played[0]} of {plan.games()} games; nothing written "
            f"(what {args.out} held is as it was)",
            file=sys.stderr,
        )
        return 130
    if bar is not None:
        bar.close()
    elapsed = time.perf_counter() - start
    settings = {
        "preset": args.preset,
        "rules": rules.to_text(),
        "players": rules.players,
        "teams": rules.teams,
        "mode": (f"--vs {args.vs}" if args.vs is not None else "round robin")
        + (", --field" if args.field else ""),
        # The field's figures (A against the field's mean), not side against side:
        # --field changes nothing at two sides.
        "field": args.field and rules.sides > 2,
        "deals": deals,
        "patterns": patterns,
        "matches": match_sets * patterns,
        "seed": args.seed,
        "workers": args.workers,
        "seconds": round(elapsed, 1),
        "command": command,
    }
    report = summarize(results, pairings, agents, settings)
    print()
    print(report.table())
    # Every file of the run at once (an earlier run's files stay if one cannot be
    # written), and an earlier run's records.jsonl or report.png removed.
    try:
        written = report.write(
            args.out,
            plot=args.plot,
            records=(
                (lambda path: write_records(path, rules, pairings, results, args.field))
                if args.records
                else None
            ),
        )
    except OSError as exc:
        print(
            f"python -m evaluate: error: cannot write the report in {args.out} "
            f"({exc.strerror or exc}); nothing written (what it held is as it was)",
            file=sys.stderr,
        )
        return 1
    print()
    print(f"{len(results)} games in {elapsed:.0f} s; wrote {', '.join(str(w) for w in written)}")
    return 0


if __name__ == "__main__":
    run_main(main)
