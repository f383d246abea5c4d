"""Terminal play (``python -m matador_env.play``): whole hands and matches driven
through stdin, bad input answered with hints, clean exits, clear option errors."""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from matador_env.configs import CONFIGURATIONS
from matador_env.engine import PRESETS, HandState, MatchState, Move, Rules, render_layout
from matador_env.play import PROG, describe_move, distinct_choices, draw_layout, main, narrate
from matador_env.policy import BOTS_DIR_VARIABLE
from matador_env.streams import READER_GONE
from tests.test_shipped_bots import export_untrained

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
    assert re.search(r"\n  end 0 shows \S+  \[\d\|\d\]\S*  end 1 shows \S+\n", second)
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


@pytest.mark.parametrize(
    "bad",
    ["\u00b2", "\u0661", "\uff11", "1\u0661", "9" * 5000, "1" * 7],
    ids=[
        "superscript 2",
        "arabic-indic 1",
        "fullwidth 1",
        "1 and arabic-indic 1",
        "5000 digits",
        "7 digits",
    ],
)
def test_a_number_not_in_the_digits_0_to_9_is_a_bad_entry(bad: str) -> None:
    # "²" passed isdigit and int() refused it (a traceback); "١" was read as 1 (a move
    # the person may not have meant); 5000 digits are past what int() reads.
    code, out, err = play(["--level", "greedy", "--seed", "2"], [bad] + ["1"] * 400)
    assert code == 0 and err == ""
    after = out.split("Your move [", 2)
    assert len(after) == 3, "the same question must be asked again"
    assert "Not understood: not a move: " in after[1]
    assert "hand 1 over" in out


def failing_input(text: str) -> io.StringIO:
    """Input lines, then an error from the terminal itself."""
    stdin = io.StringIO(text)
    read = stdin.readline

    def readline(size: int = -1) -> str:
        line = read(size)
        if not line:
            raise OSError("the terminal went away")
        return line

    stdin.readline = readline  # type: ignore[method-assign]
    return stdin


def test_the_record_is_kept_whatever_ends_the_game(tmp_path: Path) -> None:
    from matador_env.replay import read_records

    path = tmp_path / "game.txt"
    args = ["--level", "greedy", "--seed", "3", "--record", str(path)]
    out = io.StringIO()
    with pytest.raises(OSError, match="went away"):
        main(args, stdin=failing_input("1\n1\n"), stdout=out, stderr=io.StringIO())
    assert f"The game's record is in {path}" in out.getvalue()
    (record,) = read_records(path)[1]
    assert record.replay().outcome is None and len(record.moves) >= 2


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
    # A tile outside the set is named in its text form, not as a Python repr.
    _, out, _ = play(args, ["9-9@0>9", "q"])
    assert "Not allowed: illegal move '9-9@0>9' by seat 0: 9-9 is not a tile of the double-6" in out


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
    assert re.search(r"Score after hand 1: You \(P0\) \d+, P1 \d+ \(first to 30 wins", out)
    assert "Press Enter for the next hand" in out
    assert "Match over: " in out
    totals = re.findall(r"Score after hand \d+: You \(P0\) (\d+), P1 (\d+)", out)[-1]
    assert max(int(t) for t in totals) >= 30


def test_quit_between_hands_of_a_match() -> None:
    code, out, _ = play(["--level", "greedy", "--match", "--seed", "3"], ["1"] * 300 + ["q"])
    lines = ["1"] * out.split("Press Enter")[0].count("Your move [") + ["q"]
    code, out, _ = play(["--level", "greedy", "--match", "--seed", "3"], lines)
    assert code == 0 and out.rstrip().endswith("You left the game. Bye.")
    assert "match hand 2" not in out


def test_record_keeps_every_hand_for_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matador_env.replay import read_records

    path = tmp_path / "game.txt"
    args = ["--level", "greedy", "--match", "--seed", "3", "--record", str(path)]
    code, out, _ = play(args, ["1"] * 300 + ["q"])
    first = out.split("Press Enter")[0].count("Your move [")
    # Leave in the second hand after two moves of one's own: two records, the second
    # stopping where it was left.
    code, out, _ = play(args, ["1"] * first + ["", "1", "1", "q"])
    assert code == 0 and f"The game's record is in {path}" in out
    _, records = read_records(path)
    assert len(records) == 2
    done = records[0].replay()
    assert done.outcome is not None and "match hand 1 over" in out
    assert records[1].replay().outcome is None and records[1].moves
    code, out, err = play(["--record", str(tmp_path)], [])
    assert code == 2 and "is a folder; give a file" in err
    # Leaving before any move of the first hand writes nothing; after the bot's lead,
    # the record of that lead.
    rules = Rules.preset("standard")
    seeds = {MatchState.new(rules, seed).hand.to_move: seed for seed in range(20)}
    assert sorted(seeds) == [0, 1]
    for leader, seed in sorted(seeds.items()):
        kept = tmp_path / f"led_by_{leader}.txt"
        argv = ["--level", "greedy", "--seed", str(seed), "--record", str(kept)]
        code, out, _ = play(argv, ["q"])
        assert code == 0 and kept.exists() == ("record is in" in out) == (leader == 1)
        if leader == 1:
            (record,) = read_records(kept)[1]
            assert len(record.moves) == 1 and record.moves[0].kind == "play"
    # A record that fails as it is written does not stop the game.
    import matador_env.play as play_module

    def refuse(path: object, text: str) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    with monkeypatch.context() as m:
        m.setattr(play_module, "atomic_write_text", refuse)
        code, out, _ = play(args, ["1"] * 300 + ["q"])
    # Told once: after the failure the recording stops, so no later hand tries again.
    assert code == 0 and out.count("Could not write the record to") == 1
    assert "recording stops" in out
    assert "match hand 2" in out and "record is in" not in out


@pytest.mark.parametrize("under", ["x.txt", "sub/x.txt"])
def test_a_record_under_a_file_is_refused_before_the_game(tmp_path: Path, under: str) -> None:
    a_file = tmp_path / "q"
    a_file.write_text("")
    record = a_file / under
    code, out, err = play(["--level", "greedy", "--seed", "5", "--record", str(record)], ["1"] * 40)
    assert (code, out) == (2, "")
    assert err == (
        f"{PROG}: error: --record {record} cannot be written: "
        + ("" if under == "x.txt" else f"{record.parent} lies in ")
        + f"{a_file}{'' if under == 'x.txt' else ', which'} exists and is not a folder\n"
    )
    assert a_file.read_text() == ""


def test_an_empty_record_path_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--record", ""], stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    err = capsys.readouterr().err  # argparse's own message
    assert exc.value.code == 2 and "argument --record: an empty path is not a file" in err


def test_a_reader_gone_stops_the_game_quietly_and_keeps_the_record(tmp_path: Path) -> None:
    # `... | python -m matador_env.play ... | head -1`: the output closed during the game.
    record = tmp_path / "game.txt"
    argv = ["--level", "greedy", "--seed", "5", "--record", str(record)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "matador_env.play", *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stdin is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith("Matador: ")  # then it waits for a move
    proc.stdout.close()
    proc.stdin.write("1\n" * 300)
    proc.stdin.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == READER_GONE and err == ""
    from matador_env.replay import read_records

    (hand,) = read_records(record)[1]
    assert hand.moves


def test_the_match_result_reads_right_for_you_a_bot_and_a_team() -> None:
    _, out, _ = play(
        ["--level", "random", "--match", "--target", "30", "--seed", "3"], ["1"] * 3000
    )
    assert re.search(
        r"\nMatch over: (You \(P0\)|P1) won \(\d+ to \d+\)\. You (win|lose) the match", out
    )
    args = ["--players", "4", "--teams", "--level", "greedy", "--match", "--target", "20"]
    _, out, _ = play([*args, "--seed", "5"], ["1"] * 3000)
    assert re.search(r"\nMatch over: team P\d\+P\d( \(your team\))? won \(", out), out[-300:]
    assert " wins (" not in out


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
    # Leiden for three is no configuration: no trained bot is ever shipped for it.
    proc = run(["--preset", "leiden", "--players", "3", "--level", "trained"], "")
    assert proc.returncode == 2
    assert "level 'trained' is not available for leiden, 3 players" in proc.stderr
    assert "trained bots are shipped for: standard" in proc.stderr
    assert "Levels that play these rules: random, greedy" in proc.stderr
    assert f"{PROG} --preset leiden --players 3 --level greedy" in proc.stderr
    assert "Traceback" not in proc.stderr
    code, _, err = play(["--level", "casual", "--match", "--target", "50"], [])
    assert code == 2 and "not available for standard, 2 players, target 50" in err
    standard_4p = ["--config", "standard_4p", "--level", "casual", "--match", "--target", "50"]
    code, _, err = play(standard_4p, [])
    assert code == 2 and "not available for standard, 4 players, target 50" in err
    assert f"{PROG} --config standard_4p --match --target 50 --level greedy" in err


def test_a_target_without_a_match_and_seats_past_four_are_refused_by_their_flags() -> None:
    # A single hand has no target, yet --target 50 had refused the trained bot for it;
    # five players had been refused for a hand_size that play has no flag for.
    code, _, err = play(["--target", "50"], [])
    assert (
        code == 2
        and err == f"{PROG}: error: --target: only with --match, which plays hands to it\n"
    )
    for players in ("5", "1"):
        code, _, err = play(["--players", players, "--level", "greedy"], [])
        assert code == 2
        assert err == f"{PROG}: error: --players {players} is not allowed; allowed: 2 to 4\n"


def test_a_configuration_without_a_shipped_bot_offers_random_and_greedy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(tmp_path))  # an empty folder of bots
    code, _, err = play(["--config", "pagat_teams"], [])
    assert code == 2
    assert "level 'trained' is not available for pagat, 4 players in teams" in err
    assert "no trained bot is shipped for pagat_teams" in err and "shipped for: none" in err
    code, out, err = play(["--config", "pagat_teams", "--level", "greedy", "--seed", "1"], ["q"])
    assert code == 0 and "Matador: pagat, 4 players in teams, bots: greedy" in out, err


def test_bad_options_exit_2() -> None:
    for bad in (["--preset", "nonsense"], ["--config", "leiden_3p"]):
        with pytest.raises(SystemExit) as exc:
            main(bad, stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
        assert exc.value.code == 2
    for extra in (["--preset", "pagat"], ["--players", "4"], ["--teams"]):
        code, _, err = play(["--config", "pagat_teams", *extra], [])
        assert code == 2 and "give it without --preset, --players or --teams" in err
    code, _, err = play(["--players", "2", "--teams", "--level", "greedy"], [])
    assert code == 2 and "impossible rules" in err and "teams" in err
    # --teams alone keeps the preset's two players, as in python -m evaluate and train,
    # and the help says it takes --players 4.
    code, _, err = play(["--teams", "--level", "greedy"], [])
    assert code == 2 and "teams=True only with players=4" in err
    help_text = io.StringIO()
    with pytest.raises(SystemExit), redirect_stdout(help_text):
        main(["--help"], stdin=io.StringIO(), stdout=io.StringIO(), stderr=io.StringIO())
    flat = " ".join(help_text.getvalue().split())
    assert "--teams two partnerships of two; four players only, so give --players 4 too" in flat
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


# -- issue 16: the bot's moves told right, forced moves made for the player, the layout
# drawn once, equivalent moves collapsed, the presets and their levels listed


BOT_PLAY = re.compile(r"P1 played (\d)-(\d) on end \d+ \(showing (\d)\), (\d) outward$", re.M)


@pytest.mark.parametrize("seed", [1, 2, 4, 5, 6])
def test_the_bots_moves_are_told_with_the_ends_as_they_were(seed: int) -> None:
    # The bot often answers on the end the person just played; the end it names must be
    # the one it linked to: a regular tile's touching half and that end sum to 7.
    _, out, _ = play(["--level", "greedy", "--seed", str(seed)], ["1"] * 400)
    told = BOT_PLAY.findall(out)
    assert len(told) >= 3
    for a, b, showing, outward in told:
        touching = int(a) + int(b) - int(outward)
        assert touching + int(showing) == 7, (a, b, showing, outward)


FORCED_ONLY = re.compile(r"Your moves:\n +1\) (draw|pass) [^\n]*\nYour move \[1,")


@pytest.mark.parametrize(("preset", "seed"), [("standard", 5), ("kardinal", 1)])
def test_forced_draws_and_passes_are_made_for_the_player_in_one_line(
    preset: str, seed: int
) -> None:
    code, out, _ = play(["--preset", preset, "--level", "greedy", "--seed", str(seed)], ["1"] * 400)
    assert code == 0 and "Result: " in out
    drew = re.findall(r"^You drew \d+-\d+ \(nothing to play\)\.$", out, re.M)
    assert drew, "the seed should make the person draw"
    assert not FORCED_ONLY.search(out), "a draw or pass with no alternative was asked for"
    # a forced draw is one line: no table is drawn for it and no question asked
    for line in drew:
        before = out.split(line, 1)[0]
        assert not before.rstrip().endswith("]:"), "a keypress preceded the forced draw"
    if preset == "kardinal":
        assert re.search(r"^You pass: nothing to play and nothing you may draw\.$", out, re.M)


TILE = re.compile(r"[\[<]\d+[|/^+]\d+[\]>]")


def random_hand(preset: str, seed: int) -> list[HandState]:
    """Every state of one hand of random legal play."""
    rng = random.Random(seed)
    state = HandState.deal(Rules.preset(preset), seed)
    states = [state]
    while not state.is_over:
        state = state.apply(rng.choice(state.legal_moves()))
        states.append(state)
    return states


@pytest.mark.parametrize("preset", list(PRESETS))
def test_the_layout_draws_each_tile_once_and_names_every_end(preset: str) -> None:
    for seed in range(6):
        for state in random_hand(preset, seed):
            if not state.ends:
                continue
            drawn = draw_layout(state)
            assert len(TILE.findall(drawn)) == len(state.layout), drawn
            for i, end in enumerate(state.ends):
                assert drawn.count(f"end {i} shows {end}") == 1, drawn
    # the engine's own drawing repeats the lead on each arm
    state = random_hand("standard", 0)[3]
    assert len(TILE.findall(render_layout(state))) > len(state.layout)


def test_a_plain_line_of_play_is_one_line_with_touching_halves_side_by_side() -> None:
    state = HandState.deal(Rules.preset("standard"), 1)
    for move in ("2-2", "5-6@0>6", "1-5@1>1"):  # 5-6 and 1-5 link with their 5 to a 2
        state = state.apply(move)
    assert draw_layout(state).splitlines()[1] == "  end 0 shows 6  [6|5][2|2][5|1]  end 1 shows 1"


def choice_signature(state: HandState) -> tuple[object, ...]:
    """What the rest of the hand can depend on, with the order of the ends forgotten."""
    moves = sorted(
        (str(m.kind), str(m.tile), str(m.mode), str(m.shows), str(state.ends[m.end]))
        if m.end is not None
        else (str(m.kind), str(m.tile), str(m.mode), str(m.shows), "")
        for m in state.legal_moves()
    )
    return (sorted(map(str, state.ends)), state.hands, state.boneyard_size, moves)


@pytest.mark.parametrize("preset", ["standard", "leiden", "kardinal", "polish", "pagat"])
def test_equivalent_moves_lead_to_the_same_table_up_to_the_order_of_the_ends(
    preset: str,
) -> None:
    merged = 0
    for seed in range(8):
        for state in random_hand(preset, seed)[:-1]:
            legal = state.legal_moves()
            choices = distinct_choices(legal, state.ends)
            assert sorted(map(str, legal)) == sorted(
                str(m) for c in choices for m in (c.move, *c.alike)
            )
            for choice in choices:
                first = choice_signature(state.apply(choice.move))
                for other in choice.alike:
                    merged += 1
                    assert choice_signature(state.apply(other)) == first, (choice, other)
    assert merged > 0


def test_a_spinner_lead_lists_each_way_of_laying_a_tile_once() -> None:
    # Leiden: the lead double is a spinner with four free sides, alike until one is covered.
    state = HandState.deal(Rules.preset("leiden"), 4)
    state = state.apply("4-4")
    placements = [m for m in state.legal_moves() if m.kind == "play"]
    choices = distinct_choices(state.legal_moves(), state.ends)
    assert placements and len(placements) == 4 * sum(c.move.kind == "play" for c in choices)
    _, out, _ = play(
        ["--preset", "leiden", "--level", "greedy", "--seed", "1", "--seat", "1"], ["q"]
    )
    assert "P0 led " in out and "(the same on ends 1, 2, 3)" in out
    listed = listed_moves(out)
    assert listed and all(m.end in (None, 0) for m in listed)


def test_the_match_score_line_counts_hands_and_what_is_needed() -> None:
    _, out, _ = play(
        ["--level", "random", "--match", "--target", "60", "--seed", "3"], ["1"] * 3000
    )
    lines = re.findall(
        r"^Score (before|after) hand (\d+): You \(P0\) (\d+), P1 (\d+) \((.*)\)$", out, re.M
    )
    assert {when for when, *_ in lines} == {"before", "after"}
    for _when, _hand, mine, _theirs, rest in lines:
        assert rest.startswith("first to 60 wins")
        if int(mine) < 60:
            assert rest.endswith(f"you need {60 - int(mine)}")
    hands = [int(hand) for _, hand, *_ in lines]
    assert hands == sorted(hands) and hands[0] == 1 and max(hands) >= 2
    # each hand's table shows the score it started from; the hand's end shows the new one
    assert out.count("Score after hand 1:") == 1


def listed(out: str) -> tuple[dict[str, str], dict[str, str]]:
    """``--list``'s two tables by their first word: configurations, presets."""
    configs, presets, _ = out.split("\n\n")
    rows = [
        {line.split()[0]: line for line in table.splitlines()[1:]} for table in (configs, presets)
    ]
    return rows[0], rows[1]


def test_list_and_help_name_every_configuration_with_its_bot_levels(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, _ = play(["--list"], [])
    assert code == 0
    configs, presets = listed(out)
    assert list(configs) == list(CONFIGURATIONS) and list(presets) == list(PRESETS)
    for name, config in CONFIGURATIONS.items():
        assert "random, greedy" in configs[name] and config.describe() in configs[name]
    assert "casual, trained" in configs["standard"]
    # The levels follow the bots shipped: here the four-seat ones only.
    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(export_untrained(tmp_path)))
    configs, _ = listed(play(["--list"], [])[1])
    trained = [name for name, row in configs.items() if "casual, trained" in row]
    assert trained == ["standard_4p", "pagat_teams"]
    proc = run(["--help"], "")
    assert proc.returncode == 0
    assert all(name in proc.stdout for name in [*PRESETS, *CONFIGURATIONS])
    assert "docs/rules.md" in proc.stdout


# -- what the table shows, and what it must not --------------------------------------------


def tile_words(text: str) -> set[str]:
    """The tiles named in ``text`` (``2-5``, ``2-5@1>5``), the prompts' ranges left out."""
    return set(re.findall(r"(?<![\d-])\d+-\d+(?![\d-])", re.sub(r"Your move \[[^\]]*\]", "", text)))


HIDDEN_GAMES = [
    "--level greedy --seed 5",
    "--level greedy --seed 0",
    "--preset kardinal --players 3 --level random --seat 1 --seed 8",
]


@pytest.mark.parametrize("args", [g.split() for g in HIDDEN_GAMES], ids=HIDDEN_GAMES)
def test_the_table_never_names_a_bots_tile_or_the_boneyard_before_the_hand_ends(
    tmp_path: Path, args: list[str]
) -> None:
    # The tiles the bots still hold and the boneyard's at the end were never on the
    # table nor in the person's hand: no line of the game may name one until the hand
    # is over (when "Hands left:" shows them all).
    from matador_env.replay import read_records

    record = tmp_path / "hand.txt"
    code, out, err = play([*args, "--record", str(record)], ["1"] * 600)
    assert code == 0, err
    (hand,) = read_records(record)[1]
    final = hand.replay()
    assert final.outcome is not None and "You drew " in out
    seat = int(args[args.index("--seat") + 1]) if "--seat" in args else 0
    held = {str(t) for s, tiles in enumerate(final.hands) if s != seat for t in tiles}
    unseen = held | {str(t) for t in final.boneyard}
    assert unseen
    during, after = out.split("hand 1 over", 1)
    assert not tile_words(during) & unseen
    assert tile_words(after.split("Hands left:", 1)[1]) >= held


def test_the_table_counts_your_hand_the_others_tiles_and_what_may_be_drawn() -> None:
    # Seed 2: P1 leads 5-6; the person holds seven tiles, P1 six, the boneyard 14 of
    # which 12 may be drawn (2 stay: boneyard_reserve).
    deal = MatchState.new(Rules.preset("standard"), 2).hand
    mine = deal.hand(0)
    _, out, _ = play(["--level", "greedy", "--seed", "2"], ["1", "1", "q"])
    tables = out.split("Your moves:")
    assert "| your turn 1 =====" in tables[0] and "| your turn 2 =====" in tables[1]
    assert "\nOthers: P1 6 tiles | boneyard: 14 (12 may be drawn)\n" in tables[0]
    count = sum(t.pips for t in mine)
    assert f"\nYour hand (7 tiles, count {count}): {' '.join(map(str, mine))}\n" in tables[0]


def test_a_move_typed_in_full_plays_that_move_and_the_short_words_work() -> None:
    args = ["--level", "greedy", "--seed", "2"]  # P1 leads 5-6: ends 5 and 6
    _, out, _ = play(args, ["2-5@1>5", "q"])
    assert "\nYou played 2-5 on end 1 (showing 6), 5 outward, a matador.\n" in out
    _, out, _ = play(args, ["d", "p", "table", "quit"])
    assert "Not allowed: illegal move 'draw' by seat 0: drawing is not allowed now" in out
    assert "Not allowed: illegal move 'pass' by seat 0: passing is allowed only when" in out
    assert out.count("| your turn 1 =====") == 2  # drawn again for "table"
    assert out.rstrip().endswith("You left the game. Bye.")
    _, out, _ = play(args, ["exit"])
    assert out.rstrip().endswith("You left the game. Bye.")


def test_a_bare_tile_not_held_or_that_fits_nowhere_is_named_as_such() -> None:
    args = ["--level", "greedy", "--seed", "2"]  # P1 leads 5-6: ends 5 and 6
    deal = MatchState.new(Rules.preset("standard"), 2).hand
    theirs = next(t for t in deal.hand(1) if str(t) != "5-6")
    _, out, _ = play(args, [str(theirs), "4-5", "q"])  # 4-5 links to a 3 or a 2
    assert f"  You do not hold {theirs}.\n" in out
    assert "  4-5 cannot be placed anywhere now.\n" in out


def test_since_your_last_turn_tells_the_others_moves_and_a_run_of_draws_once() -> None:
    _, out, _ = play(["--level", "greedy", "--seed", "1"], ["1"] * 400)
    told = re.findall(r"Since your last turn:\n((?:  .*\n)+)", out)
    lines = [line.strip() for block in told for line in block.splitlines()]
    assert "P1 drew 5 tiles" in lines
    assert not [line for line in lines if line.startswith("You")]
    for block in told:
        rows = block.splitlines()
        assert not any(a == b == "  P1 drew" for a, b in zip(rows, rows[1:], strict=False))


def test_seat_1_sees_its_own_score_and_results_and_the_match_told_right() -> None:
    _, out, _ = play(
        ["--level", "random", "--match", "--target", "30", "--seat", "1", "--seed", "3"],
        ["1"] * 3000,
    )
    scores = re.findall(r"^Score \w+ hand \d+: P0 (\d+), You \(P1\) (\d+) \((.*)\)$", out, re.M)
    assert scores and {p0 for p0, _, _ in scores} > {"0"}
    for _, mine, rest in scores:
        assert rest.endswith(f"; you need {30 - int(mine)}") == (int(mine) < 30), rest
    results = re.findall(r"^Result: .*$", out, re.M)
    assert "Result: the hand is blocked; P0 has the lowest count and wins 28 points." in results
    assert "Result: the hand is blocked; you have the lowest count and win 28 points." in results
    assert "Result: You played the last tile (domino) and win 41 points." in results
    assert out.rstrip().endswith("Match over: You (P1) won (69 to 28). You win the match!")


def test_a_partner_is_named_and_the_teams_match_is_yours_from_seat_2() -> None:
    args = ["--players", "4", "--teams", "--level", "greedy", "--match", "--target", "20"]
    _, out, _ = play([*args, "--seat", "2", "--seed", "5"], ["1"] * 3000)
    assert re.search(r"\nOthers: P0 \(partner\) \d+ tiles?, P1 \d+ tiles?, P3 \d+ tiles? \|", out)
    assert "(partner)" not in re.sub(r"P0 \(partner\)", "", out)
    assert out.rstrip().endswith(
        "Match over: team P0+P2 (your team) won (49 to 0). You win the match!"
    )


def test_a_single_hand_dealt_again_is_played_again() -> None:
    # Leiden, seed 197: the first hand is blocked with the lowest count shared and, under
    # tie="redeal", dealt again; a game of one hand goes on to the hand that counts.
    _, out, _ = play(["--preset", "leiden", "--level", "greedy", "--seed", "197"], ["1"] * 600)
    first, second = out.split("Press Enter for the next hand (q to quit): ")
    assert "Result: blocked with the lowest count shared: the hand is dealt again." in first
    assert "===== hand 2 over =====" in second and "Result: You played the last tile" in second


def test_each_kind_of_end_is_told_in_words() -> None:
    from matador_env.engine import End
    from matador_env.play import describe_end

    assert describe_end(End("cross", 2, 5)) == "crosswise, links to 2 or 5"
    assert describe_end(End("plain", 3)) == "showing 3"
    assert describe_end(End("blank", None)) == "needs a blank"
    assert describe_end(End("branch", 4)) == "branch showing 4"
    assert describe_end(End("spinner", 6)) == "spinner side showing 6"
