"""The search agent's compiled playouts: the same rules and the same policy as its
engine playouts, on every rule family, and a search that stays reproducible."""

from __future__ import annotations

import itertools
import random

import pytest

pytest.importorskip("numba")

import agents.search as search_module  # noqa: E402
from agents.expert import ExpertAgent  # noqa: E402
from agents.knowledge import Knowledge, tables  # noqa: E402
from agents.search import SearchAgent  # noqa: E402
from matador_env.batch import BatchError, WorldPlayouts  # noqa: E402
from matador_env.engine import HandState, Rules, SeatView  # noqa: E402
from matador_env.engine.rules import PRESETS  # noqa: E402

FAMILIES: dict[str, Rules] = {name: Rules.preset(name) for name in PRESETS}
FAMILIES.update(
    {
        "pagat_teams": Rules.preset("pagat", players=4, teams=True),
        "kardinal_4p": Rules.preset("kardinal", players=4),
        "polish_3p_regular": Rules.preset("polish", players=3, matador_as_regular=True),
        "crosswise_choice": Rules(matador_placement="crosswise_choice"),
        "crosswise_on_blank": Rules(matador_placement="crosswise_on_blank", draw_rule="one"),
        # Needs-a-blank ends where a draw competes with matadors: the draw's chance of a
        # fitting tile must not count a matador as a blank answer.
        "upright_matador_draw": Rules(matador_placement="upright"),
        "crosswise_on_blank_draw": Rules(
            matador_placement="crosswise_on_blank", voluntary_draw="always"
        ),
        "first_double_spinner": Rules(spinner="first_double", voluntary_draw="always"),
        "stuck_regular": Rules(matador_only_when_stuck=True, matador_as_regular=True),
        "deal_all_no_draw": Rules(hand_size="all", draw_rule="none", lead_tile="highest_double"),
    }
)


def whole_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rollout policy's weights in whole numbers and no jitter: scores tie only
    where they truly tie, and both policies break ties by the engine's order of legal
    moves, so a compiled playout and the engine's rollout from one state end alike."""
    for name in dir(search_module):
        if name.startswith("_X_"):
            monkeypatch.setattr(search_module, name, float(round(getattr(search_module, name) * 8)))
    monkeypatch.setattr(search_module, "_JITTER", 0.0)


def assert_plays_as_the_engine_rollouts(rules: Rules, states: list[HandState]) -> int:
    """Each legal move of each state, played out compiled from the mover's view and
    the true world, ends as the engine's rollout from the state itself (under
    :func:`whole_weights`); the number of moves compared."""
    tb = tables(rules)
    compared = 0
    for i, state in enumerate(states):
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
            outcome = search_module.rollout(state.apply(move), tb, random.Random(i))
            want = search_module.utility(outcome, side, rules.sides)
            assert got[0, c] == pytest.approx(want), (i, str(move), state)
            compared += 1
    return compared


@pytest.mark.parametrize("family", list(FAMILIES))
def test_compiled_playouts_play_as_the_engine_rollouts(
    family: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole_weights(monkeypatch)
    rules = FAMILIES[family]
    expert = ExpertAgent()
    states: list[HandState] = []
    for k in range(40):
        state = HandState.deal(rules, 40_000 + k)
        rng = random.Random(k)
        for _ in range(rng.randrange(0, 8)):
            if state.is_over:
                break
            state = state.apply(expert.act(state.view(state.to_move), rng))
        if not state.is_over:
            states.append(state)
    assert assert_plays_as_the_engine_rollouts(rules, states) >= 40


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


def _multi_seat_view_with_caps(
    rules: Rules, want_voids: int, want_cap: bool
) -> tuple[SeatView, Knowledge]:
    """A view with a choice whose hidden hands carry ``want_voids`` voids (and a cap)."""
    rng = random.Random(3)
    expert = ExpertAgent()
    for seed in range(400):
        state = HandState.deal(rules, seed)
        while not state.is_over:
            view = state.view(state.to_move)
            kn = Knowledge(view)
            voids = sum(1 for s in kn.hidden_seats if kn.void[s])
            if (
                (any(kn.soft[s] for s in kn.hidden_seats) or not want_cap)
                and voids >= want_voids
                and len(view.legal_moves) > 1
            ):
                return view, kn
            state = state.apply(expert.act(view, rng))
    raise AssertionError("no such view in 400 deals")  # pragma: no cover


def _exact_marginals(kn: Knowledge) -> dict[tuple[int, int], float]:
    """Each hidden seat's chance to hold each unseen tile, uniform over every deal that
    keeps every inference (enumerated)."""
    seats = [s for s in kn.hidden_seats if kn.sizes[s] > 0]
    tiles = [t for t in range(kn.tb.ntiles) if kn.unseen >> t & 1]
    counts: dict[tuple[int, int], int] = {}
    total = 0

    def deal(i: int, left: list[int], hands: dict[int, int]) -> None:
        nonlocal total
        if i == len(seats):
            total += 1
            for s, h in hands.items():
                for t in tiles:
                    if h >> t & 1:
                        counts[s, t] = counts.get((s, t), 0) + 1
            return
        s = seats[i]
        for combo in itertools.combinations(left, kn.sizes[s]):
            mask = sum(1 << t for t in combo)
            if kn.allows(s, mask):
                hands[s] = mask
                deal(i + 1, [t for t in left if t not in combo], hands)
                del hands[s]

    deal(0, tiles, {})
    return {key: c / total for key, c in counts.items()}


@pytest.mark.parametrize(
    ("preset", "want_cap"),
    # pagat_teams deals every tile: no draws, so voids but no caps.
    [("standard_3p", True), ("standard_4p", True), ("pagat_teams", False)],
)
def test_several_hidden_hands_are_dealt_near_uniform_and_keep_every_cap(
    preset: str, want_cap: bool
) -> None:
    """The compiled dealer (several hidden hands) keeps the sizes, every void and cap,
    and deals every unseen tile once; each tile lands in each hand about as often as
    in the uniform distribution over the consistent deals, counted exactly."""
    from matador_env.configs import configuration

    rules = configuration(preset).rules()
    view, kn = _multi_seat_view_with_caps(rules, want_voids=2, want_cap=want_cap)
    count = 4000
    worlds = kn.sample_many(random.Random(1), count)
    assert worlds == kn.sample_many(random.Random(1), count)  # reproducible
    unseen = [t for t in range(28) if kn.unseen >> t & 1]
    for hands, rest in worlds:
        assert hands[view.seat] == kn.hand
        for s in kn.hidden_seats:
            assert kn.allows(s, hands[s]), (s, hands[s])
            assert hands[s].bit_count() == view.hand_sizes[s]
        assert len(rest) == view.boneyard_size
        held = [t for s in kn.hidden_seats for t in unseen if hands[s] >> t & 1]
        assert sorted(held + rest) == unseen
    exact = _exact_marginals(kn)
    for s in kn.hidden_seats:
        for t in unseen:
            got = sum(hands[s] >> t & 1 for hands, _ in worlds) / count
            assert abs(got - exact.get((s, t), 0.0)) < 0.05, (s, t, got, exact.get((s, t)))


def test_deal_hidden_hands_reports_what_it_cannot_deal() -> None:
    """A deal no construction can make comes back as None (the caller deals it another
    way); bad arguments raise BatchError naming them."""
    from matador_env.batch import deal_hidden_hands

    # Two hands of two from four tiles, both void of tile 0: impossible.
    got = deal_hidden_hands(0b1111, [2, 2], [0b0001, 0b0001], [], 3, seed=5)
    assert got == [None, None, None]
    # One cap: hand 0 holds at most one of tiles 0-1, so hand 1 holds the other.
    for world in deal_hidden_hands(0b111, [2, 1], [0, 0], [(0, 0b011, 1)], 50, seed=6):
        assert world is not None
        (h0, h1), rest = world
        assert (h0 & 0b011).bit_count() == 1 and h0 | h1 == 0b111 and rest == []
    with pytest.raises(BatchError, match="at most 62 tiles"):
        deal_hidden_hands(1 << 70, [1], [0], [], 1, seed=0)
    with pytest.raises(BatchError, match="hands of"):
        deal_hidden_hands(0b11, [2, 1], [0, 0], [], 1, seed=0)
    with pytest.raises(BatchError, match="caps on"):
        deal_hidden_hands(0b11, [1, 1], [0, 0], [(2, 1, 0)], 1, seed=0)
