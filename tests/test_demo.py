"""`make demo`'s job runs end to end with tiny budgets, and a second run reuses its
training runs instead of training them again."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def demo(out: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "evaluate.demo", "--quick", "--seed", "5", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_demo_quick_runs_every_part_and_a_second_run_reuses_the_training(
    tmp_path: Path,
) -> None:
    out = demo(tmp_path)
    # 1. a hand, told move by move, with the layout and the result
    assert "== 1/4 One hand of Matador" in out
    assert re.search(r"\n +\d+\. (bot|expert) \(P[01]\) (led|played|drew|passed)", out)
    assert "layout: " in out and "Result: " in out
    # 2. the arena of the shipped bot, with intervals, a legend and the report files
    assert "== 2/4 Arena" in out and "(about " in out
    assert "policy#1 = policy:matador_env/bots/standard" in out
    for opponent in ("expert", "greedy", "random"):
        assert re.search(rf"\npolicy#1 +{opponent} +40 ", out)
    assert (tmp_path / "arena" / "report.png").is_file()
    # 3. a learning curve: one real training run per point, plotted
    assert "== 3/4 Learning" in out
    for decisions in (0, 500):
        run = tmp_path / "clone" / f"decisions_{decisions}"
        summary = json.loads((run / "summary.json").read_text())
        assert summary["final_evaluation"]["expert"]["deals"] == 20
        assert json.loads((run / "args.json").read_text())["bc_decisions"] == decisions
    assert len(re.findall(r"trained in \d+ s", out)) == 2
    png = tmp_path / "clone" / "learning_curve.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # 4. what to try next
    assert "The shipped bot went further: it cloned " in out
    assert "== 4/4 Next" in out and "make train" in out and "python -m matador_env.play" in out

    first_model = (tmp_path / "clone" / "decisions_500" / "best" / "policy.onnx").stat().st_mtime_ns
    again = demo(tmp_path)
    assert "trained in" not in again and again.count("reused") == 2
    assert (tmp_path / "clone" / "decisions_500" / "best" / "policy.onnx").stat().st_mtime_ns == (
        first_model
    )
    # A run made by other code (its recorded fingerprint differs) is not reused: its
    # figures are that code's (a fix to the evaluation changed the curve's).
    from evaluate.demo import CODE_FILE, finished

    run = tmp_path / "clone" / "decisions_500"
    assert finished(run, 500, 20, 5)
    (run / CODE_FILE).write_text(json.dumps({"code": "made by other code"}))
    assert not finished(run, 500, 20, 5)
    (run / CODE_FILE).unlink()
    assert not finished(run, 500, 20, 5)


def test_the_demo_tells_how_the_shipped_bot_was_made_from_its_sidecar() -> None:
    from evaluate.demo import shipped_bot_story
    from matador_env.policy import BOTS_DIR, SIDECAR_FILE, read_policy_info

    provenance = read_policy_info(BOTS_DIR / "standard" / SIDECAR_FILE).provenance or {}
    words = provenance["command"].split()
    decisions = int(words[words.index("--bc-decisions") + 1])
    story = shipped_bot_story(provenance)
    assert f"cloned {decisions:,} decisions of " in story
    assert ("kept that clone" in story) == (provenance["steps"] == 0)
    # other provenances: PPO kept, PPO alone, nothing known about the steps
    assert "then kept PPO step 51,200." in shipped_bot_story(
        {"command": "python -m train --bc-decisions -1", "steps": 51_200}
    )
    assert "trained by PPO alone" in shipped_bot_story({"command": "--bc-decisions 0", "steps": 9})
    assert shipped_bot_story({}) == "The shipped bot went further: it cloned the search agent."
    # a count not in the digits 0-9 is no count ("²" once crashed int())
    for odd in ("²", "١٠٠", "1_000"):
        assert shipped_bot_story({"command": f"--bc-decisions {odd} --bc-teacher expert"}) == (
            "The shipped bot went further: it cloned expert."
        )


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--hands", "0"], "argument --hands: '0' is not allowed; allowed: an integer, 1 or more"),
        (
            ["--eval-hands", "-1"],
            "argument --eval-hands: '-1' is not allowed; allowed: an integer, 1 or more",
        ),
        (
            ["--seed", "-3"],
            "argument --seed: '-3' is not allowed; allowed: an integer from 0 to 4294967295 "
            "(2**32 - 1, the most numpy's seeding takes: it seeds training)",
        ),
        # The demo's training runs refused it, after its hand and its arena.
        (
            ["--seed", str(2**32)],
            "argument --seed: '4294967296' is not allowed; allowed: an integer from 0 to "
            "4294967295 (2**32 - 1, the most numpy's seeding takes: it seeds training)",
        ),
        (["--out", ""], "argument --out: an empty path is not a folder"),
    ],
)
def test_the_demo_refuses_a_bad_flag_before_it_plays(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: the arena or the training it ran later refused it under their own
    # names, after the demo's first hand (and its arena, for --eval-hands).
    from evaluate.demo import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.strip().splitlines()[-1] == (
        f"python -m evaluate.demo: error: {says}"
    )


def test_the_demo_refuses_an_out_under_a_file_before_it_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaluate.demo import main

    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as exited:
        main(["--out", str(tmp_path / "file" / "demo")])
    assert exited.value.code == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.strip().splitlines()[-1].endswith(
        "which exists and is not a folder; give a folder"
    )


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (
            "file arena",
            "{out}/arena exists and is not a folder, where the demo writes its arena's report",
        ),
        (
            "file clone",
            "{out}/clone exists and is not a folder, where the demo writes its training runs",
        ),
        (
            "file clone/decisions_500",
            "{out}/clone/decisions_500 exists and is not a folder, where the demo writes the "
            "training run of 500 decisions",
        ),
        (
            "folder arena/report.json",
            "{out}/arena/report.json is a folder, where the arena writes (or removes) its "
            "report.json",
        ),
        (
            "folder clone/learning_curve.png",
            "{out}/clone/learning_curve.png is a folder, where the demo writes the learning curve",
        ),
    ],
)
def test_the_demo_refuses_what_it_cannot_write_under_out_before_it_plays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: str, says: str
) -> None:
    # Before: only --out itself was checked; the demo played its hand (and its arena)
    # first, then stopped with the arena's usage text or a FileExistsError traceback.
    from evaluate.demo import main

    kind, name = make.split()
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "file":
        path.write_text("")
    else:
        path.mkdir()
    with pytest.raises(SystemExit) as exited:
        main(["--quick", "--out", str(tmp_path)])
    assert exited.value.code == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.strip().splitlines()[-1] == (
        f"python -m evaluate.demo: error: --out: {says.format(out=tmp_path)}; give another "
        "--out, or move it away"
    )
