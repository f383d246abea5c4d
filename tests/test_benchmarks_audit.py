"""What the benchmarks print and refuse, as a reader of their figures relies on: a
command line that cannot finish is refused in one line before any game, the files of
a run are replaced together, a combined table says what its seeds measured, and each
printed figure says what it is."""

from __future__ import annotations

import importlib.machinery
import json
import sys
from pathlib import Path

import pytest

from tests.test_benchmark_refusals import refused

ROOT = Path(__file__).resolve().parent.parent
BOTS = ROOT / "matador_env" / "bots"


def _no_games(*args: object, **kwargs: object) -> None:
    raise AssertionError("a game was played")


# -- benchmarks.strength --------------------------------------------------------------


def test_strength_refuses_a_search_of_other_rules_before_any_game(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --search that plays other rules only (a policy of pagat on standard) played
    expert vs greedy, then ended with an AgentRulesError traceback."""
    import benchmarks.strength as strength

    monkeypatch.setattr(strength, "run_with_bar", _no_games)
    pagat = f"policy:{BOTS / 'pagat'}"
    argv = ["--preset", "pagat", "--preset", "standard", "--search", pagat, "--no-progress"]
    line = refused(strength.main, argv, capsys)
    assert line.startswith(f"python -m benchmarks.strength: error: --search {pagat!r}: ")
    assert "plays pagat only, not the chosen rules standard" in line


@pytest.mark.parametrize("taken", ["strength.json", "strength.md"])
def test_strength_refuses_an_out_whose_file_is_a_folder_before_any_game(
    taken: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The write found it after the first configuration: an IsADirectoryError."""
    import benchmarks.strength as strength

    monkeypatch.setattr(strength, "run_with_bar", _no_games)
    (tmp_path / taken).mkdir()
    line = refused(strength.main, ["--out", str(tmp_path), "--no-progress"], capsys)
    assert line == (
        f"python -m benchmarks.strength: error: --out: {tmp_path / taken} is a folder, "
        f"where the run writes its {taken}"
    )
    (tmp_path / "seeds.md").mkdir()
    line = refused(strength.main, ["--combine", "a.json", "--out", str(tmp_path)], capsys)
    assert line.endswith(
        f"--out: {tmp_path / 'seeds.md'} is a folder, where the run writes its seeds.md"
    )
    # A name the file system cannot look up is named as such (it was an OSError).
    long = tmp_path / ("x" * 300)
    line = refused(strength.main, ["--out", str(long), "--no-progress"], capsys)
    assert line == f"python -m benchmarks.strength: error: --out: {long} cannot be used " + (
        "(File name too long); give a folder"
    )


def test_strength_replaces_its_json_and_markdown_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """strength.json was replaced before strength.md was written: a failed markdown
    (a full disk) left the pair of two different runs."""
    import os

    from benchmarks.strength import _write_matrix

    (tmp_path / "strength.json").write_text("an earlier run's")
    (tmp_path / "strength.md").write_text("an earlier run's")
    fsync = os.fsync
    synced: list[int] = []

    def full_at_the_second(fd: int) -> None:
        synced.append(fd)
        if len(synced) == 2:
            raise OSError(28, "No space left on device")
        fsync(fd)

    monkeypatch.setattr(os, "fsync", full_at_the_second)
    with pytest.raises(OSError, match="No space left"):
        _write_matrix(tmp_path, [], "python -m benchmarks.strength", 1, 1.0)
    assert (tmp_path / "strength.json").read_text() == "an earlier run's"
    assert (tmp_path / "strength.md").read_text() == "an earlier run's"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["strength.json", "strength.md"]
    monkeypatch.setattr(os, "fsync", fsync)
    written = _write_matrix(tmp_path, [], "python -m benchmarks.strength", 1, 1.0)
    assert sorted(p.name for p in written) == ["strength.json", "strength.md"]
    assert json.loads((tmp_path / "strength.json").read_text())["seed"] == 1


def _matrix_file(path: Path, seed: int, search: str) -> Path:
    """A strength.json of one configuration and one bar, as --out writes them."""
    verdict = {"column": "search>expert", "value": 2.5, "short": False}
    config = {
        "configuration": "standard",
        "search": search,
        "bot": None,
        "pairings": [{"verdicts": [verdict]}],
    }
    path.write_text(json.dumps({"seed": seed, "configurations": [config]}))
    return path


def test_combine_says_when_the_seeds_measured_different_searches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A smoke run's --search counted as a seed of the real search, without a word."""
    from benchmarks.strength import main

    a = _matrix_file(tmp_path / "a.json", 1, "search:samples=64")
    b = _matrix_file(tmp_path / "b.json", 2, "search:samples=2")
    c = _matrix_file(tmp_path / "c.json", 3, "search:samples=64")
    assert main(["--combine", str(a), str(c)]) == 0
    assert "different searches" not in capsys.readouterr().out
    assert main(["--combine", str(a), str(b), str(c)]) == 0
    assert (
        "standard: the seeds measured 2 different searches: search:samples=2, search:samples=64"
        in capsys.readouterr().out
    )


def test_combine_leaves_no_out_folder_when_it_refuses_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--out was made before the files were read: a missing file left an empty folder."""
    from benchmarks.strength import main

    out = tmp_path / "seeds"
    assert main(["--combine", str(tmp_path / "missing.json"), "--out", str(out)]) == 2
    assert "missing.json: cannot read it" in capsys.readouterr().err
    assert not out.exists()
    a = _matrix_file(tmp_path / "a.json", 1, "search:samples=64")
    assert main(["--combine", str(a), "--out", str(out)]) == 0
    assert (out / "seeds.md").is_file()


@pytest.mark.parametrize("workers", ["３", "+2", "0"])
def test_strength_reads_workers_as_the_other_counts(
    workers: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``int`` took '３' and '+2' (the benchmarks' counts read the digits 0-9 alone)."""
    import benchmarks.strength as strength

    monkeypatch.setattr(strength, "run_with_bar", _no_games)
    line = refused(strength.main, ["--workers", workers], capsys)
    assert line.endswith(
        f"argument --workers: {workers!r} is not allowed; allowed: an integer, 1 or more"
    )


# -- benchmarks.training --------------------------------------------------------------


@pytest.mark.parametrize("matches", ["３", "-1"])
def test_training_reads_matches_as_the_other_counts(
    matches: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import train.run
    from benchmarks.training import main

    monkeypatch.setattr(train.run, "main", _no_games)
    line = refused(main, ["--matches", matches], capsys)
    assert line.endswith(
        f"argument --matches: {matches!r} is not allowed; allowed: an integer, 0 or more"
    )


@pytest.mark.parametrize("flags, quiet", [([], False), (["--no-progress"], True)])
def test_training_shows_the_progress_of_its_training_and_evaluations(
    flags: list[str], quiet: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The up to 20 minutes of training ran with --no-progress always: nothing showed."""
    import benchmarks.training as training
    import train.run

    trained: list[list[str]] = []
    shown: list[bool] = []

    def train_main(argv: list[str]) -> Path:
        trained.append(argv)
        return tmp_path / "run"

    def evaluate(
        policy: str, opponent: str, hands: int, matches: int, seed: int, progress: bool = False
    ) -> dict:
        shown.append(progress)
        return {"opponent": opponent, "hand_points_lo95": None}

    monkeypatch.setattr(train.run, "main", train_main)
    monkeypatch.setattr(training, "evaluate", evaluate)
    training.main(["--out", str(tmp_path / "run"), *flags])
    (argv,) = trained
    assert ("--no-progress" in argv) == quiet
    assert shown == [not quiet, not quiet]


# -- benchmarks.rllib -----------------------------------------------------------------


def test_rllib_marks_the_seconds_its_sb3_rate_is_not_over(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SB3's row printed the whole command's seconds beside the fps its PPO logged
    (2,048 steps, 8.4 s, 1,357/s measured): steps / seconds is not its rate."""
    import ray

    import benchmarks.rllib as rllib
    import matador_env.rllib

    monkeypatch.setattr(ray, "init", lambda **kwargs: None)
    monkeypatch.setattr(ray, "shutdown", lambda: None)
    monkeypatch.setattr(matador_env.rllib, "register_env", lambda: None)
    monkeypatch.setattr(
        rllib, "rllib_rate", lambda *a: {"steps": 8000, "seconds": 10.0, "rate": 800.0}
    )
    monkeypatch.setattr(
        rllib, "sb3_rate", lambda *a: {"steps": 2048, "seconds": 8.4, "rate": 1357.0}
    )
    rllib.main([])
    lines = capsys.readouterr().out.splitlines()
    sb3 = next(line for line in lines if line.startswith("SB3"))
    assert sb3.split()[-5:] == ["2048", "8.4*", "1357", "learner", "steps/s"]
    runners = [line for line in lines if line.startswith("RLlib")]
    assert len(runners) == 2 and all("*" not in line for line in runners)
    assert lines[-1].startswith("* the whole python -m train command")


# -- the speed benchmarks -------------------------------------------------------------


@pytest.mark.parametrize(
    "module, argv",
    [
        ("engine", ["--seconds", "0"]),
        ("env", ["--slices", "0"]),
        ("bot", ["--clients", "0"]),
        ("vector", ["--threads", "0"]),
    ],
)
def test_speed_benchmarks_name_themselves_as_they_are_run(
    module: str,
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Their usage and errors named ``engine.py`` (``python -m`` makes argv[0] the
    file), a command that does not run; the others name ``python -m benchmarks.X``."""
    import importlib

    main = importlib.import_module(f"benchmarks.{module}").main
    monkeypatch.setattr(sys, "argv", [f"{module}.py", *argv])
    line = refused(lambda _argv: main(), argv, capsys)
    assert line.startswith(f"python -m benchmarks.{module}: error: argument {argv[0]}: ")


def test_runtime_says_which_way_its_ratio_goes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The ratio columns were headed ``ratio``: numpy over onnxruntime, or the reverse?"""
    from benchmarks.runtime import main

    argv = ["--configuration", "standard", "--decisions", "2", "--sweep-mb", "1"]
    monkeypatch.setattr(sys, "argv", ["runtime.py", *argv])
    main()
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "ratio: numpy's median over onnxruntime's (below 1: numpy is faster)"
    assert lines[2].split()[:4] == ["configuration", "cold", "onnxrt", "cold"]


# -- Ctrl-C ----------------------------------------------------------------------------


def test_an_interrupted_benchmark_ends_in_one_line_with_status_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The speed benchmarks printed a KeyboardInterrupt traceback."""
    import types

    from matador_env.streams import run_main

    # As `python -m benchmarks.engine` runs it: its module is __main__.
    started = types.ModuleType("__main__")
    started.__spec__ = importlib.machinery.ModuleSpec("benchmarks.engine", None)
    monkeypatch.setitem(sys.modules, "__main__", started)

    def interrupted() -> None:
        print("a figure measured before", flush=True)
        raise KeyboardInterrupt

    with pytest.raises(SystemExit) as exited:
        run_main(interrupted)
    assert exited.value.code == 130
    out, err = capsys.readouterr()
    assert out == "a figure measured before\n"
    assert err.strip() == "python -m benchmarks.engine: interrupted"


@pytest.mark.parametrize("name", ["engine", "env", "bot", "vector", "runtime", "rllib", "training"])
def test_each_speed_benchmark_runs_as_a_command_that_ends_so(name: str) -> None:
    source = (ROOT / "benchmarks" / f"{name}.py").read_text()
    assert source.endswith('if __name__ == "__main__":\n    run_main(main)\n')
