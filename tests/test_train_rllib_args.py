"""``python -m train.rllib`` refuses bad arguments with one line before Ray starts or
anything is written, with the ranges ``python -m train`` uses for the same numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from train.args import ArgsError, parse
from train.rllib import RllibArgs, check_args


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
        (["--num-cpus", "1", "--num-env-runners", "4"], "--num-env-runners: 4 env runners need"),
        (["--seed", "-5"], "--seed: -5 is not allowed; allowed: an integer from 0 to 4294967295"),
        # RLlib seeds numpy with it, which takes no more: it died after Ray started.
        (["--seed", str(2**32)], "--seed: 4294967296 is not allowed; allowed: an integer from 0"),
    ],
)
def test_a_bad_number_or_name_is_refused_before_ray(argv: list[str], says: str) -> None:
    with pytest.raises(ArgsError) as refused:
        check_args(parse(RllibArgs, argv, prog="python -m train.rllib"))
    assert str(refused.value).startswith(says)


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
