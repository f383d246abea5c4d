"""Terminal play (``python -m matador_env.play``): whole hands and matches driven
through stdin, bad input answered with hints, clean exits, clear option errors."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

from matador_env.engine import HandState, Move, Rules
from matador_env.play import describe_move, main, narrate

ROOT = Path(__file__).resolve().parent.parent


def play(args: list[str], lines: list[str]) -> tuple[int, str, str]:
    """Run the game in-process on these input lines; (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(args, stdin=io.StringIO("".join(f"{x}\n" for x in lines)), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def run(args: list[str], stdin: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "matador_env.play", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


def first_turn(out: str) -> str:
    return out.split("Your move [", 1)[0]


def test_whole_hand_against_the_trained_bot_by_subprocess() -> None:
    proc = run(["--seed", "3"], "1\n" * 500)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    out = proc.stdout
    assert "bots: trained" in out
    assert "hand 1 over" in out and "Result: " in out
    assert "Hands left:" in out
    # the hand ended, so the game ended: no question after the result
    assert "Your move" not in out.split("hand 1 over", 1)[1]
    assert "Input ended" not in out


def test_the_table_shows_layout_ends_hand_others_and_numbered_moves() -> None:
    code, out, _ = play(["--level", "greedy", "--seed", "1"], ["1"] * 400)
    assert code == 0
    turns = out.split("Your move [")
    assert len(turns) > 3
    second = turns[1].split("=====", 2)[2]  # the table of the person's second turn
    assert "Since your last turn:" in second and re.search(r"P1 (played|drew|passed|led)", second)
    assert re.search(r"end 0 shows +\S+ : \[", second)
    assert "Others: P1 " in second and "boneyard: " in second
    assert re.search(r"Your hand \(\d+ tiles?, count \d+\): ", second)
    assert re.search(r"\n +1\) \S+ +\S", second)


def test_same_seed_same_game_other_seed_other_deal() -> None:
    a = play(["--level", "random", "--seed", "8"], ["1"] * 400)
    b = play(["--level", "random", "--seed", "8"], ["1"] * 400)
    c = play(["--level", "random", "--seed", "9"], ["1"] * 400)
    assert a == b
    assert first_turn(a[1]).split("\n", 1)[1] != first_turn(c[1]).split("\n", 1)[1]


@pytest.mark.parametrize(
    ("bad", "hint"),
    [
        ("0", "There is no move 0"),
        ("99", "There is no move 99"),
        ("xyz", "Not understood: not a move: 'xyz'"),
        ("", "Nothing typed"),
        ("pass", "passing is allowed only when no placement or draw is possible"),
        ("help", "How to play"),
        ("?", "What to type at the prompt"),
        ("t", "Your hand ("),
        ("2-5@1>3", "the outward half 3 is not a half of 2-5"),
    ],
)
def test_bad_input_gets_a_hint_and_the_game_goes_on(bad: str, hint: str) -> None:
    code, out, err = play(["--level", "greedy", "--seed", "2"], [bad] + ["1"] * 400)
    assert code == 0 and err == ""
    after = out.split("Your move [", 2)
    assert len(after) == 3, "the same question must be asked again"
    assert hint in after[1]
    assert "hand 1 over" in out and "Result: " in out


def held_tiles(out: str) -> list[str]:
    line = next(x for x in out.splitlines() if x.startswith("Your hand ("))
    return line.split("): ", 1)[1].split()


def listed_moves(out: str) -> list[Move]:
    return [Move.parse(m) for m in re.findall(r"\n +\d+\) (\S+) ", out)]


def test_an_illegal_move_says_why_with_the_engine_message() -> None:
    args = ["--level", "greedy", "--seed", "2"]
    _, out, _ = play(args, ["q"])
    tile = held_tiles(out)[0]
    bad = f"{tile}@9>{tile[-1]}"  # a tile the person holds, on an end that does not exist
    code, out, _ = play(args, [bad] + ["1"] * 400)
    assert code == 0
    assert f"Not allowed: illegal move '{bad}' by seat 0: there is no open end 9" in out
    assert out.count("Your move [") > 2 and "hand 1 over" in out


def test_a_bare_tile_plays_when_it_goes_one_way() -> None:
    args = ["--level", "greedy", "--seed", "2"]
    _, out, _ = play(args, ["q"])
    moves = listed_moves(out)
    once = [t for t in held_tiles(out) if sum(str(m.tile) == t for m in moves) == 1]
    many = [t for t in held_tiles(out) if sum(str(m.tile) == t for m in moves) > 1]
    assert once and many, "the seed should give tiles that go one way and several ways"
    _, out, _ = play(args, [once[0], "q"])
    assert re.search(rf"You (played|led) {once[0]}", out)
    _, out, _ = play(args, [many[0], "q"])
    assert f"{many[0]} can go several ways: " in out and "You played" not in out


def test_quit_and_end_of_input_leave_cleanly() -> None:
    code, out, _ = play(["--level", "greedy", "--seed", "5"], ["1", "q"])
    assert code == 0 and out.rstrip().endswith("You left the game. Bye.")
    assert out.count("Your move [") == 2
    code, out, _ = play(["--level", "greedy", "--seed", "5"], ["1"])
    assert code == 0 and out.rstrip().endswith("Input ended; leaving the game. Bye.")
    proc = run(["--level", "greedy", "--seed", "5"], "1\n1\n")
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr and proc.stderr == ""
    assert "Input ended; leaving the game. Bye." in proc.stdout


def test_a_match_plays_hands_to_a_small_target() -> None:
    code, out, _ = play(
        ["--level", "random", "--match", "--target", "30", "--seed", "3"], ["1"] * 3000
    )
    assert code == 0
    assert "match hand 1 over" in out and "match hand 2 over" in out
    assert re.search(r"Score: You \(P0\) \d+, P1 \d+ \(first to 30 wins\)", out)
    assert "Press Enter for the next hand" in out
    assert "Match over: " in out
    totals = re.findall(r"Score: You \(P0\) (\d+), P1 (\d+)", out)[-1]
    assert max(int(t) for t in totals) >= 30


def test_quit_between_hands_of_a_match() -> None:
    code, out, _ = play(["--level", "greedy", "--match", "--seed", "3"], ["1"] * 300 + ["q"])
    lines = ["1"] * out.split("Press Enter")[0].count("Your move [") + ["q"]
    code, out, _ = play(["--level", "greedy", "--match", "--seed", "3"], lines)
    assert code == 0 and out.rstrip().endswith("You left the game. Bye.")
    assert "match hand 2" not in out


@pytest.mark.parametrize(
    "args",
    [
        ["--preset", "leiden", "--level", "greedy"],
        ["--preset", "polish", "--players", "3", "--level", "greedy", "--seat", "1"],
        ["--preset", "kardinal", "--players", "3", "--level", "random", "--seat", "2"],
        ["--players", "4", "--teams", "--level", "greedy", "--match", "--target", "20"],
    ],
)
def test_other_presets_and_tables_play_to_the_end(args: list[str]) -> None:
    code, out, err = play([*args, "--seed", "5"], ["1"] * 3000)
    assert code == 0, err
    assert "Result: " in out and "Input ended" not in out
    if "--match" in args:
        assert "Match over: " in out and "team P0+P2 (your team)" in out


def test_a_level_the_rules_lack_exits_2_naming_what_works() -> None:
    proc = run(["--preset", "leiden", "--level", "trained"], "")
    assert proc.returncode == 2
    assert "level 'trained' is not available for leiden" in proc.stderr
    assert "Levels that play these rules: random, greedy" in proc.stderr
    assert "Traceback" not in proc.stderr
    code, _, err = play(["--level", "casual", "--target", "50"], [])
    assert code == 2 and "not available for standard, 2 players, target 50" in err


def test_bad_options_exit_2() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--preset", "nonsense"], stdin=io.StringIO(), stdout=io.StringIO())
    assert exc.value.code == 2
    code, _, err = play(["--players", "2", "--teams", "--level", "greedy"], [])
    assert code == 2 and "impossible rules" in err and "teams" in err
    code, _, err = play(["--seat", "2", "--level", "greedy"], [])
    assert code == 2 and "--seat must be from 0 to 1" in err


def test_moves_and_events_in_words() -> None:
    rules = Rules.preset("standard")
    state = HandState.deal(rules, 1)
    lead = state.legal_moves()[0]
    assert describe_move(lead, (), rules).startswith("lead ")
    state = state.apply(lead)
    move = next(m for m in state.legal_moves() if m.mode == "inline")
    text = describe_move(move, state.ends, rules)
    assert text.startswith(f"{move.tile} on end {move.end} (showing ")
    assert text.endswith(f"{move.shows} outward") or text.endswith(", a matador")
    assert narrate("P1", move, state.ends, rules).startswith(f"P1 played {move.tile} on end")
    assert narrate("P2", Move.parse("draw"), (), rules) == "P2 drew"
    assert narrate("P2", Move.parse("pass"), (), rules) == "P2 passed"
