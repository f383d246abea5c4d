"""The reliability suite (benchmarks/fuzz.py) in CI: a small sample of every campaign
finds nothing and meets both accepted and refused inputs; ``pytest --long`` runs each
campaign for a minute."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.fuzz import CAMPAIGNS, Finding, Tally, classify, run_campaign, run_http

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = {"policy": 40, "bot": 40, "play": 60}
"""Trials per campaign in CI; the others take 150 (each campaign well under a second)."""


def _report(tally: Tally) -> str:
    return "\n".join(tally.examples) + f"\nrefused with {tally.errors}"


@pytest.mark.parametrize("campaign", CAMPAIGNS)
def test_a_sample_of_every_campaign_finds_nothing(campaign: str) -> None:
    count = SAMPLE.get(campaign, 150)
    tally = run_campaign(campaign, seed=14, count=count)
    assert tally.findings == 0, _report(tally)
    assert tally.tried == count == tally.accepted + tally.refused
    # Both sides of the entry point are reached, or the mutations miss their target.
    assert tally.accepted > 0 and tally.refused > 0, _report(tally)


@pytest.mark.parametrize("campaign", CAMPAIGNS)
def test_long_campaigns_find_nothing(campaign: str, long_run: bool) -> None:
    if not long_run:
        pytest.skip("the long campaigns run under pytest --long")
    tally = run_campaign(campaign, seed=1414, seconds=60)
    assert tally.findings == 0, _report(tally)


def test_the_http_campaign_finds_nothing(long_run: bool) -> None:
    result = run_http(seconds=60 if long_run else 2, seed=14)
    if isinstance(result, str):
        pytest.skip(f"benchmarks/fuzz_http.py: {result}")
    assert result.tried > 0 and result.findings == 0, _report(result)


def test_a_trial_is_reproduced_by_seed_campaign_and_number() -> None:
    whole = run_campaign("apply", seed=3, count=30)
    one_by_one = Tally()
    for i in range(30):
        one_by_one.add(run_campaign("apply", seed=3, trials=[i]))
    assert (whole.accepted, whole.refused, whole.errors) == (
        one_by_one.accepted,
        one_by_one.refused,
        one_by_one.errors,
    )


def _raise(exc: BaseException) -> None:
    raise exc


def test_inputs_are_classified() -> None:
    tally = Tally()
    assert classify(tally, lambda: None, (ValueError,), "ok") == "accepted"
    assert classify(tally, lambda: _raise(KeyError("x")), (KeyError,), "doc") == "refused"
    assert classify(tally, lambda: _raise(TypeError("raw")), (ValueError,), "raw") == "finding"
    assert classify(tally, lambda: _raise(ValueError()), (ValueError,), "bare") == "finding"
    assert classify(tally, lambda: _raise(Finding("broken")), (ValueError,), "inv") == "finding"
    assert (tally.tried, tally.accepted, tally.findings) == (5, 1, 3)
    assert [e.split(":")[0] for e in tally.examples] == ["raw", "bare", "inv"]


def test_the_command_prints_the_table_and_its_exit_status() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.fuzz",
            "--count",
            "5",
            "--no-progress",
            "--campaign",
            "rules",
            "view",
            "--seed",
            "2",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "python -m benchmarks.fuzz --seed 2: 5 trials per campaign"
    rows = {line.split()[0]: line.split()[1:] for line in lines[3:5]}
    assert rows["rules"][0] == rows["view"][0] == "5"
    assert "found: nothing" in done.stdout


def test_mutating_a_message_survives_what_earlier_mutations_left() -> None:
    # The harness itself crashed on seed 23: a history entry an earlier mutation had
    # replaced by a bool, and a sidecar's rules that were an empty dict or a name.
    import random

    from benchmarks.fuzz import mutated_message

    for seed in range(3000):
        rng = random.Random(seed)
        mutated_message(rng, {"history": [True, {"seat": 0}, None], "seat": 1})
        mutated_message(rng, {})
        mutated_message(rng, "standard")
