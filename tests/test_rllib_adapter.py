"""matador_env.rllib without a Ray session: :class:`MoveChecks` counts every chunk of
an episode that spans rollout fragments, and the module's hidden sizes are checked."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("ray.rllib")
torch = pytest.importorskip("torch")

from matador_env import raw_env  # noqa: E402
from matador_env.rllib import (  # noqa: E402
    POLICY_ID,
    MaskedActorCritic,
    MoveChecks,
    shared_policy_spec,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# -- MoveChecks -----------------------------------------------------------------------------


class _AgentChunk:
    def __init__(self, observations: Any, actions: list[int]) -> None:
        self._observations = observations
        self._actions = actions

    def get_observations(self) -> Any:
        return self._observations

    def get_actions(self) -> Any:
        return self._actions


class _Chunk:
    def __init__(self, **agents: _AgentChunk) -> None:
        self.agent_episodes = agents


class _Logger:
    def __init__(self) -> None:
        self.logged: dict[str, float] = {}

    def log_value(self, key: str, value: float, reduce: str) -> None:
        assert reduce == "lifetime_sum"
        self.logged[key] = self.logged.get(key, 0) + value


def _masks(*legal: list[int], size: int = 4) -> list[np.ndarray]:
    """One mask per observation, each allowing the actions in ``legal``."""
    out = []
    for allowed in legal:
        mask = np.zeros(size, dtype=np.int8)
        mask[allowed] = 1
        out.append(mask)
    return out


def test_movechecks_checks_every_chunk_a_sample_returns() -> None:
    # A sample returns episode chunks: finished ones numpy'ized (one dict of stacked
    # arrays), the ongoing one as lists of dicts. Every action of every chunk is
    # checked, an illegal one counted wherever it is.
    first = _Chunk(
        player_0=_AgentChunk(
            {"observation": np.zeros((3, 2)), "action_mask": np.stack(_masks([0], [1], [2]))},
            [0, 3],  # 3 was not allowed
        ),
        player_1=_AgentChunk(
            {"observation": np.zeros((2, 2)), "action_mask": np.stack(_masks([1], [0]))}, [1]
        ),
    )
    middle = _Chunk(
        player_0=_AgentChunk(
            {"observation": np.zeros((1, 2)), "action_mask": np.stack(_masks([2]))}, []
        ),
        player_1=_AgentChunk(
            {"observation": np.zeros((2, 2)), "action_mask": np.stack(_masks([0], [1]))}, [0]
        ),
    )
    last = _Chunk(  # the chunk being sampled: lists of dicts
        player_0=_AgentChunk(
            [{"observation": np.zeros(2), "action_mask": m} for m in _masks([2], [0, 1])], [2]
        ),
        player_1=_AgentChunk(
            [{"observation": np.zeros(2), "action_mask": m} for m in _masks([1], [3])], [1]
        ),
    )
    logger = _Logger()
    MoveChecks().on_sample_end(samples=[first, middle, last], metrics_logger=logger)
    assert logger.logged == {"illegal_actions_lifetime": 1, "checked_actions_lifetime": 6}

    logger = _Logger()
    MoveChecks().on_sample_end(samples=[last], metrics_logger=logger)
    assert logger.logged == {"illegal_actions_lifetime": 0, "checked_actions_lifetime": 2}


class _StepsToo(MoveChecks):
    """MoveChecks, also logging how many episodes were cut into chunks."""

    def on_episode_end(self, *, metrics_logger: Any = None, **kwargs: Any) -> None:
        metrics_logger.log_value("chunked_episodes_lifetime", 0, reduce="lifetime_sum")
        if kwargs.get("prev_episode_chunks"):
            metrics_logger.log_value("chunked_episodes_lifetime", 1, reduce="lifetime_sum")


def test_movechecks_checks_every_action_of_episodes_sampled_in_short_fragments() -> None:
    # RLlib's own env runner, in this process (no Ray session): fragments of 7 steps
    # cut every game (20-40 steps) into chunks.
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    from matador_env.rllib import ENV_NAME, register_env, shared_policy

    register_env()
    config = (
        PPOConfig()
        .environment(ENV_NAME, env_config={"preset": "standard"}, disable_env_checking=True)
        .multi_agent(**shared_policy())
        .rl_module(rl_module_spec=shared_policy_spec([16]))
        .env_runners(num_env_runners=0, num_envs_per_env_runner=2, rollout_fragment_length=7)
        .callbacks(_StepsToo)
        .debugging(seed=0)
    )
    runner = MultiAgentEnvRunner(config=config)
    try:
        for _ in range(15):
            runner.sample(num_timesteps=14)
        stats = runner.get_metrics()
        metrics = {
            key: float(stats[key].peek())
            for key in (
                "checked_actions_lifetime",
                "illegal_actions_lifetime",
                "num_env_steps_sampled_lifetime",
                "chunked_episodes_lifetime",
            )
        }
    finally:
        runner.stop()
    assert not ray.is_initialized()
    assert metrics["chunked_episodes_lifetime"] >= 3
    # One seat acts at each env step: every step's action was checked, once, but for
    # the last action of each of the 2 environments, which waits in its episode for
    # the seat's next observation (the next sample holds it).
    steps = metrics["num_env_steps_sampled_lifetime"]
    assert steps - 2 <= metrics["checked_actions_lifetime"] <= steps and steps > 100
    assert metrics["illegal_actions_lifetime"] == 0


# -- hidden sizes ---------------------------------------------------------------------------


def _module(hidden: Any) -> MaskedActorCritic:
    e = raw_env(preset="standard")
    return MaskedActorCritic(
        observation_space=e.observation_space("player_0"),
        action_space=e.action_space("player_0"),
        model_config={"hidden": hidden},
    )


def _widths(module: MaskedActorCritic) -> list[int]:
    return [layer.out_features for layer in module.pi if isinstance(layer, torch.nn.Linear)]


@pytest.mark.parametrize(
    ("hidden", "error"),
    [
        ("64", TypeError),  # built layers of 6 and 4
        ("256,256", TypeError),
        ((64.7,), TypeError),  # became 64
        ((True,), TypeError),
        (128, TypeError),
        (None, TypeError),
        ({64, 32}, TypeError),
        ((0,), ValueError),  # a zero-width layer
        ((64, -3), ValueError),
        ((), ValueError),
    ],
)
def test_hidden_sizes_must_be_positive_integers(hidden: Any, error: type[Exception]) -> None:
    says = r"hidden=.* is not allowed; allowed: hidden layer sizes, a list of one or more"
    with pytest.raises(error, match=rf"^shared_policy_spec: {says}"):
        shared_policy_spec(hidden)
    with pytest.raises(error, match=rf"^MaskedActorCritic model_config\['hidden'\]: {says}"):
        _module(hidden)


@pytest.mark.parametrize("hidden", [[32, 16], (8,), np.array([4, 4]), [np.int64(5)], range(3, 5)])
def test_hidden_sizes_that_are_positive_integers_build(hidden: Any) -> None:
    specs: Any = shared_policy_spec(hidden).rl_module_specs
    sizes = specs[POLICY_ID].model_config["hidden"]
    assert sizes == [int(h) for h in hidden] and all(type(h) is int for h in sizes)
    assert _widths(_module(hidden))[:-1] == sizes
    assert _widths(_module(sizes))[:-1] == sizes
