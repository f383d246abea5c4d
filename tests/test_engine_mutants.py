"""What the rules engine promises that no other fast test held it to (found by mutation
testing ``matador_env/engine``): the clear message of each refused move (a lead naming
an open end, an outward half not the tile's, a draw or pass carrying anything, a tile
not held, a second lead, an open end past the last, a draw where none is allowed, any
move once the match is over), each refusal leaving the hand as it was; a view's
drawable tiles above the reserve; the worlds ``HandState.from_view`` refuses and the
deal it cannot give; states that differ only in the boneyard order; the hand a match
refuses; the histories ``public_view`` refuses; the bounds of the text forms; and the
rules text's flags and digits. Every position is a scripted deal (tests/scripted.py) a
few moves long, so the whole file runs in about a second."""

from __future__ import annotations

import pytest

from matador_env.engine import (
    HandState,
    HistoryError,
    IllegalMoveError,
    Move,
    Rules,
    RulesError,
    Tile,
    public_view,
)
from matador_env.engine.rules import rules_differences
from matador_env.engine.tiles import MAX_END, MAX_HALF, MoveParseError
from tests.scripted import deal
from tests.test_engine_inputs_state import _snapshot
from tests.test_match import match_with
from tests.test_scripted_rules import play


def _after_lead() -> HandState:
    # [4|2][2|4]   ends: 2 4; seat 1 holds 3-5 and 6-6 and may play 3-5 on either end.
    return play(deal(Rules(), ["2-4 1-1", "3-5 6-6"]), "2-4")


def _refusal(s: HandState, move: Move | str) -> str:
    """The message of ``move``'s refusal, checking that ``s`` is left as it was."""
    before = _snapshot(s)
    with pytest.raises(IllegalMoveError) as exc:
        s.apply(move)
    assert _snapshot(s) == before
    return str(exc.value)


# -- a refused move says what is wrong with it and leaves the hand as it was --------------


def test_a_lead_that_names_an_open_end_is_refused_as_such() -> None:
    # A Move built field by field may hold what no lead holds; the message must say so
    # rather than blame the open end it names.
    msg = _refusal(_after_lead(), Move("play", Tile(3, 5), 0, None, "lead"))
    assert "a lead names no open end or outward half" in msg


def test_an_outward_half_that_is_not_the_tiles_is_refused_naming_it() -> None:
    msg = _refusal(_after_lead(), Move("play", Tile(3, 5), 0, 4, "inline"))
    assert "the outward half must be a half of 3-5, got 4" in msg


@pytest.mark.parametrize(
    ("move", "name"),
    [
        (Move("draw", Tile(3, 5)), "draw"),
        (Move("draw", None, None, None, "inline"), "draw"),
        (Move("pass", None, 0), "pass"),
        (Move("pass", None, None, 3), "pass"),
    ],
)
def test_a_draw_or_pass_carrying_anything_is_refused_naming_what_it_carries(
    move: Move, name: str
) -> None:
    msg = _refusal(_after_lead(), move)
    assert f"a {name} carries no tile, open end, outward half or mode" in msg


def test_a_tile_the_seat_does_not_hold_is_refused_as_not_held() -> None:
    # 1-1 is seat 0's: seat 1, to move, is told it does not hold it, not that it
    # does not fit (it would not fit either).
    assert "seat 1 does not hold 1-1" in _refusal(_after_lead(), "1-1@0>1")


def test_a_second_lead_is_refused_asking_for_an_open_end() -> None:
    msg = _refusal(_after_lead(), "3-5")
    assert "the lead has been placed already; name an open end" in msg


def test_a_placement_before_the_lead_is_refused_asking_for_a_lead() -> None:
    s = deal(Rules(), ["2-4 1-1", "3-5 6-6"])
    assert "no tile is on the table yet: lead a tile" in _refusal(s, "2-4@0>2")


def test_an_open_end_past_the_last_is_refused_listing_the_open_ends() -> None:
    # Two open ends (0 and 1): end 2 is one past the last.
    msg = _refusal(_after_lead(), "3-5@2>5")
    assert "there is no open end 2 (open ends: 0-1)" in msg


def test_a_draw_where_none_is_allowed_is_refused_as_a_draw() -> None:
    # Seat 1 can play and the default voluntary_draw lets it draw only instead of a
    # matador: the draw is refused as a draw, not as a pass.
    assert "drawing is not allowed now" in _refusal(_after_lead(), "draw")
    assert "passing is allowed only when no placement or draw" in _refusal(_after_lead(), "pass")


# -- a seat's view ------------------------------------------------------------------------


@pytest.mark.parametrize(("reserve", "drawable"), [(0, 3), (2, 1), (3, 0), (5, 0)])
def test_a_view_counts_only_the_tiles_above_the_reserve_as_drawable(
    reserve: int, drawable: int
) -> None:
    # RULES.md rule 7: a draw never takes the boneyard below boneyard_reserve, so of
    # three boneyard tiles a view offers only those above it (never fewer than none).
    s = deal(Rules(boneyard_reserve=reserve), ["2-4 0-1", "1-1 6-6"], "1-2 2-2 3-5", rest=0)
    view = s.view(1)
    assert (view.boneyard_size, view.drawable) == (3, drawable)


def test_a_world_with_other_hand_sizes_than_the_view_is_refused() -> None:
    # Three seats: a tile moved from seat 1's hand to seat 2's keeps every tile once and
    # the viewer's hand as it is, but the view shows other hand sizes.
    rules = Rules(players=3)
    s = play(deal(rules, ["2-4 1-1", "3-5 6-6 1-2", "0-6 4-4"], rest=0), "2-4")
    hands = [list(h) for h in s.hands]
    hands[2].append(hands[1].pop())
    with pytest.raises(ValueError, match=r"hand sizes \(\d+, 2, 3\) differ from the view's"):
        HandState.from_view(s.view(0), hands, s.boneyard)


# -- equality -----------------------------------------------------------------------------


def test_hands_that_differ_only_in_the_boneyard_order_are_not_equal() -> None:
    # The boneyard order decides every later draw: states that would play on
    # differently are different states.
    first = deal(Rules(), ["2-4 0-1", "1-1 6-6"], "1-2 2-2 3-5", rest=0)
    second = deal(Rules(), ["2-4 0-1", "1-1 6-6"], "2-2 1-2 3-5", rest=0)
    assert first.hands == second.hands and first.boneyard != second.boneyard
    assert first != second
    assert first == deal(Rules(), ["2-4 0-1", "1-1 6-6"], "1-2 2-2 3-5", rest=0)


# -- rules validation ---------------------------------------------------------------------


def test_a_flag_in_the_rules_text_reads_one_and_zero_as_true_and_false() -> None:
    # Rules.from_text reads a flag written True/true/1 or False/false/0, as its docstring
    # says (a --rules KEY=VALUE gives it), and refuses any other word, naming them.
    four = Rules(players=4, teams=True)
    for word in ("True", "true", "1"):
        assert Rules.from_text(f"players=4 teams={word}") == four
    for word in ("False", "false", "0"):
        assert Rules.from_text(f"matador_as_regular={word}") == Rules()
    with pytest.raises(RulesError, match=r"allowed: true or false \(True, 1; False, 0\)") as exc:
        Rules.from_text("players=4 teams=yes")
    assert exc.value.field == "teams"


# -- the text forms' bounds ---------------------------------------------------------------


def test_a_tile_half_may_be_up_to_max_half_and_no_more() -> None:
    # tiles.MAX_HALF (99): the largest half the text forms write in two digits.
    assert Tile.of(MAX_HALF, 0) == Tile(0, MAX_HALF)
    assert Tile.parse(f"{MAX_HALF}-{MAX_HALF}") == Tile(MAX_HALF, MAX_HALF)
    with pytest.raises(MoveParseError, match=f"a tile half must be from 0 to {MAX_HALF}"):
        Tile.of(0, MAX_HALF + 1)


def test_a_moves_open_end_may_be_up_to_max_end_and_no_more() -> None:
    # tiles.MAX_END (99): the highest open end a move's text form writes.
    for move in (Move.cross(Tile(1, 6), MAX_END), Move.parse(f"1-6@{MAX_END}x")):
        assert move.end == MAX_END
    assert Move.inline(Tile(1, 6), MAX_END, 6).end == MAX_END
    with pytest.raises(MoveParseError, match=f"open end must be .* from 0 to {MAX_END}"):
        Move.upright(Tile(1, 6), MAX_END + 1)


# -- a match ------------------------------------------------------------------------------


def test_a_move_after_the_match_is_over_is_refused_as_such() -> None:
    # The hand is over too, but its refusal ("call next_hand()") would send the caller
    # to next_hand, which refuses a finished match: the match's own refusal must come.
    rules = Rules(target_score=1)
    m = match_with(rules, deal(rules, ["2-4", "6-6 5-5"])).apply("2-4")
    assert m.is_over and m.winners == (0,)
    with pytest.raises(IllegalMoveError, match="the match is over") as exc:
        m.apply("pass")
    assert "next_hand" not in str(exc.value)
    assert (m.totals, m.hand.is_over, m.is_over) == ((22, 0), True, True)


def test_a_match_refuses_a_hand_dealt_under_other_rules_naming_the_field() -> None:
    # Same players, another target: the hand's rules are not the match's all the same.
    hand = deal(Rules(target_score=50), ["2-4", "6-6 5-5"])
    with pytest.raises(
        ValueError, match=r"other rules than the match's: target_score=50 \(rules: 100\)"
    ):
        match_with(Rules(), hand)


# -- a view rebuilt from the public history (public_view) ---------------------------------

# Seat 0 leads 6-6 and seat 1 lays 1-6 on it; seat 0 then holds these six tiles.
_OPENING = deal(Rules(), ["6-6 5-5 4-4 0-1 0-2 0-3 0-4", "1-6 1-1 2-2 3-3 1-2 1-3 1-4"])
_HISTORY = [(0, "6-6"), (1, "1-6@0>1")]
_HAND0 = ["5-5", "4-4", "0-1", "0-2", "0-3", "0-4"]


def test_a_hand_smaller_than_the_history_leaves_is_refused() -> None:
    assert public_view(Rules(), 0, _HAND0, _HISTORY, 0) == play(_OPENING, "6-6", "1-6@0>1").view(0)
    with pytest.raises(HistoryError, match="holds 5 tiles, but the history leaves it 6") as exc:
        public_view(Rules(), 0, _HAND0[:-1], _HISTORY, 0)
    assert exc.value.field == "hand"


def test_a_draw_past_the_turns_limit_is_refused_naming_the_limit() -> None:
    # draw_rule "one": a second draw in a turn is refused for the limit, not for the
    # reserve (the boneyard holds plenty).
    rules = Rules(draw_rule="one")
    history = [(0, "6-6"), (1, "draw"), (1, "draw")]
    with pytest.raises(HistoryError, match="1 drawn this turn, the limit is 1") as exc:
        public_view(rules, 0, _HAND0, history, 0)
    assert exc.value.index == 2


def test_bad_scores_are_refused_as_a_history_error_naming_scores() -> None:
    # Two seats, three totals: refused before any replay, with the field named.
    with pytest.raises(HistoryError, match="2 match totals") as exc:
        public_view(Rules(), 0, _HAND0, _HISTORY, 0, scores=(1, 2, 3))
    assert exc.value.field == "scores"


# -- helpers around the rules and the hand ---------------------------------------------------


def test_a_state_rebuilt_from_a_view_after_a_draw_cannot_give_its_deal() -> None:
    # from_view keeps only the undrawn boneyard: the tile drawn is unknown, so dealt()
    # must say so rather than fail on the missing tile.
    s = play(deal(Rules(), ["2-4 0-1 0-2", "1-1 6-6"], "1-2 2-2 3-5", rest=0), "2-4", "draw")
    world = HandState.from_view(s.view(1), s.hands, s.boneyard)
    with pytest.raises(ValueError, match="cannot reconstruct the deal: .* 1 drawn tiles"):
        world.dealt()
    assert s.dealt() == deal(Rules(), ["2-4 0-1 0-2", "1-1 6-6"], "1-2 2-2 3-5", rest=0)


def test_a_refused_moves_long_text_is_cut_to_eighty_characters() -> None:
    # A stand-in whose text is long must not flood the message: 77 characters and "...".
    move = Move("play", "a" * 100, 0, 1, "inline")  # type: ignore[arg-type]
    msg = _refusal(_after_lead(), move)
    assert f"illegal move '{'a' * 77}...'" in msg


def test_rules_differences_tell_a_flag_from_the_number_one() -> None:
    # A saved True is not the setting 1, though Python compares them equal.
    assert rules_differences({"players": True}, {"players": 1}, ("saved", "now")) == [
        "players: saved True, now 1"
    ]
    assert rules_differences({"players": 2}, {"players": 2}, ("saved", "now")) == []


@pytest.mark.parametrize("raw", ["three", "3.0", "+3", "\uff13"])
def test_an_integer_in_the_rules_text_must_be_written_in_the_digits_0_to_9(raw: str) -> None:
    with pytest.raises(RulesError, match="not a number in the digits 0-9") as exc:
        Rules.from_text(f"players={raw}")
    assert exc.value.field == "players"
