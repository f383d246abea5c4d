"""What a seat infers about the hidden hands, and the worlds the search deals from it:
the behaviours that mutation testing of agents/knowledge.py and the search's world
dealing and candidate choice (agents/search.py) found unguarded by the other tests.

Each test builds a small position whose public history implies one thing (RULES.md
rules 6 and 7: a pass, or a draw that was not voluntary, means no legal placement at
the ends of that moment) and checks the inference or the worlds dealt from it exactly,
so that an inference too weak (a void missed) fails as surely as one too strong (a
tile ruled out that the seat may hold). Strength is never asserted.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from agents import SearchAgent
from agents.knowledge import Constraint, Knowledge, bits, regular_fit, tables
from matador_env.engine import HandState, Rules
from tests.test_agents import (
    NO_3_5,
    _capped_then_a_choice,
    _going_out,
    _pass_at_2_and_4,
    _played_worlds,
    _position,
    _three_seats_one_void,
    _two_draws_then_the_matador,
    tile,
)


def _names(kn: Knowledge, mask: int) -> set[str]:
    return {str(t) for t in kn.tb.tiles if (mask >> t.index) & 1}


# -- what a pass or a draw implies ------------------------------------------------------------


def test_a_draw_for_a_lead_double_shows_no_double_but_keeps_0_0_possible() -> None:
    """lead_tile "double_not_blank": seat 0 holds 0-0 but no other double, so it draws
    3-3 and leads it. The draw says it held no double other than 0-0; 0-0 (no leadable
    double) may still be in its hand, as it is here."""
    s = _position(
        Rules(lead_tile="double_not_blank"),
        [
            ["0-0", "0-1", "1-2", "2-4", "0-4", "1-5", "0-6"],
            ["1-1", "2-2", "4-4", "0-2", "1-4", "2-6", "4-6"],
        ],
        [],
        ("3-3",),
    )
    s = s.apply("draw").apply("3-3")
    kn = Knowledge(s.view(1))
    tb = kn.tb
    assert kn.void[0] == tb.double & ~tb.mask_of([tile("0-0")]) & kn.unseen
    assert not (kn.void[0] >> tile("0-0").index) & 1
    assert kn.allows(0, s.hand_mask(0))


def _crosswise_pass() -> HandState:
    """crosswise_choice, no drawing: seat 0 leads 2-4, seat 1 answers with 0-3 (ends 2
    and 0), seat 0 lays its matador 2-5 across the 0 and seat 1 passes."""
    return _position(
        Rules(matador_placement="crosswise_choice", draw_rule="none"),
        [
            ["2-4", "2-5", "3-3", "5-5", "0-6", "3-6", "1-5"],
            ["0-3", "1-1", "0-1", "1-4", "4-4", "6-6", "4-6"],
        ],
        ["2-4", "0-3@1>0", "2-5@1x", "pass"],
    )


def test_a_pass_at_a_crosswise_matador_shows_neither_of_its_halves_answered() -> None:
    """crosswise_choice: seat 0 lays the matador 2-5 across the end showing 0, which then
    takes a tile linking to either half; seat 1 passes at that end and one showing 2. It
    holds no answer to 2 or to 5 (no tile with a 5 or a 2) and no matador."""
    s = _crosswise_pass()
    kn = Knowledge(s.view(0))
    tb = kn.tb
    assert kn.void[1] == ((tb.has[5] | tb.has[2]) & tb.regular | tb.matador) & kn.unseen
    assert {"1-2", "2-2", "0-5", "4-5"} <= _names(kn, kn.void[1])


def test_a_pass_while_the_cross_must_fill_rules_out_only_answers_to_the_cross() -> None:
    """lead_double_cross: after the lead 3-3 two arms are filled (ends 5 and 6), two
    sides of the cross are free. Seat 1 holds 2-2, which answers the 5, but no 4 and no
    matador: it must pass, as tiles go only to the cross's free sides. The pass rules
    out the tiles with a 4 and the matadors, not the answers to the filled arms."""
    rules = Rules(spinner="lead_double_cross", lead_tile="double_not_blank", draw_rule="none")
    s = _position(
        rules,
        [
            ["3-3", "4-6", "0-1", "1-1", "0-2", "0-5", "5-5"],
            ["4-5", "2-2", "1-2", "0-6", "2-6", "6-6", "0-3"],
        ],
        ["3-3", "4-5@0>5", "4-6@1>6"],
    )
    assert [str(m) for m in s.legal_moves()] == ["pass"]
    s = s.apply("pass")
    kn = Knowledge(s.view(0))
    tb = kn.tb
    assert kn.void[1] == (tb.has[4] & tb.regular | tb.matador) & kn.unseen
    assert kn.allows(1, s.hand_mask(1))
    # 2-3 answers the 5, 1-3 the 6: unseen by seat 0, and seat 1 may hold them.
    assert not kn.void[1] & tb.mask_of([tile("2-3"), tile("1-3")])


def test_before_the_lead_the_regular_fit_is_the_leadable_non_matadors() -> None:
    """regular_fit with no ends: the tiles that may lead, matadors left out (they are
    what a draw under "only_matadors" does not rule out)."""
    for rules in (Rules(), Rules(lead_tile="double_not_blank")):
        tb = tables(rules)
        assert regular_fit(tb, ()) == tb.leadable & ~tb.matador
        assert not regular_fit(tb, ()) & tb.mask_of([tile("3-4"), tile("0-0")])


def test_a_draw_where_no_draw_is_voluntary_rules_out_the_matadors_too() -> None:
    """voluntary_draw "never": after the lead 2-4 seat 1 (no 3, no 5, no matador) draws
    3-6 and plays it. A draw there means no placement at all, so seat 1 holds no
    matador either (under "only_matadors" a matador could have been kept back)."""
    s = _position(
        Rules(voluntary_draw="never"),
        [["2-4", "0-1", "1-1", "0-5", "0-4", "4-4", "0-6"], NO_3_5],
        ["2-4"],
        ("3-6",),
    )
    s = s.apply("draw").apply("3-6@1>6")
    kn = Knowledge(s.view(0))
    tb = kn.tb
    assert kn.void[1] == ((tb.has[3] | tb.has[5]) & tb.regular | tb.matador) & kn.unseen
    assert kn.allows(1, s.hand_mask(1))


def test_only_the_seats_own_plays_after_a_draw_lower_its_cap() -> None:
    """Seat 1 drew twice at the lead 2-4 (no regular answer) and played its matador, so
    it holds at most one tile with a 3 or a 5. Seat 0 then lays 1-3, one of those
    tiles: that tells nothing of seat 1's hand, whose cap stays one."""
    s = _capped_then_a_choice().apply("1-3@1>1")
    kn = Knowledge(s.view(0))
    tb = kn.tb
    answers = (tb.has[3] | tb.has[5]) & tb.regular & kn.unseen
    assert kn.constraints == [Constraint(1, answers, 1)]
    assert kn.allows(1, s.hand_mask(1))


def test_a_seat_infers_nothing_about_its_own_hand_from_its_own_pass() -> None:
    """The seat that passed knows its hand: its own pass gives it no constraint, while
    the other seat infers the void."""
    s = _crosswise_pass()
    assert Knowledge(s.view(1)).constraints == []
    assert Knowledge(s.view(1)).void == [0, 0]
    assert Knowledge(s.view(0)).void[1]


def test_the_viewers_row_of_the_marginals_is_its_own_hand() -> None:
    """marginals(): the viewer holds its own tiles for sure (1) and no other (0); each
    hidden row sums to that seat's hand size."""
    s = _crosswise_pass()
    kn = Knowledge(s.view(0))
    p = kn.marginals()
    own = [1.0 if (kn.hand >> i) & 1 else 0.0 for i in range(kn.tb.ntiles)]
    assert p[0] == own
    assert abs(sum(p[1]) - s.hand_sizes[1]) < 1e-6


# -- the worlds dealt -------------------------------------------------------------------------


def test_the_exact_dealer_keeps_every_cap_not_only_the_voids() -> None:
    """With no constructive try (tries=0) every world comes from the exact dealer. In
    the capped position seat 1 holds 8 of 20 unseen tiles and at most one of the 11
    answers to the lead: a deal keeping the voids alone would break that cap in most
    worlds."""
    s = _two_draws_then_the_matador()
    kn = Knowledge(s.view(0))
    ((_, capped, cap),) = [(c.seat, c.mask, c.cap) for c in kn.constraints]
    for seed in range(60):
        hands, rest = kn.sample_masks(random.Random(seed), tries=0)
        assert (hands[1] & capped).bit_count() <= cap
        # The deal itself, before the swaps that could mend a broken cap.
        got = kn._exact(random.Random(seed), 0)
        assert got is not None and (got[0][1] & capped).bit_count() <= cap
        assert hands[1].bit_count() == s.hand_sizes[1] and len(rest) == s.boneyard_size


def test_the_exact_dealers_boneyard_comes_in_a_random_order() -> None:
    """Seat 1 passed (a void, no cap): with tries=0 the exact dealer deals every world,
    and its boneyard, listed in index order, is shuffled before it is drawn from, so
    that every boneyard tile is sometimes the next one drawn."""
    s = _pass_at_2_and_4()
    kn = Knowledge(s.view(0))
    first: set[int] = set()
    every: set[int] = set()
    for seed in range(300):
        hands, rest = kn.sample_masks(random.Random(seed), tries=0)
        assert not hands[1] & kn.void[1]
        first.add(rest[0])
        every.update(rest)
    assert first == every


def test_the_exact_dealers_worlds_are_spread_like_the_constructed_ones() -> None:
    """The exact dealer's deal is mixed by the same swaps as a constructed one: in the
    capped position the hands with no capped tile at all are about 2% of those that
    keep the cap (see test_worlds_under_a_cap_are_uniform_among_those_that_keep_it);
    the backtracking alone, which fills the hand with capped tiles while the cap lets
    it, deals almost none."""
    s = _two_draws_then_the_matador()
    kn = Knowledge(s.view(0))
    (capped,) = kn.constraints
    uniform = math.comb(9, 8) / (math.comb(9, 8) + 11 * math.comb(9, 7))
    n = 1500
    none = sum(
        1
        for seed in range(n)
        if not kn.sample_masks(random.Random(seed), tries=0)[0][1] & capped.mask
    )
    # The swaps come near uniform (about 3% here), far from the backtracking's 0.05%.
    assert uniform / 2 < none / n < 2 * uniform, none / n


def test_sample_many_deals_sets_past_62_tiles_as_sample_masks() -> None:
    """Double-eleven has 78 tiles, past what numpy's 64-bit masks hold: sample_many
    deals them as sample_masks does, whole hands of unseen tiles of the right size."""
    state = HandState.deal(Rules(set_max=11), 3)
    kn = Knowledge(state.view(state.to_move))
    other = kn.hidden_seats[0]
    assert kn.tb.ntiles == 78
    for hands, rest in kn.sample_many(random.Random(0), 20):
        assert hands[kn.me] == kn.hand
        assert hands[other].bit_count() == state.hand_sizes[other]
        assert sorted([*bits(hands[other]), *rest]) == bits(kn.unseen)


def test_sample_many_falls_back_where_the_voids_leave_too_few_tiles() -> None:
    """A history these rules cannot produce (voids made up here) leaves seat 1 one tile
    fewer than its hand: sample_many's bulk draw cannot deal that hand, so it takes
    sample_masks, which lets the voids go and deals whole hands."""
    state = HandState.deal(Rules(), 5)
    kn = Knowledge(state.view(state.to_move))
    other = kn.hidden_seats[0]
    need = kn.sizes[other]
    kn.void[other] = kn.unseen & ~sum(1 << t for t in bits(kn.unseen)[: need - 1])
    for hands, rest in kn.sample_many(random.Random(1), 10):
        assert hands[other].bit_count() == need
        assert sorted([*bits(hands[other]), *rest]) == bits(kn.unseen)


def test_several_hidden_hands_are_dealt_by_the_compiled_dealer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With three seats (two hidden hands) and numba installed, sample_many deals
    through matador_env.batch.deal_hidden_hands, not world by world in Python."""
    pytest.importorskip("numba")
    state, kn = _three_seats_one_void()

    def refused(self: Knowledge, rng: random.Random, tries: int = 64) -> Any:
        raise AssertionError("dealt in Python")

    monkeypatch.setattr(Knowledge, "sample_masks", refused)
    worlds = kn.sample_many(random.Random(2), 50)
    assert len(worlds) == 50
    for hands, _rest in worlds:
        for s in kn.hidden_seats:
            assert not hands[s] & kn.void[s] and hands[s].bit_count() == state.hand_sizes[s]


@pytest.mark.parametrize("count", [1, 7, 50])
def test_sample_many_deals_exactly_the_worlds_asked_for_under_a_cap(count: int) -> None:
    """Under a cap the bulk draw deals several candidates a world and drops those that
    break it: the worlds kept are still exactly ``count``, each keeping the cap."""
    s = _two_draws_then_the_matador()
    kn = Knowledge(s.view(0))
    (capped,) = kn.constraints
    worlds = kn.sample_many(random.Random(count), count)
    assert len(worlds) == count
    assert all((hands[1] & capped.mask).bit_count() <= capped.cap for hands, _ in worlds)
    # A loose cap (made up: at most two of three tiles) keeps most candidates: the
    # surplus is dropped, not returned.
    loose = sum(1 << t for t in bits(kn.unseen)[:3])
    kn.soft[1] = [(loose, 2)]
    worlds = kn.sample_many(random.Random(count), count)
    assert len(worlds) == count
    assert all((hands[1] & loose).bit_count() <= 2 for hands, _ in worlds)


# -- the search's worlds and candidates -------------------------------------------------------


def test_a_lone_candidate_is_played_in_no_world() -> None:
    """The same tile leaving the same ends is one candidate: played at once, with no
    world sampled, so its count of worlds is 0."""
    view = _going_out(Rules()).view(0)
    found = SearchAgent(samples=4, width=1).search(view, random.Random(0))
    assert found.candidates == [found.move] and found.worlds == [0]
    assert found.means == [0.0]


@pytest.mark.parametrize("fast", [1, 0])
def test_the_worlds_played_out_follow_the_searchs_generator(
    fast: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worlds are dealt from the generator the search is given: the same one
    deals the same worlds (a decision replays), another deals others (else every
    decision would play out the same few worlds)."""
    view = _capped_then_a_choice().view(0)
    seen = _played_worlds(monkeypatch)
    agent = SearchAgent(samples=8, fast=fast)
    runs = []
    for seed in (1, 1, 2):
        seen.clear()
        agent.search(view, random.Random(seed))
        runs.append(list(seen))
    assert runs[0] == runs[1] and runs[0] != runs[2]


def test_a_proof_that_no_deal_keeps_the_caps_is_kept() -> None:
    """A cap no deal can keep (made up here: seat 1 holds none of the unseen tiles):
    the exact dealer proves it once; asked again it answers at once, drawing no random
    number, so a history these rules did not produce costs the search once."""
    s = _two_draws_then_the_matador()
    kn = Knowledge(s.view(0))
    kn.soft[1] = [(kn.unseen, 0)]
    rng = random.Random(3)
    assert kn._exact(rng, 0) is None
    before = rng.getstate()
    assert kn._exact(rng, 0) is None
    assert rng.getstate() == before
    # The voids alone still deal: sample_masks keeps them and the sizes.
    hands, rest = kn.sample_masks(rng)
    assert hands[1].bit_count() == s.hand_sizes[1] and not hands[1] & kn.void[1]


def test_a_sampled_state_keeps_the_boneyard_in_its_dealt_order() -> None:
    """Knowledge.sample: the full state's boneyard is the world's draw order, random,
    not the unseen tiles in index order, so any of them may be the next drawn."""
    s = _pass_at_2_and_4()
    kn = Knowledge(s.view(0))
    rng = random.Random(4)
    firsts = {kn.sample(rng).boneyard[0] for _ in range(100)}
    assert len(firsts) > 5
