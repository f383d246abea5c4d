"""The configurations a trained bot is shipped for: a preset, a seat count, teams.

A *configuration* names one table a frontend offers: the rules of a preset
(``docs/rules.md``) with the number of players and partnerships. Each shipped bot
(``matador_env/bots/<name>/``) plays exactly one configuration, and the strength
matrix (``python -m benchmarks.strength``) and the bot recipe (``python -m
train.bots``) go over the same table, in this order.

>>> configuration("pagat_teams").rules().players
4
>>> configuration_of(Rules.preset("standard", players=3)).name
'standard_3p'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .engine import Rules, RulesError
from .engine.rules import a_type, checked_value
from .engine.tiles import is_text, shown_value

__all__ = [
    "CONFIGURATIONS",
    "Configuration",
    "ConfigurationError",
    "configuration",
    "configuration_of",
    "seated_rules",
    "seated_rules_flag",
]


class ConfigurationError(ValueError):
    """An unknown configuration name (the message lists the known ones), or a new
    configuration's name that is not a word of lowercase letters, digits and
    underscores."""


_NAME = re.compile(r"[a-z0-9_]+")


@dataclass(frozen=True)
class Configuration:
    name: str
    """Its name: the preset's for the preset's own seats, else e.g. ``standard_4p``."""
    preset: str
    players: int | None = None
    """Players, when not the preset's."""
    teams: bool | None = None
    """Partnerships, when not the preset's."""

    def __post_init__(self) -> None:
        # A name becomes a directory (matador_env/bots/<name>/) and a table row: a word
        # of lowercase letters, digits and underscores, nothing a path could climb out of.
        if not (isinstance(self.name, str) and _NAME.fullmatch(self.name)):
            raise ConfigurationError(
                f"a configuration's name is a word of lowercase letters, digits and "
                f"underscores, e.g. 'standard_4p'; got {shown_value(self.name)}"
            )
        # The seats as Rules takes them (numpy integers held as ints), and a preset and
        # seats that make rules: a bad one fails here, not at its first use.
        if self.players is not None:
            object.__setattr__(self, "players", checked_value("players", self.players))
        if self.teams is not None:
            object.__setattr__(self, "teams", checked_value("teams", self.teams))
        self.rules()

    def rules(self) -> Rules:
        return seated_rules(self.preset, self.players, self.teams)

    def flags(self) -> list[str]:
        """The command-line flags that choose it (``python -m train``, ``python -m
        evaluate``, ``python -m matador_env.play``)."""
        out = ["--preset", self.preset]
        if self.players is not None:
            out += ["--players", str(self.players)]
        if self.teams is not None:
            out.append("--teams" if self.teams else "--no-teams")
        return out

    def describe(self) -> str:
        """E.g. ``pagat, 4 players in two partnerships``."""
        rules = self.rules()
        if rules.teams:
            seats = f"{rules.players} players in two partnerships"
        else:
            seats = f"{rules.players} players" + (", each for himself" if rules.players > 2 else "")
        return f"{self.preset}, {seats}"


def seated_rules(
    preset: str,
    players: int | None = None,
    teams: bool | None = None,
    changes: Sequence[str] = (),
) -> Rules:
    """The rules of ``preset`` with its seats changed (``players``, ``teams``: None
    keeps the preset's) and then ``changes``, ``KEY=VALUE`` texts (later pairs win; a
    change of a seat field given on its own is refused).

    The seats go through :meth:`Rules.preset`, which also sets what follows from them
    (the hand size). :class:`~matador_env.engine.RulesError` names the field at fault:
    ``players`` must be an integer (an int or a numpy integer; not a bool or text) and
    ``teams`` True or False, as :class:`Rules` takes them, with changes or without;
    ``changes`` a list of strings (not one string, which would be read letter by
    letter), each one ``KEY=VALUE`` pair without spaces (``"target_score=50
    players=3"`` would smuggle a second pair in).
    """
    overrides: dict[str, Any] = {}
    if players is not None:
        overrides["players"] = checked_value("players", players)
    if teams is not None:
        overrides["teams"] = checked_value("teams", teams)
    if is_text(changes) or not isinstance(changes, Iterable):
        raise RulesError(
            "changes",
            changes,
            "a list of KEY=VALUE texts, e.g. ['target_score=150']",
            f"{a_type(changes)}"
            + (", which would be read letter by letter" if isinstance(changes, str) else ""),
        )
    changes = list(changes)
    for change in changes:
        if not isinstance(change, str):
            raise RulesError(
                "changes",
                change,
                "KEY=VALUE texts, e.g. 'target_score=150'",
                f"{a_type(change)} in the changes",
            )
        key, sep, value = change.partition("=")
        if not (key and sep and value) or "=" in value or any(c.isspace() for c in change):
            # Each change is one pair: the pairs are joined with spaces into the rules'
            # text form, where a space or a second '=' would make it more than one.
            raise RulesError(
                "rules text",
                change,
                "one key=value pair per change, with no spaces (e.g. target_score=150)",
            )
        if key in overrides:
            # Refused rather than one silently winning over the other.
            raise RulesError(
                key,
                value,
                "changes of the other fields",
                f"{key} is given on its own as {overrides[key]!r}; give it once",
            )
    if not changes:
        return Rules.preset(preset, **overrides)
    # The text form types each KEY=VALUE as the engine reads it.
    pairs = [*changes, *(f"{k}={v}" for k, v in overrides.items())]
    return Rules.from_text(" ".join([Rules.preset(preset).to_text(), *pairs]))


def seated_rules_flag(
    error: RulesError, players: int | None, teams: bool | None, changes: Sequence[str]
) -> str:
    """The command-line flag to name for a :func:`seated_rules` error: ``--preset``,
    ``--rules`` when there were changes, else the seat flags given (``--players with
    --teams``)."""
    if error.field == "preset":
        return "--preset"
    if changes:
        return "--rules"
    seats = [f"--{k}" for k, v in (("players", players), ("teams", teams)) if v is not None]
    return " with ".join(seats) or "--preset"


CONFIGURATIONS: Mapping[str, Configuration] = MappingProxyType(
    {
        c.name: c
        for c in (
            Configuration("standard", "standard"),
            Configuration("pagat", "pagat"),
            Configuration("kardinal", "kardinal"),
            Configuration("kardinal_hard", "kardinal_hard"),
            Configuration("polish", "polish"),
            Configuration("leiden", "leiden"),
            Configuration("double_nine", "double_nine"),
            Configuration("double_twelve", "double_twelve"),
            Configuration("standard_3p", "standard", players=3),
            Configuration("standard_4p", "standard", players=4),
            Configuration("pagat_teams", "pagat", players=4, teams=True),
        )
    }
)
"""Every configuration a bot is built for, by name, in the order tables list them.
Read-only: an edit would change what every later lookup finds."""


def configuration(name: str) -> Configuration:
    """The configuration of that name; :class:`ConfigurationError` listing the names."""
    try:
        return CONFIGURATIONS[name]
    except (KeyError, TypeError):
        raise ConfigurationError(
            f"unknown configuration {name!r}; known: {', '.join(CONFIGURATIONS)}"
        ) from None


def configuration_of(rules: Rules) -> Configuration | None:
    """The configuration whose rules equal ``rules`` exactly, if any; ``TypeError`` for
    anything but a :class:`Rules` (a preset name read as "no configuration")."""
    if not isinstance(rules, Rules):
        raise TypeError(
            f"configuration_of: rules={shown_value(rules)} is not allowed; allowed: a Rules "
            "(for a name, see configuration())"
        )
    for c in CONFIGURATIONS.values():
        if c.rules() == rules:
            return c
    return None
