"""The agent interface, the simplest baselines and the registry of agent specs.

An agent sees one seat's :class:`~matador_env.engine.SeatView` (its legal moves
are ``view.legal_moves``) and returns one of those moves; a view with none (another
seat to act, the hand over) is refused (:func:`matador_env.engine.state.moves_to_choose`,
which the bot runtime uses too). All randomness
comes from the ``rng`` passed in, a ``random.Random`` (anything else is refused at
the start of the move), so a game replays from its seeds.
"""

from __future__ import annotations

import math
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable

from matador_env.bot import greedy_move
from matador_env.engine import Move, Rules, SeatView
from matador_env.engine.state import check_rng, moves_to_choose
from matador_env.engine.tiles import INTEGER_TYPES, parse_digits, shown_value
from matador_env.values import integer_check

__all__ = [
    "Agent",
    "AgentSpecError",
    "GreedyAgent",
    "RandomAgent",
    "make_agent",
    "register",
    "known_specs",
    "checked_count",
    "checked_turn",
    "moves_to_choose",
    "spec_bool",
    "spec_count",
    "spec_number",
]


class Agent(ABC):
    """A player: a seat's view in, a legal move out."""

    name: str = "agent"
    rules: Rules | None = None
    """The only rules the agent plays (a trained policy's), or None for any rules."""
    spec: str = ""
    """The canonical spec: the name and every option resolved, defaults included, so
    two spellings of one player (``search`` and ``search:samples=64``) share it;
    :func:`make_agent` sets it from the agent's name where its factory does not."""

    @abstractmethod
    def act(self, view: SeatView, rng: random.Random) -> Move:
        """Choose one of ``view.legal_moves``; a view with none to choose from, or an
        ``rng`` that is no ``random.Random``, is refused (:func:`checked_turn`)."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def checked_turn(view: object, rng: object, who: str) -> tuple[Move, ...]:
    """``view.legal_moves``, once ``view`` is a seat's view with a move to make
    (:func:`moves_to_choose`) and ``rng`` a ``random.Random``
    (:func:`~matador_env.engine.state.check_rng`): the check at the start of every
    agent's ``act``."""
    moves = moves_to_choose(view, who)
    check_rng(rng, who)
    return moves


class RandomAgent(Agent):
    """Uniform over the legal moves."""

    name = "random"

    def act(self, view: SeatView, rng: random.Random) -> Move:
        moves = checked_turn(view, rng, self.name)
        return moves[rng.randrange(len(moves))]


class GreedyAgent(Agent):
    """Sheds the heaviest tile it can and spends matadors freely; never draws by choice."""

    name = "greedy"

    def act(self, view: SeatView, rng: random.Random) -> Move:
        checked_turn(view, rng, self.name)
        # The bot runtime's "greedy" level is the same player: one definition.
        return greedy_move(view)


class AgentSpecError(ValueError):
    """An agent spec that is unknown or malformed; the message lists the known specs."""


_Factory = Callable[[dict[str, str]], Agent]
_REGISTRY: dict[str, tuple[_Factory, str]] = {}


def register(name: str, factory: _Factory, usage: str) -> None:
    """Make ``name`` (with ``name:key=value,...`` options) buildable by :func:`make_agent`."""
    _REGISTRY[name] = (factory, usage)


def known_specs() -> list[str]:
    return [usage for _, usage in _REGISTRY.values()]


_NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def spec_count(agent: str, key: str, raw: str, least: int = 1, most: int | None = None) -> int:
    """Option ``key=raw`` of ``agent``'s spec as an integer from ``least`` to ``most``
    (no bound: None), written in the ASCII digits 0-9 alone; else
    :class:`AgentSpecError` naming the option, the value and what is allowed."""
    allowed = f">= {least}" if most is None else f"from {least} to {most:,}"
    number = parse_digits(raw)
    if number is None:
        raise AgentSpecError(
            f"{agent} option {key}={raw!r}: expected an integer {allowed} in the digits 0-9"
        )
    if number < least or (most is not None and number > most):
        raise AgentSpecError(f"{agent} option {key}={number}: must be {allowed}")
    return number


_count_check = integer_check(ValueError, type_error=TypeError)


def checked_count(
    agent: str,
    key: str,
    value: object,
    least: int = 1,
    most: int | None = None,
    types: str = INTEGER_TYPES,
) -> int:
    """Argument ``key`` of ``agent``'s constructor as an ``int`` from ``least`` to
    ``most`` (no bound: None), the range its spec allows (:func:`spec_count`); an
    integer of :data:`~matador_env.engine.tiles.INTEGER_KINDS` (a numpy integer
    becomes an ``int``), else ``TypeError`` (a float, a bool, a str); out of range,
    ``ValueError``. Both name the agent, the argument, the value and what is allowed
    (:func:`matador_env.values.integer_check`, the batch engine's check too); a type
    refused is told it takes ``types``."""
    return _count_check(f"{agent}: {key}", value, least, most, types)


def spec_number(agent: str, key: str, raw: str) -> float:
    """Option ``key=raw`` of ``agent``'s spec as a finite number (``8``, ``-2.5``,
    ``1e-3``) in the ASCII digits 0-9; ``nan``, ``inf``, a number too large for a
    float, and other scripts' digits are refused with :class:`AgentSpecError`."""
    value = float(raw) if _NUMBER_RE.fullmatch(raw) else math.nan
    if not math.isfinite(value):
        raise AgentSpecError(
            f"{agent} option {key}={raw!r}: expected a number (finite, in the digits 0-9, "
            "e.g. 8, -2.5 or 1e-3)"
        )
    return value


_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


def spec_bool(agent: str, key: str, raw: str) -> bool:
    """Option ``key=raw`` of ``agent``'s spec as a boolean: true, 1 or yes; false, 0 or
    no (any case); anything else is refused with :class:`AgentSpecError`."""
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise AgentSpecError(
        f"{agent} option {key}={raw!r}: expected true or false (also 1 or 0, yes or no)"
    )


def _no_options(name: str, cls: type[Agent]) -> _Factory:
    def build(options: dict[str, str]) -> Agent:
        if options:
            raise AgentSpecError(f"agent {name!r} takes no options, got {options}")
        return cls()

    return build


register("random", _no_options("random", RandomAgent), "random")
register("greedy", _no_options("greedy", GreedyAgent), "greedy")


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """``"search:samples=32,width=4"`` -> ``("search", {"samples": "32", "width": "4"})``.

    A first option without ``=`` is positional and kept under the key ``"_"``
    (``"policy:path/to/file"`` -> ``("policy", {"_": "path/to/file"})``); an agent
    that takes none refuses it.
    """
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    options: dict[str, str] = {}
    if not name:
        raise AgentSpecError(
            f"malformed agent spec {spec!r}: it starts with the agent's name; "
            f"known specs: {', '.join(known_specs())}"
        )
    if rest:
        for i, part in enumerate(rest.split(",")):
            key, sep, value = part.partition("=")
            if not sep and i == 0 and key.strip():
                options["_"] = key.strip()
                continue
            if sep and key.strip() in options:
                raise AgentSpecError(
                    f"malformed agent spec {spec!r}: option {key.strip()!r} is given twice "
                    "(which one counts would be a guess); give it once; known specs: "
                    f"{', '.join(known_specs())}"
                )
            if not sep or not key.strip():
                raise AgentSpecError(
                    f"malformed agent spec {spec!r}: options are key=value pairs "
                    f"separated by commas; known specs: {', '.join(known_specs())}"
                )
            options[key.strip()] = value.strip()
    return name, options


def make_agent(spec: str) -> Agent:
    """Build an agent from its spec string, e.g. ``random``, ``search:samples=32``.

    Numbers in a spec are written in the ASCII digits 0-9. The agent's ``spec`` is
    the canonical form of ``spec``: equal for two spellings of one player.

    Raises :class:`AgentSpecError` (a ``ValueError``) naming the known specs when the
    agent is unknown or the spec malformed, and ``TypeError`` when ``spec`` is no
    ``str``.
    """
    if not isinstance(spec, str):
        raise TypeError(
            f"make_agent: the spec is a str, e.g. 'search:samples=32', got "
            f"{shown_value(spec)}; known specs: {', '.join(known_specs())}"
        )
    name = spec.strip().partition(":")[0].strip()
    if name not in _REGISTRY:
        raise AgentSpecError(
            f"unknown agent {name!r} in spec {spec!r}; known specs: {', '.join(known_specs())}"
        )
    _, options = parse_spec(spec)
    factory, usage = _REGISTRY[name]
    if "_" in options and ":<" not in usage:  # a positional option is shown as :<...>
        raise AgentSpecError(
            f"malformed agent spec {spec!r}: {name} takes key=value options "
            f"({usage}); known specs: {', '.join(known_specs())}"
        )
    agent = factory(options)
    if not agent.spec:
        agent.spec = agent.name
    return agent
