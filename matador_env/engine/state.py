"""One hand of Matador: the deal, legal moves, applying a move, the outcome, a seat's view.

A :class:`HandState` is immutable. All randomness is spent at the deal: the
boneyard order is part of the state, so a hand replays exactly from
``(rules, seed, leader, moves)``. Hands are held as bit masks over tile indices
(see :mod:`.tiles`), which keeps move generation a few mask operations per open
end.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .rules import CHOICES, Rules, RulesError
from .tiles import (
    BLANK,
    BRANCH,
    CROSS,
    DRAW,
    END_KINDS,
    INTEGER_KINDS,
    PASS,
    PLAIN,
    SPINNER,
    End,
    Move,
    MoveParseError,
    Tile,
    is_text,
    set_tiles,
    shown_value,
    whole_number,
)

__all__ = [
    "HandState",
    "Outcome",
    "Termination",
    "Event",
    "SeatView",
    "IllegalMoveError",
    "blocked_points",
    "side_counts",
    "SEED_LIMIT",
    "SCORE_LIMIT",
    "seat_number",
    "seed_number",
    "moves_to_choose",
    "check_rng",
    "SEED_RANGE",
    "checked_seed",
]

SEED_LIMIT = 2**64
"""Seeds are integers from 0 to ``SEED_LIMIT - 1``: every seed the project derives
(``derive_seed``, the arena's, the environments' draws) lies there. A negative seed is
refused because ``random.Random`` shuffles with its absolute value (``-5`` would deal
what ``5`` deals), a larger one because it would not print in a hand record."""

SCORE_LIMIT = 2**63
"""Match totals given to a view are integers from 0 to ``SCORE_LIMIT - 1`` (scores are
never negative; the bound keeps them printable and within an int64)."""


class Termination:
    """How a hand ended (the ``termination`` of an :class:`Outcome`)."""

    DOMINO = "domino"
    """A player played his last tile."""
    BLOCKED = "blocked"
    """Every seat passed in a row; the lowest count won."""
    VOID_TIE = "void_tie"
    """Blocked with the lowest count shared, tie="void": nobody scores."""
    REDEAL_TIE = "redeal_tie"
    """Blocked with the lowest count shared, tie="redeal": the hand is dealt again."""
    NO_LEAD = "no_lead"
    """lead_tile="double_not_blank": every seat passed without leading; dealt again."""

    ALL = (DOMINO, BLOCKED, VOID_TIE, REDEAL_TIE, NO_LEAD)


@dataclass(frozen=True)
class Outcome:
    """The closed result of a hand."""

    termination: str
    winner: int | None
    """The seat that went out, or after a block the lowest count (with teams: the
    winning partner with the lower count). None after a tie or a redeal."""
    winning_side: int | None
    """The winner's side: its team index with teams, else its seat."""
    points: int
    """What the winning side scores (0 after a tie or a redeal)."""
    counts: tuple[int, ...]
    """Pips left in each seat's hand."""

    @property
    def redeal(self) -> bool:
        """True when the hand is dealt again and does not count (tie redeal, no lead)."""
        return self.termination in (Termination.REDEAL_TIE, Termination.NO_LEAD)

    def side_points(self, sides: int) -> tuple[int, ...]:
        return tuple(self.points if side == self.winning_side else 0 for side in range(sides))

    def __str__(self) -> str:
        t = self.termination
        if t in (Termination.DOMINO, Termination.BLOCKED):
            return f"{t}: seat {self.winner} wins {self.points} (counts {list(self.counts)})"
        return f"{t}: nobody scores (counts {list(self.counts)})"


class Event(NamedTuple):
    """One public action: who did what, and the open ends when it was done."""

    seat: int
    move: Move
    ends: tuple[End, ...]

    def __str__(self) -> str:
        return f"P{self.seat} {self.move}"


class IllegalMoveError(ValueError):
    """A move that is not legal in the state it was applied to.

    The state is immutable, so nothing is changed; ``legal`` lists what was allowed.
    """

    def __init__(self, move: object, seat: int | None, legal: Sequence[Move], why: str) -> None:
        self.move = move
        self.seat = seat
        self.legal = tuple(legal)
        alternatives = ", ".join(str(m) for m in legal) if legal else "none (the hand is over)"
        who = f" by seat {seat}" if seat is not None else ""
        try:
            text = str(move)
        except Exception:  # a stand-in whose __str__ fails must still get its message
            text = f"<{type(move).__name__}>"
        if len(text) > 80:
            text = text[:77] + "..."
        super().__init__(f"illegal move {text!r}{who}: {why}; legal moves: {alternatives}")


@dataclass(frozen=True)
class SeatView:
    """Exactly what one seat may know: nothing of other hands or the boneyard order."""

    rules: Rules
    seat: int
    hand: tuple[Tile, ...]
    ends: tuple[End, ...]
    layout: tuple[Tile, ...]
    """Tiles on the table, in the order they were played."""
    hand_sizes: tuple[int, ...]
    boneyard_size: int
    history: tuple[Event, ...]
    to_move: int
    leader: int
    """The seat that placed the lead, or (before the lead) the seat due to lead."""
    draws_this_turn: int
    passes_in_row: int
    legal_moves: tuple[Move, ...]
    """The seat's legal moves when it is to move, else empty."""
    outcome: Outcome | None
    scores: tuple[int, ...] | None = None
    """Match totals per side (teams or seats), when the hand is part of a match."""

    @property
    def lead_placed(self) -> bool:
        return bool(self.ends)

    @property
    def drawable(self) -> int:
        """Boneyard tiles that may still be drawn (above the reserve)."""
        return max(0, self.boneyard_size - self.rules.boneyard_reserve)


class _Tables:
    """Per-rules lookup tables, built once and shared by every state of those rules."""

    __slots__ = (
        "rules",
        "n",
        "S",
        "tiles",
        "pips",
        "matador",
        "blank",
        "double",
        "double_not_blank",
        "accepts",
        "placement",
        "as_regular",
        "only_when_stuck",
        "voluntary",
        "draw_limit",
        "reserve",
        "first_double",
        "spinner_lead",
        "cross_must_fill",
        "lead_tile",
        "plain_end",
        "spinner_end",
        "branch_end",
        "tile_moves",
    )

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.n = rules.players
        S = self.S = rules.link_sum
        tiles = self.tiles = set_tiles(rules.set_max)
        self.pips = tuple(t.pips for t in tiles)
        mat = blank = double = dnb = 0
        for i, t in enumerate(tiles):
            bit = 1 << i
            if rules.is_matador(t):
                mat |= bit
            if t.low == 0:
                blank |= bit
            if t.is_double:
                double |= bit
                if t.low:
                    dnb |= bit
        self.matador, self.blank, self.double, self.double_not_blank = mat, blank, double, dnb
        # accepts[v]: tiles holding the half S - v, i.e. able to link to an end showing v.
        # S > set_max, so accepts[0] is empty: an end showing 0 takes no regular tile.
        self.accepts = tuple(
            sum(1 << i for i, t in enumerate(tiles) if S - v in (t.low, t.high))
            for v in range(rules.set_max + 1)
        )
        self.placement = rules.matador_placement
        self.as_regular = rules.matador_as_regular
        self.only_when_stuck = rules.matador_only_when_stuck
        self.voluntary = rules.voluntary_draw
        self.draw_limit = rules.draw_limit
        self.reserve = rules.boneyard_reserve
        self.first_double = rules.spinner == "first_double"
        self.spinner_lead = rules.spinner != "none"
        self.cross_must_fill = rules.spinner == "lead_double_cross"
        self.lead_tile = rules.lead_tile
        vals = range(rules.set_max + 1)
        self.plain_end = tuple(End(PLAIN, v) for v in vals)
        self.spinner_end = tuple(End(SPINNER, v) for v in vals)
        self.branch_end = tuple(End(BRANCH, v) for v in vals)
        self.tile_moves = tuple(Move.lead(t) for t in tiles)


_TABLES: dict[Rules, _Tables] = {}
# Rules arrive from outside (the JSON protocol, the HTTP server): without a bound,
# a stream of distinct configurations would grow the cache for as long as the
# process lives. Programs use a handful of rule sets, so the oldest is dropped.
_TABLES_KEPT = 64


def _tables(rules: Rules) -> _Tables:
    if not isinstance(rules, Rules):
        raise RulesError("rules", rules, "a Rules (e.g. Rules.preset('standard'))")
    t = _TABLES.get(rules)
    if t is None:
        if len(_TABLES) >= _TABLES_KEPT:
            del _TABLES[next(iter(_TABLES))]
        t = _TABLES[rules] = _Tables(rules)
    return t


def check_rng(rng: object, who: str, none_allowed: bool = False) -> None:
    """``TypeError`` naming ``who`` unless ``rng`` is a ``random.Random`` (or None,
    where ``none_allowed``): the players' generator. Checked at the start of every
    move, because most players touch it only to break a tie or to sample, so a wrong
    generator would otherwise fail in some games and not in others."""
    if isinstance(rng, random.Random) or (none_allowed and rng is None):
        return
    allowed = "a random.Random (e.g. random.Random(seed))" + (" or None" if none_allowed else "")
    raise TypeError(f"{who}: rng={shown_value(rng)} is not allowed; allowed: {allowed}")


def moves_to_choose(
    view: object, who: str, error: type[ValueError] = ValueError
) -> tuple[Move, ...]:
    """``view.legal_moves``, once ``view`` is a :class:`SeatView` whose seat has a move
    to make: the check at the start of every player's move (the agents' ``act``, the
    bot runtime's ``choose``; ``who`` names the player in the message). Else
    ``TypeError`` (not a view: a ``HandState`` is not, ``state.view(seat)`` is) or
    ``error`` (the hand is over, or another seat is to act).

    One type test and one length test: it runs on every move of every game (the
    search's playouts and the expert's scoring call no player's move, so once a
    move)."""
    if not isinstance(view, SeatView):
        raise TypeError(
            f"{who}: expected a SeatView (a seat's view: state.view(seat)), "
            f"got {type(view).__name__}"
        )
    moves = view.legal_moves
    if not moves:
        if view.outcome is not None:
            raise error(f"{who}: the hand is over ({view.outcome}); there is no move to make")
        if view.seat != view.to_move:
            raise error(f"{who}: seat {view.seat} is not to act: seat {view.to_move} is")
        raise error(f"{who}: the view of seat {view.seat}, to act, lists no legal move")
    return moves


def seat_number(value: object, players: int) -> int | None:
    """``value`` as a seat number (an integer, see :data:`INTEGER_KINDS`, from 0 to
    ``players - 1``; a numpy integer becomes an ``int``), else None; the caller names
    the argument (the environments read their seats with it too)."""
    if type(value) is int:  # the common case, at the cost of one test
        return value if 0 <= value < players else None
    seat = whole_number(value)
    return seat if seat is not None and 0 <= seat < players else None


def _seat_error(name: str, value: object, players: int) -> ValueError:
    return ValueError(
        f"{name} must be a seat number: {INTEGER_KINDS} from 0 to {players - 1}; "
        f"got {shown_value(value)}"
    )


def seed_number(value: object) -> int | None:
    """``value`` as a seed (an integer, see :data:`INTEGER_KINDS`, from 0 to
    ``SEED_LIMIT - 1``), else None; the caller names the argument (the batch engine and
    the environments read their seeds with it too)."""
    number = whole_number(value)
    return number if number is not None and 0 <= number < SEED_LIMIT else None


SEED_RANGE = f"{INTEGER_KINDS} from 0 to {SEED_LIMIT - 1} (2**64 - 1)"
"""The seeds the engine deals (:meth:`HandState.deal`, :func:`seed_number`), as errors
name them."""


def checked_seed(seed: object, name: str = "seed", error: type[Exception] = ValueError) -> int:
    """``seed`` as a seed of the engine, an ``int`` from 0 to ``SEED_LIMIT - 1`` read by
    :func:`seed_number`, else ``error`` naming ``name``, the
    value and :data:`SEED_RANGE` (the batch engine raises its ``BatchError``)."""
    # A plain int in range, the usual case (the search's deals), is taken without a call.
    number = seed if type(seed) is int and 0 <= seed < SEED_LIMIT else seed_number(seed)
    if number is None:
        raise error(f"{name}={shown_value(seed)} is not allowed; allowed: {SEED_RANGE}")
    return number


def _checked_scores(scores: object, rules: Rules, name: str = "scores") -> tuple[int, ...] | None:
    if scores is None:
        return None
    # A tuple, a list or a one-dimensional array of them (numpy's, as environments and
    # RL code hold totals; its rows would be arrays, which whole_number refuses below).
    # Text and mappings have a length too, but are no totals.
    sized = isinstance(scores, (tuple, list)) or (
        hasattr(scores, "__len__")
        and hasattr(scores, "__getitem__")
        and not isinstance(scores, (str, bytes, bytearray, dict))
    )
    if not sized or len(scores) != rules.sides:  # type: ignore[arg-type]
        raise ValueError(
            f"{name} must be None or {rules.sides} match totals (one per "
            f"{'team' if rules.teams else 'seat'}), got {shown_value(scores)}"
        )
    totals = []
    for total in scores:  # type: ignore[attr-defined]  # sized and indexable, above
        number = whole_number(total)
        if number is None or not 0 <= number < SCORE_LIMIT:
            raise ValueError(
                f"{name}: each total must be {INTEGER_KINDS} from 0 to {SCORE_LIMIT - 1}, "
                f"got {shown_value(total)} in {shown_value(scores)}"
            )
        totals.append(number)
    return tuple(totals)


_BLANK_END = End(BLANK, None)
# End(...) without its checks, for the engine's own ends: hot path (like _new_move).
_new_end = tuple.__new__
# The history is a persistent linked list (previous node, seat, move, ends before the
# move): appending is O(1) and states share their common past.
_HistoryNode = tuple[Any, int, Move, tuple[End, ...]]
_new_move = tuple.__new__  # Move(...) without NamedTuple's keyword handling: hot path


def _bits(mask: int) -> Iterable[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def _mask_tiles(t: _Tables, mask: int) -> tuple[Tile, ...]:
    return tuple(t.tiles[i] for i in _bits(mask))


class HandState:
    """An immutable hand. Build with :meth:`deal`; advance with :meth:`apply`."""

    __slots__ = (
        "_t",
        "_seed",
        "_hands",
        "_stock",
        "_pos",
        "_ends",
        "_spinner_done",
        "_to_move",
        "_leader",
        "_dealt_leader",
        "_passes",
        "_lead_passes",
        "_draws",
        "_history",
        "_n_actions",
        "_outcome",
        "_legal",
    )
    _t: _Tables
    _seed: int
    _hands: tuple[int, ...]
    _stock: tuple[int, ...]
    _pos: int
    _ends: tuple[End, ...]
    _spinner_done: bool
    _to_move: int
    _leader: int
    _dealt_leader: int
    _passes: int
    _lead_passes: int
    _draws: int
    _history: _HistoryNode | None
    _n_actions: int
    _outcome: Outcome | None
    _legal: tuple[Move, ...] | None

    # -- construction -----------------------------------------------------------------

    @classmethod
    def deal(cls, rules: Rules, seed: int, leader: int | None = None) -> HandState:
        """Shuffle with ``seed`` and deal. ``leader`` None applies ``rules.first_leader``.

        ``seed`` is an integer (see :data:`~.tiles.INTEGER_KINDS`; a numpy integer is
        read as its ``int``) from 0 to ``SEED_LIMIT - 1`` (2**64 - 1); ``leader`` None
        or a seat number, an integer from 0 to ``players - 1``. Raises
        :class:`RulesError` when ``rules`` is not a :class:`Rules`, and
        ``ValueError`` when ``seed`` is not such an integer (a bool, a float, a
        negative seed, which ``random.Random`` would read as its absolute value, or
        one of 2**64 or more) or ``leader`` is not a seat.
        """
        t = _tables(rules)  # refuses anything but a Rules
        seed = checked_seed(seed)
        n = rules.players
        if leader is not None:
            dealt_to = seat_number(leader, n)
            if dealt_to is None:
                raise _seat_error("leader", leader, n)
            leader = dealt_to
        rng = random.Random(seed)
        order = list(range(len(t.tiles)))
        rng.shuffle(order)
        sizes = rules.tiles_per_seat
        hands = [0] * n
        dealt = sum(sizes)
        # One tile at a time from seat 0 on, so that with hand_size="all" the lower
        # seats hold the extra tiles (docs/rules.md, "A hand, step by step").
        for k in range(dealt):
            hands[k % n] |= 1 << order[k]
        if leader is None:
            if rules.first_leader == "random":
                leader = rng.randrange(n)
            else:
                leader = _highest_double_holder(t, hands)
        s = object.__new__(cls)
        s._t = t
        s._seed = seed
        s._hands = tuple(hands)
        s._stock = tuple(order[dealt:])
        s._pos = 0
        s._ends = ()
        s._spinner_done = False
        s._to_move = leader
        s._leader = leader
        s._dealt_leader = leader
        s._passes = 0
        s._lead_passes = 0
        s._draws = 0
        s._history = None
        s._n_actions = 0
        s._outcome = None
        s._legal = None
        return s

    @classmethod
    def from_deal(
        cls,
        rules: Rules,
        hands: Sequence[Iterable[Tile | str]],
        boneyard: Iterable[Tile | str] = (),
        leader: int = 0,
        seed: int = 0,
    ) -> HandState:
        """A hand with a chosen deal (scripted tests, replays of recorded deals).

        ``hands`` is a list or tuple of one hand per seat, each a list of tiles
        (:class:`Tile` s or their text, ``"2-5"``); ``boneyard`` is in draw order.
        Every tile of the set must be dealt or in the boneyard exactly once; sizes
        may differ from ``rules.hand_size``, but every seat holds at least one tile
        (the rules deal at least one, and a hand ends when a seat lays its last).
        ``leader`` is a seat and ``seed`` (only recorded) a seed as :meth:`deal`
        takes them. Raises :class:`RulesError` when ``rules`` is not a
        :class:`Rules`, :class:`MoveParseError` for text that is not a tile, and
        ``ValueError`` naming any other input that is not allowed.
        """
        t = _tables(rules)
        n = rules.players
        if not isinstance(hands, (list, tuple)) or len(hands) != n:
            raise ValueError(
                f"hands: expected a list of {n} hands for players={n}, got {shown_value(hands)}"
            )
        first = seat_number(leader, n)
        if first is None:
            raise _seat_error("leader", leader, n)
        seed = checked_seed(seed)
        seen: dict[int, str] = {}
        masks = []
        for seat, hand in enumerate(hands):
            where = f"hand of seat {seat}"
            mask = 0
            for i in _tile_indices(t, hand, where, seen, "dealt"):
                mask |= 1 << i
            if not mask:
                raise ValueError(
                    f"{where}: no tiles; every seat must be dealt at least one (a hand "
                    "ends when a seat lays its last tile)"
                )
            masks.append(mask)
        stock = tuple(_tile_indices(t, boneyard, "boneyard", seen, "dealt"))
        if len(seen) != len(t.tiles):
            missing = [str(t.tiles[i]) for i in range(len(t.tiles)) if i not in seen]
            raise ValueError(f"deal: every tile must be placed once; missing {' '.join(missing)}")
        leader = first
        s = object.__new__(cls)
        s._t = t
        s._seed = seed
        s._hands = tuple(masks)
        s._stock = stock
        s._pos = 0
        s._ends = ()
        s._spinner_done = False
        s._to_move = s._leader = s._dealt_leader = leader
        s._passes = s._lead_passes = s._draws = 0
        s._history = None
        s._n_actions = 0
        s._outcome = None
        s._legal = None
        return s

    @classmethod
    def from_view(
        cls,
        view: SeatView,
        hands: Sequence[Iterable[Tile | str]],
        boneyard: Iterable[Tile | str],
    ) -> HandState:
        """A full state consistent with ``view`` in which the hidden tiles lie as given.

        ``hands`` gives every seat's hand (the viewer's must equal ``view.hand``),
        ``boneyard`` the undrawn tiles in the order they would be drawn. This is how
        a determinizing search samples worlds; the public part is taken from the view.

        ``hands`` is a list or tuple of one hand per seat, each a list of tiles
        (:class:`Tile` s or their text, ``"2-5"``), as :meth:`from_deal` takes them;
        so is ``boneyard``. Raises ``ValueError`` (its message starts
        ``from_view:``) when ``view`` is not a :class:`SeatView` or one of its seat
        numbers (``seat``, ``to_move``, ``leader``) is not a seat, an open end or a
        tile on the table is not one of the rules' set, the hands or the boneyard
        are not such lists or hold something that is not a tile of the set, or the
        tiles do not fit the view (the viewer's hand, the hand sizes, the boneyard
        size, every tile once); :class:`MoveParseError` for text that is not a tile.
        """
        if not isinstance(view, SeatView):
            raise ValueError(f"from_view: expected a SeatView, got {type(view).__name__}")
        # A search deals many worlds from one view: its own part is checked and read once.
        last = _LAST_VIEW[0]
        if last is not None and last[0] is view:
            part = last[1]
        else:
            part = _view_part(view)
            _LAST_VIEW[0] = (view, part)
        masks, stock = _world_tiles(view, part, hands, boneyard)
        s = object.__new__(cls)
        s._t = part.t
        s._seed = 0
        s._hands = masks
        s._stock = stock
        s._pos = 0
        s._ends = part.ends
        s._spinner_done = part.spinner_done
        s._to_move = part.to_move
        s._leader = part.leader
        s._dealt_leader = part.dealt_leader
        s._passes = part.passes
        s._lead_passes = part.lead_passes
        s._draws = part.draws
        s._history = part.history
        s._n_actions = len(view.history)
        s._outcome = view.outcome
        s._legal = None
        return s

    def _copy(self) -> HandState:
        s = object.__new__(HandState)
        s._t = self._t
        s._seed = self._seed
        s._hands = self._hands
        s._stock = self._stock
        s._pos = self._pos
        s._ends = self._ends
        s._spinner_done = self._spinner_done
        s._to_move = self._to_move
        s._leader = self._leader
        s._dealt_leader = self._dealt_leader
        s._passes = self._passes
        s._lead_passes = self._lead_passes
        s._draws = self._draws
        s._history = self._history
        s._n_actions = self._n_actions + 1
        s._outcome = None
        s._legal = None
        return s

    def dealt(self) -> HandState:
        """This hand as it was dealt, before any move (the boneyard restored in order)."""
        t = self._t
        hands = list(self._hands)
        drawn = iter(self._stock[: self._pos])
        node = self._history
        events = []
        while node is not None:
            node, seat, move, _ = node
            events.append((seat, move))
        events.reverse()
        draws = sum(1 for _, move in events if move[0] == "draw")
        if draws > self._pos:
            # from_view() keeps only the undrawn boneyard: the drawn tiles are unknown.
            raise ValueError(
                "cannot reconstruct the deal: this state was built from a seat's view "
                f"(from_view) and {draws} drawn tiles are not known to it"
            )
        # Dealt = held now + played - drawn; add every play before taking any draw away,
        # since a drawn tile may have been played later.
        for seat, move in events:
            if move[0] == "play":
                hands[seat] |= 1 << move[1].index  # type: ignore[union-attr]
        for seat, move in events:
            if move[0] == "draw":
                hands[seat] &= ~(1 << next(drawn))  # draws take the boneyard in order
        return HandState.from_deal(
            t.rules,
            [_mask_tiles(t, h) for h in hands],
            [t.tiles[i] for i in self._stock],
            self._dealt_leader,
            self._seed,
        )

    # -- public read-only properties -----------------------------------------------------

    @property
    def rules(self) -> Rules:
        return self._t.rules

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def to_move(self) -> int:
        return self._to_move

    @property
    def leader(self) -> int:
        """The seat that placed the lead, or (before it) the seat due to lead."""
        return self._leader

    @property
    def dealt_leader(self) -> int:
        """The seat that was due to lead when the hand was dealt."""
        return self._dealt_leader

    @property
    def ends(self) -> tuple[End, ...]:
        return self._ends

    @property
    def lead_placed(self) -> bool:
        return bool(self._ends)

    @property
    def outcome(self) -> Outcome | None:
        return self._outcome

    @property
    def is_over(self) -> bool:
        return self._outcome is not None

    @property
    def passes_in_row(self) -> int:
        return self._passes

    @property
    def draws_this_turn(self) -> int:
        return self._draws

    @property
    def n_actions(self) -> int:
        return self._n_actions

    @property
    def hands(self) -> tuple[tuple[Tile, ...], ...]:
        """Every seat's hand (full information: not for agents)."""
        return tuple(_mask_tiles(self._t, h) for h in self._hands)

    def hand(self, seat: int) -> tuple[Tile, ...]:
        """The seat's tiles (``ValueError`` for a seat that is not one, as :meth:`view`)."""
        return _mask_tiles(self._t, self.hand_mask(seat))

    def hand_mask(self, seat: int) -> int:
        """The seat's hand as a bit mask over tile indices (``ValueError`` for a seat
        that is not one, as :meth:`view`)."""
        n = self._t.n
        number = seat_number(seat, n)
        if number is None:
            raise _seat_error("seat", seat, n)
        return self._hands[number]

    @property
    def boneyard(self) -> tuple[Tile, ...]:
        """The undrawn tiles in draw order (full information: not for agents)."""
        tiles = self._t.tiles
        return tuple(tiles[i] for i in self._stock[self._pos :])

    @property
    def boneyard_size(self) -> int:
        return len(self._stock) - self._pos

    @property
    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(h.bit_count() for h in self._hands)

    def counts(self) -> tuple[int, ...]:
        """Pips left in each hand."""
        pips = self._t.pips
        return tuple(sum(pips[i] for i in _bits(h)) for h in self._hands)

    @property
    def history(self) -> tuple[Event, ...]:
        """Every action so far, oldest first (public: draws do not name the tile)."""
        out: list[Event] = []
        node = self._history
        while node is not None:
            node, seat, move, ends = node
            out.append(Event(seat, move, ends))
        out.reverse()
        return tuple(out)

    @property
    def moves(self) -> tuple[Move, ...]:
        """The moves played so far, oldest first: with rules, seed and leader, a replay."""
        return tuple(e.move for e in self.history)

    @property
    def layout(self) -> tuple[Tile, ...]:
        """Tiles on the table in the order they were played."""
        return tuple(e.move.tile for e in self.history if e.move.kind == "play")  # type: ignore[misc]

    # -- legal moves --------------------------------------------------------------------

    def legal_moves(self) -> tuple[Move, ...]:
        """The moves the seat to move may make (empty once the hand is over)."""
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        return legal

    def _compute_legal(self) -> tuple[Move, ...]:
        if self._outcome is not None:
            return ()
        t = self._t
        placements = self._placements() if self._ends else self._leads()
        can_draw = self._draws < t.draw_limit and len(self._stock) - self._pos > t.reserve
        if placements:
            if can_draw:
                vol = t.voluntary
                if vol == "always":
                    placements.append(DRAW)
                elif vol == "only_matadors" and self._ends:
                    mat = t.matador
                    if all((mat >> m[1].index) & 1 for m in placements):  # type: ignore[union-attr]
                        placements.append(DRAW)
            return tuple(placements)
        return (DRAW,) if can_draw else (PASS,)

    def _leads(self) -> list[Move]:
        t = self._t
        hand = self._hands[self._to_move]
        rule = t.lead_tile
        if rule == "double_not_blank":
            hand &= t.double_not_blank
        elif rule == "highest_double":
            doubles = hand & t.double
            if doubles:
                # The highest double has the highest index among the doubles.
                hand = 1 << (doubles.bit_length() - 1)
        lead_moves = t.tile_moves
        return [lead_moves[i] for i in _bits(hand)]

    def _placements(self) -> list[Move]:
        t = self._t
        hand = self._hands[self._to_move]
        tiles = t.tiles
        S = t.S
        mat_mask = t.matador
        regular = hand & ~mat_mask
        matadors = hand & mat_mask
        accepts = t.accepts
        placement = t.placement
        spinner_pending = t.first_double and not self._spinner_done
        ends = self._ends
        only_spinner = t.cross_must_fill and any(e[0] is SPINNER for e in ends)
        out: list[Move] = []
        append = out.append
        for i, (kind, v, v2) in enumerate(ends):
            if only_spinner and kind is not SPINNER:
                # docs/rules.md, spinner "lead_double_cross": the cross must be full first.
                continue
            # Regular tiles (rule 4; a needs-a-blank end takes 0-x).
            if kind is BLANK:
                for k in _bits(regular & t.blank):
                    tile = tiles[k]
                    append(_new_move(Move, ("play", tile, i, tile.high, "inline")))
            elif kind is CROSS:
                for k in _bits(regular & (accepts[v] | accepts[v2])):  # type: ignore[index]
                    tile = tiles[k]
                    lo, hi = tile
                    # Links to v with its half S - v (== v2) or to v2 with its half v.
                    touch = v2 if (lo == v2 or hi == v2) else v
                    append(_new_move(Move, ("play", tile, i, hi if lo == touch else lo, "inline")))
            else:
                need = S - v  # type: ignore[operator]
                for k in _bits(regular & accepts[v]):  # type: ignore[index]
                    tile = tiles[k]
                    lo, hi = tile
                    append(_new_move(Move, ("play", tile, i, hi if lo == need else lo, "inline")))
            if not matadors:
                continue
            for k in _bits(matadors):
                tile = tiles[k]
                lo, hi = tile
                if lo == hi and spinner_pending:
                    # The first double becomes the spinner whatever matador_placement says.
                    append(_new_move(Move, ("play", tile, i, lo, "inline")))
                    continue
                if placement == "inline":
                    pass
                elif placement == "upright":
                    if kind is BLANK and hi == 0:
                        # 0-0 may also answer a needs-a-blank end as a blank tile, in line.
                        append(_new_move(Move, ("play", tile, i, 0, "inline")))
                    elif t.as_regular and kind is not BLANK and (lo + v == S or hi + v == S):  # type: ignore[operator]
                        append(
                            _new_move(Move, ("play", tile, i, hi if lo + v == S else lo, "inline"))  # type: ignore[operator]
                        )
                    append(_new_move(Move, ("play", tile, i, None, "upright")))
                    continue
                elif placement == "crosswise_on_blank":
                    if kind is not BLANK and v == 0:
                        append(_new_move(Move, ("play", tile, i, None, "cross")))
                        continue
                elif placement == "crosswise_choice":
                    if kind is not CROSS and hi != 0:
                        append(_new_move(Move, ("play", tile, i, None, "cross")))
                elif placement == "branching":  # noqa: SIM102
                    if kind is not BRANCH:
                        append(_new_move(Move, ("play", tile, i, None, "cross")))
                append(_new_move(Move, ("play", tile, i, lo, "inline")))
                if lo != hi:
                    append(_new_move(Move, ("play", tile, i, hi, "inline")))
        if t.only_when_stuck and out and matadors:
            out = self._hold_back_matadors(out)
        return out

    def _hold_back_matadors(self, moves: list[Move]) -> list[Move]:
        """matador_only_when_stuck: matadors only when no other tile can be placed.

        A matador laid in line as an ordinary tile (matador_as_regular) is not held back.
        """
        t = self._t
        mat = t.matador
        if all((mat >> m[1].index) & 1 for m in moves):  # type: ignore[union-attr]
            return moves
        ends = self._ends
        return [
            m
            for m in moves
            if not (mat >> m[1].index) & 1  # type: ignore[union-attr]
            or (t.as_regular and m[4] == "inline" and _fits_by_sum(t, ends[m[2]], m))  # type: ignore[index]
        ]

    # -- applying moves ---------------------------------------------------------------------

    def apply(self, move: Move | str) -> HandState:
        """The state after ``move`` (a :class:`Move` or its text form).

        Raises :class:`IllegalMoveError` (a ``ValueError``) naming the move and the
        legal alternatives when it is not legal, or is not a move at all (``None``, a
        number, bytes, a plain tuple...), or holds what no move holds even where it
        equals a legal move: a bool or a float for a number (``True == 1``), text or
        a plain tuple for the tile (a :class:`Tile`, whose halves are integers, see
        :data:`~.tiles.INTEGER_KINDS`), a tile, end or outward half in a draw or a
        pass. Numpy integers are read as their ints. :class:`MoveParseError` (a
        ``ValueError``) when text is not in the move text form. Either way this state
        is left as it was.
        """
        if isinstance(move, str):
            move = Move.parse(move)
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        try:
            found = legal[legal.index(move)]
        except (ValueError, TypeError):
            raise IllegalMoveError(move, self._to_move, legal, self._why_illegal(move)) from None
        if found is not move and not _plainly_typed(move):
            # Not the engine's own instance (parsed text, another state's move, a Move
            # built by hand) and not built of plain ints and Tiles either (the
            # environments' action tables are: they pass the test above): equal to a
            # legal move, it may still hold a bool or a float (True == 1), a plain
            # tuple for the tile or be no Move at all.
            problem = _move_problem(move, self._t.S - 1)
            if problem is not None:
                raise IllegalMoveError(move, self._to_move, legal, problem)
        # The engine's own instance goes on: a stand-in (a numpy half, a Move
        # subclass) must not reach the history or the text form.
        kind = found[0]
        if kind == "play":
            return self._play(found)
        if kind == "draw":
            return self._draw(found)
        return self._pass(found)

    def _why_illegal(self, move: object) -> str:
        if self._outcome is not None:
            return "the hand is over"
        problem = _move_problem(move, self._t.S - 1)
        if problem is not None:
            return problem
        assert isinstance(move, Move)
        seat = self._to_move
        if move.kind == "play":
            tile = move.tile
            assert tile is not None
            if not (self._hands[seat] >> _tile_index(tile)) & 1:
                return f"seat {seat} does not hold {tile}"
            if move.mode == "lead" and self._ends:
                return "the lead has been placed already; name an open end"
            if move.mode != "lead" and not self._ends:
                return "no tile is on the table yet: lead a tile (e.g. '3-3')"
            end = move.end
            if end is not None and not 0 <= end < len(self._ends):
                return (
                    f"there is no open end {shown_value(whole_number(end))} "
                    f"(open ends: 0-{len(self._ends) - 1})"
                )
            return "it does not fit there under these rules"
        if move.kind == "draw":
            return "drawing is not allowed now"
        return "passing is allowed only when no placement or draw is possible"

    def _play(self, move: Move) -> HandState:
        t = self._t
        tile = move[1]
        lo, hi = tile  # type: ignore[misc]
        seat = self._to_move
        s = self._copy()
        hands = list(self._hands)
        left = hands[seat] = hands[seat] ^ (1 << tile.index)  # type: ignore[union-attr]
        s._hands = tuple(hands)
        ends = self._ends
        mode = move[4]
        if mode == "lead":
            if t.spinner_lead and lo == hi:
                new_ends: tuple[End, ...] = (t.spinner_end[lo],) * 4
                s._spinner_done = True
            else:
                new_ends = (t.plain_end[lo], t.plain_end[hi])
            s._leader = seat
        else:
            i = move[2]
            if mode == "inline":
                if lo == hi and t.first_double and not self._spinner_done:
                    repl: tuple[End, ...] = (t.spinner_end[lo],) * 3
                    s._spinner_done = True
                else:
                    repl = (t.plain_end[move[3]],)  # type: ignore[index]
            elif mode == "upright":
                repl = (_BLANK_END,)
            else:
                placement = t.placement
                if placement == "crosswise_choice":
                    repl = (_new_end(End, (CROSS, lo, hi)),)
                elif placement == "branching":
                    repl = (t.branch_end[lo], t.branch_end[hi])
                else:  # crosswise_on_blank
                    repl = (_BLANK_END,)
            new_ends = ends[:i] + repl + ends[i + 1 :]  # type: ignore[operator]
        s._ends = new_ends
        s._history = (self._history, seat, move, ends)
        s._passes = 0
        s._draws = 0
        if left == 0:
            s._outcome = _domino_outcome(t, s._hands, seat)
        else:
            s._to_move = (seat + 1) % t.n
        return s

    def _draw(self, move: Move) -> HandState:
        seat = self._to_move
        s = self._copy()
        hands = list(self._hands)
        hands[seat] |= 1 << self._stock[self._pos]
        s._hands = tuple(hands)
        s._pos = self._pos + 1
        s._draws = self._draws + 1
        s._passes = 0  # docs/rules.md, "A hand, step by step": a draw resets the count of passes
        s._history = (self._history, seat, move, self._ends)
        return s

    def _pass(self, move: Move) -> HandState:
        t = self._t
        n = t.n
        seat = self._to_move
        s = self._copy()
        s._history = (self._history, seat, move, self._ends)
        s._draws = 0
        s._to_move = (seat + 1) % n
        s._passes = self._passes + 1
        if not self._ends:
            # lead_tile "double_not_blank": the lead passes to the left; one round of
            # passes (draws in it do not reset this count) means the hand is dealt again.
            s._lead_passes = self._lead_passes + 1
            s._leader = s._to_move
            if s._lead_passes >= n:
                s._outcome = Outcome(Termination.NO_LEAD, None, None, 0, s.counts())
            return s
        if s._passes >= n:
            s._outcome = _blocked_outcome(t, s._hands)
        return s

    # -- views ------------------------------------------------------------------------------

    def view(self, seat: int, scores: tuple[int, ...] | None = None) -> SeatView:
        """What ``seat`` may know. ``scores`` are match totals to include, if any.

        Raises ``ValueError`` when ``seat`` is not a seat number (an integer, see
        :data:`~.tiles.INTEGER_KINDS`, from 0 to players - 1; a numpy integer is read
        as its ``int``) or ``scores`` not a list, tuple or one-dimensional array of one
        total per side, each an integer from 0 to ``SCORE_LIMIT - 1``.
        """
        n = self._t.n
        viewer = seat_number(seat, n)
        if viewer is None:
            raise _seat_error("seat", seat, n)
        seat = viewer
        scores = _checked_scores(scores, self._t.rules)
        return SeatView(
            rules=self._t.rules,
            seat=seat,
            hand=self.hand(seat),
            ends=self._ends,
            layout=self.layout,
            hand_sizes=self.hand_sizes,
            boneyard_size=self.boneyard_size,
            history=self.history,
            to_move=self._to_move,
            leader=self._leader,
            draws_this_turn=self._draws,
            passes_in_row=self._passes,
            legal_moves=self.legal_moves() if seat == self._to_move else (),
            outcome=self._outcome,
            scores=scores,
        )

    def __repr__(self) -> str:
        ends = " ".join(str(e) for e in self._ends) or "-"
        return (
            f"<HandState seed={self._seed} to_move={self._to_move} ends=[{ends}] "
            f"sizes={list(self.hand_sizes)} boneyard={self.boneyard_size} "
            f"outcome={self._outcome}>"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HandState):
            return NotImplemented
        return (
            self._t.rules == other._t.rules
            and self._hands == other._hands
            and self._stock[self._pos :] == other._stock[other._pos :]
            and self._ends == other._ends
            and self._to_move == other._to_move
            and self.history == other.history
            and self._outcome == other._outcome
            and self._leader == other._leader
            and self._dealt_leader == other._dealt_leader
        )

    def __hash__(self) -> int:
        return hash((self._hands, self._ends, self._to_move, self._n_actions))


def _tile_problem(value: object, set_max: int) -> str | None:
    """Why ``value`` is not a tile of the double-``set_max`` set, for an error message;
    None when it is one: a :class:`Tile` whose halves are integers (see
    :data:`INTEGER_KINDS`), low half first. A tile with its halves in order is named in
    its text form (``9-9``), a malformed one by its repr, which shows what is wrong."""
    if not isinstance(value, Tile):
        return f"{shown_value(value)} is not a tile (expected a Tile or its text, e.g. '2-5')"
    lo, hi = value
    if type(lo) is not int or type(hi) is not int:
        low, high = whole_number(lo), whole_number(hi)
        if low is None or high is None:
            return f"{shown_value(value)} is not a tile: its halves must be {INTEGER_KINDS}"
        lo, hi = low, high
    if 0 <= lo <= hi <= set_max:
        return None
    if 0 <= hi < lo:
        return (
            f"{shown_value(value)} is not a tile: its low half is above its high half "
            f"(Tile.of({shown_value(lo)}, {shown_value(hi)}) puts the halves in order)"
        )
    shown = f"{shown_value(lo)}-{shown_value(hi)}" if lo >= 0 else shown_value(value)
    return f"{shown} is not a tile of the double-{set_max} set"


def _tile_index(tile: Tile) -> int:
    """The index of a tile :func:`_tile_problem` accepted (its halves may be numpy's)."""
    lo, hi = tile
    if type(lo) is not int or type(hi) is not int:
        lo, hi = operator.index(lo), operator.index(hi)
    return hi * (hi + 1) // 2 + lo


def _tile_indices(
    t: _Tables, tiles: object, where: str, seen: dict[int, str], placed: str
) -> list[int]:
    """The indices of ``tiles`` (Tiles or their text), each a tile of the set not in
    ``seen`` (which records it under ``where``); ``ValueError`` naming ``where`` and
    the tile (``placed``: what a second listing is called, "dealt" twice) or
    :class:`MoveParseError` for text that is not a tile."""
    if is_text(tiles) or not isinstance(tiles, Iterable):
        raise ValueError(f"{where}: expected a list of tiles, got {shown_value(tiles)}")
    set_max = t.S - 1
    out: list[int] = []
    append = out.append
    for tile in tiles:
        if type(tile) is Tile:
            # The common case (a search samples worlds through from_view): a tile
            # with int halves, in the set and not seen yet, costs a few tests.
            lo, hi = tile
            if type(lo) is int and type(hi) is int and 0 <= lo <= hi <= set_max:
                i = hi * (hi + 1) // 2 + lo
                if i not in seen:
                    seen[i] = where
                    append(i)
                    continue
        elif isinstance(tile, str):
            try:
                tile = Tile.parse(tile)
            except MoveParseError as exc:
                raise MoveParseError(f"{where}: {exc}") from None
        problem = _tile_problem(tile, set_max)
        if problem is not None:
            raise ValueError(f"{where}: {problem}")
        i = _tile_index(tile)
        if i in seen:
            raise ValueError(f"{where}: {t.tiles[i]} is {placed} twice (also in {seen[i]})")
        seen[i] = where
        append(i)
    return out


class _ViewPart(NamedTuple):
    """What :meth:`HandState.from_view` reads from the view itself, checked: the same
    for every world dealt from one view."""

    t: _Tables
    viewer: int
    to_move: int
    leader: int
    dealt_leader: int
    ends: tuple[End, ...]
    layout: tuple[int, ...]  # tile indices
    layout_mask: int
    own_mask: int
    draws: int
    passes: int
    history: _HistoryNode | None
    spinner_done: bool
    lead_passes: int


# The last view from_view read and its part: (view, part), or None.
_LAST_VIEW: list[tuple[SeatView, _ViewPart] | None] = [None]


def _view_part(view: SeatView) -> _ViewPart:
    """The view's own part for :meth:`HandState.from_view`, or ``ValueError`` (its
    message starts ``from_view:``) naming what is not allowed."""
    t = _tables(view.rules)
    n = t.n
    seats = []
    for name in ("seat", "to_move", "leader"):
        value = getattr(view, name)
        seat = seat_number(value, n)
        if seat is None:
            raise ValueError(f"from_view: {_seat_error('view.' + name, value, n)}")
        seats.append(seat)
    viewer, to_move, leader = seats
    ends = _view_ends(t, view.ends)
    try:
        layout = tuple(_tile_indices(t, view.layout, "view.layout", {}, "given"))
    except MoveParseError as exc:
        raise MoveParseError(f"from_view: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"from_view: {exc}") from None
    own = 0
    for shown in view.hand:
        if not isinstance(shown, Tile) or _tile_problem(shown, t.S - 1) is not None:
            raise ValueError(f"from_view: view.hand holds {shown_value(shown)}, not a tile")
        own |= 1 << _tile_index(shown)
    counts = []
    for name in ("draws_this_turn", "passes_in_row"):
        count = getattr(view, name)
        number = whole_number(count)
        if number is None or number < 0:
            raise ValueError(
                f"from_view: view.{name}={shown_value(count)} is not allowed; "
                f"allowed: {INTEGER_KINDS}, 0 or more"
            )
        counts.append(number)
    history: _HistoryNode | None = None
    spinner_done = False
    lead_passes = 0
    for k, e in enumerate(view.history):
        if not isinstance(e, Event) or not isinstance(e.move, Move):
            raise ValueError(
                f"from_view: view.history[{k}] is {shown_value(e)}, not an Event with a Move"
            )
        history = (history, e.seat, e.move, e.ends)
        if e.move.kind == "play":
            tile = e.move.tile
            if (
                tile is not None
                and tile.is_double
                and (e.move.mode == "lead" and t.spinner_lead or t.first_double)
            ):
                spinner_done = True
        elif e.move.kind == "pass" and not e.ends:
            lead_passes += 1
    return _ViewPart(
        t=t,
        viewer=viewer,
        to_move=to_move,
        leader=leader,
        dealt_leader=view.history[0].seat if view.history else leader,
        ends=ends,
        layout=layout,
        layout_mask=sum(1 << i for i in layout),
        own_mask=own,
        draws=counts[0],
        passes=counts[1],
        history=history,
        spinner_done=spinner_done,
        lead_passes=lead_passes,
    )


def _world_tiles(
    view: SeatView, part: _ViewPart, hands: object, boneyard: object
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Every seat's hand mask and the boneyard's indices of a world dealt from ``view``,
    or ``ValueError`` (``MoveParseError`` for text that is no tile) naming what does not
    fit it. A world of plain tiles that fits is read in one pass (a search deals
    hundreds a decision); anything else goes through the checks that explain."""
    t = part.t
    n = t.n
    if not isinstance(hands, (list, tuple)) or len(hands) != n:
        raise ValueError(
            f"from_view: hands must be a list or tuple of {n} hands (one per seat), "
            f"got {shown_value(hands)}"
        )
    fast = _plain_world(part, hands, boneyard)
    if fast is not None:
        masks, sizes, stock = fast
        if (
            masks[part.viewer] == part.own_mask
            and sizes == view.hand_sizes
            and len(stock) == view.boneyard_size
        ):
            return masks, stock
    seen = dict.fromkeys(part.layout, "view.layout")
    try:
        held = [
            _tile_indices(t, hand, f"hand of seat {seat}", seen, "given")
            for seat, hand in enumerate(hands)
        ]
        stock = tuple(_tile_indices(t, boneyard, "boneyard", seen, "given"))
    except MoveParseError as exc:
        raise MoveParseError(f"from_view: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"from_view: {exc}") from None
    masks = tuple(sum(1 << i for i in h) for h in held)  # no index twice: a sum is an or
    if masks[part.viewer] != part.own_mask or len(held[part.viewer]) != len(view.hand):
        raise ValueError("from_view: the viewer's hand must be the view's hand")
    sizes = tuple(len(h) for h in held)
    if sizes != view.hand_sizes:
        raise ValueError(f"from_view: hand sizes {sizes} differ from the view's {view.hand_sizes}")
    if len(stock) != view.boneyard_size:
        raise ValueError(
            f"from_view: boneyard of {len(stock)} tiles, the view has {view.boneyard_size}"
        )
    if len(seen) != len(t.tiles):
        missing = " ".join(str(t.tiles[i]) for i in range(len(t.tiles)) if i not in seen)
        raise ValueError(
            f"from_view: hands, boneyard and layout must hold every tile once; missing {missing}"
        )
    return masks, stock


def _plain_world(
    part: _ViewPart, hands: Sequence[object], boneyard: object
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]] | None:
    """The hand masks, hand sizes and boneyard indices of a world made of plain
    :class:`Tile` s of the set that, with the layout, hold every tile once; None for
    anything else (text, other types, a tile twice or missing), which
    :func:`_world_tiles` then checks one by one."""
    set_max = part.t.S - 1
    taken = part.layout_mask
    masks = []
    sizes = []
    for hand in (*hands, boneyard):
        if not isinstance(hand, (list, tuple)):
            return None
        mask = 0
        for tile in hand:
            if type(tile) is not Tile:
                return None
            lo, hi = tile
            if type(lo) is not int or type(hi) is not int or not 0 <= lo <= hi <= set_max:
                return None
            bit = 1 << (hi * (hi + 1) // 2 + lo)
            if taken & bit:
                return None
            taken |= bit
            mask |= bit
        masks.append(mask)
        sizes.append(len(hand))
    if taken != (1 << len(part.t.tiles)) - 1:
        return None
    bone = boneyard
    assert isinstance(bone, (list, tuple))
    stock = tuple(hi * (hi + 1) // 2 + lo for lo, hi in bone)
    return tuple(masks[:-1]), tuple(sizes[:-1]), stock


def _view_ends(t: _Tables, ends: object) -> tuple[End, ...]:
    """A view's open ends as the engine reads them: each an :class:`End` whose kind is
    the module's own constant (move generation compares kinds by identity) and whose
    values are numbers of the rules' set; else ``ValueError`` naming the end."""
    if is_text(ends) or not isinstance(ends, Iterable):
        raise ValueError(f"from_view: view.ends must be a tuple of End, got {shown_value(ends)}")
    set_max = t.S - 1
    out = []
    for k, end in enumerate(ends):
        if not isinstance(end, tuple) or len(end) != 3:
            raise ValueError(f"from_view: view.ends[{k}] is {shown_value(end)}, not an End")
        kind, v, v2 = end
        if not (
            type(end) is End
            and any(kind is own for own in END_KINDS)
            and type(v) is int
            and (type(v2) is int or v2 is None)
        ):
            # Rebuilt through End's checks: an equal kind string that is not the
            # constant, a numpy value, or a tuple standing in for an End.
            try:
                end = End(kind, v, v2)
            except ValueError as exc:
                raise ValueError(f"from_view: view.ends[{k}]: {exc}") from None
        kind, v, v2 = end
        if (v is not None and v > set_max) or (v2 is not None and v2 > set_max):
            raise ValueError(
                f"from_view: view.ends[{k}] is {end}, which shows a number above "
                f"{set_max}, the highest of the double-{set_max} set"
            )
        out.append(end)
    return tuple(out)


_PLACEMENT_MODES = ("lead", "inline", "cross", "upright")


def _plainly_typed(move: object) -> bool:
    """Whether ``move`` is a :class:`Move` whose numbers are plain ints (or None) and
    whose tile is a :class:`Tile` of plain ints. Such a move that equals a legal move
    is as well formed as it (a cheap test for the environments' moves, which are
    built once per encoding, so that only other stand-ins pay for
    :func:`_move_problem`)."""
    if type(move) is not Move:
        return False
    _, tile, end, shows, _ = move
    return (
        (tile is None or (type(tile) is Tile and type(tile[0]) is int and type(tile[1]) is int))
        and (end is None or type(end) is int)
        and (shows is None or type(shows) is int)
    )


def _move_problem(move: object, set_max: int) -> str | None:
    """Why ``move`` is not a well-formed :class:`Move` (whatever the state), for an
    error message; None when it is one. Its numbers are integers (see
    :data:`INTEGER_KINDS`; a bool or a float is refused even where it equals a legal
    one), its tile a :class:`Tile` of the double-``set_max`` set, and a draw or pass
    carries nothing else."""
    if not isinstance(move, Move):
        return f"expected a Move or its text form, got {type(move).__name__}"
    kind, tile, end, shows, mode = move
    if not isinstance(kind, str):  # (an array would answer == with an array)
        return f"{shown_value(kind)} is not a kind of move (play, draw or pass)"
    if kind == "play":
        if isinstance(tile, str):
            return (
                f"the tile must be a Tile, not text: Tile.parse({shown_value(tile)}) reads "
                "it (or apply the move's text form, e.g. '2-5@0>5')"
            )
        if not isinstance(tile, Tile):
            return (
                f"the tile must be a Tile (e.g. Tile.parse('2-5') or Tile.of(2, 5)), "
                f"got {shown_value(tile)}"
            )
        problem = _tile_problem(tile, set_max)
        if problem is not None:
            return problem
        if not isinstance(mode, str) or mode not in _PLACEMENT_MODES:
            return (
                f"{shown_value(mode)} is not a mode of placement "
                f"(allowed: {', '.join(_PLACEMENT_MODES)})"
            )
        if mode == "lead":
            if end is not None or shows is not None:
                return "a lead names no open end or outward half (end and shows are None)"
            return None
        if whole_number(end) is None:
            return f"the open end must be {INTEGER_KINDS}, got {shown_value(end)}"
        if mode == "inline":
            half = whole_number(shows)
            if half is None or half not in tile:
                return f"the outward half must be a half of {tile}, got {shown_value(shows)}"
        elif shows is not None:
            return f"a {mode} placement has no outward half (shows is None)"
        return None
    if kind == "draw" or kind == "pass":
        name = "draw" if kind == "draw" else "pass"
        if tile is not None or end is not None or shows is not None or mode is not None:
            return (
                f"a {name} carries no tile, open end, outward half or mode: "
                f"apply {name.upper()} or the text {name!r}"
            )
        return None
    return f"{shown_value(kind)} is not a kind of move (play, draw or pass)"


def _fits_by_sum(t: _Tables, end: End, move: Move) -> bool:
    """Whether an in-line placement also links by rule 4 (the halves sum to S)."""
    kind, v, v2 = end
    if kind is BLANK:
        return False
    lo, hi = move[1]  # type: ignore[misc]
    touch = lo + hi - move[3]  # type: ignore[operator]
    return touch + v == t.S or (kind is CROSS and touch + v2 == t.S)  # type: ignore[operator]


def _highest_double_holder(t: _Tables, hands: Sequence[int]) -> int:
    """docs/rules.md, first_leader "highest_double": the highest double (the doubles' order is
    their index order), else the heaviest tile, ties to the higher high half."""
    dealt = 0
    for h in hands:
        dealt |= h
    doubles = dealt & t.double
    if doubles:
        best = doubles.bit_length() - 1
    else:
        best = max(_bits(dealt), key=lambda i: (t.pips[i], t.tiles[i].high))
    for seat, h in enumerate(hands):
        if (h >> best) & 1:
            return seat
    raise AssertionError("the highest tile was dealt to nobody")


def _domino_outcome(t: _Tables, hands: tuple[int, ...], seat: int) -> Outcome:
    rules = t.rules
    counts = _counts(t, hands)
    side = rules.side_of(seat)
    points = sum(c for s, c in enumerate(counts) if rules.side_of(s) != side)
    return Outcome(Termination.DOMINO, seat, side, points, counts)


def blocked_points(scoring: str, low: int, others: int) -> int:
    """What the side with the lowest count ``low`` scores in a blocked hand.

    ``others`` is the other sides' combined count; ``scoring`` is
    ``Rules.blocked_scoring`` ("others_minus_own", "others" or "others_plus_own";
    ``ValueError`` for anything else). Shared with the search agent's fast playouts.
    """
    if scoring == "others_minus_own":
        return others - low
    if scoring == "others":
        return others
    if scoring == "others_plus_own":
        return others + low
    raise ValueError(
        f"scoring={shown_value(scoring)} is not allowed; allowed: "
        f"{', '.join(CHOICES['blocked_scoring'])} (Rules.blocked_scoring)"
    )


def side_counts(rules: Rules, counts: Sequence[int]) -> tuple[int, ...]:
    """The pips left on each side, from each seat's count: a team's two hands added
    together, else each seat's own. A blocked hand is decided on these."""
    sums = [0] * rules.sides
    for seat, c in enumerate(counts):
        sums[rules.side_of(seat)] += c
    return tuple(sums)


def _blocked_outcome(t: _Tables, hands: tuple[int, ...]) -> Outcome:
    rules = t.rules
    counts = _counts(t, hands)
    sides = side_counts(rules, counts)
    low = min(sides)
    lowest = [side for side, c in enumerate(sides) if c == low]
    if len(lowest) > 1:
        term = Termination.VOID_TIE if rules.tie == "void" else Termination.REDEAL_TIE
        return Outcome(term, None, None, 0, counts)
    side = lowest[0]
    points = blocked_points(rules.blocked_scoring, low, sum(sides) - low)
    # The winning seat: with teams the partner with the lower count (ties: lower seat).
    members = [s for s in range(rules.players) if rules.side_of(s) == side]
    winner = min(members, key=lambda s: (counts[s], s))
    return Outcome(Termination.BLOCKED, winner, side, points, counts)


def _counts(t: _Tables, hands: tuple[int, ...]) -> tuple[int, ...]:
    pips = t.pips
    return tuple(sum(pips[i] for i in _bits(h)) for h in hands)
