"""The arena: duplicate deals played by pairs of agents, spread over worker processes.

Duplicate deals
---------------
Deal ``k`` of a run is ``HandState.deal(rules, deal_seed(seed, k))``: the hands,
the boneyard order and the leader are fixed by its seed. For a pairing of agents
A and B the deal is replayed once for each *seat pattern* (which agent sits in
which seat), so every agent holds every hand of the deal in turn and the luck of
the deal cancels:

==========================  ===========================================================
game                        patterns (seat -> agent)
==========================  ===========================================================
2 players                   AB, BA
teams (4 players)           ABAB, BABA
n >= 3 players, no teams    every rotation of A B B ... and of B A A ...: 2n games
the same, ``field=True``    every rotation of A B B ... only: n games, A alone in
                            each seat once against a field of B's
==========================  ===========================================================

Matches to the target are duplicated the same way: one match seed per match,
replayed for each pattern (later deals of a match follow from its seed).

Every result is from A's side of the pairing. By default ``score`` is 1 when a
seat of A wins, 0 when a seat of B wins, 1/2 when nobody does (a void or redeal
tie); ``diff`` is the points A's seats scored minus the points B's seats scored.

With ``field=True`` (:class:`RunPlan`, ``python -m evaluate --field``) a pairing
asks "does A alone beat a field of B's": ``diff`` is A's points minus the mean of
the points of the field's seats (a hand: what each seat scored in it, a match:
the final totals), and ``score`` is the share of the field's seats that A
finished ahead of, ties counting half (a hand: by the points scored in it, its
winner ahead of a seat that scored as much, as when he goes out on hands that count
0; so 1 when A wins it, 1/2 when nobody does and (n - 2) / (2n - 2) when a seat of
the field does; a match: by final totals). Two agents of equal strength have an
expected ``diff`` of 0 and ``score`` of 1/2 at any seat count. With two seats or
two partnerships ``field`` changes nothing: the patterns and both figures are
the default's.

Agents that play only some rules (an exported policy, a trained bot level: their
``rules``) are checked against the run's rules before any worker starts
(:func:`check_agents`).

Records: with ``keep_records`` (``python -m evaluate --records``) each game keeps
the record of every hand it played (:func:`matador_env.engine.hand_record`: the rules,
the deal and every move, as text that :func:`matador_env.engine.parse_hand_record`
reads back and replays), and :func:`write_records` writes them to ``records.jsonl``.

Reproducibility: deal, match and agent seeds all derive from one printed master
seed by SHA-256 (:func:`derive`), and agent budgets are counts, not seconds, so
a run gives the same numbers on any machine and with any number of workers, given
the same packages: without numba the search plays out otherwise, and its name says
``fast=0``. An agent's random stream follows its seat and the seat pattern, so
swapping A and B (``--agents b a``) replays the same deals with other streams: the
figures differ within their intervals, not mirrored exactly.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import random
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING

from matador_env.bot import rules_refusal
from matador_env.engine import HandState, MatchState, Rules, hand_record
from matador_env.engine.state import SEED_RANGE
from matador_env.engine.tiles import shown_value
from matador_env.files import atomic_write_text
from matador_env.streams import progress_bar
from matador_env.values import as_seed, integer_check

from .stats import Estimate, paired

if TYPE_CHECKING:  # the agents are imported where they are built, not at import time
    from agents.base import Agent

__all__ = [
    "AgentRulesError",
    "GameResult",
    "Pairing",
    "derive",
    "deal_seed",
    "match_seed",
    "seat_patterns",
    "check_agent",
    "check_agents",
    "duplicate_figures",
    "duplicate_lead",
    "field_figures",
    "play_hand",
    "play_match",
    "run",
    "Work",
    "write_records",
]

_MAX_MATCH_HANDS = 10_000


def derive(*parts: object) -> int:
    """A 63-bit seed from the given parts (stable across runs, platforms and processes)."""
    text = "arena/" + "/".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def deal_seed(seed: int, k: int) -> int:
    """The seed of deal ``k`` of a run with master seed ``seed``."""
    return derive(seed, "hand", k)


def match_seed(seed: int, k: int) -> int:
    """The seed of match ``k`` of a run with master seed ``seed``."""
    return derive(seed, "match", k)


def seat_patterns(rules: Rules, field: bool = False) -> tuple[tuple[int, ...], ...]:
    """Which agent (0 = A, 1 = B) sits in each seat, for each replay of a deal;
    ``field``: only the patterns with A alone against B's (see the module's table)."""
    n = rules.players
    if rules.teams:
        return (tuple(s % 2 for s in range(n)), tuple(1 - s % 2 for s in range(n)))
    out: list[tuple[int, ...]] = []
    for alone in (0,) if field else (0, 1):
        base = [alone] + [1 - alone] * (n - 1)
        for r in range(n):
            p = tuple(base[(s - r) % n] for s in range(n))
            if p not in out:
                out.append(p)
    return tuple(out)


@dataclass
class GameResult:
    """One game (a hand or a match) of a pairing, from agent A's side."""

    pairing: int
    kind: str
    """"hand" or "match"."""
    deal: int
    """The deal (or match) number k."""
    pattern: int
    """Index into :func:`seat_patterns`."""
    score: float
    """1: a seat of A won; 0: a seat of B won; 0.5: nobody (tie) or a shared match win."""
    diff: float
    """Points scored by A's seats minus points scored by B's seats (hands: this hand;
    matches: final totals)."""
    hands: int = 1
    """Hands played (matches: every deal, redeals included)."""
    termination: str = ""
    seconds: tuple[float, float] = (0.0, 0.0)
    """Time spent in ``act`` by A's seats and by B's seats."""
    moves: tuple[int, int] = (0, 0)
    """Calls of ``act`` by A's seats and by B's seats."""
    choices: tuple[int, int] = (0, 0)
    """Calls of ``act`` with more than one legal move."""
    dealt: tuple[str, ...] = ()
    """With ``keep_deals``: every seat's dealt hand as text, seat by seat."""
    records: tuple[str, ...] = ()
    """With ``keep_records``: the record of each hand played (a match: every hand,
    redeals included, in order), as :func:`matador_env.engine.hand_record` writes it."""
    choice_seconds: tuple[float, float] = (0.0, 0.0)
    """The part of :attr:`seconds` spent on the moves counted in :attr:`choices`."""


def _side_slots(rules: Rules, pattern: Sequence[int]) -> list[set[int]]:
    """For each side (team or seat), the agent slots sitting there."""
    sides: list[set[int]] = [set() for _ in range(rules.sides)]
    for seat, slot in enumerate(pattern):
        sides[rules.side_of(seat)].add(slot)
    return sides


class _Clock:
    def __init__(self) -> None:
        self.seconds = [0.0, 0.0]
        self.moves = [0, 0]
        self.choices = [0, 0]
        self.choice_seconds = [0.0, 0.0]


def _act(agent, view, rng, slot: int, clock: _Clock):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    move = agent.act(view, rng)
    seconds = time.perf_counter() - start
    clock.seconds[slot] += seconds
    clock.moves[slot] += 1
    if len(view.legal_moves) > 1:
        clock.choices[slot] += 1
        clock.choice_seconds[slot] += seconds
    return move


def _check_game(rules: Rules, agents: Sequence, pattern: Sequence[int], rng_seed: int) -> None:  # type: ignore[type-arg]
    """Refuse a game the arena cannot play, before its first move: two agents, A and
    B, and a pattern naming one of them (0 or 1) for every seat, as
    :func:`seat_patterns` gives; an agent seed that is an integer."""
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be Rules, not {type(rules).__name__}")
    if len(agents) != 2:
        raise ValueError(f"agents: {len(agents)} given; allowed: two, A and B")
    if len(pattern) != rules.players:
        raise ValueError(
            f"pattern {tuple(pattern)!r} names {len(pattern)} seats; allowed: one slot "
            f"(0 for A, 1 for B) for each of the {rules.players} seats"
        )
    for seat, slot in enumerate(pattern):
        if isinstance(slot, bool) or not isinstance(slot, Integral) or slot not in (0, 1):
            raise ValueError(
                f"pattern {tuple(pattern)!r}: seat {seat} has {slot!r}; allowed: 0 (A) or 1 (B)"
            )
    _count("rng_seed", rng_seed, 0)


def play_hand(
    rules: Rules,
    seed: int,
    agents: Sequence,  # type: ignore[type-arg]
    pattern: Sequence[int],
    rng_seed: int,
    keep_deals: bool = False,
) -> tuple[HandState, _Clock]:
    """Deal ``seed`` and play it to the end; seat ``s`` is played by ``agents[pattern[s]]``."""
    _check_game(rules, agents, pattern, rng_seed)
    state = HandState.deal(rules, seed)
    rngs = [random.Random(derive(rng_seed, seat)) for seat in range(rules.players)]
    clock = _Clock()
    while state.outcome is None:
        seat = state.to_move
        slot = pattern[seat]
        move = _act(agents[slot], state.view(seat), rngs[seat], slot, clock)
        state = state.apply(move)
    return state, clock


def play_match(
    rules: Rules,
    seed: int,
    agents: Sequence,  # type: ignore[type-arg]
    pattern: Sequence[int],
    rng_seed: int,
    records: list[str] | None = None,
) -> tuple[MatchState, _Clock]:
    """Play a match from ``MatchState.new(rules, seed)`` to its end; each finished
    hand's record is appended to ``records`` when it is given."""
    _check_game(rules, agents, pattern, rng_seed)
    match = MatchState.new(rules, seed)
    rngs = [random.Random(derive(rng_seed, seat)) for seat in range(rules.players)]
    clock = _Clock()
    while not match.is_over:
        if match.hand_over:
            if records is not None:
                records.append(hand_record(match.hand))
            if match.deals >= _MAX_MATCH_HANDS:
                raise RuntimeError(f"match {seed} did not end within {_MAX_MATCH_HANDS} hands")
            match = match.next_hand()
            continue
        seat = match.to_move
        slot = pattern[seat]
        move = _act(agents[slot], match.view(seat), rngs[seat], slot, clock)
        match = match.apply(move)
    if records is not None:
        records.append(hand_record(match.hand))
    return match, clock


def field_figures(
    rules: Rules, pattern: Sequence[int], points: Sequence[float], winner: int | None = None
) -> tuple[float, float]:
    """``(score, diff)`` of A's side against the field's sides, from each side's points
    (the module's definition for ``field=True``); ``winner``, the side that won a hand,
    finishes ahead of a side with as many points (a domino on hands that count 0
    scores 0, and is still a win)."""
    sides = _side_slots(rules, pattern)
    rank = [(p, s == winner) for s, p in enumerate(points)]
    mine = [rank[s] for s, slots in enumerate(sides) if slots == {0}]
    theirs = [rank[s] for s, slots in enumerate(sides) if slots == {1}]
    if len(mine) != 1 or not theirs:
        raise ValueError(f"pattern {tuple(pattern)} does not put A alone against a field")
    a = mine[0]
    score = sum(1.0 if a > b else 0.5 if a == b else 0.0 for b in theirs) / len(theirs)
    return score, a[0] - sum(b[0] for b in theirs) / len(theirs)


def hand_result(
    rules: Rules,
    pairing: int,
    k: int,
    p: int,
    state: HandState,
    clock: _Clock,
    keep: bool,
    field: bool = False,
    keep_records: bool = False,
) -> GameResult:
    pattern = seat_patterns(rules, field)[p]
    out = state.outcome
    assert out is not None
    sides = _side_slots(rules, pattern)
    if field:
        score, diff = field_figures(rules, pattern, out.side_points(rules.sides), out.winning_side)
    elif out.winning_side is None:
        score, diff = 0.5, 0.0
    else:
        slot = next(iter(sides[out.winning_side]))
        score = 1.0 if slot == 0 else 0.0
        diff = float(out.points if slot == 0 else -out.points)
    dealt: tuple[str, ...] = ()
    if keep:
        dealt = tuple(" ".join(str(t) for t in h) for h in state.dealt().hands)
    return GameResult(
        pairing,
        "hand",
        k,
        p,
        score,
        diff,
        1,
        out.termination,
        (clock.seconds[0], clock.seconds[1]),
        (clock.moves[0], clock.moves[1]),
        (clock.choices[0], clock.choices[1]),
        dealt,
        (hand_record(state),) if keep_records else (),
        (clock.choice_seconds[0], clock.choice_seconds[1]),
    )


def match_result(
    rules: Rules,
    pairing: int,
    k: int,
    p: int,
    match: MatchState,
    clock: _Clock,
    field: bool = False,
    records: Sequence[str] = (),
) -> GameResult:
    pattern = seat_patterns(rules, field)[p]
    sides = _side_slots(rules, pattern)
    if field:
        score, diff = field_figures(rules, pattern, match.totals)
    else:
        winners = match.winners or ()
        won = {next(iter(sides[w])) for w in winners}
        score = 1.0 if won == {0} else 0.0 if won == {1} else 0.5
        diff = 0.0
        for side, total in enumerate(match.totals):
            diff += total if next(iter(sides[side])) == 0 else -total
    return GameResult(
        pairing,
        "match",
        k,
        p,
        score,
        diff,
        match.deals,
        "match",
        (clock.seconds[0], clock.seconds[1]),
        (clock.moves[0], clock.moves[1]),
        (clock.choices[0], clock.choices[1]),
        records=tuple(records),
        choice_seconds=(clock.choice_seconds[0], clock.choice_seconds[1]),
    )


@dataclass(frozen=True)
class Pairing:
    """Agent A (``a``) against agent B (``b``), by spec."""

    a: str
    b: str


@dataclass(frozen=True)
class Work:
    """One unit of work for a process: some deals (or matches) of one pairing."""

    rules: dict  # type: ignore[type-arg]
    pairing: int
    a: str
    b: str
    kind: str
    seed: int
    deals: tuple[int, ...]
    keep_deals: bool = False
    field: bool = False
    """Only the patterns with A alone against a field of B's (:func:`seat_patterns`)."""
    keep_records: bool = False
    """Keep every hand's record (:attr:`GameResult.records`)."""


def _by_deal(results: Iterable[GameResult]) -> dict[int, list[GameResult]]:
    per_deal: dict[int, list[GameResult]] = {}
    for r in results:
        per_deal.setdefault(r.deal, []).append(r)
    return per_deal


def duplicate_figures(results: Iterable[GameResult]) -> tuple[Estimate, Estimate]:
    """A's win rate and points differential in ``results`` (of one pairing and kind),
    with the report's intervals (:func:`evaluate.stats.paired`): the replays of a deal
    are averaged first, so the interval is over deals (``n``: the deals)."""
    per_deal = _by_deal(results)
    win = paired([[g.score for g in d] for d in per_deal.values()], rate=True)
    points = paired([[g.diff for g in d] for d in per_deal.values()])
    return win, points


def duplicate_lead(first: Iterable[GameResult], second: Iterable[GameResult]) -> Estimate:
    """How many more points per hand the A of ``first`` makes than the A of ``second``,
    two pairings played on the same deals (the same master seed): per deal the
    difference of the two A's mean points differentials, the interval over deals
    (:func:`evaluate.stats.paired`). Only deals both played count."""
    a, b = _by_deal(first), _by_deal(second)

    def mean_diff(games: list[GameResult]) -> float:
        return sum(g.diff for g in games) / len(games)

    return paired([[mean_diff(a[d]) - mean_diff(b[d])] for d in b if d in a])


class AgentRulesError(ValueError):
    """An agent that cannot play the run's rules (a policy or bot made for others)."""


def check_agents(rules: Rules, specs: Sequence[str]) -> None:
    """Build each agent once and refuse, with :class:`AgentRulesError`, one that plays
    other rules only; a bad spec raises the agents' own error (a ValueError)."""
    from agents import make_agent

    for spec in dict.fromkeys(specs):
        check_agent(rules, spec, make_agent(spec))


def check_agent(rules: Rules, spec: str, agent: Agent) -> None:
    """:class:`AgentRulesError` when the agent built from ``spec`` cannot play ``rules``
    (:func:`matador_env.bot.rules_refusal` says why)."""
    refusal = rules_refusal(agent, rules)
    if refusal is not None:
        raise AgentRulesError(f"agent {spec!r} {refusal}")


# Agents built in a worker, by spec: agents keep no state between moves, so one
# instance serves every game of a run. Only of a run: a spec names a file
# (policy:PATH) whose network may be replaced between runs (training exports each
# evaluation's policy to one folder), so a run in this process starts with none,
# as a pool's fresh workers do.
_AGENTS: dict[str, object] = {}


def _agent(spec: str):  # type: ignore[no-untyped-def]
    agent = _AGENTS.get(spec)
    if agent is None:
        from agents import make_agent

        agent = _AGENTS[spec] = make_agent(spec)
    return agent


def run_work(work: Work) -> list[GameResult]:
    """Play one unit of work (the function each worker process runs)."""
    rules = Rules.from_dict(work.rules)
    agents = (_agent(work.a), _agent(work.b))
    out = []
    for k in work.deals:
        for p, pattern in enumerate(seat_patterns(rules, work.field)):
            rng_seed = derive(work.seed, work.kind, k, p, "agents")
            if work.kind == "hand":
                state, clock = play_hand(
                    rules, deal_seed(work.seed, k), agents, pattern, rng_seed, work.keep_deals
                )
                out.append(
                    hand_result(
                        rules,
                        work.pairing,
                        k,
                        p,
                        state,
                        clock,
                        work.keep_deals,
                        work.field,
                        work.keep_records,
                    )
                )
            else:
                records: list[str] | None = [] if work.keep_records else None
                match, clock = play_match(
                    rules, match_seed(work.seed, k), agents, pattern, rng_seed, records
                )
                out.append(
                    match_result(rules, work.pairing, k, p, match, clock, work.field, records or ())
                )
    return out


_count = integer_check(ValueError, type_error=TypeError)


@dataclass
class RunPlan:
    """Everything a run plays: pairings, deals and matches per pairing."""

    rules: Rules
    pairings: list[Pairing]
    deals: int
    matches: int
    seed: int
    chunk: int = 0
    keep_deals: bool = False
    field: bool = False
    """Only the patterns with A alone against a field of B's (:func:`seat_patterns`)."""
    keep_records: bool = False
    """Keep every hand's record (:attr:`GameResult.records`)."""
    units: list[Work] = dataclass_field(default_factory=list)

    def __post_init__(self) -> None:
        # Checked when made, before any agent or process starts: a negative count or
        # chunk played nothing without a word, and other types failed in the workers.
        if not isinstance(self.rules, Rules):
            raise TypeError(
                f"RunPlan: rules={shown_value(self.rules)} is not allowed; allowed: a "
                "matador_env.engine.Rules"
            )
        if not isinstance(self.pairings, list) or not all(
            isinstance(p, Pairing) for p in self.pairings
        ):
            raise TypeError(
                f"RunPlan: pairings={shown_value(self.pairings)} is not allowed; allowed: a "
                "list of Pairing(a, b)"
            )
        for name in ("deals", "matches", "chunk"):
            setattr(self, name, _count(f"RunPlan: {name}", getattr(self, name), 0))
        if self.seed is None:
            raise TypeError(f"RunPlan: seed=None is not allowed; allowed: {SEED_RANGE}")
        self.seed = as_seed(self.seed)  # type: ignore[assignment]  # None refused above

    def build(self) -> list[Work]:
        rules = self.rules.to_dict()
        units: list[Work] = []
        for kind, count in (("hand", self.deals), ("match", self.matches)):
            if count <= 0:
                continue
            chunk = self.chunk or max(1, min(50 if kind == "hand" else 4, count // 8 or 1))
            for i, pr in enumerate(self.pairings):
                for lo in range(0, count, chunk):
                    deals = tuple(range(lo, min(count, lo + chunk)))
                    units.append(
                        Work(
                            rules,
                            i,
                            pr.a,
                            pr.b,
                            kind,
                            self.seed,
                            deals,
                            self.keep_deals,
                            self.field,
                            self.keep_records,
                        )
                    )
        # Matches are the longest units: start them first so that the last units are short.
        units.sort(key=lambda u: u.kind != "match")
        self.units = units
        return units

    def games(self) -> int:
        per = len(seat_patterns(self.rules, self.field))
        return (self.deals + self.matches) * per * len(self.pairings)


def run(
    plan: RunPlan,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> list[GameResult]:
    """Play every unit of ``plan``; results sorted by (pairing, kind, deal, pattern).

    Raises :class:`AgentRulesError` before any game when an agent cannot play the
    plan's rules.
    """
    workers = _count("run: workers", workers, 1)
    check_agents(plan.rules, [spec for p in plan.pairings for spec in (p.a, p.b)])
    units = plan.build()
    results: list[GameResult] = []
    for batch in _results(units, workers):
        results.extend(batch)
        if progress is not None:
            progress(len(batch))
    results.sort(key=lambda r: (r.pairing, r.kind, r.deal, r.pattern))
    return results


def run_with_bar(
    plan: RunPlan, workers: int, desc: str, show: bool = True, unit: str = "game"
) -> list[GameResult]:
    """:func:`run` with a progress bar of its games on stderr (``show`` False: none),
    for the commands that play a plan as one step of longer work."""
    if not show:
        return run(plan, workers)
    bar = progress_bar(total=plan.games(), unit=unit, desc=desc)
    try:
        return run(plan, workers, bar.update)
    finally:
        bar.close()


def _results(units: list[Work], workers: int) -> Iterator[list[GameResult]]:
    if workers <= 1 or len(units) <= 1:
        _AGENTS.clear()
        for u in units:
            yield run_work(u)
        return
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(processes=min(workers, len(units)), initializer=_leave_interrupts) as pool:
        # An interrupt in this process leaves the with block, which terminates them.
        yield from pool.imap_unordered(run_work, units)


def _leave_interrupts() -> None:
    """A worker's start: Ctrl-C reaches the whole process group, and the caller, not
    each worker with a traceback of its own, answers it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def write_records(
    path: Path,
    rules: Rules,
    pairings: Sequence[Pairing],
    results: Iterable[GameResult],
    field: bool = False,
) -> Path:
    """``records.jsonl`` at ``path``, atomically: one JSON object per game, in the
    order of ``results``: ``pairing``, ``a`` and ``b`` (the pairing's specs), ``kind``
    (``"hand"`` or ``"match"``), ``deal``, ``pattern``, ``seats`` (the spec playing
    each seat), ``score`` and ``diff`` (A's, as in the report), and ``records`` (the
    text of each hand played, for :func:`matador_env.engine.parse_hand_record`);
    ``field`` as the run's."""
    lines = []
    for r in results:
        pairing = pairings[r.pairing]
        specs = (pairing.a, pairing.b)
        pattern = seat_patterns(rules, field)[r.pattern]
        game = {
            "pairing": r.pairing,
            "a": pairing.a,
            "b": pairing.b,
            "kind": r.kind,
            "deal": r.deal,
            "pattern": r.pattern,
            "seats": [specs[slot] for slot in pattern],
            "score": r.score,
            "diff": r.diff,
            "records": list(r.records),
        }
        lines.append(json.dumps(game) + "\n")
    return atomic_write_text(path, "".join(lines))
