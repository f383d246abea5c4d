"""A match: hands played one after another until ``rules.match_end`` at ``rules.target_score``.

Each deal's seed is derived from the match seed and the deal's number (redeals
included), so a whole match replays from ``(rules, seed, moves)``.

How long a match lasts. Every hand that scores gives its side at least one point,
so under "first_to_target" at most ``sides * (target_score - 1) + 1`` scoring hands
are played before some total reaches the target (``sides * target_score + 1``
before one is strictly above it, for "complete_round"). Under "complete_round"
the leads then even out within ``players - 1`` further counted hands: it needs
``next_leader="rotate"`` and a lead that never passes (``Rules`` refuses
``lead_tile="double_not_blank"`` with it), so the counted hands' leads go round
the table. Hands that score nothing (a void tie, a redeal, a domino against
hands holding only 0-0) are not bounded by the rules, only made unlikely by the
shuffle: a driver that must stop (an environment's episode) needs its own cap.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any

from .rules import Rules, RulesError, a_type
from .state import SEED_LIMIT, HandState, IllegalMoveError, Outcome, SeatView, Termination
from .tiles import INTEGER_KINDS, Move, shown_value, whole_number

__all__ = ["MatchState", "derive_seed"]


def _seed_number(seed: object, what: str, low: int = 0) -> int:
    """``seed`` as a plain int from ``low`` to ``SEED_LIMIT - 1``, else ``ValueError``
    worded as :meth:`HandState.deal` words it."""
    number = whole_number(seed)
    if number is None or not low <= number < SEED_LIMIT:
        why = f": {a_type(seed)}, not an integer" if number is None else ""
        raise ValueError(
            f"{what}={shown_value(seed)} is not allowed{why}; allowed: {INTEGER_KINDS} "
            f"from {low} to {SEED_LIMIT - 1} (2**64 - 1)"
        )
    return number


def derive_seed(seed: int, index: int) -> int:
    """The seed of deal ``index`` of a match seeded with ``seed`` (stable across runs).

    ``seed`` is an integer from 0 to ``SEED_LIMIT - 1``; ``index`` an integer of at
    most that size either way (negative ones name streams that are no deal, such as
    a bot's). Both may be numpy integers. The result is from 0 to ``SEED_LIMIT - 1``
    (the first 8 bytes of a SHA-256). ``ValueError`` for anything else: a string,
    float, bool or None (which once gave a seed of their text) or a number out of
    range.
    """
    seed = _seed_number(seed, "seed")
    index = _seed_number(index, "index", low=-(SEED_LIMIT - 1))
    digest = hashlib.sha256(f"matador/{seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class MatchState:
    """An immutable match. ``hand`` is the current (or, between hands, the last) hand.

    Build one with :meth:`new`. The constructor (and ``dataclasses.replace``) checks
    that the fields belong together and raises :class:`RulesError` when ``rules`` is
    not a :class:`Rules` and ``ValueError`` naming the field otherwise: ``seed`` an
    integer from 0 to ``SEED_LIMIT - 1``; ``hand`` a :class:`HandState` dealt under
    ``rules``; ``totals`` a tuple of ``rules.sides`` integers >= 0 and ``leads`` of
    ``rules.players``; ``deals`` an integer >= 1; ``outcomes`` a tuple of
    :class:`Outcome`; ``armed`` a bool; ``winners`` None or a tuple of sides. Numpy
    integers are held as plain ints. :meth:`apply` and :meth:`next_hand` build their
    states from checked ones without checking again.
    """

    rules: Rules
    seed: int
    hand: HandState
    totals: tuple[int, ...]
    """Match totals per side (per team with teams, else per seat)."""
    deals: int
    """Hands dealt so far, redeals included (the index of the current deal is deals - 1)."""
    leads: tuple[int, ...]
    """Per seat, the counted (not redealt) hands whose lead it placed."""
    outcomes: tuple[Outcome, ...]
    """Every finished hand's outcome, redeals included."""
    armed: bool = False
    """complete_round: a total is strictly above the target, so the match ends at the
    next point where every seat has led equally often."""
    winners: tuple[int, ...] | None = None
    """The winning sides once the match is over (several when tied for the highest total)."""

    def __post_init__(self) -> None:
        rules = self.rules
        if not isinstance(rules, Rules):
            raise RulesError("rules", rules, "a Rules (e.g. Rules.preset('standard'))")
        self._hold("seed", _seed_number(self.seed, "MatchState seed"))
        hand = self.hand
        if not isinstance(hand, HandState):
            raise ValueError(
                f"MatchState hand must be a HandState, got {a_type(hand)}: {shown_value(hand)}"
            )
        if hand.rules != rules:
            differ = [
                f"{f.name}={getattr(hand.rules, f.name)!r} (rules: {getattr(rules, f.name)!r})"
                for f in dataclasses.fields(Rules)
                if getattr(hand.rules, f.name) != getattr(rules, f.name)
            ]
            raise ValueError(
                "MatchState hand was dealt under other rules than the match's: " + ", ".join(differ)
            )
        self._hold("totals", _counts(self.totals, "totals", rules.sides, "side"))
        self._hold("leads", _counts(self.leads, "leads", rules.players, "seat"))
        deals = whole_number(self.deals)
        if deals is None or deals < 1:
            raise ValueError(
                f"MatchState deals must be an integer >= 1 (hands dealt so far), "
                f"got {shown_value(self.deals)}"
            )
        self._hold("deals", deals)
        outcomes = self.outcomes
        if not isinstance(outcomes, tuple) or not all(isinstance(o, Outcome) for o in outcomes):
            raise ValueError(
                f"MatchState outcomes must be a tuple of Outcome, got {shown_value(outcomes)}"
            )
        if not isinstance(self.armed, bool):
            raise ValueError(
                f"MatchState armed must be True or False, got {shown_value(self.armed)}"
            )
        winners = self.winners
        if winners is not None:
            sides = _counts(winners, "winners", None, "side")
            if not sides or any(s >= rules.sides for s in sides) or len(set(sides)) < len(sides):
                raise ValueError(
                    f"MatchState winners must be None or distinct sides from 0 to "
                    f"{rules.sides - 1}, got {shown_value(winners)}"
                )
            self._hold("winners", sides)

    def _hold(self, name: str, value: object) -> None:
        """Hold ``value`` (the plain form of what was given) as field ``name``."""
        if value is not getattr(self, name):
            object.__setattr__(self, name, value)

    def _next(self, **changes: Any) -> MatchState:
        """This match with ``changes``, unchecked: for :meth:`apply` and :meth:`next_hand`,
        whose new fields follow from checked ones by the rules. ``dataclasses.replace``
        would check them on every move, which the per-move cost has no room for."""
        new = object.__new__(type(self))
        held = new.__dict__
        held.update(self.__dict__)
        held.update(changes)
        return new

    @classmethod
    def new(cls, rules: Rules, seed: int) -> MatchState:
        """The first deal of a match. Raises :class:`RulesError` when ``rules`` is not a
        :class:`Rules` and ``ValueError`` when ``seed`` is not an integer (an int, a numpy
        integer; not a bool) from 0 to ``SEED_LIMIT - 1`` (2**64 - 1)."""
        seed = _seed_number(seed, "seed")
        hand = HandState.deal(rules, derive_seed(seed, 0))
        return cls(
            rules=rules,
            seed=seed,
            hand=hand,
            totals=(0,) * rules.sides,
            deals=1,
            leads=(0,) * rules.players,
            outcomes=(),
        )

    @property
    def is_over(self) -> bool:
        return self.winners is not None

    @property
    def hand_over(self) -> bool:
        return self.hand.is_over

    @property
    def to_move(self) -> int:
        return self.hand.to_move

    def legal_moves(self) -> tuple[Move, ...]:
        return self.hand.legal_moves()

    def view(self, seat: int) -> SeatView:
        """The seat's view with the match totals (``ValueError`` for a seat that is not one)."""
        return self.hand.view(seat, scores=self.totals)

    def apply(self, move: Move | str) -> MatchState:
        """Apply a move to the current hand; when it ends, score it (not dealing the next).

        Raises :class:`IllegalMoveError` as :meth:`HandState.apply` does, between hands
        (saying to call :meth:`next_hand`) and after the end of the match; this match
        is left as it was."""
        if self.is_over:
            raise IllegalMoveError(move, None, (), "the match is over")
        try:
            hand = self.hand.apply(move)
        except IllegalMoveError as exc:
            if not self.hand.is_over:
                raise
            # Between hands: the way on is next_hand(), which the hand's own error cannot say.
            raise IllegalMoveError(
                move, exc.seat, (), "the hand is over; call next_hand() to deal the next one"
            ) from None
        if hand.outcome is None:
            return self._next(hand=hand)
        return self._score(hand, hand.outcome)

    def _score(self, hand: HandState, outcome: Outcome) -> MatchState:
        rules = self.rules
        points = outcome.side_points(rules.sides)
        totals = tuple(t + p for t, p in zip(self.totals, points, strict=True))
        leads = self.leads
        if not outcome.redeal:
            leads = tuple(c + (1 if s == hand.leader else 0) for s, c in enumerate(leads))
        armed = self.armed
        winners = None
        top = max(totals)
        if rules.match_end == "first_to_target":
            if top >= rules.target_score:
                winners = tuple(s for s, t in enumerate(totals) if t == top)
        else:
            # docs/rules.md, match_end "complete_round": once a total is strictly above the
            # target, play on until every seat has led equally often; the highest total wins,
            # ties share.
            armed = armed or top > rules.target_score
            if armed and not outcome.redeal and len(set(leads)) == 1:
                winners = tuple(s for s, t in enumerate(totals) if t == top)
        return self._next(
            hand=hand,
            totals=totals,
            leads=leads,
            outcomes=self.outcomes + (outcome,),
            armed=armed,
            winners=winners,
        )

    def next_leader(self) -> int:
        """Who leads the next deal, by ``rules.next_leader`` and the last outcome."""
        hand, outcome = self.hand, self.hand.outcome
        if outcome is None:
            raise ValueError("the current hand is not over yet")
        rules = self.rules
        n = rules.players
        if outcome.termination == Termination.NO_LEAD:
            return hand.dealt_leader
        if outcome.termination == Termination.REDEAL_TIE:
            return hand.leader
        counts = outcome.counts
        if rules.next_leader == "rotate":
            return (hand.leader + 1) % n
        if outcome.termination == Termination.VOID_TIE:
            if rules.next_leader == "winner":
                return hand.leader
            return max(range(n), key=lambda s: (counts[s], -s))
        if rules.next_leader == "winner":
            assert outcome.winner is not None
            return outcome.winner
        losers = [s for s in range(n) if rules.side_of(s) != outcome.winning_side]
        return max(losers, key=lambda s: (counts[s], -s))

    def next_hand(self) -> MatchState:
        """Deal the next hand (after the current one is over and the match is not)."""
        if self.is_over:
            raise ValueError("the match is over; no further hand is dealt")
        if not self.hand.is_over:
            raise ValueError("the current hand is not over yet")
        hand = HandState.deal(
            self.rules, derive_seed(self.seed, self.deals), leader=self.next_leader()
        )
        return self._next(hand=hand, deals=self.deals + 1)


def _counts(values: object, name: str, size: int | None, per: str) -> tuple[int, ...]:
    """``values`` as a tuple of plain ints >= 0 (``size`` of them unless None), else
    ``ValueError`` naming the MatchState field."""
    if isinstance(values, tuple) and (size is None or len(values) == size):
        numbers: list[int] = []
        for value in values:
            number = whole_number(value)
            if number is None or number < 0:
                break
            numbers.append(number)
        else:
            return tuple(numbers)
    count = f"{size} " if size is not None else ""
    raise ValueError(
        f"MatchState {name} must be a tuple of {count}integers >= 0 (one per {per}), "
        f"got {shown_value(values)}"
    )
