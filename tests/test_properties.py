"""Property tests (tier two): random legal play under every preset and many other rule sets.

Hypothesis draws a deal seed and a seed for the move choices; each hand is played to
its end while an independent model of RULES.md, written here from the rules text and
not from the engine, follows every action. At every step the engine must agree with
the model on where every tile is, on the open ends, on whose turn it is and on the
full set of legal moves; every placement must link by the rules in force; text forms
must round-trip; a seat's view must not change when the hidden tiles are reshuffled.
At the end the outcome must be the one RULES.md scores, and the hand record must
replay to the same state. Matches are played to their end and their totals checked.

A failure message carries the hand record of the failing hand, so that
``parse_hand_record(text).replay()`` reproduces it.
"""

from __future__ import annotations

import copy
import pickle
import random
from collections import Counter
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from matador_env.engine import (
    BLANK,
    BRANCH,
    CROSS,
    DRAW,
    PASS,
    PLAIN,
    PRESETS,
    SPINNER,
    End,
    Event,
    HandState,
    IllegalMoveError,
    MatchState,
    Move,
    Outcome,
    Rules,
    RulesError,
    Tile,
    hand_record,
    parse_hand_record,
    replay,
)

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)

# -- the rule sets under test -------------------------------------------------------------


def _configs() -> dict[str, Rules]:
    configs = {name: Rules.preset(name) for name in PRESETS}
    configs.update(
        {
            # players and partnerships
            "standard-p3": Rules(players=3),
            "standard-p4": Rules(players=4),
            "pagat-p4-teams": Rules.preset("pagat", players=4, teams=True),
            "teams-others_plus_own": Rules(
                players=4, teams=True, blocked_scoring="others_plus_own", draw_rule="one"
            ),
            "kardinal-p3": Rules.preset("kardinal", players=3),
            "kardinal-p4-teams": Rules.preset("kardinal", players=4, teams=True),
            "polish-p3": Rules.preset("polish", players=3),
            "polish-p4-teams": Rules.preset("polish", players=4, teams=True),
            "leiden-p3": Rules.preset("leiden", players=3),
            # hand_size
            "all-p2": Rules(hand_size="all"),
            "all-p3": Rules(players=3, hand_size="all"),
            "all-p4-teams": Rules(players=4, teams=True, hand_size="all"),
            "all-leiden-p3": Rules.preset("leiden", players=3, hand_size="all"),
            "hand4-p2": Rules(hand_size=4, boneyard_reserve=0),
            # every matador_placement
            "inline-p3": Rules(players=3, matador_placement="inline"),
            "crosswise_choice": Rules(matador_placement="crosswise_choice"),
            "crosswise_choice-9-p4": Rules(
                set_max=9, players=4, matador_placement="crosswise_choice"
            ),
            "crosswise_on_blank": Rules(matador_placement="crosswise_on_blank"),
            "crosswise_on_blank-p3": Rules(players=3, matador_placement="crosswise_on_blank"),
            "upright": Rules(matador_placement="upright"),
            "branching": Rules(matador_placement="branching"),
            "branching-9-p3": Rules(set_max=9, players=3, matador_placement="branching"),
            # spinners
            "first_double": Rules(spinner="first_double"),
            "first_double-upright": Rules(spinner="first_double", matador_placement="upright"),
            "first_double-crosswise_choice": Rules(
                spinner="first_double", matador_placement="crosswise_choice"
            ),
            "first_double-crosswise_on_blank-9": Rules(
                set_max=9, spinner="first_double", matador_placement="crosswise_on_blank"
            ),
            "first_double-branching-p3": Rules(
                players=3, spinner="first_double", matador_placement="branching"
            ),
            "lead_double_cross-p4-one": Rules(
                players=4,
                lead_tile="double_not_blank",
                spinner="lead_double_cross",
                draw_rule="one",
            ),
            # matador_as_regular / matador_only_when_stuck
            "as_regular": Rules(matador_as_regular=True),
            "as_regular-upright": Rules(matador_as_regular=True, matador_placement="upright"),
            "as_regular-upright-stuck": Rules(
                matador_as_regular=True, matador_placement="upright", matador_only_when_stuck=True
            ),
            "as_regular-stuck": Rules(matador_as_regular=True, matador_only_when_stuck=True),
            "as_regular-branching-stuck-9": Rules(
                set_max=9,
                matador_as_regular=True,
                matador_placement="branching",
                matador_only_when_stuck=True,
            ),
            "stuck": Rules(matador_only_when_stuck=True),
            "stuck-crosswise_on_blank": Rules(
                matador_only_when_stuck=True, matador_placement="crosswise_on_blank"
            ),
            "stuck-crosswise_choice-p3": Rules(
                players=3, matador_only_when_stuck=True, matador_placement="crosswise_choice"
            ),
            # drawing
            "draw-one": Rules(draw_rule="one"),
            "draw-none": Rules(draw_rule="none"),
            "draw-none-p3": Rules(players=3, draw_rule="none"),
            "draw-up_to_two-reserve0": Rules(draw_rule="up_to_two", boneyard_reserve=0),
            "voluntary-always": Rules(voluntary_draw="always", boneyard_reserve=0),
            "voluntary-always-one-p3": Rules(players=3, voluntary_draw="always", draw_rule="one"),
            "voluntary-never": Rules(voluntary_draw="never"),
            "reserve5": Rules(boneyard_reserve=5),
            # leads, ties and scoring
            "lead-highest_double": Rules(lead_tile="highest_double", first_leader="highest_double"),
            "lead-double_not_blank-none": Rules(lead_tile="double_not_blank", draw_rule="none"),
            "lead-double_not_blank-p3": Rules(players=3, lead_tile="double_not_blank"),
            "tie-redeal-p3": Rules(players=3, tie="redeal", blocked_scoring="others"),
            "others_plus_own-p3": Rules(players=3, blocked_scoring="others_plus_own"),
            # bigger and smaller sets
            "double_nine-p5-h8": Rules.preset("double_nine", players=5, hand_size=8),
            "double_nine-p5-h8-upright-first_double": Rules.preset(
                "double_nine",
                players=5,
                hand_size=8,
                matador_placement="upright",
                spinner="first_double",
            ),
            "double_twelve-p6-h9-branching": Rules.preset(
                "double_twelve", players=6, hand_size=9, matador_placement="branching"
            ),
            "double_three-h3": Rules(set_max=3, hand_size=3),
            "double_four-p3-h3-draw-none": Rules(
                set_max=4, players=3, hand_size=3, draw_rule="none"
            ),
            # set sizes, seat counts and hand sizes no preset uses
            "double_five-h1": Rules(set_max=5, hand_size=1),
            "double_seven-p7-h2-crosswise_on_blank": Rules(
                set_max=7, players=7, hand_size=2, matador_placement="crosswise_on_blank"
            ),
            "double_eleven-h4-upright-stuck": Rules(
                set_max=11,
                hand_size=4,
                matador_placement="upright",
                matador_only_when_stuck=True,
            ),
            "double_fifteen-p8-h12-lead_double_cross": Rules(
                set_max=15,
                players=8,
                hand_size=12,
                lead_tile="double_not_blank",
                spinner="lead_double_cross",
            ),
        }
    )
    return configs


CONFIGS = _configs()
CONFIG_IDS = list(CONFIGS)

# Matches: every preset and a few settings that change leaders, ties and teams.
MATCH_CONFIGS: dict[str, Rules] = {name: Rules.preset(name) for name in PRESETS}
MATCH_CONFIGS.update(
    {
        "kardinal-p3": Rules.preset("kardinal", players=3),
        "pagat-p4-teams": Rules.preset("pagat", players=4, teams=True),
        "leiden-p3": Rules.preset("leiden", players=3),
        "winner-p3": Rules(players=3, next_leader="winner", target_score=60),
        "loser-p4-teams": Rules(players=4, teams=True, next_leader="loser", target_score=60),
        "tie-redeal-p3-small": Rules(
            set_max=4, players=3, hand_size=3, tie="redeal", next_leader="loser", target_score=30
        ),
        "void-small-winner": Rules(set_max=3, hand_size=3, next_leader="winner", target_score=20),
        "no_lead-redeal": Rules(lead_tile="double_not_blank", draw_rule="none", target_score=50),
        "complete_round-p3": Rules(players=3, match_end="complete_round", target_score=50),
    }
)


def test_every_preset_is_covered() -> None:
    for name in PRESETS:
        assert CONFIGS[name] == Rules.preset(name)
        assert MATCH_CONFIGS[name] == Rules.preset(name)
    placements = {r.matador_placement for r in CONFIGS.values()}
    assert placements == {
        "inline",
        "crosswise_choice",
        "crosswise_on_blank",
        "upright",
        "branching",
    }


# -- an independent model of RULES.md ---------------------------------------------------------


def link_sum(rules: Rules) -> int:
    return rules.set_max + 1


def placed_tile(move: Move) -> Tile:
    """The tile of a placement (the model asks only placements for theirs)."""
    assert move.tile is not None, f"{move} places no tile"
    return move.tile


def is_matador(rules: Rules, tile: Tile) -> bool:
    """0-0 and every tile whose pips are S."""
    return tile.low + tile.high in (0, link_sum(rules))


def side_of(rules: Rules, seat: int) -> int:
    return seat % 2 if rules.teams else seat


def lead_result(rules: Rules, tile: Tile) -> tuple[End, ...]:
    """The open ends after the lead: two in line, or four for a spinner double."""
    if rules.spinner != "none" and tile.low == tile.high:
        return (End(SPINNER, tile.low),) * 4
    return (End(PLAIN, tile.low), End(PLAIN, tile.high))


def allowed_leads(rules: Rules, hand: Iterable[Tile]) -> set[Tile]:
    """The tiles the leader may lead by ``lead_tile``."""
    hand = set(hand)
    doubles = {t for t in hand if t.low == t.high}
    if rules.lead_tile == "highest_double":
        return {max(doubles, key=lambda t: t.low)} if doubles else hand
    if rules.lead_tile == "double_not_blank":
        return {t for t in doubles if t.low > 0}
    return hand


def links_by_sum(rules: Rules, end: End, tile: Tile, shows: int) -> bool:
    """Rule 4 for an in-line tile showing ``shows``: the touching half sums to S with the
    end (either value of a crosswise two-valued end); a needs-a-blank end has no value."""
    if shows not in (tile.low, tile.high):
        return False
    touching = tile.low + tile.high - shows
    S = link_sum(rules)
    if end.kind == BLANK:
        return False
    assert end.value is not None, f"end {end} shows no value"
    if end.kind == CROSS:
        assert end.value2 is not None, f"crosswise end {end} has no second value"
        return touching + end.value == S or touching + end.value2 == S
    return touching + end.value == S


def attach(
    rules: Rules, ends: tuple[End, ...], move: Move, spinner_pending: bool
) -> tuple[End, ...] | None:
    """What a placement on an open end turns that end into, or None if it does not link.

    Written from RULES.md alone: ``ends`` are the open ends before the move (an
    :class:`Event`'s ``ends``), ``spinner_pending`` says that spinner="first_double" and
    no double has been placed yet.
    """
    if move.kind != "play" or move.mode not in ("inline", "cross", "upright"):
        return None
    if move.end is None or not 0 <= move.end < len(ends):
        return None
    tile, mode = move.tile, move.mode
    if tile is None or tile.high > rules.set_max or tile.low > tile.high:
        return None
    end = ends[move.end]
    if (
        rules.spinner == "lead_double_cross"
        and end.kind != SPINNER
        and any(e.kind == SPINNER for e in ends)
    ):
        return None  # the cross must be full first
    if mode == "inline" and move.shows not in (tile.low, tile.high):
        return None
    if mode != "inline" and move.shows is not None:
        return None
    matador = is_matador(rules, tile)
    blank_tile_on_blank = end.kind == BLANK and mode == "inline" and move.shows == tile.high
    blank_tile_on_blank = blank_tile_on_blank and tile.low == 0
    double = tile.low == tile.high
    if spinner_pending and double:
        # The first double lies as a spinner (before matador_placement): it turns the end
        # into three sides showing its value. A regular double must link; a matador
        # double goes on any end.
        linked = matador or links_by_sum(rules, end, tile, tile.low) or blank_tile_on_blank
        if mode == "inline" and move.shows == tile.low and linked:
            return (End(SPINNER, tile.low),) * 3
        return None
    if not matador:
        if mode != "inline":
            return None
        assert move.shows is not None  # an in-line move shows a half of its tile (above)
        if links_by_sum(rules, end, tile, move.shows) or blank_tile_on_blank:
            return (End(PLAIN, move.shows),)
        return None
    inline = (End(PLAIN, move.shows),) if mode == "inline" else None
    placement = rules.matador_placement
    shows_zero = end.kind != BLANK and end.value == 0
    if placement == "inline":
        return inline
    if placement == "crosswise_choice":
        if mode == "cross":
            if tile.high == 0 or end.kind == CROSS:
                return None  # no crosswise 0-0; a crosswise end takes an in-line tile
            return (End(CROSS, tile.low, tile.high),)
        return inline
    if placement == "crosswise_on_blank":
        if shows_zero:
            # On an end showing 0 a matador lies crosswise; the end then needs a blank.
            return (End(BLANK, None),) if mode == "cross" else None
        return inline
    if placement == "upright":
        if mode == "upright":
            return (End(BLANK, None),)
        if mode == "inline":
            assert move.shows is not None  # an in-line move shows a half of its tile (above)
            if end.kind == BLANK and tile.high == 0:
                return inline  # 0-0 answers a needs-a-blank end as a blank tile
            if rules.matador_as_regular and links_by_sum(rules, end, tile, move.shows):
                return inline
        return None
    if placement == "branching":
        if mode == "cross":
            if end.kind == BRANCH:
                return None  # no second crosswise matador on an open branch
            return (End(BRANCH, tile.low), End(BRANCH, tile.high))
        return inline
    raise AssertionError(f"unknown matador_placement {placement!r}")


def spinner_pending_after(rules: Rules, history: Iterable[Event]) -> bool:
    placed = (placed_tile(e.move) for e in history if e.move.kind == "play")
    return rules.spinner == "first_double" and not any(t.low == t.high for t in placed)


def candidate_moves(tile: Tile, n_ends: int) -> list[Move]:
    out = []
    for i in range(n_ends):
        out.append(Move.inline(tile, i, tile.low))
        if tile.high != tile.low:
            out.append(Move.inline(tile, i, tile.high))
        out.append(Move.cross(tile, i))
        out.append(Move.upright(tile, i))
    return out


def formula_points(rules: Rules, outcome: Outcome) -> int:
    """RULES.md rules 9 and 10, recomputed from the outcome's counts."""
    counts = outcome.counts
    sides: Counter[int] = Counter()
    for seat, c in enumerate(counts):
        sides[side_of(rules, seat)] += c
    if outcome.termination == "domino":
        assert outcome.winner is not None
        won = side_of(rules, outcome.winner)
        return sum(c for side, c in sides.items() if side != won)
    assert outcome.winning_side is not None
    own = sides[outcome.winning_side]
    others = sum(sides.values()) - own
    return {
        "others_minus_own": others - own,
        "others": others,
        "others_plus_own": others + own,
    }[rules.blocked_scoring]


class RefHand:
    """One hand followed action by action, from RULES.md and the deal alone."""

    def __init__(self, rules: Rules, hands: Iterable[Iterable[Tile]], boneyard, leader: int):
        self.rules = rules
        self.n = rules.players
        self.hands = [set(h) for h in hands]
        self.boneyard = list(boneyard)
        self.layout: list[Tile] = []
        self.ends: tuple[End, ...] = ()
        self.to_move = leader
        self.leader = leader
        self.draws = 0
        self.passes = 0
        self.lead_passes = 0
        self.spinner_pending = rules.spinner == "first_double"
        self.result: tuple[str, int | None] | None = None

    @classmethod
    def resume(
        cls,
        rules: Rules,
        hands: Iterable[Iterable[Tile]],
        boneyard: Iterable[Tile],
        history: Iterable[Event],
        dealt_leader: int,
    ) -> RefHand:
        """The model of a hand in progress, rebuilt from the public history: the open ends
        by folding :func:`attach` over the placements, the counters from the actions."""
        ref = cls(rules, (), boneyard, dealt_leader)
        ref.hands = [set(h) for h in hands]
        n = rules.players
        for e in history:
            move = e.move
            assert e.seat == ref.to_move and e.ends == ref.ends
            if move.kind == "draw":
                ref.draws += 1
                ref.passes = 0
                continue
            ref.draws = 0
            if move.kind == "pass":
                ref.passes += 1
                ref.to_move = (e.seat + 1) % n
                if not ref.ends:
                    ref.lead_passes += 1
                    ref.leader = ref.to_move
                continue
            ref.passes = 0
            tile = placed_tile(move)
            ref.layout.append(tile)
            if not ref.ends:
                ref.ends = lead_result(rules, tile)
                ref.leader = e.seat
            else:
                repl = attach(rules, ref.ends, move, ref.spinner_pending)
                assert repl is not None, f"{move} does not link to {ref.ends}"
                assert move.end is not None  # attach refuses a move with no end
                ref.ends = ref.ends[: move.end] + repl + ref.ends[move.end + 1 :]
            if tile.low == tile.high:
                ref.spinner_pending = False
            ref.to_move = (e.seat + 1) % n
        return ref

    @property
    def over(self) -> bool:
        return self.result is not None

    def can_draw(self) -> bool:
        limit = {"until_playable": float("inf"), "up_to_two": 2, "one": 1, "none": 0}
        return (
            self.draws < limit[self.rules.draw_rule]
            and len(self.boneyard) > self.rules.boneyard_reserve
        )

    def placements(self) -> set[Move]:
        rules, hand = self.rules, self.hands[self.to_move]
        if not self.ends:
            return {Move.lead(t) for t in allowed_leads(rules, hand)}
        moves = {
            m
            for t in hand
            for m in candidate_moves(t, len(self.ends))
            if attach(rules, self.ends, m, self.spinner_pending) is not None
        }
        if rules.matador_only_when_stuck and any(
            not is_matador(rules, placed_tile(m)) for m in moves
        ):
            # Matadors only when no other tile can be placed; a matador laid in line as
            # an ordinary tile (matador_as_regular) is a regular tile.
            def regular_in_line(m: Move) -> bool:
                if not (rules.matador_as_regular and m.mode == "inline"):
                    return False
                assert m.end is not None and m.shows is not None
                return links_by_sum(rules, self.ends[m.end], placed_tile(m), m.shows)

            moves = {
                m for m in moves if not is_matador(rules, placed_tile(m)) or regular_in_line(m)
            }
        return moves

    def legal(self) -> set[Move]:
        if self.over:
            return set()
        moves = self.placements()
        if not moves:
            return {DRAW} if self.can_draw() else {PASS}
        voluntary = self.rules.voluntary_draw
        if self.can_draw() and (
            voluntary == "always"
            or (
                voluntary == "only_matadors"
                and self.ends
                and all(is_matador(self.rules, placed_tile(m)) for m in moves)
            )
        ):
            moves.add(DRAW)
        return moves

    def apply(self, move: Move) -> None:
        assert move in self.legal(), f"model: {move} is not legal"
        seat, n = self.to_move, self.n
        if move.kind == "draw":
            self.hands[seat].add(self.boneyard.pop(0))
            self.draws += 1
            self.passes = 0
            return
        self.draws = 0
        if move.kind == "pass":
            self.passes += 1
            self.to_move = (seat + 1) % n
            if not self.ends:
                self.lead_passes += 1
                self.leader = self.to_move
                if self.lead_passes >= n:
                    self.result = ("no_lead", None)
            elif self.passes >= n:
                self.result = ("blocked", None)
            return
        tile = placed_tile(move)
        self.hands[seat].remove(tile)
        self.layout.append(tile)
        self.passes = 0
        if not self.ends:
            self.ends = lead_result(self.rules, tile)
            self.leader = seat
        else:
            repl = attach(self.rules, self.ends, move, self.spinner_pending)
            assert repl is not None
            assert move.end is not None  # attach refuses a move with no end
            self.ends = self.ends[: move.end] + repl + self.ends[move.end + 1 :]
        if tile.low == tile.high:
            self.spinner_pending = False
        if not self.hands[seat]:
            self.result = ("domino", seat)
        else:
            self.to_move = (seat + 1) % n

    def outcome(self) -> Outcome:
        assert self.result is not None
        rules = self.rules
        counts = tuple(sum(t.low + t.high for t in h) for h in self.hands)
        term, seat = self.result
        if term == "no_lead":
            return Outcome("no_lead", None, None, 0, counts)
        if term == "domino":
            assert seat is not None
            side = side_of(rules, seat)
            points = sum(c for s, c in enumerate(counts) if side_of(rules, s) != side)
            return Outcome("domino", seat, side, points, counts)
        side_counts = [0] * (2 if rules.teams else self.n)
        for s, c in enumerate(counts):
            side_counts[side_of(rules, s)] += c
        low = min(side_counts)
        lowest = [side for side, c in enumerate(side_counts) if c == low]
        if len(lowest) > 1:
            term = "void_tie" if rules.tie == "void" else "redeal_tie"
            return Outcome(term, None, None, 0, counts)
        side = lowest[0]
        others = sum(side_counts) - low
        points = {
            "others_minus_own": others - low,
            "others": others,
            "others_plus_own": others + low,
        }[rules.blocked_scoring]
        members = [s for s in range(self.n) if side_of(rules, s) == side]
        winner = min(members, key=lambda s: (counts[s], s))
        return Outcome("blocked", winner, side, points, counts)


def expected_first_leader(rules: Rules, hands: Iterable[Iterable[Tile]]) -> int:
    """first_leader="highest_double": the holder of the highest double, else of the
    heaviest tile (ties to the higher high half)."""
    where = {t: seat for seat, h in enumerate(hands) for t in h}
    doubles = [t for t in where if t.low == t.high]
    if doubles:
        best = max(doubles, key=lambda t: t.low)
    else:
        best = max(where, key=lambda t: (t.low + t.high, t.high))
    return where[best]


# -- helpers ---------------------------------------------------------------------------------


def record_of(state: HandState) -> str:
    try:
        return "\n" + hand_record(state)
    except Exception as exc:  # the record itself may be what is broken
        return f"\n(no hand record: {exc!r}) moves: {' '.join(map(str, state.moves))}"


def check_conservation(state: HandState, ref: RefHand) -> None:
    rules = state.rules
    everywhere = Counter(t for h in state.hands for t in h)
    everywhere.update(state.boneyard)
    everywhere.update(state.layout)
    full = Counter(Tile(lo, hi) for hi in range(rules.set_max + 1) for lo in range(hi + 1))
    assert everywhere == full, (
        f"tiles lost or duplicated: extra {everywhere - full}, missing {full - everywhere}"
        + record_of(state)
    )
    assert [set(h) for h in state.hands] == ref.hands, "hands differ from the model" + record_of(
        state
    )
    assert list(state.boneyard) == ref.boneyard, "boneyard differs from the model"
    assert list(state.layout) == ref.layout, "layout differs from the model"
    assert state.hand_sizes == tuple(len(h) for h in ref.hands)
    assert state.boneyard_size == len(ref.boneyard)


def check_text_forms(state: HandState, legal: tuple[Move, ...]) -> None:
    for m in legal:
        text = str(m)
        parsed = Move.parse(text)
        assert parsed == m, f"Move.parse({text!r}) gave {parsed!r}, expected {m!r}"
        assert str(parsed) == text
    for e in state.ends:
        assert End.parse(str(e)) == e, f"End.parse({str(e)!r}) != {e!r}"
    for t in state.hand(state.to_move):
        assert Tile.parse(str(t)) == t
        assert Tile.parse(f"{t.high}-{t.low}") == t


def check_view_hides(state: HandState, seat: int, rng: random.Random) -> None:
    """Reshuffle every tile the seat cannot see (other hands, boneyard), keeping sizes:
    the seat's view, and its legal moves when it is to move, must not change."""
    view = state.view(seat)
    n = state.rules.players
    pool = [t for s in range(n) if s != seat for t in state.hand(s)] + list(state.boneyard)
    rng.shuffle(pool)
    hands, k = [], 0
    for s in range(n):
        if s == seat:
            hands.append(state.hand(s))
        else:
            size = len(state.hand(s))
            hands.append(tuple(pool[k : k + size]))
            k += size
    boneyard = pool[k:]
    other = HandState.from_view(view, hands, boneyard)
    assert other.view(seat) == view, (
        f"seat {seat}'s view changed when hidden tiles were reshuffled" + record_of(state)
    )
    if seat == state.to_move and not state.is_over:
        assert set(other.legal_moves()) == set(state.legal_moves())
        assert view.legal_moves == state.legal_moves()
    else:
        assert view.legal_moves == ()
    # Nothing in the view names a tile the seat cannot see.
    known = set(view.hand) | set(view.layout)
    named = {e.move.tile for e in view.history if e.move.tile is not None}
    named |= {m.tile for m in view.legal_moves if m.tile is not None}
    assert named <= known, f"the view names hidden tiles {named - known}"
    assert all(e.move == DRAW for e in view.history if e.move.kind == "draw")
    # With the true hidden tiles, the view rebuilds the very state.
    assert HandState.from_view(view, state.hands, state.boneyard) == state


def check_record_round_trip(state: HandState) -> None:
    text = hand_record(state)
    record = parse_hand_record(text)
    assert record.rules == state.rules
    again = record.replay()
    assert again == state, "hand record does not replay to the same state" + "\n" + text
    assert again.hands == state.hands
    assert again.boneyard == state.boneyard
    assert again.ends == state.ends
    assert again.history == state.history
    assert again.outcome == state.outcome
    assert hand_record(again) == text
    assert replay(state.rules, state.seed, state.dealt_leader, state.moves) == state


# -- the hand properties ---------------------------------------------------------------------


def deal_checked(rules: Rules, deal_seed: int) -> tuple[HandState, RefHand]:
    """Deal, check the deal, and start the model from it."""
    state = HandState.deal(rules, deal_seed)
    n = rules.players
    assert state.hand_sizes == rules.tiles_per_seat
    assert state.boneyard_size == rules.boneyard_size
    if rules.hand_size == "all":
        total = rules.tile_count
        assert state.hand_sizes == tuple(total // n + (s < total % n) for s in range(n))
    if rules.first_leader == "highest_double":
        assert state.to_move == expected_first_leader(rules, state.hands)
    return state, RefHand(rules, state.hands, state.boneyard, state.to_move)


def play_checked(state: HandState, ref: RefHand, rng: random.Random) -> HandState:
    """Play random legal moves to the end of the hand, checking every step against the
    model; returns the final state."""
    rules = state.rules
    n = rules.players
    bound = (2 * rules.tile_count + 1) * n
    while True:
        check_conservation(state, ref)
        assert state.ends == ref.ends, (
            f"open ends {state.ends} differ from the model's {ref.ends}" + record_of(state)
        )
        legal = state.legal_moves()
        if ref.over:
            break
        assert not state.is_over, f"the hand ended early: {state.outcome}" + record_of(state)
        assert state.to_move == ref.to_move
        assert state.leader == ref.leader
        assert state.draws_this_turn == ref.draws
        assert legal, "no legal move before the end of the hand" + record_of(state)
        assert len(set(legal)) == len(legal), f"duplicate legal moves {legal}"
        if PASS in legal:
            assert legal == (PASS,), f"pass offered with other moves {legal}"
        expected = ref.legal()
        assert set(legal) == expected, (
            "legal moves differ from RULES.md: engine only "
            f"{sorted(map(str, set(legal) - expected))}, "
            f"RULES.md only {sorted(map(str, expected - set(legal)))}; ends {ref.ends}, "
            f"hand {sorted(map(str, ref.hands[ref.to_move]))}" + record_of(state)
        )
        check_text_forms(state, legal)
        if rng.random() < 0.15:
            check_view_hides(state, rng.randrange(n), rng)
        if rng.random() < 0.05:
            # An illegal move raises IllegalMoveError and changes nothing.
            tiles = [t for h in state.hands for t in h]
            wrong = [
                m
                for t in rng.sample(tiles, min(3, len(tiles)))
                for m in candidate_moves(t, max(1, len(state.ends))) + [Move.lead(t)]
                if m not in legal
            ] + [m for m in (DRAW, PASS) if m not in legal]
            if wrong:
                with pytest.raises(IllegalMoveError):
                    state.apply(rng.choice(wrong))
                assert state.legal_moves() == legal
        move = rng.choice(legal)
        seat = state.to_move
        before = state
        state = state.apply(move)
        event = state.history[-1]
        assert event == Event(seat, move, before.ends)
        assert len(state.history) == state.n_actions == before.n_actions + 1
        if move.kind == "play":
            if event.ends:
                pending = spinner_pending_after(rules, before.history)
                assert attach(rules, event.ends, move, pending) is not None, (
                    f"{move} does not link to {event.ends}" + record_of(state)
                )
            else:
                assert move.mode == "lead" and move.tile in allowed_leads(rules, before.hand(seat))
        ref.apply(move)
        assert state.n_actions <= bound, f"more than {bound} actions" + record_of(state)
    # The end of the hand.
    assert state.is_over, "the model ended the hand, the engine did not" + record_of(state)
    assert legal == ()
    outcome = state.outcome
    assert outcome == ref.outcome(), (
        f"outcome {outcome!r}, RULES.md gives {ref.outcome()!r}" + record_of(state)
    )
    assert outcome.points >= 0
    assert outcome.counts == state.counts()
    if outcome.termination in ("domino", "blocked"):
        assert outcome.winner is not None
        assert outcome.winning_side == side_of(rules, outcome.winner)
        assert outcome.points == formula_points(rules, outcome)
    else:
        assert outcome.winner is None and outcome.winning_side is None and outcome.points == 0
    sides = 2 if rules.teams else n
    assert sum(outcome.side_points(sides)) == outcome.points
    assert all(p >= 0 for p in outcome.side_points(sides))
    with pytest.raises(IllegalMoveError):
        state.apply(PASS)
    return state


def play_checked_hand(rules: Rules, deal_seed: int, choice_seed: int) -> HandState:
    state, ref = deal_checked(rules, deal_seed)
    final = play_checked(state, ref, random.Random(choice_seed))
    assert final.dealt() == state
    return final


@pytest.mark.parametrize("rules", list(CONFIGS.values()), ids=CONFIG_IDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(deal_seed=SEEDS, choice_seed=SEEDS)
def test_random_hand_follows_rules(rules: Rules, deal_seed: int, choice_seed: int) -> None:
    """Conservation, links, legal moves, bounds, text forms, views and the outcome."""
    play_checked_hand(rules, deal_seed, choice_seed)


@pytest.mark.parametrize("rules", list(CONFIGS.values()), ids=CONFIG_IDS)
@settings(max_examples=5, deadline=None)
@given(deal_seed=SEEDS, choice_seed=SEEDS, cut=st.floats(0, 1))
def test_hand_record_replays(rules: Rules, deal_seed: int, choice_seed: int, cut: float) -> None:
    """hand_record -> parse_hand_record -> replay() gives the same state, mid-hand and at
    the end; views at the cut are unchanged by reshuffled hidden tiles for every seat."""
    state = HandState.deal(rules, deal_seed)
    rng = random.Random(choice_seed)
    states = [state]
    while not state.is_over:
        state = state.apply(rng.choice(state.legal_moves()))
        states.append(state)
    middle = states[int(cut * (len(states) - 1))]
    for s in (middle, state):
        check_record_round_trip(s)
        for seat in range(rules.players):
            check_view_hides(s, seat, rng)


@pytest.mark.parametrize("rules", list(CONFIGS.values()), ids=CONFIG_IDS)
@settings(max_examples=5, deadline=None)
@given(deal_seed=SEEDS, choice_seed=SEEDS)
def test_pickled_and_copied_states_play_on_alike(
    rules: Rules, deal_seed: int, choice_seed: int
) -> None:
    """pickle and deepcopy give a state with the same legal moves at every step (the
    engine compares end kinds by identity, so an unpickled kind must be the constant)."""
    state = HandState.deal(rules, deal_seed)
    rng = random.Random(choice_seed)
    while not state.is_over:
        for copied in (pickle.loads(pickle.dumps(state)), copy.deepcopy(state)):
            assert copied.legal_moves() == state.legal_moves()
            assert copied.ends == state.ends
        state = state.apply(rng.choice(state.legal_moves()))
    assert pickle.loads(pickle.dumps(state)).outcome == state.outcome


@pytest.mark.parametrize("rules", list(CONFIGS.values()), ids=CONFIG_IDS)
@settings(max_examples=5, deadline=None)
@given(deal_seed=SEEDS, choice_seed=SEEDS, cut=st.floats(0, 1))
def test_state_from_view_plays_on(
    rules: Rules, deal_seed: int, choice_seed: int, cut: float
) -> None:
    """A state sampled with HandState.from_view (hidden tiles reshuffled) is a hand that
    continues by the rules: the model, rebuilt from the public history alone, follows it
    to the end."""
    rng = random.Random(choice_seed)
    state = HandState.deal(rules, deal_seed)
    states = [state]
    while not state.is_over:
        state = state.apply(rng.choice(state.legal_moves()))
        states.append(state)
    cut_state = states[int(cut * (len(states) - 1))]
    if cut_state.is_over:
        return
    seat = rng.randrange(rules.players)
    view = cut_state.view(seat)
    n = rules.players
    pool = [t for s in range(n) if s != seat for t in cut_state.hand(s)]
    pool += list(cut_state.boneyard)
    rng.shuffle(pool)
    hands, k = [], 0
    for s in range(n):
        size = len(cut_state.hand(s))
        hands.append(cut_state.hand(s) if s == seat else tuple(pool[k : k + size]))
        k += 0 if s == seat else size
    sampled = HandState.from_view(view, hands, pool[k:])
    ref = RefHand.resume(
        rules, sampled.hands, sampled.boneyard, view.history, cut_state.dealt_leader
    )
    assert ref.ends == view.ends
    play_checked(sampled, ref, rng)


# -- text forms ----------------------------------------------------------------------------


@given(a=st.integers(0, 15), b=st.integers(0, 15))
@settings(max_examples=100, deadline=None)
def test_tile_text_round_trips(a: int, b: int) -> None:
    t = Tile.of(a, b)
    assert Tile.parse(str(t)) == t
    assert Tile.parse(f"{b}-{a}") == t
    assert str(Tile.parse(str(t))) == str(t)


ENDS = st.one_of(
    st.integers(0, 15).map(lambda v: End(PLAIN, v)),
    st.integers(0, 15).map(lambda v: End(SPINNER, v)),
    st.integers(0, 15).map(lambda v: End(BRANCH, v)),
    st.tuples(st.integers(0, 15), st.integers(0, 15)).map(lambda vs: End(CROSS, *vs)),
    st.just(End(BLANK, None)),
)


@given(end=ENDS)
@settings(max_examples=100, deadline=None)
def test_end_text_round_trips(end: End) -> None:
    assert End.parse(str(end)) == end
    assert str(End.parse(str(end))) == str(end)


MOVES = st.one_of(
    st.just(DRAW),
    st.just(PASS),
    st.builds(lambda a, b: Move.lead(Tile.of(a, b)), st.integers(0, 15), st.integers(0, 15)),
    st.builds(
        lambda a, b, i, hi: Move.inline(Tile.of(a, b), i, max(a, b) if hi else min(a, b)),
        st.integers(0, 15),
        st.integers(0, 15),
        st.integers(0, 20),
        st.booleans(),
    ),
    st.builds(lambda a, b, i: Move.cross(Tile.of(a, b), i), *[st.integers(0, 15)] * 3),
    st.builds(lambda a, b, i: Move.upright(Tile.of(a, b), i), *[st.integers(0, 15)] * 3),
)


@given(move=MOVES)
@settings(max_examples=200, deadline=None)
def test_move_text_round_trips(move: Move) -> None:
    assert Move.parse(str(move)) == move
    assert str(Move.parse(str(move))) == str(move)


RULES_FIELDS = {
    "set_max": st.integers(3, 15),
    "players": st.integers(2, 6),
    "teams": st.booleans(),
    "hand_size": st.one_of(st.sampled_from(["by_players", "all"]), st.integers(1, 12)),
    "first_leader": st.sampled_from(["random", "highest_double"]),
    "lead_tile": st.sampled_from(["any", "highest_double", "double_not_blank"]),
    "next_leader": st.sampled_from(["rotate", "loser", "winner"]),
    "draw_rule": st.sampled_from(["until_playable", "up_to_two", "one", "none"]),
    "boneyard_reserve": st.integers(0, 5),
    "voluntary_draw": st.sampled_from(["only_matadors", "never", "always"]),
    "matador_placement": st.sampled_from(
        ["inline", "crosswise_choice", "crosswise_on_blank", "upright", "branching"]
    ),
    "matador_as_regular": st.booleans(),
    "matador_only_when_stuck": st.booleans(),
    "spinner": st.sampled_from(["none", "first_double", "lead_double_cross"]),
    "blocked_scoring": st.sampled_from(["others_minus_own", "others", "others_plus_own"]),
    "tie": st.sampled_from(["void", "redeal"]),
    "target_score": st.integers(1, 500),
    "match_end": st.sampled_from(["first_to_target", "complete_round"]),
}


@given(fields=st.fixed_dictionaries({}, optional=RULES_FIELDS))
@settings(max_examples=300, deadline=None)
def test_rules_text_round_trips(fields: dict) -> None:
    try:
        rules = Rules(**fields)
    except RulesError:
        return
    assert Rules.from_text(rules.to_text()) == rules
    assert Rules.from_dict(rules.to_dict()) == rules


@given(fields=st.fixed_dictionaries({}, optional=RULES_FIELDS), deal_seed=SEEDS, choice_seed=SEEDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_rules_hand_follows_rules(fields: dict, deal_seed: int, choice_seed: int) -> None:
    """Any valid configuration (up to a double-nine set), not only the listed ones."""
    fields = {**fields, "set_max": min(fields.get("set_max", 6), 9)}
    try:
        rules = Rules(**fields)
    except RulesError:
        return
    play_checked_hand(rules, deal_seed, choice_seed)


@pytest.mark.parametrize("rules", list(CONFIGS.values()), ids=CONFIG_IDS)
def test_config_text_round_trips(rules: Rules) -> None:
    assert Rules.from_text(rules.to_text()) == rules


# -- matches --------------------------------------------------------------------------------


def expected_next_leader(rules: Rules, hand: HandState) -> int:
    """RULES.md next_leader, tie and lead_tile, from the finished hand's public record."""
    outcome = hand.outcome
    assert outcome is not None  # the hand is finished
    n = rules.players
    plays = [e for e in hand.history if e.move.kind == "play"]
    placed_lead = plays[0].seat if plays else None
    counts = outcome.counts
    if outcome.termination == "no_lead":
        return hand.history[0].seat if hand.history else hand.dealt_leader
    assert placed_lead is not None  # every other ending follows a placed lead
    if outcome.termination == "redeal_tie":
        return placed_lead
    if rules.next_leader == "rotate":
        return (placed_lead + 1) % n
    if outcome.termination == "void_tie":
        if rules.next_leader == "winner":
            return placed_lead
        return max(range(n), key=lambda s: (counts[s], -s))
    if rules.next_leader == "winner":
        assert outcome.winner is not None  # a domino or a block has a winner
        return outcome.winner
    losers = [s for s in range(n) if side_of(rules, s) != outcome.winning_side]
    return max(losers, key=lambda s: (counts[s], -s))


@pytest.mark.parametrize("rules", list(MATCH_CONFIGS.values()), ids=list(MATCH_CONFIGS))
@settings(max_examples=20, deadline=None)
@given(seed=SEEDS, choice_seed=SEEDS)
def test_match_totals(rules: Rules, seed: int, choice_seed: int) -> None:
    """A match played to its end: totals are non-negative sums of the hands' side points,
    leaders follow next_leader, and the match ends exactly when match_end says."""
    match = MatchState.new(rules, seed)
    rng = random.Random(choice_seed)
    sides = 2 if rules.teams else rules.players
    totals = [0] * sides
    leads = [0] * rules.players
    for deal in range(1, 2000):
        assert match.deals == deal
        while not match.hand_over:
            match = match.apply(rng.choice(match.legal_moves()))
        outcome = match.hand.outcome
        assert match.outcomes[-1] == outcome and len(match.outcomes) == deal
        assert outcome.points >= 0
        for side, p in enumerate(outcome.side_points(sides)):
            totals[side] += p
        assert list(match.totals) == totals
        assert all(t >= 0 for t in match.totals)
        if outcome.termination not in ("no_lead", "redeal_tie"):
            placed = next(e.seat for e in match.hand.history if e.move.kind == "play")
            leads[placed] += 1
        top = max(totals)
        if rules.match_end == "first_to_target":
            should_end = top >= rules.target_score
        else:
            # Once a total is above the target (totals never fall), play on until every
            # seat has led equally often; redealt hands do not count.
            should_end = (
                top > rules.target_score
                and outcome.termination not in ("no_lead", "redeal_tie")
                and len(set(leads)) == 1
            )
        assert match.is_over == should_end, (
            f"match over={match.is_over}, expected {should_end}: totals {totals}, leads {leads}"
        )
        if match.is_over:
            break
        finished = match.hand
        match = match.next_hand()
        assert match.hand.dealt_leader == expected_next_leader(rules, finished)
        assert match.hand.n_actions == 0
    else:
        pytest.fail("the match did not end in 2000 deals")
    assert match.is_over
    assert match.winners == tuple(s for s, t in enumerate(totals) if t == max(totals))
    assert tuple(totals) == tuple(
        sum(ps) for ps in zip(*(o.side_points(sides) for o in match.outcomes), strict=True)
    )
    with pytest.raises(IllegalMoveError):
        match.apply(PASS)


def scoring_hands_bound(rules: Rules) -> int:
    """The most hands that score before the match ends (first_to_target) or a total is
    strictly above the target (complete_round): every scoring hand gives at least one
    point, so after this many some side's total has got there (the pigeonhole bound)."""
    sides = 2 if rules.teams else rules.players
    if rules.match_end == "first_to_target":
        return sides * (rules.target_score - 1) + 1
    return sides * rules.target_score + 1


@given(
    fields=st.fixed_dictionaries(
        {},
        optional={
            **RULES_FIELDS,
            "set_max": st.integers(3, 9),
            "target_score": st.integers(1, 120),
        },
    ),
    seed=SEEDS,
    choice_seed=SEEDS,
)
@example(
    fields={"lead_tile": "double_not_blank", "players": 4, **PRESETS["kardinal"]},
    seed=1,
    choice_seed=1,
)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_allowed_match_ends_within_its_bound(
    fields: dict, seed: int, choice_seed: int
) -> None:
    """Issue #14, defect 1: under any configuration Rules accepts, a match of random legal
    moves ends. At most scoring_hands_bound(rules) hands score before the target is
    reached (complete_round: passed); after that, complete_round plays at most
    players - 1 more counted hands, since with next_leader="rotate" and a lead that never
    passes the counted hands' leads go round the table. Hands that score nothing (ties,
    redeals) are not bounded by the rules, only by chance: 20,000 deals is the cap."""
    try:
        rules = Rules(**fields)
    except RulesError:
        return
    match = MatchState.new(rules, seed)
    rng = random.Random(choice_seed)
    scoring = counted_after_target = 0
    for _ in range(20_000):
        target_passed = match.armed  # complete_round: a total was above the target already
        while not match.hand_over:
            match = match.apply(rng.choice(match.legal_moves()))
        outcome = match.hand.outcome
        assert outcome is not None
        if target_passed:
            counted_after_target += not outcome.redeal
            assert counted_after_target <= rules.players - 1, (
                f"{counted_after_target} counted hands after the target, leads {match.leads}"
            )
        elif outcome.points > 0:
            scoring += 1
            assert scoring <= scoring_hands_bound(rules), (scoring, match.totals)
        if match.is_over:
            return
        match = match.next_hand()
    pytest.fail(f"no end after 20,000 deals: totals {match.totals}, leads {match.leads}")
