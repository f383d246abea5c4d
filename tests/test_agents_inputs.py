"""The agents' inputs (an audit of the agents): the worlds the search deals keep every
inference even where the constructive dealer dead-ends; every agent's ``act`` refuses a
view with no move to make, and every constructor an argument it would fail on later;
the expert plays a configuration's fitted weights whatever the match around the hand."""

from __future__ import annotations

import math
import random
import re
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

import agents.base as base_module
import agents.expert as expert_module
import agents.search as search_module
from agents import ExpertAgent, GreedyAgent, RandomAgent, SearchAgent, make_agent
from agents.expert import MATCH_FIELDS, ExpertWeights, configuration_played
from agents.knowledge import Knowledge, bits
from agents.policy import BotAgent, PolicyAgent
from matador_env.bot import load_bot
from matador_env.configs import configuration
from matador_env.engine import HandState, Rules, SeatView, parse_hand_record
from matador_env.policy import load_policy

# A reachable double-twelve position, four seats, seat 0 to move (found by the audit):
# seats 1 and 3 hold voids and seat 3 two caps that random constructions of the hidden
# hands dead-end on 93 times in 100.
TIGHT_RECORD = "".join(
    [
        "# Matador hand record v1\n",
        "rules: set_max=12 players=4 teams=False hand_size=by_players first_leader=random ",
        "lead_tile=any next_leader=rotate draw_rule=until_playable boneyard_reserve=2 ",
        "voluntary_draw=only_matadors matador_placement=inline matador_as_regular=False ",
        "matador_only_when_stuck=False spinner=none blocked_scoring=others_minus_own tie=void",
        " target_score=100 match_end=first_to_target\n",
        "seed: 953\n",
        "leader: 2\n",
        "hand 0: 0-4 4-4 4-10 7-11 10-11\n",
        "hand 1: 0-1 0-2 1-9 8-9 9-12\n",
        "hand 2: 1-3 1-5 5-5 6-9 5-12\n",
        "hand 3: 2-4 0-11 5-11 11-11 3-12\n",
        "boneyard: 2-5 6-6 3-11 0-6 7-10 6-8 10-10 6-11 1-1 9-9 2-10 3-3 9-11 7-7 2-12 3-6 ",
        "4-6 5-10 1-10 1-12 12-12 4-5 6-12 0-7 2-9 9-10 4-12 8-10 2-7 0-9 10-12 6-10 8-12 7-8",
        " 1-11 5-9 3-4 5-7 3-5 8-8 5-6 7-12 2-6 8-11 0-5 3-10 7-9 2-2 1-8 6-7 3-8 0-8 5-8 ",
        "11-12 1-2 4-8 1-6 2-8 1-4 2-11 3-9 4-11 0-12 0-3 2-3 3-7 0-10 4-7 4-9 1-7 0-0\n",
        "moves: 5-12 draw draw draw draw draw draw 6-8@0>6 7-11@0>11 1-9@1>9 draw draw draw ",
        "draw draw 2-10@0>10 3-11@0>11 4-10@1>10 0-2@0>0 1-3@1>1 3-12@1>3 10-11@1>11 draw ",
        "draw draw draw 2-12@1>12 1-5@1>5 draw draw draw draw draw 1-12@1>12 draw draw draw ",
        "draw draw draw draw draw draw draw draw draw draw draw draw 1-11@1>11 draw draw draw",
        " draw draw draw draw draw 2-6@1>6 draw draw draw 3-10@0>3 7-10@1>10 10-12@0>12 ",
        "3-3@1>3 10-10@1>10 1-10@0>10 draw draw draw draw 6-7@1>6 3-5@0>5 8-11@0>11 2-5@0>5 ",
        "8-12@0>12 5-7@1>5 1-1@0>1 draw 3-8@1>3 12-12@0>12 0-1@0>0 draw draw 5-8@0>5 5-10@1>5",
        " 8-10@0>10 8-8@1>8 5-5@1>5 3-6@0>6 7-9@0>9 8-9@1>9 draw draw draw 4-8@0>8 5-11@0>11 ",
        "4-12@1>12 draw 1-6@1>6 1-2@0>1 draw draw draw 2-11@1>2 6-12@0>6 7-12@0>12 11-12@1>12",
        " 1-4@1>4 0-9@1>0 draw draw draw draw draw draw draw draw draw 4-9@1>9 pass 4-6@1>6 ",
        "7-8@1>8 5-6@1>6 pass pass 0-7@1>0 pass pass pass 1-8@0>8 5-9@0>9 pass 2-4@0>2 pass ",
        "4-11@0>4 9-9@0>9 pass\n",
    ]
)


def _tight() -> tuple[HandState, Knowledge]:
    state = parse_hand_record(TIGHT_RECORD).replay()
    return state, Knowledge(state.view(state.to_move))


def _assert_consistent(kn: Knowledge, hands: list[int], rest: list[int]) -> None:
    """Every hidden hand of its size, keeping every void and cap; every unseen tile once."""
    assert hands[kn.me] == kn.hand
    dealt = 0
    for s in kn.hidden_seats:
        assert kn.allows(s, hands[s]), (s, bits(hands[s] & kn.void[s]))
        assert hands[s].bit_count() == kn.sizes[s]
        assert not dealt & hands[s]
        dealt |= hands[s]
    assert len(rest) == kn.boneyard_size
    assert sorted(bits(dealt) + rest) == bits(kn.unseen)


# -- 1. worlds keep every inference where the construction dead-ends --------------------------


def test_the_tight_position_is_one_the_construction_dead_ends_on() -> None:
    """The premise of the next tests: the true hands keep every inference, yet most
    random constructions of the hidden hands fail."""
    state, kn = _tight()
    assert state.rules == Rules.preset("double_twelve", players=4)
    assert all(kn.allows(s, state.hand_mask(s)) for s in kn.hidden_seats)
    assert any(kn.soft[s] for s in kn.hidden_seats)
    dead = sum(kn._construct(random.Random(i), 0) is None for i in range(200))
    assert dead > 150


def test_no_world_breaks_a_void_or_cap_where_the_construction_dead_ends() -> None:
    """sample_masks (with its 64 constructions, and with one so that nearly every world
    comes from the exact dealer) and sample_many, the search's path, on the tight
    position: no world gives a seat a tile it is known not to hold, or more of a capped
    set than it may hold."""
    _, kn = _tight()
    for seed in range(600):
        _assert_consistent(kn, *kn.sample_masks(random.Random(seed)))
    for seed in range(200):
        _assert_consistent(kn, *kn.sample_masks(random.Random(seed), tries=1))
    for hands, rest in kn.sample_many(random.Random(0), 600):
        _assert_consistent(kn, hands, rest)


def test_the_exact_dealer_runs_only_after_every_construction_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where a construction succeeds, sample_masks deals as before (the compiled dealer
    reproduces those worlds): the exact dealer is reached only once all tries failed."""
    _, kn = _tight()
    calls: list[str] = []
    construct, exact = Knowledge._construct, Knowledge._exact

    def counted_construct(self: Knowledge, rng: random.Random, relax: int) -> Any:
        got = construct(self, rng, relax)
        calls.append("ok" if got is not None else "dead end")
        return got

    def counted_exact(self: Knowledge, rng: random.Random, relax: int) -> Any:
        calls.append("exact")
        return exact(self, rng, relax)

    monkeypatch.setattr(Knowledge, "_construct", counted_construct)
    monkeypatch.setattr(Knowledge, "_exact", counted_exact)
    reached = 0
    for seed in range(100):
        calls.clear()
        kn.sample_masks(random.Random(seed), tries=4)
        if "exact" in calls:
            assert calls == ["dead end"] * 4 + ["exact"]
            reached += 1
        else:
            assert calls[-1] == "ok" and calls[:-1] == ["dead end"] * (len(calls) - 1)
    assert 0 < reached < 100


def test_the_exact_dealer_finds_a_deal_wherever_one_exists() -> None:
    """Positions of 3- and 4-seat play (the true deal is always consistent): the exact
    dealer deals one keeping every inference in each."""
    rng = random.Random(7)
    expert = ExpertAgent()
    checked = 0
    for rules in (configuration("standard_4p").rules(), Rules.preset("double_nine", players=3)):
        for seed in range(3):
            state = HandState.deal(rules, seed)
            while not state.is_over:
                view = state.view(state.to_move)
                kn = Knowledge(view)
                got = kn._exact(random.Random(checked), 0)
                assert got is not None
                _assert_consistent(kn, *got)
                checked += 1
                state = state.apply(expert.act(view, rng))
    assert checked > 100


def test_caps_then_voids_are_let_go_only_when_no_deal_keeps_them() -> None:
    """A history no deal fits (here: caps and voids made up on the tight position).
    The exact dealer proves it, and sample_masks keeps what can be kept: the voids
    where only the caps fail, the sizes alone where the voids fail too."""
    _, kn = _tight()
    one = kn.hidden_seats[0]
    # Seat `one` holds at most one of the tiles it may hold but for two: too few.
    may = bits(kn.unseen & ~kn.void[one])
    kn.soft[one] = [(sum(1 << t for t in may[: len(may) - 2]), 1)]
    assert kn.sizes[one] > 3
    assert kn._exact(random.Random(0), 0) is None
    for seed in range(20):
        hands, rest = kn.sample_masks(random.Random(seed))
        for s in kn.hidden_seats:
            assert not hands[s] & kn.void[s] and hands[s].bit_count() == kn.sizes[s]
        assert sorted(bits(sum(hands[s] for s in kn.hidden_seats)) + rest) == bits(kn.unseen)
    # Every hidden seat void of every unseen tile: only the sizes are kept.
    _, kn = _tight()
    for s in kn.hidden_seats:
        kn.void[s] = kn.unseen
    assert kn._exact(random.Random(0), 0) is None and kn._exact(random.Random(0), 1) is None
    hands, rest = kn.sample_masks(random.Random(1))
    assert [hands[s].bit_count() for s in kn.hidden_seats] == [kn.sizes[s] for s in kn.hidden_seats]
    assert len(rest) == kn.boneyard_size


# -- 2. a view with no move to make, or no view -----------------------------------------------

AGENT_SPECS = [
    "random",
    "greedy",
    "expert",
    "search:samples=2,width=3",
    "search:samples=2,width=3,fast=0",
    "policy:matador_env/bots/standard",
    "bot:greedy",
]


def _finished() -> HandState:
    state = HandState.deal(Rules(), 5)
    while not state.is_over:
        state = state.apply(state.legal_moves()[0])
    return state


@pytest.mark.parametrize("spec", AGENT_SPECS)
def test_every_agent_refuses_a_view_with_no_move_to_make(spec: str) -> None:
    agent = make_agent(spec)
    state = HandState.deal(Rules(), 5)
    other = 1 - state.to_move
    with pytest.raises(ValueError, match=f"seat {other} is not to act: seat {state.to_move} is"):
        agent.act(state.view(other), random.Random(0))
    with pytest.raises(ValueError, match=r"the hand is over \(.*\); there is no move to make"):
        agent.act(_finished().view(0), random.Random(0))
    with pytest.raises(TypeError, match=r"expected a SeatView .*state\.view\(seat\).*HandState"):
        agent.act(state, random.Random(0))  # type: ignore[arg-type]
    # The message names the player.
    with pytest.raises(ValueError, match=f"^{agent.name}: "):
        agent.act(state.view(other), random.Random(0))


@pytest.mark.parametrize("spec", AGENT_SPECS)
@pytest.mark.parametrize("rng", [None, 7, np.random.default_rng(7)], ids=["None", "int", "numpy"])
def test_every_agent_refuses_a_generator_that_is_no_random_random(spec: str, rng: object) -> None:
    """Most agents touch their generator only to break a tie or to sample: a wrong one
    is refused on every move, not in some games."""
    agent = make_agent(spec)
    state = HandState.deal(Rules(), 5)
    with pytest.raises(
        TypeError,
        match=f"^{re.escape(agent.name)}: rng=.* is not allowed; allowed: a random.Random "
        r"\(e\.g\. random\.Random\(seed\)\)$",
    ):
        agent.act(state.view(state.to_move), rng)  # type: ignore[arg-type]
    # A subclass of random.Random is one.
    assert agent.act(state.view(state.to_move), random.SystemRandom()) in state.legal_moves()


def test_the_bot_runtime_takes_no_generator_but_refuses_a_wrong_one() -> None:
    bot = load_bot("casual", rules="standard")
    state = HandState.deal(Rules(), 5)
    view = state.view(state.to_move)
    assert bot.choose(view) in state.legal_moves()
    assert bot.choose(view, None) in state.legal_moves()
    with pytest.raises(TypeError, match=r"^bot .*: rng=7 is not allowed; allowed: .* or None$"):
        bot.choose(view, 7)  # type: ignore[arg-type]
    policy = load_policy("matador_env/bots/standard")
    assert policy.choose(view, None) in state.legal_moves()
    with pytest.raises(TypeError, match=r"^policy .*: rng=7 is not allowed; allowed: .* or None$"):
        policy.choose(view, 7)  # type: ignore[arg-type]


def test_a_view_that_lists_no_legal_move_is_refused() -> None:
    state = HandState.deal(Rules(), 5)
    view = replace(state.view(state.to_move), legal_moves=())
    for agent in (RandomAgent(), GreedyAgent(), ExpertAgent(), SearchAgent(samples=2)):
        with pytest.raises(ValueError, match="lists no legal move"):
            agent.act(view, random.Random(0))


def test_the_search_entry_points_refuse_as_act_does() -> None:
    agent = SearchAgent(samples=2, width=3)
    state = HandState.deal(Rules(), 5)
    view = state.view(1 - state.to_move)
    for entry in (agent.search, agent.evaluate):
        with pytest.raises(ValueError, match="is not to act"):
            entry(view, random.Random(0))  # type: ignore[operator]


@pytest.mark.parametrize("spec", ["expert", "search:samples=4", "search:samples=4,fast=0"])
def test_the_check_runs_once_a_move(monkeypatch: pytest.MonkeyPatch, spec: str) -> None:
    """On every move, the search's included: its expert ordering and its playouts
    call no act, so the view is checked once per decision, not per world."""
    calls: list[SeatView] = []
    check = base_module.checked_turn

    def counted(view: object, rng: object, agent: str) -> Any:
        calls.append(view)  # type: ignore[arg-type]
        return check(view, rng, agent)

    for module in (base_module, expert_module, search_module):
        monkeypatch.setattr(module, "checked_turn", counted)
    agent = make_agent(spec)
    rules = configuration("standard_3p").rules()
    state = HandState.deal(rules, 3)
    rng = random.Random(0)
    moves = 0
    while not state.is_over:
        view = state.view(state.to_move)
        state = state.apply(agent.act(view, rng))
        moves += 1
    assert len(calls) == moves


@pytest.mark.parametrize("spec", [None, 3, b"random", ["random"]])
def test_make_agent_takes_a_str(spec: object) -> None:
    with pytest.raises(TypeError, match="make_agent: the spec is a str.*known specs: random"):
        make_agent(spec)  # type: ignore[arg-type]


# -- 3. constructors refuse what they would fail on mid-game ----------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "says"),
    [
        (
            {"samples": 2.5},
            TypeError,
            "samples=2.5 is not allowed; allowed: an integer from 1 to 100000 (int, a numpy "
            "integer or a "
            "0-d integer array; not a bool)",
        ),
        ({"samples": "8"}, TypeError, "samples='8' is not allowed; allowed: an integer from 1"),
        ({"samples": True}, TypeError, "samples=True is not allowed"),
        ({"samples": None}, TypeError, "samples=None is not allowed"),
        ({"samples": 0}, ValueError, "samples=0 is not allowed; allowed: an integer from 1 to"),
        (
            {"samples": 100_001},
            ValueError,
            "samples=100001 is not allowed; allowed: an integer from 1 to 100000",
        ),
        ({"playouts": 10**23}, ValueError, "playouts=" + "1" + "0" * 23 + " is not allowed"),
        ({"playouts": 1.0}, TypeError, "playouts=1.0 is not allowed"),
        ({"playouts": -1}, ValueError, "playouts=-1 is not allowed"),
        ({"width": 0}, ValueError, "width=0 is not allowed; allowed: an integer from 1 to"),
        ({"width": np.float64(3)}, TypeError, "width=np.float64(3.0) is not allowed"),
        ({"halving": 2}, ValueError, "halving=2 is not allowed; allowed: 0 or 1"),
        ({"fast": -1}, ValueError, "fast=-1 is not allowed; allowed: 0 or 1"),
        ({"fast": "0"}, TypeError, "fast='0' is not allowed; allowed: 0 or 1"),
        # A float is no flag, and the refusal says a flag takes a bool.
        (
            {"halving": 1.0},
            TypeError,
            "halving=1.0 is not allowed; allowed: 0 or 1 (an int, a numpy integer or a 0-d "
            "integer array; or Python's True or False)",
        ),
        ({"fast": 0.0}, TypeError, "fast=0.0 is not allowed; allowed: 0 or 1"),
        (
            {"fast": np.float64(1)},
            TypeError,
            "fast=np.float64(1.0) is not allowed; allowed: 0 or 1",
        ),
    ],
)
def test_the_search_takes_integers_in_its_spec_ranges(
    kwargs: dict[str, Any], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match="^SearchAgent: " + re.escape(says)):
        SearchAgent(**kwargs)


def test_the_search_reads_numpy_integers_as_ints() -> None:
    agent = SearchAgent(samples=np.int64(8), width=np.int32(3), halving=np.int8(0))
    assert (agent.samples, agent.width, agent.halving) == (8, 3, 0)
    # The flags take bools as the 0 and 1 their spec writes; a count does not.
    assert (SearchAgent(halving=True, fast=False).halving, SearchAgent(fast=False).fast) == (1, 0)
    with pytest.raises(TypeError, match="samples=True is not allowed"):
        SearchAgent(samples=True)
    assert type(agent.samples) is int
    assert agent.spec == make_agent("search:samples=8,width=3,halving=0").spec


BOT = "matador_env/bots/standard"


@pytest.mark.parametrize(
    ("build", "args", "error", "says"),
    [
        (ExpertAgent, ["base"], TypeError, "ExpertAgent: weights='base' is not allowed"),
        (ExpertAgent, [None, [("partner", 1)]], TypeError, "overrides=.* is not allowed"),
        (ExpertAgent, [None, {"courage": 1}], ValueError, "overrides name no weight"),
        (ExpertAgent, [None, {"partner": "8"}], TypeError, "partner='8' is not allowed"),
        (ExpertAgent, [None, {"partner": None}], TypeError, "partner=None is not allowed"),
        (ExpertAgent, [None, {"partner": True}], TypeError, "partner=True is not allowed"),
        (ExpertAgent, [None, {"partner": math.nan}], ValueError, "partner=nan is not allowed"),
        (ExpertAgent, [None, {"block": -math.inf}], ValueError, "block=-inf is not allowed"),
        (PolicyAgent, [BOT, "false"], TypeError, "PolicyAgent: sample='false' is not allowed"),
        (BotAgent, ["nope"], ValueError, "BotAgent: level='nope' is not allowed"),
        (BotAgent, [None], TypeError, "BotAgent: level=None is not allowed"),
    ],
)
def test_the_other_constructors_refuse_what_they_would_fail_on(
    build: Any, args: list[Any], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        build(*args)


@pytest.mark.parametrize(
    ("value", "error"), [("11", TypeError), (None, TypeError), (math.inf, ValueError)]
)
def test_expert_weights_are_finite_numbers(value: Any, error: type[Exception]) -> None:
    with pytest.raises(
        error, match=f"ExpertWeights: force={re.escape(repr(value))} is not allowed"
    ):
        ExpertWeights(force=value)


def test_expert_weights_are_held_as_floats() -> None:
    agent = ExpertAgent(None, {"partner": 8, "block": np.float32(1.5)})
    assert agent.overrides == {"partner": 8.0, "block": 1.5}
    assert all(type(v) is float for v in agent.overrides.values())
    assert ExpertWeights(force=11).force == 11.0


# -- 4. the expert's fitted set, whatever the match around the hand ---------------------------


@pytest.mark.parametrize(
    "match",
    [
        {"target_score": 150},
        {"match_end": "complete_round"},
        {"next_leader": "loser"},
        {"target_score": 7, "next_leader": "winner"},
    ],
)
def test_the_match_around_the_hand_keeps_the_fitted_set(
    monkeypatch: pytest.MonkeyPatch, match: dict[str, Any]
) -> None:
    assert set(match) <= set(MATCH_FIELDS)
    polish = replace(ExpertWeights(), block=-7.0)
    monkeypatch.setattr(expert_module, "fitted_weights", lambda: {"polish": polish})
    rules = Rules.preset("polish", **match)
    assert rules != configuration("polish").rules()
    assert configuration_played(rules) == configuration("polish")
    assert ExpertAgent().weights_for(rules) == polish
    assert make_agent("expert:partner=2").weights_for(rules) == replace(polish, partner=2.0)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "hand",
    [{"tie": "redeal"}, {"first_leader": "random"}, {"hand_size": 5}, {"players": 3}],
)
def test_the_rules_of_the_hand_still_pick_the_set(
    monkeypatch: pytest.MonkeyPatch, hand: dict[str, Any]
) -> None:
    """tie and first_leader are of the hand (how a blocked hand scores, who leads it)."""
    polish = replace(ExpertWeights(), block=-7.0)
    monkeypatch.setattr(expert_module, "fitted_weights", lambda: {"polish": polish})
    rules = Rules.preset("polish", **hand)
    assert configuration_played(rules) is None
    assert ExpertAgent().weights_for(rules) == ExpertWeights()
