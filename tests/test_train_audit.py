"""Training's files and seeds as promised: the cloned decisions' chunks on disk are the
run's own (refused by name otherwise), an interrupted collection ends with the
decisions an uninterrupted one has, every allowed seed collects, and the opponent
pool reads only its snapshots and refuses weights it cannot draw from."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import train.pretrain as pretrain
from matador_env.engine import Rules
from matador_env.flags import LARGEST_TRAINING_SEED
from train.files import RunFolderError
from train.selfplay import OpponentPool, snapshot_dirs


def _collect(folder: Path, **changes: Any) -> dict[str, Any]:
    settings: dict[str, Any] = {
        "rules": Rules.preset("pagat"),
        "teacher": "greedy",
        "opponent": "random",
        "decisions": 8,
        "seed": 1,
        "gamma": 0.99,
        "reward_scale": 0.05,
        "workers": 1,
        "progress": False,
    }
    settings.update(changes)
    return pretrain.collect(folder, **settings)


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of four decisions, so that a collection of eight has two."""
    monkeypatch.setattr(pretrain, "CHUNK", 4)


def test_the_largest_training_seed_collects(tmp_path: Path) -> None:
    # Its hands' seeds passed 2**64, which the environment refuses: the warm start of
    # `python -m train --seed 4294967295` crashed.
    data = _collect(tmp_path / "pre", seed=LARGEST_TRAINING_SEED, decisions=4)
    assert len(data["action"]) == 4


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"rules": Rules.preset("standard")}, "collected for another table or encoding"),
        ({"teacher": "expert"}, "collected with teacher 'greedy', and this collection's is"),
        ({"opponent": "greedy"}, "collected with opponent 'random'"),
        ({"seed": 2}, "collected with seed 10007"),
        ({"gamma": 1.0}, "collected with gamma 0.99"),
        ({"reward_scale": 1.0}, "collected with reward_scale 0.05"),
        ({"skip_forced": True}, "collected with skip_forced False"),
    ],
)
def test_chunks_of_another_collection_are_refused(
    tmp_path: Path, small_chunks: None, changes: dict[str, Any], says: str
) -> None:
    """Another run's chunks (here copied in) were trained on as this run's: pagat's
    observations have standard's shape, so even a table of other rules passed."""
    _collect(tmp_path / "theirs")
    shutil.copytree(tmp_path / "theirs", tmp_path / "ours")
    with pytest.raises(RunFolderError, match=says) as info:
        _collect(tmp_path / "ours", **changes)
    assert "chunk_0000_4.npz" in str(info.value) and "delete it" in str(info.value)


def _set_action_illegal(arrays: dict[str, np.ndarray]) -> None:
    arrays["action"][1] = np.flatnonzero(~arrays["mask"][1])[0]


def _set_candidate_illegal(arrays: dict[str, np.ndarray]) -> None:
    row = int(np.flatnonzero((arrays["cand"] >= 0).sum(axis=1) > 1)[0])
    arrays["cand"][row, 1] = np.flatnonzero(~arrays["mask"][row])[0]


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (_set_action_illegal, "decision 1's action .* is not legal under its mask"),
        (_set_candidate_illegal, "candidates .* are not -1 or actions legal under its mask"),
        (lambda a: a.update(obs=a["obs"].astype(np.float64)), "'obs' array is of float64"),
        (lambda a: a.update(mask=a["mask"].astype(np.int8)), "'mask' array is of int8"),
        (lambda a: a["ret"].__setitem__(0, np.nan), "'ret' array holds a number that is not"),
        (lambda a: a["value"].__setitem__(0, np.inf), "'value' array holds a number that is no"),
        (lambda a: a.update({k: v[:3] for k, v in a.items()}), "holds 3 decisions, not the 4"),
        (lambda a: a.update(obs=np.pad(a["obs"], ((0, 0), (0, 2)))), r"shape \(4, 102\)"),
    ],
)
def test_chunk_arrays_that_do_not_fit_are_refused(
    tmp_path: Path,
    small_chunks: None,
    change: Callable[[dict[str, np.ndarray]], None],
    says: str,
) -> None:
    """Also in a chunk collected before chunks kept their record (none here): an illegal
    label or a nan trained on silently, a float64 observation failed inside torch."""
    search = {"teacher": "search:samples=2,width=3", "rules": Rules.preset("standard")}
    first = _collect(tmp_path / "pre", **search)
    chunk = tmp_path / "pre" / "chunk_0000_4.npz"
    with np.load(chunk) as data:
        arrays = {k: data[k] for k in data.files if k not in ("reward", "collection")}
    np.savez(chunk, **arrays)  # as an older chunk: no record
    again = _collect(tmp_path / "pre", **search)
    for key in first:
        np.testing.assert_array_equal(again[key], first[key])
    change(arrays)
    np.savez(chunk, **arrays)
    with pytest.raises(RunFolderError, match=says) as info:
        _collect(tmp_path / "pre", **search)
    assert str(chunk) in str(info.value)


def test_an_interrupted_collection_ends_with_an_uninterrupted_ones_decisions(
    tmp_path: Path, small_chunks: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _collect(tmp_path / "whole", decisions=12)
    collect_chunk = pretrain._collect_chunk
    done: list[str] = []

    def stopped_after_one(job: pretrain.ChunkJob) -> str:
        if done:
            raise KeyboardInterrupt
        done.append(collect_chunk(job))
        return done[-1]

    monkeypatch.setattr(pretrain, "_collect_chunk", stopped_after_one)
    with pytest.raises(KeyboardInterrupt):
        _collect(tmp_path / "cut", decisions=12)
    kept = Path(done[0])
    stamp = kept.stat().st_mtime_ns
    monkeypatch.setattr(pretrain, "_collect_chunk", collect_chunk)
    resumed = _collect(tmp_path / "cut", decisions=12)
    assert kept.stat().st_mtime_ns == stamp  # the chunk collected before is reused
    assert sorted(p.name for p in (tmp_path / "cut").iterdir()) == [
        "chunk_0000_4.npz",
        "chunk_0001_4.npz",
        "chunk_0002_4.npz",
    ]
    assert set(resumed) == set(whole)
    for key in whole:
        np.testing.assert_array_equal(resumed[key], whole[key])


def test_the_pool_reads_only_its_snapshot_folders(tmp_path: Path) -> None:
    # A copy kept beside a snapshot ended every environment's reset with a ValueError.
    for name in ("step_1024", "step_512", "step_512.backup", "step_old", "step_", "stepx_3"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "policy.json").write_text("{}")
    (tmp_path / "step_2048").mkdir()  # an export that never finished: no sidecar
    assert [d.name for d in snapshot_dirs(tmp_path)] == ["step_512", "step_1024"]


@pytest.mark.parametrize(
    "weights", [{"random": 0.0}, {"random": float("nan")}, {"random": float("inf")}]
)
def test_the_pool_refuses_weights_it_cannot_draw_from(weights: dict[str, float]) -> None:
    # They were accepted, and the first episode's draw failed inside random.choices.
    with pytest.raises(ValueError, match="baseline_weights must be finite numbers >= 0"):
        OpponentPool(None, baseline_weights=weights)
    pool = OpponentPool(None, baseline_weights={"random": 0.0, "greedy": 1.0})
    assert pool.resample(random.Random(0)) == "greedy"
