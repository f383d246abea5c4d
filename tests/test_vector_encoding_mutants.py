"""Behaviours of the compiled vector env (matador_env.gym_vector) and of the tensor
contract (matador_env.encoding) that no other fast test pinned down: each test here
fails on a code change the rest of the suite let through. Vector env: the keywords it
refuses (every render mode, an out-of-range seat, max_episode_steps of any number) and
the ones it takes as the default (max_episode_steps=None, mask_in_obs=False), the
auto-reset mode as each env's own, bool action masks, per-slot streams and seeds before
the first reset, render.
Encoding: the target's cap, what the refusals of actions name, the text form of an
action, the state tensor's pieces "as in the observation", the signature's
observation size and split's shape check."""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import matador_env
from matador_env.encoding import ObservationTracker, encoding_for, state_tensor
from matador_env.engine import HandState, Move, Rules
from tests.test_encoding import CONFIGS, random_states

pytest.importorskip("numba")

from matador_env.gym_vector import MatadorVectorEnv  # noqa: E402
from matador_env.matador_v0 import UnsupportedRenderMode  # noqa: E402
from tests.test_gym_vector import assert_same, make_both  # noqa: E402

# -- the vector env: keywords refused and taken ------------------------------------------


@pytest.mark.parametrize("mode", ["human", "ansi", "rgb_array"])
def test_every_render_mode_is_refused_naming_the_sync_env(mode: str) -> None:
    # The compiled env draws nothing, so no mode is taken, a text one included.
    with pytest.raises(UnsupportedRenderMode, match=f"render_mode={mode!r}: .*'sync'"):
        gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, render_mode=mode)


@pytest.mark.parametrize("seat", [3, -1, 10])
def test_a_seat_out_of_range_is_refused_naming_the_seats_there_are(seat: int) -> None:
    # Three players: seats 0, 1 and 2, and the message says so.
    with pytest.raises(ValueError, match=f"a seat from 0 to 2, got {seat}"):
        MatadorVectorEnv(2, preset="standard", players=3, seat=seat)


@pytest.mark.parametrize("steps", [0, 5])
def test_max_episode_steps_of_any_number_is_refused_naming_max_hands(steps: int) -> None:
    # make_vec hands max_episode_steps on as given, 0 too: each is refused with the
    # pointer to max_hands and the sync env, not as an unknown rules field.
    with pytest.raises(ValueError, match=f"max_episode_steps={steps!r}: .*allowed: max_hands"):
        gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, max_episode_steps=steps)


def test_max_episode_steps_none_is_no_limit_as_in_the_sync_env() -> None:
    # The sync version takes None (the spec's own limit, none); it was refused here.
    envs = gymnasium.make_vec(matador_env.GYM_ID, num_envs=2, max_episode_steps=None)
    plain = MatadorVectorEnv(2)
    assert_same(envs.reset(seed=3), plain.reset(seed=3), "reset")
    actions = plain.action_masks().argmax(axis=1)
    assert_same(envs.step(actions), plain.step(actions), "step")


def test_mask_in_obs_false_is_taken_as_the_default() -> None:
    # The refusal of mask_in_obs=True says "allowed: False": False is the default env.
    plain = MatadorVectorEnv(2, preset="standard", opponents="trained")
    explicit = MatadorVectorEnv(2, preset="standard", opponents="trained", mask_in_obs=False)
    assert_same(explicit.reset(seed=4), plain.reset(seed=4), "reset")
    actions = plain.action_masks().argmax(axis=1)
    assert_same(explicit.step(actions), plain.step(actions), "step")


def test_the_autoreset_mode_is_each_envs_own() -> None:
    # A same-step env does not change the mode of the envs made after it (nor the class's).
    same = MatadorVectorEnv(2, autoreset_mode=AutoresetMode.SAME_STEP)
    default = MatadorVectorEnv(2)
    assert same.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    assert default.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    assert MatadorVectorEnv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP


# -- the vector env: masks, streams, render ----------------------------------------------


@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_action_masks_are_bool_and_the_infos_masks(mode: AutoresetMode) -> None:
    # action_masks() is (num_envs, num_actions) bool, so that ~mask is the illegal
    # actions; it is the infos' int8 mask, and the sync env's, while no episode ends.
    compiled, sync = make_both(3, mode, opponents="trained", preset="standard")
    _, infos = compiled.reset(seed=2)
    _, sync_infos = sync.reset(seed=2)
    masks = compiled.action_masks()
    assert masks.dtype == np.bool_ and masks.shape == (3, compiled.single_action_space.n)
    np.testing.assert_array_equal(masks, infos["action_mask"].astype(bool))
    np.testing.assert_array_equal(masks, sync_infos["action_mask"].astype(bool))
    illegal = np.array([np.flatnonzero(~m)[0] for m in masks])
    assert not masks[np.arange(3), illegal].any()


def test_unseeded_slots_have_their_own_opponent_streams() -> None:
    # Fresh entropy for each slot's opponents' stream, not one seed for all of them.
    env = MatadorVectorEnv(4)
    assert len(set(env.venv._rng.tolist())) == 4


def test_an_unseeded_env_has_a_seed_and_stream_per_slot_that_stay_as_sync_does() -> None:
    # Before any seeded reset each slot's np_random_seed is the int its stream was
    # started from, the same at every look, and an unseeded reset draws its deals from
    # that stream (it moves on, keeping its seed): as SyncVectorEnv's single envs do.
    compiled, sync = make_both(2, preset="standard")
    for env in (compiled, sync):
        seeds = env.np_random_seed
        assert len(seeds) == 2 and all(isinstance(s, int) for s in seeds)
        assert env.np_random_seed == seeds
        streams = env.np_random
        assert all(a is b for a, b in zip(env.np_random, streams, strict=True))
        before = [g.bit_generator.state for g in streams]
        env.reset()
        assert env.np_random_seed == seeds
        assert [g.bit_generator.state for g in env.np_random] != before


def test_render_draws_nothing_and_close_closes() -> None:
    env = MatadorVectorEnv(2)
    env.reset(seed=0)
    assert env.render() is None  # type: ignore[func-returns-value]  # (not raising)
    env.close()
    assert env.closed
    env.close()  # a second close is harmless


# -- encoding: the target, the refusals, the text form -----------------------------------


@pytest.mark.parametrize("target", [1000, 1500, 10_000])
def test_the_target_piece_is_capped_at_1000(target: int) -> None:
    # min(target_score, 1000) / 1000: past 1000 the piece stays 1, inside the unit box.
    rules = Rules(target_score=target)
    enc = encoding_for(rules)
    s = HandState.deal(rules, 1)
    obs = enc.observation(s.view(0))
    assert enc.split(obs)["target"].tolist() == [1.0]
    assert obs.max() <= 1.0
    tracker = ObservationTracker(enc)
    tracker.start(s)
    np.testing.assert_array_equal(tracker.observation(0), obs)
    assert enc.split(state_tensor(s), state=True)["target"].tolist() == [1.0]


@pytest.mark.parametrize(
    "preset, move, says",
    [
        ("standard", "1-2@2>2", r"open ends 0-1, orientations \['high', 'low'\]"),
        ("leiden", "1-2@4>2", "open ends 0-3"),
        ("standard", "3-4@0x", r"double-6 set"),
    ],
)
def test_a_move_with_no_action_is_refused_naming_what_there_is(
    preset: str, move: str, says: str
) -> None:
    with pytest.raises(ValueError, match=f"move '{move}' has no action .*{says}"):
        encoding_for(preset).encode_action(move)


@pytest.mark.parametrize("preset", ["standard", "leiden", "double_twelve"])
def test_an_action_out_of_range_is_refused_naming_the_range(preset: str) -> None:
    enc = encoding_for(preset)
    last = enc.num_actions - 1
    for action in (-1, enc.num_actions):
        with pytest.raises(ValueError, match=f"action {action} is out of range 0-{last}$"):
            enc.decode_action(action)


def test_describe_action_gives_the_moves_text_form() -> None:
    # The text form (e.g. 2-5@1>5), which Move.parse and encode_action read back.
    enc = encoding_for("standard")
    assert enc.describe_action(28 + 49 + 48) == "6-6@1>6"
    assert enc.describe_action(enc.draw_action) == "draw"
    for action in range(enc.num_actions):
        text = enc.describe_action(action)
        assert Move.parse(text) == enc.decode_action(action)
        assert enc.encode_action(text) == action


# -- encoding: the state tensor against the observation ----------------------------------


@pytest.mark.parametrize(
    "name", ["standard", "leiden", "pagat-teams", "double_nine-p6", "branching-first_double"]
)
def test_the_state_tensor_holds_the_observations_public_pieces(name: str) -> None:
    # state_pieces: played, ends, boneyard, passes and target "as in the observation";
    # cannot_answer per seat as in the observation (absolute seats there, relative
    # here); leader, to_move and scores in absolute order; hands and boneyard tiles.
    rules = CONFIGS[name]
    enc = encoding_for(rules)
    n, sides = rules.players, rules.sides
    checked = 0
    for k, s in enumerate(random_states(rules, hands=3, seed=7)):
        if k % 3:
            continue
        scores = tuple(10 * (side + 1) + k for side in range(sides))
        st = enc.split(state_tensor(s, scores=scores), state=True)
        for seat in range(n):
            ob = enc.split(enc.observation(s.view(seat, scores=scores)))
            for piece in ("played", "ends", "boneyard", "passes", "target"):
                np.testing.assert_array_equal(st[piece], ob[piece], err_msg=piece)
            others = [(seat + j) % n for j in range(1, n)]
            np.testing.assert_array_equal(st["cannot_answer"][others], ob["cannot_answer"])
            np.testing.assert_array_equal(np.roll(st["leader"], -seat), ob["leader"])
            np.testing.assert_array_equal(np.roll(st["to_move"], -seat), ob["to_move"])
            own = rules.side_of(seat)
            np.testing.assert_array_equal(np.roll(st["scores"], -own), ob["scores"])
            np.testing.assert_array_equal(st["hands"][seat], ob["hand"])
        boneyard = np.zeros(enc.num_tiles, np.float32)
        boneyard[[t.index for t in s.boneyard]] = 1.0
        np.testing.assert_array_equal(st["boneyard_tiles"], boneyard)
        checked += 1
    assert checked > 10


# -- encoding: the signature and split ---------------------------------------------------


def test_the_signature_holds_the_observation_size_and_checks_it() -> None:
    enc = encoding_for("kardinal")
    saved = enc.signature()
    assert saved["obs_size"] == enc.obs_size
    with pytest.raises(ValueError, match=rf"obs_size: saved {enc.obs_size + 1}, now"):
        enc.check_signature({**saved, "obs_size": enc.obs_size + 1})


@pytest.mark.parametrize("state", [False, True])
def test_split_refuses_the_right_count_of_numbers_in_the_wrong_shape(state: bool) -> None:
    # One row of the right length is still not a vector: a batch must be split row by row.
    enc = encoding_for("standard")
    size = enc.state_size if state else enc.obs_size
    vector: Any = np.zeros((1, size), np.float32)
    with pytest.raises(ValueError, match=rf"got shape \(1, {size}\)"):
        enc.split(vector, state=state)
