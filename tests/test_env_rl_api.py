"""What RL libraries need of the environments: numeric fixed-key infos, registration on
``import matador_env``, rule overrides as keywords, copies in mid-game, and the
truncation bound of ``episode="match"``."""

from __future__ import annotations

import copy
import importlib
import json
import pickle
import random
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pettingzoo.test import api_test  # type: ignore[import-untyped]

from matador_env import MatadorSingleEnv, env, raw_env
from matador_env.engine import HandState, Rules, RulesError
from matador_env.engine.tiles import INTEGER_KINDS
from matador_env.matador_v0 import (
    DEFAULT_MAX_HANDS,
    INFO_KEYS,
    RENDER_MODES,
    TERMINATION_CODES,
    UnsupportedRenderMode,
)
from matador_env.picture import FRAME_SHAPE
from matador_env.values import as_seed

RULES = {
    "standard": Rules.preset("standard"),
    "leiden": Rules.preset("leiden"),
    "kardinal": Rules.preset("kardinal"),
    "pagat-teams": Rules.preset("pagat", players=4, teams=True),
    "polish-p3": Rules.preset("polish", players=3),
}


def random_action(obs: dict[str, np.ndarray], rng: random.Random) -> int:
    legal = np.flatnonzero(obs["action_mask"])
    return int(legal[rng.randrange(len(legal))])


def assert_numeric(info: dict[str, Any], keys: tuple[str, ...]) -> None:
    assert tuple(info) == keys
    for key, value in info.items():
        assert type(value) is int, f"{key}={value!r} is not an int"


# -- infos ----------------------------------------------------------------------------------


@pytest.mark.parametrize("episode", ["hand", "match"])
@pytest.mark.parametrize("name", sorted(RULES))
def test_aec_infos_have_the_same_int_keys_at_every_step(name: str, episode: str) -> None:
    rules = RULES[name].replace(target_score=30)
    e = env(rules=rules, episode=episode)
    e.reset(seed=4)
    rng = random.Random(4)
    assert all(e.infos[a] == e.infos["player_0"] for a in e.agents)
    assert e.infos["player_0"]["termination"] == TERMINATION_CODES["none"]
    assert e.infos["player_0"]["winner"] == -1
    ended = 0
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        assert_numeric(info, INFO_KEYS)
        for other in e.agents:
            assert_numeric(e.infos[other], INFO_KEYS)
        result = e.unwrapped.hand_result()
        if result is None:
            assert info["hands"] == 0
        else:
            ended = info["hands"]
            assert info["termination"] == TERMINATION_CODES[result["termination"]]
            assert info["winner"] == (-1 if result["winner"] is None else result["winner"])
            side = result["winning_side"]
            assert info["winning_side"] == (-1 if result["winner"] is None else side)
            assert info["points"] == result["points"]
            winners = result.get("match_winners")
            assert info["match_over"] == int(winners is not None)
            seat = int(agent.rpartition("_")[2])
            assert info["match_won"] == int(winners is not None and rules.side_of(seat) in winners)
        e.step(None if term or trunc else random_action(obs, rng))
    assert ended >= 1
    if episode == "match":
        assert ended == len(e.unwrapped.game.match.outcomes)


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_single_env_infos_have_the_same_keys_at_every_step(episode: str) -> None:
    keys = (*INFO_KEYS, "seat", "illegal_action", "action_mask")
    e = MatadorSingleEnv(preset="standard", episode=episode, target_score=30)
    rng = random.Random(2)
    for seed in range(3):
        obs, info = e.reset(seed=seed)
        done = False
        while True:
            assert tuple(info) == keys
            assert_numeric({k: info[k] for k in keys[:-1]}, keys[:-1])
            assert info["action_mask"].dtype == np.int8
            assert info["action_mask"].shape == (e.encoding.num_actions,)
            if done:
                break
            action = random_action({"action_mask": info["action_mask"]}, rng)
            obs, _, terminated, truncated, info = e.step(action)
            done = terminated or truncated
        assert info["hands"] >= 1 and e.hand_result() is not None
        assert info["match_over"] == int(episode == "match")
    _, info = e.reset(seed=0)
    _, _, _, _, info = e.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    assert info["illegal_action"] == 1 and tuple(info) == keys


# -- registration ---------------------------------------------------------------------------


def run_python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_a_plain_import_registers_matador_v0_without_importing_pettingzoo() -> None:
    out = run_python(
        "import json, sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import matador_env\n"
        "light = 'pettingzoo' not in sys.modules and 'numpy' not in sys.modules\n"
        "import pettingzoo\n"
        "e = pettingzoo.make('aec', 'matador_v0', preset='polish', players=3)\n"
        "e.reset(seed=1)\n"
        "print(json.dumps([light, e.unwrapped.rules.players, str(e),\n"
        "                  type(pettingzoo.__loader__).__name__]))"
    )
    light, players, name, loader = json.loads(out)
    assert light, "import matador_env imported pettingzoo or numpy"
    assert (players, name) == (3, "matador_v0")
    assert loader == "SourceFileLoader"  # PettingZoo keeps its own loader


def test_registration_when_pettingzoo_came_first_and_when_both_import_again() -> None:
    out = run_python(
        "import json, warnings\n"
        "warnings.simplefilter('error')\n"
        "import pettingzoo\n"
        "import matador_env, matador_env.matador_v0\n"
        "import importlib; importlib.reload(pettingzoo)\n"
        "print(json.dumps(str(pettingzoo.make('aec', 'matador_v0'))))"
    )
    assert json.loads(out) == "matador_v0"


def test_a_plain_import_registers_matador_with_gymnasium_without_importing_it() -> None:
    out = run_python(
        "import json, sys, warnings\n"
        "warnings.simplefilter('error')\n"
        "import matador_env\n"
        "light = 'gymnasium' not in sys.modules\n"
        "import gymnasium\n"
        "from gymnasium.utils.env_checker import check_env\n"
        "e = gymnasium.make('Matador-v0', preset='pagat', players=4, teams=True, seat=1)\n"
        "check_env(e.unwrapped)\n"
        "obs, info = e.reset(seed=3)\n"
        "obs, reward, done, cut, info = e.step(int(info['action_mask'].nonzero()[0][0]))\n"
        "print(json.dumps([light, e.spec.id, e.unwrapped.rules.players, e.unwrapped.seat,\n"
        "                  type(gymnasium.__loader__).__name__]))"
    )
    light, gym_id, players, seat, loader = json.loads(out)
    assert light, "import matador_env imported gymnasium"
    assert (gym_id, players, seat) == ("Matador-v0", 4, 1)
    assert loader == "SourceFileLoader"  # Gymnasium keeps its own loader


@pytest.mark.parametrize(
    "imports",
    [
        "import gymnasium; import matador_env",  # Gymnasium first
        "import pettingzoo; import matador_env; import gymnasium",  # PettingZoo imports it
        "import matador_env; import pettingzoo; import gymnasium",  # both after
        "import gymnasium",  # no import of matador_env: the id names the module
    ],
)
def test_gymnasium_make_finds_matador_whatever_came_first(imports: str) -> None:
    out = run_python(
        f"{imports}\n"
        "import gymnasium, json, pettingzoo\n"
        "e = gymnasium.make('matador_env:Matador-v0', preset='leiden', opponents='random')\n"
        "e.reset(seed=0)\n"
        "again = gymnasium.make('Matador-v0')\n"
        "print(json.dumps([e.unwrapped.rules.preset_name(), again.unwrapped.rules.preset_name(),\n"
        "                  str(pettingzoo.make('aec', 'matador_v0'))]))"
    )
    assert json.loads(out) == ["leiden", "standard", "matador_v0"]


def test_gymnasium_make_vec_and_sb3_make_vec_env_take_the_id() -> None:
    import gymnasium
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    import matador_env

    vec = gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, preset="polish")
    obs, info = vec.reset(seed=5)
    assert vec.single_observation_space.shape is not None
    assert isinstance(vec.single_action_space, gymnasium.spaces.Discrete)
    assert obs.shape == (2, *vec.single_observation_space.shape)
    assert info["action_mask"].shape == (2, vec.single_action_space.n)
    vec.close()
    # make_vec_env asks for rgb_array (and would retry without it on a TypeError).
    sb3 = make_vec_env(matador_env.GYM_ID, n_envs=2, seed=1, env_kwargs={"preset": "kardinal"})
    assert sb3.get_attr("render_mode") == ["rgb_array", "rgb_array"]
    sb3.reset()
    frames = [f for f in sb3.get_images() if f is not None]  # two frames, checked next
    assert [f.shape for f in frames] == [FRAME_SHAPE, FRAME_SHAPE]
    assert not np.array_equal(frames[0], frames[1])  # two deals
    assert isinstance(sb3.action_space, gymnasium.spaces.Discrete)
    assert get_action_masks(sb3).shape == (2, sb3.action_space.n)
    model = MaskablePPO("MlpPolicy", sb3, n_steps=32, batch_size=32, seed=1)
    model.learn(64)
    sb3.close()


@pytest.mark.parametrize("make", [raw_env, env, MatadorSingleEnv])
def test_a_render_mode_not_drawn_is_a_value_error_and_a_type_error(
    make: Callable[..., Any],
) -> None:
    with pytest.raises(UnsupportedRenderMode, match="render_mode='depth_array' is not allowed"):
        make(render_mode="depth_array")
    assert issubclass(UnsupportedRenderMode, ValueError)
    assert issubclass(UnsupportedRenderMode, TypeError)  # what make_vec_env retries on
    for mode in (None, *RENDER_MODES):
        assert make(render_mode=mode).unwrapped.render_mode == mode


# -- rule overrides -------------------------------------------------------------------------


def test_rule_overrides_as_keywords() -> None:
    expected = Rules.preset("polish", players=3, target_score=50)
    assert raw_env(preset="polish", players=3, target_score=50).rules == expected
    assert env(preset="polish", players=3, target_score=50).unwrapped.rules == expected
    single = MatadorSingleEnv(preset="pagat", players=4, teams=True, seat=2)
    assert single.rules == Rules.preset("pagat", players=4, teams=True)
    assert raw_env(players=3).rules == Rules.preset("standard", players=3)
    base = Rules.preset("leiden")
    assert raw_env(rules=base, target_score=60).rules == base.replace(target_score=60)
    e = env(preset="pagat", players=4, teams=True)
    e.reset(seed=0)
    assert len(e.agents) == 4


@pytest.mark.parametrize("make", [raw_env, env, MatadorSingleEnv])
def test_unknown_keywords_raise_a_rules_error_naming_the_allowed_ones(
    make: Callable[..., Any],
) -> None:
    with pytest.raises(RulesError, match="playres") as caught:
        make(preset="polish", playres=3)
    message = str(caught.value)
    for allowed in ("players", "teams", "target_score", "episode", "reward"):
        assert allowed in message
    with pytest.raises(RulesError, match="players"):
        make(preset="standard", players=1)  # a known key with an impossible value
    with pytest.raises(RulesError, match="not both"):
        make(rules=Rules(), preset="standard")


# -- copies in mid-game ---------------------------------------------------------------------


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return bool(a == b)


def aec_trace(e: Any, rng: random.Random, steps: int) -> list[Any]:
    """Up to ``steps`` steps of random play; what every agent sees after each."""
    trace = []
    for _ in range(steps):
        if not e.agents:
            break
        obs, reward, term, trunc, info = e.last()
        e.step(None if term or trunc else random_action(obs, rng))
        seen = {a: e.observe(a) for a in e.possible_agents}
        trace.append(
            (
                e.agent_selection if e.agents else None,
                seen,
                dict(e.rewards),
                dict(e.terminations),
                dict(e.truncations),
                copy.deepcopy(e.infos),
            )
        )
    return trace


COPIES = {
    "deepcopy": copy.deepcopy,
    "pickle": lambda e: pickle.loads(pickle.dumps(e)),
}


@pytest.mark.parametrize("how", sorted(COPIES))
@pytest.mark.parametrize("make", [env, raw_env])
@pytest.mark.parametrize("name", sorted(RULES))
def test_aec_copies_in_mid_game_continue_identically(
    name: str, make: Callable[..., Any], how: str
) -> None:
    rules = RULES[name].replace(target_score=40)
    for episode, played in (("hand", 5), ("match", 60)):
        e = make(rules=rules, episode=episode)
        e.reset(seed=11)
        rng = random.Random(11)
        aec_trace(e, rng, played)
        assert e.agents, "the game ended before the copy"
        clone = COPIES[how](e)
        assert clone is not e and clone.unwrapped.game is not e.unwrapped.game
        assert clone.agent_selection == e.agent_selection
        for agent in e.possible_agents:
            assert same(clone.observe(agent), e.observe(agent))
        assert same(clone.infos, e.infos)
        assert np.array_equal(clone.state(), e.state())
        # The same actions from here on give the same game, to its end.
        original = aec_trace(e, random.Random(5), 100_000)
        copied = aec_trace(clone, random.Random(5), 100_000)
        assert len(original) == len(copied) and not e.agents
        for x, y in zip(original, copied, strict=True):
            assert same(x, y)
        # The copy is independent: it can be reset and played while the original is not.
        clone.reset(seed=1)
        assert not e.agents and clone.agents


@pytest.mark.parametrize("how", sorted(COPIES))
def test_single_env_copies_in_mid_game_continue_identically(how: str) -> None:
    for episode in ("hand", "match"):
        e = MatadorSingleEnv(
            preset="pagat", players=4, teams=True, episode=episode, target_score=30
        )
        obs, info = e.reset(seed=3)
        rng = random.Random(3)
        for _ in range(3):
            obs, _, terminated, truncated, info = e.step(random_action(info, rng))
            assert not (terminated or truncated)
        clone = COPIES[how](e)
        assert np.array_equal(clone.action_masks(), e.action_masks())

        def play(env: MatadorSingleEnv, info: dict[str, Any]) -> list[Any]:
            picker = random.Random(9)
            out = []
            while True:
                step = env.step(random_action(info, picker))
                out.append(step)
                info = step[4]
                if step[2] or step[3]:
                    return out

        a, b = play(e, info), play(clone, info)
        assert len(a) == len(b)
        assert all(same(x, y) for x, y in zip(a, b, strict=True))
        # Unseeded resets after the copy draw the same deals too.
        assert np.array_equal(e.reset()[0], clone.reset()[0])


def test_copies_before_the_first_reset() -> None:
    for e in (raw_env(preset="leiden"), env(preset="leiden"), MatadorSingleEnv(preset="leiden")):
        for clone in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
            assert clone.unwrapped.rules == Rules.preset("leiden")
            clone.reset(seed=2)


# -- the safety bound of episode="match" ----------------------------------------------------


def test_a_match_truncates_after_max_hands() -> None:
    rules = Rules.preset("standard", target_score=10_000)
    e = raw_env(rules=rules, episode="match", max_hands=3)
    e.reset(seed=1)
    rng = random.Random(1)
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        assert not term
        e.step(None if trunc else random_action(obs, rng))
    match = e.game.match
    assert match is not None and not match.is_over
    assert len(match.outcomes) == 3 and e.game.truncated
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert info["hands"] == 3 and info["match_over"] == 0
    # Every hand's rewards arrived, and no match bonus.
    diff = match.totals[0] - match.totals[1]
    assert totals["player_0"] == pytest.approx(diff)
    assert totals["player_1"] == pytest.approx(-diff)


def test_a_single_env_match_truncates_after_max_hands() -> None:
    e = MatadorSingleEnv(preset="kardinal", episode="match", max_hands=2, target_score=10_000)
    _, info = e.reset(seed=5)
    rng = random.Random(5)
    while True:
        _, _, terminated, truncated, info = e.step(random_action(info, rng))
        assert not terminated
        if truncated:
            break
    assert info["hands"] == 2 and not e.action_masks().any()
    with pytest.raises(RuntimeError, match="reset"):
        e.step(0)


def test_the_truncating_env_passes_the_api_test(monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module("pettingzoo.test.api_test")
    monkeypatch.setattr(module, "env_obs_dicts", [*module.env_obs_dicts, "matador_v0"])
    monkeypatch.setattr(module, "env_obs_space", [*module.env_obs_space, "matador_v0"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        api_test(env(preset="standard", episode="match", max_hands=2, target_score=10_000))


def test_the_bound_is_documented_and_checked() -> None:
    doc = importlib.import_module("matador_env.matador_v0").__doc__ or ""
    assert "`max_hands`" in doc and "truncations" in doc and "### Infos" in doc
    assert raw_env(episode="match").game.max_hands == DEFAULT_MAX_HANDS
    for bad in (0, -1, 2.5, True, "10", np.bool_(True), np.int64(0)):
        with pytest.raises(ValueError, match="max_hands"):
            raw_env(episode="match", max_hands=bad)
    for good in (np.int64(5), np.uint8(5)):
        max_hands = raw_env(episode="match", max_hands=good).game.max_hands
        assert max_hands == 5 and type(max_hands) is int


# -- hand records ---------------------------------------------------------------------------


def test_hand_records_replay_every_hand_of_a_match_episode() -> None:
    from matador_env.engine import parse_hand_record

    e = env(preset="polish", episode="match", target_score=30)
    e.reset(seed=4)
    assert e.unwrapped.hand_records() == []
    rng = random.Random(4)
    steps = 0
    for agent in e.agent_iter():
        _, _, terminated, truncated, info = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        if steps == 5:
            partial = e.unwrapped.hand_records()
            assert len(partial) == 1 and parse_hand_record(partial[0]).replay().outcome is None
            clone = pickle.loads(pickle.dumps(e))
            assert clone.unwrapped.hand_records() == partial
        e.step(rng.choice(np.flatnonzero(e.observe(agent)["action_mask"]).tolist()))
        steps += 1
    records = e.unwrapped.hand_records()
    assert len(records) == info["hands"] >= 2
    outcomes = [parse_hand_record(r).replay().outcome for r in records]
    assert all(o is not None for o in outcomes)
    last = e.unwrapped.hand_result()
    final = outcomes[-1]
    assert final is not None
    assert final.counts == last["counts"] and final.points == last["points"]
    totals = [0] * e.unwrapped.rules.sides
    for o in outcomes:
        assert o is not None
        totals = [t + p for t, p in zip(totals, o.side_points(len(totals)), strict=True)]
    assert tuple(totals) == last["totals"]
    e.reset(seed=5)
    assert e.unwrapped.hand_records() == []


def test_the_single_env_records_its_hand() -> None:
    from matador_env.engine import parse_hand_record

    e = MatadorSingleEnv(preset="leiden", opponents="greedy", seat=1)
    _, info = e.reset(seed=2)
    done = False
    while not done:
        _, _, terminated, truncated, info = e.step(int(np.flatnonzero(info["action_mask"])[0]))
        done = terminated or truncated
    (record,) = e.hand_records()
    outcome = parse_hand_record(record).replay().outcome
    assert outcome is not None and outcome.counts == e.hand_result()["counts"]


# -- seeds ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [-5, -1, 2**64, np.int64(-3)], ids=repr)
def test_seeds_outside_0_to_2_64_are_refused_and_the_game_goes_on(seed: object) -> None:
    """random.Random deals with abs(seed): reset(seed=-5) dealt the game of seed 5.
    Gymnasium refuses negative seeds too; 2**64 and more are no seeds of the engine."""
    allowed = f"allowed: None or {INTEGER_KINDS} from 0 to {2**64 - 1} (2**64 - 1)"
    with pytest.raises(ValueError, match=r"seed=-?\d+ is not allowed; ") as info:
        as_seed(seed)
    assert allowed in str(info.value)
    aec = raw_env(preset="standard")
    aec.reset(seed=5)
    single = MatadorSingleEnv(preset="standard", opponents="random")
    single.reset(seed=5)
    before = (aec.game.hand, aec.game.seed, single.game.hand, single.game.seed)
    with pytest.raises(ValueError, match="seed="):
        aec.reset(seed=seed)
    with pytest.raises(ValueError, match="seed="):
        single.reset(seed=seed)
    assert (aec.game.hand, aec.game.seed, single.game.hand, single.game.seed) == before


def test_the_largest_seed_deals() -> None:
    assert as_seed(np.uint64(2**64 - 1)) == 2**64 - 1 and as_seed(0) == 0 and as_seed(None) is None
    e = raw_env(preset="standard")
    e.reset(seed=2**64 - 1)
    assert e.game.hand == HandState.deal(e.rules, 2**64 - 1)


def test_each_agent_has_spaces_of_its_own() -> None:
    # One Discrete for every agent had put them all on one stream: seeding player_1's
    # space re-seeded player_0's.
    e = raw_env(rules=Rules(players=3))
    first, second, third = (e.action_space(a) for a in e.possible_agents)
    assert first is not second and second is not third
    assert first == second == third  # equal spaces, each its own sampler
    assert e.observation_space("player_0") is not e.observation_space("player_1")
    assert e.observation_space("player_0") == e.observation_space("player_1")
    assert e.action_space("player_0") is first  # the same object on every call
    first.seed(100)
    alone = [first.sample() for _ in range(8)]
    first.seed(100)
    second.seed(7)
    assert [first.sample() for _ in range(8)] == alone
