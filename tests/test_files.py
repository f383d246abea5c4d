"""matador_env.files: a file written whole appears whole or not at all, and a set of
files (an arena run's, a strength matrix's) switches as a whole; output paths that
cannot be written are named before any work."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from matador_env.files import (
    atomic_write,
    atomic_write_all,
    atomic_write_json,
    file_arg,
    file_problem,
    folder_arg,
    folder_problem,
    make_folder,
)


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


def _write_one(path: Path, write: Callable[[Path], object]) -> Path:
    (written,) = atomic_write_all(path.parent, {path.name: write})
    return written


@pytest.mark.parametrize("write_file", [atomic_write, _write_one], ids=["one", "set"])
def test_a_write_goes_through_a_synced_hidden_temporary_beside_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_file: Callable[..., Path]
) -> None:
    """The temporary is ``.<name>.<random>.tmp`` in the file's folder (the same file
    system, so the rename is atomic; the name a resumed run clears), and its data is
    on disk before the rename. (os.fsync is wrapped, calling the real one: nothing else
    shows what reached the disk.)"""
    target = tmp_path / "a.txt"
    temporaries: list[Path] = []
    synced: list[bytes] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.pread(fd, 100, 0))
        assert not target.exists()  # synced before it is renamed into place
        real_fsync(fd)

    def write(tmp: Path) -> None:
        temporaries.append(tmp)
        tmp.write_text("whole")

    monkeypatch.setattr(os, "fsync", fsync)
    assert write_file(target, write) == target
    (tmp,) = temporaries
    assert tmp.parent == tmp_path and re.fullmatch(r"\.a\.txt\.\w+\.tmp", tmp.name), tmp
    assert synced == [b"whole"]
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_a_reader_of_the_old_file_never_sees_it_change(tmp_path: Path) -> None:
    """The new file is renamed into place, not written over the old one."""
    target = tmp_path / "a.json"
    target.write_text("before")
    with target.open() as old:
        atomic_write_json(target, {"b": 1, "a": [2]})
        assert old.read() == "before"
    assert target.read_text() == '{\n  "a": [\n    2\n  ],\n  "b": 1\n}\n'  # keys sorted


def test_a_missing_folder_of_the_file_is_made(tmp_path: Path) -> None:
    target = tmp_path / "new" / "deeper" / "a.txt"
    atomic_write(target, lambda tmp: tmp.write_text("x"))
    assert target.read_text() == "x"


@pytest.mark.parametrize(
    ("problem", "path", "says"),
    [
        (folder_problem, "", "an empty path is not a folder"),
        (folder_problem, "file", "{file} exists and is not a folder"),
        (folder_problem, "file/run", "{file}/run lies in {file}, which exists and is not a folder"),
        (folder_problem, "folder", None),
        (folder_problem, "folder/new/run", None),
        (file_problem, "folder", "{folder} is a folder; give a file"),
        (file_problem, "file", None),  # an existing file is written over
        (file_problem, "file/out.json", "{file} exists and is not a folder"),
        (make_folder, "folder", None),
        (make_folder, "file/run", "{file}/run lies in {file}, which exists and is not a folder"),
        # procfs takes no new folders (tmp_path / an absolute path is that path); the
        # checks say so before any work, as make_folder does
        (make_folder, "/proc/no/such", "/proc/no/such cannot be made: /proc takes no new"),
        (folder_problem, "/proc/no/such", "/proc/no/such cannot be made: /proc takes no new"),
        (folder_problem, "/proc", "/proc cannot be written into"),
        (file_problem, "/proc/no/out.json", "/proc/no cannot be made: /proc takes no new"),
    ],
)
def test_an_output_path_that_cannot_be_written_is_named(
    tmp_path: Path, problem: Callable[[str], str | None], path: str, says: str | None
) -> None:
    (tmp_path / "file").write_text("not a folder")
    (tmp_path / "folder").mkdir()
    names = {"file": tmp_path / "file", "folder": tmp_path / "folder"}
    given = str(tmp_path / path) if path else ""
    found = problem(given)
    if says is None:
        assert found is None
    else:
        assert found is not None and found.startswith(says.format(**names)), found
    if problem is make_folder and found is None:
        assert Path(given).is_dir()


@pytest.mark.parametrize("arg_type", [folder_arg, file_arg])
def test_an_empty_output_path_is_refused_not_read_as_the_current_folder(
    arg_type: Callable[[str], Path],
) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="an empty path is not a"):
        arg_type("")
    assert arg_type("out") == Path("out")


@pytest.mark.parametrize("problem", [folder_problem, file_problem, make_folder])
@pytest.mark.parametrize("under", [False, True], ids=["the-name", "a-folder-of-it"])
def test_a_name_too_long_for_the_file_system_is_named_not_raised(
    tmp_path: Path, problem: Callable[[Path], str | None], under: bool
) -> None:
    """Looking a 300-character name up raises OSError (ENAMETOOLONG): the command lines
    that check their outputs with these ended with a traceback instead of one line."""
    long = tmp_path / ("x" * 300)
    path = long / "out" if under else long
    found = problem(path)
    assert found is not None and "cannot be used (File name too long)" in found, found
    assert str(long) in found


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc, which takes no folders")
@pytest.mark.parametrize(
    ("module", "argv", "flag"),
    [
        ("train.bots", ["--only", "pagat", "--bots-dir", "/proc/x", "--no-matrix"], "--bots-dir"),
        ("train.bots", ["--only", "standard", "--matrix-out", "/proc/x"], "--matrix-out"),
        ("train.expert_fit", ["--out", "/proc/x/w.json"], "--out /proc/x/w.json"),
        ("evaluate.demo", ["--out", "/proc/x"], "--out"),
        ("benchmarks.training", ["--out", "/proc/x"], "--out"),
    ],
)
def test_commands_refuse_an_output_folder_that_cannot_be_made_before_their_work(
    module: str, argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The up-front checks (folder_problem) find what only the first write would:
    these commands trained, labelled or played for minutes, then ended in a traceback."""
    import importlib

    main = importlib.import_module(module).main
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert f"python -m {module}: error: {flag}: /proc/x" in out.err
    assert "/proc takes no new folder" in out.err
