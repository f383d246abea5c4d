"""python -m matador_env.replay: hand records and arena games replayed move by move,
their positions as PNG pictures, and clear errors for files that cannot be replayed."""

from __future__ import annotations

import io
import json
import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from matador_env.engine import HandState, Rules, hand_record, parse_hand_record, render_table
from matador_env.picture import FRAME_SHAPE, draw_frame, write_png
from matador_env.play import draw_layout, narrate
from matador_env.replay import main, read_records

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = sorted((ROOT / "tests" / "golden").glob("hand_*.txt"))


def replay(*argv: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def read_png(path: Path) -> np.ndarray:
    """The pixels of an 8-bit RGB PNG without interlacing or row filters, as
    :func:`write_png` writes it."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, {}
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + body)
        chunks[kind] = body
        pos += 12 + length
    width, height, depth, colour, *_ = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert (depth, colour) == (8, 2) and b"IEND" in chunks
    rows = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), np.uint8).reshape(height, -1)
    assert not rows[:, 0].any()  # filter type 0 on every row
    return rows[:, 1:].reshape(height, width, 3)


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_every_golden_hand_replays_to_its_result(path: Path) -> None:
    _, records = read_records(path)
    assert len(records) == 3  # three seeds a file
    code, out, err = replay(str(path))
    assert code == 0, err
    for i, record in enumerate(records, 1):
        assert f"hand {i} of 3: seed {record.seed}, P{record.leader} leads" in out
        final = record.replay()
        assert final.outcome is not None
        hand = out.split(f"hand {i} of 3")[1].split(f"hand {i + 1} of 3")[0]
        assert f"\n{len(record.moves)}. " in hand and f"\n{len(record.moves) + 1}. " not in hand
        assert hand.rstrip().endswith(f"result: {final.outcome}")


def test_a_game_of_the_arenas_records_replays_hand_by_hand(tmp_path: Path) -> None:
    from evaluate.__main__ import main as arena

    argv = ["--agents", "random", "--vs", "greedy", "--hands", "4", "--matches", "2"]
    argv += ["--seed", "3", "--workers", "1", "--no-plot", "--no-progress", "--records"]
    assert arena([*argv, "--out", str(tmp_path)]) == 0
    path = tmp_path / "records.jsonl"
    games = [json.loads(line) for line in path.read_text().splitlines()]
    match = next(k for k, g in enumerate(games) if g["kind"] == "match")
    code, out, err = replay(str(path), "--game", str(match))
    assert code == 0, err
    hands = len(games[match]["records"])
    assert f"game {match} of {len(games)}: match 0" in out
    assert "P0 greedy" in out or "P0 random" in out
    assert out.count("result: ") >= hands and f"hand {hands} of {hands}" in out
    code, _, err = replay(str(path), "--game", str(len(games)))
    assert code == 2 and f"--game {len(games)} is not a game of it (0 to {len(games) - 1})" in err


def test_png_frames_hold_every_position_with_every_hand_open(tmp_path: Path) -> None:
    state = HandState.deal(Rules.preset("leiden", players=3), 8)
    for _ in range(9):
        state = state.apply(state.legal_moves()[-1])
    record = tmp_path / "hand.txt"
    record.write_text(hand_record(state))
    code, out, err = replay(str(record), "--png", str(tmp_path / "frames"))
    assert code == 0, err
    assert "the record stops after 9 moves, before the end" in out
    frames = sorted((tmp_path / "frames").glob("*.png"))
    assert [f.name for f in frames] == [f"hand1_{k:03d}.png" for k in range(10)]
    assert np.array_equal(read_png(frames[-1]), draw_frame(state, reveal=True))
    first = parse_hand_record(record.read_text()).start()
    assert np.array_equal(read_png(frames[0]), draw_frame(first, reveal=True))


def test_step_waits_for_enter_and_q_leaves(tmp_path: Path) -> None:
    code, out, _ = replay(str(GOLDEN[0]), "--step", stdin="\n\nq\n")
    assert code == 0
    assert out.count("[Enter: next move, q: quit]") == 3 and "\n4. " not in out


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("nothing here\n", "no hand record in it"),
        ("# Matador hand record v1\nseed: 1\n", "hand 1: hand record: missing rules"),
    ],
)
def test_files_that_are_not_records_are_refused(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(text)
    code, out, err = replay(str(path))
    assert (code, out) == (2, "") and says in err


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (("hand 0: 2-2", "hand 0: 0-0"), "hand 1: hand of seat 1: 0-0 is dealt twice"),
        (
            ("hand 0: 2-2", "hand 0: 9-9"),
            "hand 1: hand of seat 0: 9-9 is not a tile of the double-6 set",
        ),
        (("leader: 0", "leader: 7"), "hand 1: hand record: leader 7 is not a seat (0 to 1)"),
        (("leader: 0", "leader: 2"), "hand 1: hand record: leader 2 is not a seat (0 to 1)"),
        (("seed: 1", "seed: x"), "hand 1: hand record: seed and leader must be integers"),
        (("hand 0: 2-2", "hand 0: 2-"), "hand 1: "),
    ],
)
def test_a_deal_that_cannot_be_is_refused_naming_its_hand(
    tmp_path: Path, change: tuple[str, str], says: str
) -> None:
    text = (ROOT / "tests" / "golden" / "hand_standard.txt").read_text()
    assert change[0] in text
    path = tmp_path / "bad.txt"
    path.write_text(text.replace(*change, 1))
    code, out, err = replay(str(path))
    assert (code, out) == (2, "") and says in err and "Traceback" not in err


def test_an_illegal_move_names_its_hand_and_move(tmp_path: Path) -> None:
    text = GOLDEN[0].read_text()
    record = text[text.index("# Matador hand record v1") :]
    moves = next(line for line in record.splitlines() if line.startswith("moves:"))
    bad = moves.replace("moves: ", "moves: pass ", 1)  # nobody may pass before the lead
    path = tmp_path / "bad.txt"
    path.write_text(record.replace(moves, bad, 1))
    code, _, err = replay(str(path))
    assert code == 2 and "hand 1, move 1: illegal move 'pass'" in err
    code, _, err = replay(str(tmp_path / "missing.txt"))
    assert code == 2 and "missing.txt: cannot read it" in err
    path.write_text('{"records": 3}\n')
    jsonl = path.rename(tmp_path / "bad.jsonl")
    code, _, err = replay(str(jsonl))
    assert code == 2 and "line 1 is not a game of `python -m evaluate --records`" in err


def test_write_png_round_trips_and_refuses_what_is_not_a_picture(tmp_path: Path) -> None:
    picture = np.random.default_rng(1).integers(0, 256, (7, 5, 3), dtype=np.uint8)
    path = write_png(tmp_path / "sub" / "p.png", picture)
    assert np.array_equal(read_png(path), picture)
    assert [p.name for p in path.parent.iterdir()] == ["p.png"]  # no temporary left
    with pytest.raises(ValueError, match="height x width x 3 of uint8"):
        write_png(tmp_path / "q.png", np.zeros((4, 4), np.uint8))
    assert read_png(write_png(tmp_path / "f.png", np.zeros(FRAME_SHAPE, np.uint8))).shape == (
        FRAME_SHAPE
    )


@pytest.mark.parametrize("where", ["file/sub", "file", "missing/../file/x"])
def test_a_png_folder_that_cannot_be_made_is_refused_before_any_output(
    tmp_path: Path, where: str
) -> None:
    (tmp_path / "file").write_text("")
    (tmp_path / "missing").mkdir()
    png = tmp_path / where
    code, out, err = replay(str(GOLDEN[0]), "--png", str(png))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("python -m matador_env.replay: error: --png: ") and "folder" in err


def test_an_empty_png_folder_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        replay(str(GOLDEN[0]), "--png", "")
    assert exc.value.code == 2
    assert "argument --png: an empty path is not a folder" in capsys.readouterr().err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc, which takes no folders")
def test_a_png_folder_that_cannot_be_created_is_one_line() -> None:
    code, out, err = replay(str(GOLDEN[0]), "--png", "/proc/nope/x")
    assert (code, out) == (2, "")
    assert err == (
        "python -m matador_env.replay: error: --png: /proc/nope/x cannot be made: "
        "/proc takes no new folder (No such file or directory)\n"
    )


def test_a_picture_that_cannot_be_written_stops_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import matador_env.replay as replay_module

    def full(path: Path, picture: object) -> Path:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(replay_module, "write_png", full)
    code, out, err = replay(str(GOLDEN[0]), "--png", str(tmp_path / "frames"))
    assert code == 1 and out.startswith(str(GOLDEN[0]))
    frame = tmp_path / "frames" / "hand1_000.png"
    assert err == (
        f"python -m matador_env.replay: error: --png: cannot write {frame} "
        "(No space left on device)\n"
    )


def test_jsonl_games_empty_files_line_numbers_and_a_byte_order_mark(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    code, _, err = replay(str(empty))
    assert code == 2 and "holds no games" in err and "(0 to -1)" not in err
    # Blank lines are no game, but a message names the line of the file.
    bad = tmp_path / "bad.jsonl"
    bad.write_text('\n\n{"records": 3}\n\n{"records": 4}\n')
    code, _, err = replay(str(bad), "--game", "1")
    assert code == 2 and ": line 5 is not a game of `python -m evaluate --records`" in err
    # A UTF-8 file opened by a byte order mark (as some editors save it) reads as any other.
    marked = tmp_path / "marked.txt"
    marked.write_bytes(b"\xef\xbb\xbf" + GOLDEN[0].read_bytes())
    code, out, err = replay(str(marked))
    assert code == 0, err
    assert out.count("result: ") == 3


class _Interrupted(io.StringIO):
    def readline(self, size: int = -1) -> str:  # type: ignore[override]
        raise KeyboardInterrupt


def test_ctrl_c_at_the_step_question_exits_130_quietly() -> None:
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main([str(GOLDEN[0]), "--step"], stdin=_Interrupted(), stdout=out, stderr=err)
    except KeyboardInterrupt:  # not caught: it would end the test session, not fail one test
        pytest.fail("Ctrl-C escaped main")
    assert (code, err.getvalue()) == (130, "")
    assert out.getvalue().endswith("[Enter: next move, q: quit] \n")


def test_a_png_folder_holds_one_replays_frames_and_keeps_other_files(tmp_path: Path) -> None:
    # Before: a one-hand replay into the folder of a three-hand one left hands 2 and 3.
    frames = tmp_path / "frames"
    code, _, err = replay(str(GOLDEN[0]), "--png", str(frames))
    assert code == 0, err
    assert {f.name.split("_")[0] for f in frames.glob("*.png")} == {"hand1", "hand2", "hand3"}
    others = ["notes.txt", "hand1.png", "hand2_x.png", "hand0_000.png", "xhand2_001.png"]
    for name in others:
        (frames / name).write_text("mine")
    (frames / "hand9_000.png").mkdir()  # not a frame it wrote: a folder
    state = HandState.deal(Rules.preset("standard"), 4)
    state = state.apply(state.legal_moves()[0])
    record = tmp_path / "one.txt"
    record.write_text(hand_record(state))
    code, _, err = replay(str(record), "--png", str(frames))
    assert code == 0, err
    left = sorted(f.name for f in frames.iterdir())
    assert left == sorted([*others, "hand9_000.png", "hand1_000.png", "hand1_001.png"])
    assert all((frames / name).read_text() == "mine" for name in others)


def test_game_is_refused_for_a_file_of_hand_records(tmp_path: Path) -> None:
    # Before: --game 7 of a text file was ignored, every hand replayed, exit code 0.
    for game in ("7", "0"):
        code, out, err = replay(str(GOLDEN[0]), "--game", game, "--png", str(tmp_path / "f"))
        assert (code, out) == (2, "")
        assert err == (
            f"python -m matador_env.replay: error: {GOLDEN[0]}: --game {game} picks a game of "
            "a .jsonl of `python -m evaluate --records`, and this is a file of hand records, "
            "every one of which is replayed; drop --game\n"
        )
    assert not (tmp_path / "f").exists()


def test_each_move_is_told_by_its_seat_with_the_ends_before_it_then_the_table() -> None:
    # Standard, seed 1: P0 leads 3-3; P1 lays 3-4 on end 1 (a 3: 3 + 4 = 7), 4 outward;
    # P0 lays 1-4 on end 0, still showing 3, its 4 touching: 1-4|3-3|3-4.
    path = ROOT / "tests" / "golden" / "hand_standard.txt"
    code, out, err = replay(str(path))
    assert code == 0, err
    first = out.split("hand 2 of 3")[0]
    assert "\n1. P0 led 3-3\n" in first
    assert "\n2. P1 played 3-4 on end 1 (showing 3), 4 outward, a matador\n" in first
    assert (
        "\n3. P0 played 1-4 on end 0 (showing 3), 1 outward\nlayout: 3 tiles, 2 open ends\n"
        "  end 0 shows 1  [1|4][3|3][3|4]  end 1 shows 4\n"
    ) in first
    # Every move of every hand: the seat that made it, the ends as they were before it,
    # then the table after it with the layout drawn as terminal play draws it.
    for record in read_records(path)[1]:
        state = record.start()
        for k, move in enumerate(record.moves, 1):
            told = narrate(f"P{state.to_move}", move, state.ends, record.rules)
            state = state.apply(move)
            assert f"\n{k}. {told}\n{render_table(state, layout=draw_layout)}\n" in out


def test_step_asks_after_each_move_but_a_hands_last_and_the_end_of_input_leaves() -> None:
    _, records = read_records(GOLDEN[0])
    code, out, _ = replay(str(GOLDEN[0]), "--step", stdin="\n" * 5000)
    assert code == 0
    asked = sum(len(r.moves) for r in records) - len(records)  # not after a hand's end
    assert out.count("[Enter: next move, q: quit]") == asked
    assert out.rstrip().endswith(f"result: {records[-1].replay().outcome}")
    for stdin in ("\n", "\nquit\n"):  # Enter once, then the end of input or quit
        code, out, _ = replay(str(GOLDEN[0]), "--step", stdin=stdin)
        assert code == 0 and out.count("[Enter: next move, q: quit]") == 2
        assert "\n2. " in out and "\n3. " not in out


def test_a_game_whose_records_are_not_text_names_its_line(tmp_path: Path) -> None:
    game = {"kind": "deal", "deal": 0, "pattern": "AB", "seats": ["x", "y"], "a": "x"}
    game |= {"b": "y", "diff": 1, "records": [7]}
    path = tmp_path / "games.jsonl"
    path.write_text("\n" + json.dumps(game) + "\n")
    code, out, err = replay(str(path))
    assert (code, out) == (2, "")
    assert err == (
        f"python -m matador_env.replay: error: {path}: line 2 has records that are not text\n"
    )


def test_a_table_drawn_for_nobody_hides_every_hand_and_the_boneyard() -> None:
    # render_table draws the replay's tables with every hand open; reveal=False is the
    # table as a player may see it: hand sizes only.
    state = HandState.deal(Rules.preset("standard", players=3), 5)
    for _ in range(4):
        state = state.apply(state.legal_moves()[0])
    hidden = render_table(state, reveal=False)
    for seat, hand in enumerate(state.hands):
        assert f" P{seat}: {len(hand)} tiles\n" in hidden
    unseen = {str(t) for hand in state.hands for t in hand} | {str(t) for t in state.boneyard}
    assert not unseen & set(re.findall(r"\d+-\d+", hidden)), hidden
    assert f"   boneyard: {state.boneyard_size}" in hidden
    shown = render_table(state)
    assert all(
        f" P{seat}: {' '.join(map(str, hand))}" in shown for seat, hand in enumerate(state.hands)
    )


def test_a_hand_that_ends_other_than_its_result_line_says_is_told_and_exits_3(
    tmp_path: Path,
) -> None:
    # The golden file's second hand with its "# result:" line changed: the replay goes on
    # to the third hand, and stderr names the hand, what the record says and what the
    # moves give, so a record from an engine that plays a rule otherwise is not passed.
    text = GOLDEN[0].read_text()
    _, records = read_records(GOLDEN[0])
    true = str(records[1].replay().outcome)
    path = tmp_path / "edited.txt"
    path.write_text(text.replace(f"# result: {true}", "# result: nobody wins", 1))
    assert text.count(f"# result: {true}") == 1  # the line changed is hand 2's alone
    code, out, err = replay(str(path))
    assert code == 3
    assert "hand 3 of 3" in out and out.rstrip().endswith(f"{records[2].replay().outcome}")
    assert err == (
        f"python -m matador_env.replay: warning: {path}: hand 2: its record's result line "
        f"says 'nobody wins', and its moves replayed here end with {true!r}\n"
    )


def test_a_result_line_after_moves_cut_short_is_told_and_a_record_without_one_is_not(
    tmp_path: Path,
) -> None:
    final = HandState.deal(Rules.preset("standard"), 4)
    while final.outcome is None:
        final = final.apply(final.legal_moves()[0])
    record = hand_record(final)
    assert record.rstrip().splitlines()[-1] == f"# result: {final.outcome}"
    moves_line = next(line for line in record.splitlines() if line.startswith("moves:"))
    cut = record.replace(moves_line, moves_line.rsplit(" ", 1)[0])  # the last move gone
    path = tmp_path / "cut.txt"
    path.write_text(cut)
    code, out, err = replay(str(path))
    assert code == 3 and "before the end" in out
    assert err.endswith(
        f"says {str(final.outcome)!r}, and its moves replayed here end with no result "
        "(the moves stop before the end)\n"
    )
    # Without the result line there is nothing to check: a record of a hand under way.
    path.write_text("\n".join(line for line in cut.splitlines() if "# result:" not in line))
    assert replay(str(path))[0] == 0
    # A "# result:" line past the record's own comments (after text that is not the
    # record's, such as a table drawn under it) is not the record's.
    path.write_text(cut.replace("# result:", "drawn table\n# result:"))
    code, _, err = replay(str(path))
    assert (code, err) == (0, "")


def test_a_game_of_the_arenas_records_with_an_edited_result_line_exits_3(
    tmp_path: Path,
) -> None:
    final = HandState.deal(Rules.preset("standard"), 8)
    while final.outcome is None:
        final = final.apply(final.legal_moves()[-1])
    record = hand_record(final).replace(f"# result: {final.outcome}", "# result: edited")
    game = {"kind": "deal", "deal": 0, "pattern": "AB", "seats": ["x", "y"], "a": "x"}
    game |= {"b": "y", "diff": 1, "records": [hand_record(final), record]}
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(game) + "\n")
    code, out, err = replay(str(path))
    assert code == 3 and "hand 2 of 2" in out
    assert ": hand 2: its record's result line says 'edited'" in err
    assert ": hand 1:" not in err


def test_read_records_takes_a_str_path_and_checks_its_game() -> None:
    # A str path failed with "'str' object has no attribute 'read_text'", game=True
    # read game 1, and game="1" failed comparing an int with a str.
    assert read_records(str(GOLDEN[0])) == read_records(GOLDEN[0])
    with pytest.raises(TypeError, match="path=3 is not allowed; allowed: a str or a Path"):
        read_records(3)  # type: ignore[arg-type]
    for game in (True, "1", 1.0):
        with pytest.raises(TypeError, match=r"game=.* is not allowed; allowed: None or an"):
            read_records(GOLDEN[0], game)  # type: ignore[arg-type]
