"""MatchState: leader rotation, redeals, match end and team totals (RULES.md rules 9-11,
options next_leader, tie, match_end, lead_tile "double_not_blank").

Scripted checks build a MatchState directly around a ``HandState.from_deal`` hand;
policy runs play whole matches and check every transition against the rules as
RULES.md states them (computed here independently of the engine).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

import pytest

from matador_env.engine import (
    HandState,
    IllegalMoveError,
    MatchState,
    Rules,
    Termination,
    derive_seed,
)
from tests.scripted import deal

# -- helpers --------------------------------------------------------------------------------


def match_with(
    rules: Rules,
    hand: HandState,
    totals: Sequence[int] | None = None,
    leads: Sequence[int] | None = None,
    armed: bool = False,
) -> MatchState:
    return MatchState(
        rules=rules,
        seed=11,
        hand=hand,
        totals=tuple(totals) if totals is not None else (0,) * rules.sides,
        deals=1,
        leads=tuple(leads) if leads is not None else (0,) * rules.players,
        outcomes=(),
        armed=armed,
    )


def play(m: MatchState, *moves: str) -> MatchState:
    for mv in moves:
        m = m.apply(mv)
    return m


def check_next_hand(m: MatchState, leader: int) -> MatchState:
    """next_leader() and the hand dealt by next_hand() agree with ``leader``."""
    assert m.next_leader() == leader
    nxt = m.next_hand()
    assert nxt.deals == m.deals + 1
    assert nxt.hand.dealt_leader == leader
    assert nxt.hand.to_move == leader
    assert nxt.hand.n_actions == 0
    assert nxt.hand.seed == derive_seed(m.seed, m.deals)
    assert nxt.totals == m.totals and nxt.leads == m.leads
    return nxt


# -- next_leader "rotate" -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hands", "leader", "points", "expected"),
    [
        (["6-6", "2-4"], 1, 12, 0),
        (["1-1", "2-4", "6-6"], 1, 14, 2),
        (["6-6", "1-1", "2-4"], 2, 14, 0),
    ],
)
def test_rotate_left_of_the_last_leader(
    hands: list[str], leader: int, points: int, expected: int
) -> None:
    players = len(hands)
    rules = Rules(players=players, next_leader="rotate")
    m = match_with(rules, deal(rules, hands, leader=leader))
    m = m.apply("2-4")  # domino at once by the leader
    o = m.hand.outcome
    assert o is not None and o.termination == Termination.DOMINO and o.winner == leader
    assert m.leads == tuple(1 if s == leader else 0 for s in range(players))
    assert m.totals == tuple(points if s == leader else 0 for s in range(players))
    assert m.outcomes == (o,)
    check_next_hand(m, expected)


def test_rotate_follows_the_seat_that_placed_the_lead() -> None:
    # lead_tile "double_not_blank": seat 0 is due to lead but passes; seat 1 leads.
    rules = Rules(lead_tile="double_not_blank", draw_rule="none", players=3)
    hand = deal(rules, ["1-2 0-6", "3-3", "5-5 1-4"])
    m = play(match_with(rules, hand), "pass", "3-3")
    assert m.hand.outcome is not None and m.hand.outcome.winner == 1
    assert m.leads == (0, 1, 0)
    check_next_hand(m, 2)


# -- next_leader "loser" --------------------------------------------------------------------


def test_loser_two_players() -> None:
    rules = Rules(next_leader="loser")
    m = match_with(rules, deal(rules, ["6-6", "2-4"], leader=1)).apply("2-4")
    check_next_hand(m, 0)
    m = match_with(rules, deal(rules, ["2-4", "6-6"], leader=0)).apply("2-4")
    check_next_hand(m, 1)


@pytest.mark.parametrize(
    ("hands", "expected"),
    [
        (["2-4", "6-6", "5-6 1-1"], 2),  # counts 12 and 13: the higher loser
        (["2-4", "6-6", "5-5 1-1"], 1),  # counts 12 and 12: ties go to the lowest seat
        (["2-4", "5-6 1-1", "6-6"], 1),
    ],
)
def test_loser_three_players_highest_count_among_losers(hands: list[str], expected: int) -> None:
    rules = Rules(players=3, next_leader="loser")
    m = match_with(rules, deal(rules, hands)).apply("2-4")
    check_next_hand(m, expected)


def test_loser_three_players_block_winner_is_not_a_loser() -> None:
    rules = Rules(players=3, next_leader="loser", draw_rule="none")
    # Blocked: counts 10, 5, 12 -> seat 1 wins; loser with the highest count: seat 2.
    m = play(match_with(rules, deal(rules, ["0-0 4-6", "2-3", "5-5 1-1"])), "0-0", *["pass"] * 3)
    o = m.hand.outcome
    assert o is not None and (o.termination, o.winner, o.counts) == (
        Termination.BLOCKED,
        1,
        (10, 5, 12),
    )
    check_next_hand(m, 2)


@pytest.mark.parametrize(
    ("hands", "expected"),
    [
        # Seat 0 goes out. Losers are seats 1 and 3; partner seat 2's count does not matter.
        (["2-4", "1-1", "6-6", "5-5"], 3),
        (["2-4", "5-5", "6-6", "4-6"], 1),  # 10 and 10: the lowest seat
        (["2-4", "5-6", "6-6", "1-1"], 1),
    ],
)
def test_loser_teams_losing_partner_with_higher_count(hands: list[str], expected: int) -> None:
    rules = Rules(players=4, teams=True, next_leader="loser")
    m = match_with(rules, deal(rules, hands)).apply("2-4")
    check_next_hand(m, expected)


# -- next_leader "winner" -------------------------------------------------------------------


def test_winner_is_the_seat_that_went_out() -> None:
    rules = Rules(players=3, next_leader="winner", draw_rule="none")
    # [4|2][2|4][3|5]: seat 1 goes out with 3-5.
    m = play(match_with(rules, deal(rules, ["2-4 6-6", "3-5", "1-1"])), "2-4", "3-5@1>5")
    assert m.hand.outcome is not None and m.hand.outcome.winner == 1
    check_next_hand(m, 1)


def test_winner_after_block_is_the_lowest_count() -> None:
    rules = Rules(players=3, next_leader="winner", draw_rule="none")
    m = play(match_with(rules, deal(rules, ["0-0 4-6", "2-3", "5-5 1-1"])), "0-0", *["pass"] * 3)
    check_next_hand(m, 1)


def test_winner_teams_winning_partner_with_lower_count() -> None:
    rules = Rules(players=4, teams=True, next_leader="winner", draw_rule="none")
    # Blocked: counts 9, 10, 4, 8: team 0 (13) beats team 1 (18); seat 2 has the lower count.
    m = play(
        match_with(rules, deal(rules, ["0-0 3-6", "4-6", "1-3", "2-6"])),
        "0-0",
        *["pass"] * 4,
    )
    o = m.hand.outcome
    assert o is not None and (o.winner, o.winning_side, o.points) == (2, 0, 5)
    assert m.totals == (5, 0)
    check_next_hand(m, 2)
    # Teams with the loser rule: the losing partner with the higher count (seat 1: 10).
    lr = rules.replace(next_leader="loser")
    m = play(
        match_with(lr, deal(lr, ["0-0 3-6", "4-6", "1-3", "2-6"])),
        "0-0",
        *["pass"] * 4,
    )
    check_next_hand(m, 1)


def test_winner_teams_domino_by_a_partner() -> None:
    rules = Rules(players=4, teams=True, next_leader="winner", draw_rule="none")
    # Seat 2 goes out: [4|2][2|4][3|5].
    m = play(
        match_with(rules, deal(rules, ["2-4 6-6", "1-1 1-2", "3-5", "4-4 0-1"])),
        "2-4",
        "pass",
        "3-5@1>5",
    )
    assert m.totals == (5 + 9, 0)
    check_next_hand(m, 2)


# -- void ties ------------------------------------------------------------------------------


def _void_tie_match(next_leader: str) -> MatchState:
    # Seat 1 places the lead; blocked with counts 12, 5, 5: the lowest count is shared.
    rules = Rules(players=3, draw_rule="none", next_leader=next_leader, tie="void")
    hand = deal(rules, ["5-5 1-1", "0-0 1-4", "2-3"], leader=1)
    m = play(match_with(rules, hand, totals=(7, 3, 0), leads=(1, 0, 0)), "0-0", *["pass"] * 3)
    o = m.hand.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points, o.counts) == (
        Termination.VOID_TIE,
        None,
        0,
        (12, 5, 5),
    )
    assert m.totals == (7, 3, 0)  # nobody scores
    assert m.leads == (1, 1, 0)  # a void tie is a hand led (not a redeal)
    return m


@pytest.mark.parametrize(
    ("next_leader", "expected"),
    [
        ("winner", 1),  # the seat that placed the last lead leads again
        ("loser", 0),  # the highest count of all
        ("rotate", 2),  # left of the last leader, as always
    ],
)
def test_leader_after_void_tie(next_leader: str, expected: int) -> None:
    check_next_hand(_void_tie_match(next_leader), expected)


@pytest.mark.parametrize(
    ("next_leader", "expected"),
    [
        ("winner", 1),  # the seat that placed the last lead leads again
        ("loser", 0),  # the highest count of all seats, partners or not
        ("rotate", 2),
    ],
)
def test_leader_after_a_void_tie_of_partnerships(next_leader: str, expected: int) -> None:
    # Seat 1 leads 0-0 and nobody holds a matador: all four pass, counts 10, 4, 2, 8,
    # the teams level at 12 each, a void tie. The highest count of all is seat 0's,
    # on the team that did not lead.
    rules = Rules(players=4, teams=True, draw_rule="none", next_leader=next_leader, tie="void")
    hand = deal(rules, ["5-5", "0-0 2-2", "1-1", "4-4"], leader=1)
    m = play(match_with(rules, hand, totals=(7, 3), leads=(1, 0, 0, 0)), "0-0", *["pass"] * 4)
    o = m.hand.outcome
    assert o is not None
    assert (o.termination, o.winner, o.points, o.counts) == (
        Termination.VOID_TIE,
        None,
        0,
        (10, 4, 2, 8),
    )
    assert m.totals == (7, 3)
    check_next_hand(m, expected)


def test_loser_after_void_tie_highest_count_ties_to_lowest_seat() -> None:
    rules = Rules(draw_rule="none", next_leader="loser", tie="void")
    # Counts 12 and 12, seat 1 placed the lead: the highest count of all is shared -> seat 0.
    hand = deal(rules, ["5-6 0-1", "0-0 6-6"], leader=1)
    m = play(match_with(rules, hand), "0-0", "pass", "pass")
    assert m.hand.outcome is not None
    assert m.hand.outcome.termination == Termination.VOID_TIE
    check_next_hand(m, 0)


def test_winner_after_void_tie_is_the_seat_that_placed_the_lead() -> None:
    rules = Rules(lead_tile="double_not_blank", draw_rule="none", next_leader="winner")
    # Seat 0 is due to lead but holds no double: it passes and seat 1 leads 3-3.
    # Then both pass: counts 9 and 9, a void tie.
    hand = deal(rules, ["1-2 0-6", "3-3 2-2 0-5"])
    m = play(match_with(rules, hand), "pass", "3-3", "pass", "pass")
    o = m.hand.outcome
    assert o is not None
    assert (o.termination, o.counts) == (Termination.VOID_TIE, (9, 9))
    assert m.leads == (0, 1)
    check_next_hand(m, 1)


# -- redeal ties and no-lead redeals --------------------------------------------------------


@pytest.mark.parametrize("next_leader", ["rotate", "loser", "winner"])
def test_redeal_tie_same_leader_not_counted(next_leader: str) -> None:
    rules = Rules(draw_rule="none", next_leader=next_leader, tie="redeal")
    # Seat 1 leads 0-0; counts 12 and 12.
    hand = deal(rules, ["5-6 0-1", "0-0 6-6"], leader=1)
    m = play(match_with(rules, hand, totals=(20, 30), leads=(2, 1)), "0-0", "pass", "pass")
    o = m.hand.outcome
    assert o is not None and o.termination == Termination.REDEAL_TIE and o.redeal
    assert m.totals == (20, 30)
    assert m.leads == (2, 1)  # not counted as a hand led
    assert m.winners is None
    check_next_hand(m, 1)


def test_redeal_tie_leader_is_the_seat_that_placed_the_lead() -> None:
    rules = Rules(lead_tile="double_not_blank", draw_rule="none", tie="redeal", next_leader="loser")
    # Seat 0 is due to lead but holds no double: it passes and seat 1 leads 3-3.
    # Then both pass: counts 9 and 9.
    hand = deal(rules, ["1-2 0-6", "3-3 2-2 0-5"])
    m = play(match_with(rules, hand), "pass", "3-3", "pass", "pass")
    o = m.hand.outcome
    assert o is not None
    assert (o.termination, o.counts) == (Termination.REDEAL_TIE, (9, 9))
    assert m.leads == (0, 0)
    check_next_hand(m, 1)


@pytest.mark.parametrize("next_leader", ["rotate", "loser", "winner"])
def test_no_lead_redeal_keeps_the_leader(next_leader: str) -> None:
    rules = Rules(
        players=3, lead_tile="double_not_blank", draw_rule="none", next_leader=next_leader
    )
    # Seat 2 is due to lead; nobody holds a double other than 0-0: a round of passes.
    hand = deal(rules, ["1-2 0-6", "0-0 2-4", "1-3"], leader=2)
    m = play(match_with(rules, hand, totals=(4, 0, 9), leads=(1, 0, 1)), "pass", "pass", "pass")
    o = m.hand.outcome
    assert o is not None and o.termination == Termination.NO_LEAD and o.redeal
    assert m.totals == (4, 0, 9)
    assert m.leads == (1, 0, 1)
    check_next_hand(m, 2)


# -- match end: first_to_target -------------------------------------------------------------

# Seat 0 leads 2-4 and goes out; seat 1 holds 6-6 5-5: 22 points.
FIRST = Rules(target_score=100)


def _first_match(totals: tuple[int, int]) -> MatchState:
    return match_with(FIRST, deal(FIRST, ["2-4", "6-6 5-5"]), totals=totals).apply("2-4")


def test_first_to_target_below() -> None:
    m = _first_match((77, 99))
    assert m.totals == (99, 99)
    assert m.winners is None and not m.is_over
    check_next_hand(m, 1)


@pytest.mark.parametrize("before", [78, 90])
def test_first_to_target_reaching_or_passing_ends(before: int) -> None:
    m = _first_match((before, 99))
    assert m.totals == (before + 22, 99)
    assert m.winners == (0,)
    assert m.is_over
    with pytest.raises(ValueError):
        m.next_hand()
    with pytest.raises(IllegalMoveError):
        m.apply("pass")


def test_first_to_target_team_total() -> None:
    rules = Rules(players=4, teams=True, target_score=50)
    # Seat 2 leads 2-4 and goes out; opponents hold 6-6 and 5-5 (22); partner 1-1 is not scored.
    hand = deal(rules, ["1-1", "6-6", "2-4", "5-5"], leader=2)
    m = match_with(rules, hand, totals=(28, 49)).apply("2-4")
    assert m.totals == (50, 49)  # one total per team, credited once
    assert m.winners == (0,)
    assert m.view(0).scores == m.view(2).scores == (50, 49)


def test_team_totals_credited_once_per_team() -> None:
    rules = Rules(players=4, teams=True)
    hand = deal(rules, ["1-1", "6-6", "5-5", "2-4"], leader=3)
    m = match_with(rules, hand).apply("2-4")
    assert len(m.totals) == 2
    assert m.totals == (0, 2 + 10)
    assert m.leads == (0, 0, 0, 1)


# -- match end: complete_round --------------------------------------------------------------

ROUND = Rules(match_end="complete_round", target_score=100)


def _round_hand(leader: int) -> HandState:
    # The leader leads 2-4 and goes out; the other seat holds 6-6 5-5: 22 points.
    hands = ["6-6 5-5", "6-6 5-5"]
    hands[leader] = "2-4"
    return deal(ROUND, hands, leader=leader)


def test_complete_round_exactly_at_target_is_not_above() -> None:
    # Seat 1 leads the second hand: leads become equal, but 100 is not strictly above 100.
    m = match_with(ROUND, _round_hand(1), totals=(40, 78), leads=(1, 0)).apply("2-4")
    assert m.totals == (40, 100)
    assert m.leads == (1, 1)
    assert not m.armed and m.winners is None
    check_next_hand(m, 0)


def test_complete_round_ends_when_leads_are_equal() -> None:
    m = match_with(ROUND, _round_hand(1), totals=(40, 79), leads=(1, 0)).apply("2-4")
    assert m.totals == (40, 101)
    assert m.winners == (1,)


def test_complete_round_plays_on_until_every_seat_has_led() -> None:
    # Seat 0 leads the first hand and passes the target: seat 1 has not led yet.
    m = match_with(ROUND, _round_hand(0), totals=(90, 95), leads=(0, 0)).apply("2-4")
    assert m.totals == (112, 95)
    assert m.armed and m.winners is None and not m.is_over
    m = check_next_hand(m, 1)
    # Seat 1 leads the second hand and scores 22: 117 beats 112.
    m = dataclasses.replace(m, hand=_round_hand(1)).apply("2-4")
    assert m.totals == (112, 117)
    assert m.leads == (1, 1)
    assert m.winners == (1,)


def test_complete_round_with_teams_counts_leads_per_seat() -> None:
    # Leads (1, 1, 0, 0) are one per team, but seats 2 and 3 have not led: play on.
    rules = Rules(players=4, teams=True, match_end="complete_round", target_score=100)
    # Seat 1 leads 2-4 and goes out; seats 0 and 2 hold 6-6 and 5-5: 22 points.
    hand = deal(rules, ["6-6", "2-4", "5-5", "1-1"], leader=1)
    m = match_with(rules, hand, totals=(10, 90), leads=(1, 0, 0, 0)).apply("2-4")
    assert m.totals == (10, 112) and m.leads == (1, 1, 0, 0)
    assert m.armed and m.winners is None and not m.is_over
    check_next_hand(m, 2)


def test_complete_round_ties_share_the_win() -> None:
    m = match_with(ROUND, _round_hand(0), totals=(90, 112), leads=(0, 0)).apply("2-4")
    assert m.armed and m.winners is None
    assert m.totals == (112, 112)
    m = check_next_hand(m, 1)
    # Seat 1 leads and goes out: the 22 points bring it level again at 134.
    m = dataclasses.replace(m, hand=_round_hand(1)).apply("2-4")
    assert m.totals == (112, 134)
    assert m.winners == (1,)
    # A level finish: both at 112 when the round is complete.
    m = match_with(ROUND, _round_hand(1), totals=(112, 90), leads=(1, 0), armed=True)
    m = m.apply("2-4")
    assert m.totals == (112, 112)
    assert m.winners == (0, 1)


def test_complete_round_redealt_hands_do_not_count() -> None:
    rules = ROUND.replace(draw_rule="none", tie="redeal")
    # Armed, seat 1 due to lead; the hand is a redeal tie (counts 12 and 12).
    hand = deal(rules, ["5-6 0-1", "0-0 6-6"], leader=1)
    m = match_with(rules, hand, totals=(120, 20), leads=(1, 0), armed=True)
    m = play(m, "0-0", "pass", "pass")
    assert m.hand.outcome is not None and m.hand.outcome.termination == Termination.REDEAL_TIE
    assert m.leads == (1, 0)
    assert m.winners is None
    m = check_next_hand(m, 1)
    # The hand that counts: seat 1 leads it and the round is complete.
    m = dataclasses.replace(m, hand=deal(rules, ["6-6 5-5", "2-4"], leader=1)).apply("2-4")
    assert m.leads == (1, 1)
    assert m.totals == (120, 42)
    assert m.winners == (0,)


def test_complete_round_void_tie_counts_as_a_hand_led() -> None:
    rules = ROUND.replace(draw_rule="none")
    hand = deal(rules, ["5-6 0-1", "0-0 6-6"], leader=1)
    m = match_with(rules, hand, totals=(120, 20), leads=(1, 0), armed=True)
    m = play(m, "0-0", "pass", "pass")
    assert m.hand.outcome is not None and m.hand.outcome.termination == Termination.VOID_TIE
    assert m.leads == (1, 1)
    assert m.winners == (0,)


def test_complete_round_three_players() -> None:
    rules = Rules(players=3, match_end="complete_round", target_score=50)
    # Seat 1 leads and goes out, passing the target; seat 2 has led less often.
    hand = deal(rules, ["6-6", "2-4", "5-5"], leader=1)
    m = match_with(rules, hand, totals=(10, 40, 45), leads=(1, 0, 0)).apply("2-4")
    assert m.totals == (10, 62, 45)
    assert m.leads == (1, 1, 0)
    assert m.armed and m.winners is None
    m = check_next_hand(m, 2)
    hand = deal(rules, ["6-6", "1-1", "2-4"], leader=2)
    m = dataclasses.replace(m, hand=hand).apply("2-4")
    assert m.totals == (10, 62, 59)
    assert m.leads == (1, 1, 1)
    assert m.winners == (1,)


# -- whole matches under a deterministic policy ---------------------------------------------


def _placed_lead(hand: HandState) -> int | None:
    for e in hand.history:
        if e.move.kind == "play":
            return e.seat
    return None


def _side(rules: Rules, seat: int) -> int:
    return seat % 2 if rules.teams else seat


def _expected(rules: Rules, hand: HandState) -> tuple[int, int | None, int]:
    """(next leader, winning side, points) from RULES.md alone."""
    o = hand.outcome
    assert o is not None
    n = rules.players
    counts = hand.counts()
    assert o.counts == counts
    placed = _placed_lead(hand)
    sides = 2 if rules.teams else n
    side_counts = [sum(counts[s] for s in range(n) if _side(rules, s) == k) for k in range(sides)]
    if o.termination == Termination.NO_LEAD:
        assert placed is None
        return hand.dealt_leader, None, 0
    assert placed is not None
    last = hand.history[-1]
    if last.move.kind == "play":
        assert o.termination == Termination.DOMINO
        win_seat = last.seat
        win_side = _side(rules, win_seat)
        points = sum(c for k, c in enumerate(side_counts) if k != win_side)
    else:
        low = min(side_counts)
        if side_counts.count(low) > 1:
            tie = Termination.VOID_TIE if rules.tie == "void" else Termination.REDEAL_TIE
            assert o.termination == tie
            if tie == Termination.REDEAL_TIE:
                return placed, None, 0
            if rules.next_leader == "rotate":
                return (placed + 1) % n, None, 0
            if rules.next_leader == "winner":
                return placed, None, 0
            return min(range(n), key=lambda s: (-counts[s], s)), None, 0
        assert o.termination == Termination.BLOCKED
        win_side = side_counts.index(low)
        others = sum(side_counts) - low
        points = {
            "others_minus_own": others - low,
            "others": others,
            "others_plus_own": others + low,
        }[rules.blocked_scoring]
        win_seat = min(
            (s for s in range(n) if _side(rules, s) == win_side), key=lambda s: (counts[s], s)
        )
    if rules.next_leader == "rotate":
        nxt = (placed + 1) % n
    elif rules.next_leader == "winner":
        nxt = win_seat
    else:
        losers = [s for s in range(n) if _side(rules, s) != win_side]
        nxt = min(losers, key=lambda s: (-counts[s], s))
    assert o.winner == win_seat
    return nxt, win_side, points


MATCH_RULES = [
    Rules(target_score=40),
    Rules(players=3, next_leader="loser", target_score=40),
    Rules(players=3, next_leader="winner", draw_rule="none", target_score=40),
    Rules(players=4, teams=True, next_leader="loser", draw_rule="one", target_score=40),
    Rules(players=4, teams=True, next_leader="winner", boneyard_reserve=0, target_score=40),
    Rules(next_leader="winner", draw_rule="none", hand_size=10, target_score=40),
    Rules(next_leader="loser", draw_rule="none", hand_size=10, target_score=40),
    Rules(players=3, next_leader="loser", draw_rule="none", hand_size=8, target_score=40),
    Rules(draw_rule="none", hand_size=9, tie="redeal", next_leader="loser", target_score=40),
    Rules.preset("leiden", target_score=40),
    Rules.preset("leiden", draw_rule="none", target_score=40),
    Rules.preset("kardinal", target_score=40),
    Rules.preset("kardinal", players=3, target_score=40),
    Rules.preset("polish", players=3, target_score=40),
    Rules.preset("pagat", players=4, teams=True, hand_size=5, target_score=40),
    Rules(players=4, teams=True, match_end="complete_round", draw_rule="none", target_score=40),
]


def _run_matches(rules: Rules, seeds: range) -> set[str]:
    """Play whole matches with a seeded random policy; check every hand's transition."""
    seen: set[str] = set()
    for seed in seeds:
        rng = random.Random(seed)
        m = MatchState.new(rules, seed)
        leads = [0] * rules.players
        totals = [0] * rules.sides
        armed = False
        for _ in range(50_000):
            moves = m.legal_moves()
            m = m.apply(moves[rng.randrange(len(moves))])
            if not m.hand_over:
                continue
            hand = m.hand
            o = hand.outcome
            assert o is not None
            seen.add(o.termination)
            nxt, win_side, points = _expected(rules, hand)
            assert o.winning_side == win_side
            assert o.points == points
            if win_side is not None:
                totals[win_side] += points
            if not o.redeal:
                placed = _placed_lead(hand)
                assert placed is not None
                leads[placed] += 1
            assert m.totals == tuple(totals)
            assert m.leads == tuple(leads)
            assert m.outcomes[-1] == o
            top = max(totals)
            if rules.match_end == "first_to_target":
                over = top >= rules.target_score
            else:
                armed = armed or top > rules.target_score
                over = armed and not o.redeal and len(set(leads)) == 1
            if over:
                assert m.winners == tuple(k for k, t in enumerate(totals) if t == top)
                break
            assert m.winners is None
            m = check_next_hand(m, nxt)
        else:
            pytest.fail(f"match with seed {seed} did not end")
        assert m.is_over
    return seen


@pytest.mark.parametrize(
    "rules", MATCH_RULES, ids=lambda r: " ".join(map(str, r.changes().values()))
)
def test_policy_matches_follow_the_rules(rules: Rules) -> None:
    assert _run_matches(rules, range(6))


def test_policy_runs_meet_every_ending() -> None:
    """The checked runs reach ties, redeals and no-lead hands, not only dominoes."""
    found: set[str] = set()
    for rules in MATCH_RULES:
        found |= _run_matches(rules, range(6, 9))
    assert found == set(Termination.ALL)
