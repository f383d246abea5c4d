"""The agents: the registry of specs, legal play on every rules variant, the public-information
inference and sampling behind the search, the expert's strategy in scripted positions,
and the search's strength and reproducibility."""

from __future__ import annotations

import math
import random

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
from agents.expert import ExpertWeights
from agents.knowledge import Constraint, Knowledge, bits, tables
from matador_env.engine import PRESETS, HandState, Move, Rules, Tile

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
        ("search:samples=many", "expected an integer"),
        ("search:samples=0", "must be >= 1"),
        ("search:samples=-3", "samples='-3': expected an integer >= 1 in the digits 0-9"),
        ("search:samples=１６", "samples='１６': expected an integer >= 1 in the digits 0-9"),
        ("search:width=+4", "width='+4': expected an integer >= 1 in the digits 0-9"),
        ("search:playouts=1_0", "playouts='1_0': expected an integer >= 1"),
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
