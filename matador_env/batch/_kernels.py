"""The compiled kernels of the batch engine (private: use :mod:`matador_env.batch`).

Every function here is ``numba.njit(cache=True)`` and works on plain numpy arrays
(struct of arrays, one row per slot), so the loops run without Python objects.
The Python engine (:mod:`matador_env.engine.state`) is the specification; each
kernel below follows the engine function of the same role, and
``tests/test_batch_differential.py`` checks them against each other move by move.

Layout of a batch of ``B`` slots under one rules configuration (``T`` tiles,
``E`` end slots, ``n`` seats, ``C`` cannot-answer columns):

=========  ==================  ==============================================================
array      shape, dtype        meaning
=========  ==================  ==============================================================
loc        (B, T) int8         where each tile is: a seat (0..n-1), BONEYARD or PLAYED; every
                               tile is in exactly one place by construction
hsize      (B, n) int32        tiles in each hand
stock      (B, T) int16        the shuffled order of the deal: the first ``dealt`` were
                               dealt, the rest is the boneyard in draw order from ``POS``
ends       (B, E, 3) int8      open ends in engine order: kind (``KINDS`` of the
                               encoding), value, second value (-1 where there is none)
st         (B, NST) int32      the scalar fields named below (``POS`` ... ``POINTS``)
counts     (B, n) int32        pips left per seat, set when the hand ends
cannot     (B, n, C) uint8     the encoding's cannot-answer table, kept as moves are made
=========  ==================  ==============================================================
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# -- scalar fields of ``st`` ---------------------------------------------------------------
POS = 0  # next boneyard position in ``stock``
NENDS = 1  # open ends
TO_MOVE = 2
LEADER = 3
DEALT_LEADER = 4
PASSES = 5
LEAD_PASSES = 6
DRAWS = 7
SPIN_DONE = 8
NACT = 9  # actions so far
OVER = 10
TERM = 11  # termination code (TERMINATIONS), -1 while the hand runs
WINNER = 12
WSIDE = 13
POINTS = 14
NST = 15

# -- rule parameters (``rp``, an int64 vector built by ``matador_env.batch``) --------------
R_N = 0
R_TEAMS = 1
R_S = 2
R_T = 3
R_DRAW_LIMIT = 4
R_RESERVE = 5
R_VOL = 6  # 0 only_matadors, 1 never, 2 always
R_PLACE = 7  # 0 inline, 1 crosswise_choice, 2 crosswise_on_blank, 3 upright, 4 branching
R_AS_REG = 8
R_STUCK = 9
R_SPIN = 10  # 0 none, 1 first_double, 2 lead_double_cross
R_LEAD = 11  # 0 any, 1 highest_double, 2 double_not_blank
R_SCORING = 12  # 0 others_minus_own, 1 others, 2 others_plus_own
R_TIE = 13  # 0 void, 1 redeal
R_FIRST = 14  # 0 random, 1 highest_double
R_NEXT = 15  # 0 rotate, 1 loser, 2 winner
R_MATCH_END = 16  # 0 first_to_target, 1 complete_round
R_TARGET = 17
R_E = 18
R_P = 19
R_DEALT = 20
R_NACT = 21
R_SIDES = 22
R_V = 23
NRP = 24

# -- tile table columns (``tab``, (T, 6) int64) --------------------------------------------
TLO = 0
THI = 1
TPIPS = 2
TMAT = 3
TSLOT = 4  # first placement of the tile in the encoding's slot table
TSLOT_X = 5  # its crosswise or upright placement, -1 if none

# End kinds, in the order of ``matador_env.encoding.KINDS``.
PLAIN = 0
CROSS = 1
BLANK = 2
BRANCH = 3
SPINNER = 4

BONEYARD = -1
PLAYED = -2

# Terminations, in the order of ``Termination.ALL``.
DOMINO = 0
BLOCKED = 1
VOID_TIE = 2
REDEAL_TIE = 3
NO_LEAD = 4

# Slot-table orientations (``slot``, (P, 2) int64: tile, orientation).
O_LOW = 0
O_HIGH = 1
O_CROSS = 2
O_UPRIGHT = 3

_MT_N = 624
_MT_M = 397


# -- CPython's Mersenne Twister, so that a slot deals what random.Random(seed) deals ------


def _genrand_init(seed: int) -> np.ndarray:
    state = np.zeros(_MT_N, np.uint64)
    state[0] = seed
    for i in range(1, _MT_N):
        prev = int(state[i - 1])
        state[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
    return state


# init_genrand(19650218), where every init_by_array starts: the same for every seed.
_MT_START = _genrand_init(19650218)
_MT_READ = _MT_N  # mt[_MT_READ]: the next word to read
_MT_TWISTED = _MT_N + 1  # mt[_MT_TWISTED]: words of the current block already twisted
MT_WORDS = _MT_N + 2


@njit(cache=True)
def _mt_seed(mt: np.ndarray, key: np.ndarray, klen: int) -> None:
    """``random.Random(seed)``: init_by_array over the 32-bit words of abs(seed)."""
    m32 = np.uint64(0xFFFFFFFF)
    for i in range(_MT_N):
        mt[i] = _MT_START[i]
    i = 1
    j = 0
    k = _MT_N if klen < _MT_N else klen
    while k > 0:
        prev = mt[i - 1]
        mt[i] = (
            (mt[i] ^ (((prev ^ (prev >> np.uint64(30))) * np.uint64(1664525)) & m32))
            + np.uint64(key[j])
            + np.uint64(j)
        ) & m32
        i += 1
        j += 1
        if i >= _MT_N:
            mt[0] = mt[_MT_N - 1]
            i = 1
        if j >= klen:
            j = 0
        k -= 1
    k = _MT_N - 1
    while k > 0:
        prev = mt[i - 1]
        mt[i] = (
            (mt[i] ^ (((prev ^ (prev >> np.uint64(30))) * np.uint64(1566083941)) & m32))
            - np.uint64(i)
        ) & m32
        i += 1
        if i >= _MT_N:
            mt[0] = mt[_MT_N - 1]
            i = 1
        k -= 1
    mt[0] = np.uint64(0x80000000)
    # CPython twists the whole block before the first word; a deal reads a few dozen
    # words, so the block is twisted lazily, word by word, in the same order.
    mt[_MT_READ] = np.uint64(0)
    mt[_MT_TWISTED] = np.uint64(0)


@njit(cache=True)
def _mt_next(mt: np.ndarray) -> np.uint64:
    upper = np.uint64(0x80000000)
    lower = np.uint64(0x7FFFFFFF)
    one = np.uint64(1)
    i = np.int64(mt[_MT_READ])
    if i >= _MT_N:
        i = 0
        mt[_MT_TWISTED] = np.uint64(0)
    done = np.int64(mt[_MT_TWISTED])
    while done <= i:
        y = (mt[done] & upper) | (mt[(done + 1) % _MT_N] & lower)
        v = mt[(done + _MT_M) % _MT_N] ^ (y >> one)
        if y & one:
            v ^= np.uint64(0x9908B0DF)
        mt[done] = v
        done += 1
    mt[_MT_TWISTED] = np.uint64(done)
    mt[_MT_READ] = np.uint64(i + 1)
    y = mt[i]
    y ^= y >> np.uint64(11)
    y ^= (y << np.uint64(7)) & np.uint64(0x9D2C5680)
    y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
    y ^= y >> np.uint64(18)
    return y & np.uint64(0xFFFFFFFF)


@njit(cache=True)
def _randbelow(mt: np.ndarray, n: int) -> int:
    """``Random._randbelow_with_getrandbits`` for 1 <= n < 2**32."""
    k = 0
    while (n >> k) > 0:
        k += 1
    shift = np.uint64(32 - k)
    r = np.int64(_mt_next(mt) >> shift)
    while r >= n:
        r = np.int64(_mt_next(mt) >> shift)
    return r


# -- the deal ---------------------------------------------------------------------------------


@njit(cache=True)
def deal_slot(
    b: int,
    key: np.ndarray,
    klen: int,
    leader: int,
    rp: np.ndarray,
    tab: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    stock: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    counts: np.ndarray,
    cannot: np.ndarray,
    mt: np.ndarray,
) -> None:
    """``HandState.deal(rules, seed, leader)`` into slot ``b`` (``leader`` -1 for None)."""
    n = rp[R_N]
    T = rp[R_T]
    dealt = rp[R_DEALT]
    _mt_seed(mt, key, klen)
    for k in range(T):
        stock[b, k] = k
    for i in range(T - 1, 0, -1):
        j = _randbelow(mt, i + 1)
        tmp = stock[b, i]
        stock[b, i] = stock[b, j]
        stock[b, j] = tmp
    for k in range(T):
        loc[b, k] = BONEYARD
    for s in range(n):
        hsize[b, s] = 0
        counts[b, s] = 0
        for c in range(cannot.shape[2]):
            cannot[b, s, c] = 0
    for k in range(dealt):
        seat = k % n
        loc[b, stock[b, k]] = seat
        hsize[b, seat] += 1
    if leader < 0:
        leader = _randbelow(mt, n) if rp[R_FIRST] == 0 else _highest_double_holder(b, rp, tab, loc)
    for f in range(NST):
        st[b, f] = 0
    st[b, POS] = dealt
    st[b, TO_MOVE] = leader
    st[b, LEADER] = leader
    st[b, DEALT_LEADER] = leader
    st[b, TERM] = -1
    st[b, WINNER] = -1
    st[b, WSIDE] = -1
    for e in range(ends.shape[1]):
        ends[b, e, 0] = -1
        ends[b, e, 1] = -1
        ends[b, e, 2] = -1


@njit(cache=True)
def _highest_double_holder(b: int, rp: np.ndarray, tab: np.ndarray, loc: np.ndarray) -> int:
    # RULES.md first_leader "highest_double": the highest double, else the heaviest tile
    # (ties to the higher high half); tile indices order the doubles by value.
    T = rp[R_T]
    best = -1
    for k in range(T):
        if loc[b, k] >= 0 and tab[k, TLO] == tab[k, THI]:
            best = k
    if best < 0:
        for k in range(T):
            if loc[b, k] < 0:
                continue
            if (
                best < 0
                or tab[k, TPIPS] > tab[best, TPIPS]
                or (tab[k, TPIPS] == tab[best, TPIPS] and tab[k, THI] > tab[best, THI])
            ):
                best = k
    return np.int64(loc[b, best])


# -- legal moves -------------------------------------------------------------------------------


@njit(cache=True)
def _inline_action(base: int, tab: np.ndarray, k: int, shows: int) -> int:
    return base + tab[k, TSLOT] + (0 if shows == tab[k, TLO] else 1)


@njit(cache=True)
def _fits_by_sum(kind: int, v: int, v2: int, lo: int, hi: int, shows: int, S: int) -> bool:
    if kind == BLANK:
        return False
    touch = lo + hi - shows
    return touch + v == S or (kind == CROSS and touch + v2 == S)


@njit(cache=True)
def legal_row(
    b: int,
    rp: np.ndarray,
    tab: np.ndarray,
    loc: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    out: np.ndarray,
    lst: np.ndarray,
) -> int:
    """Write slot ``b``'s legal-action mask into ``out``; return how many are set.

    ``lst`` is scratch space of ``num_actions`` entries (it gets the same actions)."""
    for a in range(out.shape[0]):
        out[a] = 0
    count = legal_list(b, rp, tab, loc, ends, st, lst)
    for j in range(count):
        out[lst[j]] = 1
    return count


@njit(cache=True)
def legal_list(
    b: int,
    rp: np.ndarray,
    tab: np.ndarray,
    loc: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    lst: np.ndarray,
) -> int:
    """Slot ``b``'s legal actions, each once, into ``lst``; return how many."""
    if st[b, OVER]:
        return 0
    T = rp[R_T]
    draw_action = T + rp[R_E] * rp[R_P]
    seat = st[b, TO_MOVE]
    n_ends = st[b, NENDS]
    count = 0
    has_regular = False
    if n_ends == 0:
        lead = rp[R_LEAD]
        best = -1
        if lead == 1:
            for k in range(T):
                if loc[b, k] == seat and tab[k, TLO] == tab[k, THI]:
                    best = k
        for k in range(T):
            if loc[b, k] != seat:
                continue
            if lead == 2 and not (tab[k, TLO] == tab[k, THI] and tab[k, TLO] != 0):
                continue
            if best >= 0 and k != best:
                continue
            lst[count] = k
            count += 1
    else:
        count, has_regular = _placements(b, rp, tab, loc, ends, st, lst)
    can_draw = st[b, DRAWS] < rp[R_DRAW_LIMIT] and T - st[b, POS] > rp[R_RESERVE]
    if count > 0:
        if can_draw:
            vol = rp[R_VOL]
            if vol == 2 or (vol == 0 and n_ends > 0 and not has_regular):
                lst[count] = draw_action
                count += 1
        return count
    lst[0] = draw_action if can_draw else draw_action + 1
    return 1


@njit(cache=True)
def _only_spinner(b: int, rp: np.ndarray, ends: np.ndarray, n_ends: int) -> bool:
    """Spinner "lead_double_cross" with a spinner end still open: only those take tiles."""
    if rp[R_SPIN] == 2:
        for i in range(n_ends):
            if ends[b, i, 0] == SPINNER:
                return True
    return False


@njit(cache=True)
def _placements(
    b: int,
    rp: np.ndarray,
    tab: np.ndarray,
    loc: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    lst: np.ndarray,
) -> tuple[int, bool]:
    T = rp[R_T]
    P = rp[R_P]
    S = rp[R_S]
    place = rp[R_PLACE]
    as_reg = rp[R_AS_REG] != 0
    seat = st[b, TO_MOVE]
    n_ends = st[b, NENDS]
    spinner_pending = rp[R_SPIN] == 1 and st[b, SPIN_DONE] == 0
    only_spinner = _only_spinner(b, rp, ends, n_ends)
    # The mover's tiles, gathered once into the tail of ``lst``: the actions written
    # from its start never reach there (at most E * P placements and a draw).
    mine = rp[R_NACT] - T
    held = 0
    for k in range(T):
        if loc[b, k] == seat:
            lst[mine + held] = k
            held += 1
    count = 0
    # Regular (non-matador) tiles first: matador_only_when_stuck depends on them.
    for i in range(n_ends):
        kind = ends[b, i, 0]
        v = ends[b, i, 1]
        v2 = ends[b, i, 2]
        if only_spinner and kind != SPINNER:
            continue  # RULES.md, spinner "lead_double_cross": the cross must be full first
        base = T + i * P
        for j in range(held):
            k = lst[mine + j]
            if tab[k, TMAT]:
                continue
            lo = tab[k, TLO]
            hi = tab[k, THI]
            if kind == BLANK:
                if lo == 0:
                    lst[count] = _inline_action(base, tab, k, hi)
                    count += 1
            elif kind == CROSS:
                if lo == v2 or hi == v2:
                    touch = v2
                elif lo == v or hi == v:
                    touch = v
                else:
                    continue
                lst[count] = _inline_action(base, tab, k, hi if lo == touch else lo)
                count += 1
            else:
                need = S - v
                if lo == need or hi == need:
                    lst[count] = _inline_action(base, tab, k, hi if lo == need else lo)
                    count += 1
    has_regular = count > 0
    held_back = rp[R_STUCK] != 0 and has_regular
    for i in range(n_ends):
        kind = ends[b, i, 0]
        v = ends[b, i, 1]
        v2 = ends[b, i, 2]
        if only_spinner and kind != SPINNER:
            continue
        base = T + i * P
        for j in range(held):
            k = lst[mine + j]
            if not tab[k, TMAT]:
                continue
            lo = tab[k, TLO]
            hi = tab[k, THI]
            cross = base + tab[k, TSLOT_X]
            if held_back:
                # matador_only_when_stuck: only a matador laid in line as an ordinary
                # tile (matador_as_regular) that links by the sum rule survives.
                if not as_reg or (lo == hi and spinner_pending):
                    if as_reg and _fits_by_sum(kind, v, v2, lo, hi, lo, S):
                        lst[count] = _inline_action(base, tab, k, lo)
                        count += 1
                    continue
                if place == 3:
                    if kind == BLANK and hi == 0:
                        continue
                    if kind != BLANK and (lo + v == S or hi + v == S):
                        lst[count] = _inline_action(base, tab, k, hi if lo + v == S else lo)
                        count += 1
                    continue
                if place == 2 and kind != BLANK and v == 0:
                    continue
                if _fits_by_sum(kind, v, v2, lo, hi, lo, S):
                    lst[count] = _inline_action(base, tab, k, lo)
                    count += 1
                if lo != hi and _fits_by_sum(kind, v, v2, lo, hi, hi, S):
                    lst[count] = _inline_action(base, tab, k, hi)
                    count += 1
                continue
            if lo == hi and spinner_pending:
                # The first double becomes the spinner whatever matador_placement says.
                lst[count] = _inline_action(base, tab, k, lo)
                count += 1
                continue
            if place == 3:
                if kind == BLANK and hi == 0:
                    lst[count] = _inline_action(base, tab, k, 0)
                    count += 1
                elif as_reg and kind != BLANK and (lo + v == S or hi + v == S):
                    lst[count] = _inline_action(base, tab, k, hi if lo + v == S else lo)
                    count += 1
                lst[count] = cross
                count += 1
                continue
            if place == 2:
                if kind != BLANK and v == 0:
                    lst[count] = cross
                    count += 1
                    continue
            elif place == 1:
                if kind != CROSS and hi != 0:
                    lst[count] = cross
                    count += 1
            elif place == 4 and kind != BRANCH:
                lst[count] = cross
                count += 1
            lst[count] = _inline_action(base, tab, k, lo)
            count += 1
            if lo != hi:
                lst[count] = _inline_action(base, tab, k, hi)
                count += 1
    return count, has_regular


# -- applying an action --------------------------------------------------------------------------


@njit(cache=True)
def _replace_end(ends: np.ndarray, b: int, i: int, n_ends: int, added: int) -> int:
    """Make room for ``added`` ends in place of end ``i``; return the new end count."""
    if added > 1:
        for j in range(n_ends - 1, i, -1):
            for f in range(3):
                ends[b, j + added - 1, f] = ends[b, j, f]
    return n_ends - 1 + added


@njit(cache=True)
def _set_end(ends: np.ndarray, b: int, i: int, kind: int, v: int, v2: int) -> None:
    ends[b, i, 0] = kind
    ends[b, i, 1] = v
    ends[b, i, 2] = v2


@njit(cache=True)
def _mark_cannot(
    b: int,
    seat: int,
    is_pass: bool,
    rp: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    cannot: np.ndarray,
) -> None:
    # The encoding's cannot-answer marks (matador_env.encoding, "Observation pieces").
    n_ends = st[b, NENDS]
    if n_ends == 0:
        return
    if is_pass:
        no_matador = True
    else:
        vol = rp[R_VOL]
        if vol == 2:
            return
        no_matador = vol == 1
    only_spinner = _only_spinner(b, rp, ends, n_ends)
    V = rp[R_V]
    for i in range(n_ends):
        kind = ends[b, i, 0]
        if only_spinner and kind != SPINNER:
            continue
        if kind == BLANK:
            cannot[b, seat, V] = 1
        else:
            cannot[b, seat, ends[b, i, 1]] = 1
            if ends[b, i, 2] >= 0:
                cannot[b, seat, ends[b, i, 2]] = 1
    if no_matador:
        cannot[b, seat, V + 1] = 1


@njit(cache=True)
def apply_action(
    b: int,
    a: int,
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    stock: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    counts: np.ndarray,
    cannot: np.ndarray,
) -> None:
    """Apply the legal action ``a`` to slot ``b`` (legality is the caller's check)."""
    n = rp[R_N]
    T = rp[R_T]
    P = rp[R_P]
    draw_action = T + rp[R_E] * P
    seat = st[b, TO_MOVE]
    st[b, NACT] += 1
    if a == draw_action:
        _mark_cannot(b, seat, False, rp, ends, st, cannot)
        k = stock[b, st[b, POS]]
        loc[b, k] = seat
        hsize[b, seat] += 1
        st[b, POS] += 1
        st[b, DRAWS] += 1
        st[b, PASSES] = 0  # RULES.md rule 8: a draw resets the count of passes
        return
    if a == draw_action + 1:
        _mark_cannot(b, seat, True, rp, ends, st, cannot)
        nxt = (seat + 1) % n
        st[b, DRAWS] = 0
        st[b, TO_MOVE] = nxt
        st[b, PASSES] += 1
        if st[b, NENDS] == 0:
            # lead_tile "double_not_blank": the lead passes to the left; one round of
            # passes means the hand is dealt again.
            st[b, LEAD_PASSES] += 1
            st[b, LEADER] = nxt
            if st[b, LEAD_PASSES] >= n:
                _finish(b, NO_LEAD, -1, rp, tab, loc, st, counts)
            return
        if st[b, PASSES] >= n:
            _blocked(b, rp, tab, loc, st, counts)
        return
    spin = rp[R_SPIN]
    n_ends = st[b, NENDS]
    if a < T:
        k = a
        lo = tab[k, TLO]
        hi = tab[k, THI]
        if spin != 0 and lo == hi:
            for e in range(4):
                _set_end(ends, b, e, SPINNER, lo, -1)
            st[b, NENDS] = 4
            st[b, SPIN_DONE] = 1
        else:
            _set_end(ends, b, 0, PLAIN, lo, -1)
            _set_end(ends, b, 1, PLAIN, hi, -1)
            st[b, NENDS] = 2
        st[b, LEADER] = seat
    else:
        r = a - T
        i = r // P
        p = r % P
        k = slot[p, 0]
        orient = slot[p, 1]
        lo = tab[k, TLO]
        hi = tab[k, THI]
        if orient <= O_HIGH:
            if lo == hi and spin == 1 and st[b, SPIN_DONE] == 0:
                st[b, NENDS] = _replace_end(ends, b, i, n_ends, 3)
                for e in range(3):
                    _set_end(ends, b, i + e, SPINNER, lo, -1)
                st[b, SPIN_DONE] = 1
            else:
                _set_end(ends, b, i, PLAIN, lo if orient == O_LOW else hi, -1)
        elif orient == O_UPRIGHT:
            _set_end(ends, b, i, BLANK, -1, -1)
        else:
            place = rp[R_PLACE]
            if place == 1:
                _set_end(ends, b, i, CROSS, lo, hi)
            elif place == 4:
                st[b, NENDS] = _replace_end(ends, b, i, n_ends, 2)
                _set_end(ends, b, i, BRANCH, lo, -1)
                _set_end(ends, b, i + 1, BRANCH, hi, -1)
            else:
                _set_end(ends, b, i, BLANK, -1, -1)
    loc[b, k] = PLAYED
    hsize[b, seat] -= 1
    st[b, PASSES] = 0
    st[b, DRAWS] = 0
    if hsize[b, seat] == 0:
        _finish(b, DOMINO, seat, rp, tab, loc, st, counts)
    else:
        st[b, TO_MOVE] = (seat + 1) % n


# -- outcomes ----------------------------------------------------------------------------------


@njit(cache=True)
def _side(seat: int, teams: bool) -> int:
    return seat % 2 if teams else seat


@njit(cache=True)
def _count(b: int, rp: np.ndarray, tab: np.ndarray, loc: np.ndarray, counts: np.ndarray) -> None:
    n = rp[R_N]
    for s in range(n):
        counts[b, s] = 0
    for k in range(rp[R_T]):
        s = loc[b, k]
        if s >= 0:
            counts[b, s] += tab[k, TPIPS]


@njit(cache=True)
def _finish(
    b: int,
    term: int,
    seat: int,
    rp: np.ndarray,
    tab: np.ndarray,
    loc: np.ndarray,
    st: np.ndarray,
    counts: np.ndarray,
) -> None:
    _count(b, rp, tab, loc, counts)
    st[b, OVER] = 1
    st[b, TERM] = term
    st[b, WINNER] = -1
    st[b, WSIDE] = -1
    st[b, POINTS] = 0
    if term == DOMINO:
        teams = rp[R_TEAMS] != 0
        side = _side(seat, teams)
        points = 0
        for s in range(rp[R_N]):
            if _side(s, teams) != side:
                points += counts[b, s]
        st[b, WINNER] = seat
        st[b, WSIDE] = side
        st[b, POINTS] = points


@njit(cache=True)
def _blocked(
    b: int, rp: np.ndarray, tab: np.ndarray, loc: np.ndarray, st: np.ndarray, counts: np.ndarray
) -> None:
    _finish(b, BLOCKED, -1, rp, tab, loc, st, counts)
    n = rp[R_N]
    teams = rp[R_TEAMS] != 0
    sides = rp[R_SIDES]
    side_counts = np.zeros(sides, np.int64)
    for s in range(n):
        side_counts[_side(s, teams)] += counts[b, s]
    low = side_counts.min()
    lowest = 0
    side = -1
    total = 0
    for x in range(sides):
        total += side_counts[x]
        if side_counts[x] == low:
            lowest += 1
            if side < 0:
                side = x
    if lowest > 1:
        st[b, TERM] = VOID_TIE if rp[R_TIE] == 0 else REDEAL_TIE
        return
    others = total - low
    scoring = rp[R_SCORING]
    if scoring == 0:
        points = others - low
    elif scoring == 1:
        points = others
    else:
        points = others + low
    winner = -1
    for s in range(n):
        if _side(s, teams) == side and (winner < 0 or counts[b, s] < counts[b, winner]):
            winner = s
    st[b, WINNER] = winner
    st[b, WSIDE] = side
    st[b, POINTS] = points


# -- matches -----------------------------------------------------------------------------------

M_DEALS = 0
M_ARMED = 1
M_OVER = 2
NMST = 3


@njit(cache=True)
def score_hand(
    b: int,
    rp: np.ndarray,
    st: np.ndarray,
    totals: np.ndarray,
    leads: np.ndarray,
    mst: np.ndarray,
    winners: np.ndarray,
) -> None:
    """``MatchState._score``: add a finished hand to slot ``b``'s match."""
    sides = rp[R_SIDES]
    side = st[b, WSIDE]
    if side >= 0:
        totals[b, side] += st[b, POINTS]
    term = st[b, TERM]
    redeal = term in (REDEAL_TIE, NO_LEAD)
    if not redeal:
        leads[b, st[b, LEADER]] += 1
    top = totals[b, 0]
    for x in range(1, sides):
        if totals[b, x] > top:
            top = totals[b, x]
    over = False
    if rp[R_MATCH_END] == 0:
        over = top >= rp[R_TARGET]
    else:
        # RULES.md "complete_round": once a total is strictly above the target, play on
        # until every seat has led equally often; the highest total wins, ties share.
        if top > rp[R_TARGET]:
            mst[b, M_ARMED] = 1
        if mst[b, M_ARMED] and not redeal:
            even = True
            for s in range(1, rp[R_N]):
                if leads[b, s] != leads[b, 0]:
                    even = False
            over = even
    if over:
        mst[b, M_OVER] = 1
        for x in range(sides):
            winners[b, x] = 1 if totals[b, x] == top else 0


@njit(cache=True)
def next_leader(b: int, rp: np.ndarray, st: np.ndarray, counts: np.ndarray) -> int:
    """``MatchState.next_leader`` of slot ``b``'s finished hand."""
    n = rp[R_N]
    term = st[b, TERM]
    if term == NO_LEAD:
        return np.int64(st[b, DEALT_LEADER])
    if term == REDEAL_TIE:
        return np.int64(st[b, LEADER])
    rule = rp[R_NEXT]
    if rule == 0:
        return np.int64((st[b, LEADER] + 1) % n)
    teams = rp[R_TEAMS] != 0
    if term == VOID_TIE:
        if rule == 2:
            return np.int64(st[b, LEADER])
        best = 0
        for s in range(1, n):
            if counts[b, s] > counts[b, best]:
                best = s
        return best
    if rule == 2:
        return np.int64(st[b, WINNER])
    best = -1
    for s in range(n):
        if _side(s, teams) == st[b, WSIDE]:
            continue
        if best < 0 or counts[b, s] > counts[b, best]:
            best = s
    return best


# -- whole loops -------------------------------------------------------------------------------


@njit(cache=True)
def legal_masks(
    rp: np.ndarray,
    tab: np.ndarray,
    loc: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    out: np.ndarray,
) -> None:
    lst = np.empty(rp[R_NACT], np.int64)
    for b in range(loc.shape[0]):
        legal_row(b, rp, tab, loc, ends, st, out[b], lst)


@njit(cache=True)
def check_actions(
    actions: np.ndarray,
    rp: np.ndarray,
    tab: np.ndarray,
    loc: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    scratch: np.ndarray,
) -> int:
    """The first slot whose action is not legal (-1 leaves a slot as it is), or -1."""
    A = rp[R_NACT]
    for b in range(loc.shape[0]):
        a = actions[b]
        if a == -1:
            continue
        if st[b, OVER] or a < 0 or a >= A:
            return b
        count = legal_list(b, rp, tab, loc, ends, st, scratch)
        legal = False
        for j in range(count):
            if scratch[j] == a:
                legal = True
        if not legal:
            return b
    return -1


@njit(cache=True)
def apply_actions(
    actions: np.ndarray,
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    stock: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    counts: np.ndarray,
    cannot: np.ndarray,
) -> None:
    for b in range(loc.shape[0]):
        if actions[b] >= 0 and not st[b, OVER]:
            apply_action(b, actions[b], rp, tab, slot, loc, hsize, stock, ends, st, counts, cannot)


@njit(cache=True)
def deal_slots(
    slots: np.ndarray,
    keys: np.ndarray,
    klens: np.ndarray,
    leaders: np.ndarray,
    rp: np.ndarray,
    tab: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    stock: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    counts: np.ndarray,
    cannot: np.ndarray,
) -> None:
    mt = np.empty(MT_WORDS, np.uint64)
    for j in range(slots.shape[0]):
        deal_slot(
            slots[j],
            keys[j],
            klens[j],
            leaders[j],
            rp,
            tab,
            loc,
            hsize,
            stock,
            ends,
            st,
            counts,
            cannot,
            mt,
        )


@njit(cache=True)
def _xorshift(state: np.ndarray) -> np.uint64:
    x = state[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    state[0] = x
    return x


@njit(cache=True)
def seed_stream(rng: np.ndarray, seed: int, stream: int) -> None:
    """Start the xorshift state ``rng[0]`` on stream ``stream`` of ``seed`` (an LCG step
    from a golden-ratio offset; never the all-zero state xorshift cannot leave)."""
    rng[0] = (np.uint64(seed) + np.uint64(stream) * np.uint64(0x9E3779B97F4A7C15)) * np.uint64(
        6364136223846793005
    ) + np.uint64(1442695040888963407)
    if rng[0] == 0:
        rng[0] = np.uint64(88172645463325252)


@njit(cache=True)
def _uniform(rng: np.ndarray) -> float:
    return np.float64(_xorshift(rng) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def uniforms(rng: np.ndarray, rows: np.ndarray, out: np.ndarray) -> None:
    """``out[j]``: a draw in [0, 1) from slot ``rows[j]``'s own xorshift state
    ``rng[rows[j]]`` (advanced)."""
    for j in range(rows.shape[0]):
        b = rows[j]
        out[j] = _uniform(rng[b : b + 1])


@njit(cache=True)
def _random_move(
    b: int,
    rng: np.ndarray,
    lst: np.ndarray,
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    stock: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    counts: np.ndarray,
    cannot: np.ndarray,
) -> None:
    """One uniformly random legal action in slot ``b`` (``lst``: scratch for the list)."""
    m = legal_list(b, rp, tab, loc, ends, st, lst)
    a = lst[np.int64(_xorshift(rng) % np.uint64(m))]
    apply_action(b, a, rp, tab, slot, loc, hsize, stock, ends, st, counts, cannot)


@njit(cache=True)
def _random_range(
    lo: int,
    hi: int,
    keys: np.ndarray,
    klens: np.ndarray,
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    rng_seed: int,
    results: np.ndarray,
) -> int:
    n = rp[R_N]
    T = rp[R_T]
    E = rp[R_E]
    C = rp[R_V] + 2
    loc = np.empty((1, T), np.int8)
    hsize = np.empty((1, n), np.int32)
    stock = np.empty((1, T), np.int16)
    ends = np.empty((1, E, 3), np.int8)
    st = np.empty((1, NST), np.int32)
    counts = np.empty((1, n), np.int32)
    cannot = np.empty((1, n, C), np.uint8)
    lst = np.empty(rp[R_NACT], np.int64)
    mt = np.empty(MT_WORDS, np.uint64)
    rng = np.empty(1, np.uint64)
    rng[0] = np.uint64(rng_seed) * np.uint64(2654435761) + np.uint64(88172645463325252)
    total = 0
    for j in range(lo, hi):
        deal_slot(
            0, keys[j], klens[j], -1, rp, tab, loc, hsize, stock, ends, st, counts, cannot, mt
        )
        while not st[0, OVER]:
            _random_move(0, rng, lst, rp, tab, slot, loc, hsize, stock, ends, st, counts, cannot)
            total += 1
        results[j, 0] = st[0, TERM]
        results[j, 1] = st[0, WSIDE]
        results[j, 2] = st[0, POINTS]
    return total


@njit(cache=True)
def random_hands(
    keys: np.ndarray,
    klens: np.ndarray,
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    rng_seed: int,
    results: np.ndarray,
) -> int:
    """Deal and play one hand per key with uniformly random legal actions.

    ``results[j]`` gets (termination, winning side, points); returns the actions taken.
    """
    return _random_range(0, keys.shape[0], keys, klens, rp, tab, slot, rng_seed, results)


@njit(cache=True, parallel=True)
def random_hands_parallel(
    keys: np.ndarray,
    klens: np.ndarray,
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    rng_seed: int,
    results: np.ndarray,
    chunks: int,
) -> int:
    """:func:`random_hands` split into ``chunks`` ranges played on numba's threads."""
    count = keys.shape[0]
    size = (count + chunks - 1) // chunks
    totals = np.zeros(chunks, np.int64)
    for c in prange(chunks):
        lo = c * size
        hi = min(count, lo + size)
        totals[c] = _random_range(lo, hi, keys, klens, rp, tab, slot, rng_seed + c, results)
    return totals.sum()


# -- observations ----------------------------------------------------------------------------

F_INV_T = 0
F_INV_N = 1
F_TARGET = 2
F_SCORE_SCALE = 3
NFC = 4


@njit(cache=True)
def observe_rows(
    slots: np.ndarray,
    seats: np.ndarray,
    with_scores: np.ndarray,
    rp: np.ndarray,
    fc: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    cannot: np.ndarray,
    totals: np.ndarray,
    out: np.ndarray,
) -> None:
    """Row ``j`` of ``out``: seat ``seats[j]``'s observation of slot ``slots[j]``.

    Number for number ``Encoding.observation`` of the seat's view (the pieces table of
    :mod:`matador_env.encoding`); every float is computed as there, in double
    precision and then stored as float32.
    """
    n = rp[R_N]
    T = rp[R_T]
    E = rp[R_E]
    V = rp[R_V]
    Kw = 5 + V
    C = V + 2
    sides = rp[R_SIDES]
    teams = rp[R_TEAMS] != 0
    inv_t = fc[F_INV_T]
    inv_n = fc[F_INV_N]
    scale = fc[F_SCORE_SCALE]
    o_played = T
    o_ends = 2 * T
    o_bone = o_ends + E * Kw
    o_sizes = o_bone + 3
    o_partner = o_sizes + n - 1
    o_cannot = o_partner + n - 1
    o_scores = o_cannot + (n - 1) * C
    o_leader = o_scores + sides
    o_to_move = o_leader + n
    for j in range(slots.shape[0]):
        b = slots[j]
        seat = seats[j]
        row = out[j]
        for x in range(row.shape[0]):
            row[x] = 0.0
        for k in range(T):
            where = loc[b, k]
            if where == seat:
                row[k] = 1.0
            elif where == PLAYED:
                row[o_played + k] = 1.0
        for i in range(st[b, NENDS]):
            base = o_ends + i * Kw
            row[base + ends[b, i, 0]] = 1.0
            if ends[b, i, 1] >= 0:
                row[base + 5 + ends[b, i, 1]] = 1.0
            if ends[b, i, 2] >= 0:
                row[base + 5 + ends[b, i, 2]] = 1.0
        row[o_bone] = np.float32((T - st[b, POS]) * inv_t)
        row[o_bone + 1] = np.float32(st[b, PASSES] * inv_n)
        row[o_bone + 2] = np.float32(fc[F_TARGET])
        for k in range(1, n):
            other = (seat + k) % n
            row[o_sizes + k - 1] = np.float32(hsize[b, other] * inv_t)
            if teams and k == 2:
                row[o_partner + 1] = 1.0
            for c in range(C):
                if cannot[b, other, c]:
                    row[o_cannot + (k - 1) * C + c] = 1.0
        if with_scores[b]:
            own = _side(seat, teams)
            for k in range(sides):
                total = totals[b, (own + k) % sides]
                row[o_scores + k] = np.float32(min(total, scale) / scale)
        row[o_leader + (st[b, LEADER] - seat) % n] = 1.0
        row[o_to_move + (st[b, TO_MOVE] - seat) % n] = 1.0


@njit(cache=True)
def play_random_until(
    seats: np.ndarray,
    rng: np.ndarray,
    rp: np.ndarray,
    tab: np.ndarray,
    slot: np.ndarray,
    loc: np.ndarray,
    hsize: np.ndarray,
    stock: np.ndarray,
    ends: np.ndarray,
    st: np.ndarray,
    counts: np.ndarray,
    cannot: np.ndarray,
) -> None:
    """In every slot, uniformly random legal actions until ``seats[b]`` is to move or the
    hand is over: a learner's opponents in one call, however many moves each makes.
    Slot ``b`` draws from its own xorshift state ``rng[b]``, so its moves do not depend
    on the other slots."""
    lst = np.empty(rp[R_NACT], np.int64)
    for b in range(loc.shape[0]):
        own = rng[b : b + 1]
        while not st[b, OVER] and st[b, TO_MOVE] != seats[b]:
            _random_move(b, own, lst, rp, tab, slot, loc, hsize, stock, ends, st, counts, cannot)


@njit(cache=True)
def random_choices(masks: np.ndarray, rows: np.ndarray, rng: np.ndarray, out: np.ndarray) -> None:
    """``out[j]``: a uniformly random legal action of ``masks[rows[j]]``."""
    for j in range(rows.shape[0]):
        mask = masks[rows[j]]
        m = 0
        for a in range(mask.shape[0]):
            m += mask[a]
        pick = np.int64(_xorshift(rng) % np.uint64(m))
        for a in range(mask.shape[0]):
            if mask[a]:
                if pick == 0:
                    out[j] = a
                    break
                pick -= 1
