"""Matador agents (run from the checkout, not installed).

=========  ==========================================================================
spec       player
=========  ==========================================================================
random     uniform over the legal moves
greedy     sheds the heaviest tile it can, spends matadors freely
expert     the hand-written strategy of the rule texts (:mod:`agents.expert`)
search     determinized search: sampled worlds, playouts (:mod:`agents.search`)
=========  ==========================================================================

Build one with ``make_agent("search:samples=32")``; see :mod:`agents.base`.
"""

from . import expert, policy, search  # noqa: F401 - importing registers the specs
from .base import (
    Agent,
    AgentSpecError,
    GreedyAgent,
    RandomAgent,
    known_specs,
    make_agent,
    register,
)
from .expert import ExpertAgent
from .search import SearchAgent

__all__ = [
    "Agent",
    "AgentSpecError",
    "ExpertAgent",
    "GreedyAgent",
    "RandomAgent",
    "SearchAgent",
    "known_specs",
    "make_agent",
    "register",
]
