"""The agents: the registry of specs, legal play on every rules variant, the public-information
inference and sampling behind the search, the expert's strategy in scripted positions,
the search's strength and reproducibility, and the mechanics of both: the search's values
and choices where every world is known, the worlds it plays out, the expert's terms."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import agents.search as search_module
from agents import (
    AgentSpecError,
    ExpertAgent,
    GreedyAgent,
    RandomAgent,
    SearchAgent,
    known_specs,
    make_agent,
)
from agents.expert import FEATURES, ExpertWeights, fitted_weights
from agents.knowledge import Constraint, Knowledge, bits, regular_fit, tables
from matador_env.configs import configuration
from matador_env.engine import PRESETS, HandState, Move, Outcome, Rules, Tile
from tests.notes import record_notes
from tests.scripted import deal

# Every preset, plus the rules options no preset sets and the larger tables.
VARIANTS: dict[str, Rules] = {name: Rules.preset(name) for name in PRESETS}
VARIANTS.update(
    {
        "pagat_teams": Rules.preset("pagat", players=4, teams=True),
        "standard_3p": Rules.preset("standard", players=3),
        "kardinal_4p": Rules.preset("kardinal", players=4),
        "polish_3p_regular": Rules.preset("polish", players=3, matador_as_regular=True),
        "crosswise_choice": Rules(matador_placement="crosswise_choice"),
        "crosswise_on_blank": Rules(matador_placement="crosswise_on_blank", draw_rule="one"),
        "first_double_spinner": Rules(spinner="first_double", voluntary_draw="always"),
        "deal_all_no_draw": Rules(hand_size="all", draw_rule="none", lead_tile="highest_double"),
    }
)

TINY_SEARCH = "search:samples=2,width=3"


def tile(text: str) -> Tile:
    return Tile.parse(text)


# -- the registry ---------------------------------------------------------------------------


def test_known_specs_build_their_agents() -> None:
    names = [s.split("[")[0].split(":")[0] for s in known_specs()]
    assert names == ["random", "greedy", "expert", "policy", "bot", "search"]
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("greedy"), GreedyAgent)
    assert isinstance(make_agent("expert"), ExpertAgent)
    agent = make_agent("search:samples=8,playouts=2,width=4,halving=0")
    assert isinstance(agent, SearchAgent)
    assert (agent.samples, agent.playouts, agent.width, agent.halving) == (8, 2, 4, 0)
    assert make_agent(" expert:matador=12 ").weights_for(Rules()).matador == 12.0  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("nope", "unknown agent 'nope'"),
        ("policy:path/to/file", "no exported policy at path/to/file"),
        ("search:samples", "malformed agent spec"),
        ("search:=3", "malformed agent spec"),
        # An option given twice: which one counts would be a guess.
        (
            "search:samples=2,samples=3",
            "malformed agent spec 'search:samples=2,samples=3': option 'samples' is given twice",
        ),
        ("expert:matador=1, matador=2", "option 'matador' is given twice"),
        ("policy:matador_env/bots/standard,foo=1", "policy has no option 'foo'; options: sample"),
        ("policy:sample=true", "policy spec: give the exported policy's path"),
        # Only the first option may be positional.
        ("policy:matador_env/bots/standard,sample", "malformed agent spec"),
        ("search:16", "malformed agent spec 'search:16': search takes key=value options (search["),
        ("search:samples=many", "expected an integer"),
        ("search:samples=0", "samples=0: must be from 1 to 100,000"),
        # Budgets beyond numpy's arrays and integers failed mid-game; refused here.
        ("search:samples=100001", "samples=100001: must be from 1 to 100,000"),
        ("search:playouts=" + "9" * 23, "playouts=" + "9" * 23 + ": must be from 1 to 100,000"),
        ("search:samples=-3", "samples='-3': expected an integer from 1 to 100,000 in the digits"),
        ("search:samples=１６", "samples='１６': expected an integer from 1 to 100,000 in"),
        ("search:width=+4", "width='+4': expected an integer from 1 to 100,000 in the digits 0-9"),
        ("search:playouts=1_0", "playouts='1_0': expected an integer from 1 to 100,000"),
        ("search:halving=-1", "search option halving='-1': expected 0 or 1"),
        ("search:halving=5", "search option halving='5': expected 0 or 1"),
        ("search:fast=7", "search option fast='7': expected 0 or 1"),
        ("search:fast=１", "search option fast='１': expected 0 or 1"),
        ("search:depth=2", "search has no option 'depth'"),
        ("random:seed=1", "takes no options"),
        ("expert:matador=lots", "expected a number"),
        ("expert:partner=nan", "expert option partner='nan': expected a number (finite"),
        ("expert:partner=inf", "expert option partner='inf': expected a number (finite"),
        ("expert:partner=-inf", "expert option partner='-inf': expected a number (finite"),
        ("expert:partner=1e400", "expert option partner='1e400': expected a number (finite"),
        ("expert:partner=１", "expert option partner='１': expected a number (finite"),
        ("expert:partner=1_0", "expert option partner='1_0': expected a number (finite"),
        ("expert:courage=1", "expert has no option 'courage'"),
        ("expert:weights=", "expert option weights='': expected fitted (the set fitted"),
        (
            "policy:matador_env/bots/standard,sample=maybe",
            "policy option sample='maybe': expected true or false",
        ),
    ],
)
def test_bad_specs_are_refused_with_the_known_specs(spec: str, says: str) -> None:
    with pytest.raises(AgentSpecError) as info:
        make_agent(spec)
    message = str(info.value)
    assert says in message
    assert isinstance(info.value, ValueError)
    if "unknown" in says or "malformed" in says:
        for known in known_specs():
            assert known in message


def test_spec_numbers_in_the_digits_0_to_9_are_read() -> None:
    expert = make_agent("expert:partner=-2.5,force=1e1,block=.5,follow=+3")
    weights = expert.weights_for(Rules())  # type: ignore[attr-defined]
    assert (weights.partner, weights.force, weights.block, weights.follow) == (-2.5, 10, 0.5, 3)
    agent = make_agent("search:samples=016,halving=0,fast=1")
    assert isinstance(agent, SearchAgent)
    assert (agent.samples, agent.halving) == (16, 0)


@pytest.mark.parametrize(
    ("raw", "sample"),
    [("true", True), ("YES", True), ("1", True), ("false", False), ("No", False), ("0", False)],
)
def test_policy_sample_takes_the_booleans(raw: str, sample: bool) -> None:
    agent = make_agent(f"policy:matador_env/bots/standard,sample={raw}")
    assert agent.sample is sample  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("random", " random "),
        ("random", "random:"),
        ("search", "search:samples=64"),
        ("search:samples=16", "search:width=6,samples=16,halving=1,fast=1,playouts=1"),
        ("expert", "expert:weights=fitted"),
        ("expert:partner=8", "expert:partner=8.0"),
        ("expert:weights=base", f"expert:weights=base,partner={ExpertWeights().partner}"),
        ("policy:matador_env/bots/standard", "policy:matador_env/bots/standard/policy.onnx"),
        ("policy:matador_env/bots/standard", "policy:matador_env/bots/standard,sample=no"),
    ],
)
def test_two_spellings_of_one_player_share_the_canonical_spec(one: str, other: str) -> None:
    assert make_agent(one).spec == make_agent(other).spec


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("random", "greedy"),
        ("search", "search:samples=32"),
        ("search", "search:halving=0"),
        ("expert", "expert:weights=base"),
        ("expert", "expert:partner=8"),
        ("policy:matador_env/bots/standard", "policy:matador_env/bots/standard,sample=true"),
    ],
)
def test_other_players_have_other_canonical_specs(one: str, other: str) -> None:
    assert make_agent(one).spec != make_agent(other).spec


# -- legal play everywhere ------------------------------------------------------------------


def _play_checked(rules: Rules, seed: int, specs: list[str]) -> HandState:
    """Play one hand, checking every move against the seat's legal moves."""
    agents = [make_agent(s) for s in specs]
    rng = random.Random(seed)
    state = HandState.deal(rules, seed)
    while not state.is_over:
        seat = state.to_move
        view = state.view(seat)
        move = agents[seat].act(view, rng)
        assert isinstance(move, Move)
        assert move in view.legal_moves, (specs[seat], str(move), state)
        state = state.apply(move)
    return state


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_agent_plays_only_legal_moves(variant: str) -> None:
    rules = VARIANTS[variant]
    n = rules.players
    pool = ["random", "greedy", "expert", TINY_SEARCH]
    # Each agent takes a seat in every deal of a 4-seat table and in half of a 2-seat one.
    deals = 200 if n == 2 else 100
    if rules.set_max > 9:
        deals //= 4  # double-twelve hands are four times as long
    seats_played = dict.fromkeys(pool, 0)
    for k in range(deals):
        specs = [pool[(k + s) % len(pool)] for s in range(n)]
        state = _play_checked(rules, 10_000 + k, specs)
        assert state.outcome is not None
        for s in specs:
            seats_played[s] += 1
    # Seat k+s of deal k rotates through the pool: every agent plays n * (deals // 4) seats.
    assert min(seats_played.values()) >= n * (deals // len(pool))


# -- what a seat can know ---------------------------------------------------------------------


def _position(rules: Rules, hands: list[list[str]], moves: list[str], first: tuple = ()):
    """A deal with the given hands (the boneyard: ``first``, then the rest in index
    order), after ``moves``; seat 0 leads."""
    dealt = {str(tile(t)) for h in hands for t in h} | set(first)
    rest = [str(t) for t in tables(rules).tiles if str(t) not in dealt]
    s = HandState.from_deal(rules, hands, [*first, *rest], leader=0)
    for m in moves:
        s = s.apply(m)
    return s


# Seat 1 holds no 3 and no 5 (so no answer to an end showing 4 or 2) and no matador.
NO_3_5 = ["0-2", "1-2", "1-4", "2-6", "4-6", "6-6", "2-2"]


def test_a_pass_shows_what_the_seat_cannot_hold() -> None:
    """draw_rule "none": after the lead 2-4 (ends 2 [2|4] 4) seat 1 must pass."""
    s = _position(
        Rules(draw_rule="none"),
        [["2-4", "0-1", "1-1", "0-0", "0-4", "4-4", "0-6"], NO_3_5],
        ["2-4"],
    )
    assert [str(m) for m in s.legal_moves()] == ["pass"]
    s = s.apply("pass")
    kn = Knowledge(s.view(0))
    tb = kn.tb
    no_answer = tb.has[3] | tb.has[5] | tb.matador
    assert kn.void[1] == no_answer & kn.unseen
    assert (kn.void[1] >> tile("3-5").index) & 1
    rng = random.Random(1)
    for _ in range(200):
        world = kn.sample(rng)
        assert not world.hand_mask(1) & no_answer
        assert world.hand(0) == s.hand(0)
        assert world.hand_sizes == s.hand_sizes and world.ends == s.ends


def test_a_draw_shows_what_the_seat_cannot_hold() -> None:
    """Standard rules. After the lead 2-4 seat 1's only placements are of its matador
    0-0, so it may draw ("only_matadors"); it draws 3-6 and plays it on the 4.

    A draw then meant: no non-matador answer in hand. The one tile drawn since was
    played, so seat 1 holds no tile with a 3 or a 5 now, but may hold a matador."""
    hand1 = [*NO_3_5[:-1], "0-0"]
    s = _position(
        Rules(), [["2-4", "0-1", "1-1", "2-2", "0-4", "4-4", "0-6"], hand1], ["2-4"], ("3-6",)
    )
    legal = {str(m) for m in s.legal_moves()}
    assert "draw" in legal and all(m == "draw" or m.startswith("0-0") for m in legal)
    s = s.apply("draw").apply("3-6@1>6")
    kn = Knowledge(s.view(0))
    tb = kn.tb
    regular_answers = (tb.has[3] | tb.has[5]) & tb.regular
    assert kn.void[1] == regular_answers & kn.unseen
    assert not kn.void[1] & tb.matador
    p = kn.marginals()
    assert p[1][tile("3-5").index] == 0.0
    assert 0.0 < p[1][tile("3-4").index] < 1.0
    assert abs(sum(p[1]) - s.hand_sizes[1]) < 1e-6
    # Had seat 1 kept the tile it drew, it could hold one answer: a cap, not a void.
    s2 = _position(
        Rules(), [["2-4", "0-1", "1-1", "2-2", "0-4", "4-4", "0-6"], hand1], ["2-4"], ("3-6",)
    )
    s2 = s2.apply("draw").apply("0-0@0>0")
    kn2 = Knowledge(s2.view(0))
    assert not kn2.void[1] & tb.has[3]
    assert any(c.seat == 1 and c.cap == 1 for c in kn2.constraints)
    assert kn2.allows(1, s2.hand_mask(1) & kn2.unseen)


def _two_draws_then_the_matador() -> HandState:
    """Standard rules: after the lead 2-4, seat 1 (no regular answer) draws 1-6 and 2-5
    and plays its matador 0-0."""
    s = _position(
        Rules(),
        [["2-4", "0-1", "1-1", "2-2", "0-4", "4-4", "0-6"], [*NO_3_5[:-1], "0-0"]],
        ["2-4"],
        ("1-6", "2-5"),
    )
    return s.apply("draw").apply("draw").apply("0-0@0>0")


def test_the_tightest_of_two_draws_at_the_same_ends_is_kept() -> None:
    """Standard rules. At the ends of the lead 2-4 seat 1's only answer is its matador
    0-0: it draws 1-6, draws 2-5 (matadors, which fit but need not be played) and plays
    0-0. Both draws show the same tiles missing; the second was after one draw fewer,
    so of those tiles seat 1 holds at most one (the tile of its last draw), not two."""
    s = _two_draws_then_the_matador()
    kn = Knowledge(s.view(0))
    tb = kn.tb
    regular_answers = (tb.has[3] | tb.has[5]) & tb.regular & kn.unseen
    assert kn.constraints == [Constraint(1, regular_answers, 1)]
    two = bits(regular_answers)[:2]
    assert kn.allows(1, 1 << two[0])
    assert not kn.allows(1, (1 << two[0]) | (1 << two[1]))
    # Both dealers keep the cap: sample_masks, and sample_many's bulk draw for one
    # hidden hand (which drops the candidates that break it).
    rng = random.Random(2)
    worlds = [kn.sample_masks(rng) for _ in range(100)] + kn.sample_many(rng, 400)
    for hands, rest in worlds:
        assert kn.allows(1, hands[1])
        assert (hands[1] & regular_answers).bit_count() <= 1
        assert hands[1].bit_count() == s.hand_sizes[1] and len(rest) == s.boneyard_size


def test_a_draw_before_the_lead_shows_no_double_to_lead_matador_or_not() -> None:
    """Double-nine, a double (not blank) to lead. Seat 0 holds none, draws 6-6 and
    leads it: it held no leadable double, the matador 5-5 (5 + 5 = 10) included. No
    draw at the lead is voluntary, so even under voluntary_draw "only_matadors" the
    draw says every leadable tile was missing, not only the non-matadors."""
    rules = Rules(set_max=9, lead_tile="double_not_blank")
    assert rules.voluntary_draw == "only_matadors"
    s = HandState.deal(rules, 12)
    assert s.to_move == 0
    s = s.apply("draw").apply("6-6")
    kn = Knowledge(s.view(1))
    tb = kn.tb
    assert (tb.matador >> tile("5-5").index) & 1
    assert kn.void[0] == tb.double_not_blank & kn.unseen
    assert (kn.void[0] >> tile("5-5").index) & 1


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_inferences_hold_for_the_real_hands(variant: str) -> None:
    """Soundness: whatever a seat infers, the true hidden hands satisfy it, and every
    sampled world agrees with the seat's view."""
    rules = VARIANTS[variant]
    pool = ["greedy", "expert", "random"]
    rng = random.Random(7)
    checked = constrained = 0
    for k in range(12):
        specs = [pool[(k + s) % len(pool)] for s in range(rules.players)]
        agents = [make_agent(s) for s in specs]
        state = HandState.deal(rules, 500 + k)
        while not state.is_over:
            seat = state.to_move
            view = state.view(seat)
            if len(view.legal_moves) > 1 or k % 3 == 0:
                kn = Knowledge(view)
                for other in kn.hidden_seats:
                    assert kn.allows(other, state.hand_mask(other) & kn.unseen), (variant, other)
                constrained += sum(1 for c in kn.constraints if c.cap == 0)
                world = kn.sample(rng)
                w_view = world.view(seat)
                assert w_view.hand == view.hand and w_view.ends == view.ends
                assert w_view.hand_sizes == view.hand_sizes
                assert w_view.boneyard_size == view.boneyard_size
                assert w_view.legal_moves == view.legal_moves
                for other in kn.hidden_seats:
                    assert kn.allows(other, world.hand_mask(other))
                checked += 1
            state = state.apply(agents[seat].act(view, rng))
    assert checked > 50
    if rules.draw_rule != "none" or rules.hand_size != "all":
        assert constrained > 0  # the checks above had something to check


def _three_seats_one_void() -> tuple[HandState, Knowledge]:
    """Standard rules for three, deal 0, each seat playing its first legal move: the
    first position where one hidden seat has shown a void and the other none."""
    state = HandState.deal(Rules.preset("standard", players=3), 0)
    while not state.is_over:
        kn = Knowledge(state.view(state.to_move))
        a, b = kn.hidden_seats
        if kn.void[a] and not kn.void[b] and not kn.soft[a] and not kn.soft[b]:
            return state, kn
        state = state.apply(state.legal_moves()[0])
    raise AssertionError("no such position")


def test_sample_many_keeps_every_void_with_several_hidden_hands() -> None:
    """The compiled dealer (two hidden hands of different sizes here) deals each seat
    its own size and nothing it is known not to hold, like sample_masks."""
    state, kn = _three_seats_one_void()
    a, b = kn.hidden_seats
    assert state.hand_sizes[a] != state.hand_sizes[b] and state.boneyard_size > 0
    for hands, rest in kn.sample_many(random.Random(4), 300):
        assert hands[kn.me] == kn.hand
        for seat in (a, b):
            assert hands[seat].bit_count() == state.hand_sizes[seat]
            assert not hands[seat] & kn.void[seat]
            assert not hands[seat] & ~kn.unseen
        assert len(rest) == state.boneyard_size
        assert hands[a] | hands[b] | sum(1 << t for t in rest) == kn.unseen


def test_marginals_are_fitted_to_every_holder_size() -> None:
    """Iterative proportional fitting ends at a table whose every row (tile) sums to 1
    and every column to its holder's size, the boneyard's included: then each seat's
    odds against the boneyard are one number on every tile both may hold (the fitted
    table is a product of a tile factor and a holder factor)."""
    state, kn = _three_seats_one_void()
    a, b = kn.hidden_seats
    p = kn.marginals()
    odds = []
    for t in bits(kn.unseen):
        in_hands = p[a][t] + p[b][t]
        assert in_hands < 1.0
        odds.append(p[b][t] / (1.0 - in_hands))
    assert max(odds) - min(odds) < 1e-6, odds
    for seat in (a, b):
        assert abs(sum(p[seat]) - state.hand_sizes[seat]) < 1e-6
    boneyard = sum(1.0 - p[a][t] - p[b][t] for t in bits(kn.unseen))
    assert abs(boneyard - state.boneyard_size) < 1e-6


def test_sampling_without_inferences_is_uniform() -> None:
    """Before anyone has passed or drawn, each unseen tile is in the opponent's hand with
    chance 7/21 (7 tiles among the 21 the viewer cannot see)."""
    rules = Rules()
    s = HandState.deal(rules, 3)
    view = s.view(s.to_move)
    kn = Knowledge(view)
    assert kn.constraints == []
    other = 1 - view.seat
    rng = random.Random(0)
    counts = dict.fromkeys(range(28), 0)
    n = 3000
    for _ in range(n):
        hands, rest = kn.sample_masks(rng)
        assert hands[view.seat] == kn.hand
        assert len(rest) == 14
        for i in range(28):
            counts[i] += (hands[other] >> i) & 1
    for i in range(28):
        if (kn.unseen >> i) & 1:
            assert abs(counts[i] / n - 7 / 21) < 0.04
        else:
            assert counts[i] == 0


def test_worlds_under_a_cap_are_uniform_among_those_that_keep_it() -> None:
    """The position of the test above: seat 1 holds 8 tiles, of 20 unseen, and at most
    one of the 11 unseen answers to the ends. Among the hands that keep the cap, those
    with no answer at all are C(9, 8) of C(9, 8) + 11 * C(9, 7): about 2%. A dealer that
    took tiles in a random order while the cap holds would almost never deal one
    (the first eight tiles of a random order are rarely all of the nine others); the
    swaps after the construction (and sample_many's exact draw) make up for it."""
    s = _two_draws_then_the_matador()
    kn = Knowledge(s.view(0))
    (capped,) = kn.constraints
    assert (capped.mask.bit_count(), kn.unseen.bit_count(), s.hand_sizes[1]) == (11, 20, 8)
    uniform = math.comb(9, 8) / (math.comb(9, 8) + 11 * math.comb(9, 7))
    n = 3000
    rng = random.Random(3)
    for how, worlds in (
        ("sample_masks", [kn.sample_masks(rng) for _ in range(n)]),
        ("sample_many", kn.sample_many(rng, n)),
    ):
        none = sum(1 for hands, _rest in worlds if not hands[1] & capped.mask)
        assert abs(none / n - uniform) < 0.012, (how, none / n, uniform)


def test_the_boneyard_of_a_world_is_in_uniform_order() -> None:
    """The position of test_a_draw_shows_what_the_seat_cannot_hold: seat 1 holds none
    of the unseen tiles with a 3 or a 5, so in every world they all lie in the boneyard,
    which seat 0 may draw from next. In a world's boneyard order each is the next tile
    drawn as often as any other boneyard tile (1 in 13): the search's playouts draw in
    that order, and a sampler that kept the voids together (last, or in index order)
    would have seat 0 draw them too late or too soon."""
    s = _position(
        Rules(),
        [["2-4", "0-1", "1-1", "2-2", "0-4", "4-4", "0-6"], [*NO_3_5[:-1], "0-0"]],
        ["2-4"],
        ("3-6",),
    )
    s = s.apply("draw").apply("3-6@1>6")
    kn = Knowledge(s.view(0))
    void = bits(kn.void[1])
    assert len(void) >= 4 and s.boneyard_size == 13
    n = 2000
    rng = random.Random(5)
    for how, worlds in (
        ("sample_masks", [kn.sample_masks(rng) for _ in range(n)]),
        ("sample_many", kn.sample_many(rng, n)),
    ):
        first = dict.fromkeys(void, 0)
        for hands, rest in worlds:
            assert len(rest) == 13 and not hands[1] & kn.void[1]
            if rest[0] in first:
                first[rest[0]] += 1
        for t, count in first.items():
            assert abs(count / n - 1 / 13) < 0.035, (how, kn.tb.tiles[t], count)


@pytest.mark.parametrize("players", [2, 3])  # one hidden hand (numpy), several (compiled)
def test_sample_many_follows_its_generator(players: int) -> None:
    """The same generator state gives the same worlds (a search is reproducible), and
    another gives others: the seed drawn from ``rng`` is used, not a fixed one, else
    every search would play out the same few worlds."""
    rules = Rules.preset("standard", players=players)
    state = HandState.deal(rules, 8)
    kn = Knowledge(state.view(state.to_move))
    one = kn.sample_many(random.Random(1), 20)
    assert one == kn.sample_many(random.Random(1), 20)
    other = kn.sample_many(random.Random(2), 20)
    assert one != other
    # Within one call the worlds differ too.
    assert len({tuple(hands) for hands, _rest in one}) > 10


# -- the expert's strategy --------------------------------------------------------------------


def test_expert_draws_rather_than_spend_a_matador() -> None:
    """Only its matador 3-4 fits the ends 0 and 0, the boneyard is full and the opponent
    holds six tiles: the expert keeps the matador and draws (voluntary_draw
    "only_matadors")."""
    rules = Rules()
    s = _position(
        rules,
        [
            ["0-1", "3-4", "1-1", "2-2", "2-6", "4-4", "5-5"],
            ["0-6", "1-5", "0-2", "2-3", "3-3", "4-5", "1-2"],
        ],
        ["0-1"],
    )
    # Seat 1 answers 1 with 0-6 (its 6 touching): the ends become 0 and 0.
    s = s.apply("0-6@1>0")
    view = s.view(0)
    assert {str(m) for m in view.legal_moves} >= {"draw", "3-4@0>3"}
    assert ExpertAgent().act(view, random.Random(0)).kind == "draw"


def test_expert_turns_a_matador_to_a_number_the_opponent_cannot_answer() -> None:
    """Seat 1 passed at ends 2 and 4, so it holds no 5, no 3 and no matador. Seat 0's
    only placements are of the matador 2-5; showing 2 leaves an end that needs a 5,
    which seat 1 cannot answer, while an end showing 5 needs a 2, which it may hold."""
    s = _position(
        Rules(draw_rule="none"),
        [["2-4", "2-5", "0-1", "1-1", "0-4", "4-4", "0-6"], NO_3_5],
        ["2-4", "pass"],
    )
    view = s.view(0)
    assert all(m.tile == tile("2-5") for m in view.legal_moves)
    move = ExpertAgent().act(view, random.Random(0))
    assert move.shows == 2


def test_expert_team_play_beats_greedy_teams() -> None:
    """Partnerships (pagat, four players): expert partners against greedy partners on
    duplicate deals (each team holds each pair of hands once)."""
    rules = Rules.preset("pagat", players=4, teams=True)
    diffs = []
    for k in range(60):
        total = 0
        for expert_side in (0, 1):
            specs = ["expert" if s % 2 == expert_side else "greedy" for s in range(4)]
            out = _play_checked(rules, 90_000 + k, specs).outcome
            assert out is not None
            if out.winning_side is not None:
                total += out.points if out.winning_side == expert_side else -out.points
        diffs.append(total / 2)
    assert sum(diffs) / len(diffs) > 2.0


# -- the search -------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["standard", "leiden"])  # bit-mask and engine playouts
def test_search_is_reproducible_from_view_and_rng(preset: str) -> None:
    rules = Rules.preset(preset)
    agent = make_agent("search:samples=6")
    state = HandState.deal(rules, 11)
    seen = 0
    rng = random.Random(3)
    while not state.is_over and seen < 6:
        view = state.view(state.to_move)
        if len(view.legal_moves) > 1:
            a = agent.act(view, random.Random(seen))
            b = agent.act(view, random.Random(seen))
            assert a == b
            seen += 1
        state = state.apply(view.legal_moves[rng.randrange(len(view.legal_moves))])


def test_search_beats_random() -> None:
    rules = Rules()
    diffs = []
    for k in range(40):
        total = 0
        for seat in (0, 1):
            specs = ["search:samples=8", "random"] if seat == 0 else ["random", "search:samples=8"]
            out = _play_checked(rules, 70_000 + k, specs).outcome
            assert out is not None
            if out.winning_side is not None:
                total += out.points if out.winning_side == seat else -out.points
        diffs.append(total / 2)
    assert sum(diffs) / len(diffs) > 8.0


LINE_VARIANTS = sorted(k for k, r in VARIANTS.items() if search_module.LineRollout.applies(r))


@pytest.mark.parametrize("variant", LINE_VARIANTS)
def test_line_rollouts_play_as_the_engine_rollouts(
    variant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bit-mask playouts follow the rules and the policy of the engine's playouts.

    With whole-number weights and no jitter, scores tie only where they truly tie and
    both pick the same move at every turn, so they must end every hand alike.
    """
    for name in dir(search_module):
        if name.startswith("_X_"):
            monkeypatch.setattr(search_module, name, float(round(getattr(search_module, name) * 8)))
    monkeypatch.setattr(search_module, "_JITTER", 0.0)
    rules = VARIANTS[variant]
    tb = tables(rules)
    line = search_module.LineRollout(tb)
    expert = ExpertAgent()
    side = rules.side_of(0)
    compared = 0
    for k in range(60):
        state = HandState.deal(rules, 20_000 + k)
        rng = random.Random(k)
        for _ in range(rng.randrange(1, 10)):
            if state.is_over:
                break
            state = state.apply(expert.act(state.view(state.to_move), rng))
        if state.is_over or not state.ends or state.draws_this_turn or state.passes_in_row:
            continue
        outcome = search_module.rollout(state, tb, random.Random(k))
        want = search_module.utility(outcome, side, rules.sides)
        # Under LineRollout's rules every open end shows one number.
        ends = [e.value for e in state.ends if e.value is not None]
        assert len(ends) == len(state.ends), state.ends
        got = line.rollout(
            [state.hand_mask(s) for s in range(rules.players)],
            ends,
            [t.index for t in state.boneyard],
            0,
            state.to_move,
            0,
            tb.mask_of(state.layout),
            side,
            random.Random(k),
        )
        assert got == want, (k, state)
        compared += 1
    assert compared >= 20


def test_search_plays_a_lone_candidate_without_sampling() -> None:
    """Moves that differ in name only (a matador on either of two ends showing 0, the
    same outward number) are one candidate, played without a search."""
    rules = Rules()
    agent = SearchAgent(samples=4)
    for k in range(200):
        state = HandState.deal(rules, 30_000 + k)
        rng = random.Random(k)
        while not state.is_over:
            view = state.view(state.to_move)
            move, values = (
                agent.evaluate(view, random.Random(0)) if len(view.legal_moves) > 1 else (None, [])
            )
            if len(values) == 1:
                assert values == [(move, 0.0)]
                return
            state = state.apply(view.legal_moves[rng.randrange(len(view.legal_moves))])
    pytest.fail("no position with a lone candidate")


def test_a_search_result_ranks_the_candidates_it_kept_above_those_it_dropped() -> None:
    from agents.search import SearchResult

    moves = list(HandState.deal(Rules(), 1).legal_moves()[:4])
    # Successive halving: the last two stayed for 64 worlds, the others were dropped
    # after 16 and 32, one of them on a lucky mean above both survivors.
    result = SearchResult(moves[2], moves, [5.0, 1.0, 3.0, 2.0], [16, 32, 64, 64])
    assert result.ranked_means() == [1.0, 1.0, 3.0, 2.0]
    # The chosen move ranks first among the candidates played in a real search.
    agent = SearchAgent(samples=16)
    state = HandState.deal(Rules.preset("leiden"), 5)
    rng = random.Random(3)
    searched = 0
    while not state.is_over:
        view = state.view(state.to_move)
        if len(view.legal_moves) > 1:
            found = agent.search(view, random.Random(searched))
            ranked = found.ranked_means()
            assert found.candidates[ranked.index(max(ranked))] == found.move
            pairs = list(zip(found.candidates, found.means, strict=True))
            assert (found.move, pairs) == agent.evaluate(view, random.Random(searched))
            searched += 1
        state = state.apply(view.legal_moves[rng.randrange(len(view.legal_moves))])
    assert searched > 3


_KERNELS_LOADED_BY_A_MOVE = """
import random
from numba.core.registry import CPUDispatcher
from matador_env.batch import _kernels, _playouts, _worlds

def loaded():
    return {
        f"{module.__name__}.{name}"
        for module in (_kernels, _playouts, _worlds)
        for name, function in vars(module).items()
        if isinstance(function, CPUDispatcher) and function.signatures
    }

from agents.search import SearchAgent
from matador_env.configs import configuration
from matador_env.engine import HandState

agent = SearchAgent(samples=8)
built = loaded()
for name in ("standard", "leiden", "standard_4p"):
    hand = HandState.deal(configuration(name).rules(), 5)
    agent.act(hand.view(hand.to_move), random.Random(1))
print(len(built), sorted(loaded() - built))
"""


def test_a_search_loads_its_compiled_kernels_when_built_not_in_its_first_move() -> None:
    # Before: numba loaded the playout kernels from its disk cache inside the first
    # move (about 0.35 s a process), which the arena timed as move time, lengthening
    # the search's ms/move in the strength matrix by a few percent. In a fresh
    # process, since this one has loaded them already.
    import subprocess
    import sys

    pytest.importorskip("numba")
    done = subprocess.run(
        [sys.executable, "-c", _KERNELS_LOADED_BY_A_MOVE],
        capture_output=True,
        text=True,
        check=True,
    )
    built, loaded_by_moves = done.stdout.split(maxsplit=1)
    assert int(built) > 0
    assert loaded_by_moves.strip() == "[]"


def test_loading_the_kernels_says_why_it_takes_long_on_a_cold_cache(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With numba's cache cold the load compiles for about 30 s before a command has
    # printed anything (python -m evaluate --agents search: its header came after).
    # Here, that the whole load runs inside the note (tests/notes.py).
    pytest.importorskip("numba")
    said = record_notes(monkeypatch, search_module)
    search_module.load_compiled_playouts.__wrapped__()  # past its once-a-process cache
    assert said == [(search_module.SLOW_LOAD_NOTE, 2.0), "done"]
    assert "compiling" in search_module.SLOW_LOAD_NOTE


# -- the search's values and choices, where every world is the real deal -----------------------
#
# With the policy's weights whole numbers and no jitter a playout is a function of its
# world; with every sampled world the real deal, a candidate's mean is then exactly what
# the hand played out after it is worth to the searcher's side, on each playout path.

SEARCHED: dict[str, Rules] = {
    name: configuration(name).rules()
    for name in ("standard", "leiden", "standard_3p", "standard_4p", "pagat_teams")
}
# A matador that fits by the sum may lie as an ordinary tile: no bit-mask playouts here.
SEARCHED["stuck_regular"] = Rules(matador_only_when_stuck=True, matador_as_regular=True)
PLAYOUT_PATHS = ["compiled", "bit masks", "engine"]


def _whole_number_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in dir(search_module):
        if name.startswith("_X_"):
            monkeypatch.setattr(search_module, name, float(round(getattr(search_module, name) * 8)))
    monkeypatch.setattr(search_module, "_JITTER", 0.0)
    monkeypatch.setattr(search_module, "_LINES", {})  # bit-mask playouts with these weights


def _only_the_real_world(monkeypatch: pytest.MonkeyPatch, state: HandState) -> None:
    """Every world a search of ``state`` samples is ``state``'s real deal."""
    if search_module.batch_playouts_available():
        search_module.load_compiled_playouts()  # it deals a world of its own, once
    hands = [state.hand_mask(s) for s in range(state.rules.players)]
    rest = [t.index for t in state.boneyard]

    def one(self: Knowledge, rng: random.Random, tries: int = 64) -> tuple[list[int], list[int]]:
        return list(hands), list(rest)

    def many(self: Knowledge, rng: random.Random, count: int) -> list:
        return [(list(hands), list(rest)) for _ in range(count)]

    monkeypatch.setattr(Knowledge, "sample_masks", one)
    monkeypatch.setattr(Knowledge, "sample_many", many)


def _searcher(path: str, monkeypatch: pytest.MonkeyPatch, **options: int) -> SearchAgent:
    """A search whose playouts take ``path``: compiled, on bit masks (where the rules
    allow them, else the engine's), or through the engine."""
    agent = SearchAgent(**{"samples": 4, "width": 4, **options}, fast=path == "compiled")
    if path == "compiled" and not agent.fast:
        pytest.skip("numba is not installed")
    if path == "engine":
        monkeypatch.setattr(agent, "_line_playouts", lambda kn, cands: None)
    return agent


def _worth(outcome: Outcome, side: int, sides: int) -> float:
    """A hand's end for ``side``: the points it wins, or minus the winner's points
    shared among the sides that did not win; nothing when nobody wins."""
    if outcome.winning_side is None:
        return 0.0
    if outcome.winning_side == side:
        return float(outcome.points)
    return -outcome.points / (sides - 1)


def _decisions(rules: Rules, count: int) -> list[HandState]:
    """States where the seat to move has a choice, every seat in turn, from expert play."""
    expert = ExpertAgent()
    found: list[HandState] = []
    k = 0
    while len(found) < count:
        want = len(found) % rules.players
        state = HandState.deal(rules, 60_000 + k)
        rng = random.Random(k)
        k += 1
        steps = rng.randrange(0, 3 * rules.players)
        for _ in range(steps):
            if state.is_over:
                break
            state = state.apply(expert.act(state.view(state.to_move), rng))
        while not state.is_over and (state.to_move != want or len(state.legal_moves()) < 2):
            state = state.apply(expert.act(state.view(state.to_move), rng))
        if not state.is_over:
            found.append(state)
    return found


@pytest.mark.parametrize("path", PLAYOUT_PATHS)
@pytest.mark.parametrize("variant", sorted(SEARCHED))
def test_a_candidates_mean_is_its_worth_to_the_searchers_side(
    variant: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The value maximized is the searcher's side's: its points when it wins, minus the
    winner's points when another side wins (shared among the losers with three or four
    seats each for himself); with teams a partner's domino is the side's win. The
    search plays the best candidate (ties: the expert's order), which halving never
    drops."""
    _whole_number_policy(monkeypatch)
    rules = SEARCHED[variant]
    seen = _means_are_worths(rules, _searcher(path, monkeypatch), monkeypatch)
    assert seen["own"] and seen["other"]
    assert bool(seen["partner"]) == rules.teams


def _means_are_worths(
    rules: Rules, agent: SearchAgent, monkeypatch: pytest.MonkeyPatch
) -> dict[str, int]:
    """Check the search of positions of ``rules`` on their real worlds: each candidate's
    mean is what the hand played out after it is worth to the searcher's side, the
    best is played and never dropped. Returns how often the searcher, its partner and
    another side won."""
    tb = tables(rules)
    seen = {"own": 0, "partner": 0, "other": 0}
    for state in _decisions(rules, 2 * rules.players):
        _only_the_real_world(monkeypatch, state)
        view = state.view(state.to_move)
        side = rules.side_of(view.seat)
        found = agent.search(view, random.Random(0))
        want = []
        for move in found.candidates:
            after = state.apply(move)
            outcome = after.outcome
            if outcome is None:
                outcome = search_module.rollout(after, tb, random.Random(0))
            want.append(_worth(outcome, side, rules.sides))
            if outcome.winner == view.seat:
                seen["own"] += 1
            elif outcome.winning_side == side:
                seen["partner"] += 1
            elif outcome.winning_side is not None:
                seen["other"] += 1
        assert found.means == pytest.approx(want), (view.seat, str(state))
        best = max(range(len(want)), key=lambda i: (want[i], -i))
        assert found.move == found.candidates[best]
        assert found.worlds[best] == max(found.worlds)
    return seen


def test_matadors_laid_as_regular_tiles_are_played_out_through_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """matador_only_when_stuck with matador_as_regular: a matador that fits by the sum
    may be laid as an ordinary tile while other tiles fit, which the bit-mask playouts
    would hold back (LineRollout.applies), so the search without compiled playouts
    plays those hands through the engine. With a policy that lays a matador whenever
    it may, the means are still the engine rollouts' on the real world."""
    _whole_number_policy(monkeypatch)
    monkeypatch.setattr(search_module, "_X_MAT", -80.0)  # a bonus: every matador it may
    rules = SEARCHED["stuck_regular"]
    _means_are_worths(rules, SearchAgent(samples=4, width=4, fast=0), monkeypatch)


def _same_placement(state: HandState, move: Move) -> object:
    """What tells candidates apart: a placement's tile and the open ends it leaves."""
    if move.kind == "play" and move.mode != "lead":
        return (move.tile, tuple(sorted(state.apply(move).ends)))
    return move


@pytest.mark.parametrize("config", ["standard", "leiden", "standard_3p", "pagat_teams"])
def test_the_candidates_are_the_base_experts_favourites_without_repeats(config: str) -> None:
    """The first ``width`` of the legal moves in the order of the expert's base set
    (under every configuration, fitted set or not), one of each placement: every legal
    move leaves the ends of a candidate or scores no higher than the last one."""
    rules = configuration(config).rules()
    base = ExpertAgent(ExpertWeights())
    checked = 0
    for state in _decisions(rules, 12):
        view = state.view(state.to_move)
        score = dict(zip(view.legal_moves, base.scores(view), strict=True))
        distinct = len({_same_placement(state, m) for m in view.legal_moves})
        for width in (1, 2, 4, 28):
            # samples=1, halving=0: the candidates are all that is asked for here.
            found = SearchAgent(samples=1, width=width, halving=0).search(view, random.Random(0))
            cands = found.candidates
            assert len(cands) == min(width, distinct)
            keys = [_same_placement(state, m) for m in cands]
            assert len(set(keys)) == len(keys)
            scores = [score[m] for m in cands]
            assert scores == sorted(scores, reverse=True)
            for m in view.legal_moves:
                assert _same_placement(state, m) in keys or score[m] <= scores[-1]
            checked += 1
    assert checked == 48


def test_successive_halving_spends_the_worlds_on_the_best_candidates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """samples=8 a candidate: with six candidates three rounds of 16 worlds (3 each
    for six, 5 each for the best three, 8 each for the best two), with three two
    rounds of 12 (4, then 6 each for the best two), with two or without halving 8
    each. The candidate best in every world stays to the end."""
    _whole_number_policy(monkeypatch)
    plans = [
        (SearchAgent(samples=8, width=6), [3, 3, 3, 8, 16, 16]),
        (SearchAgent(samples=8, width=3), [4, 10, 10]),
        (SearchAgent(samples=8, width=2), [8, 8]),
        (SearchAgent(samples=8, width=6, halving=0), [8] * 6),
    ]
    state = HandState.deal(Rules(), 4)  # the lead: seven tiles to lead
    view = state.view(state.to_move)
    _only_the_real_world(monkeypatch, state)
    for agent, worlds in plans:
        found = agent.search(view, random.Random(0))
        assert sorted(found.worlds) == worlds
        top = max(found.means)
        assert found.worlds[found.means.index(top)] == max(found.worlds)
        assert found.means[found.candidates.index(found.move)] == top


def _pass_at_2_and_4() -> HandState:
    """draw_rule "none": seat 1 passed at the ends of the lead 2-4 (no 3, no 5, no
    matador in its hand); seat 0's only placements are of its matador 0-0."""
    s = _position(
        Rules(draw_rule="none"),
        [["2-4", "0-1", "1-1", "0-0", "0-4", "4-4", "0-6"], NO_3_5],
        ["2-4", "pass"],
    )
    assert s.to_move == 0
    return s


def _capped_then_a_choice() -> HandState:
    """As in :func:`_two_draws_then_the_matador` seat 1 holds at most one answer to
    the lead 2-4 (a 3 or a 5); seat 0 may now answer the 4 with 1-3 or 3-3."""
    s = _position(
        Rules(),
        [["2-4", "1-3", "3-3", "2-2", "0-4", "4-4", "0-6"], [*NO_3_5[:-1], "0-0"]],
        ["2-4"],
        ("1-6", "2-5"),
    )
    s = s.apply("draw").apply("draw").apply("0-0@0>0")
    assert {str(m) for m in s.legal_moves()} == {"1-3@1>1", "3-3@1>3"}
    return s


def _played_worlds(monkeypatch: pytest.MonkeyPatch) -> list[tuple[list[int], list[int]]]:
    """The worlds the search's playouts are given, on every path, as they come."""
    seen: list[tuple[list[int], list[int]]] = []
    if search_module.batch_playouts_available():
        from matador_env.batch import WorldPlayouts

        run = WorldPlayouts.run

        def batch(self: WorldPlayouts, worlds: list, *args: Any, **kwargs: Any) -> Any:
            seen.extend((list(h), list(r)) for h, r in worlds)
            return run(self, worlds, *args, **kwargs)

        monkeypatch.setattr(WorldPlayouts, "run", batch)
    for name in ("_line_playouts", "_engine_playouts"):
        make = getattr(SearchAgent, name)

        def spied(self: SearchAgent, kn: Knowledge, cands: list[Move], make=make) -> object:
            inner = make(self, kn, cands)
            if inner is None:
                return None

            def playout(i: int, hands: list[int], rest: list[int], seed: int) -> float:
                seen.append((list(hands), list(rest)))
                return inner(i, hands, rest, seed)

            return playout

        monkeypatch.setattr(SearchAgent, name, spied)
    return seen


@pytest.mark.parametrize("fast", [1, 0])
@pytest.mark.parametrize("where", ["a pass", "a capped draw", "three seats"])
def test_the_search_plays_out_only_worlds_the_seat_cannot_rule_out(
    where: str, fast: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every world played out keeps the seat's own hand, each hidden hand's size, the
    voids a pass or a draw showed and the caps of later draws, and deals each unseen
    tile once (a hand or the boneyard)."""
    agent = SearchAgent(samples=16, fast=fast)
    if where == "a pass":
        state = _pass_at_2_and_4()
    elif where == "a capped draw":
        state = _capped_then_a_choice()
    else:
        state, _ = _three_seats_one_void()
        while len(state.legal_moves()) < 3:  # on to a choice, the void kept
            state = state.apply(state.legal_moves()[0])
    view = state.view(state.to_move)
    kn = Knowledge(view)
    assert kn.constraints
    seen = _played_worlds(monkeypatch)
    found = agent.search(view, random.Random(5))
    assert len(found.candidates) > 1 and len(seen) >= 16
    for hands, rest in seen:
        assert hands[kn.me] == kn.hand
        dealt = sum(1 << t for t in rest)
        assert len(rest) == view.boneyard_size and dealt & kn.unseen == dealt
        for seat in kn.hidden_seats:
            assert hands[seat].bit_count() == view.hand_sizes[seat]
            assert kn.allows(seat, hands[seat])
            assert not hands[seat] & dealt
            dealt |= hands[seat]
        assert dealt == kn.unseen


def _going_out(rules: Rules) -> HandState:
    """No boneyard: seat 0 holds 1-3 and the matador 2-5, the tiles not named go round
    the other seats; seat 0 leads 1-3 and, the others having moved, may go out."""
    others = range(1, rules.players)
    state = deal(rules, ["1-3 2-5", *[""] * len(others)], rest=others).apply("1-3")
    while state.to_move != 0:
        state = state.apply(state.legal_moves()[0])
    return state


@pytest.mark.parametrize("config", ["standard", "standard_3p", "standard_4p", "pagat_teams"])
def test_going_out_wins_the_pips_left_and_ties_go_to_the_experts_order(config: str) -> None:
    """No boneyard. Seat 0 leads 1-3 and keeps the matador 2-5, which goes out on
    either end with either half outward: every candidate wins the hand, the same points
    in a world whichever it is. With one side for each seat those are all the unseen
    pips; with teams the opponents' share of them. Equal means: the expert's first
    candidate."""
    rules = configuration(config).rules()
    view = _going_out(rules).view(0)
    assert {m.tile for m in view.legal_moves} == {tile("2-5")}
    kn = Knowledge(view)
    unseen = kn.tb.pips_of(kn.unseen)
    # Teams: the points differ from world to world, so every candidate gets the same
    # worlds (no halving) for the means to tie.
    halving = 0 if rules.teams else 1
    for fast in (1, 0):
        agent = SearchAgent(samples=8, halving=halving, fast=fast)
        found = agent.search(view, random.Random(1))
        assert len(found.candidates) > 2
        assert len(set(found.means)) == 1
        if rules.teams:
            assert 0 < found.means[0] < unseen
        else:
            assert found.means[0] == unseen
        assert found.move == found.candidates[0] == view.legal_moves[0]


@pytest.mark.parametrize("path", PLAYOUT_PATHS)
@pytest.mark.parametrize("config", ["standard", "standard_3p", "pagat_teams"])
def test_going_out_wins_what_the_other_sides_hold(
    config: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The position above with every world the real one: on every playout path each
    candidate is worth the pips of the seats of the other sides (a partner's are no
    loss), a domino and not a block of a hand with no tile left."""
    rules = configuration(config).rules()
    agent = _searcher(path, monkeypatch)
    state = _going_out(rules)
    _only_the_real_world(monkeypatch, state)
    others = sum(c for s, c in enumerate(state.counts()) if rules.side_of(s) != rules.side_of(0))
    found = agent.search(state.view(0), random.Random(0))
    assert found.means == [others] * len(found.candidates)


def test_search_avoids_handing_the_next_seat_a_domino() -> None:
    """No boneyard, so seat 0 knows seat 1's last tile: 3-3, which answers an end
    showing 4. Every lead with a 4 lets seat 1 go out at once and loses the pips seat 0
    keeps; the search leads another tile."""
    rules = Rules()
    state = deal(rules, [" ".join(str(t) for t in tables(rules).tiles if str(t) != "3-3"), "3-3"])
    view = state.view(0)
    hand_pips = sum(t.pips for t in view.hand)
    for fast in (1, 0):
        found = SearchAgent(samples=2, width=28, fast=fast).search(view, random.Random(2))
        assert len(found.candidates) == 27
        for move, mean in zip(found.candidates, found.means, strict=True):
            assert move.tile is not None
            if 4 in move.tile:
                assert mean == -(hand_pips - move.tile.pips), str(move)
        assert found.move.tile is not None and 4 not in found.move.tile


def test_search_lets_the_partner_go_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """Teams, no boneyard, every world the real one: seat 2 leads. After 4-4 seat 3
    (no 3, no matador) must pass and the partner, seat 0, goes out with its 3-3: the
    side wins every pip the opponents hold, which the search counts as its own."""
    _whole_number_policy(monkeypatch)
    rules = configuration("pagat_teams").rules()
    agents = [_searcher(path, monkeypatch, width=7) for path in PLAYOUT_PATHS]
    hands = ["3-3", "", "4-4 1-1 2-2 5-5 6-6 0-2 1-2", "0-1 0-4 0-5 0-6 1-4 1-5 2-4"]
    state = deal(rules, hands, leader=2, rest=1)
    _only_the_real_world(monkeypatch, state)
    view = state.view(2)
    opponents = state.counts()[1] + state.counts()[3]
    for agent in agents:
        found = agent.search(view, random.Random(0))
        assert str(found.move) == "4-4"
        assert found.means[found.candidates.index(found.move)] == opponents


# -- the expert's terms -------------------------------------------------------------------------


def _feature(features: tuple[float, ...] | None, name: str) -> float:
    assert features is not None
    return features[FEATURES.index(name)]


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(voluntary_draw="always"),
        VARIANTS["crosswise_on_blank"],
        VARIANTS["pagat_teams"],
    ],
    ids=["standard", "voluntary_draw_always", "crosswise_on_blank", "pagat_teams"],
)
def test_the_experts_hand_terms_are_what_they_say(rules: Rules) -> None:
    """Each move's terms that depend on the hand and the ends alone, worked out from
    the tiles: pips and tiles left, the matador spent (0-0 on its own), the doubles,
    blanks and matadors kept, the end values the hand still answers, the answers kept
    for the ends left (up to three) or none and no matador, the ends showing 0 or
    needing a blank; a draw adds a tile, the mean unseen pips and the chance that it
    answers, and says whether a regular tile could have been placed instead. The
    pips count for more as the urgency grows: one over the fewest tiles an opponent
    (not a partner) holds, plus half the nearness of a block."""
    tb = tables(rules)
    expert = ExpertAgent(ExpertWeights())
    checked = {"play": 0, "draw": 0}
    for state in _decisions(rules, 24):
        view = state.view(state.to_move)
        hand = tb.mask_of(view.hand)
        unseen = tb.full & ~hand & ~tb.mask_of(view.layout)
        mean_unseen = tb.pips_of(unseen) / unseen.bit_count()
        size = len(view.hand)
        seat = view.seat
        fewest = min(
            view.hand_sizes[s]
            for s in range(rules.players)
            if rules.side_of(s) != rules.side_of(seat)
        )
        near = 1.0 if view.drawable == 0 else 1.0 / (1.0 + view.drawable)
        urgency = 1.0 / fewest + 0.5 * near
        regular = [t for t in view.hand if not (tb.matador >> t.index) & 1]
        regular_play = any(
            m.kind == "play" and not (tb.matador >> m.tile.index) & 1  # type: ignore[union-attr]
            for m in view.legal_moves
        )
        for move, f in zip(view.legal_moves, expert.features(view), strict=True):
            if move.kind == "play":
                t = move.tile
                assert t is not None
                left = [u for u in view.hand if u != t]
                if not left:
                    assert f is None  # a domino: scored above everything
                    continue
                ends = state.apply(move).ends
                kept = [u for u in left if not (tb.matador >> u.index) & 1]
                spent = (tb.matador >> t.index) & 1
                want = {
                    "pips_left": sum(u.pips for u in left),
                    "tiles_left": size - 1,
                    "matador": spent,
                    "matador_late": spent / size,
                    "double_zero": 1 if t == tile("0-0") else 0,
                    "doubles_left": sum(1 for u in kept if u.is_double),
                    "blanks_left": sum(1 for u in kept if u.low == 0),
                    "matadors_left": len(left) - len(kept),
                    "variety": len({h for u in kept for h in (u.low, u.high) if h}),
                }
            elif move.kind == "draw":
                ends = view.ends
                left, kept = list(view.hand), regular
                fits = regular_fit(tb, ends) if ends else tb.leadable  # matadors lead too
                want = {
                    "pips_left": sum(u.pips for u in left) + mean_unseen,
                    "tiles_left": size + 1,
                    "matador": 0,
                    "double_zero": 0,
                    "draw": 1,
                    "draw_fits": (fits & unseen).bit_count() / unseen.bit_count(),
                    "draw_again": view.draws_this_turn,
                    "draw_instead": 1 if regular_play else 0,
                    "variety": len({h for u in kept for h in (u.low, u.high) if h}),
                }
            else:
                continue
            if ends:
                answers = (regular_fit(tb, ends) & tb.mask_of(left)).bit_count()
                want["follow"] = min(answers, 3)
                has_matador = any((tb.matador >> u.index) & 1 for u in left)
                want["stuck"] = 1 if answers == 0 and not has_matador else 0
                want["zero_ends"] = sum(1 for e in ends if e.value in (0, None))
            want["pips_left_urgent"] = want["pips_left"] * urgency
            for name, value in want.items():
                assert _feature(f, name) == pytest.approx(value), (name, str(move), str(state))
            if move.kind == "play":
                assert _feature(f, "draw") == 0 and _feature(f, "draw_instead") == 0
            checked[move.kind] += 1
    assert checked["play"] > 50
    assert checked["draw"] or not HandState.deal(rules, 0).boneyard_size  # teams: no boneyard


# Tiles with no 3, no 5 and no matador: no answer to an end showing 4 or 2.
NO_3_5_ALL = ["0-1", "0-2", "0-4", "0-6", "1-1", "1-2", "1-4", "2-2", "2-6", "4-4", "4-6", "6-6"]


@pytest.mark.parametrize("table", ["two", "three", "teams"])
def test_the_expert_counts_the_seats_that_cannot_answer(table: str) -> None:
    """draw_rule "none": every other seat passed at the lead 2-4, so none holds a 3, a 5
    or a matador. 4-5 on the 2 (ends 4 and 4) and 2-3 on the 4 (ends 2 and 2) leave
    ends no other seat can answer; 5-6 on the 2 (ends 6 and 4) leaves ends that take a
    1, which they may hold. The next opponent counts whole, later ones a third; a
    partner is no opponent: it counts in ``partner``, the chance it can answer."""
    players = {"two": 2, "three": 3, "teams": 4}[table]
    rules = Rules(draw_rule="none", players=players, teams=table == "teams")
    share = len(NO_3_5_ALL) // (players - 1)
    others = [NO_3_5_ALL[k * share : (k + 1) * share] for k in range(players - 1)]
    state = _position(rules, [["2-4", "4-5", "2-3", "5-6", "0-3"], *others], ["2-4"])
    while state.to_move != 0:
        state = state.apply("pass")
    view = state.view(0)
    features = dict(zip(map(str, view.legal_moves), ExpertAgent().features(view), strict=True))
    opponents = 1 if players == 2 else 1 + 1 / 3  # the next one whole, the other a third
    for shut in ("4-5@0>4", "2-3@1>2"):
        f = features[shut]
        assert _feature(f, "force") == pytest.approx(opponents), shut
        assert _feature(f, "block") == pytest.approx(opponents), shut
        assert _feature(f, "partner") == 0.0
    f = features["5-6@0>6"]
    assert 0 < _feature(f, "block") <= _feature(f, "force") < opponents
    if rules.teams:
        assert _feature(f, "partner") > 0
    else:
        assert _feature(f, "partner") == 0.0
    # At the lead nothing is known: the next seat may answer with a matador too, so
    # the chance it cannot answer at all is below the chance it has no regular answer.
    lead = HandState.deal(rules, 3)
    for f in ExpertAgent().features(lead.view(lead.to_move)):
        assert 0 < _feature(f, "block") < _feature(f, "force")


def test_the_expert_and_the_search_go_out_rather_than_draw() -> None:
    """Standard rules but one draw a turn: seat 1 drew 1-1 at the lead 2-4 and passed.
    Seat 0's last tile, the matador 0-0, fits either end, so it may also draw; going
    out is scored above everything (no terms), and the search finds it worth the
    most, whatever seat 1 holds."""
    s = _position(Rules(draw_rule="one"), [["2-4", "0-0"], NO_3_5], ["2-4"], ("1-1",))
    s = s.apply("draw").apply("pass")
    view = s.view(0)
    assert sorted(str(m) for m in view.legal_moves) == ["0-0@0>0", "0-0@1>0", "draw"]
    expert = ExpertAgent()
    assert [f is None for f in expert.features(view)] == [
        m.kind == "play" for m in view.legal_moves
    ]
    assert expert.act(view, random.Random(0)).kind == "play"
    for fast in (1, 0):
        found = SearchAgent(samples=8, fast=fast).search(view, random.Random(0))
        assert found.move.kind == "play"
        assert found.means[found.candidates.index(found.move)] == max(found.means) > 0


def test_the_expert_weights_point_the_way_of_the_strategy() -> None:
    """The base set, and every kept fitted set where the strategy fixes the sign: shed
    pips, keep matadors, shut the next seat out, help the partner, draw only for a tile
    that answers and not instead of placing one."""
    sets = {"base": ExpertWeights(), **fitted_weights()}
    for name, w in sets.items():
        assert w.pips_left < 0 and w.matador < 0 and w.matadors_left > 0, name
        assert w.force > 0 and w.partner > 0, name
        assert w.draw_fits > 0 and w.draw_instead < 0, name
    base = sets["base"]
    assert base.double_zero < 0 and base.block > 0 and base.follow > 0 and base.variety > 0


def test_the_expert_breaks_a_tie_with_its_generator() -> None:
    """draw_rule "none", ends 0 and 0: the matador 3-4 showing 3 (or 4) scores the same
    on either end, and the generator picks which."""
    s = _position(
        Rules(draw_rule="none"),
        [
            ["0-1", "3-4", "1-1", "2-2", "2-6", "4-4", "5-5"],
            ["0-6", "1-5", "0-2", "2-3", "3-3", "4-5", "1-2"],
        ],
        ["0-1", "0-6@1>0"],
    )
    view = s.view(0)
    assert {str(m) for m in view.legal_moves} == {"3-4@0>3", "3-4@0>4", "3-4@1>3", "3-4@1>4"}
    expert = ExpertAgent()
    chosen = {str(expert.act(view, random.Random(k))) for k in range(20)}
    assert chosen in ({"3-4@0>3", "3-4@1>3"}, {"3-4@0>4", "3-4@1>4"})


@pytest.mark.parametrize("fast", [1, 0])
def test_the_playouts_draw_their_random_numbers_from_the_generator(
    fast: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the real world alone, with the policy's jitter: the same generator replays
    the same means, another gives other playouts (not a seed of their own)."""
    agent = SearchAgent(samples=4, fast=fast)
    state = HandState.deal(Rules(), 6)
    _only_the_real_world(monkeypatch, state)
    view = state.view(state.to_move)
    means = [tuple(agent.search(view, random.Random(k)).means) for k in (0, 0, 1, 2)]
    assert means[0] == means[1]
    assert len(set(means[1:])) == 3
