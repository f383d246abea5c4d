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

from ..encoding import ENCODING_VERSION, Encoding, encoding_for
from ..engine import (
    BLANK,
    BRANCH,
    CROSS,
    PLAIN,
    SPINNER,
    End,
    Outcome,
    Perft,
    Rules,
    RulesError,
    SeatView,
    Termination,
    Tile,
)
from ..engine.match import derive_seed
from ..engine.rules import CHOICES, rules_differences
from ..engine.state import SEED_LIMIT, seat_number, seed_number
from ..engine.tiles import INTEGER_KINDS, is_text, shown_value, whole_number
from ..values import SEED_RANGE, checked_seed, integer_check
from . import _kernels as K
from . import _playouts as PL
from . import _worlds as WD

__all__ = [
    "MAX_SIZE",
    "BatchEngine",
    "BatchError",
    "BatchRules",
    "WorldPlayouts",
    "batch_rules",
    "checked_int",
    "deal_hidden_hands",
    "perft",
    "random_hands",
    "seed_keys",
]

_KINDS = (PLAIN, CROSS, BLANK, BRANCH, SPINNER)
_MAX_PLAYERS = 127  # seats live in an int8 tile-location array
_INT64_MAX = 2**63 - 1

MAX_SIZE = 2**24
"""The most slots a :class:`BatchEngine` (and a vector environment) holds: 16,777,216.
Each slot takes some kilobytes (its arrays, legal masks, and in the vector
environments an observation of hundreds of float32s), so this is already tens of
gigabytes; a larger count is a mistake, refused before numpy is asked for the
memory (it would fail with a message about dimensions, or take the machine)."""


class BatchError(ValueError):
    """Bad input to the batch engine: names the slot (if any) and what was allowed."""


checked_int = integer_check(BatchError)
"""``checked_int(name, value, low, high=None)``: ``value`` as a plain ``int`` from
``low`` to ``high`` (no top when None), read as the engine reads integers (numpy
integers too, never a bool or a float), else :class:`BatchError` naming ``name``,
the value and what is allowed (:func:`~matador_env.values.integer_check`)."""


def _kernel_seed(seed: int) -> int:
    """A seed from 0 to 2**64 - 1 as the ``int64`` of the same bits: the kernels take
    their random seeds as ``np.uint64(seed)``, and one integer type keeps them to one
    compiled version (a Python int from 2**63 would be typed ``uint64``, and mixed
    with ``int64`` arithmetic numba makes a float of it)."""
    return seed - SEED_LIMIT if seed > _INT64_MAX else seed


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
                f"seed of slot {j}: {shown_value(given)} is not allowed; allowed: {SEED_RANGE}"
            )
        keys[j, 0] = seed & 0xFFFFFFFF
        keys[j, 1] = seed >> 32
        klens[j] = 2 if seed >> 32 else 1
    return keys, klens


def array_from_state(state: Mapping[str, Any], name: str, like: np.ndarray) -> np.ndarray:
    """``state[name]`` as a new array of ``like``'s shape and type, or :class:`BatchError`.

    Integers within that type's range (bools where ``like`` holds bools), taken as
    they are: a float (``0.7``) or a bool where a number belongs, or a number outside
    the type (an ``int64`` 300 for an ``int8``), is refused, not rounded or wrapped."""
    if name not in state:
        raise BatchError(f"state: {name!r} is missing")
    given = state[name]
    want = "bools" if like.dtype == np.bool_ else f"integers that fit {like.dtype}"
    try:
        value = np.asarray(given)
        if (
            like.dtype == np.uint64
            and value.dtype.kind in "fO"
            and isinstance(given, list)
            and all(type(x) is int for x in given)
        ):
            # numpy reads a list of ints from 2**63 as floats: read it as uint64 (an
            # int outside 0 to 2**64 - 1 raises OverflowError).
            value = np.asarray(given, dtype=np.uint64)
    except (ValueError, TypeError, OverflowError) as e:
        raise BatchError(f"state: {name!r} is not an array of {like.dtype} ({e})") from None
    if value.dtype.kind not in ("b" if like.dtype == np.bool_ else "iu"):
        raise BatchError(
            f"state: {name!r} is not an array of {like.dtype} (it holds {value.dtype} "
            f"values); allowed: {want}"
        )
    if value.shape != like.shape:
        raise BatchError(f"state: {name!r} has shape {value.shape}; allowed: {like.shape}")
    if value.size and like.dtype != np.bool_:
        info = np.iinfo(like.dtype)
        low, high = int(value.min()), int(value.max())
        if low < info.min or high > info.max:
            raise BatchError(
                f"state: {name!r} holds {low if low < info.min else high}; allowed: {want}"
            )
    return value.astype(like.dtype)


def seeds_from_state(state: Mapping[str, Any], name: str, size: int) -> list[int]:
    """``state[name]``: a list of ``size`` seeds (plain ints from 0 to 2**64 - 1, as
    :meth:`BatchEngine.get_state` writes them), else :class:`BatchError`."""
    seeds = state.get(name)
    if not (
        isinstance(seeds, list)
        and len(seeds) == size
        and all(isinstance(x, int) and not isinstance(x, bool) for x in seeds)
    ):
        raise BatchError(f"state: {name!r} is not a list of {size} ints (one per slot)")
    for j, seed in enumerate(seeds):
        if not 0 <= seed < SEED_LIMIT:
            raise BatchError(
                f"state: {name!r}[{j}]={shown_value(seed)} (slot {j}) is not allowed; "
                f"allowed: seeds from 0 to {SEED_LIMIT - 1} (2**64 - 1)"
            )
    return list(seeds)


def as_array(value: object, name: str, allowed: str) -> np.ndarray:
    """``np.asarray(value)``, or :class:`BatchError` naming ``name`` and ``allowed``
    where numpy makes no array of it: a ragged list such as ``[[1], [2, 3]]``, whose
    own ``ValueError`` names no argument."""
    try:
        return np.asarray(value)
    except ValueError:
        raise BatchError(
            f"{name}={shown_value(value)} is not allowed (its items differ in shape); "
            f"allowed: {allowed}"
        ) from None


def refuse_where(bad: np.ndarray, what: str) -> None:
    """:class:`BatchError` naming the first slot where ``bad`` (a bool per slot) holds:
    "state: slot b: ``what``"."""
    if bad.any():
        raise BatchError(f"state: slot {int(np.flatnonzero(bad)[0])}: {what}")


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
        self.rules = rules
        self.enc = br.enc
        self.size = B = checked_int("size", size, 1, MAX_SIZE)
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
        # to_move's view, made once (st is only ever written in place).
        self._to_move = self.st[:, K.TO_MOVE]
        self._to_move.flags.writeable = False

    # -- state as data --------------------------------------------------------------------

    _STATE_ARRAYS = (
        "loc", "hsize", "stock", "ends", "st", "counts", "cannot", "totals", "leads", "mst",
        "winners", "in_match",
    )  # fmt: skip

    # What a state belongs to: a state of other rules, size or observation layout would
    # play another game (or index outside the arrays) if it were taken.
    _ORIGIN = ("rules", "size", "encoding_version")

    def get_state(self) -> dict[str, Any]:
        """Every slot's hand and match as plain JSON data (lists of numbers), with the
        rules (as text), size and encoding version they belong to; :meth:`set_state`
        goes on from it."""
        state: dict[str, Any] = {name: getattr(self, name).tolist() for name in self._STATE_ARRAYS}
        state["hand_seeds"] = list(self.hand_seeds)
        state["match_seeds"] = list(self.match_seeds)
        state.update(self._origin())
        return state

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a :meth:`get_state` of an engine of the same rules and size.

        :class:`BatchError` names what does not fit; then nothing changed. Refused: a
        state saved under other rules, size or encoding version (naming both values;
        a state written before these were recorded names none, and is taken on its
        values alone), an array of another shape or type, and values no game
        reaches: numbers out of their range (a seat, a tile, an end, a termination),
        and parts that disagree (hand sizes and the tiles held, the boneyard and the
        deal's order, the ends and the tiles played, the open ends and the spinner's
        flag, a finished hand's counts and points), counters past what ends a hand or
        was drawn (passes, draws, actions), and a match's totals, flags, winners and
        leads that no sequence of hands scores. The kernels index arrays by these
        numbers unchecked, so a tampered state is not just another game: it could
        read or write outside them (a spinner's flag cleared beside a spinner on the
        table let a second one write six open ends into four slots)."""
        self._put_state(self._read_state(state))

    def _origin(self) -> dict[str, Any]:
        return {
            "rules": self.rules.to_text(),
            "size": self.size,
            "encoding_version": ENCODING_VERSION,
        }

    def _read_state(self, state: Mapping[str, Any]) -> dict[str, Any]:
        """``state`` checked (see :meth:`set_state`) and read into arrays and seed lists,
        for :meth:`_put_state`; nothing changes here."""
        if not isinstance(state, Mapping):
            raise BatchError(
                f"state: expected a mapping from get_state(), got {type(state).__name__}"
            )
        self._check_origin(state)
        loaded: dict[str, Any] = {
            name: array_from_state(state, name, getattr(self, name)) for name in self._STATE_ARRAYS
        }
        for name in ("hand_seeds", "match_seeds"):
            loaded[name] = seeds_from_state(state, name, self.size)
        self._check_slots(loaded)
        return loaded

    def _put_state(self, loaded: Mapping[str, Any]) -> None:
        """Take a state read by :meth:`_read_state` (or saved from this engine's own
        arrays, which need no check)."""
        for name in self._STATE_ARRAYS:
            getattr(self, name)[...] = loaded[name]
        self.hand_seeds = list(loaded["hand_seeds"])
        self.match_seeds = list(loaded["match_seeds"])
        self._masks_fresh = False

    def _check_origin(self, state: Mapping[str, Any]) -> None:
        """A state names the rules, size and encoding version it was saved under, or
        (written before they were recorded) none of them."""
        given = [key for key in self._ORIGIN if key in state]
        if not given:
            return
        missing = [key for key in self._ORIGIN if key not in state]
        if missing:
            raise BatchError(
                f"state: {missing[0]!r} is missing; allowed: a state that names all of "
                f"{', '.join(self._ORIGIN)} (as get_state() writes), or none of them"
            )
        mine = self._origin()
        saved_rules = state["rules"]
        try:
            rules = Rules.from_text(saved_rules)
        except ValueError as e:  # RulesError
            raise BatchError(f"state: 'rules' is not a rules text ({e})") from None
        if rules != self.rules:
            differ = "; ".join(
                rules_differences(rules.to_dict(), self.rules.to_dict(), ("saved", "this engine"))
            )
            raise BatchError(
                f"state: saved under other rules ({differ}); allowed: a state of this engine's "
                "rules"
            )
        for key in ("size", "encoding_version"):
            if whole_number(state[key]) != mine[key]:
                raise BatchError(
                    f"state: saved with {key}={shown_value(state[key])}, but this engine has "
                    f"{key}={mine[key]!r}; allowed: a state of the same {key}"
                )

    def _check_slots(self, a: Mapping[str, Any]) -> None:
        """Every slot of the arrays ``a`` holds what a game (or a new engine) holds; the
        checks go in an order where each may index by what the earlier ones checked."""
        rules = self.rules
        n, T, E = rules.players, self.enc.num_tiles, self.enc.end_slots
        V, sides = self.enc.num_values, rules.sides
        loc, hsize, stock, ends, st = a["loc"], a["hsize"], a["stock"], a["ends"], a["st"]
        counts, cannot, in_match = a["counts"], a["cannot"], a["in_match"]
        totals, leads, mst, winners = a["totals"], a["leads"], a["mst"], a["winners"]
        B = self.size
        rows = self._rows
        over = st[:, K.OVER]
        # A slot never dealt is over with no termination: it must be as a new engine
        # holds it (then it has no hand to check below).
        fresh = (over == 1) & (st[:, K.TERM] == -1)
        empty_st = np.zeros(K.NST, np.int32)
        empty_st[K.OVER], empty_st[K.TERM] = 1, -1
        untouched = (
            (loc == K.BONEYARD).all(1)
            & (hsize == 0).all(1)
            & (stock == 0).all(1)
            & (ends == -1).all((1, 2))
            & (st == empty_st).all(1)
            & (counts == 0).all(1)
            & (cannot == 0).all((1, 2))
            & ~in_match
            & (totals == 0).all(1)
            & (leads == 0).all(1)
            & (mst == 0).all(1)
            & (winners == 0).all(1)
        )
        refuse_where(
            fresh & ~untouched,
            "over with no termination (a slot never dealt) but not empty as a new engine's "
            "slot; allowed: a dealt hand, or an untouched slot",
        )
        dealt = ~fresh
        dealt_tiles = int(self.br.rp[K.R_DEALT])
        for field, name, low, high in (
            (K.POS, "the boneyard position", dealt_tiles, T),
            (K.NENDS, "the open ends", 0, E),
            (K.TO_MOVE, "the seat to move", 0, n - 1),
            (K.LEADER, "the leader", 0, n - 1),
            (K.DEALT_LEADER, "the dealt leader", 0, n - 1),
            (K.PASSES, "the passes in a row", 0, n),
            (K.LEAD_PASSES, "the passes at the lead", 0, n),
            (K.DRAWS, "the draws this turn", 0, T),
            (K.SPIN_DONE, "spinner down", 0, 1),
            (K.NACT, "the actions so far", 0, np.iinfo(np.int32).max),
            (K.OVER, "over", 0, 1),
            (K.TERM, "the termination", -1, len(Termination.ALL) - 1),
            (K.WINNER, "the winner", -1, n - 1),
            (K.WSIDE, "the winning side", -1, sides - 1),
            (K.POINTS, "the points", 0, np.iinfo(np.int32).max),
        ):
            value = st[:, field]
            bad = dealt & ((value < low) | (value > high))
            if bad.any():
                b = int(np.flatnonzero(bad)[0])
                raise BatchError(
                    f"state: slot {b}: {name} (st[{b}][{field}]) is {int(value[b])}; "
                    f"allowed: {low} to {high}"
                )
        refuse_where(
            dealt & ((loc < K.PLAYED) | (loc >= n)).any(1),
            f"a tile's place (loc) is not a seat, the boneyard ({K.BONEYARD}) or the table "
            f"({K.PLAYED}); allowed: {K.PLAYED} to {n - 1}",
        )
        refuse_where(
            dealt & (np.sort(stock, axis=1) != np.arange(T)).any(1),
            f"the deal's order (stock) is not each tile 0 to {T - 1} once",
        )
        # Tiles per seat, and pips per seat, counted from the places (seat n: no seat).
        seat_of = np.where(loc >= 0, loc, n).astype(np.int64) + (n + 1) * rows[:, None]
        held = np.bincount(seat_of.ravel(), minlength=B * (n + 1)).reshape(B, n + 1)[:, :n]
        refuse_where(
            dealt & (held != hsize).any(1),
            "the hand sizes (hsize) are not the tiles each seat holds (loc)",
        )
        placed = np.take_along_axis(loc, stock.astype(np.int64), axis=1)
        tail = np.arange(T)[None, :] >= st[:, K.POS, None]
        refuse_where(
            dealt & ((placed == K.BONEYARD) != tail).any(1),
            "the boneyard (the tiles whose loc is -1) is not the deal's order (stock) "
            "from the boneyard position on",
        )
        kind, v, v2 = (ends[:, :, j].astype(np.int64) for j in range(3))
        value_ok = (v >= 0) & (v < V)
        second_ok = (v2 >= 0) & (v2 < V)
        live_ok = np.where(
            kind == K.BLANK,
            (v == -1) & (v2 == -1),
            (kind >= 0)
            & (kind < len(_KINDS))
            & value_ok
            & np.where(kind == K.CROSS, second_ok, v2 == -1),
        )
        live = np.arange(E)[None, :] < st[:, K.NENDS, None]
        refuse_where(
            dealt & ~np.where(live, live_ok, (ends == -1).all(2)).all(1),
            f"an open end is not (kind 0 to {len(_KINDS) - 1}, values 0 to {V - 1} or -1 as "
            "the kind has them), or an end past the open ones is not (-1, -1, -1)",
        )
        refuse_where(
            dealt & ((st[:, K.NENDS] > 0) != (loc == K.PLAYED).any(1)),
            "the open ends and the tiles played disagree (ends without a tile down, or "
            "tiles down without ends)",
        )
        self._check_ends_growth(a, dealt, live)
        refuse_where((cannot > 1).any((1, 2)), "a cannot-answer mark is not 0 or 1")
        running = dealt & (over == 0)
        refuse_where(
            running
            & (
                (st[:, K.TERM] != -1)
                | (st[:, K.WINNER] != -1)
                | (st[:, K.WSIDE] != -1)
                | (st[:, K.POINTS] != 0)
                | (counts != 0).any(1)
            ),
            "the hand runs (over is 0) but has a termination, winner, points or counts",
        )
        # Counters a step adds one to: past these a hand would have ended (passes), or
        # they count what did not happen (draws, actions).
        refuse_where(
            running & ((st[:, K.PASSES] >= n) | (st[:, K.LEAD_PASSES] >= n)),
            f"the hand runs but has {n} passes in a row or at the lead, which end it; "
            f"allowed: 0 to {n - 1}",
        )
        refuse_where(
            dealt
            & ((st[:, K.DRAWS] > st[:, K.POS] - dealt_tiles) | (st[:, K.DRAWS] > rules.draw_limit)),
            "the draws this turn are more than the tiles drawn from the boneyard, or "
            f"than the rules' draw limit ({rules.draw_rule})",
        )
        refuse_where(
            dealt & (st[:, K.NACT] > rules.max_hand_actions),
            f"the actions so far are more than a hand of these rules holds "
            f"({rules.max_hand_actions})",
        )
        pips = self.br.tab[:, K.TPIPS][None, :]
        counted = np.bincount(
            seat_of.ravel(), weights=np.broadcast_to(pips, (B, T)).ravel(), minlength=B * (n + 1)
        ).reshape(B, n + 1)[:, :n]
        ended = dealt & (over == 1)
        refuse_where(
            ended & (counts != counted).any(1),
            "the hand is over but its counts are not the pips each seat holds",
        )
        side_of = np.array([rules.side_of(seat) for seat in range(n)], np.int64)
        winner = st[:, K.WINNER]
        refuse_where(
            ended & (winner >= 0) & (st[:, K.WSIDE] != side_of[np.clip(winner, 0, n - 1)]),
            "the winning side is not the winner's side",
        )
        refuse_where(
            ended
            & (
                ((winner < 0) & (st[:, K.POINTS] != 0))
                | (st[:, K.POINTS] > counts.sum(1, dtype=np.int64))
            ),
            "the hand's points are not 0 without a winner, or are more than the pips left "
            "in the hands",
        )
        refuse_where(
            (totals < 0).any(1) | (leads < 0).any(1) | (mst < 0).any(1),
            "a match total, lead count or deal count is negative",
        )
        refuse_where(
            (mst[:, K.M_ARMED] > 1)
            | (mst[:, K.M_OVER] > 1)
            | (winners > 1).any(1)
            | (winners < 0).any(1),
            "a match flag (armed, over, winners) is not 0 or 1",
        )
        match_over = mst[:, K.M_OVER] == 1
        refuse_where(
            in_match
            & (
                fresh
                | (mst[:, K.M_DEALS] < 1)
                | (match_over & ((over == 0) | ~winners.any(1)))
                | (~match_over & winners.any(1))
            ),
            "the match state disagrees with itself (a match has a deal; an ended match "
            "has an ended hand and winners; a running one none)",
        )
        self._check_match_totals(a)

    def _check_ends_growth(self, a: Mapping[str, Any], dealt: np.ndarray, live: np.ndarray) -> None:
        """The open ends are what the tiles down give: two from the lead, two more once
        a spinner is down, one more for each matador down as a branch, each of a kind
        these rules place. The kernels write ends up to the slot count unchecked, and
        a spinner flag that says "not yet" beside a spinner on the table would let a
        second spinner write past them."""
        rules = self.rules
        st, ends, loc = a["st"], a["ends"], a["loc"]
        nends, spun = st[:, K.NENDS], st[:, K.SPIN_DONE]
        place = rules.matador_placement
        orients = {orient for _, orient in self.enc.slot_table}
        kinds = [K.PLAIN]
        if rules.spinner != "none":
            kinds.append(K.SPINNER)
        if "upright" in orients:
            kinds.append(K.BLANK)
        if "cross" in orients:
            kinds.append({"crosswise_choice": K.CROSS, "branching": K.BRANCH}.get(place, K.BLANK))
        kind = ends[:, :, 0].astype(np.int64)
        names = ", ".join(f"{k} ({_KINDS[k]})" for k in sorted(kinds))
        refuse_where(
            dealt & (live & ~np.isin(kind, kinds)).any(1),
            f"an open end is of a kind these rules never place; allowed: {names}",
        )
        refuse_where(
            dealt & (live & (kind == K.SPINNER)).any(1) & (spun == 0),
            "an open end is a spinner's, but the spinner is not down (st[SPIN_DONE] is 0)",
        )
        refuse_where(
            dealt & (spun == 1) & ((nends == 0) | (rules.spinner == "none")),
            "the spinner is down (st[SPIN_DONE] is 1) with no tile down, or under rules "
            "without a spinner",
        )
        fewest = 2 + 2 * spun.astype(np.int64)
        matadors = self.br.tab[:, K.TMAT].astype(bool)
        branches = ((loc == K.PLAYED) & matadors[None, :]).sum(1) if place == "branching" else 0
        refuse_where(
            dealt & (nends > 0) & ((nends < fewest) | (nends > fewest + branches)),
            "the open ends are not what the tiles down give (2 from the lead, 2 more once "
            "the spinner is down, 1 more for each matador down as a branch)",
        )

    def _check_match_totals(self, a: Mapping[str, Any]) -> None:
        """A match's totals, leads and winners are what its hands can have scored: below
        the target while it runs under "first_to_target"; marked as past it ("armed")
        exactly when a total is above it under "complete_round", and past it by no
        more than a round of hands scores; the winners the sides on the top total."""
        rules = self.rules
        in_match, totals, leads, mst, winners = (
            a["in_match"],
            a["totals"].astype(np.int64),
            a["leads"],
            a["mst"],
            a["winners"],
        )
        target = rules.target_score
        # A hand scores at most the pips of the whole set.
        most = int(self.br.tab[:, K.TPIPS].sum())
        top = totals.max(1)
        over = mst[:, K.M_OVER] == 1
        armed = mst[:, K.M_ARMED] == 1
        if rules.match_end == "first_to_target":
            refuse_where(
                in_match & (armed | (~over & (top >= target)) | (over & (top < target))),
                f"the match's totals and its end disagree (first_to_target {target}: a "
                "running match has every total below the target, an ended one a total at "
                "it or past it; nothing is armed)",
            )
            furthest = target - 1 + most
        else:
            refuse_where(
                in_match & ((armed != (top > target)) | (over & ~armed)),
                f"the match's totals and its end disagree (complete_round {target}: armed "
                "exactly when a total is above the target, and an ended match is armed)",
            )
            furthest = target + rules.players * most
        refuse_where(
            in_match & (top > furthest),
            f"a match total ({furthest} at most under these rules) is further past the "
            "target than its hands can take it",
        )
        refuse_where(
            in_match & over & (winners != (totals == top[:, None])).any(1),
            "the match's winners are not the sides on its top total",
        )
        # The hand in play is scored (and its lead counted) when it ends.
        scored = mst[:, K.M_DEALS].astype(np.int64) - (a["st"][:, K.OVER] == 0)
        refuse_where(
            in_match
            & (
                (leads.sum(1, dtype=np.int64) > scored)
                | (mst[:, K.M_DEALS] >= np.iinfo(np.int32).max)
            ),
            "the match counts more hands led than it has scored, or has dealt as many hands "
            "as its counter holds",
        )

    # -- copies and dealing ----------------------------------------------------------------

    def take(self, slots: Sequence[int] | np.ndarray) -> BatchEngine:
        """A new engine of the same rules whose slot ``i`` is a copy of slot
        ``slots[i]`` here: its hand, its match and their seeds. A slot may be taken
        more than once, so that a search or a tree walk (``matador_env.batch.perft``)
        can expand a slot into one copy per legal action and step each copy with its
        own. ``slots`` is a non-empty 1-d sequence of slot numbers of this engine;
        :class:`BatchError` names anything else. This engine is left as it was."""
        if slots is None or np.size(slots) == 0:  # None: _slots' "every slot" is not meant here
            raise BatchError(f"slots must name at least one slot, got {slots!r}")
        arr = self._slots(slots, distinct=False)
        if arr.size > MAX_SIZE:
            raise BatchError(f"slots: {arr.size} are more than an engine holds ({MAX_SIZE})")
        out = BatchEngine(self.rules, arr.size)
        for name in self._STATE_ARRAYS:
            getattr(out, name)[...] = getattr(self, name)[arr]
        out.hand_seeds = [self.hand_seeds[b] for b in arr.tolist()]
        out.match_seeds = [self.match_seeds[b] for b in arr.tolist()]
        return out

    def _slots(self, slots: Sequence[int] | np.ndarray | None, distinct: bool = True) -> np.ndarray:
        """``slots`` as an int64 array of slot numbers (None: every slot), each once
        unless ``distinct`` is False; else :class:`BatchError` naming what is wrong."""
        if slots is None:
            return np.arange(self.size, dtype=np.int64)
        arr = as_array(slots, "slots", "a 1-d sequence of slot numbers")
        if arr.ndim != 1 or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
            raise BatchError(f"slots must be a 1-d sequence of slot numbers, got {slots!r}")
        arr = arr.astype(np.int64)
        bad = np.flatnonzero((arr < 0) | (arr >= self.size))
        if bad.size:
            raise BatchError(
                f"slot {int(arr[bad[0]])} does not exist; allowed: 0 to {self.size - 1}"
            )
        if distinct and np.unique(arr).size != arr.size:
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
        """``(size, num_actions)`` int8: 1 for each legal action (a row of zeros once over);
        written into ``out`` if given (an ``int8`` array of that shape)."""
        masks = self._current_masks()
        if out is None:
            return masks.copy()
        if not isinstance(out, np.ndarray) or out.shape != masks.shape or out.dtype != np.int8:
            raise BatchError(
                f"out has shape {np.shape(out)} and dtype {getattr(out, 'dtype', None)}; "
                f"allowed: an int8 array of shape {masks.shape}"
            )
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
        per slot, advanced). Scores as :meth:`step`; returns the slots whose hand ended.

        ``seats``: one seat per slot, integers from 0 to ``players - 1``. Bad
        arguments raise :class:`BatchError` before anything moves."""
        n = self.rules.players
        arr = as_array(seats, "seats", f"one seat per slot, integers of shape ({self.size},)")
        if arr.shape != (self.size,) or arr.dtype.kind not in "iu":
            raise BatchError(
                f"seats has shape {arr.shape} and dtype {arr.dtype}; allowed: one seat per "
                f"slot, integers of shape ({self.size},)"
            )
        bad = np.flatnonzero((arr < 0) | (arr >= n))
        if bad.size:
            b = int(bad[0])
            raise BatchError(f"seats: slot {b}: {int(arr[b])} is not a seat; allowed: 0 to {n - 1}")
        if not isinstance(rng, np.ndarray) or rng.shape != (self.size,) or rng.dtype != np.uint64:
            raise BatchError(
                f"rng has shape {np.shape(rng)} and dtype {getattr(rng, 'dtype', None)}; "
                f"allowed: one uint64 xorshift state per slot, shape ({self.size},)"
            )
        zero = np.flatnonzero(rng == 0)
        if zero.size:
            raise BatchError(
                f"rng: slot {int(zero[0])}'s state is 0, which xorshift never leaves; "
                "allowed: nonzero states"
            )
        return self._play_random_until(arr.astype(np.int64), rng)

    def _play_random_until(self, seats: np.ndarray, rng: np.ndarray) -> np.ndarray:
        """:meth:`play_random_until` of checked arguments (``seats``: ``int64``)."""
        br = self.br
        was_over = self.st[:, K.OVER].copy()
        self._masks_fresh = False
        K.play_random_until(
            seats,
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

    def action_array(
        self, actions: np.ndarray | Sequence[int], beyond: int | None = None
    ) -> np.ndarray:
        """``actions`` as a new ``int64`` array, one per slot; :class:`BatchError` for
        another shape or a dtype other than integers. Their legality is not checked.

        An unsigned action from 2**63 (``uint64``) has no ``int64``: it is refused,
        naming the value given (a cast would wrap ``2**64 - 1`` round to -1, the
        action that leaves a slot as it is), or with ``beyond`` given it becomes
        ``beyond`` (the vector environment's illegal-action rule, where any action out
        of range is an illegal one)."""
        if isinstance(actions, list | tuple):
            # numpy makes [3, True] an integer array: the bool would play action 1.
            for b, action in enumerate(actions):
                if isinstance(action, bool | np.bool_):
                    raise BatchError(
                        f"actions must be integers, got {action!r} (a bool) for slot {b}"
                    )
        arr = as_array(actions, "actions", f"one integer per slot, shape ({self.size},)")
        if arr.shape != (self.size,):
            raise BatchError(
                f"actions must have shape ({self.size},) (one per slot), got shape {arr.shape}"
            )
        kind = arr.dtype.kind
        if kind not in "iu":
            raise BatchError(f"actions must be integers, got dtype {arr.dtype}")
        if kind == "u" and arr.dtype.itemsize == 8:
            huge = arr > _INT64_MAX
            if huge.any():
                if beyond is None:
                    b = int(np.flatnonzero(huge)[0])
                    raise BatchError(
                        f"slot {b}: action {int(arr[b])} is out of range; allowed: 0 to "
                        f"{self.num_actions - 1}, or -1 (leaves the slot as it is)"
                    )
                return np.where(huge, beyond, arr.astype(np.int64))
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
        """Per slot: the seat to move. A read-only view of the engine's own ``st``
        column (a write would change the game behind the engine's back); it follows
        the engine's later moves: copy it to keep it."""
        return self._to_move

    def _slot(self, b: object) -> int:
        """``b`` as a slot number, else :class:`BatchError` (a negative number is no
        slot: numpy would read it from the end)."""
        slot = b if type(b) is int else whole_number(b)
        if slot is None or not 0 <= slot < self.size:
            raise BatchError(
                f"slot {shown_value(b)} does not exist; allowed: {INTEGER_KINDS} from 0 to "
                f"{self.size - 1}"
            )
        return slot

    def hand_mask(self, b: int, seat: int) -> int:
        """Seat ``seat``'s hand in slot ``b`` as the engine's bit mask over tile indices."""
        b = self._slot(b)
        n = self.rules.players
        checked = seat_number(seat, n)
        if checked is None:
            raise BatchError(
                f"seat must be a seat number: {INTEGER_KINDS} from 0 to {n - 1}; "
                f"got {shown_value(seat)}"
            )
        return self._hand_mask(b, checked)

    def _hand_mask(self, b: int, seat: int) -> int:
        mask = 0
        for k in np.flatnonzero(self.loc[b] == seat).tolist():
            mask |= 1 << k
        return mask

    def hand_masks(self, b: int) -> tuple[int, ...]:
        """Every seat's hand in slot ``b``, as :meth:`hand_mask`."""
        b = self._slot(b)
        return tuple(self._hand_mask(b, s) for s in range(self.rules.players))

    def boneyard(self, b: int) -> tuple[Tile, ...]:
        """The undrawn tiles of slot ``b`` in draw order (full information)."""
        b = self._slot(b)
        tiles = self.enc.tiles
        return tuple(tiles[k] for k in self.stock[b, self.st[b, K.POS] :].tolist())

    def end_tuple(self, b: int) -> tuple[End, ...]:
        """Slot ``b``'s open ends as the engine's :class:`End` values."""
        b = self._slot(b)
        out = []
        for kind, v, v2 in self.ends[b, : self.st[b, K.NENDS]].tolist():
            k = _KINDS[kind]
            out.append(End(k, None if v < 0 else v, None if v2 < 0 else v2))
        return tuple(out)

    def outcome(self, b: int) -> Outcome | None:
        """Slot ``b``'s :class:`Outcome` once its hand is over, else None."""
        st = self.st[self._slot(b)]
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
        """The winning sides of slot ``b``'s match once it is over, else None."""
        b = self._slot(b)
        if not self.mst[b, K.M_OVER]:
            return None
        return tuple(int(x) for x in np.flatnonzero(self.winners[b]))


_PERFT_CHUNK = 1 << 16  # slots expanded at once: bounds the memory of a wide level


def perft(engine: BatchEngine, slot: int, depth: int) -> Perft:
    """:func:`matador_env.engine.perft` of slot ``slot``'s hand, walked on the compiled
    kernels: each level's positions are copied once per legal action
    (:meth:`BatchEngine.take`) and stepped together, a chunk of slots at a time. The
    counts are the Python engine's for the same position
    (``tests/test_perft.py`` checks both against the golden counts), at a fraction of
    its time on wide trees. ``engine`` is left as it was; :class:`BatchError` names
    a ``slot`` or ``depth`` that is not allowed (``depth`` from 0 to 64)."""
    if not isinstance(engine, BatchEngine):
        raise BatchError(f"engine: expected a BatchEngine, got {type(engine).__name__}")
    depth = checked_int("depth", depth, 0, 64)
    root = engine.take([engine._slot(slot)])
    return _perft_walk(root, depth)


def _perft_walk(eng: BatchEngine, depth: int) -> Perft:
    sides = eng.rules.sides
    if depth == 0:
        st = eng.st
        ended = st[:, K.TERM] >= 0
        by_end = np.bincount(st[ended, K.TERM], minlength=len(Termination.ALL))
        scored = ended & (st[:, K.WSIDE] >= 0)
        points = np.bincount(st[scored, K.WSIDE], st[scored, K.POINTS], minlength=sides)
        domino, blocked, void_tie, redeal_tie, no_lead = (int(c) for c in by_end)
        side_points = tuple(int(p) for p in points)
        return Perft(eng.size, domino, blocked, void_tie, redeal_tie, no_lead, side_points)
    parents, actions = np.nonzero(eng._current_masks())
    total = Perft.none(sides)
    for start in range(0, parents.size, _PERFT_CHUNK):
        child = eng.take(parents[start : start + _PERFT_CHUNK])
        child.step(actions[start : start + _PERFT_CHUNK].astype(np.int64))
        total += _perft_walk(child, depth - 1)
    return total


def random_hands(
    rules: Rules, seeds: Sequence[int], rng_seed: int = 0, threads: int = 1
) -> tuple[np.ndarray, int]:
    """Deal each seed and play it out with uniformly random legal actions, in one kernel.

    Returns ``(results, actions)``: per hand (termination code, winning side or -1,
    points), and the number of actions taken. ``threads`` > 1 splits the hands over
    numba's threads (each range with its own random stream). ``rng_seed`` seeds the
    random actions: a seed as the engine's, from 0 to 2**64 - 1.
    """
    br = batch_rules(rules)
    threads = checked_int("threads", threads, 1)
    stream = _kernel_seed(checked_seed(rng_seed, "rng_seed", BatchError))
    keys, klens = seed_keys(seeds)
    results = np.zeros((len(keys), 3), np.int64)
    if threads == 1:
        total = K.random_hands(keys, klens, br.rp, br.tab, br.slot, stream, results)
    else:
        import numba

        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
        total = K.random_hands_parallel(
            keys, klens, br.rp, br.tab, br.slot, stream, results, threads
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

    Arguments are checked (this is on the search's path: one pass over a few
    numbers): ``unseen`` a mask of tiles 0 to 61; ``sizes`` integers >= 0, one per
    hidden hand; ``voids`` one mask per hand; each cap a hand, a mask and an
    integer >= 0; ``count`` >= 0; ``tries`` >= 1; ``seed`` a seed as the engine's
    (0 to 2**64 - 1). Masks are integers from 0 to 2**63 - 1. :class:`BatchError`
    names the first that is not.
    """
    unseen = checked_int("unseen", unseen, 0)
    if unseen >> 62:
        raise BatchError(
            f"deal_hidden_hands: tile index {unseen.bit_length() - 1} > 61; at most 62 tiles"
        )
    tiles = [t for t in range(unseen.bit_length()) if unseen >> t & 1]
    sizes = _int_list("sizes", sizes, 0, _INT64_MAX)
    voids = _int_list("voids", voids, 0, _INT64_MAX)
    H = len(sizes)
    caps = _caps(caps, H)
    if len(voids) != H:
        raise BatchError(f"deal_hidden_hands: {H} sizes, {len(voids)} voids, caps on {caps!r}")
    count = checked_int("count", count, 0)
    tries = checked_int("tries", tries, 1)
    stream = _kernel_seed(checked_seed(seed, "seed", BatchError))
    boneyard = len(tiles) - sum(sizes)
    if boneyard < 0:
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
        stream,
        hands,
        rest,
        dealt,
    )
    hand_rows = hands.tolist()
    rest_rows = rest.tolist()
    return [(hand_rows[w], rest_rows[w]) if dealt[w] else None for w in range(count)]


def _int_list(name: str, values: object, low: int, high: int) -> list[int]:
    """``values``, a sequence of integers from ``low`` to ``high``, as a list of plain
    ints; else :class:`BatchError` naming the first that is not. Plain ints in range
    (what the search passes) are taken in one pass."""
    if type(values) is list:
        # The search's case, in a plain loop (no generator, no ABC test): ~0.1 us.
        for x in values:
            if type(x) is not int or not low <= x <= high:
                break
        else:
            return values
    if not isinstance(values, (Sequence, np.ndarray)) or is_text(values):
        raise BatchError(
            f"{name}={shown_value(values)} is not allowed; allowed: a sequence of integers"
        )
    return [checked_int(f"{name}[{i}]", x, low, high) for i, x in enumerate(values)]


def _caps(caps: object, hands: int) -> list[tuple[int, int, int]]:
    """The caps of :func:`deal_hidden_hands` checked: each ``(hand, mask, most)``."""
    if type(caps) is list and not caps:
        return caps  # the search's usual case, at once
    if not isinstance(caps, (Sequence, np.ndarray)) or is_text(caps):
        raise BatchError(f"caps={shown_value(caps)} is not allowed; allowed: a sequence of caps")
    out = []
    for j, cap in enumerate(caps):
        if not (isinstance(cap, (tuple, list)) and len(cap) == 3):
            raise BatchError(
                f"caps[{j}]={shown_value(cap)} is not allowed; allowed: (hand, mask, most)"
            )
        h, mask, most = cap
        if not (type(h) is int and 0 <= h < hands):
            h = whole_number(h)
            if h is None or not 0 <= h < hands:
                raise BatchError(
                    f"deal_hidden_hands: {hands} sizes, caps on {caps!r}: caps[{j}]'s hand "
                    f"is not allowed; allowed: 0 to {hands - 1}"
                )
        mask = checked_int(f"caps[{j}] mask", mask, 0, _INT64_MAX)
        most = checked_int(f"caps[{j}] most", most, 0)
        out.append((h, mask, most))
    return out


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
        try:
            self.wts = np.asarray(weights, np.float64)
        except (ValueError, TypeError) as e:
            raise BatchError(f"weights: expected {PL.NPW} numbers ({e})") from None
        if self.wts.shape != (PL.NPW,):
            raise BatchError(f"weights: expected {PL.NPW} numbers, got shape {self.wts.shape}")
        if not np.isfinite(self.wts).all():
            raise BatchError(f"weights: {self.wts.tolist()} are not all finite numbers")
        self._sets, self._halves, self._miss = _policy_tables(br)
        T = self.enc.num_tiles
        E = self.enc.end_slots
        self.side = rules.side_of(view.seat)
        # What every world must agree with (checked as the worlds are filled): the
        # tiles on the table, the hand sizes, the viewer's own hand; and the actions
        # the viewer may take.
        layout_loc = np.full(T, PL._NOWHERE, np.int8)
        for tile in view.layout:
            layout_loc[tile.index] = K.PLAYED
        self._layout_loc = layout_loc
        self._sizes = np.array(view.hand_sizes, np.int64)
        self._words = (T + 63) // 64
        own = sum(1 << tile.index for tile in view.hand)
        self._own = np.array(
            [(own >> (64 * x)) & 0xFFFFFFFFFFFFFFFF for x in range(self._words)], np.uint64
        )
        self._legal = frozenset(self.enc.index[move] for move in view.legal_moves)
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
        actions: Sequence[int] | np.ndarray,
        repeats: int = 1,
        rng_seed: int = 0,
    ) -> np.ndarray:
        """``values[w, c]``: the mean result for the viewer's side of action
        ``actions[c]`` in world ``w`` (its side's points, or minus the winners' points
        shared among the other sides), over ``repeats`` playouts.

        Checked, as cheaply as the search's path allows (the worlds as the kernel fills
        them, the rest once per call): ``worlds`` one or more, each of the view (a
        mask per seat, the viewer's own the view's hand and every size the view's; a
        boneyard of the view's size; every tile in exactly one place); ``actions`` one
        or more of the view's legal actions; ``repeats`` >= 1; ``rng_seed`` a seed as
        the engine's (0 to 2**64 - 1). :class:`BatchError` names the first that is not.
        """
        br = self.br
        T = self.enc.num_tiles
        n = self.view.rules.players
        acts = self._candidates(actions)
        repeats = checked_int("repeats", repeats, 1)
        stream = _kernel_seed(checked_seed(rng_seed, "rng_seed", BatchError))
        nw, na = len(worlds), acts.size
        if nw == 0:
            raise BatchError("worlds: none given; allowed: one or more worlds of the view")
        words = self._words
        hand_words = np.zeros((nw, n, words), np.uint64)
        rest = np.zeros((nw, T), np.int64)
        rest_len = np.zeros(nw, np.int64)
        # Every world of a view has the same boneyard size (it is public).
        size = self.view.boneyard_size
        for w, (hands, boneyard) in enumerate(worlds):
            if len(hands) != n:
                raise BatchError(f"world {w}: expected {n} hands, got {len(hands)}")
            if len(boneyard) != size:
                raise BatchError(f"worlds: every boneyard must hold the view's {size} tiles")
        try:
            if words == 1:
                masks = np.array([hands for hands, _ in worlds])
                if masks.dtype.kind != "i":  # a float would be cut to an int unseen
                    raise TypeError(f"masks of {masks.dtype}")
                # A negative mask becomes bits past the set's tiles: refused as outside.
                hand_words[:, :, 0] = masks.astype(np.uint64)
            else:
                for w, (hands, _) in enumerate(worlds):
                    for seat, mask in enumerate(hands):
                        if type(mask) is not int or mask < 0:
                            mask = checked_int(f"world {w} hand {seat}", mask, 0)
                        for x in range(words):
                            hand_words[w, seat, x] = (mask >> (64 * x)) & 0xFFFFFFFFFFFFFFFF
            if size:
                tiles = np.array([boneyard for _, boneyard in worlds])
                if tiles.dtype.kind != "i":
                    raise TypeError(f"boneyard tiles of {tiles.dtype}")
                rest[:, :size] = tiles
        except (ValueError, TypeError, OverflowError) as e:
            raise BatchError(
                f"worlds: not worlds of the view ({e}); allowed: ({n} hand masks, "
                f"{size} tile indices) per world, integers"
            ) from None
        rest_len[:] = size
        loc = np.empty((nw, T), np.int8)
        hsize = np.empty((nw, n), np.int32)
        stock = np.zeros((nw, T), np.int16)
        st = np.tile(self._st, (nw, 1))
        why = np.zeros(2, np.int64)
        bad = PL.fill_worlds(
            hand_words, rest, rest_len, self._layout_loc, self._sizes, self.view.seat,
            self._own, loc, hsize, stock, st, why,
        )  # fmt: skip
        if bad >= 0:
            raise BatchError(self._world_error(int(bad), int(why[0]), int(why[1])))
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
            acts,
            self.side,
            repeats,
            stream,
            values,
        )
        return values

    def _candidates(self, actions: Sequence[int] | np.ndarray) -> np.ndarray:
        """``actions`` as an ``int64`` array, each a legal action of the view."""
        allowed = f"one or more of the view's legal actions {sorted(self._legal)}"
        acts = as_array(actions, "actions", allowed)
        if acts.ndim != 1 or acts.size == 0 or acts.dtype.kind not in "iu":
            raise BatchError(f"actions={shown_value(actions)} is not allowed; allowed: {allowed}")
        legal = self._legal
        for c, a in enumerate(acts.tolist()):
            if a not in legal:
                raise BatchError(
                    f"actions[{c}]={a} is not a legal action of the view; allowed: "
                    + ", ".join(f"{x} ({self.enc.moves[x]})" for x in sorted(legal))
                )
        return acts.astype(np.int64)

    def _world_error(self, w: int, what: int, at: int) -> str:
        """The message of what :func:`PL.fill_worlds` found wrong in world ``w``."""
        view = self.view
        if what == PL.WORLD_TWICE:
            why = f"tile {self.enc.tiles[at]} is in two places (a hand, the table, the boneyard)"
        elif what == PL.WORLD_OUTSIDE:
            why = f"boneyard entry {at} is no tile index (0 to {self.enc.num_tiles - 1})"
        elif what == PL.WORLD_MASK:
            why = (
                f"seat {at}'s hand mask holds bits past the set's {self.enc.num_tiles} tiles "
                "(or is negative)"
            )
        elif what == PL.WORLD_MISSING:
            why = f"tile {self.enc.tiles[at]} is in no hand, nor on the table or in the boneyard"
        elif what == PL.WORLD_SIZE:
            why = f"seat {at}'s hand does not hold the view's {view.hand_sizes[at]} tiles"
        else:
            why = f"seat {at}'s hand is not the view's own hand"
        return f"world {w}: {why}; allowed: worlds of the view (each tile in one place)"


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
