"""Matador as a vector environment: ``num_envs`` games in lockstep on the batch engine.

Observations, action masks, actions and rewards are those of the AEC environment
(:mod:`matador_env.matador_v0`, whose docstring documents them) with the same
:data:`~matador_env.encoding.ENCODING_VERSION`: slot ``i`` seeded ``s`` shows, number
for number, what ``raw_env`` reset with ``seed=s`` shows after the same actions
(``tests/test_vector.py`` checks it). Everything is batched: ``float32``
observations of shape ``(num_envs, obs_size)`` and ``int8`` masks of shape
``(num_envs, num_actions)``, built by compiled kernels (:mod:`matador_env.batch`,
which needs ``numba``). numba loads them in the process's first :meth:`VectorEnv.reset`
and :meth:`VectorEnv.step`, from its cache; on a fresh install it compiles them first
(about 30 s), which a line on the error stream says (:data:`SLOW_FIRST_USE_NOTE`).

Two modes
=========

``VectorEnv(..., mode="self_play")``: every decision is returned. Each slot has one
seat to move; ``reset``/``step`` return that seat's observation and mask and the
seats (``seats``), ``step`` takes one action per slot and returns the rewards of
every seat, shape ``(num_envs, players)``. The arguments of learner mode below
(``learner``, ``opponents``, ``opponent_slots``, ``illegal_reward``) are refused
here with a ``ValueError`` naming them, not ignored.

``VectorEnv(..., mode="learner")``: one learner seat per slot (``learner=None``: a
random seat each episode, drawn from the slot's seed; or a fixed seat). The other
seats are played inside the batch by ``opponents`` until the learner is to move:

- ``"random"`` (the default): uniform over the legal actions, compiled;
- ``"trained"`` or ``"casual"`` (the shipped bot of the rules, as
  :func:`matador_env.bot.load_bot` names it; rules with none raise ``ValueError``
  naming the shipped configurations), or the path of an exported policy: its
  network on the batch's observations, the most likely legal action (``"casual"``:
  with the level's slips, a uniformly random legal action at that share of the
  opponents' moves). The
  heuristic ``"greedy"`` plays from views, not observations, and is refused here;
- a batched policy: ``callable(obs, masks) -> actions`` taking ``(m, obs_size)``
  float32 observations and ``(m, num_actions)`` int8 masks of the ``m`` slots whose
  opponent is to move, returning ``m`` legal actions. With ``opponent_slots=True`` it
  is called as ``callable(obs, masks, slots, episodes)``, also given each row's slot
  and that slot's episode number (a new number: a new episode), so that an opponent
  can be chosen per slot and kept for an episode.

The learner's reward is everything its seat received since its last action, as in
:class:`~matador_env.gym_env.MatadorSingleEnv`. With ``illegal_reward=R`` an illegal
learner action ends that slot's episode with reward ``R`` and the game as it was
(``infos["illegal_action"][i]`` is True), as the single env does; without it (the
default, and in self-play mode) an illegal action raises. :func:`sb3_vec_env` wraps
a learner environment as a stable-baselines3 ``VecEnv`` with ``action_masks()``,
which sb3-contrib's ``MaskablePPO`` trains on, and
:class:`~matador_env.gym_vector.MatadorVectorEnv` as a ``gymnasium.vector.VectorEnv``
(``gymnasium.make_vec("Matador-v0", ...)``).

Episodes and seeds
==================

``episode="hand"`` or ``"match"`` as in ``raw_env`` (a match ends at its target, or
is truncated after ``max_hands``). A finished slot resets itself at once (auto-reset):
the returned observation is the new episode's. ``infos`` is a dict in gymnasium's
vector convention: where an episode ended, ``infos["_final_observation"][i]`` is
True and ``infos["final_observation"][i]`` is the finished episode's last observation
for the seat that made the final move (learner mode: for the learner), and
``infos["final_results"][i]`` that seat's hand-result infos (the AEC env's
``INFO_KEYS``, in that order); the dict is empty on a step where no episode ended.
:meth:`VectorEnv.results` gives the same infos of the episodes under way. Slot ``i``'s
``e``-th episode (from 0) is seeded ``seeds[i] + e * num_envs`` (modulo 2**64), where
``seeds`` is given to :meth:`VectorEnv.reset` (an int ``s``: ``s + i``; default: ``seed
+ i``, with the constructor's ``seed``, an int, or None for fresh entropy), so every
slot replays and differs from the others; a reset without seeds goes on to each
slot's next episode. Runs whose seeds lie less than ``num_envs`` times their
episodes apart share deals (seed 1's slot 0 plays seed 0's slot 1): space them
widely, as ``python -m train`` does (its seed times 2**24). Seeds are the engine's,
integers from 0 to 2**64 - 1 (a negative one is refused: ``random.Random`` would
deal it as its absolute value); ``episode_starts`` replaces that rule (it seeds each
episode, and picks its learner seat, as it is dealt). The random opponents
(``"random"``, ``"casual"``) draw from one stream per slot, slot ``i``'s started from
``seed + i`` (:meth:`VectorEnv.seed_opponents` restarts them), so what a slot's
opponents play depends on its own seeds and actions only, never on the other slots'.
:meth:`VectorEnv.get_state` gives every slot between two steps as plain JSON data,
and :meth:`VectorEnv.set_state` on an environment of the same arguments goes on
from it with the same games (training's checkpoints save it).

Bad input (wrong shape or dtype, out-of-range or illegal actions, bad seeds)
raises a ``ValueError`` naming the slot and what was allowed; then nothing changed.
Integer arguments take Python or numpy integers (not bools), ``num_envs`` from 1 to
:data:`~matador_env.batch.MAX_SIZE` (2**24); ``match_bonus`` and ``illegal_reward``
finite numbers. A callable ``opponents`` (or ``episode_starts``)
that raises, or returns a wrong shape, no integers or an illegal action (-1 and a
``uint64`` past 2**63 included; a :class:`BatchError`), in the middle of
:meth:`VectorEnv.step` or :meth:`VectorEnv.reset` leaves every slot as it was before
that call too: with such callables each call first saves what it changes (the built-in
opponents never raise, and pay nothing for it). So does learner mode under rules that
deal a hand of one tile, where a hand can end before the learner's first turn (the
episode is then dealt again) and a slot whose 1000 deals in a row all do raises
``ValueError`` (``"these rules leave it no decision"``). The callable's own state is its own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, overload

import numpy as np

from .batch import (
    MAX_SIZE,
    BatchEngine,
    BatchError,
    array_from_state,
    as_array,
    checked_int,
    refuse_where,
    seeds_from_state,
)
from .batch import _kernels as K
from .encoding import ENCODING_VERSION
from .engine import Rules, set_tiles
from .engine.state import SEED_LIMIT, seed_number
from .engine.tiles import is_text, shown_value
from .matador_v0 import (
    DEFAULT_MAX_HANDS,
    EPISODE_KINDS,
    INFO_KEYS,
    TERMINATION_CODES,
    all_or_nothing,
    resolve_rules,
    reward_kind,
)
from .streams import NUMBA_FIRST_USE, note_when_slow
from .values import SEED_RANGE, finite_real, integer_value, same_value, seat_value

__all__ = [
    "VectorEnv",
    "BatchPolicy",
    "EpisodeStarts",
    "UnplayableOpponents",
    "sb3_vec_env",
    "ENCODING_VERSION",
]

BatchPolicy = Callable[..., Any]
"""``policy(obs, masks) -> actions`` over the rows of a batch (with ``opponent_slots``:
``policy(obs, masks, slots, episodes)``)."""

EpisodeStarts = Callable[[np.ndarray], tuple[list[int], list[int]]]
"""``starts(slots) -> (game_seeds, learner_seats)``: how the episodes that begin now in
``slots`` are seeded, one game seed and one learner seat per slot (learner mode)."""

StepResult = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]
]
"""What :meth:`VectorEnv.step` returns: ``(obs, masks, seats, rewards, terminated,
truncated, infos)``."""

MODES = ("self_play", "learner")
_MAX_EMPTY_DEALS = 1000

SLOW_FIRST_USE_NOTE = (
    f"matador_env.vector: compiling the batch engine's kernels ({NUMBA_FIRST_USE})"
)
"""What the vector env says on the error stream when the process's first reset or step
is still running after two seconds: numba loads the kernels there (in well under a
second from its cache), and compiles them first on a fresh install."""

_UNTIMED = {"reset", "step"}
"""The calls whose first run in this process has not yet gone through under the note
(numba loads a kernel once a process)."""

_NO_NOTE = contextlib.nullcontext()


@contextlib.contextmanager
def _noted(call: str) -> Iterator[None]:
    with note_when_slow(SLOW_FIRST_USE_NOTE):
        yield
    _UNTIMED.discard(call)  # only once it went through: a refused call loads nothing


def _first_use(call: str) -> contextlib.AbstractContextManager[None]:
    """:func:`~matador_env.streams.note_when_slow` around the process's first ``call``
    (``"reset"``, ``"step"``), nothing around the others (the hot path: one set lookup)."""
    return _noted(call) if call in _UNTIMED else _NO_NOTE


@overload
def slot_seeds(
    seeds: object,
    num_envs: int,
    name: str,
    *,
    nones: Literal[False] = False,
    sequences: bool = True,
) -> list[int]: ...
@overload
def slot_seeds(
    seeds: object, num_envs: int, name: str, *, nones: Literal[True], sequences: bool = True
) -> list[int | None]: ...
def slot_seeds(
    seeds: object, num_envs: int, name: str, *, nones: bool = False, sequences: bool = True
) -> list[int | None] | list[int]:
    """One seed per slot, read as both vector environments read their seeds: an int
    ``s`` seeds slot ``i`` with ``s + i``; a sequence (a list, tuple, range or 1-d
    array; refused with ``sequences=False``, as :class:`VectorEnv`'s ``seed`` is)
    gives one per slot, or with ``nones`` None for "no seed here" (the caller says
    what that means). Every seed is the engine's, 0 to 2**64 - 1, and so is ``s +
    i`` (it is refused, not wrapped round: a single env refuses such a seed too).
    :class:`BatchError` names ``name``, the value and what is allowed; the caller
    handles a ``seeds`` of None itself."""
    either = " or None" if nones else ""
    first_and_next = (
        f"an integer from 0 to {SEED_LIMIT - num_envs} (slot i is seeded {name} + i, "
        "and a seed is at most 2**64 - 1)"
    )
    allowed = (
        f"None, {first_and_next}, or a sequence of {num_envs} integers{either} (one per slot)"
        if sequences
        else f"{first_and_next} or None"
    )
    first = seeds if type(seeds) is int else integer_value(seeds)
    if first is not None:
        if not 0 <= first <= SEED_LIMIT - num_envs:
            raise BatchError(f"{name}={shown_value(seeds)} is not allowed; allowed: {allowed}")
        return [first + i for i in range(num_envs)]
    if (
        not sequences
        or is_text(seeds)
        or not isinstance(seeds, (Sequence, np.ndarray))
        or (isinstance(seeds, np.ndarray) and seeds.ndim != 1)
    ):
        raise BatchError(f"{name}={shown_value(seeds)} is not allowed; allowed: {allowed}")
    given = list(seeds)
    if len(given) != num_envs:
        raise BatchError(f"{name}: expected {num_envs} (one per slot), got {len(given)}")
    out: list[int | None] = []
    for i, value in enumerate(given):
        if value is None and nones:
            out.append(None)
            continue
        seed = seed_number(value)
        if seed is None:
            raise BatchError(
                f"{name}[{i}]={shown_value(value)} is the seed of slot {i}: "
                f"{shown_value(value)} is not allowed; allowed: {SEED_RANGE}{either}"
            )
        out.append(seed)
    return out


class UnplayableOpponents(ValueError):
    """Opponents that the vector env cannot play: it plays them from the batch's
    observations, so neither bots that move from a seat's view (``"greedy"``, agents)
    nor anything else that is not a name of a network bot or a batched callable."""


# What a slot keeps of the last hand that ended in its episode, for the infos of that
# name (the engine deals a match's next hand over it); the other INFO_KEYS are read
# from the hand count and the match state.
_LAST_HAND = ("termination", "winner", "winning_side", "points")
_NO_HAND = (0, -1, -1, 0)


class _BotOpponents:
    """The batch policy of a shipped or exported bot (see the module docstring): its
    network on the rows' observations; sampled at the bot's temperature if it has one,
    and a uniformly random legal action at the share ``slip`` of the rows (``casual``)."""

    def __init__(self, policy: Any, temperature: float, slip: float = 0.0) -> None:
        self.policy = policy
        self.temperature = temperature
        self.slip = slip

    def __call__(self, obs: np.ndarray, masks: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
        """The rows' actions; ``uniforms``: one draw in [0, 1) per row (sampled levels).

        One draw serves both choices: below ``slip`` it slips, and ``draw / slip`` is
        again uniform in [0, 1) and picks the legal action; above, ``(draw - slip) /
        (1 - slip)`` is, and samples the policy."""
        legal = masks != 0
        logits = np.where(legal, self.policy.logits(obs).astype(np.float64), -np.inf)
        slipped = uniforms < self.slip
        if self.temperature == 0:
            chosen = logits.argmax(axis=1)  # the first of equal maxima, as the bot's move
        else:
            # slip 1 leaves no draw to the policy: every row slips, and 0 would divide.
            draws = (uniforms - self.slip) / (1 - self.slip) if self.slip < 1 else uniforms
            chosen = _sampled(
                np.exp((logits - logits.max(axis=1, keepdims=True)) / self.temperature), draws
            )
        if slipped.any():
            rows = np.flatnonzero(slipped)
            chosen[rows] = _sampled(legal[rows].astype(np.float64), uniforms[rows] / self.slip)
        return chosen


def _sampled(weights: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Per row, the action drawn with probability proportional to its weight, by a
    draw in [0, 1): the first whose cumulative weight passes it (one with a weight)."""
    cumulative = weights.cumsum(axis=1)
    return (cumulative > draws[:, None] * cumulative[:, -1:]).argmax(axis=1)


def _named_opponents(name: str, rules: Rules) -> _BotOpponents:
    """The batch policy of the bot ``name`` (see the module docstring)."""
    from .bot import PolicyBot, load_bot  # only here: the bots need onnxruntime

    try:
        bot = load_bot(name, rules=rules)
    except ValueError as exc:  # BotError
        raise ValueError(f"opponents={name!r}: {exc}") from None
    if not isinstance(bot, PolicyBot):
        raise UnplayableOpponents(
            f"opponents={name!r} is not allowed: that bot plays from a seat's view, and the "
            "vector env's opponents play from observations; allowed: 'random', 'trained', "
            "'casual', an exported policy's path or a callable (obs, masks) -> actions"
        )
    return _BotOpponents(bot.policy, bot.temperature, bot.slip)


class VectorEnv:
    """``num_envs`` Matador games in lockstep (see the module docstring)."""

    def __init__(
        self,
        num_envs: int,
        rules: Rules | None = None,
        preset: str | None = None,
        *,
        mode: str = "self_play",
        episode: str = "hand",
        reward: str = "score",
        match_bonus: float | None = None,
        max_hands: int = DEFAULT_MAX_HANDS,
        learner: int | None = None,
        opponents: str | BatchPolicy = "random",
        opponent_slots: bool = False,
        illegal_reward: float | None = None,
        episode_starts: EpisodeStarts | None = None,
        seed: int | None = 0,
        **rule_overrides: Any,
    ) -> None:
        # First: the seed's range below depends on it.
        B = checked_int("num_envs", num_envs, 1, MAX_SIZE)
        rules = resolve_rules(rules, preset, rule_overrides)
        if mode not in MODES:
            raise ValueError(f"mode={mode!r} is not allowed; allowed: {MODES}")
        if episode not in EPISODE_KINDS:
            raise ValueError(f"episode={episode!r} is not allowed; allowed: {EPISODE_KINDS}")
        reward = reward_kind(reward)  # as raw_env reads it
        hands = integer_value(max_hands)
        if hands is None or hands < 1:
            raise ValueError(f"max_hands={max_hands!r} is not allowed; allowed: an integer >= 1")
        max_hands = hands
        n = rules.players
        # The learner-mode arguments are refused in self-play mode rather than ignored.
        random_opponents = isinstance(opponents, str) and opponents == "random"
        for name, value, unused in (
            ("learner", learner, learner is None),
            ("opponents", opponents, random_opponents),
            ("opponent_slots", opponent_slots, not opponent_slots),
            ("illegal_reward", illegal_reward, illegal_reward is None),
        ):
            if mode != "learner" and not unused:
                raise ValueError(
                    f"{name}={value!r} with mode={mode!r} is not allowed: only mode='learner' "
                    f"uses {name}; allowed: mode='learner', or leave {name} out"
                )
        if learner is not None:
            seat = seat_value(learner, n)
            if seat is None:
                raise ValueError(
                    f"learner={learner!r} is not allowed; allowed: None or 0 to {n - 1}"
                )
            learner = seat
        if not isinstance(opponent_slots, (bool, np.bool_)):  # 0 and 1 are no bools
            raise ValueError(f"opponent_slots={opponent_slots!r} is not allowed; allowed: a bool")
        opponent_slots = bool(opponent_slots)
        if opponent_slots and random_opponents:
            raise ValueError(
                "opponent_slots=True with opponents='random' is not allowed: only a callable "
                "opponents uses opponent_slots; allowed: a callable (obs, masks, slots, "
                "episodes) -> actions, or opponent_slots=False"
            )
        # What the saved states record of the opponents: the name given, or a callable.
        self._opponents_spec = opponents if isinstance(opponents, str) else "callable"
        if isinstance(opponents, str) and not random_opponents:
            if opponent_slots:
                raise ValueError(
                    f"opponents={opponents!r} with opponent_slots=True is not allowed; "
                    "allowed: a callable (obs, masks, slots, episodes) -> actions"
                )
            opponents = _named_opponents(opponents, rules)
        if not random_opponents and not callable(opponents):
            raise UnplayableOpponents(
                f"opponents={opponents!r} is not allowed; allowed: 'random', 'trained', "
                "'casual', an exported policy's path or a callable (obs, masks) -> actions"
            )
        if illegal_reward is not None:
            illegal_reward = finite_real("illegal_reward", illegal_reward)
        if match_bonus is not None:
            match_bonus = finite_real("match_bonus", match_bonus)
        if seed is None:
            # Fresh entropy, as a single env reset with seed=None (below 2**63, as it draws).
            seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> np.uint64(1))
        # Slot i is seeded seed + i, read as reset reads an int seed (an int only here).
        base_seeds = slot_seeds(seed, B, "seed", sequences=False)
        self.eng = BatchEngine(rules, B)
        self.rules = rules
        self.enc = self.eng.enc
        self.num_envs = B
        self.mode = mode
        self.episode = episode
        self.reward = reward
        if match_bonus is None:
            match_bonus = float(rules.target_score) if reward == "score" else 1.0
        self.match_bonus = float(match_bonus)
        self.max_hands = max_hands
        self.fixed_learner = learner
        self.opponents = opponents
        self.opponent_slots = opponent_slots
        self.illegal_reward = illegal_reward
        self._custom_starts = episode_starts
        # Only callables the user gave can raise in the middle of a step, and in learner
        # mode rules that deal a hand of one tile (a deal can then end before the
        # learner's first turn, and a slot whose deals all do raises, see
        # _play_opponents): then steps and resets save what they change first, and put
        # it back if one raises. The others pay nothing for it.
        self._user_opponents = callable(opponents) and not isinstance(opponents, _BotOpponents)
        no_decision = mode == "learner" and min(rules.tiles_per_seat) <= 1
        self._may_fail_midway = self._user_opponents or no_decision
        self._guarded = self._may_fail_midway or episode_starts is not None
        self.obs_size = self.enc.obs_size
        self.num_actions = self.enc.num_actions
        self.encoding_version = ENCODING_VERSION
        self._fc = np.array(
            [self.enc.inv_tiles, self.enc.inv_players, self.enc.target_value, 0.0], np.float64
        )
        self._fc[K.F_SCORE_SCALE] = self.enc.score_scale
        self._top = float(sum(t.pips for t in set_tiles(rules.set_max)))
        # Per winning side, each seat's hand reward per point won (per hand for "win").
        self._per_point = np.stack(
            [self._share(_on_side(rules, w), 1.0, reward) for w in range(rules.sides)]
        ).astype(np.float64)
        self._base_seeds = base_seeds
        self._episodes = np.zeros(B, np.int64)
        self._hands = np.zeros(B, np.int64)
        self.learner = np.zeros(B, np.int64)
        self._with_scores = np.zeros(B, np.bool_)
        self._masks = np.zeros((B, self.num_actions), np.int8)
        self._obs = np.zeros((B, self.obs_size), np.float32)
        self._all = np.arange(B, dtype=np.int64)
        self._last_hand = np.zeros((B, len(_LAST_HAND)), np.int64)
        self._sides = np.array([rules.side_of(s) for s in range(rules.players)], np.int64)
        self._rng = np.zeros(B, np.uint64)  # each slot's opponents' own stream
        self.seed_opponents(base_seeds)
        self._started = False

    # -- public API -------------------------------------------------------------------------

    def reset(
        self,
        seeds: int | Sequence[int] | np.ndarray | None = None,
        *,
        mask: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start every slot's first episode; ``(obs, masks, seats)`` of the seats to move
        (learner mode: the learners). ``seeds``: an int ``s`` (slot ``i`` is seeded
        ``s + i``), a sequence of one int per slot (a list, tuple, range or 1-d array),
        or None; each seed from 0 to 2**64 - 1. Seeds restart each slot's sequence of
        episodes (its ``e``-th from 0 is seeded ``seeds[i] + e * num_envs``); None goes
        on with it, as a gymnasium env's ``reset()`` goes on with its random stream:
        a slot starts the episode after the one it was playing (the first reset, the
        constructor's ``seed + i``), so another reset never deals the same games again
        unless it is given the seeds again.

        ``mask`` (a numpy bool array, one per slot, at least one True, as
        ``SyncVectorEnv`` takes a ``reset_mask``): start only those slots (with
        ``seeds`` their sequences restart from them, without they go on); the others
        go on as they are, and are returned as they stand. Only after a first reset of
        every slot."""
        B = self.num_envs
        base_seeds = None if seeds is None else slot_seeds(seeds, B, "seeds")
        slots = self._all if mask is None else np.flatnonzero(self._reset_mask(mask, "mask"))
        with _first_use("reset"):
            return all_or_nothing(
                self._guarded, self._save, self._restore, self._reset, base_seeds, slots
            )

    def _reset_mask(self, mask: object, name: str) -> np.ndarray:
        """A copy of a reset's ``mask``, checked as ``SyncVectorEnv`` checks its
        ``reset_mask`` (a numpy bool array of shape ``(num_envs,)``, at least one True)
        and refused before the first reset of every slot, when the others have no
        episode to go on with; :class:`BatchError` naming ``name``. The one check of
        both vector envs (:class:`~matador_env.gym_vector.MatadorVectorEnv` names its
        ``options['reset_mask']``)."""
        B = self.num_envs
        if not (
            isinstance(mask, np.ndarray)
            and mask.shape == (B,)
            and mask.dtype == np.bool_
            and mask.any()
        ):
            raise BatchError(
                f"{name}={shown_value(mask)} is not allowed; allowed: a numpy bool array of "
                f"shape ({B},) with at least one True (as SyncVectorEnv takes a reset_mask)"
            )
        if not self._started and not mask.all():
            raise BatchError(
                f"{name}: a reset of some slots before the first reset of every slot (the "
                "others have no episode to go on with); allowed: reset() every slot first"
            )
        return mask.copy()

    def _reset(
        self, base_seeds: list[int] | None, slots: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if base_seeds is not None:
            for b in slots.tolist():
                self._base_seeds[b] = base_seeds[b]
            self._episodes[slots] = 0
        elif self._started:
            # Unseeded, each slot goes on to the next episode of its sequence, as a
            # gymnasium env's reset() goes on with its random stream: a reset per
            # learn() or evaluation must not deal the same games again.
            self._episodes[slots] += 1
        self._start(slots)
        self._started = True
        if self.mode == "learner":
            B = self.num_envs
            # Only the slots started now have opponents to move: the others' learners
            # are to move already.
            fresh = np.zeros(B, np.bool_)
            fresh[slots] = True
            none = np.zeros(B, np.bool_)
            self._play_opponents(np.zeros(B, np.float32), {}, fresh, none, none)
        return self._observe_all()

    def step(
        self, actions: np.ndarray | Sequence[int], skip: np.ndarray | None = None
    ) -> StepResult:
        """Apply one action per slot.

        Returns ``(obs, masks, seats, rewards, terminated, truncated, infos)``. In
        self-play mode ``rewards`` is ``(num_envs, players)``; in learner mode it is the
        learner's, ``(num_envs,)``. Observations are of the next episode where one ended.
        ``skip`` (a bool per slot) leaves those slots as they are, whatever their action.

        Every slot not skipped has a seat to move, so its action is one of that seat's
        legal actions: another one (-1 included, which the batch engine reads as
        "leave the slot") raises :class:`BatchError` naming the slot, the action and
        the legal ones, and nothing changes; with ``illegal_reward`` it is an illegal
        action instead (any integer, a ``uint64`` past 2**63 too), as in the single env.
        """
        if not self._started:
            raise BatchError("step() before reset(); allowed: reset() first")
        eng = self.eng
        seats = eng.to_move.copy()
        B = self.num_envs
        lenient = self.illegal_reward is not None
        acts = eng.action_array(actions, self.num_actions if lenient else None)
        if skip is not None:
            skip = as_array(skip, "skip", f"{B} bools (one per slot)")
            if skip.shape != (B,) or skip.dtype != np.bool_:
                raise BatchError(f"skip must be {B} bools (one per slot), got {skip!r}")
        if not lenient and acts.min() < 0:
            # The engine takes -1 as "leave the slot": here only a skipped slot may.
            negative = acts < 0
            if skip is not None:
                negative &= ~skip
            if negative.any():
                b = int(np.flatnonzero(negative)[0])
                raise BatchError(eng._why(b, int(acts[b])))
        if skip is not None:
            acts[skip] = -1  # the engine leaves a slot with -1 as it is
        illegal = None
        if lenient:
            illegal = ~eng.legal(acts)
            if skip is not None:
                illegal &= ~skip
            acts[illegal] = -1
        with _first_use("step"):
            return all_or_nothing(
                self._guarded, self._save, self._restore, self._step, acts, seats, illegal
            )

    def _step(self, acts: np.ndarray, seats: np.ndarray, illegal: np.ndarray | None) -> StepResult:
        """:meth:`step` once its input is checked (``acts``: -1 where nothing is played)."""
        eng = self.eng
        B = self.num_envs
        ended = eng.step(acts)
        n = self.rules.players
        seat_rewards = np.zeros((B, n), np.float32)
        terminated = np.zeros(B, np.bool_)
        truncated = np.zeros(B, np.bool_)
        infos: dict[str, np.ndarray] = {}
        self._hand_ended(ended, seat_rewards, terminated, truncated)
        # Read before a finished slot restarts (a random learner seat is drawn again).
        learner_rewards = seat_rewards[self._all, self.learner]
        if illegal is not None and illegal.any():
            # The single env's rule: an illegal action ends the episode, state unchanged.
            learner_rewards[illegal] = self.illegal_reward
            terminated[illegal] = True
            infos["illegal_action"] = illegal
        done = np.flatnonzero(terminated | truncated)
        fresh = np.zeros(B, np.bool_)
        fresh[done] = True
        if done.size:
            observer = self.learner[done] if self.mode == "learner" else seats[done]
            self._final(infos, done, observer, self._observe(done, observer))
            self._episodes[done] += 1
            self._start(done)
        if self.mode == "learner":
            rewards = learner_rewards
            self._play_opponents(rewards, infos, fresh, terminated, truncated)
            obs, masks, seats_now = self._observe_all()
            return obs, masks, seats_now, rewards, terminated, truncated, infos
        obs, masks, seats_now = self._observe_all()
        return obs, masks, seats_now, seat_rewards, terminated, truncated, infos

    def action_masks(self, dtype: type = np.int8) -> np.ndarray:
        """The legal actions of the seats to move, ``(num_envs, num_actions)`` int8 (or
        ``dtype``, e.g. ``bool``): a copy, the caller's to keep (the next step
        overwrites the environment's own)."""
        return self._masks.astype(dtype)

    def results(
        self, seats: np.ndarray | Sequence[int], slots: np.ndarray | Sequence[int] | None = None
    ) -> dict[str, np.ndarray]:
        """The numeric hand-result infos of the AEC environment (``INFO_KEYS``: the last
        hand that ended in the slot's episode, and whether the seat's side won the
        match) of ``slots`` (default: every slot), for seat ``seats[j]`` of slot
        ``slots[j]``; each an ``int64`` array with one entry per slot."""
        rows = self._all if slots is None else np.asarray(slots, np.int64)
        eng = self.eng
        out = {"hands": self._hands[rows]}
        out.update((key, self._last_hand[rows, j]) for j, key in enumerate(_LAST_HAND))
        # A slot that plays hands never starts a match: its match state stays zero.
        out["match_over"] = eng.mst[rows, K.M_OVER].astype(np.int64)
        won = eng.winners[rows, self._sides[np.asarray(seats, np.int64)]]
        out["match_won"] = ((out["match_over"] == 1) & (won != 0)).astype(np.int64)
        return out

    def seed_opponents(self, seed: int | Sequence[int | None] | np.ndarray | None) -> None:
        """Restart the opponents' random streams (``"random"`` and ``"casual"``): an int
        ``s`` seeds slot ``i``'s with ``s + i``, as the constructor's ``seed`` does; a
        list gives one seed per slot (None: that slot's stream goes on). Each slot has
        its own stream, so a slot's opponents play the same moves whatever the other
        slots' seeds and actions. Seeds as :meth:`reset` takes them (None: every
        stream goes on)."""
        if seed is None:
            return
        per_slot = slot_seeds(seed, self.num_envs, "opponent seeds", nones=True)
        for b, s in enumerate(per_slot):
            if s is not None:
                K.seed_stream(self._rng[b : b + 1], np.uint64(s), 0)

    # What a slot holds between two steps, beyond the engine's arrays.
    _STATE_ARRAYS = ("_episodes", "_hands", "learner", "_with_scores", "_last_hand", "_rng")

    def get_state(self) -> dict[str, Any]:
        """Every slot between two steps as plain JSON data (lists of numbers): the batch
        engine's hands and matches, each slot's episode counter, seeds, learner seat and
        opponents' random stream, and (``"arguments"``) the arguments the environment
        was made with that its future depends on. :meth:`set_state` goes on from it as
        this environment would; a callable ``opponents`` keeps its own state (save it
        beside this)."""
        if not self._started:
            raise BatchError("get_state() before reset(); allowed: reset() first")
        state: dict[str, Any] = {
            name.lstrip("_"): getattr(self, name).tolist() for name in self._STATE_ARRAYS
        }
        state["base_seeds"] = list(self._base_seeds)
        state["engine"] = self.eng.get_state()
        state["arguments"] = self._arguments()
        return state

    def set_state(self, state: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Continue from a :meth:`get_state` of an environment of the same arguments;
        returns ``(obs, masks, seats)`` as the step that led there did.

        ``BatchError`` names what does not fit, and then nothing changed: a state
        saved under other arguments (``"arguments"`` and the engine's rules, size and
        encoding version, each named with both values; a state written before they
        were recorded holds none, and is taken on its values alone), and values this
        environment never holds between two steps: the engine's (see
        :meth:`BatchEngine.set_state`), a learner that is no seat (or not the fixed
        one, or not the seat to move), a random stream's state of 0 (xorshift never
        leaves it), seeds outside 0 to 2**64 - 1, a negative counter (or an episode
        counter at 2**63 - 1, which the next episode would wrap round), a hand over, a
        match over or a slot out of step with the episode kind."""
        if not isinstance(state, dict):
            raise BatchError(f"state: expected a dict from get_state(), got {type(state).__name__}")
        self._check_arguments(state)
        arrays = {
            name: array_from_state(state, name.lstrip("_"), getattr(self, name))
            for name in self._STATE_ARRAYS
        }
        base_seeds = seeds_from_state(state, "base_seeds", self.num_envs)
        engine = state.get("engine")
        if not isinstance(engine, dict):
            raise BatchError("state: 'engine' is not the engine's get_state()")
        loaded = self.eng._read_state(engine)
        self._check_slots(arrays, loaded)
        self.eng._put_state(loaded)
        for name, value in arrays.items():
            getattr(self, name)[...] = value
        self._base_seeds = base_seeds
        self._started = True
        return self._observe_all()

    def _arguments(self) -> dict[str, Any]:
        """The arguments a saved state belongs to (beyond the engine's rules and size):
        every one that changes what a slot does next."""
        return {
            "num_envs": self.num_envs,
            "encoding_version": ENCODING_VERSION,
            "mode": self.mode,
            "learner": self.fixed_learner,
            "episode": self.episode,
            "reward": self.reward,
            "match_bonus": self.match_bonus,
            "max_hands": self.max_hands,
            "illegal_reward": self.illegal_reward,
            "opponents": self._opponents_spec,
            "opponent_slots": self.opponent_slots,
            "episode_starts": self._custom_starts is not None,
        }

    def _check_arguments(self, state: dict[str, Any]) -> None:
        if "arguments" not in state:
            return  # written before they were recorded: the values are checked alone
        saved = state["arguments"]
        mine = self._arguments()
        if not isinstance(saved, dict) or set(saved) != set(mine):
            raise BatchError(
                f"state: 'arguments' is {shown_value(saved)}; allowed: a mapping of "
                f"{', '.join(mine)} (as get_state() writes)"
            )
        for key, value in mine.items():
            if not same_value(saved[key], value):
                raise BatchError(
                    f"state: saved with {key}={shown_value(saved[key])}, but this environment "
                    f"has {key}={shown_value(value)}; allowed: a state of an environment of "
                    "the same arguments"
                )

    def _check_slots(self, a: dict[str, np.ndarray], engine: dict[str, Any]) -> None:
        """The slots of a state hold what they hold between two steps (:meth:`set_state`)."""
        n = self.rules.players
        episodes, hands, learner = a["_episodes"], a["_hands"], a["learner"]
        last, rng = a["_last_hand"], a["_rng"]
        st = engine["st"]
        match = self.episode == "match"
        top = np.iinfo(np.int64).max  # one more episode would wrap it round
        refuse_where(
            (episodes < 0) | (episodes >= top), f"its episode counter is not 0 to {top - 1}"
        )
        refuse_where(
            (hands < 0) | (hands >= (self.max_hands if match else 1)),
            f"its hand count is not 0 to {self.max_hands - 1 if match else 0} (episode="
            f"{self.episode!r}{f', max_hands={self.max_hands}' if match else ''})",
        )
        refuse_where((learner < 0) | (learner >= n), f"its learner is no seat 0 to {n - 1}")
        if self.fixed_learner is not None:
            refuse_where(learner != self.fixed_learner, f"its learner is not {self.fixed_learner}")
        if self.mode == "learner":
            refuse_where(
                st[:, K.TO_MOVE] != learner, "its learner is not to move (between two steps it is)"
            )
        refuse_where(rng == 0, "its opponents' random state is 0, which xorshift never leaves")
        refuse_where(
            a["_with_scores"] != match,
            f"its observation's scores are not as episode={self.episode!r} shows them",
        )
        refuse_where(
            engine["in_match"] != match, f"it is not playing as episode={self.episode!r} plays"
        )
        refuse_where(st[:, K.OVER] != 0, "its hand is over (between two steps a new one runs)")
        if match:
            mst = engine["mst"]
            refuse_where(mst[:, K.M_OVER] != 0, "its match is over")
            # Every hand that ended was scored and the next one dealt.
            refuse_where(
                mst[:, K.M_DEALS] != hands + 1, "its match's deals are not its hands played + 1"
            )
        sides = self.rules.sides
        refuse_where(
            (last[:, 0] < 0)
            | (last[:, 0] > max(TERMINATION_CODES.values()))
            | (last[:, 1] < -1)
            | (last[:, 1] >= n)
            | (last[:, 2] < -1)
            | (last[:, 2] >= sides)
            | (last[:, 3] < 0),
            "its last hand's result is out of range (termination, winner, side, points)",
        )
        refuse_where(
            (hands == 0) & (last != np.array(_NO_HAND)).any(1),
            "it has a last hand's result but no hand played",
        )

    # -- internals --------------------------------------------------------------------------

    def _save(self) -> tuple[Any, ...]:
        """Copies of everything a step or reset changes, for :meth:`_restore`."""
        eng = self.eng
        return (
            {name: getattr(eng, name).copy() for name in eng._STATE_ARRAYS},
            list(eng.hand_seeds),
            list(eng.match_seeds),
            [getattr(self, name).copy() for name in self._STATE_ARRAYS],
            list(self._base_seeds),
            self._masks.copy(),
            self._obs.copy(),
            self._started,
        )

    def _restore(self, saved: tuple[Any, ...]) -> None:
        """Every slot as it was at :meth:`_save`."""
        engine, hand_seeds, match_seeds, arrays, base_seeds, masks, obs, started = saved
        # Taken as the engine's set_state takes a state (it also forgets the masks it
        # computed since), without its checks: these are the engine's own arrays.
        self.eng._put_state({**engine, "hand_seeds": hand_seeds, "match_seeds": match_seeds})
        for name, value in zip(self._STATE_ARRAYS, arrays, strict=True):
            getattr(self, name)[...] = value
        self._base_seeds = base_seeds
        self._masks[...] = masks
        self._obs[...] = obs
        self._started = started

    def _episode_starts(self, slots: np.ndarray) -> tuple[list[int], list[int] | None]:
        """The game seed of each slot's next episode, and in learner mode its learner
        seat (None: the other modes): ``episode_starts``'s, or slot ``i``'s ``e``-th
        episode seeded ``(seeds[i] + e * num_envs) % 2**64`` and a random learner seat
        mixed from that seed."""
        if self._custom_starts is not None:
            return self._checked_starts(self._custom_starts(slots), slots.size)
        B = self.num_envs
        # Modulo the engine's seed range: a base seed near its top still deals on.
        seeds = [
            (self._base_seeds[b] + int(self._episodes[b]) * B) % SEED_LIMIT for b in slots.tolist()
        ]
        if self.mode != "learner":
            return seeds, None
        if self.fixed_learner is not None:
            return seeds, [self.fixed_learner] * len(seeds)
        n = self.rules.players
        # Fibonacci hashing of the episode's seed: replayable.
        return seeds, [((s * 0x9E3779B97F4A7C15) % 2**64 >> 40) % n for s in seeds]

    def _checked_starts(self, starts: object, count: int) -> tuple[list[int], list[int] | None]:
        """``episode_starts``'s answer for ``count`` slots: ``(seeds, learner seats)``,
        ``count`` of each, the seats (read in learner mode only, as the other modes have
        no learner) integers from 0 to ``players - 1``; else :class:`BatchError` naming
        what it returned. The engine checks each seed as it deals."""
        n = self.rules.players

        def listed(value: object) -> list[Any] | None:
            if is_text(value) or not isinstance(value, (Sequence, np.ndarray)):
                return None
            items = value.tolist() if isinstance(value, np.ndarray) else list(value)
            return items if len(items) == count else None

        pair = starts if isinstance(starts, (tuple, list)) and len(starts) == 2 else None
        seeds = None if pair is None else listed(pair[0])
        if pair is None or seeds is None:
            raise BatchError(
                f"episode_starts returned {shown_value(starts)}; allowed: a pair (seeds, "
                f"learner seats) of {count} each, one per slot starting an episode"
            )
        if self.mode != "learner":
            return seeds, None
        seats = listed(pair[1]) or []
        read = [seat for seat in (seat_value(given, n) for given in seats) if seat is not None]
        if len(read) != count:
            raise BatchError(
                f"episode_starts returned the learner seats {shown_value(pair[1])}; allowed: "
                f"{count} integers from 0 to {n - 1}, one per slot starting an episode"
            )
        return seeds, read

    def _start(self, slots: np.ndarray) -> None:
        seeds, learners = self._episode_starts(slots)
        if self.episode == "match":
            self.eng.new_matches(seeds, slots=slots)
            self._with_scores[slots] = True
        else:
            self.eng.deal(seeds, slots=slots)
        self._hands[slots] = 0
        self._last_hand[slots] = _NO_HAND
        if learners is not None:
            self.learner[slots] = learners

    def _final(
        self, infos: dict[str, np.ndarray], slots: np.ndarray, seats: np.ndarray, obs: np.ndarray
    ) -> None:
        """Keep the last observation (``seats``' view) and result infos of the episodes
        of ``slots``, which end now."""
        if "final_observation" not in infos:
            B = self.num_envs
            infos["final_observation"] = np.zeros((B, self.obs_size), np.float32)
            infos["_final_observation"] = np.zeros(B, np.bool_)
            infos["final_results"] = np.zeros((B, len(INFO_KEYS)), np.int64)
        infos["final_observation"][slots] = obs
        infos["_final_observation"][slots] = True
        results = self.results(seats, slots)
        infos["final_results"][slots] = np.stack([results[k] for k in INFO_KEYS], axis=1)

    def _hand_ended(
        self,
        ended: np.ndarray,
        seat_rewards: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> None:
        """Rewards of the hands that just ended; the next hand of a match, or the end."""
        if ended.size == 0:
            return
        eng = self.eng
        side = eng.st[ended, K.WSIDE]
        won = ended[side >= 0]
        if won.size:
            # The AEC environment's hand_rewards, for every ended slot at once.
            scale = 1.0 if self.reward == "win" else eng.st[won, K.POINTS].astype(np.float64)
            seat_rewards[won] += self._per_point[side[side >= 0]] * np.reshape(scale, (-1, 1))
        self._hands[ended] += 1
        last = self._last_hand
        term = eng.st[ended, K.TERM]
        last[ended, 0] = np.where(term >= 0, term + 1, 0)  # TERMINATION_CODES
        last[ended, 1] = eng.st[ended, K.WINNER]
        # As the AEC env: no winning side or points without a winner.
        has_winner = eng.st[ended, K.WINNER] >= 0
        last[ended, 2] = np.where(has_winner, eng.st[ended, K.WSIDE], -1)
        last[ended, 3] = np.where(has_winner, eng.st[ended, K.POINTS], 0)
        if self.episode == "hand":
            terminated[ended] = True
            return
        next_hand = []
        for b in ended.tolist():
            if eng.mst[b, K.M_OVER]:
                winners = set(np.flatnonzero(eng.winners[b]).tolist())
                seat_rewards[b] += self._match_bonus(winners)
                terminated[b] = True
            elif self._hands[b] >= self.max_hands:
                truncated[b] = True
            else:
                next_hand.append(b)
        if next_hand:
            eng.next_hands(np.array(next_hand, np.int64))

    def _side(self, seat: int) -> int:
        return self.rules.side_of(seat)

    def _share(self, wins: Callable[[int], bool], amount: float, kind: str) -> np.ndarray:
        # The AEC environment's hand_rewards/_share, per seat.
        n = self.rules.players
        won = [wins(s) for s in range(n)]
        winners = sum(won)
        losers = n - winners
        out = np.zeros(n, np.float32)
        if winners == 0 or losers == 0:
            return out
        if kind == "win":
            out[:] = [1.0 if w else -1.0 for w in won]
            return out
        gain, loss = amount / winners, amount / losers
        if kind == "normalised":
            gain, loss = gain / self._top, loss / self._top
        out[:] = [gain if w else -loss for w in won]
        return out

    def _match_bonus(self, winners: set[int]) -> np.ndarray:
        n = self.rules.players
        if self.reward == "win":
            won = [self._side(s) in winners for s in range(n)]
            if all(won):
                return np.zeros(n, np.float32)
            return np.array([self.match_bonus if w else -self.match_bonus for w in won], np.float32)
        return self._share(lambda s: self._side(s) in winners, self.match_bonus, "score")

    def _observe(
        self, slots: np.ndarray, seats: np.ndarray, out: np.ndarray | None = None
    ) -> np.ndarray:
        """Seat ``seats[j]``'s observation of slot ``slots[j]`` in row ``j`` of ``out``."""
        if out is None:
            out = np.empty((slots.size, self.obs_size), np.float32)
        eng = self.eng
        K.observe_rows(
            slots.astype(np.int64, copy=False),
            seats.astype(np.int64, copy=False),
            self._with_scores,
            eng.br.rp,
            self._fc,
            eng.loc,
            eng.hsize,
            eng.ends,
            eng.st,
            eng.cannot,
            eng.totals,
            out,
        )
        return out

    def _observe_all(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        seats = self.eng.to_move.astype(np.int64)
        self._observe(self._all, seats, self._obs)
        self.eng.legal_masks(self._masks)
        return self._obs.copy(), self._masks.copy(), seats

    def _checked_answer(self, answer: object, waiting: np.ndarray) -> np.ndarray:
        """A callable ``opponents``' answer for the ``waiting`` slots as an integer
        array of one action each in the action range, else :class:`BatchError` (the
        built-in opponents answer so, unchecked). Out of range is refused here: the
        engine reads -1 as "leave the slot", so the loop would ask the same opponent
        for ever, and a ``uint64`` past 2**63 would wrap round to a negative int64."""
        allowed = f"({waiting.size},) integers, one action per slot whose opponent is to move"
        chosen = as_array(answer, "opponents' actions", allowed)
        if chosen.shape != (waiting.size,) or chosen.dtype.kind not in "iu":
            raise BatchError(
                f"opponents returned shape {chosen.shape} of {chosen.dtype}; allowed: {allowed}"
            )
        outside = (chosen < 0) | (chosen >= self.num_actions)
        if outside.any():
            row = int(np.flatnonzero(outside)[0])
            why = self.eng._why(int(waiting[row]), int(chosen[row]))
            raise BatchError(f"an opponent chose an illegal action: {why}")
        return chosen

    def _play_opponents(
        self,
        rewards: np.ndarray,
        infos: dict[str, np.ndarray],
        fresh: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
    ) -> None:
        """Play the other seats until every slot's learner is to move.

        ``fresh`` marks slots whose episode began in this call: if a hand of one ends
        before the learner's first decision (a hand episode, or a match's first hand),
        the episode is dealt again without a trace, as in
        :class:`~matador_env.gym_env.MatadorSingleEnv`: the rewards of that hand would
        reach the learner in no step.
        """
        eng = self.eng
        B = self.num_envs
        n = self.rules.players
        empty = np.zeros(B, np.int64)
        while True:
            waiting = np.flatnonzero(eng.to_move != self.learner)
            if waiting.size == 0:
                return
            if self.opponents == "random":
                # Every opponent move up to the learners' turns (or the hands' ends) at once.
                ended = eng._play_random_until(self.learner, self._rng)
            else:
                masks = eng.legal_masks(self._masks)
                acts = np.full(B, -1, np.int64)
                obs = self._observe(waiting, eng.to_move[waiting])
                rows = masks[waiting].copy()
                if isinstance(self.opponents, _BotOpponents):
                    uniforms = np.empty(waiting.size, np.float64)
                    K.uniforms(self._rng, waiting, uniforms)
                    chosen = self.opponents(obs, rows, uniforms)
                elif self.opponent_slots:
                    episodes = self._episodes[waiting].copy()
                    answer = self.opponents(obs, rows, waiting.copy(), episodes)  # type: ignore[operator]
                    chosen = self._checked_answer(answer, waiting)
                else:
                    answer = self.opponents(obs, rows)  # type: ignore[operator]
                    chosen = self._checked_answer(answer, waiting)
                acts[waiting] = chosen
                try:
                    ended = eng.step(acts)
                except BatchError as exc:
                    raise BatchError(f"an opponent chose an illegal action: {exc}") from None
            seat_rewards = np.zeros((B, n), np.float32)
            term = np.zeros(B, np.bool_)
            trunc = np.zeros(B, np.bool_)
            self._hand_ended(ended, seat_rewards, term, trunc)
            live = ~fresh
            rewards[live] += seat_rewards[self._all, self.learner][live]
            done = np.flatnonzero(term | trunc)
            if fresh.any() and ended.size:
                done = np.union1d(done, ended[fresh[ended]])
            if done.size == 0:
                continue
            redealt = done[fresh[done]]
            empty[redealt] += 1
            if redealt.size and empty[redealt].max() >= _MAX_EMPTY_DEALS:
                b = int(redealt[empty[redealt].argmax()])
                raise BatchError(
                    f"slot {b}: {_MAX_EMPTY_DEALS} deals in a row had a hand end before "
                    "the learner could move; these rules leave it no decision"
                )
            finished = done[~fresh[done]]
            if finished.size:
                terminated[finished] = term[finished]
                truncated[finished] = trunc[finished]
                seats = self.learner[finished]
                self._final(infos, finished, seats, self._observe(finished, seats))
            self._episodes[done] += 1
            self._start(done)
            fresh[done] = True


def _on_side(rules: Rules, side: int) -> Callable[[int], bool]:
    def wins(seat: int) -> bool:
        return rules.side_of(seat) == side

    return wins


_SB3_CLASS: Any = None


def sb3_vec_env(env: VectorEnv) -> Any:
    """A stable-baselines3 ``VecEnv`` over a learner-mode :class:`VectorEnv`.

    ``action_masks()`` (through ``env_method``) gives sb3-contrib's ``MaskablePPO``
    the learners' masks. Infos carry ``terminal_observation`` (SB3's name) where a
    slot's episode ended, and ``TimeLimit.truncated`` where a match was truncated.

    Its inputs are read as the vector env reads them, and a refused one changes
    nothing: the actions of ``step_async`` go to :meth:`VectorEnv.step` at
    ``step_wait`` (a bad one is its :class:`BatchError` there, the actions then
    dropped); ``seed(s)`` takes None or an integer from 0 to 2**64 - ``num_envs``
    (slot ``i`` is seeded ``s + i`` at the next ``reset`` only, as in SB3's own
    vector envs: a later ``reset`` goes on to each slot's next episode; else
    :class:`BatchError`, the seeds as they were, and a refused ``reset`` keeps them
    too); the vector env takes no reset options, so ``set_options`` takes only None,
    ``{}`` or one empty dict per slot (else :class:`BatchError`); ``step_wait``
    without a ``step_async`` before it is a ``RuntimeError``; ``indices`` of ``get_attr``,
    ``set_attr``, ``env_method`` and ``env_is_wrapped`` are slots from
    ``-num_envs`` to ``num_envs - 1`` (else ``IndexError``, or ``TypeError`` for no
    integer).
    """
    if env.mode != "learner":
        raise ValueError(f"sb3_vec_env needs mode='learner', got mode={env.mode!r}")
    global _SB3_CLASS
    if _SB3_CLASS is None:
        _SB3_CLASS = _make_sb3_class()
    return _SB3_CLASS(env)


def _make_sb3_class() -> Any:
    from gymnasium import spaces
    from stable_baselines3.common.vec_env import VecEnv

    class MatadorVecEnv(VecEnv):
        """SB3's view of a learner-mode :class:`VectorEnv`."""

        render_mode = None

        def __init__(self, venv: VectorEnv) -> None:
            self.venv = venv
            self._actions: Any = None
            self._waiting = False  # a step_async's actions wait for step_wait (None too)
            super().__init__(
                venv.num_envs,
                spaces.Box(0.0, 1.0, (venv.obs_size,), np.float32),
                spaces.Discrete(venv.num_actions),
            )

        def seed(self, seed: int | None = None) -> Sequence[int | None]:
            if seed is None:
                return super().seed(None)  # SB3's own draw, from 0 to 2**32 - 2
            self._seeds = list(slot_seeds(seed, self.num_envs, "seed", sequences=False))
            return self._seeds

        def set_options(self, options: list[dict[str, Any]] | dict[str, Any] | None = None) -> None:
            empty = options is None or (isinstance(options, dict) and not options)
            if not empty and not (
                isinstance(options, (list, tuple))
                and len(options) == self.num_envs
                and all(isinstance(o, dict) and not o for o in options)
            ):
                raise BatchError(
                    f"options={shown_value(options)} is not allowed: the vector env takes "
                    f"no reset options; allowed: None, {{}} or {self.num_envs} empty dicts"
                )
            self._reset_options()

        def reset(self) -> np.ndarray:
            seeds = None
            if any(s is not None for s in self._seeds):
                seeds = [s if s is not None else i for i, s in enumerate(self._seeds)]
            obs, _, _ = self.venv.reset(seeds)
            self._reset_seeds()  # only once taken: a refused reset keeps them
            self.reset_infos = [{} for _ in range(self.num_envs)]
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            self._actions, self._waiting = actions, True  # VectorEnv.step reads them

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
            if not self._waiting:
                raise RuntimeError(
                    "step_wait() needs the actions of a step_async(actions) before it "
                    "(VecEnv.step(actions) calls both)"
                )
            actions, self._actions, self._waiting = self._actions, None, False
            obs, _, _, rewards, term, trunc, infos = self.venv.step(actions)
            sb3_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
            if infos:
                for b in np.flatnonzero(infos["_final_observation"]).tolist():
                    sb3_infos[b]["terminal_observation"] = infos["final_observation"][b]
                    sb3_infos[b]["TimeLimit.truncated"] = bool(trunc[b] and not term[b])
            return obs, rewards, term | trunc, sb3_infos

        def _get_indices(self, indices: Any) -> list[int]:
            n = self.num_envs
            if indices is None:
                return list(range(n))
            allowed = f"None, or a slot or a sequence of slots from {-n} to {n - 1}"
            refused = f"indices={shown_value(indices)} is not allowed; allowed: {allowed}"
            rows: list[Any] = [indices]
            if integer_value(indices) is None:
                if is_text(indices) or not (
                    isinstance(indices, Sequence)
                    or (isinstance(indices, np.ndarray) and indices.ndim == 1)
                ):
                    raise TypeError(refused)
                rows = list(indices)
            slots = []
            for row in rows:
                slot = integer_value(row)
                if slot is None:
                    raise TypeError(refused)
                if not -n <= slot < n:
                    raise IndexError(refused)
                slots.append(slot % n)
            return slots

        def close(self) -> None:
            pass

        def action_masks(self) -> np.ndarray:
            return self.venv.action_masks(bool)

        def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
            return [getattr(self, attr_name)] * len(self._get_indices(indices))

        def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
            self._get_indices(indices)
            setattr(self, attr_name, value)

        def env_method(
            self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
        ) -> list[Any]:
            rows = self._get_indices(indices)
            if method_name == "action_masks":
                masks = self.action_masks()
                return [masks[i] for i in rows]
            result = getattr(self, method_name)(*method_args, **method_kwargs)
            return [result] * len(rows)

        def env_is_wrapped(self, wrapper_class: Any, indices: Any = None) -> list[bool]:
            return [False] * len(self._get_indices(indices))

    return MatadorVecEnv
