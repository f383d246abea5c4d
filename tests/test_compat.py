"""The RL libraries we promise, run for real with tiny budgets: Tianshou (masked DQN on
the single-learner env with dict observations) and Ray RLlib (PPO on the
new API stack with matador_env.rllib's masked module), each on the standard game and on
a four-seat partnership game; and python -m train.rllib's export, played by load_bot.

Each run checks that it raised nothing, that no action was illegal and that returns
are finite. (sb3-contrib's MaskablePPO is run by tests/test_gym_env.py.)
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
import torch

from matador_env import raw_env
from matador_env.engine import HandState, Rules
from matador_env.matador_v0 import INFO_KEYS

GAMES: dict[str, dict[str, Any]] = {
    "standard": {"preset": "standard"},
    "pagat-4-teams": {"preset": "pagat", "players": 4, "teams": True},
}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


# -- Tianshou -------------------------------------------------------------------------------


@pytest.mark.parametrize("game", sorted(GAMES))
def test_tianshou_masked_dqn(game: str) -> None:
    """Tianshou's single-agent DQN on the single-learner env with dict observations
    (``mask_in_obs=True``): masked, and every hand's result in the learner's own
    transitions. (Its multi-agent manager over the AEC env gives each seat only the
    rewards of the steps it takes, so a seat whose hand another seat ends never sees
    the result: docs/rl_libraries.md names that and recommends this route.)"""
    import gymnasium
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.trainer import OffPolicyTrainerParams
    from tianshou.utils.net.common import Net

    import matador_env

    def make_env() -> gymnasium.Env[Any, Any]:
        return gymnasium.make(matador_env.GYM_ID, mask_in_obs=True, **GAMES[game])

    torch.manual_seed(0)
    np.random.seed(0)
    probe = make_env()
    net = Net(
        state_shape=probe.observation_space["obs"].shape,  # type: ignore[index]
        action_shape=probe.action_space.n,  # type: ignore[attr-defined]
        hidden_sizes=[64],
    )
    algorithm = DQN(
        policy=DiscreteQLearningPolicy(
            model=net,
            action_space=probe.action_space,  # type: ignore[arg-type]
            eps_training=0.2,
        ),
        optim=AdamOptimizerFactory(lr=1e-3),
        gamma=0.99,
        target_update_freq=50,
    )
    envs = DummyVectorEnv([make_env, make_env])
    envs.seed(0)
    buffer = VectorReplayBuffer(5_000, 2)
    collector = Collector[CollectStats](algorithm, envs, buffer, exploration_noise=True)
    collector.reset()
    collector.collect(n_step=64)
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=1,
            epoch_num_steps=200,
            collection_step_num_env_steps=20,
            update_step_num_gradient_steps_per_sample=0.1,
            batch_size=32,
            show_progress=False,
            verbose=False,
        )
    )
    assert result.update_step > 0
    buffer.reset()
    stats = collector.collect(n_episode=8, reset_before_collect=True)
    assert stats.n_collected_episodes >= 8
    batch, _ = buffer.sample(0)
    obs, info = cast(Batch, batch.obs), cast(Batch, batch.info)  # dict observations and infos
    # Only legal actions, exploration's included, and none refused by the env.
    assert obs.mask[np.arange(len(batch)), batch.act].all()
    assert (info.illegal_action == 0).all()
    assert set(info.keys()) == {*INFO_KEYS, "seat", "illegal_action", "action_mask", "env_id"}
    # The episodes' returns are the rewards the learner's transitions hold, and a hand's
    # result is in its last one (the learner's points are never zero at a hand's end
    # unless a blocked hand scored nothing).
    assert np.isfinite(batch.rew).all()
    assert math.isclose(float(batch.rew.sum()), float(np.sum(stats.returns)), abs_tol=1e-6)
    ends = batch.done.astype(bool)
    assert ends.sum() == stats.n_collected_episodes
    assert (batch.rew[ends] != 0).sum() >= ends.sum() // 2
    # A learner transition leads to the learner's own next observation.
    assert (obs.obs[1:][~ends[:-1]] != 0).any()


# -- Ray RLlib ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ray_session() -> Iterator[None]:
    """One local Ray for the module: two CPUs, no dashboard, always shut down."""
    import ray

    from matador_env.rllib import register_env

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    register_env()
    try:
        yield
    finally:
        ray.shutdown()


def test_make_env_takes_a_mapping_of_env_keywords_only() -> None:
    from ray.rllib.env.env_context import EnvContext

    from matador_env.rllib import make_env

    for bad in ("pagat", [("preset", "pagat")], 3):
        with pytest.raises(TypeError, match=r"config=.*allowed: None or a mapping"):
            make_env(bad)  # type: ignore[arg-type]
    rllib_env = make_env(EnvContext({"preset": "pagat", "players": 3}, worker_index=0))
    assert rllib_env.env.unwrapped.rules == Rules.preset("pagat", players=3)
    assert make_env().env.unwrapped.rules == Rules.preset("standard")


def tiny_args(game: str, runners: int, **more: Any) -> Any:
    from train.rllib import RllibArgs

    kwargs = GAMES[game]
    return RllibArgs(
        preset=kwargs["preset"],
        players=kwargs.get("players"),
        teams=kwargs.get("teams"),
        num_env_runners=runners,
        train_batch_size=256,
        minibatch_size=128,
        num_epochs=1,
        hidden="64",
        **more,
    )


@pytest.mark.parametrize(("game", "runners"), [("standard", 0), ("pagat-4-teams", 1)])
def test_rllib_ppo(ray_session: None, game: str, runners: int) -> None:
    from train.rllib import build_config, check_args, iteration_summary

    args = tiny_args(game, runners)
    rules, hidden = check_args(args)
    algo = build_config(args, rules, hidden).build_algo()
    try:
        for _ in range(2):
            result = algo.train()
        summary = iteration_summary(result)
        agents = result["env_runners"]["agent_episode_returns_mean"]
        module = algo.get_module("shared")
    finally:
        algo.stop()
    assert summary["env_steps"] >= 2 * args.train_batch_size
    assert summary["episodes"] > 0
    assert summary["checked_actions"] > 0 and summary["illegal_actions"] == 0
    assert set(agents) == {f"player_{s}" for s in range(rules.players)}
    assert all(math.isfinite(v) for v in agents.values())
    assert not any(torch.isnan(p).any() for p in module.parameters())


def test_rllib_single_agent_ppo_samples_the_compiled_vector_env(ray_session: None) -> None:
    # RLlib's single-agent env runners build their envs with gymnasium.make_vec; asked
    # for the vector entry point they get the compiled env (next-step auto-reset, which
    # they expect), with no glue. Without masks, illegal actions end episodes.
    from ray.rllib.algorithms.ppo import PPOConfig

    from matador_env.gym_vector import MatadorVectorEnv

    config = (
        PPOConfig()
        .environment("Matador-v0", env_config={"preset": "leiden", "reward": "normalised"})
        .env_runners(
            num_env_runners=0,
            num_envs_per_env_runner=8,
            gym_env_vectorize_mode="vector_entry_point",
        )
        .training(train_batch_size=256, minibatch_size=128, num_epochs=1)
        .rl_module(model_config={"fcnet_hiddens": [32]})
    )
    algo = config.build_algo()
    try:
        assert isinstance(algo.env_runner.env.unwrapped, MatadorVectorEnv)
        result = algo.train()
    finally:
        algo.stop()
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled_lifetime"] >= 256
    assert runners["num_episodes_lifetime"] > 0
    assert math.isfinite(runners["episode_return_mean"])


def test_train_rllib_exports_a_policy_that_load_bot_plays(
    ray_session: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from matador_env.bot import load_bot
    from matador_env.policy import load_policy
    from train.rllib import main

    out = tmp_path / "run"
    run = main(
        [
            "--preset",
            "pagat",
            "--players",
            "4",
            "--teams",
            "--timesteps",
            "256",
            "--train-batch-size",
            "256",
            "--minibatch-size",
            "128",
            "--num-epochs",
            "1",
            "--hidden",
            "32",
            "--num-env-runners",
            "0",
            "--out",
            str(out),
        ]
    )
    assert run == out
    assert "exported" in capsys.readouterr().out
    import ray

    assert ray.is_initialized()  # a Ray session it found is left running for its owner
    rules = Rules.preset("pagat", players=4, teams=True)
    policy = load_policy(out / "final", rules=rules)
    assert policy.info.provenance is not None
    assert policy.info.provenance["trainer"].startswith("train.rllib")
    progress = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert progress[-1]["env_steps"] >= 256 and progress[-1]["illegal_actions"] == 0
    bot = load_bot(str(out / "final"), rules=rules, seed=0)
    for seed in range(3):
        hand = HandState.deal(rules, seed)
        while not hand.is_over:
            hand = hand.apply(bot.choose(hand.view(hand.to_move)))  # refuses illegal moves
        assert hand.outcome is not None


def test_the_exported_network_is_the_modules_policy(tmp_path: Path) -> None:
    from matador_env.policy import load_policy
    from matador_env.rllib import MaskedActorCritic, policy_logits
    from train.export import export_network

    rules = Rules.preset("leiden")
    e = raw_env(rules=rules)
    module = MaskedActorCritic(
        observation_space=e.observation_space("player_0"),
        action_space=e.action_space("player_0"),
        model_config={"hidden": [32, 16]},
    )
    export_network(policy_logits(module), rules, tmp_path, {"test": True})
    policy = load_policy(tmp_path, rules=rules)
    e.reset(seed=3)
    rng = random.Random(3)
    observations = []
    while not all(e.terminations.values()):
        obs = e.observe(e.agent_selection)
        observations.append(obs["observation"])
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
    batch = np.stack(observations)
    with torch.no_grad():
        expected = module.pi(torch.as_tensor(batch)).numpy()
    assert np.allclose(policy.logits(batch), expected, atol=1e-5)
    # The module masks what the env forbids, and never gives NaN for an all-zero mask.
    masks = torch.zeros(2, e.encoding.num_actions, dtype=torch.int8)
    masks[0, 5] = 1
    out = module._forward(
        {"obs": {"observation": torch.as_tensor(batch[:2]), "action_mask": masks}}
    )
    logits = out["action_dist_inputs"]
    assert int(logits[0].argmax()) == 5 and torch.isfinite(logits).all()
