"""Input handling of the rules, the match, the renderings and the seated configurations:
every bad input gets a clear error naming what was wrong and what is allowed, and a
refused call leaves everything as it was (an audit's findings, one test or more each)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from matador_env.configs import (
    CONFIGURATIONS,
    Configuration,
    ConfigurationError,
    configuration,
    seated_rules,
)
from matador_env.engine import (
    PRESETS,
    HandRecord,
    HandState,
    IllegalMoveError,
    MatchState,
    MoveParseError,
    Rules,
    RulesError,
    derive_seed,
    hand_record,
    parse_hand_record,
    render_table,
    replay,
)
from matador_env.engine.rules import CHOICES, LARGEST_SETTING, checked_value
from matador_env.engine.state import SEED_LIMIT

ROOT = Path(__file__).resolve().parent.parent
HUGE = 10**5000  # more digits than Python prints: repr and str raise ValueError


def finished_hand_match(rules: Rules, seed: int = 1) -> MatchState:
    """A match whose first hand is over (its first legal move each turn)."""
    m = MatchState.new(rules, seed)
    while not m.hand_over:
        m = m.apply(m.legal_moves()[0])
    return m


def some_moves(rules: Rules, seed: int, count: int) -> list[str]:
    s = HandState.deal(rules, seed)
    moves = []
    for _ in range(count):
        move = s.legal_moves()[0]
        moves.append(str(move))
        s = s.apply(move)
    return moves


# -- 1. MatchState checks its fields ----------------------------------------------------------


def test_match_state_refuses_a_hand_dealt_under_other_rules() -> None:
    three = HandState.deal(Rules(players=3), 1)
    with pytest.raises(ValueError, match=r"other rules than the match's: players=3 \(rules: 2\)"):
        MatchState(Rules(), 1, three, (0, 0), 1, (0, 0), ())
    m = MatchState.new(Rules(), 1)
    with pytest.raises(ValueError, match="players=3"):
        dataclasses.replace(m, hand=three)


GOOD: dict[str, Any] = {"seed": 1, "totals": (0, 0), "deals": 1, "leads": (0, 0), "outcomes": ()}


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("seed", "y", "MatchState seed='y' is not allowed: a str, not an integer"),
        ("seed", True, "seed=True is not allowed: a bool, not an integer"),
        ("seed", -1, "from 0 to 18446744073709551615"),
        ("seed", SEED_LIMIT, "from 0 to 18446744073709551615"),
        pytest.param("seed", HUGE, "5001 digits", id="seed-huge"),
        ("hand", None, "hand must be a HandState"),
        ("totals", (0,), "totals must be a tuple of 2 integers"),
        ("totals", [0, 0], "totals must be a tuple of 2 integers"),
        ("totals", (0, -1), "totals must be a tuple of 2 integers >= 0"),
        ("totals", (0, True), "totals must be a tuple of 2 integers"),
        ("leads", (0, 0, 0), "leads must be a tuple of 2 integers"),
        ("deals", 0, "deals must be an integer >= 1"),
        ("deals", 1.0, "deals must be an integer >= 1"),
        ("outcomes", [], "outcomes must be a tuple of Outcome"),
        ("outcomes", (None,), "outcomes must be a tuple of Outcome"),
        ("armed", 1, "armed must be True or False"),
        ("winners", (), "winners must be None or distinct sides from 0 to 1"),
        ("winners", (2,), "winners must be None or distinct sides from 0 to 1"),
        ("winners", (0, 0), "winners must be None or distinct sides from 0 to 1"),
    ],
)
def test_match_state_refuses_fields_of_the_wrong_kind(field: str, value: object, says: str) -> None:
    rules = Rules()
    fields = {**GOOD, "rules": rules, "hand": HandState.deal(rules, 1), field: value}
    with pytest.raises(ValueError, match=says):
        MatchState(**fields)


def test_match_state_refuses_what_is_not_rules() -> None:
    with pytest.raises(RulesError, match="a Rules"):
        MatchState("x", "y", None, (), 0, (), ())  # type: ignore[arg-type]


def test_match_state_holds_numpy_integers_as_plain_ints() -> None:
    rules = Rules()
    hand = HandState.deal(rules, 1)
    m = MatchState(rules, np.int64(11), hand, (np.int64(3), 0), np.uint8(1), (0, np.int32(1)), ())  # type: ignore[arg-type]
    assert m == MatchState(rules, 11, hand, (3, 0), 1, (0, 1), ())
    assert [type(v) for v in (m.seed, *m.totals, m.deals, *m.leads)] == [int] * 6


@pytest.mark.parametrize("rules", [Rules(), Rules(players=4, teams=True), Rules.preset("leiden")])
def test_every_state_of_a_played_match_passes_the_checks(rules: Rules) -> None:
    # apply() and next_hand() skip the checks: what they build must pass them all the same.
    m = MatchState.new(rules, 5)
    for _ in range(400):
        assert dataclasses.replace(m) == m
        if m.is_over:
            break
        m = m.next_hand() if m.hand_over else m.apply(m.legal_moves()[0])


# -- 2. numbers too long to print -------------------------------------------------------------


@pytest.mark.parametrize(
    "field", ["set_max", "players", "hand_size", "target_score", "boneyard_reserve"]
)
def test_a_huge_integer_is_refused_with_a_message_that_prints(field: str) -> None:
    kwargs: dict[str, Any] = {field: HUGE}
    with pytest.raises(RulesError) as exc:
        Rules(**kwargs)
    assert exc.value.field == field and exc.value.value == HUGE
    assert "<an integer of 5001 digits>" in str(exc.value)


def test_a_huge_unknown_key_is_refused_with_a_message_that_prints() -> None:
    with pytest.raises(RulesError, match="5001 digits"):
        Rules.from_dict({HUGE: 1})  # type: ignore[dict-item]


@pytest.mark.parametrize("field", ["target_score", "boneyard_reserve"])
def test_target_score_and_boneyard_reserve_have_an_upper_bound(field: str) -> None:
    largest: dict[str, Any] = {field: LARGEST_SETTING}
    rules = Rules(**largest)
    assert Rules.from_text(rules.to_text()) == rules
    beyond: dict[str, Any] = {field: LARGEST_SETTING + 1}
    with pytest.raises(RulesError, match=f"from [01] to {LARGEST_SETTING}"):
        Rules(**beyond)


def test_rules_md_states_the_upper_bounds() -> None:
    text = (ROOT / "docs" / "rules.md").read_text()
    assert f"{LARGEST_SETTING:,}" == "1,000,000,000"
    for field in ("target_score", "boneyard_reserve"):
        (row,) = [line for line in text.splitlines() if line.startswith(f"| `{field}` |")]
        assert "to 1,000,000,000" in row, row


def test_presets_stay_within_the_bounds() -> None:
    for name in PRESETS:
        rules = Rules.preset(name)
        assert rules.target_score <= LARGEST_SETTING
        assert rules.boneyard_reserve <= LARGEST_SETTING


@pytest.mark.parametrize(
    ("seed", "says"),
    [
        pytest.param(HUGE, "5001 digits", id="huge"),
        (-1, "from 0 to"),
        (SEED_LIMIT, "from 0 to 18446744073709551615"),
    ],
)
def test_match_seeds_out_of_range_are_refused(seed: int, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        MatchState.new(Rules(), seed)


def test_derive_seed_takes_and_gives_seeds_in_range() -> None:
    top = SEED_LIMIT - 1
    for seed, index in [(0, 0), (top, 0), (top, top), (7, -top), (2**63, -1)]:
        assert 0 <= derive_seed(seed, index) < SEED_LIMIT
    assert MatchState.new(Rules(), top).seed == top
    for seed, index in [(SEED_LIMIT, 0), (-1, 0), (0, SEED_LIMIT), (0, -SEED_LIMIT), (0, HUGE)]:
        with pytest.raises(ValueError, match=r"is not allowed; allowed: an integer \("):
            derive_seed(seed, index)


# -- 3. seated_rules checks its seats and changes ---------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field", "says"),
    [
        ({"players": 4, "teams": 1}, "teams", "an int, not a bool"),
        ({"players": 4, "teams": 1, "changes": ["target_score=50"]}, "teams", "not a bool"),
        ({"players": "3", "changes": ["target_score=50"]}, "players", "a str, not an integer"),
        ({"players": "4 teams=True", "changes": ["x=1"]}, "players", "a str"),
        ({"players": True, "changes": ["target_score=50"]}, "players", "a bool, not an integer"),
        ({"changes": "players=3"}, "changes", "read letter by letter"),
        ({"changes": None}, "changes", "a NoneType"),
        ({"changes": [3]}, "changes", "an int in the changes"),
        ({"changes": ["target_score=50 players=3"]}, "rules text", "one key=value pair"),
        ({"changes": ["target_score = 50"]}, "rules text", "one key=value pair"),
        ({"changes": ["target_score=50=3"]}, "rules text", "one key=value pair"),
        ({"changes": ["target_score="]}, "rules text", "one key=value pair"),
        ({"changes": ["players"]}, "rules text", "key=value"),
        ({"players": HUGE, "changes": ["target_score=50"]}, "players", "5001 digits"),
    ],
)
def test_seated_rules_refuses_bad_seats_and_changes(
    kwargs: dict[str, Any], field: str, says: str
) -> None:
    with pytest.raises(RulesError) as exc:
        seated_rules("pagat", **kwargs)
    assert exc.value.field == field and says in str(exc.value), str(exc.value)
    assert "allowed" in str(exc.value)


def test_seated_rules_takes_numpy_players_with_changes_or_without() -> None:
    plain = seated_rules("pagat", players=4, teams=True, changes=["target_score=50"])
    assert seated_rules("pagat", np.int64(4), True, ["target_score=50"]) == plain  # type: ignore[arg-type]
    assert seated_rules("pagat", np.int64(3)) == Rules.preset("pagat", players=3)  # type: ignore[arg-type]
    assert seated_rules("pagat", changes=iter(["set_max=9"])).set_max == 9  # type: ignore[arg-type]


# -- 4 and 5. values of the wrong type --------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("first_leader", np.array(["random"])),
        ("lead_tile", np.array("any")),
        ("hand_size", np.array("all")),
        ("hand_size", np.array(["all", "all"])),
        ("hand_size", b"all"),
        ("tie", None),
    ],
    ids=["array-of-one", "0d-array", "0d-hand-size", "two-hand-sizes", "bytes", "none"],
)
def test_strings_in_other_clothes_are_refused(field: str, value: object) -> None:
    kwargs: dict[str, Any] = {field: value}
    with pytest.raises(RulesError) as exc:
        Rules(**kwargs)
    assert exc.value.field == field and "allowed" in str(exc.value)


def test_numpy_integers_are_held_as_plain_ints() -> None:
    numpy_values: dict[str, Any] = {
        "players": np.int64(3),
        "set_max": np.uint8(9),
        "hand_size": np.int16(5),
        "target_score": np.array(50),
    }
    given = Rules(**numpy_values)
    plain = Rules(players=3, set_max=9, hand_size=5, target_score=50)
    assert given == plain and hash(given) == hash(plain) and given.to_text() == plain.to_text()
    assert {
        type(getattr(given, f)) for f in ("players", "set_max", "hand_size", "target_score")
    } == {int}


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("teams", np.True_, "a numpy.bool, not a bool"),
        ("matador_as_regular", 1, "an int, not a bool"),
        ("players", True, "a bool, not an integer"),
        ("players", np.True_, "a numpy.bool, not an integer"),
        ("target_score", 50.0, "a float, not an integer"),
    ],
)
def test_wrong_types_name_their_type(field: str, value: object, says: str) -> None:
    kwargs: dict[str, Any] = {field: value}
    if field == "teams":
        kwargs["players"] = 4
    with pytest.raises(RulesError) as exc:
        Rules(**kwargs)
    assert says in str(exc.value), str(exc.value)


def test_checked_value_is_what_the_constructor_holds() -> None:
    assert checked_value("players", np.int64(3)) == 3
    assert checked_value("spinner", "first_double") == "first_double"
    with pytest.raises(RulesError, match="colour"):
        checked_value("colour", "red")


@pytest.mark.parametrize("seed", ["3", None, 3.0, True, b"3"])
def test_derive_seed_takes_integers_only(seed: object) -> None:
    with pytest.raises(ValueError, match=r"^seed=.* is not allowed: an? [A-Za-z]+, not an integer"):
        derive_seed(seed, 0)  # type: ignore[arg-type]


def test_derive_seed_reads_numpy_integers_as_their_value() -> None:
    assert derive_seed(np.int64(3), np.int8(-1)) == derive_seed(3, -1)  # type: ignore[arg-type]
    assert MatchState.new(Rules(), np.uint64(3)) == MatchState.new(Rules(), 3)  # type: ignore[arg-type]


# -- 6. replay names the move at fault --------------------------------------------------------


def test_replay_names_the_illegal_move_by_its_place() -> None:
    rules = Rules()
    moves = some_moves(rules, 7, 6)
    bad = [*moves[:3], "6-6@0>6", *moves[3:]]
    with pytest.raises(IllegalMoveError) as exc:
        replay(rules, 7, None, bad)
    assert str(exc.value).startswith("moves[3]: illegal move '6-6@0>6'")
    assert exc.value.legal  # the error's own fields are kept
    with pytest.raises(MoveParseError, match=r"^moves\[1\]: not a move: 'sideways'"):
        replay(rules, 7, None, [moves[0], "sideways"])
    with pytest.raises(IllegalMoveError, match=r"^moves\[0\]: .*expected a Move"):
        replay(rules, 7, None, [None])  # type: ignore[list-item]


@pytest.mark.parametrize("moves", ["2-2 0-5@0>0", b"draw", None, 3])
def test_replay_refuses_moves_that_are_not_a_list(moves: object) -> None:
    with pytest.raises(MoveParseError, match="moves: expected a list of moves"):
        replay(Rules(), 7, None, moves)  # type: ignore[arg-type]


def test_hand_record_replay_names_the_illegal_move() -> None:
    rules = Rules()
    record = parse_hand_record(hand_record(replay(rules, 7, None, some_moves(rules, 7, 4))))
    broken = dataclasses.replace(record, moves=(record.moves[0], record.moves[0]))
    with pytest.raises(IllegalMoveError, match=r"^moves\[1\]: "):
        broken.replay()


# -- 7. hand records are read as strictly as they are written ---------------------------------


def record_text() -> str:
    rules = Rules()
    return hand_record(replay(rules, 7, None, some_moves(rules, 7, 4)))


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        ("seed: 7", "seed: ٧", "line 3 'seed: ٧' is not one"),
        ("seed: 7", "seed: 0_7", "line 3 'seed: 0_7' is not one"),
        ("seed: 7", "seed: -7", "line 3 'seed: -7' is not one"),
        ("seed: 7", "seed: 7 ", None),  # trailing spaces are stripped, as before
        ("seed: 7", "seed: " + "7" * 5000, "the seed must be from 0 to 18446744073709551615"),
        ("seed: 7", f"seed: {SEED_LIMIT}", "the seed must be from 0 to 18446744073709551615"),
        ("leader: ", "leader: +", "line 4 'leader: +"),
        ("leader: ", "leader: 1", "is not a seat (0 to 1)"),
        ("seed: 7", "seed: 7\nseed: 8", "line 4 'seed: 8' repeats 'seed' (from line 3 'seed: 7')"),
        ("seed: 7", "seed: 7\nfoo: bar", "line 4 'foo: bar' has an unknown key 'foo'"),
        ("seed: 7", "seed: 7\nhand 5: 1-1", "line 4 'hand 5: 1-1' is no seat's hand"),
        ("seed: 7", "seed: 7\nhand 00: 1-1", "is no seat's hand"),
        # A word that is no tile or move names its line and place.
        ("hand 1: ", "hand 1: 1-x ", "hand record: line 6 'hand 1: 1-x "),
        ("boneyard: ", "boneyard: x ", "line 7 'boneyard: x 0-0 0-3 1-5"),
        ("moves: ", "moves: draw 2-5@", ", word 2: not a move: '2-5@2-2'"),
    ],
)
def test_parse_hand_record_refuses_what_the_text_forms_refuse(
    old: str, new: str, says: str | None
) -> None:
    text = record_text()
    assert old in text
    changed = text.replace(old, new, 1)
    if says is None:
        assert parse_hand_record(changed) == parse_hand_record(text)
        return
    with pytest.raises(MoveParseError) as exc:
        parse_hand_record(changed)
    assert says in str(exc.value), str(exc.value)


def test_parse_hand_record_reads_the_largest_seed() -> None:
    text = record_text().replace("seed: 7", f"seed: {SEED_LIMIT - 1}", 1)
    assert parse_hand_record(text).seed == SEED_LIMIT - 1


# -- 8. render_table's names ------------------------------------------------------------------


@pytest.mark.parametrize("names", [["A"], "AB", ["A", 2], ("A", "B", "C"), 7])
def test_render_table_refuses_names_that_are_not_one_str_per_seat(names: object) -> None:
    with pytest.raises(ValueError, match="names must be None or a sequence of 2 str, one per seat"):
        render_table(HandState.deal(Rules(), 1), names=names)  # type: ignore[arg-type]


def test_render_table_takes_one_name_per_seat() -> None:
    table = render_table(HandState.deal(Rules(), 1), names=("Ann", "Bob"))
    assert " Ann: " in table and " Bob: " in table


# -- 9. a move between hands ------------------------------------------------------------------


def test_a_move_between_hands_says_to_deal_the_next() -> None:
    m = finished_hand_match(Rules())
    before = dataclasses.replace(m)
    with pytest.raises(IllegalMoveError, match=r"the hand is over; call next_hand\(\)"):
        m.apply("draw")
    assert m == before
    assert not m.next_hand().hand_over  # the way on


# -- 10. spaces around '=' --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["players = 3", "players= 3", "players =3", "tie=redeal players = 3"]
)
def test_from_text_says_that_spaces_around_equals_split_a_pair(text: str) -> None:
    with pytest.raises(RulesError) as exc:
        Rules.from_text(text)
    assert exc.value.field == "rules text"
    assert "a space next to '='" in str(exc.value) and "no space around '='" in str(exc.value)
    assert exc.value.value == text.removeprefix("tie=redeal ")  # the pair, both its words


@pytest.mark.parametrize(
    "text, field, says",
    [
        # Found by the fuzz campaign on saved states (seed 5, trial 2513): an edit had
        # repeated part of a state's rules text, and the later pair hid the bad one.
        ("match_end=first_to_target=only_matadors match_end=first_to_target", "match_end",
         "allowed: 'first_to_target', 'complete_round'"),
        ("tie=draw tie=void", "tie", "allowed: 'void', 'redeal'"),
        ("hand_size=xyz hand_size=7", "hand_size", "'by_players', 'all' or an integer >= 1"),
        ("set_max=99 set_max=6", "set_max", "an integer from 3 to 15"),
    ],
)  # fmt: skip
def test_from_text_refuses_a_bad_pair_that_a_later_pair_would_override(
    text: str, field: str, says: str
) -> None:
    with pytest.raises(RulesError, match=says) as exc:
        Rules.from_text(text)
    assert exc.value.field == field
    # A later pair still wins over an allowed one.
    assert Rules.from_text("tie=redeal tie=void") == Rules(tie="void")


# -- 11. the presets and configurations are read-only -----------------------------------------


def test_presets_and_configurations_cannot_be_edited() -> None:
    with pytest.raises(TypeError):
        PRESETS["standard"] = {"players": 3}  # type: ignore[index]
    with pytest.raises(TypeError):
        PRESETS["pagat"]["hand_size"] = 5  # type: ignore[index]
    with pytest.raises(TypeError):
        CONFIGURATIONS["pagat"] = configuration("standard")  # type: ignore[index]
    assert Rules.preset("pagat").hand_size == 7
    assert Rules.preset("kardinal").to_dict() == {**Rules().to_dict(), **PRESETS["kardinal"]}
    # The choices too: an edit would change what every later Rules accepts.
    with pytest.raises(TypeError):
        CHOICES["tie"] = ("void", "redeal", "coin")  # type: ignore[index]
    with pytest.raises(RulesError, match="tie='coin' is not allowed"):
        Rules(tie="coin")


# -- 12. a HandRecord and a Configuration built directly are checked as the parsed ones ----


def _record_fields() -> dict[str, Any]:
    record = parse_hand_record(record_text())
    return {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}


@pytest.mark.parametrize(
    ("change", "error", "says"),
    [
        ({"rules": "standard"}, RulesError, "rules='standard' is not allowed"),
        ({"seed": -1}, ValueError, "seed=-1 is not allowed"),
        ({"seed": SEED_LIMIT}, ValueError, "from 0 to 18446744073709551615"),
        ({"leader": 2}, ValueError, "leader must be a seat number"),
        ({"leader": True}, ValueError, "leader must be a seat number"),
        ({"boneyard": ()}, ValueError, "every tile must be placed once; missing"),
        ({"moves": "draw"}, MoveParseError, "moves are a list or tuple of moves, got a str"),
        ({"moves": ["draw", "2-5@"]}, MoveParseError, r"moves\[1\]: not a move: '2-5@'"),
        ({"moves": [("draw", None)]}, MoveParseError, r"moves\[0\]: expected a Move or its text"),
    ],
)
def test_a_hand_record_built_directly_refuses_what_no_record_holds(
    change: dict[str, Any], error: type[Exception], says: str
) -> None:
    fields = {**_record_fields(), **change}
    with pytest.raises(error, match=says):
        HandRecord(**fields)


def test_a_hand_record_built_from_text_and_numpy_equals_the_parsed_one() -> None:
    fields = _record_fields()
    built = HandRecord(
        fields["rules"],
        np.uint64(fields["seed"]),
        np.int8(fields["leader"]),
        [[str(t) for t in hand] for hand in fields["hands"]],  # type: ignore[arg-type]
        [str(t) for t in fields["boneyard"]],  # type: ignore[arg-type]
        [str(m) for m in fields["moves"]],  # type: ignore[arg-type]
    )
    parsed = parse_hand_record(record_text())
    assert built == parsed and hash(built) == hash(parsed)
    assert type(built.seed) is int and type(built.leader) is int
    assert built.replay() == parsed.replay()


@pytest.mark.parametrize(
    ("args", "error", "says"),
    [
        (("../up", "standard"), ConfigurationError, "lowercase letters, digits and underscores"),
        (("", "standard"), ConfigurationError, "got ''"),
        ((3, "standard"), ConfigurationError, "got 3"),
        (("x", "nope"), RulesError, "preset='nope' is not allowed"),
        (("x", "standard", 1), RulesError, "players"),
        (("x", "standard", 3, True), RulesError, "teams"),
        (("x", "standard", 4, "yes"), RulesError, "teams='yes' is not allowed"),
    ],
)
def test_a_configuration_refuses_a_name_or_seats_that_make_no_table(
    args: tuple[Any, ...], error: type[Exception], says: str
) -> None:
    with pytest.raises(error, match=says):
        Configuration(*args)


def test_a_configuration_holds_numpy_seats_as_plain_values() -> None:
    built = Configuration("standard_4p", "standard", np.int64(4))
    assert built == configuration("standard_4p") and type(built.players) is int


def test_scores_may_be_a_numpy_row_of_totals() -> None:
    state = HandState.deal(Rules(), 1)
    row: Any = np.array([10, 20], np.uint16)  # (typed as totals: a tuple of ints)
    assert state.view(0, row).scores == (10, 20)
    assert type(state.view(0, row).scores[0]) is int  # type: ignore[index]
    for bad in (np.array([[10, 20]]), np.array([1.5, 2.0]), "12", {0: 1, 1: 2}):
        with pytest.raises(ValueError, match="scores"):
            state.view(0, bad)  # type: ignore[arg-type]
