"""The reliability suite's env campaign (benchmarks/fuzz.py, ``--campaign env``) finds
what it promises to: each test breaks one thing in an environment with a stand-in and
runs a small campaign, which must report it; and its inputs reach every environment,
every kind of action and seed, and the opponent and episode starts that answer badly."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import benchmarks.fuzz as fuzz
from matador_env import matador_v0
from matador_env.batch import BatchError
from matador_env.gym_env import MatadorSingleEnv
from matador_env.vector import VectorEnv


def _findings(monkeypatch: pytest.MonkeyPatch, count: int, seed: int = 14) -> str:
    """Every finding of a small env campaign, one a line ("" for none); all of them,
    where the first five would be another stand-in's."""
    classify = fuzz.classify
    monkeypatch.setattr(
        fuzz, "classify", lambda *args, **kwargs: classify(*args, **{**kwargs, "keep": 10**6})
    )
    return "\n".join(fuzz.run_campaign("env", seed=seed, count=count).examples)


def _wrap(
    monkeypatch: pytest.MonkeyPatch,
    owner: Any,
    name: str,
    broken: Callable[..., Any],
) -> None:
    """``owner.<name>`` as ``broken(original, self, *args, **kwargs)``."""
    original = getattr(owner, name)
    monkeypatch.setattr(
        owner, name, lambda self, *args, **kwargs: broken(original, self, *args, **kwargs)
    )


def test_the_campaign_finds_nothing_in_the_environments_as_they_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _findings(monkeypatch, 300) == ""


# -- refusals -------------------------------------------------------------------------------


def test_it_finds_a_refused_action_that_changed_an_aec_env(monkeypatch: pytest.MonkeyPatch) -> None:
    def leaky(step: Callable[..., Any], self: Any, action: Any) -> Any:
        try:
            return step(self, action)
        except (TypeError, ValueError):
            self._cumulative_rewards[self.agent_selection] += 1.0
            raise

    _wrap(monkeypatch, matador_v0.raw_env, "step", leaky)
    assert "was refused, but changed the environment" in _findings(monkeypatch, 60)


def test_it_finds_a_refused_action_that_changed_a_single_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def leaky(step: Callable[..., Any], self: Any, action: Any) -> Any:
        try:
            return step(self, action)
        except TypeError:
            self.seat = (self.seat + 1) % self.rules.players
            raise

    _wrap(monkeypatch, MatadorSingleEnv, "step", leaky)
    assert "was refused, but changed the environment" in _findings(monkeypatch, 60)


def test_it_finds_a_refused_step_that_changed_a_vector_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def leaky(step: Callable[..., Any], self: Any, *args: Any) -> Any:
        try:
            return step(self, *args)
        except BatchError:
            self._episodes[0] += 1
            raise

    _wrap(monkeypatch, VectorEnv, "step", leaky)
    assert "was refused, but changed the environment" in _findings(monkeypatch, 60)


def test_it_finds_an_error_of_another_type_than_the_docs_give(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    as_integer = matador_v0.as_integer

    def value_error(value: Any, *args: Any) -> int:
        try:
            return as_integer(value, *args)
        except TypeError as exc:
            raise ValueError(str(exc)) from None

    monkeypatch.setattr(matador_v0, "as_integer", value_error)
    assert "; the docs give: TypeError" in _findings(monkeypatch, 60)
    monkeypatch.undo()

    def plain(step: Callable[..., Any], self: Any, *args: Any) -> Any:
        try:
            return step(self, *args)
        except BatchError as exc:
            raise ValueError(str(exc)) from None

    _wrap(monkeypatch, VectorEnv, "step", plain)
    assert "the docs give BatchError" in _findings(monkeypatch, 60)


def test_it_finds_a_legal_action_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def numpy_refused(step: Callable[..., Any], self: Any, action: Any) -> Any:
        if isinstance(action, np.integer):
            raise ValueError("no numpy integers here")
        return step(self, action)

    _wrap(monkeypatch, matador_v0.raw_env, "step", numpy_refused)
    assert "no numpy integers here; the docs give: taken" in _findings(monkeypatch, 60)


# -- illegal actions ------------------------------------------------------------------------


def _ignoring_illegal(step: Callable[..., Any], self: Any, action: Any) -> Any:
    """An AEC ``step`` that ignores an illegal action of a seat to move: neither applied
    nor ending the game."""
    agent = self.agent_selection
    if not (self.terminations[agent] or self.truncations[agent]) and fuzz._is_integer(action):
        mask = self.observe(agent)["action_mask"]
        if 0 <= int(action) < len(mask) and not mask[int(action)]:
            return None
    return step(self, action)


def test_it_finds_an_illegal_action_taken_by_the_bare_aec_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _wrap(monkeypatch, matador_v0.raw_env, "step", _ignoring_illegal)
    assert "was taken; the docs give IllegalMoveError" in _findings(monkeypatch, 80)


def test_it_finds_an_illegal_action_that_env_takes_without_ending_the_game(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _wrap(monkeypatch, matador_v0._CheckedActions, "step", _ignoring_illegal)
    found = _findings(monkeypatch, 80)
    assert "an illegal action" in found and "left terminations" in found


def test_it_finds_an_illegal_action_of_a_single_env_rewarded_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unpunished(step: Callable[..., Any], self: Any, action: Any) -> Any:
        obs, reward, terminated, truncated, info = step(self, action)
        if info["illegal_action"]:
            reward = 0.0
        return obs, reward, terminated, truncated, info

    _wrap(monkeypatch, MatadorSingleEnv, "step", unpunished)
    assert "gave reward 0.0, terminated True" in _findings(monkeypatch, 200)


def test_it_finds_an_illegal_action_of_a_vector_slot_rewarded_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unpunished(step: Callable[..., Any], self: Any, *args: Any) -> Any:
        out = list(step(self, *args))
        out[3] = np.zeros_like(out[3])
        return tuple(out)

    _wrap(monkeypatch, VectorEnv, "step", unpunished)
    assert "illegal action gave reward 0.0" in _findings(monkeypatch, 80)


# -- seeds ----------------------------------------------------------------------------------


def test_it_finds_a_seed_read_as_another_in_a_numpy_form(monkeypatch: pytest.MonkeyPatch) -> None:
    as_seed = matador_v0.as_seed

    def off_by_one(seed: Any) -> int | None:
        number = as_seed(seed)
        return number if number is None or type(seed) is int else (number + 1) % 2**64

    import matador_env.gym_env as gym_env

    monkeypatch.setattr(matador_v0, "as_seed", off_by_one)
    monkeypatch.setattr(gym_env, "as_seed", off_by_one)
    assert "dealt other hands than reset(seed=" in _findings(monkeypatch, 300)


def test_it_finds_slot_seeds_read_as_others(monkeypatch: pytest.MonkeyPatch) -> None:
    import matador_env.vector as vector

    slot_seeds = vector.slot_seeds

    def shifted(seeds: Any, *args: Any, **kwargs: Any) -> Any:
        read = slot_seeds(seeds, *args, **kwargs)
        return read if isinstance(seeds, list) else [(s + 1) % 2**64 for s in read]

    monkeypatch.setattr(vector, "slot_seeds", shifted)
    assert "dealt other games than reset(" in _findings(monkeypatch, 600)


# -- play after, and the opponent that answers badly -----------------------------------------


def test_it_finds_a_seat_to_move_with_no_legal_action(monkeypatch: pytest.MonkeyPatch) -> None:
    _wrap(monkeypatch, MatadorSingleEnv, "action_masks", lambda masks, self: masks(self) * 0)
    assert "a seat is to move with no legal action" in _findings(monkeypatch, 60)
    monkeypatch.undo()
    _wrap(monkeypatch, VectorEnv, "action_masks", lambda masks, self, *a: masks(self, *a) * 0)
    assert "a slot has no legal action" in _findings(monkeypatch, 60)


def test_it_finds_play_that_raises_after_an_input_was_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def failing_after(step: Callable[..., Any], self: Any, action: Any) -> Any:
        self.steps_taken = getattr(self, "steps_taken", 0) + 1
        if self.steps_taken > 45:  # past any trial's setup (at most 39 steps)
            raise RuntimeError("worn out")
        return step(self, action)

    _wrap(monkeypatch, matador_v0.raw_env, "step", failing_after)
    assert "raised RuntimeError: worn out" in _findings(monkeypatch, 100)


def test_it_finds_an_opponents_bad_answer_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    import matador_env.vector as vector

    def floats_cut(value: Any, name: str, allowed: str) -> np.ndarray:
        answer = np.asarray(value)
        if answer.dtype.kind != "f":
            return answer
        with np.errstate(invalid="ignore"):  # NaN and inf cut to some integer, quietly
            return answer.astype(np.int64)

    monkeypatch.setattr(vector, "as_array", floats_cut)
    assert "the opponent's answer array([" in _findings(monkeypatch, 600)


def test_it_finds_an_episode_starts_answer_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    checked = VectorEnv._checked_starts

    def unchecked(self: Any, starts: Any, count: int) -> Any:
        if not (isinstance(starts, tuple) and len(starts) == 2):
            return checked(self, starts, count)  # (what is no pair is still refused)
        seeds, seats = starts
        return list(seeds), None if seats is None else list(seats)

    monkeypatch.setattr(VectorEnv, "_checked_starts", unchecked)
    assert "episode_starts's answer (" in _findings(monkeypatch, 1500)


@pytest.mark.parametrize(
    ("answer", "learner", "taken"),
    [
        (([1, 2], [0, 1]), True, True),
        ((np.array([1, 2], np.uint64), (1, 1)), True, True),
        (([1, 2], [0, 2]), True, False),  # seat 2 of two players
        (([1, 2], [0, 2]), False, True),  # no learner: the seats are not read
        (([1, 2], None), False, True),
        (([1, 2], None), True, False),
        (([1, 2], [0.0, 1.0]), True, False),
        (([1], [0, 1]), True, False),
        (([1, 2**64], [0, 1]), False, False),
        ((bytearray(2), [0, 1]), False, False),
        ([1, 2], False, False),
        (([1, 2], [0, 1], [0, 1]), False, False),
    ],
)
def test_episode_starts_answers_are_read_as_the_docs_read_them(
    answer: Any, learner: bool, taken: bool
) -> None:
    starts = fuzz._FaultyStarts(random.Random(0), players=2, learner=learner)
    assert starts._taken(answer, 2) is taken


# -- gymnasium.make_vec's env ---------------------------------------------------------------


def test_it_finds_a_refused_reset_that_changed_make_vecs_env(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from matador_env.gym_vector import MatadorVectorEnv

    def leaky(reset: Callable[..., Any], self: Any, **kwargs: Any) -> Any:
        try:
            return reset(self, **kwargs)
        except ValueError:
            self._first_seeds[0] = 12345
            raise

    original = MatadorVectorEnv.reset
    monkeypatch.setattr(MatadorVectorEnv, "reset", lambda self, **kw: leaky(original, self, **kw))
    found = _findings(monkeypatch, 300)
    assert "reset(seed=" in found and "was refused, but changed the environment" in found


def test_it_finds_make_vecs_seeds_read_as_others(monkeypatch: pytest.MonkeyPatch) -> None:
    from matador_env.gym_vector import MatadorVectorEnv

    def shifted(slot_seeds: Callable[..., Any], self: Any, seed: Any) -> Any:
        read = slot_seeds(self, seed)
        return read if isinstance(seed, (int, list)) else [s if s is None else s + 1 for s in read]

    _wrap(monkeypatch, MatadorVectorEnv, "_slot_seeds", shifted)
    assert "dealt other games than reset(seed=" in _findings(monkeypatch, 1000)


def test_it_finds_make_vecs_illegal_action_rewarded_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from matador_env.gym_vector import MatadorVectorEnv

    def unpunished(step: Callable[..., Any], self: Any, actions: Any) -> Any:
        obs, rewards, terminated, truncated, infos = step(self, actions)
        return obs, np.zeros_like(rewards), terminated, truncated, infos

    _wrap(monkeypatch, MatadorVectorEnv, "step", unpunished)
    assert "illegal action gave reward 0.0" in _findings(monkeypatch, 300)


def test_it_finds_make_vecs_valid_options_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from matador_env.gym_vector import MatadorVectorEnv

    def refusing(reset_mask: Callable[..., Any], self: Any, options: Any) -> Any:
        if isinstance(options, dict):
            raise ValueError("no options")
        return reset_mask(self, options)

    _wrap(monkeypatch, MatadorVectorEnv, "_reset_mask", refusing)
    assert "a valid input refused: ValueError: no options" in _findings(monkeypatch, 300)


def test_it_finds_make_vecs_opponent_asked_again_after_a_bad_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from matador_env.gym_vector import MatadorVectorEnv

    def asking_again(step: Callable[..., Any], self: Any, actions: Any) -> Any:
        for _ in range(50):
            try:
                return step(self, actions)
            except BatchError as exc:
                if "opponent" not in str(exc):
                    raise
        return step(self, actions)

    _wrap(monkeypatch, MatadorVectorEnv, "step", asking_again)
    assert "the opponent's answer " in _findings(monkeypatch, 600)


def test_it_finds_make_vecs_env_changed_by_an_opponent_that_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from matador_env.gym_vector import MatadorVectorEnv

    def leaky(step: Callable[..., Any], self: Any, actions: Any) -> Any:
        try:
            return step(self, actions)
        except fuzz.CallableFailed:
            self._first_seeds[0] = 12345
            raise

    _wrap(monkeypatch, MatadorVectorEnv, "step", leaky)
    assert "the opponent failed, but the environment changed" in _findings(monkeypatch, 600)


def test_it_finds_a_vector_env_changed_by_episode_starts_that_failed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def leaky(call: Callable[..., Any], self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return call(self, *args, **kwargs)
        except fuzz.CallableFailed:
            if self._started:
                self._base_seeds[0] = 12345
            raise

    _wrap(monkeypatch, VectorEnv, "step", leaky)
    _wrap(monkeypatch, VectorEnv, "reset", leaky)
    found = _findings(monkeypatch, 2000)
    assert "episode_starts failed, but the environment changed" in found


def test_it_finds_an_opponent_failure_swallowed(monkeypatch: pytest.MonkeyPatch) -> None:
    def asking_again(step: Callable[..., Any], self: Any, *args: Any) -> Any:
        try:
            return step(self, *args)
        except fuzz.CallableFailed:
            return step(self, *args)

    _wrap(monkeypatch, VectorEnv, "step", asking_again)
    assert "the opponent failed, but the step went on" in _findings(monkeypatch, 600)


def test_it_finds_a_single_envs_opponent_answer_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    def forgiving(opponent_action: Callable[..., Any], self: Any, mover: int, policy: Any) -> Any:
        try:
            return opponent_action(self, mover, policy)
        except (TypeError, ValueError):
            return int(np.flatnonzero(self.game.observe(mover)["action_mask"])[0])

    _wrap(monkeypatch, MatadorSingleEnv, "_opponent_action", forgiving)
    found = _findings(monkeypatch, 600)
    assert "the opponent's answer" in found and "was taken" in found


def test_it_finds_a_single_envs_opponent_failure_swallowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def covering(opponent_action: Callable[..., Any], self: Any, mover: int, policy: Any) -> Any:
        try:
            return opponent_action(self, mover, policy)
        except fuzz.CallableFailed:  # as if the env played a legal move for it
            return int(np.flatnonzero(self.game.observe(mover)["action_mask"])[0])

    _wrap(monkeypatch, MatadorSingleEnv, "_opponent_action", covering)
    assert "the opponent failed, but the step went on" in _findings(monkeypatch, 1000)


def test_it_finds_an_opponents_bad_answer_refused_with_another_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As before 3a7fe20: an agent's answer that is no move was parsed as str(answer).
    from matador_env.engine import Move

    def parsed(opponent_action: Callable[..., Any], self: Any, mover: int, policy: Any) -> Any:
        if hasattr(policy, "agent"):
            answer = policy.move(self.game.view(mover), self._rng)
            if not isinstance(answer, (Move, str)):
                Move.parse(str(answer))
        return opponent_action(self, mover, policy)

    _wrap(monkeypatch, MatadorSingleEnv, "_opponent_action", parsed)
    found = _findings(monkeypatch, 600)
    assert "(the opponent answered" in found and "MoveParseError: not a move" in found


def test_it_finds_a_failed_step_that_left_the_opponents_stream_ahead(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    init = MatadorSingleEnv.__init__

    def forgetful(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self._keep_rng = False  # a failed step no longer puts the stream back

    monkeypatch.setattr(MatadorSingleEnv, "__init__", forgetful)
    assert "with the opponent fixed, the step went otherwise" in _findings(monkeypatch, 1000)


def _sb3_class() -> Any:
    from matador_env.vector import sb3_vec_env

    return type(sb3_vec_env(VectorEnv(1, preset="standard", mode="learner")))


def test_it_finds_sb3s_actions_read_by_numpy_and_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    # As they were: step_async made an array of them, step_wait played the last ones again.
    cls = _sb3_class()

    def as_before(self: Any, actions: Any) -> None:
        self._actions, self._waiting = np.asarray(actions), True

    def replaying(step_wait: Callable[..., Any], self: Any) -> Any:
        if not self._waiting:
            self._actions, self._waiting = getattr(self, "last", None), True
        self.last = self._actions
        return step_wait(self)

    monkeypatch.setattr(cls, "step_async", as_before)
    _wrap(monkeypatch, cls, "step_wait", replaying)
    found = _findings(monkeypatch, 600)
    assert "ValueError: setting an array element with a sequence" in found
    assert "step_wait() with no step_async was taken; the docs give RuntimeError" in found


def test_it_finds_sb3s_seeds_and_options_taken_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    from stable_baselines3.common.vec_env import VecEnv

    cls = _sb3_class()
    monkeypatch.setattr(cls, "seed", VecEnv.seed)
    monkeypatch.setattr(cls, "set_options", VecEnv.set_options)
    found = _findings(monkeypatch, 600)
    assert "was taken; the docs give BatchError" in found
    assert "set_options(" in found and "seed(" in found


def test_it_finds_sb3s_seeds_read_as_others(monkeypatch: pytest.MonkeyPatch) -> None:
    cls = _sb3_class()

    def shifted(seed: Callable[..., Any], self: Any, value: Any = None) -> Any:
        self._seeds = [s + 1 for s in seed(self, value)]
        return self._seeds

    _wrap(monkeypatch, cls, "seed", shifted)
    assert "gave the slots the seeds" in _findings(monkeypatch, 600)


def test_it_finds_sb3s_indices_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    from stable_baselines3.common.vec_env import VecEnv

    monkeypatch.setattr(_sb3_class(), "_get_indices", VecEnv._get_indices)
    found = _findings(monkeypatch, 600)
    assert "(indices=" in found and "the docs give" in found


def test_it_finds_sb3s_illegal_action_rewarded_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    def unpunished(step_wait: Callable[..., Any], self: Any) -> Any:
        obs, rewards, dones, infos = step_wait(self)
        return obs, np.zeros_like(rewards), dones, infos

    _wrap(monkeypatch, _sb3_class(), "step_wait", unpunished)
    assert "illegal action gave reward 0.0" in _findings(monkeypatch, 600)


# -- what the inputs reach ------------------------------------------------------------------


def _results(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[Any]:
    """What ``owner.<name>`` returns at each call as the campaign runs, in a list that
    fills as it does."""
    seen: list[Any] = []
    original = getattr(owner, name)

    def noting(*args: Any) -> Any:
        seen.append(original(*args))
        return seen[-1]

    monkeypatch.setattr(owner, name, noting)
    return seen


def test_inputs_reach_every_environment_every_kind_of_action_and_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kinds: set[tuple[str, str]] = set()
    documented = fuzz._Surface.documented

    def noting(self: Any, kind: str) -> Any:
        kinds.add((self.kind, kind))
        return documented(self, kind)

    monkeypatch.setattr(fuzz._Surface, "documented", noting)
    seeds = _results(monkeypatch, fuzz, "_mutated_seed")
    slots = _results(monkeypatch, fuzz, "_illegal_slots")
    starts = _results(monkeypatch, fuzz._FaultyStarts, "_taken")
    options = _results(monkeypatch, fuzz, "_reset_mask_taken")
    sb3_options = _results(monkeypatch, fuzz, "_sb3_options_taken")
    sb3_slots = _results(monkeypatch, fuzz, "_sb3_slots")
    answers: list[int] = []
    call = fuzz._FaultyOpponent.__call__

    def counting(self: Any, obs: Any, masks: Any) -> Any:
        before = len(self.bad)
        answer = call(self, obs, masks)
        answers.append(len(self.bad) - before)
        return answer

    monkeypatch.setattr(fuzz._FaultyOpponent, "__call__", counting)
    from matador_env.gym_vector import MatadorVectorEnv

    make_vec_opponents: list[Any] = []
    init = MatadorVectorEnv.__init__

    def noting_opponents(self: Any, *args: Any, **kwargs: Any) -> None:
        make_vec_opponents.append(kwargs.get("opponents"))
        init(self, *args, **kwargs)

    monkeypatch.setattr(MatadorVectorEnv, "__init__", noting_opponents)
    bad_answers: set[tuple[str, type[Exception]]] = set()  # (as agent or callable, error)

    def noting_bad(name: str) -> None:
        answer = getattr(fuzz._FaultyPlayer, name)

        def noted(self: Any, *args: Any) -> Any:
            before = len(self.bad)
            out = answer(self, *args)
            bad_answers.update((name, error) for _, error in self.bad[before:])
            return out

        monkeypatch.setattr(fuzz._FaultyPlayer, name, noted)

    noting_bad("act")
    noting_bad("action")
    failures: set[str] = set()
    fail = fuzz._fail_now_and_then

    def noting_failure(fault: Any, share: float) -> None:
        try:
            fail(fault, share)
        except fuzz.CallableFailed:
            failures.add(type(fault).__name__)
            raise

    monkeypatch.setattr(fuzz, "_fail_now_and_then", noting_failure)
    assert _findings(monkeypatch, 800) == ""
    assert {(s, k) for s in ("raw_env", "env", "single") for k in (
        "legal", "illegal", "range", "type", "none")} <= kinds  # fmt: skip
    assert any(s is None for s in seeds) and any(fuzz._is_integer(s) for s in seeds)
    assert any(s is not None and not fuzz._is_integer(s) for s in seeds)
    assert None in slots and [] in slots and any(s for s in slots)
    assert 1 in answers and 0 in answers
    assert {"_FaultyPlayer", "_FaultyOpponent"} <= failures  # (episode_starts: rarer)
    assert None in make_vec_opponents
    assert any(isinstance(o, fuzz._FaultyOpponent) for o in make_vec_opponents)
    assert True in starts and False in starts and True in options and False in options
    assert True in sb3_options and False in sb3_options
    assert {n for n, _ in bad_answers} == {"act", "action"}
    assert {e for _, e in bad_answers} == {TypeError, ValueError}
    assert {TypeError, IndexError} <= {e for r in sb3_slots if isinstance(r, tuple) for e in r}
    assert any(isinstance(r, list) for r in sb3_slots)


def test_the_campaign_keeps_pettingzoo_quiet(capfd: pytest.CaptureFixture[str]) -> None:
    from pettingzoo.utils.env_logger import EnvLogger  # type: ignore[import-untyped]

    fuzz.run_campaign("env", seed=14, count=60)
    out, err = capfd.readouterr()
    assert "WARNING" not in out + err
    assert EnvLogger._output and EnvLogger.mqueue == []


# -- the campaign's own readings ------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        (3, "legal"),
        (np.uint8(3), "legal"),
        (np.array(3, dtype=np.int16), "legal"),
        (4, "illegal"),
        (np.int64(-1), "range"),
        (np.uint64(2**64 - 1), "range"),
        (10**30, "range"),
        (None, "none"),
        (True, "type"),
        (np.bool_(False), "type"),
        (3.0, "type"),
        (np.array([3]), "type"),
        (np.array(3.0), "type"),
        ("3", "type"),
    ],
)
def test_an_action_is_read_as_the_docs_read_it(action: Any, kind: str) -> None:
    assert fuzz._action_kind(action, [3], 10) == kind


@pytest.mark.parametrize(
    ("value", "seeds"),
    [
        (5, [5, 6]),
        (np.uint64(2**64 - 2), [2**64 - 2, 2**64 - 1]),
        (2**64 - 1, None),  # its second slot's seed would be 2**64
        (-1, None),
        ([1, np.uint64(2)], [1, 2]),
        ((7, 8), [7, 8]),
        (range(3, 5), [3, 4]),
        (np.array([1, 2]), [1, 2]),
        ([1], None),
        ([1, True], None),
        ([1, 2**64], None),
        (np.array([[1, 2]]), None),
        (bytearray(b"12"), None),
        ("12", None),
        (1.0, None),
    ],
)
def test_slot_seeds_are_read_as_the_docs_read_them(value: Any, seeds: list[int] | None) -> None:
    assert fuzz._vector_seeds(value, 2) == seeds


def test_the_illegal_slots_are_those_of_no_legal_action() -> None:
    masks = np.array([[1, 0, 1], [0, 1, 0]], np.int8)
    assert fuzz._illegal_slots([2, 1], masks) == []
    assert fuzz._illegal_slots(np.array([1, -1]), masks) == [0, 1]
    assert fuzz._illegal_slots(np.array([0, 2**63], np.uint64), masks) == [1]
    for value in ([[0], [1, 2]], [0.0, 1.0], [0], [[0, 1]], [True, False], None):
        assert fuzz._illegal_slots(value, masks) is None
