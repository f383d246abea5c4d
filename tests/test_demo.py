"""`make demo`'s job runs end to end (with tiny budgets)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_demo_quick_runs_every_part(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "evaluate.demo", "--quick", "--seed", "5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "== One hand of Matador" in out and "Result:" in out
    assert "== Self-play training" in out and "# Training run demo__standard__5__" in out
    assert "The freshly trained policy against the baselines" in out
    assert "policy:matador_env/bots/standard" in out
    for opponent in ("random", "greedy", "expert"):
        assert f" {opponent} " in out
