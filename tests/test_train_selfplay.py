"""The self-play environment of ``python -m train`` as plain data: a checkpoint saves
each environment between two steps, and a resumed run goes on with the same games."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from matador_env.engine import Rules
from matador_env.matador_v0 import Game
from train.selfplay import OpponentPool, SelfPlayEnv, check_live_state


def _env(rules: Rules, seed: int) -> SelfPlayEnv:
    pool = OpponentPool(None, baseline_weights={"expert": 1.0, "greedy": 1.0, "random": 1.0})
    env = SelfPlayEnv(pool=pool, rules=rules)
    env.reset(seed=seed)
    return env


def _legal(env: SelfPlayEnv, rng: random.Random) -> int:
    return rng.choice(np.flatnonzero(env.action_masks()).tolist())


@pytest.mark.parametrize("preset, players", [("standard", 2), ("leiden", 3), ("pagat", 4)])
def test_an_env_goes_on_from_its_live_state(preset: str, players: int) -> None:
    rules = Rules.preset(preset).replace(players=players)
    saved, other = _env(rules, 1), _env(rules, 99)
    rng = random.Random(0)
    for _ in range(30):  # across episodes: several opponents drawn
        _, _, terminated, truncated, _ = saved.step(_legal(saved, rng))
        if terminated or truncated:
            saved.reset()
    state = json.loads(json.dumps(saved.live_state()))
    assert state["game"]["actions"], "saved in mid-game"
    obs = other.restore_live_state(state)
    np.testing.assert_array_equal(obs, saved._observe(0)[0])
    assert other.pool.current == saved.pool.current
    for _ in range(200):
        action = _legal(saved, rng)
        a, b = saved.step(action), other.step(action)
        np.testing.assert_array_equal(b[0], a[0])
        assert b[1:][:3] == a[1:][:3]
        assert json.dumps(b[4], default=str) == json.dumps(a[4], default=str)
        if a[2] or a[3]:
            np.testing.assert_array_equal(other.reset()[0], saved.reset()[0])
            assert other.pool.current == saved.pool.current


def test_a_numpy_seed_deals_as_its_int_does() -> None:
    rules = Rules.preset("standard")
    a, b = _env(rules, 0), _env(rules, 0)
    np.testing.assert_array_equal(a.reset(seed=np.int64(7))[0], b.reset(seed=7)[0])
    assert a.pool.current == b.pool.current


def test_an_env_restored_at_an_episode_end_says_so_to_a_step() -> None:
    """A checkpoint between an episode's end and the next reset: the restored env,
    never reset itself, says the episode ended (not that reset() was never called)."""
    rules = Rules.preset("standard")
    saved = _env(rules, 1)
    rng = random.Random(0)
    while not any(saved.step(_legal(saved, rng))[2:4]):
        pass
    fresh = SelfPlayEnv(
        pool=OpponentPool(None, baseline_weights={"expert": 1.0, "greedy": 1.0, "random": 1.0}),
        rules=rules,
    )
    fresh.restore_live_state(json.loads(json.dumps(saved.live_state())))
    with pytest.raises(RuntimeError, match="after the episode ended"):
        fresh.step(0)


def test_a_live_state_of_an_ended_game_that_says_it_runs_is_refused() -> None:
    """'over' false on a game that has ended: refused, whichever seat the ended hand
    leaves to move (restored, every action is masked, and a step would be charged as
    the learner's illegal action)."""
    rules = Rules.preset("standard")
    rng = random.Random(0)
    seats = set()
    for seed in range(12):
        saved = _env(rules, seed)
        while not any(saved.step(_legal(saved, rng))[2:4]):
            pass
        state = json.loads(json.dumps(saved.live_state()))
        check_live_state(state, _env(rules, 99))  # as saved: over
        seats.add(saved.game.to_move == saved.seat)
        with pytest.raises(ValueError, match="'over' is false, but its game has ended"):
            check_live_state({**state, "over": False}, _env(rules, 99))
    assert seats == {True, False}, "ended hands with the learner to move and not"


def _damaged(state: dict[str, Any], change: str) -> dict[str, Any]:
    state = json.loads(json.dumps(state))
    if change == "keys":
        del state["over"]
    elif change == "seat":
        state["seat"] = 7
    elif change == "illegal":
        state["game"]["actions"].append(10**6)
    elif change == "rng":
        state["rng"][1] = state["rng"][1][:10]
    elif change == "opponent":
        state["opponent"] = "wizard"
    elif change == "np_random_seed":
        state["np_random_seed"] = "5"
    elif change == "negative_np_random_seed":
        state["np_random_seed"] = -2
    return state


@pytest.mark.parametrize(
    "change, words",
    [
        ("keys", "its keys are"),
        ("seat", "'seat' is 7, not a seat from 0 to 1"),
        ("illegal", "is not legal there"),
        ("rng", "'rng' is not the state of a random.Random"),
        ("opponent", "opponent 'wizard' is not in this pool; allowed: expert, greedy, random"),
        ("np_random_seed", "'np_random_seed' is '5', not null, -1 or the seed of a reset"),
        ("negative_np_random_seed", "'np_random_seed' is -2, not null, -1 or the seed"),
    ],
)
def test_a_live_state_that_does_not_fit_is_refused(change: str, words: str) -> None:
    rules = Rules.preset("standard")
    state = _env(rules, 1).live_state()
    with pytest.raises(ValueError, match=words):
        check_live_state(_damaged(state, change), _env(rules, 2))


def test_a_game_replays_from_its_seed_and_actions() -> None:
    rules = Rules.preset("kardinal")
    game = Game(rules, "match", "score", None)
    game.start(5)
    rng = random.Random(1)
    while not game.done:
        game.apply(rng.choice(np.flatnonzero(game.mask(game.to_move)).tolist()))
    again = Game(rules, "match", "score", None)
    again.replay(game.seed, game.actions)
    assert again.done and again.match == game.match and again.hands == game.hands
    with pytest.raises(ValueError, match=r"action \d+ \(0\) comes after the game ended"):
        again.replay(game.seed, [*game.actions, 0])
    with pytest.raises(ValueError, match=r"action 0 \(-1\) is not legal there"):
        again.replay(game.seed, [-1])


def test_a_pool_plays_as_a_saved_snapshot(tmp_path: Path) -> None:
    pool = OpponentPool(tmp_path, baseline_weights={"random": 1.0})
    with pytest.raises(ValueError, match="holds no exported policy"):
        pool.play_as("snapshot:step_512")
    pool.play_as("random")
    assert pool.current == "random"


def test_unseeded_envs_draw_their_opponents_independently() -> None:
    """Without a seed, opponents come from fresh entropy (two copies met the same
    opponents in the same order when the draw started from one fixed seed); a seed
    still fixes them."""
    rules = Rules.preset("standard")

    def opponents(seed: int | None) -> list[str]:
        pool = OpponentPool(None, baseline_weights={"expert": 1.0, "greedy": 1.0})
        env = SelfPlayEnv(pool=pool, rules=rules)
        drawn = []
        for i in range(64):
            env.reset(seed=None if seed is None or i else seed)
            drawn.append(pool.current)
        return drawn

    # 64 fair draws each: equal sequences by chance once in 2**64.
    assert opponents(None) != opponents(None)
    assert opponents(5) == opponents(5)
