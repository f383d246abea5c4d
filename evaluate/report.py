"""Summaries of an arena run: per pairing, per agent, ratings; as a table, JSON, Markdown, PNG."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .arena import GameResult, Pairing
from .stats import Estimate, bradley_terry, paired

__all__ = ["PairingSummary", "Report", "summarize"]


@dataclass
class PairingSummary:
    """Everything measured for one pairing, from agent A's side."""

    a: str
    b: str
    deals: int
    hands: int
    win: Estimate | None
    """Hand win rate of A (ties count half)."""
    points: Estimate | None
    """Points per hand, A minus B."""
    matches: int
    match_win: Estimate | None
    """Match win rate of A to the target (shared wins count half)."""
    match_points: Estimate | None
    """Final match totals, A minus B."""
    terminations: dict[str, int]
    seconds_per_move: tuple[float, float]
    seconds_per_choice: tuple[float, float]
    """Time in ``act`` per move, and per move with more than one legal option (A, B)."""
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
        }

    # -- text -------------------------------------------------------------------------

    def table(self) -> str:
        """The terminal table: one line per pairing, then the ratings."""
        lines = []
        head = (
            f"{'A':<22}{'B':<22}{'hands':>7}  {'A hand win % [95% CI]':<23}"
            f"{'A-B pts/hand [95% CI]':<25}{'matches':>8}  {'A match win % [95% CI]':<23}"
        )
        lines.append(head)
        lines.append("-" * len(head))
        for p in self.pairings:
            lines.append(
                f"{_short(p.a, 21):<22}{_short(p.b, 21):<22}{p.hands:>7}  "
                f"{_pct(p.win):<23}{_pts(p.points):<25}{p.matches:>8}  {_pct(p.match_win):<23}"
            )
        lines.append("")
        lines.append(
            f"{'rating (Bradley-Terry, Elo scale)':<36}{'Elo':>7}{'ms/move':>10}{'ms/choice':>11}"
        )
        for name, r in sorted(self.ratings.items(), key=lambda kv: -kv[1]):
            lines.append(
                f"{_short(name, 35):<36}{r:>7.0f}{1000 * self.seconds_per_move.get(name, 0):>10.2f}"
                f"{1000 * self.seconds_per_choice.get(name, 0):>11.2f}"
            )
        return "\n".join(lines)

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
            f"- deals per pairing: {s['deals']} (each replayed for {s['patterns']} seat "
            f"patterns), matches per pairing: {s['matches']}",
            f"- master seed: {s['seed']} (reproduce: `{s['command']}`)",
            "",
            "## Pairings (from A's side; 95% confidence intervals over duplicate deals)",
            "",
            "| A | B | hands | A hand win % | A-B points/hand | matches | A match win % |",
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

    def write(self, out: Path, plot: bool = True) -> list[Path]:
        out.mkdir(parents=True, exist_ok=True)
        written = [out / "report.json", out / "report.md"]
        written[0].write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        written[1].write_text(self.markdown())
        if plot:
            written.append(self.plot(out / "report.png"))
        return written

    def plot(self, path: Path) -> Path:
        """Ratings (bars) and pairwise points per hand (matrix), as one PNG."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = sorted(self.agents, key=lambda a: -self.ratings.get(a, 0))
        k = len(names)
        fig, (ax1, ax2) = plt.subplots(
            1, 2, figsize=(6 + 1.4 * k, 3 + 0.6 * k), gridspec_kw={"width_ratios": [1, 1.2]}
        )
        ax1.barh(range(k), [self.ratings[a] - 1500 for a in names], left=1500, color="tab:blue")
        ax1.set_yticks(range(k), [_short(a, 24) for a in names])
        ax1.invert_yaxis()
        ax1.axvline(1500, color="grey", lw=0.8)
        ax1.set_xlabel("rating (Bradley-Terry, Elo scale)")
        ax1.set_title("League rating")
        idx = {a: i for i, a in enumerate(names)}
        grid = [[float("nan")] * k for _ in range(k)]
        for p in self.pairings:
            if p.points is None:
                continue
            grid[idx[p.a]][idx[p.b]] = p.points.mean
            grid[idx[p.b]][idx[p.a]] = -p.points.mean
        finite = [abs(v) for row in grid for v in row if v == v]
        lim = max(finite) if finite else 1.0
        im = ax2.imshow(grid, cmap="RdBu", vmin=-lim, vmax=lim)
        for i in range(k):
            for j in range(k):
                if grid[i][j] == grid[i][j]:
                    v = grid[i][j]
                    colour = "white" if abs(v) > 0.6 * lim else "black"
                    ax2.text(j, i, f"{v:+.1f}", ha="center", va="center", fontsize=8, color=colour)
        ax2.set_xticks(range(k), [_short(a, 12) for a in names], rotation=30, ha="right")
        ax2.set_yticks(range(k), [_short(a, 16) for a in names])
        ax2.set_title("points per hand, row minus column")
        fig.colorbar(im, ax=ax2, fraction=0.046)
        fig.suptitle(
            f"preset {self.settings.get('preset', '?')}, seed {self.settings.get('seed', '?')}"
        )
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return path


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "~"


def _pct(e: Estimate | None) -> str:
    if e is None:
        return "-"
    return f"{100 * e.mean:5.1f} [{100 * e.lo:4.1f}, {100 * e.hi:4.1f}]"


def _pts(e: Estimate | None) -> str:
    if e is None:
        return "-"
    return f"{e.mean:+6.2f} [{e.lo:+.2f}, {e.hi:+.2f}]"


def summarize(
    results: Sequence[GameResult],
    pairings: Sequence[Pairing],
    agents: Sequence[str],
    settings: dict[str, Any],
) -> Report:
    """Reduce game results to a :class:`Report` (duplicate intervals, ratings, timing)."""
    by: dict[tuple[int, str], dict[int, list[GameResult]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        by[(r.pairing, r.kind)][r.deal].append(r)
    summaries = []
    bt: list[tuple[int, int, float, int]] = []
    index = {a: i for i, a in enumerate(agents)}
    secs: Counter[str] = Counter()
    moves: Counter[str] = Counter()
    choices: Counter[str] = Counter()
    for i, pr in enumerate(pairings):
        hands = by.get((i, "hand"), {})
        matches = by.get((i, "match"), {})
        games = [g for d in hands.values() for g in d]
        all_games = games + [g for d in matches.values() for g in d]
        win = paired([[g.score for g in d] for d in hands.values()], rate=True) if hands else None
        pts = paired([[g.diff for g in d] for d in hands.values()]) if hands else None
        mwin = (
            paired([[g.score for g in d] for d in matches.values()], rate=True) if matches else None
        )
        mpts = paired([[g.diff for g in d] for d in matches.values()]) if matches else None
        s = [sum(g.seconds[x] for g in all_games) for x in (0, 1)]
        mv = [sum(g.moves[x] for g in all_games) for x in (0, 1)]
        ch = [sum(g.choices[x] for g in all_games) for x in (0, 1)]
        for x, name in ((0, pr.a), (1, pr.b)):
            secs[name] += s[x]
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
                seconds_per_choice=(s[0] / max(ch[0], 1), s[1] / max(ch[1], 1)),
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
        seconds_per_choice={a: secs[a] / max(choices[a], 1) for a in agents},
    )
