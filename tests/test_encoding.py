"""The tensor contract (matador_env.encoding): action layout, masks, observation pieces, no leak.

Random legal play under every preset and a set of other rule configurations checks
that the mask marks exactly the engine's legal moves, that encode/decode are inverse
on them, that the incremental observation builder of the environments equals the
one built from a seat's view, and that reshuffling the tiles a seat cannot see
leaves its observation unchanged.
"""

from __future__ import annotations

import dataclasses
import importlib
import random
import re
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from matador_env import encoding as encoding_module
from matador_env.encoding import (
    ENCODING_VERSION,
    KINDS,
    ObservationTracker,
    action_mask,
    decode_action,
    encode_action,
    encoding_for,
    max_open_ends,
    observation,
    state_tensor,
)
from matador_env.engine import (
    DRAW,
    PASS,
    PRESETS,
    HandState,
    Move,
    Rules,
    RulesError,
    SeatView,
    Tile,
    parse_hand_record,
)


def _configs() -> dict[str, Rules]:
    configs = {name: Rules.preset(name) for name in PRESETS}
    configs.update(
        {
            "crosswise_choice": Rules(matador_placement="crosswise_choice"),
            "crosswise_on_blank-p3": Rules(matador_placement="crosswise_on_blank", players=3),
            "upright-as_regular": Rules(matador_placement="upright", matador_as_regular=True),
            "branching-first_double": Rules(
                matador_placement="branching", spinner="first_double", players=3
            ),
            "pagat-teams": Rules.preset("pagat", players=4, teams=True),
            "kardinal-teams": Rules.preset("kardinal", players=4, teams=True),
            "double_nine-p6": Rules(set_max=9, players=6, hand_size=8),
            "double_twelve-branching-p5": Rules(
                set_max=12,
                players=5,
                hand_size=10,
                matador_placement="branching",
                spinner="first_double",
                voluntary_draw="always",
            ),
            "no-draw": Rules(draw_rule="none", boneyard_reserve=0),
            "all-dealt": Rules(hand_size="all", players=3, matador_placement="crosswise_choice"),
        }
    )
    return configs


CONFIGS = _configs()


def random_states(rules: Rules, hands: int, seed: int = 0) -> Iterator[HandState]:
    """Every state of ``hands`` random legal hands, the finished ones included."""
    rng = random.Random(seed)
    for _ in range(hands):
        s = HandState.deal(rules, rng.randrange(2**32))
        yield s
        while not s.is_over:
            moves = s.legal_moves()
            s = s.apply(moves[rng.randrange(len(moves))])
            yield s


# -- the action layout -----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_mask_is_exactly_the_legal_moves(name: str) -> None:
    rules = CONFIGS[name]
    enc = encoding_for(rules)
    ends_bound = max_open_ends(rules)
    states = 0
    for s in random_states(rules, hands=40):
        legal = s.legal_moves()
        mask = enc.action_mask(legal)
        assert mask.dtype == np.int8 and mask.shape == (enc.num_actions,)
        marked = {enc.decode_action(int(a)) for a in np.flatnonzero(mask)}
        assert marked == set(legal)
        assert int(mask.sum()) == len(legal), "two legal moves share an action"
        for move in legal:
            action = enc.encode_action(move)
            assert enc.decode_action(action) == move
            assert enc.encode_action(str(move)) == action  # the text form too
        assert len(s.ends) <= ends_bound
        draw_marked = bool(mask[enc.draw_action])
        assert draw_marked == (DRAW in legal)
        assert bool(mask[enc.pass_action]) == (PASS in legal)
        states += 1
    assert states > 40


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_every_action_is_a_distinct_move(name: str) -> None:
    enc = encoding_for(CONFIGS[name])
    moves = [enc.decode_action(a) for a in range(enc.num_actions)]
    assert len(set(moves)) == enc.num_actions
    assert all(enc.encode_action(m) == a for a, m in enumerate(moves))
    assert moves[-2:] == [DRAW, PASS]


def test_standard_layout() -> None:
    rules = Rules.preset("standard")
    enc = encoding_for(rules)
    T = 28
    # In line only, each tile low-out, and high-out unless a double: 28 + 21.
    assert enc.placements_per_slot == 49 and enc.end_slots == 2
    assert enc.num_actions == T + 2 * 49 + 2 == 128
    assert decode_action(rules, 0) == Move.lead(Tile(0, 0))
    assert decode_action(rules, 5) == Move.lead(Tile(2, 2))  # index order 0-0 0-1 1-1 0-2 1-2 2-2
    assert decode_action(rules, T) == Move.parse("0-0@0>0")
    assert decode_action(rules, T + 1) == Move.parse("0-1@0>0")
    assert decode_action(rules, T + 2) == Move.parse("0-1@0>1")
    assert decode_action(rules, T + 49) == Move.parse("0-0@1>0")
    assert encode_action(rules, "6-6@1>6") == T + 49 + 48
    assert decode_action(rules, 126) == DRAW and decode_action(rules, 127) == PASS
    with pytest.raises(ValueError, match="out of range"):
        decode_action(rules, 128)
    with pytest.raises(ValueError, match="out of range"):
        decode_action(rules, -1)
    with pytest.raises(ValueError, match="no action"):
        encode_action(rules, "3-4@0x")  # crosswise does not exist under "inline"
    with pytest.raises(ValueError, match="no action"):
        encode_action(rules, "1-2@2>2")  # there is no third end slot


def test_orientations_follow_the_rules() -> None:
    def orients(rules: Rules) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for tile, orient in encoding_for(rules).slot_table:
            out.setdefault(orient, set()).add(str(tile))
        return out

    matadors = {"0-0", "1-6", "2-5", "3-4"}
    assert set(orients(Rules())) == {"low", "high"}
    assert orients(Rules(matador_placement="crosswise_choice"))["cross"] == matadors - {"0-0"}
    assert orients(Rules(matador_placement="crosswise_on_blank"))["cross"] == matadors
    assert orients(Rules(matador_placement="branching"))["cross"] == matadors
    assert orients(Rules(matador_placement="upright"))["upright"] == matadors
    nine = orients(Rules(set_max=9, matador_placement="branching"))["cross"]
    assert nine == {"0-0", "1-9", "2-8", "3-7", "4-6", "5-5"}


def test_max_open_ends() -> None:
    assert max_open_ends(Rules()) == 2
    assert max_open_ends(Rules(spinner="first_double")) == 4
    assert max_open_ends(Rules.preset("leiden")) == 4
    assert max_open_ends(Rules(matador_placement="branching")) == 6
    assert max_open_ends(Rules(matador_placement="branching", spinner="first_double")) == 8
    assert max_open_ends(Rules(set_max=12, matador_placement="branching")) == 2 + 7


BRANCHING_RECORD = """\
rules: set_max=6 players=2 teams=False hand_size=all first_leader=random lead_tile=any \
next_leader=rotate draw_rule=until_playable boneyard_reserve=2 voluntary_draw=only_matadors \
matador_placement=branching matador_as_regular=False matador_only_when_stuck=False \
spinner=none blocked_scoring=others_minus_own tie=void target_score=100 \
match_end=first_to_target
seed: 0
leader: 1
hand 0: 0-2 1-2 2-2 1-3 2-3 3-3 0-4 1-4 2-4 3-4 0-5 4-5 1-6 2-6
hand 1: 0-0 0-1 1-1 0-3 4-4 1-5 2-5 3-5 5-5 0-6 3-6 4-6 5-6 6-6
boneyard:
moves: 6-6 1-6@1x 2-5@0x 2-2@1>2 5-6@0>6 3-4@1x 0-0@0x
"""


def test_branching_reaches_every_end_slot() -> None:
    #   6-6 lead: [6 6]; each crosswise matador replaces an end by two branch ends:
    #   1-6@1x [6 1b 6b]  2-5@0x [2b 5b 1b 6b]  2-2@1>2 [2b 2 1b 6b]
    #   5-6@0>6 [6 2 1b 6b]  3-4@1x [6 3b 4b 1b 6b]  0-0@0x [0b 0b 3b 4b 1b 6b]
    s = parse_hand_record(BRANCHING_RECORD).replay()
    enc = encoding_for(s.rules)
    assert len(s.ends) == enc.end_slots == 6
    legal = s.legal_moves()
    assert any(m.end == 5 for m in legal)  # the last slot is in use
    mask = enc.action_mask(legal)
    assert {enc.decode_action(int(a)) for a in np.flatnonzero(mask)} == set(legal)
    ends = enc.split(enc.observation(s.view(0)))["ends"]
    assert ends.shape == (6, enc.end_width)
    assert ends[:, 3].tolist() == [1, 1, 1, 1, 1, 1]  # every slot holds a branch end


# -- the observation pieces ----------------------------------------------------------------


def _doc_table(doc: str, first: str, last: str) -> list[str]:
    """The piece names of a docstring's table, in order, from ``first`` to ``last``."""
    names = re.findall(r"^(?:\|\s)?([a-z_]+)(?:\s*\||\s{2,})", doc, flags=re.M)
    start = names.index(first)
    return names[start : names.index(last, start) + 1]


def test_the_docs_repeat_the_pieces_table() -> None:
    enc = encoding_for(Rules())
    names = [p.name for p in enc.pieces]
    assert names[0] == "hand" and names[-1] == "to_move"
    assert _doc_table(encoding_module.__doc__ or "", "hand", "to_move") == names
    env_module = importlib.import_module("matador_env.matador_v0")
    assert _doc_table(env_module.__doc__ or "", "hand", "to_move") == names
    assert isinstance(ENCODING_VERSION, int) and ENCODING_VERSION >= 1


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_pieces_add_up(name: str) -> None:
    rules = CONFIGS[name]
    enc = encoding_for(rules)
    T, V, n = rules.tile_count, rules.set_max + 1, rules.players
    sizes = {p.name: p.size for p in enc.pieces}
    assert sizes["hand"] == sizes["played"] == T
    assert sizes["ends"] == enc.end_slots * (5 + V)
    assert sizes["cannot_answer"] == (n - 1) * (V + 2)
    assert sizes["scores"] == rules.sides
    assert sum(sizes.values()) == enc.obs_size
    assert sum(p.size for p in enc.state_pieces) == enc.state_size


def test_observation_pieces_of_a_known_state() -> None:
    rules = Rules.preset("standard")
    s = HandState.from_deal(
        rules,
        [
            ["2-4", "6-6", "0-6", "2-6", "4-6", "0-4", "1-6"],
            ["1-1", "1-2", "2-2", "0-1", "0-2", "1-4", "4-4"],
        ],
        boneyard=[
            "3-3",
            "0-0",
            "0-3",
            "1-3",
            "2-3",
            "3-4",
            "3-5",
            "3-6",
            "0-5",
            "1-5",
            "2-5",
            "4-5",
            "5-5",
            "5-6",
        ],  # fmt: skip
        leader=0,
    )
    s = s.apply("2-4")  # ends [2 4]
    enc = encoding_for(rules)
    p = enc.split(observation(s.view(1)))
    assert p["hand"].sum() == 7 and p["hand"][Tile(4, 4).index] == 1
    assert p["played"].tolist() == [1.0 if i == Tile(2, 4).index else 0.0 for i in range(28)]
    # Slot 0: plain end showing 2; slot 1: plain end showing 4 (kind one-hot, then values).
    assert p["ends"][0].tolist() == [1, 0, 0, 0, 0] + [0, 0, 1, 0, 0, 0, 0]
    assert p["ends"][1].tolist() == [1, 0, 0, 0, 0] + [0, 0, 0, 0, 1, 0, 0]
    assert p["boneyard"][0] == np.float32(14 / 28)
    assert p["hand_sizes"].tolist() == [np.float32(6 / 28)]
    assert p["leader"].tolist() == [0, 1]  # seat 0 led: one seat on from seat 1
    assert p["to_move"].tolist() == [1, 0]  # seat 1 itself
    assert p["target"][0] == np.float32(0.1)
    assert p["scores"].tolist() == [0, 0] and p["partner"].tolist() == [0]


def _cannot_row(rules: Rules, moves: list[str]) -> np.ndarray:
    """Seat 0's cannot-answer row for seat 1 after the lead 2-4 and ``moves``."""
    s = HandState.from_deal(
        rules,
        [
            ["2-4", "6-6", "0-6", "2-6", "4-6", "0-4", "1-6"],
            ["1-1", "1-2", "2-2", "0-1", "0-2", "1-4", "4-4"],
        ],
        boneyard=[
            "0-0",
            "3-3",
            "0-3",
            "1-3",
            "2-3",
            "3-4",
            "3-5",
            "3-6",
            "0-5",
            "1-5",
            "2-5",
            "4-5",
            "5-5",
            "5-6",
        ],  # fmt: skip
        leader=0,
    )
    for m in ["2-4", *moves]:
        s = s.apply(m)
    enc = encoding_for(rules)
    row = enc.split(observation(s.view(0)))["cannot_answer"][0]
    tracker = ObservationTracker(enc)
    tracker.start(s)
    assert np.array_equal(enc.split(tracker.observation(0))["cannot_answer"][0], row)
    return row


def test_cannot_answer_marks() -> None:
    # Ends 2 and 4: seat 1 holds no 5 and no 3 (and no matador), so it must draw.
    V = 7
    values = np.zeros(V + 2)
    values[[2, 4]] = 1
    both = values.copy()
    both[V + 1] = 1
    # voluntary_draw "only_matadors": a draw shows no regular answer, matadors unknown.
    # The first tile drawn is 0-0, a matador, so the seat plays it.
    row = _cannot_row(Rules(), ["draw"])
    assert row.tolist() == values.tolist()
    # "never": a draw means no placement at all, matadors included.
    assert _cannot_row(Rules(voluntary_draw="never"), ["draw"]).tolist() == both.tolist()
    # "always": a draw shows nothing.
    assert not _cannot_row(Rules(voluntary_draw="always"), ["draw"]).any()
    # No drawing: a pass shows no placement at all.
    no_draw = Rules(draw_rule="none")
    assert _cannot_row(no_draw, ["pass"]).tolist() == both.tolist()
    # Nothing is marked before anyone drew or passed.
    assert not _cannot_row(Rules(), []).any()


def test_while_the_cross_must_be_filled_only_the_spinner_sides_are_marked() -> None:
    # spinner="lead_double_cross": until the lead double's cross is full only its
    # spinner sides take tiles, so a seat that draws there showed it cannot answer
    # them (3) but nothing about the plain end (1), which it may well answer (6-6).
    rules = Rules(lead_tile="double_not_blank", spinner="lead_double_cross",
                  voluntary_draw="never")  # fmt: skip
    boneyard = ["2-2", "0-0", "0-3", "0-5", "0-6", "1-3", "1-5", "1-6", "2-3", "2-5",
                "3-4", "3-6", "5-5", "5-6"]  # fmt: skip
    s = HandState.from_deal(
        rules,
        [
            ["3-3", "6-6", "2-6", "0-2", "1-1", "1-2", "0-1"],
            ["1-4", "4-4", "0-4", "2-4", "4-6", "4-5", "3-5"],
        ],
        boneyard=boneyard,
        leader=0,
    )
    for move in ["3-3", "1-4@0>1", "draw"]:  # seat 0 has no 4 for the spinner sides
        s = s.apply(move)
    enc = encoding_for(rules)
    V = enc.num_values
    expected = np.zeros(V + 2)
    expected[[3, V + 1]] = 1  # no 4 for the 3s, no matador; the 1 is not marked
    row = enc.split(observation(s.view(1)))["cannot_answer"][0]  # seat 1 sees seat 0
    assert row.tolist() == expected.tolist()
    tracker = ObservationTracker(enc)
    tracker.start(s)
    assert np.array_equal(enc.split(tracker.observation(1))["cannot_answer"][0], row)


# -- the incremental builder and no leak ---------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(CONFIGS)),
    deal=st.integers(0, 2**32 - 1),
    choices=st.integers(0, 2**32 - 1),
)
def test_random_hands_keep_the_contract(name: str, deal: int, choices: int) -> None:
    """Property: along any random hand, mask == legal moves, encode/decode are inverse,
    and the environments' incremental observation equals the one built from the view."""
    rules = CONFIGS[name]
    enc = encoding_for(rules)
    rng = random.Random(choices)
    s = HandState.deal(rules, deal)
    tracker = ObservationTracker(enc)
    tracker.start(s)
    while not s.is_over:
        legal = s.legal_moves()
        mask = enc.action_mask(legal)
        assert {enc.decode_action(int(a)) for a in np.flatnonzero(mask)} == set(legal)
        assert len(legal) == int(mask.sum())
        seat = rng.randrange(rules.players)
        assert np.array_equal(tracker.observation(seat), enc.observation(s.view(seat)))
        move = legal[rng.randrange(len(legal))]
        after = s.apply(enc.decode_action(enc.encode_action(move)))
        tracker.advance(s, s.to_move, move, after)
        s = after


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_tracker_equals_the_view_builder(name: str) -> None:
    rules = CONFIGS[name]
    enc = encoding_for(rules)
    rng = random.Random(1)
    tracker = ObservationTracker(enc)
    for _ in range(12):
        s = HandState.deal(rules, rng.randrange(2**32))
        tracker.start(s)
        while True:
            for seat in range(rules.players):
                obs = tracker.observation(seat)
                assert obs.dtype == np.float32 and obs.shape == (enc.obs_size,)
                assert np.array_equal(obs, enc.observation(s.view(seat)))
                assert obs.min() >= 0.0 and obs.max() <= 1.0
            cannot = tracker.cannot
            assert np.array_equal(enc.state_tensor(s, cannot=cannot), state_tensor(s))
            if s.is_over:
                break
            moves = s.legal_moves()
            move = moves[rng.randrange(len(moves))]
            after = s.apply(move)
            tracker.advance(s, s.to_move, move, after)
            s = after


def _reference_observation(view: SeatView) -> np.ndarray:
    """The observation read straight off the pieces table, piece by piece, with the
    cannot-answer table built by ``cannot_answer_table`` and no shortcut."""
    enc = encoding_for(view.rules)
    n, seat, sides = enc.players, view.seat, enc.sides
    others = [(seat + k) % n for k in range(1, n)]
    p = {piece.name: np.zeros(piece.shape, np.float32) for piece in enc.pieces}
    for tile in view.hand:
        p["hand"][tile.index] = 1.0
    for tile in view.layout:
        p["played"][tile.index] = 1.0
    for i, (kind, v, v2) in enumerate(view.ends):
        p["ends"][i, KINDS.index(kind)] = 1.0
        for value in (v, v2):
            if value is not None:
                p["ends"][i, len(KINDS) + value] = 1.0
    # The same float expressions as the encoding's (its shared constants).
    p["boneyard"][0] = view.boneyard_size * enc.inv_tiles
    p["passes"][0] = view.passes_in_row * enc.inv_players
    p["target"][0] = enc.target_value
    p["hand_sizes"][:] = [view.hand_sizes[o] * enc.inv_tiles for o in others]
    if view.rules.teams:
        p["partner"][others.index((seat + 2) % n)] = 1.0
    p["cannot_answer"][:] = enc.cannot_answer_table(view.history)[others]
    if view.scores is not None:
        scale = enc.score_scale
        own = view.rules.side_of(seat)
        p["scores"][:] = [min(view.scores[(own + k) % sides], scale) / scale for k in range(sides)]
    p["leader"][(view.leader - seat) % n] = 1.0
    p["to_move"][(view.to_move - seat) % n] = 1.0
    return np.concatenate([p[piece.name].ravel() for piece in enc.pieces])


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_observation_equals_the_pieces_table(name: str) -> None:
    """The view builder (tuned for the bots' every move) equals a plain reading of the
    pieces table, number for number, for every seat of random mid-hand states."""
    rules = CONFIGS[name]
    enc = encoding_for(rules)
    rng = random.Random(4)
    checked = 0
    for k, s in enumerate(random_states(rules, hands=8, seed=5)):
        if k % 2:
            continue
        for seat in range(rules.players):
            scores = tuple(rng.randrange(3 * rules.target_score) for _ in range(rules.sides))
            for view in (s.view(seat), s.view(seat, scores=scores)):
                obs = enc.observation(view)
                assert obs.dtype == np.float32 and obs.shape == (enc.obs_size,)
                assert np.array_equal(obs, _reference_observation(view))
                checked += 1
    assert checked > 50


def test_observation_refuses_other_rules_and_foreign_tiles() -> None:
    enc = encoding_for(Rules())
    view = HandState.deal(Rules(), 3).view(0)
    enc.observation(view)  # rules now known equal: the check must still catch others
    with pytest.raises(ValueError, match="rules differ"):
        enc.observation(HandState.deal(Rules.preset("kardinal"), 3).view(0))
    with pytest.raises(ValueError, match="9-9.*double-6"):
        enc.observation(dataclasses.replace(view, hand=view.hand + (Tile(9, 9),)))


def _reshuffle_hidden(s: HandState, seat: int, rng: random.Random) -> HandState:
    """The same public state with the tiles ``seat`` cannot see dealt differently."""
    view = s.view(seat)
    hidden = [t for other, hand in enumerate(s.hands) if other != seat for t in hand]
    hidden += list(s.boneyard)
    rng.shuffle(hidden)
    hands: list[tuple[Tile, ...]] = []
    k = 0
    for other, hand in enumerate(s.hands):
        if other == seat:
            hands.append(hand)
        else:
            hands.append(tuple(hidden[k : k + len(hand)]))
            k += len(hand)
    return HandState.from_view(view, hands, hidden[k:])


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_no_leak(name: str) -> None:
    rules = CONFIGS[name]
    enc = encoding_for(rules)
    rng = random.Random(2)
    tracker = ObservationTracker(enc)
    changed = 0
    for k, s in enumerate(random_states(rules, hands=6, seed=3)):
        if k % 3:
            continue
        seat = rng.randrange(rules.players)
        other = _reshuffle_hidden(s, seat, rng)
        if [set(h) for h in other.hands] == [set(h) for h in s.hands]:
            continue  # only the boneyard's order changed
        changed += 1
        obs = enc.observation(s.view(seat))
        assert np.array_equal(obs, enc.observation(other.view(seat)))
        tracker.start(s)
        assert np.array_equal(tracker.observation(seat), obs)
        tracker.start(other)
        assert np.array_equal(tracker.observation(seat), obs)
        if seat == s.to_move:
            assert np.array_equal(
                action_mask(rules, s.legal_moves()), action_mask(rules, other.legal_moves())
            )
        # The full-information state does see the difference.
        assert not np.array_equal(state_tensor(s), state_tensor(other))
    assert changed > 5


def test_state_tensor_holds_everything() -> None:
    rules = Rules.preset("standard", players=3)
    s = HandState.deal(rules, 11)
    s = s.apply(s.legal_moves()[0])
    enc = encoding_for(rules)
    p = enc.split(state_tensor(s, scores=(10, 0, 250)), state=True)
    for seat, hand in enumerate(s.hands):
        assert {Tile.from_index(int(i)) for i in np.flatnonzero(p["hands"][seat])} == set(hand)
    assert {Tile.from_index(int(i)) for i in np.flatnonzero(p["boneyard_tiles"])} == set(s.boneyard)
    assert p["scores"].tolist() == [np.float32(10 / 200), 0.0, 1.0]  # capped at 2 x target
    assert p["to_move"].tolist() == [1.0 if i == s.to_move else 0.0 for i in range(3)]


def test_scores_and_partner_are_relative() -> None:
    rules = Rules.preset("pagat", players=4, teams=True)
    s = HandState.deal(rules, 5)
    enc = encoding_for(rules)
    for seat in range(4):
        p = enc.split(observation(s.view(seat, scores=(30, 70))))
        own, theirs = (30, 70) if seat % 2 == 0 else (70, 30)
        assert p["scores"].tolist() == [np.float32(own / 200), np.float32(theirs / 200)]
        assert p["partner"].tolist() == [0, 1, 0]
        sizes = s.hand_sizes
        assert p["hand_sizes"].tolist() == [
            np.float32(sizes[(seat + k) % 4] / 28) for k in (1, 2, 3)
        ]


def test_signature_is_checked() -> None:
    enc = encoding_for(Rules.preset("kardinal"))
    saved = enc.signature()
    assert saved["encoding_version"] == ENCODING_VERSION
    enc.check_signature(dict(saved))
    with pytest.raises(ValueError, match="encoding_version"):
        enc.check_signature({**saved, "encoding_version": ENCODING_VERSION + 1})
    with pytest.raises(ValueError, match="num_actions"):
        encoding_for(Rules()).check_signature(saved)


# -- input handling -------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [1.5, "5", True, np.bool_(True), np.array([5]), 5.0])
def test_decode_action_takes_integers_only(bad: object) -> None:
    rules = Rules()
    with pytest.raises(TypeError, match=r"action=.*\(.*\) is not allowed.*integer"):
        decode_action(rules, bad)  # type: ignore[arg-type]


def test_decode_action_takes_numpy_integers() -> None:
    rules = Rules()
    move = decode_action(rules, 5)
    assert decode_action(rules, np.int64(5)) == move
    assert decode_action(rules, np.array(5, np.uint8)) == move  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="out of range"):
        decode_action(rules, np.int64(-1))


def test_action_mask_takes_what_encode_action_takes() -> None:
    rules = Rules()
    moves: list[Move | str] = ["3-3", Move.parse("0-1"), "draw"]
    mask = action_mask(rules, moves)
    assert set(np.flatnonzero(mask)) == {encode_action(rules, m) for m in moves}
    assert np.array_equal(action_mask(rules, iter(moves)), mask)  # any iterable
    with pytest.raises(ValueError, match=r"move '6-6@5>6' has no action"):
        action_mask(rules, ["3-3", "6-6@5>6"])
    with pytest.raises(ValueError, match="zz"):
        action_mask(rules, ["zz"])
    for bad in (3, [1], None):
        with pytest.raises(TypeError, match=r"moves entry .* is not allowed.*Move"):
            action_mask(rules, ["3-3", bad])  # type: ignore[list-item]


def test_encoding_for_takes_rules_or_a_preset_name() -> None:
    assert encoding_for("standard") is encoding_for(Rules.preset("standard"))
    assert encoding_for("pagat").rules == Rules.preset("pagat")
    assert decode_action("standard", 5) == decode_action(Rules(), 5)
    with pytest.raises(RulesError, match="preset"):
        encoding_for("nonsense")
    for bad in (3, ["standard"], None, {"players": 2}):
        with pytest.raises(TypeError, match=r"rules=.*allowed.*Rules or a preset's name"):
            encoding_for(bad)  # type: ignore[arg-type]
