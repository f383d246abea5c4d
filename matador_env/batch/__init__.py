"""The batch engine: many hands (or matches) of one rules configuration, stepped by
compiled kernels.

The Python engine (:mod:`matador_env.engine`) stays the reference and the readable
specification; this module plays the same game on arrays, for training and search.
It is exact against the engine (``tests/test_batch_differential.py`` replays random
play in both and compares every step):

- a slot dealt with seed ``s`` holds the hand ``HandState.deal(rules, s)`` deals
  (the same shuffle: CPython's Mersenne Twister, compiled);
- legal moves come as ``int8`` masks in the action layout of
  :mod:`matador_env.encoding` (the same action ids as the environments);
- outcomes, scores, and matches to ``target_score`` follow :class:`Outcome` and
  :class:`MatchState`.

Beside :class:`BatchEngine` (hands and matches stepped by actions) there are
:func:`random_hands` (whole random hands in one kernel, for speed figures) and
:class:`WorldPlayouts` (playouts of sampled worlds of one seat's view with a
heuristic policy, for the search agent) with :func:`deal_hidden_hands` (those worlds
dealt under the inferences about each hidden hand); :mod:`matador_env.vector` builds
the vector environment on the engine.

It needs ``numba`` (an optional dependency); :mod:`matador_env.engine` does not.
The first use compiles the kernels and caches them on disk (``cache=True``), so a
later process starts in well under a second.

Bad input raises :class:`BatchError` (a ``ValueError``) naming the slot and what was
allowed, before any slot is changed.

.. code-block:: python

    from matador_env.batch import BatchEngine
    from matador_env.engine import Rules

    eng = BatchEngine(Rules.preset("standard"), size=1024)
    eng.deal(range(1024))
    while not eng.all_over:
        masks = eng.legal_masks()            # (1024, num_actions) int8
        actions = pick(masks)                # -1 leaves a slot (a finished one) as it is
        eng.step(actions)
    eng.outcome(0)                           # an engine Outcome
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..encoding import Encoding, encoding_for
from ..engine import (
    BLANK,
    BRANCH,
    CROSS,
    PLAIN,
    SPINNER,
    End,
    Outcome,
    Rules,
    RulesError,
    SeatView,
    Termination,
    Tile,
)
from ..engine.match import derive_seed
from ..engine.rules import CHOICES
from ..engine.state import SEED_LIMIT, seed_number
from ..engine.tiles import INTEGER_KINDS, shown_value
from . import _kernels as K
from . import _playouts as PL
from . import _worlds as WD

__all__ = [
    "BatchEngine",
    "BatchError",
    "BatchRules",
    "WorldPlayouts",
    "batch_rules",
    "deal_hidden_hands",
    "random_hands",
    "seed_keys",
]

_KINDS = (PLAIN, CROSS, BLANK, BRANCH, SPINNER)
_MAX_PLAYERS = 127  # seats live in an int8 tile-location array


class BatchError(ValueError):
    """Bad input to the batch engine: names the slot (if any) and what was allowed."""


@dataclass(frozen=True)
class BatchRules:
    """One rules configuration compiled to the kernels' integer tables."""

    rules: Rules
    enc: Encoding
    rp: np.ndarray
    """Rule parameters, indexed by the ``R_*`` constants of the kernels."""
    tab: np.ndarray
    """Per tile: low, high, pips, matador, first slot placement, cross/upright placement."""
    slot: np.ndarray
    """Per placement of the slot table: tile index, orientation."""


_COMPILED: dict[Rules, BatchRules] = {}


def batch_rules(rules: Rules) -> BatchRules:
    """The compiled tables of ``rules`` (cached); :class:`RulesError` for anything else."""
    if not isinstance(rules, Rules):
        raise RulesError("rules", rules, "a Rules (e.g. Rules.preset('standard'))")
    got = _COMPILED.get(rules)
    if got is not None:
        return got
    if rules.players > _MAX_PLAYERS:
        raise RulesError(
            "players", rules.players, f"at most {_MAX_PLAYERS} players in the batch engine"
        )
    enc = encoding_for(rules)
    T = enc.num_tiles
    rp = np.zeros(K.NRP, np.int64)
    rp[K.R_N] = rules.players
    rp[K.R_TEAMS] = int(rules.teams)
    rp[K.R_S] = rules.link_sum
    rp[K.R_T] = T
    rp[K.R_DRAW_LIMIT] = min(rules.draw_limit, 1 << 30)
    rp[K.R_RESERVE] = rules.boneyard_reserve
    for field, code in (
        ("voluntary_draw", K.R_VOL),
        ("matador_placement", K.R_PLACE),
        ("spinner", K.R_SPIN),
        ("lead_tile", K.R_LEAD),
        ("blocked_scoring", K.R_SCORING),
        ("tie", K.R_TIE),
        ("first_leader", K.R_FIRST),
        ("next_leader", K.R_NEXT),
        ("match_end", K.R_MATCH_END),
    ):
        rp[code] = CHOICES[field].index(getattr(rules, field))
    rp[K.R_AS_REG] = int(rules.matador_as_regular)
    rp[K.R_STUCK] = int(rules.matador_only_when_stuck)
    rp[K.R_TARGET] = rules.target_score
    rp[K.R_E] = enc.end_slots
    rp[K.R_P] = enc.placements_per_slot
    rp[K.R_DEALT] = sum(rules.tiles_per_seat)
    rp[K.R_NACT] = enc.num_actions
    rp[K.R_SIDES] = rules.sides
    rp[K.R_V] = enc.num_values
    tab = np.full((T, 6), -1, np.int64)
    slot = np.zeros((enc.placements_per_slot, 2), np.int64)
    orient_code = {"low": K.O_LOW, "high": K.O_HIGH, "cross": K.O_CROSS, "upright": K.O_UPRIGHT}
    for k, tile in enumerate(enc.tiles):
        tab[k, K.TLO] = tile.low
        tab[k, K.THI] = tile.high
        tab[k, K.TPIPS] = tile.pips
        tab[k, K.TMAT] = int(rules.is_matador(tile))
    for p, (tile, orient) in enumerate(enc.slot_table):
        k = tile.index
        slot[p] = (k, orient_code[orient])
        if orient == "low":
            tab[k, K.TSLOT] = p
        elif orient in ("cross", "upright"):
            tab[k, K.TSLOT_X] = p
    compiled = BatchRules(rules, enc, rp, tab, slot)
    if len(_COMPILED) >= 64:
        del _COMPILED[next(iter(_COMPILED))]
    _COMPILED[rules] = compiled
    return compiled


def seed_keys(seeds: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """The Mersenne Twister keys of ``random.Random(seed)`` for each seed.

    Seeds are what :meth:`HandState.deal` takes: integers (see
    :data:`~matador_env.engine.tiles.INTEGER_KINDS`) from 0 to ``SEED_LIMIT - 1``
    (2**64 - 1). A negative seed is refused as there, since ``random.Random`` would
    deal it as its absolute value. :class:`BatchError` names the first that is not.
    """
    seeds = list(seeds)
    keys = np.zeros((len(seeds), 2), np.uint32)
    klens = np.ones(len(seeds), np.int64)
    for j, given in enumerate(seeds):
        seed = seed_number(given)
        if seed is None:
            raise BatchError(
                f"seed of slot {j}: {shown_value(given)} is not allowed; allowed: "
                f"{INTEGER_KINDS} from 0 to {SEED_LIMIT - 1} (2**64 - 1)"
            )
        keys[j, 0] = seed & 0xFFFFFFFF
        keys[j, 1] = seed >> 32
        klens[j] = 2 if seed >> 32 else 1
    return keys, klens


def array_from_state(state: Mapping[str, Any], name: str, like: np.ndarray) -> np.ndarray:
    """``state[name]`` as an array of ``like``'s shape and type, or :class:`BatchError`."""
    if name not in state:
        raise BatchError(f"state: {name!r} is missing")
    try:
        value = np.asarray(state[name], dtype=like.dtype)
    except (ValueError, TypeError, OverflowError) as e:
        raise BatchError(f"state: {name!r} is not an array of {like.dtype} ({e})") from None
    if value.shape != like.shape:
        raise BatchError(f"state: {name!r} has shape {value.shape}; allowed: {like.shape}")
    return value


def seeds_from_state(state: Mapping[str, Any], name: str, size: int) -> list[int]:
    seeds = state.get(name)
    if not (
        isinstance(seeds, list)
        and len(seeds) == size
        and all(isinstance(x, int) and not isinstance(x, bool) for x in seeds)
    ):
        raise BatchError(f"state: {name!r} is not a list of {size} ints (one per slot)")
    return list(seeds)


class BatchEngine:
    """``size`` slots, each a hand (and optionally a match) under one ``rules``.

    The arrays are documented in :mod:`matador_env.batch._kernels`; read them through
    the accessors here, and never write them (the engine caches what it computes
    from them until its own next change). A slot is dealt by :meth:`deal` (a hand) or
    :meth:`new_matches` (the first hand of a match); :meth:`step` applies one action
    per slot.
    """

    def __init__(self, rules: Rules, size: int) -> None:
        br = self.br = batch_rules(rules)
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise BatchError(f"size={size!r} is not allowed; allowed: an integer >= 1")
        self.rules = rules
        self.enc = br.enc
        self.size = B = int(size)
        n = rules.players
        T = self.enc.num_tiles
        E = self.enc.end_slots
        self.num_actions = self.enc.num_actions
        self.loc = np.full((B, T), K.BONEYARD, np.int8)
        self.hsize = np.zeros((B, n), np.int32)
        self.stock = np.zeros((B, T), np.int16)
        self.ends = np.full((B, E, 3), -1, np.int8)
        self.st = np.zeros((B, K.NST), np.int32)
        self.st[:, K.OVER] = 1  # nothing dealt yet
        self.st[:, K.TERM] = -1
        self.counts = np.zeros((B, n), np.int32)
        self.cannot = np.zeros((B, n, self.enc.cannot_width), np.uint8)
        self.totals = np.zeros((B, rules.sides), np.int32)
        self.leads = np.zeros((B, n), np.int32)
        self.mst = np.zeros((B, K.NMST), np.int32)
        self.winners = np.zeros((B, rules.sides), np.int8)
        self.in_match = np.zeros(B, np.bool_)
        self.hand_seeds: list[int] = [0] * B
        self.match_seeds: list[int] = [0] * B
        self._scratch = np.zeros(self.num_actions, np.int64)
        # The legal masks of the current state, once computed (any change clears it).
        self._masks = np.zeros((B, self.num_actions), np.int8)
        self._masks_fresh = False
        self._rows = np.arange(B)

    # -- state as data --------------------------------------------------------------------

    _STATE_ARRAYS = (
        "loc", "hsize", "stock", "ends", "st", "counts", "cannot", "totals", "leads", "mst",
        "winners", "in_match",
    )  # fmt: skip

    def get_state(self) -> dict[str, Any]:
        """Every slot's hand and match as plain JSON data (lists of numbers);
        :meth:`set_state` goes on from it."""
        state: dict[str, Any] = {name: getattr(self, name).tolist() for name in self._STATE_ARRAYS}
        state["hand_seeds"] = list(self.hand_seeds)
        state["match_seeds"] = list(self.match_seeds)
        return state

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`get_state` of an engine of the same rules and size.
        :class:`BatchError` names what does not fit; then nothing changed."""
        arrays = {
            name: array_from_state(state, name, getattr(self, name)) for name in self._STATE_ARRAYS
        }
        seeds = {
            name: seeds_from_state(state, name, self.size) for name in ("hand_seeds", "match_seeds")
        }
        for name, value in arrays.items():
            getattr(self, name)[...] = value
        self.hand_seeds, self.match_seeds = seeds["hand_seeds"], seeds["match_seeds"]
        self._masks_fresh = False

    # -- dealing -------------------------------------------------------------------------

    def _slots(self, slots: Sequence[int] | np.ndarray | None) -> np.ndarray:
        if slots is None:
            return np.arange(self.size, dtype=np.int64)
        arr = np.asarray(slots)
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise BatchError(f"slots must be a 1-d sequence of slot numbers, got {slots!r}")
        arr = arr.astype(np.int64)
        bad = np.flatnonzero((arr < 0) | (arr >= self.size))
        if bad.size:
            raise BatchError(
                f"slot {int(arr[bad[0]])} does not exist; allowed: 0 to {self.size - 1}"
            )
        if np.unique(arr).size != arr.size:
            raise BatchError(f"slots must be distinct, got {arr.tolist()}")
        return arr

    def _leaders(self, leaders: Sequence[int | None] | None, count: int) -> np.ndarray:
        if leaders is None:
            return np.full(count, -1, np.int64)
        out = np.empty(count, np.int64)
        if len(leaders) != count:
            raise BatchError(f"leaders: expected {count} (one per slot dealt), got {len(leaders)}")
        n = self.rules.players
        for j, leader in enumerate(leaders):
            if leader is None:
                out[j] = -1
                continue
            if isinstance(leader, np.integer):
                leader = int(leader)
            if not isinstance(leader, int) or isinstance(leader, bool) or not 0 <= leader < n:
                raise BatchError(
                    f"leader of slot {j}: {leader!r} is not a seat; allowed: 0 to {n - 1} or None"
                )
            out[j] = leader
        return out

    def deal(
        self,
        seeds: Iterable[int],
        slots: Sequence[int] | np.ndarray | None = None,
        leaders: Sequence[int | None] | None = None,
    ) -> None:
        """Deal ``HandState.deal(rules, seed, leader)`` into each slot (all slots by
        default, in order). The slots leave any match they were in."""
        seeds = list(seeds)
        idx = self._slots(slots)
        if len(seeds) != idx.size:
            raise BatchError(f"seeds: expected {idx.size} (one per slot), got {len(seeds)}")
        keys, klens = seed_keys(seeds)
        lead = self._leaders(leaders, idx.size)
        self._deal(idx, keys, klens, lead)
        for j, b in enumerate(idx.tolist()):
            self.hand_seeds[b] = int(seeds[j])
        self.in_match[idx] = False

    def _deal(self, idx: np.ndarray, keys: np.ndarray, klens: np.ndarray, lead: np.ndarray) -> None:
        self._masks_fresh = False
        br = self.br
        K.deal_slots(
            idx,
            keys,
            klens,
            lead,
            br.rp,
            br.tab,
            self.loc,
            self.hsize,
            self.stock,
            self.ends,
            self.st,
            self.counts,
            self.cannot,
        )

    def new_matches(
        self, seeds: Iterable[int], slots: Sequence[int] | np.ndarray | None = None
    ) -> None:
        """Start ``MatchState.new(rules, seed)`` in each slot: totals zero, first deal."""
        seeds = list(seeds)
        idx = self._slots(slots)
        if len(seeds) != idx.size:
            raise BatchError(f"seeds: expected {idx.size} (one per slot), got {len(seeds)}")
        seed_keys(seeds)  # refuses bad seeds before anything changes
        hand_seeds = [derive_seed(int(s), 0) for s in seeds]
        keys, klens = seed_keys(hand_seeds)
        self._deal(idx, keys, klens, np.full(idx.size, -1, np.int64))
        self.totals[idx] = 0
        self.leads[idx] = 0
        self.mst[idx] = 0
        self.mst[idx, K.M_DEALS] = 1
        self.winners[idx] = 0
        self.in_match[idx] = True
        for j, b in enumerate(idx.tolist()):
            self.match_seeds[b] = int(seeds[j])
            self.hand_seeds[b] = hand_seeds[j]

    def next_hands(self, slots: Sequence[int] | np.ndarray | None = None) -> np.ndarray:
        """``MatchState.next_hand`` in every given match slot (default: every match slot
        whose hand is over and whose match is not). Returns the slots dealt."""
        if slots is None:
            idx = np.flatnonzero(
                self.in_match & (self.st[:, K.OVER] == 1) & (self.mst[:, K.M_OVER] == 0)
            )
        else:
            idx = self._slots(slots)
            for b in idx.tolist():
                if not self.in_match[b]:
                    raise BatchError(f"slot {b} is not playing a match; allowed: match slots")
                if self.mst[b, K.M_OVER]:
                    raise BatchError(f"slot {b}: the match is over; no further hand is dealt")
                if not self.st[b, K.OVER]:
                    raise BatchError(f"slot {b}: the current hand is not over yet")
        if idx.size == 0:
            return idx
        br = self.br
        leaders = np.array(
            [K.next_leader(b, br.rp, self.st, self.counts) for b in idx.tolist()], np.int64
        )
        seeds = [derive_seed(self.match_seeds[b], int(self.mst[b, K.M_DEALS])) for b in idx]
        keys, klens = seed_keys(seeds)
        self._deal(idx, keys, klens, leaders)
        self.mst[idx, K.M_DEALS] += 1
        for j, b in enumerate(idx.tolist()):
            self.hand_seeds[b] = seeds[j]
        return idx

    # -- moves -----------------------------------------------------------------------------

    def legal_masks(self, out: np.ndarray | None = None) -> np.ndarray:
        """``(size, num_actions)`` int8: 1 for each legal action (a row of zeros once over)."""
        masks = self._current_masks()
        if out is None:
            return masks.copy()
        out[...] = masks
        return out

    def _current_masks(self) -> np.ndarray:
        """The legal masks of this state, computed once per state (not a copy)."""
        if not self._masks_fresh:
            br = self.br
            K.legal_masks(br.rp, br.tab, self.loc, self.ends, self.st, self._masks)
            self._masks_fresh = True
        return self._masks

    def step(self, actions: np.ndarray | Sequence[int]) -> np.ndarray:
        """Apply one action per slot (-1 leaves a slot as it is; the only action of a slot
        whose hand is over).

        Raises :class:`BatchError` naming the first bad slot, its action and its legal
        actions; then no slot has changed. Match slots score a hand that ends (the
        next hand is dealt by :meth:`next_hands`). Returns the slots whose hand ended.
        """
        acts = self._checked(actions)
        br = self.br
        was_over = self.st[:, K.OVER].copy()
        self._masks_fresh = False
        K.apply_actions(
            acts,
            br.rp,
            br.tab,
            br.slot,
            self.loc,
            self.hsize,
            self.stock,
            self.ends,
            self.st,
            self.counts,
            self.cannot,
        )
        return self._ended_since(was_over)

    def play_random_until(self, seats: np.ndarray, rng: np.ndarray) -> np.ndarray:
        """Uniformly random legal actions in every slot until seat ``seats[b]`` is to move
        or the hand is over (many moves in one compiled call), slot ``b``'s drawn from its
        own xorshift state ``rng[b]`` (``rng``: a ``uint64`` array with one nonzero state
        per slot, advanced). Scores as :meth:`step`; returns the slots whose hand ended."""
        if rng.shape != (self.size,) or rng.dtype != np.uint64:
            raise BatchError(
                f"rng has shape {rng.shape} and dtype {rng.dtype}; allowed: one uint64 "
                f"xorshift state per slot, shape ({self.size},)"
            )
        br = self.br
        was_over = self.st[:, K.OVER].copy()
        self._masks_fresh = False
        K.play_random_until(
            np.asarray(seats, np.int64),
            rng,
            br.rp,
            br.tab,
            br.slot,
            self.loc,
            self.hsize,
            self.stock,
            self.ends,
            self.st,
            self.counts,
            self.cannot,
        )
        return self._ended_since(was_over)

    def _ended_since(self, was_over: np.ndarray) -> np.ndarray:
        """The slots whose hand ended since ``was_over``; a match slot's hand is scored."""
        ended = np.flatnonzero((self.st[:, K.OVER] == 1) & (was_over == 0))
        for b in ended.tolist():
            if self.in_match[b]:
                K.score_hand(
                    b, self.br.rp, self.st, self.totals, self.leads, self.mst, self.winners
                )
        return ended

    def action_array(self, actions: np.ndarray | Sequence[int]) -> np.ndarray:
        """``actions`` as a new ``int64`` array, one per slot; :class:`BatchError` for
        another shape or a dtype other than integers. Their legality is not checked."""
        arr = np.asarray(actions)
        if arr.shape != (self.size,):
            raise BatchError(
                f"actions must have shape ({self.size},) (one per slot), got shape {arr.shape}"
            )
        if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
            raise BatchError(f"actions must be integers, got dtype {arr.dtype}")
        return arr.astype(np.int64)

    def legal(self, acts: np.ndarray) -> np.ndarray:
        """Per slot, whether ``acts`` (from :meth:`action_array`) is one of its legal
        actions now (-1, which leaves a slot as it is, is not): a lookup in the legal
        masks, computed once per state."""
        masks = self._current_masks()
        inside = (acts >= 0) & (acts < self.num_actions)
        return inside & (masks[self._rows, np.where(inside, acts, 0)] == 1)

    def _checked(self, actions: np.ndarray | Sequence[int]) -> np.ndarray:
        acts = self.action_array(actions)
        if self._masks_fresh:
            # The masks of this very state are at hand: a lookup instead of move generation.
            wrong = np.flatnonzero((acts != -1) & ~self.legal(acts))
            bad = int(wrong[0]) if wrong.size else -1
        else:
            br = self.br
            bad = K.check_actions(acts, br.rp, br.tab, self.loc, self.ends, self.st, self._scratch)
        if bad >= 0:
            raise BatchError(self._why(bad, int(acts[bad])))
        return acts

    def _why(self, b: int, action: int) -> str:
        if self.st[b, K.OVER]:
            return f"slot {b}: action {action} given but the hand is over; allowed: -1"
        mask = np.zeros(self.num_actions, np.int8)
        br = self.br
        K.legal_row(b, br.rp, br.tab, self.loc, self.ends, self.st, mask, self._scratch)
        legal = ", ".join(f"{a} ({self.enc.moves[a]})" for a in np.flatnonzero(mask))
        if not 0 <= action < self.num_actions:
            what = f"out of range 0-{self.num_actions - 1}"
        else:
            what = f"{self.enc.moves[action]} is not legal"
        return f"slot {b}: action {action} is {what}; allowed: {legal}"

    # -- reading a slot ---------------------------------------------------------------------

    @property
    def over(self) -> np.ndarray:
        """Per slot: the hand is over (or nothing was dealt)."""
        return np.asarray(self.st[:, K.OVER] == 1)

    @property
    def all_over(self) -> bool:
        return bool(self.st[:, K.OVER].all())

    @property
    def match_over(self) -> np.ndarray:
        return np.asarray(self.mst[:, K.M_OVER] == 1)

    @property
    def to_move(self) -> np.ndarray:
        return self.st[:, K.TO_MOVE]

    def hand_mask(self, b: int, seat: int) -> int:
        """Seat ``seat``'s hand in slot ``b`` as the engine's bit mask over tile indices."""
        mask = 0
        for k in np.flatnonzero(self.loc[b] == seat).tolist():
            mask |= 1 << k
        return mask

    def hand_masks(self, b: int) -> tuple[int, ...]:
        return tuple(self.hand_mask(b, s) for s in range(self.rules.players))

    def boneyard(self, b: int) -> tuple[Tile, ...]:
        """The undrawn tiles of slot ``b`` in draw order (full information)."""
        tiles = self.enc.tiles
        return tuple(tiles[k] for k in self.stock[b, self.st[b, K.POS] :].tolist())

    def end_tuple(self, b: int) -> tuple[End, ...]:
        """Slot ``b``'s open ends as the engine's :class:`End` values."""
        out = []
        for kind, v, v2 in self.ends[b, : self.st[b, K.NENDS]].tolist():
            k = _KINDS[kind]
            out.append(End(k, None if v < 0 else v, None if v2 < 0 else v2))
        return tuple(out)

    def outcome(self, b: int) -> Outcome | None:
        """Slot ``b``'s :class:`Outcome` once its hand is over, else None."""
        st = self.st[b]
        if st[K.TERM] < 0:
            return None
        winner = int(st[K.WINNER])
        side = int(st[K.WSIDE])
        return Outcome(
            Termination.ALL[int(st[K.TERM])],
            None if winner < 0 else winner,
            None if side < 0 else side,
            int(st[K.POINTS]),
            tuple(int(c) for c in self.counts[b]),
        )

    def match_winners(self, b: int) -> tuple[int, ...] | None:
        if not self.mst[b, K.M_OVER]:
            return None
        return tuple(int(x) for x in np.flatnonzero(self.winners[b]))


def random_hands(
    rules: Rules, seeds: Sequence[int], rng_seed: int = 0, threads: int = 1
) -> tuple[np.ndarray, int]:
    """Deal each seed and play it out with uniformly random legal actions, in one kernel.

    Returns ``(results, actions)``: per hand (termination code, winning side or -1,
    points), and the number of actions taken. ``threads`` > 1 splits the hands over
    numba's threads (each range with its own random stream).
    """
    br = batch_rules(rules)
    keys, klens = seed_keys(seeds)
    results = np.zeros((len(keys), 3), np.int64)
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise BatchError(f"threads={threads!r} is not allowed; allowed: an integer >= 1")
    if threads == 1:
        total = K.random_hands(keys, klens, br.rp, br.tab, br.slot, int(rng_seed), results)
    else:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
        total = K.random_hands_parallel(
            keys, klens, br.rp, br.tab, br.slot, int(rng_seed), results, threads
        )
    return results, int(total)


def deal_hidden_hands(
    unseen: int,
    sizes: Sequence[int],
    voids: Sequence[int],
    caps: Sequence[tuple[int, int, int]],
    count: int,
    seed: int,
    tries: int = 64,
) -> list[tuple[list[int], list[int]] | None]:
    """``count`` deals of the ``unseen`` tiles (a bit mask over tile indices) to hidden
    hands of ``sizes`` and a boneyard, keeping every inference: hand ``h`` holds none
    of ``voids[h]``, and a cap ``(h, mask, most)`` lets it hold at most ``most`` of
    ``mask``. Each deal is ``(hands, boneyard)``: a mask per hidden hand and the other
    tiles in a random draw order; ``None`` where ``tries`` constructions all hit a dead
    end (the caller deals that one another way).

    The search agent's dealer compiled (``agents.knowledge.Knowledge.sample_masks``:
    a constructive deal, then ``3 x unseen`` swaps that keep every cap, so the deals
    approach the uniform distribution over the consistent ones), seeded by ``seed``.
    For at most 62 tiles (the masks are 64-bit integers).
    """
    tiles = [t for t in range(unseen.bit_length()) if unseen >> t & 1]
    if tiles and tiles[-1] > 61:
        raise BatchError(f"deal_hidden_hands: tile index {tiles[-1]} > 61; at most 62 tiles")
    H = len(sizes)
    if len(voids) != H or any(not 0 <= h < H for h, _, _ in caps):
        raise BatchError(f"deal_hidden_hands: {H} sizes, {len(voids)} voids, caps on {caps!r}")
    boneyard = len(tiles) - sum(sizes)
    if boneyard < 0 or min(sizes, default=0) < 0:
        raise BatchError(f"deal_hidden_hands: hands of {list(sizes)} from {len(tiles)} tiles")
    hands = np.zeros((count, H), np.int64)
    rest = np.zeros((count, boneyard), np.int64)
    dealt = np.zeros(count, np.bool_)
    WD.deal_worlds(
        np.array(tiles, np.int64),
        np.array(sizes, np.int64),
        np.array(voids, np.int64),
        np.array([h for h, _, _ in caps], np.int64),
        np.array([m for _, m, _ in caps], np.int64),
        np.array([c for _, _, c in caps], np.int64),
        tries,
        3 * len(tiles),
        seed & 0xFFFFFFFFFFFFFFFF,
        hands,
        rest,
        dealt,
    )
    hand_rows = hands.tolist()
    rest_rows = rest.tolist()
    return [(hand_rows[w], rest_rows[w]) if dealt[w] else None for w in range(count)]


class WorldPlayouts:
    """Playouts of sampled worlds of one seat's view, all in one compiled batch.

    A *world* gives every hidden tile a place consistent with ``view`` (as
    ``Knowledge.sample_masks`` of the search agent deals them): each seat's hand as a
    bit mask over tile indices (the viewer's own hand included, as in the view) and
    the boneyard in draw order. :meth:`run` applies each candidate action in each
    world and plays on to the end of the hand with a heuristic rollout policy whose
    term weights are given (``weights``, in the order of
    ``matador_env.batch._playouts.PW_*``). At every turn the mover's policy reads
    only what that seat could know there: its own hand, the table, the open ends
    and the hand sizes.
    """

    def __init__(self, view: SeatView, weights: Sequence[float]) -> None:
        if not isinstance(view, SeatView):
            raise BatchError(f"WorldPlayouts needs a SeatView, got {type(view).__name__}")
        self.view = view
        rules = view.rules
        br = self.br = batch_rules(rules)
        self.enc = br.enc
        self.wts = np.asarray(weights, np.float64)
        if self.wts.shape != (PL.NPW,):
            raise BatchError(f"weights: expected {PL.NPW} numbers, got shape {self.wts.shape}")
        self._sets, self._halves, self._miss = _policy_tables(br)
        T = self.enc.num_tiles
        E = self.enc.end_slots
        self.side = rules.side_of(view.seat)
        layout_loc = np.full(T, K.BONEYARD, np.int8)
        for tile in view.layout:
            layout_loc[tile.index] = K.PLAYED
        self._layout_loc = layout_loc
        ends = np.full((E, 3), -1, np.int8)
        for i, end in enumerate(view.ends):
            ends[i] = (
                _KINDS.index(end.kind),
                -1 if end.value is None else end.value,
                -1 if end.value2 is None else end.value2,
            )
        self._ends = ends
        st = np.zeros(K.NST, np.int32)
        st[K.NENDS] = len(view.ends)
        st[K.TO_MOVE] = view.to_move
        st[K.LEADER] = view.leader
        st[K.DEALT_LEADER] = view.history[0].seat if view.history else view.leader
        st[K.PASSES] = view.passes_in_row
        st[K.DRAWS] = view.draws_this_turn
        st[K.NACT] = len(view.history)
        st[K.TERM] = st[K.WINNER] = st[K.WSIDE] = -1
        # As HandState.from_view: whether the spinner is down, and the passes at the lead.
        spinner_lead = rules.spinner != "none"
        first_double = rules.spinner == "first_double"
        for event in view.history:
            move = event.move
            if move.kind == "play" and move.tile is not None and move.tile.is_double:
                if (move.mode == "lead" and spinner_lead) or first_double:
                    st[K.SPIN_DONE] = 1
            elif move.kind == "pass" and not event.ends:
                st[K.LEAD_PASSES] += 1
        self._st = st

    def run(
        self,
        worlds: Sequence[tuple[Sequence[int], Sequence[int]]],
        actions: Sequence[int],
        repeats: int = 1,
        rng_seed: int = 0,
    ) -> np.ndarray:
        """``values[w, c]``: the mean result for the viewer's side of action
        ``actions[c]`` in world ``w`` (its side's points, or minus the winners' points
        shared among the other sides), over ``repeats`` playouts."""
        br = self.br
        T = self.enc.num_tiles
        n = self.view.rules.players
        nw, na = len(worlds), len(actions)
        words = (T + 63) // 64
        hand_words = np.zeros((nw, n, words), np.uint64)
        rest = np.zeros((nw, T), np.int16)
        rest_len = np.zeros(nw, np.int64)
        for w, (hands, _) in enumerate(worlds):
            if len(hands) != n:
                raise BatchError(f"world {w}: expected {n} hands, got {len(hands)}")
        if words == 1:
            hand_words[:, :, 0] = np.array([hands for hands, _ in worlds], np.uint64)
        else:
            for w, (hands, _) in enumerate(worlds):
                for seat, mask in enumerate(hands):
                    for x in range(words):
                        hand_words[w, seat, x] = (mask >> (64 * x)) & 0xFFFFFFFFFFFFFFFF
        # Every world of a view has the same boneyard size (it is public).
        size = self.view.boneyard_size
        if any(len(boneyard) != size for _, boneyard in worlds):
            raise BatchError(f"worlds: every boneyard must hold the view's {size} tiles")
        rest_len[:] = size
        if size:
            rest[:, :size] = np.array([boneyard for _, boneyard in worlds], np.int16)
        loc = np.empty((nw, T), np.int8)
        hsize = np.empty((nw, n), np.int32)
        stock = np.zeros((nw, T), np.int16)
        st = np.tile(self._st, (nw, 1))
        PL.fill_worlds(hand_words, rest, rest_len, self._layout_loc, loc, hsize, stock, st)
        values = np.zeros((nw, na), np.float64)
        PL.policy_playouts(
            br.rp,
            br.tab,
            br.slot,
            self._sets,
            self._halves,
            self._miss,
            self.wts,
            loc,
            hsize,
            stock,
            self._ends,
            st,
            np.asarray(actions, np.int64),
            self.side,
            int(repeats),
            int(rng_seed),
            values,
        )
        return values


_POLICY_TABLES: dict[Rules, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}


def _policy_tables(br: BatchRules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    got = _POLICY_TABLES.get(br.rules)
    if got is None:
        if len(_POLICY_TABLES) >= 64:
            del _POLICY_TABLES[next(iter(_POLICY_TABLES))]
        got = _POLICY_TABLES[br.rules] = (
            PL.tile_sets(br.tab, br.rules.link_sum, br.enc.num_values),
            PL.tile_halves(br.tab),
            PL.miss_table(br.enc.num_tiles),
        )
    return got
