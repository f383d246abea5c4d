"""Perft from the command line: ``python -m matador_env.perft --depth D``.

::

    python -m matador_env.perft --preset leiden --seed 7 --depth 5
    python -m matador_env.perft --players 4 --moves "0-3 2-4@1>2" --depth 4 --divide
    python -m matador_env.perft --case drawn3/middle --divide

Counts every line of legal actions from a position with
:func:`matador_env.engine.perft` and prints one row per depth from 1 to ``--depth``:
the lines, the hands their last action ends by how they ended, and each side's
points in those hands (docs/rules.md, "Checking an implementation: perft counts").
Each row is printed as soon as it is counted. ``--divide`` prints instead, for the
deepest depth, the count below each first action (its text form, in the engine's
order) and their total: where another implementation's count differs, the action
whose count differs leads to the first position where the two part (give it to
``--moves`` and divide again).

The position is a hand dealt with ``--seed`` under ``--preset`` (with ``--players``,
``--teams`` and ``--rules KEY=VALUE`` changes on top, as ``python -m evaluate`` takes
them), or a case of the perft file (``--case NAME``, from ``--file``, by default the
checkout's ``tests/golden/perft.json``) dealt as the file writes it out, with its
moves played; ``--moves`` then plays more moves (text forms, separated by spaces).
With ``--case`` the depth defaults to the deepest the file holds for that case.

Exit codes: 0 when counted, 2 for a refused argument (the message names it and
what is allowed: a case not in the file, a file that cannot be read, a move that is
not legal there), 130 on Ctrl-C, 141 when the reader of the output goes away.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from .configs import seated_rules, seated_rules_flag
from .engine import (
    PRESETS,
    HandState,
    IllegalMoveError,
    MoveParseError,
    Perft,
    Rules,
    RulesError,
    perft,
    perft_divide,
)
from .flags import positive_int, seed_arg
from .streams import run_main, standard_streams

PROG = "python -m matador_env.perft"
DEFAULT_FILE = Path("tests/golden/perft.json")
COLUMNS = Perft._fields  # the printed columns are the counts, in their order


class _Refused(Exception):
    """An argument that names no position: the message says which and why."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Count every line of legal actions from a Matador position (perft).",
    )
    p.add_argument(
        "--depth",
        type=positive_int,
        help="count lines of 1 to this many actions (default with --case: the file's deepest)",
    )
    p.add_argument(
        "--divide",
        action="store_true",
        help="print the deepest count split by the first action instead of a row per depth",
    )
    p.add_argument("--preset", default="standard", choices=list(PRESETS), help="(default standard)")
    p.add_argument("--players", type=int, help="number of players (default: the preset's)")
    p.add_argument(
        "--teams",
        action=argparse.BooleanOptionalAction,
        help="two partnerships, seats 0+2 against 1+3 (four players)",
    )
    p.add_argument(
        "--rules",
        nargs="*",
        default=[],
        metavar="KEY=VALUE",
        help="changes of the rules on top (docs/rules.md), e.g. spinner=first_double",
    )
    p.add_argument(
        "--seed",
        type=seed_arg,
        default=1,
        help="the deal's seed (default 1)",
    )
    p.add_argument("--case", metavar="NAME", help="a case of the perft file, e.g. leiden/end")
    p.add_argument(
        "--file",
        type=Path,
        default=DEFAULT_FILE,
        help=f"the perft file that --case reads (default {DEFAULT_FILE})",
    )
    p.add_argument(
        "--moves",
        default="",
        metavar="MOVES",
        help='moves played first, in text form separated by spaces, e.g. "0-3 2-4@1>2"',
    )
    return p


def _case(path: Path, name: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        cases = {entry["name"]: entry for entry in data["cases"]}
    except OSError as exc:
        raise _Refused(f"--file: cannot read {path} ({exc.strerror or exc})") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise _Refused(f"--file: {path} is not a perft file ({exc})") from None
    if name not in cases:
        known = ", ".join(list(cases)[:6])
        raise _Refused(
            f"--case: {name!r} is not in {path}; allowed: one of its {len(cases)} case "
            f"names ({known}, ...)"
        )
    return cases[name]


def case_position(entry: Mapping[str, Any]) -> HandState:
    """The position of a case of the perft file, as another implementation would build
    it: its rules, its deal as the file writes it out, its moves played. Raises
    ``ValueError`` (rules, tiles or moves the engine refuses), ``KeyError`` or
    ``TypeError`` (a case missing a part or holding the wrong kind of value)."""
    rules = Rules.from_dict(entry["rules"])
    deal = entry["deal"]
    hands = [hand.split() for hand in deal["hands"]]
    state = HandState.from_deal(rules, hands, deal["boneyard"].split(), deal["leader"])
    for move in entry["moves"].split():
        state = state.apply(move)
    return state


def _position(args: argparse.Namespace) -> tuple[HandState, int | None]:
    """The position the arguments name, and the depth the file holds for a case."""
    stored_depth = None
    if args.case is not None:
        given = [f"--{f}" for f in ("players", "teams") if getattr(args, f) is not None]
        given += ["--rules"] * bool(args.rules)
        if given:
            raise _Refused(f"{given[0]}: not with --case, whose rules the file gives")
        entry = _case(args.file, args.case)
        try:
            state = case_position(entry)
        except (ValueError, KeyError, TypeError) as exc:
            raise _Refused(
                f"--case: {args.case!r} in {args.file} is not a position ({exc})"
            ) from None
        stored_depth = len(entry.get("perft", ())) or None
    else:
        try:
            rules = seated_rules(args.preset, args.players, args.teams, args.rules)
        except RulesError as exc:
            flag = seated_rules_flag(exc, args.players, args.teams, args.rules)
            raise _Refused(f"{flag}: {exc}") from None
        state = HandState.deal(rules, args.seed)
    for move in args.moves.split():
        try:
            state = state.apply(move)
        except (IllegalMoveError, MoveParseError) as exc:
            raise _Refused(f"--moves: {exc}") from None
    return state, stored_depth


def _row(label: object, count: Perft) -> list[str]:
    return [str(label), *(str(v) for v in count[:6]), " ".join(map(str, count.side_points))]


def _print_rows(out: TextIO, rows: list[list[str]], widths: list[int]) -> None:
    for row in rows:
        out.write("  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
        out.write("\n")
    out.flush()


def main(
    argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    """Count and print; returns the exit code (streams default to the process's)."""
    _, out, err = standard_streams(None, stdout, stderr)
    args = build_parser().parse_args(argv)
    try:
        state, stored_depth = _position(args)
    except _Refused as exc:
        err.write(f"{PROG}: error: {exc}\n")
        return 2
    depth = args.depth or stored_depth
    if depth is None:
        err.write(f"{PROG}: error: --depth: required without --case (a count of 1 or more)\n")
        return 2
    rules = state.rules
    moves = " ".join(map(str, state.moves)) or "(none)"
    out.write(f"rules: {rules.to_text()}\n")
    out.write(f"moves: {moves}\nto move: seat {state.to_move}\n")
    if state.is_over:
        out.write("the hand is over: no lines beyond it\n")
    width = max([10, *(len(str(m)) for m in state.legal_moves())])
    widths = [width, 9, 7, 7, 8, 10, 7, 11]
    if args.divide:
        parts = perft_divide(state, depth)
        total = Perft.none(rules.sides)
        for part in parts.values():
            total += part
        rows = [_row(text, count) for text, count in parts.items()]
        rows.append(_row("total", total))
        out.write(f"depth {depth}, by the first action:\n")
        _print_rows(out, [["action", *COLUMNS], *rows], widths)
        return 0
    _print_rows(out, [["depth", *COLUMNS]], widths)
    for d in range(1, depth + 1):
        _print_rows(out, [_row(d, perft(state, d))], widths)
    return 0


if __name__ == "__main__":
    run_main(main)
