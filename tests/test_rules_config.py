"""The rules configuration (RULES.md "Options", "Presets" and the refused combinations),
and the configurations bots are shipped for (matador_env.configs).

Every expectation here is written from RULES.md, not read back from the engine.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from matador_env.configs import (
    CONFIGURATIONS,
    Configuration,
    ConfigurationError,
    configuration,
    configuration_of,
    seated_rules,
    seated_rules_flag,
)
from matador_env.engine import PRESETS, Rules, RulesError

# RULES.md, table "Options": the default is the first value listed.
DEFAULTS: dict[str, Any] = {
    "set_max": 6,
    "players": 2,
    "teams": False,
    "hand_size": "by_players",
    "first_leader": "random",
    "lead_tile": "any",
    "next_leader": "rotate",
    "draw_rule": "until_playable",
    "boneyard_reserve": 2,
    "voluntary_draw": "only_matadors",
    "matador_placement": "inline",
    "matador_as_regular": False,
    "matador_only_when_stuck": False,
    "spinner": "none",
    "blocked_scoring": "others_minus_own",
    "tie": "void",
    "target_score": 100,
    "match_end": "first_to_target",
}

# RULES.md, table "Presets": the settings that differ from the defaults.
KARDINAL: dict[str, Any] = {
    "draw_rule": "up_to_two",
    "boneyard_reserve": 0,
    "voluntary_draw": "never",
    "matador_placement": "branching",
    "matador_only_when_stuck": True,
    "next_leader": "rotate",
    "match_end": "complete_round",
}
PRESET_TABLE: dict[str, dict[str, Any]] = {
    "standard": {},
    "pagat": {"hand_size": 7, "first_leader": "random"},
    "kardinal": KARDINAL,
    "kardinal_hard": {**KARDINAL, "draw_rule": "until_playable", "boneyard_reserve": 2},
    "polish": {
        "first_leader": "highest_double",
        "boneyard_reserve": 0,
        "voluntary_draw": "never",
        "matador_placement": "upright",
        "blocked_scoring": "others",
    },
    "leiden": {
        "players": 2,
        "hand_size": 6,
        "first_leader": "highest_double",
        "lead_tile": "double_not_blank",
        "next_leader": "loser",
        "spinner": "lead_double_cross",
        "voluntary_draw": "always",
        "blocked_scoring": "others_plus_own",
        "tie": "redeal",
    },
    "double_nine": {"set_max": 9},
    "double_twelve": {"set_max": 12},
}

# RULES.md: every allowed value of every enumerated option, the default first.
ENUMS: dict[str, tuple[str, ...]] = {
    "first_leader": ("random", "highest_double"),
    "lead_tile": ("any", "highest_double", "double_not_blank"),
    "next_leader": ("rotate", "loser", "winner"),
    "draw_rule": ("until_playable", "up_to_two", "one", "none"),
    "voluntary_draw": ("only_matadors", "never", "always"),
    "matador_placement": (
        "inline",
        "crosswise_choice",
        "crosswise_on_blank",
        "upright",
        "branching",
    ),
    "spinner": ("none", "first_double", "lead_double_cross"),
    "blocked_scoring": ("others_minus_own", "others", "others_plus_own"),
    "tie": ("void", "redeal"),
    "match_end": ("first_to_target", "complete_round"),
}


def _assert_rules_error(exc: pytest.ExceptionInfo[RulesError], field: str, value: object) -> str:
    """The error names the field and the value, and says what is allowed."""
    err = exc.value
    assert isinstance(err, ValueError)
    msg = str(err)
    assert field in msg, msg
    assert str(value) in msg, msg
    assert "allowed" in msg, msg
    assert err.field == field
    assert err.value == value
    assert err.allowed
    return msg


# -- defaults and presets -------------------------------------------------------------------


def test_defaults_equal_rules_md() -> None:
    r = Rules()
    assert r.to_dict() == DEFAULTS
    assert r.link_sum == 7
    assert r.tile_count == 28
    assert r.tiles_per_seat == (7, 7)
    assert r.boneyard_size == 14
    assert r.changes() == {}


def test_every_field_is_an_option_of_rules_md() -> None:
    assert [f.name for f in dataclasses.fields(Rules)] == list(DEFAULTS)


def test_preset_names_are_exactly_the_rules_md_table() -> None:
    assert set(PRESETS) == set(PRESET_TABLE)
    assert set(Rules.PRESET_NAMES) == set(PRESET_TABLE)


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_preset_settings(name: str) -> None:
    r = Rules.preset(name)
    assert r.to_dict() == {**DEFAULTS, **PRESET_TABLE[name]}
    assert r.preset_name() == name


def test_preset_derived_values() -> None:
    assert Rules.preset("leiden").tiles_per_seat == (6, 6)
    assert Rules.preset("leiden").boneyard_size == 16
    assert Rules.preset("pagat").tiles_per_seat == (7, 7)
    nine = Rules.preset("double_nine")
    assert (nine.link_sum, nine.tile_count, nine.boneyard_size) == (10, 55, 41)
    twelve = Rules.preset("double_twelve")
    assert (twelve.link_sum, twelve.tile_count, twelve.boneyard_size) == (13, 91, 77)


def test_preset_with_overrides() -> None:
    r = Rules.preset("polish", players=3)
    assert r.to_dict() == {**DEFAULTS, **PRESET_TABLE["polish"], "players": 3}
    assert r.tiles_per_seat == (6, 6, 6)
    assert r.boneyard_size == 10
    assert r.preset_name() is None
    # pagat allows partnerships with four players.
    p = Rules.preset("pagat", players=4, teams=True)
    assert (p.players, p.teams, p.hand_size) == (4, True, 7)
    assert p.sides == 2
    assert [p.side_of(s) for s in range(4)] == [0, 1, 0, 1]
    # An override that breaks a combination is refused like any other setting.
    with pytest.raises(RulesError) as exc:
        Rules.preset("kardinal", next_leader="loser")
    _assert_rules_error(exc, "match_end", "complete_round")


# -- every allowed value is accepted --------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"), [(f, v) for f, values in ENUMS.items() for v in values]
)
def test_every_enum_value_is_accepted(field: str, value: str) -> None:
    extra: dict[str, Any] = {}
    if value == "lead_double_cross":
        extra["lead_tile"] = "double_not_blank"
    if value == "complete_round":
        extra["next_leader"] = "rotate"
    r = Rules(**{field: value, **extra})
    assert getattr(r, field) == value


@pytest.mark.parametrize("set_max", range(3, 16))
def test_set_max_range(set_max: int) -> None:
    r = Rules(set_max=set_max, hand_size=1)
    assert r.link_sum == set_max + 1
    assert r.tile_count == (set_max + 1) * (set_max + 2) // 2


def test_other_accepted_values() -> None:
    assert Rules(boneyard_reserve=0).boneyard_reserve == 0
    assert Rules(boneyard_reserve=5).boneyard_reserve == 5
    assert Rules(target_score=1).target_score == 1
    assert Rules(target_score=150).target_score == 150
    assert Rules(players=4, teams=True).sides == 2
    assert Rules(players=3).sides == 3
    assert Rules(matador_as_regular=True).matador_as_regular is True
    assert Rules(matador_only_when_stuck=True).matador_only_when_stuck is True
    # More than four players with a bigger set and an integer hand size.
    big = Rules(set_max=9, players=6, hand_size=7)
    assert big.tiles_per_seat == (7,) * 6
    assert big.boneyard_size == 13
    # A deal of exactly the whole set is allowed (no boneyard).
    assert Rules(players=4, hand_size=7).boneyard_size == 0


# -- hand sizes -----------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "size"), [(2, 7), (3, 6), (4, 5)])
def test_hand_size_by_players(players: int, size: int) -> None:
    r = Rules(players=players)
    assert r.tiles_per_seat == (size,) * players
    assert r.boneyard_size == 28 - size * players


def test_hand_size_integer() -> None:
    r = Rules(players=3, hand_size=4)
    assert r.tiles_per_seat == (4, 4, 4)
    assert r.boneyard_size == 16


@pytest.mark.parametrize(
    ("set_max", "players", "per_seat"),
    [
        (6, 2, (14, 14)),
        (6, 3, (10, 9, 9)),
        (6, 4, (7, 7, 7, 7)),
        (6, 5, (6, 6, 6, 5, 5)),
        (9, 4, (14, 14, 14, 13)),
        (12, 5, (19, 18, 18, 18, 18)),
    ],
)
def test_hand_size_all_lower_seats_hold_the_extra_tiles(
    set_max: int, players: int, per_seat: tuple[int, ...]
) -> None:
    r = Rules(set_max=set_max, players=players, hand_size="all")
    assert r.tiles_per_seat == per_seat
    assert r.boneyard_size == 0


# -- refused settings -----------------------------------------------------------------------


def test_unknown_preset() -> None:
    with pytest.raises(RulesError) as exc:
        Rules.preset("celko")
    msg = _assert_rules_error(exc, "preset", "celko")
    for name in PRESET_TABLE:
        assert name in msg


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: Rules.preset("standard", colour="red"), "colour"),
        (lambda: Rules.from_dict({"colour": "red"}), "colour"),
        (lambda: Rules.from_text("colour=red"), "colour"),
        (lambda: Rules().replace(colour="red"), "colour"),
        # Named like the methods' own parameters, which are positional only: before,
        # Python refused these with "got multiple values for argument" (a TypeError).
        (lambda: Rules.preset("standard", name="red"), "name"),
        (lambda: Rules.preset("standard", cls="red"), "cls"),
        (lambda: Rules().replace(self="red"), "self"),
    ],
    ids=["preset", "from_dict", "from_text", "replace", "preset name", "preset cls", "self"],
)
def test_unknown_field(build: Any, field: str) -> None:
    with pytest.raises(RulesError) as exc:
        build()
    msg = _assert_rules_error(exc, field, "red")
    assert "draw_rule" in msg  # the allowed fields are listed


@pytest.mark.parametrize("field", sorted(ENUMS))
def test_bad_enum_value(field: str) -> None:
    kwargs: dict[str, Any] = {field: "sideways"}
    with pytest.raises(RulesError) as exc:
        Rules(**kwargs)
    msg = _assert_rules_error(exc, field, "sideways")
    for allowed in ENUMS[field]:
        assert allowed in msg


def test_bad_enum_value_in_text_and_dict() -> None:
    with pytest.raises(RulesError) as exc:
        Rules.from_text("draw_rule=three")
    _assert_rules_error(exc, "draw_rule", "three")
    with pytest.raises(RulesError) as exc:
        Rules.from_dict({"tie": "replay"})
    _assert_rules_error(exc, "tie", "replay")


@pytest.mark.parametrize("players", [2, 3, 5])
def test_teams_need_four_players(players: int) -> None:
    with pytest.raises(RulesError) as exc:
        Rules(set_max=9, players=players, hand_size=5, teams=True)
    msg = _assert_rules_error(exc, "teams", True)
    assert "4" in msg


def test_deal_larger_than_the_set() -> None:
    with pytest.raises(RulesError) as exc:
        Rules(players=4, hand_size=8)  # 32 tiles from a set of 28
    msg = _assert_rules_error(exc, "hand_size", 8)
    assert "28" in msg
    with pytest.raises(RulesError) as exc:
        Rules(players=2, hand_size=15)
    _assert_rules_error(exc, "hand_size", 15)
    with pytest.raises(RulesError) as exc:
        Rules(set_max=9, players=8, hand_size=7)  # 56 tiles from a set of 55
    msg = _assert_rules_error(exc, "hand_size", 7)
    assert "55" in msg


@pytest.mark.parametrize(
    ("settings", "field", "value"),
    [
        ({"hand_size": 0}, "hand_size", 0),
        ({"hand_size": -3}, "hand_size", -3),
        ({"set_max": 3, "players": 11, "hand_size": "all"}, "players", 11),
        ({"set_max": 6, "players": 29, "hand_size": "all"}, "players", 29),
    ],
)
def test_deal_leaving_a_seat_without_a_tile(
    settings: dict[str, Any], field: str, value: object
) -> None:
    with pytest.raises(RulesError) as exc:
        Rules(**settings)
    _assert_rules_error(exc, field, value)


def test_hand_size_by_players_with_five_players() -> None:
    with pytest.raises(RulesError) as exc:
        Rules(set_max=9, players=5)
    _assert_rules_error(exc, "hand_size", "by_players")


def test_bad_hand_size_value() -> None:
    with pytest.raises(RulesError) as exc:
        Rules(hand_size="half")  # type: ignore[arg-type]
    _assert_rules_error(exc, "hand_size", "half")


@pytest.mark.parametrize("lead_tile", ["any", "highest_double"])
def test_lead_double_cross_needs_double_not_blank(lead_tile: str) -> None:
    with pytest.raises(RulesError) as exc:
        Rules(spinner="lead_double_cross", lead_tile=lead_tile)
    msg = _assert_rules_error(exc, "spinner", "lead_double_cross")
    assert "double_not_blank" in msg
    assert lead_tile in msg


@pytest.mark.parametrize("next_leader", ["loser", "winner"])
def test_complete_round_needs_rotate(next_leader: str) -> None:
    with pytest.raises(RulesError) as exc:
        Rules(match_end="complete_round", next_leader=next_leader)
    msg = _assert_rules_error(exc, "match_end", "complete_round")
    assert "rotate" in msg


def test_complete_round_refused_with_a_lead_that_moves_left() -> None:
    # docs/rules.md, "The refused combinations": match_end="complete_round" with
    # lead_tile="double_not_blank" (a lead that moves left would leave the lead counts
    # uneven for good); the other lead rules are allowed.
    with pytest.raises(RulesError) as exc:
        Rules(match_end="complete_round", lead_tile="double_not_blank")
    _assert_rules_error(exc, "match_end", "complete_round")
    for lead_tile in ("any", "highest_double"):
        assert Rules(match_end="complete_round", lead_tile=lead_tile).lead_tile == lead_tile


@pytest.mark.parametrize("set_max", [-1, 0, 1, 2, 16, 20])
def test_set_max_out_of_range(set_max: int) -> None:
    with pytest.raises(RulesError) as exc:
        Rules(set_max=set_max, hand_size=1)
    msg = _assert_rules_error(exc, "set_max", set_max)
    assert "3" in msg and "15" in msg


@pytest.mark.parametrize("reserve", [-1, -2])
def test_negative_reserve(reserve: int) -> None:
    with pytest.raises(RulesError) as exc:
        Rules(boneyard_reserve=reserve)
    _assert_rules_error(exc, "boneyard_reserve", reserve)


@pytest.mark.parametrize("target", [0, -1, -100])
def test_non_positive_target(target: int) -> None:
    with pytest.raises(RulesError) as exc:
        Rules(target_score=target)
    _assert_rules_error(exc, "target_score", target)


@pytest.mark.parametrize("players", [1, 0])
def test_too_few_players(players: int) -> None:
    with pytest.raises(RulesError) as exc:
        Rules(players=players)
    _assert_rules_error(exc, "players", players)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("set_max", "6"),
        ("players", 2.0),
        ("teams", "yes"),
        ("matador_as_regular", 1),
        ("target_score", True),
    ],
)
def test_wrong_types(field: str, value: object) -> None:
    kwargs: dict[str, Any] = {field: value}
    with pytest.raises(RulesError) as exc:
        Rules(**kwargs)
    _assert_rules_error(exc, field, value)


def test_rules_error_is_a_value_error() -> None:
    assert issubclass(RulesError, ValueError)


# -- round trips ----------------------------------------------------------------------------

ROUND_TRIP_CASES = [Rules.preset(name) for name in sorted(PRESET_TABLE)] + [
    Rules.preset("polish", players=3),
    Rules.preset("pagat", players=4, teams=True),
    Rules(players=3, hand_size="all", matador_placement="crosswise_on_blank"),
    Rules(players=3, hand_size=4, matador_as_regular=True, target_score=150),
    Rules(set_max=9, players=6, hand_size=7, spinner="first_double", tie="redeal"),
]


@pytest.mark.parametrize("rules", ROUND_TRIP_CASES, ids=lambda r: r.to_text()[:60])
def test_text_round_trip(rules: Rules) -> None:
    text = rules.to_text()
    back = Rules.from_text(text)
    assert back == rules
    assert back.to_text() == text
    assert type(back.hand_size) is type(rules.hand_size)


@pytest.mark.parametrize("rules", ROUND_TRIP_CASES, ids=lambda r: r.to_text()[:60])
def test_dict_round_trip(rules: Rules) -> None:
    d = rules.to_dict()
    assert set(d) == set(DEFAULTS)
    assert Rules.from_dict(d) == rules
    assert Rules.from_dict(dict(d)).to_dict() == d


def test_text_form_names_every_field() -> None:
    text = Rules.preset("leiden").to_text()
    pairs = dict(part.split("=") for part in text.split())
    assert set(pairs) == set(DEFAULTS)
    assert pairs["lead_tile"] == "double_not_blank"
    assert pairs["hand_size"] == "6"


def test_partial_text_and_dict_fill_defaults() -> None:
    assert Rules.from_text("players=3 draw_rule=one") == Rules(players=3, draw_rule="one")
    assert Rules.from_text("") == Rules()
    assert Rules.from_dict({"matador_placement": "upright"}) == Rules(matador_placement="upright")


def test_rules_are_frozen_and_hashable() -> None:
    r = Rules()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.players = 3  # type: ignore[misc]
    assert hash(r) == hash(Rules())
    assert r.replace(players=3) == Rules(players=3)
    assert r == Rules()  # replace returned a new object


# -- the configurations a bot is shipped for (matador_env.configs) ---------------------------


@pytest.mark.parametrize(
    ("name", "flags", "describe"),
    [
        ("standard", ["--preset", "standard"], "standard, 2 players"),
        (
            "standard_3p",
            ["--preset", "standard", "--players", "3"],
            "standard, 3 players, each for himself",
        ),
        (
            "pagat_teams",
            ["--preset", "pagat", "--players", "4", "--teams"],
            "pagat, 4 players in two partnerships",
        ),
    ],
)
def test_a_configuration_names_its_flags_and_its_table(
    name: str, flags: list[str], describe: str
) -> None:
    config = configuration(name)
    assert config.flags() == flags and config.describe() == describe
    assert configuration_of(config.rules()) is config


def test_a_configuration_without_partnerships_says_no_teams() -> None:
    assert Configuration("pagat_4p", "pagat", 4, False).flags()[-1] == "--no-teams"
    assert configuration_of(Rules.preset("standard", target_score=7)) is None


@pytest.mark.parametrize("given", ["standard", None, {"preset": "standard"}])
def test_configuration_of_takes_rules_only(given: object) -> None:
    # A preset name answered None, which reads as "no configuration is shipped".
    with pytest.raises(TypeError, match=r"configuration_of: rules=.* is not allowed; allowed"):
        configuration_of(given)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["Standard", "standard/../up", "standard_4p\n"])
def test_a_configuration_name_is_one_lowercase_word(name: str) -> None:
    with pytest.raises(ConfigurationError, match="lowercase letters, digits and underscores"):
        Configuration(name, "standard")


@pytest.mark.parametrize("name", ["nope", ["standard"], None])
def test_an_unknown_configuration_is_refused_listing_the_known_ones(name: Any) -> None:
    with pytest.raises(ConfigurationError) as exc:
        configuration(name)
    assert str(exc.value).endswith("known: " + ", ".join(CONFIGURATIONS))


def test_seated_rules_change_the_presets_rules() -> None:
    assert seated_rules("kardinal", changes=["target_score=50"]) == Rules.preset(
        "kardinal", target_score=50
    )
    assert seated_rules("pagat", 4, True) == Rules.preset("pagat", players=4, teams=True)


@pytest.mark.parametrize("field", ["players", "teams"])
def test_seated_rules_refuse_a_seat_field_given_on_its_own_and_in_the_changes(field: str) -> None:
    seats: dict[str, Any] = {"players": 4, "teams": True}
    with pytest.raises(RulesError) as exc:
        seated_rules("pagat", **seats, changes=[f"{field}=4"])
    assert exc.value.field == field and "give it once" in str(exc.value)


@pytest.mark.parametrize(
    ("field", "players", "teams", "changes", "flag"),
    [
        ("preset", 3, None, ["target_score=50"], "--preset"),
        ("target_score", 3, None, ["target_score=0"], "--rules"),
        ("players", 1, None, [], "--players"),
        ("teams", 3, True, [], "--players with --teams"),
        ("teams", None, True, [], "--teams"),
        ("set_max", None, None, [], "--preset"),
    ],
)
def test_a_seated_rules_error_names_the_flag_at_fault(
    field: str, players: int | None, teams: bool | None, changes: list[str], flag: str
) -> None:
    error = RulesError(field, 0, "something else")
    assert seated_rules_flag(error, players, teams, changes) == flag
