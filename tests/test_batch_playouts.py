"""The search agent's compiled playouts: the same rules and the same policy as its
engine playouts, on every rule family, and a search that stays reproducible."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("numba")

import agents.search as search_module  # noqa: E402
from agents.expert import ExpertAgent  # noqa: E402
from agents.knowledge import Knowledge, tables  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from matador_env.batch import BatchError, WorldPlayouts  # noqa: E402
from matador_env.engine import HandState, Rules  # noqa: E402
from matador_env.engine.rules import PRESETS  # noqa: E402

FAMILIES: dict[str, Rules] = {name: Rules.preset(name) for name in PRESETS}
FAMILIES.update(
    {
        "pagat_teams": Rules.preset("pagat", players=4, teams=True),
        "kardinal_4p": Rules.preset("kardinal", players=4),
        "polish_3p_regular": Rules.preset("polish", players=3, matador_as_regular=True),
        "crosswise_choice": Rules(matador_placement="crosswise_choice"),
        "crosswise_on_blank": Rules(matador_placement="crosswise_on_blank", draw_rule="one"),
        "first_double_spinner": Rules(spinner="first_double", voluntary_draw="always"),
        "stuck_regular": Rules(matador_only_when_stuck=True, matador_as_regular=True),
        "deal_all_no_draw": Rules(hand_size="all", draw_rule="none", lead_tile="highest_double"),
    }
)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_compiled_playouts_play_as_the_engine_rollouts(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With whole-number weights and no jitter, scores tie only where they truly tie
    and both break ties by the engine's order of legal moves, so a compiled playout
    and the engine's rollout from the same full state must end alike."""
    for name in dir(search_module):
        if name.startswith("_X_"):
            monkeypatch.setattr(search_module, name, float(round(getattr(search_module, name) * 8)))
    monkeypatch.setattr(search_module, "_JITTER", 0.0)
    rules = FAMILIES[family]
    tb = tables(rules)
    expert = ExpertAgent()
    compared = 0
    for k in range(40):
        state = HandState.deal(rules, 40_000 + k)
        rng = random.Random(k)
        for _ in range(rng.randrange(0, 8)):
            if state.is_over:
                break
            state = state.apply(expert.act(state.view(state.to_move), rng))
        if state.is_over:
            continue
        view = state.view(state.to_move)
        runner = WorldPlayouts(view, search_module.policy_weights())
        world = (
            [state.hand_mask(s) for s in range(rules.players)],
            [t.index for t in state.boneyard],
        )
        moves = list(view.legal_moves)
        got = runner.run([world], [runner.enc.index[m] for m in moves])
        side = rules.side_of(view.seat)
        for c, move in enumerate(moves):
            outcome = search_module.rollout(state.apply(move), tb, random.Random(k))
            want = search_module.utility(outcome, side, rules.sides)
            assert got[0, c] == pytest.approx(want), (k, str(move), state)
            compared += 1
    assert compared >= 40


@pytest.mark.parametrize("preset", ["standard", "leiden", "kardinal"])
def test_fast_search_is_reproducible_and_legal(preset: str) -> None:
    rules = Rules.preset(preset)
    agent = SearchAgent(samples=6)
    assert agent.fast
    for k in range(12):
        state = HandState.deal(rules, 50_000 + k)
        rng = random.Random(k)
        for _ in range(rng.randrange(0, 6)):
            if state.is_over:
                break
            state = state.apply(rng.choice(state.legal_moves()))
        if state.is_over or len(state.legal_moves()) < 2:
            continue
        view = state.view(state.to_move)
        first = agent.evaluate(view, random.Random(7))
        assert first == agent.evaluate(view, random.Random(7))
        assert first[0] in view.legal_moves


def test_worlds_come_from_the_view_only() -> None:
    """The runner takes a view and sampled worlds: two different true deals with the
    same view and the same sampled worlds give the same values."""
    rules = Rules.preset("standard")
    state = HandState.deal(rules, 5)
    view = state.view(state.to_move)
    kn = Knowledge(view)
    worlds = [kn.sample_masks(random.Random(s)) for s in range(8)]
    runner = WorldPlayouts(view, search_module.policy_weights())
    actions = [runner.enc.index[m] for m in view.legal_moves]
    a = runner.run(worlds, actions, rng_seed=3)
    b = WorldPlayouts(view, search_module.policy_weights()).run(worlds, actions, rng_seed=3)
    assert (a == b).all()
    with pytest.raises(BatchError, match="weights: expected 14 numbers"):
        WorldPlayouts(view, [1.0, 2.0])


def test_sample_many_deals_as_sample_masks() -> None:
    """Worlds drawn at once keep every inference and the sizes, and hold each tile as
    often as sample_masks' worlds do."""
    rules = Rules.preset("standard")
    rng = random.Random(2)
    state = HandState.deal(rules, 77)
    while not (
        state.view(state.to_move).history
        and Knowledge(state.view(state.to_move)).void[(state.to_move + 1) % 2]
    ):
        state = state.apply(rng.choice(state.legal_moves()))
        if state.is_over:
            state = HandState.deal(rules, rng.randrange(10**6))
    view = state.view(state.to_move)
    kn = Knowledge(view)
    other = (view.seat + 1) % 2
    many = kn.sample_many(random.Random(1), 4000)
    single = [kn.sample_masks(random.Random(s)) for s in range(4000)]
    for hands, rest in many:
        assert hands[view.seat] == kn.hand
        assert hands[other] & kn.void[other] == 0
        assert hands[other].bit_count() == view.hand_sizes[other]
        assert sorted(rest + [t for t in range(28) if hands[other] >> t & 1]) == sorted(
            t for t in range(28) if kn.unseen >> t & 1
        )
    for t in range(28):
        if kn.unseen >> t & 1:
            a = sum(h[other] >> t & 1 for h, _ in many) / 4000
            b = sum(h[other] >> t & 1 for h, _ in single) / 4000
            assert abs(a - b) < 0.05, t


def test_sample_many_keeps_every_cap() -> None:
    """Views whose hidden hand has soft caps (drawn since a pass): every bulk world
    keeps every inference, and the sizes."""
    rules = Rules.preset("standard")
    rng = random.Random(4)
    checked = 0
    for seed in range(400):
        state = HandState.deal(rules, seed)
        while not state.is_over and checked < 30:
            view = state.view(state.to_move)
            kn = Knowledge(view)
            other = (view.seat + 1) % 2
            if kn.soft[other]:
                for hands, rest in kn.sample_many(random.Random(seed), 50):
                    assert kn.allows(other, hands[other]), (seed, kn.soft[other])
                    assert hands[other].bit_count() == view.hand_sizes[other]
                    assert len(rest) == view.boneyard_size
                checked += 1
            state = state.apply(rng.choice(state.legal_moves()))
        if checked >= 30:
            break
    assert checked >= 30
