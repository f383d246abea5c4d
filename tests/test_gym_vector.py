"""gymnasium.make_vec("Matador-v0"): the compiled vector env against Gymnasium's own
SyncVectorEnv of single envs (same-step auto-reset), step for step; seeds, illegal
actions, Gymnasium's vector wrappers, bad input, and a clear error without numba."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import matador_env
from matador_env.engine import Rules

pytest.importorskip("numba")

from matador_env.gym_vector import MatadorVectorEnv  # noqa: E402
from matador_env.matador_v0 import UnsupportedRenderMode  # noqa: E402


def make_both(
    num_envs: int, mode: AutoresetMode = AutoresetMode.NEXT_STEP, **kwargs: Any
) -> tuple[Any, Any]:
    """The compiled env (make_vec's default) and Gymnasium's SyncVectorEnv of single
    envs, both auto-resetting in ``mode``."""
    compiled = gymnasium.make_vec(
        matador_env.GYM_ID, num_envs=num_envs, autoreset_mode=mode, **kwargs
    )
    sync = gymnasium.make_vec(
        matador_env.GYM_ID,
        num_envs=num_envs,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": mode},
        **kwargs,
    )
    return compiled, sync


def assert_same(a: Any, b: Any, path: str) -> None:
    """Equal keys, shapes, dtypes and values (rewards to float32's precision)."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), (path, sorted(set(a) ^ set(b)))
        for key in a:
            assert_same(a[key], b[key], f"{path}/{key}")
        return
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{path}[{i}]")
        return
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (path, a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype == object:
        for x, y in zip(a, b, strict=True):
            assert (x is None) == (y is None), path
            if x is not None:
                np.testing.assert_array_equal(x, y, err_msg=path)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, err_msg=path)


CASES = [
    {"preset": "standard"},
    {"preset": "leiden", "seat": 1},
    {"preset": "double_twelve", "reward": "normalised"},
    {"preset": "standard", "players": 3, "episode": "match", "max_hands": 3},
    {"preset": "kardinal", "episode": "match", "reward": "win"},
    {"preset": "pagat", "players": 4, "teams": True, "episode": "match", "illegal_reward": -5},
]


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
@pytest.mark.parametrize("kwargs", CASES, ids=lambda k: "-".join(map(str, k.values())))
def test_the_compiled_env_is_the_sync_env_step_for_step(
    kwargs: dict[str, Any], mode: AutoresetMode
) -> None:
    # With deterministic opponents every observation, reward, flag and info agrees,
    # across auto-resets (each slot's later deals and seats come from its seed's
    # stream), match ends and truncations, and illegal actions.
    compiled, sync = make_both(3, mode, opponents="trained", **kwargs)
    assert isinstance(compiled, MatadorVectorEnv)
    assert compiled.metadata["autoreset_mode"] == mode
    assert compiled.single_observation_space == sync.single_observation_space
    assert compiled.single_action_space == sync.single_action_space
    assert compiled.observation_space == sync.observation_space
    assert compiled.action_space == sync.action_space
    assert_same(compiled.reset(seed=3), sync.reset(seed=3), "reset")
    rng = np.random.default_rng(1)
    ended = illegal = 0
    for t in range(300):
        masks = compiled.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        if t % 90 == 5:
            # Below the range, above it, and in range but not legal.
            b = t % 3
            actions[b] = (-1, masks.shape[1], int(np.flatnonzero(~masks[b])[0]))[b]
            illegal += 1
        result = compiled.step(actions)
        assert_same(result, sync.step(actions), f"step {t}")
        ended += int((result[2] | result[3]).sum())
    assert ended >= illegal + 3  # episodes that ended by the rules too


def test_one_tile_hands_are_dealt_again_as_in_the_single_env() -> None:
    # The leader goes out at once; a deal the learner would not see is replaced by
    # the next one of the slot's stream, as MatadorSingleEnv.reset does.
    compiled, sync = make_both(5, AutoresetMode.SAME_STEP, rules=Rules(hand_size=1, players=3))
    assert_same(compiled.reset(seed=11), sync.reset(seed=11), "reset")
    seats = set()
    for t in range(30):
        actions = compiled.action_masks().argmax(axis=1)
        result = compiled.step(actions)
        assert_same(result, sync.step(actions), f"step {t}")
        assert result[2].all()  # every learner went out
        seats |= set(result[4]["seat"].tolist())
    assert seats == {0, 1, 2}


def test_a_match_whose_first_hand_ends_before_the_learner_moves_is_dealt_again() -> None:
    """Match episodes of one-tile hands: the compiled env deals a match again where its
    first hand ends before the learner's first decision, step for step as the single
    env does (tests/test_gym_env.py checks the single env's returns)."""
    rules = Rules(hand_size=1, target_score=30)
    compiled, sync = make_both(6, AutoresetMode.SAME_STEP, rules=rules, episode="match",
                               match_bonus=0.0)  # fmt: skip
    assert_same(compiled.reset(seed=21), sync.reset(seed=21), "reset")
    # At the learner's first decision of a match no hand of it has been played.
    assert not compiled.venv._hands.any()
    matches = 0
    for t in range(80):
        actions = compiled.action_masks().argmax(axis=1)
        result = compiled.step(actions)
        assert_same(result, sync.step(actions), f"step {t}")
        matches += int(result[2].sum())
        assert not compiled.venv._hands[result[2] | result[3]].any()
    assert matches >= 20


def test_seeds_replay_and_differ_with_random_opponents() -> None:
    def trace(seed: Any) -> list[bytes]:
        env = gymnasium.make_vec(matador_env.GYM_ID, num_envs=4, preset="standard", players=3)
        assert isinstance(env, MatadorVectorEnv)  # make_vec's default
        obs, infos = env.reset(seed=seed)
        out = [obs.tobytes()]
        for _ in range(60):
            obs, reward, *_ = env.step(env.action_masks().argmax(axis=1))
            out += [obs.tobytes(), reward.tobytes()]
        return out

    assert trace(5) == trace(5)
    assert trace([5, 6, 7, 8]) == trace(5)
    assert trace(5) != trace(6)
    assert trace(None) != trace(None)
    # The deals and seats are the sync env's even where the opponents' moves are not.
    compiled, sync = make_both(4, preset="standard", players=3)
    (_, a), (_, b) = compiled.reset(seed=[1, None, 3, 4]), sync.reset(seed=[1, 2, 3, 4])
    assert (a["seat"][[0, 2, 3]] == b["seat"][[0, 2, 3]]).all()


@pytest.mark.parametrize("opponents", ["random", "casual"])
def test_a_slots_random_opponents_depend_on_its_own_seed_and_actions_only(
    opponents: str,
) -> None:
    # Each slot has its own opponents' stream: slot 0 seeded 5 plays the same game
    # whatever the other slots are seeded with and whatever they play (paired runs).
    def slot0(others: list[int | None], pick: str) -> list[bytes]:
        env = MatadorVectorEnv(3, preset="standard", players=3, opponents=opponents)
        obs, _ = env.reset(seed=[5, *others])
        out = [obs[0].tobytes()]
        for _ in range(60):
            masks = env.action_masks()
            acts = masks.argmax(axis=1)
            if pick == "last":  # the other slots play their last legal action instead
                acts[1:] = masks.shape[1] - 1 - masks[1:, ::-1].argmax(axis=1)
            obs, reward, *_ = env.step(acts)
            out += [obs[0].tobytes(), reward[0].tobytes()]
        return out

    base = slot0([6, 7], "first")
    assert slot0([6, 8], "first") == base
    assert slot0([None, None], "first") == base
    assert slot0([6, 7], "last") == base
    assert slot0([6, 7], "first") == base
    # Two slots seeded alike and played alike are the same game all along.
    env = MatadorVectorEnv(2, preset="standard", players=3, opponents=opponents)
    obs, _ = env.reset(seed=[5, 5])
    for _ in range(60):
        assert np.array_equal(obs[0], obs[1])
        obs, reward, *_ = env.step(env.action_masks().argmax(axis=1))
        assert reward[0] == reward[1]


def test_an_illegal_action_ends_only_its_slot() -> None:
    for mode in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
        env = MatadorVectorEnv(3, preset="standard", illegal_reward=-7, autoreset_mode=mode)
        obs, infos = env.reset(seed=0)
        masks = env.action_masks()
        actions = masks.argmax(axis=1)
        actions[1] = int(np.flatnonzero(~masks[1])[0])
        before = obs[1].copy()
        obs, reward, terminated, truncated, infos = env.step(actions)
        assert terminated.tolist() == [False, True, False] and not truncated.any()
        assert reward[1] == -7
        last = infos if mode == AutoresetMode.NEXT_STEP else infos["final_info"]
        assert last["illegal_action"].tolist() == [0, 1, 0]
        assert not last["action_mask"][1].any()  # the episode is over
        if mode == AutoresetMode.NEXT_STEP:
            assert (obs[1] == before).all()  # the game as it was
            obs, reward, terminated, _, infos = env.step(np.full(3, 10**6))  # slot 1 ignores it
            assert reward[1] == 0 and not terminated[1] and infos["action_mask"][1].any()
            assert terminated[[0, 2]].all()  # the others' actions were illegal
        else:
            assert (infos["final_obs"][1] == before).all()
            assert infos["_final_obs"].tolist() == [False, True, False]
            assert infos["illegal_action"].tolist() == [0, 0, 0]  # the new episode's
            assert infos["action_mask"][1].any()


def test_gymnasium_vector_wrappers_read_the_same_step_resets() -> None:
    from gymnasium.wrappers.vector import NormalizeObservation, RecordEpisodeStatistics

    # NormalizeObservation takes only next-step auto-reset, the default.
    normalised = NormalizeObservation(gymnasium.make_vec(matador_env.GYM_ID, num_envs=2))
    normalised.reset(seed=0)
    normalised.step(normalised.unwrapped.action_masks().argmax(axis=1))
    env = RecordEpisodeStatistics(
        gymnasium.make_vec(matador_env.GYM_ID, num_envs=4, autoreset_mode=AutoresetMode.SAME_STEP)
    )
    _, infos = env.reset(seed=2)
    returns = np.zeros(4)
    seen = 0
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    for _ in range(100):
        _, reward, terminated, truncated, infos = env.step(infos["action_mask"].argmax(axis=1))
        returns += reward
        for b in np.flatnonzero(terminated | truncated):
            assert infos["episode"]["r"][b] == pytest.approx(returns[b])
            returns[b] = 0
            seen += 1
    assert seen > 10


def test_bad_arguments_name_what_is_allowed() -> None:
    class Agent:
        def act(self, view: Any, rng: Any) -> None:
            return None

    for opponents in ("greedy", Agent(), ["random"]):
        with pytest.raises(ValueError, match="vectorization_mode='sync'"):
            MatadorVectorEnv(2, opponents=opponents)
    with pytest.raises(UnsupportedRenderMode, match="vectorization_mode='sync'"):
        gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, render_mode="rgb_array")
    with pytest.raises(ValueError, match="no trained bot is shipped"):
        MatadorVectorEnv(2, opponents="trained", preset="standard", target_score=30)
    for num_envs in (0, 1.5, True):
        with pytest.raises(ValueError, match="num_envs"):
            MatadorVectorEnv(num_envs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="seat"):
        MatadorVectorEnv(2, seat=2)
    for mode in (AutoresetMode.DISABLED, "next_step"):
        with pytest.raises(ValueError, match="autoreset_mode=.*allowed: AutoresetMode.NEXT"):
            MatadorVectorEnv(2, autoreset_mode=mode)
    # The keywords that do not carry from one vectorization mode to the other say where
    # they go instead.
    with pytest.raises(ValueError, match="max_episode_steps=3: .* allowed: max_hands"):
        gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, max_episode_steps=3)
    with pytest.raises(ValueError, match=r"vector_kwargs=\{'autoreset_mode': ...\}"):
        gymnasium.make_vec(
            matador_env.GYM_ID,
            num_envs=2,
            vectorization_mode="sync",
            autoreset_mode=AutoresetMode.SAME_STEP,
        )
    sync = gymnasium.make_vec(
        matador_env.GYM_ID,
        num_envs=2,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": AutoresetMode.SAME_STEP},
        max_episode_steps=3,
    )
    assert sync.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    env = MatadorVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step([0, 0])
    with pytest.raises(ValueError, match="one per slot"):
        env.reset(seed=[1, 2, 3])
    env.reset(seed=0)
    before = env.action_masks().copy()
    for actions in ([0], [0.5, 1.0], [True, False], [[0, 0]]):
        with pytest.raises(ValueError, match="actions must"):
            env.step(actions)
    assert (env.action_masks() == before).all()  # nothing changed


def test_make_vec_without_numba_says_how_to_get_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['numba'] = None\n"
        "import gymnasium, matador_env\n"
        "sync = gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, vectorization_mode='sync')\n"
        "sync.reset(seed=0)\n"
        "try:\n"
        "    gymnasium.make_vec(matador_env.GYM_ID, num_envs=2)\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert (
        "'.[batch]' in the checkout" in done.stdout and "vectorization_mode='sync'" in done.stdout
    )


def test_arguments_are_checked_and_named() -> None:
    # The value given is named, not what it was turned into.
    for mode in ("same", 3):
        with pytest.raises(ValueError, match=f"autoreset_mode={mode!r} is not allowed"):
            MatadorVectorEnv(2, autoreset_mode=mode)  # type: ignore[arg-type]
    # numpy integers are integers; bools are not.
    env = gymnasium.make_vec(matador_env.GYM_ID, num_envs=np.int64(2), seat=np.int64(1))
    assert env.num_envs == 2 and type(env.num_envs) is int
    _, infos = env.reset(seed=np.int64(3))
    assert infos["seat"].tolist() == [1, 1]
    with pytest.raises(ValueError, match="got True"):
        MatadorVectorEnv(2, seat=True)  # type: ignore[arg-type]
    for name in ("illegal_reward", "match_bonus"):
        for value in (float("nan"), float("inf")):
            with pytest.raises(
                ValueError, match=f"{name}={value!r} is not allowed; allowed: a fin"
            ):
                gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, **{name: value})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="illegal_reward=None is not allowed"):
        MatadorVectorEnv(2, illegal_reward=None)  # type: ignore[arg-type]


def test_a_seed_list_takes_ints_and_nones_only() -> None:
    env = MatadorVectorEnv(2)
    obs, _ = env.reset(seed=[np.int64(1), 2])
    np.testing.assert_array_equal(obs, env.reset(seed=[1, 2])[0])
    for seed, index in (([1.5, 2], 0), ([1, "2"], 1), ([1, True], 1)):
        with pytest.raises(ValueError, match=rf"seed\[{index}\]=.* is not allowed"):
            env.reset(seed=seed)  # type: ignore[arg-type]


def test_opponents_that_fail_mid_step_leave_every_slot_as_it_was() -> None:
    class Opponents:
        fail = False

        def __call__(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
            if self.fail:
                raise RuntimeError("the opponents' network failed")
            return masks.argmax(axis=1)

    opponents = Opponents()
    env = MatadorVectorEnv(3, preset="standard", players=3, opponents=opponents)
    twin = MatadorVectorEnv(3, preset="standard", players=3, opponents=Opponents())
    env.reset(seed=4)
    twin.reset(seed=4)
    rng = np.random.default_rng(0)
    failed = 0
    for t in range(150):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        opponents.fail = t % 2 == 0
        try:
            env.step(actions)
        except RuntimeError:
            failed += 1
            np.testing.assert_array_equal(env.action_masks(), masks)
            opponents.fail = False
        else:
            twin.step(actions)
            continue
        a, b = env.step(actions), twin.step(actions)
        for got, want in zip(a[:4], b[:4], strict=True):
            np.testing.assert_array_equal(got, want)
        assert a[4].keys() == b[4].keys()
    assert failed > 50


def test_a_masked_reset_leaves_the_other_slots_opponents_as_they_were() -> None:
    # SyncVectorEnv passes a reset's seeds to the masked slots only: slot 1, left out,
    # plays on with its random opponents' stream as a twin never reset does.
    env, twin = (MatadorVectorEnv(2, preset="standard", players=3) for _ in range(2))
    env.reset(seed=3)
    twin.reset(seed=3)
    for t in range(60):
        if t == 5:
            env.reset(seed=[40, 41], options={"reset_mask": np.array([True, False])})
        got, want = env.action_masks(), twin.action_masks()
        a = env.step(got.argmax(axis=1))
        b = twin.step(want.argmax(axis=1))
        for x, y in zip(a[:4], b[:4], strict=True):
            np.testing.assert_array_equal(x[1], y[1])


def test_unseeded_envs_start_their_opponents_from_fresh_entropy() -> None:
    # Before a seeded reset each slot's random opponents draw from fresh entropy, as
    # the deals do: two envs do not share their opponents' streams.
    a, b = MatadorVectorEnv(2), MatadorVectorEnv(2)
    assert not np.isin(a.venv._rng, b.venv._rng).any()


@pytest.mark.parametrize("value", [True, 1, np.True_])
def test_mask_in_obs_is_refused_naming_where_it_goes(value: Any) -> None:
    with pytest.raises(ValueError, match=f"mask_in_obs={value!r}: the compiled vector env"):
        MatadorVectorEnv(2, mask_in_obs=value)
