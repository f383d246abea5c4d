"""Compiled playouts with a linear heuristic policy, for search agents (private).

A playout plays a slot of the batch engine to the end of its hand; at every
decision the mover scores each legal action by the same terms as the search
agent's rollout policy (``agents.search.rollout_move``), from what the mover could
know there: its own hand, the tiles on the table, the open ends and the hand
sizes; never another hand or the boneyard order. The weights of the terms come
from the caller (``PW_*`` order), so the policy stays the agent's.

Tile sets are bitsets of ``W = ceil(T / 64)`` uint64 words, rows of ``sets``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import _kernels as K
from ._kernels import _uniform, seed_stream

# Rows of ``sets`` (then accepts[v] at ACCEPTS + v: non-matador tiles holding S - v).
SET_FULL = 0
SET_MAT = 1
SET_REG = 2
SET_DOUBLE = 3
SET_BLANK = 4  # non-matador tiles with a blank half
ACCEPTS = 5

# Weights (``wts``): the rollout policy's terms.
PW_PIP = 0
PW_MAT = 1
PW_ZERO_ZERO = 2
PW_DOUBLE = 3
PW_BLANK = 4
PW_FORCE = 5
PW_BLOCK = 6
PW_FOLLOW = 7
PW_VARIETY = 8
PW_ZERO_END = 9
PW_DRAW = 10
PW_DRAW_FITS = 11
PW_DRAW_INSTEAD = 12
PW_JITTER = 13
NPW = 14

_ONE = np.uint64(1)


def tile_sets(rules_tab: np.ndarray, link_sum: int, values: int) -> np.ndarray:
    """The ``sets`` table of a rules configuration, from its tile table."""
    T = rules_tab.shape[0]
    W = (T + 63) // 64
    sets = np.zeros((ACCEPTS + values, W), np.uint64)

    def put(row: int, k: int) -> None:
        sets[row, k >> 6] |= np.uint64(1 << (k & 63))

    for k in range(T):
        lo, hi = int(rules_tab[k, K.TLO]), int(rules_tab[k, K.THI])
        mat = bool(rules_tab[k, K.TMAT])
        put(SET_FULL, k)
        put(SET_MAT if mat else SET_REG, k)
        if lo == hi:
            put(SET_DOUBLE, k)
        if lo == 0 and not mat:
            put(SET_BLANK, k)
        for v in range(values):
            if not mat and link_sum - v in (lo, hi):
                put(ACCEPTS + v, k)
    return sets


def tile_halves(rules_tab: np.ndarray) -> np.ndarray:
    """Per tile, its non-blank halves if it is not a matador (-1 where none)."""
    T = rules_tab.shape[0]
    out = np.full((T, 2), -1, np.int64)
    for k in range(T):
        if rules_tab[k, K.TMAT]:
            continue
        lo, hi = int(rules_tab[k, K.TLO]), int(rules_tab[k, K.THI])
        found = sorted({h for h in (lo, hi) if h})
        for j, h in enumerate(found):
            out[k, j] = h
    return out


@njit(cache=True)
def _popcount(x: np.uint64) -> int:
    x = x - ((x >> _ONE) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


def miss_table(tiles: int) -> np.ndarray:
    """``miss[u, k, a]``: the chance that ``k`` tiles drawn from ``u`` miss ``a`` given
    ones, ``comb(u - a, k) / comb(u, k)`` (the search agent's ``_miss``)."""
    out = np.zeros((tiles + 1, tiles + 1, tiles + 1), np.float64)
    for u in range(tiles + 1):
        for k in range(u + 1):
            total = math.comb(u, k)
            for a in range(u + 1):
                out[u, k, a] = math.comb(u - a, k) / total
    return out


@njit(cache=True)
def policy_action(
    b: int,
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    sets: np.ndarray,
    halves: np.ndarray,
    miss: np.ndarray,
    wts: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    lst: np.ndarray,
    work: np.ndarray,
    answers: np.ndarray,
    count: np.ndarray,
    rng: np.ndarray,
) -> int:
    """The rollout policy's action for the mover of slot ``b`` (see the module docs)."""
    T = rp[K.R_T]
    m = K.legal_list(b, rp, tab, loc, ends, st, lst)
    if m == 1:
        return int(lst[0])
    n = rp[K.R_N]
    P = rp[K.R_P]
    V = rp[K.R_V]
    W = sets.shape[1]
    draw_action = T + rp[K.R_E] * P
    cross_blank = rp[K.R_PLACE] == 2
    seat = st[b, K.TO_MOVE]
    hand = work[0]
    out = work[1]
    unseen = work[2]
    unseen_reg = work[3]
    fit = work[4]
    all_ans = work[5]
    for w in range(W):
        hand[w] = 0
        all_ans[w] = 0
    for h in range(V):
        count[h] = 0
    # ``out`` (work[1]) holds the tiles on the table, kept by the caller. After the
    # lead, legal_list leaves the mover's tiles in the tail of ``lst``.
    held = hsize[b, seat]
    tail = rp[K.R_NACT] - T
    for j in range(held if st[b, K.NENDS] > 0 else 0):
        k = lst[tail + j]
        hand[k >> 6] |= _ONE << np.uint64(k & 63)
    if st[b, K.NENDS] == 0:
        for k in range(T):
            if loc[b, k] == seat:
                hand[k >> 6] |= _ONE << np.uint64(k & 63)
    for w in range(W):
        bits = hand[w]
        while bits:
            low = bits & (~bits + _ONE)
            k = w * 64 + _popcount(low - _ONE)
            # The end values the hand's regular tiles answer (their non-blank halves).
            for x in range(2):
                if halves[k, x] >= 0:
                    count[halves[k, x]] += 1
            bits ^= low
    n_unseen = 0
    n_unseen_mat = 0
    for w in range(W):
        unseen[w] = sets[SET_FULL, w] & ~hand[w] & ~out[w]
        unseen_reg[w] = unseen[w] & sets[SET_REG, w]
        n_unseen += _popcount(unseen[w])
        n_unseen_mat += _popcount(unseen[w] & sets[SET_MAT, w])
    nxt = hsize[b, (seat + 1) % n]
    shut = wts[PW_FORCE] + wts[PW_BLOCK] * miss[n_unseen, nxt, n_unseen_mat]
    n_ends = st[b, K.NENDS]
    nzero = 0
    for e in range(n_ends):
        kind = ends[b, e, 0]
        v = ends[b, e, 1]
        for w in range(W):
            if kind == K.BLANK:
                answers[e, w] = sets[SET_BLANK, w]
            elif kind == K.CROSS:
                answers[e, w] = sets[ACCEPTS + v, w] | sets[ACCEPTS + ends[b, e, 2], w]
            else:
                answers[e, w] = sets[ACCEPTS + v, w]
            all_ans[w] |= answers[e, w]
        if v <= 0:
            nzero += 1
    variety = 0
    for h in range(V):
        if count[h]:
            variety += 1
    plays_regular = False
    if lst[m - 1] == draw_action:  # a draw comes last in the list
        for j in range(m - 1):
            a = lst[j]
            k = a if a < T else slot[(a - T) % P, 0]
            if not tab[k, K.TMAT]:
                plays_regular = True
                break
    place = rp[K.R_PLACE]
    best = lst[0]
    best_score = -1e18
    best_key = np.int64(1) << np.int64(62)
    for j in range(m):
        a = lst[j]
        # Ties go to the action first in the engine's order of legal moves (end by end,
        # regular tiles before matadors, by tile index), as in the Python rollout.
        key = np.int64(1) << np.int64(61)
        if a == draw_action:
            sc = wts[PW_DRAW] + wts[PW_JITTER] * _uniform(rng)
            if plays_regular:
                sc -= wts[PW_DRAW_INSTEAD]
            hits = 0
            given = 0
            mine = 0
            for w in range(W):
                hits += _popcount(all_ans[w] & unseen[w])
                given += _popcount(all_ans[w] & unseen_reg[w])
                mine += _popcount(all_ans[w] & hand[w] & sets[SET_REG, w])
            sc += wts[PW_DRAW_FITS] * hits / max(n_unseen, 1)
            sc += shut * miss[n_unseen, nxt, given]
            sc += (
                wts[PW_FOLLOW] * min(mine, 3) + wts[PW_VARIETY] * variety + wts[PW_ZERO_END] * nzero
            )
        elif a == draw_action + 1:
            sc = -1e9
        else:
            e_at = -1
            orient = -1
            if a < T:
                k = a
            else:
                r = a - T
                e_at = r // P
                k = slot[r % P, 0]
                orient = slot[r % P, 1]
            lo = tab[k, K.TLO]
            hi = tab[k, K.THI]
            if e_at < 0:
                key = k
            else:
                variant = 0
                if orient == K.O_CROSS:
                    variant = 0
                elif place == 1 or place == 4:
                    variant = 1 + orient if tab[k, K.TMAT] else orient
                elif orient == K.O_UPRIGHT:
                    variant = 1
                elif place != 3:
                    variant = orient
                key = ((e_at * 2 + tab[k, K.TMAT]) * T + k) * 4 + variant
            if held == 1:
                return int(a)  # the last tile: domino, wherever it goes
            word = k >> 6
            bit = _ONE << np.uint64(k & 63)
            sc = wts[PW_PIP] * tab[k, K.TPIPS] + wts[PW_JITTER] * _uniform(rng)
            var = variety
            if tab[k, K.TMAT]:
                sc -= wts[PW_MAT]
                if k == 0:
                    sc -= wts[PW_ZERO_ZERO]
            else:
                for x in range(2):
                    h = halves[k, x]
                    if h >= 0 and count[h] == 1:
                        var -= 1
                if lo == hi:
                    sc += wts[PW_DOUBLE]
                elif lo == 0:
                    sc -= wts[PW_BLANK]
            zero_here = 0
            if e_at >= 0 and ends[b, e_at, 1] <= 0:
                zero_here = 1
            if orient == K.O_LOW or orient == K.O_HIGH:
                shows = lo if orient == K.O_LOW else hi
                for w in range(W):
                    fit[w] = sets[ACCEPTS + shows, w]
                z = nzero - zero_here + (1 if shows == 0 else 0)
            elif orient < 0:
                for w in range(W):
                    fit[w] = sets[ACCEPTS + lo, w] | sets[ACCEPTS + hi, w]
                z = 0
            elif orient == K.O_UPRIGHT or cross_blank:
                for w in range(W):
                    fit[w] = sets[SET_BLANK, w]
                z = nzero - zero_here + 1
            else:
                for w in range(W):
                    fit[w] = sets[ACCEPTS + lo, w] | sets[ACCEPTS + hi, w]
                z = nzero - zero_here
            if e_at >= 0:
                for e in range(n_ends):
                    if e != e_at:
                        for w in range(W):
                            fit[w] |= answers[e, w]
            given = 0
            mine = 0
            for w in range(W):
                given += _popcount(fit[w] & unseen_reg[w])
                left = hand[w] & ~bit if w == word else hand[w]
                mine += _popcount(fit[w] & left & sets[SET_REG, w])
            sc += shut * miss[n_unseen, nxt, given]
            sc += wts[PW_FOLLOW] * min(mine, 3) + wts[PW_VARIETY] * var + wts[PW_ZERO_END] * z
        if sc > best_score or (sc == best_score and key < best_key):
            best_score = sc
            best_key = key
            best = a
    return int(best)


@njit(cache=True)
def policy_playouts(
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    sets: np.ndarray,
    halves: np.ndarray,
    miss: np.ndarray,
    wts: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    stock: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    candidates: np.ndarray,
    side: int,
    repeats: int,
    rng_seed: int,
    values: np.ndarray,
) -> int:
    """In every world (row ``w`` of ``loc``, ``hsize``, ``stock``, ``st``; the open ends
    ``ends`` are those of every world) apply each candidate action and play on to the
    end ``repeats`` times with the policy; ``values[w, c]`` gets the mean result for
    ``side`` (its points, or minus the points of the side that won shared by the other
    sides). Returns the actions played."""
    n = rp[K.R_N]
    T = rp[K.R_T]
    sides = rp[K.R_SIDES]
    E = ends.shape[0]
    C = rp[K.R_V] + 2
    W = sets.shape[1]
    wloc = np.empty((1, T), np.int8)
    whsize = np.empty((1, n), np.int32)
    wstock = np.empty((1, T), np.int16)
    wends = np.empty((1, E, 3), np.int8)
    wst = np.empty((1, K.NST), np.int32)
    wcounts = np.zeros((1, n), np.int32)
    wcannot = np.zeros((1, n, C), np.uint8)
    lst = np.empty(rp[K.R_NACT], np.int64)
    work = np.empty((6, W), np.uint64)
    answers = np.empty((E, W), np.uint64)
    count = np.empty(rp[K.R_V], np.int64)
    rng = np.empty(1, np.uint64)
    P = rp[K.R_P]
    draw_action = T + rp[K.R_E] * P
    actions = 0
    na = candidates.shape[0]
    for b in range(loc.shape[0] * na):
        world = b // na
        # Each playout its own stream: its result does not depend on the others.
        seed_stream(rng, rng_seed, b)
        total = 0.0
        for _ in range(repeats):
            wloc[0] = loc[world]
            whsize[0] = hsize[world]
            wstock[0] = stock[world]
            wends[0] = ends
            wst[0] = st[world]
            K.apply_action(
                0,
                candidates[b % na],
                rp,
                tab,
                slot,
                wloc,
                whsize,
                wstock,
                wends,
                wst,
                wcounts,
                wcannot,
            )
            out = work[1]
            for w in range(W):
                out[w] = 0
            for k in range(T):
                if wloc[0, k] == K.PLAYED:
                    out[k >> 6] |= _ONE << np.uint64(k & 63)
            while not wst[0, K.OVER]:
                a = policy_action(
                    0,
                    rp,
                    tab,
                    slot,
                    sets,
                    halves,
                    miss,
                    wts,
                    wloc,
                    whsize,
                    wends,
                    wst,
                    lst,
                    work,
                    answers,
                    count,
                    rng,
                )
                K.apply_action(
                    0, a, rp, tab, slot, wloc, whsize, wstock, wends, wst, wcounts, wcannot
                )
                if a < draw_action:
                    k = a if a < T else slot[(a - T) % P, 0]
                    out[k >> 6] |= _ONE << np.uint64(k & 63)
                actions += 1
            won = wst[0, K.WSIDE]
            if won == side:
                total += wst[0, K.POINTS]
            elif won >= 0:
                total -= wst[0, K.POINTS] / (sides - 1)
        values[world, b % na] = total / repeats
    return actions


# What :func:`fill_worlds` finds wrong with a world (``why[0]``; ``why[1]``: the tile,
# or for WORLD_SIZE, WORLD_OWN and WORLD_MASK the seat).
WORLD_TWICE = 0  # a tile in two places (two hands, a hand and the table, the boneyard twice)
WORLD_OUTSIDE = 1  # a boneyard entry that is no tile index
WORLD_MISSING = 2  # a tile in no place
WORLD_SIZE = 3  # a hand of another size than the view shows
WORLD_OWN = 4  # the viewer's hand is not the view's
WORLD_MASK = 5  # a hand mask with bits past the set's tiles (or a negative one)
_NOWHERE = -3  # a tile not placed yet: neither BONEYARD nor PLAYED nor a seat


@njit(cache=True)
def fill_worlds(
    hand_words: np.ndarray,
    rest: np.ndarray,
    rest_len: np.ndarray,
    layout_loc: np.ndarray,
    sizes: np.ndarray,
    own_seat: int,
    own_words: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    stock: np.ndarray,
    st: np.ndarray,
    why: np.ndarray,
) -> int:
    """Row ``w`` of ``loc``/``hsize``/``stock``/``st[:, POS]``: world ``w``'s hands
    (``hand_words[w, seat]``, bitsets) and boneyard (``rest[w, :rest_len[w]]``, in
    draw order); ``layout_loc`` marks the tiles on the table (``PLAYED``, else
    ``_NOWHERE``).

    Every world is checked on the way, at no cost beside the filling (the playouts
    index arrays by these tiles, unchecked): each tile in exactly one place, the hand
    sizes ``sizes`` of the view, the viewer's hand ``own_words``. Returns -1, or the
    first world that does not fit, with what is wrong in ``why`` (``WORLD_*``, tile).
    """
    T = loc.shape[1]
    n = hsize.shape[1]
    W = hand_words.shape[2]
    spare = T - 64 * (W - 1)  # tiles in the last word: bits above them are outside
    for w in range(loc.shape[0]):
        for k in range(T):
            loc[w, k] = layout_loc[k]
        for s in range(n):
            if spare < 64 and hand_words[w, s, W - 1] >> np.uint64(spare):
                why[0] = WORLD_MASK
                why[1] = s
                return w
            if s == own_seat:
                for x in range(W):
                    if hand_words[w, s, x] != own_words[x]:
                        why[0] = WORLD_OWN
                        why[1] = s
                        return w
            size = 0
            for k in range(T):
                if (hand_words[w, s, k >> 6] >> np.uint64(k & 63)) & _ONE:
                    if loc[w, k] != _NOWHERE:
                        why[0] = WORLD_TWICE
                        why[1] = k
                        return w
                    loc[w, k] = s
                    size += 1
            hsize[w, s] = size
        start = T - rest_len[w]
        for j in range(rest_len[w]):
            k = rest[w, j]
            if k < 0 or k >= T:
                why[0] = WORLD_OUTSIDE
                why[1] = k
                return w
            if loc[w, k] != _NOWHERE:
                why[0] = WORLD_TWICE
                why[1] = k
                return w
            stock[w, start + j] = k
            loc[w, k] = K.BONEYARD
        for k in range(T):
            if loc[w, k] == _NOWHERE:
                why[0] = WORLD_MISSING
                why[1] = k
                return w
        for s in range(n):
            if hsize[w, s] != sizes[s]:
                why[0] = WORLD_SIZE
                why[1] = s
                return w
        st[w, K.POS] = start
    return -1
