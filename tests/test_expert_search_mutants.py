"""The expert's and the search's behaviours that mutation testing of agents/expert.py and
agents/search.py (outside the world dealing) found unguarded by the other tests: the
weights settable from the spec and the set played under each rules, the seats' terms
worked out from the marginals, a domino scored above every move whatever the weights,
and the search's budget and playouts as its options ask. Strength is never asserted.
(The refusals the same run found unguarded, of a weights file, an empty weights option
and float flags, are rows of older tables.)"""

from __future__ import annotations

import math
import random
from dataclasses import astuple, replace
from typing import Any

import numpy as np
import pytest

import agents.expert as expert_module
import agents.search as search_module
from agents import ExpertAgent, SearchAgent, make_agent
from agents.expert import FEATURES, ExpertWeights
from agents.knowledge import Knowledge, bits, regular_fit, tables
from agents.search import SearchResult, search_spec
from matador_env.configs import configuration
from matador_env.engine import HandState, Rules
from tests.test_agents import (
    NO_3_5,
    PLAYOUT_PATHS,
    _decisions,
    _feature,
    _means_are_worths,
    _only_the_real_world,
    _position,
    _searcher,
    _whole_number_policy,
    tile,
)

# -- the weights played -----------------------------------------------------------------------


@pytest.mark.parametrize("feature", FEATURES)
def test_every_weight_is_settable_from_the_spec(feature: str) -> None:
    """The module docstring: every weight is settable from the spec on top of the set
    played (``expert:partner=8``), the last of FEATURES as much as the first."""
    agent = make_agent(f"expert:{feature}=1.5")
    assert isinstance(agent, ExpertAgent)
    assert getattr(agent.weights_for(Rules()), feature) == 1.5
    assert agent.spec == f"expert:weights=fitted,{feature}=1.5"


def test_a_weight_of_minus_zero_is_the_player_of_zero() -> None:
    """-0 and 0 are one weight: one player, one canonical spec."""
    for weights in ("fitted", "base"):
        minus = make_agent(f"expert:weights={weights},partner=-0")
        plus = make_agent(f"expert:weights={weights},partner=0")
        assert minus.spec == plus.spec


def test_one_expert_plays_each_rules_with_its_own_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """An expert that has played a hand of one configuration scores the next hand, of
    another, with that one's set (the arena seats one agent for every match)."""
    leiden = replace(ExpertWeights(), block=-7.0, force=2.0)
    monkeypatch.setattr(expert_module, "fitted_weights", lambda: {"leiden": leiden})
    expert = ExpertAgent()
    for config, weights in (("standard", ExpertWeights()), ("leiden", leiden)):
        state = HandState.deal(configuration(config).rules(), 4)
        view = state.view(state.to_move)
        w = np.array(astuple(weights))
        pairs = [
            (s, f) for s, f in zip(expert.scores(view), expert.features(view), strict=True) if f
        ]
        assert [s for s, _ in pairs] == pytest.approx([float(np.dot(w, f)) for _, f in pairs])


def _go_out_or_draw() -> HandState:
    """Standard rules but one draw a turn: seat 1 drew 1-1 at the lead 2-4 and passed;
    seat 0's last tile, the matador 0-0, goes out on either end, or it may draw."""
    s = _position(Rules(draw_rule="one"), [["2-4", "0-0"], NO_3_5], ["2-4"], ("1-1",))
    return s.apply("draw").apply("pass")


def test_going_out_is_scored_above_every_move_whatever_the_weights() -> None:
    """scores(): "a domino is best", also for a player whose weights make a draw worth
    far more than the base set does (expert:draw_fits=1000)."""
    view = _go_out_or_draw().view(0)
    expert = ExpertAgent(overrides={"draw_fits": 1000.0, "draw": 50.0})
    draw = view.legal_moves.index(next(m for m in view.legal_moves if m.kind == "draw"))
    scores = expert.scores(view)
    assert scores[draw] > 100
    assert expert.act(view, random.Random(0)).kind == "play"


# -- the seats' terms -------------------------------------------------------------------------


def _none_of(row: list[float], mask: int) -> float:
    """The chance that a seat holds none of ``mask``, from its row of the marginals."""
    return math.prod(1.0 - row[t] for t in bits(mask))


@pytest.mark.parametrize("config", ["standard_3p", "standard_4p", "pagat_teams"])
def test_the_seat_terms_are_worked_out_from_the_marginals(config: str) -> None:
    """block, force and partner of every move, from the marginals of the seats after
    the mover in turn: the next opponent counts whole and later ones a third, force
    is the chance it holds no regular answer at the ends left and block that it holds
    no matador either; a partner counts the chance it can answer (a regular tile or a
    matador), times 1 + 2 / its tiles (more when it is near going out)."""
    rules = configuration(config).rules()
    tb = tables(rules)
    expert = ExpertAgent(ExpertWeights())
    checked = 0
    for state in _decisions(rules, 3 * rules.players):
        view = state.view(state.to_move)
        kn = Knowledge(view)
        p = kn.marginals()
        me = view.seat
        side = rules.side_of(me)
        unseen_reg = kn.unseen & tb.regular
        unseen_mat = kn.unseen & tb.matador
        for move, f in zip(view.legal_moves, expert.features(view), strict=True):
            if f is None or move.kind == "pass":
                continue
            ends = state.apply(move).ends if move.kind == "play" else view.ends
            if not ends:
                continue
            fit = regular_fit(tb, ends) & unseen_reg
            block = force = partner = 0.0
            weight = 1.0
            for d in range(1, rules.players):
                s = (me + d) % rules.players
                no_reg = _none_of(p[s], fit)
                no_mat = _none_of(p[s], unseen_mat)
                if rules.side_of(s) == side:
                    partner += (1.0 - no_reg * no_mat) * (1.0 + 2.0 / view.hand_sizes[s])
                    continue
                block += weight * no_reg * no_mat
                force += weight * no_reg
                weight = 1.0 / 3.0
            for name, want in (("block", block), ("force", force), ("partner", partner)):
                assert _feature(f, name) == pytest.approx(want), (name, str(move), str(state))
            checked += 1
    assert checked > 30


def test_a_draw_before_the_lead_scores_no_ends() -> None:
    """voluntary_draw "always": the leader may draw instead of leading. There are no
    ends yet, so the draw's end terms are nothing (no seat is shut out, no answer is
    kept or missing), while its chance of drawing a tile to lead is counted."""
    rules = Rules(voluntary_draw="always")
    state = HandState.deal(rules, 2)
    view = state.view(state.to_move)
    assert not view.ends and any(m.kind == "draw" for m in view.legal_moves)
    features = dict(zip(view.legal_moves, ExpertAgent().features(view), strict=True))
    f = next(f for m, f in features.items() if m.kind == "draw")
    for name in ("block", "force", "partner", "follow", "stuck", "zero_ends"):
        assert _feature(f, name) == 0.0, name
    # Any unseen tile that may lead would do, a matador as well as a regular one.
    tb = tables(rules)
    unseen = Knowledge(view).unseen
    assert tb.leadable & tb.matador & unseen
    fits = (tb.leadable & unseen).bit_count() / unseen.bit_count()
    assert _feature(f, "draw_fits") == pytest.approx(fits)
    assert _feature(f, "draw_instead") == 1.0


def test_spending_0_0_is_counted_down_to_the_last_two_tiles() -> None:
    """draw_rule "none": seat 1 passed at the lead 2-4, and seat 0 holds 0-0 and 1-1,
    of which only 0-0 fits. Laying 0-0 (either end) spends the most valuable tile even
    with one tile left after it (double_zero, and the matador spent late in the hand)."""
    s = _position(Rules(draw_rule="none"), [["2-4", "0-0", "1-1"], NO_3_5], ["2-4", "pass"])
    view = s.view(0)
    assert len(view.legal_moves) == 2 and {m.tile for m in view.legal_moves} == {tile("0-0")}
    for f in ExpertAgent().features(view):
        assert _feature(f, "double_zero") == 1.0
        assert _feature(f, "matador") == 1.0 and _feature(f, "matador_late") == 0.5


# -- the search's options and budget ----------------------------------------------------------


@pytest.mark.parametrize(("players", "samples"), [(2, 64), (3, 256), (4, 256)])
def test_the_measured_search_takes_more_worlds_with_several_hidden_hands(
    players: int, samples: int
) -> None:
    assert search_spec(Rules(players=players)) == f"search:samples={samples}"


def test_one_world_a_candidate_still_plays_every_candidate() -> None:
    """samples=1 with six candidates and successive halving: every candidate is played
    out in at least one world (a round never gives a candidate none)."""
    state = HandState.deal(Rules(), 4)  # the lead: seven tiles to lead
    view = state.view(state.to_move)
    for fast in (1, 0):
        found = SearchAgent(samples=1, width=6, fast=fast).search(view, random.Random(0))
        assert len(found.candidates) == 6
        assert min(found.worlds) >= 1
        assert all(math.isfinite(m) for m in found.means)


def test_fast_0_plays_no_compiled_playout(monkeypatch: pytest.MonkeyPatch) -> None:
    """fast=0 turns the compiled playouts off even where numba is installed."""
    agent = SearchAgent(samples=4, fast=0)
    assert not agent.fast and agent.spec.endswith("fast=0")
    if search_module.batch_playouts_available():
        from matador_env.batch import WorldPlayouts

        def refused(self: WorldPlayouts, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a compiled playout under fast=0")

        monkeypatch.setattr(WorldPlayouts, "run", refused)
    for preset in ("standard", "leiden"):
        state = HandState.deal(Rules.preset(preset), 3)
        agent.search(state.view(state.to_move), random.Random(0))


def test_a_search_without_numba_names_itself_fast_0(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without numba the playouts are the engine's or the bit masks', which play
    otherwise: the name in a report and the spec a worker rebuilds it from say
    fast=0, where they had named the compiled search asked for."""
    monkeypatch.setattr(search_module, "batch_playouts_available", lambda: False)
    agent = SearchAgent(samples=4)
    assert not agent.fast
    assert agent.name == "search:samples=4,playouts=1,width=6,fast=0"
    assert agent.spec.endswith(",fast=0")


def test_the_compiled_playouts_are_asked_for_the_playouts_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """playouts=N: each world is played out N times a candidate on the compiled path."""
    pytest.importorskip("numba")
    from matador_env.batch import WorldPlayouts

    asked: list[int] = []
    run = WorldPlayouts.run

    def spied(self: WorldPlayouts, worlds: list, actions: list, playouts: int, seed: int) -> Any:
        asked.append(playouts)
        return run(self, worlds, actions, playouts, seed)

    monkeypatch.setattr(WorldPlayouts, "run", spied)
    state = HandState.deal(Rules(), 4)
    SearchAgent(samples=2, playouts=3).search(state.view(state.to_move), random.Random(0))
    assert asked and set(asked) == {3}


@pytest.mark.parametrize("path", PLAYOUT_PATHS)
def test_a_mean_is_per_playout_with_several_playouts(
    path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """playouts=3 on the real world with the whole-number policy: each playout gives the
    hand's worth, and the mean is that worth, not three times it."""
    _whole_number_policy(monkeypatch)
    rules = configuration("leiden" if path == "engine" else "standard").rules()
    _means_are_worths(rules, _searcher(path, monkeypatch, playouts=3), monkeypatch)


def test_a_dropped_candidate_never_ranks_above_a_survivor_on_losses() -> None:
    """ranked_means with every mean a loss: the candidate dropped after 16 worlds on a
    mean above the survivors' is capped by the lowest of them."""
    moves = list(HandState.deal(Rules(), 1).legal_moves()[:3])
    result = SearchResult(moves[1], moves, [-1.0, -4.0, -3.0], [16, 32, 32])
    assert result.ranked_means() == [-4.0, -4.0, -3.0]


@pytest.mark.parametrize(
    "rules",
    [Rules(voluntary_draw="always", draw_rule="one"), Rules(voluntary_draw="always")],
    ids=["one_draw", "until_playable"],
)
def test_a_draw_candidate_is_played_out_on_bit_masks_as_through_the_engine(
    rules: Rules, monkeypatch: pytest.MonkeyPatch
) -> None:
    """voluntary_draw "always", every candidate searched (the draw among them, the lead
    included): on the real world with the whole-number policy each mean is the hand's
    worth after the move, the drawn tile leaving the boneyard and counting against
    the turn's draws (draw_rule "one": no second draw), as the engine plays it."""
    _whole_number_policy(monkeypatch)
    assert search_module.LineRollout.applies(rules)
    _means_are_worths(rules, _searcher("bit masks", monkeypatch, width=28), monkeypatch)


def test_a_draw_before_the_lead_is_played_out_as_through_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """voluntary_draw "always" at the lead, without compiled playouts: a draw before any
    tile is down is played out through the engine (the bit masks start once a tile
    is down), each candidate worth the hand played out after it on the real world."""
    _whole_number_policy(monkeypatch)
    rules = Rules(voluntary_draw="always")
    agent = _searcher("bit masks", monkeypatch, width=28)
    leads = [HandState.deal(rules, seed) for seed in range(4)]
    for found in _searched_on_the_real_world(agent, leads, monkeypatch):
        assert any(m.kind == "draw" for m in found.candidates)


def _searched_on_the_real_world(
    agent: SearchAgent, states: list[HandState], monkeypatch: pytest.MonkeyPatch
) -> list[SearchResult]:
    """Search each state on its real world alone and check that each candidate's mean
    is the hand's worth after it (the engine's rollout); a lone candidate, played in no
    world, is left out."""
    found = []
    for state in states:
        rules = state.rules
        _only_the_real_world(monkeypatch, state)
        view = state.view(state.to_move)
        result = agent.search(view, random.Random(0))
        if len(result.candidates) == 1:
            continue
        side = rules.side_of(view.seat)
        want = [
            search_module.utility(
                search_module.rollout(state.apply(m), tables(rules), random.Random(0)),
                side,
                rules.sides,
            )
            for m in result.candidates
        ]
        assert result.means == pytest.approx(want), str(state)
        found.append(result)
    return found


def test_the_engine_playouts_draw_their_random_numbers_from_the_generator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Rules the bit masks cannot play (leiden's spinner), no drawing, no compiled
    playouts, on the real world alone: the jitter of the policy's placements comes from
    the generator, so the same one replays the same means and others give other
    playouts of that one world."""
    rules = Rules.preset("leiden", draw_rule="none")
    assert not search_module.LineRollout.applies(rules)
    agent = SearchAgent(samples=4, fast=0)
    state = HandState.deal(rules, 6)
    _only_the_real_world(monkeypatch, state)
    view = state.view(state.to_move)
    means = [tuple(agent.search(view, random.Random(k)).means) for k in (0, 0, 1, 2)]
    assert means[0] == means[1]
    assert len(set(means[1:])) == 3


def test_matadors_held_back_until_stuck_are_played_out_on_bit_masks_as_through_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """matador_only_when_stuck (matadors laid in line): the bit-mask playouts hold a
    matador back while a regular tile fits, as the engine does; each mean is the
    hand's worth on the real world."""
    _whole_number_policy(monkeypatch)
    rules = Rules(matador_only_when_stuck=True)
    assert search_module.LineRollout.applies(rules)
    agent = _searcher("bit masks", monkeypatch, width=28)
    assert len(_searched_on_the_real_world(agent, _decisions(rules, 8), monkeypatch)) > 3
