"""Every Python block of docs/rl_libraries.md runs as written (each in its own
interpreter, with the small budgets the page gives them), and its shell commands
name flags that exist."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "rl_libraries.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks(language: str) -> dict[str, str]:
    """The page's blocks in ``language``, by the heading above each."""
    text = PAGE.read_text(encoding="utf-8")
    out: dict[str, str] = {}
    for match in BLOCK.finditer(text):
        if match.group(1) == language:
            heading = re.findall(r"^#+ (.+)$", text[: match.start()], re.MULTILINE)[-1]
            out[heading if heading not in out else f"{heading} ({len(out)})"] = match.group(2)
    return out


PYTHON = blocks("python")


def test_the_page_has_a_block_per_library() -> None:
    assert set(PYTHON) == {
        "stable-baselines3 / sb3-contrib",
        "stable-baselines3 by the Gymnasium id",
        "stable-baselines3 on the compiled vector env",
        "Tianshou",
        "Ray RLlib",
        "CleanRL-style loops",
        "Many games at once: `gymnasium.make_vec`",
        "Recording games",
    }


@pytest.mark.parametrize("heading", sorted(PYTHON))
def test_python_block_runs(heading: str) -> None:
    environment = {**os.environ, "OMP_NUM_THREADS": "1", "RAY_DEDUP_LOGS": "0"}
    code = "import torch\ntorch.set_num_threads(1)\n" + PYTHON[heading]
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{heading}:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"


def test_shell_blocks_use_real_flags() -> None:
    from train.args import parser_for
    from train.rllib import RllibArgs

    known = {a for action in parser_for(RllibArgs)._actions for a in action.option_strings}
    commands = [
        line
        for block in blocks("bash").values()
        for line in block.splitlines()
        if line.startswith("python -m train.rllib")
    ]
    assert len(commands) == 2
    for line in commands:
        for flag in re.findall(r"(--[\w-]+)", line):
            assert flag in known, f"{flag} in {line!r}"
