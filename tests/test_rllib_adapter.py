"""matador_env.rllib without a Ray session: :class:`MoveChecks` counts every chunk of
an episode that spans rollout fragments, the module's hidden sizes are checked, the
module masks what the env forbids, and the env plays through Ray's PettingZoo wrapper."""

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
    make_env,
    policy_logits,
    shared_policy,
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
        player_2=_AgentChunk([], []),  # a seat with no observation yet
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

    from matador_env.rllib import register_env

    name = register_env("matador_in_fragments")  # the name given, not the default
    assert name == "matador_in_fragments"
    config = (
        PPOConfig()
        .environment(name, env_config={"preset": "standard"}, disable_env_checking=True)
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


def _module(**model_config: Any) -> MaskedActorCritic:
    e = raw_env(preset="standard")
    return MaskedActorCritic(
        observation_space=e.observation_space("player_0"),
        action_space=e.action_space("player_0"),
        model_config=model_config,
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
        (b"@@", TypeError),  # bytes: a sequence of the ints 64, 64
        (bytearray(b"@@"), TypeError),  # the same, and taken as [64, 64] until is_text
        (memoryview(b"@@"), TypeError),
    ],
)
def test_hidden_sizes_must_be_positive_integers(hidden: Any, error: type[Exception]) -> None:
    says = r"hidden=.* is not allowed; allowed: hidden layer sizes, a list of one or more"
    with pytest.raises(error, match=rf"^shared_policy_spec: {says}"):
        shared_policy_spec(hidden)
    with pytest.raises(error, match=rf"^MaskedActorCritic model_config\['hidden'\]: {says}"):
        _module(hidden=hidden)


@pytest.mark.parametrize("hidden", [[32, 16], (8,), np.array([4, 4]), [np.int64(5)], range(3, 5)])
def test_hidden_sizes_that_are_positive_integers_build(hidden: Any) -> None:
    specs: Any = shared_policy_spec(hidden).rl_module_specs
    sizes = specs[POLICY_ID].model_config["hidden"]
    assert sizes == [int(h) for h in hidden] and all(type(h) is int for h in sizes)
    assert _widths(_module(hidden=hidden))[:-1] == sizes
    assert _widths(_module(hidden=sizes))[:-1] == sizes


def test_the_networks_are_tanh_mlps_of_the_hidden_sizes_and_256_256_by_default() -> None:
    def layers(net: Any) -> list[Any]:
        return [
            (m.in_features, m.out_features) if hasattr(m, "in_features") else type(m) for m in net
        ]

    module = _module(hidden=[32, 16])
    encoding = raw_env(preset="standard").encoding
    size, actions = encoding.obs_size, encoding.num_actions
    tanh = torch.nn.Tanh
    assert layers(module.pi) == [(size, 32), tanh, (32, 16), tanh, (16, actions)]
    assert layers(module.vf) == [(size, 32), tanh, (32, 16), tanh, (16, 1)]
    assert policy_logits(module) is module.pi  # what the export writes
    assert _widths(_module())[:-1] == [256, 256]


def test_the_module_gives_forbidden_actions_no_probability_and_one_value_per_observation() -> None:
    e = raw_env(preset="standard")
    e.reset(seed=3)
    obs = e.observe(e.agent_selection)
    mask = torch.as_tensor(np.stack([obs["action_mask"], np.zeros_like(obs["action_mask"])]))
    observation = torch.as_tensor(np.stack([obs["observation"]] * 2))
    batch = {"obs": {"observation": observation, "action_mask": mask}}
    module = _module(hidden=[16])
    with torch.no_grad():
        logits = module.forward_inference(batch)["action_dist_inputs"]
        values = module.compute_values(batch)
        plain = module.pi(observation)
    assert torch.isfinite(logits).all()  # a finished seat's all-zero mask too
    probabilities = torch.softmax(logits[0], dim=-1)
    assert float(probabilities[mask[0] == 0].sum()) == 0.0
    allowed = mask[0] > 0
    assert torch.equal(logits[0][allowed], plain[0][allowed])  # the allowed ones as they are
    assert values.shape == (2,)


def test_the_module_refuses_an_observation_space_without_the_mask() -> None:
    e = raw_env(preset="standard")
    with pytest.raises(ValueError, match=r"needs a Dict observation space with the keys"):
        MaskedActorCritic(
            observation_space=e.observation_space("player_0")["observation"],
            action_space=e.action_space("player_0"),
            model_config={"hidden": [8]},
        )


def test_every_seat_plays_the_shared_policy() -> None:
    keywords = shared_policy()
    assert keywords["policies"] == {POLICY_ID}
    seats = raw_env(preset="pagat", players=4, teams=True).possible_agents
    assert {keywords["policy_mapping_fn"](seat, None) for seat in seats} == {POLICY_ID}


def test_make_env_plays_one_seat_at_a_time_and_every_seat_hears_the_result() -> None:
    rllib_env = make_env({"preset": "pagat", "players": 3})
    assert set(rllib_env.possible_agents) == {"player_0", "player_1", "player_2"}
    obs, _ = rllib_env.reset(seed=1)
    again, _ = make_env({"preset": "pagat", "players": 3}).reset(seed=1)
    assert obs.keys() == again.keys() and len(obs) == 1  # the same deal, one seat to act
    (seat,) = obs
    assert np.array_equal(obs[seat]["observation"], again[seat]["observation"])
    returns = dict.fromkeys(rllib_env.possible_agents, 0.0)
    terminated: dict[str, bool] = {"__all__": False}
    while not terminated["__all__"]:
        assert len(obs) == 1 and obs[seat]["action_mask"].dtype == np.int8
        legal = np.flatnonzero(obs[seat]["action_mask"])
        obs, rewards, terminated, truncated, _ = rllib_env.step({seat: int(legal[0])})
        for agent, reward in rewards.items():
            returns[agent] += reward
        assert not truncated["__all__"]
        if not terminated["__all__"]:
            (seat,) = obs
    # Every seat hears the end of the game, with its points: seat 2 wins 49 (blocked).
    assert set(terminated) == {"__all__", *returns} and all(terminated.values())
    assert returns == {"player_0": -24.5, "player_1": -24.5, "player_2": 49.0}


def test_make_env_ends_the_game_on_an_illegal_action_with_minus_1_for_its_seat() -> None:
    rllib_env = make_env({"preset": "standard"})
    obs, _ = rllib_env.reset(seed=0)
    (seat,) = obs
    illegal = int(np.flatnonzero(obs[seat]["action_mask"] == 0)[0])
    _, rewards, terminated, _, _ = rllib_env.step({seat: illegal})
    assert terminated["__all__"] and rewards[seat] == -1
