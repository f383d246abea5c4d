"""Gaps found by mutation testing of the JSON protocol (matador_env/protocol.py) and
the bot runtime (matador_env/bot.py): each test below fails on a small change to
behaviour that a frontend or a bot user relies on, which the other tests let pass."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from matador_env.bot import (
    LEVELS,
    Bot,
    BotError,
    PolicyBot,
    encoding_examples,
    greedy_move,
    levels_for,
    load_bot,
    load_level,
    rules_label,
    shipped_configurations,
)
from matador_env.configs import CONFIGURATIONS
from matador_env.engine import HandState, Move, Rules, SeatView
from matador_env.engine.state import SEED_LIMIT
from matador_env.policy import BOTS_DIR, BOTS_DIR_VARIABLE, default_policy
from matador_env.protocol import (
    MAX_BOT_NAME,
    MAX_ITEMS,
    MAX_TEXT,
    ProtocolError,
    loads,
    max_history,
    move_from_json,
    rules_from_json,
    rules_to_json,
    view_from_json,
    view_to_json,
)
from tests.scripted import midgame_states
from tests.test_protocol import STANDARD, _refused, edit

# -- JSON text and errors ------------------------------------------------------------------


def test_an_error_names_its_field_in_its_text_and_as_json() -> None:
    """``str(err)`` (what a log or a command line prints) begins with the field, and
    ``to_json`` is the body the HTTP server answers with (docs/browser.md: ``422
    invalid`` with ``field`` and ``message``)."""
    err = _refused(edit(seat=5))
    assert str(err).startswith("seat: ")
    assert err.to_json() == {"error": "invalid", "field": "seat", "message": err.message}


def test_json_nested_too_deep_is_refused_as_a_message() -> None:
    # loads' docstring: nesting too deep is refused, not a RecursionError.
    with pytest.raises(ProtocolError) as info:
        loads("[" * 100_000 + "]" * 100_000)
    assert info.value.field == "(message)" and "not usable JSON" in info.value.message


@pytest.mark.parametrize(
    "text", [b'{"seat": "\xff"}', '{"seat": ', '{"a": 1, "a": 2}'], ids=["utf8", "json", "key"]
)
def test_a_refusal_of_json_text_begins_with_what_was_read(text: str | bytes) -> None:
    # loads' docstring: "the message begins with ``what``" (the server names the body).
    with pytest.raises(ProtocolError) as info:
        loads(text, what="the request body")
    assert info.value.message.startswith("the request body is not")


@pytest.mark.parametrize("kind", [bytes, bytearray])
def test_json_bytes_are_read_as_utf8_only(kind: type[bytes] | type[bytearray]) -> None:
    """bytes and bytearray alike are UTF-8 (json.loads alone would also guess UTF-16
    or UTF-32 from the first bytes)."""
    assert loads(kind(b'{"seat": 1}')) == {"seat": 1}
    with pytest.raises(ProtocolError) as info:
        loads(kind('{"seat": 1}'.encode("utf-16")))
    assert info.value.field == "(message)" and "not UTF-8" in info.value.message


# -- the size bounds -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "longest"),
    [
        # 28 tiles + 14 in the boneyard; one pass at most between two of them, before
        # the first and after the last: 42 + 43.
        (STANDARD, 85),
        # standard for 3: 28 + 10 in the boneyard, two passes in each of the 39 gaps.
        (Rules.preset("standard", players=3), 38 + 39 * 2),
        # MAX_ITEMS' comment: double-15 dealt one tile each to 136 seats.
        (Rules(set_max=15, players=136, hand_size=1, boneyard_reserve=0), 18_631),
    ],
    ids=["standard", "standard_3p", "double-15 for 136"],
)
def test_max_history_is_the_documented_count(rules: Rules, longest: int) -> None:
    assert max_history(rules) == longest


def test_a_history_as_long_as_a_hand_can_be_passes_the_size_check() -> None:
    """The bound is the most a legal hand can hold: a history of exactly that many
    actions is read item by item (and refused here for its first item), not refused
    for its length."""
    longest = max_history(STANDARD)
    assert _refused(edit(history=[None] * longest)).field == "history[0]"
    assert _refused(edit(history=[None] * (longest + 1))).field == "history"
    assert longest < MAX_ITEMS["history"]


# -- a bot's own rules -----------------------------------------------------------------------


def test_a_view_of_other_rules_names_the_bots_configuration_and_each_difference() -> None:
    """The refusal names the configuration the bot plays (not "other rules") and, per
    field that differs, the view's value and the bot's, so a frontend sees what to fix."""
    err = _refused(edit(), rules=CONFIGURATIONS["standard_3p"].rules())
    assert err.field == "rules"
    assert "this bot plays standard_3p only" in err.message
    assert "players=2 (bot: 3)" in err.message


# -- string lengths: the bound itself is allowed, one more is not ---------------------------


def test_a_bot_name_of_the_longest_length_is_read_and_one_longer_refused() -> None:
    assert move_from_json({"move": "draw", "bot": "b" * MAX_BOT_NAME}).kind == "draw"
    with pytest.raises(ProtocolError) as info:
        move_from_json({"move": "draw", "bot": "b" * (MAX_BOT_NAME + 1)})
    assert info.value.field == "bot"
    assert f"at most {MAX_BOT_NAME} characters" in info.value.message


@pytest.mark.parametrize("key", ["hand", "layout"])
def test_a_text_one_past_max_text_is_refused_for_its_length(key: str) -> None:
    """Tiles, moves, ends and rules values are bounded at MAX_TEXT (the schemas'
    maxLength), not at the longer bound of a bot's name."""
    err = _refused(edit(**{key: ["1" * MAX_TEXT + "-2"]}))
    assert err.field == f"{key}[0]"
    assert f"at most {MAX_TEXT} characters are allowed, got {MAX_TEXT + 2}" in err.message


@pytest.mark.parametrize("field", sorted(MAX_ITEMS))
def test_a_list_of_exactly_max_items_passes_the_size_check(field: str) -> None:
    # MAX_ITEMS is "the longest each list may be": that length is refused, if at all,
    # for what it holds, never for its size.
    limit = MAX_ITEMS[field]
    err = _refused(edit(**{field: ["x"] * limit}))
    assert f"at most {limit} items" not in err.message, err


# -- tiles, fields, headers ------------------------------------------------------------------


@pytest.mark.parametrize("tile", ["0-7", "6-7", "7-0"])
def test_a_tile_with_one_end_outside_the_set_is_refused_at_its_place(tile: str) -> None:
    err = _refused(edit(hand=[tile]))
    assert err.field == "hand[0]" and "not a tile of the double-6 set" in err.message


@pytest.mark.parametrize("version", [0, -1, 2])
def test_a_version_other_than_1_is_refused_above_or_below(version: int) -> None:
    err = _refused(edit(version=version))
    assert err.field == "version" and "version 1" in err.message
    with pytest.raises(ProtocolError) as info:
        move_from_json({"move": "draw", "version": version})
    assert info.value.field == "version"


def test_a_rules_name_too_long_is_refused_for_its_length() -> None:
    # Sizes are bounded before any other work: the name is not looked up as a preset.
    err = _refused(edit(rules="s" * (MAX_TEXT + 1)))
    assert err.field == "rules" and f"at most {MAX_TEXT} characters" in err.message


# -- rules -------------------------------------------------------------------------------------


def test_preset_rules_are_written_by_name_and_others_field_by_field() -> None:
    """rules_to_json: "the preset name when the rules are a preset, else every field";
    a view's ``rules`` is then the short name the README's examples send."""
    assert rules_to_json(STANDARD) == "standard"
    assert view_to_json(HandState.deal(STANDARD, 1).view(0))["rules"] == "standard"
    four = CONFIGURATIONS["standard_4p"].rules()
    assert rules_to_json(four) == four.to_dict()


# -- writing a view --------------------------------------------------------------------------


def uneven_view() -> SeatView:
    """A three-seat view with four tiles down, two kinds of open end and seats holding
    different numbers of tiles."""
    state = HandState.deal(Rules.preset("standard", players=3), 4)
    while len(state.layout) < 4 or len(set(state.hand_sizes)) < 2:
        state = state.apply(state.legal_moves()[0])
    return state.view(state.to_move)


def test_a_written_view_keeps_the_views_order_of_ends_sizes_and_tiles() -> None:
    """Moves name ends by their index in layout order and hand sizes go by seat: a
    frontend drawing the table from a written view must get them in the view's order."""
    view = uneven_view()
    written = view_to_json(view)
    assert len(set(written["open_ends"])) > 1
    assert written["open_ends"] == [str(e) for e in view.ends]
    assert written["layout"] == [str(t) for t in view.layout]
    assert written["hand_sizes"] == list(view.hand_sizes)
    assert written["hand_sizes"] != sorted(view.hand_sizes)


@pytest.mark.parametrize(
    ("config", "words"),
    [("standard", "expected 2 totals (one per seat)"), ("pagat_teams", "(one per team)")],
)
def test_a_wrong_count_of_scores_says_one_per_team_or_per_seat(config: str, words: str) -> None:
    # A frontend of a partnership game keeps one total per team, not per seat.
    state = HandState.deal(CONFIGURATIONS[config].rules(), 1)
    message = view_to_json(state.view(0))
    message["scores"] = [0] * 3
    err = _refused(message)
    assert err.field == "scores" and words in err.message


def test_claimed_hand_sizes_go_by_seat() -> None:
    # The right sizes given to the wrong seats disagree with the history.
    message = view_to_json(uneven_view())
    message["hand_sizes"] = message["hand_sizes"][1:] + message["hand_sizes"][:1]
    assert message["hand_sizes"] != view_to_json(uneven_view())["hand_sizes"]
    assert _refused(message).field == "hand_sizes"


def test_claimed_ends_and_tiles_are_compared_by_value_not_by_text() -> None:
    """The schema takes "03" for the end 3 and "5-2" for the tile 2-5 (its description:
    "5-2 is read as the same tile"); the reader compares what they mean."""
    view = uneven_view()
    message = view_to_json(view)
    message["open_ends"] = [
        "0" + e if e[:1].isdigit() and e[1:2] in ("", "*", "b") else e for e in message["open_ends"]
    ]
    message["layout"] = ["-".join(t.split("-")[::-1]) for t in message["layout"]]
    assert message["open_ends"] != view_to_json(view)["open_ends"]
    assert message["layout"] != view_to_json(view)["layout"]
    assert view_from_json(message) == view


# -- reading a move ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "field"),
    [
        ({"move": "2-5@1>5", "tile": "3-3"}, "tile"),
        ({"move": "2-5@1>5", "tile": None}, "tile"),
        ({"move": "draw", "tile": "2-5"}, "tile"),
    ],
)
def test_a_claimed_tile_must_be_the_moves(message: dict[str, Any], field: str) -> None:
    # A frontend that draws the tile from ``tile`` must not be shown another one.
    with pytest.raises(ProtocolError) as info:
        move_from_json(message)
    assert info.value.field == field and "disagrees" in info.value.message


# -- the bot runtime ---------------------------------------------------------------------------


class _Broken(Bot):
    """A bot whose choice is never legal: what a corrupt policy file would give."""

    name = "broken"
    rules = None

    def _choose(self, view: SeatView, rng: random.Random) -> Move:
        return Move.parse("9-9")


def test_a_move_that_is_not_legal_is_never_returned() -> None:
    # bot.py: "Every move a bot returns is checked against the view's legal moves".
    state = HandState.deal(STANDARD, 1)
    with pytest.raises(BotError, match="bot broken chose 9-9, which is not legal"):
        _Broken().choose(state.view(state.to_move))


def test_greedy_plays_the_engines_first_placement_of_its_heaviest_tile() -> None:
    """greedy_move's docstring: the heaviest tile, "the engine's first placement of
    it"; checked where that tile can go more than one way."""
    ties = 0
    for state in midgame_states(STANDARD, 150, seed=5):
        view = state.view(state.to_move)
        plays = [m for m in view.legal_moves if m.kind == "play"]
        if not plays:
            assert greedy_move(view) == view.legal_moves[0]
            continue
        heaviest = max(m.tile.pips for m in plays if m.tile is not None)
        firsts = [m for m in plays if m.tile is not None and m.tile.pips == heaviest]
        ties += len(firsts) > 1
        assert greedy_move(view) == firsts[0]
    assert ties > 5


@pytest.mark.parametrize("level", ["random", "greedy", "trained"])
@pytest.mark.parametrize("rng", [5, "seed", random], ids=["int", "str", "module"])
def test_choose_refuses_an_rng_that_is_not_a_random_random(level: str, rng: Any) -> None:
    # Bot.choose's docstring: rng is "a random.Random, else TypeError", whether or not
    # the level samples (a greedy bot would otherwise ignore the mistake).
    state = HandState.deal(STANDARD, 1)
    with pytest.raises(TypeError):
        load_bot(level).choose(state.view(state.to_move), rng)


def test_move_json_reads_a_bytearray_as_it_reads_bytes() -> None:
    # A frontend reading a socket into a bytearray sends the same UTF-8 JSON text.
    state = HandState.deal(STANDARD, 2)
    text = json.dumps(view_to_json(state.view(state.to_move)))
    greedy = load_bot("greedy")
    assert greedy.move_json(bytearray(text.encode())) == greedy.move_json(text)


def test_describe_gives_the_protocols_rules_and_the_level_in_words() -> None:
    """describe's docstring: ``rules`` in the protocol's form (a preset name, else
    every field), ``plays`` the configuration with its table, ``about`` the level."""
    assert load_bot().describe() == {
        "name": "trained:standard",
        "level": "trained",
        "rules": "standard",
        "configuration": "standard",
        "plays": "standard (standard, 2 players)",
        "about": LEVELS["trained"],
    }
    four = load_bot("casual", rules="standard_4p").describe()
    assert four["rules"] == CONFIGURATIONS["standard_4p"].rules().to_dict()
    assert four["configuration"] == "standard_4p" and four["about"] == LEVELS["casual"]
    assert load_bot("greedy").describe()["rules"] == "any"
    exported = load_bot(str(BOTS_DIR / "standard")).describe()
    assert exported["level"] is None and exported["about"] == "an exported policy"
    # A level over every shipped configuration plays the view's rules.
    level = load_level("trained").describe()
    assert level["rules"] == "view" and level["configuration"] is None
    assert set(level["configurations"]) == {c.name for c in shipped_configurations()}


def test_random_can_pick_every_legal_move() -> None:
    # LEVELS: "any legal move, uniformly": the last of them as well as the first.
    bot = load_bot("random")
    for state in midgame_states(STANDARD, 5, seed=2):
        view = state.view(state.to_move)
        picked = {bot.choose(view, random.Random(seed)) for seed in range(300)}
        assert picked == set(view.legal_moves)


@pytest.mark.parametrize("temperature", [-1.0, float("nan"), float("inf"), "2"], ids=repr)
def test_a_policy_bot_refuses_a_temperature_it_cannot_sample_at(temperature: Any) -> None:
    with pytest.raises(BotError, match="temperature"):
        PolicyBot(default_policy(), "mine", None, temperature)


@pytest.mark.parametrize("slip", [-0.1, 1.5, float("nan"), True, "0.2", None], ids=repr)
def test_a_policy_bot_refuses_a_slip_that_is_no_share(slip: Any) -> None:
    with pytest.raises(BotError, match="slip must be a number from 0 to 1"):
        PolicyBot(default_policy(), "mine", None, slip=slip)


def test_a_policy_bot_samples_at_any_temperature_above_zero() -> None:
    """Temperature 0 is "the most likely move"; any other (1 included, or 0.5) samples
    the policy: in a position where the moves are close, more than one comes out."""
    state = HandState.deal(STANDARD, 6)
    view = state.view(state.to_move)
    for temperature in (0.5, 1.0):
        bot = PolicyBot(default_policy(), "mine", None, temperature)
        assert len({bot.choose(view, random.Random(seed)) for seed in range(200)}) > 1
    greedy = PolicyBot(default_policy(), "mine", None, 0.0)
    assert len({greedy.choose(view, random.Random(seed)) for seed in range(20)}) == 1


def test_levels_for_gives_the_trained_levels_only_where_a_bot_is_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert levels_for(STANDARD) == ["random", "greedy", "casual", "trained"]
    assert levels_for(Rules(target_score=37)) == ["random", "greedy"]  # no configuration
    # A configuration whose folder is missing has the heuristic levels only.
    shutil.copytree(BOTS_DIR / "standard", tmp_path / "standard")
    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(tmp_path))
    assert levels_for(Rules.preset("pagat")) == ["random", "greedy"]
    assert levels_for(STANDARD) == ["random", "greedy", "casual", "trained"]


# -- rules in words ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rules", "label"),
    [
        (Rules.preset("standard", target_score=50), "standard, 2 players, target_score=50"),
        (
            Rules.preset("standard", target_score=50, tie="redeal", boneyard_reserve=0),
            "standard, 2 players, boneyard_reserve=0, tie='redeal', target_score=50",
        ),
        (
            Rules.preset(
                "standard",
                target_score=50,
                tie="redeal",
                boneyard_reserve=0,
                matador_as_regular=True,
            ),
            "custom rules (2 players)",
        ),
        (
            Rules.preset("pagat", players=4, teams=True, target_score=50),
            "pagat, 4 players in two partnerships, target_score=50",
        ),
        (
            Rules.preset(
                "pagat",
                players=4,
                teams=True,
                target_score=50,
                tie="redeal",
                boneyard_reserve=0,
                matador_as_regular=True,
            ),
            "custom rules (4 players in teams)",
        ),
    ],
    ids=["one field", "three fields", "four fields", "teams", "teams, four fields"],
)
def test_rules_label_names_the_nearest_preset_and_up_to_three_differences(
    rules: Rules, label: str
) -> None:
    assert rules_label(rules) == label


# -- load_bot and the test vectors -------------------------------------------------------------


@pytest.mark.parametrize("level", ["random", "greedy", "casual", "trained"])
def test_the_seed_of_load_bot_makes_its_own_choices_reproducible(level: str) -> None:
    # load_bot: "seed seeds the bot's own random generator" (no rng passed to choose).
    views = [s.view(s.to_move) for s in midgame_states(STANDARD, 30, seed=1)]

    def moves(seed: int) -> list[Move]:
        bot = load_bot(level, seed=seed)
        return [bot.choose(view) for view in views]

    assert moves(4) == moves(4)
    if level in ("random", "casual"):
        assert moves(4) != moves(5)


def test_an_exported_policy_by_path_plays_its_own_rules_when_none_are_given() -> None:
    # load_bot: rules "is checked against an exported policy" only when given.
    pagat = Rules.preset("pagat")
    assert load_bot(str(BOTS_DIR / "pagat")).rules == pagat
    assert load_bot(str(BOTS_DIR / "pagat"), rules="pagat").rules == pagat
    with pytest.raises(BotError):
        load_bot(str(BOTS_DIR / "pagat"), rules="standard")


def test_test_vectors_from_the_last_seed_go_on_from_seed_zero() -> None:
    # Each position is a new deal; the engine's seeds end at SEED_LIMIT - 1.
    data = encoding_examples("standard", count=3, seed=SEED_LIMIT - 1, level="greedy")
    assert len(data["positions"]) == 3


# -- rules fields that are Python parameter names ------------------------------------------------


@pytest.mark.parametrize("key", ["name", "cls"])
def test_a_rules_field_named_like_a_parameter_is_refused_as_any_unknown_field(key: str) -> None:
    """Refused at its path with the fields allowed, as ``{"colour": ...}`` is. Before,
    Rules.preset(name, **fields) raised a TypeError for these keys, which came out as
    field ``rules`` and "got multiple values for argument 'name'"."""
    with pytest.raises(ProtocolError) as info:
        rules_from_json({"preset": "standard", key: "x"})
    assert info.value.field == f"rules.{key}"
    assert "one of the fields" in info.value.message
