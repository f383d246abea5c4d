"""The tensor contract refuses what it would misread (an audit of matador_env.encoding):
scores of the wrong shape or sign, a state where a view belongs, a vector of another
length, a non-move, and a saved signature that only compares equal."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from matador_env.encoding import (
    ENCODING_VERSION,
    ObservationTracker,
    encoding_for,
    max_open_ends,
    observation,
    state_tensor,
)
from matador_env.engine import HandState, Move, Rules, Tile

RULES = Rules()


def dealt(rules: Rules = RULES, seed: int = 3) -> HandState:
    return HandState.deal(rules, seed)


# -- scores: exactly one integer of 0 or more per side, as HandState.view takes them --------


@pytest.mark.parametrize(
    ("scores", "says"),
    [
        ((10, 20, 30), "scores must be None or 2 match totals"),
        ((10,), "scores must be None or 2 match totals"),
        ((-50, 0), "each total must be"),
        (("a", 0), "each total must be"),
        ((True, 0), "each total must be"),
    ],
)
def test_state_tensor_refuses_scores_a_view_would_refuse(scores: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        state_tensor(dealt(), scores=scores)
    with pytest.raises(ValueError, match=says):
        dealt().view(0, scores)  # the same check, the same words


def test_extra_totals_no_longer_spill_into_the_leader_piece() -> None:
    enc = encoding_for(RULES)
    s = dealt()
    leader = enc.split(state_tensor(s, scores=(10, 20)), state=True)["leader"]
    assert leader.tolist() == [float(seat == s.leader) for seat in range(2)]


@pytest.mark.parametrize("scores", [(50, 100, 150), (-50, 0), (1,)])
def test_the_tracker_refuses_scores_of_the_wrong_shape_or_sign(scores: Any) -> None:
    tracker = ObservationTracker(encoding_for(RULES))
    with pytest.raises(ValueError, match="scores"):
        tracker.start(dealt(), scores)
    tracker.start(dealt())
    with pytest.raises(ValueError, match="scores"):
        tracker.set_scores(scores)
    with pytest.raises(ValueError, match="got None"):
        tracker.set_scores(None)  # type: ignore[arg-type]


def test_the_tracker_refuses_a_state_of_other_rules_or_no_state() -> None:
    tracker = ObservationTracker(encoding_for(RULES))
    with pytest.raises(ValueError, match="rules differ"):
        tracker.start(dealt(Rules.preset("double_nine")))
    with pytest.raises(TypeError, match="expected a HandState, got a matador_env.engine.state"):
        tracker.start(dealt().view(0))  # type: ignore[arg-type]


@pytest.mark.parametrize("seat", [-1, 2, True, 1.0, "0"])
def test_the_tracker_refuses_a_seat_that_is_not_one(seat: Any) -> None:
    tracker = ObservationTracker(encoding_for(RULES))
    tracker.start(dealt())
    with pytest.raises(ValueError, match="seat must be a seat number"):
        tracker.observation(seat)


def test_the_tracker_takes_numpy_seats_and_equals_the_view() -> None:
    enc = encoding_for(RULES)
    tracker = ObservationTracker(enc)
    s = dealt()
    tracker.start(s, (5, 7))
    assert np.array_equal(tracker.observation(np.int64(1)), enc.observation(s.view(1, (5, 7))))


# -- the right kind of object ------------------------------------------------------------


def test_a_state_where_a_view_belongs_and_back_say_which_is_needed() -> None:
    s = dealt()
    with pytest.raises(TypeError, match=r"observation: expected a SeatView \(state.view\(seat\)\)"):
        observation(s)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="observation: expected a SeatView"):
        encoding_for(RULES).observation(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="state_tensor: expected a HandState"):
        state_tensor(s.view(0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="state_tensor: expected a HandState"):
        encoding_for(RULES).state_tensor(None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("vector", "state", "says"),
    [
        ("state", False, r"shape \(100,\).*state=True\); got shape \(163,\)"),
        (np.zeros(10), False, r"shape \(10,\)"),
        ([0.0] * 100, False, "a list"),
        (np.zeros((4, 100)), False, r"shape \(4, 100\)"),
        (np.zeros(100), True, r"a state vector, a numpy array of shape \(163,\)"),
    ],
)
def test_split_refuses_a_vector_of_another_length(vector: Any, state: bool, says: str) -> None:
    enc = encoding_for(RULES)
    if isinstance(vector, str):
        vector = state_tensor(dealt())
    with pytest.raises(ValueError, match=says):
        enc.split(vector, state=state)
    assert enc.split(enc.observation(dealt().view(0)))["hand"].sum() == 7


# -- actions -----------------------------------------------------------------------------


@pytest.mark.parametrize("move", [5, None, ("draw", None, None, None, None), Tile(3, 3)])
def test_encode_action_refuses_what_is_no_move_as_action_mask_does(move: Any) -> None:
    enc = encoding_for(RULES)
    with pytest.raises(TypeError, match="allowed: a Move or its text form"):
        enc.encode_action(move)
    with pytest.raises(TypeError, match="allowed: a Move or its text form"):
        enc.action_mask([move])


@pytest.mark.parametrize("moves", ["3-3", b"draw", None, 5])
def test_action_mask_refuses_one_text_or_nothing_to_iterate(moves: Any) -> None:
    with pytest.raises(TypeError, match="allowed: a list of moves"):
        encoding_for(RULES).action_mask(moves)


@pytest.mark.parametrize(
    "move",
    [
        Move("play", Tile(2, 5), True, 5, "inline"),  # True == 1
        Move("play", Tile(2, 5), 1, 5.0, "inline"),  # type: ignore[arg-type]
        Move("play", (2, 5), 1, 5, "inline"),  # type: ignore[arg-type]
    ],
)
def test_encode_action_refuses_a_move_the_engine_refuses(move: Move) -> None:
    enc = encoding_for(RULES)
    real = Move.inline(Tile(2, 5), 1, 5)
    assert move == real  # equal by value, yet not a well-formed move
    with pytest.raises(ValueError, match="is not allowed"):
        enc.encode_action(move)
    assert enc.encode_action(real) == enc.encode_action(str(real))


def test_max_open_ends_takes_a_preset_name_as_its_siblings_do() -> None:
    assert max_open_ends("leiden") == max_open_ends(Rules.preset("leiden"))
    assert max_open_ends("standard") == encoding_for("standard").end_slots == 2
    with pytest.raises(TypeError, match="allowed: a matador_env.engine.Rules or a preset"):
        max_open_ends(7)  # type: ignore[arg-type]


# -- saved signatures ----------------------------------------------------------------------


def test_check_signature_names_each_rules_field_that_differs() -> None:
    saved = encoding_for(Rules(target_score=50)).signature()
    with pytest.raises(ValueError) as exc:
        encoding_for(RULES).check_signature(saved)
    message = str(exc.value)
    assert "rules.target_score: saved 50, now 100" in message
    assert "players" not in message and len(message) < 200, message


@pytest.mark.parametrize("version", [True, float(ENCODING_VERSION), str(ENCODING_VERSION)])
def test_check_signature_compares_the_version_strictly(version: Any) -> None:
    enc = encoding_for(RULES)
    with pytest.raises(ValueError, match="encoding_version: saved"):
        enc.check_signature({**enc.signature(), "encoding_version": version})
    enc.check_signature(enc.signature())


@pytest.mark.parametrize("saved", [None, [], "signature"])
def test_check_signature_refuses_what_is_no_dict(saved: Any) -> None:
    with pytest.raises(TypeError, match="check_signature: expected a dict"):
        encoding_for(RULES).check_signature(saved)


def test_check_signature_names_a_missing_key() -> None:
    enc = encoding_for(RULES)
    saved = enc.signature()
    del saved["obs_size"]
    with pytest.raises(ValueError, match="obs_size: saved '<missing>', now 100"):
        enc.check_signature(saved)
