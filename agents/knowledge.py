"""What one seat can know about the hidden tiles, and worlds sampled consistently with it.

Everything here is computed from a :class:`~matador_env.engine.SeatView` alone:

- the *unseen* tiles: neither in the seat's hand nor on the table;
- what each other seat *cannot* hold, inferred from the public history. A pass
  means the seat had no legal placement at the ends of that moment (RULES.md
  rule 7: passing is legal only then); a draw that was not voluntary means the
  same, and under ``voluntary_draw="only_matadors"`` a draw still means the
  seat held no non-matador tile that fitted (rule 6). Those tiles may have come
  into the hand only through later draws, so each inference is a cap: of the
  tiles in ``mask`` the seat now holds at most ``cap``, its draws since minus
  the tiles of ``mask`` it has played since (those were drawn after, too);
- marginal probabilities that a seat holds a tile (iterative proportional
  fitting over the tiles each seat may hold), for the hand-written player;
- :meth:`Knowledge.sample`, a *determinization*: hands and a boneyard order for
  the hidden tiles that satisfy every inference, for the search agent.

Tile sets are bit masks over the engine's tile indices (``Tile.index``).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from matador_env.engine import (
    BLANK,
    CROSS,
    SPINNER,
    End,
    HandState,
    Rules,
    SeatView,
    Tile,
    set_tiles,
)
from matador_env.streams import interrupted

__all__ = ["Tables", "tables", "Knowledge", "Constraint", "regular_fit", "bits"]


@functools.cache
def _compiled_dealer() -> Callable[..., list[Any]] | None:
    """``matador_env.batch.deal_hidden_hands`` where ``numba`` is installed, else None."""
    try:
        from matador_env.batch import deal_hidden_hands
    except ImportError:
        if interrupted():  # Ctrl-C during the import, not numba missing (cached!)
            raise KeyboardInterrupt from None
        return None
    return deal_hidden_hands


def bits(mask: int) -> list[int]:
    """The tile indices set in ``mask``, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class Tables:
    """Per-rules masks and lookups shared by the agents (built once per ``Rules``)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.n = rules.players
        self.S = rules.link_sum
        self.tiles: tuple[Tile, ...] = set_tiles(rules.set_max)
        self.ntiles = len(self.tiles)
        self.full = (1 << self.ntiles) - 1
        self.pips = tuple(t.pips for t in self.tiles)
        self.matador = sum(1 << i for i, t in enumerate(self.tiles) if t.pips in (0, self.S))
        self.blank = sum(1 << i for i, t in enumerate(self.tiles) if t.low == 0) & ~self.matador
        self.double = sum(1 << i for i, t in enumerate(self.tiles) if t.is_double)
        self.double_not_blank = self.double & ~1
        self.regular = self.full & ~self.matador
        # accepts[v]: the non-matador tiles holding S - v, i.e. the answers at an end
        # showing v (RULES.md rule 4). accepts[0] is empty: S > N.
        self.accepts = tuple(
            sum(1 << i for i, t in enumerate(self.tiles) if self.S - v in (t.low, t.high))
            & ~self.matador
            for v in range(rules.set_max + 1)
        )
        # halves[i]: the halves of tile i that answer some end (1..N), for the
        # rollout's count of the end values a hand answers.
        self.halves = tuple(
            tuple(sorted({h for h in (t.low, t.high) if h})) if t.pips not in (0, self.S) else ()
            for t in self.tiles
        )
        # has[v]: tiles with a half v (kept in hand, they answer ends showing S - v).
        self.has = tuple(
            sum(1 << i for i, t in enumerate(self.tiles) if v in (t.low, t.high))
            for v in range(rules.set_max + 1)
        )
        self.cross_must_fill = rules.spinner == "lead_double_cross"
        # A crosswise matador leaves a needs-a-blank end rather than two values.
        self.cross_blank = rules.matador_placement == "crosswise_on_blank"
        if rules.lead_tile == "double_not_blank":
            self.leadable = self.double_not_blank
        else:
            self.leadable = self.full

    def mask_of(self, tiles: tuple[Tile, ...] | list[Tile]) -> int:
        m = 0
        for t in tiles:
            m |= 1 << t.index
        return m

    def pips_of(self, mask: int) -> int:
        pips = self.pips
        return sum(pips[i] for i in bits(mask))

    def end_answers(self, end: End) -> int:
        """Non-matador tiles that may be attached to ``end`` (matadors go anywhere)."""
        kind, v, v2 = end
        if kind is BLANK:
            return self.blank
        if kind is CROSS:
            return self.accepts[v] | self.accepts[v2]  # type: ignore[index]
        return self.accepts[v]  # type: ignore[index]


_TABLES: dict[Rules, Tables] = {}


def tables(rules: Rules) -> Tables:
    tb = _TABLES.get(rules)
    if tb is None:
        tb = _TABLES[rules] = Tables(rules)
    return tb


def eligible_ends(tb: Tables, ends: tuple[End, ...]) -> list[int]:
    """Indices of the ends a tile may go on now (the Leiden cross must be full first)."""
    if tb.cross_must_fill and any(e.kind is SPINNER for e in ends):
        return [i for i, e in enumerate(ends) if e.kind is SPINNER]
    return list(range(len(ends)))


def regular_fit(tb: Tables, ends: tuple[End, ...]) -> int:
    """Non-matador tiles with a legal placement at ``ends`` (before the lead: leadable tiles)."""
    if not ends:
        return tb.leadable & tb.regular
    m = 0
    for i in eligible_ends(tb, ends):
        m |= tb.end_answers(ends[i])
    return m


def any_fit(tb: Tables, ends: tuple[End, ...]) -> int:
    """Every tile with a legal placement at ``ends``: a matador fits any open end."""
    if not ends:
        return tb.leadable
    return regular_fit(tb, ends) | tb.matador


@dataclass(frozen=True)
class Constraint:
    """Of the tiles in ``mask``, the seat holds at most ``cap`` now."""

    seat: int
    mask: int
    cap: int


class Knowledge:
    """Public information and inferences for the seat of ``view``."""

    def __init__(self, view: SeatView) -> None:
        self.view = view
        tb = self.tb = tables(view.rules)
        self.me = view.seat
        self.n = tb.n
        self.hand = tb.mask_of(view.hand)
        self.layout = tb.mask_of(view.layout)
        self.unseen = tb.full & ~self.hand & ~self.layout
        self.sizes = view.hand_sizes
        self.boneyard_size = view.boneyard_size
        self.hidden_seats = [s for s in range(self.n) if s != self.me]
        self.constraints = self._infer()
        hard = [0] * self.n
        soft: list[list[tuple[int, int]]] = [[] for _ in range(self.n)]
        for c in self.constraints:
            if c.cap <= 0:
                hard[c.seat] |= c.mask
            else:
                soft[c.seat].append((c.mask, c.cap))
        self.void = hard
        """Per seat, the unseen tiles it certainly does not hold."""
        self.soft = soft
        self._marginals: list[list[float]] | None = None
        self._no_exact: set[int] = set()
        """The ``relax`` levels at which :meth:`_exact` proved that no deal exists."""

    # -- inference ----------------------------------------------------------------------

    def _infer(self) -> list[Constraint]:
        tb = self.tb
        rules = tb.rules
        vol = rules.voluntary_draw
        events = self.view.history
        n = self.n
        # Per seat: the (mask, draws before, index) of every event that shows a void.
        draws = [0] * n
        found: list[tuple[int, int, int, int]] = []
        for k, (seat, move, ends) in enumerate(events):
            kind = move.kind
            if kind == "play":
                continue
            if kind == "pass":
                # Rule 7: a pass is legal only with no placement (and no draw left).
                mask = any_fit(tb, ends)
                found.append((seat, mask, draws[seat], k))
            else:  # draw
                if vol == "always":
                    pass  # Leiden: anyone may draw whenever allowed; a draw tells nothing.
                elif not ends or vol == "never":
                    # No voluntary draw at the lead (rule 6 / RULES.md voluntary_draw):
                    # a draw means there was no placement at all.
                    found.append((seat, any_fit(tb, ends), draws[seat], k))
                else:  # only_matadors: a draw means every placement was of a matador tile
                    found.append((seat, regular_fit(tb, ends), draws[seat], k))
                draws[seat] += 1
        if not found:
            return []
        # Tiles each seat played after each event (they too came from later draws).
        played_after: list[int] = []
        for seat, _mask, _d, k in found:
            m = 0
            for e in events[k + 1 :]:
                if e.seat == seat and e.move.kind == "play":
                    m |= 1 << e.move.tile.index  # type: ignore[union-attr]
            played_after.append(m)
        best: dict[tuple[int, int], int] = {}
        for (seat, mask, d_before, _k), played in zip(found, played_after, strict=True):
            if seat == self.me:
                continue
            relevant = mask & self.unseen
            if not relevant:
                continue
            cap = draws[seat] - d_before - (played & mask).bit_count()
            cap = max(cap, 0)
            if cap >= min(relevant.bit_count(), self.sizes[seat]):
                continue  # no restriction
            key = (seat, relevant)
            if key not in best or cap < best[key]:
                best[key] = cap
        return [Constraint(seat, mask, cap) for (seat, mask), cap in best.items()]

    # -- checks -------------------------------------------------------------------------

    def allows(self, seat: int, hand_mask: int) -> bool:
        """Whether ``seat`` may hold exactly the hidden tiles ``hand_mask`` by every inference."""
        if hand_mask & self.void[seat]:
            return False
        return all((hand_mask & m).bit_count() <= cap for m, cap in self.soft[seat])

    # -- marginals ----------------------------------------------------------------------

    def marginals(self) -> list[list[float]]:
        """``p[seat][tile]``: the chance that ``seat`` holds the unseen ``tile``.

        Iterative proportional fitting of a tiles x holders table: a tile is in
        exactly one place (a hidden hand or the boneyard), each hand holds its size,
        and a seat never holds a tile it is known not to hold. The viewer's row is 1
        on its own tiles; known voids are 0; soft caps are ignored here.
        """
        if self._marginals is not None:
            return self._marginals
        tb = self.tb
        n = self.n
        unseen = bits(self.unseen)
        holders = [*self.hidden_seats, -1]  # -1: the boneyard
        cap = {s: float(self.sizes[s]) for s in self.hidden_seats}
        cap[-1] = float(self.boneyard_size)
        w: dict[int, dict[int, float]] = {}
        for t in unseen:
            row = {}
            for h in holders:
                if h >= 0 and (self.void[h] >> t) & 1:
                    continue
                if cap[h] > 0:
                    row[h] = cap[h]
            w[t] = row
        for _ in range(200):
            # Rows: each tile is somewhere.
            for row in w.values():
                total = sum(row.values())
                if total > 0:
                    for h in row:
                        row[h] /= total
            # Columns: each holder holds its size.
            worst = 0.0
            for h in holders:
                col = sum(row.get(h, 0.0) for row in w.values())
                if col > 0:
                    worst = max(worst, abs(col - cap[h]))
                    f = cap[h] / col
                    for row in w.values():
                        if h in row:
                            row[h] *= f
            if worst < 1e-9:
                break
        p = [[0.0] * tb.ntiles for _ in range(n)]
        for i in bits(self.hand):
            p[self.me][i] = 1.0
        for t, row in w.items():
            for h, v in row.items():
                if h >= 0:
                    p[h][t] = v
        self._marginals = p
        return p

    # -- sampling -----------------------------------------------------------------------

    def sample_masks(self, rng: random.Random, tries: int = 64) -> tuple[list[int], list[int]]:
        """One determinization: every seat's hand mask and the boneyard in draw order.

        Built constructively (the most constrained seat first, tiles taken in a
        random order while every cap holds), then mixed by random swaps that keep
        every inference, so that the worlds come close to uniform over the
        consistent ones. Should ``tries`` constructions all dead-end (tight voids
        and caps over several hidden hands), an exact search (:meth:`_exact`) deals
        one that keeps every inference, mixed the same way. Only when that search
        proves no such deal exists (the inferences are sound, so only if the history
        was not produced by these rules) are the caps let go, then the voids.
        """
        for _ in range(tries):
            got = self._construct(rng, 0)
            if got is not None:
                hands, rest = got
                self._mix(rng, hands, rest)
                rng.shuffle(rest)
                return hands, rest
        # Only here, after the constructive tries: where they succeed, the worlds (and
        # the random numbers drawn) stay those the compiled dealer
        # (matador_env.batch.deal_hidden_hands) reproduces.
        got = self._exact(rng, 0)
        if got is not None:
            hands, rest = got
            self._mix(rng, hands, rest)
        else:
            # _exact exhausted its search: no deal keeps every cap. Keep the voids
            # alone, else (none keeps even those) the sizes alone, which always fit.
            got = self._exact(rng, 1) or self._construct(rng, 2)
            if got is None:  # pragma: no cover - a hand of any tiles always fits
                raise AssertionError("no deal fits the sizes")
            hands, rest = got
        rng.shuffle(rest)
        return hands, rest

    def sample_many(self, rng: random.Random, count: int) -> list[tuple[list[int], list[int]]]:
        """``count`` determinizations, drawn from the worlds :meth:`sample_masks` deals.

        With one hidden hand (two players, the usual case) a world is a hand of the
        right size from the tiles that seat may hold, uniform among those that keep
        every cap, with the other unseen tiles in uniformly random boneyard order: the
        distribution :meth:`sample_masks` builds (its swaps approach that uniform
        distribution; here it is exact). The ``count`` worlds are drawn at once with
        numpy, seeded from ``rng``: candidates are dealt in bulk and those breaking a
        cap are dropped.

        With several hidden hands (three or four players) the worlds are
        :meth:`sample_masks`' construction and swaps compiled
        (``matador_env.batch.deal_hidden_hands``, where ``numba`` is installed): the
        same distribution, some 30 times faster, which was most of a multi-seat
        search's time. Other cases (more than 62 tiles, no ``numba``), and worlds
        either way leaves missing (caps that very few hands keep), take
        :meth:`sample_masks` in turn.
        """
        seats = self.hidden_seats
        tb = self.tb
        if tb.ntiles > 62:
            return [self.sample_masks(rng) for _ in range(count)]
        if len(seats) != 1:
            deal = _compiled_dealer()
            if deal is None:
                return [self.sample_masks(rng) for _ in range(count)]
            return self._deal_compiled(deal, rng, count)
        seat = seats[0]
        need = self.sizes[seat]
        pool = np.array(bits(self.unseen & ~self.void[seat]), np.int64)
        if len(pool) < need:
            return [self.sample_masks(rng) for _ in range(count)]
        kept_out = np.array(bits(self.unseen & self.void[seat]), np.int64)
        gen = np.random.default_rng(rng.getrandbits(63))
        hands_of_seat: list[int] = []
        rests: list[list[int]] = []
        for _ in range(4):
            want = count - len(hands_of_seat)
            if want <= 0:
                break
            tries = want * (1 if not self.soft[seat] else 4)
            drawn = pool[np.argsort(gen.random((tries, len(pool))), axis=1)]
            hand = drawn[:, :need]
            held = (np.int64(1) << hand).sum(axis=1)
            keep = np.ones(tries, np.bool_)
            for mask, cap in self.soft[seat]:
                # The hand's tiles in ``mask`` (np.bitwise_count needs numpy 2; 1.26 is allowed).
                keep &= ((np.int64(mask) >> hand) & 1).sum(axis=1) <= cap
            rows = np.flatnonzero(keep)[:want]
            rest = np.concatenate(
                [drawn[rows, need:], np.broadcast_to(kept_out, (len(rows), len(kept_out)))], 1
            )
            order = np.argsort(gen.random(rest.shape), axis=1)
            hands_of_seat += held[rows].tolist()
            rests += np.take_along_axis(rest, order, 1).tolist()
        out = []
        for w in range(len(hands_of_seat)):
            hands = [0] * self.n
            hands[self.me] = self.hand
            hands[seat] = hands_of_seat[w]
            out.append((hands, rests[w]))
        while len(out) < count:
            out.append(self.sample_masks(rng))
        return out

    def _deal_compiled(
        self, deal: Callable[..., list[Any]], rng: random.Random, count: int
    ) -> list[tuple[list[int], list[int]]]:
        """:meth:`sample_masks`' worlds, dealt by its compiled twin
        (``matador_env.batch.deal_hidden_hands``), for several hidden hands."""
        seats = self.hidden_seats
        place = {s: h for h, s in enumerate(seats)}
        caps = [(place[s], m, c) for s in seats for m, c in self.soft[s]]
        dealt = deal(
            self.unseen,
            [self.sizes[s] for s in seats],
            [self.void[s] & self.unseen for s in seats],
            caps,
            count,
            rng.getrandbits(63),
        )
        out = []
        for world in dealt:
            if world is None:  # no deal found with every cap: the Python dealer relaxes
                out.append(self.sample_masks(rng))
                continue
            hidden, rest = world
            hands = [0] * self.n
            hands[self.me] = self.hand
            for h, s in enumerate(seats):
                hands[s] = hidden[h]
            out.append((hands, rest))
        return out

    def _ok(self, seat: int, mask: int, relax: int) -> bool:
        if relax >= 2:
            return True
        if mask & self.void[seat]:
            return False
        if relax >= 1:
            return True
        return all((mask & m).bit_count() <= cap for m, cap in self.soft[seat])

    def _construct(self, rng: random.Random, relax: int) -> tuple[list[int], list[int]] | None:
        remaining = self.unseen
        hands = [0] * self.n
        hands[self.me] = self.hand
        seats = list(self.hidden_seats)
        rng.shuffle(seats)
        if relax < 2:
            seats.sort(key=lambda s: (self.unseen & ~self.void[s]).bit_count() - self.sizes[s])
        for s in seats:
            need = self.sizes[s]
            pool = bits(remaining & ~self.void[s]) if relax < 2 else bits(remaining)
            rng.shuffle(pool)
            h = 0
            got = 0
            for t in pool:
                if got == need:
                    break
                cand = h | (1 << t)
                if relax == 0 and not self._ok(s, cand, 0):
                    continue
                h = cand
                got += 1
            if got < need:
                return None
            hands[s] = h
            remaining &= ~h
        return hands, bits(remaining)

    def _exact(self, rng: random.Random, relax: int) -> tuple[list[int], list[int]] | None:
        """A deal of the unseen tiles that keeps every void (and with ``relax`` 0 every
        cap), or None when there is none: the search is exhausted, not cut by a count.

        Randomised backtracking over the unseen tiles, the most constrained first (the
        fewest hidden hands may hold them; ties in random order). Each tile goes to a
        hand with room that may still hold it, or to the boneyard while it has room,
        tried in a random order weighted by the room left, so a tile lands about
        where a random deal would put it (:meth:`_mix` then spreads the deal as it
        does a constructed one). After each placement a feasibility check cuts most
        dead branches at once: every set of hands must find among the tiles left as
        many as it needs that it may still hold (Hall's condition, exact for voids
        alone), and no hand may need more than its caps let it take. A state that
        failed is remembered by (tiles placed, room left in each hand, budget left
        under each cap): the tiles left are then fixed, so that state fails whatever
        went where before, and no state is searched twice. A proof that no deal
        exists is kept, so a view whose history these rules did not produce costs
        the search once.
        """
        if relax in self._no_exact:
            return None
        seats = [s for s in self.hidden_seats if self.sizes[s] > 0]
        hands_n = len(seats)
        unseen = self.unseen
        allowed = [unseen & ~self.void[s] for s in seats]
        caps: list[tuple[int, int]] = []  # (hand, tiles): the hands' soft caps
        budget: list[int] = []  # how many more of each cap's tiles its hand may take
        if relax == 0:
            for k, s in enumerate(seats):
                for mask, cap in self.soft[s]:
                    caps.append((k, mask & unseen))
                    budget.append(cap)
        caps_on = [[c for c, (k2, _) in enumerate(caps) if k2 == k] for k in range(hands_n)]
        capped = [0] * hands_n  # per hand, the tiles under some cap of it
        for k, m in caps:
            capped[k] |= m
        tiles = bits(unseen)
        rng.shuffle(tiles)
        holders = {t: sum(a >> t & 1 for a in allowed) for t in tiles}
        tiles.sort(key=holders.__getitem__)  # stable: ties stay in random order
        # For each tile and hand, the caps of that hand that hold the tile.
        caps_of = [
            [[c for c in caps_on[k] if caps[c][1] >> t & 1] for k in range(hands_n)] for t in tiles
        ]
        left = [0] * (len(tiles) + 1)  # left[i]: the tiles from the i-th on
        for i in range(len(tiles) - 1, -1, -1):
            left[i] = left[i + 1] | 1 << tiles[i]
        need = [self.sizes[s] for s in seats]
        hands = [0] * hands_n
        spent = [0] * hands_n  # tiles a hand may no longer take: a cap it has filled
        failed: set[tuple[int, tuple[int, ...], tuple[int, ...]]] = set()

        # The sets of hands whose needs fillable() weighs against the tiles left: every
        # set (Hall's condition) up to six hands; past that, 2**n sets would cost more
        # than the search they save, so each hand and all together only (the search
        # stays exact either way, only slower to give up on a dead end).
        if hands_n <= 6:
            groups = [[k for k in range(hands_n) if sub >> k & 1] for sub in range(1, 1 << hands_n)]
        else:
            groups = [[k] for k in range(hands_n)] + [list(range(hands_n))]

        def fillable(i: int) -> bool:
            """Whether the hands might still be filled from the tiles from the i-th on:
            every set of hands needs no more than it may take, counted twice: the
            tiles any of them may hold (Hall's condition, exact for voids alone), and
            those outside their own caps plus what their caps still let in (a tile
            under a cap counts against one at least)."""
            avail = [left[i] & allowed[k] & ~spent[k] for k in range(hands_n)]
            room = [
                sum(min(budget[c], (avail[k] & caps[c][1]).bit_count()) for c in caps_on[k])
                for k in range(hands_n)
            ]
            for group in groups:
                any_ = free = want = most = 0
                for k in group:
                    any_ |= avail[k]
                    free |= avail[k] & ~capped[k]
                    want += need[k]
                    most += room[k]
                if any_.bit_count() < want or free.bit_count() + most < want:
                    return False
            return True

        def place(i: int) -> bool:
            if i == len(tiles):
                return True
            key = (i, tuple(need), tuple(budget))
            if key in failed:
                return False
            bit = 1 << tiles[i]
            room = len(tiles) - i - sum(need)  # the boneyard's
            options = [
                (need[k], k) for k in range(hands_n) if need[k] and allowed[k] & ~spent[k] & bit
            ]
            if room:
                options.append((room, -1))
            # A random order weighted by the room left (without replacement: the
            # largest u ** (1 / weight) first).
            options.sort(key=lambda o: rng.random() ** (1.0 / o[0]), reverse=True)
            for _, k in options:
                if k < 0:  # the boneyard
                    if fillable(i + 1) and place(i + 1):
                        return True
                    continue
                was = spent[k]
                hands[k] |= bit
                need[k] -= 1
                for c in caps_of[i][k]:
                    budget[c] -= 1
                    if not budget[c]:
                        spent[k] |= caps[c][1]
                if fillable(i + 1) and place(i + 1):
                    return True
                hands[k] &= ~bit
                need[k] += 1
                for c in caps_of[i][k]:
                    budget[c] += 1
                spent[k] = was
            failed.add(key)
            return False

        if not (fillable(0) and place(0)):
            self._no_exact.add(relax)
            return None
        out = [0] * self.n
        out[self.me] = self.hand
        dealt = 0
        for k, s in enumerate(seats):
            out[s] = hands[k]
            dealt |= hands[k]
        return out, bits(unseen & ~dealt)

    def _mix(self, rng: random.Random, hands: list[int], rest: list[int]) -> None:
        seats = self.hidden_seats
        if len(seats) == 1 and not self.soft[seats[0]]:
            # One hidden hand drawn uniformly from the tiles it may hold: already uniform.
            return
        holders = [s for s in seats if self.sizes[s] > 0]
        if not holders:
            return
        steps = 3 * self.unseen.bit_count()
        rest_set = list(rest)
        for _ in range(steps):
            a = holders[rng.randrange(len(holders))]
            ta = bits(hands[a])
            t1 = ta[rng.randrange(len(ta))]
            # Swap with a tile of another seat or of the boneyard.
            others = [s for s in holders if s != a]
            pick = (
                rng.randrange(len(others) + (1 if rest_set else 0)) if (others or rest_set) else -1
            )
            if pick < 0:
                return
            if pick < len(others):
                b = others[pick]
                tb_ = bits(hands[b])
                t2 = tb_[rng.randrange(len(tb_))]
                na = hands[a] ^ (1 << t1) ^ (1 << t2)
                nb = hands[b] ^ (1 << t2) ^ (1 << t1)
                if self._ok(a, na, 0) and self._ok(b, nb, 0):
                    hands[a], hands[b] = na, nb
            else:
                j = rng.randrange(len(rest_set))
                t2 = rest_set[j]
                na = hands[a] ^ (1 << t1) ^ (1 << t2)
                if self._ok(a, na, 0):
                    hands[a] = na
                    rest_set[j] = t1
        rest[:] = rest_set

    def sample(self, rng: random.Random) -> HandState:
        """A full state consistent with the view and every inference (a determinization)."""
        hands, rest = self.sample_masks(rng)
        tiles = self.tb.tiles
        return HandState.from_view(
            self.view,
            [tuple(tiles[i] for i in bits(h)) for h in hands],
            [tiles[i] for i in rest],
        )

    def any_world(self) -> HandState:
        """Some full state with the view's public part (hidden tiles placed arbitrarily).

        Only for what does not depend on hidden tiles, such as the open ends after a
        placement.
        """
        tiles = self.tb.tiles
        remaining = bits(self.unseen)
        hands = []
        k = 0
        for s in range(self.n):
            if s == self.me:
                hands.append(self.view.hand)
            else:
                hands.append(tuple(tiles[i] for i in remaining[k : k + self.sizes[s]]))
                k += self.sizes[s]
        return HandState.from_view(self.view, hands, [tiles[i] for i in remaining[k:]])
