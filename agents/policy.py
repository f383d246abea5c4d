"""``policy:<path>``: an exported (ONNX) policy as an agent; ``bot:<level>``: a level of
the bot runtime (:mod:`matador_env.bot`), so the arena can measure the levels frontends get.

The path is a training run's ``best``/``final`` folder, a folder holding
``policy.onnx``, or the ``.onnx`` file itself (see :mod:`matador_env.policy`).
Loading checks the sidecar: a policy trained for other rules or another
observation encoding is refused with a message that names the difference.
The agent plays the most likely legal action of the policy (deterministic), or with
``sample=true`` draws one from the policy's distribution (``sample`` is true or false,
also 1 or 0, yes or no; anything else is refused); ``runtime=onnxruntime`` keeps
onnxruntime for every move instead of the numpy runtime of plain MLP networks
(:data:`matador_env.policy.RUNTIMES`), e.g. to compare the two.
"""

from __future__ import annotations

import random

from matador_env.bot import LEVELS, Bot, BotError, load_bot, load_level
from matador_env.engine import Move, Rules, SeatView
from matador_env.engine.tiles import shown_value
from matador_env.policy import RUNTIMES, OnnxPolicy, PolicyError, load_policy

from .base import Agent, AgentSpecError, checked_turn, known_specs, register, spec_bool


class PolicyAgent(Agent):
    """Plays an exported policy's most likely legal move."""

    def __init__(self, path: str, sample: bool = False, runtime: str = "auto") -> None:
        """``path`` and ``runtime`` are checked by :func:`load_policy`; ``sample`` is
        True or False alone (a str such as "false" is true, and would sample)."""
        if not isinstance(sample, bool):
            raise TypeError(
                f"PolicyAgent: sample={shown_value(sample)} is not allowed; allowed: True "
                "(draw from the policy's distribution) or False (its most likely move)"
            )
        self.path = path
        self.sample = sample
        self.policy: OnnxPolicy = load_policy(path, runtime=runtime)
        self.name = f"policy:{path}" + ("" if runtime == "auto" else f",runtime={runtime}")
        self.rules = self.policy.rules
        self.spec = (
            f"policy:{self.policy.path.resolve()},sample={str(sample).lower()},runtime={runtime}"
        )

    def act(self, view: SeatView, rng: random.Random) -> Move:
        checked_turn(view, rng, self.name)
        return self.policy.choose(view, rng if self.sample else None)


def _build(options: dict[str, str]) -> Agent:
    path = options.pop("_", None)
    sample = spec_bool("policy", "sample", options.pop("sample", "false"))
    runtime = options.pop("runtime", "auto")  # checked by load_policy, named in its error
    if options:
        raise AgentSpecError(
            f"policy has no option {next(iter(options))!r}; options: sample=true or false, "
            f"runtime= one of {', '.join(RUNTIMES)} (e.g. policy:runs/NAME/best,sample=true)"
        )
    if path is None:
        raise AgentSpecError(
            "policy spec: give the exported policy's path, e.g. policy:runs/NAME/best "
            f"(optionally ,sample=true and ,runtime= one of {', '.join(RUNTIMES)}); "
            f"known specs: {', '.join(known_specs())}"
        )
    try:
        return PolicyAgent(path, sample=sample, runtime=runtime)
    except PolicyError as e:
        raise AgentSpecError(
            f"policy spec {path!r}: {e}; known specs: {', '.join(known_specs())}"
        ) from e


register("policy", _build, "policy:<path_to_exported_policy>[,sample=true][,runtime=onnxruntime]")


class BotAgent(Agent):
    """A bot runtime level; the arena's random generator drives its sampling."""

    def __init__(self, level: str) -> None:
        """``level``: one of :data:`~matador_env.bot.LEVELS`, as ``bot:<level>`` allows."""
        allowed = f"one of the levels {', '.join(LEVELS)}"
        if not isinstance(level, str):
            raise TypeError(
                f"BotAgent: level={shown_value(level)} is not allowed; allowed: {allowed}"
            )
        if level not in LEVELS:
            raise ValueError(f"BotAgent: level={level!r} is not allowed; allowed: {allowed}")
        # The trained levels play every shipped configuration, each with its own bot.
        self.bot: Bot = load_level(level) if level in ("trained", "casual") else load_bot(level)
        self.name = f"bot:{level}"
        self.rules = self.bot.rules

    def check_rules(self, rules: Rules) -> None:
        """:class:`BotError` naming the shipped configurations when no bot plays ``rules``."""
        self.bot.check_rules(rules)

    def act(self, view: SeatView, rng: random.Random) -> Move:
        checked_turn(view, rng, self.name)
        return self.bot.choose(view, rng)


def _build_bot(options: dict[str, str]) -> Agent:
    level = options.pop("_", None)
    if level not in LEVELS or options:
        raise AgentSpecError(
            f"bot spec: bot:<level> with a level of {', '.join(LEVELS)}; "
            f"known specs: {', '.join(known_specs())}"
        )
    try:
        return BotAgent(level)
    except BotError as e:
        raise AgentSpecError(f"bot spec {level!r}: {e}") from e


register("bot", _build_bot, "bot:<level>")
