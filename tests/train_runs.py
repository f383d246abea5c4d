"""``python -m train`` in a subprocess, as the training tests run it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def train_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "train", *args]


def run_train(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        train_cmd(*args), cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False
    )


def new_run(tiny: list[str], steps: int, run: Path) -> list[str]:
    """The arguments of a new run of ``steps`` steps into ``run``: ``tiny``, then a
    checkpoint and a snapshot every 512 steps."""
    return [
        *tiny, "--timesteps", str(steps), "--out", str(run), "--checkpoint-every", "512",
        "--snapshot-every", "512",
    ]  # fmt: skip


def interrupt_at_first_checkpoint(
    args: list[str], run: Path, how: signal.Signals = signal.SIGKILL, group: bool = False
) -> tuple[int, str]:
    """Start ``python -m train *args``, send it ``how`` as soon as ``run`` holds a
    checkpoint; returns its exit status and its stderr. ``group``: send it to the
    trainer's whole process group, as Ctrl-C in a terminal does (its environments'
    processes too)."""
    proc = subprocess.Popen(
        train_cmd(*args),
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=group,
    )
    state = run / "checkpoint" / "state.json"
    deadline = time.time() + 240
    try:
        while not state.is_file() and proc.poll() is None and time.time() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        assert state.is_file()
        if group:
            os.killpg(proc.pid, how)
        else:
            os.kill(proc.pid, how)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, err


def final_weights_differ(run: Path, other: Path) -> list[str]:
    """The tensors of ``final/weights.pt`` in which two runs differ (none: the same
    policy to the bit)."""
    import torch

    a = torch.load(run / "final" / "weights.pt", weights_only=True)
    b = torch.load(other / "final" / "weights.pt", weights_only=True)
    assert set(a) == set(b)
    return [key for key in a if not torch.equal(a[key], b[key])]
