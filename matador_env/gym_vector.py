"""Matador for one learner per slot as a ``gymnasium.vector.VectorEnv``, on the batch engine.

``gymnasium.make_vec("Matador-v0", num_envs=N, ...)`` builds this environment: ``N``
copies of :class:`~matador_env.gym_env.MatadorSingleEnv` stepped together by the
compiled engine (:mod:`matador_env.vector`, which needs ``numba``: ``pip install
'.[batch]'`` in the checkout), several times faster than ``vectorization_mode="sync"``,
which steps ``N`` single envs one by one in Python (``python -m benchmarks.vector
--section make_vec`` compares them). The keyword arguments are the single
env's, and so are the spaces, rewards, illegal-action rule and infos, batched as
Gymnasium's own vector environments batch them::

    import gymnasium
    import matador_env

    envs = gymnasium.make_vec(matador_env.GYM_ID, num_envs=64, preset="leiden")
    obs, infos = envs.reset(seed=0)          # obs: (64, obs_size) float32
    actions = [mask.nonzero()[0][0] for mask in envs.action_masks()]
    obs, rewards, terminated, truncated, infos = envs.step(actions)

Auto-reset
==========

As Gymnasium's own vector environments, by default it resets an ended episode on the
next step (``metadata["autoreset_mode"]`` is ``AutoresetMode.NEXT_STEP``): the step
where a slot's episode ends returns its last observation and info, and the next step
ignores that slot's action and returns the new episode's first observation, reward 0.
``autoreset_mode=AutoresetMode.SAME_STEP`` (a keyword of ``make_vec``) returns the new
episode's first observation at once, with the ended episode's last observation in
``infos["final_obs"][i]`` and its last info in ``infos["final_info"]`` (each key an
array, ``final_info["_" + key][i]`` True for the slots that ended), so that every step
is a decision. Either way the infos and observations are those of
``SyncVectorEnv(..., autoreset_mode=...)`` in the same mode. Gymnasium's vector
wrappers read the mode (``RecordEpisodeStatistics`` takes both; the vector observation
wrappers, ``NormalizeObservation`` among them, only the default).

Seeds
=====

``reset(seed=s)`` seeds slot ``i`` with ``s + i`` (a sequence, as ``SyncVectorEnv``
takes one: a list, tuple, range or 1-d array with one seed per slot; None: fresh
entropy). Seeds are the single env's, integers from 0 to 2**64 - 1, ``s + i``
included: anything else is refused with a ``ValueError`` naming it (and its index)
before anything changes. Each slot draws its later episodes' deals and,
with ``seat=None``, its learner seats from that seed's stream exactly as a single env
reset with the same seed does. So slot ``i`` deals the same hands, and seats the
learner in the same seats, as env ``i`` of
``gymnasium.make_vec(..., vectorization_mode="sync")`` (with the same auto-reset
mode) reset with the same seed; with deterministic opponents (``"trained"`` or an
exported policy's path) every observation, reward and info is the same
(``tests/test_gym_vector.py`` checks it).
``np_random_seed`` and ``np_random`` are per slot, as ``SyncVectorEnv``'s (tuples of
the slots' seeds and streams), and ``reset(options={"reset_mask": mask})`` resets the
masked slots only, as ``SyncVectorEnv`` does (other keys of ``options`` are ignored,
as the single env ignores its ``options``).
``"random"`` and ``"casual"`` opponents draw their moves from one stream per slot,
restarted from the slot's seed at every seeded reset (fresh entropy before the
first): they replay, and a slot's do not depend on the other slots' seeds or
actions, but they differ from a single env's.

What the compiled env does not do
=================================

Opponents are one spec for every other seat: ``"random"``, ``"trained"``, ``"casual"``,
an exported policy's path, or a callable, which is called as a batched policy
``callable(obs, masks) -> actions`` (see :mod:`matador_env.vector`), not with the
single env's observation dict; if it raises (or returns a wrong shape or an illegal
action) in a step or reset, every slot and its seed stream are left as they were
before that call. Bots that play from a seat's view (``"greedy"``, agent
objects), a list of specs and ``render_mode`` are refused with a ``ValueError`` naming
``vectorization_mode="sync"``, which takes them all. Nor does it keep hand records
(``MatadorSingleEnv.hand_records``): the batch engine holds positions, not the moves
that led to them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from .engine import Rules
from .engine.tiles import shown_value
from .matador_v0 import (
    DEFAULT_MAX_HANDS,
    INFO_KEYS,
    UnsupportedRenderMode,
    all_or_nothing,
    resolve_rules,
)
from .values import seat_value

__all__ = ["MatadorVectorEnv"]

_SYNC = "vectorization_mode='sync'"


class MatadorVectorEnv(gymnasium.vector.VectorEnv):
    """``num_envs`` single-learner games on the batch engine (see the module docstring).

    Arguments as :class:`~matador_env.gym_env.MatadorSingleEnv` (``rules`` or
    ``preset``, ``opponents``, ``seat``, ``episode``, ``reward``, ``match_bonus``,
    ``illegal_reward``, ``max_hands`` and any ``Rules`` field as a keyword), within
    what the compiled engine plays (the module docstring). ``num_envs`` and ``seat``
    take Python or numpy integers (not bools); ``illegal_reward`` and ``match_bonus``
    finite numbers.
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | None = None,
        preset: str | None = None,
        opponents: Any = "random",
        seat: int | None = None,
        episode: str = "hand",
        reward: str = "score",
        match_bonus: float | None = None,
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        max_hands: int = DEFAULT_MAX_HANDS,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        **rule_overrides: Any,
    ) -> None:
        modes = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)
        try:
            mode: AutoresetMode | None = AutoresetMode(autoreset_mode)
        except ValueError:
            mode = None
        if mode not in modes:
            raise ValueError(
                f"autoreset_mode={autoreset_mode!r} is not allowed; allowed: "
                + ", ".join(f"AutoresetMode.{m.name} ({m.value!r})" for m in modes)
            )
        assert mode is not None
        autoreset_mode = mode
        # gymnasium.make_vec passes it to vector entry points (sync wraps in TimeLimit;
        # None, as there, is no limit).
        steps = rule_overrides.pop("max_episode_steps", None)
        if steps is not None:
            raise ValueError(
                f"max_episode_steps={steps!r}: the compiled vector env does not cut episodes "
                "short; allowed: max_hands (the hands of a match episode) and None here, or "
                f"{_SYNC}, whose envs gymnasium.make_vec wraps in TimeLimit"
            )
        if rule_overrides.get("mask_in_obs", False) is not False:
            # The single env's dict observations (for Tianshou); batches here stay arrays.
            raise ValueError(
                f"mask_in_obs={rule_overrides['mask_in_obs']!r}: the compiled vector env "
                "gives the masks by action_masks() and infos['action_mask']; allowed: "
                f"False, or {_SYNC}, whose single envs take mask_in_obs=True"
            )
        rule_overrides.pop("mask_in_obs", None)
        if render_mode is not None:
            raise UnsupportedRenderMode(
                f"render_mode={render_mode!r}: the compiled vector env draws nothing; "
                f"allowed: None, or {_SYNC} for environments that draw"
            )
        try:
            from .batch import MAX_SIZE, checked_int
            from .vector import UnplayableOpponents, VectorEnv
        except ImportError as exc:
            raise ImportError(
                f"the compiled vector env needs numba ({exc}): pip install "
                f"'.[batch]' in the checkout, or pass {_SYNC} to gymnasium.make_vec"
            ) from None
        # Before anything is sized by it (the batch engine's bound on its slots).
        num_envs = checked_int("num_envs", num_envs, 1, MAX_SIZE)
        rules = resolve_rules(rules, preset, rule_overrides)
        n = rules.players
        if illegal_reward is None:  # the batch's "raise instead", which the single env lacks
            raise ValueError("illegal_reward=None is not allowed; allowed: a finite number")
        if seat is not None:
            fixed = seat_value(seat, n)
            if fixed is None:
                raise ValueError(f"seat must be None or a seat from 0 to {n - 1}, got {seat!r}")
            seat = fixed
        self.rules = rules
        self.metadata = {**self.metadata, "autoreset_mode": autoreset_mode}
        self.autoreset_mode = autoreset_mode
        self.fixed_seat = seat
        self.render_mode = None
        # Each slot's stream of the single env's np_random, and the seed it was started
        # from (np_random_seed); None until the slot's first episode or seeded reset.
        self._streams: list[np.random.Generator | None] = [None] * num_envs
        self._stream_seeds: list[int | None] = [None] * num_envs
        self._first_seeds: list[int | None] = [None] * num_envs
        try:
            self.venv = VectorEnv(
                num_envs,
                rules,
                mode="learner",
                episode=episode,
                reward=reward,
                match_bonus=match_bonus,
                max_hands=max_hands,
                learner=seat,
                opponents=opponents,
                illegal_reward=illegal_reward,
                # The single env's seeding: each slot draws its episodes from its own stream.
                episode_starts=self._episode_starts,
            )
        except UnplayableOpponents as exc:
            raise UnplayableOpponents(
                f"{exc}; or pass {_SYNC} to gymnasium.make_vec, whose single envs play "
                "bots that move from a seat's view, agents and one spec per seat"
            ) from None
        # A callable opponents can raise in the middle of a step or reset (and so can
        # rules whose deals may all end before the learner moves): then this env saves
        # what they change, its slots' seed streams with the batch's, and puts it back
        # (the batch would save its own only: this env's episode starts never raise).
        self._guarded = self.venv._may_fail_midway
        self.venv._guarded = False
        # Until a seeded reset, the opponents' streams start from fresh entropy, as the
        # deals do.
        self.venv.seed_opponents(
            [int(x) for x in np.random.SeedSequence().generate_state(num_envs, np.uint64)]
        )
        self.illegal_reward = float(self.venv.illegal_reward)  # type: ignore[arg-type]
        self.num_envs = num_envs
        self.single_observation_space = spaces.Box(0.0, 1.0, (self.venv.obs_size,), np.float32)
        self.single_action_space = spaces.Discrete(self.venv.num_actions)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._started = False
        # Next-step auto-reset: the slots whose episode ended on the last step, whose
        # next action is ignored (their new episode is under way, its first turn shown),
        # and the last observations that step showed for them (a reset of other slots
        # shows them again).
        self._resetting = np.zeros(num_envs, np.bool_)
        self._final_obs: np.ndarray | None = None

    # -- gymnasium API --------------------------------------------------------------------

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | np.ndarray | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start every slot's episode. ``seed``: an int (slot ``i`` gets ``seed + i``), a
        sequence (list, tuple, range, 1-d array) with one seed or None per slot, or
        None; each seed from 0 to 2**64 - 1 (``seed + i`` too), else ``ValueError``.

        ``options``: None, or ``{"reset_mask": mask}`` as ``SyncVectorEnv`` takes it (a
        bool array of shape ``(num_envs,)``, at least one True; after a first reset of
        every slot): only those slots start an episode, each with its own seed; the
        others go on, their observation as the last step showed it, and the infos
        hold the reset slots only (``infos["_" + key]`` is the mask); a malformed mask
        is refused with a ``ValueError`` before anything changes. Other keys are
        ignored, as the single env ignores its ``options`` (and ``SyncVectorEnv``
        passes them on to it)."""
        mask = self._reset_mask(options)
        seeds = self._slot_seeds(seed)
        return all_or_nothing(self._guarded, self._save, self._restore, self._reset, seeds, mask)

    def _reset(
        self, seeds: list[int | None], mask: np.ndarray | None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        B = self.num_envs
        starting = np.ones(B, np.bool_) if mask is None else mask
        # A slot whose episode ended on the last step (next-step auto-reset) already
        # holds its next episode, drawn from its stream as a single env's reset draws
        # it: reset without a seed, that is the episode (a second deal would draw the
        # stream twice, where a single env reset once).
        again = starting & ~(self._resetting & np.array([s is None for s in seeds]))
        for b in np.flatnonzero(again).tolist():
            s = seeds[b]
            if s is not None:
                self._streams[b], self._stream_seeds[b] = seeding.np_random(s)
            self._first_seeds[b] = s
        # The opponents' streams replay from the seeds too, each slot's from its own.
        self.venv.seed_opponents([s if again[b] else None for b, s in enumerate(seeds)])
        if again.any():
            obs, _, seats = self.venv.reset(mask=None if again.all() else again)
        else:
            obs, _, seats = self.venv._observe_all()
        infos = self._infos(seats)
        if mask is not None:
            kept = ~mask & self._resetting
            if kept.any():
                assert self._final_obs is not None  # set by the step that ended them
                obs[kept] = self._final_obs[kept]
            # As SyncVectorEnv: the infos of the slots reset, zeros elsewhere.
            for key in [key for key in infos if not key.startswith("_")]:
                infos[key][~mask] = 0
                infos["_" + key] = mask.copy()
        self._started = True
        self._resetting &= ~starting
        return obs, infos

    def _reset_mask(self, options: dict[str, Any] | None) -> np.ndarray | None:
        """The ``reset_mask`` of ``options`` (None: every slot), checked by the batch
        env's check of a reset's mask. Other keys are ignored: the single env accepts
        options and uses none, and ``SyncVectorEnv`` passes them on to it."""
        if options is None:
            return None
        if not isinstance(options, dict):
            raise ValueError(
                f"options={shown_value(options)} is not allowed; allowed: None or a dict "
                "(its 'reset_mask' is used, other keys are ignored)"
            )
        if "reset_mask" not in options:
            return None
        return self.venv._reset_mask(options["reset_mask"], "options['reset_mask']")

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """One action per slot; an illegal one ends that slot's episode with
        ``illegal_reward``, as in the single env: ``infos["illegal_action"]`` is 1 for
        the slot with next-step auto-reset (the ended episode's infos stand in for the
        new one's until the next step), ``infos["final_info"]["illegal_action"]`` with
        same-step auto-reset."""
        if not self._started:
            raise RuntimeError("step() before reset(); allowed: reset() first")
        seats_before = self.venv.learner.copy()
        skip = self._resetting.copy() if self._resetting.any() else None
        result = all_or_nothing(
            self._guarded, self._save, self._restore, self.venv.step, actions, skip
        )
        obs, _, seats, rewards, terminated, truncated, vinfos = result
        infos = self._infos(seats)
        next_step = self.autoreset_mode == AutoresetMode.NEXT_STEP
        if next_step:
            self._resetting = terminated | truncated
        if vinfos and next_step:
            # The ended episodes' last observations and infos stand in for the new
            # episodes' first, which the next step returns.
            ended = vinfos["_final_observation"]
            self._final_obs = vinfos["final_observation"]
            obs[ended] = self._final_obs[ended]
            for key, values in self._final_infos(vinfos, seats_before).items():
                infos[key][ended] = values[ended]
        elif vinfos:
            ended = vinfos["_final_observation"]
            final_obs = np.full(self.num_envs, None, dtype=object)
            for b in np.flatnonzero(ended).tolist():
                final_obs[b] = vinfos["final_observation"][b]
            final = {
                key: np.where(ended if values.ndim == 1 else ended[:, None], values, 0)
                for key, values in self._final_infos(vinfos, seats_before).items()
            }
            for key in list(final):
                final["_" + key] = ended.copy()
            infos["final_obs"] = final_obs
            infos["_final_obs"] = ended.copy()
            infos["final_info"] = final
            infos["_final_info"] = ended.copy()
        return obs, rewards.astype(np.float64), terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """Each slot's legal actions in the game under way, ``(num_envs, num_actions)``
        bool (with next-step auto-reset, for a slot whose episode just ended: those of
        the next episode's first turn, which the next step shows; ``infos["action_mask"]``
        is the single env's, all False at an episode's end)."""
        return self.venv.action_masks(bool)

    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Each slot's seed of its random stream, as ``SyncVectorEnv`` gives its single
        envs' ``np_random_seed``: the seed of the last seeded reset of the slot, or the
        fresh entropy its stream was started from (now, if it had none, as a single
        env's is)."""
        return tuple(self._stream(b)[1] for b in range(self.num_envs))

    @property  # type: ignore[misc]  # SyncVectorEnv's too: a tuple, no setter
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """Each slot's random stream (its deals and learner seats), as ``SyncVectorEnv``
        gives its single envs' ``np_random``."""
        return tuple(self._stream(b)[0] for b in range(self.num_envs))

    def render(self) -> None:
        return None

    def close_extras(self, **kwargs: Any) -> None:
        pass

    # -- internals ------------------------------------------------------------------------

    def _save(self) -> tuple[Any, ...]:
        """Copies of what a step or reset changes: the batch's slots, this env's."""
        streams = [None if s is None else s.bit_generator.state for s in self._streams]
        started = (self._started, self._resetting.copy())
        seeds = (list(self._first_seeds), list(self._stream_seeds))
        return self.venv._save(), streams, seeds, started

    def _restore(self, saved: tuple[Any, ...]) -> None:
        venv, streams, (first_seeds, stream_seeds), (started, resetting) = saved
        self.venv._restore(venv)
        for b, state in enumerate(streams):
            stream = self._streams[b]
            if state is None:
                self._streams[b] = None
            elif stream is not None:
                stream.bit_generator.state = state
        self._first_seeds = first_seeds
        self._stream_seeds = stream_seeds
        self._started = started
        self._resetting[...] = resetting

    def _slot_seeds(self, seed: int | Sequence[int | None] | np.ndarray | None) -> list[int | None]:
        """One seed or None per slot (see :meth:`reset`), read as the batch env reads
        them (:func:`~matador_env.vector.slot_seeds`)."""
        from .vector import slot_seeds  # imported with the batch env by __init__

        if seed is None:
            return [None] * self.num_envs
        return slot_seeds(seed, self.num_envs, "seed", nones=True)

    def _stream(self, b: int) -> tuple[np.random.Generator, int]:
        """Slot ``b``'s random stream and its seed; one from fresh entropy if it has none
        yet (as a single env's ``np_random`` starts)."""
        stream, seed = self._streams[b], self._stream_seeds[b]
        if stream is None or seed is None:
            stream, seed = seeding.np_random()
            self._streams[b], self._stream_seeds[b] = stream, seed
        return stream, seed

    def _episode_starts(self, slots: np.ndarray) -> tuple[list[int], list[int]]:
        """Each slot's next game seed and learner seat, drawn as ``MatadorSingleEnv.reset``
        draws them: the seed given to reset, else one from the stream; then the seat,
        then the seed of the single env's opponent stream (drawn to stay in step)."""
        n = self.rules.players
        seeds, seats = [], []
        for b in slots.tolist():
            stream = self._stream(b)[0]
            game_seed = self._first_seeds[b]
            self._first_seeds[b] = None
            if game_seed is None:
                game_seed = int(stream.integers(2**63))
            seats.append(
                self.fixed_seat if self.fixed_seat is not None else int(stream.integers(n))
            )
            stream.integers(2**63)
            seeds.append(game_seed)
        return seeds, seats

    def _final_infos(self, vinfos: dict[str, np.ndarray], seats: np.ndarray) -> dict[str, Any]:
        """The single env's infos at the end of each episode that ended on this step
        (rows of the others are meaningless), from the batch env's infos."""
        final = {key: vinfos["final_results"][:, j] for j, key in enumerate(INFO_KEYS)}
        final["seat"] = seats.astype(np.int64)
        illegal = vinfos.get("illegal_action", np.zeros(self.num_envs, np.bool_))
        final["illegal_action"] = illegal.astype(np.int64)
        # A finished episode's mask is all zeros (the single env's).
        final["action_mask"] = np.zeros((self.num_envs, self.venv.num_actions), np.int8)
        return final

    def _infos(self, seats: np.ndarray) -> dict[str, Any]:
        """The single env's infos of every slot after a reset or a legal action,
        batched as Gymnasium batches them (a slot whose episode ended gets the ended
        episode's, from :meth:`_final_infos`, in ``step``)."""
        B = self.num_envs
        infos: dict[str, Any] = {}
        for key, values in self.venv.results(seats).items():
            infos[key] = values
        infos["seat"] = seats.astype(np.int64)
        infos["illegal_action"] = np.zeros(B, np.int64)
        infos["action_mask"] = self.venv.action_masks()  # a copy
        for key in list(infos):
            infos["_" + key] = np.ones(B, np.bool_)
        return infos
