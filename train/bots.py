"""Rebuild every shipped bot and its figures: ``python -m train.bots``.

For each configuration of :data:`matador_env.configs.CONFIGURATIONS` (or those named
by ``--only``), in order:

1. **train**: ``python -m train`` with the configuration's flags and the default
   recipe (``python -m train --help``; :data:`RECIPE_FLAGS` records where a shipped
   bot was made otherwise), into ``<runs>/<name>`` with ``--seed``. A
   finished run (its ``summary.json`` written) is reused; an interrupted one is
   resumed (``--resume``), so running the command again continues where it stopped;
2. **install** (in this process): the run's best policy (``best/policy.onnx`` +
   ``policy.json``) replaces ``matador_env/bots/<name>/`` in one rename, its sidecar's
   provenance naming the configuration and the command that rebuilds it
   (:func:`rebuild_command`: this one, with the seed, folders and flags after ``--``
   that the run was really made with);
3. **figures**: each run's own figures as a table (printed, and written to
   ``<runs>/training.md``), then ``python -m benchmarks.strength`` over the
   configurations built, the strength matrix of ``matador_env/bots/README.md``
   (``--no-matrix`` skips it).

The flags after ``--`` go to ``python -m train`` and are checked before anything runs:
those that ``train.bots`` sets itself (:data:`OWN_FLAGS`: the rules, the run folder,
the seed...) are refused, and the rest are read and checked by ``python -m train``'s
own parser and checks for every new run. Training and the matrix run as processes of
their own: one configuration's failure stops the command with that step's exit status
(an install that fails, with one line and exit status 1), leaving the bots installed
so far in place. Time on two cores: about 20 minutes of training per configuration,
longer where :data:`RECIPE_FLAGS` asks for more (its comments give each bot's time; the
longest, double_twelve, about two hours), plus the matrix.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, get_type_hints

from evaluate.stats import interval_text
from matador_env.configs import CONFIGURATIONS, Configuration, ConfigurationError, configuration
from matador_env.files import atomic_write_text, folder_problem
from matador_env.flags import integer_arg
from matador_env.policy import BOTS_DIR, POLICY_FILE, SIDECAR_FILE, PolicyError, load_policy
from matador_env.streams import run_main

from .args import ArgsError, flag_name, given_fields, parse
from .files import RUN_ARGS_FILE, replace_dir
from .run import (
    LARGEST_SEED,
    TrainArgs,
    check_args,
    load_run_args,
    recipe_decisions,
    recipe_teacher,
)

__all__ = ["OWN_FLAGS", "install", "main", "rebuild_command", "train_command"]

DEFAULT_RUNS = "runs/bots"
"""``--runs`` unless given."""
DEFAULT_SEED = 1
"""``--seed`` unless given (every shipped bot's)."""

_RULES_FLAG = "each configuration fixes its rules (--only NAME chooses them)"
OWN_FLAGS: dict[str, str] = {
    "preset": _RULES_FLAG,
    "players": _RULES_FLAG,
    "teams": _RULES_FLAG,
    "rules": _RULES_FLAG,
    "out": "each run's folder is <--runs>/NAME (give another --runs)",
    "resume": "an unfinished run in <--runs>/NAME is resumed without it",
    "seed": "give train.bots' own --seed, before --",
    "exp_name": "train.bots names its runs itself",
    "progress": "train.bots trains without progress bars",
}
"""The ``python -m train`` fields that :func:`train_command` sets itself, refused after
``--``, each with why: another preset or folder trained a bot that the install then
refused, after the whole run, and every later call reused that run and failed again."""


RECIPE_FLAGS: dict[str, list[str]] = {
    # Standard's bot before this one predated the 20-minute recipe (a search:samples=16
    # warm start, then 1.8M PPO steps, 55 minutes). Soft targets on six times the
    # recipe's decisions, as on double_nine: against the search +1.29 and +1.80 points
    # per hand where that bot had -0.83 (4,000 hands, seeds 572 and 573), +1.76 head to
    # head (seed 574). About 22 minutes from scratch here.
    "standard": ["--bc-soft-temperature", "4", "--bc-decisions", "900000"],
    # Leiden's first clone fell behind expert without a DAgger round (-2.58 points per
    # hand in its run's evaluation). Soft targets (T = 4 points) and 300,000 decisions
    # before the round: against the search -3.85 where the hard-target 150,000-decision
    # bot had -6.86, and +1.52 [+0.03, +3.00] head to head (2,000 hands, seed 558);
    # soft targets on 150,000 decisions alone gave -4.46 and -3.53 against the
    # hard-target bot's -6.80 and -4.99 (seeds 556, 557). 450,000 decisions were level
    # head to head and stronger against the search (bots README). 900,000: against the
    # search -1.69 where the 450,000-decision bot had -3.09 (4,000 hands, seed 572),
    # +0.70 head to head (seed 574). About 41 minutes from scratch here.
    "leiden": [
        "--bc-soft-temperature", "4", "--bc-decisions", "900000",
        "--bc-dagger-decisions", "60000",
    ],
    # Double-twelve's clone without a DAgger round was at parity with expert (-0.35
    # points per hand in the strength matrix). Sixteen times the first bot's decisions
    # (agreement 0.444 -> 0.479 at 1,200,000 -> 0.493; a chunk of 10,000 takes about
    # 40 seconds a process here, so some 80 minutes with the recipe's two, then 36 for
    # the run) took its run's evaluation against expert from +20.82 to +52.05 and
    # +65.03, and the bot from 21.20 behind the search to 8.81 ahead (bots README).
    "double_twelve": ["--bc-decisions", "2400000", "--bc-dagger-decisions", "60000"],
    # Cloning the search's move values (T = 4 points) instead of its choice: against
    # the fitted expert +1.14 and +1.25 points per hand where the hard-target bot had
    # +0.15 and -0.10 (4,000 hands each, seeds 557 and 562); against the search no
    # better (-3.07 and -2.57, the hard-target bot -4.38 and -2.55).
    # Polish with 450,000 decisions: held-out agreement 0.666 -> 0.681; in the matrix
    # match win 52.5% -> 61.0% at seed 2026, but 52.5% at 2027; over 2,000 matches
    # (seed 601) 55.5% where the 150,000-decision bot won 53.8%. With 1,350,000
    # (0.688): 63.5% at 2027 with every bot bar met there, 58.5% over those 2,000
    # matches, +1.16 head to head (seed 574). About 42 minutes from scratch here.
    "polish": ["--bc-soft-temperature", "4", "--bc-decisions", "1350000"],
    # Kardinal with 900,000 decisions: held-out agreement 0.576 (150,000) -> 0.604
    # (450,000) -> 0.619; against the search -2.09 -> -1.28 -> -1.04 (2,000 hands, seed
    # 556), and -1.99 (450,000) -> -1.19 at seed 557 (900,000: about 18-20 minutes here).
    # Soft targets on the same decisions (-1.53), a 512,512,256 network (-2.03), 20
    # epochs (agreement 0.602) and 300,000 PPO steps after the clone (-2.91) were no better.
    # 2,400,000 (agreement 0.632) and 3,600,000 (0.642) each came closer to the search;
    # their 4,000-hand figures are in the bots README. About an hour from scratch here
    # (some 38 minutes collecting with two processes, 23 for the run).
    "kardinal": ["--bc-decisions", "3600000"],
    # Twice the decisions of the 256-world search (300,000): agreement 0.720 -> 0.735,
    # and in the matrix bot > expert +0.41 -> +2.18, match win 52.5% -> 56.0% (55.1% over
    # 2,100 matches, seed 601). Soft targets on six times the recipe's decisions, as on
    # standard (900,000, agreement 0.755): over 2,100 field matches 56.7%, 56.1% and 55.1%
    # where the 300,000-decision bot won 55.1%, 54.6% and 55.0% (seeds 601-603); head to
    # head +0.65 and +0.43 (3,000 hands, seeds 574, 575). About 70 minutes from scratch
    # here (the warm start's collecting and fit 64.6 of them). 1,200,000 (agreement 0.758)
    # won no more: 55.5% against 55.6% on average over seeds 601-610, level head to head.
    "standard_3p": ["--bc-soft-temperature", "4", "--bc-decisions", "900000"],
    # Kardinal-hard with 450,000 decisions: agreement 0.568 -> 0.603, bot ~ search -2.44
    # -> -1.26 in the matrix; with 900,000: 0.621 and -0.05. 1,800,000 (0.631) came
    # closer to the search, and 2,700,000 (0.633) was level with it head to head (the
    # figures are in the bots README). About 32 minutes from scratch here, over the
    # recipe's 20.
    "kardinal_hard": ["--bc-decisions", "1800000"],
    # Pagat in teams with 300,000 decisions: agreement 0.767 -> 0.780, bot ~ search -0.37
    # -> -0.02 in the matrix. About 23 minutes from scratch, over the recipe's 20.
    "pagat_teams": ["--bc-decisions", "300000"],
    # Four players with 300,000 decisions: agreement 0.754 -> 0.771; match win 51.2% ->
    # 53.2% in the matrix, 51.7% -> 53.5% over 2,000 matches (seed 601). About 18
    # minutes from scratch.
    "standard_4p": ["--bc-decisions", "300000"],
    # The same on double-nine: against the expert +17.13 and +15.76 where the
    # hard-target bot had +13.97 and +12.70 (4,000 hands, seeds 563 and 564), against
    # the search -4.38 [-8.26, -0.50] where it had -7.52 [-11.44, -3.60] (2,000 hands).
    # Six times those decisions (900,000): agreement 0.559 -> 0.578; against the search
    # +4.98 and +5.64 where the 150,000-decision bot had -4.36 (4,000 hands, seeds 572
    # and 573), +12.42 head to head (seed 574). About 26 minutes from scratch here.
    "double_nine": ["--bc-soft-temperature", "4", "--bc-decisions", "900000"],
}  # fmt: skip
"""Flags each shipped bot was trained with beyond the default recipe (none: the recipe)."""


def train_command(
    config: Configuration, run_dir: Path, seed: int, extra: list[str] | None = None
) -> list[str]:
    """The ``python -m train`` command line that builds (or resumes) the bot of ``config``;
    ``extra`` flags change the recipe of a new run (a resumed run keeps its own)."""
    if (run_dir / RUN_ARGS_FILE).is_file():
        return [sys.executable, "-m", "train", "--resume", str(run_dir), "--no-progress"]
    return [sys.executable, "-m", "train", *_new_run_flags(config, run_dir, seed, extra)]


def _new_run_flags(
    config: Configuration, run_dir: Path, seed: int, extra: list[str] | None = None
) -> list[str]:
    """The flags of a new ``python -m train`` run of ``config``'s bot (the fields of
    :data:`OWN_FLAGS` among them); ``extra`` last, so that it changes the recipe."""
    return [
        *config.flags(),
        "--exp-name",
        "bot",  # RECIPE_FLAGS may name another; argparse keeps the last
        "--seed",
        str(seed),
        "--out",
        str(run_dir),
        "--no-progress",
        *RECIPE_FLAGS.get(config.name, []),
        *(extra or []),
    ]


def rebuild_command(config: Configuration, run_dir: Path, bots_dir: Path = BOTS_DIR) -> str:
    """The ``python -m train.bots`` command that rebuilds the bot of ``run_dir`` into
    ``bots_dir``: ``--only`` its configuration, with the run's seed, the folders when
    they are not the defaults, and after ``--`` each ``python -m train`` flag whose value
    in the run's ``args.json`` differs from the plain recipe's (``extra`` flags given
    to a new run, a larger ``--timesteps`` given on resuming it).
    :class:`~train.args.ArgsError` when ``args.json`` cannot be read."""
    made = load_run_args(run_dir, {})
    rules = config.rules()
    plain = parse(TrainArgs, _new_run_flags(config, run_dir, made.seed))
    # The recipe's choices, as a new run fixes them in its args.json.
    plain.bc_decisions = recipe_decisions(plain.bc_decisions, rules)
    plain.bc_teacher = recipe_teacher(plain.bc_teacher, rules)
    extra: list[str] = []
    for field in dataclasses.fields(TrainArgs):
        value = getattr(made, field.name)
        if field.name in OWN_FLAGS or value == getattr(plain, field.name):
            continue
        extra += _flag_words(field.name, value)
    words = ["python", "-m", "train.bots", "--only", config.name]
    if made.seed != DEFAULT_SEED:
        words += ["--seed", str(made.seed)]
    if run_dir.parent.resolve() != Path(DEFAULT_RUNS).resolve():
        words += ["--runs", str(run_dir.parent)]
    if bots_dir.resolve() != BOTS_DIR.resolve():
        words += ["--bots-dir", str(bots_dir)]
    return shlex.join([*words, *(["--", *extra] if extra else [])])


def _flag_words(name: str, value: Any) -> list[str]:
    """The command-line words that give field ``name`` of :class:`TrainArgs` ``value``."""
    flag = flag_name(name)
    if isinstance(value, bool):
        return [flag if value else f"--no-{flag[2:]}"]
    if isinstance(value, list):
        return [flag, *map(str, value)]
    return [flag, str(value)]


def install(config: Configuration, run_dir: Path, bots_dir: Path = BOTS_DIR) -> Path:
    """Copy the run's best policy into ``bots_dir/<name>`` in one rename; the folder.

    Raises :class:`PolicyError` when the best policy does not load or plays other rules
    than the configuration's, and :class:`~train.args.ArgsError` when the run's
    ``args.json`` cannot be read (its provenance needs it)."""
    best = run_dir / "best"
    # Loading it checks the files and that they play exactly the configuration's rules.
    load_policy(best, rules=config.rules())
    sidecar = json.loads((best / SIDECAR_FILE).read_text(encoding="utf-8"))
    provenance = dict(sidecar.get("provenance") or {})
    provenance["configuration"] = config.name
    provenance["rebuild"] = rebuild_command(config, run_dir, bots_dir)
    sidecar["provenance"] = provenance

    def fill(folder: Path) -> None:
        folder.mkdir(parents=True)
        shutil.copyfile(best / POLICY_FILE, folder / POLICY_FILE)
        (folder / SIDECAR_FILE).write_text(json.dumps(sidecar, indent=2, sort_keys=True) + "\n")

    return replace_dir(bots_dir / config.name, fill)


def _figure(e: dict[str, float]) -> str:
    return f"{interval_text(e['points'], e['points_lo'], e['points_hi'])} ({e['deals']} deals)"


def training_table(runs: Path, names: list[str]) -> str:
    """A markdown table of each run's own figures (``summary.json``): the minutes, the
    warm start's agreement with its teacher, the best policy's step and its final
    evaluation against ``expert`` and ``random`` (duplicate deals, 95% intervals)."""
    lines = [
        "| configuration | teacher | minutes | agreement | best at step "
        "| vs expert, points per hand | vs random, points per hand |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        run = runs / name
        try:
            summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
            args = json.loads((run / "args.json").read_text(encoding="utf-8"))
            best = json.loads((run / "best" / SIDECAR_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            lines.append(f"| {name} | (no finished run in {run}) | | | | | |")
            continue
        try:
            lines.append(_training_row(name, summary, args, best))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            # Files edited by hand, or of another version: named, not a traceback.
            why = f"no {e}" if isinstance(e, KeyError) else str(e)
            lines.append(
                f"| {name} | (run files in {run} are not as train writes them: {why}) | | | | | |"
            )
    return "\n".join(lines)


def _training_row(
    name: str, summary: dict[str, Any], args: dict[str, Any], best: dict[str, Any]
) -> str:
    """One run's row of :func:`training_table` from its summary, arguments and sidecar."""
    final = summary["final_evaluation"]
    teacher = f"{args['bc_teacher']} x {args['bc_decisions']:,}"
    if args.get("bc_soft_temperature"):
        teacher += f", soft targets at {args['bc_soft_temperature']:g} points"
    if args.get("bc_dagger_decisions"):
        teacher += f" + DAgger {args['bc_dagger_decisions']:,}"
        if args.get("bc_dagger_rounds", 1) > 1:
            teacher += f" x {args['bc_dagger_rounds']} rounds"
    # No warm start (--bc-decisions 0) records no pretrain figures, and a held-out
    # set of forced moves no agreement (None): an empty cell either way.
    agreement = (summary.get("pretrain") or {}).get("held_out_agreement")
    return (
        f"| {name} | {teacher} | {summary['minutes']} "
        f"| {'' if agreement is None else agreement} "
        f"| {best['provenance']['steps']:,} | {_figure(final['expert'])} "
        f"| {_figure(final['random'])} |"
    )


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m train.bots",
        description="Train, install and measure the shipped bot of every configuration "
        "(or of those named by --only). Running it again resumes unfinished runs and "
        "reuses finished ones.",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        action="extend",
        metavar="NAME",
        help="configurations to build (default: all; repeat or list several): "
        + ", ".join(CONFIGURATIONS),
    )
    parser.add_argument(
        "--runs", default=DEFAULT_RUNS, help=f"folder of the training runs (default {DEFAULT_RUNS})"
    )
    parser.add_argument(
        "--seed",
        type=integer_arg,
        default=DEFAULT_SEED,
        help=f"seed of every training run (default {DEFAULT_SEED})",
    )
    parser.add_argument(
        "--no-matrix", action="store_true", help="skip the strength matrix at the end"
    )
    parser.add_argument(
        "--matrix-out",
        default="reports/strength",
        help="folder of the matrix's JSON/markdown (default reports/strength)",
    )
    parser.add_argument(
        "--bots-dir",
        default=str(BOTS_DIR),
        help="where the bots are installed (default: the package's shipped bots)",
    )
    parser.add_argument(
        "train_flags",
        nargs="*",
        metavar="-- TRAIN_FLAG",
        help="flags after -- go to every new python -m train run (e.g. -- --timesteps 100000, "
        "with --bots-dir elsewhere to keep the shipped bots); the shipped bots use none. "
        "Refused there, as train.bots sets them: "
        + ", ".join(_own_flag_text(name) for name in OWN_FLAGS),
    )
    args = parser.parse_args(argv)
    # A name given twice is built once (duplicates also made the count look like all
    # the configurations, and the matrix ran --all).
    names = list(dict.fromkeys(args.only or CONFIGURATIONS))
    try:
        args.configs = [configuration(n) for n in names]
    except ConfigurationError as e:
        parser.error(f"--only: {e}")
    if not 0 <= args.seed <= LARGEST_SEED:
        parser.error(
            f"--seed: {args.seed} is not allowed; allowed: an integer from 0 to {LARGEST_SEED}"
        )
    # Checked before hours of training, not after them.
    for flag in ("runs", "matrix_out", "bots_dir"):
        problem = folder_problem(getattr(args, flag))
        if problem is not None:
            parser.error(f"--{flag.replace('_', '-')}: {problem}; give a folder")
    for config in args.configs:
        seed = _run_seed(Path(args.runs) / config.name)
        if seed is not None and seed != args.seed:
            parser.error(
                f"--seed: {Path(args.runs) / config.name} holds a run of seed {seed}, not "
                f"{args.seed}, and would be reused; give --seed {seed} or another --runs folder"
            )
    _check_train_flags(parser, args)
    return args


def _own_flag_text(name: str) -> str:
    """``--seed`` for ``seed``; both forms of a switch (``--teams/--no-teams``)."""
    flag = flag_name(name)
    hint = get_type_hints(TrainArgs)[name]
    switch = hint is bool or bool in getattr(hint, "__args__", ())
    return f"{flag}/--no-{flag[2:]}" if switch else flag


def _check_train_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, in one line, flags after ``--`` that :data:`OWN_FLAGS` names, or that
    ``python -m train``'s parser or checks refuse in any new run they would go to: before
    any training, not after the first configurations' hours."""
    # Read by train's own parser (abbreviations and --no- forms included); a flag it
    # does not know, or a value it cannot read, ends here with its one line.
    given = given_fields(
        TrainArgs, args.train_flags, prog="python -m train.bots (a python -m train flag after --)"
    )
    for name in OWN_FLAGS:
        if name in given:
            parser.error(
                f"{_own_flag_text(name)} after -- is not allowed: {OWN_FLAGS[name]}; allowed "
                "after --: the other python -m train flags (e.g. --timesteps 100000)"
            )
    for config in args.configs:
        run_dir = Path(args.runs) / config.name
        if (run_dir / RUN_ARGS_FILE).is_file():
            continue  # resumed or reused with its own flags, not these
        try:
            check_args(
                parse(TrainArgs, _new_run_flags(config, run_dir, args.seed, args.train_flags))
            )
        except ArgsError as e:
            parser.error(f"{config.name}, with the flags after --: {e}")


def _run_seed(run_dir: Path) -> int | None:
    """The seed of the training run in ``run_dir`` (None: no run there that reads)."""
    try:
        seed = json.loads((run_dir / "args.json").read_text(encoding="utf-8"))["seed"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return seed if isinstance(seed, int) and not isinstance(seed, bool) else None


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    runs = Path(args.runs)
    started = time.monotonic()
    for i, config in enumerate(args.configs, 1):
        run_dir = runs / config.name
        head = f"[{i}/{len(args.configs)}] {config.name} ({config.describe()})"
        if (run_dir / "summary.json").is_file():
            kept = "; its own flags, not those after --" if args.train_flags else ""
            print(f"{head}: trained already in {run_dir}{kept}", flush=True)
        else:
            command = train_command(config, run_dir, args.seed, args.train_flags)
            print(f"{head}: training, {' '.join(command[1:])}", flush=True)
            t0 = time.monotonic()
            code = subprocess.call(command)
            if code != 0:
                print(f"{head}: training stopped with exit status {code}", file=sys.stderr)
                return code
            print(f"{head}: trained in {(time.monotonic() - t0) / 60:.1f} min", flush=True)
        try:
            target = install(config, run_dir, Path(args.bots_dir))
        except (PolicyError, ArgsError) as e:
            print(
                f"python -m train.bots: error: {head}: cannot install the run's best policy: "
                f"{e}; delete {run_dir} to train it again, or give another --runs",
                file=sys.stderr,
            )
            return 1
        print(f"{head}: installed {target}", flush=True)
    table = training_table(runs, [c.name for c in args.configs])
    print(table, flush=True)
    atomic_write_text(runs / "training.md", table + "\n")
    if not args.no_matrix:
        if len(args.configs) == len(CONFIGURATIONS):
            chosen = ["--all"]
        else:
            chosen = [a for c in args.configs for a in ("--preset", c.name)]
        command = [sys.executable, "-m", "benchmarks.strength", *chosen]
        command += ["--bots-dir", args.bots_dir, "--out", args.matrix_out]
        print(f"strength matrix: {' '.join(command[1:])}", flush=True)
        code = subprocess.call(command)
        if code != 0:
            return code
    print(f"done in {(time.monotonic() - started) / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    run_main(main)
