"""The PettingZoo AEC environment: PettingZoo's own conformance tests (strict), rewards,
seeding, rendering, pickling and the registry."""

from __future__ import annotations

import copy
import functools
import importlib
import pickle
import random
import re
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pettingzoo  # type: ignore[import-untyped]
import pytest
from pettingzoo.test import api_test, render_test, seed_test  # type: ignore[import-untyped]

from matador_env import env, raw_env
from matador_env.encoding import encoding_for
from matador_env.engine import (
    PRESETS,
    HandState,
    IllegalMoveError,
    MatchState,
    Rules,
    Termination,
    set_tiles,
)
from matador_env.matador_v0 import hand_rewards, match_rewards

ENV_NAME = "matador_v0"
# pettingzoo.test.api_test names the function too; the module holds the exemption lists.
api_test_module = importlib.import_module("pettingzoo.test.api_test")
EXTRA = {
    "pagat-teams": Rules.preset("pagat", players=4, teams=True),
    "kardinal-p3": Rules.preset("kardinal", players=3),
    "branching-first_double": Rules(matador_placement="branching", spinner="first_double"),
    "double_nine-p6": Rules(set_max=9, players=6, hand_size=8),
}
ALL_RULES = {**{name: Rules.preset(name) for name in PRESETS}, **EXTRA}


@pytest.fixture
def strict(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """PettingZoo's conformance tests with every warning an error.

    Their checks exempt the dict-observation classic environments (connect_four,
    chess, ...) by name from two warnings about a dict observation space; this
    environment has the same observation structure, so it joins those lists.
    """
    monkeypatch.setattr(
        api_test_module, "env_obs_dicts", [*api_test_module.env_obs_dicts, ENV_NAME]
    )
    monkeypatch.setattr(
        api_test_module, "env_obs_space", [*api_test_module.env_obs_space, ENV_NAME]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("name", sorted(ALL_RULES))
def test_api_test(name: str, episode: str, strict: None) -> None:
    rules = ALL_RULES[name]
    e = env(rules=rules, episode=episode, reward="normalised")
    # api_test plays one game from an unseeded reset; play a few.
    for _ in range(3 if episode == "hand" else 1):
        api_test(e, num_cycles=400 if episode == "hand" else 100)


@pytest.mark.parametrize("name", sorted(ALL_RULES))
def test_seed_test(name: str, strict: None) -> None:
    seed_test(functools.partial(env, rules=ALL_RULES[name]), num_cycles=200)
    seed_test(functools.partial(env, rules=ALL_RULES[name], episode="match"), num_cycles=200)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_render_test(name: str, strict: None, capsys: pytest.CaptureFixture[str]) -> None:
    render_test(functools.partial(env, preset=name))
    printed = capsys.readouterr().out
    assert "layout" in printed and "hand sizes" in printed  # "human" printed its text


def test_registry() -> None:
    e = pettingzoo.make("aec", ENV_NAME, preset="leiden")
    assert e.unwrapped.rules == Rules.preset("leiden")
    assert str(e.unwrapped) == ENV_NAME
    e.reset(seed=1)
    assert e.agent_selection in e.agents


def test_env_module_is_the_documentation_page() -> None:
    module = importlib.import_module("matador_env.matador_v0")
    doc = module.__doc__ or ""
    for heading in ("Observation Space", "Action Space", "Rewards", "Version History"):
        assert f"### {heading}" in doc
    assert env.__doc__ is not None and doc in env.__doc__
    standard = encoding_for(Rules.preset("standard"))
    assert f"Discrete(num_actions): {standard.num_actions} for the" in doc
    assert f"(obs_size,): {standard.obs_size} for the" in doc


# -- playing ------------------------------------------------------------------------------


def play(e: object, rng: random.Random, illegal: bool = False) -> dict[str, float]:
    """Random masked play to the end of the game; each agent's summed rewards."""
    totals: dict[str, float] = {}
    for agent in e.agent_iter():  # type: ignore[attr-defined]
        obs, reward, terminated, truncated, _ = e.last()  # type: ignore[attr-defined]
        totals[agent] = totals.get(agent, 0.0) + reward
        if terminated or truncated:
            action = None
        else:
            legal = np.flatnonzero(obs["action_mask"])
            assert len(legal) > 0, "the seat to move has no legal action"
            action = int(legal[rng.randrange(len(legal))])
        e.step(action)  # type: ignore[attr-defined]
    return totals


def test_masks_and_views_at_every_step() -> None:
    rng = random.Random(0)
    for name, rules in ALL_RULES.items():
        e = raw_env(rules=rules)
        enc = encoding_for(rules)
        e.reset(seed=5)
        while not e.terminations[e.agent_selection]:
            game = e.game
            for seat, agent in enumerate(e.possible_agents):
                obs = e.observe(agent)
                if agent == e.agent_selection:
                    assert np.array_equal(
                        obs["action_mask"], enc.action_mask(game.hand.legal_moves())
                    )
                else:
                    assert not obs["action_mask"].any(), name
                assert np.array_equal(obs["observation"], enc.observation(game.view(seat)))
            legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
            e.step(int(legal[rng.randrange(len(legal))]))


def test_hand_rewards_reads_its_kind_as_the_env_does() -> None:
    # "normalized" (the env's alias) and unknown kinds were paid as "score".
    rules = Rules.preset("standard")
    state = HandState.deal(rules, 3)
    while state.outcome is None:
        state = state.apply(state.legal_moves()[0])
    outcome = state.outcome
    assert hand_rewards(rules, outcome, "normalized") == hand_rewards(rules, outcome, "normalised")
    assert hand_rewards(rules, outcome, "normalized") != hand_rewards(rules, outcome, "score")
    with pytest.raises(ValueError, match="reward='bogus' is not allowed; allowed: 'score', 'win'"):
        hand_rewards(rules, outcome, "bogus")
    with pytest.raises(TypeError, match="outcome=None is not allowed; allowed: the Outcome"):
        hand_rewards(rules, None, "score")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reward=None is not allowed"):
        match_rewards(rules, [0], None, 1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("reward", ["score", "win", "normalised"])
@pytest.mark.parametrize("name", sorted(ALL_RULES))
def test_hand_rewards(name: str, reward: str) -> None:
    rules = ALL_RULES[name]
    n = rules.players
    top = sum(t.pips for t in set_tiles(rules.set_max))
    rng = random.Random(1)
    seen_win = False
    for seed in range(12):
        e = raw_env(rules=rules, reward=reward)
        e.reset(seed=seed)
        totals = play(e, rng)
        outcome = e.game.hand.outcome
        assert outcome is not None
        values = [totals[f"player_{s}"] for s in range(n)]
        if outcome.winning_side is None:
            assert values == [0.0] * n  # void tie, redeal, no lead
            continue
        won = [rules.side_of(s) == outcome.winning_side for s in range(n)]
        winners, losers = sum(won), n - sum(won)
        if reward == "win":
            expected = [1.0 if w else -1.0 for w in won]
        else:
            scale = top if reward == "normalised" else 1
            p = outcome.points
            expected = [p / winners / scale if w else -p / losers / scale for w in won]
        assert values == pytest.approx(expected)
        if reward != "win":
            assert sum(values) == pytest.approx(0.0)  # zero-sum
        assert all(-1.0 <= v <= 1.0 for v in values) or reward == "score"
        seen_win = True
    assert seen_win


def test_match_rewards_arrive_hand_by_hand() -> None:
    rules = Rules.preset("standard", target_score=40)
    e = raw_env(rules=rules, episode="match", reward="score")
    e.reset(seed=3)
    rng = random.Random(3)
    hands_seen = 0
    running = [0.0, 0.0]
    while e.agents:
        agent = e.agent_selection
        if e.terminations[agent]:
            e.step(None)
            continue
        legal = np.flatnonzero(e.observe(agent)["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
        step_rewards = [e.rewards.get(f"player_{s}", 0.0) for s in range(2)]
        running = [r + x for r, x in zip(running, step_rewards, strict=True)]
        if any(step_rewards):
            hands_seen += 1
            result = e.hand_result()
            assert result is not None
            assert result["points"] == max(step_rewards) or "match_winners" in result
            assert e.infos["player_0"]["points"] == result["points"]
    match = e.game.match
    assert match is not None and match.is_over and match.winners is not None
    assert hands_seen >= 2  # several hands, each rewarded as it ended
    # The per-hand rewards add up to the totals' difference, plus the match bonus.
    winner = match.winners[0]
    diff = match.totals[winner] - match.totals[1 - winner]
    assert running[winner] == pytest.approx(diff + rules.target_score)
    assert sum(running) == pytest.approx(0.0)


def test_match_observations_show_the_totals() -> None:
    rules = Rules.preset("standard", target_score=30)
    e = raw_env(rules=rules, episode="match")
    e.reset(seed=8)
    rng = random.Random(8)
    enc = e.encoding
    seen_scores = False
    while not e.terminations[e.agent_selection]:
        agent = e.agent_selection
        seat = int(agent[-1])
        obs = e.observe(agent)["observation"]
        assert np.array_equal(obs, enc.observation(e.game.hand.view(seat, e.game.match.totals)))
        seen_scores |= bool(enc.split(obs)["scores"].any())
        legal = np.flatnonzero(e.observe(agent)["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
    assert seen_scores
    final = e.game.match
    assert final is not None and final.is_over
    obs = e.observe("player_0")["observation"]
    assert np.array_equal(obs, enc.observation(final.hand.view(0, final.totals)))


@pytest.mark.parametrize("reward", ["score", "win", "normalised"])
@pytest.mark.parametrize("name", ["standard", "pagat-teams"])
def test_the_match_winners_get_the_bonus_and_the_others_pay_it(name: str, reward: str) -> None:
    # The hand that ends a match pays its own rewards plus match_bonus, shared out as
    # the Rewards table says: "win" gives +bonus to each seat of the winning side and
    # -bonus to each other seat (not 0); "score" and "normalised" split +bonus among
    # the winning seats and -bonus among the others (zero-sum).
    rules = ALL_RULES[name].replace(target_score=30)
    n = rules.players
    bonus = 7.0
    rng = random.Random(6)
    for seed in range(3):
        e = raw_env(rules=rules, episode="match", reward=reward, match_bonus=bonus)
        e.reset(seed=seed)
        while not e.terminations[e.agent_selection]:
            legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
            e.step(int(legal[rng.randrange(len(legal))]))
        match = e.game.match
        assert match is not None and match.is_over and match.winners is not None
        outcome = e.game.hand.outcome
        assert outcome is not None
        last = [e.rewards[f"player_{s}"] for s in range(n)]
        won = [rules.side_of(s) in match.winners for s in range(n)]
        winners, losers = sum(won), n - sum(won)
        if reward == "win":
            shares = [bonus if w else -bonus for w in won]
        else:
            shares = [bonus / winners if w else -bonus / losers for w in won]
        expected = [
            h + b for h, b in zip(hand_rewards(rules, outcome, reward), shares, strict=True)
        ]
        assert last == pytest.approx(expected)
        assert e.infos["player_0"]["match_over"] == 1


def test_a_seat_is_given_every_hand_that_ended_since_it_last_moved() -> None:
    # With one-tile hands a match's hand can end before a seat moves in it, so two
    # hands' rewards can reach a seat between two of its turns: last() must return
    # their sum (the cumulative reward adds them up), not only the latest.
    rules = Rules(hand_size=1, target_score=30)
    rng = random.Random(2)
    twice = 0
    for seed in range(30):
        e = raw_env(rules=rules, episode="match")
        e.reset(seed=seed)
        pending = dict.fromkeys(e.possible_agents, 0.0)
        given = dict.fromkeys(e.possible_agents, 0)
        for agent in e.agent_iter():
            _, reward, terminated, truncated, _ = e.last()
            assert reward == pytest.approx(pending[agent])
            twice += given[agent] > 1
            pending[agent], given[agent] = 0.0, 0
            if terminated or truncated:
                e.step(None)
                continue
            legal = np.flatnonzero(e.observe(agent)["action_mask"])
            e.step(int(legal[rng.randrange(len(legal))]))
            for a, r in e.rewards.items():
                if r:
                    pending[a] += r
                    given[a] += 1
    assert twice > 0  # the case this test is about did occur


def test_the_hands_info_counts_the_hands_without_a_winner_too() -> None:
    # "hands ended so far in this episode (redeals included)": a tie or a redeal is a
    # hand too, with winner -1 and no points.
    rules = Rules.preset("standard", target_score=60)
    rng = random.Random(0)
    no_winner = 0
    for seed in range(6):
        e = raw_env(rules=rules, episode="match")
        e.reset(seed=seed)
        while not e.terminations[e.agent_selection]:
            legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
            e.step(int(legal[rng.randrange(len(legal))]))
            match = e.game.match
            assert match is not None
            info = e.infos["player_0"]
            assert info["hands"] == len(match.outcomes)
            if match.outcomes and match.outcomes[-1].winner is None:
                assert (info["winner"], info["winning_side"], info["points"]) == (-1, -1, 0)
        assert match is not None
        no_winner += sum(o.winner is None for o in match.outcomes)
    assert no_winner > 0  # the case this test is about did occur


def test_a_new_episode_after_a_truncated_one_is_not_truncated() -> None:
    # The max_hands bound counts the hands of each episode: after a reset the next
    # episode runs its own max_hands hands again, its flags all False until then.
    e = raw_env(preset="standard", episode="match", max_hands=2, target_score=10_000)
    rng = random.Random(3)
    for seed in (1, 2):
        e.reset(seed=seed)
        ends: list[bool] = []
        while not (e.truncations[e.agent_selection] or e.terminations[e.agent_selection]):
            legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
            e.step(int(legal[rng.randrange(len(legal))]))
            if e.game.hands > len(ends):  # a hand ended on this step
                ends.append(any(e.truncations.values()))
        assert ends == [False, True]  # the first hand goes on, the second truncates
        assert not any(e.terminations.values())


# -- seeding --------------------------------------------------------------------------------


def test_seeded_reset_deals_that_seed() -> None:
    rules = Rules.preset("polish")
    e = raw_env(rules=rules)
    e.reset(seed=42)
    assert e.game.hand == HandState.deal(rules, 42)
    m = raw_env(rules=rules, episode="match")
    m.reset(seed=42)
    assert m.game.match == MatchState.new(rules, 42)


def test_unseeded_resets_follow_the_seeded_stream() -> None:
    def deals(first_seed: int) -> list[HandState]:
        e = raw_env(preset="standard")
        e.reset(seed=first_seed)
        out = []
        for _ in range(4):
            e.reset()
            out.append(e.game.hand)
        return out

    a, b, c = deals(7), deals(7), deals(8)
    assert a == b
    assert a != c
    assert len({h.hands for h in a}) == 4  # each reset is a new deal


def test_infos_are_deterministic() -> None:
    def run() -> list[dict]:
        e = env(preset="leiden", episode="match")
        e.reset(seed=2)
        rng = random.Random(2)
        infos = []
        for _agent in e.agent_iter():
            obs, _, term, trunc, info = e.last()
            infos.append(info)
            legal = np.flatnonzero(obs["action_mask"])
            e.step(None if term or trunc else int(legal[rng.randrange(len(legal))]))
        return infos

    first = run()
    assert first == run()
    assert any(i["hands"] > 0 for i in first)


# -- errors, illegal actions, render, pickling, state ------------------------------------


def test_illegal_action_through_the_wrappers() -> None:
    e = env(preset="standard")
    e.reset(seed=0)
    agent = e.agent_selection
    obs, *_ = e.last()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    infos_before = {a: dict(i) for a, i in e.infos.items()}
    e.step(illegal)
    # As the module docstring says (PettingZoo's TerminateIllegalWrapper's way).
    assert all(e.terminations.values()) and all(e.truncations.values())
    assert e.rewards[agent] == -1
    assert all(r == 0 for a, r in e.rewards.items() if a != agent)
    assert e.infos == infos_before
    assert e.observe(agent)["action_mask"][illegal] == 0
    assert e.observe(agent)["action_mask"].any()  # its mask as it was
    dead = []
    while e.agents:
        dead.append((e.agent_selection, e.last()[1]))
        e.step(None)
    assert sorted(dead) == sorted((a, -1.0 if a == agent else 0.0) for a in e.possible_agents)
    e2 = env(preset="standard")
    e2.reset(seed=0)
    with pytest.raises(ValueError, match=r"^action 10000 is out of range 0-\d+$"):
        e2.step(10_000)  # out of the action space: refused as raw_env refuses it
    with pytest.raises(ValueError, match="out of range"):
        e2.step(-1)
    # The first integer past the space, which TerminateIllegalWrapper would read as a
    # position of the mask (IndexError), is refused the same way.
    with pytest.raises(ValueError, match="out of range"):
        e2.step(e2.unwrapped.encoding.num_actions)
    assert not any(e2.terminations.values())


def test_raw_env_refuses_illegal_actions() -> None:
    e = raw_env(preset="standard")
    e.reset(seed=0)
    obs = e.observe(e.agent_selection)
    with pytest.raises(IllegalMoveError):
        e.step(int(np.flatnonzero(obs["action_mask"] == 0)[0]))
    with pytest.raises(ValueError, match="out of range"):
        e.step(e.encoding.num_actions)
    with pytest.raises(ValueError, match="None"):
        e.step(None)
    with pytest.raises(ValueError):
        raw_env(preset="standard", rules=Rules())
    with pytest.raises(ValueError, match="episode"):
        raw_env(episode="set")
    with pytest.raises(ValueError, match="reward"):
        raw_env(reward="points")


def _first_legal(e: Any) -> int:
    return int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0])


@pytest.mark.parametrize("bad", [1.5, "3", True, np.bool_(True), np.array([3]), 3.0])
def test_raw_env_actions_must_be_integers(bad: object) -> None:
    e = raw_env(preset="standard")
    e.reset(seed=0)
    hand = e.game.hand
    with pytest.raises(TypeError, match=r"action=.*\(.*\) is not allowed.*integer"):
        e.step(bad)
    assert e.game.hand == hand  # nothing applied


@pytest.mark.parametrize("bad", [1.5, "3", True, np.bool_(True), np.array([3]), 3.0])
def test_wrapped_env_actions_must_be_integers_as_raw_envs_are(bad: object) -> None:
    """PettingZoo's wrappers read an action before raw_env does: True raised numpy's
    'truth value of an array is ambiguous', 1.5 'action is not in action space'."""
    e = env(preset="standard")
    e.reset(seed=0)
    hand = e.unwrapped.game.hand
    with pytest.raises(TypeError, match=r"action=.*\(.*\) is not allowed.*integer"):
        e.step(bad)
    with pytest.raises(ValueError, match="is to move: None is an action only for a finished"):
        e.step(None)
    assert e.unwrapped.game.hand == hand and not any(e.terminations.values())
    e.step(int(np.flatnonzero(e.last()[0]["action_mask"])[0]))  # it plays on


@pytest.mark.parametrize("make", [raw_env, env])
@pytest.mark.parametrize("agent", ["player_3", 0, None, "player_0 ", b"player_0", ["player_0"]])
def test_an_unknown_agent_is_a_key_error_naming_the_agents(make: Any, agent: Any) -> None:
    e = make(preset="standard", players=3)
    e.reset(seed=0)
    allowed = r"allowed: 'player_0', 'player_1', 'player_2'"
    for ask in (e.observe, e.action_space, e.observation_space):
        with pytest.raises(KeyError, match=rf"agent .* is not an agent of this env; {allowed}"):
            ask(agent)
    assert e.observe(np.str_("player_2"))["action_mask"].shape == (e.action_space("player_2").n,)


def test_raw_env_takes_numpy_integer_actions() -> None:
    plain, numpy_ = raw_env(preset="standard"), raw_env(preset="standard")
    plain.reset(seed=5)
    numpy_.reset(seed=5)
    for k in range(6):
        action = _first_legal(plain)
        plain.step(action)
        numpy_.step(np.int64(action) if k % 2 else np.array(action, np.int32))
    assert plain.game.hand == numpy_.game.hand


def test_the_raw_env_shows_nothing_before_reset() -> None:
    # observe, state, render and hand_records read the placeholder deal the constructor
    # holds, hidden tiles included, and last() failed with an AttributeError.
    e = raw_env(preset="standard", render_mode="ansi")
    calls = {
        "observe()": lambda: e.observe("player_0"),
        "state()": e.state,
        "render()": e.render,
        "hand_records()": e.hand_records,
        "observe() ": e.last,  # last() observes the agent to move
    }
    for name, call in calls.items():
        with pytest.raises(RuntimeError, match=re.escape(f"{name.strip()} before reset()")):
            call()
    with pytest.raises(KeyError, match="is not an agent of this env"):
        e.observe("nobody")  # an unknown agent is named first, as after a reset
    e.reset(seed=1)
    assert e.last()[0]["action_mask"].any() and e.render()


def test_a_step_once_every_agent_is_done_says_reset() -> None:
    e = raw_env(preset="standard")
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        e.step(0)  # never dealt
    e.reset(seed=1)
    while e.agents:  # the game, then every agent's dead step (action None)
        done = e.terminations[e.agent_selection] or e.truncations[e.agent_selection]
        e.step(None if done else _first_legal(e))
    for action in (None, 0):
        with pytest.raises(RuntimeError, match=r"game is over.*reset\(\)"):
            e.step(action)
    e.reset(seed=1)  # and a new game plays
    e.step(_first_legal(e))
    # The wrapped env keeps PettingZoo's way: OrderEnforcingWrapper warns.
    w = env(preset="standard")
    w.reset(seed=1)
    for _agent in w.agent_iter():
        _, _, term, trunc, _ = w.last()
        w.step(None if term or trunc else int(w.last()[0]["action_mask"].nonzero()[0][0]))
    w.step(None)


@pytest.mark.parametrize("bad", [1.5, "7", True, np.bool_(False), [7], 7.0])
def test_reset_refuses_seeds_that_are_not_integers(bad: object) -> None:
    e = raw_env(preset="standard")
    with pytest.raises(TypeError, match="seed="):
        e.reset(seed=bad)


def test_reset_takes_numpy_integer_seeds() -> None:
    rules = Rules.preset("standard")
    a, b = raw_env(rules=rules), raw_env(rules=rules)
    a.reset(seed=7)
    b.reset(seed=np.int64(7))
    assert b.game.hand == a.game.hand == HandState.deal(rules, 7)
    assert type(b.game.seed) is int
    a.reset()
    b.reset()  # the unseeded stream follows the same seed
    assert a.game.hand == b.game.hand


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), "5", True])
def test_match_bonus_must_be_a_finite_number(bad: object) -> None:
    with pytest.raises(ValueError, match="match_bonus=.*finite"):
        raw_env(episode="match", match_bonus=bad)
    assert raw_env(episode="match", match_bonus=np.float32(2.5)).game.match_bonus == 2.5
    assert raw_env(episode="match", match_bonus=-3).game.match_bonus == -3.0


@pytest.mark.parametrize("bad", [["score"], {"score": 1}, None, 1])
def test_reward_must_be_one_of_the_kinds(bad: object) -> None:
    with pytest.raises(ValueError, match=r"reward=.*allowed.*'score', 'win', 'normalised'"):
        raw_env(reward=bad)


def test_render_ansi_shows_layout_sizes_and_the_acting_hand() -> None:
    e = env(preset="standard", render_mode="ansi")
    e.reset(seed=4)
    for _ in range(3):
        obs, *_ = e.last()
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    text = e.render()
    hand = e.unwrapped.game.hand
    assert isinstance(text, str)
    assert "layout:" in text
    assert " ".join(f"P{s}:{k}" for s, k in enumerate(hand.hand_sizes)) in text
    acting = " ".join(str(t) for t in hand.hand(hand.to_move))
    assert f"P{hand.to_move} to move, holds: {acting}" in text
    other = " ".join(str(t) for t in hand.hand(1 - hand.to_move))
    assert other not in text


def test_render_ansi_follows_the_seat_to_move() -> None:
    # The text shows the tiles of whichever seat is to move, every seat in turn (not
    # one seat's throughout), and no other seat's tiles.
    e = raw_env(preset="standard", players=3, render_mode="ansi")
    e.reset(seed=4)
    rng = random.Random(4)
    shown = set()
    while not e.terminations[e.agent_selection]:
        hand = e.game.hand
        text = e.render()
        assert isinstance(text, str)
        line = text.splitlines()[-1]
        held = " ".join(str(t) for t in hand.hand(hand.to_move)) or "-"
        assert line == f"P{hand.to_move} to move, holds: {held}"
        for seat in range(3):
            if seat != hand.to_move:
                assert not any(str(t) in line for t in hand.hand(seat))
        shown.add(hand.to_move)
        legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
    assert shown == {0, 1, 2}


def test_render_human_prints_the_table_after_every_move(capsys: pytest.CaptureFixture[str]) -> None:
    # "human": the text printed after every move, without a render() call.
    e = env(preset="standard", render_mode="human")
    e.reset(seed=4)
    capsys.readouterr()
    for _ in range(3):
        obs, *_ = e.last()
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
        hand = e.unwrapped.game.hand
        printed = capsys.readouterr().out
        assert printed == e.unwrapped.game.render() + "\n"
        assert f"P{hand.to_move} to move" in printed


def test_pickle_round_trip() -> None:
    for make in (env, raw_env):
        e = make(preset="kardinal", episode="match", reward="win")
        e.reset(seed=1)
        clone = pickle.loads(pickle.dumps(e))
        clone.reset(seed=1)
        assert clone.unwrapped.rules == Rules.preset("kardinal")
        assert clone.unwrapped.game.reward == "win"
        assert clone.unwrapped.game.match == e.unwrapped.game.match
        totals = play(clone, random.Random(0))
        assert set(totals) == set(clone.possible_agents)


def test_a_copy_during_the_dead_steps_goes_on_in_the_same_order() -> None:
    e = raw_env(preset="standard", players=3)
    e.reset(seed=4)
    rng = random.Random(4)
    while not e.terminations[e.agent_selection]:
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(rng.choice(np.flatnonzero(mask).tolist()))
    e.step(None)  # one dead step: AECEnv now keeps the order of the rest

    def order(x: Any) -> tuple[list[tuple[str, float]], str]:
        out = []
        while x.agents:
            out.append((x.agent_selection, x._cumulative_rewards[x.agent_selection]))
            x.step(None)
        return out, x.agent_selection  # where the selection rests once all are gone

    clone = copy.deepcopy(e)
    assert order(clone) == order(e)


def test_state_is_full_information() -> None:
    rules = Rules.preset("standard", players=3)
    e = raw_env(rules=rules)
    e.reset(seed=9)
    enc = e.encoding
    state = e.state()
    assert state.shape == e.state_space.shape and state.dtype == np.float32
    assert e.state_space.contains(state)
    hands = enc.split(state, state=True)["hands"]
    for seat, hand in enumerate(e.game.hand.hands):
        assert hands[seat].sum() == len(hand)
    with pytest.raises(AssertionError):
        env(preset="standard").state()  # before reset: the order-enforcing wrapper refuses
    assert Termination.DOMINO in Termination.ALL
