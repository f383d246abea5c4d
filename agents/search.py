"""``search``: determinized search (Perfect Information Monte Carlo) with playouts.

For each decision with a choice:

1. up to ``width`` candidate moves are kept, the expert's favourites (every move
   when there are no more than ``width``);
2. ``samples`` worlds are drawn: the hidden hands and the boneyard order, dealt
   consistently with everything public, the inferred voids included
   (:meth:`agents.knowledge.Knowledge.sample`), and made into full states with
   ``HandState.from_view``;
3. in each world every candidate is applied and played out ``playouts`` times to
   the end of the hand by a fast rollout policy that sees only the mover's own
   hand and the ends (no seat peeks in the playouts either); the candidates of a
   world share their playouts' random numbers, so their differences are not
   drowned in deal noise;
4. the move with the best mean result wins: the points the searcher's side
   scores, minus those the other sides score (shared among them).

The budget is counted in worlds and playouts, never in seconds, so a decision
replays exactly from the view and the random generator.
"""

from __future__ import annotations

import random

from matador_env.engine import HandState, Move, Outcome, SeatView

from .base import Agent, AgentSpecError, register
from .expert import ExpertAgent
from .knowledge import Knowledge, Tables

__all__ = ["SearchAgent", "rollout", "rollout_move"]

# Rollout policy weights (pips-like units). The playouts are perfect-information
# games of the sampled world, the classic PIMC assumption: every seat sees the next
# seat's hand there, so blocks are played as a strong player would play them.
_MATADOR = 8.0
_FOLLOW = 2.5
_BLOCK = 6.0
_SHUT = 8.0
_DRAW = 1.0
_JITTER = 1.5


def _new_end_answers(tb: Tables, m: Move) -> int:
    """The regular answers at the end(s) a placement creates."""
    mode = m[4]
    lo, hi = m[1]  # type: ignore[misc]
    if mode == "inline":
        return tb.accepts[m[3]]  # type: ignore[index]
    if mode == "lead":
        return tb.accepts[lo] | tb.accepts[hi]
    if mode == "upright" or tb.cross_blank:
        return tb.blank
    return tb.accepts[lo] | tb.accepts[hi]


def rollout_move(s: HandState, tb: Tables, rng: random.Random) -> Move:
    """The rollout policy's move in ``s`` (a fast greedy blocker that keeps matadors)."""
    moves = s.legal_moves()
    if len(moves) == 1:
        return moves[0]
    seat = s.to_move
    hand = s.hand_mask(seat)
    nxt = s.hand_mask((seat + 1) % tb.n)
    pips = tb.pips
    mat = tb.matador
    reg = tb.regular
    end_ans = tb.end_answers
    ends = s.ends
    answers = [end_ans(e) for e in ends]
    all_ans = 0
    for a in answers:
        all_ans |= a
    size = hand.bit_count()
    mat_cost = _MATADOR if size > 2 else 2.0
    rand = rng.random
    best = moves[0]
    best_score = -1e9
    for m in moves:
        kind = m[0]
        if kind == "play":
            i = m[1].index  # type: ignore[union-attr]
            left = hand & ~(1 << i)
            if not left:
                return m
            sc = pips[i] + _JITTER * rand()
            if (mat >> i) & 1:
                sc -= mat_cost
            j = m[2]
            if j is None:
                fit = _new_end_answers(tb, m)
            else:
                fit = _new_end_answers(tb, m)
                for k, a in enumerate(answers):
                    if k != j:
                        fit |= a
            mine = (fit & left & reg).bit_count()
            sc += _FOLLOW * (mine if mine < 2 else 2)
            if not (fit & nxt & reg):
                sc += _BLOCK
                if not (nxt & mat):
                    sc += _SHUT
        elif kind == "draw":
            sc = _DRAW
            if not (all_ans & nxt & reg):
                sc += _BLOCK
                if not (nxt & mat):
                    sc += _SHUT
        else:
            sc = -1e9
        if sc > best_score:
            best_score = sc
            best = m
    return best


def rollout(s: HandState, tb: Tables, rng: random.Random) -> Outcome:
    """Play ``s`` to the end of the hand with :func:`rollout_move`."""
    while s.outcome is None:
        s = s.apply(rollout_move(s, tb, rng))
    return s.outcome


def utility(outcome: Outcome, side: int, sides: int) -> float:
    """Points to ``side`` minus the mean of what the other sides score."""
    ws = outcome.winning_side
    if ws is None:
        return 0.0
    if ws == side:
        return float(outcome.points)
    return -outcome.points / (sides - 1)


def _distinct(kn: Knowledge, moves: list[Move], order: list[int]) -> list[int]:
    """``order`` without moves equivalent to an earlier one: the same tile leaving the
    same open ends (in another order), e.g. a matador on either of two ends showing 0."""
    if not any(m.kind == "play" for m in moves):
        return order
    world = kn.any_world()
    seen = set()
    out = []
    for i in order:
        m = moves[i]
        if m.kind == "play" and m.mode != "lead":
            key: object = (m.tile, tuple(sorted(world.apply(m).ends)))
        else:
            key = m
        if key not in seen:
            seen.add(key)
            out.append(i)
    return out


class SearchAgent(Agent):
    """PIMC: sampled worlds consistent with the view, every candidate played out in each."""

    name = "search"

    def __init__(
        self, samples: int = 32, playouts: int = 1, width: int = 6, halving: int = 1
    ) -> None:
        if samples < 1 or playouts < 1 or width < 1:
            raise ValueError("samples, playouts and width must be >= 1")
        self.samples = samples
        self.playouts = playouts
        self.width = width
        self.halving = halving
        self.expert = ExpertAgent()
        self.name = f"search:samples={samples},playouts={playouts},width={width}"

    def act(self, view: SeatView, rng: random.Random) -> Move:
        moves = view.legal_moves
        if len(moves) == 1:
            return moves[0]
        return self.evaluate(view, rng)[0]

    def evaluate(self, view: SeatView, rng: random.Random) -> tuple[Move, list[tuple[Move, float]]]:
        """The chosen move, and each candidate with its mean playout result."""
        kn = Knowledge(view)
        tb = kn.tb
        rules = view.rules
        side = rules.side_of(view.seat)
        sides = rules.sides
        moves = list(view.legal_moves)
        prior = self.expert.scores(view, kn)
        order = sorted(range(len(moves)), key=lambda i: -prior[i])
        cands = [moves[i] for i in _distinct(kn, moves, order)[: self.width]]
        sums = [0.0] * len(cands)
        worlds = [0] * len(cands)

        def play(alive: list[int], count: int) -> None:
            for _ in range(count):
                world = kn.sample(rng)
                seed = rng.getrandbits(63)
                for i in alive:
                    after = world.apply(cands[i])
                    r = random.Random(seed)
                    acc = 0.0
                    for _ in range(self.playouts):
                        acc += utility(rollout(after, tb, r), side, sides)
                    sums[i] += acc / self.playouts
                    worlds[i] += 1

        alive = list(range(len(cands)))
        if self.halving and len(cands) > 2:
            # Successive halving: the same budget, most of it spent telling the
            # best candidates apart.
            rounds = (len(cands) - 1).bit_length()
            per_round = self.samples * len(cands) / rounds
            for r in range(rounds):
                play(alive, max(1, round(per_round / len(alive))))
                if r < rounds - 1:
                    alive.sort(key=lambda i: (-sums[i] / worlds[i], i))
                    alive = sorted(alive[: (len(alive) + 1) // 2])
        else:
            play(alive, self.samples)
        means = [sums[i] / worlds[i] if worlds[i] else float("-inf") for i in range(len(cands))]
        # Ties go to the expert's order (the candidates are sorted by it).
        best = max(alive, key=lambda i: (means[i], -i))
        return cands[best], list(zip(cands, means, strict=True))


_INT_OPTIONS = ("samples", "playouts", "width", "halving")


def _build(options: dict[str, str]) -> Agent:
    values: dict[str, int] = {}
    for key, raw in options.items():
        if key not in _INT_OPTIONS:
            raise AgentSpecError(
                f"search has no option {key!r}; options: {', '.join(_INT_OPTIONS)} "
                "(e.g. search:samples=32,playouts=2,width=6)"
            )
        try:
            value = int(raw)
        except ValueError:
            raise AgentSpecError(f"search option {key}={raw!r}: expected an integer") from None
        if value < (0 if key == "halving" else 1):
            raise AgentSpecError(f"search option {key}={value}: must be >= 1")
        values[key] = value
    return SearchAgent(**values)


register("search", _build, "search[:samples=N,playouts=N,width=N]")
