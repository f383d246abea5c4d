"""Terminal play and replay: what the hand-written mutants of matador_env/play.py and
matador_env/replay.py showed the other tests left unchecked: the words for each kind of
placement, the layout's drawing at its width and in nested trees, the help's numbers,
the table's singular forms and counts, input typed in capitals or as the last number,
results and match verdicts that are rare in play, the options' edge cases, and the
replay's reading of awkward files and its clearing of earlier frames."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from matador_env.engine import HandState, MatchState, Move, Rules, Termination, hand_record
from matador_env.engine.state import Outcome
from matador_env.play import PROG, TerminalGame, describe_move, draw_layout, narrate
from matador_env.play import main as play_main
from matador_env.replay import main as replay_main
from matador_env.replay import read_records
from tests.test_play import play, random_hand
from tests.test_replay import replay

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "hand_standard.txt"

# Kardinal for three, seed 0, greedy bots, always the first move: a game whose table
# shows a one-tile layout, "P2 1 tile", a single choice, "(the same on end 1)", a tree
# that forks twice, and a domino by a bot that ends with an empty hand.
KARDINAL_3 = ["--preset", "kardinal", "--players", "3", "--level", "greedy", "--seed", "0"]


@cache
def kardinal_game() -> str:
    code, out, err = play(KARDINAL_3, ["1"] * 600)
    assert code == 0, err
    return out


def game(rules: Rules, seat: int = 0) -> TerminalGame:
    """A match table with no bots, for the methods that only word what they are given."""
    return TerminalGame(rules, {}, seat, 1, True, io.StringIO(), lambda prompt: None, "test")


# -- the words for a move, the layout ---------------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "mode", "words"),
    [("kardinal", "cross", "crosswise on end "), ("polish", "upright", "upright on end ")],
)
def test_crosswise_and_upright_placements_are_told_as_such(
    preset: str, mode: str, words: str
) -> None:
    seen = 0
    for seed in range(4):
        for state in random_hand(preset, seed)[:-1]:
            for move in state.legal_moves():
                if move.mode == mode:
                    seen += 1
                    text = describe_move(move, state.ends, state.rules)
                    assert text.startswith(f"{move.tile} {words}{move.end} ("), text
    assert seen


def test_a_first_double_spinner_is_the_only_spinner_of_the_layout() -> None:
    # spinner="first_double": the first double laid in line spins; a later double is
    # an ordinary tile, drawn once with one open end past it.
    rules = Rules.preset("standard", spinner="first_double")
    drawn = 0
    for seed in range(6):
        state = HandState.deal(rules, seed)
        while not state.is_over:
            state = state.apply(state.legal_moves()[seed % len(state.legal_moves())])
            if state.ends:
                text = draw_layout(state)
                drawn += 1
                for i, end in enumerate(state.ends):
                    assert text.count(f"end {i} shows {end}") == 1, text
                assert text.count("+") <= 1, text
    assert drawn


def long_line() -> HandState:
    """A plain line of play whose one-line drawing is longer than 78 characters."""
    for seed in range(30):
        for state in random_hand("standard", seed):
            lines = draw_layout(state, width=1000).splitlines()
            if len(lines) == 2 and 78 < len(lines[1]) <= 90:
                return state
    raise AssertionError("no line of 79 to 90 characters in these hands")


def test_a_line_as_long_as_the_width_is_one_line_and_longer_is_a_tree() -> None:
    state = long_line()
    line = draw_layout(state, width=1000).splitlines()[1]
    assert draw_layout(state, width=len(line)).splitlines()[1] == line
    assert draw_layout(state, width=len(line) - 1).splitlines()[1].startswith("  lead ")
    # the default width is 78, a terminal's 80 less a margin
    assert draw_layout(state).splitlines()[1].startswith("  lead ")


def test_a_tree_indents_each_fork_and_ends_a_forking_arm_at_its_fork() -> None:
    out = kardinal_game()
    final = out.split("===== hand 1 over =====")[1].split("Hands left:")[0]
    assert "  lead [6|6]\n  - [1|0]<2/5>\n    - [5|4][3|1][6|4]<3/4>\n" in final
    assert "\n      - [4|2][5|6]<1/6>\n        - [0|0]  end 0 shows 0\n" in final
    assert "\n        - end 1 shows 6b\n" in final
    assert "layout: 1 tile, 2 open ends\n" in out


# -- the help ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("preset", "touching", "matadors"),
    [
        ("standard", 5, "0-0, 1-6, 2-5, 3-4"),
        ("double_nine", 8, "0-0, 1-9, 2-8, 3-7, 4-6, 5-5"),
    ],
)
def test_the_help_gives_the_rules_link_sum_and_every_matador(
    preset: str, touching: int, matadors: str
) -> None:
    _, out, _ = play(["--preset", preset, "--level", "greedy", "--seed", "2"], ["?", "q"])
    assert f"an end showing 2 with its\n  {touching} touching it" in out
    assert f"- Matadors ({matadors}) go on any open end" in out


# -- the table --------------------------------------------------------------------------


def test_the_table_says_tile_for_one_and_the_same_on_end_for_one_other_end() -> None:
    out = kardinal_game()
    assert re.search(r"\nOthers: P1 \d+ tiles?, P2 1 tile \|", out)
    assert "\n layout: 1 tiles" not in out and " 1 tiles" not in out
    assert "(the same on end 1)" in out and "(the same on ends 1)" not in out
    assert "Your move [1, ? help, q quit]: " in out  # one choice: no range "1-1"


def test_a_table_without_a_boneyard_to_draw_from_says_none_may_be_drawn() -> None:
    # Pagat for four deals the whole set: the boneyard is empty, below the reserve of 2.
    args = ["--preset", "pagat", "--players", "4", "--level", "greedy", "--seed", "1"]
    _, out, _ = play(args, ["q"])
    assert "| boneyard: 0 (0 may be drawn)\n" in out


def test_only_a_teams_partner_is_called_partner() -> None:
    _, out, _ = play(["--players", "4", "--level", "greedy", "--seed", "1"], ["1"] * 600)
    assert "Others: P1 " in out and "(partner)" not in out


def test_a_hand_won_by_domino_shows_the_winners_empty_hand_the_layout_and_the_last_moves() -> None:
    out = kardinal_game()
    end = out.split("===== hand 1 over =====")[1]
    assert end.startswith("\nSince your last turn:\n  P1 played ")
    assert "\n  P2 played 0-0 on end 0 (branch showing 1), 0 outward, a matador\n" in end
    assert "\nlayout: 16 tiles, 5 open ends\n" in end
    assert "\n  P2: - (count 0)\n" in end


# -- words at the end of a hand and a match -------------------------------------------


TEAMS4 = Rules.preset("standard", players=4, teams=True)


@pytest.mark.parametrize(
    ("seat", "winner", "says"),
    [
        (2, 2, "You played the last tile (domino) and win 9 points for team P0+P2 (your team)."),
        (0, 2, "P2 played the last tile (domino) and wins 9 points for team P0+P2 (your team)."),
        (1, 2, "P2 played the last tile (domino) and wins 9 points for team P0+P2."),
        (1, 3, "P3 played the last tile (domino) and wins 9 points for team P1+P3 (your team)."),
    ],
)
def test_a_teams_result_names_the_winner_and_the_team(seat: int, winner: int, says: str) -> None:
    # The winner is a seat, its side a team: "You" is the seat, "your team" the side.
    table = game(TEAMS4, seat)
    outcome = Outcome(Termination.DOMINO, winner, winner % 2, 9, (3, 2, 0, 4))
    assert table.outcome_text(outcome) == f"Result: {says}"


@pytest.mark.parametrize(
    ("seat", "winner", "counts", "points", "says"),
    [
        # P2 holds the lowest count, yet partners win a block on their two hands added
        # together: P1+P3's 21 against 27. It had said "P3 has the lowest count".
        (0, 3, (23, 11, 4, 10), 6, "team P1+P3 has the lower count, 21 against 27, and wins 6"),
        (
            1,
            3,
            (23, 11, 4, 10),
            1,
            "team P1+P3 (your team) has the lower count, 21 against 27, and wins 1 point",
        ),
        (
            0,
            0,
            (2, 9, 12, 8),
            3,
            "team P0+P2 (your team) has the lower count, 14 against 17, and wins 3",
        ),
    ],
)
def test_a_blocked_teams_hand_is_won_on_the_two_hands_added_together(
    seat: int, winner: int, counts: tuple[int, ...], points: int, says: str
) -> None:
    table = game(TEAMS4, seat)
    outcome = Outcome(Termination.BLOCKED, winner, winner % 2, points, counts)
    said = table.outcome_text(outcome)
    assert said.startswith(f"Result: the hand is blocked; {says}")
    assert said.endswith(" point." if points == 1 else " points.")


def test_a_teams_void_tie_says_the_teams_counts_are_level() -> None:
    outcome = Outcome(Termination.VOID_TIE, None, None, 0, (10, 4, 3, 9))
    said = game(TEAMS4, 0).outcome_text(outcome)
    assert said == "Result: blocked with the teams' counts level at 13: nobody scores."


def test_a_void_tie_says_nobody_scores() -> None:
    table = game(Rules.preset("standard"))
    outcome = Outcome(Termination.VOID_TIE, None, None, 0, (5, 5))
    said = table.outcome_text(outcome)
    assert said == "Result: blocked with the lowest count shared: nobody scores."


@pytest.mark.parametrize(
    ("seat", "says"),
    [
        (0, "Match over: You (P0) and P1 shared the win (120 to 120). The match is shared."),
        (2, "Match over: P0 and P1 shared the win (120 to 120 to 40). You lose the match."),
    ],
)
def test_a_shared_match_is_told_as_shared(seat: int, says: str) -> None:
    rules = Rules.preset("standard", players=2 if seat == 0 else 3)
    table = game(rules, seat)
    totals = (120, 120) if seat == 0 else (120, 120, 40)
    table.state = dataclasses.replace(table.state, totals=totals, winners=(0, 1))
    assert table.match_result() == says


@pytest.mark.parametrize(("mine", "needs"), [(99, "; you need 1"), (100, ""), (130, "")])
def test_the_score_line_says_what_is_needed_until_the_target_is_reached(
    mine: int, needs: str
) -> None:
    table = game(Rules.preset("standard"))
    line = table.score_line((mine, 7))
    assert line == f"Score before hand 1: You (P0) {mine}, P1 7 (first to 100 wins{needs})"


# -- what the person types --------------------------------------------------------------


@pytest.mark.parametrize("typed", ["Q", "QUIT", " Exit "])
def test_quitting_in_capitals_leaves(typed: str) -> None:
    code, out, _ = play(["--level", "greedy", "--seed", "2"], [typed, "1", "1"])
    assert code == 0 and out.rstrip().endswith("You left the game. Bye.")
    assert out.count("Your move [") == 1


def test_a_move_typed_in_capitals_is_read() -> None:
    _, out, _ = play(["--level", "greedy", "--seed", "2"], ["HELP", "D", "q"])
    assert "How to play" in out
    assert "Not allowed: illegal move 'draw' by seat 0" in out


def test_the_last_number_of_the_list_plays_the_last_move() -> None:
    args = ["--level", "greedy", "--seed", "2"]
    _, out, _ = play(args, ["q"])
    moves = re.findall(r"\n +(\d+)\) (\S+) ", out)
    last, move = moves[-1]
    assert int(last) == len(moves) > 1
    _, out, _ = play(args, [last, "q"])
    assert "There is no move" not in out
    assert re.search(rf"\nYou played {Move.parse(move).tile} ", out)


@pytest.mark.parametrize("typed", ["1000", "000001"])
def test_up_to_six_digits_are_read_as_a_number(typed: str) -> None:
    _, out, _ = play(["--level", "greedy", "--seed", "2"], [typed, "q"])
    if int(typed) == 1:
        assert "\nYou played " in out
    else:
        assert "There is no move 1000: the list goes from 1 to " in out


def test_a_hint_gives_the_whole_range_of_numbers() -> None:
    _, out, _ = play(["--level", "greedy", "--seed", "2"], ["0", "q"])
    count = len(re.findall(r"\n +\d+\) \S+ ", out.split("There is no move 0")[0]))
    assert f"  Type a number from 1 to {count}, a move such as " in out


def test_typed_lines_are_echoed_so_a_transcript_reads_like_the_session() -> None:
    # Input that is not a terminal (a file, a pipe) is written after its prompt.
    _, out, _ = play(["--level", "greedy", "--seed", "2"], ["xyz", "q"])
    assert "]: xyz\n  Not understood: " in out and "]: q\nYou left the game." in out


def test_quit_in_words_between_the_hands_of_a_match_leaves() -> None:
    args = ["--level", "greedy", "--match", "--seed", "3"]
    _, out, _ = play(args, ["1"] * 300 + ["q"])
    first = out.split("Press Enter")[0].count("Your move [")
    code, out, _ = play(args, ["1"] * first + ["Quit"])
    assert code == 0 and out.rstrip().endswith("You left the game. Bye.")
    assert "match hand 2" not in out


def test_the_second_hand_of_a_match_tells_the_bots_lead() -> None:
    # Each hand tells what the others did from its own start: the previous hand's
    # events told are not counted against the new one's.
    rules = Rules.preset("standard")  # next_leader "rotate": P1 leads the second hand
    seed = next(s for s in range(20) if MatchState.new(rules, s).hand.to_move == 0)
    args = ["--level", "greedy", "--match", "--seed", str(seed)]
    _, out, _ = play(args, ["1"] * 300 + ["q"])
    first = out.split("Press Enter")[0].count("Your move [")
    _, out, _ = play(args, ["1"] * first + ["", "q"])
    second = out.split("Press Enter for the next hand", 1)[1]
    table = second.split("Your moves:")[0]
    assert "| your turn 1 =====" in table
    assert re.search(r"Since your last turn:\n  P1 led \d+-\d+\n", table), table


# -- options ------------------------------------------------------------------------------


def test_the_banner_names_the_seat_the_seed_and_a_matchs_target() -> None:
    _, out, _ = play(["--level", "greedy", "--match", "--seat", "1", "--seed", "0"], ["q"])
    assert out.startswith(
        "Matador: standard, 2 players, target 100, bots: greedy. You are P1. "
        "Seed 0 (replay with --seed 0).\n"
    )


@pytest.mark.parametrize("seat", ["-1", "-2"])
def test_a_negative_seat_is_refused(seat: str) -> None:
    code, out, err = play(["--level", "greedy", "--seat", seat], [])
    assert (code, out) == (2, "") and "--seat must be from 0 to 1" in err


def test_a_configuration_with_players_0_is_still_refused() -> None:
    code, _, err = play(["--config", "pagat_teams", "--players", "0"], [])
    assert code == 2 and "give it without --preset, --players or --teams" in err


def test_list_gives_each_preset_its_source() -> None:
    _, out, _ = play(["--list"], [])
    assert "\nleiden         source 003: a spinner lead, 6 tiles each\n" in out
    assert "\nstandard       the rules the sources share\n" in out


class _CtrlC(io.StringIO):
    def readline(self, size: int = -1) -> str:  # type: ignore[override]
        raise KeyboardInterrupt


def test_ctrl_c_exits_130() -> None:
    out, err = io.StringIO(), io.StringIO()
    code = play_main(["--level", "greedy", "--seed", "2"], stdin=_CtrlC(), stdout=out, stderr=err)
    assert code == 130 and out.getvalue().endswith("\nInterrupted. Bye.\n")


# -- replay ---------------------------------------------------------------------------------


def test_a_file_that_is_not_utf8_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(GOLDEN.read_bytes() + b"\n# caf\xe9\n")
    code, out, err = replay(str(path))
    assert (code, out) == (2, "") and f"{path}: cannot read it (" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def finished_hand() -> HandState:
    final = HandState.deal(Rules.preset("standard"), 8)
    while final.outcome is None:
        final = final.apply(final.legal_moves()[-1])
    return final


ARENA_RECORD = hand_record(finished_hand())


NOT_A_GAME = "line 1 is not a game of `python -m evaluate --records`"


def arena_game(**changes: object) -> dict[str, object]:
    """A line of ``python -m evaluate --records``'s records.jsonl, with ``changes``."""
    game: dict[str, object] = {"kind": "deal", "deal": 4, "pattern": "AB", "a": "x", "b": "y"}
    game |= {"seats": ["x", "y"], "diff": 3, "records": [ARENA_RECORD]}
    return game | changes


def test_a_games_heading_names_its_deal_players_and_signed_score(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(arena_game()) + "\n")
    code, out, err = replay(str(path))
    assert code == 0, err
    assert out.startswith(
        f"{path}, game 0 of 1: deal 4, seat pattern AB (P0 x, P1 y); A=x scored +3 against B=y\n"
    )


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("{not json", f"{NOT_A_GAME} (not JSON: "),
        # It said "('seats')", and a list line failed in Python's words ("list indices
        # must be integers or slices, not str").
        (
            json.dumps({"records": []}),
            f"{NOT_A_GAME} (no 'seats', 'kind', 'deal', 'pattern', 'a', 'b', 'diff')",
        ),
        ("[]", f"{NOT_A_GAME} (it is JSON, but not an object)"),
        (json.dumps(arena_game(records=[ARENA_RECORD, 7])), "line 1 has records that are not text"),
        # A string of records was read one character at a time.
        (json.dumps(arena_game(records="abc")), f"{NOT_A_GAME} (its 'records' is not a list"),
        (json.dumps(arena_game(seats=4)), f"{NOT_A_GAME} (its 'seats' is not a list of agents)"),
        (json.dumps(arena_game(diff="far")), f"{NOT_A_GAME} (its 'diff' is not a number)"),
    ],
    ids=[
        "not json",
        "no seats",
        "not an object",
        "a record not text",
        "records a string",
        "seats a number",
        "diff a string",
    ],
)
def test_a_line_that_is_no_arena_game_is_refused_in_one_line(
    tmp_path: Path, line: str, says: str
) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(line + "\n")
    code, out, err = replay(str(path))
    assert (code, out) == (2, "") and says in err and err.count("\n") == 1


def test_a_negative_game_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(arena_game()) + "\n")
    code, out, err = replay(str(path), "--game", "-1")
    assert (code, out) == (2, "") and "--game -1 is not a game of it (0 to 0)" in err


def test_a_record_header_with_spaces_around_it_is_read(tmp_path: Path) -> None:
    text = GOLDEN.read_text().replace("# Matador hand record v1", "  # Matador hand record v1 ")
    path = tmp_path / "spaced.txt"
    path.write_text(text)
    code, out, err = replay(str(path))
    assert code == 0, err
    assert "hand 3 of 3" in out


def test_the_rules_line_says_defaults_for_the_standard_rules() -> None:
    code, out, _ = replay(str(GOLDEN))
    assert code == 0 and re.search(r"\nhand 1 of 3: seed \d+, P\d leads; rules \(defaults\)\n", out)


@pytest.mark.parametrize("typed", ["Q", "QUIT"])
def test_step_leaves_on_q_in_capitals(typed: str) -> None:
    code, out, _ = replay(str(GOLDEN), "--step", stdin=f"\n{typed}\n")
    assert code == 0 and out.count("[Enter: next move, q: quit]") == 2 and "\n3. " not in out


def test_an_earlier_replays_frames_of_any_hand_and_move_number_are_removed(tmp_path: Path) -> None:
    frames = tmp_path / "frames"
    frames.mkdir()
    theirs = ["hand12_000.png", "hand1_1000.png"]
    kept = ["hand1_000.png.bak", "hand1_000.pngx"]
    for name in theirs + kept:
        (frames / name).write_text("old")
    os.symlink(tmp_path / "nowhere.png", frames / "hand7_003.png")  # a dangling link
    state = HandState.deal(Rules.preset("standard"), 4)
    record = tmp_path / "one.txt"
    record.write_text(hand_record(state))
    code, _, err = replay(str(record), "--png", str(frames))
    assert code == 0, err
    assert sorted(f.name for f in frames.iterdir()) == sorted([*kept, "hand1_000.png"])


# -- the list of moves, forced moves, the others' turns ----------------------------------


def test_each_listed_move_is_told_with_the_end_it_goes_on() -> None:
    out = kardinal_game()
    assert "\n   1) 0-1@0>0   0-1 on end 0 (showing 6), 0 outward (the same on end 1)\n" in out


def test_a_tile_that_may_not_lead_gets_the_engines_reason() -> None:
    # Leiden, seed 0: the person leads, and only a double but the 0-0 may lead.
    _, out, _ = play(["--preset", "leiden", "--level", "greedy", "--seed", "0"], ["0-1", "q"])
    assert "  Not allowed: illegal move '0-1' by seat 0: " in out
    assert "legal moves: 6-6, draw." in out


@pytest.mark.parametrize("seed", [1, 5])
def test_every_move_of_the_bot_is_told_and_every_drawn_tile_named(
    tmp_path: Path, seed: int
) -> None:
    # Also before a draw made for the person (a forced move is one line, but what the
    # bot did before it is still told), and at the end of the hand.
    record = tmp_path / "hand.txt"
    args = ["--level", "greedy", "--seed", str(seed), "--record", str(record)]
    code, out, _ = play(args, ["1"] * 600)
    assert code == 0
    (hand,) = read_records(record)[1]
    state = hand.start()
    told, drawn = [], []
    for move in hand.moves:
        seat, ends, held = state.to_move, state.ends, state.hand(0)
        if seat == 1 and move.kind == "play":
            told.append(narrate("P1", move, ends, hand.rules))
        state = state.apply(move)
        if seat == 0 and move.kind == "draw":
            drawn += [str(t) for t in state.hand(0) if t not in held]
    assert re.findall(r"^  (P1 (?:led|played) .*)$", out, re.M) == told
    assert re.findall(r"^You drew (\S+?)(?: \(nothing to play\))?\.$", out, re.M) == drawn
    assert drawn and told


def test_a_forced_draw_or_pass_before_a_leiden_lead_says_why() -> None:
    # Under lead_tile="double_not_blank" a hand of 0-0 and matadors must draw before
    # the lead; "nothing to play" had not said that the lead must be a double.
    table = game(Rules.preset("leiden"))
    table.state = MatchState.new(table.rules, 2)
    hand = table.state.hand.hand(0)
    said = table.echo(Move.parse("draw"), (), hand, True)
    assert said.endswith(" (nothing to lead: the lead must be a double other than 0-0).")
    said = table.echo(Move.parse("pass"), (), hand, True)
    assert said == "You pass: no double to lead (0-0 may not) and nothing you may draw."
    # Once the lead is down, or under a lead rule that any tile meets, as before.
    led = HandState.deal(Rules(), 1)
    ends = led.apply(led.legal_moves()[0]).ends
    assert ends and table.echo(Move.parse("pass"), ends, hand, True) == (
        "You pass: nothing to play and nothing you may draw."
    )
    standard = game(Rules.preset("standard"))
    assert standard.echo(Move.parse("pass"), (), hand, True) == (
        "You pass: nothing to play and nothing you may draw."
    )


def test_a_three_player_score_line_counts_from_your_seat() -> None:
    table = game(Rules.preset("standard", players=3), seat=2)
    line = table.score_line((90, 10, 40))
    assert line.endswith("(first to 100 wins; you need 60)")


def test_a_complete_round_match_says_so_on_the_score_line() -> None:
    table = game(Rules.preset("kardinal"))
    assert table.score_line((10, 0)).endswith(
        "(target 100; once passed, play on until all have led equally often; you need 90)"
    )


def test_the_level_hint_repeats_the_teams_option() -> None:
    code, _, err = play(["--players", "4", "--teams", "--level", "casual"], [])
    assert code == 2
    assert f"E.g.: {PROG} --preset standard --players 4 --teams --level greedy\n" in err


def test_your_hand_of_one_tile_is_one_tile() -> None:
    _, out, _ = play(["--level", "greedy", "--seed", "3"], ["1"] * 600)
    assert re.search(r"\nYour hand \(1 tile, count \d+\): \d+-\d+\n", out)


@pytest.mark.parametrize("seed", ["1", "6"])  # seeds where you draw, 4 and 8 tiles
def test_your_turn_n_comes_before_your_nth_move_of_the_hand(seed: str) -> None:
    # As the module's docstring says: each tile you drew and each pass is a move.
    _, out, _ = play(["--level", "greedy", "--seed", seed], ["1"] * 300)
    moves, headings, drew = 0, 0, 0
    for line in out.splitlines():
        heading = re.search(r"\| your turn (\d+) =====$", line)
        if heading:
            headings += 1
            assert int(heading.group(1)) == moves + 1, line
        elif re.match(r"You (led|played|drew|pass)", line):
            moves += 1
            drew += line.startswith("You drew")
    assert headings > 5 and drew >= 4


# -- standard streams closed -----------------------------------------------------------------
# Python sets sys.stdin to None when the process starts with file descriptor 0 closed
# (`python -m matador_env.play <&-`): that is the end of input, which leaves the game
# (exit 0) and ends a --step replay. Before, both called None.readline(): a traceback
# (AttributeError) and exit 1. A closed output (`>&-`, `2>&-`: sys.stdout or sys.stderr
# None) keeps nothing, as /dev/null would; before, None.write() failed the same way.


def test_play_with_standard_input_closed_leaves_as_at_the_end_of_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", None)
    monkeypatch.setattr(sys, "stdout", out)
    code = play_main(["--level", "greedy", "--seed", "2"])
    assert code == 0 and out.getvalue().rstrip().endswith("Input ended; leaving the game. Bye.")


def test_a_step_replay_with_standard_input_closed_stops_as_at_the_end_of_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdin", None)
    code = replay_main([str(GOLDEN), "--step"], stdout=out, stderr=io.StringIO())
    assert code == 0 and out.getvalue().count("[Enter: next move, q: quit]") == 1


def test_play_with_standard_output_closed_plays_on_and_keeps_the_record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record = tmp_path / "game.txt"
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n" * 600))
    monkeypatch.setattr(sys, "stdout", None)
    monkeypatch.setattr(sys, "stderr", None)
    code = play_main(["--level", "greedy", "--seed", "2", "--record", str(record)])
    (hand,) = read_records(record)[1]
    assert code == 0 and hand.moves


@pytest.mark.parametrize("closed", ["stdout", "stderr"])
def test_play_refusing_its_options_with_an_output_closed_still_exits_2(
    monkeypatch: pytest.MonkeyPatch, closed: str
) -> None:
    monkeypatch.setattr(sys, closed, None)
    assert play_main(["--seat", "9"], stdin=io.StringIO()) == 2


def test_a_replay_with_standard_output_closed_still_draws_its_frames(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    monkeypatch.setattr(sys, "stdout", None)
    assert replay_main([str(GOLDEN), "--png", str(tmp_path / "frames")]) == 0
    assert len(list((tmp_path / "frames").glob("*.png"))) > 1


def test_play_run_with_every_standard_stream_closed_exits_0(tmp_path: Path) -> None:
    # The process itself, started from a shell with descriptors 0, 1 and 2 closed. At
    # seed 2 the bot leads; the person's input ends at once, leaving the hand after
    # the bot's lead, which the record keeps.
    record = tmp_path / "game.txt"
    argv = f"--level greedy --seed 2 --record {record}"
    command = f"{sys.executable} -m matador_env.play {argv} <&- >&- 2>&-"
    done = subprocess.run(["bash", "-c", command], cwd=ROOT, timeout=120)
    (hand,) = read_records(record)[1]
    assert done.returncode == 0 and len(hand.moves) == 1


@pytest.mark.parametrize("suffix", [".txt", ".jsonl"])
def test_a_byte_order_mark_before_the_first_record_or_game_is_no_text(
    tmp_path: Path, suffix: str
) -> None:
    # Here the mark sits right before the record's header line, or the game's "{".
    text = ARENA_RECORD if suffix == ".txt" else json.dumps(arena_game())
    path = tmp_path / f"marked{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    code, out, err = replay(str(path))
    assert code == 0, err
    assert "\nhand 1 of 1: seed " in out


def test_a_result_line_not_among_the_comments_after_the_moves_is_not_checked(
    tmp_path: Path,
) -> None:
    # A record of records.jsonl is taken whole. With its moves: line moved up (the keys
    # may come in any order), the "# result:" line no longer follows the moves among
    # their comments: it is not the record's result, and nothing is checked.
    lines = ARENA_RECORD.replace("# result:", "# result: edited, was", 1).splitlines()
    moves = next(k for k, line in enumerate(lines) if line.startswith("moves:"))
    lines.insert(1, lines.pop(moves))
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps(arena_game(records=["\n".join(lines)])) + "\n")
    code, _, err = replay(str(path))
    assert (code, err) == (0, "")
