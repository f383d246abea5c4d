"""``BatchEngine.set_state`` refuses the counters and flags that no game holds and that
legal play from them would break: a spinner on the table whose flag says it is not
down (a second spinner then wrote six open ends into four slots, past the arrays,
found by the fuzz campaign ``state``), more open ends than the tiles down give, end
kinds the rules never place, passes and draws past what ends a hand or was drawn,
more actions than a hand holds, points above the pips left, and match totals, flags,
winners and lead counts that no sequence of hands scores. Each refusal names its
check and changes nothing; every state that play reaches, matches over included, is
still taken."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

pytest.importorskip("numba")

from matador_env.batch import BatchEngine, BatchError  # noqa: E402
from matador_env.batch import _kernels as K  # noqa: E402
from matador_env.encoding import encoding_for  # noqa: E402
from matador_env.engine import Rules  # noqa: E402
from tests.test_batch_inputs import _pick  # noqa: E402

FIRST_DOUBLE = Rules.preset("standard", spinner="first_double")


def _played_until(
    rules: Rules, holds: Callable[[dict[str, Any]], bool], match: bool = False
) -> BatchEngine:
    """A one-slot engine of ``rules`` played at random (over seeds) until its state holds."""
    for seed in range(500):
        eng = BatchEngine(rules, 1)
        if match:
            eng.new_matches([seed])
        else:
            eng.deal([seed])
        rng = np.random.default_rng(seed)
        while True:
            if holds(eng.get_state()):
                return eng
            if eng.all_over:
                if not match or eng.match_over[0]:
                    break
                eng.next_hands()
            eng.step(_pick(rng, eng.legal_masks()))
    raise AssertionError("no seed reached the state")


def _refused(eng: BatchEngine, edit: Callable[[dict[str, Any]], None], why: str) -> None:
    """``edit`` of the engine's state is refused with ``why``; nothing changes, and the
    state as saved is taken."""
    before = eng.get_state()
    state = json.loads(json.dumps(before))
    edit(state)
    with pytest.raises(BatchError, match=why):
        eng.set_state(state)
    assert eng.get_state() == before
    BatchEngine(eng.rules, eng.size).set_state(json.loads(json.dumps(before)))


def _running(state: dict[str, Any]) -> bool:
    return state["st"][0][K.OVER] == 0


# -- open ends ------------------------------------------------------------------------------------


def test_a_spinner_on_the_table_with_its_flag_cleared_is_refused() -> None:
    eng = _played_until(
        FIRST_DOUBLE,
        lambda s: _running(s) and s["st"][0][K.SPIN_DONE] == 1 and s["st"][0][K.NENDS] == 4,
    )

    def clear(s: dict[str, Any]) -> None:
        s["st"][0][K.SPIN_DONE] = 0

    _refused(eng, clear, "slot 0: an open end is a spinner's, but the spinner is not down")


def test_a_spinner_flag_without_a_spinner_is_refused() -> None:
    def flag(s: dict[str, Any]) -> None:
        s["st"][0][K.SPIN_DONE] = 1

    # No tile down yet, under rules with a spinner; and a hand under rules without one.
    leading = _played_until(FIRST_DOUBLE, lambda s: s["st"][0][K.NENDS] == 0)
    _refused(leading, flag, "the spinner is down .* with no tile down, or under rules without")
    plain = _played_until(Rules.preset("standard"), lambda s: s["st"][0][K.NENDS] == 2)
    _refused(plain, flag, "the spinner is down .* with no tile down, or under rules without")


def test_more_open_ends_than_the_tiles_down_give_are_refused() -> None:
    # kardinal's matadors branch: its ends have room for them, but a hand with no
    # matador down has only the lead's two.
    kardinal = Rules.preset("kardinal")

    matadors = [kardinal.is_matador(tile) for tile in encoding_for(kardinal).tiles]

    def no_matador_down(s: dict[str, Any]) -> bool:
        down = [k for k, place in enumerate(s["loc"][0]) if place == K.PLAYED]
        return _running(s) and len(down) >= 2 and not any(matadors[k] for k in down)

    eng = _played_until(kardinal, no_matador_down)

    def third_end(s: dict[str, Any]) -> None:
        s["st"][0][K.NENDS] = 3
        s["ends"][0][2] = [K.PLAIN, 3, -1]

    _refused(eng, third_end, "slot 0: the open ends are not what the tiles down give")


def test_an_end_of_a_kind_the_rules_never_place_is_refused() -> None:
    eng = _played_until(Rules.preset("standard"), lambda s: _running(s) and s["st"][0][K.NENDS])

    def crosswise(s: dict[str, Any]) -> None:
        s["ends"][0][0] = [K.CROSS, 2, 5]

    _refused(eng, crosswise, r"an open end is of a kind these rules never place; allowed: 0 \(")


# -- counters of the hand -------------------------------------------------------------------------


def test_counters_past_what_ends_a_hand_or_was_drawn_are_refused() -> None:
    standard = Rules.preset("standard")
    start = _played_until(standard, lambda s: s["st"][0][K.NACT] == 1 and _running(s))

    def passes(s: dict[str, Any]) -> None:
        s["st"][0][K.PASSES] = 2  # two seats: two passes in a row end the hand

    def lead_passes(s: dict[str, Any]) -> None:
        s["st"][0][K.LEAD_PASSES] = 2

    def draws(s: dict[str, Any]) -> None:
        s["st"][0][K.DRAWS] = 1  # nothing has been drawn yet

    def actions(s: dict[str, Any]) -> None:
        s["st"][0][K.NACT] = standard.max_hand_actions + 1

    _refused(start, passes, "slot 0: the hand runs but has 2 passes in a row or at the lead")
    _refused(start, lead_passes, "slot 0: the hand runs but has 2 passes in a row or at the lead")
    _refused(start, draws, "slot 0: the draws this turn are more than the tiles drawn")
    most = standard.max_hand_actions
    _refused(
        start, actions, f"the actions so far are more than a hand of these rules holds \\({most}"
    )
    # kardinal allows two draws a turn: a third is refused however many were drawn.
    kardinal = Rules.preset("kardinal")
    drawn = _played_until(kardinal, lambda s: _running(s) and s["st"][0][K.POS] >= 21)

    def third_draw(s: dict[str, Any]) -> None:
        s["st"][0][K.DRAWS] = 3

    _refused(drawn, third_draw, r"or than the rules' draw limit \(up_to_two\)")


def test_points_above_the_pips_left_or_without_a_winner_are_refused() -> None:
    won = _played_until(
        Rules.preset("standard"), lambda s: s["st"][0][K.OVER] == 1 and s["st"][0][K.POINTS] > 0
    )

    def more_points(s: dict[str, Any]) -> None:
        s["st"][0][K.POINTS] = sum(s["counts"][0]) + 1

    def no_winner(s: dict[str, Any]) -> None:
        s["st"][0][K.WINNER] = s["st"][0][K.WSIDE] = -1

    why = "the hand's points are not 0 without a winner, or are more than the pips left"
    _refused(won, more_points, why)
    _refused(won, no_winner, why)


# -- matches --------------------------------------------------------------------------------------


def test_match_totals_that_no_hands_score_are_refused() -> None:
    first = _played_until(Rules.preset("standard"), lambda s: _running(s), match=True)

    def at_target(s: dict[str, Any]) -> None:
        s["totals"][0][0] = 100

    def armed(s: dict[str, Any]) -> None:
        s["mst"][0][K.M_ARMED] = 1

    def led_unscored(s: dict[str, Any]) -> None:
        s["leads"][0][0] += 1  # the hand in play is not scored yet

    def last_deal(s: dict[str, Any]) -> None:
        s["mst"][0][K.M_DEALS] = 2**31 - 1

    _refused(first, at_target, r"totals and its end disagree \(first_to_target 100")
    _refused(first, armed, r"totals and its end disagree \(first_to_target 100")
    _refused(first, led_unscored, "the match counts more hands led than it has scored")
    _refused(first, last_deal, "or has dealt as many hands as its counter holds")

    kardinal = Rules.preset("kardinal")  # complete_round, two seats
    rounds = _played_until(kardinal, lambda s: _running(s), match=True)

    def above_unarmed(s: dict[str, Any]) -> None:
        s["totals"][0][1] = 101

    def too_far(s: dict[str, Any]) -> None:
        s["totals"][0][1] = 100 + 2 * 168 + 1  # two seats' hands of the set's 168 pips
        s["mst"][0][K.M_ARMED] = 1

    _refused(rounds, armed, r"totals and its end disagree \(complete_round 100: armed exactly")
    _refused(rounds, above_unarmed, r"\(complete_round 100: armed exactly")
    _refused(rounds, too_far, r"a match total \(436 at most under these rules\)")


def test_an_ended_matchs_winners_are_the_sides_on_its_top_total() -> None:
    short = Rules.preset("standard", target_score=5)
    ended = _played_until(short, lambda s: s["mst"][0][K.M_OVER] == 1, match=True)
    totals = ended.get_state()["totals"][0]
    assert totals[0] != totals[1]

    def other_winner(s: dict[str, Any]) -> None:
        s["winners"][0] = [1 - w for w in s["winners"][0]]

    _refused(ended, other_winner, "the match's winners are not the sides on its top total")


@pytest.mark.parametrize(
    "rules",
    [
        FIRST_DOUBLE.replace(target_score=20),
        Rules.preset("kardinal", target_score=20),
        Rules.preset("kardinal_hard", players=3, target_score=20),
        Rules.preset("leiden", target_score=20),
        Rules.preset("polish", target_score=20),
        Rules.preset("pagat", players=4, teams=True, target_score=20),
        Rules.preset("double_nine", players=3, target_score=30, match_end="complete_round"),
    ],
    ids=lambda r: r.preset_name() or r.to_text()[:40],
)
def test_every_state_that_play_reaches_is_still_taken(rules: Rules) -> None:
    # Matches to a low target, so that they end (and complete_round ones arm) within
    # the steps: the new checks refuse only what no game holds.
    rng = np.random.default_rng(1)
    eng = BatchEngine(rules, 4)
    eng.new_matches([1, 2, 3], slots=[0, 1, 2])
    eng.deal([4], slots=[3])
    reached = {"spinner": 0, "armed": 0, "match_over": 0}
    for _ in range(600):
        eng.step(_pick(rng, eng.legal_masks()))
        state = eng.get_state()
        BatchEngine(rules, 4).set_state(json.loads(json.dumps(state)))
        reached["spinner"] += sum(st[K.SPIN_DONE] for st in state["st"])
        reached["armed"] += sum(m[K.M_ARMED] for m in state["mst"])
        reached["match_over"] += sum(m[K.M_OVER] for m in state["mst"])
        if eng.match_over[:3].all():
            eng.new_matches([int(rng.integers(1 << 30)) for _ in range(3)], slots=[0, 1, 2])
        eng.next_hands()
        if eng.over[3]:
            eng.deal([int(rng.integers(1 << 30))], slots=[3])
    assert reached["match_over"] > 0
    if rules.spinner != "none":
        assert reached["spinner"] > 0
    if rules.match_end == "complete_round":
        assert reached["armed"] > 0
