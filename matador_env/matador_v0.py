# noqa: D212, D415
"""
# Matador

| Creation           | `env(preset=...)`, or `pettingzoo.make("aec", "matador_v0")`      |
|--------------------|-------------------------------------------------------------------|
| Actions            | Discrete                                                          |
| Parallel API       | No                                                                |
| Manual Control     | No                                                                |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`                      |
| Agents             | 2-4; more with an integer `hand_size` (or "all") on any set       |
| Action Shape       | () (one integer)                                                  |
| Action Values      | Discrete(num_actions): 128 for the "standard" preset              |
| Observation Shape  | (obs_size,): 100 for the "standard" preset                        |
| Observation Values | [0, 1]                                                            |

Matador is a blocking domino game: touching ends must sum to seven with a
double-six set (ten with double-nine, thirteen with double-twelve), and the
matadors (0-0 and every tile with those pips) may go anywhere. The first player to
play his last tile wins the pips left in the other hands; when every seat passes in
a row the lowest count wins. Every variant of the rules (sets, players and
partnerships, drawing, matador, spinner and scoring options) is a field of a
`Rules` configuration or one of its named presets: `standard`, `pagat`,
`kardinal`, `kardinal_hard`, `polish`, `leiden`, `double_nine`, `double_twelve`.

`import matador_env` registers `matador_v0` with PettingZoo's registry (without
importing PettingZoo: the registration happens when PettingZoo is imported).

### Arguments

``` python
env(rules=None, preset="standard", episode="hand", reward="score",
    match_bonus=None, max_hands=1000, render_mode=None, **rule_overrides)
```

`rules`: a `matador_env.engine.Rules`; or `preset`: the name of a preset (not both).

`rule_overrides`: any field of `Rules`, as a keyword, applied over the preset (or
over `rules`): `env(preset="pagat", players=4, teams=True, target_score=50)`.
Everything is plain data, so a game can come from a JSON or command-line config.
An unknown keyword raises `RulesError` listing the allowed ones.

`episode`: `"hand"` (one deal per episode) or `"match"` (hands follow one another
until the match is won by the rules' `match_end` at `target_score`).

`reward`: `"score"`, `"win"` or `"normalised"` (see Rewards).

`match_bonus`: the match winner's terminal bonus with `episode="match"`, a finite
number (default: `target_score` for `"score"`, 1 for `"win"` and `"normalised"`).

`max_hands`: the safety bound of `episode="match"`: once this many hands (redeals
included) have been played without the match ending, the episode ends with
`truncations` True for every agent (the last hand's rewards arrive, no match bonus).
Matches to 100 points take a few to a few dozen hands; the bound is there for rule
combinations whose matches run far longer. Ignored with `episode="hand"`. An integer
>= 1 (numpy integers too; not a bool).

`render_mode`: `None`, `"ansi"` (`render()` returns the table as text), `"human"`
(the text printed after every move) or `"rgb_array"` (`render()` returns the table
as a picture: a 540 x 960 x 3 `uint8` array, the same size in every state, so that
an episode's frames make a video; `matador_env.picture` says what it shows). The
text and the picture show the tiles of the seat to move (the single-learner
environment: the learner's) and the others' counts; once the hand is over the text
gives the result, and the picture shows every hand too. Any other mode raises
`UnsupportedRenderMode`, a `ValueError` that is also a `TypeError`, as an unknown
keyword would be: tools that ask for a mode and retry without it on `TypeError`
then get an environment that does not render.

### Observation Space

The observation is a dictionary with an `'observation'` element, the
`float32` vector below, and an `'action_mask'` element, described in Legal Actions
Mask. It is built from the observing seat's point of view and holds nothing of the
other hands or the boneyard beyond their sizes and the public history.
`observe`, `observation_space` and `action_space` of a name that is none of
`possible_agents` raise a `KeyError` that lists them.

"Others" are the other seats in playing order from the observer (seat + 1,
seat + 2, ...). `T` tiles in the set, `V = set_max + 1` values, `E` end slots (see
Action Space), `K = 5 + V`, `C = V + 2`, `n` players, `sides` scoring units (2 with
teams, else n).

| piece         | size        | meaning                                                   |
|---------------|-------------|-----------------------------------------------------------|
| hand          | T           | 1 for each tile the observer holds                        |
| played        | T           | 1 for each tile on the table                              |
| ends          | E x K       | per open end: its kind, then the values it shows (1)      |
| boneyard      | 1           | boneyard size / T                                         |
| passes        | 1           | passes in a row / n                                       |
| target        | 1           | min(target_score, 1000) / 1000                            |
| hand_sizes    | n - 1       | the others' hand sizes / T                                |
| partner       | n - 1       | 1 at the partner (teams only)                             |
| cannot_answer | (n - 1) x C | per other seat, what it was seen unable to answer (2)     |
| scores        | sides       | match totals / (2 x target), capped at 1, own side first  |
| leader        | n           | who placed (or is due to place) the lead, one-hot (3)     |
| to_move       | n           | who is to move, one-hot (3)                               |

(1) Open ends keep the engine's order (slot e is open end e); each has a kind
one-hot (plain, crosswise two-valued, needs-a-blank, branch, spinner side) and the
values it shows, multi-hot: two for a crosswise end, none for needs-a-blank. An
unused slot is all zeros.

(2) Columns 0..V-1: the end values; V: a needs-a-blank end; V+1: "holds no
matador". The marks come from passes and draws seen after the lead: a pass, or a
draw when voluntary draws are not allowed, marks the values of every end it could
not answer and "holds no matador"; a draw under `voluntary_draw="only_matadors"`
marks the values only; a draw under `"always"` marks nothing. Marks stay for the
rest of the hand.

(3) Relative to the observer: position 0 is the observer, 1 the next seat, ...

The table is data: `matador_env.encoding.encoding_for(rules).pieces`, and
`.split(vector)` cuts a vector into named pieces. `ENCODING_VERSION` is bumped
whenever this contract changes.

`state()` returns a full-information `float32` vector for centralised critics
(every hand, the boneyard's tiles, the cannot-answer table of every seat; see
`encoding_for(rules).state_pieces`).

#### Legal Actions Mask

The legal moves of the seat to move are in the `action_mask` element: an `int8`
vector with a 1 for each action that is one of the engine's legal moves and 0
elsewhere. It is all zeros for every other seat, and for every seat once the game
is over. Taking an illegal action through `env()` ends the game the way PettingZoo's
`TerminateIllegalWrapper` does: a reward of -1 for that seat and 0 for the others,
termination and truncation both True for every seat, and the observations and infos
left as they were (that seat's mask still shows its legal moves; only the dead steps
remain). `env()` and `raw_env()` take an action as an `int`, a numpy integer or a 0-d
integer array: anything else (a bool included) raises `TypeError`, an integer
outside the action space `ValueError`, and so does `None` (the action of a finished
seat's dead step) from a seat to move; the game is as it was. `raw_env()`
raises `IllegalMoveError` for an illegal action and leaves the game as it was; it
raises `RuntimeError` for a step once every agent is done, or before the first `reset()`
(there `env()` keeps PettingZoo's `OrderEnforcingWrapper` behaviour: a warning after
the game, an `AssertionError` before `reset()`).

### Action Space

One `Discrete` space per rules configuration, the same for every seat:

| actions             | move                                                      |
|---------------------|-----------------------------------------------------------|
| `0 .. T-1`          | lead tile k (tiles in index order: 0-0, 0-1, 1-1, 0-2...) |
| `T + e*P + p`       | placement p of the slot table on open end e               |
| `T + E*P`           | draw                                                      |
| `T + E*P + 1`       | pass                                                      |

The slot table lists, tile by tile, the orientations the rules can produce: in line
with the low half outward, in line with the high half outward (not for doubles),
crosswise (matadors, where `matador_placement` allows it) and upright (matadors
under "upright"). `E` is the most open ends the rules can make at once: 2, or 4
with a spinner, plus one per matador under "branching". When one end is replaced
by several (a branch, a spinner) the new ones take its place in the order.
`matador_env.encoding` has the helpers: `encode_action`, `decode_action`,
`action_mask`, and documents the layout in full.

### Rewards

Rewards are given to every seat when a hand ends (`P`: the points the hand scored).

| `reward`       | each seat of the winning side | each other seat      | no winner |
|----------------|-------------------------------|----------------------|-----------|
| `"score"`      | + P / winning seats           | - P / other seats    | 0         |
| `"win"`        | +1                            | -1                   | 0         |
| `"normalised"` | `"score"` / pips of the set   | `"score"` / pips     | 0         |

"No winner" is a void tie, a redeal or a round without a lead. `"score"` and
`"normalised"` are zero-sum; `"normalised"` lies in [-1, 1] since a hand never
scores more than the pips of the whole set. With `episode="match"` the per-hand
rewards still arrive as each hand ends, and when the match ends its winners get
`match_bonus`, shared out the same way (`"win"`: +bonus to each seat of a winning
side, -bonus to each other seat).

### Seeding

`reset(seed=s)` deals `HandState.deal(rules, s)` (or `MatchState.new(rules, s)`
with `episode="match"`) and seeds the stream from which unseeded resets draw their
seeds, so a seeded run replays exactly. A seed is None or an integer from 0 to
2**64 - 1, the engine's seeds (a numpy integer is read as its `int`; a bool or anything
else raises `TypeError`, a negative seed, which `random.Random` would deal as its
absolute value, or one of 2**64 or more `ValueError`, as Gymnasium refuses a negative
seed). `copy.deepcopy` and
`pickle` of an environment give the same game at the same point, which continues
identically.

### Infos

Every agent's info holds the same keys at every step, from `reset` on, each a plain
`int`, so that any RL replay buffer can stack them. They describe the last hand that
ended in this episode, and keep their values until the next one ends:

| key            | meaning                                                              |
|----------------|----------------------------------------------------------------------|
| `hands`        | hands ended so far in this episode (redeals included)                |
| `termination`  | how the last hand ended: a code of `TERMINATION_CODES` (0: none yet) |
| `winner`       | the seat that won it, -1 for none (a tie, a redeal, none yet)        |
| `winning_side` | that seat's side (its team with partnerships), -1 for none           |
| `points`       | what the winning side scored                                         |
| `match_over`   | 1 once the match is won (`episode="match"`), else 0                  |
| `match_won`    | 1 if this agent's side is among the match winners, else 0            |

`TERMINATION_CODES` (in `matador_env.matador_v0`): 0 `"none"` (no hand has ended
yet), 1 `"domino"`, 2 `"blocked"`, 3 `"void_tie"`, 4 `"redeal_tie"`, 5 `"no_lead"`.
The full result, with the strings, each seat's count and the match totals, is
`env.unwrapped.hand_result()`: a dict, or None before the first hand has ended.

### Version History

* v0: Initial release (matador-env 0.1.0, encoding version 1). Since 0.1.0, still v0:
  numeric infos (they replaced the nested `"hand_result"` dict that only some steps
  carried), keyword rule overrides, the `max_hands` bound of `episode="match"`,
  pickling in mid-game, and `render_mode="rgb_array"`. Observations, actions,
  rewards and seeded deals are unchanged, so trained policies and recorded games stay
  valid.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv  # type: ignore[import-untyped]
from pettingzoo.utils import wrappers  # type: ignore[import-untyped]

from .encoding import ObservationTracker, encoding_for
from .engine import (
    HandState,
    MatchState,
    Outcome,
    Rules,
    RulesError,
    SeatView,
    Termination,
    hand_records,
    render_layout,
    set_tiles,
)
from .engine.tiles import shown_value
from .picture import draw_frame
from .values import as_integer, as_seed, finite_real, integer_value

__all__ = [
    "env",
    "raw_env",
    "RENDER_MODES",
    "UnsupportedRenderMode",
    "REWARD_KINDS",
    "reward_kind",
    "EPISODE_KINDS",
    "TERMINATION_CODES",
    "INFO_KEYS",
    "DEFAULT_MAX_HANDS",
    "all_or_nothing",
    "hand_rewards",
    "resolve_rules",
]

T = TypeVar("T")

REWARD_KINDS = ("score", "win", "normalised")
EPISODE_KINDS = ("hand", "match")
_REWARD_ALIASES = {"normalized": "normalised"}


def reward_kind(reward: object) -> str:
    """``reward`` as one of :data:`REWARD_KINDS` (the US spelling ``normalized`` is
    taken too); else ``ValueError`` naming them."""
    if isinstance(reward, str):
        reward = _REWARD_ALIASES.get(reward, reward)
    if reward not in REWARD_KINDS:
        raise ValueError(
            f"reward={reward!r} is not allowed; allowed: {', '.join(map(repr, REWARD_KINDS))} "
            "('normalized' too)"
        )
    return reward  # type: ignore[return-value]


TERMINATION_CODES: dict[str, int] = {
    "none": 0,
    **{name: code for code, name in enumerate(Termination.ALL, start=1)},
}
"""The ``termination`` info of the last hand that ended: 0 while none has."""

INFO_KEYS = ("hands", "termination", "winner", "winning_side", "points", "match_over", "match_won")
"""The keys of every agent's info at every step (each value an ``int``)."""

DEFAULT_MAX_HANDS = 1000
"""Hands after which an ``episode="match"`` episode that has not ended truncates."""

RENDER_MODES = ("human", "ansi", "rgb_array")
"""The ``render_mode`` values the environments draw (``None``: no drawing)."""


class UnsupportedRenderMode(ValueError, TypeError):
    """A ``render_mode`` the environments do not draw (see the module docstring)."""


def check_render_mode(render_mode: object) -> None:
    """:class:`UnsupportedRenderMode` unless ``render_mode`` is None or in
    :data:`RENDER_MODES`."""
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise UnsupportedRenderMode(
            f"render_mode={render_mode!r} is not allowed; allowed: None, "
            + ", ".join(repr(m) for m in RENDER_MODES)
        )


RULES_FIELDS = tuple(f.name for f in dataclasses.fields(Rules))
ENV_ARGUMENTS = (
    "rules",
    "preset",
    "episode",
    "reward",
    "match_bonus",
    "render_mode",
    "max_hands",
)


def env(**kwargs: Any) -> AECEnv:
    """The Matador AEC environment in PettingZoo's standard wrappers.

    Takes the arguments of :class:`raw_env`. An illegal action ends the game with a
    reward of -1 for the seat that took it. (The environment's documentation page,
    the docstring of the module ``matador_env.matador_v0``, follows.)
    """
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    # In place of PettingZoo's AssertOutOfBoundsWrapper, whose assert python -O drops.
    e = _CheckedActions(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class _CheckedActions(wrappers.BaseWrapper):  # type: ignore[misc]
    """What is no action, or outside the action space, refused as :class:`raw_env`
    refuses it, before ``TerminateIllegalWrapper`` indexes the mask with it (``True``
    raised numpy's "truth value of an array is ambiguous")."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            if action is None:
                raise ValueError(f"{agent} is to move: None is an action only for a finished seat")
            number = action if type(action) is int else as_integer(action)
            actions = self.action_space(agent).n
            if not 0 <= number < actions:
                raise _out_of_range(number, actions)
        super().step(action)

    def __str__(self) -> str:
        return str(self.env)  # the environment's name, as PettingZoo's own wrappers show it


def _out_of_range(action: int, actions: int) -> ValueError:
    return ValueError(f"action {action!r} is out of range 0-{actions - 1}")


def all_or_nothing(
    guarded: bool,
    save: Callable[[], Any],
    restore: Callable[[Any], None],
    call: Callable[..., T],
    *args: Any,
) -> T:
    """``call(*args)``; when ``guarded``, what ``save()`` returned is handed to
    ``restore`` if it raises (anything, Ctrl-C included), so the call is all or nothing.
    Unguarded calls pay one test: their callables never raise midway."""
    if not guarded:
        return call(*args)
    saved = save()
    try:
        return call(*args)
    except BaseException:
        restore(saved)
        raise


def resolve_rules(
    rules: Rules | None,
    preset: str | None,
    overrides: Mapping[str, Any] | None = None,
    arguments: Sequence[str] = ENV_ARGUMENTS,
) -> Rules:
    """``rules`` or the named preset (default "standard"), not both, with any ``Rules``
    fields in ``overrides`` replaced.

    ``arguments`` are the caller's own keywords, named with the fields when an unknown
    keyword is refused.
    """
    overrides = dict(overrides or {})
    for key, value in overrides.items():
        if key not in RULES_FIELDS:
            raise RulesError(
                key,
                value,
                f"a Rules field ({', '.join(RULES_FIELDS)}) "
                f"or an argument ({', '.join(arguments)})",
            )
    if rules is not None and preset is not None:
        raise RulesError("preset", preset, "either rules or preset, not both")
    if rules is None:
        return Rules.preset(preset or "standard", **overrides)
    if not isinstance(rules, Rules):
        raise RulesError("rules", type(rules).__name__, "a matador_env.engine.Rules or None")
    return rules.replace(**overrides) if overrides else rules


def hand_rewards(rules: Rules, outcome: Outcome, kind: str) -> list[float]:
    """Each seat's reward for a finished hand (see the Rewards table); ``kind`` is read
    by :func:`reward_kind` (``ValueError`` for one it does not take), ``outcome`` must
    be an :class:`~matador_env.engine.Outcome` (``TypeError``)."""
    kind = reward_kind(kind)  # "normalized" was paid as "score", as was any unknown kind
    if not isinstance(outcome, Outcome):
        raise TypeError(
            f"outcome={shown_value(outcome)} is not allowed; allowed: the Outcome of a "
            "finished hand (HandState.outcome)"
        )
    n = rules.players
    side = outcome.winning_side
    if side is None:
        return [0.0] * n
    return _share(rules, lambda s: rules.side_of(s) == side, float(outcome.points), kind)


def _share(rules: Rules, wins: Any, amount: float, kind: str) -> list[float]:
    n = rules.players
    won = [wins(s) for s in range(n)]
    winners = sum(won)
    losers = n - winners
    if winners == 0 or losers == 0:
        return [0.0] * n
    if kind == "win":
        return [1.0 if w else -1.0 for w in won]
    gain, loss = amount / winners, amount / losers
    if kind == "normalised":
        top = float(sum(t.pips for t in set_tiles(rules.set_max)))
        gain, loss = gain / top, loss / top
    return [gain if w else -loss for w in won]


def match_rewards(rules: Rules, winners: Sequence[int], kind: str, bonus: float) -> list[float]:
    """Each seat's terminal bonus for a finished match won by the sides ``winners``
    (``kind`` read by :func:`reward_kind`)."""
    if reward_kind(kind) == "win":
        won = [rules.side_of(s) in winners for s in range(rules.players)]
        if all(won):
            return [0.0] * rules.players
        return [bonus if w else -bonus for w in won]
    return _share(rules, lambda s: rules.side_of(s) in winners, bonus, "score")


class Game:
    """One game (a hand, or a match of hands) driven by actions, for the environments.

    Keeps the engine state, the incremental observation builder, the rewards and the
    numeric infos. Not part of the public API: use :func:`env`, :class:`raw_env` or
    :class:`~matador_env.gym_env.MatadorSingleEnv`.
    """

    def __init__(
        self,
        rules: Rules,
        episode: str,
        reward: str,
        match_bonus: float | None,
        max_hands: int = DEFAULT_MAX_HANDS,
    ) -> None:
        if episode not in EPISODE_KINDS:
            raise ValueError(f"episode={episode!r} is not allowed; allowed: {EPISODE_KINDS}")
        reward = reward_kind(reward)
        hands = integer_value(max_hands)
        if hands is None or hands < 1:
            raise ValueError(
                f"max_hands={max_hands!r} is not allowed; allowed: an integer >= 1 "
                "(an int or a numpy integer, not a bool)"
            )
        max_hands = hands
        if match_bonus is not None:
            match_bonus = finite_real("match_bonus", match_bonus)
        self.rules = rules
        self.enc = encoding_for(rules)
        self.episode = episode
        self.reward = reward
        if match_bonus is None:
            match_bonus = float(rules.target_score) if reward == "score" else 1.0
        self.match_bonus = float(match_bonus)
        self.max_hands = max_hands
        self.tracker = ObservationTracker(self.enc)
        self._num_actions = self.enc.num_actions
        self._master, self._gather = self.tracker.gather_tables()
        self._index = self.enc.index
        self._moves = self.enc.moves
        self.match: MatchState | None = None
        self.hand: HandState
        self.done = False
        self.truncated = False
        self.hands = 0
        self.last_result: dict[str, Any] | None = None
        self.finished_hands: list[HandState] = []
        """The episode's hands that have ended, in order."""
        self._infos: list[dict[str, int]] = []
        self.seed = 0
        """The seed of :meth:`start`: with :attr:`actions`, the game as data."""
        self.start(0)

    def start(self, seed: int) -> None:
        self.seed = seed
        if self.episode == "match":
            self.match = MatchState.new(self.rules, seed)
            self.hand = self.match.hand
        else:
            self.hand = HandState.deal(self.rules, seed)
        self.tracker.start(self.hand, self.scores)
        self.done = False
        self.truncated = False
        self.hands = 0
        self.last_result = None
        self.finished_hands = []
        self._set_infos(None, None)

    # -- pickling: the live game, rebuilt around a fresh tracker ---------------------

    def snapshot(self) -> dict[str, Any]:
        """The game's state: the hand and match (immutable engine values) and the
        episode's counters; the observation tracker is left out and rebuilt."""
        return {
            "hand": self.hand,
            "match": self.match,
            "done": self.done,
            "truncated": self.truncated,
            "hands": self.hands,
            "last_result": self.last_result,
            "finished_hands": tuple(self.finished_hands),
            "infos": self._infos,
            "seed": self.seed,
        }

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Continue from a :meth:`snapshot` of a game of the same rules."""
        self.hand = snapshot["hand"]
        self.match = snapshot["match"]
        self.done = snapshot["done"]
        self.truncated = snapshot["truncated"]
        self.hands = snapshot["hands"]
        self.last_result = snapshot["last_result"]
        self.finished_hands = list(snapshot.get("finished_hands", ()))
        self._infos = [dict(i) for i in snapshot["infos"]]
        self.seed = snapshot.get("seed", 0)
        # The tracker's vectors are views of one buffer, which pickling would split;
        # it is rebuilt from the hand, which holds the whole public history.
        self.tracker.start(self.hand, self.scores)

    @property
    def actions(self) -> list[int]:
        """Every action applied since :meth:`start`, read from the hands' histories
        (kept anyway, so stepping pays nothing for it): with :attr:`seed`, the game
        as data, which :meth:`replay` plays again."""
        hands = list(self.finished_hands)
        if self.hand.outcome is None:  # a finished one is the last of finished_hands
            hands.append(self.hand)
        index = self._index
        return [index[move] for hand in hands for move in hand.moves]

    def replay(self, seed: int, actions: Sequence[int]) -> None:
        """Start the game of ``seed`` and apply ``actions``: the game :attr:`seed` and
        :attr:`actions` describe. ``ValueError`` names the first action that is not
        legal where it comes, or that comes after the game ended."""
        self.start(seed)
        for k, action in enumerate(actions):
            if self.done:
                raise ValueError(f"action {k} ({action!r}) comes after the game ended")
            legal = self.mask(self.to_move)
            ok = isinstance(action, int) and not isinstance(action, bool)
            if not (ok and 0 <= action < len(legal) and legal[action]):
                raise ValueError(f"action {k} ({action!r}) is not legal there")
            self.apply(action)

    @property
    def to_move(self) -> int:
        return self.hand.to_move

    @property
    def scores(self) -> tuple[int, ...] | None:
        return self.match.totals if self.match is not None else None

    def apply(self, action: int) -> list[float] | None:
        """Apply the action of the seat to move; each seat's reward if a hand ended."""
        moves = self._moves
        if not 0 <= action < len(moves):
            raise _out_of_range(action, len(moves))
        move = moves[action]
        before = self.hand
        seat = before.to_move
        match = self.match
        if match is not None:
            match = self.match = match.apply(move)
            after = match.hand
        else:
            after = before.apply(move)
        self.hand = after
        self.tracker.advance(before, seat, move, after)
        outcome = after.outcome
        if outcome is None:
            return None
        self.hands += 1
        self.finished_hands.append(after)
        rewards = hand_rewards(self.rules, outcome, self.reward)
        self.last_result = {
            "termination": outcome.termination,
            "winner": outcome.winner,
            "winning_side": outcome.winning_side,
            "points": outcome.points,
            "counts": outcome.counts,
        }
        if match is None:
            self.done = True
            self._set_infos(outcome, None)
            return rewards
        self.tracker.set_scores(match.totals)
        self.last_result["totals"] = match.totals
        if match.is_over:
            assert match.winners is not None
            bonus = match_rewards(self.rules, match.winners, self.reward, self.match_bonus)
            rewards = [r + b for r, b in zip(rewards, bonus, strict=True)]
            self.last_result["match_winners"] = match.winners
            self.done = True
        elif self.hands >= self.max_hands:
            # The safety bound: some rule sets make matches that run on for thousands
            # of hands; the episode ends here as truncated, not terminated.
            self.done = self.truncated = True
        else:
            self.match = match.next_hand()
            self.hand = self.match.hand
            self.tracker.start(self.hand, self.match.totals)
        self._set_infos(outcome, match.winners)
        return rewards

    def _set_infos(self, outcome: Outcome | None, match_winners: Sequence[int] | None) -> None:
        common = {
            "hands": self.hands,
            "termination": TERMINATION_CODES[outcome.termination if outcome else "none"],
            "winner": -1,
            "winning_side": -1,
            "points": 0,
            "match_over": int(match_winners is not None),
        }
        if outcome is not None and outcome.winner is not None:
            common["winner"] = outcome.winner
            common["winning_side"] = -1 if outcome.winning_side is None else outcome.winning_side
            common["points"] = outcome.points
        side_of = self.rules.side_of
        self._infos = [
            {**common, "match_won": int(match_winners is not None and side_of(s) in match_winners)}
            for s in range(self.rules.players)
        ]

    def info(self, seat: int) -> dict[str, int]:
        """``seat``'s numeric info (a new dict, keys :data:`INFO_KEYS`)."""
        return dict(self._infos[seat])

    def hand_result(self) -> dict[str, Any] | None:
        """The full result of the last hand that ended, or None before one has."""
        return None if self.last_result is None else dict(self.last_result)

    def hand_records(self) -> list[str]:
        """The record of each hand of the episode so far (:func:`hand_record`), the one
        under way as far as it went."""
        return hand_records(self.finished_hands, self.hand)

    def mask(self, seat: int) -> np.ndarray:
        """The action mask of ``seat``: its legal moves if it is to move, else zeros."""
        # A finished hand is either the end of the game or replaced at once by the
        # next hand, so ``done`` says whether the current hand is over.
        hand = self.hand
        mask = bytearray(self._num_actions)  # the cheapest buffer to fill from Python
        if seat == hand.to_move and not self.done:
            index = self._index
            for move in hand.legal_moves():
                mask[index[move]] = 1
        return np.frombuffer(mask, np.int8)

    def observe(self, seat: int) -> dict[str, np.ndarray]:
        """``seat``'s observation dict (the hot path of every environment step)."""
        return {
            "observation": self._master.take(self._gather[seat]),  # tracker.observation(seat)
            "action_mask": self.mask(seat),
        }

    def view(self, seat: int) -> SeatView:
        return self.hand.view(seat, scores=self.scores)

    def state(self) -> np.ndarray:
        return self.enc.state_tensor(self.hand, self.scores, self.tracker.cannot)

    def render(self, seat: int | None = None) -> str:
        hand = self.hand
        lines = [render_layout(hand)]
        sizes = " ".join(f"P{s}:{k}" for s, k in enumerate(hand.hand_sizes))
        lines.append(f"hand sizes: {sizes}   boneyard: {hand.boneyard_size}")
        if self.match is not None:
            totals = " ".join(str(t) for t in self.match.totals)
            lines.append(f"match totals: {totals} (target {self.rules.target_score})")
        if hand.outcome is None:
            acting = hand.to_move if seat is None else seat
            tiles = " ".join(str(t) for t in hand.hand(acting)) or "-"
            lines.append(f"P{acting} to move, holds: {tiles}")
        else:
            lines.append(f"result: {hand.outcome}")
        return "\n".join(lines)

    def frame(self, seat: int | None = None) -> np.ndarray:
        """The table as a picture (:func:`matador_env.picture.draw_frame`), ``seat``'s
        tiles face up (None: the seat to move's)."""
        match = self.match
        totals = match.totals if match is not None else None
        return draw_frame(self.hand, seat, totals, self.rules.target_score if match else None)


class CopiesMidGame(EzPickle):  # type: ignore[misc]
    """``copy.deepcopy`` and ``pickle`` of an environment in mid-game: the constructor's
    arguments (EzPickle), then the :class:`Game` and the ``live_fields`` the environment
    holds between steps, as they were, so that a copy goes on from the same point."""

    live_fields: tuple[str, ...] = ()
    game: Game

    def __getstate__(self) -> dict[str, Any]:
        state = dict(EzPickle.__getstate__(self))
        state["live"] = {k: self.__dict__[k] for k in self.live_fields if k in self.__dict__}
        state["game"] = self.game.snapshot()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        live, game = state.pop("live", {}), state.pop("game", None)
        EzPickle.__setstate__(self, state)
        self.__dict__.update(live)
        if game is not None:
            self.game.restore(game)


# What raw_env holds between steps, beyond its constructor's arguments and the game.
_LIVE_FIELDS = (
    "agents",
    "rewards",
    "_cumulative_rewards",
    "terminations",
    "truncations",
    "infos",
    "agent_selection",
    "_skip_agent_selection",  # AECEnv's dead-step order, once the game is over
    "_rewards_set",
    "_stream",
    "_dealt",
)


class raw_env(AECEnv, CopiesMidGame):  # type: ignore[misc]
    """Matador as a PettingZoo AEC environment (see the module docstring)."""

    live_fields = _LIVE_FIELDS

    metadata = {
        "render_modes": list(RENDER_MODES),
        "name": "matador_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: Rules | None = None,
        preset: str | None = None,
        episode: str = "hand",
        reward: str = "score",
        match_bonus: float | None = None,
        render_mode: str | None = None,
        max_hands: int = DEFAULT_MAX_HANDS,
        **rule_overrides: Any,
    ) -> None:
        EzPickle.__init__(
            self,
            rules,
            preset,
            episode,
            reward,
            match_bonus,
            render_mode,
            max_hands,
            **rule_overrides,
        )
        super().__init__()
        check_render_mode(render_mode)
        self.rules = resolve_rules(rules, preset, rule_overrides)
        self.game = Game(self.rules, episode, reward, match_bonus, max_hands)
        self.encoding = self.game.enc
        self.render_mode = render_mode
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        # A space of its own for each agent: seeding one agent's sampler leaves the
        # others' streams alone, as in PettingZoo's own environments.
        self.action_spaces: dict[str, spaces.Space[Any]] = {
            a: spaces.Discrete(self.encoding.num_actions) for a in self.possible_agents
        }
        self.observation_spaces: dict[str, spaces.Space[Any]] = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (self.encoding.obs_size,), np.float32),
                    "action_mask": spaces.Box(0, 1, (self.encoding.num_actions,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.state_space = spaces.Box(0.0, 1.0, (self.encoding.state_size,), np.float32)
        self._stream: random.Random | None = None
        self._rewards_set = False
        self.agents: list[str] = []
        # The game object holds a placeholder deal until reset(): observe, state and
        # render would show its hidden tiles as if a game were under way.
        self._dealt = False
        self.agent_selection = self.possible_agents[0]  # last() then says to reset

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        try:
            return self.observation_spaces[agent]
        except (KeyError, TypeError):  # TypeError: unhashable, e.g. a list
            raise self._no_agent(agent) from None

    def action_space(self, agent: str) -> spaces.Space[Any]:
        try:
            return self.action_spaces[agent]
        except (KeyError, TypeError):
            raise self._no_agent(agent) from None

    def _no_agent(self, agent: object) -> KeyError:
        """The ``KeyError`` (PettingZoo's type for an unknown agent) that names ``agent``
        and this table's agents, where a bare one named only the key."""
        return KeyError(
            f"agent {shown_value(agent)} is not an agent of this env; allowed: "
            f"{', '.join(map(repr, self.possible_agents))}"
        )

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game. ``seed``: None or an integer (see Seeding in the module
        docstring). ``options`` is accepted and unused."""
        game_seed = as_seed(seed)
        if game_seed is not None:
            self._stream = random.Random(game_seed)
        else:
            if self._stream is None:
                self._stream = random.Random()  # seeded from the OS
            game_seed = self._stream.getrandbits(63)
        game = self.game
        game.start(game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, int]] = {
            a: game.info(seat) for seat, a in enumerate(self.agents)
        }
        self._rewards_set = False
        self.agent_selection = self.possible_agents[game.to_move]
        self._dealt = True

    def _check_dealt(self, call: str) -> None:
        if not self._dealt:
            raise RuntimeError(f"{call} before reset(): no game is dealt; call reset() first")

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        try:
            seat = self._seat[agent]
        except (KeyError, TypeError):
            raise self._no_agent(agent) from None
        self._check_dealt("observe()")
        return self.game.observe(seat)

    def state(self) -> np.ndarray:
        self._check_dealt("state()")
        return self.game.state()

    def hand_result(self) -> dict[str, Any] | None:
        """The full result of the last hand that ended in this episode, or None.

        Keys: ``termination`` (a ``Termination`` name), ``winner``, ``winning_side``
        (None for none), ``points``, ``counts`` (each seat's pips left); with
        ``episode="match"`` also ``totals``, and ``match_winners`` once it is won.
        """
        return self.game.hand_result()

    def hand_records(self) -> list[str]:
        """The record of each hand of this episode so far, the one under way as far as it
        went: the deal, every seat's tiles and every move, as text that
        :func:`matador_env.engine.parse_hand_record` reads back and replays (and
        ``python -m matador_env.replay`` shows). For logging and replays; it holds
        every hidden tile, so it is no observation."""
        self._check_dealt("hand_records()")
        return self.game.hand_records()

    def step(self, action: int | None) -> None:
        """Apply ``action`` (an integer, see the module docstring) for the agent to
        move; None for a finished agent's dead step."""
        if not self.agents:
            raise RuntimeError(
                "step() with no agent left: the game is over (every agent is done) or "
                "was never dealt; call reset() to deal a new game"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int:
            if action is None:
                raise ValueError(f"{agent} is to move: None is an action only for a finished seat")
            action = as_integer(action)
        game = self.game
        seat_rewards = game.apply(action)
        self._cumulative_rewards[agent] = 0.0
        agents = self.possible_agents
        rewards = self.rewards
        if seat_rewards is None:
            if self._rewards_set:
                for a in rewards:
                    rewards[a] = 0.0
                self._rewards_set = False
        else:
            cumulative = self._cumulative_rewards
            infos = self.infos
            for seat, (a, r) in enumerate(zip(agents, seat_rewards, strict=True)):
                rewards[a] = r
                cumulative[a] += r
                infos[a] = game.info(seat)
            self._rewards_set = True
            if game.truncated:
                self.truncations = dict.fromkeys(agents, True)
            elif game.done:
                self.terminations = dict.fromkeys(agents, True)
        # Rewards are only ever non-zero at the end of a hand, so they were added to
        # the cumulative rewards just above rather than by _accumulate_rewards().
        self.agent_selection = agents[game.to_move]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        self._check_dealt("render()")
        if self.render_mode == "rgb_array":
            return self.game.frame()
        text = self.game.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


# help(matador_env.env) shows the documentation page through the function.
env.__doc__ = f"{env.__doc__}\n{__doc__}"
