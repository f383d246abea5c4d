"""Fit the expert's weights for each configuration: ``python -m train.expert_fit``.

The expert scores a move by a weighted sum of its features (:mod:`agents.expert`).
Its base weights were fitted on the two-player standard rules; this command fits a
set for each configuration of :data:`matador_env.configs.CONFIGURATIONS` (or those
named by ``--only``) the same way, and keeps it only where the arena confirms it:

1. **positions**: hands of expert play (the base set in every seat) on seeded
   deals; each decision with at least two distinct moves and none that goes out
   is a position, kept with chance ``--keep`` so that one hand gives a few;
2. **labels**: the determinized search (``search:samples=N,halving=0``: every
   candidate, the expert's ``width`` favourites, is played out in the same ``N``
   sampled worlds) values each candidate by the points it brings in the end;
3. **fit**: least squares of the expert's score to those values, both centred per
   position (only the differences between one position's moves decide), with a
   ridge pull towards the base set (``--ridge``), so a weight the configuration
   never exercises keeps its base value;
4. **confirm**: the fitted set plays the base set on duplicate deals of another
   seed (``--confirm-hands``; with 3-4 seats each for himself, alone against a
   field of the other); the set is kept only when it scores more points per hand
   with the 95% interval's lower bound above zero; else the base set stays.

Every configuration is fitted and confirmed in worker processes (``--workers``),
and the result, each configuration's figures and the command are written to
``agents/expert_weights.json`` in one atomic replace; with ``--only`` the other
configurations' entries stay as they were. The same command and seed give the same
file. Time on two cores: about a minute per two-player double-six configuration,
several for the larger sets and 3-4 seats.

An interrupted run resumes: each unit of labelled positions (:data:`CHUNK` of one
configuration) is written to ``OUT.work/`` as it is done, named by everything that
makes it, and the same command run again reads those units instead of labelling
them again, so it writes the same file. The folder is removed once the weights file
is written; a unit that cannot be read back is labelled again (and said so).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import multiprocessing
import random
import shlex
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.expert import (
    FEATURES,
    FITTED_WEIGHTS_PATH,
    WEIGHTS_FORMAT,
    ExpertAgent,
    ExpertWeights,
    read_weights_file,
)
from agents.search import SearchAgent
from evaluate.arena import (
    Pairing,
    RunPlan,
    derive,
    duplicate_figures,
    run_with_bar,
    seat_patterns,
)
from evaluate.stats import finite_or_none
from matador_env.configs import CONFIGURATIONS, Configuration, ConfigurationError, configuration
from matador_env.engine import HandState, SeatView
from matador_env.files import atomic_write_json, file_arg, file_problem, folder_problem
from matador_env.flags import integer_arg, seed_arg
from matador_env.streams import progress_bar, run_main

__all__ = ["fit_weights", "label_positions", "main", "positions", "weights_spec"]

BASE_SPEC = "expert:weights=base"
CHUNK = 50
"""Positions per unit of work."""
MIN_WIDTH = 2
"""The fewest candidates per position: the fit learns only from the differences between
one position's values, so a position of one valued candidate teaches it nothing."""
MAX_SKIPPED = 10_000
"""Positions in a row that :func:`label_positions` may find without two candidates to
value before it gives up. With a width of two or more a position is skipped only when
all its moves leave the same ends, so a long run of them means the rules leave nothing
to fit, and looking on would never end."""


class LabelError(ValueError):
    """Positions that cannot be labelled: too few candidates to tell apart."""


@dataclass(frozen=True)
class Labelled:
    """One position: each candidate's features (rows) and the search's value of it."""

    features: np.ndarray
    values: np.ndarray


def positions(config: Configuration, seed: int, keep: float) -> Iterator[SeatView]:
    """Views of expert play (base weights, every seat) with a choice to make and no
    move that goes out, each kept with chance ``keep``; deals from ``seed`` on."""
    rules = config.rules()
    expert = ExpertAgent(ExpertWeights())
    rng = random.Random(derive(seed, "positions"))
    deal = 0
    while True:
        state = HandState.deal(rules, derive(seed, "deal", deal))
        deal += 1
        while state.outcome is None:
            view = state.view(state.to_move)
            moves = view.legal_moves
            if (
                len(moves) > 1
                and rng.random() < keep
                and all(f is not None for f in expert.features(view))
            ):
                yield view
            state = state.apply(expert.act(view, rng))


def label_positions(
    config: Configuration, seed: int, count: int, samples: int, width: int, keep: float
) -> list[Labelled]:
    """``count`` positions of ``config`` from ``seed``, each labelled by the search.

    :class:`LabelError` for a ``width`` below :data:`MIN_WIDTH`, and when
    :data:`MAX_SKIPPED` positions in a row have fewer than two candidates to value
    (else it would look for ever)."""
    if width < MIN_WIDTH:
        raise LabelError(
            f"width {width}: at least {MIN_WIDTH} candidates per position are needed, since "
            "the fit learns from the differences between one position's values"
        )
    expert = ExpertAgent(ExpertWeights())
    search = SearchAgent(samples=samples, width=width, halving=0)
    rng = random.Random(derive(seed, "search"))
    out: list[Labelled] = []
    skipped = 0
    for view in positions(config, seed, keep):
        _, valued = search.evaluate(view, rng)
        if len(valued) < 2:
            # Every move leaves the same ends: nothing to tell apart.
            skipped += 1
            if skipped >= MAX_SKIPPED:
                raise LabelError(
                    f"{config.name}: {skipped} positions in a row had fewer than two "
                    f"candidates to value (width {width}); none to fit on"
                )
            continue
        skipped = 0
        features = expert.features(view)
        rows = [features[view.legal_moves.index(move)] for move, _ in valued]
        out.append(
            Labelled(
                np.array(rows, dtype=np.float64),
                np.array([value for _, value in valued], dtype=np.float64),
            )
        )
        if len(out) == count:
            return out
    raise AssertionError("positions() never ends")  # pragma: no cover


def fit_weights(data: list[Labelled], base: ExpertWeights, ridge: float) -> ExpertWeights:
    """Least squares of the score to the values, per position centred, pulled towards
    ``base`` by ``ridge`` (in units of the positions' own spread of each feature).

    With ``ridge`` 0 and few positions the features can be collinear, and the least
    squares have many solutions: the one nearest ``base`` is taken, so a combination of
    weights the positions do not tell apart keeps its base value as an unexercised
    weight does (a plain solve raised LinAlgError: Singular matrix there)."""
    x = np.concatenate([d.features - d.features.mean(axis=0) for d in data])
    y = np.concatenate([d.values - d.values.mean() for d in data])
    w0 = np.array(astuple(base), dtype=np.float64)
    spread = (x**2).mean(axis=0)
    # A feature that never varies within a position is not fitted: it keeps w0.
    penalty = np.where(spread > 1e-12, ridge * len(x) * spread, 1.0)
    # Solved for the change from w0, (X'X + P) d = X'(y - X w0), the normal equations of
    # w = w0 + d shifted by w0; the least-norm d (lstsq) is the change nearest base
    # when they have many solutions, and the one solution when they have one.
    change = np.linalg.lstsq(x.T @ x + np.diag(penalty), x.T @ (y - x @ w0), rcond=None)[0]
    return ExpertWeights(*(float(f"{v:.4g}") for v in w0 + change))


def agreement(data: list[Labelled], weights: ExpertWeights) -> float:
    """The share of positions where the weights' best candidate is the search's."""
    w = np.array(astuple(weights), dtype=np.float64)
    hits = sum(int(np.argmax(d.features @ w) == np.argmax(d.values)) for d in data)
    return hits / len(data)


def weights_spec(weights: ExpertWeights) -> str:
    """The agent spec that plays ``weights`` under every rules."""
    return "expert:" + ",".join(
        f"{k}={v!r}" for k, v in zip(FEATURES, astuple(weights), strict=True)
    )


Unit = tuple[str, int, int, int, int, float]
"""One unit of labelling work: configuration, seed, positions, samples, width, keep."""


def _label_unit(unit: Unit) -> list[Labelled]:
    name, seed, count, samples, width, keep = unit
    return label_positions(configuration(name), seed, count, samples, width, keep)


def work_folder(out: Path) -> Path:
    """Where a run writing ``out`` keeps its labelled units until ``out`` is written."""
    return out.with_name(out.name + ".work")


def unit_path(work: Path, unit: Unit) -> Path:
    """A unit's file in ``work``, named by all that makes it: a run with other
    arguments finds no file of its own there."""
    digest = hashlib.sha256(json.dumps(list(unit)).encode()).hexdigest()[:16]
    return work / f"{unit[0]}-{digest}.json"


def save_unit(path: Path, unit: Unit, data: list[Labelled]) -> None:
    # Floats are written as repr, which reads back to the same float64.
    atomic_write_json(
        path,
        {
            "unit": list(unit),
            "positions": [
                {"features": d.features.tolist(), "values": d.values.tolist()} for d in data
            ],
        },
    )


def load_unit(path: Path, unit: Unit) -> list[Labelled]:
    """The positions :func:`save_unit` wrote for ``unit``; ``ValueError`` naming
    what is wrong for a file that is not that."""
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot be read ({e})") from None
    if not isinstance(saved, dict) or saved.get("unit") != list(unit):
        raise ValueError("is not this unit's")
    positions = saved.get("positions")
    if not isinstance(positions, list) or len(positions) != unit[2]:
        raise ValueError(f"does not hold {unit[2]} positions")
    out = []
    for p in positions:
        try:
            features = np.array(p["features"], dtype=np.float64)
            values = np.array(p["values"], dtype=np.float64)
        except (TypeError, KeyError, ValueError) as e:
            raise ValueError(f"holds a position that is not one ({e!r})") from None
        if not (
            features.ndim == 2
            and features.shape == (len(values), len(FEATURES))
            and len(values) >= MIN_WIDTH
            and np.isfinite(features).all()
            and np.isfinite(values).all()
        ):
            raise ValueError("holds a position that is not one")
        out.append(Labelled(features, values))
    return out


class _DefaultsHelp(argparse.ArgumentDefaultsHelpFormatter):
    """Each flag's default in its help, but none where it is None: those flags' help
    says what leaving them out means (``--only``: all)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m train.expert_fit",
        description="Fit the expert's weights per configuration to the search's move "
        "values, keep each set only where it beats the base set in the arena, and write "
        "agents/expert_weights.json.",
        formatter_class=_DefaultsHelp,
    )
    names = list(CONFIGURATIONS)
    parser.add_argument(
        "--only",
        nargs="+",
        action="extend",
        metavar="NAME",
        help="configurations to fit (default: all; repeat or list several, each once): "
        + ", ".join(names),
    )
    parser.add_argument(
        "--positions", type=integer_arg, default=3000, help="positions per configuration"
    )
    parser.add_argument(
        "--samples", type=integer_arg, default=128, help="search worlds per candidate"
    )
    parser.add_argument("--width", type=integer_arg, default=6, help="candidates per position")
    parser.add_argument(
        "--keep", type=float, default=0.5, help="chance a decision becomes a position"
    )
    parser.add_argument("--ridge", type=float, default=0.05, help="pull towards the base set")
    parser.add_argument(
        "--confirm-hands", type=integer_arg, default=1000, help="hands of fitted vs base"
    )
    parser.add_argument("--seed", type=seed_arg, default=11, help="positions and labels")
    parser.add_argument("--confirm-seed", type=seed_arg, default=12, help="the confirming deals")
    parser.add_argument("--workers", type=integer_arg, default=2, help="processes")
    parser.add_argument(
        "--out",
        type=file_arg,
        default=FITTED_WEIGHTS_PATH,
        help="the weights file",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    # A name given twice is fitted once (it would label the same positions twice and
    # record twice the positions it has); the order of first mention is kept.
    args.only = list(dict.fromkeys(args.only or names))
    try:
        args.configs = [configuration(n) for n in args.only]
    except ConfigurationError as e:
        parser.error(str(e))
    for flag in ("positions", "samples", "confirm_hands", "workers"):
        if getattr(args, flag) < 1:
            parser.error(
                f"--{flag.replace('_', '-')} must be at least 1, got {getattr(args, flag)}"
            )
    if args.width < MIN_WIDTH:
        parser.error(
            f"--width must be at least {MIN_WIDTH}, got {args.width}: the fit learns from the "
            "differences between the values of one position's candidates"
        )
    if not 0 < args.keep <= 1:  # also refuses nan (inf is above 1)
        parser.error(f"--keep must be in (0, 1], got {args.keep}")
    if not (math.isfinite(args.ridge) and args.ridge >= 0):
        parser.error(f"--ridge must be a finite number >= 0, got {args.ridge}")
    # The output is checked before any work, not at the write after it.
    problem = file_problem(args.out) or folder_problem(work_folder(args.out))
    if problem is not None:
        parser.error(f"--out {args.out}: {problem}")
    try:
        args.entries = _existing(args.out)
    except ValueError as e:
        parser.error(f"--out {e}")
    return args


def _existing(path: Path) -> dict[str, Any]:
    """The configurations already in the weights file (kept by ``--only`` runs); a
    ValueError (naming ``path``) for a file that cannot be read or is no weights file."""
    if not path.exists():
        return {}
    return read_weights_file(path)  # its ExpertWeightsError is a ValueError


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    entries: dict[str, Any] = args.entries
    base = ExpertWeights()
    units: list[Unit] = [
        (
            c.name,
            derive(args.seed, c.name, k),
            min(CHUNK, args.positions - lo),
            args.samples,
            args.width,
            args.keep,
        )
        for c in args.configs
        for k, lo in enumerate(range(0, args.positions, CHUNK))
    ]
    work = work_folder(args.out)
    done: dict[Unit, list[Labelled]] = {}
    for unit in units:
        path = unit_path(work, unit)
        if path.exists():
            try:
                done[unit] = load_unit(path, unit)
            except ValueError as e:
                print(f"{path} {e}: labelling it again", file=sys.stderr)
    todo = [u for u in units if u not in done]

    bar = None
    if not args.no_progress:
        total = args.positions * len(args.configs)
        bar = progress_bar(total=total, desc="label", unit="position")
        bar.update(sum(map(len, done.values())))
    start = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    try:
        if todo:
            with ctx.Pool(processes=min(args.workers, len(todo))) as pool:
                # Each unit is kept as it is done, so an interrupted run goes on from it.
                for unit, data in zip(todo, pool.imap(_label_unit, todo), strict=True):
                    save_unit(unit_path(work, unit), unit, data)
                    done[unit] = data
                    if bar is not None:
                        bar.update(len(data))
    except LabelError as e:
        # Nothing is written: the weights file keeps what it held.
        print(f"python -m train.expert_fit: error: {e}", file=sys.stderr)
        return 1
    finally:
        if bar is not None:
            bar.close()
    seconds = time.perf_counter() - start
    # In the units' order, whichever run labelled them: the fit does not depend on it.
    labelled: dict[str, list[Labelled]] = {c.name: [] for c in args.configs}
    for unit in units:
        labelled[unit[0]].extend(done[unit])
    resumed = len(units) - len(todo)
    print(
        f"labelled {sum(map(len, labelled.values()))} positions in {seconds:.0f} s"
        + (f" ({resumed} of {len(units)} units read from {work})" if resumed else "")
    )
    for config in args.configs:
        data = labelled[config.name]
        fitted = fit_weights(data, base, args.ridge)
        rules = config.rules()
        patterns = len(seat_patterns(rules, field=True))
        plan = RunPlan(
            rules,
            [Pairing(weights_spec(fitted), BASE_SPEC)],
            deals=max(1, math.ceil(args.confirm_hands / patterns)),
            matches=0,
            seed=args.confirm_seed,
            field=True,
        )
        # The confirming games are long work too, a configuration after another.
        results = run_with_bar(
            plan, args.workers, f"confirm {config.name}", not args.no_progress, unit="hand"
        )
        _, points = duplicate_figures(results)
        # Kept only when the arena confirms it: the interval's lower bound above zero.
        kept = points.lo > 0
        entries[config.name] = {
            "kept": kept,
            "weights": dict(zip(FEATURES, astuple(fitted), strict=True)),
            "positions": len(data),
            "agreement_with_search": {
                "base": round(agreement(data, base), 4),
                "fitted": round(agreement(data, fitted), 4),
            },
            "method": {
                k: getattr(args, k)
                for k in ("positions", "samples", "width", "keep", "ridge", "seed")
            },
            "confirm": {
                "against": BASE_SPEC,
                "hands": plan.games(),
                "seed": args.confirm_seed,
                # An unbounded end (one deal: no interval) is written as null.
                "points_per_hand": {
                    k: finite_or_none(round(v, 3))
                    for k, v in (("mean", points.mean), ("lo", points.lo), ("hi", points.hi))
                },
            },
        }
        print(
            f"{config.name:14} agreement with search {agreement(data, base):.3f} -> "
            f"{agreement(data, fitted):.3f}; fitted vs base {points.mean:+.2f} "
            f"[{points.lo:+.2f}, {points.hi:+.2f}] over {plan.games()} hands: "
            f"{'kept' if kept else 'not kept (the base set stays)'}",
            flush=True,
        )
    # Quoted as a shell reads it back: a path with a space in it stays one argument.
    command = shlex.join(
        ["python", "-m", "train.expert_fit", *(sys.argv[1:] if argv is None else argv)]
    )
    atomic_write_json(
        args.out,
        {
            "format": WEIGHTS_FORMAT,
            "about": "The expert's weights fitted per configuration (agents/expert.py); "
            "written by python -m train.expert_fit, only sets with kept=true are played.",
            "configurations": {name: entries[name] for name in sorted(entries)},
            "last_command": command.strip(),
        },
    )
    print(f"wrote {args.out}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    run_main(main)
