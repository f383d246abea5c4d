"""Self-play: the learner's seat against an opponent drawn from a pool each episode.

The pool holds the hand-written baselines and frozen snapshots of the learner,
exported to ``<run>/pool/step_<N>/policy.onnx`` as training goes on.

Sampling schedule (one opponent per episode; it plays every other seat):

- while there is no snapshot yet, only baselines, by ``baseline_weights``;
- afterwards, with probability ``snapshot_share`` a snapshot, else a baseline;
  a snapshot is the newest one with probability ``latest_share``, else one drawn
  uniformly from the newest ``pool_size``. Snapshots play by sampling their own
  action distribution (stochastic opponents give the learner varied play);
  baselines play as they always do.

With ``--vector-envs`` the opponents play inside the batch (:class:`BatchOpponentPool`):
the same schedule per slot and episode, with ``random`` the only baseline.

Snapshots are found by listing the pool folder at each reset, so environments in
other processes (``SubprocVecEnv``) see new snapshots without being told, and a
resumed run picks up the snapshots it had written.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.utils import EzPickle

from agents import make_agent
from matador_env.engine import Move, SeatView
from matador_env.engine.tiles import is_json_int
from matador_env.gym_env import MatadorSingleEnv
from matador_env.policy import SIDECAR_FILE, OnnxPolicy, load_policy
from matador_env.values import as_seed

from .checkpoint import generator_from_state, random_state, random_state_ok, set_random_state

DEFAULT_BASELINES = {"expert": 0.8, "greedy": 0.1, "random": 0.1}


_SNAPSHOT_FOLDER = re.compile(r"step_[0-9]+")


def is_snapshot_folder(name: str) -> bool:
    """Whether ``name`` is that of a snapshot's folder in a pool: ``step_`` and the
    learner's steps when it was taken (never a path)."""
    return _SNAPSHOT_FOLDER.fullmatch(name) is not None


def snapshot_dirs(pool_dir: Path) -> list[Path]:
    """The pool's snapshots, oldest first (``step_<N>`` folders with a finished export).
    Other folders are not snapshots (a copy kept as ``step_512.backup`` ended every
    environment's reset with a ValueError)."""
    if not pool_dir.is_dir():
        return []
    found = [
        d
        for d in pool_dir.iterdir()
        if d.is_dir() and is_snapshot_folder(d.name) and (d / SIDECAR_FILE).is_file()
    ]
    return sorted(found, key=lambda d: int(d.name.removeprefix("step_")))


class _Schedule:
    """The snapshot half of the sampling schedule above, shared by both pools."""

    def __init__(
        self,
        pool_dir: str | Path | None,
        snapshot_share: float,
        latest_share: float,
        pool_size: int,
    ) -> None:
        self.pool_dir = Path(pool_dir) if pool_dir is not None else None
        for name, share in (("snapshot_share", snapshot_share), ("latest_share", latest_share)):
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"{name} must be within [0, 1], got {share}")
        if pool_size < 1:
            raise ValueError(f"pool_size must be >= 1, got {pool_size}")
        self.snapshot_share = snapshot_share
        self.latest_share = latest_share
        self.pool_size = pool_size
        self._snapshots: dict[Path, OnnxPolicy] = {}

    def _snapshot_dirs(self) -> list[Path]:
        return snapshot_dirs(self.pool_dir) if self.pool_dir is not None else []

    def _draw_snapshot(
        self,
        snaps: list[Path],
        uniform: Callable[[], float],
        choose: Callable[[list[Path]], Path],
    ) -> Path | None:
        """The snapshot a new episode plays against, or None for a baseline."""
        if not snaps or uniform() >= self.snapshot_share:
            return None
        recent = snaps[-self.pool_size :]
        return recent[-1] if uniform() < self.latest_share else choose(recent)

    def _snapshot_policy(self, chosen: Path) -> OnnxPolicy:
        policy = self._snapshots.get(chosen)
        if policy is None:
            policy = self._snapshots[chosen] = load_policy(chosen)
        return policy

    def _named_snapshot(self, name: str) -> OnnxPolicy | None:
        """The policy of the opponent ``name`` when it names a snapshot (``snapshot:
        step_<N>``, as :func:`snapshot_name` writes it), None for any other name;
        ``ValueError`` when the pool holds no such snapshot."""
        if not name.startswith(_SNAPSHOT):
            return None
        # The name comes from a checkpoint's file: it must name a folder of this pool,
        # never a path to some other policy on the disk (of other rules, say).
        folder_name = name.removeprefix(_SNAPSHOT)
        if not is_snapshot_folder(folder_name):
            raise ValueError(
                f"opponent {name!r} is not a snapshot's name; allowed: snapshot:step_<N> (N digits)"
            )
        if self.pool_dir is None:
            raise ValueError(f"opponent {name!r}: this pool has no snapshot folder")
        folder = self.pool_dir / folder_name
        if not (folder / SIDECAR_FILE).is_file():
            raise ValueError(f"opponent {name!r}: {folder} holds no exported policy")
        return self._snapshot_policy(folder)


_SNAPSHOT = "snapshot:"


def snapshot_name(folder: Path) -> str:
    """The opponent name of the snapshot exported in ``folder``: ``snapshot:step_<N>``."""
    return f"{_SNAPSHOT}{folder.name}"


class OpponentPool(_Schedule):
    """Draws the opponent of each episode; plays as that opponent (``act(view, rng)``)."""

    def __init__(
        self,
        pool_dir: str | Path | None,
        baseline_weights: dict[str, float] | None = None,
        snapshot_share: float = 0.5,
        latest_share: float = 0.5,
        pool_size: int = 10,
    ) -> None:
        self.baseline_weights = dict(baseline_weights or DEFAULT_BASELINES)
        weights = self.baseline_weights.values()
        # Checked here, not by the first episode's draw (random.choices refuses them there).
        if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
            raise ValueError(
                "baseline_weights must be finite numbers >= 0, at least one above 0, got "
                f"{baseline_weights}"
            )
        super().__init__(pool_dir, snapshot_share, latest_share, pool_size)
        self._baselines: dict[str, Any] = {}
        self.current: str = next(iter(self.baseline_weights))
        self._current_agent: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # Agents and onnxruntime sessions are rebuilt in each process.
        state = dict(self.__dict__)
        state["_baselines"] = {}
        state["_snapshots"] = {}
        state["_current_agent"] = None
        return state

    def resample(self, rng: random.Random) -> str:
        """Draw the next episode's opponent; returns its name."""
        chosen = self._draw_snapshot(self._snapshot_dirs(), rng.random, rng.choice)
        if chosen is not None:
            self.current = snapshot_name(chosen)
            self._current_agent = self._snapshot_policy(chosen)
            return self.current
        names = list(self.baseline_weights)
        self.play_as(rng.choices(names, weights=[self.baseline_weights[n] for n in names])[0])
        return self.current

    def play_as(self, name: str) -> None:
        """Play as the opponent ``name`` (a :attr:`current` value) from now on: a resumed
        run goes on against the opponent its episode had drawn."""
        snapshot = self._named_snapshot(name)
        if snapshot is not None:
            self._current_agent = snapshot
        elif name in self.baseline_weights:
            agent = self._baselines.get(name)
            if agent is None:
                agent = self._baselines[name] = make_agent(name)
            self._current_agent = agent
        else:
            allowed = ", ".join([*self.baseline_weights, "snapshot:step_<N>"])
            raise ValueError(f"opponent {name!r} is not in this pool; allowed: {allowed}")
        self.current = name

    def act(self, view: SeatView, rng: random.Random) -> Move:
        agent = self._current_agent
        if agent is None:
            self.resample(rng)
            agent = self._current_agent
        if isinstance(agent, OnnxPolicy):
            return agent.choose(view, rng)
        return agent.act(view, rng)  # type: ignore[no-any-return]


class SelfPlayEnv(MatadorSingleEnv):
    """:class:`MatadorSingleEnv` whose opponents come from an :class:`OpponentPool`."""

    def __init__(self, pool: OpponentPool, **kwargs: Any) -> None:
        self.pool = pool
        super().__init__(opponents=pool, **kwargs)
        EzPickle.__init__(self, pool, **kwargs)
        # Until a seeded reset, opponents are drawn from fresh entropy, as Gymnasium
        # seeds an unseeded env's np_random: copies of an unseeded env must not all
        # meet the same opponents in the same order.
        self._pool_rng = random.Random()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        seed = as_seed(seed)  # numpy's too
        if seed is not None:
            self._pool_rng = random.Random(seed ^ 0x5EED)
        self.pool.resample(self._pool_rng)
        # The opponent drawn for this hand is ``self.pool.current``; it stays out of the
        # infos, which hold numbers only (the env's contract for RL buffers).
        return super().reset(seed=seed, options=options)

    def live_state(self) -> dict[str, Any]:
        """This environment between two steps as plain JSON data, for a checkpoint: the
        game (its seed and every action since), the learner's seat, the state of each
        random generator and the episode's opponent. :meth:`restore_live_state` goes on
        from it as this environment would."""
        return {
            "game": {"seed": self.game.seed, "actions": list(self.game.actions)},
            "seat": self.seat,
            "over": self._over,
            "rng": random_state(self._rng),
            "pool_rng": random_state(self._pool_rng),
            "np_random": self.np_random.bit_generator.state,
            "np_random_seed": self._np_random_seed,
            "opponent": self.pool.current,
        }

    def restore_live_state(self, state: dict[str, Any]) -> np.ndarray:
        """Continue from a :meth:`live_state` (checked by :func:`check_live_state`);
        returns the learner's observation, as the step that led there did."""
        game = state["game"]
        self.game.replay(game["seed"], game["actions"])
        self.seat = state["seat"]
        set_random_state(self._rng, state["rng"])
        set_random_state(self._pool_rng, state["pool_rng"])
        self._np_random = generator_from_state(state["np_random"])
        self._np_random_seed = state["np_random_seed"]
        self.pool.play_as(state["opponent"])
        obs, _ = self._observe(0)
        self._started = True  # a checkpoint is taken in an episode reset() began
        self._over = state["over"]
        if self._over:
            self._mask = np.zeros_like(self._mask)
        return obs


def check_live_state(state: Any, env: SelfPlayEnv) -> None:
    """Raise ``ValueError`` naming what is wrong unless ``state`` is a
    :meth:`SelfPlayEnv.live_state` that ``env`` (of the run's rules and pool) can go
    on from; ``env`` is left in that state."""
    if not isinstance(state, dict):
        raise ValueError("not a JSON object")
    keys = {"game", "seat", "over", "rng", "pool_rng", "np_random", "np_random_seed", "opponent"}
    if set(state) != keys:
        raise ValueError(f"its keys are {sorted(state)}, not {sorted(keys)}")
    game = state["game"]
    if not (
        isinstance(game, dict)
        and set(game) == {"seed", "actions"}
        and is_json_int(game["seed"])
        and isinstance(game["actions"], list)
    ):
        raise ValueError("'game' is not {'seed': an int, 'actions': a list}")
    seat = state["seat"]
    if not (is_json_int(seat) and 0 <= seat < env.rules.players):
        raise ValueError(f"'seat' is {seat!r}, not a seat from 0 to {env.rules.players - 1}")
    for key in ("rng", "pool_rng"):
        if not random_state_ok(state[key]):
            raise ValueError(f"{key!r} is not the state of a random.Random")
    if not isinstance(state["over"], bool) or not isinstance(state["opponent"], str):
        raise ValueError("'over' is not true or false, or 'opponent' not a name")
    # Gymnasium's np_random_seed: None before any reset, -1 after a generator was
    # set from outside, else the seed of the last seeded reset.
    np_seed = state["np_random_seed"]
    if not (np_seed is None or (is_json_int(np_seed) and np_seed >= -1)):
        raise ValueError(
            f"'np_random_seed' is {np_seed!r}, not null, -1 or the seed of a reset (0 or more)"
        )
    try:
        env.restore_live_state(state)
    except (ValueError, TypeError, KeyError, OverflowError) as e:
        raise ValueError(f"it cannot be restored ({e})") from None
    if state["over"]:
        return  # ended (the game done, or the learner's illegal action): a step says so
    # A step on a game that is done finds no legal action and would be charged as the
    # learner's illegal action (and a masked policy has no action to sample).
    if env.game.done:
        raise ValueError("'over' is false, but its game has ended")
    if env.game.to_move != seat:
        raise ValueError(f"its game has seat {env.game.to_move} to move, not the learner's {seat}")


class BatchOpponentPool(_Schedule):
    """The pool's schedule for the slots of a learner-mode
    :class:`~matador_env.vector.VectorEnv`, played inside the batch.

    It is the ``opponents`` callable of a ``VectorEnv(..., opponent_slots=True)``.
    Each slot draws its opponent when its episode begins (the pool's schedule above,
    with ``"random"`` as the only baseline: the others need seat views, which the batch
    does not build) and keeps it for the episode. Random opponents choose uniformly
    among the legal actions; snapshots sample their own masked action distribution,
    one network call per snapshot for all its slots.
    """

    def __init__(
        self,
        pool_dir: str | Path | None,
        snapshot_share: float = 0.5,
        latest_share: float = 0.5,
        pool_size: int = 10,
        seed: int = 0,
    ) -> None:
        super().__init__(pool_dir, snapshot_share, latest_share, pool_size)
        self.rng = np.random.default_rng(seed)
        self._episode: dict[int, int] = {}
        self.current: dict[int, str] = {}
        """Each slot's opponent in its current episode: ``random`` or ``snapshot:step_<N>``."""
        self._policy: dict[int, OnnxPolicy | None] = {}

    def __call__(
        self, obs: np.ndarray, masks: np.ndarray, slots: np.ndarray, episodes: np.ndarray
    ) -> np.ndarray:
        new = [
            (s, e)
            for s, e in zip(slots.tolist(), episodes.tolist(), strict=True)
            if self._episode.get(s) != e
        ]
        if new:
            snaps = self._snapshot_dirs()
            for slot, episode in new:
                self._episode[slot] = episode
                self._draw(slot, snaps)
        actions = np.empty(len(slots), np.int64)
        legal = masks.astype(bool)
        by_policy: dict[int, list[int]] = {}
        for row, slot in enumerate(slots.tolist()):
            policy = self._policy[slot]
            by_policy.setdefault(id(policy), []).append(row)
        for rows_list in by_policy.values():
            rows = np.array(rows_list, np.int64)
            policy = self._policy[int(slots[rows[0]])]
            scores = self.rng.gumbel(size=(rows.size, masks.shape[1]))
            if policy is not None:
                # Gumbel-max: a sample of softmax(logits) over the legal actions.
                scores = scores + policy.logits(obs[rows]).astype(np.float64)
            actions[rows] = np.argmax(np.where(legal[rows], scores, -np.inf), axis=1)
        return actions

    def live_state(self) -> dict[str, Any]:
        """The pool between two steps as plain JSON data: its random generator's state
        and each slot's episode and opponent (:meth:`restore_live_state` reads it)."""
        return {
            "rng": self.rng.bit_generator.state,
            "slots": [[slot, self._episode[slot], self.current[slot]] for slot in self._episode],
        }

    def restore_live_state(self, state: Any) -> None:
        """Continue from a :meth:`live_state`; ``ValueError`` names what does not fit
        (then nothing changed)."""
        if not isinstance(state, dict) or set(state) != {"rng", "slots"}:
            raise ValueError("not a JSON object with the keys 'rng' and 'slots'")
        generator = generator_from_state(state["rng"])
        slots = state["slots"]
        if not isinstance(slots, list) or not all(
            isinstance(row, list)
            and len(row) == 3
            and all(isinstance(x, int) and not isinstance(x, bool) for x in row[:2])
            and isinstance(row[2], str)
            for row in slots
        ):
            raise ValueError("'slots' is not a list of [slot, episode, opponent] rows")
        seen: set[int] = set()
        for slot, episode, _ in slots:
            # A slot and an episode are indices and counts: never negative, a slot once.
            if slot < 0 or episode < 0:
                raise ValueError(
                    f"'slots' has the row [{slot}, {episode}, ...]; allowed: a slot and its "
                    "episode, each 0 or more"
                )
            if slot in seen:
                raise ValueError(f"'slots' lists slot {slot} twice; allowed: each slot once")
            seen.add(slot)
        policies: dict[int, OnnxPolicy | None] = {}
        for slot, _, name in slots:
            policies[slot] = self._named_snapshot(name)
            if policies[slot] is None and name != "random":
                raise ValueError(f"opponent {name!r}; allowed: random, snapshot:step_<N>")
        self.rng = generator
        self._episode = {slot: episode for slot, episode, _ in slots}
        self.current = {slot: name for slot, _, name in slots}
        self._policy = policies

    def _draw(self, slot: int, snaps: list[Path]) -> None:
        chosen = self._draw_snapshot(
            snaps, self.rng.random, lambda recent: recent[int(self.rng.integers(len(recent)))]
        )
        if chosen is not None:
            self._policy[slot] = self._snapshot_policy(chosen)
            self.current[slot] = snapshot_name(chosen)
        else:
            self._policy[slot] = None
            self.current[slot] = "random"
