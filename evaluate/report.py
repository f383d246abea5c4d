"""Summaries of an arena run: per pairing, per agent, ratings; as a table, JSON, Markdown, PNG."""

from __future__ import annotations

import json
import math
import textwrap
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matador_env.files import atomic_write, atomic_write_all

from .arena import GameResult, Pairing, duplicate_figures
from .stats import Estimate, bradley_terry, interval_text

__all__ = [
    "RUN_FILES",
    "PairingSummary",
    "Report",
    "aliases",
    "run_files_problem",
    "summarize",
]

RUN_FILES = ("report.json", "report.md", "report.png", "records.jsonl")
"""The files of one arena run in its ``--out`` folder: each run writes some of them and
removes the others (an earlier run's), so that the folder holds one run's files."""

FIGURES = {
    "win": "hand win rate of A (ties count half)",
    "points": "points per hand, A's seats minus B's seats",
    "match_win": "match win rate of A to the target (shared wins count half)",
    "match_points": "final match totals, A's side minus B's side",
}
"""What each figure of a pairing means (report.json's ``figures``), by default."""

FIELD_FIGURES = {
    "win": "share of the field's seats A finished a hand ahead of, by the points scored "
    "in it (ties count half)",
    "points": "points per hand, A's minus the mean of the field's seats' points",
    "match_win": "share of the field's seats A finished a match ahead of, by final totals "
    "(ties count half)",
    "match_points": "final match totals, A's minus the mean of the field's seats' totals",
}
"""The same with ``--field`` at more than two sides: A alone against a field of B's."""

FIELD_NOTE = (
    "--field: A alone against a field of B's, A in each seat in turn; points are A's "
    "minus the mean of the field's seats' points, a % is the share of the field's seats A "
    "finished ahead of (ties count half; a match by final totals)"
)
"""What a report says of the figures with ``--field`` at more than two sides."""


@dataclass
class PairingSummary:
    """Everything measured for one pairing, from agent A's side."""

    a: str
    b: str
    deals: int
    hands: int
    win: Estimate | None
    """Hand win rate of A (ties count half); against a field (:attr:`Report.against_field`),
    the share of the field's seats A finished ahead of (:data:`FIELD_FIGURES`)."""
    points: Estimate | None
    """Points per hand, A minus B; against a field, A minus the field's mean."""
    matches: int
    match_win: Estimate | None
    """Match win rate of A to the target (shared wins count half); against a field,
    the share of the field's seats A finished ahead of."""
    match_points: Estimate | None
    """Final match totals, A minus B; against a field, A minus the field's mean."""
    terminations: dict[str, int]
    seconds_per_move: tuple[float, float]
    seconds_per_choice: tuple[float, float]
    """Time in ``act`` per move, and per move with more than one legal option (of the
    time spent on those moves alone; A, B)."""
    moves: tuple[int, int]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in self.__dict__.items():
            d[k] = v.to_dict() if isinstance(v, Estimate) else v
        return d


@dataclass
class Report:
    """A run: its settings, every pairing's summary, ratings and per-agent timing."""

    settings: dict[str, Any]
    agents: list[str]
    pairings: list[PairingSummary]
    ratings: dict[str, float]
    seconds_per_move: dict[str, float]
    seconds_per_choice: dict[str, float]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "agents": self.agents,
            "pairings": [p.to_dict() for p in self.pairings],
            "ratings": self.ratings,
            "seconds_per_move": self.seconds_per_move,
            "seconds_per_choice": self.seconds_per_choice,
            "notes": self.notes,
            "figures": self.figures(),
        }

    # -- what the figures are --------------------------------------------------------------

    @property
    def against_field(self) -> bool:
        """Whether the figures are A's against a field of B's (``settings["field"]``:
        ``--field`` at more than two sides), not A's side against B's."""
        return bool(self.settings.get("field"))

    def figures(self) -> dict[str, str]:
        """What each figure of a pairing (``win``, ``points``, ``match_win``,
        ``match_points``) means in this run."""
        return dict(FIELD_FIGURES if self.against_field else FIGURES)

    def table_setting(self) -> str:
        """The table and the mode, e.g. ``preset standard, 3 players, each for
        himself; --vs greedy, --field``; what ``settings`` does not hold is left out."""
        s = self.settings
        parts = [f"preset {s.get('preset', '?')}"]
        players, teams = s.get("players"), s.get("teams")
        if players is not None:
            parts.append(f"{players} players")
        if teams is not None and (players is None or players > 2):
            parts.append("two teams" if teams else "each for himself")
        text = ", ".join(parts)
        mode = s.get("mode")
        return f"{text}; {mode}" if mode else text

    # -- names and counts -----------------------------------------------------------------

    def aliases(self) -> dict[str, str]:
        """A short name for each agent (:func:`aliases`); the legend gives the full ones."""
        return aliases(self.agents)

    def legend(self) -> list[str]:
        """``alias = full name`` for every agent whose alias is not its name."""
        return [f"{alias} = {name}" for name, alias in self.aliases().items() if alias != name]

    def counts(self) -> str:
        """Hands and deals per pairing, e.g. ``600 hands (300 deals x 2 seatings) and 30
        matches (15 match seeds x 2 seatings) per pairing``: the intervals are over the
        deals and the match seeds, the independent units."""
        s = self.settings
        hands = max((p.hands for p in self.pairings), default=0)
        deals, patterns = s.get("deals"), s.get("patterns")
        text = f"{hands} hands"
        if deals is not None and patterns is not None:
            text += f" ({deals} deal{'' if deals == 1 else 's'} x {patterns} seatings)"
        matches = max((p.matches for p in self.pairings), default=0)
        if matches:
            text += f" and {matches} matches"
            seeds = max((p.match_win.n for p in self.pairings if p.match_win), default=0)
            if seeds and patterns is not None:
                text += f" ({seeds} match seed{'' if seeds == 1 else 's'} x {patterns} seatings)"
        return text + " per pairing"

    # -- text -------------------------------------------------------------------------

    def table(self) -> str:
        """The terminal table: one line per pairing, then the ratings, then the legend of
        the short names."""
        alias = self.aliases()
        w = max(len(a) for a in alias.values()) + 2
        lines = [f"{self.counts()}; 95% confidence intervals over duplicate deals", ""]
        head = (
            f"{'A':<{w}}{'B':<{w}}{'hands':>7}  {'A hand win % [95% CI]':<23}"
            f"{'A-B pts/hand [95% CI]':<25}{'matches':>8}  {'A match win % [95% CI]':<23}"
        )
        lines.append(head)
        lines.append("-" * len(head))
        for p in self.pairings:
            lines.append(
                f"{alias[p.a]:<{w}}{alias[p.b]:<{w}}{p.hands:>7}  "
                f"{_pct(p.win):<23}{_pts(p.points):<25}{p.matches:>8}  {_pct(p.match_win):<23}"
            )
        lines.append("")
        lines.append(
            f"{'Elo':>7}{'ms/move':>10}{'ms/choice':>11}  rating (Bradley-Terry, Elo scale)"
        )
        for name, r in sorted(self.ratings.items(), key=lambda kv: -kv[1]):
            lines.append(
                f"{r:>7.0f}{1000 * self.seconds_per_move.get(name, 0):>10.2f}"
                f"{1000 * self.seconds_per_choice.get(name, 0):>11.2f}  {alias[name]}"
            )
        legend = self.legend()
        if legend:
            lines += ["", "agents:"] + [f"  {x}" for x in legend]
        return "\n".join(line.rstrip() for line in lines)

    def markdown(self) -> str:
        s = {
            k: self.settings.get(k, "?")
            for k in ("preset", "rules", "mode", "deals", "patterns", "matches", "seed", "command")
        }
        lines = [
            "# Arena report",
            "",
            f"- preset: `{s['preset']}`, rules: `{s['rules']}`",
            f"- agents: {', '.join(f'`{a}`' for a in self.agents)} ({s['mode']})",
            f"- {self.counts()}; every deal is played once in each seating (duplicate deals)",
            f"- master seed: {s['seed']} (reproduce: `{s['command']}`)",
        ]
        if self.against_field:
            lines.append(f"- {FIELD_NOTE}")
        win, points, match_win = self._labels()
        lines += [
            "",
            "## Pairings (from A's side; 95% confidence intervals over duplicate deals)",
            "",
            f"| A | B | hands | {win} | {points} | matches | {match_win} |",
            "|---|---|---:|---|---|---:|---|",
        ]
        for p in self.pairings:
            lines.append(
                f"| `{p.a}` | `{p.b}` | {p.hands} | {_pct(p.win)} | {_pts(p.points)} | "
                f"{p.matches} | {_pct(p.match_win)} |"
            )
        lines += [
            "",
            "## Ratings",
            "",
            "Bradley-Terry fit of every hand (ties half), on the Elo scale, mean 1500.",
            "",
            "| agent | rating | ms/move | ms/choice |",
            "|---|---:|---:|---:|",
        ]
        for name, r in sorted(self.ratings.items(), key=lambda kv: -kv[1]):
            lines.append(
                f"| `{name}` | {r:.0f} | {1000 * self.seconds_per_move.get(name, 0):.2f} | "
                f"{1000 * self.seconds_per_choice.get(name, 0):.2f} |"
            )
        if self.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes]
        return "\n".join(lines) + "\n"

    # -- files --------------------------------------------------------------------------

    def _labels(self, plot: bool = False) -> tuple[str, str, str]:
        """The names of the hand win, points and match win figures: report.md's columns,
        or (``plot``) the PNG's panels; with ``--field`` they say what the figures are."""
        if self.against_field:
            return (
                "A ahead of field seats, % of hands",
                "A minus field mean, points per hand" if plot else "A - field mean, points/hand",
                "A ahead of field seats, % of matches",
            )
        return (
            "A hand win %",
            "A - B points per hand" if plot else "A-B points/hand",
            "A match win %",
        )

    def write(
        self,
        out: Path,
        plot: bool = True,
        records: Callable[[Path], object] | None = None,
    ) -> list[Path]:
        """The run's files in ``out`` (see :data:`RUN_FILES`): report.json, report.md,
        report.png (``plot``) and records.jsonl (``records``, which writes it at the
        path it is given), switched as a whole by
        :func:`matador_env.files.atomic_write_all`: an earlier
        run's files stay as they were if any of them cannot be written, and an earlier
        run's report.png or records.jsonl is removed when this run writes none."""
        text = json.dumps(self.to_dict(), indent=2) + "\n"
        markdown = self.markdown()
        return atomic_write_all(
            out,
            {
                "report.json": lambda path: path.write_text(text),
                "report.md": lambda path: path.write_text(markdown),
                "report.png": self.plot if plot else None,
                "records.jsonl": records,
            },
        )

    def plot(self, path: Path) -> Path:
        """Every pairing from A's side, with its 95% interval as an error bar: points per
        hand, hand win rate and (when matches were played) match win rate, as one PNG.
        Long agent names are shortened to aliases, listed in full under the plots."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        alias = self.aliases()
        versus = "vs field of" if self.against_field else "vs"
        labels = [f"{alias[p.a]} {versus} {alias[p.b]}" for p in self.pairings]
        win_title, points_title, match_title = self._labels(plot=True)
        panels: list[tuple[str, list[Estimate | None], float, float]] = [
            (points_title, [p.points for p in self.pairings], 1.0, 0.0),
            (win_title, [p.win for p in self.pairings], 100.0, 50.0),
        ]
        if any(p.match_win is not None for p in self.pairings):
            panels.append((match_title, [p.match_win for p in self.pairings], 100.0, 50.0))
        k = len(self.pairings)
        legend = self.legend()
        fig, axes = plt.subplots(
            1,
            len(panels),
            figsize=(4 + 3.6 * len(panels), 2.4 + 0.45 * k + 0.22 * len(legend)),
            sharey=True,
            squeeze=False,
        )
        unbounded = False
        for ax, (title, estimates, scale, even) in zip(axes[0], panels, strict=True):
            rows = [(i, e) for i, e in enumerate(estimates) if e is not None]
            # An interval with an unbounded end (one deal) is no interval: its point is
            # drawn hollow, without a bar, and said to have none.
            open_ended = {i for i, e in rows if not (math.isfinite(e.lo) and math.isfinite(e.hi))}
            bounded = [(i, e) for i, e in rows if i not in open_ended]
            bare = [(i, e) for i, e in rows if i in open_ended]
            ax.errorbar(
                [scale * e.mean for _, e in bounded],
                [i for i, _ in bounded],
                xerr=[
                    [scale * (e.mean - e.lo) for _, e in bounded],
                    [scale * (e.hi - e.mean) for _, e in bounded],
                ],
                fmt="o",
                capsize=4,
                color="tab:blue",
            )
            if bare:
                unbounded = True
                ax.plot(
                    [scale * e.mean for _, e in bare],
                    [i for i, _ in bare],
                    "o",
                    mfc="none",
                    color="tab:blue",
                )
            for y, e in rows:
                m = scale * e.mean
                text = f"{m:+.1f}" if scale == 1.0 else f"{m:.1f}"
                ax.annotate(
                    f"{text}, no interval" if y in open_ended else text,
                    (m, y),
                    textcoords="offset points",
                    xytext=(0, 6),
                    ha="center",
                    fontsize=8,
                )
            ax.axvline(even, color="grey", lw=0.8)
            if scale == 100.0:
                ax.set_xlim(-3, 103)
            ax.set_title(f"{title}, 95% CI", fontsize=10)
            ax.set_ylim(k - 0.5, -0.5)
        axes[0][0].set_yticks(range(k), labels)
        heading = [
            f"{self.table_setting()}; seed {self.settings.get('seed', '?')}",
            self.counts(),
        ]
        if self.against_field:
            heading.append(FIELD_NOTE)
        if unbounded:
            heading.append("hollow point: no interval (one deal)")
        # Wrapped to the figure's width (about 15 characters an inch at this size).
        columns = int(15 * fig.get_figwidth())
        fig.suptitle("\n".join(textwrap.fill(t, columns) for t in heading), fontsize=9)
        bottom = 0.0
        if legend:
            text = "\n".join(legend)
            fig.text(0.01, 0.01, text, fontsize=8, family="monospace", va="bottom")
            bottom = (0.3 + 0.16 * len(legend)) / fig.get_figheight()
        fig.tight_layout(rect=(0, bottom, 1, 1))
        atomic_write(path, lambda tmp: fig.savefig(tmp, dpi=110, format="png"))
        plt.close(fig)
        return path


def run_files_problem(out: Path) -> str | None:
    """Why a run's files (:data:`RUN_FILES`) cannot be written or removed in the
    folder ``out``, or None: one of their names is taken by a folder. (For the
    arena to refuse such an ``--out`` before its games, not after them.)"""
    for name in RUN_FILES:
        path = out / name
        if path.is_dir():
            return f"{path} is a folder, where the arena writes (or removes) its {name}"
    return None


def aliases(agents: Sequence[str], width: int = 18) -> dict[str, str]:
    """Each agent's name, or for a name longer than ``width`` a short alias made of
    its kind and a number (``policy#1``, ``search#2``) so that two long names never
    look alike; :meth:`Report.legend` pairs each alias with its full name. Each agent
    is named once (``ValueError`` otherwise)."""
    _check_once(agents, "aliases")
    out: dict[str, str] = {}
    taken = {a for a in agents if len(a) <= width}
    per_kind: Counter[str] = Counter()
    for name in agents:
        if name in taken:
            out[name] = name
            continue
        kind = name.split(":", 1)[0][: width - 3] or "agent"
        while True:
            per_kind[kind] += 1
            alias = f"{kind}#{per_kind[kind]}"
            if alias not in taken:
                break
        taken.add(alias)
        out[name] = alias
    return out


def _check_once(agents: Sequence[str], who: str) -> None:
    """``ValueError`` naming the first agent that ``agents`` lists twice."""
    seen: set[str] = set()
    for name in agents:
        if name in seen:
            raise ValueError(
                f"{who}: agent {name!r} is listed twice in the agents; list each agent once"
            )
        seen.add(name)


def _pct(e: Estimate | None) -> str:
    if e is None:
        return "-"
    return f"{100 * e.mean:5.1f} [{100 * e.lo:4.1f}, {100 * e.hi:4.1f}]"


def _pts(e: Estimate | None) -> str:
    if e is None:
        return "-"
    return interval_text(e.mean, e.lo, e.hi, width=6)


def summarize(
    results: Sequence[GameResult],
    pairings: Sequence[Pairing],
    agents: Sequence[str],
    settings: dict[str, Any],
) -> Report:
    """Reduce game results to a :class:`Report` (duplicate intervals, ratings, timing).
    ``agents`` names each agent once, and each pairing is of two of them (``ValueError``
    otherwise)."""
    _check_once(agents, "summarize")
    for pr in pairings:
        for name in (pr.a, pr.b):
            if name not in agents:
                raise ValueError(
                    f"summarize: pairing {pr.a!r} vs {pr.b!r} names {name!r}, which is not "
                    f"one of the agents; allowed: {', '.join(map(repr, agents))}"
                )
        if pr.a == pr.b:
            raise ValueError(
                f"summarize: pairing {pr.a!r} vs {pr.b!r} pairs an agent with itself; "
                "a pairing is of two different agents"
            )
    by: dict[tuple[int, str], dict[int, list[GameResult]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        by[(r.pairing, r.kind)][r.deal].append(r)
    summaries = []
    bt: list[tuple[int, int, float, int]] = []
    index = {a: i for i, a in enumerate(agents)}
    secs: defaultdict[str, float] = defaultdict(float)
    choice_secs: defaultdict[str, float] = defaultdict(float)
    moves: Counter[str] = Counter()
    choices: Counter[str] = Counter()
    for i, pr in enumerate(pairings):
        hands = by.get((i, "hand"), {})
        matches = by.get((i, "match"), {})
        games = [g for d in hands.values() for g in d]
        match_games = [g for d in matches.values() for g in d]
        win, pts = duplicate_figures(games) if hands else (None, None)
        mwin, mpts = duplicate_figures(match_games) if matches else (None, None)
        all_games = games + match_games
        s = [sum(g.seconds[x] for g in all_games) for x in (0, 1)]
        mv = [sum(g.moves[x] for g in all_games) for x in (0, 1)]
        ch = [sum(g.choices[x] for g in all_games) for x in (0, 1)]
        cs = [sum(g.choice_seconds[x] for g in all_games) for x in (0, 1)]
        for x, name in ((0, pr.a), (1, pr.b)):
            secs[name] += s[x]
            choice_secs[name] += cs[x]
            moves[name] += mv[x]
            choices[name] += ch[x]
        summaries.append(
            PairingSummary(
                a=pr.a,
                b=pr.b,
                deals=len(hands),
                hands=len(games),
                win=win,
                points=pts,
                matches=sum(len(d) for d in matches.values()),
                match_win=mwin,
                match_points=mpts,
                terminations=dict(Counter(g.termination for g in games)),
                seconds_per_move=(s[0] / max(mv[0], 1), s[1] / max(mv[1], 1)),
                seconds_per_choice=(cs[0] / max(ch[0], 1), cs[1] / max(ch[1], 1)),
                moves=(mv[0], mv[1]),
            )
        )
        if games:
            bt.append((index[pr.a], index[pr.b], sum(g.score for g in games), len(games)))
    ratings = bradley_terry(list(agents), bt) if bt else {a: 1500.0 for a in agents}
    return Report(
        settings=dict(settings),
        agents=list(agents),
        pairings=summaries,
        ratings=ratings,
        seconds_per_move={a: secs[a] / max(moves[a], 1) for a in agents},
        seconds_per_choice={a: choice_secs[a] / max(choices[a], 1) for a in agents},
    )
