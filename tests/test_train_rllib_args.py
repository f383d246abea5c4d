"""``python -m train.rllib`` refuses bad arguments with one line before Ray starts or
anything is written, with the ranges ``python -m train`` uses for the same numbers and
the rules RLlib would enforce only after Ray started (none of these tests starts Ray)."""

from __future__ import annotations

import itertools
import socket
from pathlib import Path
from typing import Any

import pytest

import train.rllib
from train.args import ArgsError, parse
from train.files import new_run_problem
from train.rllib import RllibArgs, check_args


def _args(*argv: str) -> RllibArgs:
    return parse(RllibArgs, list(argv), prog="python -m train.rllib")


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--lr", "nan"], "--lr: nan is not allowed; allowed: a number above 0"),
        (["--lr", "0"], "--lr: 0.0 is not allowed; allowed: a number above 0"),
        (["--gamma", "2"], "--gamma: 2.0 is not allowed; allowed: a number above 0 and at most 1"),
        (["--gae-lambda", "7"], "--gae-lambda: 7.0 is not allowed; allowed: a number from 0 to 1"),
        (["--clip-param", "-1"], "--clip-param: -1.0 is not allowed; allowed: a number above 0"),
        (["--entropy-coeff", "inf"], "--entropy-coeff: inf is not allowed"),
        (["--exp-name", "../up"], "--exp-name: '../up' is not allowed; allowed: a name for a"),
        (["--exp-name", ""], "--exp-name: '' is not allowed"),
        (["--reward", "nope"], "--reward: 'nope' is not allowed; allowed: score, win, normalised"),
        # Ignored without a word before.
        (["--num-cpus", "2", "--address", "auto"], "--num-cpus: not with --address"),
        (["--num-cpus", "1", "--num-env-runners", "4"], "--num-env-runners: 4 env runners need"),
        (["--seed", "-5"], "--seed: -5 is not allowed; allowed: an integer from 0 to 4294967294"),
        # RLlib seeds numpy with it, which takes no more: it died after Ray started.
        (["--seed", str(2**32)], "--seed: 4294967296 is not allowed; allowed: an integer from 0"),
        # ... plus each env runner's number: runner 1 got 2**32 and died the same way.
        (
            ["--seed", str(2**32 - 1), "--num-env-runners", "1", "--num-cpus", "2"],
            "--seed: 4294967295 is not allowed; allowed: an integer from 0 to 4294967294 "
            "(2**32 - 1 less --num-env-runners 1",
        ),
        (
            ["--seed", str(2**32 - 3), "--num-env-runners", "3", "--address", "auto"],
            "--seed: 4294967293 is not allowed; allowed: an integer from 0 to 4294967292",
        ),
        # More env runners than this machine has CPUs, without --num-cpus: waited for ever.
        (["--num-env-runners", "100000"], "--num-env-runners: 100000 env runners need as many"),
        # RLlib's fragments of --train-batch-size: refused after Ray started.
        (
            ["--train-batch-size", "300", "--num-env-runners", "16", "--address", "auto"],
            "--train-batch-size: 300 is not allowed with 128 environments sampling (8 in each "
            "of 16 sampling processes): each update takes a fragment of 3 steps from every "
            "one, 384 steps, more than 10% over 300, which RLlib refuses; allowed: a multiple "
            "of 128, 1280 or more",
        ),
        (
            [
                "--train-batch-size",
                "300",
                "--num-env-runners",
                "2",
                "--num-envs-per-env-runner",
                "64",
                "--num-cpus",
                "2",
            ],
            "--train-batch-size: 300 is not allowed with 128 environments sampling (64 in "
            "each of 2 sampling processes)",
        ),
        (
            ["--train-batch-size", "20", "--minibatch-size", "10", "--num-env-runners", "0"],
            "--train-batch-size: 20 is not allowed with 8 environments sampling (8 in each of "
            "1 sampling process)",
        ),
    ],
)
def test_a_bad_number_or_name_is_refused_before_ray(argv: list[str], says: str) -> None:
    with pytest.raises(ArgsError) as refused:
        check_args(parse(RllibArgs, argv, prog="python -m train.rllib"))
    assert str(refused.value).startswith(says)
    assert "\n" not in str(refused.value)


def test_an_out_folder_it_cannot_use_is_refused_before_ray(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "args.json").write_text("{}")
    for out, says in [
        ("file/sub", "lies in"),
        ("run", "already holds a run; give another folder"),
    ]:
        with pytest.raises(ArgsError, match=says):
            check_args(parse(RllibArgs, ["--out", str(tmp_path / out)]))
    assert check_args(parse(RllibArgs, ["--out", str(tmp_path / "new")]))


def test_the_seed_bound_leaves_room_for_every_env_runners_seed() -> None:
    assert check_args(_args("--seed", str(2**32 - 1), "--num-env-runners", "0"))
    assert check_args(_args("--seed", str(2**32 - 2), "--num-env-runners", "1"))
    assert check_args(_args("--seed", str(2**32 - 5), "--num-env-runners", "4", "--address", "a:1"))


def test_env_runners_are_checked_against_the_cpus_of_the_local_ray(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without --num-cpus the local Ray gets the CPUs Ray itself counts on this machine.
    monkeypatch.setattr(train.rllib, "local_cpus", lambda: 2)
    with pytest.raises(ArgsError) as refused:
        check_args(_args("--num-env-runners", "3"))
    assert str(refused.value) == (
        "--num-env-runners: 3 env runners need as many CPUs, and the local Ray gets this "
        "machine's 2 (no --num-cpus); allowed: at most 2, or --address of a Ray cluster"
    )
    assert check_args(_args("--num-env-runners", "2", "--train-batch-size", "4000"))
    assert check_args(_args("--num-env-runners", "3", "--num-cpus", "3"))  # --num-cpus says
    assert check_args(_args("--num-env-runners", "3", "--address", "auto"))  # a cluster's
    assert train.rllib.local_cpus() >= 1  # Ray's own count, here


def test_the_fragment_check_is_rllibs_rule() -> None:
    # train.rllib's fragment for each (batch, runners, envs), judged by check_args and by
    # RLlib's own validation (without Ray): the same verdicts.
    from ray.rllib.algorithms.ppo import PPOConfig

    def rllib_refuses(args: RllibArgs) -> bool:
        config = (
            PPOConfig()
            .env_runners(
                num_env_runners=args.num_env_runners,
                num_envs_per_env_runner=args.num_envs_per_env_runner,
                rollout_fragment_length=train.rllib.rollout_fragment(args),
            )
            .training(train_batch_size_per_learner=args.train_batch_size)
        )
        try:
            config.validate_train_batch_size_vs_rollout_fragment_length()
        except ValueError:
            return True
        return False

    refused = 0
    grid = itertools.product(
        (1, 7, 20, 64, 100, 256, 300, 500, 1000, 1001, 4000), (0, 1, 2, 3, 16, 32), (1, 8, 64)
    )
    for batch, runners, envs in grid:
        args = RllibArgs(
            train_batch_size=batch,
            minibatch_size=1,
            num_env_runners=runners,
            num_envs_per_env_runner=envs,
        )
        problem = train.rllib.fragment_problem(args)
        assert (problem is not None) == rllib_refuses(args), (batch, runners, envs, problem)
        refused += problem is not None
        environments = max(1, runners) * envs
        for allowed in (environments * 3, environments * 10, environments * 10 + 1):
            assert (
                train.rllib.fragment_problem(
                    RllibArgs(
                        train_batch_size=allowed,
                        num_env_runners=runners,
                        num_envs_per_env_runner=envs,
                    )
                )
                is None
            )
    assert refused > 20


def test_the_documented_commands_pass_the_checks() -> None:
    assert check_args(
        _args("--preset", "pagat", "--players", "4", "--teams", "--timesteps", "200000")
    )
    assert check_args(
        _args("--address", "auto", "--num-env-runners", "16", "--timesteps", "5000000")
    )


class _NoAlgo:
    def build_algo(self) -> Any:
        raise RuntimeError("RLlib refused the config")


def test_a_run_that_fails_to_start_leaves_no_run_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # args.json is written once the algorithm is built: a failure before that (RLlib's
    # validation, a runner that dies) leaves nothing that refuses a rerun in --out.
    monkeypatch.setattr(train.rllib, "start_ray", lambda args: False)
    monkeypatch.setattr(train.rllib, "build_config", lambda *a: _NoAlgo())
    out = tmp_path / "run"
    with pytest.raises(RuntimeError, match="RLlib refused"):
        train.rllib.train(_args("--num-env-runners", "0", "--out", str(out)))
    assert not out.exists()
    assert new_run_problem(out) is None


def _refused_address(
    address: str,
    ray_init: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    """The one line a run with --address ends with (exit status 2, nothing written),
    ``ray.init`` being ``ray_init``."""
    import ray

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", ray_init)
    out = tmp_path / "run"
    with pytest.raises(SystemExit) as ended:
        train.rllib.main(["--address", address, "--out", str(out)])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert not out.exists()
    return err


@pytest.mark.parametrize(
    ("error", "says"),
    [
        (
            ConnectionError("Could not find any running Ray instance."),
            "--address: 'auto' is not allowed: Ray could not join a cluster there (Could not "
            "find any running Ray instance.); allowed: the address of a running Ray cluster",
        ),
        (ValueError("Invalid address format: auto"), "--address: 'auto' is not allowed"),
    ],
)
def test_an_address_with_no_cluster_is_one_line(
    error: Exception,
    says: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def no_cluster(*args: Any, **kwargs: Any) -> None:
        raise error

    err = _refused_address("auto", no_cluster, tmp_path, monkeypatch, capsys)
    assert err.startswith(f"python -m train.rllib: {says}")


def _closed_port() -> int:
    """A port on this machine where nothing listens (bound once by us, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("form", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}"])
def test_an_address_where_nothing_answers_is_refused_before_ray_is_asked(
    form: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Ray's own join retries such an address for ever (measured: still waiting after
    # two minutes), so the run must end before ray.init.
    def joined(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("ray.init was asked to join an address where nothing answers")

    address = form.format(port=_closed_port())
    err = _refused_address(address, joined, tmp_path, monkeypatch, capsys)
    port = address.rpartition(":")[2]
    assert err.startswith(
        f"python -m train.rllib: --address: {address!r} is not allowed: Ray could not join a "
        f"cluster there (nothing answers at 127.0.0.1:{port} within 10 s ("
    )
    assert "`ray start --head` starts one" in err


@pytest.mark.parametrize("form", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}", "auto"])
def test_an_address_that_answers_or_is_not_host_port_goes_to_ray(
    form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    asked: list[str] = []
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", lambda address, **options: asked.append(address))
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        address = form.format(port=listening.getsockname()[1])
        assert train.rllib.start_ray(_args("--address", address)) is True
    assert asked == [address]
