"""The command lines' number flags (matador_env.flags): integers in the digits 0-9
alone, time budgets finite and above 0, each refused in one line naming what is
allowed."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from matador_env.flags import (
    LARGEST_TRAINING_SEED,
    int_at_least,
    integer_arg,
    positive_int,
    positive_number,
    seed_arg,
    training_seed_arg,
)

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("text, value", [("1", 1), ("007", 7), ("1000", 1000)])
def test_a_count_reads_the_digits_0_to_9(text: str, value: int) -> None:
    assert positive_int(text) == value


@pytest.mark.parametrize(
    # int() reads all of these but the last two: other scripts' digits, a sign,
    # spaces, underscores; the rules' text form and terminal play refuse them.
    "text",
    ["0", "-1", "３", "١", "+3", " 3", "1_000", "1.0", "", "x", "9" * 5000],
)
def test_a_count_refuses_what_is_not_digits_or_below_its_minimum(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        positive_int(text)
    assert str(refused.value) == f"{text!r} is not allowed; allowed: an integer, 1 or more"


def test_a_minimum_of_0_takes_0_and_says_why_it_refuses() -> None:
    seed = int_at_least(0, " (a seed)")
    assert seed("0") == 0
    with pytest.raises(argparse.ArgumentTypeError, match=r"an integer, 0 or more \(a seed\)$"):
        seed("-1")
    with pytest.raises(ValueError, match="minimum=-1"):
        int_at_least(-1)


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "x", ""])
def test_a_time_budget_is_a_finite_number_above_0(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        positive_number(text)
    assert str(refused.value) == f"{text!r} is not allowed; allowed: a number above 0"
    assert positive_number("0.5") == 0.5


@pytest.mark.parametrize("text, value", [("0", 0), ("2026", 2026), (str(2**64 - 1), 2**64 - 1)])
def test_a_seed_is_one_the_engine_deals(text: str, value: int) -> None:
    assert seed_arg(text) == value


@pytest.mark.parametrize("text", ["-5", str(2**64), "1.5", "３", ""])
def test_a_seed_outside_the_engines_range_is_refused(text: str) -> None:
    # random.Random deals -5 as 5: the engine refuses negative seeds, and so do the
    # command lines, in one line before any work.
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        seed_arg(text)
    assert str(refused.value).endswith(
        "is not allowed; allowed: an integer from 0 to 18446744073709551615 (2**64 - 1)"
    )


def test_a_training_seed_is_one_numpy_takes() -> None:
    assert LARGEST_TRAINING_SEED == 2**32 - 1
    assert training_seed_arg("0") == 0 and training_seed_arg(str(2**32 - 1)) == 2**32 - 1
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        training_seed_arg(str(2**32))
    assert str(refused.value) == (
        "'4294967296' is not allowed; allowed: an integer from 0 to 4294967295 (2**32 - 1, the "
        "most numpy's seeding takes: it seeds training)"
    )


@pytest.mark.parametrize(
    "module", ["matador_env.play", "matador_env.serve", "evaluate", "benchmarks.strength"]
)
def test_command_lines_refuse_a_negative_seed_in_one_line(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module, "--seed", "-5"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        done.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "argument --seed: '-5' is not allowed; allowed: an integer from 0 to "
            "18446744073709551615 (2**64 - 1)"
        )
    )


@pytest.mark.parametrize("text, value", [("0", 0), ("12", 12), ("-3", -3), ("007", 7)])
def test_an_integer_flag_reads_a_sign_and_the_digits_0_to_9(text: str, value: int) -> None:
    # Its range is the command's to check, naming the flag (--hands must be at least 1).
    assert integer_arg(text) == value


@pytest.mark.parametrize(
    "text", ["３", "٣", "+3", " 5", "1_000", "--3", "-", "1.0", "", "9" * 5000]
)
def test_an_integer_flag_refuses_what_int_would_read_or_choke_on(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        integer_arg(text)
    assert str(refused.value).endswith(" is not allowed; allowed: an integer in the digits 0-9")


@pytest.mark.parametrize(
    ("module", "flag"),
    [
        ("evaluate.__main__", "--hands"),
        ("evaluate.__main__", "--workers"),
        ("matador_env.play", "--seat"),
        ("matador_env.serve", "--port"),
        ("train.expert_fit", "--positions"),
    ],
)
def test_command_lines_refuse_other_scripts_digits_in_their_counts(
    module: str, flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``int`` read these (``--hands ٣`` played three hands); now no count flag does."""
    import importlib

    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as exited:
        main([flag, "٣"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}: '٣' is not allowed; allowed: an integer in the digits 0-9" in err
