"""Matador agents (run from the checkout, not installed): see :mod:`agents.base`."""

from .base import (
    Agent,
    AgentSpecError,
    GreedyAgent,
    RandomAgent,
    known_specs,
    make_agent,
    register,
)

__all__ = [
    "Agent",
    "AgentSpecError",
    "GreedyAgent",
    "RandomAgent",
    "known_specs",
    "make_agent",
    "register",
]
