"""matador_env.files: a file written whole appears whole or not at all, and a set of
files (an arena run's, a strength matrix's) switches as a whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from matador_env.files import atomic_write, atomic_write_all


def _fail(tmp: Path) -> None:
    tmp.write_text("half")
    raise OSError(28, "No space left on device")


def test_a_failed_write_leaves_the_file_as_it_was_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("before")
    with pytest.raises(OSError, match="No space left"):
        atomic_write(target, _fail)
    assert target.read_text() == "before"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
    atomic_write(target, lambda tmp: tmp.write_text("after"))
    assert target.read_text() == "after"
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask  # as open() makes it


def test_a_set_of_files_switches_as_a_whole(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt", "old.txt"):
        (tmp_path / name).write_text("earlier")
    with pytest.raises(OSError, match="No space left"):
        atomic_write_all(
            tmp_path, {"a.txt": lambda tmp: tmp.write_text("new"), "b.txt": _fail, "old.txt": None}
        )
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == dict.fromkeys(
        ("a.txt", "b.txt", "old.txt"), "earlier"
    )
    written = atomic_write_all(
        tmp_path,
        {
            "a.txt": lambda tmp: tmp.write_text("new"),
            "b.txt": lambda tmp: tmp.write_text("new"),
            "old.txt": None,
        },
    )
    assert written == [tmp_path / "a.txt", tmp_path / "b.txt"]
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == {"a.txt": "new", "b.txt": "new"}


@pytest.mark.parametrize("taken", ["b.txt", "old.txt"])
def test_a_name_taken_by_a_folder_is_refused_before_anything_changes(
    tmp_path: Path, taken: str
) -> None:
    # Before: a.txt was renamed into place, then b.txt's rename (or old.txt's removal)
    # failed, leaving a.txt of the new set beside b.txt of the old.
    for name in ("a.txt", "b.txt", "old.txt"):
        (tmp_path / name).write_text("earlier")
    (tmp_path / taken).unlink()
    (tmp_path / taken).mkdir()
    with pytest.raises(IsADirectoryError, match=f"a folder where a file of the set.*{taken}"):
        atomic_write_all(
            tmp_path,
            {
                "a.txt": lambda tmp: tmp.write_text("new"),
                "b.txt": lambda tmp: tmp.write_text("new"),
                "old.txt": None,
            },
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt", "old.txt"]
    assert (tmp_path / "a.txt").read_text() == "earlier"
