"""The single-learner Gymnasium environment: API checkers, opponents, rewards, masks,
SubprocVecEnv and a MaskablePPO smoke run."""

from __future__ import annotations

import multiprocessing
import pickle
import random
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from stable_baselines3.common.vec_env import SubprocVecEnv

import matador_env
from agents.base import GreedyAgent, RandomAgent
from matador_env import MatadorSingleEnv
from matador_env.bot import load_bot
from matador_env.configs import configuration
from matador_env.encoding import encoding_for
from matador_env.engine import PRESETS, Move, Rules, SeatView
from matador_env.matador_v0 import TERMINATION_CODES, hand_rewards
from tests.episodes import learner_trace


@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_checkers(name: str, episode: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(MatadorSingleEnv(preset=name, episode=episode))
        gymnasium_check_env(MatadorSingleEnv(preset=name, episode=episode), skip_render_check=True)


def run_episode(env: MatadorSingleEnv, seed: int, rng: random.Random) -> tuple[float, dict]:
    """Random masked play for the learner; its summed reward and the last info."""
    obs, info = env.reset(seed=seed)
    total = 0.0
    while True:
        mask = env.action_masks()
        assert np.array_equal(mask, info["action_mask"].astype(bool))
        assert mask.any()
        legal = np.flatnonzero(mask)
        obs, reward, terminated, truncated, info = env.step(int(legal[rng.randrange(len(legal))]))
        assert env.observation_space.contains(obs)
        total += reward
        assert not truncated
        if terminated:
            assert not env.action_masks().any()
            return total, info


@pytest.mark.parametrize("name", ["standard", "kardinal", "leiden", "pagat-teams"])
def test_learner_reward_arrives_when_an_opponent_ends_the_hand(name: str) -> None:
    rules = Rules.preset("pagat", players=4, teams=True) if name == "pagat-teams" else None
    env = MatadorSingleEnv(rules=rules, preset=None if rules else name, reward="score")
    rng = random.Random(0)
    ended_by_opponent = 0
    for seed in range(40):
        total, info = run_episode(env, seed, rng)
        hand = env.game.hand
        assert hand.outcome is not None
        expected = hand_rewards(env.rules, hand.outcome, "score")[env.seat]
        assert total == pytest.approx(expected)
        result = env.hand_result()
        assert result is not None and result["termination"] == hand.outcome.termination
        assert info["termination"] == TERMINATION_CODES[hand.outcome.termination]
        if hand.history[-1].seat != env.seat:
            ended_by_opponent += 1
    assert ended_by_opponent > 5


def test_match_episode_rewards_add_up() -> None:
    rules = Rules.preset("standard", target_score=50)
    env = MatadorSingleEnv(rules=rules, episode="match", seat=1)
    rng = random.Random(1)
    for seed in range(4):
        total, info = run_episode(env, seed, rng)
        match = env.game.match
        assert match is not None and match.is_over and match.winners is not None
        won = 1 in match.winners
        diff = match.totals[1] - match.totals[0]
        assert total == pytest.approx(diff + (rules.target_score if won else -rules.target_score))
        result = env.hand_result()
        assert result is not None and result["match_winners"] == match.winners
        assert info["match_over"] == 1 and info["match_won"] == int(won)


def test_seats_fixed_and_random() -> None:
    fixed = MatadorSingleEnv(preset="standard", seat=1)
    for seed in range(5):
        _, info = fixed.reset(seed=seed)
        assert info["seat"] == 1 and fixed.game.to_move == 1
    env = MatadorSingleEnv(rules=Rules(players=3))
    seats = {env.reset(seed=seed)[1]["seat"] for seed in range(30)}
    assert seats == {0, 1, 2}
    with pytest.raises(ValueError, match="seat"):
        MatadorSingleEnv(preset="standard", seat=2)


def test_every_info_names_the_learners_seat_to_the_end() -> None:
    # info["seat"] is the learner's seat at every step, the last one included, where
    # the hand is over and the engine's seat to move may be anyone's.
    env = MatadorSingleEnv(preset="standard", players=3)
    rng = random.Random(4)
    other_at_the_end = 0
    for seed in range(20):
        _, info = env.reset(seed=seed)
        seat = info["seat"]
        done = False
        while not done:
            legal = np.flatnonzero(env.action_masks())
            _, _, terminated, truncated, info = env.step(int(legal[rng.randrange(len(legal))]))
            assert info["seat"] == seat == env.seat
            done = terminated or truncated
        other_at_the_end += env.game.to_move != seat
    assert other_at_the_end > 0  # the case this test is about did occur


@pytest.mark.parametrize("options", [{}, {"reset_mask": [True]}, {"anything": 1}])
def test_reset_options_are_ignored(options: dict[str, object]) -> None:
    plain, given = MatadorSingleEnv(preset="leiden"), MatadorSingleEnv(preset="leiden")
    obs, info = plain.reset(seed=8)
    obs_given, info_given = given.reset(seed=8, options=options)
    np.testing.assert_array_equal(obs, obs_given)
    np.testing.assert_array_equal(info["action_mask"], info_given["action_mask"])
    assert plain.seat == given.seat


def test_seeded_episodes_replay() -> None:
    def trajectory(seed: int) -> list[tuple[np.ndarray, float]]:
        env = MatadorSingleEnv(preset="kardinal", reward="win")
        obs, info = env.reset(seed=seed)
        out = [(obs, 0.0)]
        for _ in range(3):  # three episodes: the later resets are unseeded
            done = False
            while not done:
                action = int(np.flatnonzero(env.action_masks())[0])
                obs, reward, done, _, info = env.step(action)
                out.append((obs, reward))
            obs, info = env.reset()
            out.append((obs, 0.0))
        return out

    a, b, c = trajectory(3), trajectory(3), trajectory(4)
    assert len(a) == len(b) and all(
        np.array_equal(x, y) and r == s for (x, r), (y, s) in zip(a, b, strict=True)
    )
    assert len(a) != len(c) or any(
        not np.array_equal(x, y) for (x, _), (y, _) in zip(a, c, strict=True)
    )


def test_illegal_action_ends_the_episode() -> None:
    env = MatadorSingleEnv(preset="standard", illegal_reward=-3.0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-3.0, True, False)
    assert info["illegal_action"] and not info["action_mask"].any()
    # The episode is over, so action_masks() is all False too (MaskablePPO reads it),
    # though the game itself is not: the learner is still the seat to move.
    assert not env.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


# -- opponents ------------------------------------------------------------------------------


class LowestAction:
    """A callable opponent: the lowest legal action of its observation."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, obs: dict[str, np.ndarray]) -> int:
        self.calls += 1
        assert obs["observation"].dtype == np.float32
        return int(np.flatnonzero(obs["action_mask"])[0])


class RecordingGreedy(GreedyAgent):
    """The repository's greedy agent, counting the views it was shown."""

    def __init__(self) -> None:
        self.views: list[SeatView] = []

    def act(self, view: SeatView, rng: random.Random) -> Move:
        self.views.append(view)
        return super().act(view, rng)


def test_opponents_of_every_kind() -> None:
    rules = Rules(players=3)
    lowest, greedy = LowestAction(), RecordingGreedy()
    env = MatadorSingleEnv(rules=rules, opponents=[lowest, greedy], seat=0)
    rng = random.Random(5)
    for seed in range(6):
        run_episode(env, seed, rng)
    assert lowest.calls > 0 and greedy.views
    # Seat 1 (learner + 1) is the callable, seat 2 the agent; each sees only itself.
    assert {v.seat for v in greedy.views} == {2}
    assert all(v.to_move == 2 and v.legal_moves for v in greedy.views)
    # The default and the agent of the repository work as a single spec too.
    for spec in ("random", RandomAgent(), GreedyAgent()):
        env = MatadorSingleEnv(preset="polish", opponents=spec)
        run_episode(env, 1, rng)


@pytest.mark.parametrize("config", ["leiden", "pagat_teams"])
def test_the_shipped_bots_are_opponents_by_name_or_as_objects(config: str) -> None:
    rules = configuration(config).rules()
    rng = random.Random(2)
    bot = load_bot("trained", rules=rules)
    for spec in ("greedy", "casual", "trained", bot):
        env = MatadorSingleEnv(rules=rules, opponents=spec, seat=1)
        run_episode(env, 3, rng)
    # By name or by path the environment copies, pickles and replays as any other
    # (docs/rl_libraries.md); a Bot object does not pickle, as the docs say.
    folder = str(Path(matador_env.__file__).parent / "bots" / config)
    for named in ("trained", folder):
        env = MatadorSingleEnv(rules=rules, opponents=named, seat=1)
        _, info = env.reset(seed=7)
        twin = pickle.loads(pickle.dumps(env))
        action = int(np.flatnonzero(info["action_mask"])[0])
        one, two = env.step(action), twin.step(action)
        assert np.array_equal(one[0], two[0]) and one[1:4] == two[1:4]
    with pytest.raises(TypeError, match="pickle"):
        pickle.dumps(MatadorSingleEnv(rules=rules, opponents=bot, seat=1))
    # The trained bot plays as its level says: its most likely move, the same each time.
    a = MatadorSingleEnv(rules=rules, opponents=bot, seat=1)
    b = MatadorSingleEnv(rules=rules, opponents="trained", seat=1)
    for seed in range(3):
        assert learner_trace(a, seed) == learner_trace(b, seed)
    # ... and not as random seats would, on the same deals and streams.
    c = MatadorSingleEnv(rules=rules, opponents="random", seat=1)
    assert any(learner_trace(b, seed) != learner_trace(c, seed) for seed in range(3))


def test_bad_opponents() -> None:
    with pytest.raises(ValueError, match="opponent 'expert': unknown bot 'expert'"):
        MatadorSingleEnv(opponents="expert")
    with pytest.raises(ValueError, match="no trained bot|shipped") as caught:
        MatadorSingleEnv(preset="polish", players=3, opponents="trained")
    assert "pagat_teams" in str(caught.value)
    leiden_bot = load_bot("trained", rules="leiden")
    with pytest.raises(
        ValueError, match="opponent <PolicyBot trained:leiden> plays leiden only, not the chosen"
    ):
        MatadorSingleEnv(preset="standard", opponents=leiden_bot)
    # An agent is checked when the env is made, as a bot is; it failed at its first move.
    from agents import make_agent
    from agents.policy import PolicyAgent

    with pytest.raises(
        ValueError, match="opponent <.*> cannot play the chosen rules: no trained bot is shipped"
    ):
        MatadorSingleEnv(spinner="first_double", opponents=make_agent("bot:trained"))
    with pytest.raises(ValueError, match=r"plays leiden only, not the chosen rules standard \("):
        MatadorSingleEnv(preset="standard", opponents=PolicyAgent("matador_env/bots/leiden"))
    with pytest.raises(ValueError, match="one per other seat"):
        MatadorSingleEnv(rules=Rules(players=3), opponents=["random"])
    with pytest.raises(TypeError):
        MatadorSingleEnv(opponents=42)
    env = MatadorSingleEnv(preset="standard", seat=0, opponents=lambda obs: 10_000)
    with pytest.raises(ValueError, match="not legal"):
        env.reset(seed=0)  # the opponent moves at once if it leads, or after the lead
        env.step(int(np.flatnonzero(env.action_masks())[0]))


# -- vectorised and learned ---------------------------------------------------------------


def _make_env() -> MatadorSingleEnv:
    return MatadorSingleEnv(preset="standard")


def test_action_masks_under_subproc_vec_env() -> None:
    # fork is quick; spawn would import torch again in every worker.
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    venv = SubprocVecEnv([_make_env, _make_env], start_method=method)
    try:
        venv.seed(3)
        venv.reset()
        for _ in range(40):
            masks = get_action_masks(venv)
            assert masks.shape == (2, encoding_for(Rules()).num_actions) and masks.dtype == bool
            infos_masks = venv.env_method("action_masks")
            assert all(np.array_equal(m, i) for m, i in zip(masks, infos_masks, strict=True))
            actions = np.array([np.flatnonzero(m)[0] for m in masks])
            _, _, _, infos = venv.step(actions)
            assert not any(i.get("illegal_action") for i in infos)
    finally:
        venv.close()


class IllegalCounter(BaseCallback):
    """Counts the illegal actions seen in the rollouts' infos."""

    def __init__(self) -> None:
        super().__init__()
        self.illegal = 0
        self.steps = 0

    def _on_step(self) -> bool:
        self.steps += 1
        self.illegal += sum(bool(i.get("illegal_action")) for i in self.locals["infos"])
        return True


def test_maskable_ppo_smoke() -> None:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = MatadorSingleEnv(preset="standard", reward="win")
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=3, seed=0, device="cpu"
    )
    before = [p.detach().clone() for p in model.policy.parameters()]
    counter = IllegalCounter()
    model.learn(total_timesteps=3_072, callback=counter)
    assert model.num_timesteps >= 3_072
    assert counter.steps >= 3_072 and counter.illegal == 0
    after = list(model.policy.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(after, before, strict=True))
    # The trained policy, masked, only ever chooses legal actions.
    obs, _ = env.reset(seed=100)
    for _ in range(200):
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
        assert env.action_masks()[int(action)]
        obs, _, terminated, _, info = env.step(int(action))
        assert not info.get("illegal_action")
        if terminated:
            obs, _ = env.reset()


def test_one_tile_hands_always_give_the_learner_a_move() -> None:
    # With one tile each the leader goes out at once; episodes the learner would not
    # see are dealt again, so every reset leaves the learner to move.
    env = MatadorSingleEnv(rules=Rules(hand_size=1), seat=1)
    for seed in range(10):
        env.reset(seed=seed)
        assert env.game.to_move == 1 and env.action_masks().any()
        _, reward, terminated, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
        outcome = env.game.hand.outcome
        assert terminated and outcome is not None and outcome.winner == 1  # a domino
        assert reward == outcome.points


def test_a_match_of_one_tile_hands_gives_the_learner_every_hands_reward() -> None:
    """A match's first hand that the opponents end before the learner's first decision
    counted in the match but reached the learner in no step (its return was not its
    score difference in about half the matches): such a match is dealt again."""
    env = MatadorSingleEnv(rules=Rules(hand_size=1, target_score=30), episode="match",
                           match_bonus=0.0)  # fmt: skip
    later_hands_without_it = 0
    for seed in range(100):
        env.reset(seed=seed)
        assert env.game.hands == 0 and env.game.to_move == env.seat
        total, done = 0.0, False
        while not done:
            hands = env.game.hands
            _, reward, terminated, truncated, _ = env.step(int(env.action_masks().argmax()))
            total += reward
            done = terminated or truncated
            later_hands_without_it += env.game.hands - hands > 1
        assert env.game.match is not None
        totals = env.game.match.totals
        assert total == totals[env.seat] - totals[1 - env.seat]
    # Later hands that end before the learner moves still reach it, in its next step.
    assert later_hands_without_it > 0


def test_render_ansi_shows_the_learner_hand() -> None:
    env = MatadorSingleEnv(preset="standard", seat=0, render_mode="ansi")
    env.reset(seed=2)
    text = env.render()
    assert isinstance(text, str) and "layout" in text
    hand = " ".join(str(t) for t in env.game.hand.hand(0))
    assert f"P0 to move, holds: {hand}" in text


def test_render_human_prints_on_reset_and_step(capsys: pytest.CaptureFixture[str]) -> None:
    env = MatadorSingleEnv(preset="standard", seat=0, render_mode="human")
    env.reset(seed=2)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert env.render() is None
    assert capsys.readouterr().out.count("layout") == 3


def test_pickle_round_trip() -> None:
    env = MatadorSingleEnv(preset="leiden", seat=1, opponents=RandomAgent(), reward="win")
    clone = pickle.loads(pickle.dumps(env))
    assert clone.rules == env.rules and clone.fixed_seat == 1
    total, _ = run_episode(clone, 4, random.Random(4))
    assert total in (-1.0, 0.0, 1.0)


# -- bad input: actions, opponents' answers, arguments ----------------------------------------


class FlakyCallable:
    """A callable opponent playing the lowest legal action, or, while ``fault`` is set,
    raising (``"raise"``) or returning ``fault`` itself."""

    def __init__(self, fault: object = None) -> None:
        self.fault = fault

    def __call__(self, obs: dict[str, np.ndarray]) -> object:
        if self.fault == "raise":
            raise RuntimeError("opponent crashed")
        if self.fault is not None:
            return self.fault
        return int(np.flatnonzero(obs["action_mask"])[0])


class FlakyAgent(GreedyAgent):
    """The greedy agent, drawing from the rng first; raises while ``broken``."""

    def __init__(self) -> None:
        self.broken = False

    def act(self, view: SeatView, rng: random.Random) -> Move:
        rng.random()
        if self.broken:
            raise RuntimeError("agent crashed")
        return super().act(view, rng)


def _assert_as_before(env: MatadorSingleEnv, obs: np.ndarray, mask: np.ndarray, seat: int) -> None:
    assert env.game.to_move == seat and not env.game.done
    assert np.array_equal(env.action_masks(), mask)
    assert np.array_equal(env.game.observe(seat)["observation"], obs)


@pytest.mark.parametrize(
    ("fault", "error", "match"),
    [
        ("raise", RuntimeError, "opponent crashed"),
        (10_000, ValueError, "at seat 1 chose action 10000, which is not legal"),
        ("x", TypeError, "at seat 1 returned 'x'"),
    ],
)
def test_an_opponent_that_fails_leaves_the_env_as_before_the_step(
    fault: object, error: type[Exception], match: str
) -> None:
    opponent = FlakyCallable()
    env = MatadorSingleEnv(preset="standard", seat=0, opponents=opponent)
    env.reset(seed=3)
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # a move of each seat first
    obs, mask = env.game.observe(0)["observation"], env.action_masks()
    records = env.hand_records()
    twin = pickle.loads(pickle.dumps(env))  # never fails
    action = int(np.flatnonzero(mask)[0])  # a play: a draw would leave the learner to move
    opponent.fault = fault
    for _ in range(2):  # the learner's move is undone too: it fails the same way again
        with pytest.raises(error, match=match):
            env.step(action)
        _assert_as_before(env, obs, mask, 0)
        assert env.hand_records() == records
    opponent.fault = None  # fixed: the same step goes on as if nothing had happened
    one, two = env.step(action), twin.step(action)
    assert np.array_equal(one[0], two[0]) and one[1:4] == two[1:4]
    assert env.hand_records() == twin.hand_records()


def test_a_failed_step_puts_the_opponents_random_stream_back() -> None:
    # Seat 1 ("random") and the agent draw from the stream before the agent raises.
    agent = FlakyAgent()
    env = MatadorSingleEnv(rules=Rules(players=3), seat=0, opponents=["random", agent])
    env.reset(seed=5)
    obs, mask = env.game.observe(0)["observation"], env.action_masks()
    twin = pickle.loads(pickle.dumps(env))
    action = int(np.flatnonzero(mask)[0])
    agent.broken = True
    with pytest.raises(RuntimeError, match="agent crashed"):
        env.step(action)
    _assert_as_before(env, obs, mask, 0)
    agent.broken = False
    rng = random.Random(1)
    for _ in range(3):
        one, two = env.step(action), twin.step(action)
        assert np.array_equal(one[0], two[0]) and one[1:4] == two[1:4]
        if one[2]:
            break
        action = int(np.flatnonzero(env.action_masks())[rng.randrange(2) - 1])
    assert env.hand_records() == twin.hand_records()


def test_a_reset_that_fails_leaves_no_episode() -> None:
    probe = MatadorSingleEnv(preset="standard", seat=1)
    seed = next(s for s in range(100) if probe.reset(seed=s) and probe.game.hand.moves)
    opponent = FlakyCallable("raise")  # seat 0, which leads the hand of ``seed``
    env = MatadorSingleEnv(preset="standard", seat=1, opponents=opponent)
    with pytest.raises(RuntimeError, match="opponent crashed"):
        env.reset(seed=seed)
    with pytest.raises(RuntimeError, match=r"before reset\(\)"):
        env.step(0)
    opponent.fault = None
    env.reset(seed=seed)
    env.step(int(np.flatnonzero(env.action_masks())[0]))
    opponent.fault = "raise"
    with pytest.raises(RuntimeError, match="opponent crashed"):
        env.reset(seed=seed)  # an episode under way is gone too
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_step_takes_integer_actions_only() -> None:
    env = MatadorSingleEnv(preset="standard", seat=0)
    env.reset(seed=0)
    mask = env.action_masks()
    legal = int(np.flatnonzero(mask)[0])
    bad = [float(legal), legal + 0.7, str(legal), np.float32(legal), True, np.bool_(True)]
    bad += [None, [legal], np.array([legal]), np.array(float(legal)), "abc"]
    for action in bad:
        with pytest.raises(TypeError, match=r"action=.* is not allowed; allowed: an integer"):
            env.step(action)  # type: ignore[arg-type]
        assert np.array_equal(env.action_masks(), mask)  # nothing was played
    twins = [pickle.loads(pickle.dumps(env)) for _ in range(3)]
    results = [env.step(legal)] + [
        twin.step(a)  # type: ignore[arg-type]
        for twin, a in zip(twins, [np.int64(legal), np.uint8(legal), np.array(legal)], strict=True)
    ]
    assert all(np.array_equal(r[0], results[0][0]) and r[1:4] == results[0][1:4] for r in results)
    # Integers that are no action are illegal actions, as before.
    for action in (-1, env.action_space.n, np.int64(10_000)):
        env = MatadorSingleEnv(preset="standard", seat=0, illegal_reward=-4)
        env.reset(seed=0)
        _, reward, terminated, _, info = env.step(action)  # type: ignore[arg-type]
        assert (reward, terminated, info["illegal_action"]) == (-4.0, True, 1)


def test_the_first_integer_past_the_actions_is_illegal_where_action_0_is_legal() -> None:
    # Out of the action range is illegal whatever the mask holds: num_actions must not
    # be read as a position of the mask (wrapping round to action 0, the lead of 0-0).
    env = MatadorSingleEnv(preset="standard", illegal_reward=-4)
    n = env.action_space.n
    seeds = [s for s in range(40) if env.reset(seed=s)[1]["action_mask"][0]]
    assert seeds  # deals where the learner may lead 0-0
    for seed in seeds[:3]:
        env.reset(seed=seed)
        _, reward, terminated, _, info = env.step(n)
        assert (reward, terminated, info["illegal_action"]) == (-4.0, True, 1)


def test_step_before_reset_says_to_reset() -> None:
    env = MatadorSingleEnv(preset="standard")
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\): call reset\(\) first"):
        env.step(0)


@pytest.mark.parametrize("returned", ["x", None, 1.7, "LEGAL_ARRAY", "LEGAL_FLOAT", True])
def test_an_opponent_must_return_an_integer(returned: object) -> None:
    def opponent(obs: dict[str, np.ndarray]) -> object:
        legal = int(np.flatnonzero(obs["action_mask"])[0])
        if returned == "LEGAL_ARRAY":
            return np.array([legal])
        if returned == "LEGAL_FLOAT":
            return float(legal)
        return returned

    env = MatadorSingleEnv(preset="standard", seat=0, opponents=opponent)
    env.reset(seed=1)
    obs, mask = env.game.observe(0)["observation"], env.action_masks()
    with pytest.raises(TypeError, match=r"opponent .* at seat 1 returned .*, not an action"):
        env.step(int(np.flatnonzero(mask)[0]))
    _assert_as_before(env, obs, mask, 0)


class AnsweringAgent:
    """An agent that answers ``answer(legal moves)``."""

    def __init__(self, answer: Callable[[list[Move]], object]) -> None:
        self.answer = answer

    def act(self, view: SeatView, rng: random.Random) -> object:
        return self.answer(list(view.legal_moves))


@pytest.mark.parametrize(
    ("answer", "error", "match"),
    [
        (lambda legal: None, TypeError, r"returned None \(NoneType\), not a move: a Move or its"),
        (lambda legal: 5, TypeError, r"returned 5 \(int\), not a move"),
        (lambda legal: [str(legal[0])], TypeError, r"returned \['.*'\] \(list\), not a move"),
        (lambda legal: str(legal[0]).encode(), TypeError, r"\(bytes\), not a move"),
        (lambda legal: "x", ValueError, r"seat 1 chose 'x', which is no move: not a move: 'x'"),
        (lambda legal: "6-6@0>6", ValueError, r"seat 1 chose '6-6@0>6', which is not legal"),
    ],
)
def test_an_agent_opponent_must_return_a_legal_move_or_its_text(
    answer: Callable[[list[Move]], object], error: type[Exception], match: str
) -> None:
    env = MatadorSingleEnv(preset="standard", seat=0, opponents=AnsweringAgent(answer))
    env.reset(seed=1)
    obs, mask = env.game.observe(0)["observation"], env.action_masks()
    with pytest.raises(error, match=match):
        env.step(int(np.flatnonzero(mask)[0]))
    _assert_as_before(env, obs, mask, 0)


def test_an_agent_opponent_may_return_a_moves_text() -> None:
    agent = AnsweringAgent(lambda legal: np.str_(legal[-1]))
    run_episode(MatadorSingleEnv(preset="standard", opponents=agent), 2, random.Random(2))


def test_an_opponent_may_return_a_numpy_integer() -> None:
    env = MatadorSingleEnv(
        preset="standard",
        seat=0,
        opponents=lambda obs: np.flatnonzero(obs["action_mask"])[0],  # np.int64
    )
    run_episode(env, 2, random.Random(2))


def test_opponents_as_a_numpy_array() -> None:
    env = MatadorSingleEnv(rules=Rules(players=3), opponents=np.array(["random", "random"]))
    run_episode(env, 3, random.Random(3))
    run_episode(MatadorSingleEnv(opponents=np.array("random")), 3, random.Random(3))
    with pytest.raises(ValueError, match="one per other seat"):
        MatadorSingleEnv(rules=Rules(players=3), opponents=np.array(["random"]))
    with pytest.raises(ValueError, match="unknown bot"):
        MatadorSingleEnv(opponents=np.array(["nobody"]))


def test_illegal_reward_is_a_finite_real_number() -> None:
    for value in (float("nan"), float("inf"), -np.inf):
        with pytest.raises(ValueError, match="illegal_reward=.* allowed: a finite real number"):
            MatadorSingleEnv(illegal_reward=value)
    bad: list[object] = ["-5", None, "x", True, [1.0]]
    for wrong in bad:
        with pytest.raises(ValueError, match="illegal_reward=.* allowed: a finite real number"):
            MatadorSingleEnv(illegal_reward=wrong)  # type: ignore[arg-type]
    for value in (-5, -2.5, np.float32(-2.5), np.int64(-5)):
        reward = MatadorSingleEnv(illegal_reward=value).illegal_reward
        assert type(reward) is float and reward == float(value)


def test_seat_and_seed_take_numpy_integers_not_bools() -> None:
    for seat in (True, np.bool_(True), 1.0, "1"):
        with pytest.raises(ValueError, match="seat must be None or a seat"):
            MatadorSingleEnv(preset="standard", seat=seat)  # type: ignore[arg-type]
    env = MatadorSingleEnv(preset="standard", seat=np.int64(1))  # type: ignore[arg-type]
    obs, info = env.reset(seed=np.int64(5))  # type: ignore[arg-type]
    assert type(info["seat"]) is int and info["seat"] == 1 and env.fixed_seat == 1
    twin_obs, twin_info = MatadorSingleEnv(preset="standard", seat=1).reset(seed=5)
    assert np.array_equal(obs, twin_obs) and info.keys() == twin_info.keys()
    assert all(np.array_equal(info[k], twin_info[k]) for k in info)
    # A seed is an integer as an action is: a 0-d array too, never a bool.
    assert np.array_equal(env.reset(seed=np.array(5))[0], obs)  # type: ignore[arg-type]
    for bad in (True, 1.5, "5"):
        with pytest.raises(TypeError, match=r"seed=.* is not allowed; allowed: None or an"):
            env.reset(seed=bad)  # type: ignore[arg-type]


def test_mask_in_obs_puts_the_mask_beside_the_vector() -> None:
    """The dict observation Tianshou reads: the same vector and mask the plain env
    gives, an all-zero mask once an illegal action ended the episode, and kept by
    copies; the compiled vector env refuses it (sync envs take it)."""
    import copy

    import gymnasium

    import matador_env

    plain = MatadorSingleEnv(preset="pagat", players=4, teams=True)
    both = MatadorSingleEnv(preset="pagat", players=4, teams=True, mask_in_obs=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the checker's advice on infinite bounds and seeds
        gymnasium_check_env(both, skip_render_check=True)
    assert both.observation_space["obs"] == plain.observation_space  # type: ignore[index]
    vector, _ = plain.reset(seed=4)
    obs, _ = both.reset(seed=4)
    done = False
    while not done:
        assert set(obs) == {"obs", "mask"} and both.observation_space.contains(obs)
        assert np.array_equal(obs["obs"], vector)
        assert np.array_equal(obs["mask"], plain.action_masks().astype(np.int8))
        action = int(np.flatnonzero(obs["mask"])[0])
        vector, _, _, _, _ = plain.step(action)
        obs, _, done, truncated, _ = both.step(action)
        done = done or truncated
    twin = copy.deepcopy(both)
    assert twin.mask_in_obs and isinstance(twin.reset(seed=1)[0], dict)
    obs, _ = both.reset(seed=5)
    illegal = int(np.flatnonzero(obs["mask"] == 0)[0])
    obs, reward, terminated, _, _ = both.step(illegal)
    assert terminated and reward == both.illegal_reward and not obs["mask"].any()
    with pytest.raises(TypeError, match=r"mask_in_obs='yes' is not allowed; allowed: True"):
        MatadorSingleEnv(mask_in_obs="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"mask_in_obs=True: the compiled vector env .*'sync'"):
        gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, mask_in_obs=True)
    sync = gymnasium.make_vec(
        matador_env.GYM_ID, num_envs=2, vectorization_mode="sync", mask_in_obs=True
    )
    obs, _ = sync.reset(seed=0)
    assert obs["obs"].shape[0] == obs["mask"].shape[0] == 2
