"""The agent interface, the simplest baselines and the registry of agent specs.

An agent sees one seat's :class:`~matador_env.engine.SeatView` (its legal moves
are ``view.legal_moves``) and returns one of those moves. All randomness comes
from the ``rng`` passed in, so a game replays from its seeds.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable

from matador_env.bot import greedy_move
from matador_env.engine import Move, Rules, SeatView

__all__ = [
    "Agent",
    "AgentSpecError",
    "GreedyAgent",
    "RandomAgent",
    "make_agent",
    "register",
    "known_specs",
]


class Agent(ABC):
    """A player: a seat's view in, a legal move out."""

    name: str = "agent"
    rules: Rules | None = None
    """The only rules the agent plays (a trained policy's), or None for any rules."""

    @abstractmethod
    def act(self, view: SeatView, rng: random.Random) -> Move:
        """Choose one of ``view.legal_moves``."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class RandomAgent(Agent):
    """Uniform over the legal moves."""

    name = "random"

    def act(self, view: SeatView, rng: random.Random) -> Move:
        moves = view.legal_moves
        return moves[rng.randrange(len(moves))]


class GreedyAgent(Agent):
    """Sheds the heaviest tile it can and spends matadors freely; never draws by choice."""

    name = "greedy"

    def act(self, view: SeatView, rng: random.Random) -> Move:
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
            if not sep or not key.strip() or key.strip() in options:
                raise AgentSpecError(
                    f"malformed agent spec {spec!r}: options are key=value pairs "
                    f"separated by commas; known specs: {', '.join(known_specs())}"
                )
            options[key.strip()] = value.strip()
    return name, options


def make_agent(spec: str) -> Agent:
    """Build an agent from its spec string, e.g. ``random``, ``search:samples=32``.

    Raises :class:`AgentSpecError` (a ``ValueError``) naming the known specs when the
    agent is unknown or the spec malformed.
    """
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
    return factory(options)
