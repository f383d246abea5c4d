"""Ray RLlib (new API stack) for Matador: a masked RLModule and the env registration.

Needs ``pip install ".[compat]"`` in the checkout (ray[rllib] and torch); nothing else in
``matador_env`` imports this module.

The environment reaches RLlib through Ray's own PettingZoo wrapper
(``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``) around :func:`matador_env.env`:
one agent acts per step, and an agent's reward arrives with its next observation. Its
observations are PettingZoo's dicts, ``{"observation": float32 vector, "action_mask":
int8 vector}``, and :class:`MaskedActorCritic` reads both keys as they are::

    from ray.rllib.algorithms.ppo import PPOConfig
    from matador_env.rllib import ENV_NAME, register_env, shared_policy, shared_policy_spec

    register_env()
    config = (
        PPOConfig()
        .environment(ENV_NAME, env_config={"preset": "pagat", "players": 4, "teams": True})
        .multi_agent(**shared_policy())
        .rl_module(rl_module_spec=shared_policy_spec())
    )

``env_config`` holds the keywords of :func:`matador_env.env`, rule overrides included.
Every seat plays the one shared policy (self-play, :func:`shared_policy`). The policy
network (``pi``, observation -> logits) is what ``python -m train.rllib`` exports to the
project's ONNX + sidecar format.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.tune.registry import register_env as _ray_register_env

from . import ENV_ID
from .engine.tiles import is_text
from .matador_v0 import env

__all__ = [
    "ENV_NAME",
    "POLICY_ID",
    "MaskedActorCritic",
    "make_env",
    "register_env",
    "shared_policy",
    "shared_policy_spec",
    "policy_logits",
    "MoveChecks",
    "hidden_sizes",
]

ENV_NAME = ENV_ID
"""The name :func:`register_env` gives the environment in Ray's registry."""

POLICY_ID = "shared"
"""The module every seat plays in self-play."""

# Masked logits: low enough that softmax gives an illegal action no probability, and
# finite, so that a seat with no legal action at all (a finished game) gets no NaN.
_MASKED = -1e9


def hidden_sizes(hidden: Any, where: str) -> list[int]:
    """``hidden`` as a list of layer sizes: a sequence (list, tuple, 1-D array) of one or
    more positive integers, else ``TypeError`` (not integers) or ``ValueError`` (an
    empty one, a size below 1) naming ``where`` and what is allowed, as
    ``python -m train.rllib --hidden`` does. A string, ``64.7`` or ``True`` is no size."""
    sizes: list[int] = []
    wrong_type = is_text(hidden) or not isinstance(hidden, (Sequence, np.ndarray))
    if not wrong_type:
        try:
            for size in hidden:
                if isinstance(size, (bool, np.bool_)):
                    raise TypeError
                sizes.append(operator.index(size))
        except TypeError:
            wrong_type = True
    if wrong_type or not sizes or min(sizes) < 1:
        error = TypeError if wrong_type else ValueError
        raise error(
            f"{where}: hidden={hidden!r} is not allowed; allowed: hidden layer sizes, a "
            "list of one or more positive integers, e.g. [256, 256]"
        )
    return sizes


def _mlp(sizes: Sequence[int]) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = []
    for k, (a, b) in enumerate(zip(sizes, sizes[1:], strict=False)):
        layers.append(torch.nn.Linear(a, b))
        if k < len(sizes) - 2:
            layers.append(torch.nn.Tanh())
    return torch.nn.Sequential(*layers)


class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):  # type: ignore[misc]
    """PPO's actor-critic over PettingZoo's ``"observation"`` / ``"action_mask"`` dict.

    ``model_config``: ``{"hidden": [256, 256]}``, the hidden layer sizes of the policy
    and of the value network (separate networks, tanh, as SB3's ``MlpPolicy``): one or
    more positive integers (:func:`hidden_sizes` refuses anything else). The
    logits of the actions the mask forbids are set to -1e9, so they are never sampled
    and the exported ``pi`` is the plain observation -> logits network.
    """

    def setup(self) -> None:
        space: Any = self.observation_space
        actions: Any = self.action_space
        config: Any = self.model_config or {}
        if not hasattr(space, "spaces") or set(space.spaces) != {"observation", "action_mask"}:
            raise ValueError(
                f"MaskedActorCritic needs a Dict observation space with the keys "
                f"'observation' and 'action_mask' (PettingZoo's), got {space}"
            )
        obs_size = int(space["observation"].shape[0])
        hidden = hidden_sizes(
            config.get("hidden", (256, 256)), "MaskedActorCritic model_config['hidden']"
        )
        self.pi = _mlp([obs_size, *hidden, int(actions.n)])
        # Built in inference-only copies too, so that weights sync key for key.
        self.vf = _mlp([obs_size, *hidden, 1])

    def _logits(self, batch: dict[str, Any]) -> torch.Tensor:
        obs = batch[Columns.OBS]
        logits = self.pi(obs["observation"])
        return torch.where(obs["action_mask"] > 0, logits, torch.full_like(logits, _MASKED))

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        # Inference, exploration and training alike (RLModule's _forward_* call it).
        return {Columns.ACTION_DIST_INPUTS: self._logits(batch)}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)


def make_env(config: Mapping[str, Any] | None = None) -> PettingZooEnv:
    """The RLlib environment: :func:`matador_env.env` with ``config`` as its keywords.

    ``config`` is a mapping (Ray passes its ``env_config``, an ``EnvContext``) or None;
    anything else, a preset's name included, raises ``TypeError``: write
    ``{"preset": "pagat"}``.
    """
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(
            f"config={config!r} ({type(config).__name__}) is not allowed; allowed: None or "
            'a mapping of matador_env.env keywords, e.g. {"preset": "pagat", "players": 4}'
        )
    return PettingZooEnv(env(**dict(config or {})))


def register_env(name: str = ENV_NAME) -> str:
    """Register :func:`make_env` under ``name`` in Ray's registry; returns ``name``."""
    _ray_register_env(name, make_env)
    return name


def _to_shared(agent_id: Any, episode: Any = None, **kwargs: Any) -> str:
    return POLICY_ID


def shared_policy() -> dict[str, Any]:
    """``AlgorithmConfig.multi_agent`` keywords: every seat plays :data:`POLICY_ID`."""
    return {"policies": {POLICY_ID}, "policy_mapping_fn": _to_shared}


def shared_policy_spec(hidden: Sequence[int] = (256, 256)) -> MultiRLModuleSpec:
    """The module spec of :func:`shared_policy`: one :class:`MaskedActorCritic` with
    ``hidden`` layers (one or more positive integers, checked by :func:`hidden_sizes`)."""
    sizes = hidden_sizes(hidden, "shared_policy_spec")
    return MultiRLModuleSpec(
        rl_module_specs={
            POLICY_ID: RLModuleSpec(module_class=MaskedActorCritic, model_config={"hidden": sizes})
        }
    )


def policy_logits(module: MaskedActorCritic) -> torch.nn.Module:
    """The module's policy network alone: observation -> action logits (for export)."""
    return module.pi


class MoveChecks(RLlibCallback):  # type: ignore[misc]
    """Counts, in every sample the env runners take, the actions its masks forbade.

    Logs ``illegal_actions_lifetime`` (0 when the masking works) and
    ``checked_actions_lifetime``, each summed over the run, into the env runners'
    results, so that a run shows it played only legal moves (an illegal one would also
    end the game through PettingZoo's ``TerminateIllegalWrapper``, with -1 for the
    seat that made it). Each action is checked once, in the sample that holds it, at
    the end of every ``EnvRunner.sample()``: an episode that spans several rollout
    fragments reaches ``on_episode_end`` in chunks, and where the env runner is the
    driver's own, PPO's learner connector has by then appended a duplicated last step
    to the earlier chunks (a bootstrap step, not an action taken). An agent's action
    joins its episode only with the observation after it, so the actions still waiting
    for one when a sample ends are counted with a later sample: the checked count
    trails the env steps by those few (249 of 250 in a small run).
    """

    def on_sample_end(
        self,
        *,
        env_runner: Any = None,
        metrics_logger: Any = None,
        samples: Any,
        worker: Any = None,
        **kwargs: Any,
    ) -> None:
        illegal = steps = 0
        for episode in samples:
            for agent_episode in episode.agent_episodes.values():
                chunk_illegal, chunk_steps = _illegal_actions(agent_episode)
                illegal += chunk_illegal
                steps += chunk_steps
        if metrics_logger is not None:
            metrics_logger.log_value("illegal_actions_lifetime", illegal, reduce="lifetime_sum")
            metrics_logger.log_value("checked_actions_lifetime", steps, reduce="lifetime_sum")


def _illegal_actions(agent_episode: Any) -> tuple[int, int]:
    """The actions of one agent's episode chunk that its masks forbade, and its actions.

    A chunk's observations are one more than its actions (each action's observation,
    then the one after the last); they are a list of dicts while the chunk is being
    sampled, and one dict of stacked arrays once RLlib has numpy'ized it (a finished
    episode)."""
    actions = np.asarray(agent_episode.get_actions()).reshape(-1)
    if actions.size == 0:
        return 0, 0
    observations = agent_episode.get_observations()
    if isinstance(observations, Mapping):
        masks = np.asarray(observations["action_mask"])
    else:
        masks = np.stack([np.asarray(obs["action_mask"]) for obs in observations])
    allowed = masks[np.arange(actions.size), actions.astype(np.int64)]
    return int(np.count_nonzero(allowed == 0)), int(actions.size)
