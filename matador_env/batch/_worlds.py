"""Compiled dealing of hidden hands under caps, for search agents (private).

A seat that searches deals *worlds*: the tiles it has not seen, spread over the
other seats' hands and the boneyard so that every inference holds. Each inference
is a cap: of the tiles in ``mask``, seat ``seat`` holds at most ``cap`` (0: a void).
This is the constructive deal and swap mixing of the search agent's Python
dealer (``agents.knowledge.Knowledge.sample_masks``) on integers, which is where
a search over several hidden hands spent most of its time:

1. the seats in order of least room (tiles it may hold minus its hand size, ties
   at random), each taking the tiles it may hold in a random order while every cap
   holds; a dead end starts over, at most ``tries`` times;
2. ``steps`` random swaps between two hands, or a hand and the boneyard, each kept
   when every cap still holds. The proposal is symmetric (hand sizes are fixed),
   so the worlds approach the uniform distribution over the consistent deals;
3. the boneyard in a random order.

Tile sets are ``int64`` bit masks, so the tiles number at most 62 (the double-six
and double-nine sets); the caller keeps larger sets on the Python dealer.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import _kernels as K
from ._kernels import _uniform, seed_stream
from ._playouts import _popcount


@njit(cache=True)
def _count(x: np.int64) -> int:
    """Tiles in the mask ``x``."""
    return _popcount(np.uint64(x))


@njit(cache=True)
def _below(rng: np.ndarray, m: int) -> int:
    """A uniform integer in ``[0, m)``."""
    return np.int64(K._xorshift(rng) % np.uint64(m))


@njit(cache=True)
def _keeps(
    h: int,
    mask: np.int64,
    void: np.ndarray,
    cap_seat: np.ndarray,
    cap_mask: np.ndarray,
    cap_max: np.ndarray,
) -> bool:
    """Whether hidden seat ``h`` may hold the tiles ``mask`` by every inference."""
    if mask & void[h]:
        return False
    for k in range(cap_seat.shape[0]):
        if cap_seat[k] == h and _count(mask & cap_mask[k]) > cap_max[k]:
            return False
    return True


@njit(cache=True)
def _nth_tile(mask: np.int64, n: int) -> int:
    """The index of the ``n``-th set bit of ``mask`` (lowest first)."""
    for _ in range(n):
        mask &= mask - 1
    return _count((mask & -mask) - 1)


@njit(cache=True)
def deal_worlds(
    unseen: np.ndarray,
    sizes: np.ndarray,
    void: np.ndarray,
    cap_seat: np.ndarray,
    cap_mask: np.ndarray,
    cap_max: np.ndarray,
    tries: int,
    steps: int,
    seed: int,
    hands: np.ndarray,
    rest: np.ndarray,
    dealt: np.ndarray,
) -> None:
    """Deal ``hands.shape[0]`` worlds.

    ``unseen``: the tile indices to spread; ``sizes[h]``, ``void[h]``: hidden seat
    ``h``'s hand size and the tiles it cannot hold; cap ``k`` says hidden seat
    ``cap_seat[k]`` holds at most ``cap_max[k]`` of ``cap_mask[k]``. Out: ``hands[w, h]``
    (masks), ``rest[w]`` (the boneyard in draw order) and ``dealt[w]``, false where
    no deal was found in ``tries`` attempts (the row is then undefined).
    """
    H = sizes.shape[0]
    U = unseen.shape[0]
    R = rest.shape[1]
    all_unseen = np.int64(0)
    for t in unseen:
        all_unseen |= np.int64(1) << t
    rng = np.empty(1, np.uint64)
    seed_stream(rng, seed, 0)
    # The same for every world: each seat's room (tiles it may hold minus its hand
    # size), the seats that hold tiles, and whether a swap has a partner at all.
    room0 = np.empty(H, np.float64)
    holders = np.empty(H, np.int64)
    nh = 0
    for h in range(H):
        room0[h] = _count(all_unseen & ~void[h]) - sizes[h]
        if sizes[h] > 0:
            holders[nh] = h
            nh += 1
    partners = nh - 1 + (1 if R > 0 else 0)
    order = np.empty(H, np.int64)
    room = np.empty(H, np.float64)
    pool = np.empty(U, np.int64)
    held = np.empty(H, np.int64)
    for w in range(hands.shape[0]):
        dealt[w] = False
        for _ in range(tries):
            # 1. The seats with the least room first, ties at random.
            for h in range(H):
                order[h] = h
                room[h] = room0[h] + _uniform(rng)
            for i in range(1, H):  # insertion sort by room
                j = i
                while j > 0 and room[order[j - 1]] > room[order[j]]:
                    order[j - 1], order[j] = order[j], order[j - 1]
                    j -= 1
            remaining = all_unseen
            ok = True
            for i in range(H):
                h = order[i]
                size = 0
                m = remaining & ~void[h]
                while m:
                    pool[size] = _nth_tile(m, 0)
                    size += 1
                    m &= m - 1
                for a in range(size - 1, 0, -1):  # Fisher-Yates
                    b = _below(rng, a + 1)
                    pool[a], pool[b] = pool[b], pool[a]
                got = 0
                hm = np.int64(0)
                for a in range(size):
                    if got == sizes[h]:
                        break
                    cand = hm | (np.int64(1) << pool[a])
                    if not _keeps(h, cand, void, cap_seat, cap_mask, cap_max):
                        continue
                    hm = cand
                    got += 1
                if got < sizes[h]:
                    ok = False
                    break
                held[h] = hm
                remaining &= ~hm
            if ok:
                dealt[w] = True
                break
        if not dealt[w]:
            continue
        k = 0
        m = remaining
        while m:
            rest[w, k] = _nth_tile(m, 0)
            k += 1
            m &= m - 1
        # 2. Swaps that keep every cap: a tile of one holder for one of another
        # holder or of the boneyard.
        for _ in range(steps if partners > 0 else 0):
            at = _below(rng, nh)
            a = holders[at]
            t1 = _nth_tile(held[a], _below(rng, sizes[a]))
            pick = _below(rng, partners)
            if pick < nh - 1:
                b = holders[pick if pick < at else pick + 1]
                t2 = _nth_tile(held[b], _below(rng, sizes[b]))
                na = held[a] ^ (np.int64(1) << t1) ^ (np.int64(1) << t2)
                nb = held[b] ^ (np.int64(1) << t2) ^ (np.int64(1) << t1)
                if _keeps(a, na, void, cap_seat, cap_mask, cap_max) and _keeps(
                    b, nb, void, cap_seat, cap_mask, cap_max
                ):
                    held[a] = na
                    held[b] = nb
            else:
                j = _below(rng, R)
                t2 = rest[w, j]
                na = held[a] ^ (np.int64(1) << t1) ^ (np.int64(1) << t2)
                if _keeps(a, na, void, cap_seat, cap_mask, cap_max):
                    held[a] = na
                    rest[w, j] = t1
        # 3. The boneyard in a random order.
        for a in range(R - 1, 0, -1):
            b = _below(rng, a + 1)
            rest[w, a], rest[w, b] = rest[w, b], rest[w, a]
        for h in range(H):
            hands[w, h] = held[h]
