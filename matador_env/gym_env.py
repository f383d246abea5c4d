"""Matador for one learner: a ``gymnasium.Env`` in which the other seats are played by policies.

The learner holds one seat (``seat=None``: drawn at random each episode; or a fixed
seat). Every other seat is played by an opponent given to the constructor, so each
``step()`` takes the learner's action and then plays the opponents until the
learner is to move again or the episode ends. Rewards, observations and the action
layout are those of the AEC environment (:mod:`matador_env.matador_v0`, whose docstring
documents them); the learner's reward is everything its seat received since its
last action, so it arrives even when a hand ends on an opponent's move.

``action_masks()`` is a method of the environment itself, as sb3-contrib's
``MaskablePPO`` expects, and works under ``SubprocVecEnv``. With ``mask_in_obs=True``
the observation is a dict of the vector (``"obs"``) and the legal actions
(``"mask"``, int8 ones and zeros), the names Tianshou's masked algorithms read::

    from sb3_contrib import MaskablePPO
    from matador_env import MatadorSingleEnv

    model = MaskablePPO("MlpPolicy", MatadorSingleEnv(preset="standard"))
    model.learn(10_000)

Opponents
=========

``opponents`` is one spec used for every other seat, or a list with one spec per
other seat in playing order from the learner (seat + 1, seat + 2, ...). A spec is:

- ``"random"`` (the default): uniform over the legal moves;
- another bot of :func:`matador_env.bot.load_bot` by name, for these rules:
  ``"greedy"``, ``"casual"``, ``"trained"`` (the shipped bot of the rules'
  configuration; rules with none raise ``ValueError`` naming the shipped ones) or
  the path of an exported policy. Being strings, these work wherever the
  environment is made from a config, e.g. ``gymnasium.make("Matador-v0",
  preset="leiden", opponents="trained")``, and in copies and pickles;
- an agent: any object with ``act(view, rng) -> Move`` (the interface of
  ``agents.base.Agent``), or a bot of :mod:`matador_env.bot` (``choose(view, rng)``;
  its rules are checked here), given the seat's
  :class:`~matador_env.engine.SeatView` and a ``random.Random`` seeded from the
  episode's seed;
- a callable taking the seat's observation dict (``{"observation": ...,
  "action_mask": ...}``) and returning an action.

A list of specs may be any sequence but a string (a list, a tuple, a numpy array of
names). An unknown spec raises ``ValueError`` (a string) or ``TypeError`` (anything
else) naming what is allowed.

An opponent that raises, or returns an illegal move (``ValueError``) or something
that is not an action (``TypeError``; an action is an integer, as for the learner;
an agent's move is a ``Move`` or its text form, and text that is no move is a
``ValueError``):
the exception propagates and the env is as before the step, the learner's action
not applied either; that is a bug in the opponent, not a move of the learner, and
once it is fixed the same ``step`` can be taken again. (The game is put back after
any exception; the opponents' random stream only where an opponent that can fail
might have drawn from it, so a Ctrl-C in a step against ``"random"`` opponents alone
may leave that stream ahead.) A ``reset`` that raises leaves no episode: call
``reset`` again.

Actions
=======

``step`` takes a Python ``int``, a numpy integer scalar (what ``action_space.sample()``
and the vector envs give) or a 0-d integer array; anything else (a float, a string,
a bool, ``None``, a list or a 1-element array) raises ``TypeError``. An integer that
is not a legal action (an illegal move, or one out of the action range) ends the
episode with ``illegal_reward`` (default -1, a finite number) and
``info["illegal_action"] = 1``; ``check_env`` samples such actions. ``step`` before
the first ``reset``, or after the episode ended, raises ``RuntimeError``.

Infos
=====

``reset`` and every ``step`` return an info with the same keys, numbers only, so any
replay buffer can store them: the learner's numeric hand-result keys of the AEC
environment (``hands``, ``termination``, ``winner``, ``winning_side``, ``points``,
``match_over``, ``match_won``: see its Infos section), ``seat`` (the learner's seat),
``illegal_action`` (1 after an illegal action, else 0) and ``action_mask`` (the
learner's legal actions, an ``int8`` array of fixed length). The full result of the
last hand, with its strings and counts, is :meth:`MatadorSingleEnv.hand_result`.

With ``episode="match"``, ``max_hands`` bounds the match: ``step`` returns
``truncated=True`` when that many hands were played and the match is not over.
``copy.deepcopy`` and ``pickle`` give the same episode at the same point (the
opponents must be picklable themselves).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle

from .engine import Move, Rules
from .engine.tiles import is_text, shown_value
from .matador_v0 import (
    DEFAULT_MAX_HANDS,
    ENV_ARGUMENTS,
    RENDER_MODES,
    CopiesMidGame,
    Game,
    check_render_mode,
    resolve_rules,
)
from .values import INTEGER_KINDS, as_integer, as_seed, finite_real, integer_value, seat_value

__all__ = ["MatadorSingleEnv", "OpponentSpec"]

OpponentSpec = Any
"""``"random"``, a bot name or policy path, an object with ``act(view, rng) -> Move``
or ``choose(view, rng) -> Move``, or ``callable(obs) -> int``."""

_RANDOM = "random"
_MAX_EMPTY_DEALS = 1000
_ARGUMENTS = (*ENV_ARGUMENTS, "opponents", "seat", "illegal_reward", "mask_in_obs")
# What the environment holds between steps, beyond its arguments and the game.
_LIVE_FIELDS = ("seat", "_rng", "_mask", "_over", "_started", "_np_random", "_np_random_seed")


class MatadorSingleEnv(gymnasium.Env, CopiesMidGame):
    """One learner against opponent policies (see the module docstring).

    Arguments as :func:`matador_env.env` (``rules`` or ``preset``, ``episode``,
    ``reward``, ``match_bonus``, ``render_mode``, ``max_hands`` and any ``Rules``
    field as a keyword, e.g. ``players=3``), and:

    - ``opponents``: one spec for all other seats or one per other seat;
    - ``seat``: the learner's seat, or None for a random seat each episode;
    - ``illegal_reward``: the learner's reward for an illegal action, which ends
      the episode;
    - ``mask_in_obs``: True for observations ``{"obs": vector, "mask": legal actions}``
      (a ``Dict`` space) instead of the vector alone.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}
    live_fields = _LIVE_FIELDS

    def __init__(
        self,
        rules: Rules | None = None,
        preset: str | None = None,
        opponents: OpponentSpec | Sequence[OpponentSpec] = _RANDOM,
        seat: int | None = None,
        episode: str = "hand",
        reward: str = "score",
        match_bonus: float | None = None,
        illegal_reward: float = -1.0,
        render_mode: str | None = None,
        max_hands: int = DEFAULT_MAX_HANDS,
        mask_in_obs: bool = False,
        **rule_overrides: Any,
    ) -> None:
        EzPickle.__init__(
            self,
            rules,
            preset,
            opponents,
            seat,
            episode,
            reward,
            match_bonus,
            illegal_reward,
            render_mode,
            max_hands,
            mask_in_obs,
            **rule_overrides,
        )
        if "autoreset_mode" in rule_overrides:
            raise ValueError(
                f"autoreset_mode={rule_overrides['autoreset_mode']!r} is an argument of the "
                "compiled vector env (gymnasium.make_vec's default), not of this single env; "
                "with vectorization_mode='sync', pass vector_kwargs={'autoreset_mode': ...} "
                "to gymnasium.make_vec"
            )
        self.rules = resolve_rules(rules, preset, rule_overrides, _ARGUMENTS)
        n = self.rules.players
        if seat is not None:
            seat_index = seat_value(seat, n)
            if seat_index is None:
                raise ValueError(
                    f"seat must be None or a seat from 0 to {n - 1} (an int), got {seat!r}"
                )
            seat = seat_index
        check_render_mode(render_mode)
        self.game = Game(self.rules, episode, reward, match_bonus, max_hands)
        self.encoding = enc = self.game.enc
        self.render_mode = render_mode
        self.illegal_reward = finite_real("illegal_reward", illegal_reward)
        self.fixed_seat = seat
        self.seat = seat if seat is not None else 0
        self._opponents = _opponent_list(opponents, n - 1, self.rules)
        # A failed step puts the game back as it was; the opponents' random stream too
        # where an opponent that can raise (not "random") might have drawn from it
        # first: its state costs more to keep than the rest of the step.
        consume = any(o is _RANDOM or isinstance(o, _Agent) for o in self._opponents)
        fallible = any(o is not _RANDOM for o in self._opponents)
        self._keep_rng = consume and fallible
        if not isinstance(mask_in_obs, bool):
            raise TypeError(
                f"mask_in_obs={shown_value(mask_in_obs)} is not allowed; allowed: True "
                "(observations {'obs': vector, 'mask': legal actions}) or False (the vector)"
            )
        self.mask_in_obs = mask_in_obs
        vector = spaces.Box(0.0, 1.0, (enc.obs_size,), np.float32)
        self.observation_space: spaces.Space[Any] = (
            spaces.Dict({"obs": vector, "mask": spaces.MultiBinary(enc.num_actions)})
            if mask_in_obs
            else vector
        )
        self.action_space = spaces.Discrete(enc.num_actions)
        self._mask = np.zeros(enc.num_actions, np.int8)
        self._rng = random.Random(0)
        self._over = True
        self._started = False  # whether reset() has made an episode

    # -- gymnasium API ------------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """A new episode. ``reset(seed=s)`` deals the hand (or match) of seed ``s``: None
        or an integer from 0 to 2**64 - 1 (``TypeError`` for what is no integer,
        ``ValueError`` for one out of that range, as in ``raw_env``'s Seeding). The env
        has no reset options: ``options`` is ignored, as Gymnasium allows."""
        seed = as_seed(seed)  # Gymnasium takes only a Python int: a numpy one becomes one
        super().reset(seed=seed)
        self._over = True  # until the new episode is ready: a reset that raises leaves none
        self._started = False
        stream = self.np_random
        n = self.rules.players
        game_seed = seed
        for _ in range(_MAX_EMPTY_DEALS):
            if game_seed is None:
                game_seed = int(stream.integers(2**63))
            self.seat = self.fixed_seat if self.fixed_seat is not None else int(stream.integers(n))
            self._rng = random.Random(int(stream.integers(2**63)))
            self.game.start(int(game_seed))
            self._play_opponents()
            if self.game.hands == 0:
                break
            # A hand ended before the learner's first turn (only possible with one-tile
            # hands): its rewards would reach the learner in no step, so the episode
            # (hand or match) is dealt again, without a trace.
            game_seed = None
        else:
            raise RuntimeError(
                f"{_MAX_EMPTY_DEALS} deals in a row had a hand end before seat {self.seat} "
                "could move; these rules leave the learner no decision"
            )
        self._over = False
        self._started = True
        return self._observe(0)

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """The learner's action, then the opponents' moves until it is the learner's
        turn again or the episode ends. An opponent that raises or returns an illegal
        move: the exception propagates and the env is as before the step."""
        if self._over:
            if not self._started:
                raise RuntimeError("step() before reset(): call reset() first")
            raise RuntimeError("step() after the episode ended: call reset() first")
        if type(action) is not int:
            action = as_integer(action)
        if not (0 <= action < self.encoding.num_actions and self._mask[action]):
            self._over = True
            obs, info = self._observe(1)
            info["action_mask"][:] = 0
            self._mask = info["action_mask"].copy()
            if self.mask_in_obs:
                obs["mask"][:] = 0
            return obs, self.illegal_reward, True, False, info
        # A step is all or nothing: what it changes is put back if anything raises.
        # (Inline, not through matador_v0.all_or_nothing as the vector envs do: this is
        # the single env's hot path, and a call layer costs a microsecond of ~28.)
        game = self.game
        snapshot = game.snapshot()
        rng_state = self._rng.getstate() if self._keep_rng else None
        mask = self._mask
        try:
            rewards = game.apply(action)
            reward = 0.0
            if rewards is not None:
                reward += rewards[self.seat]
            reward += self._play_opponents()
            self._over = game.done
            obs, info = self._observe(0)
        except BaseException:
            game.restore(snapshot)
            if rng_state is not None:
                self._rng.setstate(rng_state)
            self._mask = mask
            self._over = False
            raise
        truncated = game.truncated
        return obs, float(reward), self._over and not truncated, truncated, info

    def hand_result(self) -> dict[str, Any] | None:
        """The full result of the last hand that ended in this episode, or None
        (see :meth:`matador_env.matador_v0.raw_env.hand_result`)."""
        return self.game.hand_result()

    def hand_records(self) -> list[str]:
        """The record of each hand of this episode so far (see
        :meth:`matador_env.matador_v0.raw_env.hand_records`)."""
        return self.game.hand_records()

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now (all False once the episode is over)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:  # type: ignore[override]
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        if self.render_mode == "rgb_array":
            return self.game.frame(seat=self.seat)
        text = self.game.render(seat=self.seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # -- internals ----------------------------------------------------------------------

    def _observe(self, illegal_action: int) -> tuple[Any, dict[str, Any]]:
        game = self.game
        obs = game.observe(self.seat)
        self._mask = obs["action_mask"]
        info: dict[str, Any] = game.info(self.seat)
        info["seat"] = self.seat
        info["illegal_action"] = illegal_action
        info["action_mask"] = self._mask.copy()
        if self.render_mode == "human":
            self.render()
        if self.mask_in_obs:
            return {"obs": obs["observation"], "mask": self._mask.copy()}, info
        return obs["observation"], info

    def _play_opponents(self) -> float:
        """Play the other seats until the learner is to move; the learner's rewards."""
        game = self.game
        seat = self.seat
        n = self.rules.players
        total = 0.0
        while not game.done and game.to_move != seat:
            mover = game.to_move
            action = self._opponent_action(mover, self._opponents[(mover - seat) % n - 1])
            rewards = game.apply(action)
            if rewards is not None:
                total += rewards[seat]
        return total

    def _opponent_action(self, mover: int, policy: Any) -> int:
        game = self.game
        if policy is _RANDOM:
            legal = game.hand.legal_moves()
            return self.encoding.index[legal[self._rng.randrange(len(legal))]]
        if isinstance(policy, _Agent):
            move = policy.move(game.view(mover), self._rng)
            if isinstance(move, str):
                try:
                    move = Move.parse(move)
                except ValueError as exc:  # MoveParseError, naming no opponent
                    raise ValueError(
                        f"opponent {policy.agent!r} at seat {mover} chose {shown_value(move)}, "
                        f"which is no move: {exc}"
                    ) from None
            elif not isinstance(move, Move):
                raise TypeError(
                    f"opponent {policy.agent!r} at seat {mover} returned {shown_value(move)} "
                    f"({type(move).__name__}), not a move: a Move or its text form (e.g. "
                    "'3-4@0>3', 'draw')"
                )
            if move not in game.hand.legal_moves():
                raise ValueError(
                    f"opponent {policy.agent!r} at seat {mover} chose {str(move)!r}, which is "
                    f"not legal; legal moves: {', '.join(map(str, game.hand.legal_moves()))}"
                )
            return self.encoding.index[move]
        obs = game.observe(mover)
        returned = policy(obs)
        action = returned if type(returned) is int else integer_value(returned)
        if action is None:
            raise TypeError(
                f"opponent {policy!r} at seat {mover} returned {returned!r} "
                f"({type(returned).__name__}), not an action: {INTEGER_KINDS}"
            )
        if not (0 <= action < self.encoding.num_actions and obs["action_mask"][action]):
            raise ValueError(
                f"opponent {policy!r} at seat {mover} chose action {action}, which is not "
                f"legal; legal actions: {np.flatnonzero(obs['action_mask']).tolist()}"
            )
        return action


class _Agent:
    """An opponent that moves from its seat's view: ``act(view, rng)`` (duck-typed
    ``agents.base.Agent``) or ``choose(view, rng)`` (a :class:`matador_env.bot.Bot`)."""

    __slots__ = ("agent", "move")

    def __init__(self, agent: Any, move: Any) -> None:
        self.agent = agent
        self.move = move


def _opponent(spec: OpponentSpec, rules: Rules) -> Any:
    if isinstance(spec, str):
        if spec == _RANDOM:
            return _RANDOM
        from .bot import load_bot  # only here: the bots need onnxruntime

        try:
            bot = load_bot(spec, rules=rules)
        except ValueError as exc:  # BotError
            raise ValueError(f"opponent {spec!r}: {exc}") from None
        return _Agent(bot, bot.choose)
    if callable(getattr(spec, "act", None)):
        _check_rules(spec, rules)
        return _Agent(spec, spec.act)
    if callable(getattr(spec, "choose", None)):
        _check_rules(spec, rules)
        return _Agent(spec, spec.choose)
    if callable(spec):
        return spec
    raise TypeError(
        f"opponent {spec!r} is none of: 'random', a bot name or policy path (see "
        "matador_env.bot.load_bot), an object with act(view, rng) or choose(view, rng), "
        "a callable(observation dict) -> action"
    )


def _check_rules(opponent: Any, rules: Rules) -> None:
    """``ValueError`` when an agent or a bot cannot play ``rules``
    (:func:`matador_env.bot.rules_refusal`), so that it is refused when the env is
    made, not at its first move."""
    from .bot import rules_refusal

    refusal = rules_refusal(opponent, rules)
    if refusal is not None:
        raise ValueError(f"opponent {opponent!r} {refusal}")


def _opponent_list(opponents: Any, count: int, rules: Rules) -> list[Any]:
    if isinstance(opponents, np.ndarray):
        opponents = opponents.tolist()  # its items as Python values; 0-d: one spec
    if isinstance(opponents, Sequence) and not is_text(opponents):
        if len(opponents) != count:
            raise ValueError(
                f"opponents: expected one spec or a list of {count} (one per other seat), "
                f"got a list of {len(opponents)}"
            )
        return [_opponent(o, rules) for o in opponents]
    return [_opponent(opponents, rules)] * count
