"""One hand of Matador: the deal, legal moves, applying a move, the outcome, a seat's view.

A :class:`HandState` is immutable. All randomness is spent at the deal: the
boneyard order is part of the state, so a hand replays exactly from
``(rules, seed, leader, moves)``. Hands are held as bit masks over tile indices
(see :mod:`.tiles`), which keeps move generation a few mask operations per open
end.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeGuard

from .rules import Rules, RulesError
from .tiles import (
    BLANK,
    BRANCH,
    CROSS,
    DRAW,
    PASS,
    PLAIN,
    SPINNER,
    End,
    Move,
    Tile,
    set_tiles,
)

__all__ = [
    "HandState",
    "Outcome",
    "Termination",
    "Event",
    "SeatView",
    "IllegalMoveError",
    "blocked_points",
]


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


def _is_seat(value: object, players: int) -> bool:
    """A seat number: an int (not a bool) from 0 to players - 1."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < players


def _checked_scores(scores: object, rules: Rules) -> tuple[int, ...] | None:
    if scores is None:
        return None
    if not isinstance(scores, (tuple, list)) or len(scores) != rules.sides:
        raise ValueError(
            f"scores must be None or {rules.sides} match totals (one per "
            f"{'team' if rules.teams else 'seat'}), got {scores!r}"
        )
    for total in scores:
        if not isinstance(total, int) or isinstance(total, bool):
            raise ValueError(f"scores must be integers, got {total!r} in {scores!r}")
    return tuple(scores)


_BLANK_END = End(BLANK, None)
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

        Raises :class:`RulesError` when ``rules`` is not a :class:`Rules`, and
        ``ValueError`` when ``seed`` is not an int or ``leader`` not a seat.
        """
        t = _tables(rules)  # refuses anything but a Rules
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an int, got {seed!r}")
        rng = random.Random(seed)
        order = list(range(len(t.tiles)))
        rng.shuffle(order)
        n = rules.players
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
        elif not _is_seat(leader, n):
            raise ValueError(f"leader must be a seat from 0 to {n - 1}, got {leader!r}")
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

        ``boneyard`` is in draw order. Every tile of the set must be dealt or in the
        boneyard exactly once; sizes may differ from ``rules.hand_size``. Raises
        :class:`RulesError` or ``ValueError`` naming what is wrong.
        """
        t = _tables(rules)
        n = rules.players
        if not isinstance(hands, (list, tuple)) or len(hands) != n:
            raise ValueError(f"hands: expected a list of {n} hands for players={n}, got {hands!r}")
        if not _is_seat(leader, n):
            raise ValueError(f"leader must be a seat from 0 to {n - 1}, got {leader!r}")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"seed must be an int, got {seed!r}")
        seen: dict[int, str] = {}

        def index_of(tile: Tile | str, where: str) -> int:
            tl = Tile.parse(tile) if isinstance(tile, str) else tile
            if not _is_tile(tl, rules.set_max):
                raise ValueError(
                    f"{where}: {_shown_tile(tl)} is not a tile of the double-{rules.set_max} set"
                )
            if tl.index in seen:
                raise ValueError(f"{where}: {tl} is dealt twice (also in {seen[tl.index]})")
            seen[tl.index] = where
            return tl.index

        masks = []
        for seat, hand in enumerate(hands):
            if not isinstance(hand, Iterable) or isinstance(hand, (str, bytes)):
                raise ValueError(f"hand of seat {seat}: expected a list of tiles, got {hand!r}")
            mask = 0
            for tile in hand:
                mask |= 1 << index_of(tile, f"hand of seat {seat}")
            masks.append(mask)
        if not isinstance(boneyard, Iterable) or isinstance(boneyard, (str, bytes)):
            raise ValueError(f"boneyard: expected a list of tiles, got {boneyard!r}")
        stock = tuple(index_of(tile, "boneyard") for tile in boneyard)
        if len(seen) != len(t.tiles):
            missing = [str(t.tiles[i]) for i in range(len(t.tiles)) if i not in seen]
            raise ValueError(f"deal: every tile must be placed once; missing {' '.join(missing)}")
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
        hands: Sequence[Iterable[Tile]],
        boneyard: Iterable[Tile],
    ) -> HandState:
        """A full state consistent with ``view`` in which the hidden tiles lie as given.

        ``hands`` gives every seat's hand (the viewer's must equal ``view.hand``),
        ``boneyard`` the undrawn tiles in the order they would be drawn. This is how
        a determinizing search samples worlds; the public part is taken from the view.
        """
        if not isinstance(view, SeatView):
            raise ValueError(f"from_view: expected a SeatView, got {type(view).__name__}")
        rules = view.rules
        t = _tables(rules)
        if tuple(sorted(hands[view.seat])) != tuple(sorted(view.hand)):
            raise ValueError("from_view: the viewer's hand must be the view's hand")
        sizes = tuple(len(tuple(h)) for h in hands)
        if sizes != view.hand_sizes:
            raise ValueError(
                f"from_view: hand sizes {sizes} differ from the view's {view.hand_sizes}"
            )
        stock = tuple(tl.index for tl in boneyard)
        if len(stock) != view.boneyard_size:
            raise ValueError(
                f"from_view: boneyard of {len(stock)} tiles, the view has {view.boneyard_size}"
            )
        masks = tuple(sum(1 << tl.index for tl in h) for h in hands)
        placed = sum(1 << tl.index for tl in view.layout)
        every = placed | sum(1 << i for i in stock)
        for m in masks:
            every |= m
        if every != (1 << len(t.tiles)) - 1 or sum(sizes) + len(stock) + len(view.layout) != len(
            t.tiles
        ):
            raise ValueError("from_view: hands, boneyard and layout must hold every tile once")
        s = object.__new__(cls)
        s._t = t
        s._seed = 0
        s._hands = masks
        s._stock = stock
        s._pos = 0
        s._ends = view.ends
        history: _HistoryNode | None = None
        spinner_done = False
        lead_passes = 0
        for e in view.history:
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
        s._spinner_done = spinner_done
        s._to_move = view.to_move
        s._leader = view.leader
        s._dealt_leader = view.history[0].seat if view.history else view.leader
        s._passes = view.passes_in_row
        s._lead_passes = lead_passes
        s._draws = view.draws_this_turn
        s._history = history
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
        """The seat's tiles (``ValueError`` for a seat that is not one)."""
        return _mask_tiles(self._t, self.hand_mask(seat))

    def hand_mask(self, seat: int) -> int:
        """The seat's hand as a bit mask over tile indices."""
        if not _is_seat(seat, self._t.n):
            raise ValueError(f"seat must be an int from 0 to {self._t.n - 1}, got {seat!r}")
        return self._hands[seat]

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
        number, bytes...); :class:`MoveParseError` (a ``ValueError``) when text is not
        in the move text form. Either way this state is left as it was.
        """
        if isinstance(move, str):
            move = Move.parse(move)
        legal = self._legal
        if legal is None:
            legal = self._legal = self._compute_legal()
        try:
            # The engine's own instance goes on: an equal stand-in (a bool or float
            # half, a tuple subclass) must not reach the history or the text form.
            move = legal[legal.index(move)]
        except (ValueError, TypeError):
            raise IllegalMoveError(move, self._to_move, legal, self._why_illegal(move)) from None
        kind = move[0]
        if kind == "play":
            return self._play(move)
        if kind == "draw":
            return self._draw(move)
        return self._pass(move)

    def _why_illegal(self, move: object) -> str:
        if self._outcome is not None:
            return "the hand is over"
        if not isinstance(move, Move):
            return f"expected a Move or its text form, got {type(move).__name__}"
        seat = self._to_move
        if move.kind == "play":
            tile = move.tile
            if not _is_tile(tile, self._t.S - 1):
                return f"{_shown_tile(tile)} is not a tile of the double-{self._t.S - 1} set"
            assert tile is not None
            if not (self._hands[seat] >> tile.index) & 1:
                return f"seat {seat} does not hold {tile}"
            if move.mode == "lead" and self._ends:
                return "the lead has been placed already; name an open end"
            if move.mode != "lead" and not self._ends:
                return "no tile is on the table yet: lead a tile (e.g. '3-3')"
            end = move.end
            if end is not None and not (type(end) is int and 0 <= end < len(self._ends)):
                return f"there is no open end {end!r} (open ends: 0-{len(self._ends) - 1})"
            return "it does not fit there under these rules"
        if move.kind == "draw":
            return "drawing is not allowed now"
        if move.kind == "pass":
            return "passing is allowed only when no placement or draw is possible"
        return f"{move.kind!r} is not a kind of move (play, draw or pass)"

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
                    repl = (End(CROSS, lo, hi),)
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

        Raises ``ValueError`` when ``seat`` is not a seat number (an int, not a
        bool, from 0 to players - 1) or ``scores`` not one integer per side.
        """
        n = self._t.n
        if not _is_seat(seat, n):
            raise ValueError(f"seat must be an int from 0 to {n - 1}, got {seat!r}")
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


def _shown_tile(value: object) -> str:
    """A value for an error message: a tile with int halves in order in its text form
    (``9-9``), anything else as its repr (``Tile(low=5, high=2)`` shows what is wrong)."""
    if isinstance(value, Tile):
        lo, hi = value
        if type(lo) is int and type(hi) is int and 0 <= lo <= hi:
            return str(value)
    return repr(value)


def _is_tile(value: object, set_max: int) -> TypeGuard[Tile]:
    """A :class:`Tile` of the double-``set_max`` set, with int halves in order."""
    if not isinstance(value, Tile):
        return False
    lo, hi = value
    return type(lo) is int and type(hi) is int and 0 <= lo <= hi <= set_max


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
    ``Rules.blocked_scoring``. Shared with the search agent's fast playouts.
    """
    if scoring == "others_minus_own":
        return others - low
    if scoring == "others":
        return others
    return others + low


def _blocked_outcome(t: _Tables, hands: tuple[int, ...]) -> Outcome:
    rules = t.rules
    counts = _counts(t, hands)
    side_counts = [0] * rules.sides
    for seat, c in enumerate(counts):
        side_counts[rules.side_of(seat)] += c
    low = min(side_counts)
    lowest = [side for side, c in enumerate(side_counts) if c == low]
    if len(lowest) > 1:
        term = Termination.VOID_TIE if rules.tie == "void" else Termination.REDEAL_TIE
        return Outcome(term, None, None, 0, counts)
    side = lowest[0]
    points = blocked_points(rules.blocked_scoring, low, sum(side_counts) - low)
    # The winning seat: with teams the partner with the lower count (ties: lower seat).
    members = [s for s in range(rules.players) if rules.side_of(s) == side]
    winner = min(members, key=lambda s: (counts[s], s))
    return Outcome(Termination.BLOCKED, winner, side, points, counts)


def _counts(t: _Tables, hands: tuple[int, ...]) -> tuple[int, ...]:
    pips = t.pips
    return tuple(sum(pips[i] for i in _bits(h)) for h in hands)
