"""The README's benchmarks run end to end with tiny budgets and print the figures
their docstrings promise (``make demo`` once broke with no test noticing; these
commands had no test either). Figures, not speed: nothing here asserts a time."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(module: str, *args: str) -> list[dict]:
    """The JSON lines that ``python -m module args`` printed (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def test_engine_benchmark_plays_hands_of_each_preset_asked() -> None:
    rows = run("benchmarks.engine", "--seconds", "0.2", "--preset", "standard", "leiden")
    assert [r["preset"] for r in rows] == ["standard", "leiden"]
    for r in rows:
        assert r["hands"] > 0 and r["actions_per_s"] > 0 and r["mean_actions_per_hand"] > 1


def test_env_benchmark_compares_with_the_classics() -> None:
    rows = run("benchmarks.env", "--seconds", "0.4", "--slices", "2")
    played = {r["env"]: r for r in rows if "agent_steps" in r}
    assert any(name.startswith("matador_v0 env()") for name in played)
    assert any(name.startswith("connect_four") for name in played)
    assert all(r["agent_steps"] > 0 for r in played.values())
    verdicts = [r for r in rows if "verdict" in r]
    assert len(verdicts) == 1 and verdicts[0]["verdict"] in ("meets", "below")


def test_env_benchmark_builds_the_classics_with_or_without_the_registry(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pettingzoo  # type: ignore[import-untyped]

    from benchmarks.env import factories

    def built(name: str) -> str:
        make = factories("standard")[name]
        assert not isinstance(make, str), make
        env = make()
        env.reset(seed=1)
        return type(env.unwrapped).__name__

    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the registry's way is quiet
        assert built("connect_four_v3 env()") == "raw_env"
        assert built("texas_holdem_v4 env()") == "raw_env"

    def missing_extra(*args: object, **kwargs: object) -> None:
        raise ImportError("rlcard is not installed")

    monkeypatch.setattr(pettingzoo, "make", missing_extra)
    assert factories("standard")["texas_holdem_v4 env()"] == "skipped: rlcard is not installed"
    # A PettingZoo without the registry builds them from their modules.
    monkeypatch.delattr(pettingzoo, "make")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert built("connect_four_v3 env()") == "raw_env"


def test_env_benchmark_draws_pictures_with_render() -> None:
    rows = run("benchmarks.env", "--seconds", "0.4", "--slices", "2", "--render")
    played = {r["env"]: r for r in rows if "agent_steps" in r}
    assert any(name.startswith("matador_v0 env()") for name in played)
    assert all(r["agent_steps"] > 0 for r in played.values())
    assert [r for r in rows if "verdict" in r] == []
    drawing = [r for r in rows if "matador_env_over_connect_four_drawing" in r]
    assert len(drawing) == 1 and drawing[0]["matador_env_over_connect_four_drawing"] > 0


def test_bot_benchmark_measures_in_process_and_over_http() -> None:
    rows = run(
        "benchmarks.bot",
        *("--seconds", "0.3", "--clients", "2", "--views", "50"),
        *("--levels", "trained", "--http-levels", "trained"),
    )
    kinds = [r["bench"] for r in rows]
    assert kinds == ["machine", "in_process", "http_single", "http_concurrent"]
    assert rows[1]["views"] > 0 and rows[2]["moves"] > 0
    assert rows[3]["moves"] > 0 and rows[3]["errors"] == 0


def test_training_benchmark_evaluates_a_given_policy(tmp_path: Path) -> None:
    rows = run(
        "benchmarks.training",
        *("--policy", "matador_env/bots/standard", "--hands", "20", "--matches", "2"),
        *("--out", str(tmp_path / "run")),
    )
    against = {r["opponent"]: r for r in rows if "opponent" in r}
    assert set(against) == {"expert", "random"}
    assert against["expert"]["hand_deals"] == 20 and against["expert"]["match_deals"] == 2
    verdict = rows[-1]["verdict"]
    assert set(verdict) == {
        "matches_vs_expert_at_least_55%",
        "points_vs_expert_significantly_positive",
        "points_vs_random_at_least_13",
    }


def test_vector_benchmark_measures_make_vec_both_ways() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.vector", "--section", "make_vec", "--seconds", "0.2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines() if " sync " in line]
    assert [row[:2] for row in rows] == [
        ["standard", "random"],
        ["standard", "trained"],
        ["pagat_teams", "random"],
        ["pagat_teams", "trained"],
    ]
    for row in rows:
        assert row[2] == "sync" and row[4] == "compiled"
        assert float(row[3].replace(",", "")) > 0 and float(row[5].replace(",", "")) > 0
    assert "engine," not in done.stdout  # only the section asked for


@pytest.mark.parametrize(
    "module, args, says",
    [
        ("benchmarks.engine", ["--seconds", "0"], "argument --seconds: '0' is not allowed"),
        ("benchmarks.env", ["--seconds", "nan"], "argument --seconds: 'nan' is not allowed"),
        ("benchmarks.env", ["--slices", "0"], "argument --slices: '0' is not allowed"),
        ("benchmarks.vector", ["--seconds", "-1"], "allowed: a number above 0"),
        ("benchmarks.bot", ["--seconds", "inf"], "argument --seconds: 'inf' is not allowed"),
        ("benchmarks.fuzz", ["--seconds", "nan"], "argument --seconds: 'nan' is not allowed"),
        ("benchmarks.fuzz_http", ["--seconds", "nan"], "allowed: a number above 0"),
        ("benchmarks.rllib", ["--iterations", "0"], "allowed: an integer, 1 or more"),
        ("benchmarks.training", ["--hands", "0"], "argument --hands: '0' is not allowed"),
        ("benchmarks.training", ["--policy", "/nowhere"], "--policy: policy spec '/nowhere'"),
        ("benchmarks.training", ["--policy", "matador_env/bots/pagat"], "plays pagat only"),
    ],
)
def test_a_budget_or_policy_no_run_can_use_is_refused_at_once(
    module: str, args: list[str], says: str
) -> None:
    """Budgets that are 0, negative or not finite were divided by, never reached or
    crashed with a traceback; a policy that cannot play failed after the start."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert says in done.stderr.strip().splitlines()[-1]
