"""Scripted deals for the rule tests: name some tiles, the rest fill in."""

from __future__ import annotations

from collections.abc import Sequence

from matador_env.engine import HandState, Rules, Tile, set_tiles


def deal(
    rules: Rules,
    hands: Sequence[str],
    boneyard: str = "",
    leader: int = 0,
    rest: int | Sequence[int] | None = None,
) -> HandState:
    """A scripted deal. ``hands`` and ``boneyard`` are space-separated tiles; every tile
    not named goes to the end of the boneyard, or to seat ``rest`` when given (to the
    seats of ``rest`` in turn, one tile each, when it names several)."""
    hand_lists = [h.split() for h in hands]
    bone = boneyard.split()
    named = {Tile.parse(t) for h in hand_lists for t in h} | {Tile.parse(t) for t in bone}
    leftover = [str(t) for t in set_tiles(rules.set_max) if t not in named]
    if rest is None:
        bone += leftover
    else:
        seats = [rest] if isinstance(rest, int) else list(rest)
        for k, t in enumerate(leftover):
            hand_lists[seats[k % len(seats)]].append(t)
    return HandState.from_deal(rules, hands=hand_lists, boneyard=bone, leader=leader)


def midgame_states(rules: Rules, count: int, seed: int = 0, max_moves: int = 30) -> list[HandState]:
    """States with a seat to act, each up to ``max_moves`` random legal moves into a
    new deal (deals ``seed``, ``seed + 1``, ...; hands that end early are skipped)."""
    import random

    rng = random.Random(seed)
    found: list[HandState] = []
    deal_seed = seed
    while len(found) < count:
        state = HandState.deal(rules, deal_seed)
        deal_seed += 1
        for _ in range(rng.randrange(max_moves)):
            if state.outcome is not None:
                break
            moves = state.legal_moves()
            state = state.apply(moves[rng.randrange(len(moves))])
        if state.outcome is None:
            found.append(state)
    return found


def played_states(rules: Rules, seed: int) -> list[HandState]:
    """Every state of one hand of deal ``seed``, random legal moves, a play wherever
    there is one (so that the layout grows as large as the rules let it)."""
    import random

    rng = random.Random(seed)
    state = HandState.deal(rules, seed)
    states = [state]
    while not state.is_over:
        moves = state.legal_moves()
        plays = [m for m in moves if m.kind == "play"]
        state = state.apply(rng.choice(plays or moves))
        states.append(state)
    return states
