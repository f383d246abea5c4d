"""The reliability suite: random play over random rule sets, and mutated inputs to every
public entry point, each input classified; prints what it tried and what it found.

::

    python -m benchmarks.fuzz                      # 60 s over every campaign
    python -m benchmarks.fuzz --seconds 300 --seed 7
    python -m benchmarks.fuzz --count 500 --campaign apply protocol

Campaigns (``--campaign``, all by default):

===========  ==========================================================================
``play``     random rule sets, one in four built on a preset (the refused ones count
             as refused), hands of random legal moves: every legal move applies,
             every tile of the set is in one place alone (a hand, the boneyard or the
             table) after every action, the hand ends within ``max_history(rules)``
             actions, the counts are the pips left, the winner, termination and points
             are what docs/rules.md gives (worked out here, not by the engine), the
             record replays; one trial in eight plays a match out (its target at most
             50): its totals are the sum of its hands' side points
``rules``    ``Rules(...)``, ``Rules.preset``, ``from_dict``, ``from_text`` on mutated
             keywords, types and text (documented: ``RulesError``)
``apply``    ``HandState.apply``/``MatchState.apply`` on mutated moves and non-moves
             (documented: ``IllegalMoveError``, ``MoveParseError``); a refused move
             must leave the state as it was, an accepted one must be legal
``view``     ``HandState.view``, ``MatchState.view``, ``hand`` on mutated seats and
             scores (documented: ``ValueError``)
``record``   ``parse_hand_record(...).replay()`` on mutated hand records (documented:
             ``MoveParseError``, ``RulesError``, ``IllegalMoveError``, ``ValueError``)
``public``   ``public_view`` on mutated hands, histories and seats (documented:
             ``HistoryError``, ``RulesError``)
``protocol`` ``view_from_json`` and ``move_from_json`` on mutated JSON (documented:
             ``ProtocolError``); an accepted view must read back the same and give
             every field it was sent with (``to_move``, ``hand_sizes``...) as sent; the
             engine's own view must state the hand as it is and read back as itself
``policy``   ``load_policy`` on mutated ``policy.onnx`` and ``policy.json`` files, and
             a legal move from what loads, in a hand of its rules (documented:
             ``PolicyError``)
``bot``      ``matador_env.bot`` ``move_json`` on mutated views (documented:
             ``ProtocolError``, ``BotError``); an accepted reply must be a legal move,
             and a bot of one configuration must refuse other presets' views
``perft``    ``matador_env.perft.count_rows`` and ``stored_counts`` on cases of the
             shipped perft file (cut to their first three depths, so that a mutated
             position's walk stays small) with parts replaced, edited or removed
             (documented: ``ValueError``); an intact case must count as stored
``state``    ``BatchEngine.set_state`` and ``VectorEnv.set_state`` (the batch engine's
             and the vector env's saved states, as a checkpoint holds them) on states
             of random rules with numbers, tiles and texts edited (documented:
             ``BatchError``); a state as saved must be taken, a refused one must
             change nothing, a taken one must read back as given, and every state
             that legal play reaches from it must be one a new engine takes (the
             kernels index by these numbers unchecked: a count no game reaches
             could write past the arrays)
``live``     ``train.selfplay.check_live_state`` and ``BatchOpponentPool.restore_live_state``
             (what a training checkpoint saves of each environment and of a
             ``--vector-envs`` run's opponents) on live states of the shipped bots'
             configurations (their bots as the pool's snapshots) and of random rules,
             some saved at an episode's end, with parts edited, renamed or removed
             (documented: ``ValueError``); a state as saved must be taken, a refused
             pool state must change nothing, a taken one must read back as given, and
             legal play from it must never raise or find a running episode without a
             legal action
``env``      ``step`` and ``reset`` of ``matador_v0.raw_env`` and ``env``,
             ``MatadorSingleEnv``, ``VectorEnv``, ``gymnasium.make_vec``'s env and
             ``sb3_vec_env``'s ``VecEnv`` under random rules, with play under way: a
             legal action in each integer form, an illegal one, one out of range or no
             integer, mutated seeds and reset options, and for the SB3 view the
             ``indices`` of ``get_attr`` and kin and a ``step_wait`` with no actions
             (documented: ``TypeError``, ``ValueError``, ``IllegalMoveError``,
             ``BatchError``, ``IndexError``, ``RuntimeError``, each where the docs give
             it, and no other); a refused input must change nothing, an illegal action
             that ``env()`` or a single or vector env takes must end the episode as
             documented, a seed taken must deal what its plain int deals; the single
             env sometimes plays beside an agent or callable opponent, and vector envs
             (``make_vec``'s too) beside an opponent (learner mode) or an
             ``episode_starts``, that answers badly or fails now and then (a bad answer
             refused, a failure passed on, nothing changed either way; the single
             env's same step with the opponent fixed goes on as a copy from before
             it); legal play after never raises
``http``     ``benchmarks.fuzz_http.run_http_campaign`` (the HTTP server's
             ``/move``, ``/health`` and ``/bots`` under mutated views and requests,
             stalled and killed clients), when that module is present
===========  ==========================================================================

Every input is *accepted*, *refused* with a documented error, or a *finding*: an
undocumented exception, a broken invariant, a documented error for an input that
is valid (a legal move, an intact record or history, an unmutated view), which
the entry point must accept (a check that refused everything would otherwise pass),
or an input that took over ``SLOW_INPUT_SECONDS`` (one still running after
``HUNG_INPUT_SECONDS`` is stopped there, on the main thread on Unix).
The table gives the counts and the first findings of each campaign with the trial
that reproduces them (``--seed S --campaign C --trial N``). Every campaign (but the
HTTP one, whose server has a process of its own) runs in a process of its own, so
a trial that kills it (a crash in compiled code) is a finding and the other
campaigns still run. The exit status is 1 when anything was found.

The budget is ``--seconds`` (the total, shared evenly by the campaigns; 60 by
default) or ``--count`` trials per campaign instead (then ``http`` runs 5 s), not
both. Every campaign tries at least one input, however short its share of the time.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import random
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from matador_env.bot import BotError, load_bot
from matador_env.engine import (
    PRESETS,
    HandState,
    HistoryError,
    IllegalMoveError,
    MatchState,
    Move,
    MoveParseError,
    Rules,
    RulesError,
    SeatView,
    Tile,
    hand_record,
    parse_hand_record,
    public_view,
    set_tiles,
)
from matador_env.engine.rules import CHOICES
from matador_env.engine.tiles import is_json_int
from matador_env.flags import int_at_least, positive_int, positive_number, seed_arg
from matador_env.perft import count_rows, read_perft_file, stored_counts
from matador_env.policy import BOTS_DIR, POLICY_FILE, SIDECAR_FILE, PolicyError, load_policy
from matador_env.protocol import (
    ProtocolError,
    max_history,
    move_from_json,
    move_to_json,
    rules_from_json,
    view_from_json,
    view_to_json,
)
from matador_env.streams import progress_bar, run_main

# -- outcomes of one trial -------------------------------------------------------------------


class Finding(Exception):
    """A broken invariant (raised inside a trial, reported with it)."""


@dataclass
class Tally:
    """The counts of one campaign and its first findings."""

    tried: int = 0
    accepted: int = 0
    refused: int = 0
    findings: int = 0
    examples: list[str] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    """Refusals by error type: which documented errors the campaign met."""

    def add(self, other: Tally) -> None:
        self.tried += other.tried
        self.accepted += other.accepted
        self.refused += other.refused
        self.findings += other.findings
        self.examples += other.examples
        for k, v in other.errors.items():
            self.errors[k] = self.errors.get(k, 0) + v


SLOW_INPUT_SECONDS = 10.0
"""Longest one input may take (a trial takes milliseconds): past it the input is a
finding, such as text that an entry point reads in quadratic time."""


HUNG_INPUT_SECONDS = 120.0
"""Past this one input is stopped and is a finding (an endless loop would otherwise end
the run with no table and no trial to reproduce it). Only where a timer can interrupt
the input: on the main thread where SIGALRM exists, with no other timer running."""


class _Hung(BaseException):
    """Raised into an input past :data:`HUNG_INPUT_SECONDS`; a BaseException, so that the
    code under test's ``except Exception`` does not take it for its own error."""


def _stopped_if_hung(call: Callable[[], object]) -> None:
    """``call()``, interrupted by :class:`_Hung` past :data:`HUNG_INPUT_SECONDS` where
    that is possible."""
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
        or signal.getitimer(signal.ITIMER_REAL)[0] > 0
    ):
        call()
        return

    def stop(signum: int, frame: object) -> None:
        raise _Hung

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, HUNG_INPUT_SECONDS)
    try:
        call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def classify(
    tally: Tally,
    call: Callable[[], object],
    documented: tuple[type[BaseException], ...],
    label: str,
    keep: int = 5,
    valid: bool = False,
) -> str:
    """Run one input and count it: ``"accepted"``, ``"refused"`` (a documented error)
    or ``"finding"`` (any other exception, a :class:`Finding` the call raised, or an
    input that took over :data:`SLOW_INPUT_SECONDS`).

    ``valid``: the input is one the entry point must accept, so a documented error
    is a finding too (a refusal is only documented for a bad input). An input still
    running after :data:`HUNG_INPUT_SECONDS` is stopped, a finding."""
    tally.tried += 1
    start = time.monotonic()
    try:
        _stopped_if_hung(call)
    except _Hung:
        verdict, text = "finding", f"hung: stopped after {HUNG_INPUT_SECONDS:g} s"
    except Finding as exc:
        verdict, text = "finding", f"invariant: {exc}"
    except documented as exc:
        tally.refused += 1
        name = type(exc).__name__
        tally.errors[name] = tally.errors.get(name, 0) + 1
        if not str(exc):
            verdict, text = "finding", f"{name} without a message"
        elif valid:
            verdict, text = "finding", f"a valid input refused: {name}: {exc}"
        else:
            verdict, text = "refused", ""
    except Exception as exc:  # the point of the suite: anything undocumented is found
        verdict, text = "finding", f"{type(exc).__name__}: {exc}"
    else:
        tally.accepted += 1
        verdict, text = "accepted", ""
    took = time.monotonic() - start
    if verdict != "finding" and took > SLOW_INPUT_SECONDS:
        verdict, text = (
            "finding",
            f"slow: {verdict} after {took:.1f} s, over {SLOW_INPUT_SECONDS:g} s",
        )
    if verdict != "finding":
        return verdict
    tally.findings += 1
    if len(tally.examples) < keep:
        tally.examples.append(f"{label}: {text[:300]}")
    return verdict


# -- random inputs ---------------------------------------------------------------------------

_WORDS = [
    "",
    " ",
    "standard",
    "draw",
    "pass",
    "6-6",
    "2-5@0>5",
    "3-4@1x",
    "2-5@0^",
    "x",
    "-1",
    "1e9",
    "True",
    "null",
    "\x00",
    "é",
    "by_players",
    "all",
]


def random_json(rng: random.Random, depth: int = 0) -> Any:
    """Any JSON value, small, with the awkward ones (booleans, huge and negative
    numbers, empty and odd strings, nesting) over-represented."""
    k = rng.randrange(10 if depth < 3 else 7)
    if k == 0:
        return None
    if k == 1:
        return rng.random() < 0.5
    if k == 2:
        return rng.choice([0, 1, -1, 2, 3, 7, 99, 2**31, -(2**63), 10**30])
    if k == 3:
        return rng.choice([0.0, 1.0, 0.5, -2.5, 1e308, -0.0])
    if k in (4, 5, 6):
        word = rng.choice(_WORDS)
        if rng.random() < 0.05:
            word = word * rng.choice([100, 10_000])
        return word
    if k in (7, 8):
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {
        rng.choice(_WORDS + ["seat", "move", "players"]): random_json(rng, depth + 1)
        for _ in range(rng.randrange(3))
    }


def random_value(rng: random.Random) -> Any:
    """Any Python value a caller might pass by mistake: JSON values and a few others."""
    k = rng.randrange(8)
    if k == 0:
        return rng.choice([b"draw", b"", bytearray(b"6-6")])
    if k == 1:
        return rng.choice([float("nan"), float("inf"), 2.0, 1.5])
    if k == 2:
        return rng.choice([(), (1, 2), {1, 2}, object(), Tile(1, 1), Move("draw"), range(3)])
    return random_json(rng)


def _is_pair(entry: Any) -> bool:
    """Whether a history entry, perhaps mutated already, is a (seat, move) tuple: an
    earlier mutation may have put any value there, an empty tuple included."""
    return isinstance(entry, tuple) and len(entry) == 2


def mutate_text(rng: random.Random, text: str) -> str:
    """One small edit: a character changed, inserted or dropped, a cut, a repeat."""
    if not text:
        return rng.choice(_WORDS)
    i = rng.randrange(len(text))
    k = rng.randrange(6)
    alphabet = "0123456789-@>x^ _*/bdrawps\n:="
    if k == 0:
        return text[:i] + rng.choice(alphabet) + text[i + 1 :]
    if k == 1:
        return text[:i] + rng.choice(alphabet) + text[i:]
    if k == 2:
        return text[:i] + text[i + 1 :]
    if k == 3:
        return text[:i]
    if k == 4:
        return text + text[i:]
    return text.upper()


def random_rules_fields(rng: random.Random) -> dict[str, Any]:
    """Keywords for ``Rules``: any mix of fields and values (some refused together).

    One in four starts from a preset's fields: some settings are allowed only
    together (``spinner="lead_double_cross"`` with ``lead_tile="double_not_blank"``,
    ``teams`` with four players), and drawn one field at a time they would almost
    never meet in a short campaign."""
    fields: dict[str, Any] = {}
    if rng.random() < 0.25:
        fields = Rules.preset(rng.choice(sorted(PRESETS))).to_dict()
        if rng.random() < 0.3:
            fields.update(players=4, teams=True)  # e.g. pagat's partnerships
    if rng.random() < 0.8:
        fields["set_max"] = rng.choice([3, 4, 5, 6, 6, 6, 7, 9, 9, 12, 15])
    if rng.random() < 0.6:
        fields["players"] = rng.choice([2, 2, 3, 4, 4, 5, 6, 8])
    if rng.random() < 0.5:
        fields["hand_size"] = rng.choice(["by_players", "all", 1, 2, 5, 7, 9, 12])
    for name in ("teams", "matador_as_regular", "matador_only_when_stuck"):
        if rng.random() < 0.3:
            fields[name] = rng.random() < 0.5
    if rng.random() < 0.3:
        fields["boneyard_reserve"] = rng.randrange(6)
    if rng.random() < 0.5:
        fields["target_score"] = rng.choice([1, 20, 50, 100])
    for name, choices in CHOICES.items():
        if rng.random() < 0.4:
            fields[name] = rng.choice(choices)
    return fields


def random_rules(rng: random.Random, largest_set: int = 9) -> Rules:
    """Random allowed rules (:func:`random_rules_fields`, drawn again until ``Rules``
    takes them) of a set up to ``largest_set``: larger sets play the same code, slower."""
    while True:
        try:
            rules = Rules(**random_rules_fields(rng))
        except RulesError:
            continue
        if rules.set_max <= largest_set:
            return rules


def random_state(rng: random.Random) -> HandState:
    """A hand of some allowed rules, advanced by a random number of legal moves."""
    state = HandState.deal(random_rules(rng), rng.randrange(1 << 32))
    for _ in range(rng.randrange(40)):
        moves = state.legal_moves()
        if not moves or state.is_over:
            break
        candidate = state.apply(rng.choice(moves))
        if candidate.is_over and rng.random() < 0.8:
            break
        state = candidate
    return state


# -- campaigns -------------------------------------------------------------------------------


BLOCKED_POINTS: dict[str, Callable[[int, int], int]] = {
    "others_minus_own": lambda low, others: others - low,
    "others": lambda low, others: others,
    "others_plus_own": lambda low, others: others + low,
}
"""What the side with the lowest count scores in a blocked hand, by
``Rules.blocked_scoring`` (docs/rules.md), from its count and the others' together:
written out here, since the engine's own ``blocked_points`` cannot check itself."""


def _check_tiles(state: HandState) -> None:
    """Every tile of the set is in exactly one place: a hand, the boneyard or the table."""
    places = [*(t for hand in state.hands for t in hand), *state.boneyard, *state.layout]
    if sorted(places) != sorted(set_tiles(state.rules.set_max)):
        raise Finding(
            f"after {len(state.history)} actions the hands, boneyard and table hold "
            f"{len(places)} tiles ({len(set(places))} different), the set "
            f"{state.rules.tile_count}: {state!r}"
        )


def _check_outcome(state: HandState) -> None:
    """The winner, termination, counts and points of a finished hand, as docs/rules.md
    gives them."""
    outcome = state.outcome
    if outcome is None:
        raise Finding("the hand has no outcome")
    rules = state.rules
    counts = tuple(sum(t.pips for t in hand) for hand in state.hands)
    if outcome.counts != counts:
        raise Finding(f"counts {outcome.counts} are not the pips left {counts}")
    side_counts = [0] * rules.sides
    for seat, c in enumerate(counts):
        side_counts[rules.side_of(seat)] += c
    t = outcome.termination
    low = min(side_counts)
    if t == "domino":
        if outcome.winner is None or state.hands[outcome.winner]:
            raise Finding(f"domino won by seat {outcome.winner}, who holds tiles")
        expected = sum(c for s, c in enumerate(side_counts) if s != rules.side_of(outcome.winner))
    elif t in ("blocked", "void_tie", "redeal_tie"):
        lowest = [side for side, c in enumerate(side_counts) if c == low]
        tie = "void_tie" if rules.tie == "void" else "redeal_tie"
        if t != ("blocked" if len(lowest) == 1 else tie):
            raise Finding(
                f"a blocked hand with side counts {side_counts} ended {t} (tie={rules.tie})"
            )
        expected = 0  # a tie scores nothing
        if t == "blocked":
            if outcome.winner is None or rules.side_of(outcome.winner) != lowest[0]:
                raise Finding(
                    f"blocked with side counts {side_counts}, won by seat {outcome.winner}"
                )
            expected = BLOCKED_POINTS[rules.blocked_scoring](low, sum(side_counts) - low)
    else:
        expected = 0
    if outcome.points != expected:
        raise Finding(f"{t} hand scored {outcome.points}, the rules give {expected}")


def trial_play(rng: random.Random, tally: Tally, label: str) -> None:
    fields = random_rules_fields(rng)

    def play() -> None:
        rules = Rules(**fields)  # the only refusal documented here
        try:
            _play_hand(rules, rng)
        except RulesError as exc:  # of rules that were accepted: the engine's own error
            raise Finding(f"RulesError in play: {exc} ({rules.to_text()})") from None

    classify(tally, play, (RulesError,), label)


def _play_hand(rules: Rules, rng: random.Random) -> None:
    state = HandState.deal(rules, rng.randrange(1 << 32))
    limit = max_history(rules)
    for _ in range(limit):
        _check_tiles(state)
        moves = state.legal_moves()
        if not moves:
            raise Finding(f"no legal move in a hand that is not over: {state!r}")
        state = state.apply(rng.choice(moves))  # must not raise: the move is legal
        if state.is_over:
            break
    else:
        raise Finding(f"{rules.to_text()}: no end after {limit} actions")
    _check_tiles(state)
    _check_outcome(state)
    if parse_hand_record(hand_record(state)).replay() != state:
        raise Finding("the hand record does not replay to the same hand")
    if rng.random() < 0.125:
        # A low target keeps the match short; the totals are checked the same.
        _play_match(rules.replace(target_score=min(rules.target_score, 50)), rng)


def _play_match(rules: Rules, rng: random.Random) -> None:
    match = MatchState.new(rules, rng.randrange(1 << 32))
    for _ in range(5000):
        while not match.hand_over:
            match = match.apply(rng.choice(match.legal_moves()))
        sums = [0] * rules.sides
        for outcome in match.outcomes:
            for side, points in enumerate(outcome.side_points(rules.sides)):
                sums[side] += points
        if tuple(sums) != match.totals:
            raise Finding(f"match totals {match.totals} are not the hands' sum {sums}")
        if match.is_over:
            return
        match = match.next_hand()
    raise Finding(f"{rules.to_text()}: the match did not end in 5000 deals")


def trial_rules(rng: random.Random, tally: Tally, label: str) -> None:
    fields = random_rules_fields(rng)
    for _ in range(rng.randrange(3)):
        key = rng.choice([*fields, "colour", "preset", "", "players", "teams", "set_max"])
        fields[key] = random_value(rng)
    way = rng.randrange(4)
    if way == 0:
        call: Callable[[], object] = lambda: Rules(**fields)  # noqa: E731
    elif way == 1:
        name = rng.choice([*PRESETS, "chess", random_value(rng)])
        call = lambda: Rules.preset(name, **fields)  # noqa: E731
    elif way == 2:
        data = fields if rng.random() < 0.9 else random_value(rng)
        call = lambda: Rules.from_dict(data)  # noqa: E731
    else:
        text = " ".join(f"{k}={v}" for k, v in fields.items())
        text = mutate_text(rng, text) if rng.random() < 0.7 else random_value(rng)
        call = lambda: Rules.from_text(text)  # noqa: E731
    classify(tally, call, (RulesError,), label)


def mutated_move(rng: random.Random, state: HandState) -> tuple[Any, bool]:
    """A move for ``state``, mutated or not; True when it is one of its legal moves
    (as a :class:`Move` or its text), which ``apply`` must accept."""
    legal = state.legal_moves()
    base = rng.choice(legal) if legal else Move("pass")
    k = rng.randrange(6)
    if k == 0:
        return random_value(rng), False
    if k == 1:
        return mutate_text(rng, str(base)), False
    if k == 2:
        return str(base), bool(legal)
    if k == 3:
        parts: list[Any] = list(base)  # any value in any field: the Move is meant to be bad
        i = rng.randrange(len(parts))
        parts[i] = rng.choice([None, 0, 1, -1, 99, True, 1.0, "x", Tile(0, 0), Tile(2, 99), "play"])
        return Move(*parts), False
    if k == 4:
        return base, bool(legal)
    return Move(
        "play",
        Tile.of(rng.randrange(8), rng.randrange(8)),
        rng.randrange(5),
        rng.randrange(8),
        rng.choice(["lead", "inline", "cross", "upright", "x"]),
    ), False


def _snapshot(state: HandState) -> tuple[object, ...]:
    return (state.history, state.hands, state.boneyard, state.to_move, state.outcome)


def trial_apply(rng: random.Random, tally: Tally, label: str) -> None:
    state = random_state(rng)
    use_match = rng.random() < 0.2
    # A match's move is mutated from its own hand's, or it would be a move of another
    # deal, refused nearly always.
    match = MatchState.new(state.rules, rng.randrange(1 << 32)) if use_match else None
    move, legal = mutated_move(rng, match.hand if match is not None else state)

    def apply() -> None:
        before = _snapshot(state)
        try:
            if match is not None:
                after_match = match.apply(move)
                if after_match.hand.history[-1].move not in match.legal_moves():
                    raise Finding(f"match accepted {move!r}, not a legal move")
                return
            after = state.apply(move)
        except (IllegalMoveError, MoveParseError):
            if _snapshot(state) != before:
                raise Finding(f"refusing {move!r} changed the state") from None
            raise
        if after.history[-1].move not in state.legal_moves():
            raise Finding(f"accepted {move!r}, which is not a legal move")
        if after.n_actions != state.n_actions + 1 or _snapshot(state) != before:
            raise Finding(f"applying {move!r} changed the old state or skipped a count")

    classify(tally, apply, (IllegalMoveError, MoveParseError), label, valid=legal)


def trial_view(rng: random.Random, tally: Tally, label: str) -> None:
    state = random_state(rng)
    n = state.rules.players
    seat = rng.choice([rng.randrange(n), random_value(rng), n, -1, True])
    good_scores = (None, tuple(range(state.rules.sides)))
    scores = rng.choice([*good_scores, None, random_value(rng), (0,) * (n + 1)])
    which = rng.randrange(3)
    # A seat number (a plain int in range) must be accepted, and with it scores of one
    # total per side (only view() takes scores).
    valid = type(seat) is int and 0 <= seat < n and (which != 0 or scores in good_scores)

    def view() -> None:
        if which == 0:
            v = state.view(seat, scores)
            if not isinstance(v, SeatView) or v.hand != state.hand(seat):
                raise Finding(f"view({seat!r}) is not that seat's view")
        elif which == 1:
            MatchState.new(state.rules, 1).view(seat)
        else:
            state.hand(seat)

    classify(tally, view, (ValueError,), label, valid=valid)


def trial_record(rng: random.Random, tally: Tally, label: str) -> None:
    state = random_state(rng)
    text: Any = hand_record(state)
    lines = text.splitlines()
    k = rng.randrange(5)
    intact = k == 4  # hand_record's own text must read back
    if k == 0:
        text = mutate_text(rng, text)
    elif k == 1 and lines:
        del lines[rng.randrange(len(lines))]
        text = "\n".join(lines)
    elif k == 2 and lines:
        i = rng.randrange(len(lines))
        lines[i] = mutate_text(rng, lines[i])
        text = "\n".join(lines)
    elif k == 3:
        text = random_value(rng)

    def parse() -> None:
        record = parse_hand_record(text)
        replayed = record.replay()
        if parse_hand_record(hand_record(replayed)).replay() != replayed:
            raise Finding("an accepted record does not round-trip")
        if intact and replayed != state:
            raise Finding("the hand's record replays to another hand")

    classify(tally, parse, (ValueError,), label, valid=intact)


def trial_public(rng: random.Random, tally: Tally, label: str) -> None:
    state = random_state(rng)
    rules = state.rules
    seat = rng.randrange(rules.players)
    hand: Any = [str(t) for t in state.hand(seat)]
    history: Any = [(e.seat, str(e.move)) for e in state.history]
    first = state.dealt_leader
    scores: Any = None
    intact = rng.random() < 0.2
    for _ in range(0 if intact else 1 + rng.randrange(2)):
        k = rng.randrange(9)
        if k == 0 and history:
            del history[rng.randrange(len(history))]
        elif k == 1 and history:
            i = rng.randrange(len(history))
            history.insert(i, history[rng.randrange(len(history))])
        elif k == 2 and history:
            i = rng.randrange(len(history))
            entry = history[i]
            if _is_pair(entry) and isinstance(entry[1], str):
                history[i] = (entry[0], mutate_text(rng, entry[1]))
        elif k == 3 and history:
            i = rng.randrange(len(history))
            history[i] = (
                (random_value(rng), history[i][1])
                if rng.random() < 0.5 and _is_pair(history[i])
                else random_value(rng)
            )
        elif k == 4 and isinstance(hand, list) and hand:
            del hand[rng.randrange(len(hand))]
        elif k == 5 and isinstance(hand, list):
            hand = [*hand, str(Tile.of(rng.randrange(10), rng.randrange(10)))]
        elif k == 6:
            seat = random_value(rng)
        elif k == 7:
            first = rng.choice([random_value(rng), rng.randrange(rules.players)])
        else:
            scores = random_value(rng)
            hand = random_value(rng) if rng.random() < 0.3 else hand

    def rebuild() -> None:
        view = public_view(rules, seat, hand, history, first, scores)
        if intact and not state.is_over and view != state.view(seat):
            raise Finding("the view rebuilt from the public history differs from the engine's")
        if sorted(str(t) for t in view.hand) != sorted(str(Tile.parse(t)) for t in hand):
            raise Finding("the rebuilt view holds another hand than was given")

    # A finished hand's history is refused (documented): only one under way is valid.
    valid = intact and not state.is_over
    classify(tally, rebuild, (HistoryError, RulesError), label, valid=valid)


def mutated_message(rng: random.Random, message: Any) -> Any:
    if not isinstance(message, dict):  # e.g. rules given by a preset's name
        return random_json(rng) if rng.random() < 0.5 else message
    message = copy.deepcopy(message)
    for _ in range(1 + rng.randrange(2)):
        if not message:
            break
        key = rng.choice(sorted(message))
        k = rng.randrange(9)
        value = message[key]
        if k == 0:
            message[key] = random_json(rng)
        elif k == 1:
            del message[key]
            if not message:
                break
        elif k == 2:
            message[rng.choice(["colour", "Seat", "moves"])] = random_json(rng)
        elif k == 3 and isinstance(value, list) and value:
            i = rng.randrange(len(value))
            value[i] = (
                random_json(rng)
                if rng.random() < 0.5
                else copy.deepcopy(value[rng.randrange(len(value))])
            )
        elif k == 4 and isinstance(value, list) and value:
            del value[rng.randrange(len(value))]
        elif k == 5 and key == "history" and isinstance(value, list) and value:
            entry = value[rng.randrange(len(value))]
            if isinstance(entry, dict):  # an earlier mutation may have replaced it
                part = rng.choice(["seat", "move"])
                old = entry.get(part)
                entry[part] = mutate_text(rng, old) if isinstance(old, str) else random_json(rng)
        elif k == 6 and isinstance(value, int) and not isinstance(value, bool):
            message[key] = rng.choice([value != 0, float(value), str(value), -value - 1])
        elif k == 7 and isinstance(value, list) and len(value) <= 64:
            # Past every size bound, but only once: a list stays under 2 million items.
            message[key] = value * rng.choice([2, 1000, 30_000])
        elif k == 8 and isinstance(value, int) and not isinstance(value, bool):
            # Of the right type and range, so only a check of what a message claims
            # against what it implies (a view's boneyard size against its history)
            # refuses it; k == 6 gives values their type or range refuses.
            message[key] = value + 1 if value == 0 or rng.random() < 0.5 else value - 1
    if rng.random() < 0.02:
        return random_json(rng)
    return message


CLAIMS = (
    *("to_move", "leader", "boneyard_size", "draws_this_turn", "passes_in_row"),
    *("hand_sizes", "open_ends", "layout", "legal_moves", "seat", "scores"),
)
"""The fields of a JSON view that say what the rest gives (and ``seat`` and
``scores``, taken as they are): an accepted view must give each as it was sent."""


def _misstated(message: dict[str, Any], state: HandState) -> dict[str, Any]:
    """The fields of the JSON view of the seat to act that disagree with the hand
    itself (a view that misstates them reads back as itself, so only the hand can
    tell), as {field: (sent, the hand's)}."""
    facts = {
        "seat": state.to_move,
        "hand": [str(t) for t in state.hand(state.to_move)],
        "to_move": state.to_move,
        "hand_sizes": list(state.hand_sizes),
        "boneyard_size": state.boneyard_size,
        "open_ends": [str(e) for e in state.ends],
        "layout": [str(t) for t in state.layout],
        "legal_moves": [str(m) for m in state.legal_moves()],
    }
    return {k: (message.get(k), v) for k, v in facts.items() if message.get(k) != v}


def trial_protocol(rng: random.Random, tally: Tally, label: str) -> None:
    state = random_state(rng)
    if rng.random() < 0.8:
        seat = state.to_move
        engine_view = state.view(seat, tuple(range(state.rules.sides)))
        message = view_to_json(engine_view)
        # The engine's own view of a hand under way must read back as it is (the view
        # of a finished hand is refused: there is no move to make).
        intact = rng.random() < 0.15 and not state.is_over
        mutated = message if intact else mutated_message(rng, message)

        def read() -> None:
            view = view_from_json(mutated)
            rebuilt = view_to_json(view)
            if view_from_json(json.loads(json.dumps(rebuilt))) != view:
                raise Finding("an accepted view does not read back the same")
            if intact and view != engine_view:
                raise Finding("the engine's view does not read back as the same view")
            if intact and (wrong := _misstated(message, state)):
                raise Finding(f"view_to_json misstates the hand: {wrong}")
            for key in CLAIMS:
                sent = mutated.get(key, rebuilt[key])
                if key == "legal_moves" and set(map(str, sent)) == set(rebuilt[key]):
                    sent = rebuilt[key]  # in any order, repeats allowed
                if sent != rebuilt[key]:
                    raise Finding(
                        f"a view claiming {key}={mutated[key]!r} was accepted, "
                        f"though its history gives {rebuilt[key]!r}"
                    )

        classify(tally, read, (ProtocolError,), label, valid=intact)
        return
    moves = state.legal_moves() or (Move("pass"),)
    move_message = mutated_message(rng, move_to_json(rng.choice(moves)))

    def read_move() -> None:
        move = move_from_json(move_message)
        if move_from_json(move_to_json(move)) != move:
            raise Finding("an accepted move does not read back the same")

    classify(tally, read_move, (ProtocolError,), label)


class _PolicyFolder:
    """A scratch copy of the shipped standard bot, broken anew for each trial."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="matador-fuzz-"))
        self.folder = self.root / "bot"
        shutil.copytree(BOTS_DIR / "standard", self.folder)
        self.onnx = (self.folder / POLICY_FILE).read_bytes()
        self.sidecar = json.loads((self.folder / SIDECAR_FILE).read_text())
        self.rules = load_policy(self.folder).rules

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    k = rng.randrange(5)
    if k == 0:
        return data[: rng.randrange(len(data) + 1)]
    if k == 1:
        out = bytearray(data)
        for _ in range(1 + rng.randrange(20)):
            out[rng.randrange(len(out))] = rng.randrange(256)
        return bytes(out)
    if k == 2:
        i = rng.randrange(len(data))
        return data[:i] + rng.randbytes(rng.randrange(1, 64)) + data[i:]
    if k == 3:
        return rng.randbytes(rng.randrange(2000))
    return b""


def trial_policy(rng: random.Random, tally: Tally, label: str, scratch: _PolicyFolder) -> None:
    onnx, sidecar = scratch.onnx, json.dumps(scratch.sidecar).encode()
    if rng.random() < 0.5:
        onnx = _mutate_bytes(rng, onnx)
    else:
        data = mutated_message(rng, scratch.sidecar)
        if isinstance(data, dict) and isinstance(data.get("rules"), dict) and rng.random() < 0.5:
            data["rules"] = mutated_message(rng, data["rules"])
        sidecar = json.dumps(data).encode()
        if rng.random() < 0.3:
            sidecar = _mutate_bytes(rng, sidecar)
    (scratch.folder / POLICY_FILE).write_bytes(onnx)
    (scratch.folder / SIDECAR_FILE).write_bytes(sidecar)
    # A hand of the bot's own rules: a policy that loads is asked for a move in it.
    state = _under_way(rng, scratch.rules)

    def load() -> None:
        # onnxruntime prints its own notice ("EP Error") on stdout before raising; the
        # error itself is what is classified, the notice would only break the table.
        with contextlib.redirect_stdout(io.StringIO()):
            policy = load_policy(scratch.folder)
        if policy.rules != state.rules:
            return
        view = state.view(state.to_move)
        if policy.choose(view) not in view.legal_moves:
            raise Finding(f"a loaded policy chose an illegal move in {view_to_json(view)}")

    classify(tally, load, (PolicyError,), label)


def _under_way(rng: random.Random, rules: Rules) -> HandState:
    """A hand of ``rules`` advanced by up to 29 random legal moves, never to its end:
    a seat is to move in it."""
    state = HandState.deal(rules, rng.randrange(1 << 32))
    for _ in range(rng.randrange(30)):
        after = state.apply(rng.choice(state.legal_moves()))
        if after.is_over:
            break
        state = after
    return state


def _named_rules(message: Any) -> Rules | None:
    """The rules a JSON view names, or None where it names none the protocol reads."""
    try:
        return rules_from_json(message["rules"])
    except (TypeError, KeyError, ProtocolError):
        return None


def trial_bot(rng: random.Random, tally: Tally, label: str, bots: list[Any]) -> None:
    bot = rng.choice(bots)
    # A bot of one configuration (the trained one) also gets views of other presets,
    # which it must refuse.
    other = bot.rules is None or rng.random() < 0.2
    rules = Rules.preset(rng.choice(list(PRESETS))) if other else bot.rules
    state = _under_way(rng, rules)
    message: Any = view_to_json(state.view(state.to_move))
    intact = rng.random() >= 0.85
    if not intact:
        message = mutated_message(rng, message)
    # Whether the view names other rules than the bot's is read from the view as sent:
    # a mutation may name the bot's own (a two-seat pagat view renamed "standard" is a
    # standard view, which the standard bot rightly answers).
    named = _named_rules(message)
    mismatch = bot.rules is not None and named is not None and named != bot.rules
    shown = None if named is None else named.preset_name() or named.to_text()

    def reply() -> None:
        try:
            answer = bot.move_json(message, random.Random(0))
        except BotError as exc:
            if mismatch:  # the view of other rules got past the protocol's rules check
                raise Finding(f"bot {bot.name} took a view of {shown} for its own: {exc}") from None
            raise
        if mismatch:
            raise Finding(f"bot {bot.name} answered a view of {shown}, not its rules")
        view = view_from_json(message)
        if move_from_json(answer) not in view.legal_moves:
            raise Finding(f"bot {bot.name} answered {answer['move']}, not a legal move")

    # The view of the seat to act in a hand under way, of the bot's rules, is valid.
    classify(tally, reply, (ProtocolError, BotError), label, valid=intact and not mismatch)


_STATE_NUMBERS = (
    -1, 0, 1, 2, 3, 4, 6, 7, 12, 13, 27, 28, 90, 91,
    2**15 - 1, 2**31 - 1, -(2**31), 2**63 - 1, 2**64 - 1,
)  # fmt: skip
"""Numbers a saved state's edits try: seats, ends, tiles, the sets' sizes, type bounds."""

STATE_STEPS = 200
"""The most steps a trial plays on from a state that was taken (a hand of the largest
sets holds thousands of actions; each step is checked)."""


def _edit_state(rng: random.Random, state: dict[str, Any], engine: dict[str, Any]) -> None:
    """One edit of a saved state: a number off by one, set to a bound or swapped with
    its neighbour in a list; a tile moved to another place with the hand sizes kept
    true; a text edited; or any part replaced by any JSON value."""
    k = rng.randrange(8)
    loc, hsize = engine.get("loc"), engine.get("hsize")
    if k == 0 and isinstance(loc, list) and loc and isinstance(hsize, list):
        b = rng.randrange(len(loc))
        # Earlier edits may have left anything in these places.
        if not (isinstance(loc[b], list) and loc[b] and b < len(hsize)):
            return
        sizes = hsize[b]
        if not isinstance(sizes, list):
            return
        tile = rng.randrange(len(loc[b]))
        old, new = loc[b][tile], rng.randrange(-2, max(len(sizes), 1))
        loc[b][tile] = new
        for seat, change in ((old, -1), (new, 1)):
            if isinstance(seat, int) and 0 <= seat < len(sizes) and isinstance(sizes[seat], int):
                sizes[seat] += change
        return
    _edit_one_of(rng, state, list(_json_paths(state)), k)


def _edit_one_of(rng: random.Random, state: Any, paths: list[tuple[Any, ...]], k: int) -> None:
    """Edit ``state`` at one of ``paths`` (mostly a number) as edit kind ``k`` of
    :func:`_edit_state` says: off by one, a bound, swapped, a text edited, any JSON."""
    if rng.random() < 0.75:  # mostly a number: the arrays are where the kernels look
        paths = [path for path in paths if is_json_int(_at(state, path))]
    if not paths:
        return
    *parents, key = rng.choice(paths)
    holder = _at(state, parents)
    value = holder[key]
    if isinstance(value, str):
        holder[key] = mutate_text(rng, value)
    elif not is_json_int(value) or k == 1:
        holder[key] = random_json(rng)
    elif k == 2:
        holder[key] = value + rng.choice((-1, 1))
    elif k == 3:
        holder[key] = rng.choice(_STATE_NUMBERS)
    elif k == 4 and isinstance(holder, list) and len(holder) > 1:
        other = rng.randrange(len(holder))
        holder[key], holder[other] = holder[other], holder[key]
    else:
        holder[key] = rng.randrange(-2, 30)


def _at(value: Any, path: Iterable[Any]) -> Any:
    """The part of ``value`` at ``path`` (keys and indices, as :func:`_json_paths` gives)."""
    for key in path:
        value = value[key]
    return value


def _gives_back(given: dict[str, Any], again: dict[str, Any]) -> bool:
    """Whether a state read back (``again``) is the one taken (``given``): the same
    values, the rules the same rules however their text was written (``teams=0``, pairs
    in another order; the engine writes its own text back)."""
    for key, value in given.items():
        if key not in again:
            continue
        if key == "rules" and isinstance(value, str):
            if Rules.from_text(value) != Rules.from_text(again[key]):
                return False
        elif isinstance(value, dict) and isinstance(again[key], dict):
            if not _gives_back(value, again[key]):
                return False
        elif again[key] != value:
            return False
    return True


def _random_actions(rng: random.Random, masks: Any) -> Any:
    """A uniformly random legal action per row of ``masks`` (-1 where none is legal)."""
    import numpy as np

    return np.array(
        [rng.choice(row.nonzero()[0].tolist()) if row.any() else -1 for row in masks], np.int64
    )


def _batch_under_way(rng: random.Random) -> tuple[Any, Callable[[], Any]]:
    """A batch engine (or, three times in ten, a vector env) of random rules with play
    under way, and a maker of new ones of the same arguments, which its state fits."""
    from matador_env.batch import BatchEngine, BatchError
    from matador_env.vector import MODES, VectorEnv

    size = rng.randint(1, 3)
    build: Callable[[Rules], Any]
    vector = rng.random() < 0.3
    if vector:
        mode, episode = rng.choice(MODES), rng.choice(("hand", "match"))
        max_hands, seed = rng.choice((2, 5, 50)), rng.randrange(1 << 32)

        def build(rules: Rules) -> Any:
            return VectorEnv(
                size, rules, mode=mode, episode=episode, max_hands=max_hands, seed=seed
            )
    else:

        def build(rules: Rules) -> Any:
            return BatchEngine(rules, size)

    while True:
        try:
            rules = Rules(**random_rules_fields(rng))
            made = build(rules)
            break
        except (RulesError, BatchError):
            continue
    if vector:
        _, masks, _ = made.reset()
        for _ in range(rng.randrange(30)):
            masks = made.step(_random_actions(rng, masks))[1]
        return made, lambda: build(rules)
    if rng.random() < 0.3:
        made.new_matches([rng.randrange(1 << 32) for _ in range(size)])
    else:
        made.deal([rng.randrange(1 << 32) for _ in range(size)])
    for _ in range(rng.randrange(40)):
        made.step(_random_actions(rng, made.legal_masks()))
        if rng.random() < 0.2:
            made.next_hands()
    return made, lambda: build(rules)


def trial_state(rng: random.Random, tally: Tally, label: str) -> None:
    from matador_env.batch import BatchError
    from matador_env.vector import VectorEnv

    source, make = _batch_under_way(rng)
    vector = isinstance(source, VectorEnv)
    state = source.get_state()
    edits = rng.randrange(4)  # none: a state as saved, which must be taken
    for _ in range(edits):
        engine = state.get("engine") if vector else state
        _edit_state(rng, state, engine if isinstance(engine, dict) else {})
    target = make()
    if vector:
        target.reset()
    before = target.get_state()

    def taken_back(what: str) -> None:
        """The state ``target`` saves now is one a new engine takes."""
        try:
            make().set_state(target.get_state())
        except BatchError as exc:
            raise Finding(f"{what}, its own state is refused: {exc}") from None

    def play_on() -> None:
        """Legal play from a state that was taken, each state it reaches checked."""
        if vector:
            masks = target.action_masks()
            for step in range(rng.randrange(1, 30)):
                masks = target.step(_random_actions(rng, masks))[1]
                taken_back(f"after step {step + 1}")
            return
        for step in range(STATE_STEPS):
            if target.all_over:
                break
            masks = target.legal_masks()
            if (~target.over & (masks.sum(1) == 0)).any():
                raise Finding(f"after step {step}, a hand runs with no legal action")
            target.step(_random_actions(rng, masks))
            taken_back(f"after step {step + 1}")
        target.next_hands()
        taken_back("after the next hands were dealt")

    def take() -> None:
        try:
            target.set_state(state)
        except BatchError:
            if target.get_state() != before:
                raise Finding("a refused state changed what it was given to") from None
            raise
        if not _gives_back(state, target.get_state()):
            raise Finding("a state was taken, but get_state() gives back another")
        try:
            play_on()
        except BatchError as exc:  # legal play is never refused: not the state's refusal
            raise Finding(f"legal play from a state that was taken refused: {exc}") from None

    classify(tally, take, (BatchError,), label, valid=edits == 0)


LIVE_STEPS = 40
"""The most steps a live trial plays on from a state that was taken."""


class _LivePools:
    """Pool folders for the live campaign: each shipped bot's folder copied in as two
    snapshots of a training run (``step_100``, ``step_300``), one pool a configuration,
    made when a trial first asks for it; removed by :meth:`close`."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="fuzz-live-"))

    def folder(self, name: str) -> Path:
        pool = self.root / name
        if not pool.is_dir():
            for step in (100, 300):
                shutil.copytree(BOTS_DIR / name, pool / f"step_{step}")
        return pool

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _live_rules(rng: random.Random) -> tuple[Rules, str | None]:
    """A shipped bot's configuration (its rules and name) seven times in ten, else
    random rules (no name: no snapshot plays them)."""
    from matador_env.configs import CONFIGURATIONS

    if rng.random() < 0.7:
        name = rng.choice(sorted(CONFIGURATIONS))
        return CONFIGURATIONS[name].rules(), name
    while True:
        try:
            rules = Rules(**random_rules_fields(rng))
        except RulesError:
            continue
        if rules.set_max <= 9 and rules.players <= 4:  # a trial replays whole hands
            return rules, None


def _edit_live(rng: random.Random, state: dict[str, Any]) -> None:
    """One edit of a saved live state: its part chosen first (a random generator's 625
    words would otherwise take nearly every edit), then a flag flipped, the part removed
    or renamed, or edited as :func:`_edit_state` edits."""
    if not state:
        return
    k = rng.randrange(8)
    top = rng.choice(list(state))
    if isinstance(state[top], bool) and k < 4:  # a flag: the other value
        state[top] = not state[top]
        return
    if k == 0:
        value = state.pop(top)
        if rng.random() < 0.5:
            state[mutate_text(rng, str(top))] = value
        return
    _edit_one_of(rng, state, [p for p in _json_paths(state) if p[0] == top], k)


def _as_json(value: Any) -> Any:
    """``value`` as a checkpoint's file gives it back (tuples as lists, say)."""
    return json.loads(json.dumps(value))


def _played_on(play: Callable[[], None]) -> None:
    """Legal play from a state that was taken: any exception is a finding (a
    ``ValueError`` from play is no refusal of the state)."""
    try:
        play()
    except Finding:
        raise
    except Exception as exc:
        raise Finding(
            f"play from a state that was taken raised {type(exc).__name__}: {exc}"
        ) from None


def _trial_selfplay(rng: random.Random, tally: Tally, label: str, pools: _LivePools) -> None:
    """A self-play env's live state (what a run's checkpoint saves of each of its
    environments), edited, then :func:`train.selfplay.check_live_state` on a new env."""
    import numpy as np

    from train.selfplay import OpponentPool, SelfPlayEnv, check_live_state

    rules, name = _live_rules(rng)
    pool_dir = pools.folder(name) if name is not None and rng.random() < 0.7 else None
    weights = rng.choice(
        (
            {"random": 1.0},
            {"random": 1.0, "greedy": 1.0},
            {"expert": 0.8, "greedy": 0.1, "random": 0.1},
        )
    )
    episode, max_hands = rng.choice(("hand", "match")), rng.choice((2, 5, 50))

    def build(seed: int) -> SelfPlayEnv:
        pool = OpponentPool(pool_dir, weights, snapshot_share=rng.choice((0.0, 0.5, 1.0)))
        env = SelfPlayEnv(pool=pool, rules=rules, episode=episode, max_hands=max_hands)
        env.reset(seed=seed)  # as the run's scratch env is made
        return env

    source = build(rng.randrange(1 << 32))
    ended = False
    # One in four is saved between an episode's end and the next reset.
    at_an_end = rng.random() < 0.25
    for _ in range(400 if at_an_end else rng.randrange(40)):
        if ended:
            if at_an_end:
                break
            source.reset()
            ended = False
            continue
        action = rng.choice(np.flatnonzero(source.action_masks()).tolist())
        if rng.random() < 0.03:  # the learner's illegal action ends the episode
            action = rng.randrange(-1, source.encoding.num_actions + 1)
        ended = any(source.step(action)[2:4])
    state = _as_json(source.live_state())
    edits = rng.randrange(4)  # none: a state as saved, which must be taken
    for _ in range(edits):
        _edit_live(rng, state)
    target = build(rng.randrange(1 << 32))

    def play() -> None:
        over = state["over"]
        for step in range(rng.randrange(1, LIVE_STEPS)):
            if over:
                target.reset()
                over = False
                continue
            legal = np.flatnonzero(target.action_masks()).tolist()
            if not legal:
                raise Finding(f"after step {step}, an episode runs with no legal action")
            over = any(target.step(rng.choice(legal))[2:4])

    def take() -> None:
        check_live_state(state, target)
        if _as_json(target.live_state()) != state:
            raise Finding("a live state was taken, but live_state() gives back another")
        _played_on(play)

    classify(tally, take, (ValueError,), label, valid=edits == 0)


def _trial_batch_pool(rng: random.Random, tally: Tally, label: str, pools: _LivePools) -> None:
    """A batch opponent pool's live state (what a ``--vector-envs`` run's checkpoint
    saves beside the vector env's), edited, then ``restore_live_state`` on a new pool
    of a new vector env, which then takes the vector env's state as saved."""
    from matador_env.batch import BatchError
    from matador_env.vector import VectorEnv
    from train.selfplay import BatchOpponentPool

    size, episode = rng.randint(1, 4), rng.choice(("hand", "match"))

    def build_with(rules: Rules, pool_dir: Path | None, seed: int) -> VectorEnv:
        pool = BatchOpponentPool(pool_dir, snapshot_share=rng.choice((0.0, 0.5, 1.0)), seed=seed)
        return VectorEnv(
            size, rules, mode="learner", episode=episode, opponents=pool,
            opponent_slots=True, seed=seed,
        )  # fmt: skip

    while True:
        rules, name = _live_rules(rng)
        pool_dir = pools.folder(name) if name is not None and rng.random() < 0.7 else None
        try:
            source = build_with(rules, pool_dir, rng.randrange(1 << 32))
            break
        except BatchError:  # rules the batch engine does not play
            continue

    def build(seed: int) -> VectorEnv:
        return build_with(rules, pool_dir, seed)

    _, masks, _ = source.reset()
    for _ in range(rng.randrange(30)):
        masks = source.step(_random_actions(rng, masks))[1]
    saved_pool = source.opponents
    assert isinstance(saved_pool, BatchOpponentPool)
    saved, state = source.get_state(), _as_json(saved_pool.live_state())
    edits = rng.randrange(4)
    for _ in range(edits):
        _edit_live(rng, state)
    target = build(rng.randrange(1 << 32))
    target.reset()
    pool = target.opponents
    assert isinstance(pool, BatchOpponentPool)
    before = _as_json(pool.live_state())

    def play() -> None:
        target.set_state(saved)
        masks = target.action_masks()
        for _ in range(rng.randrange(1, LIVE_STEPS)):
            masks = target.step(_random_actions(rng, masks))[1]

    def take() -> None:
        try:
            pool.restore_live_state(state)
        except ValueError:
            if _as_json(pool.live_state()) != before:
                raise Finding("a refused pool state changed the pool") from None
            raise
        if _as_json(pool.live_state()) != state:
            raise Finding("a pool state was taken, but live_state() gives back another")
        _played_on(play)

    classify(tally, take, (ValueError,), label, valid=edits == 0)


def trial_live(rng: random.Random, tally: Tally, label: str, pools: _LivePools) -> None:
    if rng.random() < 0.7:
        _trial_selfplay(rng, tally, label, pools)
    else:
        _trial_batch_pool(rng, tally, label, pools)


# -- the environments' step and reset ---------------------------------------------------------

ENV_STEPS = 40
"""The most steps an env trial plays before its mutated input, and after it."""

ENV_SURFACES = ("raw_env", "env", "single", "vector", "make_vec", "sb3")
"""What the env campaign steps: ``matador_v0.raw_env`` and ``env`` (PettingZoo's AEC
environment, bare and wrapped), ``MatadorSingleEnv``, ``VectorEnv``,
``gymnasium.make_vec``'s env (``MatadorVectorEnv``) and ``sb3_vec_env``'s
stable-baselines3 ``VecEnv``."""


def _is_integer(value: Any) -> bool:
    """Whether the environments' docs call ``value`` an integer: an ``int`` or a numpy
    integer (not a bool), or a 0-d array of integers. Written out here, not read from
    the environments' own check."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.ndim == 0 and value.dtype.kind in "iu"
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _action_kind(action: Any, legal: list[int], actions: int) -> str:
    """``"legal"``, ``"illegal"`` (an integer in the action range that is no legal
    action), ``"range"`` (an integer outside it), ``"none"`` or ``"type"`` (no integer)."""
    if action is None:
        return "none"
    if not _is_integer(action):
        return "type"
    number = int(action)
    if number in legal:
        return "legal"
    return "illegal" if 0 <= number < actions else "range"


def _integer_forms(rng: random.Random, number: int) -> Any:
    """``number`` as one of the integer types an environment takes: a Python int, a
    numpy integer of a type that holds it, or a 0-d array of one."""
    import numpy as np

    form = rng.randrange(3)
    if form == 0 or not -(2**63) <= number < 2**64:
        return number
    kinds = (np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64)
    kind = rng.choice([k for k in kinds if np.iinfo(k).min <= number <= np.iinfo(k).max])
    return kind(number) if form == 1 else np.array(number, dtype=kind)


def _mutated_action(rng: random.Random, legal: list[int], actions: int) -> Any:
    """An action for a seat to move: a legal one (in any integer form), an illegal
    one, one out of the action range, or no integer at all."""
    import numpy as np

    k = rng.randrange(10)
    if k <= 2:
        return _integer_forms(rng, rng.choice(legal))
    if k == 3:
        others = [a for a in range(actions) if a not in legal]
        return _integer_forms(rng, rng.choice(others)) if others else rng.choice(legal)
    if k == 4:
        number = rng.choice([-1, actions, actions + 1, 2**31, 2**63, 2**64 - 1, 2**64, -(2**63)])
        return _integer_forms(rng, number)
    a = rng.choice(legal)
    if k == 5:
        return rng.choice([True, False, np.bool_(True), np.array(True), None])
    if k == 6:
        return rng.choice(
            [float(a), np.float32(a), np.float64(a), float("nan"), np.array(float(a))]
        )
    if k == 7:
        return rng.choice([str(a), [a], (a,), np.array([a]), np.array([[a]]), {a: a}])
    return random_value(rng)


def _mutated_seed(rng: random.Random) -> Any:
    """A seed for ``reset``: in range (in any integer form), out of it, None or no
    integer."""
    k = rng.randrange(4)
    if k == 0:
        return _integer_forms(
            rng, rng.choice([0, 1, 2**32, 2**63, 2**64 - 1, rng.randrange(2**64)])
        )
    if k == 1:
        return _integer_forms(rng, rng.choice([-1, -(2**63), 2**64, 2**70]))
    if k == 2:
        return rng.choice([None, True, 1.5, "7", [7], float("inf")])
    return random_value(rng)


class CallableFailed(RuntimeError):
    """What a faulty opponent or ``episode_starts`` (:class:`_FaultyPlayer`,
    :class:`_FaultyOpponent`, :class:`_FaultyStarts`) raises when it fails outright:
    the env must pass it on."""


def _fail_now_and_then(
    fault: _FaultyPlayer | _FaultyOpponent | _FaultyStarts, share: float
) -> None:
    """At ``share``, a faulty callable's bad answer is a failure instead:
    :class:`CallableFailed`, raised and noted in ``fault.failed``."""
    if fault.rng.random() < share:
        fault.failed = True
        raise CallableFailed(f"{fault.name} failed")


class _FaultyPlayer:
    """An opponent of a ``MatadorSingleEnv``, as an agent (the object: ``act(view, rng)``)
    or as a callable (its ``action``: observation dict -> action), that now and then (at
    ``share``) answers badly: an action that is illegal, out of range or no integer, or,
    as an agent, an illegal move, text that is no move or no move at all (perhaps still
    its good answer in another form), or raises :class:`CallableFailed` (one bad
    answer in four; ``failed`` says it did). ``bad``: the errors the docs give for its
    answers (``ValueError`` for no legal action or move, ``TypeError`` for no action
    or move at all). Its good answer is the agent's random legal move from
    the env's stream, or the callable's middle legal action, so that an env and its
    copy see the same play from it whatever its share."""

    name = "the opponent"

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.share = rng, 0.0
        self.bad: list[tuple[Any, type[Exception]]] = []
        self.failed = False

    def action(self, obs: dict[str, Any]) -> Any:
        import numpy as np

        mask = obs["action_mask"]
        legal = np.flatnonzero(mask).tolist()
        if self.rng.random() >= self.share:
            return legal[len(legal) // 2]
        _fail_now_and_then(self, 0.25)
        answer = _mutated_action(self.rng, legal, len(mask))
        kind = _action_kind(answer, legal, len(mask))
        if kind == "legal":  # the good answer in another integer form, as a good one plays
            return _integer_forms(self.rng, legal[len(legal) // 2])
        self.bad.append((answer, TypeError if kind in ("type", "none") else ValueError))
        return answer

    def act(self, view: Any, rng: random.Random) -> Any:
        legal = list(view.legal_moves)
        move = rng.choice(legal)
        if self.rng.random() >= self.share:
            return move
        _fail_now_and_then(self, 0.25)
        from matador_env.encoding import encoding_for

        illegal = [m for m in encoding_for(view.rules).moves if m not in legal]
        other = self.rng.choice(illegal) if illegal else move  # (never the env's stream)
        answer = self.rng.choice([
            move, str(move), other, "x", "", str(move) + "!", None, 5, [str(move)],
            str(move).encode(), (move,), random_value(self.rng),
        ])  # fmt: skip
        if isinstance(answer, Move):
            error: type[Exception] | None = None if answer in legal else ValueError
        elif isinstance(answer, str):
            try:
                error = None if Move.parse(answer) in legal else ValueError
            except ValueError:
                error = ValueError
        else:
            error = TypeError
        if error is not None:
            self.bad.append((answer, error))
        return answer


class _Surface:
    """One environment under test, for the env campaign: what it is to move, how it
    steps, what "as it was" compares, and which error its docs give for each kind of
    action."""

    def __init__(self, kind: str, rng: random.Random, rules: Rules) -> None:
        from matador_env import matador_v0
        from matador_env.gym_env import MatadorSingleEnv

        self.kind = kind
        self.player: _FaultyPlayer | None = None
        episode = rng.choice(("hand", "match"))
        self.illegal_reward = rng.choice((-1.0, -3.5))
        max_hands = rng.choice((2, 50))
        if kind in ("raw_env", "env"):
            make = matador_v0.raw_env if kind == "raw_env" else matador_v0.env
            self.make = lambda: make(rules=rules, episode=episode, max_hands=max_hands)
        else:
            opponents: Any = rng.choice(("random", "greedy"))
            if rng.random() < 0.6:  # an agent or a callable that answers badly now and then
                self.player = _FaultyPlayer(rng)
                opponents = rng.choice((self.player, self.player.action))
            self.make = lambda: MatadorSingleEnv(
                rules=rules, episode=episode, max_hands=max_hands, opponents=opponents,
                illegal_reward=self.illegal_reward,
            )  # fmt: skip
        self.env: Any = self.make()

    def legal(self) -> list[int] | None:
        """The legal actions of the seat to move, or None where the episode is over
        (AEC: the agent to move is done)."""
        import numpy as np

        env = self.env
        if self.kind == "single":
            return None if env._over else np.flatnonzero(env.action_masks()).tolist()
        agent = env.agent_selection
        if not env.agents or env.terminations[agent] or env.truncations[agent]:
            return None
        return np.flatnonzero(env.observe(agent)["action_mask"]).tolist()

    def actions(self) -> int:
        env = self.env
        if self.kind == "single":
            return int(env.action_space.n)
        return int(env.action_space(env.agent_selection).n)

    def snapshot(self) -> tuple[Any, ...]:
        """Everything a refused step or reset must leave as it was."""
        env = self.env
        if self.kind == "single":
            return (
                env.hand_records(), env.action_masks().tobytes(), env._over, env.seat,
                str(env.np_random.bit_generator.state),
            )  # fmt: skip
        u = env.unwrapped
        return (
            tuple(u.agents), dict(u.rewards), dict(u._cumulative_rewards),
            dict(u.terminations), dict(u.truncations), u.agent_selection,
            repr(u.infos), u.hand_records(),
            tuple(b for a in u.possible_agents for b in (
                u.observe(a)["observation"].tobytes(), u.observe(a)["action_mask"].tobytes()
            )),
        )  # fmt: skip

    def documented(self, kind: str) -> type[Exception] | None:
        """The error the docs give for an action of ``kind`` (:func:`_action_kind`) from
        a seat to move, or None where it is taken (as a move, or as the illegal action
        that ends the episode)."""
        if kind == "legal":
            return None
        if self.kind == "single":
            return TypeError if kind in ("type", "none") else None
        if kind == "type":
            return TypeError
        if kind == "illegal":
            return IllegalMoveError if self.kind == "raw_env" else None
        return ValueError  # out of range; None from a seat to move

    def step_checked(self, action: Any, kind: str) -> None:
        """One step of ``action`` (of ``kind``); where the docs have the env take an
        illegal one, it must end the episode as they say."""
        env = self.env
        ends = kind != "legal" and self.documented(kind) is None
        if self.kind == "single":
            _, reward, terminated, truncated, info = env.step(action)
            if ends and not (
                terminated and not truncated and reward == self.illegal_reward
                and info["illegal_action"] == 1 and not info["action_mask"].any()
            ):  # fmt: skip
                raise Finding(
                    f"an illegal action {action!r} gave reward {reward}, terminated "
                    f"{terminated}, truncated {truncated}, illegal_action "
                    f"{info['illegal_action']}"
                )
            return
        agent = env.agent_selection
        env.step(action)
        if ends:
            others = {a: r for a, r in env.rewards.items() if a != agent}
            if not (
                all(env.terminations.values()) and all(env.truncations.values())
                and env.rewards[agent] == -1 and not any(others.values())
            ):  # fmt: skip
                raise Finding(
                    f"an illegal action {action!r} left terminations {env.terminations}, "
                    f"truncations {env.truncations}, rewards {env.rewards}"
                )

    def play(self, rng: random.Random, steps: int, strict: bool = True) -> None:
        """Legal play for ``steps`` steps, a new episode where one ends (AEC: the dead
        steps first); a seat to move with no legal action is a finding (or, not
        ``strict``, where play stops: the trial's setup, outside its input)."""
        for step in range(steps):
            env = self.env
            if self.kind != "single" and not env.agents:
                env.reset(seed=rng.randrange(2**64))
                continue
            legal = self.legal()
            if legal is None:
                if self.kind == "single":
                    env.reset(seed=rng.randrange(2**64))
                else:
                    env.step(None)
                continue
            if not legal:
                if not strict:
                    return
                raise Finding(f"after step {step}, a seat is to move with no legal action")
            self.env.step(rng.choice(legal))


def _started(
    rng: random.Random, start: Callable[[Rules], Any], refusal: type[Exception]
) -> tuple[Rules, Any]:
    """Random allowed rules (:func:`random_rules`) and the environment ``start(rules)``
    made and reset, drawn again while ``start`` raises ``refusal``: rules the batch
    engine does not play, or one-tile hands that leave the learner no decision."""
    while True:
        rules = random_rules(rng)
        try:
            return rules, start(rules)
        except refusal:
            continue


def _trial_one_env(rng: random.Random, tally: Tally, label: str, kind: str) -> None:
    """A mutated action (or reset seed) for an AEC or single env under way."""

    def start(rules: Rules) -> _Surface:
        surface = _Surface(kind, rng, rules)
        surface.env.reset(seed=rng.randrange(2**64))
        return surface

    _, surface = _started(rng, start, RuntimeError)
    surface.play(rng, rng.randrange(ENV_STEPS), strict=False)
    before = surface.snapshot()
    player, twin = surface.player, None
    if player is not None:
        twin = copy.deepcopy(surface.env)  # its player's copy answers well: share 0
        player.share = rng.choice((0.2, 0.6))
    reset = rng.random() < 0.2
    legal = surface.legal()
    action_kind = ""
    if not legal:
        reset = True  # an episode at its end takes a reset, not an action
    expected: type[Exception] | None
    if reset:
        value = _mutated_seed(rng)
        if value is None or (_is_integer(value) and 0 <= int(value) < 2**64):
            expected = None
        else:
            expected = ValueError if _is_integer(value) else TypeError
        what = f"reset(seed={value!r})"
    else:
        assert legal is not None
        value = _mutated_action(rng, legal, surface.actions())
        if player is not None and rng.random() < 0.7:
            value = rng.choice(legal)  # a legal step, so that the opponents are asked
        action_kind = _action_kind(value, legal, surface.actions())
        expected = surface.documented(action_kind)
        what = f"{action_kind} action {value!r}"

    def call() -> None:
        if reset:
            surface.env.reset(seed=value)
        else:
            surface.step_checked(value, action_kind)

    def take() -> None:
        try:
            call()
        except Finding:
            raise
        except Exception as exc:
            # An opponent's first bad answer stops the step (or reset) with its error.
            fault = player.bad[0] if player is not None and player.bad else None
            if player is not None and player.failed:  # (a raise stops the step at once)
                fault = ("a raise", CallableFailed)
            want = expected if fault is None else fault[1]
            if want is None or not isinstance(exc, want):
                shown = "taken" if want is None else want.__name__
                by = "" if fault is None else f" (the opponent answered {fault[0]!r})"
                raise Finding(
                    f"{what}{by}: {type(exc).__name__}: {exc}; the docs give: {shown}"
                ) from None
            if fault is not None and reset:
                raise  # a reset that raises leaves no episode, by the docs
            if surface.snapshot() != before:
                raise Finding(f"{what} was refused, but changed the environment") from None
            if fault is not None:
                _fixed_step_goes_on(surface, twin, call, what)
            raise
        if player is not None:
            if player.bad:
                raise Finding(f"{what}: the opponent's answer {player.bad[0][0]!r} was taken")
            if player.failed:
                raise Finding(f"{what}: the opponent failed, but the step went on")
            player.share = 0.0  # for the legal play after
        if expected is not None:
            raise Finding(f"{what} was taken; the docs give {expected.__name__}")
        if reset and value is not None:
            again = surface.make()
            again.reset(seed=int(value))
            if again.unwrapped.hand_records() != surface.env.unwrapped.hand_records():
                raise Finding(f"{what} dealt other hands than reset(seed={int(value)})")
        _played_on(lambda: surface.play(rng, rng.randrange(1, ENV_STEPS)))

    # (With a faulty opponent, take() itself finds a valid input refused for no fault.)
    valid = expected is None and player is None
    classify(tally, take, (TypeError, ValueError, CallableFailed), label, valid=valid)


def _fixed_step_goes_on(surface: _Surface, twin: Any, call: Callable[[], None], what: str) -> None:
    """After an opponent's bad answer stopped a step, the docs have the env as before it:
    with the opponent fixed, the same step must go on as the env's copy from before
    (whose opponent never failed) takes it."""
    import numpy as np

    assert surface.player is not None
    surface.player.share = 0.0
    env = surface.env
    try:
        call()
        surface.env = twin
        call()
    except Exception as exc:
        raise Finding(
            f"{what}: the same step with the opponent fixed raised {type(exc).__name__}: {exc}"
        ) from None
    finally:
        surface.env = env
    if env.hand_records() != twin.hand_records() or not np.array_equal(
        env.action_masks(), twin.action_masks()
    ):
        raise Finding(f"{what}: with the opponent fixed, the step went otherwise than before")


def _mutated_actions(rng: random.Random, acts: Any, actions: int) -> Any:
    """A vector env's actions: the legal ``acts`` in another form, with one slot's
    replaced by an illegal or out-of-range integer, or of another shape or type."""
    import numpy as np

    k = rng.randrange(6)
    if k <= 1:
        form = rng.choice((list, tuple, np.int32, np.uint64, np.int64))
        return form(acts.tolist()) if form in (list, tuple) else acts.astype(form)
    if k <= 3:
        slot = rng.randrange(len(acts))
        if rng.random() < 0.2:
            out = acts.astype(np.uint64)
            out[slot] = rng.choice([2**63, 2**64 - 1])
        else:
            out = acts.copy()
            out[slot] = rng.choice([-1, actions, 2**31, rng.randrange(actions)])
        return out
    if k == 4:
        return rng.choice([acts[:-1], np.append(acts, acts[:1]), acts.reshape(1, -1), acts[0]])
    return rng.choice([
        acts.astype(np.float64), acts.astype(bool), [*acts.tolist(), None],
        [str(a) for a in acts.tolist()], [[a] for a in acts.tolist()][:-1] + [[1, 2]],
        random_value(rng), None,
    ])  # fmt: skip


def _illegal_slots(value: Any, masks: Any) -> list[int] | None:
    """The slots whose action in ``value`` is no legal one, by the vector env's docs (an
    array-like of one integer per slot; numpy reads it as an array of integers), or
    None where ``value`` is no such thing."""
    import numpy as np

    try:
        arr = np.asarray(value)
    except ValueError:  # ragged
        return None
    if arr.shape != (len(masks),) or arr.dtype.kind not in "iu":
        return None
    return [
        slot
        for slot, action in enumerate(arr.tolist())
        if not (0 <= action < masks.shape[1] and masks[slot][action])
    ]


def _ints_of(value: Any, count: int, within: Callable[[int], bool], nones: bool = False) -> bool:
    """Whether ``value`` is a list, tuple, range or 1-d array of ``count`` integers
    (:func:`_is_integer`), each ``within`` (or, with ``nones``, None)."""
    import numpy as np

    sequence = isinstance(value, (list, tuple, range)) or (
        isinstance(value, np.ndarray) and value.ndim == 1
    )
    return (
        sequence
        and len(value) == count
        and all((nones and x is None) or (_is_integer(x) and within(int(x))) for x in value)
    )


def _vector_seeds(value: Any, size: int, nones: bool = False) -> list[int | None] | None:
    """The seeds of the slots by ``VectorEnv.reset(value)``'s docs (an integer ``s``:
    ``s + i``; a list, tuple, range or 1-d array of one per slot, with ``nones`` None
    for "no seed" as ``gymnasium.make_vec``'s env takes; each from 0 to 2**64 - 1), or
    None where they refuse ``value``."""
    if _is_integer(value):
        first = int(value)
        return [first + i for i in range(size)] if 0 <= first <= 2**64 - size else None
    if _ints_of(value, size, lambda s: 0 <= s < 2**64, nones):
        return [None if s is None else int(s) for s in value]
    return None


class _FaultyOpponent:
    """A callable ``opponents`` of a learner-mode ``VectorEnv`` (or of
    ``gymnasium.make_vec``'s env) that now and then (at ``share``) answers with
    :func:`_mutated_actions` (ragged, floats, another shape, an illegal or out-of-range
    action; perhaps still legal) instead of legal actions, or raises
    :class:`CallableFailed`. ``bad``: its answers since it was last emptied that the
    docs have the env refuse; ``failed``: whether it raised since then."""

    name = "the opponent"

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.share = rng, 0.0
        self.bad: list[Any] = []
        self.failed = False

    def __call__(self, obs: Any, masks: Any) -> Any:
        answer = _random_actions(self.rng, masks)
        if self.rng.random() < self.share:
            _fail_now_and_then(self, 0.25)
            answer = _mutated_actions(self.rng, answer, masks.shape[1])
            if _illegal_slots(answer, masks) != []:
                self.bad.append(answer)
        return answer


class _FaultyStarts:
    """A callable ``episode_starts`` of a ``VectorEnv``: random seeds and learner seats,
    now and then (at ``share``) answered otherwise (another count, seats out of range
    or no integers, no pair; perhaps still as the docs take it) or a raise of
    :class:`CallableFailed`. ``bad``, ``failed``: as :class:`_FaultyOpponent`'s."""

    name = "episode_starts"

    def __init__(self, rng: random.Random, players: int, learner: bool) -> None:
        self.rng, self.players, self.learner, self.share = rng, players, learner, 0.0
        self.bad: list[Any] = []
        self.failed = False

    def __call__(self, slots: Any) -> Any:
        import numpy as np

        n, players = len(slots), self.players
        seeds = [self.rng.randrange(2**64) for _ in range(n)]
        seats = [self.rng.randrange(players) for _ in range(n)]
        if self.rng.random() >= self.share:
            return seeds, seats
        _fail_now_and_then(self, 0.25)
        answer = self.rng.choice([
            (seeds[:-1], seats), (seeds, seats[:-1]), (seeds, [players] * n), (seeds, [-1] * n),
            (seeds, [float(s) for s in seats]), (seeds, [str(s) for s in seats]), (seeds, None),
            seeds, (seeds, seats, seats), ([-1] * n, seats), (bytearray(n), seats),
            (np.array(seeds, np.uint64), np.array(seats)), (tuple(seeds), tuple(seats)),
        ])  # fmt: skip
        if not self._taken(answer, n):
            self.bad.append(answer)
        return answer

    def _taken(self, answer: Any, n: int) -> bool:
        """Whether the docs have the env take ``answer`` for ``n`` slots: a pair of ``n``
        seeds from 0 to 2**64 - 1 and (in learner mode) ``n`` seats of the table."""
        if not (isinstance(answer, (tuple, list)) and len(answer) == 2):
            return False
        seeds, seats = answer
        return _ints_of(seeds, n, lambda s: 0 <= s < 2**64) and (
            not self.learner or _ints_of(seats, n, lambda s: 0 <= s < self.players)
        )


def _attempt(
    call: Callable[[], Any],
    what: str,
    may: bool,
    faults: Sequence[_FaultyOpponent | _FaultyStarts],
    state: Callable[[], Any],
    refusal: type[Exception],
) -> Any:
    """``call()``, a step or reset of a vector env beside faulty callables; or None
    where it raised ``refusal`` that ``may`` (the input was bad) or a bad answer of one
    of ``faults`` allowed, or passed on a callable's own failure, with ``state()``
    as before. A bad answer taken, a failure swallowed, a refusal that changed the
    state and any other error are findings."""
    before = state()
    for fault in faults:
        fault.bad, fault.failed = [], False
    try:
        out = call()
    except CallableFailed as exc:
        if state() != before:
            raise Finding(f"{what}: {exc}, but the environment changed") from None
        return None
    except refusal:
        if not (may or any(fault.bad for fault in faults)):
            raise
        if state() != before:
            raise Finding(f"{what} was refused, but changed the environment") from None
        return None
    except Exception as exc:
        raise Finding(
            f"{what}: {type(exc).__name__}: {exc}; the docs give {refusal.__name__}"
        ) from None
    for fault in faults:
        if fault.bad:
            raise Finding(f"{what}: {fault.name}'s answer {fault.bad[0]!r} was taken")
        if fault.failed:
            raise Finding(f"{what}: {fault.name} failed, but the step went on")
    return out


def _trial_vector(rng: random.Random, tally: Tally, label: str) -> None:
    """A mutated ``step`` or ``reset`` of a ``VectorEnv`` under way; in learner mode,
    three times in ten, beside an opponent that answers badly or fails now and then, and
    three times in ten with an ``episode_starts`` that does."""
    from matador_env.batch import BatchError
    from matador_env.vector import MODES, VectorEnv

    size = rng.randint(1, 3)
    mode, episode, seed = rng.choice(MODES), rng.choice(("hand", "match")), rng.randrange(2**32)
    lenient = mode == "learner" and rng.random() < 0.5
    reward = rng.choice((-1.0, -2.5))
    extra: dict[str, Any] = {"illegal_reward": reward} if lenient else {}
    faults: list[_FaultyOpponent | _FaultyStarts] = []
    if mode == "learner" and rng.random() < 0.3:
        extra["opponents"] = _FaultyOpponent(rng)
        faults.append(extra["opponents"])
    with_starts = rng.random() < 0.3

    def make_with(rules: Rules) -> VectorEnv:
        if with_starts:
            extra["episode_starts"] = _FaultyStarts(rng, rules.players, mode == "learner")
        return VectorEnv(size, rules, mode=mode, episode=episode, seed=seed, **extra)

    def start(rules: Rules) -> tuple[VectorEnv, Any]:
        venv = make_with(rules)
        return venv, venv.reset()[1]

    rules, (venv, masks) = _started(rng, start, BatchError)

    def make() -> VectorEnv:
        return make_with(rules)

    if with_starts:
        faults.append(extra["episode_starts"])
    for _ in range(rng.randrange(ENV_STEPS)):
        masks = venv.step(_random_actions(rng, masks))[1]
    for fault in faults:
        fault.share = rng.choice((0.1, 0.5))
    reset = rng.random() < 0.2
    illegal: list[int] | None = None
    seeds: list[int | None] | None = None
    if reset:
        value = (
            _mutated_seed(rng) if rng.random() < 0.5 else [_mutated_seed(rng) for _ in range(size)]
        )
        seeds = _vector_seeds(value, size)
        valid = value is None or seeds is not None
        what = f"reset({value!r})"
    else:
        value = _mutated_actions(rng, _random_actions(rng, masks), masks.shape[1])
        illegal = _illegal_slots(value, masks)
        valid = illegal is not None and (not illegal or lenient)
        what = f"actions {value!r}"

    def attempt(call: Callable[[], Any], what: str, may: bool) -> Any:
        return _attempt(call, what, may, faults, venv.get_state, BatchError)

    def take() -> None:
        out = attempt(lambda: venv.reset(value) if reset else venv.step(value), what, not valid)
        if out is None and not valid:
            raise BatchError(f"{what} was refused")  # counted as the refusal it was
        if out is not None and not valid:
            raise Finding(f"{what} was taken; the docs give BatchError")
        if out is not None and seeds is not None and mode == "self_play" and not with_starts:
            # (Learner mode: the opponents' streams differ; episode_starts: its seeds.)
            again = make().reset([seed for seed in seeds if seed is not None])  # no None here
            if any((a != b).any() for a, b in zip(again, out, strict=True)):
                raise Finding(f"{what} dealt other games than reset({seeds})")
        for slot in illegal if out is not None and illegal else []:
            rewards, terminated, infos = out[3], out[4], out[6]
            if not (rewards[slot] == reward and terminated[slot] and infos["illegal_action"][slot]):
                raise Finding(
                    f"{what}: slot {slot}'s illegal action gave reward {rewards[slot]}, "
                    f"terminated {terminated[slot]}"
                )

        _played_on(lambda: _play_slots(rng, venv, attempt))

    classify(tally, take, (BatchError,), label, valid=valid)


def _reset_mask_taken(options: Any, size: int) -> bool:
    """Whether ``gymnasium.make_vec``'s env takes ``reset(options=options)`` after a
    first reset, by its docs: None, or a dict whose ``reset_mask``, if any, is a numpy
    bool array of one per slot with a True."""
    import numpy as np

    if options is None:
        return True
    if not isinstance(options, dict):
        return False
    mask = options.get("reset_mask", np.ones(size, bool))
    return (
        isinstance(mask, np.ndarray)
        and mask.shape == (size,)
        and mask.dtype == np.bool_
        and bool(mask.any())
    )


def _make_vec_state(envs: Any) -> tuple[Any, ...]:
    """What a refused step or reset of ``gymnasium.make_vec``'s env must leave as it was:
    the batch's slots, each slot's random stream and seeds, and which slots reset on
    the next step."""
    streams = [None if s is None else repr(s.bit_generator.state) for s in envs._streams]
    return (
        envs.venv.get_state(), streams, list(envs._first_seeds), list(envs._stream_seeds),
        envs._resetting.tolist(),
    )  # fmt: skip


def _play_slots(
    rng: random.Random,
    envs: Any,
    attempt: Callable[[Callable[[], Any], str, bool], Any] | None = None,
) -> None:
    """Legal play for up to :data:`ENV_STEPS` steps of a vector env that gives its masks
    by ``action_masks()`` and takes one action per slot by ``step`` (``VectorEnv``,
    ``make_vec``'s env, the SB3 view), each step through ``attempt(step, what, False)``
    where given (a faulty callable's refused answer or failure); a slot with no legal
    action is a finding."""
    for step in range(rng.randrange(1, ENV_STEPS)):
        masks = envs.action_masks()
        if not masks.any(1).all():
            raise Finding(f"after step {step}, a slot has no legal action")
        actions = _random_actions(rng, masks)
        if attempt is None:
            envs.step(actions)
        else:
            attempt(lambda: envs.step(actions), f"step {step + 1}", False)  # noqa: B023


def _trial_make_vec(rng: random.Random, tally: Tally, label: str) -> None:
    """A mutated ``step`` or ``reset`` (its seed or options) of ``gymnasium.make_vec``'s
    env under way; three times in ten beside an opponent that answers badly now and
    then."""
    import gymnasium
    import numpy as np
    from gymnasium.vector import AutoresetMode

    from matador_env import GYM_ID
    from matador_env.batch import BatchError

    size, episode = rng.randint(1, 3), rng.choice(("hand", "match"))
    mode = rng.choice((AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP))
    reward = rng.choice((-1.0, -2.5))
    faults = [_FaultyOpponent(rng)] if rng.random() < 0.3 else []
    extra: dict[str, Any] = {"opponents": faults[0]} if faults else {}

    def make_with(rules: Rules) -> Any:
        return gymnasium.make_vec(
            GYM_ID, num_envs=size, vectorization_mode="vector_entry_point", rules=rules,
            episode=episode, autoreset_mode=mode, illegal_reward=reward, **extra,
        )  # fmt: skip

    def start(rules: Rules) -> Any:
        envs = make_with(rules)
        envs.reset(seed=rng.randrange(2**32))
        return envs

    rules, envs = _started(rng, start, BatchError)
    for _ in range(rng.randrange(ENV_STEPS)):
        envs.step(_random_actions(rng, envs.action_masks()))
    for fault in faults:
        fault.share = rng.choice((0.1, 0.5))
    masks = envs.action_masks()
    kind = rng.choice(("seed", "seed", "options", "step", "step"))
    seeds: list[int | None] | None = None
    illegal: list[int] | None = None
    value: Any
    if kind == "seed":
        value = _mutated_seed(rng)
        if rng.random() < 0.5:
            value = [_mutated_seed(rng) for _ in range(size)]
        seeds = _vector_seeds(value, size, nones=True)
        valid, what = value is None or seeds is not None, f"reset(seed={value!r})"
    elif kind == "options":
        value = rng.choice([
            random_value(rng), {"reset_mask": random_value(rng)}, {"other": 1},
            {"reset_mask": np.array([rng.random() < 0.5 for _ in range(size)])},
            {"reset_mask": [True] * size}, {"reset_mask": np.ones(size + 1, bool)},
        ])  # fmt: skip
        valid, what = _reset_mask_taken(value, size), f"reset(options={value!r})"
    else:
        value = _mutated_actions(rng, _random_actions(rng, masks), masks.shape[1])
        illegal = _illegal_slots(value, masks)
        valid, what = illegal is not None, f"actions {value!r}"
    resetting = envs._resetting.copy()  # those slots' actions are ignored

    def attempt(call: Callable[[], Any], what: str, may: bool) -> Any:
        return _attempt(call, what, may, faults, lambda: _make_vec_state(envs), ValueError)

    calls = {"seed": lambda: envs.reset(seed=value), "options": lambda: envs.reset(options=value)}

    def take() -> None:
        out = attempt(calls.get(kind, lambda: envs.step(value)), what, not valid)
        if out is None and not valid:
            raise ValueError(f"{what} was refused")  # counted as the refusal it was
        if out is not None and not valid:
            raise Finding(f"{what} was taken; the docs give ValueError")
        if out is not None and seeds is not None and None not in seeds and not faults:
            # (A faulty opponent draws its moves from the campaign's stream.)
            again = make_with(rules).reset(seed=[s for s in seeds if s is not None])
            if not np.array_equal(again[0], out[0]):
                raise Finding(f"{what} dealt other games than reset(seed={seeds})")
        for slot in illegal if out is not None and illegal else []:
            if not resetting[slot] and not (out[1][slot] == reward and out[2][slot]):
                raise Finding(
                    f"{what}: slot {slot}'s illegal action gave reward {out[1][slot]}, "
                    f"terminated {out[2][slot]}"
                )

        _played_on(lambda: _play_slots(rng, envs, attempt))

    classify(tally, take, (ValueError,), label, valid=valid)


def _sb3_options_taken(options: Any, size: int) -> bool:
    """Whether ``sb3_vec_env``'s ``set_options`` takes ``options``, by its docs: None,
    ``{}``, or a list or tuple of one empty dict per slot (the vector env takes no reset
    options)."""
    if options is None or (isinstance(options, dict) and not options):
        return True
    return (
        isinstance(options, (list, tuple))
        and len(options) == size
        and all(isinstance(o, dict) and not o for o in options)
    )


def _mutated_indices(rng: random.Random, size: int) -> Any:
    """``indices`` for ``sb3_vec_env``'s ``get_attr`` and kin: slots in each integer form
    and sequence, slots out of range, and no integers."""
    import numpy as np

    slot = rng.randrange(-size, size)
    return rng.choice([
        None, slot, _integer_forms(rng, slot % size), size, -size - 1, 2**64,
        [rng.randrange(size) for _ in range(rng.randrange(4))], (slot,), range(size),
        np.array([slot, 0]), [0, size], True, np.bool_(False), "0", float(slot), [0.0],
        np.zeros((1, 1), int), {0}, random_value(rng),
    ])  # fmt: skip


def _sb3_slots(indices: Any, size: int) -> list[int] | tuple[type[Exception], ...]:
    """The slots ``indices`` names by ``sb3_vec_env``'s docs (None: all; a slot, or a
    list, tuple, range or 1-d array of them, each an integer from ``-size`` to ``size -
    1``), or the errors they give where they refuse it: ``IndexError`` for a slot out of
    range, ``TypeError`` for no integer (either, where both are there)."""
    import numpy as np

    if indices is None:
        return list(range(size))
    if _is_integer(indices):
        rows: list[Any] = [indices]
    elif isinstance(indices, (list, tuple, range)) or (
        isinstance(indices, np.ndarray) and indices.ndim == 1
    ):
        rows = list(indices)
    else:
        return (TypeError,)
    errors: tuple[type[Exception], ...] = ()
    if not all(_is_integer(row) for row in rows):
        errors += (TypeError,)
    if any(_is_integer(row) and not -size <= int(row) < size for row in rows):
        errors += (IndexError,)
    return errors or [int(row) % size for row in rows]


def _trial_sb3(rng: random.Random, tally: Tally, label: str) -> None:
    """A mutated input of ``sb3_vec_env``'s stable-baselines3 view of a learner-mode
    ``VectorEnv`` under way: actions (``step_async``, then ``step_wait``), a ``seed``,
    reset options, the ``indices`` of ``get_attr`` and kin, or a ``step_wait`` with no
    actions."""
    import numpy as np

    from matador_env.batch import BatchError
    from matador_env.vector import VectorEnv, sb3_vec_env

    size, episode, seed = rng.randint(1, 3), rng.choice(("hand", "match")), rng.randrange(2**32)
    lenient = rng.random() < 0.5
    reward = rng.choice((-1.0, -2.5))
    extra: dict[str, Any] = {"illegal_reward": reward} if lenient else {}

    def start(rules: Rules) -> Any:
        venv = VectorEnv(size, rules, mode="learner", episode=episode, seed=seed, **extra)
        sb3 = sb3_vec_env(venv)
        sb3.reset()
        return sb3

    _, sb3 = _started(rng, start, BatchError)
    for _ in range(rng.randrange(ENV_STEPS)):
        masks = sb3.action_masks()
        if not masks.any(1).all():
            break  # a finding of the play after the input, not of this setup
        sb3.step(_random_actions(rng, masks))

    def state() -> tuple[Any, ...]:
        return sb3.venv.get_state(), list(sb3._seeds), copy.deepcopy(sb3._options)

    before, masks = state(), sb3.action_masks()
    kind = rng.choice(("step", "step", "seed", "options", "indices", "wait"))
    value: Any = None
    method = ""
    slots: list[int] | tuple[type[Exception], ...] = []
    illegal: list[int] | None = None
    if kind == "step":
        value = _mutated_actions(rng, _random_actions(rng, masks), masks.shape[1])
        illegal = _illegal_slots(value, masks)
        valid = illegal is not None and (not illegal or lenient)
        expected: tuple[type[Exception], ...] = () if valid else (BatchError,)
        what = f"actions {value!r}"
    elif kind == "seed":
        value = _mutated_seed(rng)
        valid = value is None or (_is_integer(value) and 0 <= int(value) <= 2**64 - size)
        expected, what = () if valid else (BatchError,), f"seed({value!r})"
    elif kind == "options":
        value = rng.choice([
            None, {}, [{}] * size, ({},) * size, [{}] * (size + 1), [{"x": 1}] * size,
            {"reset_mask": np.ones(size, bool)}, random_value(rng),
        ])  # fmt: skip
        valid = _sb3_options_taken(value, size)
        expected, what = () if valid else (BatchError,), f"set_options({value!r})"
    elif kind == "indices":
        value = _mutated_indices(rng, size)
        slots = _sb3_slots(value, size)
        method = rng.choice(("env_method", "get_attr", "set_attr", "env_is_wrapped"))
        valid = isinstance(slots, list)
        expected = () if isinstance(slots, list) else slots
        what = f"{method}(indices={value!r})"
    else:
        valid, expected, what = False, (RuntimeError,), "step_wait() with no step_async"

    def call() -> Any:
        if kind == "step":
            sb3.step_async(value)
            return sb3.step_wait()
        if kind == "seed":
            return sb3.seed(value)
        if kind == "options":
            return sb3.set_options(value)
        if kind == "wait":
            return sb3.step_wait()
        if method == "env_method":
            return sb3.env_method("action_masks", indices=value)
        if method == "get_attr":
            return sb3.get_attr("num_envs", value)
        if method == "set_attr":
            return sb3.set_attr("render_mode", None, value)
        return sb3.env_is_wrapped(object, value)

    def take() -> None:
        try:
            out = call()
        except Exception as exc:
            if not isinstance(exc, expected):
                shown = " or ".join(e.__name__ for e in expected) or "taken"
                raise Finding(
                    f"{what}: {type(exc).__name__}: {exc}; the docs give: {shown}"
                ) from None
            if state() != before:
                raise Finding(f"{what} was refused, but changed the environment") from None
            if kind == "step":
                try:
                    sb3.step_wait()
                except RuntimeError:
                    pass
                else:
                    raise Finding(f"{what} was refused, then played by the next step_wait")
            raise
        if expected:
            raise Finding(f"{what} was taken; the docs give {expected[0].__name__}")
        if kind == "seed":
            seeds = out if value is None else [int(value) + i for i in range(size)]
            if out != seeds or sb3._seeds != seeds:
                raise Finding(f"{what} gave the slots the seeds {out}, not {seeds}")
            sb3.reset()
            if sb3.venv.get_state()["base_seeds"] != seeds:
                raise Finding(f"{what}: the next reset dealt from other seeds than {seeds}")
        if kind == "options":
            sb3.reset()
        for slot in illegal if kind == "step" and illegal else []:
            if not (out[1][slot] == reward and out[2][slot]):
                raise Finding(
                    f"{what}: slot {slot}'s illegal action gave reward {out[1][slot]}, "
                    f"done {out[2][slot]}"
                )
        if kind == "indices" and method in ("env_method", "get_attr", "env_is_wrapped"):
            assert isinstance(slots, list)
            want = {
                "env_method": [masks[s] for s in slots], "get_attr": [size] * len(slots),
                "env_is_wrapped": [False] * len(slots),
            }[method]  # fmt: skip
            same = len(out) == len(want) and all(
                np.array_equal(a, b) for a, b in zip(out, want, strict=True)
            )
            if not same:
                raise Finding(f"{what} gave {out!r}, not the slots {slots}")

        _played_on(lambda: _play_slots(rng, sb3))

    classify(tally, take, (BatchError, TypeError, IndexError, RuntimeError), label, valid=valid)


@contextlib.contextmanager
def _quiet_pettingzoo() -> Iterator[None]:
    """PettingZoo's warnings (``env()`` prints one for each illegal action it takes) kept
    out of the run's output, and out of its logger's queue, which keeps them all."""
    from pettingzoo.utils.env_logger import EnvLogger  # type: ignore[import-untyped]

    printing = EnvLogger._output
    EnvLogger.suppress_output()
    try:
        yield
    finally:
        if printing:
            EnvLogger.unsuppress_output()
        EnvLogger.flush()


def trial_env(rng: random.Random, tally: Tally, label: str) -> None:
    kind = rng.choice(ENV_SURFACES)
    if kind == "vector":
        _trial_vector(rng, tally, label)
        return
    if kind == "make_vec":
        _trial_make_vec(rng, tally, label)
        return
    if kind == "sb3":
        _trial_sb3(rng, tally, label)
        return
    with _quiet_pettingzoo():
        _trial_one_env(rng, tally, label, kind)


# -- running -------------------------------------------------------------------------------

PERFT_DEPTHS = 3
"""The depths a perft trial keeps of its case: a mutated position (earlier moves cut,
other rules) may have a tree far wider than the stored one."""


def _json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path (keys and indices) to every part nested in ``value``."""
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return
    for key, item in items:
        yield (*prefix, key)
        yield from _json_paths(item, (*prefix, key))


def trial_perft(rng: random.Random, tally: Tally, label: str, cases: list[dict[str, Any]]) -> None:
    case = copy.deepcopy(rng.choice(cases))
    case["perft"] = case["perft"][:PERFT_DEPTHS]
    edits = rng.randrange(4)  # none: the case as shipped, which must count as stored
    for _ in range(edits):
        paths = list(_json_paths(case))
        if not paths:
            break
        *parents, key = rng.choice(paths)
        holder = _at(case, parents)
        k = rng.randrange(5)
        if k == 0 and isinstance(holder, dict):
            del holder[key]
        elif k == 1 and isinstance(holder[key], str):
            holder[key] = mutate_text(rng, holder[key])
        else:
            holder[key] = random_json(rng)

    def count() -> None:
        counted = count_rows(case)
        stored = stored_counts(case)
        for row in stored:
            if not all(type(n) is int and n >= 0 for n in [*row[:6], *row.side_points]):
                raise Finding(f"a stored row accepted with other than counts: {row}")
        if edits == 0 and counted != stored:
            raise Finding(f"{case['name']}: the shipped case counts otherwise")

    classify(tally, count, (ValueError,), label, valid=edits == 0)


CAMPAIGNS = (
    "play", "rules", "apply", "view", "record", "public", "protocol", "policy", "bot", "perft",
    "state", "live", "env",
)  # fmt: skip
HTTP = "http"


def _budget(seconds: float | None, count: int | None) -> Iterator[int]:
    """Trial numbers until ``count`` of them or ``seconds``, whichever ends first, but at
    least one: a campaign that tried nothing would report that it found nothing."""
    deadline = time.monotonic() + seconds if seconds is not None else None
    i = 0
    while (count is None or i < count) and (
        deadline is None or i == 0 or time.monotonic() < deadline
    ):
        yield i
        i += 1


def run_campaign(
    name: str,
    seed: int,
    seconds: float | None = None,
    count: int | None = None,
    progress: bool = False,
    trials: list[int] | None = None,
    before_trial: Callable[[int, Tally], None] | None = None,
) -> Tally:
    """One campaign for ``seconds`` or ``count`` trials, at least one (``trials``:
    exactly those). ``before_trial(i, tally)`` is told of each trial before it runs,
    with the counts so far.

    Trial ``i`` draws everything from ``random.Random(f"{seed}/{name}/{i}")``, so
    a finding is reproduced by its seed, campaign and trial number alone.
    """
    tally = Tally()
    extra: list[Any] = []
    cleanup: Callable[[], None] = lambda: None  # noqa: E731
    if name == "policy":
        scratch = _PolicyFolder()
        extra, cleanup = [scratch], scratch.close
    elif name == "bot":
        extra = [[load_bot("trained"), load_bot("random"), load_bot("greedy")]]
    elif name == "perft":
        extra = [read_perft_file()]
    elif name == "live":
        pools = _LivePools()
        extra, cleanup = [pools], pools.close
    # The trials take different extra arguments (``extra`` above).
    steps: dict[str, Callable[..., None]] = {
        "play": trial_play,
        "rules": trial_rules,
        "apply": trial_apply,
        "view": trial_view,
        "record": trial_record,
        "public": trial_public,
        "protocol": trial_protocol,
        "policy": trial_policy,
        "bot": trial_bot,
        "perft": trial_perft,
        "state": trial_state,
        "live": trial_live,
        "env": trial_env,
    }
    step = steps[name]
    indices: Iterator[int] = iter(trials) if trials is not None else _budget(seconds, count)
    bar = None
    if progress:
        bar = progress_bar(total=count, desc=f"{name:8}", unit=" inputs", leave=False)
    try:
        for i in indices:
            if before_trial is not None:
                before_trial(i, tally)
            rng = random.Random(f"{seed}/{name}/{i}")
            step(rng, tally, f"trial {i}", *extra)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(found=tally.findings, refresh=False)
    finally:
        cleanup()
        if bar is not None:
            bar.close()
    return tally


def _campaign_process(
    send: Any,
    where: Any,
    name: str,
    seed: int,
    seconds: float | None,
    count: int | None,
    progress: bool,
    trials: list[int] | None,
) -> None:
    """The body of a campaign's own process: :func:`run_campaign`, which keeps
    ``where`` (shared memory: the trial about to run, then the tried, accepted,
    refused and findings counts before it) up to date, and sends each finding's text as it is
    found (``("found", text)``: the trial that kills the process may come after the
    one that corrupted its memory), then its tally (``("done", tally)``)."""
    sent = 0

    def before_trial(i: int, tally: Tally) -> None:
        nonlocal sent
        where[:] = [i, tally.tried, tally.accepted, tally.refused, tally.findings]
        for example in tally.examples[sent:]:
            send.send(("found", example))
        sent = len(tally.examples)

    try:
        tally = run_campaign(name, seed, seconds, count, progress, trials, before_trial)
    except KeyboardInterrupt:  # Ctrl-C reached the whole group: the run reports it
        raise SystemExit(130) from None
    send.send(("done", tally))


def run_guarded(
    name: str,
    seed: int,
    seconds: float | None = None,
    count: int | None = None,
    progress: bool = False,
    trials: list[int] | None = None,
    process: Callable[..., None] | None = None,
) -> Tally:
    """:func:`run_campaign` in a process of its own, so that a trial that kills it (a
    compiled kernel writing past its arrays, which glibc aborts on; a crash in a
    native library) is reported as a finding with the counts and findings of the
    trials before it, and the run goes on with the other campaigns: in the run's own
    process it ended the whole run with nothing printed. (Spawned, not forked: the
    run's process may hold threads, and the trials run numba's parallel kernels.)
    ``process``: what that process runs, :func:`_campaign_process` unless a test's
    stand-in (a module-level function, which the new process imports)."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    where = ctx.RawArray("q", [-1, 0, 0, 0, 0])
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(
        target=process or _campaign_process,
        args=(send, where, name, seed, seconds, count, progress, trials),
        daemon=True,
    )
    child.start()
    send.close()
    found: list[str] = []
    tally: Tally | None = None
    try:
        while tally is None:
            try:
                kind, value = receive.recv()
            except EOFError:  # it died before its tally
                break
            if kind == "found":
                found.append(value)
            else:
                tally = value
        child.join()
    except BaseException:
        child.terminate()
        child.join()
        raise
    code = child.exitcode or 0
    if tally is not None and code == 0:
        return tally
    how = f"signal {signal.Signals(-code).name}" if code < 0 else f"exit status {code}"
    if tally is not None:
        # Heap corruption is often caught only when the process frees it, at its exit.
        tally.findings += 1
        tally.examples.append(
            f"after its last trial, the campaign's process died ({how}): one of its "
            "trials corrupted memory; rerun them in smaller sets to find which"
        )
        return tally
    trial, tried, accepted, refused, findings = where[:]
    if trial < 0:  # its setup (a campaign's files, say) failed: its traceback is above
        return Tally(findings=1, examples=[f"before trial 0: the campaign's process died ({how})"])
    return Tally(
        tried=tried + 1,
        accepted=accepted,
        refused=refused,
        findings=findings + 1,
        examples=[
            *found,
            f"trial {trial}: the campaign's process died ({how}); if that trial alone "
            "does not kill it, one before it corrupted memory (rerun them in smaller sets); "
            "the counts are those of the trials before it, less the errors they met",
        ],
    )


def run_http(seconds: float, seed: int) -> Tally | str:
    """The HTTP campaign of ``benchmarks/fuzz_http.py``, or why it did not run."""
    try:
        from benchmarks.fuzz_http import run_http_campaign
    except ImportError as exc:
        return f"not available ({exc})"
    examples: list[str] = []
    counts = run_http_campaign(seconds=seconds, seed=seed, examples=examples)
    tally = Tally(
        tried=int(counts.get("tried", 0)),
        accepted=int(counts.get("accepted", 0)),
        refused=int(counts.get("refused", 0)),
        findings=int(counts.get("findings", 0)),
    )
    details = {
        k: v for k, v in counts.items() if k not in ("tried", "accepted", "refused", "findings")
    }
    if details:
        tally.errors = {k: int(v) for k, v in details.items()}
    if tally.findings:
        # What was sent and answered, and where to look: the counts alone name no input.
        tally.examples += [example[:600] for example in examples[:5]]
        tally.examples.append(f"see python -m benchmarks.fuzz_http --seed {seed}: {counts}")
    return tally


def format_table(results: dict[str, Tally | str], seconds: dict[str, float]) -> str:
    head = f"{'campaign':10} {'tried':>9} {'accepted':>9} {'refused':>9} {'findings':>9} {'s':>6}"
    lines = [head, "-" * len(head)]
    total = Tally()
    for name, result in results.items():
        if isinstance(result, str):
            lines.append(f"{name:10} {result}")
            continue
        total.add(result)
        lines.append(
            f"{name:10} {result.tried:9d} {result.accepted:9d} {result.refused:9d} "
            f"{result.findings:9d} {seconds.get(name, 0):6.1f}"
        )
    lines.append("-" * len(head))
    lines.append(
        f"{'total':10} {total.tried:9d} {total.accepted:9d} {total.refused:9d} "
        f"{total.findings:9d} {sum(seconds.values()):6.1f}"
    )
    refusals = [
        f"  {name}: " + ", ".join(f"{k} {v}" for k, v in sorted(r.errors.items()))
        for name, r in results.items()
        if isinstance(r, Tally) and r.errors
    ]
    if refusals:
        lines += ["", "refused with (documented errors; for http, its own counts):", *refusals]
    found = [
        f"  {name} {example}"
        for name, r in results.items()
        if isinstance(r, Tally)
        for example in r.examples
    ]
    lines += ["", "found:" if found else "found: nothing", *found]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.fuzz", description=__doc__.split("\n\n")[0]
    )
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument(
        "--seconds", type=positive_number, default=None, help="total time (default 60)"
    )
    limit.add_argument(
        "--count", type=positive_int, default=None, help="trials per campaign instead"
    )
    parser.add_argument(
        "--seed",
        type=seed_arg,
        default=0,
        help="seed of the trials; with --campaign and --trial it reruns a finding (default 0)",
    )
    parser.add_argument(
        "--campaign",
        nargs="+",
        choices=[*CAMPAIGNS, HTTP],
        default=None,
        help="the campaigns to run (default: all; with --trial all but http)",
    )
    parser.add_argument(
        "--trial",
        type=int_at_least(0),
        nargs="+",
        help="rerun exactly these trials (of every campaign run but http, whose server "
        "runs for its time and numbers no trials)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.trial and args.campaign and HTTP in args.campaign:
        # It ran for its share of the time, whatever the trials asked.
        parser.error("--trial: the http campaign numbers no trials; give --campaign without it")
    if args.campaign is None:
        args.campaign = [*CAMPAIGNS] if args.trial else [*CAMPAIGNS, HTTP]
    if args.seconds is None and args.count is None:
        args.seconds = 60.0
    share = args.seconds / len(args.campaign) if args.seconds is not None else None
    results: dict[str, Tally | str] = {}
    took: dict[str, float] = {}
    for name in args.campaign:
        start = time.monotonic()
        if name == HTTP:
            results[name] = run_http(share if share is not None else 5.0, args.seed)
        else:
            results[name] = run_guarded(
                name, args.seed, share, args.count, not args.no_progress, args.trial
            )
        took[name] = time.monotonic() - start
    if args.trial:
        budget = "trials " + " ".join(map(str, args.trial))
    elif args.count is not None:
        budget = f"{args.count} trials per campaign"
    else:
        budget = f"{args.seconds:g} s"
    print(f"python -m benchmarks.fuzz --seed {args.seed}: {budget}")
    print(format_table(results, took))
    found = sum(r.findings for r in results.values() if isinstance(r, Tally))
    return 1 if found else 0


if __name__ == "__main__":
    run_main(main)
