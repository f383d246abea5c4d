"""Perft: counting every line of play from a position, chess-engine style.

``perft(state, depth)`` walks every sequence of exactly ``depth`` legal actions from
``state`` (placements, draws and passes alike) and counts them, with the hands that
the last action of a sequence ends (by how they ended) and the points each side
scores in them. The counts depend on nothing but the rules as move generation and
scoring read them, so they pin both down: a change that only reorders the legal moves
leaves them alone, and a change that adds or drops a move, or scores a hand
otherwise, moves them. ``matador_env/conformance/perft.json`` holds the
counts of positions under every option of docs/rules.md; an independent
implementation of the rules can check itself against that file (its format is in
docs/rules.md, "Checking an implementation: perft counts").

A hand that ends before ``depth`` actions has no line that long (no legal action
follows the end), as a checkmate has none in chess: it counts at the depth where it
ended and not below. :func:`perft_divide` splits the count by the first action, the
usual way to find the first position where two implementations part.
"""

from __future__ import annotations

from typing import NamedTuple

from .state import HandState, Outcome, Termination
from .tiles import shown_value, whole_number

__all__ = ["Perft", "perft", "perft_divide"]


class Perft(NamedTuple):
    """The counts of one perft walk: its lines, the hands they end by how each ended,
    and what those hands score."""

    lines: int
    """Sequences of exactly ``depth`` legal actions (1 for depth 0)."""
    domino: int
    """Of those, the ones whose last action ends the hand with a domino (a seat laid
    its last tile); likewise for the other ways a hand ends (``Termination``):"""
    blocked: int
    void_tie: int
    redeal_tie: int
    no_lead: int
    side_points: tuple[int, ...]
    """Per side (a seat, or with teams a partnership), the points it scores
    (``Outcome.side_points``) summed over the hands those lines end."""

    @property
    def hands_ended(self) -> int:
        """The lines whose last action ends the hand, however it ended."""
        return self.domino + self.blocked + self.void_tie + self.redeal_tie + self.no_lead

    @classmethod
    def none(cls, sides: int) -> Perft:
        """No lines at all: what a finished hand has at depth 1 or more."""
        return cls(0, 0, 0, 0, 0, 0, (0,) * sides)

    def __add__(self, other: object) -> Perft:
        # Counts add field by field; a NamedTuple's own + would concatenate the tuples.
        if not isinstance(other, Perft):
            return NotImplemented
        return Perft(
            self.lines + other.lines,
            self.domino + other.domino,
            self.blocked + other.blocked,
            self.void_tie + other.void_tie,
            self.redeal_tie + other.redeal_tie,
            self.no_lead + other.no_lead,
            tuple(a + b for a, b in zip(self.side_points, other.side_points, strict=True)),
        )


# The termination fields of Perft are Termination.ALL, in that order.
assert Perft._fields[1:6] == Termination.ALL


def _checked_depth(depth: object) -> int:
    value = whole_number(depth)
    if value is None or value < 0:
        raise ValueError(f"depth: expected an integer of 0 or more, got {shown_value(depth)}")
    return value


def _check_state(state: object) -> None:
    if not isinstance(state, HandState):
        raise ValueError(f"state: expected a HandState, got {type(state).__name__}")


_ENDING = {termination: 1 + i for i, termination in enumerate(Termination.ALL)}
"""Where each termination is counted in a walk's tally (after the lines, at 0)."""


def _walk(state: HandState, depth: int) -> Perft:
    sides = state.rules.sides
    tally = [0] * (1 + len(Termination.ALL))
    points = [0] * sides

    def count(outcome: Outcome | None) -> None:
        tally[0] += 1
        if outcome is not None:
            tally[_ENDING[outcome.termination]] += 1
            if outcome.winning_side is not None:
                points[outcome.winning_side] += outcome.points

    # Tallied in place rather than by adding Perft tuples: a walk visits every line,
    # and a tuple per leaf would halve its speed.
    def walk(state: HandState, depth: int) -> None:
        if depth == 1:
            for move in state.legal_moves():
                count(state.apply(move).outcome)
            return
        for move in state.legal_moves():
            walk(state.apply(move), depth - 1)

    if depth == 0:
        count(state.outcome)
    else:
        walk(state, depth)
    domino, blocked, void_tie, redeal_tie, no_lead = tally[1:]
    return Perft(tally[0], domino, blocked, void_tie, redeal_tie, no_lead, tuple(points))


def perft(state: HandState, depth: int) -> Perft:
    """Every line of ``depth`` legal actions from ``state``, counted (see :class:`Perft`).

    ``depth`` is an integer of 0 or more and ``state`` a :class:`HandState`; a
    ``ValueError`` names anything else. The walk visits every line, so its time grows
    with the count: from about 35,000 (double-nine) to 120,000 (double-six) lines a
    second on one core of the project's 2-core machine; ``matador_env.batch.perft``
    counts the same four to six times faster.
    """
    _check_state(state)
    return _walk(state, _checked_depth(depth))


def perft_divide(state: HandState, depth: int) -> dict[str, Perft]:
    """:func:`perft` split by the first action: its text form (``str(move)``, which
    ``Move.parse`` reads back) mapped to the counts of the lines that start with it, in
    the order of ``state.legal_moves()``. ``depth`` is 1 or more."""
    _check_state(state)
    depth = _checked_depth(depth)
    if depth < 1:
        raise ValueError("depth: expected 1 or more for a divide (depth 0 has no first action)")
    return {str(move): _walk(state.apply(move), depth - 1) for move in state.legal_moves()}
