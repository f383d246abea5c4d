"""The main job (``make demo``, about two minutes): what matador-env is for, in four steps.

1. One hand of the shipped bot against ``expert`` (the hand-written heuristic
   player), told move by move, with the layout drawn at the end.
2. An arena: the shipped bot against ``expert``, ``greedy`` and ``random`` on
   duplicate deals, with 95% intervals, a Markdown report and a PNG.
3. Learning you can see: behaviour cloning of ``expert`` from a few hundred up to
   tens of thousands of its decisions, each policy evaluated against ``expert`` and
   ``random``: a learning curve with error bars. Each point is a real training run
   (``python -m train --bc-teacher expert --bc-decisions N``, with one token PPO
   update of 64 steps, the least a run takes); a
   second demo reuses the runs it finds instead of training them again, where they
   were made with the same arguments by the same code (:func:`code_fingerprint`).
4. What to try next.

Everything goes under ``--out`` (default ``runs/demo``). ``make train`` runs the
default training recipe on the standard preset (at most 20 minutes on two cores);
``python -m train.bots --only standard`` rebuilds the shipped bot with its own
recipe (six times the decisions, about 22 minutes).

``python -m evaluate.demo [--seed N] [--hands N] [--eval-hands N] [--out DIR] [--quick]``
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import hashlib
import json
import math
import random
import shutil
import time
from pathlib import Path
from typing import Any

from agents import make_agent
from matador_env.engine import HandState, Rules
from matador_env.engine.tiles import is_json_number, parse_digits
from matador_env.files import atomic_write, atomic_write_text, folder_arg, folder_problem
from matador_env.flags import positive_int, training_seed_arg
from matador_env.play import draw_layout, narrate
from matador_env.policy import BOTS_DIR, SIDECAR_FILE, read_policy_info
from matador_env.streams import INTERRUPTED, run_main

from .__main__ import main as arena_main
from .report import run_files_problem
from .stats import interval_text, unbounded_if_none

__all__ = ["main"]

# Relative to the checkout when run from it (shorter names in the tables).
_bot = BOTS_DIR / "standard"
SHIPPED_BOT = f"policy:{_bot.relative_to(Path.cwd()) if _bot.is_relative_to(Path.cwd()) else _bot}"

PPO_TOKEN = ("--timesteps", "64", "--n-envs", "1", "--n-steps", "64", "--batch-size", "64",
             "--n-epochs", "1")  # fmt: skip
"""The least PPO a training run takes (one update of 64 steps after the cloning), so
that each curve point is essentially the cloned policy (and is kept as it is: the
demo's runs skip the check of their best policy against the warm start)."""

CURVE = (0, 1_000, 3_000, 10_000, 30_000)
"""Decisions of ``expert`` cloned at the points of the learning curve (0: untrained)."""
QUICK_CURVE = (0, 500)

BUDGETS = {"full": (600, 150, CURVE), "quick": (40, 20, QUICK_CURVE)}
"""Arena hands per pairing, duplicate deals per curve point and opponent, and the
curve, by default and with ``--quick`` (``--hands`` and ``--eval-hands`` win)."""


def shipped_bot_story(provenance: dict[str, Any]) -> str:
    """How the shipped bot was made, from its sidecar's provenance (the training
    command and the PPO step kept), so the demo's words follow a rebuilt bot."""
    words = str(provenance.get("command", "")).split()

    def flag(name: str) -> str | None:
        return words[words.index(name) + 1] if name in words[:-1] else None

    decisions = flag("--bc-decisions")
    count = parse_digits(decisions, 12) if decisions else None
    teacher = flag("--bc-teacher") or "the search agent"
    if count == 0:
        made = "it was trained by PPO alone"
    elif count is not None:
        made = f"it cloned {count:,} decisions of {teacher}"
    else:
        made = f"it cloned {teacher}"
    steps = provenance.get("steps")
    if not isinstance(steps, int):
        return f"The shipped bot went further: {made}."
    if steps:
        return f"The shipped bot went further: {made},\nthen kept PPO step {steps:,}."
    kept = "and kept that clone: the PPO steps after it did not beat it"
    return f"The shipped bot went further: {made},\n{kept}."


def announce(title: str, seconds: float | None = None) -> None:
    """A step's heading, with how long it should take when that is more than a moment."""
    took = f" (about {_duration(seconds)})" if seconds is not None else ""
    print(f"\n== {title}{took}", flush=True)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} minutes"


# -- 1. a hand -----------------------------------------------------------------------------


def show_hand(rules: Rules, seed: int, specs: list[str], labels: list[str]) -> None:
    """One hand between two agents, every action told with the ends it met."""
    agents = [make_agent(s) for s in specs]
    names = [f"{label} (P{i})" for i, label in enumerate(labels)]
    rng = random.Random(seed)
    state = HandState.deal(rules, seed)
    for seat, name in enumerate(names):
        print(f"  {name:<14} holds {' '.join(map(str, state.hand(seat)))}")
    print(f"  boneyard: {state.boneyard_size} tiles, face down")
    print()
    while not state.is_over:
        seat = state.to_move
        move = agents[seat].act(state.view(seat), rng)
        drawn = f" {state.boneyard[0]}" if move.kind == "draw" else ""
        state = state.apply(move)
        told = narrate(names[seat], move, state.history[-1].ends, rules) + drawn
        print(f"  {state.n_actions:3d}. {told}")
    print()
    print(draw_layout(state))
    outcome = state.outcome
    assert outcome is not None
    if outcome.winner is not None:
        how = "played out (domino)" if outcome.termination == "domino" else "had the lowest count"
        print(f"Result: {names[outcome.winner]} {how} and scores {outcome.points} points.")
    else:
        print(f"Result: {outcome}")


# -- 3. the learning curve -------------------------------------------------------------------


def clone_argv(run_dir: Path, decisions: int, eval_hands: int, seed: int) -> list[str]:
    """``python -m train``'s arguments for cloning ``decisions`` decisions of ``expert``."""
    return [
        "--exp-name", "demo_clone", "--preset", "standard", "--seed", str(seed),
        "--bc-teacher", "expert", "--bc-decisions", str(decisions), *PPO_TOKEN,
        "--final-eval-hands", str(eval_hands), "--eval-every", "0", "--select-hands", "0",
        "--no-progress",
        "--out", str(run_dir),
    ]  # fmt: skip


CODE_FILE = "demo_code.json"
"""Where a demo's training run records the :func:`code_fingerprint` that made it."""


@functools.cache  # the code does not change while the demo runs
def code_fingerprint() -> str:
    """A digest of the project's code that a cloning run's figures depend on: every
    ``.py`` and ``.json`` file of ``matador_env``, ``agents``, ``train`` and
    ``evaluate`` (a run made by other code, e.g. before a fix to the evaluation, is
    trained again rather than shown as this code's)."""
    import agents
    import evaluate
    import matador_env
    import train

    digest = hashlib.sha256()
    for package in (matador_env, agents, train, evaluate):
        root = Path(package.__file__ or "").parent
        for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json")):
            digest.update(str(path.relative_to(root.parent)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def finished(run_dir: Path, decisions: int, eval_hands: int, seed: int) -> bool:
    """Whether ``run_dir`` holds that cloning run finished (one to reuse): a summary, an
    ``args.json`` with every value that :func:`clone_argv` gives, and the
    :func:`code_fingerprint` of this code."""
    if _summary(run_dir) is None:
        return False
    try:
        made_by = json.loads((run_dir / CODE_FILE).read_text()).get("code")
    except (OSError, ValueError, AttributeError):
        return False
    if made_by != code_fingerprint():
        return False
    from train.args import given_fields, parse
    from train.run import TrainArgs

    try:
        stored = json.loads((run_dir / "args.json").read_text())
    except (OSError, ValueError):
        return False
    argv = clone_argv(run_dir, decisions, eval_hands, seed)
    args = parse(TrainArgs, argv, prog="python -m train")
    given = given_fields(TrainArgs, argv, prog="python -m train")
    return all(stored.get(k) == getattr(args, k) for k in given)


_SHOWN = ("points", "win_rate")
"""The final evaluation's figures the curve shows, each with its interval's ends."""


def _summary(run_dir: Path) -> dict[str, Any] | None:
    """The run's summary.json when it holds every figure the curve shows; None for a
    missing, unreadable or damaged one (its point is trained again, not shown wrong or
    ended in a traceback)."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text())
    except (OSError, ValueError):
        return None
    final = summary.get("final_evaluation") if isinstance(summary, dict) else None

    def number(value: Any, or_none: bool = False) -> bool:
        if value is None:
            return or_none  # an unbounded end (one deal) is written as null
        return is_json_number(value)

    if not isinstance(final, dict) or not all(
        isinstance(final.get(opp), dict)
        and number(final[opp].get(key))
        and number(final[opp].get(f"{key}_lo"), or_none=True)
        and number(final[opp].get(f"{key}_hi"), or_none=True)
        for opp in ("expert", "random")
        for key in _SHOWN
    ):
        return None
    return summary


def clone_run(run_dir: Path, decisions: int, eval_hands: int, seed: int) -> dict[str, Any]:
    """The summary of a behaviour-cloning run of ``decisions`` decisions of ``expert``,
    trained now unless ``run_dir`` already holds it finished with the same arguments."""
    summary = run_dir / "summary.json"
    if finished(run_dir, decisions, eval_hands, seed):
        return dict(json.loads(summary.read_text()), reused=True)  # checked by finished()
    if run_dir.exists():  # unfinished, or made with other arguments: this demo's own cache
        shutil.rmtree(run_dir)
    from train.run import main as train_main

    run_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(run_dir.parent / f"{run_dir.name}.log", "w") as log, contextlib.redirect_stdout(log):
        train_main(clone_argv(run_dir, decisions, eval_hands, seed))
    atomic_write_text(run_dir / CODE_FILE, json.dumps({"code": code_fingerprint()}) + "\n")
    return dict(json.loads(summary.read_text()), reused=False)


def learning_curve(
    out: Path, points: tuple[int, ...], eval_hands: int, seed: int
) -> list[tuple[int, dict[str, Any]]]:
    """Train (or reuse) one cloning run per point, print the curve and plot it; returns
    each point's decisions and evaluation."""
    rows = []
    print(f"  {'decisions cloned':>16}  {'vs expert: pts/hand [95% CI]':<30}{'vs random':<24}")
    for decisions in points:
        start = time.perf_counter()
        summary = clone_run(out / f"decisions_{decisions}", decisions, eval_hands, seed)
        figures = summary["final_evaluation"]
        rows.append((decisions, figures))
        note = "reused" if summary["reused"] else f"trained in {time.perf_counter() - start:.0f} s"
        print(
            f"  {decisions:>16,}  {_pts(figures['expert']):<30}{_pts(figures['random']):<24}{note}",
            flush=True,
        )
    print(f"learning curve: {plot_curve(rows, eval_hands, out / 'learning_curve.png')}")
    return rows


def _pts(f: dict[str, float]) -> str:
    return interval_text(f["points"], f["points_lo"], f["points_hi"], width=6)


def plot_curve(rows: list[tuple[int, dict[str, Any]]], eval_hands: int, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = list(range(len(rows)))
    labels = ["untrained" if d == 0 else f"{d:,}" for d, _ in rows]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for opp, colour in (("expert", "tab:red"), ("random", "tab:blue")):
        for ax, key, scale in ((axes[0], "points", 1.0), (axes[1], "win_rate", 100.0)):
            ys = [scale * f[opp][key] for _, f in rows]
            # summary.json writes an unbounded end (one deal) as null.
            errs = [
                [
                    scale * (f[opp][key] - unbounded_if_none(f[opp][f"{key}_lo"], -math.inf))
                    for _, f in rows
                ],
                [
                    scale * (unbounded_if_none(f[opp][f"{key}_hi"], math.inf) - f[opp][key])
                    for _, f in rows
                ],
            ]
            ax.errorbar(xs, ys, yerr=errs, marker="o", capsize=4, color=colour, label=f"vs {opp}")
    axes[0].axhline(0, color="grey", lw=0.8)
    axes[1].axhline(50, color="grey", lw=0.8)
    axes[0].set_title("points per hand, policy minus opponent (95% CI)", fontsize=10)
    axes[1].set_title("hand win % (95% CI)", fontsize=10)
    for ax in axes:
        ax.set_xticks(xs, labels)
        ax.set_xlabel("decisions of expert cloned")
    axes[0].legend()
    fig.suptitle(
        f"Behaviour cloning of expert, standard preset: each point a policy evaluated on "
        f"{eval_hands} duplicate deals ({2 * eval_hands} hands) per opponent",
        fontsize=10,
    )
    fig.tight_layout()
    atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=100, format="png"))
    plt.close(fig)
    return path


# -- the demo --------------------------------------------------------------------------------


def output_problem(out: Path, curve: tuple[int, ...]) -> str | None:
    """Why the demo cannot write what it writes under ``out`` (a folder, see
    :func:`matador_env.files.folder_problem`), or None: a folder it writes into
    (``arena``, ``clone`` and each curve point's training run) that is a file, or a
    file it writes (the arena's report files, each run's log, the learning curve)
    that is a folder. (For the demo to refuse them before its first hand, not after
    its hand and its arena.)"""
    clones = out / "clone"
    folders = [
        (out / "arena", "its arena's report"),
        (clones, "its training runs"),
        *((clones / f"decisions_{d}", f"the training run of {d:,} decisions") for d in curve),
    ]
    for folder, what in folders:
        problem = folder_problem(folder)
        if problem is not None:
            return f"{problem}, where the demo writes {what}"
    problem = run_files_problem(out / "arena")
    if problem is not None:
        return problem
    files = [
        *((clones / f"decisions_{d}.log", f"the log of the run of {d:,} decisions") for d in curve),
        (clones / "learning_curve.png", "the learning curve"),
    ]
    for path, what in files:
        if path.is_dir():
            return f"{path} is a folder, where the demo writes {what}"
    return None


NEXT = """\
What to try next (after `. .venv/bin/activate`):
  python -m matador_env.play                       play a hand against the trained bot
  python -m matador_env.play --list                every preset and the bot levels it has
  python -m evaluate --agents expert greedy random --hands 2000 --out reports/x
                                                   your own arena (any agent specs)
  python -m train --help                           every training flag, documented
  make train                                       the default training recipe
                                                   (<= 20 minutes; rerun it to resume)
  python -m train.bots --only standard             rebuild the shipped bot (about 22 minutes)
  python -m matador_env.serve                      the bots over HTTP for a frontend, and
                                                   a page to play them at http://127.0.0.1:8000/
  python -m train.rllib --help                     train with Ray RLlib (docs/rl_libraries.md)
The README shows the engine, the environments (PettingZoo, Gymnasium, the vector env)
and embedding a bot; docs/rules.md has the rules of every preset."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evaluate.demo", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--seed",
        type=training_seed_arg,
        default=2026,
        help="seed of the hand, runs and arena (0 to 2**32 - 1: it seeds training runs)",
    )
    parser.add_argument(
        "--hands",
        type=positive_int,
        default=None,
        help=f"arena hands per pairing (default {BUDGETS['full'][0]}; "
        f"{BUDGETS['quick'][0]} with --quick)",
    )
    parser.add_argument(
        "--eval-hands",
        type=positive_int,
        default=None,
        help=f"duplicate deals per curve point and opponent (default {BUDGETS['full'][1]}; "
        f"{BUDGETS['quick'][1]} with --quick)",
    )
    parser.add_argument(
        "--out", type=folder_arg, default=Path("runs/demo"), help="where it all goes"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="tiny budgets (a smoke run): a shorter learning curve, and fewer hands "
        "where --hands and --eval-hands are not given",
    )
    args = parser.parse_args(argv)
    # --quick lowers the budgets not given; one given wins (it was replaced unsaid).
    hands, eval_hands, curve = BUDGETS["quick" if args.quick else "full"]
    args.hands = hands if args.hands is None else args.hands
    args.eval_hands = eval_hands if args.eval_hands is None else args.eval_hands
    # Checked here, not by the arena or the training it runs later, under their names
    # (after the demo's hand, or its arena too).
    problem = folder_problem(args.out)
    if problem is not None:
        parser.error(f"--out: {problem}; give a folder")
    problem = output_problem(args.out, curve)
    if problem is not None:
        parser.error(f"--out: {problem}; give another --out, or move it away")
    started = time.perf_counter()
    rules = Rules.preset("standard")
    print(
        "matador-env: a rules engine, reinforcement-learning environments and bots for\n"
        "Matador, the domino game in which touching ends sum to seven and the matadors\n"
        "(0-0, 1-6, 2-5, 3-4) go anywhere. This demo plays, measures and trains."
    )

    announce(f"1/4 One hand of Matador (preset standard, seed {args.seed}): bot vs expert")
    print(f"bot = the shipped trained policy ({SHIPPED_BOT}); expert = a hand-written player")
    show_hand(rules, args.seed, [SHIPPED_BOT, "expert"], ["bot", "expert"])

    announce(
        f"2/4 Arena: the shipped bot against expert, greedy and random, {args.hands} hands "
        "each on duplicate deals",
        max(5.0, args.hands / 40),
    )
    code = arena_main(
        [
            "--vs", SHIPPED_BOT, "--agents", "expert", "greedy", "random",
            "--hands", str(args.hands), "--seed", str(args.seed),
            "--out", str(args.out / "arena"), "--no-progress",
        ]
    )  # fmt: skip
    if code == INTERRUPTED:  # Ctrl-C, which the arena has told of: the demo stops too
        raise SystemExit(INTERRUPTED)
    if code:
        return code

    clones = args.out / "clone"
    fresh = [
        d for d in curve if not finished(clones / f"decisions_{d}", d, args.eval_hands, args.seed)
    ]
    announce(
        f"3/4 Learning: cloning expert's moves, {len(curve)} training runs of "
        f"{', '.join(f'{d:,}' for d in curve)} decisions, each then evaluated",
        (5 + 0.0012 * sum(fresh) + 0.02 * args.eval_hands * len(fresh)) if fresh else 5,
    )
    print(
        "Each run fits a fresh policy network to N of expert's moves (python -m train\n"
        "--bc-teacher expert --bc-decisions N, then one token PPO update of 64 steps) and\n"
        f"plays expert and random; a later demo reuses finished runs from {clones}."
    )
    rows = learning_curve(clones, curve, args.eval_hands, args.seed)
    (first, before), (last, after) = rows[0], rows[-1]
    shipped = read_policy_info(_bot / SIDECAR_FILE)
    print(
        f"Against expert: {before['expert']['points']:+.1f} points per hand with "
        f"{first:,} decisions cloned, {after['expert']['points']:+.1f} with {last:,}.\n"
        + shipped_bot_story(shipped.provenance or {})
        + "\nStep 2 shows where that got it."
    )

    announce("4/4 Next")
    print(NEXT)
    print(
        f"\nDemo finished in {time.perf_counter() - started:.0f} s; everything is in {args.out}.",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    run_main(main)
