"""What ``python -m train.rllib`` and ``benchmarks.rllib`` promise that no other fast test
held them to (found by mutation testing): every argument reaching RLlib's ``PPOConfig``,
the fragment each environment samples, the checks of the counts, the reward and the
seed's lower end, the address probe's forms and errors, what ``start_ray`` asks of Ray,
the figures of an iteration that ``progress.jsonl`` keeps, the training loop's stop, files,
provenance and clean-up, the documented run folder and defaults, and how the benchmark
measures and reports. Ray never starts here: the config is built without a session (it
needs none), and the algorithm, ``ray.init``, the export and ``python -m train`` are
replaced by stand-ins, so the whole file runs in seconds."""

from __future__ import annotations

import json
import math
import socket
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import benchmarks.rllib as bench
import matador_env
import matador_env.rllib
import train.rllib
from matador_env.engine import Rules
from matador_env.matador_v0 import REWARD_KINDS
from tests.test_benchmark_refusals import _no_training, refused
from tests.test_speed_bench_mutants import _clock
from tests.test_train_rllib_args import _args
from train.args import ArgsError
from train.rllib import RllibArgs, check_args, iteration_summary, rollout_fragment

# -- the documented run folder and defaults ------------------------------------------------


def test_the_documented_defaults_name_the_run_folder_and_the_benchmarks_batches() -> None:
    # docs/rl_libraries.md: the pagat command writes runs/rllib_ppo__pagat__1__<time>/.
    name = train.rllib.run_name(_args("--preset", "pagat"))
    prefix, _, stamp = name.rpartition("__")
    assert prefix == "rllib_ppo__pagat__1" and stamp.isdigit()
    # benchmarks.rllib measures "python -m train.rllib's configuration ... its defaults:
    # batches of 4000 env steps, 8 environments per env runner".
    defaults = RllibArgs()
    assert (defaults.train_batch_size, defaults.num_envs_per_env_runner) == (4000, 8)
    assert "batches of 4000 env steps, 8 environments per env runner" in " ".join(
        (bench.__doc__ or "").split()
    )


# -- the config handed to RLlib ------------------------------------------------------------


def test_every_argument_reaches_rllibs_config() -> None:
    # Values that differ from every default, so that a dropped or swapped one shows.
    from matador_env.rllib import ENV_NAME, POLICY_ID, MoveChecks

    args = _args(
        *("--preset", "pagat", "--players", "3", "--rules", "target_score=150"),
        *("--reward", "win", "--hidden", "32,16", "--seed", "7", "--address", "auto"),
        *("--num-env-runners", "2", "--num-envs-per-env-runner", "3"),
        *("--train-batch-size", "600", "--minibatch-size", "64", "--num-epochs", "2"),
        *("--lr", "0.002", "--gamma", "0.9", "--gae-lambda", "0.8"),
        *("--clip-param", "0.3", "--entropy-coeff", "0.01"),
    )
    rules, hidden = check_args(args)
    assert rules == Rules.preset("pagat", players=3, target_score=150)
    assert hidden == [32, 16]
    config = train.rllib.build_config(args, rules, hidden)
    assert config.env == ENV_NAME
    assert config.env_config == {"rules": rules, "reward": "win"}
    # RLlib's own env check steps unmasked random actions (the comment in build_config).
    assert config.disable_env_checking is True
    assert (config.num_env_runners, config.num_envs_per_env_runner) == (2, 3)
    # One CPU each: check_args counts the local Ray's CPUs on that basis.
    assert config.num_cpus_per_env_runner == 1
    assert config.rollout_fragment_length == rollout_fragment(args) == 100
    assert config.num_learners == 0  # the learner runs in the driver (docs)
    assert (config.train_batch_size_per_learner, config.minibatch_size) == (600, 64)
    assert config.num_epochs == 2
    assert (config.lr, config.gamma, config.lambda_) == (0.002, 0.9, 0.8)
    assert (config.clip_param, config.entropy_coeff) == (0.3, 0.01)
    assert config.seed == 7
    assert config.callbacks_class is MoveChecks  # progress.jsonl's illegal actions
    spec = config.rl_module_spec.rl_module_specs[POLICY_ID]
    assert spec.model_config == {"hidden": [32, 16]}


def test_a_fragment_is_the_batch_over_every_environment_rounded_up() -> None:
    # 4001 steps over 2 runners x 8 environments: 250.06 -> 251 steps each.
    assert rollout_fragment(_args("--train-batch-size", "4001", "--num-env-runners", "2")) == 251
    # No env runner: the driver's 8 environments sample, as one runner's would.
    assert rollout_fragment(_args("--num-env-runners", "0")) == 500
    assert rollout_fragment(_args("--num-env-runners", "1")) == 500


def test_fragments_ten_percent_over_the_batch_are_allowed_as_rllib_allows_them() -> None:
    # 11 environments take 10 steps each for a batch of 100: 110 steps, 10% over, which
    # RLlib's own rule (more than 10% over is refused) lets through.
    args = _args(
        *("--num-env-runners", "0", "--num-envs-per-env-runner", "11"),
        *("--train-batch-size", "100", "--minibatch-size", "50"),
    )
    assert train.rllib.fragment_problem(args) is None
    rules, hidden = check_args(args)
    config = train.rllib.build_config(args, rules, hidden)
    config.validate_train_batch_size_vs_rollout_fragment_length()  # RLlib: no ValueError
    # With no env runner the driver samples: RLlib is told 0, not given a runner.
    assert config.num_env_runners == 0


# -- check_args ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--timesteps", "0"], "--timesteps: must be a positive integer"),
        (["--train-batch-size", "0"], "--train-batch-size: must be a positive integer"),
        (["--minibatch-size", "0"], "--minibatch-size: must be a positive integer"),
        (["--num-epochs", "0"], "--num-epochs: must be a positive integer"),
        (["--num-env-runners", "-1"], "--num-env-runners: must be an integer >= 0"),
        (["--num-envs-per-env-runner", "0"], "--num-envs-per-env-runner: must be an integer >= 1"),
        (["--torch-threads", "0"], "--torch-threads: must be an integer >= 1"),
        (
            ["--train-batch-size", "4000", "--minibatch-size", "4001"],
            "--minibatch-size: must not exceed --train-batch-size",
        ),
        (["--num-cpus", "0"], "--num-cpus: must be a positive integer"),
    ],
)
def test_each_count_is_refused_in_one_line(argv: list[str], says: str) -> None:
    with pytest.raises(ArgsError) as refused_args:
        check_args(_args(*argv))
    assert str(refused_args.value) == says


def test_a_reward_the_env_has_not_is_refused_naming_the_ones_it_has() -> None:
    with pytest.raises(ArgsError) as refused_args:
        check_args(_args("--reward", "points"))
    line = str(refused_args.value)
    assert line.startswith("--reward: 'points' is not allowed; allowed: ")
    assert all(kind in line for kind in REWARD_KINDS) and "\n" not in line


def test_the_smallest_seed_and_a_minibatch_of_the_whole_batch_are_allowed() -> None:
    assert check_args(_args("--seed", "0"))
    assert check_args(_args("--minibatch-size", "4000", "--train-batch-size", "4000"))


def test_the_numbers_take_the_ranges_of_python_m_train_ends_included() -> None:
    # python -m train takes any step size above 0 and no entropy bonus at all.
    assert check_args(
        _args("--lr", "2", "--entropy-coeff", "0", "--gamma", "1", "--gae-lambda", "0")
    )


def test_the_cpus_of_a_local_ray_are_rays_own_count(monkeypatch: pytest.MonkeyPatch) -> None:
    import ray._private.utils

    # Ray's count (a container's quota, where there is one), not os.cpu_count().
    monkeypatch.setattr(train.rllib.os, "cpu_count", lambda: 64)
    monkeypatch.setattr(ray._private.utils, "get_num_cpus", lambda **kwargs: 3)
    assert train.rllib.local_cpus() == 3

    # A Ray without that helper: what it falls back to.
    def missing(**kwargs: Any) -> int:
        raise AttributeError("get_num_cpus")

    monkeypatch.setattr(ray._private.utils, "get_num_cpus", missing)
    assert train.rllib.local_cpus() == 64


def test_check_args_returns_the_rules_of_its_arguments() -> None:
    argv = ("--preset", "pagat", "--players", "4", "--teams", "--hidden", "64,32")
    rules, hidden = check_args(_args(*argv))
    assert rules == Rules.preset("pagat", players=4, teams=True)
    assert hidden == [64, 32]


# -- the address probe and start_ray -----------------------------------------------------


@pytest.mark.parametrize("address", [":6379", "ray://:6379", "h:0", "h:65536", "h:x"])
def test_an_address_not_of_host_port_form_is_left_to_ray_without_a_probe(
    address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def probed(*args: Any, **kwargs: Any) -> None:
        raise AssertionError(f"probed {args}")

    monkeypatch.setattr(socket, "create_connection", probed)
    assert train.rllib._unanswered_address(address) is None


def test_the_probe_waits_its_documented_seconds_and_reports_any_os_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A timeout (or an unknown host) is as final as a refused connection: Ray would
    # retry it for ever too.
    asked: list[tuple[Any, ...]] = []

    def silent(address: tuple[str, int], timeout: float) -> None:
        asked.append((address, timeout))
        raise TimeoutError("timed out")

    monkeypatch.setattr(socket, "create_connection", silent)
    why = train.rllib._unanswered_address("ray://[fe80::1]:10001")
    # The brackets of an IPv6 host are the address's, not the host's.
    assert asked == [(("fe80::1", 10001), 10.0)]
    assert why == "nothing answers at [fe80::1]:10001 within 10 s (timed out)"


class _Ray:
    """What start_ray asks of Ray: the ``ray.init`` keywords and the env registered."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, initialized: bool = False) -> None:
        import ray

        self.inits: list[dict[str, Any]] = []
        self.registered = 0
        self.shutdowns = 0
        monkeypatch.setattr(ray, "is_initialized", lambda: initialized)
        monkeypatch.setattr(ray, "init", lambda **kwargs: self.inits.append(kwargs))
        monkeypatch.setattr(ray, "shutdown", self._shutdown)
        monkeypatch.setattr(matador_env.rllib, "register_env", self._register)

    def _register(self) -> str:
        self.registered += 1
        return matador_env.rllib.ENV_NAME

    def _shutdown(self) -> None:
        self.shutdowns += 1


def test_a_local_ray_gets_num_cpus_and_no_dashboard(monkeypatch: pytest.MonkeyPatch) -> None:
    ray = _Ray(monkeypatch)
    assert train.rllib.start_ray(_args("--num-cpus", "3")) is True
    (options,) = ray.inits
    assert options["num_cpus"] == 3 and options["include_dashboard"] is False
    assert "address" not in options and "runtime_env" not in options
    assert ray.registered == 1


def test_a_cluster_gets_this_checkouts_matador_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # docs: "the script ships its matador_env to the workers itself".
    ray = _Ray(monkeypatch)
    assert train.rllib.start_ray(_args("--address", "auto")) is True
    (options,) = ray.inits
    assert options["address"] == "auto" and options["include_dashboard"] is False
    assert options["runtime_env"] == {"py_modules": [matador_env]}


def test_a_ray_session_already_there_is_used_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    ray = _Ray(monkeypatch, initialized=True)
    assert train.rllib.start_ray(_args("--address", "auto")) is False
    assert ray.inits == []
    assert ray.registered == 1  # its workers still need the env's name


# -- iteration_summary -----------------------------------------------------------------------


def test_an_iteration_keeps_rllibs_lifetime_counts_and_player_0s_return() -> None:
    result = {
        "training_iteration": 3,
        "env_runners": {
            "num_env_steps_sampled_lifetime": 12000,
            "num_env_steps_sampled": 4000,
            "num_episodes_lifetime": 150,
            "num_episodes": 50,
            "agent_episode_returns_mean": {"player_0": 0.25, "player_1": -0.25},
            "episode_len_mean": 80.5,
            "illegal_actions_lifetime": 2,
            "illegal_actions": 1,
            "checked_actions_lifetime": 11000,
        },
    }
    assert iteration_summary(result) == {
        "iteration": 3,
        "env_steps": 12000,
        "episodes": 150,
        "player_0_return_mean": 0.25,
        "episode_len_mean": 80.5,
        "illegal_actions": 2,
        "checked_actions": 11000,
    }


def test_figures_rllib_has_not_got_are_none_and_counts_zero() -> None:
    # Before the first episode ends RLlib reports NaN means (or none); JSON takes neither.
    assert iteration_summary({}) == {
        "iteration": 0,
        "env_steps": 0,
        "episodes": 0,
        "player_0_return_mean": None,
        "episode_len_mean": None,
        "illegal_actions": 0,
        "checked_actions": 0,
    }
    summary = iteration_summary(
        {
            "env_runners": {
                "agent_episode_returns_mean": {"player_0": math.nan},
                "episode_len_mean": "n/a",
            }
        }
    )
    assert summary["player_0_return_mean"] is None and summary["episode_len_mean"] is None


# -- train: the loop, its files and its clean-up, with a stand-in algorithm -----------------


class _Algo:
    """An algorithm sampling ``per_iteration`` env steps per ``train()``."""

    def __init__(self, per_iteration: int) -> None:
        self.per_iteration = per_iteration
        self.iterations = 0
        self.stopped = 0
        self.modules: list[str] = []

    def train(self) -> dict[str, Any]:
        self.iterations += 1
        steps = self.iterations * self.per_iteration
        return {
            "training_iteration": self.iterations,
            "env_runners": {"num_env_steps_sampled_lifetime": steps},
        }

    def get_module(self, module_id: str) -> str:
        self.modules.append(module_id)
        return f"module {module_id}"

    def stop(self) -> None:
        self.stopped += 1


class _Run:
    """train.rllib.train with Ray, RLlib and the export replaced; what each was given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, started: bool, per_iteration: int) -> None:
        self.algo = _Algo(per_iteration)
        self.ray = _Ray(monkeypatch)
        self.configs: list[tuple[Any, ...]] = []
        self.exports: list[tuple[Any, ...]] = []
        self.threads: list[int] = []
        monkeypatch.setattr(train.rllib, "start_ray", lambda args: started)
        monkeypatch.setattr(train.rllib, "build_config", self._config)
        monkeypatch.setattr(train.rllib, "export_network", self._export)
        monkeypatch.setattr(train.rllib.torch, "set_num_threads", self.threads.append)
        monkeypatch.setattr(
            matador_env.rllib, "policy_logits", lambda module: f"logits of {module}"
        )
        monkeypatch.setattr(train.rllib.sys, "argv", ["train/rllib.py", "--seed", "5"])

    def _config(self, args: RllibArgs, rules: Rules, hidden: list[int]) -> Any:
        self.configs.append((args, rules, hidden))
        return SimpleNamespace(build_algo=lambda: self.algo)

    def _export(self, net: Any, rules: Rules, out: Path, provenance: dict[str, Any]) -> Path:
        self.exports.append((net, rules, out, provenance))
        return out / "policy.onnx"


def test_a_run_logs_each_iteration_exports_its_policy_and_stops_what_it_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _Run(monkeypatch, started=True, per_iteration=120)
    _clock(monkeypatch, train.rllib, step=2.5)
    out = tmp_path / "run"
    argv = ("--preset", "pagat", "--players", "3", "--hidden", "16", "--reward", "win")
    args = _args(*argv, "--timesteps", "300", "--torch-threads", "2", "--out", str(out))
    assert train.rllib.train(args) == out
    assert run.algo.iterations == 3  # 360 steps: past 300, no fourth iteration
    rules = Rules.preset("pagat", players=3)
    assert run.configs == [(args, rules, [16])]
    assert run.threads == [2]
    progress = [json.loads(line) for line in (out / "progress.jsonl").read_text().splitlines()]
    assert [line["env_steps"] for line in progress] == [120, 240, 360]
    assert [line["iteration"] for line in progress] == [1, 2, 3]
    # Seconds since training began, by a stand-in clock ticking 2.5 s per reading.
    assert [line["seconds"] for line in progress] == [2.5, 5.0, 7.5]
    assert json.loads((out / "args.json").read_text())["timesteps"] == 300
    assert run.algo.modules == [matador_env.rllib.POLICY_ID]
    (export,) = run.exports
    assert export[:3] == ("logits of module shared", rules, out / "final")
    assert export[3] == {
        "trainer": "train.rllib (Ray RLlib PPO, shared-policy self-play)",
        "run": "run",
        "env_steps": 360,  # sampled, not asked for
        "reward": "win",
        "hidden": [16],
        "command": "python -m train.rllib --seed 5",
    }
    # It started Ray, so it stops it; the algorithm's workers are stopped first.
    assert (run.algo.stopped, run.ray.shutdowns) == (1, 1)


def test_training_stops_as_soon_as_the_timesteps_are_reached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _Run(monkeypatch, started=False, per_iteration=250)
    train.rllib.train(_args("--timesteps", "500", "--out", str(tmp_path / "run")))
    assert run.algo.iterations == 2  # 500 steps sampled: no third iteration


def test_a_ray_session_it_found_is_left_running_and_the_folder_defaults_to_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    run = _Run(monkeypatch, started=False, per_iteration=250)
    run_dir = train.rllib.train(_args("--timesteps", "200"))
    assert run_dir.parent == Path("runs") and run_dir.name.startswith("rllib_ppo__standard__1__")
    assert (tmp_path / run_dir / "args.json").is_file()
    assert run.algo.iterations == 1
    assert (run.algo.stopped, run.ray.shutdowns) == (1, 0)


def test_a_failed_export_still_stops_the_algorithm_and_ray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _Run(monkeypatch, started=True, per_iteration=10)

    def broken(*args: Any) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(train.rllib, "export_network", broken)
    with pytest.raises(OSError, match="disk full"):
        train.rllib.train(_args("--timesteps", "10", "--out", str(tmp_path / "run")))
    assert (run.algo.stopped, run.ray.shutdowns) == (1, 1)


# -- benchmarks.rllib --------------------------------------------------------------------------


def test_the_benchmark_measures_each_game_with_its_runners_seed_and_cpus() -> None:
    args = bench.rllib_args("pagat-4-teams", 2, seed=9, num_cpus=3)
    assert (args.preset, args.players, args.teams) == ("pagat", 4, True)
    assert (args.num_env_runners, args.seed, args.num_cpus) == (2, 9, 3)
    assert bench.RUNNERS == (1, 2)  # its docstring: "with 1 and 2 env runners"


def test_a_rate_is_the_timed_iterations_steps_after_a_warm_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    algo = _Algo(per_iteration=4000)
    configs: list[RllibArgs] = []

    def config(args: RllibArgs, rules: Rules, hidden: list[int]) -> Any:
        configs.append(args)
        return SimpleNamespace(build_algo=lambda: algo)

    monkeypatch.setattr(train.rllib, "build_config", config)
    figures = bench.rllib_rate("standard", 2, iterations=3, seed=4)
    assert algo.iterations == 4 and algo.stopped == 1
    assert figures["steps"] == 12000  # the warm-up's 4000 are not counted
    assert figures["rate"] == figures["steps"] / figures["seconds"]
    assert [(a.num_env_runners, a.seed) for a in configs] == [(2, 4)]


class _Bench:
    """benchmarks.rllib.main with Ray and both trainers replaced; what each was given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, sb3: Any) -> None:
        self.ray = _Ray(monkeypatch)
        self.rates: list[tuple[Any, ...]] = []
        monkeypatch.setattr(bench, "rllib_rate", self._rate)
        monkeypatch.setattr(bench, "sb3_rate", sb3)

    def _rate(self, *args: Any) -> dict[str, float]:
        self.rates.append(args)
        return {"steps": 8000, "seconds": 10.0, "rate": 800.0}


def test_the_benchmark_hands_ray_its_cpus_and_each_runner_its_iterations(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def sb3_not_run(*args: Any) -> dict[str, float]:
        raise AssertionError("python -m train trains the standard game only")

    run = _Bench(monkeypatch, sb3_not_run)
    bench.main(["--game", "pagat-4-teams", "--num-cpus", "3", "--iterations", "5", "--seed", "2"])
    assert [options["num_cpus"] for options in run.ray.inits] == [3]
    assert run.rates == [("pagat-4-teams", 1, 5, 2), ("pagat-4-teams", 2, 5, 2)]
    assert run.ray.shutdowns == 1
    assert "python -m train trains the standard game only here: not measured" in (
        capsys.readouterr().out
    )


def test_a_python_m_train_that_times_out_is_reported_not_raised(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def too_slow(*args: Any) -> dict[str, float]:
        raise subprocess.TimeoutExpired(["python", "-m", "train"], 900)

    _Bench(monkeypatch, too_slow)
    bench.main([])
    out = capsys.readouterr().out
    assert "  python -m train not measured: Command" in out
    assert "SB3" not in out


def test_the_benchmark_checks_with_its_own_cpus_and_refuses_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import ray

    monkeypatch.setattr(ray, "init", _no_training)
    # Ray would count one CPU here; --num-cpus 2 gives the local Ray two.
    monkeypatch.setattr(train.rllib, "local_cpus", lambda: 1)
    with pytest.raises(AssertionError, match="the training started"):
        bench.main(["--num-cpus", "2"])
    # The seed bound of two env runners, which train.rllib's checks know.
    line = refused(bench.main, ["--seed", str(2**32 - 2)], capsys)
    assert line.startswith(
        "python -m benchmarks.rllib: error: --seed: 4294967294 is not allowed; allowed: an "
        "integer from 0 to 4294967293"
    )


def test_sb3s_rate_is_the_last_fps_python_m_train_logged(monkeypatch: pytest.MonkeyPatch) -> None:
    from torch.utils.tensorboard import SummaryWriter

    commands: list[list[str]] = []

    def python_m_train(command: list[str], **kwargs: Any) -> Any:
        commands.append(command)
        out = Path(command[command.index("--out") + 1])
        with SummaryWriter(str(out / "tb" / "PPO_1")) as writer:
            for step, fps in enumerate((900.0, 1200.0, 1100.0)):
                writer.add_scalar("time/fps", fps, step)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(bench.subprocess, "run", python_m_train)
    assert bench.sb3_rate(4096, seed=6)["rate"] == 1100.0
    ((_, *argv),) = commands
    flags = {
        flag: value for flag, value in zip(argv, argv[1:], strict=False) if flag.startswith("--")
    }
    # "its defaults but a --timesteps budget, no warm start and the smallest evaluations"
    assert argv[:2] == ["-m", "train"] and "--no-progress" in argv
    assert flags["--timesteps"] == "4096" and flags["--seed"] == "6"
    assert (flags["--bc-decisions"], flags["--eval-every"]) == ("0", "0")
