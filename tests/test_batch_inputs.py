"""Bad input to the batch engine, its playouts and the vector environments: each is
refused with a ValueError (the batch engine's BatchError) naming what was wrong and
what is allowed, before anything changes; saved states are checked for range,
consistency and the arguments they belong to."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any, cast

import gymnasium
import numpy as np
import pytest

pytest.importorskip("numba")

import matador_env  # noqa: E402
import matador_env.vector as vector_module  # noqa: E402
from agents.knowledge import Knowledge  # noqa: E402
from agents.search import policy_weights  # noqa: E402
from matador_env.batch import (  # noqa: E402
    MAX_SIZE,
    BatchEngine,
    BatchError,
    WorldPlayouts,
    deal_hidden_hands,
    random_hands,
)
from matador_env.batch import _kernels as K  # noqa: E402
from matador_env.engine import HandState, Rules  # noqa: E402
from matador_env.gym_vector import MatadorVectorEnv  # noqa: E402
from matador_env.vector import VectorEnv  # noqa: E402
from tests.test_gym_vector import assert_same, make_both  # noqa: E402

STANDARD = Rules.preset("standard")


def _pick(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A random legal action per row, -1 for a row with none."""
    return np.array([rng.choice(np.flatnonzero(m)) if m.any() else -1 for m in masks])


def _gym_state(env: MatadorVectorEnv) -> tuple[Any, ...]:
    """Everything a reset of the compiled gym env may change."""
    streams = [None if s is None else s.bit_generator.state for s in env._streams]
    return (
        env.venv.get_state() if env.venv._started else None,
        streams,
        list(env._first_seeds),
        list(env._stream_seeds),
        env._resetting.tolist(),
    )


# -- 1. MatadorVectorEnv.reset's seeds -------------------------------------------------------------


@pytest.mark.parametrize(
    "seed, why",
    [
        (2**64, "is not allowed; allowed: None, an integer from 0 to 18446744073709551614"),
        (2**64 - 1, "slot i is seeded seed \\+ i"),  # slot 1 would be 2**64
        (-1, "is not allowed; allowed: None, an integer"),
        ([5, 2**64], r"seed\[1\]=18446744073709551616 is the seed of slot 1"),
        ([0, -1], r"seed\[1\]=-1 is the seed of slot 1: -1 is not allowed"),
        (1.5, "seed=1.5 is not allowed"),
    ],
)
def test_gym_reset_refuses_every_seed_outside_the_engines_range(seed: Any, why: str) -> None:
    env = MatadorVectorEnv(2, preset="standard")
    env.reset(seed=0)
    before = _gym_state(env)
    with pytest.raises(ValueError, match=why):
        env.reset(seed=seed)
    assert _gym_state(env) == before
    for _ in range(60):  # and it plays on (it used to fail a later step, half done)
        env.step(env.action_masks().argmax(axis=1))


# -- 2. tampered engine and vector states ----------------------------------------------------------


def _tamper_engine(case: str, state: dict[str, Any]) -> None:
    st = state["st"][0]
    if case == "to_move":
        st[K.TO_MOVE] = 100
    elif case == "term":
        st[K.TERM], st[K.OVER] = 50, 1
    elif case == "nends":
        st[K.NENDS] = 50  # a bus error in the kernels, once
    elif case == "pos":
        st[K.POS] = 10_000
    elif case == "loc_float":
        state["loc"][0][0] = 0.7  # was cut to 0: a seat
    elif case == "loc_range":
        state["loc"][0][0] = 100
    elif case == "loc_wraps":
        state["loc"] = np.array(state["loc"], np.int64) + np.where(
            np.arange(len(state["loc"][0])) == 0, 256, 0
        )  # 256 more wraps round to the same int8
    elif case == "stock_repeat":
        state["stock"][0][1] = state["stock"][0][0]
    elif case == "stock_range":
        state["stock"][0][0] = 30_000
    elif case == "hsize":
        state["hsize"][0][0] += 1
    elif case == "ends":
        state["ends"][0][0] = [99, 99, 99]
        st[K.NENDS] = 1
    elif case == "cannot":
        state["cannot"][0][0][0] = 7
    elif case == "seed_range":
        state["hand_seeds"][0] = 2**64
    elif case == "seed_negative":
        state["match_seeds"][1] = -5
    elif case == "in_match_ints":
        state["in_match"] = [0] * len(state["in_match"])
    else:
        raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    ["to_move", "term", "nends", "pos", "loc_float", "loc_range", "loc_wraps", "stock_repeat",
     "stock_range", "hsize", "ends", "cannot", "seed_range", "seed_negative", "in_match_ints"],
)  # fmt: skip
def test_a_tampered_engine_state_is_refused_and_changes_nothing(case: str) -> None:
    eng = BatchEngine(STANDARD, 2)
    eng.deal([1, 2])
    eng.step(eng.legal_masks().argmax(axis=1))
    before = eng.get_state()
    state = json.loads(json.dumps(before))
    _tamper_engine(case, state)
    with pytest.raises(BatchError, match="state: "):
        eng.set_state(state)
    assert eng.get_state() == before


def test_every_state_that_play_reaches_is_taken_back() -> None:
    # The checks refuse only what no game holds: hands, matches (over too) and an
    # untouched slot, under rules with spinners, crosses, branches and teams.
    rng = np.random.default_rng(0)
    for preset in ("standard", "kardinal", "leiden", "pagat", "double_nine"):
        rules = Rules.preset(preset)
        eng = BatchEngine(rules, 5)
        eng.new_matches([1, 2], slots=[0, 1])
        eng.deal([3, 4], slots=[2, 3])  # slot 4 is never dealt
        for t in range(120):
            eng.step(_pick(rng, eng.legal_masks()))
            eng.next_hands()
            if t % 10 == 0:
                BatchEngine(rules, 5).set_state(json.loads(json.dumps(eng.get_state())))


def _tamper_vector(case: str, state: dict[str, Any]) -> None:
    if case == "learner":
        state["learner"][0] = 7
    elif case == "learner_negative":
        state["learner"][0] = -1
    elif case == "learner_not_to_move":
        state["learner"][0] = 1 - state["learner"][0]
    elif case == "rng_zero":
        state["rng"][0] = 0
    elif case == "rng_negative":
        state["rng"][0] = -3
    elif case == "hands":
        state["hands"][0] = -5
    elif case == "last_hand":
        state["last_hand"][0] = [99, 99, 99, 99]
    elif case == "episodes":
        state["episodes"][0] = -(10**18)
    elif case == "episodes_at_the_top":
        state["episodes"][0] = 2**63 - 1  # the next episode would wrap it round
    elif case == "base_seed":
        state["base_seeds"][0] = -5
    elif case == "base_seed_bool":
        state["base_seeds"][0] = True
    elif case == "match_seed":
        state["engine"]["match_seeds"][0] = 2**70
    elif case == "hand_over":
        state["engine"]["st"][0][K.OVER] = 1
    else:
        raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    ["learner", "learner_negative", "learner_not_to_move", "rng_zero", "rng_negative", "hands",
     "last_hand", "episodes", "episodes_at_the_top", "base_seed", "base_seed_bool",
     "match_seed", "hand_over"],
)  # fmt: skip
def test_a_tampered_vector_state_is_refused_and_changes_nothing(case: str) -> None:
    env = VectorEnv(2, preset="standard", mode="learner", episode="match", seed=3)
    env.reset()
    for _ in range(5):
        env.step(env.action_masks().argmax(axis=1))
    before = env.get_state()
    masks = env.action_masks()
    state = json.loads(json.dumps(before))
    _tamper_vector(case, state)
    with pytest.raises(BatchError, match="state: "):
        env.set_state(state)
    assert env.get_state() == before
    np.testing.assert_array_equal(env.action_masks(), masks)


# -- 3. a state of other arguments -----------------------------------------------------------------


@pytest.mark.parametrize(
    "saved, loaded, why",
    [
        ({"mode": "self_play"}, {"mode": "learner"}, "saved with mode='self_play', but this"),
        ({"mode": "learner", "learner": 0}, {"mode": "learner"}, "saved with learner=0, but"),
        ({"episode": "hand"}, {"episode": "match"}, "saved with episode='hand', but"),
        ({"reward": "win"}, {}, "saved with reward='win', but this environment has reward='sc"),
        ({"target_score": 100, "episode": "match", "match_bonus": 5},
         {"target_score": 30, "episode": "match", "match_bonus": 5},
         "saved under other rules \\(target_score: saved 100, this engine 30\\)"),
        ({"preset": "pagat"}, {}, r"saved under other rules \(hand_size: saved 7, this engine"),
        ({"num_envs": 3}, {}, "saved with num_envs=3, but this environment has num_envs=2"),
        ({"max_hands": 5, "episode": "match"}, {"episode": "match"}, "saved with max_hands=5"),
    ],
)  # fmt: skip
def test_a_state_of_other_arguments_is_refused_naming_both_values(
    saved: dict[str, Any], loaded: dict[str, Any], why: str
) -> None:
    def make(kwargs: dict[str, Any]) -> VectorEnv:
        args = {"num_envs": 2, "preset": "standard", "seed": 1, **kwargs}
        return VectorEnv(args.pop("num_envs"), **args)

    source, target = make(saved), make(loaded)
    source.reset()
    target.reset()
    before = target.get_state()
    with pytest.raises(BatchError, match=why):
        target.set_state(json.loads(json.dumps(source.get_state())))
    assert target.get_state() == before


def test_an_engine_state_names_its_rules_size_and_encoding() -> None:
    pagat = BatchEngine(Rules.preset("pagat"), 1)
    pagat.deal([5])
    eng = BatchEngine(STANDARD, 1)
    with pytest.raises(
        BatchError, match=r"other rules \(hand_size: saved 7, this engine 'by_players'\)"
    ):
        eng.set_state(pagat.get_state())
    bigger = BatchEngine(STANDARD, 2)
    with pytest.raises(BatchError, match="saved with size=2, but this engine has size=1"):
        eng.set_state(bigger.get_state())
    state = BatchEngine(STANDARD, 1).get_state()
    state["encoding_version"] = 0
    with pytest.raises(BatchError, match="saved with encoding_version=0, but"):
        eng.set_state(state)
    del state["encoding_version"]
    with pytest.raises(BatchError, match="'encoding_version' is missing"):
        eng.set_state(state)


def test_a_state_saved_before_the_arguments_were_recorded_still_loads() -> None:
    # What training's checkpoints held until now: no "arguments", no engine origin.
    env = VectorEnv(3, preset="standard", mode="learner", seed=4)
    env.reset()
    for _ in range(4):
        env.step(env.action_masks().argmax(axis=1))
    state = env.get_state()
    del state["arguments"]
    for key in ("rules", "size", "encoding_version"):
        del state["engine"][key]
    other = VectorEnv(3, preset="standard", mode="learner", seed=9)
    obs, masks, seats = other.set_state(json.loads(json.dumps(state)))
    np.testing.assert_array_equal(obs, env._observe_all()[0])
    assert other.get_state() == env.get_state()


# -- 4. and 5. negative and unsigned actions -------------------------------------------------------


@pytest.mark.parametrize("mode", ["self_play", "learner"])
def test_a_negative_action_on_a_slot_that_must_move_is_refused(mode: str) -> None:
    env = VectorEnv(2, preset="standard", mode=mode, seed=0)
    obs, masks, _ = env.reset()
    before = env.get_state()
    for actions in (np.array([-1, -1]), np.array([2**64 - 1, masks[1].argmax()], np.uint64)):
        with pytest.raises(BatchError, match="slot 0: action (-1|18446744073709551615) is out"):
            env.step(actions)
        assert env.get_state() == before
    # A skipped slot is left as it is, whatever its action (-1 included).
    env.step(np.array([-1, masks[1].argmax()]), skip=np.array([True, False]))


def test_with_illegal_reward_any_integer_out_of_range_is_an_illegal_action() -> None:
    env = VectorEnv(2, preset="standard", mode="learner", illegal_reward=-3.0, seed=0)
    _, masks, _ = env.reset()
    for actions in (np.array([-1, -1]), np.array([2**64 - 1, 2**63], np.uint64)):
        *_, rewards, terminated, _, infos = env.step(actions)
        assert rewards.tolist() == [-3.0, -3.0] and terminated.all()
        assert infos["illegal_action"].all()


def test_action_array_names_an_unsigned_action_it_cannot_hold() -> None:
    eng = BatchEngine(STANDARD, 2)
    eng.deal([1, 2])
    masks = eng.legal_masks()
    before = eng.get_state()
    wrapped = masks.argmax(axis=1).astype(np.uint64) + np.uint64(2**63)
    with pytest.raises(BatchError, match=r"slot 0: action 9223372036854775\d\d\d is out of range"):
        eng.step(wrapped)
    with pytest.raises(BatchError, match="slot 1: action 18446744073709551615 is out of range"):
        eng.action_array(np.array([0, 2**64 - 1], np.uint64))
    assert eng.get_state() == before
    assert eng.action_array(np.array([3, 255], np.uint8)).tolist() == [3, 255]


# -- 6. play_random_until's seats ------------------------------------------------------------------


@pytest.mark.parametrize(
    "seats, why",
    [
        (np.zeros(1, np.int64), r"seats has shape \(1,\)"),
        (np.full(4, 9), "seats: slot 0: 9 is not a seat; allowed: 0 to 1"),
        (np.array([0, 1, -1, 0]), "seats: slot 2: -1 is not a seat"),
        (np.full(4, 0.5), "dtype float64"),
        (np.zeros(4, np.bool_), "dtype bool"),
        (np.zeros((4, 4), np.int64), r"shape \(4, 4\)"),
    ],
)
def test_play_random_until_checks_its_seats(seats: np.ndarray, why: str) -> None:
    eng = BatchEngine(STANDARD, 4)
    eng.deal(range(4))
    before = eng.get_state()
    rng = np.arange(1, 5, dtype=np.uint64)
    with pytest.raises(BatchError, match=why):
        eng.play_random_until(seats, rng)
    with pytest.raises(BatchError, match="slot 2's state is 0"):
        eng.play_random_until(np.zeros(4, np.int64), np.array([1, 2, 0, 4], np.uint64))
    assert eng.get_state() == before and rng.tolist() == [1, 2, 3, 4]


# -- 7. WorldPlayouts.run --------------------------------------------------------------------------


def _playouts(players: int = 2) -> tuple[WorldPlayouts, list[Any], list[int], Any]:
    rules = Rules.preset("standard", players=players)
    state = HandState.deal(rules, 3)
    view = state.view(state.to_move)
    runner = WorldPlayouts(view, policy_weights())
    worlds = [Knowledge(view).sample_masks(random.Random(s)) for s in range(3)]
    legal = [runner.enc.index[m] for m in view.legal_moves]
    return runner, worlds, legal, view


def _other(view: Any) -> int:
    return (view.seat + 1) % view.rules.players


_RUN_CASES: dict[str, tuple[Callable[..., Any], str]] = {
    "illegal": (
        lambda r, w, legal, v: r.run(w, [min(set(range(r.enc.num_actions)) - set(legal))]),
        r"actions\[0\]=\d+ is not a legal action of the view; allowed: ",
    ),
    "out_of_range": (lambda r, w, legal, v: r.run(w, [10**6]), r"actions\[0\]=1000000 is not"),
    "negative": (lambda r, w, legal, v: r.run(w, [legal[0], -5]), r"actions\[1\]=-5 is not"),
    "no_actions": (lambda r, w, legal, v: r.run(w, []), "actions=\\[\\] is not allowed"),
    "float_actions": (lambda r, w, legal, v: r.run(w, [1.0]), "actions=\\[1.0\\] is not"),
    "repeats_0": (lambda r, w, legal, v: r.run(w, legal, repeats=0), "repeats=0 is not"),
    "repeats_neg": (lambda r, w, legal, v: r.run(w, legal, repeats=-2), "repeats=-2 is not"),
    "repeats_bool": (lambda r, w, legal, v: r.run(w, legal, repeats=True), "repeats=True is"),
    "no_worlds": (lambda r, w, legal, v: r.run([], legal), "worlds: none given"),
    "seed_big": (lambda r, w, legal, v: r.run(w, legal, rng_seed=2**64), "rng_seed=1844"),
    "seed_neg": (lambda r, w, legal, v: r.run(w, legal, rng_seed=-1), "rng_seed=-1 is not"),
    "tile_twice": (
        lambda r, w, legal, v: r.run(
            [
                (
                    [h | (w[0][0][v.seat] if s == _other(v) else 0) for s, h in enumerate(w[0][0])],
                    w[0][1],
                )
            ],
            legal,
        ),  # fmt: skip
        "world 0: tile .* is in two places",
    ),
    "own_hand": (
        lambda r, w, legal, v: r.run(
            [([h ^ (1 if s == v.seat else 0) for s, h in enumerate(w[0][0])], w[0][1])], legal
        ),
        "world 0: seat \\d's hand is not the view's own hand",
    ),
    "bad_boneyard": (
        lambda r, w, legal, v: r.run([(w[0][0], [999] * len(w[0][1]))], legal),
        "world 0: boneyard entry 999 is no tile index",
    ),
    "negative_boneyard": (
        lambda r, w, legal, v: r.run([w[0], (w[1][0], [-1] * len(w[1][1]))], legal),
        "world 1: boneyard entry -1 is no tile index",
    ),
    "boneyard_twice": (
        lambda r, w, legal, v: r.run([(w[0][0], [w[0][1][0]] * len(w[0][1]))], legal),
        "world 0: tile .* is in two places",
    ),
    "mask_past_tiles": (
        lambda r, w, legal, v: r.run(
            [([h | (1 << 40 if s == _other(v) else 0) for s, h in enumerate(w[0][0])], w[0][1])],
            legal,
        ),
        "hand mask holds bits past the set's 28 tiles",
    ),
    "negative_mask": (
        lambda r, w, legal, v: r.run(
            [([-1 if s == _other(v) else h for s, h in enumerate(w[0][0])], w[0][1])], legal
        ),
        "hand mask holds bits past",
    ),
    "float_mask": (
        lambda r, w, legal, v: r.run([([float(h) for h in w[0][0]], w[0][1])], legal),
        "worlds: not worlds of the view",
    ),
    "tile_missing": (
        lambda r, w, legal, v: r.run(
            [([h & (h - 1) if s == _other(v) else h for s, h in enumerate(w[0][0])], w[0][1])],
            legal,
        ),
        "world 0: tile .* is in no hand, nor on the table or in the boneyard",
    ),
}


@pytest.mark.parametrize("case", sorted(_RUN_CASES))
def test_world_playouts_refuse_bad_input(case: str) -> None:
    runner, worlds, legal, view = _playouts()
    call, why = _RUN_CASES[case]
    with pytest.raises(BatchError, match=why):
        call(runner, worlds, legal, view)
    # And the runner goes on as before.
    np.testing.assert_array_equal(
        runner.run(worlds, legal, rng_seed=4), _playouts()[0].run(worlds, legal, rng_seed=4)
    )


def test_world_playouts_take_every_engine_seed_and_refuse_bad_weights() -> None:
    runner, worlds, legal, view = _playouts(players=3)
    values = runner.run(worlds, legal, rng_seed=2**64 - 1)
    assert values.shape == (3, len(legal)) and np.isfinite(values).all()
    # A tile moved from one hidden hand to the other: each tile in one place, but not
    # the hand sizes the view shows.
    hands, boneyard = worlds[0]
    a, b = (s for s in range(3) if s != view.seat)
    moved = hands[a] & -hands[a]
    resized = list(hands)
    resized[a] ^= moved
    resized[b] |= moved
    with pytest.raises(BatchError, match=f"world 1: seat {a}'s hand does not hold the view's"):
        runner.run([worlds[1], (resized, boneyard)], legal)
    for weights in ([float("nan")] * 14, ["a"] * 14):
        with pytest.raises(BatchError, match="weights: "):
            WorldPlayouts(view, weights)  # type: ignore[arg-type]


# -- 8. and 9. deal_hidden_hands and random_hands --------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, why",
    [
        ({"count": -1}, "count=-1 is not allowed"),
        ({"seed": 1.5}, "seed=1.5 is not allowed"),
        ({"seed": True}, "seed=True is not allowed"),
        ({"seed": 2**64}, "seed=18446744073709551616 is not allowed"),
        ({"unseen": -5}, "unseen=-5 is not allowed"),
        ({"sizes": [1.5, 1]}, r"sizes\[0\]=1.5 is not allowed"),
        ({"sizes": [True, 1]}, r"sizes\[0\]=True is not allowed"),
        ({"sizes": [-1, 1]}, r"sizes\[0\]=-1 is not allowed"),
        ({"voids": [2**64, 0]}, r"voids\[0\]=18446744073709551616 is not allowed"),
        ({"caps": [(0, 1)]}, r"caps\[0\]=\(0, 1\) is not allowed"),
        ({"caps": [(0, -1, 0)]}, r"caps\[0\] mask=-1 is not allowed"),
        ({"caps": [(0, 1, -1)]}, r"caps\[0\] most=-1 is not allowed"),
        ({"tries": 0}, "tries=0 is not allowed"),
    ],
)
def test_deal_hidden_hands_checks_its_arguments(kwargs: dict[str, Any], why: str) -> None:
    args: dict[str, Any] = {
        "unseen": 0b1111, "sizes": [1, 1], "voids": [0, 0], "caps": [], "count": 2, "seed": 1,
    }  # fmt: skip
    with pytest.raises(BatchError, match=why):
        deal_hidden_hands(**{**args, **kwargs})
    assert len(deal_hidden_hands(**{**args, "seed": 2**64 - 1})) == 2


def test_random_hands_checks_its_rng_seed() -> None:
    for seed in (2**64, -1, 1.5, "3", True):
        with pytest.raises(
            BatchError, match=r"rng_seed=.* is not allowed; allowed: .*\(2\*\*64 - 1\)"
        ):
            random_hands(STANDARD, [1, 2], rng_seed=seed)  # type: ignore[arg-type]
    top, _ = random_hands(STANDARD, [1, 2, 3], rng_seed=2**64 - 1)
    again, _ = random_hands(STANDARD, [1, 2, 3], rng_seed=np.uint64(2**64 - 1))  # type: ignore[arg-type]
    np.testing.assert_array_equal(top, again)


# -- 10. action_masks is the caller's --------------------------------------------------------------


def test_action_masks_are_a_copy_that_later_steps_leave_alone() -> None:
    env = VectorEnv(2, preset="standard", mode="learner", seed=1)
    env.reset()
    first = env.action_masks()
    kept = first.copy()
    env.step(first.argmax(axis=1))
    np.testing.assert_array_equal(first, kept)
    first[:] = 0
    assert env.action_masks().any()


# -- 11. reading a slot ----------------------------------------------------------------------------


def test_reading_a_slot_checks_the_slot_and_the_seat() -> None:
    eng = BatchEngine(STANDARD, 2)
    eng.deal([1], slots=[1])
    readers: list[Callable[[Any], Any]] = [
        eng.outcome, eng.hand_masks, eng.boneyard, eng.end_tuple, eng.match_winners,
        lambda b: eng.hand_mask(b, 0),
    ]  # fmt: skip
    for read in readers:
        for slot in (-1, 2, 1.0, True, "0"):
            with pytest.raises(BatchError, match=f"slot {slot!r} does not exist; allowed: "):
                read(slot)
        read(np.int64(1))
    for seat in (-1, 2, 0.0):
        with pytest.raises(BatchError, match=f"seat must be a seat number: .* got {seat!r}"):
            eng.hand_mask(1, seat)  # type: ignore[arg-type]
    to_move = eng.to_move
    with pytest.raises(ValueError, match="read-only"):
        to_move[1] = 1 - to_move[1]
    with pytest.raises(BatchError, match=r"allowed: an int8 array of shape \(2, 128\)"):
        eng.legal_masks(np.zeros((2, 128), np.float32))


# -- 12. reset_mask, seeds as Gymnasium's vector envs take them, np_random_seed --------------------


def test_the_compiled_env_resets_the_masked_slots_as_sync_does() -> None:
    for mode in (
        gymnasium.vector.AutoresetMode.NEXT_STEP,
        gymnasium.vector.AutoresetMode.SAME_STEP,
    ):
        compiled, sync = make_both(3, mode, opponents="trained", preset="standard")
        assert_same(compiled.reset(seed=3), sync.reset(seed=3), "reset")
        rng = np.random.default_rng(1)
        for t in range(60):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in compiled.action_masks()])
            assert_same(compiled.step(actions), sync.step(actions), f"step {t}")
            if t % 7 == 3:
                mask = np.array([t % 2 == 0, True, False])
                seeds = [100 + t, None, 7] if t % 3 else None
                options = {"reset_mask": mask}
                got = compiled.reset(seed=seeds, options=options)
                assert_same(got, sync.reset(seed=seeds, options=dict(options)), f"reset {t}")
            elif t % 11 == 5:
                # Every slot, no seed: a slot whose episode just ended (next-step
                # auto-reset) starts the episode its stream gives next, once.
                assert_same(compiled.reset(), sync.reset(), f"full reset {t}")


def test_seeds_are_taken_as_gymnasiums_vector_envs_take_them() -> None:
    compiled = MatadorVectorEnv(3, preset="standard", opponents="trained")
    sync = gymnasium.make_vec(
        matador_env.GYM_ID, num_envs=3, vectorization_mode="sync", opponents="trained"
    )
    expected = compiled.reset(seed=[0, 1, 2])
    for seed in (np.arange(3), range(3), (0, 1, 2), np.array([0, 1, 2], np.uint64)):
        assert_same(compiled.reset(seed=seed), expected, repr(seed))  # type: ignore[arg-type]
        sync.reset(seed=seed)  # type: ignore[arg-type]
        assert compiled.np_random_seed == sync.np_random_seed == (0, 1, 2)
    compiled.reset(seed=5)
    sync.reset(seed=5)
    assert compiled.np_random_seed == sync.np_random_seed == (5, 6, 7)
    # Each slot's stream drew what its single env's drew (a tuple per slot, as sync's:
    # mypy reads gymnasium's own annotation, one Generator).
    streams = cast(tuple[np.random.Generator, ...], compiled.np_random)
    singles = cast(tuple[np.random.Generator, ...], sync.np_random)
    assert [g.bit_generator.state for g in streams] == [g.bit_generator.state for g in singles]


@pytest.mark.parametrize(
    "options, why",
    [
        ({"reset_mask": [True, False]}, "a numpy bool array of shape \\(2,\\)"),
        ({"reset_mask": np.array([1, 0])}, "a numpy bool array"),
        ({"reset_mask": np.array([False, False])}, "with at least one True"),
        ({"reset_mask": np.array([True, False, True])}, "of shape \\(2,\\)"),
        ({"reset_mask": np.array([1, 0]), "other": 1}, "a numpy bool array"),
        ("reset_mask", "options='reset_mask' is not allowed"),
    ],
)
def test_bad_reset_options_are_refused_and_change_nothing(options: Any, why: str) -> None:
    env = MatadorVectorEnv(2, preset="standard")
    env.reset(seed=0)
    env.step(env.action_masks().argmax(axis=1))
    before = _gym_state(env)
    with pytest.raises(ValueError, match=why):
        env.reset(seed=4, options=options)
    assert _gym_state(env) == before


def test_other_reset_options_are_ignored_as_the_single_env_ignores_them() -> None:
    # The single env accepts options and uses none, and SyncVectorEnv passes them on
    # to it: a reset with other keys is the reset without them, as sync's is.
    compiled, sync = make_both(2, opponents="trained")
    expected = compiled.reset(seed=3)
    assert_same(compiled.reset(seed=3, options={"other": 1}), expected, "reset")
    assert_same(sync.reset(seed=3, options={"other": 1}), expected, "sync")
    actions = compiled.action_masks().argmax(axis=1)
    assert_same(compiled.step(actions), sync.step(actions), "step")
    options = {"reset_mask": np.array([False, True]), "other": 1}
    got = compiled.reset(seed=[None, 9], options=dict(options))
    assert_same(got, sync.reset(seed=[None, 9], options=dict(options)), "masked reset")


def test_a_masked_reset_needs_a_first_reset_of_every_slot() -> None:
    env = MatadorVectorEnv(2, preset="standard")
    with pytest.raises(ValueError, match="before the first reset"):
        env.reset(options={"reset_mask": np.array([True, False])})
    env.reset(options={"reset_mask": np.array([True, True])})  # every slot: a first reset
    venv = VectorEnv(2, preset="standard")
    with pytest.raises(BatchError, match="before the first reset of every slot"):
        venv.reset(mask=np.array([False, True]))


# -- 13. num_envs first ----------------------------------------------------------------------------


@pytest.mark.parametrize("count", [2**70, 2**64, 10**13, MAX_SIZE + 1, 0, -3, 2.0, True])
def test_num_envs_is_checked_first_against_a_stated_bound(count: Any) -> None:
    why = f"num_envs={count!r} is not allowed; allowed: .* from 1 to {MAX_SIZE}"
    with pytest.raises(BatchError, match=why):
        VectorEnv(count, preset="standard")
    with pytest.raises(BatchError, match=why):
        MatadorVectorEnv(count, preset="standard")
    with pytest.raises(BatchError, match=f"size={count!r} is not allowed"):
        BatchEngine(STANDARD, count)


# -- (a) the learner's empty deals -----------------------------------------------------------------


def test_deals_that_leave_the_learner_no_decision_change_nothing_when_they_raise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # One-tile hands: the leader goes out at once, so a deal the learner does not lead
    # ends before its first turn; a slot whose deals all do raises, mid-step.
    env = VectorEnv(3, rules=Rules(hand_size=1, players=3), mode="learner", learner=0, seed=5)
    env.reset()
    monkeypatch.setattr(vector_module, "_MAX_EMPTY_DEALS", 1)
    before = env.get_state()
    masks = env.action_masks()
    with pytest.raises(
        BatchError, match="deals in a row had a hand end before the learner could move"
    ):
        env.step(masks.argmax(axis=1))
    assert env.get_state() == before
    np.testing.assert_array_equal(env.action_masks(), masks)
    gym_env = MatadorVectorEnv(3, rules=Rules(hand_size=1, players=3), seat=0)
    monkeypatch.setattr(vector_module, "_MAX_EMPTY_DEALS", 1000)
    gym_env.reset(seed=5)
    monkeypatch.setattr(vector_module, "_MAX_EMPTY_DEALS", 1)
    saved = _gym_state(gym_env)
    with pytest.raises(BatchError, match="deals in a row"):
        for _ in range(10):
            gym_env.step(gym_env.action_masks().argmax(axis=1))
            saved = _gym_state(gym_env)
    assert _gym_state(gym_env) == saved


# -- (b) one reading of seed lists -----------------------------------------------------------------


def test_both_vector_envs_read_seeds_alike() -> None:
    venv = VectorEnv(3, preset="standard")
    expected = venv.reset([4, 5, 6])[0]
    for seeds in (4, np.int64(4), range(4, 7), np.arange(4, 7), (4, 5, 6)):
        np.testing.assert_array_equal(venv.reset(seeds)[0], expected)  # type: ignore[arg-type]
    # None is a slot's "no seed" where the env has one (the gym env's fresh entropy, the
    # opponents' stream going on), not in VectorEnv.reset, whose slots need a seed each.
    with pytest.raises(BatchError, match=r"seeds\[1\]=None is the seed of slot 1"):
        venv.reset([4, None, 6])  # type: ignore[list-item]
    venv.seed_opponents(np.array([1, 2, 3]))
    venv.seed_opponents([None, 2, None])
    for bad, name in ((2**64 - 2, "seeds"), ([1, 2], "seeds")):
        with pytest.raises(BatchError, match=f"{name}"):
            venv.reset(bad)
    gym_env = MatadorVectorEnv(3, preset="standard")
    gym_env.reset(seed=[4, None, np.int64(6)])
    for bad in (2**64 - 2, [1, 2], [1, 2, 2**64]):
        with pytest.raises(ValueError, match="seed"):
            gym_env.reset(seed=bad)  # type: ignore[arg-type]
