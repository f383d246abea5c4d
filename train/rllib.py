"""PPO self-play on Ray RLlib: ``python -m train.rllib --preset standard ...``.

Every seat plays one shared policy (:class:`matador_env.rllib.MaskedActorCritic`)
on the PettingZoo environment through Ray's PettingZoo wrapper. It runs on a local
Ray by default (``--num-cpus`` bounds it) and on a Ray cluster with ``--address``
(``auto`` on a node of the cluster), sampling with ``--num-env-runners`` processes
spread over the cluster's nodes. See ``docs/rl_libraries.md``.

A run writes into its folder (``runs/{exp}__{preset}__{seed}__{time}`` unless
``--out`` names it)::

    args.json          the arguments
    progress.jsonl     one line per training iteration (steps, player_0's mean return,
                       illegal actions: counted by matador_env.rllib.MoveChecks)
    final/             policy.onnx + policy.json: the trained policy, exported to the
                       project's format (obs -> logits; matador_env.policy plays it),
                       so ``load_bot("runs/.../final")``, the arena (agent
                       ``policy:runs/.../final``) and the bot server use it unchanged

A bad argument ends the command with one line naming the flag and what is allowed
(exit status 2), before Ray starts or anything is written: RLlib's own rules on the
arguments (the seeds it derives, whole rollout fragments per update) and the CPUs a
local Ray has are checked here. An ``--address`` where Ray finds no cluster ends the
same way when Ray tries to join it; a ``HOST:PORT`` (or ``ray://HOST:PORT``) where
nothing answers within ``ADDRESS_PROBE_SECONDS`` ends so before Ray is asked, since
Ray itself keeps retrying such an address without end. ``args.json`` is written once
the algorithm is built, so a run that fails to start leaves no folder that a rerun
with the same ``--out`` would be refused.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from matador_env.engine import Rules
from matador_env.engine.tiles import shown_value
from matador_env.files import atomic_write_json, atomic_write_text
from matador_env.flags import LARGEST_TRAINING_SEED
from matador_env.matador_v0 import REWARD_KINDS
from matador_env.streams import null_closed_outputs, run_main

from .args import (
    ArgsError,
    check_exp_name,
    check_number,
    flag_name,
    layer_sizes,
    parse,
    rules_from_flags,
)
from .export import export_network
from .files import RUN_ARGS_FILE, new_run_problem
from .run import FLOAT_RANGES


@dataclass
class RllibArgs:
    """Self-play PPO for Matador on Ray RLlib (local Ray, or a Ray cluster)."""

    exp_name: str = "rllib_ppo"
    """Experiment name: the first part of the run folder's name."""
    preset: str = "standard"
    """Rules preset to train on (see matador_env.engine.PRESETS)."""
    players: int | None = None
    """Players at the table, overriding the preset's."""
    teams: bool | None = None
    """Partnerships of two (--teams) or every seat for itself (--no-teams)."""
    rules: list[str] = field(default_factory=list)
    """KEY=VALUE overrides of the preset's rules (fields of matador_env.engine.Rules,
    e.g. --rules target_score=150), as python -m train takes them."""
    seed: int = 1
    """Seed of RLlib (networks, environments, sampling)."""
    timesteps: int = 200_000
    """Environment steps to sample in all (every seat's moves count); training stops after
    the first iteration that reaches it."""
    out: str | None = None
    """Run folder; default runs/{exp_name}__{preset}__{seed}__{unix time}."""
    address: str | None = None
    """Ray cluster to join: "auto" (on a node started with `ray start`), host:port or
    ray://host:10001. Default: start a local Ray."""
    num_cpus: int | None = None
    """CPUs of the local Ray (default: all of this machine's); refused with --address."""
    num_env_runners: int = 1
    """Sampling processes (0: sample in the driver). On a cluster, Ray spreads them over
    the nodes."""
    num_envs_per_env_runner: int = 8
    """Environments each env runner steps together; the module then picks their actions
    in one batch, which is where most of the sampling time goes (measured on two cores:
    4 environments sampled 4x faster than 1)."""
    train_batch_size: int = 4000
    """Environment steps per PPO update."""
    minibatch_size: int = 256
    """Minibatch size of the PPO update."""
    num_epochs: int = 6
    """Passes over each batch."""
    lr: float = 1e-4
    """Adam step size."""
    gamma: float = 0.995
    """Discount."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_param: float = 0.2
    """PPO clip range."""
    entropy_coeff: float = 0.003
    """Entropy bonus."""
    hidden: str = "256,256"
    """Hidden layer sizes of the policy and value networks."""
    reward: str = "normalised"
    """Environment reward: score, win or normalised (points / pips of the set, in
    [-1, 1], a scale PPO's value network takes without tuning)."""
    torch_threads: int = 1
    """Torch threads per process; more than one thrashes on a small machine."""


_AS_IN_TRAIN = {
    "lr": "learning_rate",
    "gamma": "gamma",
    "gae_lambda": "gae_lambda",
    "clip_param": "clip_range",
    "entropy_coeff": "ent_coef",
}
"""Each number of this trainer, and the flag of ``python -m train`` whose range it has."""


def resolve_rules(args: RllibArgs) -> Rules:
    """The rules of --preset with --players, --teams and --rules applied."""
    return rules_from_flags(args.preset, args.players, args.teams, args.rules)


def local_cpus() -> int:
    """The CPUs a local Ray gets when ``--num-cpus`` does not say: Ray's own count, the
    one ``ray.init`` uses (a container's CPU quota, where there is one), else
    ``os.cpu_count()``."""
    try:
        from ray._private.utils import get_num_cpus

        return max(1, int(get_num_cpus(override_docker_cpu_warning=True)))
    except Exception:  # a Ray without that helper: what it falls back to
        return os.cpu_count() or 1


def rollout_fragment(args: RllibArgs) -> int:
    """Steps each environment samples per update: ``--train-batch-size`` spread over
    the environments of all env runners (the driver's when there are none), rounded
    up."""
    environments = max(1, args.num_env_runners) * args.num_envs_per_env_runner
    return max(1, -(-args.train_batch_size // environments))


def fragment_problem(args: RllibArgs) -> str | None:
    """Why RLlib would refuse ``--train-batch-size`` with the env runners' fragments
    (:func:`rollout_fragment`), or None. RLlib's rule
    (``AlgorithmConfig.validate_train_batch_size_vs_rollout_fragment_length``): the
    smallest whole number of fragments from every environment that reaches the batch
    may exceed it by 10% at most."""
    batch = args.train_batch_size
    environments = max(1, args.num_env_runners) * args.num_envs_per_env_runner
    fragment = rollout_fragment(args)
    sampled = environments * fragment
    reached = -(-batch // sampled) * sampled
    if reached - batch <= 0.1 * batch and reached - sampled - batch <= 0.1 * batch:
        return None
    processes = max(1, args.num_env_runners)
    return (
        f"--train-batch-size: {batch} is not allowed with {environments} environments "
        f"sampling ({args.num_envs_per_env_runner} in each of {processes} sampling "
        f"process{'es' if processes > 1 else ''}): each update takes a fragment of "
        f"{fragment} steps from every one, {sampled} steps, more than 10% over {batch}, "
        f"which RLlib refuses; allowed: a multiple of {environments}, {10 * environments} "
        "or more, or fewer --num-env-runners or --num-envs-per-env-runner"
    )


def largest_seed(num_env_runners: int) -> int:
    """The largest ``--seed`` with ``num_env_runners``: RLlib seeds numpy in env runner
    ``i`` (0: the driver's) with ``seed + i``, and numpy takes at most 2**32 - 1."""
    return LARGEST_TRAINING_SEED - max(0, num_env_runners)


def check_args(args: RllibArgs) -> tuple[Rules, list[int]]:
    """The rules and hidden sizes; :class:`ArgsError` for the first bad argument."""
    rules = resolve_rules(args)
    hidden = layer_sizes(args.hidden, "--hidden")
    if args.reward not in REWARD_KINDS:
        raise ArgsError(
            f"--reward: {args.reward!r} is not allowed; allowed: {', '.join(REWARD_KINDS)}"
        )
    for flag in ("timesteps", "train_batch_size", "minibatch_size", "num_epochs"):
        if getattr(args, flag) < 1:
            raise ArgsError(f"--{flag.replace('_', '-')}: must be a positive integer")
    for flag in ("num_env_runners", "num_envs_per_env_runner", "torch_threads"):
        minimum = 0 if flag == "num_env_runners" else 1
        if getattr(args, flag) < minimum:
            raise ArgsError(f"--{flag.replace('_', '-')}: must be an integer >= {minimum}")
    if args.minibatch_size > args.train_batch_size:
        raise ArgsError("--minibatch-size: must not exceed --train-batch-size")
    if args.num_cpus is not None and args.num_cpus < 1:
        raise ArgsError("--num-cpus: must be a positive integer")
    if args.num_cpus is not None and args.address is not None:
        # The cluster's CPUs are its own: the flag would be ignored unsaid.
        raise ArgsError(
            "--num-cpus: not with --address (a Ray cluster has its own CPUs); give one of them"
        )
    largest = largest_seed(args.num_env_runners)
    if not 0 <= args.seed <= largest:  # RLlib seeds numpy's generators
        raise ArgsError(
            f"--seed: {shown_value(args.seed)} is not allowed; allowed: an integer from 0 "
            f"to {largest} (2**32 - 1 less --num-env-runners {args.num_env_runners}: RLlib "
            "seeds numpy in each env runner with the seed plus the runner's number, and "
            "numpy takes at most 2**32 - 1)"
        )
    if args.address is None:
        # Each env runner takes a CPU of the local Ray; the rest would wait for ever.
        cpus = args.num_cpus if args.num_cpus is not None else local_cpus()
        if args.num_env_runners > cpus:
            given = (
                f"--num-cpus gives the local Ray {cpus}"
                if args.num_cpus is not None
                else f"the local Ray gets this machine's {cpus} (no --num-cpus)"
            )
            raise ArgsError(
                f"--num-env-runners: {args.num_env_runners} env runners need as many CPUs, "
                f"and {given}; allowed: at most {cpus}, or --address of a Ray cluster"
            )
    problem = fragment_problem(args)
    if problem is not None:
        raise ArgsError(problem)
    for name, same_as in _AS_IN_TRAIN.items():
        check_number(flag_name(name), getattr(args, name), *FLOAT_RANGES[same_as])
    check_exp_name(args.exp_name)
    if args.out is not None:
        problem = new_run_problem(args.out)
        if problem is not None:
            raise ArgsError(f"--out: {problem}; give another folder")
    return rules, hidden


def build_config(args: RllibArgs, rules: Rules, hidden: list[int]) -> Any:
    """The RLlib ``PPOConfig`` of a run (built without Ray running; the algorithm it builds
    needs Ray)."""
    from ray.rllib.algorithms.ppo import PPOConfig

    from matador_env.rllib import ENV_NAME, MoveChecks, shared_policy, shared_policy_spec

    runners = args.num_env_runners
    fragment = rollout_fragment(args)  # check_args has checked it against RLlib's rule
    return (
        PPOConfig()
        # RLlib's environment check steps a random action without its mask, which the
        # env answers with PettingZoo's "Illegal move made" warning; the env is checked
        # by PettingZoo's own api_test instead (tests/test_env.py).
        .environment(
            ENV_NAME,
            env_config={"rules": rules, "reward": args.reward},
            disable_env_checking=True,
        )
        .multi_agent(**shared_policy())
        .rl_module(rl_module_spec=shared_policy_spec(hidden))
        .env_runners(
            num_env_runners=runners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
            num_cpus_per_env_runner=1,
            rollout_fragment_length=fragment,
        )
        .learners(num_learners=0)
        .training(
            train_batch_size_per_learner=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.num_epochs,
            lr=args.lr,
            gamma=args.gamma,
            lambda_=args.gae_lambda,
            clip_param=args.clip_param,
            entropy_coeff=args.entropy_coeff,
        )
        .callbacks(MoveChecks)
        .debugging(seed=args.seed, log_level="WARN")
    )


ADDRESS_PROBE_SECONDS = 10.0
"""How long --address HOST:PORT may take to accept a connection before the run is
refused (Ray's own join retries an address where nothing listens for ever)."""


def _unanswered_address(address: str) -> str | None:
    """Why nothing answers at --address HOST:PORT or ray://HOST:PORT (None when a
    connection opens, or when the address is not of that form: ``auto`` and
    malformed addresses are left to Ray, which refuses them at once)."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    try:
        with socket.create_connection((host.strip("[]"), int(port)), ADDRESS_PROBE_SECONDS):
            return None
    except OSError as e:
        return f"nothing answers at {host}:{port} within {ADDRESS_PROBE_SECONDS:g} s ({e})"


def _address_refused(address: str, why: str) -> ArgsError:
    return ArgsError(
        f"--address: {address!r} is not allowed: Ray could not join a cluster there ({why}); "
        "allowed: the address of a running Ray cluster (auto on one of its nodes, HOST:PORT "
        "or ray://HOST:10001; `ray start --head` starts one), or no --address for a local Ray"
    )


def start_ray(args: RllibArgs) -> bool:
    """Join the cluster of --address, or start a local Ray of --num-cpus; False when
    this process had a Ray session already (it is used as it is). :class:`ArgsError`
    when nothing answers at --address, Ray finds no cluster there, or cannot read it
    as an address."""
    import ray

    import matador_env
    from matador_env.rllib import register_env

    register_env()
    if ray.is_initialized():
        return False
    # Ray needs a real error stream. The command has one from run_main; a caller in
    # process whose sys.stderr is None gets /dev/null here.
    null_closed_outputs()
    options: dict[str, Any] = {"logging_level": logging.WARNING, "include_dashboard": False}
    if args.address is not None:
        unanswered = _unanswered_address(args.address)
        if unanswered is not None:
            raise _address_refused(args.address, unanswered)
        # Ship this checkout's matador_env to the workers, so that every node plays
        # the same rules and encoding as the driver.
        options["runtime_env"] = {"py_modules": [matador_env]}
        try:
            ray.init(address=args.address, **options)
        except (ConnectionError, ValueError) as e:
            # ConnectionError: no cluster there ("auto" with none running); ValueError:
            # no address at all ("Invalid address format").
            raise _address_refused(args.address, str(e)) from None
    else:
        ray.init(num_cpus=args.num_cpus, **options)
    return True


def iteration_summary(result: dict[str, Any]) -> dict[str, Any]:
    """The figures of one ``Algorithm.train()`` result that progress.jsonl keeps."""
    runners = result.get("env_runners", {})

    def number(value: Any) -> float | None:
        try:
            value = float(value)
        except (TypeError, ValueError):
            return None
        return value if math.isfinite(value) else None

    return {
        "iteration": int(result.get("training_iteration", 0)),
        "env_steps": int(runners.get("num_env_steps_sampled_lifetime", 0)),
        "episodes": int(runners.get("num_episodes_lifetime", 0)),
        # The game is zero-sum, so the episode return (all seats summed) is 0 with the
        # "score" and "normalised" rewards; one seat's return says more.
        "player_0_return_mean": number(
            (runners.get("agent_episode_returns_mean") or {}).get("player_0")
        ),
        "episode_len_mean": number(runners.get("episode_len_mean")),
        "illegal_actions": int(runners.get("illegal_actions_lifetime", 0)),
        "checked_actions": int(runners.get("checked_actions_lifetime", 0)),
    }


def run_name(args: RllibArgs) -> str:
    return f"{args.exp_name}__{args.preset}__{args.seed}__{int(time.time())}"


def train(args: RllibArgs) -> Path:
    """Run PPO until --timesteps and export the policy; returns the run folder."""
    rules, hidden = check_args(args)
    torch.set_num_threads(args.torch_threads)
    run_dir = Path(args.out or Path("runs") / run_name(args))
    import ray

    from matador_env.rllib import POLICY_ID, policy_logits

    started = start_ray(args)
    algo = None
    lines: list[str] = []
    try:
        algo = build_config(args, rules, hidden).build_algo()
        # Only now: a run that failed to start leaves no args.json to refuse a rerun.
        run_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(run_dir / RUN_ARGS_FILE, dataclasses.asdict(args))
        began = time.perf_counter()
        summary: dict[str, Any] = {"env_steps": 0}
        while summary["env_steps"] < args.timesteps:
            summary = iteration_summary(algo.train())
            summary["seconds"] = round(time.perf_counter() - began, 1)
            lines.append(json.dumps(summary))
            atomic_write_text(run_dir / "progress.jsonl", "\n".join(lines) + "\n")
            print(
                f"iter {summary['iteration']:4d}  steps {summary['env_steps']:9d}  "
                f"player_0 return {summary['player_0_return_mean']}  "
                f"illegal {summary['illegal_actions']}  {summary['seconds']} s",
                flush=True,
            )
        module = algo.get_module(POLICY_ID)
        provenance = {
            "trainer": "train.rllib (Ray RLlib PPO, shared-policy self-play)",
            "run": run_dir.name,
            "env_steps": summary["env_steps"],
            "reward": args.reward,
            "hidden": hidden,
            "command": " ".join(["python -m train.rllib", *sys.argv[1:]]),
        }
        exported = export_network(policy_logits(module), rules, run_dir / "final", provenance)
    finally:
        if algo is not None:
            algo.stop()
        if started:
            ray.shutdown()
    print(f"exported {exported}")
    return run_dir


def main(argv: list[str] | None = None) -> Path:
    args = parse(RllibArgs, argv, prog="python -m train.rllib")
    try:
        # check_args first; train also refuses an --address where Ray finds no cluster.
        return train(args)
    except ArgsError as e:
        print(f"python -m train.rllib: {e}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    run_main(main)
