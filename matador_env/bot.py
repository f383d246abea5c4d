"""Bots for game frontends: one interface over trained policies and built-in levels.

::

    from matador_env.bot import load_bot

    bot = load_bot()                      # the shipped trained bot (standard rules)
    bot = load_bot("trained", rules="pagat_teams")   # a configuration's trained bot
    move = bot.choose(view)               # a SeatView in, one of its legal moves out
    reply = bot.move_json(view_json)      # the JSON protocol: a view in, a move out

A bot needs neither torch nor the training code: trained levels run an exported
policy with onnxruntime (``pip install '.[bot]'`` in the checkout), the heuristic
levels only the engine.

Levels (:data:`LEVELS`), weakest first:

- ``random``: any legal move, uniformly; every rules configuration.
- ``greedy``: sheds its heaviest tile and spends matadors freely, never draws by
  choice; every rules configuration.
- ``casual``: the trained bot with slips: at one decision in five
  (:data:`CASUAL_SLIP`) that offers a choice it plays a uniformly random legal move
  instead of its most likely one; the rules a trained bot is shipped for. Measured
  on every shipped configuration, it beats ``greedy`` and loses to ``trained``
  (``matador_env/bots/README.md``, "Levels for frontends").
- ``trained``: the trained bot, always its most likely move (the default).

Trained bots are shipped per *configuration* (:mod:`matador_env.configs`: a
preset with its seat count and partnerships, e.g. ``standard``, ``standard_4p``,
``pagat_teams``), one folder each in ``matador_env/bots/``
(:func:`shipped_configurations`; ``python -m matador_env.bot levels`` lists them).
``load_bot(level, rules=...)`` takes the rules as a :class:`Rules`, a preset name
or a configuration name; ``casual`` and ``trained`` pick the bot whose
configuration's rules equal those rules exactly, and rules no shipped bot plays
raise :class:`BotError` naming the shipped configurations: there is no fall-back
to another bot. :func:`load_level` gives one level over every shipped
configuration, each view played by the bot of its rules (the HTTP server's plain
``trained`` and ``casual``).

``load_bot`` also takes the path of any exported policy (``runs/NAME/best``, a
``policy.onnx`` or its ``policy.json``), played like ``trained``.

Every move a bot returns is checked against the view's legal moves; a view in
which the seat has nothing to do (another seat is to act, or the hand is over)
raises :class:`BotError`. Bots are safe to share between threads: the policy
session is, and the random generator a bot owns is locked.
"""

from __future__ import annotations

import random
import threading
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from .configs import CONFIGURATIONS, Configuration, configuration_of
from .engine import PRESETS, HandState, Move, Rules, RulesError, SeatView
from .engine.rules import rules_differences
from .engine.state import SEED_LIMIT, check_rng, moves_to_choose
from .flags import integer_arg, seed_arg
from .policy import (
    OnnxPolicy,
    PolicyError,
    bots_dir,
    check_slip,
    check_temperature,
    load_policy,
    policy_paths,
    shipped_configurations,
)
from .protocol import loads, move_to_json, rules_to_json, view_from_json
from .streams import run_main

__all__ = [
    "LEVELS",
    "Bot",
    "BotError",
    "RandomBot",
    "GreedyBot",
    "PolicyBot",
    "LevelBot",
    "load_bot",
    "load_level",
    "levels_for",
    "rules_label",
    "rules_refusal",
    "resolve_rules",
    "shipped_configurations",
    "greedy_move",
]

LEVELS: dict[str, str] = {
    "random": "any legal move, uniformly (every rules configuration)",
    "greedy": "sheds its heaviest tile, spends matadors freely (every rules configuration)",
    "casual": "the trained bot with slips: a random legal move at one decision in five",
    "trained": "the trained bot, always its most likely move (the strongest)",
}
"""Level name -> what it plays, weakest first."""

CASUAL_SLIP = 0.2
"""The share of its decisions with a choice at which ``casual`` plays a uniformly random
legal move. Sampling the policy at a temperature was the level before: at
temperature 2 it lost to ``greedy`` on polish and leiden, and at 1 it did not beat it
on leiden, where slips at this share sit between ``greedy`` and ``trained`` on every
configuration (``matador_env/bots/README.md``, "Why slips, and why one in five")."""

MAX_EXAMPLES = 10_000
"""The most positions ``python -m matador_env.bot examples`` writes (one JSON document)."""


class BotError(ValueError):
    """A bot that cannot be built, or a view it cannot move in."""


class Bot(ABC):
    """A seat's view in, a legal move out."""

    name: str
    rules: Rules | None
    """The only rules the bot plays, or None for a heuristic that plays any."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    @abstractmethod
    def _choose(self, view: SeatView, rng: random.Random) -> Move: ...

    def choose(self, view: SeatView, rng: random.Random | None = None) -> Move:
        """The bot's move for ``view``, one of ``view.legal_moves``.

        ``rng`` (a ``random.Random``, else ``TypeError``) makes a sampled choice
        reproducible; without it the bot's own generator (seeded by
        ``load_bot(seed=...)``) is used.
        """
        moves_to_choose(view, f"bot {self.name}", BotError)
        check_rng(rng, f"bot {self.name}", none_allowed=True)
        self.check_rules(view.rules)
        if rng is None:
            with self._lock:
                # A private generator per call, so the lock is held only for the seed.
                rng = random.Random(self._rng.getrandbits(64))
        move = self._choose(view, rng)
        if move not in view.legal_moves:  # a broken policy file must not corrupt a game
            raise BotError(f"bot {self.name} chose {move}, which is not legal in this view")
        return move

    def check_rules(self, rules: Rules) -> None:
        if self.rules is not None and rules != self.rules:
            raise BotError(
                f"bot {self.name} plays {rules_label(self.rules)} only, not {rules_label(rules)}"
            )

    def move_json(self, data: Any, rng: random.Random | None = None) -> dict[str, Any]:
        """The JSON protocol: a view in, a move object out (:mod:`matador_env.protocol`).

        ``data`` is the view object, or its JSON text (``str``, or UTF-8 ``bytes``),
        read by :func:`~matador_env.protocol.loads`, which refuses a key given twice.
        Raises ``ProtocolError`` naming the field at fault for a message the protocol
        refuses: malformed, inconsistent, of other rules than the bot's own
        (``rules``), or a ``history`` that ends the hand (a view asks for a move; a
        finished hand has none). Raises :class:`BotError` for a well-formed view the
        bot cannot move in: another seat is to act, or a trained level over several
        configurations (:func:`load_level`) has no bot for the view's rules.
        """
        if isinstance(data, (str, bytes, bytearray)):
            data = loads(data)
        view = view_from_json(data, rules=self.rules)
        return move_to_json(self.choose(view, rng))

    def describe(self) -> dict[str, Any]:
        """Name, level, ``rules`` (``"any"``, else the protocol's form: a preset name or
        every field), ``configuration`` (the name of the configuration those rules
        are, or None), ``plays`` (the table in words) and ``about`` (the level)."""
        rules = self.rules
        config = None if rules is None else configuration_of(rules)
        return {
            "name": self.name,
            "level": getattr(self, "level", None),
            "rules": "any" if rules is None else rules_to_json(rules),
            "configuration": None if config is None else config.name,
            "plays": "every rules configuration" if rules is None else rules_label(rules, True),
            "about": LEVELS.get(getattr(self, "level", ""), "an exported policy"),
        }

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def greedy_move(view: SeatView) -> Move:
    """The heaviest tile it can place (the engine's first placement of it); else the
    only other move there is (a draw or a pass)."""
    plays = [m for m in view.legal_moves if m.kind == "play"]
    if not plays:
        return view.legal_moves[0]
    return max(plays, key=lambda m: m.tile.pips)  # type: ignore[union-attr]


class RandomBot(Bot):
    name = level = "random"
    rules = None

    def _choose(self, view: SeatView, rng: random.Random) -> Move:
        moves = view.legal_moves
        return moves[rng.randrange(len(moves))]


class GreedyBot(Bot):
    name = level = "greedy"
    rules = None

    def _choose(self, view: SeatView, rng: random.Random) -> Move:
        return greedy_move(view)


class PolicyBot(Bot):
    """An exported policy: its most likely legal move, or sampled at ``temperature``;
    with ``slip`` (from 0 to 1), at that share of the decisions with a choice, a
    uniformly random legal move instead."""

    def __init__(
        self,
        policy: OnnxPolicy,
        name: str,
        level: str | None = None,
        temperature: float = 0.0,
        seed: int | None = None,
        slip: float = 0.0,
    ) -> None:
        super().__init__(seed)
        check_temperature(temperature, BotError)
        check_slip(slip, BotError)
        self.policy = policy
        self.rules = policy.rules
        self.name = name
        self.level = level
        self.temperature = temperature
        self.slip = slip

    def _choose(self, view: SeatView, rng: random.Random) -> Move:
        moves = view.legal_moves
        # A forced move draws nothing, so a slip is a real choice gone astray.
        if self.slip and len(moves) > 1 and rng.random() < self.slip:
            return moves[rng.randrange(len(moves))]
        # Temperature 0 is the most likely move; a forced move skips the network.
        if self.temperature == 0:
            return self.policy.choose(view)
        return self.policy.choose(view, rng, self.temperature)


class LevelBot(Bot):
    """A trained level (``trained`` or ``casual``) over several configurations: each
    view is played by the bot of its rules; rules none of them plays raise
    :class:`BotError` naming the configurations (see :meth:`bot_for`)."""

    rules = None

    def __init__(self, level: str, bots: list[PolicyBot], seed: int | None = None) -> None:
        super().__init__(seed)
        self.name = self.level = level
        self.bots = {bot.policy.rules: bot for bot in bots}

    @property
    def configurations(self) -> list[str]:
        return [rules_label(rules) for rules in self.bots]

    def bot_for(self, rules: Rules) -> PolicyBot:
        """The bot playing exactly ``rules``; :class:`BotError` naming the others."""
        bot = self.bots.get(rules)
        if bot is None:
            raise BotError(_no_bot_message(rules, self.configurations))
        return bot

    def check_rules(self, rules: Rules) -> None:
        self.bot_for(rules)

    def _choose(self, view: SeatView, rng: random.Random) -> Move:
        return self.bot_for(view.rules)._choose(view, rng)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "level": self.level,
            "rules": "view",
            "configuration": None,
            "configurations": self.configurations,
            "plays": "the view's rules, with the bot of its configuration",
            "about": LEVELS[self.level],
        }


def levels_for(rules: Rules) -> list[str]:
    """The levels that play ``rules``, weakest first: random and greedy always, casual
    and trained where a bot is shipped for exactly these rules (a configuration's)."""
    trained = configuration_of(rules) in shipped_configurations()
    return [level for level in LEVELS if level in ("random", "greedy") or trained]


def resolve_rules(rules: Rules | str | None) -> Rules:
    """``rules`` as :class:`Rules`: a configuration's name, a preset's name or Rules
    (None: standard). An unknown name raises :class:`BotError` listing both kinds."""
    if rules is None:
        return Rules.preset("standard")
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        if rules in CONFIGURATIONS:
            return CONFIGURATIONS[rules].rules()
        if rules in PRESETS:
            return Rules.preset(rules)
    raise BotError(
        f"unknown rules {rules!r}: a preset ({', '.join(PRESETS)}) or a configuration "
        f"({', '.join(CONFIGURATIONS)}), or a Rules"
    )


def rules_label(rules: Rules, long: bool = False) -> str:
    """Rules in a few words: a configuration's name (``long``: with its table,
    ``standard_4p (standard, 4 players, each for himself)``), else the nearest preset
    with its seats and the fields that differ (``standard, 2 players, target_score=50``)."""
    config = configuration_of(rules)
    if config is not None:
        return f"{config.name} ({config.describe()})" if long else config.name
    best: tuple[int, str, list[str]] | None = None
    for name in PRESETS:
        try:
            base = Rules.preset(name, players=rules.players, teams=rules.teams)
        except RulesError:
            continue
        mine, theirs = rules.to_dict(), base.to_dict()
        diffs = [f"{k}={v!r}" for k, v in mine.items() if theirs[k] != v]
        if best is None or len(diffs) < best[0]:
            best = (len(diffs), name, diffs)
    if best is None or best[0] > 3:
        return f"custom rules ({rules.players} players{' in teams' if rules.teams else ''})"
    _, name, diffs = best
    teams = " in two partnerships" if rules.teams else ""
    return ", ".join([f"{name}, {rules.players} players{teams}", *diffs])


def rules_refusal(player: object, rules: Rules) -> str | None:
    """Why ``player`` (an agent or a bot) cannot play ``rules``, in words that follow its
    name, or None when it can: a player with ``rules`` plays those only (None: any),
    and one over several configurations (a trained level, ``bot:trained``) answers by
    its own ``check_rules``. The arena, the single-learner env's opponents and
    ``python -m train``'s agents all ask this before any game."""
    plays = getattr(player, "rules", None)
    if isinstance(plays, Rules) and plays != rules:
        differ = rules_differences(plays.to_dict(), rules.to_dict(), ("its", "chosen"))
        return (
            f"plays {rules_label(plays)} only, not the chosen rules {rules_label(rules)} "
            f"({'; '.join(differ)})"
        )
    check = getattr(player, "check_rules", None)
    if callable(check):
        try:
            check(rules)
        except ValueError as exc:  # BotError: no bot of its level plays these rules
            return f"cannot play the chosen rules: {exc}"
    return None


def _no_bot_message(rules: Rules, shipped: list[str]) -> str:
    return (
        f"no trained bot is shipped for {rules_label(rules, long=True)}; trained bots are "
        f"shipped for: "
        f"{', '.join(shipped) or 'none'} (python -m matador_env.bot levels). A trained bot "
        "plays its configuration's rules exactly; the levels random and greedy play any "
        "rules, and python -m train makes a bot for others."
    )


def _shipped_bot(config: Configuration, level: str, seed: int | None) -> PolicyBot:
    folder = bots_dir() / config.name
    try:
        policy = load_policy(folder, rules=config.rules())
    except PolicyError as exc:
        raise BotError(f"the shipped bot {config.name} cannot be loaded: {exc}") from None
    slip = CASUAL_SLIP if level == "casual" else 0.0
    return PolicyBot(policy, f"{level}:{config.name}", level, seed=seed, slip=slip)


def load_level(level: str, seed: int | None = None) -> LevelBot:
    """The ``trained`` or ``casual`` level over every shipped configuration."""
    if level not in ("trained", "casual"):
        raise BotError(f"load_level: {level!r} is not a trained level (trained, casual)")
    return LevelBot(level, [_shipped_bot(c, level, seed) for c in shipped_configurations()], seed)


def load_bot(
    level: str = "trained", rules: Rules | str | None = None, seed: int | None = None
) -> Bot:
    """A bot by level name (:data:`LEVELS`) or by the path of an exported policy.

    ``rules`` (a :class:`Rules`, a preset name or a configuration name, see
    :func:`resolve_rules`) picks the shipped trained bot for the ``casual`` and
    ``trained`` levels (default: standard): the one whose configuration's rules
    equal them exactly, else :class:`BotError` naming the shipped configurations.
    It is checked against an exported policy. The heuristic levels (``random``,
    ``greedy``) play any rules, so they are not tied to these: ``rules`` is only
    read, and a name that is neither a preset nor a configuration (or a value that
    is not rules) raises :class:`BotError` for them as for the others. ``seed``
    seeds the bot's own random generator. An empty ``level`` is neither a level nor a
    path (not the current folder): :class:`BotError`.
    """
    target = resolve_rules(rules)
    if isinstance(level, str) and not level.strip():  # Path("") would be the current folder
        raise BotError(
            f"no bot named: give a level ({', '.join(LEVELS)}) or the path of an exported "
            "policy, not an empty text"
        )
    if level in ("random", "greedy"):
        return RandomBot(seed) if level == "random" else GreedyBot(seed)
    if level in ("trained", "casual"):
        config = configuration_of(target)
        shipped = shipped_configurations()
        if config is None or config not in shipped:
            raise BotError(_no_bot_message(target, [c.name for c in shipped]))
        return _shipped_bot(config, level, seed)
    path = Path(level)
    try:
        # Refuses, naming why, a path (or the files it names) the system cannot look up,
        # before the checks below look it up themselves.
        policy_paths(path)
    except PolicyError as exc:
        raise BotError(str(exc)) from None
    if path.suffix in (".onnx", ".json") or path.exists() or path.with_suffix(".onnx").exists():
        try:
            policy = load_policy(path, rules=None if rules is None else target)
        except PolicyError as exc:
            raise BotError(str(exc)) from None
        return PolicyBot(policy, str(path), None, 0.0, seed)
    raise BotError(
        f"unknown bot {level!r}: a level ({', '.join(LEVELS)}) or the path of an exported "
        "policy (a folder with policy.onnx, a .onnx file or its .json sidecar)"
    )


def encoding_examples(
    rules: Rules | str = "standard", count: int = 10, seed: int = 0, level: str = "trained"
) -> dict[str, Any]:
    """Test vectors for a frontend that runs an exported policy itself (another
    language, onnxruntime there): the observation pieces and the action table of
    the rules, then ``count`` positions from random hands, each with its JSON view,
    the observation vector, the legal action indices and the move the bot makes.

    A reimplementation of the encoding is right when it gives these vectors from
    these views; ``logits`` (trained bots) check the model runs the same there.
    """
    from .encoding import ENCODING_VERSION, encoding_for
    from .protocol import view_to_json

    rules = resolve_rules(rules)
    enc = encoding_for(rules)
    bot = load_bot(level, rules=rules, seed=seed)
    rng = random.Random(seed)
    positions: list[dict[str, Any]] = []
    deal_seed = seed
    while len(positions) < count:
        state = HandState.deal(rules, deal_seed)
        deal_seed = (deal_seed + 1) % SEED_LIMIT  # the engine's seeds end at 2**64 - 1
        stop = rng.randrange(40)
        while state.outcome is None and stop > 0:
            moves = state.legal_moves()
            state = state.apply(moves[rng.randrange(len(moves))])
            stop -= 1
        if state.outcome is not None:
            continue
        view = state.view(state.to_move)
        obs = enc.observation(view)
        entry: dict[str, Any] = {
            "view": view_to_json(view),
            "observation": [float(x) for x in obs],
            "legal_actions": [enc.encode_action(m) for m in view.legal_moves],
        }
        if isinstance(bot, PolicyBot):
            entry["logits"] = [round(float(x), 5) for x in bot.policy.logits(obs)]
        move = bot.choose(view, random.Random(0))
        entry["action"] = enc.encode_action(move)
        entry["move"] = str(move)
        positions.append(entry)
    return {
        "encoding_version": ENCODING_VERSION,
        "rules": rules_to_json(rules),
        "obs_size": enc.obs_size,
        "num_actions": enc.num_actions,
        "pieces": [
            {"name": p.name, "offset": enc.offsets[p.name].start, "shape": list(p.shape)}
            for p in enc.pieces
        ],
        "actions": [enc.describe_action(a) for a in range(enc.num_actions)],
        "bot": bot.name,
        "positions": positions,
    }


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json
    import sys

    parser = argparse.ArgumentParser(
        prog="python -m matador_env.bot",
        description="The bot levels, or test vectors of the observation encoding for "
        "frontends that run an exported policy in another language.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("levels", help="list the bot levels and the configurations with a trained bot")
    ex = sub.add_parser("examples", help="print encoding test vectors as JSON")
    ex.add_argument(
        "--preset",
        "--config",
        dest="preset",
        default="standard",
        choices=[*PRESETS, *(c for c in CONFIGURATIONS if c not in PRESETS)],
        help="a preset or a configuration (default standard); --config is the same flag, "
        "as in python -m matador_env.play and python -m evaluate",
    )
    ex.add_argument("--count", type=integer_arg, default=10, help="positions (default 10)")
    ex.add_argument(
        "--seed",
        type=seed_arg,
        default=0,
        help="seed of the positions (deals, moves to them) and the bot's (default 0)",
    )
    ex.add_argument(
        "--level",
        default="trained",
        help="the bot whose moves are recorded: a level or the path of an exported policy "
        "(default trained)",
    )
    args = parser.parse_args(argv)
    if args.command == "levels":
        for name, about in LEVELS.items():
            print(f"{name:8} {about}")
        shipped = shipped_configurations()
        print(
            f"trained bots (casual, trained) are shipped for {len(shipped)} of the "
            f"{len(CONFIGURATIONS)} configurations:"
        )
        for config in shipped:
            print(f"  {config.name:14} {config.describe()}")
        missing = [c.name for c in CONFIGURATIONS.values() if c not in shipped]
        if missing:
            print(f"not shipped (random and greedy only): {', '.join(missing)}")
        return 0
    if not 1 <= args.count <= MAX_EXAMPLES:
        # Test vectors are read whole; a count beyond this ran for ever before printing.
        ex.error(f"--count must be from 1 to {MAX_EXAMPLES:,}")
    try:
        data = encoding_examples(args.preset, args.count, args.seed, args.level)
    except (BotError, PolicyError) as exc:
        print(f"{ex.prog}: error: {exc}", file=sys.stderr)
        return 2
    # print, not json.dump to sys.stdout: with the output closed (>&-) sys.stdout is None,
    # which print writes nothing to.
    print(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    run_main(main)
