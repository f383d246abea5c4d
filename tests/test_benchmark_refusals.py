"""The command lines of benchmarks.training, benchmarks.rllib, benchmarks.fuzz and
benchmarks.fuzz_http: a bad or conflicting argument is refused in one line (exit 2)
before any work, and a fuzz campaign never reports a pass on nothing tried."""

from __future__ import annotations

import random
import socket
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
POLICY = str(ROOT / "matador_env" / "bots" / "standard")


def refused(main: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The last line ``main(argv)`` printed on stderr as it exited with status 2."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err.strip().splitlines()[-1]


def _no_training(*args: object, **kwargs: object) -> None:
    raise AssertionError("the training started")


# -- benchmarks.training --------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--out", ""], "argument --out: an empty path is not a folder"),
        (
            ["--policy", POLICY, "--out", "runs/x"],
            "argument --out: not allowed with argument --policy",
        ),
    ],
)
def test_training_refuses_an_empty_out_and_out_with_policy(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import train.run
    from benchmarks.training import main

    monkeypatch.setattr(train.run, "main", _no_training)
    line = refused(main, argv, capsys)
    assert line == f"python -m benchmarks.training: error: {says}"


def test_training_checks_out_itself_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import train.run
    from benchmarks.training import main

    monkeypatch.setattr(train.run, "main", _no_training)
    (tmp_path / "file").write_text("")
    line = refused(main, ["--out", str(tmp_path / "file" / "run")], capsys)
    assert line.startswith("python -m benchmarks.training: error: --out: ")
    assert "which exists and is not a folder; give another folder" in line
    (tmp_path / "done").mkdir()
    (tmp_path / "done" / "args.json").write_text("{}")
    line = refused(main, ["--out", str(tmp_path / "done")], capsys)
    assert line.endswith(f"--out: {tmp_path / 'done'} already holds a run; give another folder")


def test_training_plays_random_the_deals_its_docstring_says(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import benchmarks.training as training

    calls: list[tuple[str, int, int]] = []

    def evaluate(
        policy: str, opponent: str, hands: int, matches: int, seed: int, progress: bool
    ) -> dict:
        calls.append((opponent, hands, matches))
        return {"opponent": opponent, "hand_points_lo95": None}

    monkeypatch.setattr(training, "evaluate", evaluate)
    training.main(["--policy", POLICY, "--hands", "1", "--matches", "7"])
    training.main(["--policy", POLICY, "--hands", "3000", "--matches", "4"])
    assert calls == [
        ("expert", 1, 7),
        ("random", 200, 1),
        ("expert", 3000, 4),
        ("random", 600, 0),
    ]
    doc = " ".join((training.__doc__ or "").split())
    assert "``max(200, hands // 5)`` deals" in doc and "``matches // 5``" in doc
    assert "fewer deals" not in doc


# -- benchmarks.rllib -----------------------------------------------------------------


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--num-cpus", "-1"], "argument --num-cpus: '-1' is not allowed; allowed: an integer, 2"),
        (["--num-cpus", "1"], "argument --num-cpus: '1' is not allowed; allowed: an integer, 2"),
        (["--sb3-timesteps", "0"], "argument --sb3-timesteps: '0' is not allowed; allowed: an"),
        (["--seed", "-3"], "argument --seed: '-3' is not allowed; allowed: an integer, 0 or more"),
        (["--seed", "x"], "argument --seed: 'x' is not allowed; allowed: an integer, 0 or more"),
    ],
)
def test_rllib_refuses_bad_numbers_before_ray_starts(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    from benchmarks.rllib import main

    monkeypatch.setattr(ray, "init", _no_training)
    line = refused(main, argv, capsys)
    assert line.startswith(f"python -m benchmarks.rllib: error: {says}")


# -- benchmarks.fuzz and benchmarks.fuzz_http -----------------------------------------


def test_fuzz_tries_at_least_one_input_however_short_the_time(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks.fuzz import main, run_campaign

    assert run_campaign("rules", seed=1, seconds=1e-300).tried == 1
    assert run_campaign("rules", seed=1, seconds=1e-300, count=3).tried == 1
    assert main(["--seconds", "1e-300", "--campaign", "rules", "--no-progress"]) == 0
    total = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("total"))
    assert total.split()[1] == "1"


def test_fuzz_takes_seconds_or_count_not_both(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.fuzz import main

    line = refused(main, ["--count", "1", "--seconds", "5"], capsys)
    assert (
        line
        == "python -m benchmarks.fuzz: error: argument --seconds: not allowed with argument --count"
    )
    line = refused(main, ["--count", "0"], capsys)
    assert line.endswith("argument --count: '0' is not allowed; allowed: an integer, 1 or more")


class _DeadServer:
    """A server under test that no client reaches (each input is then tried and lost)."""

    def connect(self, timeout: float) -> Any:
        class Refused:
            def request(self, *args: object, **kwargs: object) -> None:
                raise OSError("refused")

            def close(self) -> None:
                pass

        return Refused()

    def open_socket(self, timeout: float = 0.0) -> socket.socket:
        raise OSError("refused")


@pytest.mark.parametrize("phase", ["views", "requests", "hangups"])
def test_fuzz_http_phases_try_at_least_one_input_however_short_the_time(
    phase: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import benchmarks.fuzz_http as fuzz_http

    sent: list[bytes] = []
    monkeypatch.setattr(fuzz_http, "send_raw", lambda server, tally, request: sent.append(request))
    monkeypatch.setattr(fuzz_http, "sample_views", lambda rng, count: [{"seat": 0}] * count)
    tally = fuzz_http.Tally()
    past = time.monotonic() - 1.0
    fuzz_http.PHASES[phase](_DeadServer(), tally, random.Random(0), past)  # type: ignore[arg-type]
    assert tally.counts["tried"] + len(sent) == 1


def test_rllib_good_arguments_pass_the_trainers_checks_and_reach_ray(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ray

    from benchmarks.rllib import main

    monkeypatch.setattr(ray, "init", _no_training)
    for game in ("standard", "pagat-4-teams"):
        with pytest.raises(AssertionError, match="the training started"):
            main(["--game", game, "--num-cpus", "2", "--seed", "0"])
