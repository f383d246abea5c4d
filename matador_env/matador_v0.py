# noqa: D212, D415
"""
# Matador

| Creation           | `env(preset=...)`, or `pettingzoo.make("aec", "matador_v0")`      |
|--------------------|-------------------------------------------------------------------|
| Actions            | Discrete                                                          |
| Parallel API       | No                                                                |
| Manual Control     | No                                                                |
| Agents             | `agents = ['player_0', ..., 'player_{n-1}']`                      |
| Agents             | 2-4 (more with the double-nine and double-twelve sets)            |
| Action Shape       | (1,)                                                              |
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

`from matador_env import env` (or any import of this module) registers
`matador_v0` with PettingZoo's registry.

### Arguments

``` python
env(rules=None, preset="standard", episode="hand", reward="score",
    match_bonus=None, render_mode=None)
```

`rules`: a `matador_env.engine.Rules`; or `preset`: the name of a preset (not both).

`episode`: `"hand"` (one deal per episode) or `"match"` (hands follow one another
until the match is won by the rules' `match_end` at `target_score`).

`reward`: `"score"`, `"win"` or `"normalised"` (see Rewards).

`match_bonus`: the match winner's terminal bonus with `episode="match"` (default:
`target_score` for `"score"`, 1 for `"win"` and `"normalised"`).

`render_mode`: `None`, `"ansi"` or `"human"`.

### Observation Space

The observation is a dictionary with an `'observation'` element, the
`float32` vector below, and an `'action_mask'` element, described in Legal Actions
Mask. It is built from the observing seat's point of view and holds nothing of the
other hands or the boneyard beyond their sizes and the public history.

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
is over. Taking an illegal action through `env()` ends the game with a reward of -1
for that seat and 0 for the others (PettingZoo's `TerminateIllegalWrapper`);
`raw_env()` raises `IllegalMoveError`.

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
seeds, so a seeded run replays exactly. `infos` hold the result of the last hand
under `"hand_result"` once one has ended.

### Version History

* v0: Initial release (matador-env 0.1.0, encoding version 1).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

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
    SeatView,
    render_layout,
    set_tiles,
)

__all__ = ["env", "raw_env", "REWARD_KINDS", "EPISODE_KINDS", "hand_rewards"]

REWARD_KINDS = ("score", "win", "normalised")
EPISODE_KINDS = ("hand", "match")
_REWARD_ALIASES = {"normalized": "normalised"}


def env(**kwargs: Any) -> AECEnv:
    """The Matador AEC environment in PettingZoo's standard wrappers.

    Takes the arguments of :class:`raw_env`. An illegal action ends the game with a
    reward of -1 for the seat that took it. (The environment's documentation page,
    the docstring of the module ``matador_env.matador_v0``, follows.)
    """
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


def resolve_rules(rules: Rules | None, preset: str | None) -> Rules:
    """``rules`` or the named preset (default "standard"); not both."""
    if rules is not None and preset is not None:
        raise ValueError("give either rules or preset, not both")
    if rules is None:
        return Rules.preset(preset or "standard")
    if not isinstance(rules, Rules):
        raise TypeError(f"rules must be a matador_env.engine.Rules, got {type(rules).__name__}")
    return rules


def hand_rewards(rules: Rules, outcome: Outcome, kind: str) -> list[float]:
    """Each seat's reward for a finished hand (see the Rewards table)."""
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
    """Each seat's terminal bonus for a finished match won by the sides ``winners``."""
    if kind == "win":
        won = [rules.side_of(s) in winners for s in range(rules.players)]
        if all(won):
            return [0.0] * rules.players
        return [bonus if w else -bonus for w in won]
    return _share(rules, lambda s: rules.side_of(s) in winners, bonus, "score")


class Game:
    """One game (a hand, or a match of hands) driven by actions, for the environments.

    Keeps the engine state, the incremental observation builder and the rewards.
    Not part of the public API: use :func:`env`, :class:`raw_env` or
    :class:`~matador_env.gym_env.MatadorSingleEnv`.
    """

    def __init__(self, rules: Rules, episode: str, reward: str, match_bonus: float | None) -> None:
        if episode not in EPISODE_KINDS:
            raise ValueError(f"episode={episode!r} is not allowed; allowed: {EPISODE_KINDS}")
        reward = _REWARD_ALIASES.get(reward, reward)
        if reward not in REWARD_KINDS:
            raise ValueError(f"reward={reward!r} is not allowed; allowed: {REWARD_KINDS}")
        self.rules = rules
        self.enc = encoding_for(rules)
        self.episode = episode
        self.reward = reward
        if match_bonus is None:
            match_bonus = float(rules.target_score) if reward == "score" else 1.0
        self.match_bonus = float(match_bonus)
        self.tracker = ObservationTracker(self.enc)
        self._num_actions = self.enc.num_actions
        self._master, self._gather = self.tracker.gather_tables()
        self._index = self.enc.index
        self._moves = self.enc.moves
        self.match: MatchState | None = None
        self.hand: HandState
        self.done = False
        self.last_result: dict[str, Any] | None = None
        self.start(0)

    def start(self, seed: int) -> None:
        if self.episode == "match":
            self.match = MatchState.new(self.rules, seed)
            self.hand = self.match.hand
        else:
            self.hand = HandState.deal(self.rules, seed)
        self.tracker.start(self.hand, self.scores)
        self.done = False
        self.last_result = None

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
            raise ValueError(f"action {action!r} is out of range 0-{len(moves) - 1}")
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
            return rewards
        self.tracker.set_scores(match.totals)
        if match.is_over:
            assert match.winners is not None
            bonus = match_rewards(self.rules, match.winners, self.reward, self.match_bonus)
            rewards = [r + b for r, b in zip(rewards, bonus, strict=True)]
            self.last_result["match_winners"] = match.winners
            self.last_result["totals"] = match.totals
            self.done = True
        else:
            self.match = match.next_hand()
            self.hand = self.match.hand
            self.tracker.start(self.hand, self.match.totals)
        return rewards

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


class raw_env(AECEnv, EzPickle):  # type: ignore[misc]
    """Matador as a PettingZoo AEC environment (see the module docstring)."""

    metadata = {
        "render_modes": ["human", "ansi"],
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
    ) -> None:
        EzPickle.__init__(self, rules, preset, episode, reward, match_bonus, render_mode)
        super().__init__()
        if render_mode not in (None, "human", "ansi"):
            raise ValueError(
                f"render_mode={render_mode!r} is not allowed; allowed: None, 'human', 'ansi'"
            )
        self.rules = resolve_rules(rules, preset)
        self.game = Game(self.rules, episode, reward, match_bonus)
        self.encoding = self.game.enc
        self.render_mode = render_mode
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        action_space = spaces.Discrete(self.encoding.num_actions)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.encoding.obs_size,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.encoding.num_actions,), np.int8),
            }
        )
        self.action_spaces = {a: action_space for a in self.possible_agents}
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.state_space = spaces.Box(0.0, 1.0, (self.encoding.state_size,), np.float32)
        self._stream: random.Random | None = None
        self._rewards_set = False
        self.agents: list[str] = []

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Deal a new game. ``options`` is accepted and unused."""
        if seed is not None:
            self._stream = random.Random(seed)
            game_seed = int(seed)
        else:
            if self._stream is None:
                self._stream = random.Random()  # seeded from the OS
            game_seed = self._stream.getrandbits(63)
        self.game.start(game_seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._rewards_set = False
        self.agent_selection = self.possible_agents[self.game.to_move]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self.game.observe(self._seat[agent])

    def state(self) -> np.ndarray:
        return self.game.state()

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if action is None:
            raise ValueError(f"{agent} is to move: None is an action only for a finished seat")
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
            result = game.last_result
            cumulative = self._cumulative_rewards
            for a, r in zip(agents, seat_rewards, strict=True):
                rewards[a] = r
                cumulative[a] += r
                self.infos[a] = {"hand_result": dict(result)}  # type: ignore[arg-type]
            self._rewards_set = True
            if game.done:
                self.terminations = dict.fromkeys(agents, True)
        # Rewards are only ever non-zero at the end of a hand, so they were added to
        # the cumulative rewards just above rather than by _accumulate_rewards().
        self.agent_selection = agents[game.to_move]
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "You are calling render method without specifying any render mode."
            )
            return None
        text = self.game.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


ENV_ID = "matador_v0"

# help(matador_env.env) shows the documentation page through the function.
env.__doc__ = f"{env.__doc__}\n{__doc__}"


def _register() -> None:
    """Put ``matador_v0`` in PettingZoo's registry, where the installed PettingZoo has one."""
    try:
        from pettingzoo import register, spec
    except ImportError:  # PettingZoo before 1.25 has no registry
        return
    try:
        spec("aec", ENV_ID)
    except Exception:  # NameNotFound and its siblings: not registered yet
        register("aec", ENV_ID, entry_point=f"{__name__}:env")


_register()
