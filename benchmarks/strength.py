"""The strength matrix: per configuration, the agents and the shipped bot against the bars.

``python -m benchmarks.strength [--preset NAME [--preset NAME ...] | --all] [--workers N]
[--seed S] [--quick] [--fraction F] [--search SPEC] [--bots-dir DIR] [--out DIR]``
``python -m benchmarks.strength --combine FILE ... [--out DIR]``

``NAME`` is a configuration of :data:`matador_env.configs.CONFIGURATIONS` (a preset
with its seats and partnerships, e.g. ``standard_4p``; repeatable; default
``standard``); ``--all`` measures every one in the table's order. The run ends
with one compact matrix, a row per configuration and a column per bar, printed
and (``--out``) written with every figure to ``strength.md`` and
``strength.json``, after each configuration: Ctrl-C keeps those measured (an
unbounded figure, from one deal, is ``null`` there). ``--bots-dir`` measures the
bots of another folder, as ``python -m train.bots --bots-dir`` writes them. Per
configuration:

====================  ======  ======================================================
pairing (A vs B)      hands   bars
====================  ======  ======================================================
expert vs greedy      1000    points per hand: CI lower bound > 0
search vs expert      1000    points per hand: CI lower bound >= +2; search's time per
                              move <= 50 ms
bot vs expert         2000    match win rate >= 55% (at least 200 matches); points per
                              hand: CI lower bound > 0
bot vs search         1000    points per hand: CI upper bound >= 0; the bot's time per
                              move at least 20x less than search's
bot vs greedy         1000    none (figures only)
====================  ======  ======================================================

``search`` is the configuration's spec in :data:`SEARCH_SPECS` (``--search``
overrides it for every configuration); ``bot`` is the exported policy shipped in
``matador_env/bots/<configuration>/``, played as ``policy:<folder>``. A
configuration without one prints its expert and search rows and says the bot is
missing.

What the figures mean. Every pairing is played by the arena (:mod:`evaluate.arena`)
on duplicate deals with ``field=True``: each deal is replayed with A alone in each
seat in turn, the other seats all B (two seats: twice, the agents swapping seats;
two partnerships: twice, the partnerships swapping agents). "Points per hand" is
A's points in the hand minus the mean of the points of B's seats (two seats or two
partnerships: simply A's minus B's); "hand win %" and "match win %" are the share
of B's seats that A finished ahead of, ties half (two seats or partnerships: A's
win rate, ties half); matches are compared by their final totals. Equal agents
score 0 points and 50% at any seat count. The 95% intervals are over per-deal
means (:func:`evaluate.arena.duplicate_figures`); time per move is the mean time in
``act`` over every move of the pairing (hands and matches, forced moves included;
the time per move with a choice is printed beside it). The bars on time use the
time per move.

A bar is met or NOT met by its figure alone; its margin is printed. A pairing
played with fewer hands or matches than its bar asks (``--quick``, ``--fraction``
below 1) marks its verdicts with ``*``: indicative only. The bars ask for at least
their hands and matches, so ``--fraction`` above 1 (up to :data:`MAX_FRACTION`) is a
full measurement with narrower intervals; the same master seed deals the same games
first, so such a run extends the one at 1. Figures, not tests.

One seed's deals can meet a bar by luck, so the matrix is worth measuring at other
master seeds too. ``--combine`` measures nothing: it reads the ``strength.json`` of
such runs (whole matrices or some configurations each, one file per seed and
configuration) and prints, per configuration and bar, at how many seeds the bar is
met and the worst figure among them (:func:`across_seeds`); ``--out`` writes that
table to ``seeds.md``. Each ``strength.json`` records the search spec and the SHA-256
of the bot it measured, and the table says where the seeds measured different
searches (``--search``) or bots, or played different shares of the bars' hands
(``--fraction``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.search import search_spec
from evaluate.arena import Pairing, RunPlan, check_agents, run_with_bar, seat_patterns
from evaluate.report import PairingSummary, summarize
from evaluate.stats import finite_or_none, interval_text
from matador_env.configs import CONFIGURATIONS, Configuration, configuration
from matador_env.engine import Rules
from matador_env.engine.tiles import is_json_int, is_json_number
from matador_env.files import (
    atomic_write_all,
    atomic_write_text,
    folder_arg,
    folder_problem,
    make_folder,
)
from matador_env.flags import positive_int, seed_arg
from matador_env.policy import BOTS_DIR, POLICY_FILE, policy_paths
from matador_env.streams import run_main

__all__ = [
    "BENCHES",
    "BOTS_DIR",
    "EXPERT_VS_RANDOM_MIN_POINTS",
    "SEARCH_SPECS",
    "Bar",
    "Bench",
    "ConfigurationResult",
    "Verdict",
    "main",
    "matrix",
    "matrix_markdown",
    "measure",
    "verdict",
]

EXPERT_VS_RANDOM_MIN_POINTS = 13.0
"""Points per hand ``expert`` won by against ``random`` on standard with a wide margin
(+19.7 measured); ``benchmarks.training`` asks the same of a trained policy."""

SEARCH_SPECS: dict[str, str] = {
    name: search_spec(config.rules()) for name, config in CONFIGURATIONS.items()
}
"""The search agent's spec per configuration (the one the bar ``search vs expert`` is
measured with and the bots are compared to): :func:`agents.search.search_spec`, 64
worlds with one hidden hand, 256 with several."""

QUICK_FRACTION = 0.1
DEFAULT_SEED = 2026
"""The master seed of the matrix in the bots README."""
MAX_FRACTION = 100.0
"""The most ``--fraction`` plays: a hundred times the bars' hands is days of play."""
MATRIX_FILES = ("strength.json", "strength.md")
"""The files a measurement writes to ``--out`` (replacing an earlier run's)."""
SEEDS_FILE = "seeds.md"
"""The file ``--combine`` writes to ``--out``."""


# -- bars ----------------------------------------------------------------------------------


# An unbounded end (one deal: no interval) is no measure: "CI upper bound >= 0" is not
# met by an interval that says nothing, and the JSON's null reads back the same way.
def _points_lo(p: PairingSummary) -> float | None:
    return None if p.points is None else finite_or_none(p.points.lo)


def _points_hi(p: PairingSummary) -> float | None:
    return None if p.points is None else finite_or_none(p.points.hi)


def _match_win(p: PairingSummary) -> float | None:
    return None if p.match_win is None else p.match_win.mean


def _ms_a(p: PairingSummary) -> float | None:
    return 1000 * p.seconds_per_move[0] if p.moves[0] else None


def _speedup(p: PairingSummary) -> float | None:
    """How many times less time per move A takes than B."""
    a, b = p.seconds_per_move
    if not p.moves[0] or not p.moves[1] or a <= 0:
        return None
    return b / a


_DIGITS = {"points": 2, "rate": 1, "ms": 2, "times": 1}
"""Decimals each unit of :class:`Bar` prints (a rate in percent)."""
_MORE_DIGITS = 4
"""At most this many more where rounding would hide which side of its bar a figure is."""
_SETTLED_DIGITS = 9
"""Figures are compared with their bars at this many decimals: a mean of sixths (a
four-seat field's match scores) that is exactly 55% comes out of float sums as
0.5499999999999998, which must not miss a bar of 55%."""


@dataclass(frozen=True)
class Bar:
    """A threshold on one figure of a pairing."""

    column: str
    """Its column in the matrix."""
    text: str
    """What it asks, e.g. ``points/hand CI lower bound``."""
    figure: Callable[[PairingSummary], float | None]
    op: str
    """``>``, ``>=`` or ``<=``: how the figure must compare to the threshold."""
    threshold: float
    unit: str = "points"
    """``points``, ``rate``, ``ms`` or ``times``: how figures are printed."""

    def show(self, value: float, extra: int = 0) -> str:
        """``value`` in the bar's unit, with ``extra`` digits beyond the usual."""
        d = _DIGITS[self.unit] + extra
        if self.unit == "rate":
            return f"{100 * value:.{d}f}%"
        if self.unit == "ms":
            return f"{value:.{d}f} ms"
        if self.unit == "times":
            return f"{value:.{d}f}x"
        return f"{value:+.{d}f}"

    def extra_digits(self, value: float) -> int:
        """The digits beyond the usual that ``value`` needs so that its printed figure
        and margin read the way the verdict goes: a lower bound of 1.997 against ``>=
        +2`` prints as +1.997, short by 0.003, not as +2.00, short by 0.00."""
        scale = 100 if self.unit == "rate" else 1
        value = round(value, _SETTLED_DIGITS)
        for extra in range(_MORE_DIGITS + 1):
            d = _DIGITS[self.unit] + extra
            shown = round(scale * value, d) / scale
            margin = round(scale * abs(value - self.threshold), d)
            if self.met(shown) == self.met(value) and (margin > 0 or value == self.threshold):
                return extra
        return _MORE_DIGITS

    def describe(self) -> str:
        threshold = self.show(self.threshold)
        if self.unit == "points":
            threshold = f"{self.threshold:+g}"
        return f"{self.text} {self.op} {threshold}"

    def met(self, value: float) -> bool:
        value = round(value, _SETTLED_DIGITS)
        if self.op == ">":
            return value > self.threshold
        if self.op == ">=":
            return value >= self.threshold
        if self.op == "<=":
            return value <= self.threshold
        raise ValueError(f"bar {self.column!r}: unknown comparison {self.op!r}; known: >, >=, <=")


@dataclass(frozen=True)
class Bench:
    """One pairing of a configuration: roles ``expert``, ``greedy``, ``search``, ``bot``."""

    a: str
    b: str
    hands: int
    """Hands the bars ask for (whole duplicate deals are played, so a few more)."""
    matches: int = 0
    """Matches the bars ask for (0: none played)."""
    bars: tuple[Bar, ...] = ()

    @property
    def name(self) -> str:
        return f"{self.a} vs {self.b}"

    @property
    def needs_bot(self) -> bool:
        return "bot" in (self.a, self.b)


BENCHES: tuple[Bench, ...] = (
    Bench(
        "expert",
        "greedy",
        1000,
        bars=(Bar("expert>greedy", "points/hand CI lower bound", _points_lo, ">", 0.0),),
    ),
    Bench(
        "search",
        "expert",
        1000,
        bars=(
            Bar("search>expert", "points/hand CI lower bound", _points_lo, ">=", 2.0),
            Bar("search ms/move", "search's time per move", _ms_a, "<=", 50.0, "ms"),
        ),
    ),
    Bench(
        "bot",
        "expert",
        2000,
        matches=200,
        bars=(
            Bar("bot match win", "match win rate", _match_win, ">=", 0.55, "rate"),
            Bar("bot>expert", "points/hand CI lower bound", _points_lo, ">", 0.0),
        ),
    ),
    Bench(
        "bot",
        "search",
        1000,
        bars=(
            Bar("bot~search", "points/hand CI upper bound", _points_hi, ">=", 0.0),
            Bar("bot speed", "search's time per move / the bot's", _speedup, ">=", 20.0, "times"),
        ),
    ),
    Bench("bot", "greedy", 1000),
)
"""The pairings of every configuration, in the order they are played and printed."""


@dataclass(frozen=True)
class Verdict:
    bar: Bar
    value: float | None
    """The figure; None when the pairing did not measure it."""
    short: bool = False
    """Fewer hands or matches were played than the bar asks: indicative only."""

    @property
    def met(self) -> bool:
        return self.value is not None and self.bar.met(self.value)

    @property
    def margin(self) -> float | None:
        """How far the figure is past the threshold (positive: on the right side)."""
        if self.value is None:
            return None
        gap = self.value - self.bar.threshold
        return -gap if self.bar.op == "<=" else gap

    def line(self) -> str:
        """E.g. ``points/hand CI lower bound >= +2: NOT met (+1.23, short by 0.77)``."""
        star = "*" if self.short else ""
        if self.value is None or self.margin is None:
            return f"{self.bar.describe()}: NOT met{star} (not measured)"
        margin = abs(self.margin)
        extra = self.bar.extra_digits(self.value)
        size = self.bar.show(margin, extra).lstrip("+")
        if self.bar.unit == "rate":
            size = size.replace("%", " points")
        how = f"by {size}" if self.met else f"short by {size}"
        verdict = "met" if self.met else "NOT met"
        shown = self.bar.show(self.value, extra)
        return f"{self.bar.describe()}: {verdict}{star} ({shown}, {how})"

    def figure(self) -> str:
        """The figure as the matrix prints it, e.g. ``+1.23`` or ``4.31ms``."""
        if self.value is None:
            return "n/a"
        return self.bar.show(self.value, self.bar.extra_digits(self.value)).replace(" ms", "ms")

    def cell(self) -> str:
        """The matrix cell, e.g. ``+1.23 NOT*``."""
        if self.value is None:
            return "n/a"
        return f"{self.figure()} {'met' if self.met else 'NOT'}{'*' if self.short else ''}"

    def to_dict(self) -> dict[str, Any]:
        """The verdict as JSON data; an unbounded figure (one deal: no interval) is
        null, as in the arena's report, for strict JSON has no Infinity."""
        return {
            "bar": self.bar.describe(),
            "column": self.bar.column,
            "value": finite_or_none(self.value),
            "met": self.met,
            "margin": finite_or_none(self.margin),
            "short": self.short,
        }


def verdict(bench: Bench, summary: PairingSummary) -> list[Verdict]:
    """Each bar of ``bench`` judged on ``summary`` (A's side of the pairing)."""
    short = summary.hands < bench.hands or summary.matches < bench.matches
    return [Verdict(bar, bar.figure(summary), short) for bar in bench.bars]


# -- running -------------------------------------------------------------------------------


@dataclass
class PairingResult:
    bench: Bench
    a: str
    b: str
    """The agents' specs."""
    summary: PairingSummary
    seconds: float
    verdicts: list[Verdict]


@dataclass
class ConfigurationResult:
    """Everything measured for one configuration."""

    config: Configuration
    search: str
    bot: str | None
    """The bot's spec; None when none is shipped or it cannot play the configuration."""
    bot_problem: str | None
    """Why there is no bot row: missing, or refused (its error)."""
    pairings: list[PairingResult]
    bot_sha256: str | None = None
    """The SHA-256 of the bot's ``policy.onnx``, so matrices of several seeds can tell
    whether they measured the same bot (:func:`across_seeds`)."""

    def verdicts(self) -> dict[str, Verdict]:
        return {v.bar.column: v for p in self.pairings for v in p.verdicts}

    def to_dict(self) -> dict[str, Any]:
        return {
            "configuration": self.config.name,
            "describe": self.config.describe(),
            "rules": self.config.rules().to_text(),
            "search": self.search,
            "bot": self.bot,
            "bot_problem": self.bot_problem,
            "bot_sha256": self.bot_sha256,
            "pairings": [
                {
                    "pairing": p.bench.name,
                    "a": p.a,
                    "b": p.b,
                    "seconds": round(p.seconds, 1),
                    "summary": p.summary.to_dict(),
                    "verdicts": [v.to_dict() for v in p.verdicts],
                }
                for p in self.pairings
            ],
        }


def bot_file(config: Configuration, bots_dir: Path = BOTS_DIR) -> Path:
    """The network file that the bot's spec ``policy:<bots_dir>/<name>`` loads, resolved
    as the loader resolves it (:func:`matador_env.policy.policy_paths`)."""
    return policy_paths(bots_dir / config.name)[0]


def bot_spec(config: Configuration, bots_dir: Path = BOTS_DIR) -> tuple[str | None, str | None]:
    """``(spec, None)`` for the shipped bot of ``config``, or ``(None, why not)``."""
    folder = bots_dir / config.name
    onnx = bot_file(config, bots_dir)
    try:
        # Relative to the checkout, the spec reads as the README writes it.
        folder_text = str(folder.relative_to(Path.cwd()))
    except ValueError:
        folder_text = str(folder)
    if not onnx.is_file():
        return None, f"missing (no {folder_text}/{POLICY_FILE})"
    spec = f"policy:{folder_text}"
    try:
        check_agents(config.rules(), [spec])
    except ValueError as e:
        return None, f"refused: {e}"
    return spec, None


def deals_for(count: int, patterns: int, fraction: float) -> int:
    """Whole duplicate deals (or match sets) for ``count`` games scaled by ``fraction``."""
    if count <= 0:
        return 0
    return max(1, math.ceil(count * fraction / patterns))


def measure(
    config: Configuration,
    *,
    search: str,
    seed: int,
    workers: int,
    fraction: float = 1.0,
    bots_dir: Path = BOTS_DIR,
    progress: bool = False,
    echo: Callable[[str], None] = print,
) -> ConfigurationResult:
    """Play every pairing of :data:`BENCHES` on ``config``, printing each as it ends."""
    rules = config.rules()
    patterns = len(seat_patterns(rules, field=True))
    bot, problem = bot_spec(config, bots_dir)
    # The digest of the file as the run starts: the bot its pairings load.
    digest = None
    if bot is not None:
        digest = hashlib.sha256(bot_file(config, bots_dir).read_bytes()).hexdigest()
    echo("")
    changes = " ".join(f"{k}={v}" for k, v in rules.changes().items())
    echo(f"== {config.name}: {config.describe()} (rules: {changes or 'the defaults'})")
    echo(f"search: {search}; bot: {bot or problem}")
    echo(header(rules, patterns))
    roles = {"expert": "expert", "greedy": "greedy", "search": search}
    if bot is not None:
        roles["bot"] = bot
    out: list[PairingResult] = []
    for bench in BENCHES:
        if bench.needs_bot and bot is None:
            continue
        a, b = roles[bench.a], roles[bench.b]
        plan = RunPlan(
            rules,
            [Pairing(a, b)],
            deals_for(bench.hands, patterns, fraction),
            deals_for(bench.matches, patterns, fraction),
            seed,
            field=True,
        )
        start = time.perf_counter()
        results = run_with_bar(plan, workers, bench.name, progress)
        elapsed = time.perf_counter() - start
        summary = summarize(results, plan.pairings, [a, b], {"preset": config.preset}).pairings[0]
        result = PairingResult(bench, a, b, summary, elapsed, verdict(bench, summary))
        out.append(result)
        for line in pairing_lines(result, patterns):
            echo(line)
    if bot is None:
        echo(f"bot vs expert, search and greedy: not played; the bot is {problem}")
    return ConfigurationResult(config, search, bot, problem, out, digest)


def header(rules: Rules, patterns: int) -> str:
    if rules.players == 2:
        seats = "each deal played twice, the agents swapping seats"
        points = "A's points minus B's"
    elif rules.teams:
        seats = "each deal played twice, the partnerships swapping agents"
        points = "A's partnership's points minus B's"
    else:
        seats = f"each deal played {patterns} times, A alone in each seat in turn against B's"
        points = "A's points minus the mean of B's seats' points"
    return (
        f"duplicate deals, {seats}; 95% CIs over deals\n"
        f"points/hand = {points}; win % = share of B's seats A finished ahead of (ties half)"
    )


def _pct(e: Any) -> str:
    return "-" if e is None else f"{100 * e.mean:.1f}% [{100 * e.lo:.1f}, {100 * e.hi:.1f}]"


def _pts(e: Any) -> str:
    return "-" if e is None else interval_text(e.mean, e.lo, e.hi)


def pairing_lines(result: PairingResult, patterns: int) -> list[str]:
    """The printed block of one pairing: counts, figures, time per move, verdicts."""
    p = result.summary
    lines = [
        f"{result.bench.name} ({result.a} vs {result.b}): {p.deals} deals x {patterns} = "
        f"{p.hands} hands, {p.matches} matches, {result.seconds:.0f} s",
        f"  hand win %     {_pct(p.win)}",
        f"  points/hand    {_pts(p.points)}",
    ]
    if p.matches:
        seeds = f" ({p.match_win.n} seeds x {patterns} seatings)" if p.match_win else ""
        lines.append(f"  match win %    {_pct(p.match_win)} over {p.matches} matches{seeds}")
    lines.append(
        f"  ms/move        {result.bench.a} {1000 * p.seconds_per_move[0]:.2f}, "
        f"{result.bench.b} {1000 * p.seconds_per_move[1]:.2f} (per move with a choice: "
        f"{1000 * p.seconds_per_choice[0]:.2f}, {1000 * p.seconds_per_choice[1]:.2f})"
    )
    for v in result.verdicts:
        lines.append(f"  bar            {v.line()}")
    if not result.verdicts:
        lines.append("  bar            none (figures only)")
    return lines


# -- the matrix ----------------------------------------------------------------------------

MATRIX_COLUMNS: tuple[Bar, ...] = tuple(bar for bench in BENCHES for bar in bench.bars)


def _cells(result: ConfigurationResult) -> list[str]:
    verdicts = result.verdicts()
    cells = [result.config.name]
    for bar in MATRIX_COLUMNS:
        v = verdicts.get(bar.column)
        if v is not None:
            cells.append(v.cell())
        elif result.bot is None and bar.column.startswith("bot"):
            cells.append("no bot")
        else:
            cells.append("-")
    return cells


def _bar_lines() -> list[str]:
    """What each column's bar asks, a line each: the legend of every table of bars."""
    return [f"{bar.column}: {bar.describe()}" for bar in MATRIX_COLUMNS]


def _legend(results: Sequence[ConfigurationResult]) -> list[str]:
    lines = _bar_lines()
    lines.append("search specs: " + ", ".join(f"{r.config.name} {r.search}" for r in results))
    if any(v.short for r in results for v in r.verdicts().values()):
        lines.append(
            "*: fewer hands or matches than the bar asks (--quick, --fraction below 1): "
            "indicative only"
        )
    return lines


def matrix(results: Sequence[ConfigurationResult]) -> str:
    """One row per configuration, a column per bar: the figure and met / NOT."""
    rows = [["configuration", *(bar.column for bar in MATRIX_COLUMNS)]]
    rows += [_cells(r) for r in results]
    return "\n".join(_text_table(rows) + [""] + _legend(results))


def matrix_markdown(results: Sequence[ConfigurationResult], command: str, seed: int) -> str:
    rows = [["configuration", *(bar.column for bar in MATRIX_COLUMNS)]]
    lines = _markdown_table(rows + [_cells(r) for r in results])
    lines += ["", f"Measured with `{command}` (master seed {seed}).", ""]
    lines += [f"- {line}" for line in _legend(results)]
    return "\n".join(lines) + "\n"


# -- several seeds -------------------------------------------------------------------------


class MatrixFileError(ValueError):
    """A file given to :func:`read_matrix` is not a matrix that ``--out`` wrote."""


@dataclass(frozen=True)
class SavedMatrix:
    """A matrix read back from its ``strength.json``."""

    path: Path
    seed: int
    verdicts: dict[str, dict[str, Verdict]]
    """Per configuration (in the file's order), its verdicts by column, judged by the
    bars of this code."""
    bots: dict[str, str | None]
    """Per configuration with a bot, the SHA-256 of the bot measured (None: a file
    written before the digest was recorded)."""
    fraction: float
    """The share of the bars' hands the run played (``--fraction``; 1 in a file
    written before it was recorded)."""
    searches: dict[str, str]
    """Per configuration, the search spec it was measured with (``--search`` or
    :data:`SEARCH_SPECS`): the searches of search > expert and bot ~ search."""


_BARS = {bar.column: bar for bar in MATRIX_COLUMNS}


def read_matrix(path: Path) -> SavedMatrix:
    """The matrix in ``path`` (a ``strength.json`` from ``--out``); a clear
    :class:`MatrixFileError` for anything else."""
    try:
        data = json.loads(path.read_text())
    except OSError as e:
        raise MatrixFileError(f"{path}: cannot read it ({e.strerror})") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise MatrixFileError(f"{path}: not JSON ({e})") from e
    verdicts: dict[str, dict[str, Verdict]] = {}
    bots: dict[str, str | None] = {}
    searches: dict[str, str] = {}
    try:
        # Read as written, not converted: a seed of 1.5 or "7", a short of "false"
        # (truthy) or a figure of "NaN" would count silently in the table.
        seed = data["seed"]
        if not is_json_int(seed):
            raise ValueError(f"'seed' is {seed!r}, not a whole number")
        fraction = data.get("fraction", 1.0)
        if not (_is_figure(fraction) and fraction > 0):
            raise ValueError(f"'fraction' is {fraction!r}, not a number above 0")
        for c in data["configurations"]:
            name = c["configuration"]
            if name not in CONFIGURATIONS:
                raise MatrixFileError(
                    f"{path}: unknown configuration {name!r}; known: {', '.join(CONFIGURATIONS)}"
                )
            cells: dict[str, Verdict] = {}
            for pairing in c["pairings"]:
                for v in pairing["verdicts"]:
                    bar = _BARS.get(v["column"])
                    if bar is None:
                        raise MatrixFileError(
                            f"{path}: {name} has a bar this code does not know, "
                            f"{v['column']!r}; known: {', '.join(_BARS)}"
                        )
                    value, short = v["value"], v["short"]
                    if not (value is None or _is_figure(value)) or not isinstance(short, bool):
                        raise ValueError(
                            f"{name}'s {v['column']!r}: value {value!r} and short {short!r}, "
                            "not a finite number (or null) and true or false"
                        )
                    cells[bar.column] = Verdict(bar, value, short)
            verdicts[name] = cells
            search, bot, digest = c["search"], c["bot"], c.get("bot_sha256")
            if not (
                isinstance(search, str)
                and (bot is None or isinstance(bot, str))
                and (digest is None or isinstance(digest, str))
            ):
                raise ValueError(f"{name}: its search, bot or bot's digest is not a text")
            searches[name] = search
            if bot is not None:
                bots[name] = digest
    except MatrixFileError:
        raise
    except (KeyError, TypeError, ValueError) as e:
        raise MatrixFileError(
            f"{path}: not a strength.json written by python -m benchmarks.strength --out "
            f"({type(e).__name__}: {e})"
        ) from e
    return SavedMatrix(path, seed, verdicts, bots, fraction, searches)


def _is_figure(value: Any) -> bool:
    """A finite number as a matrix file's figures are."""
    return is_json_number(value) and math.isfinite(value)


def across_seeds(saved: Sequence[SavedMatrix]) -> tuple[list[list[str]], list[str]]:
    """The rows of the table over several matrices, and notes on what they measured.

    A cell reads ``k/n worst``: the bar met at ``k`` of the ``n`` seeds that measured
    it, and the figure furthest on the wrong side of it (the lowest margin) as the
    matrix prints it. One configuration measured twice at one seed is refused: the
    same deals would count twice."""
    measured: dict[str, dict[int, Path]] = {}
    for m in saved:
        for name in m.verdicts:
            seen = measured.setdefault(name, {})
            if m.seed in seen:
                raise MatrixFileError(
                    f"{name} is measured at seed {m.seed} in both {seen[m.seed]} and {m.path}; "
                    "give each seed of a configuration once"
                )
            seen[m.seed] = m.path
    names = [n for n in CONFIGURATIONS if n in measured]
    rows = [["configuration", *(bar.column for bar in MATRIX_COLUMNS), "seeds"]]
    notes: list[str] = []
    unknown: list[str] = []
    for name in names:
        row = [name]
        for bar in MATRIX_COLUMNS:
            found = [
                m.verdicts[name][bar.column]
                for m in saved
                if bar.column in m.verdicts.get(name, {})
            ]
            if not found:
                row.append("-")
                continue
            worst = min(found, key=lambda v: -math.inf if v.margin is None else v.margin)
            star = "*" if any(v.short for v in found) else ""
            row.append(f"{sum(v.met for v in found)}/{len(found)}{star} {worst.figure()}")
        row.append(",".join(str(s) for s in sorted(measured[name])))
        rows.append(row)
        digests = {m.bots[name] for m in saved if name in m.bots}
        if None in digests:
            unknown.append(name)
        elif len(digests) > 1:
            notes.append(f"{name}: the seeds measured {len(digests)} different bots")
        # A smoke run's --search (a few worlds) counted as a seed of the real search
        # would move search > expert and bot ~ search without a word.
        searches = sorted({m.searches[name] for m in saved if name in m.searches})
        if len(searches) > 1:
            notes.append(
                f"{name}: the seeds measured {len(searches)} different searches: "
                + ", ".join(searches)
            )
    if len({m.fraction for m in saved}) > 1:
        # A seed at three times the hands weighs no more in k/n than one at the minimum.
        shares = ", ".join(f"{m.path} {m.fraction:g}" for m in saved)
        notes.append(f"the files played different shares of the bars' hands (--fraction): {shares}")
    if unknown:
        notes.insert(
            0,
            "which bot each seed measured is not recorded (a file written before the bot's "
            f"digest was) for: {', '.join(unknown)}",
        )
    return rows, notes


def _markdown_table(rows: list[list[str]]) -> list[str]:
    """``rows`` (the first the header) as a Markdown table, the figures right-aligned."""
    lines = ["| " + " | ".join(rows[0]) + " |", "|---|" + "---:|" * (len(rows[0]) - 1)]
    return lines + ["| " + " | ".join(row) + " |" for row in rows[1:]]


def _text_table(rows: list[list[str]]) -> list[str]:
    """``rows`` (the first the header) as aligned text, a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
        if n == 0:
            lines.append("-" * len(lines[0]))
    return lines


def _combine(paths: list[Path], out: Path | None) -> int:
    try:
        saved = [read_matrix(p) for p in paths]
        rows, notes = across_seeds(saved)
    except MatrixFileError as e:
        print(f"python -m benchmarks.strength --combine: {e}", file=sys.stderr)
        return 2
    legend = [
        "k/n worst: the bar met at k of the n seeds that measured it; the figure furthest "
        "on the wrong side of it",
        *_bar_lines(),
        "*: fewer hands or matches than the bar asks at some seed: indicative only",
    ]
    print("\n".join(_text_table(rows) + [""] + legend + notes))
    if out is not None:
        problem = make_folder(out)
        if problem is not None:
            print(f"python -m benchmarks.strength --combine: --out: {problem}", file=sys.stderr)
            return 2
        files = ", ".join(f"`{p}`" for p in paths)
        md = _markdown_table(rows) + ["", f"Combined from {files}.", ""]
        md += [f"- {line}" for line in legend + notes]
        written = atomic_write_text(out / SEEDS_FILE, "\n".join(md) + "\n")
        print(f"wrote {written}")
    return 0


# -- command line --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.strength",
        description="The strength matrix: expert, search and the shipped bot per configuration, "
        "on duplicate deals, against the bars of issue #12.",
    )
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--preset",
        "--config",
        dest="preset",
        action="append",
        metavar="NAME",
        help="a configuration (repeatable; default standard; --config is the same flag, as "
        f"in evaluate and play): {', '.join(CONFIGURATIONS)}",
    )
    which.add_argument("--all", action="store_true", help="every configuration, then the matrix")
    which.add_argument(
        "--combine",
        nargs="+",
        type=Path,
        metavar="FILE",
        help="measure nothing: read strength.json files (from --out, one per seed or part "
        "of one) and print how many seeds meet each bar; --out writes seeds.md",
    )
    # None until given, so that --combine can tell a measuring flag it was given.
    p.add_argument("--workers", type=positive_int, help="processes (default: the CPU count)")
    p.add_argument("--seed", type=seed_arg, help=f"master seed (default {DEFAULT_SEED})")
    p.add_argument("--search", metavar="SPEC", help="the search spec for every configuration")
    p.add_argument(
        "--quick", action="store_true", help=f"{QUICK_FRACTION:g} of the hands (smoke runs)"
    )
    p.add_argument(
        "--fraction",
        type=float,
        help="the share of the bars' hands and matches to play (default 1; --quick: "
        f"{QUICK_FRACTION:g}; above 1, up to {MAX_FRACTION:g}: more than the bars ask, for "
        "narrower intervals)",
    )
    p.add_argument(
        "--bots-dir",
        type=Path,
        help="measure the bots in this folder (one subfolder per configuration, as "
        "python -m train.bots --bots-dir writes) instead of the shipped ones",
    )
    p.add_argument(
        "--out",
        type=folder_arg,
        help="write strength.json and strength.md there (after each configuration, so an "
        "interrupted run keeps the ones measured)",
    )
    p.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    return p


def main(argv: list[str] | None = None, bots_dir: Path = BOTS_DIR) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.combine:
        measuring = _measuring_flags(args)
        if measuring:
            parser.error(
                f"--combine measures nothing, so {', '.join(measuring)} would be ignored; "
                "allowed with --combine: --out"
            )
        # Made once the files are read: a file refused leaves no folder behind.
        _make_out(parser, args.out, (SEEDS_FILE,), make=False)
        return _combine(args.combine, args.out)
    if args.bots_dir is not None:
        if not args.bots_dir.is_dir():
            parser.error(f"--bots-dir: {args.bots_dir} is not a folder")
        bots_dir = args.bots_dir
    workers = (os.cpu_count() or 1) if args.workers is None else args.workers
    seed = DEFAULT_SEED if args.seed is None else args.seed
    names = list(CONFIGURATIONS) if args.all else list(dict.fromkeys(args.preset or ["standard"]))
    for name in names:
        if name not in CONFIGURATIONS:
            parser.error(f"unknown configuration {name!r}; known: {', '.join(CONFIGURATIONS)}")
    if args.quick and args.fraction is not None:
        parser.error("give --quick or --fraction, not both")
    fraction = QUICK_FRACTION if args.quick else 1.0 if args.fraction is None else args.fraction
    if not 0 < fraction <= MAX_FRACTION:  # also refuses nan
        parser.error(f"--fraction must be in (0, {MAX_FRACTION:g}], got {args.fraction}")
    if args.search is not None:
        # Against each configuration's rules, before any game: a search that plays other
        # rules only (a policy:) ended the run with a traceback after a pairing.
        for name in names:
            try:
                check_agents(configuration(name).rules(), [args.search])
            except ValueError as e:
                parser.error(f"--search {args.search!r}: {e}")
    # Last of the checks: a refused command line leaves no folder behind.
    _make_out(parser, args.out, MATRIX_FILES)
    command = "python -m benchmarks.strength " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    print(
        f"Strength matrix: {', '.join(names)}; master seed {seed}; {workers} "
        f"worker(s); {fraction:g} times the bars' hands and matches"
    )
    total = time.perf_counter()
    results: list[ConfigurationResult] = []
    written: list[Path] = []
    for name in names:
        try:
            result = measure(
                configuration(name),
                search=args.search or SEARCH_SPECS[name],
                seed=seed,
                workers=workers,
                fraction=fraction,
                bots_dir=bots_dir,
                progress=args.progress,
            )
        except KeyboardInterrupt:
            kept = (
                f"{args.out} holds the {len(results)} measured before it"
                if written
                else "nothing written"
            )
            print(f"\ninterrupted in {name}; {kept}", file=sys.stderr)
            return 130
        results.append(result)
        if args.out is not None:
            written = _write_matrix(args.out, results, command, seed, fraction)
    print()
    print(matrix(results))
    print()
    print(f"total {time.perf_counter() - total:.0f} s")
    if written:
        print(f"wrote {', '.join(str(w) for w in written)}")
    return 0


def _measuring_flags(args: argparse.Namespace) -> list[str]:
    """The flags given that only a measurement reads (which --combine is not)."""
    given = [
        flag
        for flag, value in (
            ("--workers", args.workers),
            ("--seed", args.seed),
            ("--search", args.search),
            ("--fraction", args.fraction),
            ("--bots-dir", args.bots_dir),
        )
        if value is not None
    ]
    if args.quick:
        given.append("--quick")
    if not args.progress:
        given.append("--no-progress")
    return given


def _make_out(
    parser: argparse.ArgumentParser, out: Path | None, files: Sequence[str], make: bool = True
) -> None:
    """Make ``--out`` (when given; ``make`` False: only check that it can be made), or
    refuse the command line naming why not: it cannot be a folder, or one of the
    ``files`` the run writes there is a folder (which the write would find only after
    the measurement, with a traceback)."""
    if out is None:
        return
    problem = make_folder(out) if make else folder_problem(out)
    if problem is not None:
        parser.error(f"--out: {problem}; give a folder")
    for name in files:
        if (out / name).is_dir():
            parser.error(f"--out: {out / name} is a folder, where the run writes its {name}")


def _write_matrix(
    out: Path, results: list[ConfigurationResult], command: str, seed: int, fraction: float
) -> list[Path]:
    """strength.json and strength.md of the configurations measured so far, replacing
    the earlier pair together (one cannot be left from another run than the other)."""
    data = {
        "command": command,
        "seed": seed,
        "fraction": fraction,
        "configurations": [r.to_dict() for r in results],
    }
    json_text = json.dumps(data, indent=2, sort_keys=True) + "\n"
    markdown = matrix_markdown(results, command, seed)
    json_file, markdown_file = MATRIX_FILES
    return atomic_write_all(
        out,
        {
            json_file: lambda tmp: tmp.write_text(json_text),
            markdown_file: lambda tmp: tmp.write_text(markdown),
        },
    )


if __name__ == "__main__":
    run_main(main)
