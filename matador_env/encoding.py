"""The tensor contract: actions <-> integers and observations as tables of named pieces.

This module is the one place that turns the engine's objects into numbers. The
environments (:mod:`matador_env.matador_v0`, :mod:`matador_env.gym_env`) and learned
agents all go through it, and a saved model should store :data:`ENCODING_VERSION`
and refuse to load under another one.

Everything depends on the :class:`~matador_env.engine.Rules` (the set, the number
of players, how matadors lie), so the contract is an :class:`Encoding` built once
per rules configuration: ``encoding_for(rules)``.

Action layout
=============

One ``Discrete(num_actions)`` space per rules configuration, the same for every
seat, with no seat in it. With ``T`` tiles in the set (index order of
:func:`~matador_env.engine.set_tiles`: ``0-0, 0-1, 1-1, 0-2, ...``), ``E`` end slots
(:func:`max_open_ends`) and ``P`` placements per slot:

=====================  =========================  ==========================================
actions                count                      move
=====================  =========================  ==========================================
``0 .. T-1``           ``T``                      lead tile ``k`` (the pseudo-slot before the
                                                  first tile; ``Move.lead``)
``T + e*P + p``        ``E * P``                  placement ``p`` of the slot table on open end
                                                  ``e`` (the engine's end index, layout order)
``T + E*P``            1                          ``draw``
``T + E*P + 1``        1                          ``pass``
=====================  =========================  ==========================================

The slot table lists, tile by tile in index order, the orientations the rules can
produce for that tile:

- ``low``: in line, the low half facing outward (``2-5@e>2``); every tile;
- ``high``: in line, the high half facing outward (``2-5@e>5``); not for doubles,
  where it would be the same move as ``low``;
- ``cross``: crosswise (``2-5@ex``); matadors only, and only where
  ``matador_placement`` is "crosswise_choice" (not 0-0), "crosswise_on_blank" or
  "branching";
- ``upright``: stood upright (``2-5@e^``); matadors only, "upright" only.

So double-six under "inline" has ``P = 28 + 21 = 49`` and ``E = 2``: 28 leads,
98 placements, draw and pass, 128 actions. Every move the engine can generate has
exactly one action; :meth:`Encoding.encode_action` and
:meth:`Encoding.decode_action` are inverse on them.

``E`` is the most open ends the rules can produce at once (:func:`max_open_ends`):
2 in line, 4 with a spinner (as the lead, or 2 + 2 when a later first double
spins), plus 1 for every matador that "branching" can lay crosswise (0-0 included).

Observation pieces
==================

A flat ``float32`` vector in ``[0, 1]``, from the observing seat's point of view.
"Others" are the other seats in playing order from the observer: seat + 1,
seat + 2, ... (mod n). ``V = set_max + 1`` values, ``K = 5 + V`` numbers per end
slot, ``C = V + 2`` columns of the cannot-answer table, ``n`` players, ``sides``
the scoring units (2 with teams, else n).

===============  =================  ==========================================================
piece            size               meaning
===============  =================  ==========================================================
hand             T                  1 for each tile the observer holds
played           T                  1 for each tile on the table
ends             E x K              per end slot (engine order, as in the action layout): the
                                    kind one-hot (plain, crosswise two-valued, needs-a-blank,
                                    branch, spinner side), then the values it shows, multi-hot
                                    (two for a crosswise end, none for needs-a-blank); an
                                    unused slot is all zeros
boneyard         1                  boneyard size / T
passes           1                  passes in a row / n
target           1                  min(target_score, 1000) / 1000
hand_sizes       n - 1              the others' hand sizes / T
partner          n - 1              1 at the partner (teams only)
cannot_answer    (n - 1) x C        per other seat, seen unable to answer: columns 0..V-1 the
                                    end values, V a needs-a-blank end, V+1 "holds no matador"
                                    (see below)
scores           sides              match totals / (2 x target), capped at 1; the observer's
                                    side first, then the other sides in seat order from it
leader           n                  one-hot: who placed (or is due to place) the lead,
                                    relative to the observer (0 = the observer)
to_move          n                  one-hot: who is to move, relative to the observer
===============  =================  ==========================================================

The cannot-answer table is public knowledge built from the history. After the lead,
a seat that passes, or draws when ``voluntary_draw`` is "never", had no legal
placement: every end value that a regular tile could have answered is marked, and
"holds no matador" too. A draw under "only_matadors" shows only that no regular
(non-matador) tile answered, so the values are marked and the matador column is
not. A draw under "always" shows nothing. While the spinner's cross must be
filled (``spinner="lead_double_cross"``) only spinner sides count. Marks stay for
the rest of the hand, even though a later draw may have brought an answer.

The full-information :meth:`Encoding.state_tensor` for centralised critics has its
own table, :attr:`Encoding.state_pieces`, in absolute seat order.

Version history
===============

* 1: initial contract.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .engine import (
    BLANK,
    BRANCH,
    CROSS,
    DRAW,
    PASS,
    PLAIN,
    SPINNER,
    End,
    Event,
    HandState,
    Move,
    Rules,
    SeatView,
    Tile,
    set_tiles,
)
from .engine.rules import a_type, rules_differences
from .engine.state import _checked_scores, _move_problem, _plainly_typed, _seat_error, seat_number
from .engine.tiles import is_text, shown_value
from .values import as_integer, same_value

__all__ = [
    "ENCODING_VERSION",
    "Encoding",
    "Piece",
    "ObservationTracker",
    "action_mask",
    "decode_action",
    "encode_action",
    "encoding_for",
    "max_open_ends",
    "observation",
    "state_tensor",
]

ENCODING_VERSION = 1
"""Bumped whenever the action layout or an observation or state piece changes."""

KINDS = (PLAIN, CROSS, BLANK, BRANCH, SPINNER)
"""The order of the end-kind one-hot in the ``ends`` piece."""
_KIND_INDEX = {k: i for i, k in enumerate(KINDS)}

_TARGET_SCALE = 1000


@dataclass(frozen=True)
class Piece:
    """One named piece of an observation or state vector."""

    name: str
    shape: tuple[int, ...]
    description: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))


def max_open_ends(rules: Rules | str) -> int:
    """The most open ends a hand under ``rules`` (a :class:`Rules` or a preset's name,
    as :func:`encoding_for` takes them) can have at once (the slot count E)."""
    if not isinstance(rules, Rules):
        return encoding_for(rules).end_slots
    ends = 2 if rules.spinner == "none" else 4
    if rules.matador_placement == "branching":
        ends += len(_matadors(rules))
    return ends


def _matadors(rules: Rules) -> tuple[Tile, ...]:
    return tuple(t for t in set_tiles(rules.set_max) if rules.is_matador(t))


class Encoding:
    """The action layout and observation pieces of one rules configuration.

    Build with :func:`encoding_for` (cached per rules).
    """

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.tiles = set_tiles(rules.set_max)
        T = self.num_tiles = len(self.tiles)
        V = self.num_values = rules.set_max + 1
        n = self.players = rules.players
        self.sides = rules.sides
        E = self.end_slots = max_open_ends(rules)

        # -- actions ------------------------------------------------------------------
        placement = rules.matador_placement
        matadors = set(_matadors(rules))
        slot: list[tuple[Tile, str]] = []
        for tile in self.tiles:
            slot.append((tile, "low"))
            if not tile.is_double:
                slot.append((tile, "high"))
            if tile in matadors:
                if placement in ("crosswise_on_blank", "branching") or (
                    placement == "crosswise_choice" and tile.pips != 0
                ):
                    slot.append((tile, "cross"))
                elif placement == "upright":
                    slot.append((tile, "upright"))
        self.slot_table: tuple[tuple[Tile, str], ...] = tuple(slot)
        """The placements of one end slot, in action order: (tile, orientation)."""
        P = self.placements_per_slot = len(slot)
        moves: list[Move] = [Move.lead(t) for t in self.tiles]
        for e in range(E):
            for tile, orient in slot:
                if orient == "low":
                    moves.append(Move.inline(tile, e, tile.low))
                elif orient == "high":
                    moves.append(Move.inline(tile, e, tile.high))
                elif orient == "cross":
                    moves.append(Move.cross(tile, e))
                else:
                    moves.append(Move.upright(tile, e))
        self.draw_action = T + E * P
        self.pass_action = self.draw_action + 1
        moves += [DRAW, PASS]
        self.moves: tuple[Move, ...] = tuple(moves)
        """``moves[a]`` is the move of action ``a``."""
        self.num_actions = len(moves)
        self.index: dict[Move, int] = {m: a for a, m in enumerate(moves)}
        """The action of each move (the inverse of :attr:`moves`)."""

        # -- observation pieces ---------------------------------------------------------
        K = self.end_width = len(KINDS) + V
        C = self.cannot_width = V + 2
        self.pieces: tuple[Piece, ...] = (
            Piece("hand", (T,), "1 for each tile the observer holds"),
            Piece("played", (T,), "1 for each tile on the table"),
            Piece("ends", (E, K), "per end slot: kind one-hot, then the values shown"),
            Piece("boneyard", (1,), "boneyard size / T"),
            Piece("passes", (1,), "passes in a row / n"),
            Piece("target", (1,), "min(target_score, 1000) / 1000"),
            Piece("hand_sizes", (n - 1,), "the others' hand sizes / T"),
            Piece("partner", (n - 1,), "1 at the partner (teams only)"),
            Piece("cannot_answer", (n - 1, C), "per other seat: values, needs-a-blank, matador"),
            Piece("scores", (self.sides,), "match totals / (2 x target), own side first"),
            Piece("leader", (n,), "one-hot, relative to the observer"),
            Piece("to_move", (n,), "one-hot, relative to the observer"),
        )
        self.offsets: dict[str, slice] = _offsets(self.pieces)
        self.obs_size = sum(p.size for p in self.pieces)

        self.state_pieces: tuple[Piece, ...] = (
            Piece("hands", (n, T), "every seat's hand, seat 0 first"),
            Piece("boneyard_tiles", (T,), "1 for each tile in the boneyard"),
            Piece("played", (T,), "1 for each tile on the table"),
            Piece("ends", (E, K), "as in the observation"),
            Piece("boneyard", (1,), "boneyard size / T"),
            Piece("passes", (1,), "passes in a row / n"),
            Piece("target", (1,), "min(target_score, 1000) / 1000"),
            Piece("cannot_answer", (n, C), "per seat, as in the observation"),
            Piece("scores", (self.sides,), "match totals / (2 x target), side 0 first"),
            Piece("leader", (n,), "one-hot, absolute seat"),
            Piece("to_move", (n,), "one-hot, absolute seat"),
        )
        self.state_offsets: dict[str, slice] = _offsets(self.state_pieces)
        self.state_size = sum(p.size for p in self.state_pieces)

        # Constants shared by the two observation builders, so that both compute
        # every number with the same float expression.
        self.inv_tiles = 1.0 / T
        self.inv_players = 1.0 / n
        self.target_value = min(rules.target_score, _TARGET_SCALE) / _TARGET_SCALE
        self.score_scale = 2 * rules.target_score
        self.voluntary_draw = rules.voluntary_draw
        self.cross_must_fill = rules.spinner == "lead_double_cross"
        self.S = rules.link_sum
        # The others in playing order from each observer, and each seat's
        # position in the observer-relative pieces.
        self.others: tuple[tuple[int, ...], ...] = tuple(
            tuple((seat + k) % n for k in range(1, n)) for seat in range(n)
        )
        self.side_order: tuple[tuple[int, ...], ...] = tuple(
            tuple((rules.side_of(seat) + k) % self.sides for k in range(self.sides))
            for seat in range(n)
        )

        # observation() runs on every move a trained bot makes, so what does not
        # depend on the view is resolved here once: piece starts (a dict lookup per
        # piece per call was measurable), tile indices (Tile.index is computed on
        # each access) and, per observer, where each seat's cannot-answer row lies.
        at = {name: sl.start for name, sl in self.offsets.items()}
        self._hand0, self._played0, self._ends0 = at["hand"], at["played"], at["ends"]
        self._boneyard_at = at["boneyard"]
        self._passes_at = at["passes"]
        self._target_at = at["target"]
        self._sizes0, self._scores0 = at["hand_sizes"], at["scores"]
        self._leader0, self._to_move0 = at["leader"], at["to_move"]
        self._partner_at = at["partner"] + 1 if rules.teams else None
        self.tile_index: dict[Tile, int] = {t: t.index for t in self.tiles}
        """Tile -> its index in the hand and played pieces (cheaper than ``Tile.index``)."""
        self._cannot_rows: tuple[tuple[int | None, ...], ...] = tuple(
            tuple(
                None if other == seat else at["cannot_answer"] + ((other - seat) % n - 1) * C
                for other in range(n)
            )
            for seat in range(n)
        )
        self._rules_seen: Rules = rules  # see encodes()

    def encodes(self, rules: Rules) -> bool:
        """Whether ``rules`` are this encoding's (equal rules; checked on every move a
        bot makes, so the last equal object seen passes on an identity test)."""
        if rules is self._rules_seen:
            return True
        if rules != self.rules:
            return False
        self._rules_seen = rules  # Rules is frozen: it stays equal
        return True

    # -- actions ----------------------------------------------------------------------

    def encode_action(self, move: Move | str) -> int:
        """The action of ``move`` (a :class:`Move` or its text form). Raises
        ``TypeError`` for anything else, and ``ValueError`` for a move with no action
        under these rules or one the engine would refuse however it is placed (a bool
        or a float for a number, a plain tuple for the tile: equal to a real move,
        they are not one)."""
        if isinstance(move, str):
            move = Move.parse(move)
        elif not isinstance(move, Move):
            raise TypeError(
                f"move {shown_value(move)} ({type(move).__name__}) is not allowed; allowed: a "
                "Move or its text form"
            )
        elif not _plainly_typed(move):
            problem = _move_problem(move, self.rules.set_max)
            if problem is not None:
                raise ValueError(f"move {shown_value(move)} is not allowed: {problem}")
        try:
            return self.index[move]
        except KeyError:
            raise ValueError(
                f"move {str(move)!r} has no action under these rules "
                f"(tiles of the double-{self.rules.set_max} set, open ends 0-{self.end_slots - 1},"
                f" orientations {sorted({o for _, o in self.slot_table})})"
            ) from None

    def decode_action(self, action: int) -> Move:
        """The move of ``action``: an integer from 0 to ``num_actions - 1`` (an ``int``,
        a numpy integer or a 0-d integer array; anything else, bools included, raises
        ``TypeError``)."""
        if type(action) is not int:
            action = as_integer(action)
        if not 0 <= action < self.num_actions:
            raise ValueError(f"action {action!r} is out of range 0-{self.num_actions - 1}")
        return self.moves[action]

    def action_mask(self, moves: Iterable[Move | str]) -> np.ndarray:
        """``int8`` mask over the actions: 1 for each move in ``moves`` (each a
        :class:`Move` or its text form, as :meth:`encode_action` takes them; a move with
        no action raises ``ValueError``, anything else ``TypeError``, naming it; so
        does ``moves`` itself when it is one text, which would be read letter by
        letter, or nothing to iterate). A :class:`Move` is looked up by equality alone,
        as the engine's own moves are on every bot move; :meth:`encode_action` checks
        its form as well (a bool for an end equals 1 here)."""
        if type(moves) is not tuple and (
            is_text(moves) or not isinstance(moves, Iterable)
        ):  # (the engine gives tuples: one test on the path of every bot move)
            raise TypeError(
                f"moves={shown_value(moves)} ({type(moves).__name__}) is not allowed; allowed: "
                "a list of moves (Move objects or their text forms), e.g. state.legal_moves()"
            )
        # A bytearray is the cheapest buffer to fill from Python; numpy wraps it as is.
        mask = bytearray(self.num_actions)
        index = self.index
        for m in moves:
            try:
                a = index[m]  # type: ignore[index]  # the engine's moves: one lookup
            except (KeyError, TypeError):  # text, a move with no action, or no move
                a = -1
            if a < 0 or type(m) is not Move:  # (a plain tuple equal to a move is none)
                if not isinstance(m, (Move, str)):
                    raise TypeError(
                        f"moves entry {shown_value(m)} ({type(m).__name__}) is not allowed; "
                        "allowed: a Move or its text form"
                    )
                a = self.encode_action(m)
            mask[a] = 1
        return np.frombuffer(mask, np.int8)

    def describe_action(self, action: int) -> str:
        """The text form of the action's move, e.g. ``2-5@1>5``."""
        return str(self.decode_action(action))

    # -- observations -----------------------------------------------------------------

    def ends_vector(self, ends: Sequence[End], out: np.ndarray, at: int = 0) -> None:
        """Write the ``ends`` piece (flattened, ``E * K``) into ``out`` from position ``at``."""
        K = self.end_width
        base_v = len(KINDS)
        row = at
        for kind, v, v2 in ends:
            out[row + _KIND_INDEX[kind]] = 1.0
            if v is not None:
                out[row + base_v + v] = 1.0
            if v2 is not None:
                out[row + base_v + v2] = 1.0
            row += K

    def cannot_answer_marks(self, event: Event | tuple[int, Move, tuple[End, ...]]) -> list[int]:
        """The cannot-answer columns an event marks for its seat (see the module docs)."""
        _, move, ends = event
        kind = move[0]
        if not ends or kind == "play":
            return []
        if kind == "draw":
            vol = self.voluntary_draw
            if vol == "always":
                return []
            no_matador = vol == "never"
        else:
            no_matador = True
        if self.cross_must_fill and any(e[0] is SPINNER for e in ends):
            ends = tuple(e for e in ends if e[0] is SPINNER)
        V = self.num_values
        cols = []
        for ekind, v, v2 in ends:
            if ekind is BLANK:
                cols.append(V)
            else:
                cols.append(v)  # type: ignore[arg-type]
                if v2 is not None:
                    cols.append(v2)
        if no_matador:
            cols.append(V + 1)
        return cols

    def cannot_answer_table(self, history: Iterable[Event]) -> np.ndarray:
        """The ``(n, C)`` cannot-answer table of a hand's history, in absolute seats."""
        table = np.zeros((self.players, self.cannot_width), np.float32)
        for event in history:
            for col in self.cannot_answer_marks(event):
                table[event[0], col] = 1.0
        return table

    def observation(self, view: SeatView) -> np.ndarray:
        """The observation vector of a seat's view (see the pieces table)."""
        # The hot path of a trained bot's move: scalar writes at precomputed
        # positions, no temporary table. ObservationTracker and the tests hold it
        # equal, number for number, to the pieces table.
        if not isinstance(view, SeatView):
            raise _not_a(view, "observation", "a SeatView (state.view(seat))")
        rules = view.rules
        if not self.encodes(rules):
            raise ValueError("observation: the view's rules differ from this encoding's")
        obs = np.zeros(self.obs_size, np.float32)
        seat = view.seat
        tile_index = self.tile_index
        try:
            h0 = self._hand0
            for tile in view.hand:
                obs[h0 + tile_index[tile]] = 1.0
            p0 = self._played0
            for tile in view.layout:
                obs[p0 + tile_index[tile]] = 1.0
        except KeyError as exc:
            raise ValueError(
                f"observation: {exc.args[0]} is not a tile of the double-{rules.set_max} set"
            ) from None
        self.ends_vector(view.ends, obs, self._ends0)
        n = self.players
        inv_t = self.inv_tiles
        obs[self._boneyard_at] = view.boneyard_size * inv_t
        obs[self._passes_at] = view.passes_in_row * self.inv_players
        obs[self._target_at] = self.target_value
        hand_sizes = view.hand_sizes
        hs = self._sizes0
        for k, other in enumerate(self.others[seat]):
            obs[hs + k] = hand_sizes[other] * inv_t
        if self._partner_at is not None:
            # The partner sits opposite: seat + 2, the second of the others.
            obs[self._partner_at] = 1.0
        # The cannot-answer rows straight from the history (as cannot_answer_table
        # builds them): only a draw or a pass marks, and the observer's own row is
        # not part of the observation.
        rows = self._cannot_rows[seat]
        marks = self.cannot_answer_marks
        for event in view.history:
            if event[1][0] == "play":
                continue
            base = rows[event[0]]
            if base is not None:
                for col in marks(event):
                    obs[base + col] = 1.0
        scores = view.scores
        if scores is not None:
            sc = self._scores0
            scale = self.score_scale
            for k, side in enumerate(self.side_order[seat]):
                obs[sc + k] = min(scores[side], scale) / scale
        obs[self._leader0 + (view.leader - seat) % n] = 1.0
        obs[self._to_move0 + (view.to_move - seat) % n] = 1.0
        return obs

    def state_tensor(
        self,
        state: HandState,
        scores: Sequence[int] | None = None,
        cannot: np.ndarray | None = None,
    ) -> np.ndarray:
        """Full-information vector for centralised critics (see :attr:`state_pieces`).

        It reads every hand and the boneyard: never give it to a policy that acts.
        ``cannot`` is the cannot-answer table if the caller keeps one; by default
        it is rebuilt from the history. ``scores`` are the match totals as
        :meth:`HandState.view` takes them (one integer of 0 or more per side).
        """
        if not isinstance(state, HandState):
            raise _not_a(state, "state_tensor", "a HandState (a seat's view holds too little)")
        if state.rules != self.rules:
            raise ValueError("state_tensor: the state's rules differ from this encoding's")
        scores = _checked_scores(scores, self.rules)
        out = np.zeros(self.state_size, np.float32)
        off = self.state_offsets
        T = self.num_tiles
        hands = out[off["hands"]]
        for seat in range(self.players):
            _write_mask(hands, seat * T, state.hand_mask(seat))
        b0 = off["boneyard_tiles"].start
        for tile in state.boneyard:
            out[b0 + tile.index] = 1.0
        p0 = off["played"].start
        for tile in state.layout:
            out[p0 + tile.index] = 1.0
        self.ends_vector(state.ends, out[off["ends"]])
        out[off["boneyard"].start] = state.boneyard_size * self.inv_tiles
        out[off["passes"].start] = state.passes_in_row * self.inv_players
        out[off["target"].start] = self.target_value
        if cannot is None:
            cannot = self.cannot_answer_table(state.history)
        elif np.shape(cannot) != (self.players, self.cannot_width):
            # numpy's refusal named no argument (or a broadcast filled it in silently).
            raise ValueError(
                f"state_tensor: cannot has shape {np.shape(cannot)}; allowed: the "
                f"cannot-answer table, shape ({self.players}, {self.cannot_width})"
            )
        out[off["cannot_answer"]] = np.asarray(cannot).ravel()
        if scores is not None:
            sc = off["scores"].start
            scale = self.score_scale
            for side, total in enumerate(scores):
                out[sc + side] = min(total, scale) / scale
        out[off["leader"].start + state.leader] = 1.0
        out[off["to_move"].start + state.to_move] = 1.0
        return out

    def signature(self) -> dict[str, object]:
        """What a saved model must match: the encoding version, the rules and the sizes."""
        return {
            "encoding_version": ENCODING_VERSION,
            "rules": self.rules.to_dict(),
            "num_actions": self.num_actions,
            "obs_size": self.obs_size,
            "state_size": self.state_size,
        }

    def check_signature(self, saved: dict[str, object]) -> None:
        """Raise ``ValueError`` naming what differs if ``saved`` is not :meth:`signature`
        (each differing rules field on its own; ``TypeError`` if ``saved`` is no dict)."""
        if not isinstance(saved, dict):
            raise _not_a(saved, "check_signature", "a dict, as signature() gives")
        mine = self.signature()
        details = []
        for key, now in mine.items():
            was = saved.get(key, "<missing>")
            if key == "rules" and isinstance(was, dict) and isinstance(now, dict):
                details += [f"rules.{d}" for d in rules_differences(was, now, ("saved", "now"))]
            elif not same_value(was, now):
                details.append(f"{key}: saved {shown_value(was)}, now {shown_value(now)}")
        if details:
            raise ValueError(f"the saved encoding does not match this one ({'; '.join(details)})")

    def split(self, vector: np.ndarray, state: bool = False) -> dict[str, np.ndarray]:
        """The named pieces of an observation (or, with ``state=True``, a state) vector."""
        pieces, offsets = (
            (self.state_pieces, self.state_offsets) if state else (self.pieces, self.offsets)
        )
        size = self.state_size if state else self.obs_size
        if not isinstance(vector, np.ndarray) or vector.shape != (size,):
            what = "a state" if state else "an observation"
            got = f"shape {vector.shape}" if isinstance(vector, np.ndarray) else a_type(vector)
            raise ValueError(
                f"split: expected {what} vector, a numpy array of shape ({size},) under these "
                f"rules{'' if state else ' (a state vector: state=True)'}; got {got}"
            )
        return {p.name: vector[offsets[p.name]].reshape(p.shape) for p in pieces}


def _not_a(value: object, where: str, allowed: str) -> TypeError:
    return TypeError(f"{where}: expected {allowed}, got {a_type(value)}")


def _offsets(pieces: Sequence[Piece]) -> dict[str, slice]:
    out: dict[str, slice] = {}
    start = 0
    for p in pieces:
        out[p.name] = slice(start, start + p.size)
        start += p.size
    return out


def _write_mask(out: np.ndarray, start: int, mask: int) -> None:
    while mask:
        low = mask & -mask
        out[start + low.bit_length() - 1] = 1.0
        mask ^= low


class ObservationTracker:
    """Builds the observations of one game incrementally, for the environments.

    Equal, number for number, to :meth:`Encoding.observation` of the seat's view,
    but cheaper: it keeps one vector of the game's pieces in absolute seat order
    (every hand, the public pieces, hand sizes, the cannot-answer table, scores,
    leader and seat to move) up to date as moves are applied, and an observation
    is one gather from it through the observer's index table. Call :meth:`start`
    with each new hand and :meth:`advance` after each move.

    It holds every hand, so it belongs to the environment, never to an agent.
    """

    def __init__(self, enc: Encoding) -> None:
        self.enc = enc
        n = self._n = enc.players
        T = self._T = enc.num_tiles
        C = self._C = enc.cannot_width
        K = self._K = enc.end_width
        E = enc.end_slots
        sides = enc.sides
        # The master vector's layout (absolute seats).
        layout: dict[str, int] = {}
        size = 0
        for name, length in (
            ("hands", n * T),
            ("played", T),
            ("ends", E * K),
            ("boneyard", 1),
            ("passes", 1),
            ("target", 1),
            ("sizes", n),
            ("cannot", n * C),
            ("scores", sides),
            ("leader", n),
            ("to_move", n),
            ("zero", 1),
            ("one", 1),
        ):
            layout[name] = size
            size += length
        self._at = layout
        self._master = np.zeros(size, np.float32)
        self._master[layout["target"]] = enc.target_value
        self._master[layout["one"]] = 1.0
        self._ends = self._master[layout["ends"] : layout["ends"] + E * K]
        self._hands0 = layout["hands"]
        self._played0 = layout["played"]
        self._bone = layout["boneyard"]
        self._passes = layout["passes"]
        self._sizes0 = layout["sizes"]
        self._cannot0 = layout["cannot"]
        self._leader0 = layout["leader"]
        self._to_move0 = layout["to_move"]
        self._gather = [self._gather_index(seat) for seat in range(n)]
        self._end_rows: dict[End, np.ndarray] = {}
        self._inv_tiles = enc.inv_tiles
        self._inv_players = enc.inv_players
        self._tile_index = enc.tile_index
        self._hand_base = [self._hands0 + seat * T for seat in range(n)]
        self._marked_ends: tuple[End, ...] | None = None
        self._marked_seat = -1
        self._size: list[int] = [0] * n
        self._leader = self._to_move = self._passes_in_row = 0

    def _gather_index(self, seat: int) -> np.ndarray:
        """Master positions of each observation number of ``seat``, in piece order."""
        enc = self.enc
        at = self._at
        n, T, C = self._n, self._T, self._C
        others = enc.others[seat]
        idx: list[int] = []
        idx += range(at["hands"] + seat * T, at["hands"] + seat * T + T)
        idx += range(at["played"], at["target"] + 1)  # played, ends, boneyard, passes, target
        idx += [at["sizes"] + o for o in others]
        for k in range(1, n):
            # The partner sits opposite: seat + 2, the second of the others.
            idx.append(at["one"] if enc.rules.teams and k == 2 else at["zero"])
        for o in others:
            idx += range(at["cannot"] + o * C, at["cannot"] + o * C + C)
        idx += [at["scores"] + side for side in enc.side_order[seat]]
        idx += [at["leader"] + (seat + k) % n for k in range(n)]
        idx += [at["to_move"] + (seat + k) % n for k in range(n)]
        assert len(idx) == enc.obs_size
        return np.array(idx, np.intp)

    @property
    def cannot(self) -> np.ndarray:
        """The ``(n, C)`` cannot-answer table in absolute seats (a view)."""
        c0 = self._cannot0
        return self._master[c0 : c0 + self._n * self._C].reshape(self._n, self._C)

    def start(self, state: HandState, scores: Sequence[int] | None = None) -> None:
        """A new hand (usually just dealt), with the match totals so far, if any (as
        :meth:`HandState.view` takes them)."""
        enc = self.enc
        if not isinstance(state, HandState):
            raise _not_a(state, "ObservationTracker.start", "a HandState")
        if not enc.encodes(state.rules):
            raise ValueError(
                "ObservationTracker.start: the state's rules differ from the encoding's"
            )
        scores = _checked_scores(scores, enc.rules)
        at = self._at
        master = self._master
        n, T = self._n, self._T
        master[: at["boneyard"]] = 0.0  # hands, played, ends
        master[at["sizes"] : at["zero"]] = 0.0  # sizes .. to_move
        self._size = list(state.hand_sizes)
        for seat in range(n):
            _write_mask(master, self._hands0 + seat * T, state.hand_mask(seat))
            master[self._sizes0 + seat] = self._size[seat] * self._inv_tiles
        for tile in state.layout:
            master[self._played0 + tile.index] = 1.0
        self._write_ends(state.ends)
        master[self._bone] = state.boneyard_size * self._inv_tiles
        self._passes_in_row = state.passes_in_row
        master[self._passes] = self._passes_in_row * enc.inv_players
        for event in state.history:
            self._mark(event[0], enc.cannot_answer_marks(event))
        self._marked_ends, self._marked_seat = None, -1
        if scores is not None:
            self._write_scores(scores)
        self._leader, self._to_move = state.leader, state.to_move
        master[self._leader0 + self._leader] = 1.0
        master[self._to_move0 + self._to_move] = 1.0

    def set_scores(self, scores: Sequence[int]) -> None:
        """The match totals per side (as :meth:`HandState.view` takes them)."""
        if scores is None:
            raise ValueError("set_scores: expected the match totals, one per side; got None")
        self._write_scores(_checked_scores(scores, self.enc.rules) or ())

    def _write_scores(self, totals: Sequence[int]) -> None:
        """Checked totals into the master vector (start() has checked its own)."""
        scale = self.enc.score_scale
        s0 = self._at["scores"]
        for side, total in enumerate(totals):
            self._master[s0 + side] = min(total, scale) / scale

    def _mark(self, seat: int, cols: list[int]) -> None:
        master = self._master
        row = self._cannot0 + seat * self._C
        for col in cols:
            master[row + col] = 1.0

    def _end_row(self, end: End) -> np.ndarray:
        row = self._end_rows.get(end)
        if row is None:
            row = np.zeros(self._K, np.float32)
            self.enc.ends_vector((end,), row)
            self._end_rows[end] = row
        return row

    def _write_ends(self, ends: Sequence[End]) -> None:
        K = self._K
        out = self._ends
        out[:] = 0.0
        for i, end in enumerate(ends):
            out[i * K : i * K + K] = self._end_row(end)

    def advance(self, before: HandState, seat: int, move: Move, after: HandState) -> None:
        """``seat`` made ``move`` in ``before``, which gave ``after``."""
        # The hot path of every environment step: few numpy writes, no allocation.
        master = self._master
        kind = move[0]
        if kind == "play":
            k = self._tile_index[move[1]]  # type: ignore[index]
            master[self._hand_base[seat] + k] = 0.0
            master[self._played0 + k] = 1.0
            size = self._size[seat] = self._size[seat] - 1
            master[self._sizes0 + seat] = size * self._inv_tiles
            new_ends = after.ends
            slot = move[2]
            if slot is not None and len(new_ends) == len(before.ends):
                # One end replaced by one: only its slot changes.
                K = self._K
                self._ends[slot * K : slot * K + K] = self._end_row(new_ends[slot])
            else:
                self._write_ends(new_ends)
            if self._passes_in_row:
                self._passes_in_row = 0
                master[self._passes] = 0.0
        elif kind == "draw":
            drawn = after.hand_mask(seat) ^ before.hand_mask(seat)
            master[self._hand_base[seat] + drawn.bit_length() - 1] = 1.0
            size = self._size[seat] = self._size[seat] + 1
            master[self._sizes0 + seat] = size * self._inv_tiles
            master[self._bone] = after.boneyard_size * self._inv_tiles
            if self._passes_in_row:
                self._passes_in_row = 0
                master[self._passes] = 0.0
            ends = before.ends
            if ends is not self._marked_ends or seat != self._marked_seat:
                # A second draw in the same turn, before the same ends, marks nothing new.
                self._marked_ends, self._marked_seat = ends, seat
                self._mark(seat, self.enc.cannot_answer_marks((seat, move, ends)))
            return  # the same seat moves again and the leader is unchanged
        else:
            passes = self._passes_in_row = after.passes_in_row
            master[self._passes] = passes * self._inv_players
            self._mark(seat, self.enc.cannot_answer_marks((seat, move, before.ends)))
        leader = after.leader
        if leader != self._leader:
            master[self._leader0 + self._leader] = 0.0
            master[self._leader0 + leader] = 1.0
            self._leader = leader
        to_move = after.to_move
        if to_move != self._to_move:
            master[self._to_move0 + self._to_move] = 0.0
            master[self._to_move0 + to_move] = 1.0
            self._to_move = to_move

    def observation(self, seat: int) -> np.ndarray:
        """The observation of ``seat`` in the state last given to :meth:`advance`."""
        number = seat_number(seat, self._n)
        if number is None:
            raise _seat_error("seat", seat, self._n)
        return self._master.take(self._gather[number])

    def gather_tables(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """The master vector and each seat's index table (``observation`` is one take)."""
        return self._master, self._gather


_ENCODINGS: dict[Rules, Encoding] = {}


def encoding_for(rules: Rules | str) -> Encoding:
    """The (cached) :class:`Encoding` of a rules configuration: a :class:`Rules` or a
    preset's name (an unknown name raises ``RulesError`` listing the presets, anything
    else ``TypeError``)."""
    try:
        enc = _ENCODINGS.get(rules)  # type: ignore[arg-type]
    except TypeError:  # unhashable: refused below
        enc = None
    if enc is None:
        if isinstance(rules, str):
            return encoding_for(Rules.preset(rules))
        if not isinstance(rules, Rules):
            raise TypeError(
                f"rules={rules!r} ({type(rules).__name__}) is not allowed; allowed: a "
                "matador_env.engine.Rules or a preset's name"
            )
        enc = _ENCODINGS[rules] = Encoding(rules)
    return enc


def encode_action(rules: Rules | str, move: Move | str) -> int:
    """The action of ``move`` under ``rules`` (a :class:`Rules` or a preset's name)."""
    return encoding_for(rules).encode_action(move)


def decode_action(rules: Rules | str, action: int) -> Move:
    """The move of ``action`` (an integer, see :meth:`Encoding.decode_action`) under
    ``rules`` (a :class:`Rules` or a preset's name)."""
    return encoding_for(rules).decode_action(action)


def action_mask(rules: Rules | str, moves: Iterable[Move | str]) -> np.ndarray:
    """``int8`` mask over the actions of ``rules`` (a :class:`Rules` or a preset's name)
    marking ``moves`` (:class:`Move` objects or their text forms)."""
    return encoding_for(rules).action_mask(moves)


def observation(view: SeatView) -> np.ndarray:
    """The observation vector of a seat's view (no hidden information: it takes a view)."""
    if not isinstance(view, SeatView):
        raise _not_a(view, "observation", "a SeatView (state.view(seat))")
    return encoding_for(view.rules).observation(view)


def state_tensor(state: HandState, scores: Sequence[int] | None = None) -> np.ndarray:
    """The full-information state vector of a hand (reads every hand: critics only)."""
    if not isinstance(state, HandState):
        raise _not_a(state, "state_tensor", "a HandState (a seat's view holds too little)")
    return encoding_for(state.rules).state_tensor(state, scores)
