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


def printed(module: str, *args: str) -> str:
    """What ``python -m module args`` printed (it must exit 0)."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def run(module: str, *args: str) -> list[dict]:
    """The JSON lines that ``python -m module args`` printed (it must exit 0)."""
    return [json.loads(line) for line in printed(module, *args).splitlines() if line[:1] == "{"]


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


def test_training_benchmark_evaluates_a_given_policy() -> None:
    rows = run(
        "benchmarks.training",
        *("--policy", "matador_env/bots/standard", "--hands", "20", "--matches", "2"),
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
    stdout = printed("benchmarks.vector", "--section", "make_vec", "--seconds", "0.2")
    rows = [line.split() for line in stdout.splitlines() if " sync " in line]
    assert [row[:2] for row in rows] == [
        ["standard", "random"],
        ["standard", "trained"],
        ["pagat_teams", "random"],
        ["pagat_teams", "trained"],
    ]
    for row in rows:
        assert row[2] == "sync" and row[4] == "compiled"
        assert float(row[3].replace(",", "")) > 0 and float(row[5].replace(",", "")) > 0
    assert "engine," not in stdout  # only the section asked for


def test_a_tiny_budget_still_measures_one_unit_of_work() -> None:
    """A budget spent before the first hand, game or move gave a ZeroDivisionError
    (engine, env) or an IndexError (bot): every timed loop now does one at least."""
    tiny = ("--seconds", "1e-9")
    (engine,) = run("benchmarks.engine", *tiny, "--preset", "standard")
    assert engine["hands"] == 1 and engine["mean_actions_per_hand"] > 1
    played = [r for r in run("benchmarks.env", *tiny, "--slices", "1") if "agent_steps" in r]
    assert played and all(r["games"] == 1 and r["agent_steps"] > 0 for r in played)
    rows = run(
        "benchmarks.bot",
        *tiny,
        *("--views", "1", "--clients", "2", "--levels", "random", "--http-levels", "random"),
    )
    assert [r["bench"] for r in rows] == ["machine", "in_process", "http_single", "http_concurrent"]
    assert rows[1]["views"] >= 1 and rows[1]["choose_median_ms"] > 0
    assert rows[2]["moves"] >= 1 and rows[2]["moves_per_s"] > 0
    assert rows[3]["moves"] >= 2 and rows[3]["errors"] == 0  # one move per client at least


def test_vector_benchmark_takes_several_sections_with_a_tiny_budget() -> None:
    """``--section engine env`` (as its docstring writes it) was refused, and its
    engine rows divided by zero hands at a tiny budget; repeating the flag still adds."""
    lines = printed(
        "benchmarks.vector", "--seconds", "1e-9", "--threads", "1",
        "--section", "engine", "env", "--section", "env",
    ).splitlines()  # fmt: skip
    assert sum(line.startswith("engine,") for line in lines) == 1
    assert sum(line.startswith("env,") for line in lines) == 1
    rows = [line.split() for line in lines if " python " in line or " raw_env " in line]
    from matador_env.engine import PRESETS

    assert len(rows) == len(PRESETS) + 2  # each preset's engine row; standard's, leiden's env
    for row in rows:
        assert float(row[2].replace(",", "")) > 0


@pytest.mark.parametrize(
    "module, args, says",
    [
        ("benchmarks.engine", ["--seconds", "0"], "argument --seconds: '0' is not allowed"),
        ("benchmarks.env", ["--seconds", "nan"], "argument --seconds: 'nan' is not allowed"),
        ("benchmarks.env", ["--slices", "0"], "argument --slices: '0' is not allowed"),
        ("benchmarks.vector", ["--seconds", "-1"], "allowed: a number above 0"),
        ("benchmarks.bot", ["--seconds", "inf"], "argument --seconds: 'inf' is not allowed"),
        ("benchmarks.bot", ["--clients", "0"], "argument --clients: '0' is not allowed"),
        ("benchmarks.bot", ["--views", "-3"], "argument --views: '-3' is not allowed"),
        ("benchmarks.engine", ["--preset"], "argument --preset: expected at least one"),
        ("benchmarks.vector", ["--threads", "0"], "argument --threads: '0' is not allowed"),
        ("benchmarks.vector", ["--ppo-steps", "-1"], "argument --ppo-steps: '-1' is not"),
        ("benchmarks.vector", ["--search-decisions", "-5"], "--search-decisions: '-5' is not"),
        ("benchmarks.fuzz", ["--seconds", "nan"], "argument --seconds: 'nan' is not allowed"),
        ("benchmarks.fuzz_http", ["--seconds", "nan"], "allowed: a number above 0"),
        ("benchmarks.rllib", ["--iterations", "0"], "allowed: an integer, 1 or more"),
        ("benchmarks.training", ["--hands", "0"], "argument --hands: '0' is not allowed"),
        ("benchmarks.runtime", ["--decisions", "0"], "argument --decisions: '0' is not allowed"),
        ("benchmarks.runtime", ["--seed", "-1"], "an integer from 0 to 18446744073709551615"),
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


def test_runtime_benchmark_measures_a_configuration_named_twice_once() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "benchmarks.runtime", "--configuration", "standard",
            "--configuration", "standard", "--decisions", "3", "--sweep-mb", "1",
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("standard ")]
    assert len(rows) == 1 and rows[0].endswith("3/3")


def test_vector_benchmark_counts_perft_with_both_engines() -> None:
    """The perft section counts every preset's deal with both engines; with a tiny budget
    each row is the depth-1 count, whose lines are the deal's legal moves."""
    from matador_env.engine import PRESETS, HandState, Rules

    stdout = printed("benchmarks.vector", "--section", "perft", "--seconds", "1e-9")
    rows = [line.split() for line in stdout.splitlines() if " python " in line]
    assert [row[0] for row in rows] == list(PRESETS)
    for row in rows:
        assert row[1:3] == ["depth", "1"] and row[5] == "python" and row[7] == "batch"
        legal = HandState.deal(Rules.preset(row[0]), 1).legal_moves()
        assert int(row[4].replace(",", "")) == len(legal), row
        assert float(row[6].replace(",", "")) > 0 and float(row[8].replace(",", "")) > 0
    assert "search," not in stdout  # only the section asked for
