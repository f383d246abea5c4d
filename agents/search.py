"""``search``: determinized search (Perfect Information Monte Carlo) with playouts.

For each decision with a choice:

1. the candidates: the legal moves without repeats (the same tile leaving the
   same open ends), the expert's ``width`` favourites of them; a single
   candidate is played at once;
2. worlds: the hidden hands and the boneyard order, dealt consistently with
   everything public, the voids inferred from passes and draws included
   (:meth:`agents.knowledge.Knowledge.sample_masks`);
3. in each world the candidates are applied and played out ``playouts`` times to
   the end of the hand by a fast rollout policy: the expert's terms and weights,
   every seat playing from what it could know in that world (its own hand, the
   table, the hand sizes), not with the open cards of textbook PIMC, which
   measured weaker. The candidates of a world share its playouts' random
   numbers, so their differences are not drowned in deal noise;
4. with ``halving`` (the default) the budget of ``samples`` worlds per candidate
   is spent by successive halving: after each round the worse half of the
   candidates is dropped, so most worlds go to telling the best ones apart;
5. the move with the best mean result wins: the points the searcher's side
   scores, minus those the other sides score (shared among them); ties go to the
   expert's order.

Playouts run on the compiled batch engine (:class:`matador_env.batch.WorldPlayouts`)
when ``numba`` is installed, under every rule family: all the worlds of a round and
all their candidates in one batch, with the same policy compiled (its terms and the
weights below; ``fast=0`` turns it off), and the worlds of several hidden hands are
dealt by compiled code too (:meth:`Knowledge.sample_many`). Without it they run on
bit masks (:class:`LineRollout`) under the rules whose open ends are plain numbers
(no spinner, matadors laid in line, as in the standard preset), and through the
engine (:func:`rollout`) under the others. More worlds in the same time is what makes the
search stronger.

The searcher reads no hidden tile of the real hand: only its view, and the worlds
it samples from it. The budget is counted in worlds and playouts, never in
seconds, so a decision replays exactly from the view and the random generator.
Time per move grows with ``samples`` (``python -m benchmarks.strength`` prints it).
``samples``, ``playouts`` and ``width`` are each at most :data:`MAX_BUDGET` (100,000).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from matador_env.engine import End, HandState, Move, Outcome, Rules, SeatView, blocked_points
from matador_env.streams import NUMBA_FIRST_USE, interrupted, note_when_slow

from .base import Agent, AgentSpecError, checked_count, checked_turn, register, spec_count
from .expert import ExpertAgent, ExpertWeights
from .knowledge import Knowledge, Tables, bits

__all__ = [
    "LineRollout",
    "SearchAgent",
    "SearchResult",
    "batch_playouts_available",
    "policy_weights",
    "rollout",
    "rollout_move",
    "search_spec",
    "utility",
]

# The rollout policy: the expert's terms with its fitted weights (ExpertWeights). Each
# constant is the expert weight of the same name, relative to the other moves. Every
# seat plays the playout from what it could know there: its own hand, the table and
# the hand sizes. The chance that the next seat cannot answer is counted over the
# tiles the mover has not seen (:func:`_miss`), not read from the sampled world: the
# playouts then play as the expert does, and the open-card playouts of textbook PIMC
# measured clearly weaker (+4.9 against +7.2 points per hand against the expert, 500
# paired deals, 128 worlds).
_X_PIP = 0.893  # pips shed (pips_left)
_X_MAT = 6.5  # spending a matador (matador, and one matador fewer left)
_X_ZERO_ZERO = 2.6  # spending 0-0 (double_zero)
_X_DOUBLE = 1.08  # one double fewer left (doubles_left)
_X_BLANK = 3.92  # one blank tile fewer left (blanks_left)
_X_FORCE = 11.2  # the next seat has no regular answer (force)
_X_BLOCK = 1.1  # ... and no matador either (block)
_X_FOLLOW = 0.606  # regular answers kept, up to three (follow)
_X_VARIETY = 1.65  # end values the hand still answers (variety)
_X_ZERO_END = 1.65  # ends showing 0 or needing a blank (zero_ends)
_X_DRAW = -10.5  # drawing: a tile more, two in the count of tiles (draw, tiles_left, pips)
_X_DRAW_FITS = 25.8  # ... times the chance that the tile drawn answers (draw_fits)
_X_DRAW_INSTEAD = 10.0  # drawing although a non-matador tile could be placed
_JITTER = 1.5  # uniform noise, so that playouts of one world differ


def policy_weights() -> list[float]:
    """The rollout policy's weights in the order the compiled playouts take them
    (``matador_env.batch._playouts.PW_*``), read when called."""
    return [
        _X_PIP,
        _X_MAT,
        _X_ZERO_ZERO,
        _X_DOUBLE,
        _X_BLANK,
        _X_FORCE,
        _X_BLOCK,
        _X_FOLLOW,
        _X_VARIETY,
        _X_ZERO_END,
        _X_DRAW,
        _X_DRAW_FITS,
        _X_DRAW_INSTEAD,
        _JITTER,
    ]


def search_spec(rules: Rules) -> str:
    """The search the project measures under ``rules``: the strength matrix's
    (``benchmarks.strength.SEARCH_SPECS``) and, where it fits the 20-minute budget,
    the training recipe's teacher (``train.run.recipe_teacher``). 64 worlds with one
    hidden hand; 256 with several, where a world tells less and more of them measured
    stronger: 256 against 64 worlds, +3.15 against +1.90 points per hand over expert
    on standard_3p, +1.93 against +1.60 on standard_4p, +3.00 against +2.03 on
    pagat_teams (seed 94, 1,000 deals each), at about 5 ms a move on double-six."""
    return "search:samples=64" if rules.players == 2 else "search:samples=256"


@functools.cache
def batch_playouts_available() -> bool:
    """Whether the compiled playouts can run (``numba`` is installed)."""
    try:
        import matador_env.batch  # noqa: F401
    except ImportError:
        if interrupted():  # Ctrl-C during the import, not numba missing (cached!)
            raise KeyboardInterrupt from None
        return False
    return True


SLOW_LOAD_NOTE = f"search: compiling its playout kernels ({NUMBA_FIRST_USE})"
"""What :func:`load_compiled_playouts` says when the kernels take long to load."""


@functools.cache
def load_compiled_playouts() -> None:
    """Deal worlds and play them out once, small, so that numba loads the kernels of
    both (from its cache on disk: about 0.35 s, once a process, whatever the rules)
    now and not inside the first move, where the arena counted it as that move's
    time: a few percent of the search's time per move in the strength matrix.
    :class:`SearchAgent` calls it when it is built. With numba's cache cold (a fresh
    install) the kernels compile first, about half a minute, which a line on the error
    stream says after two seconds."""
    from matador_env.batch import WorldPlayouts

    with note_when_slow(SLOW_LOAD_NOTE):
        # Three seats: the worlds of two hidden hands are dealt by a kernel of their own.
        hand = HandState.deal(Rules(players=3), 0)
        view = hand.view(hand.to_move)  # the lead: a choice of every tile held
        knowledge = Knowledge(view)
        moves = list(view.legal_moves[:2])
        runner = WorldPlayouts(view, policy_weights())
        worlds = knowledge.sample_many(random.Random(0), 1)
        runner.run(worlds, [runner.enc.index[m] for m in moves], 1, 0)


@functools.cache
def _miss(unseen: int, drawn: int) -> tuple[float, ...]:
    """``_miss(u, k)[a]``: the chance that ``k`` tiles drawn from ``u`` miss ``a`` given ones."""
    total = math.comb(unseen, drawn)
    return tuple(math.comb(unseen - a, drawn) / total for a in range(unseen + 1))


def rollout_move(s: HandState, tb: Tables, rng: random.Random, out: int | None = None) -> Move:
    """The rollout policy's move in ``s``: the expert's terms, from the mover's knowledge.

    ``out``: the tiles on the table (worked out from ``s`` when not given).
    """
    moves = s.legal_moves()
    if len(moves) == 1:
        return moves[0]
    seat = s.to_move
    hand = s.hand_mask(seat)
    if out is None:
        out = tb.mask_of(s.layout)
    unseen = tb.full & ~hand & ~out
    unseen_reg = unseen & tb.regular
    miss = _miss(unseen.bit_count(), s.hand_sizes[(seat + 1) % tb.n])
    shut = _X_FORCE + _X_BLOCK * miss[(unseen & tb.matador).bit_count()]
    pips = tb.pips
    mat = tb.matador
    reg = tb.regular
    double = tb.double
    blank = tb.blank
    accepts = tb.accepts
    halves = tb.halves
    cross_blank = tb.cross_blank
    end_ans = tb.end_answers
    ends = s.ends
    answers = [end_ans(e) for e in ends]
    zeros = [1 if (e[1] == 0 or e[1] is None) else 0 for e in ends]
    all_ans = 0
    for a in answers:
        all_ans |= a
    nzero = sum(zeros)
    # How many of the hand's regular tiles hold each half: the end values answered.
    count = [0] * (tb.S)
    for k in bits(hand & reg):
        for h in halves[k]:
            count[h] += 1
    variety = sum(1 for c in count if c)
    rand = rng.random
    best = moves[0]
    best_score = -1e9
    for m in moves:
        kind = m[0]
        if kind == "play":
            lo, hi = m[1]  # type: ignore[misc]
            i = hi * (hi + 1) // 2 + lo
            bit = 1 << i
            left = hand & ~bit
            if not left:
                return m
            sc = _X_PIP * pips[i] + _JITTER * rand()
            var = variety
            if mat & bit:
                sc -= _X_MAT
                if i == 0:
                    sc -= _X_ZERO_ZERO
            else:
                for h in halves[i]:
                    if count[h] == 1:
                        var -= 1
                if double & bit:
                    sc += _X_DOUBLE
                elif blank & bit:
                    sc -= _X_BLANK
            mode = m[4]
            j = m[2]
            if mode == "inline":
                shows = m[3]
                fit = accepts[shows]  # type: ignore[index]
                z = nzero - zeros[j] + (1 if shows == 0 else 0)  # type: ignore[index]
            elif mode == "lead":
                fit = accepts[lo] | accepts[hi]
                z = 0
            elif mode == "upright" or cross_blank:
                fit = blank
                z = nzero - zeros[j] + 1  # type: ignore[index]
            else:
                fit = accepts[lo] | accepts[hi]
                z = nzero - zeros[j]  # type: ignore[index]
            if j is not None:
                for k, a in enumerate(answers):
                    if k != j:
                        fit |= a
            sc += shut * miss[(fit & unseen_reg).bit_count()]
            mine = (fit & left & reg).bit_count()
            sc += _X_FOLLOW * (mine if mine < 3 else 3) + _X_VARIETY * var + _X_ZERO_END * z
        elif kind == "draw":
            sc = _X_DRAW + _JITTER * rand()
            if any(p[0] == "play" and not (mat >> p[1].index) & 1 for p in moves):  # type: ignore[union-attr]
                sc -= _X_DRAW_INSTEAD  # "always": drawing although a tile could be placed
            sc += _X_DRAW_FITS * (all_ans & unseen).bit_count() / max(unseen.bit_count(), 1)
            sc += shut * miss[(all_ans & unseen_reg).bit_count()]
            mine = (all_ans & hand & reg).bit_count()
            sc += _X_FOLLOW * (mine if mine < 3 else 3) + _X_VARIETY * variety + _X_ZERO_END * nzero
        else:
            sc = -1e9
        if sc > best_score:
            best_score = sc
            best = m
    return best


def rollout(s: HandState, tb: Tables, rng: random.Random) -> Outcome:
    """Play ``s`` to the end of the hand with the rollout policy."""
    out = tb.mask_of(s.layout)
    while s.outcome is None:
        move = rollout_move(s, tb, rng, out)
        if move[0] == "play":
            out |= 1 << move[1].index  # type: ignore[union-attr]
        s = s.apply(move)
    return s.outcome


def utility(outcome: Outcome, side: int, sides: int) -> float:
    """Points to ``side`` minus the mean of what the other sides score."""
    ws = outcome.winning_side
    if ws is None:
        return 0.0
    if ws == side:
        return float(outcome.points)
    return -outcome.points / (sides - 1)


class LineRollout:
    """Playouts on bit masks, for rules whose open ends are plain numbers.

    With no spinner and matadors laid in line (:meth:`applies`), an open end is
    just the number it shows, so a state is a few integers: the hands, the ends,
    the boneyard and the counts of draws and passes. The rules played here are the
    engine's (placements by rule 4, matadors anywhere with either half outward,
    drawing until playable or as ``draw_rule`` limits, the boneyard reserve,
    voluntary draws, matadors held back until stuck, passes and blocks, every
    blocked scoring); the policy is :func:`rollout_move`'s.
    """

    @staticmethod
    def applies(rules: Rules) -> bool:
        """Whether the rules' ends are plain numbers (and no matador is held back
        by the way it is laid, as ``matador_as_regular`` with
        ``matador_only_when_stuck`` would)."""
        return (
            rules.spinner == "none"
            and rules.matador_placement == "inline"
            and not (rules.matador_only_when_stuck and rules.matador_as_regular)
        )

    def __init__(self, tb: Tables) -> None:
        rules = tb.rules
        assert self.applies(rules)
        self.tb = tb
        self.low = tuple(t.low for t in tb.tiles)
        self.high = tuple(t.high for t in tb.tiles)
        self.side_of = tuple(rules.side_of(s) for s in range(tb.n))
        self.sides = rules.sides
        self.draw_limit = rules.draw_limit
        self.reserve = rules.boneyard_reserve
        self.voluntary = rules.voluntary_draw
        self.only_when_stuck = rules.matador_only_when_stuck
        self.scoring = rules.blocked_scoring
        # The terms of a placement that depend on the tile alone.
        self.static = tuple(
            _X_PIP * t.pips
            - (
                _X_MAT + (_X_ZERO_ZERO if i == 0 else 0.0)
                if (tb.matador >> i) & 1
                else -_X_DOUBLE
                if t.is_double
                else _X_BLANK
                if (tb.blank >> i) & 1
                else 0.0
            )
            for i, t in enumerate(tb.tiles)
        )
        # Each matador with the numbers it may show outward (one for a double).
        self.matador_shows = tuple(
            (i, (self.low[i],) if self.low[i] == self.high[i] else (self.low[i], self.high[i]))
            for i in bits(tb.matador)
        )

    def utility(self, hands: list[int], side: int, domino: int | None = None) -> float:
        """:func:`utility` of the hand ended with ``hands`` (by ``domino``'s seat going
        out, or else blocked)."""
        pips = self.tb.pips
        counts = [0] * self.sides
        for s, h in enumerate(hands):
            c = 0
            while h:
                low = h & -h
                c += pips[low.bit_length() - 1]
                h ^= low
            counts[self.side_of[s]] += c
        if domino is not None:
            won = self.side_of[domino]
            points = sum(counts) - counts[won]
        else:
            low = min(counts)
            if counts.count(low) > 1:
                return 0.0  # a tie: void or redealt, nobody scores
            won = counts.index(low)
            points = blocked_points(self.scoring, low, sum(counts) - low)
        if won == side:
            return float(points)
        return -points / (self.sides - 1)

    def rollout(
        self,
        hands: list[int],
        ends: list[int],
        stock: list[int],
        pos: int,
        to_move: int,
        draws: int,
        out: int,
        side: int,
        rng: random.Random,
    ) -> float:
        """Play to the end of the hand from a state after a placement or a draw; the
        result for ``side``. ``hands`` and ``ends`` are changed in place; ``stock[pos:]``
        is the boneyard, ``draws`` the draws of ``to_move`` this turn, ``out`` the
        tiles on the table."""
        tb = self.tb
        n = tb.n
        S = tb.S
        low_of = self.low
        high_of = self.high
        static = self.static
        mat = tb.matador
        reg = tb.regular
        accepts = tb.accepts
        halves = tb.halves
        full = tb.full
        matador_shows = self.matador_shows
        voluntary = self.voluntary
        draw_limit = self.draw_limit
        reserve = self.reserve
        nstock = len(stock)
        rand = rng.random
        ne = len(ends)
        passes = 0
        while True:
            seat = to_move
            hand = hands[seat]
            can_draw = draws < draw_limit and nstock - pos > reserve
            answers = list(map(accepts.__getitem__, ends))
            all_ans = 0
            for a in answers:
                all_ans |= a
            regs = hand & all_ans
            mats = hand & mat
            if not regs and not mats:
                if can_draw:
                    hands[seat] = hand | (1 << stock[pos])
                    pos += 1
                    draws += 1
                    passes = 0
                    continue
                passes += 1
                draws = 0
                to_move = (seat + 1) % n
                if passes >= n:
                    return self.utility(hands, side)
                continue
            if self.only_when_stuck and regs:
                mats = 0
            if not hand & (hand - 1):  # the last tile, and it fits: domino
                hands[seat] = 0
                return self.utility(hands, side, seat)
            options = []  # (tile, end, value shown)
            for j in range(ne):
                m = hand & answers[j]
                need = S - ends[j]
                while m:
                    low = m & -m
                    i = low.bit_length() - 1
                    m ^= low
                    options.append((i, j, high_of[i] if low_of[i] == need else low_of[i]))
                if mats:
                    for i, shows_all in matador_shows:
                        if (mats >> i) & 1:
                            for shows in shows_all:
                                options.append((i, j, shows))
            may_draw = can_draw and (
                voluntary == "always" or (voluntary == "only_matadors" and not regs)
            )
            best: tuple[int, int, int] | None = options[0]  # None: draw
            if len(options) > 1 or may_draw:
                # The policy of rollout_move, term by term (see the _X_ weights).
                unseen = full & ~hand & ~out
                unseen_reg = unseen & reg
                miss = _miss(unseen.bit_count(), hands[(seat + 1) % n].bit_count())
                shut = _X_FORCE + _X_BLOCK * miss[(unseen & mat).bit_count()]
                zeros = [1 if v == 0 else 0 for v in ends]
                nzero = sum(zeros)
                others = []
                for j in range(ne):
                    o = 0
                    for k in range(ne):
                        if k != j:
                            o |= answers[k]
                    others.append(o)
                count = [0] * S
                h = hand & reg
                while h:
                    low = h & -h
                    for x in halves[low.bit_length() - 1]:
                        count[x] += 1
                    h ^= low
                variety = S - count.count(0)
                best_score = -1e18
                for option in options:
                    i, j, shows = option
                    bit = 1 << i
                    sc = static[i] + _JITTER * rand()
                    var = variety
                    for x in halves[i]:  # none for a matador
                        if count[x] == 1:
                            var -= 1
                    fit = accepts[shows] | others[j]
                    sc += shut * miss[(fit & unseen_reg).bit_count()]
                    mine = (fit & hand & ~bit & reg).bit_count()
                    sc += (
                        _X_FOLLOW * (mine if mine < 3 else 3)
                        + _X_VARIETY * var
                        + _X_ZERO_END * (nzero - zeros[j] + (1 if shows == 0 else 0))
                    )
                    if sc > best_score:
                        best_score = sc
                        best = option
                if may_draw:
                    sc = _X_DRAW + _JITTER * rand()
                    if regs:
                        sc -= _X_DRAW_INSTEAD
                    sc += _X_DRAW_FITS * (all_ans & unseen).bit_count() / max(unseen.bit_count(), 1)
                    sc += shut * miss[(all_ans & unseen_reg).bit_count()]
                    mine = (all_ans & hand & reg).bit_count()
                    sc += (
                        _X_FOLLOW * (mine if mine < 3 else 3)
                        + _X_VARIETY * variety
                        + _X_ZERO_END * nzero
                    )
                    if sc > best_score:
                        best = None
            if best is None:
                hands[seat] = hand | (1 << stock[pos])
                pos += 1
                draws += 1
                passes = 0
                continue
            i, j, shows = best
            hands[seat] = hand & ~(1 << i)
            out |= 1 << i
            ends[j] = shows
            passes = 0
            draws = 0
            to_move = (seat + 1) % n


def _plain_values(ends: tuple[End, ...]) -> list[int]:
    """The numbers that open ends show, under rules where each shows one
    (:meth:`LineRollout.applies`)."""
    values = [e.value for e in ends]
    assert all(v is not None for v in values), ends
    return values  # type: ignore[return-value]


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


@dataclass(frozen=True)
class SearchResult:
    """One decision of :meth:`SearchAgent.search`."""

    move: Move
    """The chosen move."""
    candidates: list[Move]
    """The moves played out, in the expert's order."""
    means: list[float]
    """Each candidate's mean playout result (the searcher's side's points minus the
    mean of the other sides')."""
    worlds: list[int]
    """The worlds each candidate was played in: successive halving plays those it
    drops early in fewer, so their means are noisier and may exceed a survivor's."""

    def ranked_means(self) -> list[float]:
        """The means, each capped by those of the candidates that outlasted it, so a
        candidate dropped early never ranks above one that stayed in the search."""
        out = list(self.means)
        for i, w in enumerate(self.worlds):
            later = [m for m, v in zip(self.means, self.worlds, strict=True) if v > w]
            if later:
                out[i] = min(out[i], min(later))
        return out


class SearchAgent(Agent):
    """PIMC: sampled worlds consistent with the view, every candidate played out in each."""

    name = "search"

    def __init__(
        self,
        samples: int = 64,
        playouts: int = 1,
        width: int = 6,
        halving: int | bool = 1,
        fast: int | bool = 1,
    ) -> None:
        """Each argument is an integer in the range its spec option allows
        (:data:`_RANGES`): a float such as 2.5 or a str is refused here with
        ``TypeError``, a value out of range with ``ValueError``, never mid-game. The
        two flags, ``halving`` and ``fast``, take True and False as 1 and 0 too; a
        count does not (``samples=True`` is no count)."""
        samples = checked_count("SearchAgent", "samples", samples, *_RANGES["samples"])
        playouts = checked_count("SearchAgent", "playouts", playouts, *_RANGES["playouts"])
        width = checked_count("SearchAgent", "width", width, *_RANGES["width"])
        halving = _checked_flag("halving", halving)
        fast = _checked_flag("fast", fast)
        self.samples = samples
        self.playouts = playouts
        self.width = width
        self.halving = halving
        self.fast = bool(fast) and batch_playouts_available()
        """Compiled batch playouts (needs numba); else bit masks or the engine."""
        if self.fast:
            load_compiled_playouts()
        # The candidates are ordered by the base weights, the set the rollout policy's
        # constants above come from, under every rules: the search (and the bots that
        # cloned it) were measured with that order.
        self.expert = ExpertAgent(ExpertWeights())
        # Without numba the playouts are others (fast=0): the name says so, so that a
        # report never gives such a run's figures under the compiled search's name.
        self.name = f"search:samples={samples},playouts={playouts},width={width}"
        if not self.fast:
            self.name += ",fast=0"
        self.spec = (
            f"search:samples={samples},playouts={playouts},width={width},"
            f"halving={halving},fast={int(self.fast)}"
        )

    def act(self, view: SeatView, rng: random.Random) -> Move:
        moves = checked_turn(view, rng, self.name)
        if len(moves) == 1:
            return moves[0]
        return self._search(view, rng).move

    def evaluate(self, view: SeatView, rng: random.Random) -> tuple[Move, list[tuple[Move, float]]]:
        """The chosen move, and each candidate with its mean playout result."""
        result = self.search(view, rng)
        return result.move, list(zip(result.candidates, result.means, strict=True))

    def search(self, view: SeatView, rng: random.Random) -> SearchResult:
        """The whole decision: the chosen move, the candidates, their mean playout
        results and the worlds each was played in (fewer for those dropped early).
        A view with no move to make is refused as :meth:`act` refuses it."""
        checked_turn(view, rng, self.name)
        return self._search(view, rng)

    def _search(self, view: SeatView, rng: random.Random) -> SearchResult:
        """:meth:`search` of a view already checked (:meth:`act` checks it once)."""
        kn = Knowledge(view)
        moves = list(view.legal_moves)
        prior = self.expert.scores(view, kn)
        order = sorted(range(len(moves)), key=lambda i: -prior[i])
        cands = [moves[i] for i in _distinct(kn, moves, order)[: self.width]]
        if len(cands) == 1:
            return SearchResult(cands[0], cands, [0.0], [0])
        batch = self._batch_playouts(kn, cands) if self.fast else None
        playout = None
        if batch is None:
            playout = self._line_playouts(kn, cands) or self._engine_playouts(kn, cands)
        sums = [0.0] * len(cands)
        worlds = [0] * len(cands)

        def play(alive: list[int], count: int) -> None:
            if batch is not None:
                # Every world of the round, each with every live candidate, in one batch.
                sampled = kn.sample_many(rng, count)
                values = batch(sampled, alive, rng.getrandbits(63))
                for c, i in enumerate(alive):
                    sums[i] += float(values[:, c].sum())
                    worlds[i] += count
                return
            assert playout is not None
            for _ in range(count):
                hands, rest = kn.sample_masks(rng)
                seed = rng.getrandbits(63)
                for i in alive:
                    sums[i] += playout(i, hands, rest, seed)
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
        return SearchResult(cands[best], cands, means, worlds)

    def _batch_playouts(self, kn: Knowledge, cands: list[Move]) -> _BatchPlayout:
        """Playouts on the compiled batch engine (any rules)."""
        from matador_env.batch import WorldPlayouts

        view = kn.view
        runner = WorldPlayouts(view, policy_weights())
        index = runner.enc.index
        actions = [index[m] for m in cands]
        playouts = self.playouts

        def run(worlds: list[tuple[list[int], list[int]]], alive: list[int], seed: int) -> Any:
            return runner.run(worlds, [actions[i] for i in alive], playouts, seed)

        return run

    def _line_playouts(self, kn: Knowledge, cands: list[Move]) -> _Playout | None:
        """Playouts on bit masks (:class:`LineRollout`), where the rules allow them."""
        view = kn.view
        rules = view.rules
        if not LineRollout.applies(rules):
            return None
        if not view.ends and any(m.kind != "play" for m in cands):
            return None  # a draw before the lead: LineRollout starts once a tile is down
        line = _LINES.get(rules)
        if line is None:
            line = _LINES[rules] = LineRollout(kn.tb)
        me = view.seat
        side = rules.side_of(me)
        after_me = (me + 1) % kn.n
        drawn = view.draws_this_turn + 1
        ends_now = _plain_values(view.ends)
        # A placement leaves the same ends in every world: worked out once.
        world = kn.any_world()
        starts = [
            (m.tile.index, _plain_values(world.apply(m).ends))  # type: ignore[union-attr]
            if m.kind == "play"
            else (-1, ends_now)
            for m in cands
        ]
        playouts = self.playouts

        def playout(i: int, hands: list[int], rest: list[int], seed: int) -> float:
            tile, ends = starts[i]
            r = random.Random(seed)
            acc = 0.0
            for _ in range(playouts):
                hs = list(hands)
                if tile < 0:  # a draw: the top of the boneyard comes into the hand
                    hs[me] |= 1 << rest[0]
                    acc += line.rollout(hs, list(ends), rest, 1, me, drawn, kn.layout, side, r)
                    continue
                hs[me] &= ~(1 << tile)
                if not hs[me]:
                    acc += line.utility(hs, side, me)
                    continue
                out = kn.layout | (1 << tile)
                acc += line.rollout(hs, list(ends), rest, 0, after_me, 0, out, side, r)
            return acc / playouts

        return playout

    def _engine_playouts(self, kn: Knowledge, cands: list[Move]) -> _Playout:
        """Playouts through the engine's ``HandState`` (any rules)."""
        view = kn.view
        rules = view.rules
        tb = kn.tb
        side = rules.side_of(view.seat)
        sides = rules.sides
        tiles = tb.tiles
        playouts = self.playouts
        # The worlds of one round are shared by the candidates: built once per world.
        cache: dict[int, HandState] = {}

        def playout(i: int, hands: list[int], rest: list[int], seed: int) -> float:
            world = cache.get(seed)
            if world is None:
                cache.clear()
                world = cache[seed] = HandState.from_view(
                    view,
                    [tuple(tiles[k] for k in bits(h)) for h in hands],
                    [tiles[k] for k in rest],
                )
            after = world.apply(cands[i])
            r = random.Random(seed)
            acc = 0.0
            for _ in range(playouts):
                acc += utility(rollout(after, tb, r), side, sides)
            return acc / playouts

        return playout


_Playout = Callable[[int, list[int], list[int], int], float]
_BatchPlayout = Callable[[list[tuple[list[int], list[int]]], list[int], int], Any]
_LINES: dict[Rules, LineRollout] = {}


# The most worlds, playouts per world or candidates a search takes: some 40 times the
# largest budget ever measured (2,048 worlds), minutes a move. Beyond some size a
# budget no longer fits numpy's arrays or its integers, and fails mid-game.
MAX_BUDGET = 100_000

# Each option's range, (least, most): the spec's and the constructor's alike. halving
# and fast are flags, written 0 or 1.
_RANGES: dict[str, tuple[int, int | None]] = {
    "samples": (1, MAX_BUDGET),
    "playouts": (1, MAX_BUDGET),
    "width": (1, MAX_BUDGET),
    "halving": (0, 1),
    "fast": (0, 1),
}


def _checked_flag(key: str, value: object) -> int:
    """A flag of the constructor as the 0 or 1 its spec writes, a bool included
    (``fast=False`` is a natural call), which a refusal of another type says."""
    if isinstance(value, bool):
        return int(value)
    return checked_count("SearchAgent", key, value, *_RANGES[key], types=_FLAG_TYPES)


_FLAG_TYPES = "an int, a numpy integer or a 0-d integer array; or Python's True or False"


def _build(options: dict[str, str]) -> Agent:
    values: dict[str, int] = {}
    for key, raw in options.items():
        if key not in _RANGES:
            raise AgentSpecError(
                f"search has no option {key!r}; options: {', '.join(_RANGES)} "
                "(e.g. search:samples=32,playouts=2,width=6)"
            )
        least, most = _RANGES[key]
        if most == least + 1:  # a flag
            if raw not in (str(least), str(most)):
                raise AgentSpecError(f"search option {key}={raw!r}: expected {least} or {most}")
            values[key] = int(raw)
        else:
            values[key] = spec_count("search", key, raw, least, most)
    return SearchAgent(**values)


register("search", _build, "search[:samples=N,playouts=N,width=N,halving=0|1,fast=0|1]")
