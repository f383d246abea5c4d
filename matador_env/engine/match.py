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

from .rules import Rules
from .state import HandState, IllegalMoveError, Outcome, SeatView, Termination
from .tiles import Move

__all__ = ["MatchState", "derive_seed"]


def derive_seed(seed: int, index: int) -> int:
    """The seed of deal ``index`` of a match seeded with ``seed`` (stable across runs)."""
    digest = hashlib.sha256(f"matador/{seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


@dataclass(frozen=True)
class MatchState:
    """An immutable match. ``hand`` is the current (or, between hands, the last) hand."""

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

    @classmethod
    def new(cls, rules: Rules, seed: int) -> MatchState:
        """The first deal of a match. Raises :class:`RulesError` when ``rules`` is not a
        :class:`Rules` and ``ValueError`` when ``seed`` is not an int."""
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an int, got {seed!r}")
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

        Raises :class:`IllegalMoveError` as :meth:`HandState.apply` does, and after
        the end of the match; this match is left as it was."""
        if self.is_over:
            raise IllegalMoveError(move, None, (), "the match is over")
        hand = self.hand.apply(move)
        if hand.outcome is None:
            return dataclasses.replace(self, hand=hand)
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
        return dataclasses.replace(
            self,
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
        return dataclasses.replace(self, hand=hand, deals=self.deals + 1)
