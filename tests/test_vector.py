"""The vector environment: every slot is the AEC environment, number for number;
learner mode, auto-reset, seeds, bad input, and MaskablePPO training on it."""

from __future__ import annotations

import random
import re
from typing import Any

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

pytest.importorskip("numba")

from matador_env import MatadorSingleEnv  # noqa: E402
from matador_env.batch import BatchError  # noqa: E402
from matador_env.configs import configuration  # noqa: E402
from matador_env.encoding import ENCODING_VERSION  # noqa: E402
from matador_env.engine import Rules  # noqa: E402
from matador_env.matador_v0 import INFO_KEYS, raw_env  # noqa: E402
from matador_env.vector import VectorEnv, sb3_vec_env  # noqa: E402
from tests.episodes import learner_trace  # noqa: E402
from tests.notes import record_notes  # noqa: E402
from tests.test_gym_vector import assert_same, make_both  # noqa: E402

CASES = [
    ("standard", "hand", {}),
    ("leiden", "hand", {}),
    ("kardinal", "hand", {"players": 3}),
    ("pagat", "hand", {"players": 4, "teams": True}),
    ("polish", "hand", {"matador_as_regular": True}),
    ("double_nine", "hand", {"players": 4, "spinner": "first_double"}),
    ("standard", "match", {"target_score": 30}),
    ("leiden", "match", {"target_score": 30}),
    ("kardinal", "match", {"target_score": 20}),
]


@pytest.mark.parametrize("preset, episode, overrides", CASES)
def test_every_slot_is_the_aec_env(preset: str, episode: str, overrides: dict[str, Any]) -> None:
    B = 4
    seeds = [11, 12, 13, 14]
    for reward in ("score", "normalised") if episode == "hand" else ("win", "normalised"):
        venv = VectorEnv(B, preset=preset, episode=episode, reward=reward, **overrides)
        assert venv.encoding_version == ENCODING_VERSION
        envs = [raw_env(preset=preset, episode=episode, reward=reward, **overrides) for _ in seeds]
        episodes = [0] * B
        for b, e in enumerate(envs):
            e.reset(seed=seeds[b])
        obs, masks, seats = venv.reset(seeds)
        rng = random.Random(preset)
        finished = 0
        for _ in range(400):
            acts = np.zeros(B, np.int64)
            for b, e in enumerate(envs):
                agent = e.agent_selection
                assert seats[b] == e.possible_agents.index(agent)
                seen = e.observe(agent)
                np.testing.assert_array_equal(obs[b], seen["observation"], err_msg=f"slot {b}")
                np.testing.assert_array_equal(masks[b], seen["action_mask"])
                acts[b] = rng.choice(np.flatnonzero(seen["action_mask"]).tolist())
            seats_before = seats
            obs, masks, seats, rewards, term, trunc, infos = venv.step(acts)
            for b, e in enumerate(envs):
                e.step(int(acts[b]))
                expected = [e.rewards[a] for a in e.possible_agents]
                np.testing.assert_allclose(rewards[b], expected, rtol=1e-6, err_msg=f"slot {b}")
                done = any(e.terminations.values()) or any(e.truncations.values())
                assert bool(term[b] or trunc[b]) == done
                if done:
                    assert infos["_final_observation"][b]
                    mover = e.possible_agents[seats_before[b]]
                    np.testing.assert_array_equal(
                        infos["final_observation"][b], e.observe(mover)["observation"]
                    )
                    last = [e.infos[mover][key] for key in INFO_KEYS]
                    assert infos["final_results"][b].tolist() == last, f"slot {b}"
                    finished += 1
                    episodes[b] += 1
                    e.reset(seed=seeds[b] + episodes[b] * B)
            results = venv.results(seats)
            for b, e in enumerate(envs):
                now = [e.infos[e.agent_selection][key] for key in INFO_KEYS]
                assert [int(results[key][b]) for key in INFO_KEYS] == now, f"slot {b}"
        assert finished >= B


def test_learner_mode_returns_only_the_learners_turns() -> None:
    venv = VectorEnv(6, preset="standard", players=3, mode="learner", learner=1, seed=5)
    obs, masks, seats = venv.reset()
    rng = np.random.default_rng(0)
    ended = 0
    total = 0.0
    for _ in range(200):
        assert (seats == 1).all()
        assert (masks.sum(axis=1) > 0).all()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, masks, seats, rewards, term, trunc, infos = venv.step(acts)
        ended += int(term.sum())
        total += float(np.abs(rewards).sum())
        assert not trunc.any()
        assert (rewards[~term] == 0).all()
    assert ended > 20 and total > 0


def test_batched_policy_opponents_and_random_learner_seats() -> None:
    calls: list[int] = []

    def lowest_legal(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        calls.append(len(obs))
        assert obs.dtype == np.float32 and masks.dtype == np.int8
        return masks.argmax(axis=1)

    venv = VectorEnv(5, preset="leiden", mode="learner", opponents=lowest_legal, seed=9)
    obs, masks, seats = venv.reset()
    seen_seats = set()
    for _ in range(100):
        assert (seats == venv.learner).all()
        seen_seats |= set(seats.tolist())
        obs, masks, seats, *_ = venv.step(masks.argmax(axis=1))
    assert calls and seen_seats == {0, 1}


@pytest.mark.parametrize("config", ["leiden", "pagat_teams"])
def test_a_named_bot_plays_the_vector_envs_opponents_as_in_the_single_env(config: str) -> None:
    # The vector env runs the network on its batch; the single env's bot encodes each
    # seat's view and plays in numpy: the same moves, so the same hands.
    rules = configuration(config).rules()
    venv = VectorEnv(1, rules=rules, mode="learner", learner=1, opponents="trained")
    single = MatadorSingleEnv(rules=rules, opponents="trained", seat=1)
    lowest = VectorEnv(
        1, rules=rules, mode="learner", learner=1, opponents=lambda o, m: m.argmax(axis=1)
    )
    for seed in range(4):
        assert learner_trace(venv, seed) == learner_trace(single, seed)
    assert any(learner_trace(venv, seed) != learner_trace(lowest, seed) for seed in range(4))


def test_casual_opponents_sample_legal_moves_from_the_seeded_stream() -> None:
    def run(seed: int) -> list[bytes]:
        venv = VectorEnv(8, preset="standard", mode="learner", opponents="casual", seed=seed)
        obs, masks, _ = venv.reset(range(8))
        out = []
        for _ in range(60):  # an illegal opponent move would raise in the engine
            obs, masks, *_ = venv.step(masks.argmax(axis=1))
            out.append(obs.tobytes())
        return out

    assert run(3) == run(3)
    assert run(3) != run(4)  # the same deals, other draws of the casual bot


def test_seeds_replay_and_differ() -> None:
    a = VectorEnv(3, preset="standard", mode="self_play")
    b = VectorEnv(3, preset="standard", mode="self_play")
    oa, *_ = a.reset([1, 2, 3])
    ob, *_ = b.reset([1, 2, 3])
    np.testing.assert_array_equal(oa, ob)
    assert not np.array_equal(oa[0], oa[1])
    with pytest.raises(BatchError, match="seed of slot 1"):
        a.reset([1, 2**70, 3])


def test_a_reset_without_seeds_goes_on_to_each_slots_next_episode() -> None:
    # Slot i's e-th episode is seeded seeds[i] + e * 4. Before, every unseeded reset
    # dealt the seeded reset's games again: each learn() or evaluation of SB3 on the
    # same env replayed the same deals.
    env = VectorEnv(4, preset="standard", mode="learner", opponents="random", seed=1)
    env.reset()
    assert list(env.eng.hand_seeds) == [1, 2, 3, 4]
    env.reset()
    assert list(env.eng.hand_seeds) == [5, 6, 7, 8]
    env.reset(50)
    assert list(env.eng.hand_seeds) == [50, 51, 52, 53]
    env.reset(50)  # seeds given again: the same games again
    assert list(env.eng.hand_seeds) == [50, 51, 52, 53]
    env.reset(mask=np.array([False, True, False, False]))  # only slot 1 goes on
    assert list(env.eng.hand_seeds) == [50, 55, 52, 53]
    env.reset([9, 9, 9, 9], mask=np.array([True, False, False, False]))
    assert list(env.eng.hand_seeds) == [9, 55, 52, 53]
    # A slot whose episode ended went on to its next by itself; a reset then goes on
    # from there, one further.
    masks = env.reset(mask=np.array([True, False, False, False]))[1]  # episodes 1 1 0 0
    while env._episodes.sum() == 2:
        masks = env.step([int(np.flatnonzero(m)[0]) for m in masks])[1]
    before = env._episodes.copy()
    env.reset()
    assert (env._episodes == before + 1).all()
    seeds = [9, 51, 52, 53]
    assert list(env.eng.hand_seeds) == [seeds[b] + int(env._episodes[b]) * 4 for b in range(4)]


def test_the_sb3_view_seeds_only_its_next_reset() -> None:
    pytest.importorskip("stable_baselines3")
    sb3 = sb3_vec_env(VectorEnv(3, preset="standard", mode="learner", seed=None))
    sb3.seed(7)
    sb3.reset()
    assert list(sb3.venv.eng.hand_seeds) == [7, 8, 9]
    sb3.reset()
    assert list(sb3.venv.eng.hand_seeds) == [10, 11, 12]
    sb3.seed(7)
    sb3.reset()
    assert list(sb3.venv.eng.hand_seeds) == [7, 8, 9]


def test_opponent_seeds_are_one_per_slot() -> None:
    env = VectorEnv(3, preset="standard", mode="learner", opponents="random", seed=4)
    before = env._rng.copy()
    assert len(set(before.tolist())) == 3 and before.all()  # each slot its own state
    env.seed_opponents([None, 9, None])  # None: that slot's stream goes on
    assert env._rng[0] == before[0] and env._rng[2] == before[2]
    assert env._rng[1] != before[1]
    env.seed_opponents(4)
    np.testing.assert_array_equal(env._rng, before)
    with pytest.raises(BatchError, match=r"opponent seeds: expected 3 \(one per slot\), got 2"):
        env.seed_opponents([1, 2])
    with pytest.raises(BatchError, match="seed of slot 2: '3' is not allowed"):
        env.seed_opponents([None, 2, "3"])  # type: ignore[list-item]
    with pytest.raises(BatchError, match=r"one uint64 xorshift state per slot, shape \(3,\)"):
        env.eng.play_random_until(np.zeros(3, np.int64), np.ones(1, np.uint64))


def test_bad_actions_change_nothing() -> None:
    venv = VectorEnv(3, preset="standard")
    obs, masks, _ = venv.reset([4, 5, 6])
    bad = masks.argmax(axis=1)
    bad[2] = int(np.flatnonzero(masks[2] == 0)[0])
    with pytest.raises(BatchError, match=r"slot 2: action \d+ is .*; allowed: "):
        venv.step(bad)
    with pytest.raises(BatchError, match=r"shape \(3,\)"):
        venv.step(bad[:2])
    with pytest.raises(BatchError, match="integers"):
        venv.step(bad.astype(np.float64))
    again, masks2, _ = venv._observe_all()
    np.testing.assert_array_equal(again, obs)
    np.testing.assert_array_equal(masks2, masks)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="mode='solo' is not allowed"):
        VectorEnv(2, preset="standard", mode="solo")
    with pytest.raises(ValueError, match="episode='set' is not allowed; allowed: "):
        VectorEnv(2, preset="standard", episode="set")
    with pytest.raises(ValueError, match="learner=2 is not allowed; allowed: None or 0 to 1"):
        VectorEnv(2, preset="standard", mode="learner", learner=2)
    with pytest.raises(ValueError, match="opponents='expert': unknown bot 'expert'"):
        VectorEnv(2, preset="standard", mode="learner", opponents="expert")
    with pytest.raises(ValueError, match="plays from a seat's view") as caught:
        VectorEnv(2, preset="standard", mode="learner", opponents="greedy")
    assert "allowed: 'random', 'trained', 'casual'" in str(caught.value)
    with pytest.raises(ValueError, match="opponents='trained': .*pagat_teams"):
        VectorEnv(2, preset="polish", players=3, mode="learner", opponents="trained")
    with pytest.raises(ValueError, match="with opponent_slots=True is not allowed"):
        VectorEnv(2, preset="standard", mode="learner", opponents="trained", opponent_slots=True)
    with pytest.raises(ValueError, match="opponents=42 is not allowed"):
        VectorEnv(2, preset="standard", mode="learner", opponents=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs mode='learner'"):
        sb3_vec_env(VectorEnv(2, preset="standard"))
    with pytest.raises(ValueError, match="illegal_reward=-1 with mode='self_play'"):
        VectorEnv(2, preset="standard", illegal_reward=-1)


def test_maskable_ppo_trains_on_the_vector_env() -> None:
    torch = pytest.importorskip("torch")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    torch.set_num_threads(1)
    venv = sb3_vec_env(VectorEnv(8, preset="standard", mode="learner", reward="win", seed=3))
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0, device="cpu"
    )
    model.learn(512)
    assert model.num_timesteps >= 512
    obs = venv.reset()
    masks = venv.action_masks()
    actions, _ = model.predict(obs, action_masks=masks, deterministic=True)
    assert all(masks[b, a] for b, a in enumerate(actions))


def test_the_sb3_view_reports_ends_as_stable_baselines3_reads_them() -> None:
    # SB3's VecEnv contract: done is terminated or truncated, the ended episode's last
    # observation is infos[b]["terminal_observation"] (obs holds the next episode's
    # first), and "TimeLimit.truncated" is True for a truncation only, so that PPO
    # bootstraps the value there. Step for step against the VectorEnv it wraps.
    pytest.importorskip("stable_baselines3")
    kwargs: dict[str, Any] = dict(preset="standard", mode="learner", episode="match",
                                  max_hands=2, target_score=40, seed=6)  # fmt: skip
    sb3 = sb3_vec_env(VectorEnv(4, **kwargs))
    plain = VectorEnv(4, **kwargs)
    np.testing.assert_array_equal(sb3.reset(), plain.reset()[0])
    rng = np.random.default_rng(6)
    terminations = truncations = 0
    for _ in range(150):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in plain.action_masks()])
        obs, rewards, dones, infos = sb3.step(actions)
        want_obs, _, _, want_rewards, term, trunc, want_infos = plain.step(actions)
        np.testing.assert_array_equal(obs, want_obs)
        np.testing.assert_array_equal(rewards, want_rewards)
        np.testing.assert_array_equal(dones, term | trunc)
        for b in range(4):
            if not dones[b]:
                assert "terminal_observation" not in infos[b]
                continue
            final = want_infos["final_observation"][b]
            np.testing.assert_array_equal(infos[b]["terminal_observation"], final)
            assert infos[b]["TimeLimit.truncated"] == bool(trunc[b] and not term[b])
        terminations += int(term.sum())
        truncations += int(trunc.sum())
    assert terminations > 0 and truncations > 0  # both kinds of end did occur


def _sb3_view(size: int = 2, **kwargs: Any) -> Any:
    pytest.importorskip("stable_baselines3")
    return sb3_vec_env(VectorEnv(size, preset="standard", mode="learner", seed=5, **kwargs))


def test_the_sb3_view_refuses_bad_actions_at_step_wait_and_changes_nothing() -> None:
    sb3 = _sb3_view()
    sb3.reset()
    before = sb3.venv.get_state()
    masks = sb3.action_masks()
    legal = [int(np.flatnonzero(m)[0]) for m in masks]
    illegal = int(np.flatnonzero(~masks[1])[0])
    for actions, message in (
        (
            [[legal[0]], [legal[1], 1]],
            r"its items differ in shape\); allowed: one integer per slot",
        ),
        (np.array(legal, float), "actions must be integers, got dtype float64"),
        # numpy makes [n, True] an integer array, in which the bool played action 1.
        ([legal[0], True], r"actions must be integers, got True \(a bool\) for slot 1"),
        ((legal[0], np.bool_(False)), r"got np.False_ \(a bool\) for slot 1|got False \(a bool"),
        ([legal[0]], r"actions must have shape \(2,\) \(one per slot\), got shape \(1,\)"),
        ([legal[0], illegal], rf"slot 1: action {illegal} is .* is not legal; allowed: \d+"),
        (None, r"actions must have shape \(2,\) \(one per slot\), got shape \(\)"),
    ):
        sb3.step_async(actions)  # SB3's step_async only stores them
        with pytest.raises(BatchError, match=message):
            sb3.step_wait()
        assert sb3.venv.get_state() == before
        # Refused actions are dropped, not played again by the next step_wait.
        with pytest.raises(RuntimeError, match=r"step_wait\(\) needs the actions of a step_async"):
            sb3.step_wait()
    obs, rewards, dones, infos = sb3.step(np.array(legal))
    assert obs.shape == (2, sb3.venv.obs_size) and len(infos) == 2


@pytest.mark.parametrize("seed", [-1, 1.5, np.float64(2.0), True, "7", [1, 2], 2**64 - 1])
def test_the_sb3_view_refuses_a_bad_seed_and_keeps_the_seeds_it_had(seed: Any) -> None:
    sb3 = _sb3_view()
    assert sb3.seed(40) == [40, 41]
    with pytest.raises(BatchError, match=r"seed=.* is not allowed; allowed: an integer from 0 to"):
        sb3.seed(seed)
    assert sb3._seeds == [40, 41]
    # The seeds kept are the next reset's: the same games as a fresh view seeded so.
    fresh = _sb3_view()
    fresh.seed(40)
    np.testing.assert_array_equal(sb3.reset(), fresh.reset())


def test_the_sb3_view_reads_its_seed_as_the_vector_env_does() -> None:
    sb3 = _sb3_view(3)
    assert sb3.seed(np.uint64(2**64 - 3)) == [2**64 - 3, 2**64 - 2, 2**64 - 1]
    plain = VectorEnv(3, preset="standard", mode="learner", seed=5)
    np.testing.assert_array_equal(sb3.reset(), plain.reset(2**64 - 3)[0])
    drawn = sb3.seed(None)  # SB3's own random seed, then one a slot
    assert len(drawn) == 3 and drawn[1] == drawn[0] + 1


def test_a_refused_reset_of_the_sb3_view_keeps_its_seeds() -> None:
    sb3 = _sb3_view()
    sb3.seed(7)
    sb3._seeds = [7, "x"]  # as set_attr could leave them: the vector env refuses it
    with pytest.raises(BatchError, match=r"seeds\[1\]='x'"):
        sb3.reset()
    assert sb3._seeds == [7, "x"]


@pytest.mark.parametrize(
    "options", [{"reset_mask": np.array([True, False])}, [{}, {"x": 1}], [{}], "x", 3]
)
def test_the_sb3_view_refuses_reset_options_it_cannot_pass(options: Any) -> None:
    sb3 = _sb3_view()
    with pytest.raises(BatchError, match="the vector env takes no reset options"):
        sb3.set_options(options)


@pytest.mark.parametrize("options", [None, {}, [{}, {}], ({}, {})])
def test_the_sb3_view_takes_empty_reset_options(options: Any) -> None:
    sb3 = _sb3_view()
    sb3.set_options(options)
    assert sb3._options == [{}, {}]


@pytest.mark.parametrize(
    ("indices", "rows"),
    [(None, [0, 1, 2]), (1, [1]), (np.int64(2), [2]), (-1, [2]), ([0, 2], [0, 2]),
     (np.array([2, 0]), [2, 0]), (range(2), [0, 1]), ((), [])],
)  # fmt: skip
def test_the_sb3_view_reads_indices_as_slots(indices: Any, rows: list[int]) -> None:
    sb3 = _sb3_view(3)
    sb3.reset()
    masks = sb3.action_masks()
    got = sb3.env_method("action_masks", indices=indices)
    assert len(got) == len(rows)
    for mask, row in zip(got, rows, strict=True):
        np.testing.assert_array_equal(mask, masks[row])
    assert sb3.get_attr("num_envs", indices) == [3] * len(rows)


@pytest.mark.parametrize(
    ("indices", "error"),
    [(3, IndexError), (-4, IndexError), ([0, 5], IndexError), (True, TypeError),
     ("0", TypeError), ([0.0], TypeError), (np.zeros((1, 1), int), TypeError), ({0}, TypeError)],
)  # fmt: skip
def test_the_sb3_view_refuses_indices_of_no_slot(indices: Any, error: type[Exception]) -> None:
    sb3 = _sb3_view(3)
    sb3.reset()
    for call in (
        lambda: sb3.env_method("action_masks", indices=indices),
        lambda: sb3.get_attr("num_envs", indices),
        lambda: sb3.set_attr("render_mode", None, indices),
        lambda: sb3.env_is_wrapped(object, indices),
    ):
        with pytest.raises(
            error, match="allowed: None, or a slot or a sequence of slots from -3 to 2"
        ):
            call()


def test_skipped_slots_stay_as_they_are() -> None:
    venv = VectorEnv(3, preset="standard", mode="learner", seed=4, illegal_reward=-1)
    obs, masks, _ = venv.reset()
    skip = np.array([False, True, False])
    # Slot 1's action is out of range: skipped, it is neither played nor illegal.
    actions = np.where(skip, 10**6, masks.argmax(axis=1))
    after, masks_after, _, rewards, terminated, _, infos = venv.step(actions, skip=skip)
    np.testing.assert_array_equal(after[1], obs[1])
    np.testing.assert_array_equal(masks_after[1], masks[1])
    assert rewards[1] == 0 and not terminated[1] and "illegal_action" not in infos
    assert not np.array_equal(after[0], obs[0])  # the others moved
    with pytest.raises(BatchError, match="skip must be 3 bools"):
        venv.step(masks_after.argmax(axis=1), skip=[0, 1, 0])  # type: ignore[arg-type]


@pytest.mark.parametrize("preset, episode, overrides", [CASES[1], CASES[2], CASES[7]])
def test_a_vector_env_goes_on_from_its_saved_state(
    preset: str, episode: str, overrides: dict[str, Any]
) -> None:
    """get_state() as JSON, set_state() on another env of the same arguments: the two
    then play the same games (a resumed training run relies on it)."""
    import json

    def make(seed: int) -> VectorEnv:
        return VectorEnv(5, preset=preset, mode="learner", episode=episode, seed=seed, **overrides)

    saved, other = make(3), make(70)
    saved.reset()
    other.reset()
    rng = np.random.default_rng(0)

    def legal_actions() -> np.ndarray:
        return np.array([rng.choice(np.flatnonzero(m)) for m in saved.action_masks()])

    for _ in range(25):
        saved.step(legal_actions())
    obs, masks, seats = other.set_state(json.loads(json.dumps(saved.get_state())))
    expected = saved._observe_all()
    for got, want in zip((obs, masks, seats), expected, strict=True):
        np.testing.assert_array_equal(got, want)
    for _ in range(150):
        actions = legal_actions()
        a, b = saved.step(actions), other.step(actions)
        for got, want in zip(b[:6], a[:6], strict=True):
            np.testing.assert_array_equal(got, want)
        assert a[6].keys() == b[6].keys()
        for key in a[6]:
            np.testing.assert_array_equal(b[6][key], a[6][key])


def test_a_saved_state_that_does_not_fit_is_refused_and_changes_nothing() -> None:
    env = VectorEnv(3, preset="standard", mode="learner", seed=1)
    with pytest.raises(BatchError, match=r"get_state\(\) before reset\(\)"):
        env.get_state()
    before, *_ = env.reset()
    bigger = VectorEnv(4, preset="standard", mode="learner")
    bigger.reset()
    wrong_size = bigger.get_state()
    with pytest.raises(
        BatchError, match="saved with num_envs=4, but this environment has num_envs=3"
    ):
        env.set_state(wrong_size)
    # A state written before the arguments were recorded names none: its shapes are checked.
    del wrong_size["arguments"]
    for key in ("rules", "size", "encoding_version"):
        del wrong_size["engine"][key]
    with pytest.raises(BatchError, match=r"'episodes' has shape \(4,\); allowed: \(3,\)"):
        env.set_state(wrong_size)
    with pytest.raises(BatchError, match=r"state: expected a dict from get_state\(\), got list"):
        env.set_state([])  # type: ignore[arg-type]
    fits = env.get_state()
    fits["engine"]["st"] = "damaged"
    with pytest.raises(BatchError, match="'st' is not an array of int32"):
        env.set_state(fits)
    fits = env.get_state()
    del fits["engine"]["hand_seeds"]
    with pytest.raises(BatchError, match="'hand_seeds' is not a list of 3 ints"):
        env.set_state(fits)
    again, *_ = env._observe_all()
    np.testing.assert_array_equal(again, before)


def _with_a_hand_played(state: dict[str, Any]) -> None:
    state["hands"][0] = 1  # between two steps a hand episode has played none


def _written_before_the_arguments(state: dict[str, Any]) -> None:
    del state["arguments"]  # its values are checked alone


@pytest.mark.parametrize(
    "source, change, why",
    [
        ({"opponents": "trained"}, None, "saved with opponents='trained', but this environment "
         "has opponents='random'"),
        ({"illegal_reward": -1}, None, "saved with illegal_reward=-1.0, but"),
        ({"learner": 0}, _written_before_the_arguments, "slot 0: its learner is not 1"),
        ({}, _with_a_hand_played, r"slot 0: its hand count is not 0 to 0 \(episode='hand'\)"),
    ],
)  # fmt: skip
def test_a_state_this_environment_would_not_hold_is_refused_naming_why(
    source: dict[str, Any], change: Any, why: str
) -> None:
    kwargs: dict[str, Any] = dict(preset="standard", mode="learner", learner=1, seed=1)
    env, other = VectorEnv(3, **kwargs), VectorEnv(3, **{**kwargs, **source})
    env.reset()
    other.reset()
    before = env.get_state()
    state = other.get_state()
    if change is not None:
        change(state)
    with pytest.raises(BatchError, match=why):
        env.set_state(state)
    assert env.get_state() == before


class _FailingOpponents:
    """Plays the lowest legal action, or fails as told: ``"raise"``, ``"shape"`` (one
    action too many), ``"column"`` (one action per row, as a column), ``"illegal"``
    (an illegal action in the first row), ``"leave"`` (-1, the batch engine's "leave
    the slot", there), ``"huge"`` (a ``uint64`` 2**64 - 1 there), ``"floats"`` (the
    legal actions as floats) or ``"ragged"`` (lists of unequal lengths). Asked more
    than 50 times for one of the last four, it raises ``AssertionError``: the env went
    on asking."""

    def __init__(self) -> None:
        self.fail: str | None = None
        self.asked = 0

    def __call__(self, obs: np.ndarray, masks: np.ndarray) -> Any:
        if self.fail in ("leave", "huge", "floats", "ragged"):
            self.asked += 1
            assert self.asked <= 50, f"asked {self.asked} times for one step"
        if self.fail == "raise":
            raise RuntimeError("the opponents' network failed")
        actions = masks.argmax(axis=1)
        if self.fail == "leave":
            actions[0] = -1
        if self.fail == "huge":
            return np.where(np.arange(len(actions)) == 0, 2**64 - 1, actions).astype(np.uint64)
        if self.fail == "floats":
            return actions.astype(np.float64)
        if self.fail == "ragged":
            return [[1]] * max(1, len(actions) - 1) + [[1, 2]]
        if self.fail == "shape":
            return np.append(actions, 0)
        if self.fail == "column":
            return actions[:, None]
        if self.fail == "illegal":
            actions[0] = int(np.flatnonzero(masks[0] == 0)[0])
        return actions


@pytest.mark.parametrize("learner", [0, None])
def test_opponents_that_fail_mid_step_leave_every_slot_as_it_was(learner: int | None) -> None:
    # The learner's actions are applied before the opponents are asked: a failure then
    # puts them back, so the slot's learner is still to move with its own mask (not the
    # opponent's seat with the opponent's mask), and the env plays on as a twin that
    # never failed.
    opponents = _FailingOpponents()
    env = VectorEnv(4, preset="standard", players=3, mode="learner", learner=learner, seed=7,
                    opponents=opponents, episode="match", target_score=30)  # fmt: skip
    twin = VectorEnv(4, preset="standard", players=3, mode="learner", learner=learner, seed=7,
                     opponents=_FailingOpponents(), episode="match", target_score=30)  # fmt: skip
    obs, masks, seats = env.reset()
    twin.reset()
    rng = np.random.default_rng(0)
    failed = 0
    for t in range(120):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        saved = env.get_state()
        opponents.fail = ("raise", "shape", "column", "illegal")[t % 4]
        try:
            env.step(actions)
        except (RuntimeError, BatchError):
            failed += 1
            assert env.get_state() == saved
            assert (env.eng.to_move == env.learner).all()
            np.testing.assert_array_equal(env.action_masks(), masks)
            again = env._observe_all()
            for got, want in zip(again, (obs, masks, seats), strict=True):
                np.testing.assert_array_equal(got, want)
        else:  # no opponent was to move: a step like any other
            twin.step(actions)
            obs, masks, seats = env._observe_all()
            continue
        opponents.fail = None
        a, b = env.step(actions), twin.step(actions)
        for got, want in zip(a[:6], b[:6], strict=True):
            np.testing.assert_array_equal(got, want)
        obs, masks, seats = a[:3]
    assert failed > 100


@pytest.mark.parametrize(
    ("fail", "why"),
    [
        ("leave", "an opponent chose an illegal action: slot 0: action -1 is out of range"),
        ("huge", "an opponent chose an illegal action: slot 0: action 18446744073709551615"),
        ("floats", r"opponents returned shape \(3,\) of float64; allowed: \(3,\) integers"),
        ("ragged", r"opponents' actions=\[\[1\], \[1\], \[1, 2\]\] is not allowed"),
    ],
)
def test_opponents_answers_that_are_no_actions_are_refused(fail: str, why: str) -> None:
    # -1 was taken as the engine's "leave the slot", so the env asked the same opponent
    # again and again, for ever; a uint64 past 2**63 wrapped round to it; floats were
    # cut to integers; a ragged answer raised numpy's ValueError, naming nothing.
    opponents = _FailingOpponents()
    env = VectorEnv(3, preset="standard", mode="learner", learner=0, seed=5, opponents=opponents)
    _, masks, _ = env.reset()
    saved = env.get_state()
    opponents.fail = fail
    with pytest.raises(BatchError, match=why):
        env.step(masks.argmax(axis=1))
    assert env.get_state() == saved and opponents.asked == 1


def test_ragged_actions_are_refused_naming_the_argument() -> None:
    env = VectorEnv(2, preset="standard", seed=3)
    env.reset()
    saved = env.get_state()
    ragged: Any = [[1], [1, 2]]
    with pytest.raises(BatchError, match=r"actions=\[\[1\], \[1, 2\]\] is not allowed"):
        env.step(ragged)
    with pytest.raises(BatchError, match=r"actions=.* allowed: one integer per slot, shape \(2,\)"):
        env.eng.step(ragged)
    assert env.get_state() == saved


def test_opponents_that_fail_in_reset_leave_the_env_as_it_was() -> None:
    opponents = _FailingOpponents()
    env = VectorEnv(3, preset="standard", mode="learner", learner=1, opponents=opponents)
    opponents.fail = "raise"
    with pytest.raises(RuntimeError):
        env.reset()
    with pytest.raises(BatchError, match=r"step\(\) before reset\(\)"):
        env.step([0, 0, 0])  # still never reset
    opponents.fail = None
    obs, masks, seats = env.reset()
    saved = env.get_state()
    opponents.fail = "illegal"
    with pytest.raises(BatchError, match="an opponent chose an illegal action"):
        env.reset([10, 11, 12])
    assert env.get_state() == saved
    np.testing.assert_array_equal(env.action_masks(), masks)


def test_seeds_are_ints_or_none() -> None:
    # None: fresh entropy, as a single env reset with seed=None.
    a, b = (VectorEnv(2, preset="standard", seed=None) for _ in range(2))
    assert a._base_seeds != b._base_seeds and a._base_seeds[1] == a._base_seeds[0] + 1
    assert a.reset()[0].shape == (2, a.obs_size)
    numpy_seed = VectorEnv(2, preset="standard", seed=np.int64(4))
    np.testing.assert_array_equal(
        numpy_seed.reset()[0], VectorEnv(2, preset="standard", seed=4).reset()[0]
    )
    for seed in (1.5, "3", True, [1, 2], -1, 2**64 - 1):
        with pytest.raises(
            ValueError, match=re.escape(f"seed={seed!r} is not allowed; allowed: an integer")
        ):
            VectorEnv(2, preset="standard", seed=seed)  # type: ignore[arg-type]
    # The top of the range deals, and its later episodes wrap round (modulo 2**64).
    top = VectorEnv(2, preset="standard", seed=2**64 - 2)
    assert top._episode_starts(np.arange(2))[0] == [2**64 - 2, 2**64 - 1]
    top._episodes[:] = 1
    assert top._episode_starts(np.arange(2))[0] == [0, 1]
    # reset(s) with an int seeds slot i with s + i, as MatadorVectorEnv.reset(seed=s).
    env = VectorEnv(2, preset="standard")
    for seeds in (5, np.int64(5)):
        np.testing.assert_array_equal(env.reset(seeds)[0], env.reset([5, 6])[0])
        assert env._base_seeds == [5, 6]
    for seeds in (1.5, "ab", True):
        with pytest.raises(
            BatchError, match=re.escape(f"seeds={seeds!r} is not allowed; allowed: None, an int")
        ):
            env.reset(seeds)  # type: ignore[arg-type]
    with pytest.raises(BatchError, match="seed of slot 0: 1.5 is not allowed"):
        env.reset([1.5, 2])  # type: ignore[list-item]
    with pytest.raises(BatchError, match="seed of slot 1: -3 is not allowed"):
        env.reset([4, -3])
    assert env._base_seeds == [5, 6]


@pytest.mark.parametrize("seeds", ["12", b"12", bytearray(b"12"), memoryview(b"12")])
def test_text_and_bytes_are_no_seeds_of_the_slots(seeds: Any) -> None:
    # A bytearray or memoryview iterates as integers: it was taken as the seeds 49, 50.
    env = VectorEnv(2, preset="standard", seed=3)
    env.reset()
    saved = env.get_state()
    with pytest.raises(BatchError, match="seeds=.* is not allowed; allowed: None, an integer"):
        env.reset(seeds)
    assert env.get_state() == saved


def test_rewards_must_be_finite_numbers() -> None:
    for name in ("illegal_reward", "match_bonus"):
        for value in (float("nan"), float("inf"), -np.inf, "1", True):
            with pytest.raises(
                ValueError, match=f"{name}={value!r} is not allowed; allowed: a finite"
            ):
                VectorEnv(2, preset="standard", mode="learner", **{name: value})  # type: ignore[arg-type]
    env = VectorEnv(
        2, preset="standard", mode="learner", illegal_reward=np.float32(-2), match_bonus=np.int64(3)
    )
    assert env.illegal_reward == -2.0 and env.match_bonus == 3.0


def test_arguments_of_learner_mode_are_refused_in_self_play_mode() -> None:
    def lowest(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masks.argmax(axis=1)

    for name, value in (
        ("learner", 1),
        ("opponents", lowest),
        ("opponents", "trained"),
        ("opponent_slots", True),
    ):
        with pytest.raises(
            ValueError,
            match=f"{name}=.* with mode='self_play' is not allowed: only mode='learner' uses",
        ):
            VectorEnv(2, preset="standard", mode="self_play", **{name: value})  # type: ignore[arg-type]
    VectorEnv(2, preset="standard", mode="self_play", opponents="random", opponent_slots=False)
    with pytest.raises(
        ValueError, match="opponent_slots=True with opponents='random' is not allowed"
    ):
        VectorEnv(2, preset="standard", mode="learner", opponent_slots=True)
    for not_a_bool in (1, 0, np.array([True])):
        with pytest.raises(ValueError, match="opponent_slots=.* is not allowed; allowed: a bool"):
            VectorEnv(2, preset="standard", mode="learner", opponent_slots=not_a_bool)  # type: ignore[arg-type]


def test_integer_arguments_take_numpy_integers_not_bools() -> None:
    env = VectorEnv(np.int64(2), preset="standard", mode="learner", learner=np.int64(1),
                    max_hands=np.int64(5), episode="match")  # fmt: skip
    assert env.fixed_learner == 1 and type(env.fixed_learner) is int
    assert env.max_hands == 5 and type(env.max_hands) is int
    assert (env.reset()[2] == 1).all()
    for name, value in (("learner", True), ("max_hands", True), ("learner", 1.0), ("max_hands", 0)):
        with pytest.raises(ValueError, match=f"{name}={value!r} is not allowed"):
            VectorEnv(2, preset="standard", mode="learner", **{name: value})  # type: ignore[arg-type]


def test_a_masked_reset_keeps_the_last_observation_of_a_slot_that_just_ended() -> None:
    # Next-step auto-reset: a slot whose episode ended on the last step and that a
    # reset's reset_mask leaves out goes on "as the last step showed it", its final
    # observation, as SyncVectorEnv returns it, not its next episode's first one.
    compiled, sync = make_both(3, AutoresetMode.NEXT_STEP, opponents="trained")
    assert_same(compiled.reset(seed=5), sync.reset(seed=5), "reset")
    rng = np.random.default_rng(5)
    kept = 0
    for t in range(200):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in compiled.action_masks()])
        result = compiled.step(actions)
        assert_same(result, sync.step(actions), f"step {t}")
        ended = result[2] | result[3]
        if ended.any() and not ended.all():
            mask = ~ended  # reset the others, keep the slots that just ended
            obs, infos = compiled.reset(options={"reset_mask": mask})
            assert_same((obs, infos), sync.reset(options={"reset_mask": mask.copy()}), f"{t}")
            np.testing.assert_array_equal(obs[ended], result[0][ended])
            kept += 1
    assert kept >= 3  # the case this test is about did occur


def test_casual_opponents_slip_at_the_bots_share() -> None:
    # The vector env's casual opponents turn one uniform draw per row into a move: over
    # evenly spaced draws the network's most likely legal action takes 1 - slip of
    # [0, 1) and every legal action slip / k more, an illegal one none.
    from matador_env.bot import PolicyBot, load_bot

    venv = VectorEnv(3, preset="standard", mode="learner", opponents="casual", seed=2)
    obs, masks, _ = venv.reset()
    bot = load_bot("casual", rules=venv.rules)
    opponents = venv.opponents  # the batch policy the env plays its opponents with
    assert isinstance(bot, PolicyBot) and bot.slip > 0 and bot.temperature == 0
    assert callable(opponents)
    for b in range(3):
        legal = masks[b] != 0
        assert legal.sum() > 1
        logits = bot.policy.logits(obs[b : b + 1])[0].astype(np.float64)
        best = np.where(legal, logits, -np.inf).argmax()
        want = (1 - bot.slip) * (
            np.arange(venv.num_actions) == best
        ) + bot.slip * legal / legal.sum()
        np.testing.assert_allclose(_shares(opponents, obs[b], masks[b]), want, atol=2 / 1000)


def test_bot_opponents_sample_their_temperature_beside_their_slips() -> None:
    # A bot with both (one built by hand) spends the draw on each in turn: the share
    # 1 - slip follows softmax(logits / temperature), the share slip is uniform.
    from matador_env.policy import default_policy
    from matador_env.vector import _BotOpponents

    venv = VectorEnv(2, preset="standard", seed=5)
    obs, masks, _ = venv.reset()
    policy = default_policy()
    for temperature, slip in ((2.0, 0.0), (2.0, 0.3), (0.0, 1.0), (2.0, 1.0)):
        opponents = _BotOpponents(policy, temperature, slip)
        for b in range(2):
            legal = masks[b] != 0
            logits = np.where(legal, policy.logits(obs[b : b + 1])[0].astype(np.float64), -np.inf)
            if temperature:
                weights = np.exp((logits - logits.max()) / temperature)
                sampled = weights / weights.sum()
            else:
                sampled = (np.arange(venv.num_actions) == logits.argmax()).astype(np.float64)
            want = (1 - slip) * sampled + slip * legal / legal.sum()
            got = _shares(opponents, obs[b], masks[b])
            np.testing.assert_allclose(got, want, atol=2 / 1000, err_msg=f"{temperature, slip}")


def _shares(opponents: Any, obs: np.ndarray, mask: np.ndarray, draws: int = 1000) -> np.ndarray:
    """Each action's share of ``draws`` evenly spaced uniform draws in one position."""
    uniforms = (np.arange(draws) + 0.5) / draws
    chosen = opponents(
        np.repeat(obs[None], draws, axis=0), np.repeat(mask[None], draws, axis=0), uniforms
    )
    return np.bincount(chosen, minlength=mask.shape[0]) / draws


def test_a_masked_reset_leaves_the_other_slots_later_episodes_as_they_were() -> None:
    # Slot 1, left out of the reset, deals its later episodes from its own seed and
    # episode count (seeds[1] + e * num_envs) as a twin that was never reset does.
    env, twin = (VectorEnv(2, preset="standard", seed=4) for _ in range(2))
    env.reset()
    twin.reset()
    rng = np.random.default_rng(0)
    ended = [0, 0]  # slot 1's episodes that ended before the masked reset, and after
    for t in range(120):
        if t == 60:
            env.reset([50, 51], mask=np.array([True, False]))
        got, want = env.action_masks(), twin.action_masks()
        np.testing.assert_array_equal(got[1], want[1])
        slot1 = rng.choice(np.flatnonzero(got[1]))
        a = env.step([got[0].argmax(), slot1])
        b = twin.step([want[0].argmax(), slot1])
        for x, y in zip(a[:6], b[:6], strict=True):
            np.testing.assert_array_equal(x[1], y[1])
        ended[t >= 60] += int(a[4][1])
    assert min(ended) > 0  # episodes of slot 1 ended on both sides of the masked reset


def test_a_random_learner_seat_takes_every_seat_and_replays() -> None:
    def seats(seed: int) -> list[int]:
        venv = VectorEnv(4, preset="standard", players=3, mode="learner", seed=seed)
        return [s for e in range(4) for s in venv.reset(seed + 4 * e)[2].tolist()]

    assert seats(3) == seats(3)
    assert set(seats(3)) == {0, 1, 2}


@pytest.mark.parametrize(
    ("starts", "why"),
    [
        (
            ([11, 12], [5, 5]),
            r"the learner seats \[5, 5\]; allowed: 2 integers from 0 to 1",
        ),  # an IndexError in the batch
        (([11, 12], [0.7, 1.2]), r"the learner seats \[0.7, 1.2\]"),  # seats 0 and 1
        (([11, 12], [0]), r"the learner seats \[0\]"),  # both slots' seat
        (([11, 12], ["1", "0"]), r"the learner seats \['1', '0'\]"),  # seats 1 and 0
        (([11, 12], [-1, 0]), r"the learner seats \[-1, 0\]"),
        (([11, 12], None), "the learner seats None"),
        (([11], [0, 1]), r"\(\[11\], \[0, 1\]\); allowed: a pair \(seeds, learner seats\)"),
        ([11, 12], r"\[11, 12\]; allowed: a pair"),
    ],
)
def test_episode_starts_are_checked_before_they_deal(starts: Any, why: str) -> None:
    answer: list[Any] = [([21, 22], [1, 0])]
    env = VectorEnv(2, preset="standard", mode="learner", episode_starts=lambda slots: answer[0])
    env.reset()
    saved = env.get_state()
    answer[0] = starts
    with pytest.raises(BatchError, match=f"^episode_starts returned {why}"):
        env.reset()
    assert env.get_state() == saved
    answer[0] = (np.array([31, 32]), np.array([0, 1]))  # arrays are one per slot too
    assert env.reset()[2].tolist() == [0, 1]


def test_episode_starts_that_fail_mid_step_leave_every_slot_as_it_was() -> None:
    # A slot's episode ends in the step and the next one's start raises: the step is
    # taken back, and the env then plays on as a twin whose starts never failed.
    def starts(fail: list[bool]) -> Any:
        def start(slots: np.ndarray) -> tuple[list[int], list[int]]:
            if fail[0]:
                raise RuntimeError("no seed for the next episode")
            return [100 + int(b) for b in slots], [0] * len(slots)

        return start

    fail = [False]
    env = VectorEnv(3, preset="standard", episode_starts=starts(fail))
    twin = VectorEnv(3, preset="standard", episode_starts=starts([False]))
    env.reset()
    twin.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        masks = env.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        saved = env.get_state()
        fail[0] = True
        try:
            env.step(actions)
        except RuntimeError:
            break
        twin.step(actions)  # no episode ended: nothing to start
    else:
        pytest.fail("no episode ended")
    assert env.get_state() == saved
    np.testing.assert_array_equal(env.action_masks(), masks)
    fail[0] = False
    for got, want in zip(env.step(actions)[:6], twin.step(actions)[:6], strict=True):
        np.testing.assert_array_equal(got, want)


def test_a_slot_whose_deals_all_leave_the_learner_no_decision_raises_at_the_1000th() -> None:
    # One-tile hands, dealt alike every time: the leader goes out at once, so a learner
    # in the other seat never moves. Its slot raises at the 1000th such deal in a row;
    # a learner that leads takes the first.
    def deals(learner: int) -> int:
        dealt = []

        def same_deal(slots: np.ndarray) -> tuple[list[int], list[int]]:
            dealt.extend(slots.tolist())
            return [7] * len(slots), [learner] * len(slots)

        env = VectorEnv(1, rules=Rules(hand_size=1), mode="learner", episode_starts=same_deal)
        try:
            env.reset()
        except BatchError as exc:
            assert "slot 0: 1000 deals in a row had a hand end before the learner" in str(exc)
        return len(dealt)

    assert sorted([deals(0), deals(1)]) == [1, 1000]


def test_opponents_by_slot_learn_each_rows_slot_and_episode() -> None:
    # With opponent_slots the callable is given each row's slot and that slot's episode
    # number. Slot 0's opponents play their lowest legal action here, the others' their
    # highest: slot 0 plays the games of an env whose opponents all play the lowest,
    # and each slot's episode numbers count its ended episodes.
    seen: dict[int, set[int]] = {b: set() for b in range(3)}

    def by_slot(
        obs: np.ndarray, masks: np.ndarray, slots: np.ndarray, episodes: np.ndarray
    ) -> np.ndarray:
        for slot, episode in zip(slots.tolist(), episodes.tolist(), strict=True):
            seen[slot].add(episode)
        highest = masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)
        return np.where(slots == 0, masks.argmax(axis=1), highest)

    kwargs: dict[str, Any] = dict(preset="standard", players=3, mode="learner", learner=0, seed=8)
    env = VectorEnv(3, opponents=by_slot, opponent_slots=True, **kwargs)
    lowest = VectorEnv(3, opponents=lambda o, m: m.argmax(axis=1), **kwargs)
    (obs, masks, _), (want, want_masks, _) = env.reset(), lowest.reset()
    ended = np.zeros(3, np.int64)
    for _ in range(100):
        np.testing.assert_array_equal(obs[0], want[0])
        obs, masks, _, rewards, term, trunc, _ = env.step(masks.argmax(axis=1))
        want, want_masks, _, want_rewards, *_ = lowest.step(want_masks.argmax(axis=1))
        assert rewards[0] == want_rewards[0]
        ended += term | trunc
    assert ended.min() >= 2
    for b in range(3):
        assert set(range(ended[b])) <= seen[b] <= set(range(ended[b] + 1)), b


def test_what_reset_and_step_return_is_the_callers_to_keep() -> None:
    # Copies: later steps leave the observations, masks and seats returned alone.
    venv = VectorEnv(2, preset="standard", seed=1)
    first = venv.reset()
    kept = [a.copy() for a in first]
    for _ in range(3):
        venv.step(venv.action_masks().argmax(axis=1))
    for got, want in zip(first, kept, strict=True):
        np.testing.assert_array_equal(got, want)


def test_the_first_reset_and_step_of_a_process_run_under_the_compile_note(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # With numba's cache cold the first reset compiles for about half a minute (the
    # first step a little more), which the note says after two seconds. Here: the
    # first reset and the first step go under it, a refused call does not use it up,
    # and no call after pays for a timer.
    import matador_env.vector as vector

    said = record_notes(monkeypatch, vector)
    monkeypatch.setattr(vector, "_UNTIMED", {"reset", "step"})  # as in a fresh process
    venv = VectorEnv(2, preset="leiden", mode="learner", seed=3)
    with pytest.raises(BatchError, match="before reset"):
        venv.step([0, 0])
    with pytest.raises(BatchError, match="seeds"):
        venv.reset([1])
    assert said == []
    _, masks, _ = venv.reset()
    assert said == [(vector.SLOW_FIRST_USE_NOTE, 2.0), "done"]
    first = [int(np.flatnonzero(m)[0]) for m in masks]
    with pytest.raises(BatchError):
        venv.step([-5, -5])  # refused before the engine runs: the note is not spent
    venv.step(first)
    assert said == [(vector.SLOW_FIRST_USE_NOTE, 2.0), "done"] * 2
    # A second env of the same process loads nothing new.
    other = VectorEnv(2, preset="standard", seed=4)
    _, masks, _ = other.reset()
    other.step([int(np.flatnonzero(m)[0]) for m in masks])
    venv.reset()
    assert said == [(vector.SLOW_FIRST_USE_NOTE, 2.0), "done"] * 2
    assert "compiling the batch engine's kernels" in vector.SLOW_FIRST_USE_NOTE
