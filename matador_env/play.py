"""Play Matador in the terminal against bots: a hand, or a match to the target.

::

    python -m matador_env.play                              # a hand of standard vs the trained bot
    python -m matador_env.play --level greedy --match       # a match to 100 against greedy
    python -m matador_env.play --preset leiden --level greedy
    python -m matador_env.play --preset polish --players 3 --level random --seat 1
    python -m matador_env.play --config pagat_teams         # 4 players in teams, trained bots
    python -m matador_env.play --level random --match --target 30 --seed 7

Options: ``--preset`` (a rules preset, default standard), ``--level`` (a bot level
of :mod:`matador_env.bot`: random, greedy, casual, trained; casual and trained
wherever a trained bot is shipped for the resulting rules, that is for the
configurations of :mod:`matador_env.configs` listed by ``--list``, with their
rules unchanged), ``--players`` and ``--teams`` (two partnerships; four
players only, so with ``--players 4``), ``--config`` (a configuration by name,
e.g. ``standard_4p`` or ``pagat_teams``, instead of ``--preset``, ``--players``
and ``--teams``), ``--match``
(hands until the match target), ``--target`` (the match target, ``target_score``),
``--seat`` (your seat, default 0), ``--seed`` (the same seed replays the same
deals and bot moves; without it one is picked and printed) and ``--record FILE``
(each hand's record, written as the hand ends, for ``python -m matador_env.replay``;
a path that cannot be a file, such as one under a file, is refused before the game).

Each time you have a choice the table is drawn: what the others did since your
last turn (each move told with the ends as they were when it was made), the
layout with every tile drawn once and its open ends numbered, your hand, the
others' tile counts, the boneyard and, in a match, the score. Its heading's "your
turn N" counts your moves in the hand: the table comes before your Nth, each tile you
drew and each pass one of them. A draw or a pass
that is your only move is made for you and told in one line. Moves that lead to
the same table are listed once (see :func:`distinct_choices`); your choices are
numbered; type

- a number from the list, or a move's text form (``2-5@1>5``, ``3-4@0x``,
  ``draw``, ``pass``; a bare tile such as ``2-5`` when it goes only one way),
- ``t`` to draw the table again, ``?`` or ``help`` for help,
- ``q`` or ``quit`` to leave (end of input, Ctrl-D, leaves too).

``--list`` prints every configuration with the bot levels it has, then every
preset with its source. Bad
input gets a hint and the same question again. Plain ``print``/``input``,
standard library only, so it runs in any terminal and can be driven through
stdin; :func:`main` takes ``argv``, ``stdin``, ``stdout`` and ``stderr`` for tests.

Exit codes: 0 when the game ends or you quit, 2 for bad options (an unknown preset,
impossible rules, a level that cannot play these rules, a ``--record`` path that
cannot be a file: empty, a folder, or under a file), 130 on Ctrl-C, 141 when the
reader of the output goes away, as with ``| head`` (the game stops quietly, its
record kept; 128 + SIGPIPE, the status a shell gives a program a closed pipe stops).
A record that cannot be written for another reason (no permission, say) is told as
the game goes on, which it does without the record.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .bot import LEVELS, Bot, BotError, levels_for, load_bot
from .configs import CONFIGURATIONS, configuration
from .engine import (
    PRESETS,
    End,
    HandState,
    IllegalMoveError,
    MatchState,
    Move,
    MoveParseError,
    Outcome,
    Rules,
    RulesError,
    Termination,
    derive_seed,
    hand_records,
    side_counts,
)
from .engine.tiles import BLANK, BRANCH, CROSS, SPINNER, parse_digits
from .files import atomic_write_text, file_arg, file_problem
from .flags import integer_arg, seed_arg
from .streams import run_main, standard_streams

__all__ = [
    "Choice",
    "Quit",
    "TerminalGame",
    "describe_move",
    "distinct_choices",
    "draw_layout",
    "main",
    "narrate",
    "points_text",
]

PROG = "python -m matador_env.play"
CHOICE_DIGITS = 6
"""The most digits a typed choice may have (no list of moves is nearly that long)."""


def points_text(points: int) -> str:
    """``1 point``, ``6 points``: a score in words, for the narrations."""
    return f"{points} point" if points == 1 else f"{points} points"


class Quit(Exception):
    """The person left (``q``, end of input); the message says how."""


# -- plain-language descriptions ---------------------------------------------------------


def describe_end(end: End) -> str:
    """What an open end is, in words: ``showing 3``, ``needs a blank`` ..."""
    if end.kind is SPINNER:
        return f"spinner side showing {end.value}"
    if end.kind is BRANCH:
        return f"branch showing {end.value}"
    if end.kind is CROSS:
        return f"crosswise, links to {end.value} or {end.value2}"
    if end.kind is BLANK:
        return "needs a blank"
    return f"showing {end.value}"


def is_matador(rules: Rules, move: Move) -> bool:
    tile = move.tile
    return tile is not None and rules.is_matador(tile)


def describe_move(move: Move, ends: Sequence[End], rules: Rules) -> str:
    """A move in words, given the open ends before it, e.g.
    ``2-5 on end 1 (showing 2), 5 outward, a matador``."""
    if move.kind == "draw":
        return "draw a tile from the boneyard"
    if move.kind == "pass":
        return "pass (nothing to place and no draw allowed)"
    assert move.tile is not None
    if move.mode == "lead":
        text = f"lead {move.tile}"
    else:
        assert move.end is not None
        where = f"end {move.end}"
        if move.end < len(ends):
            where += f" ({describe_end(ends[move.end])})"
        if move.mode == "inline":
            text = f"{move.tile} on {where}, {move.shows} outward"
        elif move.mode == "cross":
            text = f"{move.tile} crosswise on {where}"
        else:
            text = f"{move.tile} upright on {where}"
    if is_matador(rules, move):
        text += ", a matador"
    return text


def narrate(who: str, move: Move, ends: Sequence[End], rules: Rules) -> str:
    """One event told as a sentence: ``P1 played 1-6 on end 0 (showing 3), 6 outward``."""
    if move.kind == "draw":
        return f"{who} drew"
    if move.kind == "pass":
        return f"{who} passed"
    text = describe_move(move, ends, rules)
    if move.mode == "lead":
        return f"{who} led {text.removeprefix('lead ')}"
    return f"{who} played {text}"


# -- equivalent moves ------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """One distinct choice: ``move`` stands for itself and the moves in ``alike``."""

    move: Move
    alike: tuple[Move, ...] = ()


def distinct_choices(moves: Sequence[Move], ends: Sequence[End]) -> list[Choice]:
    """The legal moves with equivalent ones merged, in the order of their first member.

    Two moves are equivalent when they lay the same tile in the same way (in line,
    crosswise or upright, with the same half outward) on open ends that look the same
    (equal :class:`End`: the same kind and values). The tables they lead to then differ
    only in the order of the open ends, and every rule reads an end only by its kind and
    values (a free spinner side, a branch end and a needs-a-blank end are kinds of
    their own), so the rest of the hand can go the same way from either. A spinner lead
    with four free sides therefore offers one choice per way of laying a tile, where the
    engine lists four moves."""
    groups: dict[tuple[object, ...], list[Move]] = {}
    for move in moves:
        end = ends[move.end] if move.end is not None and move.end < len(ends) else None
        key = (move.kind, move.tile, move.mode, move.shows, end)
        groups.setdefault(key, []).append(move)
    return [Choice(group[0], tuple(group[1:])) for group in groups.values()]


# -- the layout ---------------------------------------------------------------------------------


@dataclass
class _Placed:
    """A tile in the layout, its halves as seen from the lead outward, and what lies on
    each of its open sides (None: the side is an open end)."""

    text: str
    back: str
    """The tile written from its outer side back towards the lead."""
    sides: list[_Placed | None]
    spinner: bool = False


def _placed(rules: Rules, move: Move, spinner_done: bool) -> _Placed:
    tile = move.tile
    assert tile is not None
    lo, hi = tile
    if move.mode == "lead":
        if rules.spinner != "none" and lo == hi:
            return _Placed(f"[{lo}+{hi}]", f"[{lo}+{hi}]", [None] * 4, spinner=True)
        return _Placed(f"[{lo}|{hi}]", f"[{hi}|{lo}]", [None, None])
    if move.mode == "inline":
        if lo == hi and rules.spinner == "first_double" and not spinner_done:
            return _Placed(f"[{lo}+{hi}]", f"[{lo}+{hi}]", [None, None, None], spinner=True)
        shows = move.shows
        assert shows is not None
        touching = lo + hi - shows
        return _Placed(f"[{touching}|{shows}]", f"[{shows}|{touching}]", [None])
    if move.mode == "upright":
        return _Placed(f"[{lo}^{hi}]", f"[{lo}^{hi}]", [None])
    if rules.matador_placement == "branching":
        return _Placed(f"<{lo}/{hi}>", f"<{lo}/{hi}>", [None, None])
    return _Placed(f"[{lo}/{hi}]", f"[{lo}/{hi}]", [None])


def draw_layout(hand: HandState, width: int = 78) -> str:
    """The layout with every tile drawn once.

    A plain line of play is one line from end 0 to end 1, e.g.
    ``end 0 shows 3  [3|5][2|5][2|4][3|4]  end 1 shows 4``: touching halves side by
    side, so tiles left of the lead read ``[outward|touching]`` and those right of
    it ``[touching|outward]``. A layout with a spinner or branches, or a line too
    long for ``width``, is drawn as a tree from the lead: one line per arm, each
    ending at its open end, its tiles written ``[touching|outward]``.
    Special lies as in :func:`matador_env.engine.render_layout`: ``[2/5]`` crosswise,
    ``<3/4>`` a branching matador, ``[2^5]`` upright, ``[3+3]`` a spinner."""
    rules, ends = hand.rules, hand.ends
    if not ends:
        return "layout: empty (no lead yet)"
    root: _Placed | None = None
    slots: list[tuple[_Placed, int]] = []
    spinner_done = False
    for event in hand.history:
        move = event.move
        if move.kind != "play":
            continue
        child = _placed(rules, move, spinner_done)
        spinner_done = spinner_done or child.spinner
        if move.mode == "lead":
            root = child
            slots = [(root, k) for k in range(len(root.sides))]
            continue
        assert move.end is not None
        node, side = slots[move.end]
        node.sides[side] = child
        slots[move.end : move.end + 1] = [(child, k) for k in range(len(child.sides))]
    assert root is not None and len(slots) == len(ends)
    end_of = {(id(node), side): i for i, (node, side) in enumerate(slots)}

    def label(node: _Placed, side: int) -> str:
        i = end_of[(id(node), side)]
        return f"end {i} shows {ends[i]}"

    def arm(node: _Placed, side: int) -> tuple[list[_Placed], _Placed, int]:
        """The single-sided tiles from this side outward, and where the run stops."""
        run: list[_Placed] = []
        nxt = node.sides[side]
        while nxt is not None and len(nxt.sides) == 1:
            run.append(nxt)
            node, side, nxt = nxt, 0, nxt.sides[0]
        if nxt is not None:
            run.append(nxt)
            node = nxt
            side = -1  # a tile with several sides: the arm forks here
        return run, node, side

    n = len(hand.layout)
    head = f"layout: {n} tile{'s' if n != 1 else ''}, {len(ends)} open end"
    head += "s" if len(ends) != 1 else ""
    if len(root.sides) == 2:
        left, lnode, lside = arm(root, 0)
        right, rnode, rside = arm(root, 1)
        if lside >= 0 and rside >= 0:
            line = (
                f"  {label(lnode, lside)}  "
                + "".join(t.back for t in reversed(left))
                + root.text
                + "".join(t.text for t in right)
                + f"  {label(rnode, rside)}"
            )
            if len(line) <= width:
                return f"{head}\n{line}"
    lines = [head, f"  lead {root.text}"]

    def tree(node: _Placed, side: int, indent: str) -> None:
        run, last, at = arm(node, side)
        tiles = "".join(t.text for t in run)
        if at >= 0:
            lines.append(f"{indent}- {tiles + '  ' if tiles else ''}{label(last, at)}")
            return
        lines.append(f"{indent}- {tiles}")
        for k in range(len(last.sides)):
            tree(last, k, indent + "  ")

    for k in range(len(root.sides)):
        tree(root, k, "  ")
    return "\n".join(lines)


HELP = """\
How to play (Matador; every rule and variant: docs/rules.md in the repository):
- Touching halves must sum to {S}: a tile goes on an end showing 2 with its
  {S2} touching it; its other half then faces outward and the end shows it.
- Matadors ({matadors}) go on any open end, whatever it shows, even a 0;
  you choose which half faces outward. An end showing 0 takes only a matador.
- If you cannot place a tile you draw; if you may not draw either, you pass.
- The hand ends when someone plays his last tile (domino: he scores the pips
  left in the other hands) or when everyone passes in a row (blocked: the lowest
  count wins; partners add their two hands).
Open ends are numbered 0, 1, ... in the layout drawing: "end 1 shows 2" means a
tile placed there must link to a 2. In a one-line drawing touching halves sit
side by side; in a drawing from the lead, one line per arm, tiles read
[touching|outward]. Ends marked 3* are spinner sides, 3b branch ends, 2/5
crosswise ends (link to 2 or 5), _ needs a blank. A draw or pass that is your
only move is made for you.
What to type at the prompt:
  3            the move numbered 3 in the list
  2-5@1>5      a move's text form: tile 2-5 on end 1 with the 5 facing outward
  3-4@0x       crosswise on end 0;  2-5@1^ upright on end 1
  2-5          a tile, when it can go only one way (the lead, or one placement)
  draw, pass   (or d, p) when they are in the list
  t            draw the table again
  ?, help      this help
  q, quit      leave the game"""


# -- the game ------------------------------------------------------------------------------


class TerminalGame:
    """One person and bots at a table, talking through ``ask`` and ``out``."""

    def __init__(
        self,
        rules: Rules,
        bots: dict[int, Bot],
        seat: int,
        seed: int,
        match: bool,
        out: TextIO,
        ask: Callable[[str], str | None],
        label: str,
        record: Path | None = None,
    ) -> None:
        self.rules = rules
        self.bots = bots
        self.seat = seat
        self.seed = seed
        self.match_mode = match
        self.out = out
        self._ask = ask
        self.label = label
        self.state = MatchState.new(rules, seed)
        self.hand_no = 1
        self.seen = 0  # history events of the current hand already told to the person
        self.record = record
        self.finished: list[HandState] = []  # the hands played out
        self.recorded = False  # whether record has been written by this game

    def save_record(self) -> None:
        """Write the record of every hand played so far to ``record`` (a hand left
        unfinished stops where it was left), replacing the file atomically."""
        if self.record is None:
            return
        texts = hand_records(self.finished, self.state.hand)
        if not texts:
            return
        try:
            atomic_write_text(self.record, "\n".join(texts))
        except OSError as exc:  # the game goes on without its record
            self.say(f"Could not write the record to {self.record} ({exc}); recording stops.")
            self.record = None
            return
        self.recorded = True

    # -- output helpers

    def say(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def name(self, seat: int) -> str:
        if seat == self.seat:
            return f"You (P{seat})"
        if self.rules.teams and seat % 2 == self.seat % 2:
            return f"P{seat} (partner)"
        return f"P{seat}"

    def who(self, seat: int) -> str:
        """The subject of a sentence: ``You`` or ``P1``."""
        return "You" if seat == self.seat else f"P{seat}"

    def side_name(self, side: int) -> str:
        if self.rules.teams:
            mine = " (your team)" if side == self.seat % 2 else ""
            return f"team P{side}+P{side + 2}{mine}"
        return self.name(side)

    def ask(self, prompt: str) -> str:
        text = self._ask(prompt)
        if text is None:
            raise Quit("Input ended; leaving the game.")
        return text

    # -- the table

    def since_last_turn(self) -> list[str]:
        """What the others did since the person last acted, oldest first, each move told
        with the open ends as they were when it was made; a seat's draws in a row are
        told once (``P2 drew 3 tiles``)."""
        history = self.state.hand.history
        lines: list[str] = []
        last_drawer, draws = -1, 0
        for event in history[self.seen :]:
            if event.seat == self.seat:
                continue
            who = self.who(event.seat)
            if event.move.kind == "draw" and event.seat == last_drawer:
                draws += 1
                lines[-1] = f"{who} drew {draws} tiles"
            else:
                lines.append(narrate(who, event.move, event.ends, self.rules))
                last_drawer, draws = (event.seat, 1) if event.move.kind == "draw" else (-1, 0)
        self.seen = len(history)
        return lines

    def tell(self, events: list[str]) -> None:
        if events:
            self.say("Since your last turn:")
            for line in events:
                self.say(f"  {line}")

    def draw_table(self, events: list[str]) -> None:
        state, hand, rules = self.state, self.state.hand, self.rules
        turn = sum(1 for e in hand.history if e.seat == self.seat) + 1
        kind = "match hand" if self.match_mode else "hand"
        self.say()
        self.say(f"===== {kind} {self.hand_no} | {self.label} | your turn {turn} =====")
        if self.match_mode:
            self.say(self.score_line(state.totals))
        self.tell(events)
        self.say(draw_layout(hand))
        others = ", ".join(
            f"{self.name(s)} {n} tile{'s' if n != 1 else ''}"
            for s, n in enumerate(hand.hand_sizes)
            if s != self.seat
        )
        drawable = max(0, hand.boneyard_size - rules.boneyard_reserve)
        self.say(f"Others: {others} | boneyard: {hand.boneyard_size} ({drawable} may be drawn)")
        mine = hand.hand(self.seat)
        count = sum(t.pips for t in mine)
        tiles = f"{len(mine)} tile{'s' if len(mine) != 1 else ''}"
        self.say(f"Your hand ({tiles}, count {count}): {' '.join(map(str, mine))}")

    def show_moves(self, choices: Sequence[Choice]) -> None:
        ends = self.state.hand.ends
        self.say("Your moves:")
        for i, choice in enumerate(choices, 1):
            move = choice.move
            text = describe_move(move, ends, self.rules)
            if choice.alike:
                others = ", ".join(str(m.end) for m in choice.alike)
                text += f" (the same on end{'s' if len(choice.alike) > 1 else ''} {others})"
            self.say(f"  {i:>2}) {str(move):<9} {text}")

    def score_line(self, totals: Sequence[int]) -> str:
        """The match score: ``Score after hand 2: You (P0) 34, P1 12 (first to 100 wins;
        you need 66)`` (``before hand 3`` while the next hand is played)."""
        parts = ", ".join(f"{self.side_name(s)} {t}" for s, t in enumerate(totals))
        target = self.rules.target_score
        mine = totals[self.seat % 2 if self.rules.teams else self.seat]
        if self.rules.match_end == "first_to_target":
            end = f"first to {target} wins"
        else:
            end = f"target {target}; once passed, play on until all have led equally often"
        if mine < target:
            end += f"; you need {target - mine}"
        when = "after" if self.state.hand_over else "before"
        return f"Score {when} hand {self.hand_no}: {parts} ({end})"

    # -- the person's turn

    def forced(self) -> Move | None:
        """The person's move when it is a draw or a pass with no alternative."""
        moves = self.state.legal_moves()
        if len(moves) == 1 and moves[0].kind in ("draw", "pass"):
            return moves[0]
        return None

    def person_move(self) -> Move:
        moves = self.state.legal_moves()
        choices = distinct_choices(moves, self.state.hand.ends)
        self.draw_table(self.since_last_turn())
        self.show_moves(choices)
        numbers = "1" if len(choices) == 1 else f"1-{len(choices)}"
        prompt = f"Your move [{numbers}, ? help, q quit]: "
        while True:
            move = self.interpret(self.ask(prompt), choices, moves)
            if move is not None:
                return move

    def hint(self, text: str, choices: Sequence[Choice]) -> None:
        self.say(f"  {text}")
        self.say(
            f"  Type a number from 1 to {len(choices)}, a move such as {choices[0].move}, "
            "? for help or q to quit."
        )

    def interpret(self, text: str, choices: Sequence[Choice], legal: Sequence[Move]) -> Move | None:
        """The move the person's input names, or None after answering with a hint."""
        t = text.strip().lower()
        if not t:
            self.hint("Nothing typed.", choices)
            return None
        if t in ("?", "h", "help"):
            self.say(
                HELP.format(
                    S=self.rules.link_sum,
                    S2=self.rules.link_sum - 2,
                    matadors=matador_names(self.rules),
                )
            )
            self.show_moves(choices)
            return None
        if t in ("q", "quit", "exit"):
            raise Quit("You left the game.")
        if t in ("t", "table"):
            self.draw_table([])
            self.show_moves(choices)
            return None
        # 0-9 alone, and few of them: isdigit() also takes "²" (which int() refuses)
        # and other scripts' digits ("١"); anything else is read as a move below.
        k = parse_digits(t, CHOICE_DIGITS)
        if k is not None:
            if 1 <= k <= len(choices):
                return choices[k - 1].move
            self.hint(f"There is no move {k}: the list goes from 1 to {len(choices)}.", choices)
            return None
        t = {"d": "draw", "p": "pass"}.get(t, t)
        try:
            move = Move.parse(t)
        except MoveParseError as exc:
            self.hint(f"Not understood: {exc}.", choices)
            return None
        if move in legal:
            return move
        hand = self.state.hand
        if move.mode == "lead" and hand.lead_placed and move.tile is not None:
            ways = [(i, c.move) for i, c in enumerate(choices, 1) if c.move.tile == move.tile]
            if len(ways) == 1:
                return ways[0][1]
            if ways:
                listed = "; ".join(f"{i}) {m}" for i, m in ways)
                self.hint(f"{move.tile} can go several ways: {listed}. Pick one.", choices)
                return None
            if move.tile not in hand.hand(self.seat):
                self.hint(f"You do not hold {move.tile}.", choices)
            else:
                self.hint(f"{move.tile} cannot be placed anywhere now.", choices)
            return None
        try:
            hand.apply(move)
        except IllegalMoveError as exc:
            self.hint(f"Not allowed: {exc}.", choices)
            return None
        return move  # not reached: every legal move is in the list

    # -- playing

    def play_hand(self) -> None:
        """Play the current hand to its end, the person and the bots in turn."""
        self.seen = 0
        while not self.state.hand_over:
            seat = self.state.to_move
            if seat == self.seat:
                forced = self.forced()
                if forced is not None:
                    self.tell(self.since_last_turn())
                move = forced or self.person_move()
                before = self.state.hand
                self.state = self.state.apply(move)
                self.seen = len(self.state.hand.history)
                self.say(self.echo(move, before.ends, before.hand(seat), forced is not None))
            else:
                move = self.bots[seat].choose(self.state.view(seat))
                self.state = self.state.apply(move)

    def echo(self, move: Move, ends: Sequence[End], held: Sequence[object], forced: bool) -> str:
        # Before the lead only a double other than 0-0 may open (lead_tile), which a
        # hand holding 0-0, or a matador, does not show at a glance.
        no_lead = forced and not ends and self.rules.lead_tile == "double_not_blank"
        why = ""
        if forced:
            why = (
                " (nothing to lead: the lead must be a double other than 0-0)"
                if no_lead
                else " (nothing to play)"
            )
        if move.kind == "draw":
            new = [t for t in self.state.hand.hand(self.seat) if t not in held]
            return f"You drew {new[0]}{why}." if new else f"You drew{why}."
        if move.kind == "pass" and forced:
            if no_lead:
                return "You pass: no double to lead (0-0 may not) and nothing you may draw."
            return "You pass: nothing to play and nothing you may draw."
        return narrate("You", move, ends, self.rules) + "."

    def show_outcome(self, outcome: Outcome) -> None:
        hand = self.state.hand
        events = self.since_last_turn()
        self.say()
        self.say(f"===== {'match hand' if self.match_mode else 'hand'} {self.hand_no} over =====")
        self.tell(events)
        self.say(draw_layout(hand))
        self.say("Hands left:")
        for seat, tiles in enumerate(hand.hands):
            shown = " ".join(map(str, tiles)) or "-"
            self.say(f"  {self.name(seat)}: {shown} (count {outcome.counts[seat]})")
        self.say(self.outcome_text(outcome))

    def outcome_text(self, outcome: Outcome) -> str:
        t = outcome.termination
        points = points_text(outcome.points)
        if t == Termination.BLOCKED and self.rules.teams:
            # Partners win a block on their two hands added together, which need not
            # hold the lowest single count.
            assert outcome.winning_side is not None
            side = outcome.winning_side
            sums = side_counts(self.rules, outcome.counts)
            return (
                f"Result: the hand is blocked; {self.side_name(side)} has the lower count, "
                f"{sums[side]} against {sums[1 - side]}, and wins {points}."
            )
        if t in (Termination.DOMINO, Termination.BLOCKED):
            assert outcome.winner is not None
            mine = outcome.winner == self.seat
            verb, has = ("win", "have") if mine else ("wins", "has")
            if t == Termination.BLOCKED:
                subject = "you" if mine else self.who(outcome.winner)
                return (
                    f"Result: the hand is blocked; {subject} {has} the lowest count and "
                    f"{verb} {points}."
                )
            team = ""
            if self.rules.teams:
                assert outcome.winning_side is not None
                team = f" for {self.side_name(outcome.winning_side)}"
            return (
                f"Result: {self.who(outcome.winner)} played the last tile (domino) and "
                f"{verb} {points}{team}."
            )
        shared = (
            f"the teams' counts level at {side_counts(self.rules, outcome.counts)[0]}"
            if self.rules.teams
            else "the lowest count shared"
        )
        if t == Termination.VOID_TIE:
            return f"Result: blocked with {shared}: nobody scores."
        if t == Termination.REDEAL_TIE:
            return f"Result: blocked with {shared}: the hand is dealt again."
        return "Result: nobody could lead: the hand is dealt again."

    def run(self) -> None:
        while True:
            self.play_hand()
            outcome = self.state.hand.outcome
            assert outcome is not None
            self.finished.append(self.state.hand)
            self.save_record()
            self.show_outcome(outcome)
            if self.match_mode:
                self.say(self.score_line(self.state.totals))
            if self.state.is_over:
                self.say(self.match_result())
                return
            if not self.match_mode and not outcome.redeal:
                return
            answer = self.ask("Press Enter for the next hand (q to quit): ")
            if answer.strip().lower() in ("q", "quit", "exit"):
                raise Quit("You left the game.")
            self.state = self.state.next_hand()
            self.hand_no += 1

    def match_result(self) -> str:
        winners = self.state.winners or ()
        totals = self.state.totals
        names = " and ".join(self.side_name(s) for s in winners)
        mine = self.seat % 2 if self.rules.teams else self.seat
        verdict = "You win the match!" if mine in winners else "You lose the match."
        if len(winners) > 1:
            verdict = "The match is shared." if mine in winners else verdict
        scores = " to ".join(str(t) for t in sorted(totals, reverse=True))
        # Past tense, which reads right after "You (P0)", "P1" and a team alike.
        won = "won" if len(winners) == 1 else "shared the win"
        return f"Match over: {names} {won} ({scores}). {verdict}"


def matador_names(rules: Rules) -> str:
    s = rules.link_sum
    return ", ".join(
        ["0-0", *(f"{a}-{s - a}" for a in range(1, s // 2 + 1) if s - a <= rules.set_max)]
    )


# -- command line ---------------------------------------------------------------------------


PRESET_NOTES: dict[str, str] = {
    "standard": "the rules the sources share",
    "pagat": "source 000; four players may play in teams",
    "kardinal": "source 001: draw two at most, branching matadors",
    "kardinal_hard": "source 001, hard: draw until you can play",
    "polish": "source 002: upright matadors",
    "leiden": "source 003: a spinner lead, 6 tiles each",
    "double_nine": "a double-nine set, link sum 10",
    "double_twelve": "a double-twelve set, link sum 13",
}
"""One line per preset for ``--list``; docs/rules.md has the full story of each."""


def preset_list() -> str:
    """Every configuration with the bot levels that play it, then every preset."""
    lines = [f"{'configuration':<15}{'bot levels':<33}table"]
    for config in CONFIGURATIONS.values():
        levels = ", ".join(levels_for(config.rules()))
        lines.append(f"{config.name:<15}{levels:<33}{config.describe()}")
    lines += ["", f"{'preset':<15}about"]
    for name in PRESETS:
        lines.append(f"{name:<15}{PRESET_NOTES.get(name, '')}")
    lines += [
        "",
        "Choose a configuration with --config NAME, or --preset, --players and --teams.",
        "casual and trained play a shipped configuration's rules exactly (no --target);",
        "random and greedy play every preset with 2 to 4 players, teams too.",
    ]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Play Matador in the terminal against bots: a hand, or a match to the "
        "target. Type a move's number, its text form, ? for help or q to quit.",
        epilog="Configurations and the bot levels they have, and the presets:\n\n"
        + preset_list()
        + "\n\nThe rules of every preset: docs/rules.md in the matador-env repository.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the configurations with their bot levels and the presets, then exit",
    )
    parser.add_argument(
        "--preset", choices=list(PRESETS), help="the rules preset (default standard)"
    )
    parser.add_argument(
        "--config",
        choices=list(CONFIGURATIONS),
        metavar="NAME",
        help="a configuration (preset, players, teams; see --list), instead of --preset, "
        "--players and --teams: " + ", ".join(CONFIGURATIONS),
    )
    parser.add_argument(
        "--level",
        default="trained",
        choices=list(LEVELS),
        help="the bots' level, weakest first: "
        + "; ".join(f"{k}: {v}" for k, v in LEVELS.items())
        + " (default trained)",
    )
    parser.add_argument(
        "--players", type=integer_arg, help="number of players, 2 to 4 (default: the preset's)"
    )
    parser.add_argument(
        "--teams",
        action="store_true",
        help="two partnerships of two; four players only, so give --players 4 too "
        "(--config pagat_teams is such a table)",
    )
    parser.add_argument("--match", action="store_true", help="play hands to the match target")
    parser.add_argument(
        "--target",
        type=integer_arg,
        help="the match target, with --match (default: the preset's)",
    )
    parser.add_argument("--seat", type=integer_arg, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=seed_arg, help="replay the same deals and bot moves")
    parser.add_argument(
        "--record",
        type=file_arg,
        metavar="FILE",
        help="write each hand's record to FILE as it ends (and the hand you leave, as "
        "far as it went), for python -m matador_env.replay",
    )
    return parser


def make_rules(args: argparse.Namespace) -> Rules:
    if args.config is not None:
        rules = configuration(args.config).rules()
        if args.target is not None:
            rules = rules.replace(target_score=args.target)
        return rules
    overrides: dict[str, object] = {}
    if args.players is not None:
        overrides["players"] = args.players
    if args.teams:
        overrides["teams"] = True
    if args.target is not None:
        overrides["target_score"] = args.target
    return Rules.preset(args.preset, **overrides)


def describe_rules(args: argparse.Namespace, rules: Rules) -> str:
    preset = configuration(args.config).preset if args.config else args.preset
    text = f"{preset}, {rules.players} players"
    if rules.teams:
        text += " in teams"
    if args.match or args.target is not None:
        text += f", target {rules.target_score}"
    return text


def rules_flags(args: argparse.Namespace) -> list[str]:
    """The options that chose the rules, for a hint to run again."""
    flags = ["--config", args.config] if args.config else ["--preset", args.preset]
    if args.players is not None:
        flags += ["--players", str(args.players)]
    if args.teams:
        flags.append("--teams")
    if args.match:
        flags.append("--match")
    if args.target is not None:
        flags += ["--target", str(args.target)]
    return flags


def main(
    argv: Sequence[str] | None = None,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the game; returns the exit code. ``stdin``/``stdout``/``stderr`` default to
    the process's; tests pass ``io.StringIO`` objects."""
    source, out, err = standard_streams(stdin, stdout, stderr)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        out.write(preset_list() + "\n")
        return 0
    if args.config is not None and (args.preset or args.players is not None or args.teams):
        err.write(
            f"{PROG}: error: --config {args.config} chooses the preset, players and teams; "
            "give it without --preset, --players or --teams\n"
        )
        return 2
    if args.target is not None and not args.match:
        # A single hand has no target: it would only keep the trained bot away.
        err.write(f"{PROG}: error: --target: only with --match, which plays hands to it\n")
        return 2
    if args.players is not None and not 2 <= args.players <= 4:
        # More seats need a hand size, which is no option here.
        err.write(f"{PROG}: error: --players {args.players} is not allowed; allowed: 2 to 4\n")
        return 2
    if args.preset is None:
        args.preset = "standard"
    try:
        rules = make_rules(args)
    except RulesError as exc:
        err.write(f"{PROG}: error: impossible rules: {exc}\n")
        return 2
    if not 0 <= args.seat < rules.players:
        err.write(f"{PROG}: error: --seat must be from 0 to {rules.players - 1}\n")
        return 2
    if args.record is not None:
        # Refused now, not after the game it was to keep (the folder is made as it is written).
        problem = file_problem(args.record)
        if problem is not None:
            err.write(f"{PROG}: error: --record {args.record} cannot be written: {problem}\n")
            return 2
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1_000_000)
    bots: dict[int, Bot] = {}
    try:
        for seat in range(rules.players):
            if seat != args.seat:
                bots[seat] = load_bot(args.level, rules=rules, seed=derive_seed(seed, -1 - seat))
    except BotError as exc:
        works = ", ".join(levels_for(rules))
        err.write(
            f"{PROG}: error: level {args.level!r} is not available for "
            f"{describe_rules(args, rules)}.\n"
            f"  {exc}\n"
            f"  Levels that play these rules: {works}. "
            f"E.g.: {PROG} {' '.join(rules_flags(args))} --level greedy\n"
            f"  {PROG} --list shows every configuration and its levels.\n"
        )
        return 2

    # The process's own terminal: input() for line editing. Not when either stream was
    # closed (input() needs both), nor for the streams a test passes.
    interactive = source is sys.stdin and out is sys.stdout
    echo = not _isatty(source)

    def ask(prompt: str) -> str | None:
        if interactive and not echo:
            try:
                return input(prompt)
            except EOFError:
                out.write("\n")
                return None
        out.write(prompt)
        out.flush()
        line = source.readline()
        if not line:
            out.write("\n")
            return None
        line = line.rstrip("\r\n")
        if echo:  # a transcript reads like the session it was
            out.write(line + "\n")
        return line

    label = describe_rules(args, rules) + f", bots: {args.level}"
    out.write(
        f"Matador: {label}. You are P{args.seat}. Seed {seed} (replay with --seed {seed}).\n"
        "Type ? for help, q to quit.\n"
    )
    game = TerminalGame(rules, bots, args.seat, seed, args.match, out, ask, label, args.record)
    code = 0
    try:
        game.run()
    except Quit as exc:
        out.write(f"{exc} Bye.\n")
    except KeyboardInterrupt:
        out.write("\nInterrupted. Bye.\n")
        code = 130
    finally:
        # Whatever ended the game, an error included (the output's reader gone, too),
        # the hands played are kept; only then is it told.
        game.save_record()
        if game.recorded:
            out.write(f"The game's record is in {args.record} (python -m matador_env.replay).\n")
        out.flush()
    return code


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


if __name__ == "__main__":
    run_main(main)
