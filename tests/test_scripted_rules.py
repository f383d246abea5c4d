"""Scripted hands: every worked example and every option value of RULES.md.

Each test builds a chosen deal with ``HandState.from_deal`` (tiles not named go to
the end of the boneyard, or to a named seat), plays scripted moves and asserts the
EXACT set of legal moves and the exact results. The layout is drawn above each
position: ``[touching|outward]`` per tile from the lead out, ``[2/5]`` crosswise,
``<3/4>`` a branching crosswise matador, ``[2^5]`` upright, ``[3+3]`` a spinner.

Move text forms (README): ``2-5`` lead, ``2-5@1>5`` in line on end 1 showing 5,
``3-4@0x`` crosswise, ``2-5@1^`` upright, ``draw``, ``pass``. End text forms:
``3`` plain, ``3*`` spinner side, ``3b`` branch, ``2/5`` crosswise, ``_`` needs a blank.
"""

from __future__ import annotations

import pytest

from matador_env.engine import (
    HandState,
    IllegalMoveError,
    MatchState,
    Rules,
    RulesError,
    Termination,
    set_tiles,
)
from matador_env.engine.rules import HandSize
from tests.scripted import deal

# -- helpers --------------------------------------------------------------------------------


def legal(s: HandState) -> set[str]:
    return {str(m) for m in s.legal_moves()}


def ends(s: HandState) -> str:
    return " ".join(str(e) for e in s.ends)


def play(s: HandState, *moves: str) -> HandState:
    for m in moves:
        s = s.apply(m)
    return s


def inline_both(tile: str, end: int) -> set[str]:
    """A matador in line on ``end``, either half outward."""
    a, b = tile.split("-")
    return {f"{tile}@{end}>{a}", f"{tile}@{end}>{b}"}


def hand_of(s: HandState, seat: int) -> set[str]:
    return {str(t) for t in s.hand(seat)}


NO_DRAW = Rules(draw_rule="none")


# -- rule 4: regular linking, S = 7 ---------------------------------------------------------


def test_example1_regular_linking_sum_seven() -> None:
    # RULES example 1. Seat 0 leads 2-4.
    # [4|2][2|4]   ends: 2 4
    s = deal(Rules(), ["2-4 2-2", "3-5 3-6 2-3 3-3 5-6 1-5 0-1 4-4"])
    s = play(s, "2-4")
    assert ends(s) == "2 4"
    assert s.to_move == 1
    # End 0 shows 2: only a 5 fits; end 1 shows 4: only a 3 fits (the 3 touching the 4).
    assert legal(s) == {
        "3-5@0>3",
        "5-6@0>6",
        "1-5@0>1",
        "3-5@1>5",
        "3-6@1>6",
        "2-3@1>2",
        "3-3@1>3",
    }
    # The double lies in line and follows the same rule.
    # [4|2][2|4][3|3]   ends: 2 3
    assert ends(s.apply("3-3@1>3")) == "2 3"
    # [4|2][2|4][3|6]   ends: 2 6
    s = s.apply("3-6@1>6")
    assert ends(s) == "2 6"
    assert s.to_move == 0
    # Seat 0 holds 2-2 and nothing links to 2 or 6 by the sum; no matadors: draw.
    assert legal(s) == {"draw"}


def test_wrong_orientation_is_illegal() -> None:
    # [4|2][2|4]   ends: 2 4
    s = play(deal(Rules(), ["2-4 1-1", "3-5 6-6"]), "2-4")
    with pytest.raises(IllegalMoveError):
        s.apply("3-5@1>3")  # the 5 would touch the 4: 5 + 4 != 7
    assert ends(s.apply("3-5@1>5")) == "2 5"


# -- rule 5: matadors, ends showing 0 -------------------------------------------------------


def test_example2_end_showing_zero_accepts_only_matadors() -> None:
    # RULES example 2. Seat 0 leads 0-4.
    # [4|0][0|4]   ends: 0 4
    s = play(deal(Rules(), ["0-4 2-6 5-6", "2-5 0-0 3-3 0-3 4-5 0-6"]), "0-4")
    assert ends(s) == "0 4"
    assert legal(s) == (
        inline_both("2-5", 0)
        | {"0-0@0>0"}
        | inline_both("2-5", 1)
        | {"0-0@1>0", "3-3@1>3", "0-3@1>0"}
    )
    # Laid as [4-0][2-5] the end shows 5 and the next tile there must link with a 2.
    # [4|0][2|5]   ends: 5 4
    a = s.apply("2-5@0>5")
    assert ends(a) == "5 4"
    assert legal(a) == {"2-6@0>6"}
    # Laid as [4-0][5-2] the end shows 2 and needs a 5.
    # [4|0][5|2]   ends: 2 4
    b = s.apply("2-5@0>2")
    assert ends(b) == "2 4"
    assert legal(b) == {"5-6@0>6"}
    # 0-0 on an end showing 0: the end shows 0.
    assert ends(s.apply("0-0@0>0")) == "0 4"
    assert ends(s.apply("0-0@1>0")) == "0 0"


def test_matador_goes_on_any_end_either_half_outward() -> None:
    # [6|5][5|6]   seat 0 leads 5-6.   ends: 5 6
    s = play(deal(Rules(), ["5-6 0-1", "3-4 1-6 0-0 4-4"]), "5-6")
    assert ends(s) == "5 6"
    # No regular tile fits (5 needs 2, 6 needs 1); only matadors, so a voluntary draw too.
    assert legal(s) == (
        inline_both("3-4", 0)
        | inline_both("3-4", 1)
        | inline_both("1-6", 0)
        | inline_both("1-6", 1)
        | {"0-0@0>0", "0-0@1>0", "draw"}
    )
    assert ends(s.apply("3-4@0>3")) == "3 6"
    assert ends(s.apply("3-4@0>4")) == "4 6"
    assert ends(s.apply("1-6@1>1")) == "5 1"


# -- matador_placement ----------------------------------------------------------------------


def test_inline_mode_has_no_crosswise_or_upright() -> None:
    s = play(deal(Rules(matador_placement="inline"), ["0-4 1-1", "2-5 0-0 6-6"]), "0-4")
    for m in s.legal_moves():
        assert m.mode in ("inline", None)


def test_crosswise_choice() -> None:
    rules = Rules(matador_placement="crosswise_choice")
    # [4|2][2|4]   ends: 2 4
    s = play(deal(rules, ["2-4 4-5 3-6 1-6 1-1 0-2", "3-4 0-0 5-6 2-2 2-5"]), "2-4")
    # Any matador but 0-0 may go crosswise, on any end.
    assert legal(s) == (
        {"3-4@0x", "3-4@1x", "2-5@0x", "2-5@1x", "0-0@0>0", "0-0@1>0", "5-6@0>6"}
        | inline_both("3-4", 0)
        | inline_both("3-4", 1)
        | inline_both("2-5", 0)
        | inline_both("2-5", 1)
    )
    # [4|2][2|4][3/4]   ends: 2 3/4
    s = s.apply("3-4@1x")
    assert ends(s) == "2 3/4"
    # The next tile there links to either value (a 4 to the 3, a 3 to the 4) and lies in
    # line; an in-line matador may go there, a crosswise one may not.
    assert legal(s) == {
        "4-5@0>4",
        "4-5@1>5",
        "3-6@1>6",
        "1-6@0x",
    } | inline_both("1-6", 0) | inline_both("1-6", 1)
    # [4|2][2|4][3/4][3|6]   ends: 2 6 (the end is ordinary again)
    a = s.apply("3-6@1>6")
    assert ends(a) == "2 6"
    b = s.apply("4-5@1>5")
    assert ends(b) == "2 5"
    c = s.apply("1-6@1>6")
    assert ends(c) == "2 6"
    # After that the end is ordinary: a crosswise matador may go there again.
    # [4|2][2|4][3/4][3|6]   ends: 2 6; seat 1 holds 0-0 5-6 2-2 2-5
    assert legal(a) == (
        {"0-0@0>0", "0-0@1>0", "5-6@0>6", "2-5@0x", "2-5@1x"}
        | inline_both("2-5", 0)
        | inline_both("2-5", 1)
    )


def test_crosswise_choice_zero_end() -> None:
    rules = Rules(matador_placement="crosswise_choice")
    # [4|0][0|4]   ends: 0 4
    s = play(deal(rules, ["0-4 1-1", "2-5 5-5"]), "0-4")
    assert legal(s) == {"2-5@0x", "2-5@1x", "draw"} | inline_both("2-5", 0) | inline_both("2-5", 1)
    # [4|0][2/5]   ends: 2/5 4: a 5 links to the 2, a 2 to the 5.
    s = s.apply("2-5@0x")
    assert ends(s) == "2/5 4"


def test_crosswise_on_blank() -> None:
    rules = Rules(matador_placement="crosswise_on_blank")
    # [4|0][0|4]   ends: 0 4
    s = play(deal(rules, ["0-4 0-2 1-6 3-5 2-2", "2-5 0-0 0-3 3-3 6-6"]), "0-4")
    # On the end showing 0 a matador lies crosswise (0-0 too); elsewhere in line.
    assert legal(s) == {
        "2-5@0x",
        "0-0@0x",
        "2-5@1>2",
        "2-5@1>5",
        "0-0@1>0",
        "0-3@1>0",
        "3-3@1>3",
    }
    # [4|0][2/5]   ends: _ 4 (the end needs a blank)
    s = s.apply("2-5@0x")
    assert ends(s) == "_ 4"
    # A blank tile 0-x (the end then shows x) or a matador in line, outward half chosen.
    assert legal(s) == {"0-2@0>2", "3-5@1>5"} | inline_both("1-6", 0) | inline_both("1-6", 1)
    assert ends(s.apply("0-2@0>2")) == "2 4"
    assert ends(s.apply("1-6@0>1")) == "1 4"
    assert ends(s.apply("1-6@0>6")) == "6 4"


def test_crosswise_on_blank_double_blank() -> None:
    rules = Rules(matador_placement="crosswise_on_blank")
    # [4|0][0|4]   ends: 0 4
    s = deal(rules, ["0-4 0-5 2-2", "0-0 6-6 1-1"])
    s = play(s, "0-4")
    assert legal(s) == {"0-0@0x", "0-0@1>0", "draw"}
    # [4|0][0/0]   ends: _ 4
    s = s.apply("0-0@0x")
    assert ends(s) == "_ 4"
    assert legal(s) == {"0-5@0>5"}
    assert ends(s.apply("0-5@0>5")) == "5 4"


def test_crosswise_on_blank_double_blank_closes_a_needs_blank_end() -> None:
    rules = Rules(matador_placement="crosswise_on_blank")
    # [4|0][2/5]   ends: _ 4, then 0-0 in line on it shows 0, and a matador there is
    # crosswise again.
    s = play(deal(rules, ["0-4 0-0 5-5", "2-5 3-4 6-6"]), "0-4", "2-5@0x")
    assert ends(s) == "_ 4"
    assert legal(s) == {"0-0@0>0", "0-0@1>0", "draw"}
    s = s.apply("0-0@0>0")
    assert ends(s) == "0 4"
    assert legal(s) == {"3-4@0x", "draw"} | inline_both("3-4", 1)


def test_example3_upright() -> None:
    rules = Rules(matador_placement="upright")
    # RULES example 3. Seat 0 leads 5-5.
    # [5|5]   ends: 5 5
    s = play(deal(rules, ["5-5 0-3 3-4 2-3 4-6", "2-5 2-6 1-4 0-1"]), "5-5")
    assert ends(s) == "5 5"
    assert legal(s) == {"2-5@0^", "2-5@1^", "2-6@0>6", "2-6@1>6"}
    # [5|5][2^5]   ends: _ 5
    s = s.apply("2-5@0^")
    assert ends(s) == "_ 5"
    # The next tile there must be a blank tile (0-x) or another matador, upright again.
    assert legal(s) == {"0-3@0>3", "3-4@0^", "2-3@1>3", "3-4@1^"}
    # [5|5][2^5][0|3]   ends: 3 5
    assert ends(s.apply("0-3@0>3")) == "3 5"
    # [5|5][2^5][3^4]   ends: _ 5
    assert ends(s.apply("3-4@0^")) == "_ 5"


def test_upright_on_an_end_showing_zero() -> None:
    rules = Rules(matador_placement="upright")
    # [4|0][0|4]   ends: 0 4
    s = play(deal(rules, ["0-4 1-1 6-6", "2-5 0-3 5-5"]), "0-4")
    # Upright wherever it is laid, an end showing 0 included; 0-3 links to the 4.
    assert legal(s) == {"2-5@0^", "2-5@1^", "0-3@1>0"}
    # [4|0][2^5]   ends: _ 4
    assert ends(s.apply("2-5@0^")) == "_ 4"


def test_upright_double_blank() -> None:
    rules = Rules(matador_placement="upright")
    # [4|2][2|4]   ends: 2 4
    s = play(deal(rules, ["2-4 1-6 0-5 6-6", "0-0 3-5 1-1"]), "2-4")
    # 0-0 stands upright too (never in line on a plain end).
    assert legal(s) == {"0-0@0^", "0-0@1^", "3-5@0>3", "3-5@1>5"}
    # [4|2][0^0][2|4]   ends: _ 4
    s = s.apply("0-0@0^")
    assert ends(s) == "_ 4"
    assert legal(s) == {"1-6@0^", "0-5@0>5", "1-6@1^"}
    # Another matador upright again: the end still needs a blank.
    assert ends(s.apply("1-6@0^")) == "_ 4"
    assert ends(s.apply("0-5@0>5")) == "5 4"


def test_upright_double_blank_answers_a_needs_blank_end() -> None:
    rules = Rules(matador_placement="upright")
    # [4|2][2|4][2^5]   ends: 2 _
    s = play(deal(rules, ["2-4 0-0 6-6", "2-5 1-1 4-4"]), "2-4")
    s = s.apply("2-5@1^")
    assert ends(s) == "2 _"
    # 0-0 as the blank tile in line (shows 0) or upright (still needs a blank).
    assert legal(s) == {"0-0@0^", "0-0@1>0", "0-0@1^", "draw"}
    assert ends(s.apply("0-0@1>0")) == "2 0"
    assert ends(s.apply("0-0@1^")) == "2 _"


def test_upright_matador_as_regular() -> None:
    rules = Rules(matador_placement="upright", matador_as_regular=True)
    # [5|5]   ends: 5 5
    s = play(deal(rules, ["5-5 0-3 1-1", "2-5 0-0 4-4"]), "5-5")
    # 2-5 fits by the sum (2 + 5 = 7) and may lie in line as a regular tile, or upright.
    # 0-0 fits nowhere by the sum: upright only.
    assert legal(s) == {
        "2-5@0^",
        "2-5@1^",
        "2-5@0>5",
        "2-5@1>5",
        "0-0@0^",
        "0-0@1^",
        "draw",  # only matador tiles (README: only_matadors looks at tiles)
    }
    # [5|5][2|5]   ends: 5 5 (a regular tile: the end does not need a blank)
    s = s.apply("2-5@0>5")
    assert ends(s) == "5 5"
    assert legal(s) == {"draw"}


def test_upright_matador_as_regular_not_on_needs_blank_end() -> None:
    rules = Rules(matador_placement="upright", matador_as_regular=True)
    # [4|2][2|4][2^5]   ends: 2 _
    s = play(deal(rules, ["2-4 3-4 6-6", "2-5 1-1 4-4"]), "2-4", "2-5@1^")
    assert ends(s) == "2 _"
    # 3-4 does not fit 2 by the sum, and a needs-a-blank end takes no sum link.
    assert legal(s) == {"3-4@0^", "3-4@1^", "draw"}


def test_example4_branching() -> None:
    rules = Rules(matador_placement="branching")
    # RULES example 4. Seat 0 leads 2-6.
    # [6|2][2|6]   ends: 2 6
    s = play(deal(rules, ["2-6 1-6 4-5 1-1", "3-4 0-0 1-2 6-6"]), "2-6")
    assert ends(s) == "2 6"
    assert legal(s) == (
        {"3-4@0x", "3-4@1x", "0-0@0x", "0-0@1x", "0-0@0>0", "0-0@1>0", "1-2@1>2"}
        | inline_both("3-4", 0)
        | inline_both("3-4", 1)
    )
    # [6|2][2|6]<3/4>   ends: 2 3b 4b (the end showing 6 replaced by two branch ends)
    s = s.apply("3-4@1x")
    assert ends(s) == "2 3b 4b"
    # 1-6 may go in line on either branch, but not crosswise; on the plain end 2 it may.
    assert legal(s) == (
        {"1-6@0x", "4-5@0>4", "4-5@1>5"}
        | inline_both("1-6", 0)
        | inline_both("1-6", 1)
        | inline_both("1-6", 2)
    )
    # [6|2][2|6]<3/4>[1|6]   ends: 2 6 4b
    s = s.apply("1-6@1>6")
    assert ends(s) == "2 6 4b"
    # The filled branch is an ordinary end again: crosswise allowed there, not on 4b.
    assert legal(s) == ({"0-0@0x", "0-0@1x", "0-0@0>0", "0-0@1>0", "0-0@2>0", "1-2@1>2"})


def test_branching_double_blank_crosswise() -> None:
    rules = Rules(matador_placement="branching")
    # [4|2][2|4]   ends: 2 4
    s = play(deal(rules, ["2-4 2-5 3-3 1-1", "0-0 6-6 4-4"]), "2-4")
    assert legal(s) == {"0-0@0x", "0-0@1x", "0-0@0>0", "0-0@1>0", "draw"}
    # [4|2]<0/0>[2|4]   ends: 0b 0b 4
    s = s.apply("0-0@0x")
    assert ends(s) == "0b 0b 4"
    # Branch ends showing 0: only matadors, in line; 3-3 links to the 4.
    assert legal(s) == inline_both("2-5", 0) | inline_both("2-5", 1) | inline_both("2-5", 2) | {
        "2-5@2x",
        "3-3@2>3",
    }


# -- matador_as_regular and matador_only_when_stuck -----------------------------------------


def test_only_when_stuck_holds_matadors_back() -> None:
    rules = Rules(matador_only_when_stuck=True)
    # [4|2][2|4]   ends: 2 4
    s = play(deal(rules, ["2-4 1-1", "3-4 0-0 3-5"]), "2-4")
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}
    # Stuck with non-matadors: matadors are allowed (and, only matadors, a voluntary draw).
    s2 = play(deal(rules, ["2-4 1-1", "3-4 0-0 6-6"]), "2-4")
    assert legal(s2) == (
        inline_both("3-4", 0) | inline_both("3-4", 1) | {"0-0@0>0", "0-0@1>0", "draw"}
    )


def test_only_when_stuck_never_restricts_the_lead() -> None:
    rules = Rules(matador_only_when_stuck=True)
    s = deal(rules, ["0-0 3-4 2-6 5-5", "1-1"])
    assert legal(s) == {"0-0", "3-4", "2-6", "5-5"}


def test_only_when_stuck_holds_back_crosswise_and_upright_matadors() -> None:
    # Kardinal-like branching: a crosswise matador is still a matador.
    rules = Rules(matador_placement="branching", matador_only_when_stuck=True)
    s = play(deal(rules, ["2-4 1-1", "3-4 0-0 3-5"]), "2-4")
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}
    rules = Rules(matador_placement="upright", matador_only_when_stuck=True)
    s = play(deal(rules, ["2-4 1-1", "3-4 0-0 3-5"]), "2-4")
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}


@pytest.mark.parametrize("as_regular", [False, True])
def test_only_when_stuck_holds_back_double_blank_as_blank_tile(as_regular: bool) -> None:
    rules = Rules(
        matador_placement="upright",
        matador_only_when_stuck=True,
        matador_as_regular=as_regular,
    )
    # [4|2][2|4][2^5]   ends: 2 _
    s = play(deal(rules, ["2-4 0-0 0-3 6-6", "2-5 1-1 4-4"]), "2-4", "2-5@1^")
    assert ends(s) == "2 _"
    # 0-0 is a matador however it is laid: the blank tile 0-3 must be played instead.
    assert legal(s) == {"0-3@1>3"}


def test_only_when_stuck_releases_double_blank_as_blank_tile_when_stuck() -> None:
    # docs/rules.md, matador_only_when_stuck: a matador "may be played only when no tile
    # of the hand that is not a matador fits anywhere"; then it is played as the
    # placement allows, under "upright" 0-0 also as the blank tile (laid so, shows 0).
    rules = Rules(matador_placement="upright", matador_only_when_stuck=True)
    # [4|2][2|4][2^5]   ends: 2 _; seat 0's 6-6 fits nowhere: it is stuck.
    s = play(deal(rules, ["2-4 0-0 6-6", "2-5 1-1 4-4"]), "2-4", "2-5@1^")
    assert ends(s) == "2 _"
    assert legal(s) == {"0-0@0^", "0-0@1>0", "0-0@1^", "draw"}
    assert ends(s.apply("0-0@1>0")) == "2 0"


def test_only_when_stuck_does_not_hold_back_matador_as_regular() -> None:
    rules = Rules(
        matador_placement="upright", matador_as_regular=True, matador_only_when_stuck=True
    )
    # [5|5]   ends: 5 5
    s = play(deal(rules, ["5-5 1-1", "2-5 2-6 3-4"]), "5-5")
    # 2-6 is playable, so matadors are held back, except 2-5 laid in line as a regular tile.
    assert legal(s) == {"2-6@0>6", "2-6@1>6", "2-5@0>5", "2-5@1>5"}
    rules = Rules(matador_as_regular=True, matador_only_when_stuck=True)
    s = play(deal(rules, ["5-5 1-1", "2-5 2-6 3-4"]), "5-5")
    # Inline mode: 2-5 with the 2 touching the 5 is a regular placement; with the 5
    # touching it is a matador placement and held back.
    assert legal(s) == {"2-6@0>6", "2-6@1>6", "2-5@0>5", "2-5@1>5"}


@pytest.mark.parametrize(
    "placement", ["inline", "upright", "crosswise_choice", "crosswise_on_blank", "branching"]
)
def test_only_when_stuck_spares_matador_as_regular_under_every_placement(placement: str) -> None:
    # RULES.md: a matador laid as a regular tile is regular "in every matador_placement
    # mode", and matador_only_when_stuck does not hold it back. Under the three
    # crosswise modes this position had no scripted test.
    rules = Rules(
        matador_placement=placement, matador_as_regular=True, matador_only_when_stuck=True
    )
    # [5|5]   ends: 5 5
    s = play(deal(rules, ["5-5 1-1", "2-5 2-6 3-4"]), "5-5")
    # 2-6 fits, so the matadors are held back but for 2-5 laid on a 5 as a regular tile;
    # 3-4 fits no 5 as a regular tile, and laid as a matador it is held back.
    assert legal(s) == {"2-6@0>6", "2-6@1>6", "2-5@0>5", "2-5@1>5"}


# -- spinner --------------------------------------------------------------------------------


def test_spinner_first_double_lead() -> None:
    rules = Rules(spinner="first_double")
    # [3+3] as the lead: four ends.   ends: 3* 3* 3* 3*
    s = play(deal(rules, ["3-3 1-1 2-2", "4-5 4-4 6-6"]), "3-3")
    assert ends(s) == "3* 3* 3* 3*"
    assert legal(s) == {f"4-5@{i}>5" for i in range(4)} | {f"4-4@{i}>4" for i in range(4)}
    # A second double is an ordinary double in line.
    s = s.apply("4-4@2>4")
    assert ends(s) == "3* 3* 4 3*"


def test_spinner_first_double_later_double_and_only_the_first() -> None:
    rules = Rules(spinner="first_double")
    # [4|2][2|4]   ends: 2 4
    s = play(deal(rules, ["2-4 4-4 1-1", "3-3 5-6 6-6"]), "2-4")
    assert ends(s) == "2 4"
    # [4|2][2|4][3+3]   ends: 2 3* 3* 3* (one end turned into three)
    s = s.apply("3-3@1>3")
    assert ends(s) == "2 3* 3* 3*"
    s = s.apply("4-4@2>4")
    assert ends(s) == "2 3* 4 3*"


def test_spinner_first_double_matador_double() -> None:
    rules = Rules(spinner="first_double")
    # [4|2][2|4]   ends: 2 4
    s = play(deal(rules, ["2-4 1-1", "0-0 6-6"]), "2-4")
    assert legal(s) == {"0-0@0>0", "0-0@1>0", "draw"}
    # [4|2][0+0][2|4]   ends: 0* 0* 0* 4
    assert ends(s.apply("0-0@0>0")) == "0* 0* 0* 4"


def test_spinner_first_double_lead_double_blank() -> None:
    rules = Rules(spinner="first_double")
    s = play(deal(rules, ["0-0 1-1", "2-5 6-6"]), "0-0")
    assert ends(s) == "0* 0* 0* 0*"
    assert legal(s) == {f"2-5@{i}>{h}" for i in range(4) for h in (2, 5)} | {"draw"}


@pytest.mark.parametrize(
    "placement", ["crosswise_choice", "crosswise_on_blank", "upright", "branching"]
)
def test_spinner_first_double_takes_precedence_over_matador_placement(placement: str) -> None:
    rules = Rules(spinner="first_double", matador_placement=placement)
    # [4|0][0|4]   ends: 0 4
    s = play(deal(rules, ["0-4 1-1", "0-0 6-6"]), "0-4")
    # 0-0 is the first double: it becomes the spinner, neither crosswise nor upright.
    assert legal(s) == {"0-0@0>0", "0-0@1>0", "draw"}
    # [4|0][0+0]   ends: 0* 0* 0* 4
    assert ends(s.apply("0-0@0>0")) == "0* 0* 0* 4"


def test_spinner_first_double_then_placement_applies_again() -> None:
    rules = Rules(spinner="first_double", matador_placement="upright")
    # [4|2][2|4]   ends: 2 4
    s = play(deal(rules, ["2-4 2-5 1-1", "0-0 6-6 4-4"]), "2-4", "0-0@0>0")
    # [4|2][0+0][2|4]   ends: 0* 0* 0* 4; 2-5 (not a double) stands upright.
    assert ends(s) == "0* 0* 0* 4"
    assert legal(s) == {f"2-5@{i}^" for i in range(4)} | {"draw"}


def test_spinner_first_double_double_nine_five_five() -> None:
    rules = Rules(set_max=9, spinner="first_double", matador_placement="branching")
    # Double-nine, S = 10. [2|3][3|2]   ends: 3 2
    s = play(deal(rules, ["3-2 1-1", "5-5 9-9"]), "2-3")
    assert ends(s) == "2 3"
    # 5-5 is a matador double: it becomes the spinner (not crosswise).
    assert legal(s) == {"5-5@0>5", "5-5@1>5", "draw"}
    assert ends(s.apply("5-5@1>5")) == "2 5* 5* 5*"


def test_spinner_first_double_laid_later_survives_from_view() -> None:
    # docs/rules.md, spinner "first_double": only the first double laid spins. A state
    # rebuilt from a seat's view (HandState.from_view, as a search samples worlds)
    # must know that the spinner is down when it was laid after the lead.
    rules = Rules(spinner="first_double")
    s = play(deal(rules, ["2-4 4-4 1-1", "3-3 5-6 6-6"]), "2-4", "3-3@1>3")
    # [4|2][2|4][3+3]   ends: 2 3* 3* 3*
    assert ends(s) == "2 3* 3* 3*"
    world = HandState.from_view(s.view(0), s.hands, s.boneyard)
    assert legal(world) == legal(s) == {f"4-4@{i}>4" for i in (1, 2, 3)}
    # The second double lies in line in both: one end, not three.
    assert ends(world.apply("4-4@2>4")) == ends(s.apply("4-4@2>4")) == "2 3* 4 3*"


def test_spinner_lead_double_cross() -> None:
    rules = Rules(lead_tile="double_not_blank", spinner="lead_double_cross")
    s = deal(rules, ["3-3 0-0 2-5 1-4 2-6 1-2 5-5", "4-5 4-6 0-4 1-1 6-6 3-4 1-3"])
    # The lead must be a double other than 0-0; no voluntary draw at the lead.
    assert legal(s) == {"3-3", "5-5"}
    # [3+3]   ends: 3* 3* 3* 3*
    s = s.apply("3-3")
    assert ends(s) == "3* 3* 3* 3*"
    assert legal(s) == (
        {f"4-5@{i}>5" for i in range(4)}
        | {f"4-6@{i}>6" for i in range(4)}
        | {f"0-4@{i}>0" for i in range(4)}
        | {f"3-4@{i}>{h}" for i in range(4) for h in (3, 4)}
    )
    # [3+3][4|5]   ends: 5 3* 3* 3*
    s = s.apply("4-5@0>5")
    assert ends(s) == "5 3* 3* 3*"
    # The cross must be full: 2-6 and 1-2 would fit the 5, but only the free sides take
    # tiles (matadors included).
    assert legal(s) == (
        {f"1-4@{i}>1" for i in (1, 2, 3)}
        | {f"2-5@{i}>{h}" for i in (1, 2, 3) for h in (2, 5)}
        | {f"0-0@{i}>0" for i in (1, 2, 3)}
    )
    # [3+3] with [4|5] [4|1] [4|6] on three sides   ends: 5 1 6 3*
    s = s.apply("1-4@1>1")
    s = s.apply("4-6@2>6")
    assert ends(s) == "5 1 6 3*"
    assert legal(s) == {"2-5@3>2", "2-5@3>5", "0-0@3>0", "draw"}
    # The cross is full: every arm is open.   ends: 5 1 6 2
    s = s.apply("2-5@3>2")
    assert ends(s) == "5 1 6 2"
    assert legal(s) == {"6-6@1>6", "1-1@2>1", "1-3@2>3"} | {
        f"3-4@{i}>{h}" for i in range(4) for h in (3, 4)
    }
    assert ends(s.apply("6-6@1>6")) == "5 6 6 2"
    # An (illegal) 0-0 lead is refused.
    with pytest.raises(IllegalMoveError):
        deal(rules, ["3-3 0-0", "1-1"]).apply("0-0")


def test_spinner_lead_double_cross_with_leiden_preset() -> None:
    rules = Rules.preset("leiden")
    s = deal(rules, ["4-4 0-0 2-5 1-6 1-2 0-1", "3-3 2-2 5-6 1-5 0-2 0-3"])
    # voluntary_draw "always": the leader may draw even before the lead.
    assert legal(s) == {"4-4", "draw"}
    s = s.apply("4-4")
    assert ends(s) == "4* 4* 4* 4*"
    # 3-3 links to a side (3 + 4 = 7) and lies in line (the spinner is the lead).
    assert legal(s) == {f"3-3@{i}>3" for i in range(4)} | {f"0-3@{i}>0" for i in range(4)} | {
        "draw"
    }
    assert ends(s.apply("3-3@1>3")) == "4* 3 4* 4*"


def test_spinner_side_showing_zero_takes_matadors_crosswise_under_crosswise_on_blank() -> None:
    # The 0-0 spinner's four sides each show 0: an end showing 0, where
    # crosswise_on_blank lays every matador crosswise, never in line.
    rules = Rules(spinner="first_double", matador_placement="crosswise_on_blank")
    s = play(deal(rules, ["0-0 1-1", "2-5 6-6"]), "0-0")
    assert ends(s) == "0* 0* 0* 0*"
    assert legal(s) == {f"2-5@{i}x" for i in range(4)} | {"draw"}
    s = s.apply("2-5@2x")
    assert ends(s) == "0* 0* _ 0*"


def test_lead_double_cross_branching_matador_fills_a_side() -> None:
    # A branching matador on a side fills that side; the two ends it makes (3b, 4b) stay
    # closed until a tile lies on each of the cross's four sides.
    rules = Rules(
        lead_tile="double_not_blank", spinner="lead_double_cross", matador_placement="branching"
    )
    s = play(deal(rules, ["3-3 2-3 2-2 6-6", "3-4 4-4 0-4 5-5"]), "3-3", "3-4@0x")
    assert ends(s) == "3b 4b 3* 3* 3*"
    # 2-3 would answer 4b, but no tile of seat 0 answers a free side (they need a 4):
    # only the draw.
    assert legal(s) == {"draw"}


def test_lead_double_cross_upright_matador_fills_a_side() -> None:
    # An upright matador on a side fills it; its needs-a-blank end waits for the full cross.
    rules = Rules(
        lead_tile="double_not_blank", spinner="lead_double_cross", matador_placement="upright"
    )
    s = play(deal(rules, ["3-3 0-5 4-6 1-1", "2-5 4-4 6-6 5-5"]), "3-3", "2-5@1^")
    assert ends(s) == "3* _ 3* 3*"
    # 0-5 would answer the needs-a-blank end, but only the free sides take tiles.
    assert legal(s) == {f"4-6@{i}>6" for i in (0, 2, 3)}


def test_only_when_stuck_counts_only_legal_placements_of_the_cross() -> None:
    # "No non-matador tile has a legal placement": 2-6 would link to the 5 of the
    # filled side, but that arm is closed until the cross is full, so 2-6 has none and
    # the matador 1-6 may be played (on the free sides).
    rules = Rules(
        lead_tile="double_not_blank",
        spinner="lead_double_cross",
        matador_only_when_stuck=True,
        voluntary_draw="never",
    )
    s = play(deal(rules, ["3-3 2-6 1-6 1-1", "4-5 6-6 5-5 0-5"]), "3-3", "4-5@0>5")
    assert ends(s) == "5 3* 3* 3*"
    assert legal(s) == inline_both("1-6", 1) | inline_both("1-6", 2) | inline_both("1-6", 3)


# -- lead_tile ------------------------------------------------------------------------------


def test_lead_tile_any() -> None:
    s = deal(Rules(), ["0-0 2-5 1-3 6-6 4-4", "1-1"])
    assert legal(s) == {"0-0", "2-5", "1-3", "6-6", "4-4"}
    # [6|6] a double lead is in line without a spinner   ends: 6 6
    assert ends(s.apply("6-6")) == "6 6"
    # A matador lead is in line too (never crosswise or upright).
    for placement in ("crosswise_choice", "crosswise_on_blank", "upright", "branching"):
        r = Rules(matador_placement=placement)
        t = deal(r, ["0-0 2-5 1-3", "1-1"])
        assert legal(t) == {"0-0", "2-5", "1-3"}
        assert ends(t.apply("2-5")) == "2 5"
        assert ends(t.apply("0-0")) == "0 0"


def test_lead_tile_highest_double() -> None:
    rules = Rules(lead_tile="highest_double")
    assert legal(deal(rules, ["2-2 5-5 1-3 0-0", "1-1"])) == {"5-5"}
    assert legal(deal(rules, ["0-0 1-3 2-4", "1-1"])) == {"0-0"}
    assert legal(deal(rules, ["1-3 2-4 5-6", "1-1"])) == {"1-3", "2-4", "5-6"}


def test_lead_tile_double_not_blank_draws_until_one() -> None:
    rules = Rules(lead_tile="double_not_blank")
    s = deal(rules, ["0-0 1-2", "5-6"], boneyard="1-3 4-4 2-6")
    assert legal(s) == {"draw"}
    s = s.apply("draw")
    assert hand_of(s, 0) == {"0-0", "1-2", "1-3"}
    assert legal(s) == {"draw"}
    s = s.apply("draw")
    assert legal(s) == {"4-4"}
    s = s.apply("4-4")
    assert ends(s) == "4 4"
    assert s.leader == 0


def test_lead_tile_double_not_blank_pass_and_no_lead() -> None:
    rules3 = Rules(players=3, lead_tile="double_not_blank", draw_rule="one")
    s = deal(rules3, ["0-0 1-2", "5-6 0-1", "2-4 3-5"], boneyard="1-3 0-2 0-3 4-4")
    assert s.leader == 0
    s = s.apply("draw")  # 1-3: still no double, the draw limit is reached
    assert legal(s) == {"pass"}
    s = s.apply("pass")
    # The lead passes to the left.
    assert (s.to_move, s.leader, s.lead_placed) == (1, 1, False)
    s = s.apply("draw")  # 0-2
    s = s.apply("pass")
    assert (s.to_move, s.leader) == (2, 2)
    s = s.apply("draw")  # 0-3
    assert s.outcome is None
    s = s.apply("pass")
    # A full round of passes without a lead (draws in it do not matter): no_lead.
    assert s.outcome is not None
    assert s.outcome.termination == Termination.NO_LEAD
    assert s.outcome.winner is None
    assert s.outcome.points == 0
    assert s.outcome.redeal
    assert s.dealt_leader == 0
    assert s.legal_moves() == ()


def test_lead_tile_double_not_blank_lead_passes_then_leads() -> None:
    rules = Rules(lead_tile="double_not_blank", draw_rule="none")
    s = deal(rules, ["0-1 1-2", "5-6 3-3"])
    assert legal(s) == {"pass"}
    s = s.apply("pass")
    assert legal(s) == {"3-3"}
    s = s.apply("3-3")
    assert (s.leader, s.dealt_leader, ends(s)) == (1, 0, "3 3")
    assert s.outcome is None
    # Passes after the lead are ordinary passes; the pass before the lead does not count
    # towards the block.
    assert legal(s) == {"pass"}
    s = s.apply("pass")
    assert (s.outcome, s.passes_in_row, s.to_move) == (None, 1, 1)
    s = s.apply("pass")
    assert s.outcome is not None and s.outcome.termination == Termination.BLOCKED


def test_lead_tile_double_not_blank_reserve_stops_the_draws() -> None:
    rules = Rules(lead_tile="double_not_blank")  # reserve 2
    s = deal(rules, ["0-0 1-2", "5-6 3-3"], rest=1, boneyard="4-4 2-2 6-6")
    s = s.apply("draw")  # 4-4; two left in the boneyard
    assert legal(s) == {"4-4"}
    t = deal(rules, ["0-0 1-2", "5-6 3-3"], rest=1, boneyard="1-3 2-2 6-6")
    t = t.apply("draw")
    assert legal(t) == {"pass"}


def test_lead_tile_double_not_blank_passes_survive_from_view() -> None:
    # docs/rules.md, lead_tile "double_not_blank": the leader without such a double
    # passes and the lead moves left; "a full round of such passes ... and the hand is
    # dealt again, led by the seat that was due". A state rebuilt from a seat's view
    # (HandState.from_view) must count the passes already made and know the seat due.
    rules = Rules(players=3, lead_tile="double_not_blank", draw_rule="none")
    s = play(deal(rules, ["0-1 1-2", "5-6 0-2", "2-4 3-3"], leader=1), "pass")
    assert (s.to_move, s.leader, s.dealt_leader) == (2, 2, 1)
    world = HandState.from_view(s.view(2), s.hands, s.boneyard)
    assert (world.to_move, world.leader, world.dealt_leader) == (2, 2, 1)
    assert legal(world) == legal(s) == {"3-3"}
    # Seat 2 holds 3-3 but the others pass on: it is one pass from the redeal.
    s = deal(rules, ["0-1 1-2", "5-6 0-2", "2-4 1-3"], leader=1)
    s = play(s, "pass", "pass")
    world = HandState.from_view(s.view(0), s.hands, s.boneyard)
    for state in (s, world):
        assert (state.to_move, state.dealt_leader) == (0, 1)
        over = state.apply("pass")
        assert over.outcome is not None and over.outcome.termination == Termination.NO_LEAD
        assert over.dealt_leader == 1


# -- first_leader ---------------------------------------------------------------------------


def test_first_leader_random() -> None:
    rules = Rules(players=3)
    leaders = {HandState.deal(rules, seed).leader for seed in range(60)}
    assert leaders == {0, 1, 2}
    for seed in range(5):
        assert HandState.deal(rules, seed).leader == HandState.deal(rules, seed).leader
    # An explicit leader overrides first_leader.
    assert HandState.deal(rules, 3, leader=2).to_move == 2


def _expected_first_leader(s: HandState) -> int:
    """RULES.md first_leader "highest_double", computed from the dealt hands."""
    dealt = [(t, seat) for seat, h in enumerate(s.hands) for t in h]
    doubles = [(t.low, seat) for t, seat in dealt if t.is_double]
    if doubles:
        return max(doubles)[1]
    return max((t.pips, t.high, seat) for t, seat in dealt)[2]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_first_leader_highest_double(players: int) -> None:
    rules = Rules(players=players, first_leader="highest_double")
    for seed in range(40):
        s = HandState.deal(rules, seed)
        assert s.leader == s.to_move == _expected_first_leader(s)


@pytest.mark.parametrize("preset", ["polish", "leiden"])
def test_first_leader_highest_double_leads_a_matchs_first_hand(preset: str) -> None:
    # MatchState.new deals the first hand itself: it must apply first_leader too.
    rules = Rules.preset(preset)
    assert rules.first_leader == "highest_double"
    for seed in range(25):
        hand = MatchState.new(rules, seed).hand
        assert hand.dealt_leader == hand.to_move == _expected_first_leader(hand), seed


def test_first_leader_highest_double_without_doubles() -> None:
    rules = Rules(first_leader="highest_double", hand_size=1)
    found = {"pips": 0, "tie": 0}
    for seed in range(3000):
        s = HandState.deal(rules, seed)
        tiles = [s.hand(0)[0], s.hand(1)[0]]
        if any(t.is_double for t in tiles):
            continue
        expected = _expected_first_leader(s)
        assert s.leader == expected, (seed, tiles, s.leader)
        if tiles[0].pips == tiles[1].pips:
            found["tie"] += 1
            # e.g. 3-6 beats 4-5: the higher high half.
            assert s.hand(s.leader)[0].high > s.hand(1 - s.leader)[0].high
        else:
            found["pips"] += 1
    assert found["pips"] > 0 and found["tie"] > 0


def test_first_leader_three_six_beats_four_five() -> None:
    rules = Rules(first_leader="highest_double", hand_size=1)
    # Find deals of exactly 3-6 and 4-5 (no double anywhere), both ways round.
    seen = set()
    for seed in range(20000):
        s = HandState.deal(rules, seed)
        pair = (str(s.hand(0)[0]), str(s.hand(1)[0]))
        if set(pair) == {"3-6", "4-5"}:
            assert str(s.hand(s.leader)[0]) == "3-6", (seed, pair)
            seen.add(pair)
            if len(seen) == 2:
                break
    assert len(seen) == 2


def test_first_leader_highest_double_double_blank_is_a_double() -> None:
    # docs/rules.md, first_leader "highest_double": whoever holds the highest double; the
    # highest tile by pips only "with no double dealt". 0-0 is a double (and a matador):
    # when it is the only double dealt, its holder leads, not the heaviest tile.
    rules = Rules(first_leader="highest_double", hand_size=2)
    holders = set()
    for seed in range(600):
        s = HandState.deal(rules, seed)
        doubles = [str(t) for h in s.hands for t in h if t.is_double]
        if doubles == ["0-0"]:
            assert "0-0" in hand_of(s, s.leader), (seed, s.hands)
            holders.add(s.leader)
    assert holders == {0, 1}


# -- draw_rule, boneyard_reserve ------------------------------------------------------------


def _stuck_position(rules: Rules, boneyard: str) -> HandState:
    # [4|2][2|4]   ends: 2 4; seat 1 holds 1-1 and 6-6 (no 5, no 3, no matador).
    return play(deal(rules, ["2-4 0-1 0-2", "1-1 6-6"], boneyard=boneyard), "2-4")


def test_draw_until_playable() -> None:
    s = _stuck_position(Rules(), "1-2 2-2 0-4 3-5")
    assert legal(s) == {"draw"}
    s = play(s, "draw", "draw", "draw")
    assert s.draws_this_turn == 3
    assert s.to_move == 1
    assert legal(s) == {"draw"}
    s = s.apply("draw")  # 3-5
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}


def test_draw_until_playable_has_no_limit_but_the_reserve() -> None:
    # docs/rules.md, draw_rule "until_playable": "with no limit (down to the reserve)".
    # [0|0]   ends: 0 0; only a matador fits, and seat 1's is the 13th tile of the boneyard.
    nothing = "1-1 1-2 1-3 1-4 1-5 2-2 2-3 2-4 2-6 3-3 3-5 3-6"
    s = deal(Rules(), ["0-0", "6-6"], boneyard=f"{nothing} 2-5 4-4 5-5", rest=0)
    s = s.apply("0-0")
    for drawn in range(12):
        assert (s.to_move, s.draws_this_turn, legal(s)) == (1, drawn, {"draw"})
        s = s.apply("draw")
    assert legal(s) == {"draw"}
    s = s.apply("draw")  # 2-5; the last two tiles are the reserve
    assert (s.draws_this_turn, s.boneyard_size) == (13, 2)
    assert legal(s) == inline_both("2-5", 0) | inline_both("2-5", 1)


def test_draw_up_to_two() -> None:
    s = _stuck_position(Rules(draw_rule="up_to_two"), "1-2 2-2 0-4 3-5")
    s = play(s, "draw", "draw")
    assert legal(s) == {"pass"}
    s = s.apply("pass")
    assert (s.to_move, s.passes_in_row, s.draws_this_turn) == (0, 1, 0)


def test_draw_up_to_two_stops_when_playable() -> None:
    s = _stuck_position(Rules(draw_rule="up_to_two"), "1-2 3-5 2-2")
    s = play(s, "draw", "draw")
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}


def test_draw_one() -> None:
    s = _stuck_position(Rules(draw_rule="one"), "1-2 2-2 0-4 3-5")
    s = s.apply("draw")
    assert legal(s) == {"pass"}


def test_draw_none() -> None:
    s = _stuck_position(Rules(draw_rule="none"), "1-2 2-2 0-4 3-5")
    assert legal(s) == {"pass"}
    # "none" forbids voluntary draws too, even before the lead.
    r = Rules(draw_rule="none", voluntary_draw="always")
    assert legal(deal(r, ["2-4 0-1", "1-1"])) == {"2-4", "0-1"}
    s = play(deal(r, ["2-4 0-1", "3-5 1-1"]), "2-4")
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}


def test_draw_limit_counts_voluntary_draws() -> None:
    rules = Rules(draw_rule="up_to_two", voluntary_draw="always")
    # [4|2][2|4]   ends: 2 4; seat 1 could play 3-5 but draws twice.
    s = play(deal(rules, ["2-4 0-1", "3-5 1-1"], boneyard="6-6 1-2 2-2"), "2-4")
    assert legal(s) == {"3-5@0>3", "3-5@1>5", "draw"}
    s = play(s, "draw", "draw")
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}
    # A voluntary draw followed by forced ones: the limit is shared.
    rules = Rules(draw_rule="up_to_two", voluntary_draw="only_matadors")
    s = play(deal(rules, ["2-4 0-1", "2-5 1-1"], boneyard="6-6 1-2 2-2"), "2-4")
    assert legal(s) == inline_both("2-5", 0) | inline_both("2-5", 1) | {"draw"}
    s = play(s, "draw", "draw")
    assert legal(s) == inline_both("2-5", 0) | inline_both("2-5", 1)


def test_draw_count_resets_each_turn() -> None:
    rules = Rules(draw_rule="one")
    # [4|2][2|4]   ends: 2 4
    s = play(deal(rules, ["2-4 0-1 6-6", "1-1 0-2"], boneyard="1-2 2-2 0-4 4-4 1-4"), "2-4")
    s = play(s, "draw", "pass")  # seat 1 draws 1-2
    assert (s.to_move, s.draws_this_turn) == (0, 0)
    assert legal(s) == {"draw"}
    s = play(s, "draw", "pass")  # seat 0 draws 2-2
    assert legal(s) == {"draw"}


def test_draw_count_starts_again_after_a_play() -> None:
    # docs/rules.md, draw_rule: how many tiles a player may draw "in one turn"; the
    # next player's turn starts with none drawn, whatever the last player drew.
    rules = Rules(draw_rule="one")
    # [4|2][2|4]   ends: 2 4; seat 1 draws 3-5 and plays it.
    s = deal(rules, ["2-4 0-1 6-6", "1-1 1-2"], boneyard="3-5 0-3 1-4 4-4 2-2")
    s = play(s, "2-4", "draw", "3-5@1>5")
    # [4|2][2|4][3|5]   ends: 2 5; seat 0 fits nothing and may draw its one tile.
    assert (ends(s), s.to_move, s.draws_this_turn) == ("2 5", 0, 0)
    assert legal(s) == {"draw"}
    s = s.apply("draw")  # 0-3
    assert (s.draws_this_turn, legal(s)) == (1, {"pass"})
    # The same after a play that follows draws under "up_to_two".
    rules = Rules(draw_rule="up_to_two")
    s = deal(rules, ["2-4 0-1 6-6", "1-1 1-2"], boneyard="0-2 3-5 1-4 4-4 2-2")
    s = play(s, "2-4", "draw", "draw", "3-5@1>5")
    assert (s.to_move, s.draws_this_turn, legal(s)) == (0, 0, {"draw"})
    s = play(s, "draw", "draw")
    assert legal(s) == {"pass"}


def test_boneyard_reserve_two() -> None:
    rules = Rules()
    s = deal(rules, ["2-4 0-1 0-2", "1-1 6-6"], boneyard="1-2 2-2 3-5", rest=0)
    s = s.apply("2-4")
    assert s.boneyard_size == 3
    s = s.apply("draw")  # 1-2; two left: never drawn
    assert s.boneyard_size == 2
    assert legal(s) == {"pass"}


def test_boneyard_reserve_zero() -> None:
    rules = Rules(boneyard_reserve=0)
    s = deal(rules, ["2-4 0-1 0-2", "1-1 6-6"], boneyard="1-2 2-2 5-6", rest=0)
    s = s.apply("2-4")
    s = play(s, "draw", "draw", "draw")
    assert s.boneyard_size == 0
    assert legal(s) == {"5-6@0>6"}
    t = deal(rules, ["2-4 0-1 0-2", "1-1 6-6"], boneyard="1-2 2-2 1-4", rest=0)
    t = play(t, "2-4", "draw", "draw", "draw")
    assert legal(t) == {"pass"}


def test_boneyard_reserve_larger() -> None:
    rules = Rules(boneyard_reserve=3)
    s = deal(rules, ["2-4 0-1 0-2", "1-1 6-6"], boneyard="1-2 2-2 3-5 0-5", rest=0)
    s = play(s, "2-4", "draw")
    assert legal(s) == {"pass"}


# -- voluntary_draw -------------------------------------------------------------------------


def _example5(rules: Rules, boneyard: str = "", rest: int | None = None) -> HandState:
    # RULES example 5: seat 0 holds only 1-6 and 5-5 and faces ends 0 and 0.
    # [0|0]   ends: 0 0
    return play(deal(rules, ["1-6 5-5", "0-0 2-3"], boneyard=boneyard, leader=1, rest=rest), "0-0")


def test_example5_only_matadors_may_draw() -> None:
    s = _example5(Rules())
    assert ends(s) == "0 0"
    assert legal(s) == inline_both("1-6", 0) | inline_both("1-6", 1) | {"draw"}


def test_example5_may_not_draw_must_play() -> None:
    s = _example5(Rules(voluntary_draw="never"))
    assert legal(s) == inline_both("1-6", 0) | inline_both("1-6", 1)
    # Only matadors, but the boneyard is at its reserve.
    s = _example5(Rules(), boneyard="1-2 2-2", rest=1)
    assert legal(s) == inline_both("1-6", 0) | inline_both("1-6", 1)
    # ... or the draw rule forbids drawing.
    s = _example5(Rules(draw_rule="none"))
    assert legal(s) == inline_both("1-6", 0) | inline_both("1-6", 1)


def test_only_matadors_not_with_a_regular_placement() -> None:
    # [4|2][2|4]   ends: 2 4; seat 1 holds 2-5 and 3-6 (3-6 fits the 4)
    s = play(deal(Rules(), ["2-4 1-1", "2-5 3-6"]), "2-4")
    assert legal(s) == inline_both("2-5", 0) | inline_both("2-5", 1) | {"3-6@1>6"}


def test_only_matadors_not_at_the_lead() -> None:
    s = deal(Rules(), ["0-0 2-5", "1-1"])
    assert legal(s) == {"0-0", "2-5"}


def test_voluntary_draw_always() -> None:
    rules = Rules(voluntary_draw="always")
    # Even before the lead.
    s = deal(rules, ["2-4 0-1", "3-5 1-1"])
    assert legal(s) == {"2-4", "0-1", "draw"}
    # [4|2][2|4]   ends: 2 4; with a regular placement available.
    s = play(s, "2-4")
    assert legal(s) == {"3-5@0>3", "3-5@1>5", "draw"}
    # A drawn tile joins the hand and the turn goes on.
    s = s.apply("draw")
    assert s.to_move == 1 and len(s.hand(1)) == 3


def test_voluntary_draw_never() -> None:
    s = play(deal(Rules(voluntary_draw="never"), ["2-4 1-1", "2-5 6-6"]), "2-4")
    assert legal(s) == inline_both("2-5", 0) | inline_both("2-5", 1)
    # A forced draw is still allowed when nothing fits.
    s = play(deal(Rules(voluntary_draw="never"), ["2-4 1-1", "1-2 6-6"]), "2-4")
    assert legal(s) == {"draw"}


# -- passes and the block -------------------------------------------------------------------


def test_pass_only_without_placement_and_draw() -> None:
    # [0|0]   ends: 0 0; no matador left in a hand, no drawing.
    s = play(deal(NO_DRAW, ["0-0 6-6", "5-5 4-6"]), "0-0")
    assert legal(s) == {"pass"}
    with pytest.raises(IllegalMoveError):
        s.apply("draw")
    t = play(deal(Rules(), ["2-4 1-1", "3-5 1-2"]), "2-4")
    with pytest.raises(IllegalMoveError):
        t.apply("pass")
    u = play(deal(Rules(), ["2-4 1-1", "1-2 6-6"]), "2-4")
    assert legal(u) == {"draw"}
    with pytest.raises(IllegalMoveError):
        u.apply("pass")


def test_blocked_after_n_passes_two_players() -> None:
    s = play(deal(NO_DRAW, ["0-0 6-6", "5-5 4-6"]), "0-0", "pass")
    assert s.outcome is None and s.passes_in_row == 1
    s = s.apply("pass")
    assert s.outcome is not None
    assert s.outcome.termination == Termination.BLOCKED
    assert s.legal_moves() == ()


def test_draws_reset_the_pass_count() -> None:
    # Three players, one draw a turn; the matadors lie below the reserve of three.
    rules = Rules(players=3, draw_rule="one", boneyard_reserve=3)
    s = deal(rules, ["0-0 6-6", "5-5 4-6", "4-4 3-6"], boneyard="1-1 2-2 1-6 2-5 3-4", rest=2)
    # [0|0]   ends: 0 0
    s = s.apply("0-0")
    assert legal(s) == {"draw"}
    s = s.apply("draw")  # seat 1 draws 1-1
    assert legal(s) == {"pass"}
    s = s.apply("pass")
    assert (s.passes_in_row, s.to_move) == (1, 2)
    s = s.apply("draw")  # seat 2 draws 2-2: the count of passes starts again
    assert s.passes_in_row == 0
    s = s.apply("pass")
    assert s.passes_in_row == 1
    assert legal(s) == {"pass"}  # seat 0: the boneyard is at its reserve
    s = s.apply("pass")
    assert (s.passes_in_row, s.outcome) == (2, None)  # three passes, but not in a row
    s = s.apply("pass")
    o = s.outcome
    assert o is not None
    assert o.termination == Termination.BLOCKED
    assert (o.winner, o.counts[:2]) == (0, (12, 22))


def test_blocked_three_players_three_passes() -> None:
    rules = Rules(players=3, draw_rule="none")
    hands = ["0-0 6-6", "5-5 4-6", "4-4 3-6"]
    s = play(deal(rules, hands), "0-0", "pass", "pass")
    assert s.outcome is None and s.passes_in_row == 2
    s = s.apply("pass")
    assert s.outcome is not None and s.outcome.termination == Termination.BLOCKED
    assert s.outcome.counts == (12, 20, 17)


def test_placement_resets_pass_count() -> None:
    rules = Rules(players=3, draw_rule="none")
    s = deal(rules, ["2-4 6-6 1-1", "0-1 0-6", "3-5 4-4 1-4"])
    # [4|2][2|4]   ends: 2 4
    s = s.apply("2-4")
    assert legal(s) == {"pass"}
    s = s.apply("pass")
    assert s.passes_in_row == 1
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}
    # [4|2][2|4][3|5]   ends: 2 5
    s = s.apply("3-5@1>5")
    assert (ends(s), s.passes_in_row) == ("2 5", 0)
    s = play(s, "pass", "pass")
    assert (s.passes_in_row, s.outcome) == (2, None)
    s = s.apply("pass")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points, o.counts) == (
        Termination.BLOCKED,
        1,
        14 + 13 - 7,
        (14, 7, 13),
    )


# -- scoring --------------------------------------------------------------------------------


def test_domino_scores_the_other_hands() -> None:
    s = deal(Rules(), ["2-4", "5-6 1-1"], rest=1)
    s = s.apply("2-4")
    o = s.outcome
    assert o is not None
    assert o.termination == Termination.DOMINO
    assert (o.winner, o.winning_side) == (0, 0)
    assert o.counts[0] == 0
    assert o.points == o.counts[1] == sum(t.pips for t in set_tiles(6)) - 6
    assert s.legal_moves() == ()
    with pytest.raises(IllegalMoveError):
        s.apply("pass")


def test_domino_three_players_even_with_a_zero_hand() -> None:
    rules = Rules(players=3, draw_rule="none")
    # Seat 0 goes out with its lead; seat 1 holds only 0-0 (count 0).
    s = deal(rules, ["2-4", "0-0", "5-6"], rest=2)
    s = s.apply("2-4")
    o = s.outcome
    assert o is not None and o.termination == Termination.DOMINO
    assert o.winner == 0
    assert o.counts[1] == 0
    assert o.points == o.counts[1] + o.counts[2] == o.counts[2]


def test_domino_after_play() -> None:
    # [4|2][2|4][3|5]   ends: 2 5 -> seat 1 goes out with 3-5
    s = play(deal(Rules(), ["2-4 1-1 6-6", "3-5"]), "2-4", "3-5@1>5")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points, o.counts) == (Termination.DOMINO, 1, 14, (14, 0))


def _blocked(rules: Rules, own: str, other: str) -> HandState:
    """Seat 0 leads 0-0; no matador in any hand; both pass: blocked."""
    s = play(deal(rules, ["0-0 " + own, other]), "0-0", "pass", "pass")
    assert s.outcome is not None
    return s


@pytest.mark.parametrize(
    ("scoring", "points"), [("others_minus_own", 8), ("others", 20), ("others_plus_own", 32)]
)
def test_example6_blocked_scoring(scoring: str, points: int) -> None:
    rules = Rules(draw_rule="none", blocked_scoring=scoring)
    # RULES example 6. [0|0] ends: 0 0; counts 12 (6-6) and 20 (5-5 4-6).
    o = _blocked(rules, "6-6", "5-5 4-6").outcome
    assert o is not None
    assert (o.termination, o.winner, o.winning_side, o.points, o.counts) == (
        Termination.BLOCKED,
        0,
        0,
        points,
        (12, 20),
    )
    assert o.side_points(2) == (points, 0)


@pytest.mark.parametrize(
    ("scoring", "points"), [("others_minus_own", 8), ("others", 20), ("others_plus_own", 32)]
)
def test_blocked_scoring_second_seat_wins(scoring: str, points: int) -> None:
    rules = Rules(draw_rule="none", blocked_scoring=scoring)
    o = _blocked(rules, "5-5 4-6", "6-6").outcome
    assert o is not None
    assert (o.winner, o.points, o.counts) == (1, points, (20, 12))


@pytest.mark.parametrize(
    ("scoring", "points"),
    [("others_minus_own", 10 + 12 - 5), ("others", 22), ("others_plus_own", 27)],
)
def test_blocked_scoring_three_players(scoring: str, points: int) -> None:
    rules = Rules(players=3, draw_rule="none", blocked_scoring=scoring)
    # [0|0]   ends: 0 0; counts 10, 5, 12 -> seat 1 wins
    s = deal(rules, ["0-0 4-6", "2-3", "5-5 1-1"])
    s = play(s, "0-0", "pass", "pass", "pass")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points, o.counts) == (
        Termination.BLOCKED,
        1,
        points,
        (10, 5, 12),
    )


@pytest.mark.parametrize("tie", ["void", "redeal"])
def test_example6_tie(tie: str) -> None:
    rules = Rules(draw_rule="none", tie=tie)
    # Counts 12 and 12.
    o = _blocked(rules, "6-6", "5-6 0-1").outcome
    assert o is not None
    expected = Termination.VOID_TIE if tie == "void" else Termination.REDEAL_TIE
    assert (o.termination, o.winner, o.winning_side, o.points, o.counts) == (
        expected,
        None,
        None,
        0,
        (12, 12),
    )
    assert o.side_points(2) == (0, 0)
    assert o.redeal is (tie == "redeal")


def test_tie_three_players_lowest_shared() -> None:
    rules = Rules(players=3, draw_rule="none")
    # counts 5, 5, 12: the two lowest tie -> void.
    s = play(deal(rules, ["0-0 1-4", "2-3", "5-5 1-1"]), "0-0", "pass", "pass", "pass")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points, o.counts) == (
        Termination.VOID_TIE,
        None,
        0,
        (5, 5, 12),
    )
    # A tie that is not for the lowest count is no tie: counts 3, 8, 8.
    s = play(deal(rules, ["0-0 1-2", "2-6", "3-5"]), "0-0", "pass", "pass", "pass")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points) == (Termination.BLOCKED, 0, 8 + 8 - 3)


# -- teams ----------------------------------------------------------------------------------

TEAMS = Rules(players=4, teams=True, draw_rule="none")


def test_teams_domino_by_partner_scores_opponents_only() -> None:
    # Seat 2 goes out; its partner seat 0 still holds tiles that do not count.
    # [4|2][2|4][3|5]   ends: 2 5
    s = deal(TEAMS, ["2-4 6-6", "1-1 1-2", "3-5", "4-4 0-1"], rest=0)
    s = play(s, "2-4", "pass", "3-5@1>5")
    o = s.outcome
    assert o is not None
    assert o.termination == Termination.DOMINO
    assert (o.winner, o.winning_side) == (2, 0)
    assert o.counts[1:] == (5, 0, 9)
    assert o.points == 5 + 9
    assert o.side_points(2) == (14, 0)


def test_teams_domino_by_second_team() -> None:
    s = deal(TEAMS, ["2-4 6-6 5-5", "3-5", "1-1", "4-4 0-1"], rest=2)
    s = play(s, "2-4", "3-5@1>5")
    o = s.outcome
    assert o is not None
    assert (o.winner, o.winning_side) == (1, 1)
    assert o.points == o.counts[0] + o.counts[2]
    assert o.side_points(2) == (0, o.points)


def test_teams_block_decided_on_team_counts() -> None:
    rules = Rules(players=4, teams=True, draw_rule="none")
    # [0|0]   ends: 0 0; counts 5, 3, 6, 10: seat 1 holds the lowest hand, but team 0
    # (5 + 6 = 11) beats team 1 (3 + 10 = 13). Seat 0 is the partner with the lower count.
    s = deal(rules, ["0-0 1-4", "1-2", "2-4", "4-6"])
    s = play(s, "0-0", "pass", "pass", "pass", "pass")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.winning_side, o.counts) == (
        Termination.BLOCKED,
        0,
        0,
        (5, 3, 6, 10),
    )
    assert o.points == 13 - 11
    assert o.side_points(2) == (2, 0)
    r2 = rules.replace(blocked_scoring="others_plus_own")
    s = play(deal(r2, ["0-0 1-4", "1-2", "2-4", "4-6"]), "0-0", "pass", "pass", "pass", "pass")
    assert s.outcome is not None and s.outcome.points == 24
    # "others" with teams: the other team's count, 13.
    r3 = rules.replace(blocked_scoring="others")
    s = play(deal(r3, ["0-0 1-4", "1-2", "2-4", "4-6"]), "0-0", "pass", "pass", "pass", "pass")
    assert s.outcome is not None and (s.outcome.winning_side, s.outcome.points) == (0, 13)


def test_teams_block_partner_with_lower_count_is_winner() -> None:
    # [0|0]   ends: 0 0; seat 0: 9 (3-6 after leading 0-0), seat 2: 4 (1-3): team 0 = 13;
    # seat 1: 10, seat 3: 8 -> team 1 = 18. Winner: seat 2 (lower count of the pair).
    s = deal(TEAMS, ["0-0 3-6", "4-6", "1-3", "2-6"])
    s = play(s, "0-0", "pass", "pass", "pass", "pass")
    o = s.outcome
    assert o is not None
    assert (o.winner, o.winning_side, o.points, o.counts) == (2, 0, 5, (9, 10, 4, 8))


def test_teams_block_partners_with_equal_counts_lowest_seat() -> None:
    # Seats 0 and 2 both count 4 (team 0 = 8 against 18): the tie goes to seat 0.
    s = deal(TEAMS, ["0-0 1-3", "4-6", "2-2", "2-6"])
    s = play(s, "0-0", "pass", "pass", "pass", "pass")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.winning_side, o.points) == (
        Termination.BLOCKED,
        0,
        0,
        10,
    )


def test_teams_block_tie_on_team_counts() -> None:
    # team 0: 9 + 4 = 13, team 1: 5 + 8 = 13: a tie although no two seats tie.
    s = deal(TEAMS, ["0-0 3-6", "2-3", "1-3", "2-6"])
    s = play(s, "0-0", "pass", "pass", "pass", "pass")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points) == (Termination.VOID_TIE, None, 0)


# -- hand_size ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand_size", "sizes", "boneyard"),
    [("by_players", (6, 6, 6), 10), (4, (4, 4, 4), 16), ("all", (10, 9, 9), 0)],
)
def test_hand_size_three_players(
    hand_size: HandSize, sizes: tuple[int, ...], boneyard: int
) -> None:
    rules = Rules(players=3, hand_size=hand_size)
    for seed in range(5):
        s = HandState.deal(rules, seed)
        assert s.hand_sizes == sizes
        assert s.boneyard_size == boneyard
        every = [t for h in s.hands for t in h] + list(s.boneyard)
        assert sorted(every) == sorted(set_tiles(6))


@pytest.mark.parametrize(
    ("players", "hand_size", "sizes"),
    [
        (2, "by_players", (7, 7)),
        (4, "by_players", (5, 5, 5, 5)),
        (2, 14, (14, 14)),
        (4, 7, (7, 7, 7, 7)),
        (3, "all", (10, 9, 9)),
        (5, "all", (6, 6, 6, 5, 5)),
    ],
)
def test_hand_size_tiles_per_seat(
    players: int, hand_size: HandSize, sizes: tuple[int, ...]
) -> None:
    # docs/rules.md, hand_size: "7/6/5 tiles for 2/3/4 players; a fixed number each; or
    # the whole set dealt one tile at a time from seat 0, no boneyard (lower seats get the
    # odd tiles)". A fixed number may deal the whole set too (14 each for two players).
    rules = Rules(players=players, hand_size=hand_size)
    assert rules.tiles_per_seat == sizes
    assert rules.boneyard_size == 28 - sum(sizes)
    for seed in range(3):
        s = HandState.deal(rules, seed)
        assert (s.hand_sizes, s.boneyard_size) == (sizes, 28 - sum(sizes))


def test_hand_size_all_never_draws() -> None:
    rules = Rules(players=3, hand_size="all", boneyard_reserve=0)
    s = HandState.deal(rules, 1)
    s = s.apply(s.legal_moves()[0])
    assert "draw" not in legal(s)


def test_players_as_many_as_the_set_has_tiles() -> None:
    # docs/rules.md, players: more than four "with a hand_size of a number or 'all', as
    # far as the set has tiles": 28 seats with double-six, one tile each, no boneyard.
    tiles = [str(t) for t in set_tiles(6)]
    for hand_size in (1, "all"):
        rules = Rules(players=28, hand_size=hand_size)
        assert (rules.tiles_per_seat, rules.boneyard_size) == ((1,) * 28, 0)
    rules = Rules(players=28, hand_size="all")
    # Seat 0 leads its only tile, 2-4: domino, scoring every other seat's pips.
    s = deal(rules, ["2-4", *(t for t in tiles if t != "2-4")])
    s = s.apply("2-4")
    o = s.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points) == (
        Termination.DOMINO,
        0,
        sum(t.pips for t in set_tiles(6)) - 6,
    )
    with pytest.raises(RulesError):
        Rules(players=29, hand_size="all")


# -- bigger sets ----------------------------------------------------------------------------


def test_double_nine_matadors_and_link_sum() -> None:
    rules = Rules.preset("double_nine")
    assert rules.link_sum == 10
    # [5|0][0|5]   ends: 0 5
    s = deal(rules, ["0-5 8-8", "0-0 1-9 2-8 3-7 4-6 5-5 1-2 5-6 9-9"])
    s = s.apply("0-5")
    assert ends(s) == "0 5"
    matadors = ["1-9", "2-8", "3-7", "4-6"]
    expected = {"0-0@0>0", "0-0@1>0", "5-5@0>5", "5-5@1>5"}
    for m in matadors:
        expected |= inline_both(m, 0) | inline_both(m, 1)
    # A 5 links to the 5 (5 + 5 = 10): 5-6 shows 6; 1-2 and 9-9 fit nowhere.
    expected |= {"5-6@1>6"}
    assert legal(s) == expected
    assert ends(s.apply("5-5@0>5")) == "5 5"
    assert ends(s.apply("1-9@1>9")) == "0 9"


def test_double_nine_five_five_crosswise() -> None:
    # docs/rules.md, "How matadors lie": under "crosswise_choice" any matador but 0-0 may
    # lie across, under "crosswise_on_blank" every matador lies across an end showing
    # 0; in double-nine that includes the double matador 5-5 (5 + 5 = 10).
    rules = Rules(set_max=9, matador_placement="crosswise_choice")
    # [3|2][2|3]   ends: 2 3 (they need an 8 and a 7)
    s = play(deal(rules, ["2-3 5-6 9-9", "5-5 1-1"]), "2-3")
    assert legal(s) == {"5-5@0x", "5-5@1x", "5-5@0>5", "5-5@1>5", "draw"}
    # [3|2][2|3][5/5]   ends: 2 5/5; a 5 links to it (5 + 5 = 10)
    s = s.apply("5-5@1x")
    assert ends(s) == "2 5/5"
    assert legal(s) == {"5-6@1>6"}
    rules = Rules(set_max=9, matador_placement="crosswise_on_blank")
    # [3|0][0|3]   ends: 0 3; on the 0 the matador lies across, on the 3 in line.
    s = play(deal(rules, ["0-3 9-9", "5-5 1-1"]), "0-3")
    assert legal(s) == {"5-5@0x", "5-5@1>5", "draw"}
    assert ends(s.apply("5-5@0x")) == "_ 3"


def test_double_twelve_matadors_and_link_sum() -> None:
    rules = Rules.preset("double_twelve")
    assert rules.link_sum == 13
    # [4|12][12|4]   ends: 4 12
    s = deal(rules, ["4-12 8-8", "9-10 1-1 0-9 6-7 5-8 3-4"])
    s = s.apply("4-12")
    assert ends(s) == "4 12"
    # End 4 needs a 9, end 12 needs a 1; 6-7 and 5-8 are matadors (13 pips).
    assert legal(s) == (
        {"9-10@0>10", "0-9@0>0", "1-1@1>1"}
        | inline_both("6-7", 0)
        | inline_both("6-7", 1)
        | inline_both("5-8", 0)
        | inline_both("5-8", 1)
    )


def test_double_twelve_zero_end() -> None:
    rules = Rules(set_max=12)
    s = play(deal(rules, ["0-12 8-8", "1-12 0-11 12-12 2-11 11-11"]), "0-12")
    assert ends(s) == "0 12"
    assert legal(s) == (
        inline_both("1-12", 0)
        | inline_both("1-12", 1)
        | inline_both("2-11", 0)
        | inline_both("2-11", 1)
        | {"draw"}
    )


# -- illegal moves --------------------------------------------------------------------------


def test_illegal_move_error_names_move_and_alternatives() -> None:
    # [4|2][2|4]   ends: 2 4
    s = play(deal(Rules(), ["2-4 1-1", "3-5 6-6"]), "2-4")
    before = (ends(s), s.hand_sizes, s.to_move, s.boneyard_size, s.n_actions)
    with pytest.raises(IllegalMoveError) as exc:
        s.apply("6-6@0>6")
    err = exc.value
    assert isinstance(err, ValueError)
    msg = str(err)
    assert "6-6@0>6" in msg
    assert "3-5@0>3" in msg and "3-5@1>5" in msg
    assert {str(m) for m in err.legal} == {"3-5@0>3", "3-5@1>5"}
    assert err.seat == 1
    # The state is unchanged and usable.
    assert (ends(s), s.hand_sizes, s.to_move, s.boneyard_size, s.n_actions) == before
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}
    s = s.apply("3-5@0>3")
    assert ends(s) == "3 4"


@pytest.mark.parametrize("bad", ["1-1@0>1", "3-5", "draw", "pass", "3-5@2>5", "2-4@0>2"])
def test_illegal_moves_raise(bad: str) -> None:
    s = play(deal(Rules(), ["2-4 1-1", "3-5 6-6"]), "2-4")
    with pytest.raises(IllegalMoveError) as exc:
        s.apply(bad)
    assert bad in str(exc.value)
    assert legal(s) == {"3-5@0>3", "3-5@1>5"}


def test_illegal_lead() -> None:
    s = deal(Rules(lead_tile="highest_double"), ["2-2 5-5 1-3", "1-1"])
    with pytest.raises(IllegalMoveError) as exc:
        s.apply("2-2")
    assert "5-5" in str(exc.value)
    assert ends(s.apply("5-5")) == "5 5"
