"""What the reliability suite (benchmarks/fuzz.py) promises that no other fast test held
it to (found by mutation testing): how a trial is counted and reported, that each
invariant of the play, apply, view, record, public, protocol, bot, state and live campaigns is
checked (each test breaks one thing with a stand-in and runs the campaign, which must
report it), what the random inputs cover, how trials are numbered and seeded, what
the HTTP campaign's counts become, the table, and how ``main`` shares its budget and
sets its exit status. Campaigns run a few dozen trials at most, and ``main`` runs with
stand-in campaigns, so the whole file runs in seconds."""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import random
import re
import signal
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import benchmarks.fuzz as fuzz
import benchmarks.fuzz_http as fuzz_http
import matador_env.bot
import matador_env.engine.state as engine_state
from matador_env.engine import (
    PRESETS,
    HandState,
    IllegalMoveError,
    MatchState,
    Move,
    MoveParseError,
    Rules,
    RulesError,
    hand_record,
    parse_hand_record,
)
from matador_env.policy import POLICY_FILE, SIDECAR_FILE, PolicyError
from matador_env.protocol import move_to_json, view_from_json, view_to_json
from tests.test_fuzz import _raise
from tests.test_fuzz_audit import _found, _refuse

# -- counting and reporting one input ------------------------------------------------------


def test_tallies_add_every_count_example_and_error() -> None:
    total = fuzz.Tally(tried=1, accepted=1, refused=0, findings=0, errors={"X": 2})
    total.add(fuzz.Tally(3, 1, 1, 1, examples=["a"], errors={"X": 1, "Y": 1}))
    total.add(fuzz.Tally(tried=2, refused=2, findings=1, examples=["b"], errors={"Y": 2}))
    assert (total.tried, total.accepted, total.refused, total.findings) == (6, 2, 3, 2)
    assert total.examples == ["a", "b"]
    assert total.errors == {"X": 3, "Y": 3}


def test_refusals_are_counted_by_their_error_type() -> None:
    tally = fuzz.Tally()
    for error in (KeyError("a"), KeyError("b"), IndexError("c")):
        refusal = functools.partial(_raise, error)
        assert fuzz.classify(tally, refusal, (KeyError, IndexError), "t") == "refused"
    assert (tally.tried, tally.refused, tally.accepted, tally.findings) == (3, 3, 0, 0)
    assert tally.errors == {"KeyError": 2, "IndexError": 1}


def test_only_the_first_five_findings_are_kept_each_cut_to_300_characters() -> None:
    tally = fuzz.Tally()
    for i in range(7):
        fuzz.classify(tally, functools.partial(_raise, fuzz.Finding(f"{i}" * 1000)), (), f"t{i}")
    assert tally.findings == 7
    # Five examples, the first five, each "label: invariant: ..." cut to 300 characters.
    assert [e.split(":")[0] for e in tally.examples] == ["t0", "t1", "t2", "t3", "t4"]
    assert tally.examples[0] == "t0: " + ("invariant: " + "0" * 1000)[:300]


def test_a_timer_already_running_is_left_to_run() -> None:
    # The hung-input stop arms SIGALRM only when no other timer runs: it would
    # otherwise cancel that timer and put back a handler that was not its own.
    fired: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    signal.setitimer(signal.ITIMER_REAL, 300)
    try:
        assert fuzz.classify(fuzz.Tally(), lambda: None, (), "t") == "accepted"
        assert signal.getitimer(signal.ITIMER_REAL)[0] > 0
        assert signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not fired


# -- the random inputs ---------------------------------------------------------------------


def test_random_json_gives_the_awkward_values() -> None:
    values = [fuzz.random_json(random.Random(seed)) for seed in range(600)]
    assert None in values and True in values and False in values
    assert 10**30 in values and -(2**63) in values and 1e308 in values
    assert "" in values and "\x00" in values
    assert any(isinstance(v, str) and len(v) >= 100 for v in values)  # repeated words
    assert any(isinstance(v, list) and any(isinstance(x, (list, dict)) for x in v) for v in values)
    assert any(isinstance(v, dict) and v for v in values)
    others = [fuzz.random_value(random.Random(seed)) for seed in range(200)]
    assert any(isinstance(v, (bytes, bytearray)) for v in others)


def test_mutate_text_changes_inserts_drops_cuts_repeats_and_upper_cases() -> None:
    text = "2-5@0>5 draw"
    out = {fuzz.mutate_text(random.Random(seed), text) for seed in range(300)}
    dropped = {text[:i] + text[i + 1 :] for i in range(1, len(text) - 1)}
    assert out & dropped - {text[: len(text) - 1]}  # a character from the middle dropped
    assert text.upper() in out
    assert any(len(t) > len(text) + 1 for t in out)  # a repeat
    # Empty text becomes one of the awkward words, not only empty text again.
    assert {fuzz.mutate_text(random.Random(seed), "") for seed in range(30)} - {""}


def test_random_rules_fields_start_from_presets_and_vary_every_flag() -> None:
    drawn = [fuzz.random_rules_fields(random.Random(seed)) for seed in range(400)]
    # One in four starts from a preset's fields: then every Rules field is given.
    full = [f for f in drawn if set(Rules.preset("standard").to_dict()) <= set(f)]
    assert len(full) > 40
    # Three in ten of them are made partnerships (four players in two teams), which
    # fields drawn one at a time would seldom give.
    partnerships = [f for f in full if f["teams"] is True and f["players"] == 4]
    assert len(partnerships) >= len(full) / 10
    # Drawn one at a time (not from a preset), each flag takes both values.
    alone = [f for f in drawn if f not in full]
    for name in ("teams", "matador_as_regular", "matador_only_when_stuck"):
        assert {f[name] for f in alone if name in f} == {True, False}, name
    assert {f["boneyard_reserve"] for f in alone if "boneyard_reserve" in f} == set(range(6))


def test_random_states_are_small_sets_under_way_and_finished() -> None:
    states = [fuzz.random_state(random.Random(seed)) for seed in range(150)]
    assert all(s.rules.set_max <= 9 for s in states)
    assert any(s.is_over for s in states)
    assert any(not s.is_over and s.history for s in states)
    assert any(not s.history for s in states)


# -- play: the engine's invariants ---------------------------------------------------------


def test_play_finds_a_tile_held_twice_though_the_count_is_right(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The hand's first draw hands over a tile of the table instead of the boneyard's:
    # as many tiles as the set, but one of them twice and one nowhere.
    draw = HandState._draw

    def wrong_draw(self: HandState, move: Move) -> HandState:
        after = draw(self, move)
        if self.layout and "draw" not in (e.move.kind for e in self.history):
            hands = list(after._hands)
            hands[self._to_move] = self._hands[self._to_move] | (1 << self.layout[0].index)
            after._hands = tuple(hands)
        return after

    monkeypatch.setattr(HandState, "_draw", wrong_draw)
    assert "hands, boneyard and table hold" in _found("play", 60)


def test_play_finds_a_tile_lost_by_the_last_action(monkeypatch: pytest.MonkeyPatch) -> None:
    # The hand's last action loses a boneyard tile: only the check after the end sees it.
    real_play, real_pass = HandState._play, HandState._pass

    def losing(real: Callable[[HandState, Move], HandState]) -> Callable[..., HandState]:
        def act(self: HandState, move: Move) -> HandState:
            after = real(self, move)
            if after.is_over and after.boneyard_size:
                after._pos += 1
            return after

        return act

    monkeypatch.setattr(HandState, "_play", losing(real_play))
    monkeypatch.setattr(HandState, "_pass", losing(real_pass))
    assert "hands, boneyard and table hold" in _found("play", 60)


def _outcomes_changed(
    monkeypatch: pytest.MonkeyPatch, change: Callable[[engine_state.Outcome], dict[str, Any]]
) -> None:
    """Every hand's outcome (a domino's and a block's) with ``change``'s fields replaced."""
    for name in ("_domino_outcome", "_blocked_outcome"):
        real = getattr(engine_state, name)

        def changed(*args: Any, real: Callable[..., Any] = real) -> engine_state.Outcome:
            outcome = real(*args)
            return dataclasses.replace(outcome, **change(outcome))

        monkeypatch.setattr(engine_state, name, changed)


def test_play_finds_counts_that_are_not_the_pips_left(monkeypatch: pytest.MonkeyPatch) -> None:
    _outcomes_changed(monkeypatch, lambda o: {"counts": tuple(c + 1 for c in o.counts)})
    assert "are not the pips left" in _found("play", 60)


@pytest.mark.parametrize(
    ("termination", "says"),
    [("domino", "who holds tiles"), ("blocked", r"blocked with side counts .* won by seat")],
)
def test_play_finds_a_hand_won_by_the_wrong_seat(
    monkeypatch: pytest.MonkeyPatch, termination: str, says: str
) -> None:
    # A domino won by a seat still holding tiles; a block won by another side (one seat
    # on is another side with or without partnerships).
    def next_seat(o: engine_state.Outcome) -> dict[str, Any]:
        if o.termination != termination:
            return {}
        return {"winner": (o.winner + 1) % len(o.counts)}  # type: ignore[operator]

    _outcomes_changed(monkeypatch, next_seat)
    assert re.search(says, _found("play", 60))


def test_play_finds_an_engine_refusing_a_legal_move(monkeypatch: pytest.MonkeyPatch) -> None:
    # IllegalMoveError is a ValueError, but only RulesError is a refusal in play.
    monkeypatch.setattr(HandState, "apply", _refuse(IllegalMoveError("x", 0, (), "refused")))
    assert "IllegalMoveError" in _found("play", 5)


def _length(rules: Rules, seed: int) -> int:
    """How many actions ``_play_hand(rules, random.Random(seed))`` plays: its draws
    from the generator, made here in the same order."""
    rng = random.Random(seed)
    state = HandState.deal(rules, rng.randrange(1 << 32))
    while not state.is_over:
        state = state.apply(rng.choice(state.legal_moves()))
    return state.n_actions


def test_play_finds_a_hand_longer_than_max_history_and_no_shorter_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = Rules.preset("standard")
    length = _length(rules, 5)
    monkeypatch.setattr(fuzz, "max_history", lambda r: length)
    fuzz._play_hand(rules, random.Random(5))  # exactly the bound: no finding
    monkeypatch.setattr(fuzz, "max_history", lambda r: length - 1)
    with pytest.raises(fuzz.Finding, match=f"no end after {length - 1} actions"):
        fuzz._play_hand(rules, random.Random(5))


def test_play_finds_a_record_that_replays_to_another_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzz, "hand_record", lambda state: hand_record(state.dealt()))
    assert "the hand record does not replay to the same hand" in _found("play", 20)


def test_play_plays_matches_to_a_target_of_at_most_50(monkeypatch: pytest.MonkeyPatch) -> None:
    targets: list[int] = []
    monkeypatch.setattr(fuzz, "_play_match", lambda rules, rng: targets.append(rules.target_score))
    seen: list[int] = []
    play_hand = fuzz._play_hand

    def play(rules: Rules, rng: random.Random) -> None:
        seen.append(rules.target_score)
        play_hand(rules, rng)

    monkeypatch.setattr(fuzz, "_play_hand", play)
    fuzz.run_campaign("play", seed=14, count=150)
    assert targets and max(targets) <= 50
    assert max(seen) > 50  # the bound was needed


def test_play_finds_match_totals_that_are_not_the_hands_sum(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    score = MatchState._score

    def wrong_score(self: MatchState, hand: HandState, outcome: Any) -> MatchState:
        match = score(self, hand, outcome)
        return match._next(totals=tuple(t + 1 for t in match.totals))

    monkeypatch.setattr(MatchState, "_score", wrong_score)
    assert "are not the hands' sum" in _found("play", 100)


# -- rules ---------------------------------------------------------------------------------


def test_rules_reaches_every_reader_with_bad_names_keys_and_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: dict[str, list[Any]] = {"preset": [], "from_dict": [], "from_text": []}
    preset = Rules.preset

    def recorder(kind: str) -> Callable[..., Any]:
        def read(*args: Any, **kwargs: Any) -> Any:
            if kind == "preset" and not kwargs and isinstance(args[0], str) and args[0] in PRESETS:
                return preset(*args)  # random_rules_fields starting from a preset
            calls[kind].append(args[0])
            raise RulesError("rules", args[0], "anything")

        return read

    for kind in calls:
        monkeypatch.setattr(Rules, kind, staticmethod(recorder(kind)))
    fuzz.run_campaign("rules", seed=14, count=200)
    assert any(name not in PRESETS for name in calls["preset"])
    fields = {f.name for f in dataclasses.fields(Rules)}
    assert any(isinstance(d, dict) and set(d) - fields for d in calls["from_dict"])
    texts = calls["from_text"]
    assert any(not isinstance(t, str) for t in texts)  # any value instead of text
    assert any(isinstance(t, str) and t.isupper() for t in texts)  # text mutated


# -- apply ---------------------------------------------------------------------------------


def test_apply_finds_an_engine_that_accepts_an_illegal_move(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An engine that records any Move as played (it plays a legal one underneath).
    apply = HandState.apply

    def accepting(self: HandState, move: Any) -> HandState:
        legal = self.legal_moves()
        if not isinstance(move, Move) or move in legal or not legal:
            return apply(self, move)
        after = apply(self, legal[0])
        after._history = (self._history, self._to_move, move, self._ends)
        return after

    monkeypatch.setattr(HandState, "apply", accepting)
    found = _found("apply", 150)
    assert "which is not a legal move" in found
    assert "match accepted" in found  # a match's move is checked as well


def test_apply_finds_a_legal_move_refused_as_a_move_object(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Once the trial's hand is built, the engine takes moves as text only.
    apply, build = HandState.apply, fuzz.random_state
    built = [False]

    def text_only(self: HandState, move: Any) -> HandState:
        if built[0] and not isinstance(move, str):
            raise IllegalMoveError(move, self.to_move, (), "refused")
        return apply(self, move)

    def random_state(rng: random.Random) -> HandState:
        built[0] = False
        state = build(rng)
        built[0] = True
        return state

    monkeypatch.setattr(HandState, "apply", text_only)
    monkeypatch.setattr(fuzz, "random_state", random_state)
    assert "a valid input refused" in _found("apply", 150)


def test_apply_finds_a_refusal_that_changes_the_hands(monkeypatch: pytest.MonkeyPatch) -> None:
    apply = HandState.apply

    def spoiling(self: HandState, move: Any) -> HandState:
        try:
            return apply(self, move)
        except (IllegalMoveError, MoveParseError):
            self._hands = (0,) * len(self._hands)  # every hand emptied
            raise

    monkeypatch.setattr(HandState, "apply", spoiling)
    assert "changed the state" in _found("apply", 150)


@pytest.mark.parametrize("slip", ["old state", "count"])
def test_apply_finds_an_accepted_move_that_changes_the_old_state_or_skips_a_count(
    monkeypatch: pytest.MonkeyPatch, slip: str
) -> None:
    apply = HandState.apply

    def slipping(self: HandState, move: Any) -> HandState:
        after = apply(self, move)
        if slip == "count":
            after._n_actions += 1
        else:
            self._to_move = (self._to_move + 1) % len(self._hands)
        return after

    monkeypatch.setattr(HandState, "apply", slipping)
    assert "changed the old state or skipped a count" in _found("apply", 150)


# -- view ----------------------------------------------------------------------------------


def test_view_finds_a_view_of_another_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    view = HandState.view

    def other_seat(self: HandState, seat: Any, scores: Any = None) -> Any:
        if type(seat) is int and 0 <= seat < self.rules.players:
            seat = (seat + 1) % self.rules.players
        return view(self, seat, scores)

    monkeypatch.setattr(HandState, "view", other_seat)
    assert "is not that seat's view" in _found("view", 150)


@pytest.mark.parametrize(("owner", "name"), [(MatchState, "view"), (HandState, "hand")])
def test_view_reaches_match_views_and_hands(
    monkeypatch: pytest.MonkeyPatch, owner: Any, name: str
) -> None:
    monkeypatch.setattr(owner, name, _refuse(ValueError("refused")))
    assert "a valid input refused" in _found("view", 150)


# -- record --------------------------------------------------------------------------------


class _Record:
    """A parsed record whose replay is ``then`` of the real replay."""

    def __init__(self, text: Any, then: Callable[[HandState], HandState]) -> None:
        self.record, self.then = parse_hand_record(text), then

    def replay(self) -> HandState:
        return self.then(self.record.replay())


def _one_more(state: HandState) -> HandState:
    return state if state.is_over else state.apply(state.legal_moves()[0])


@pytest.mark.parametrize(
    ("then", "says"),
    [
        (HandState.dealt, "the hand's record replays to another hand"),
        (_one_more, "an accepted record does not round-trip"),
    ],
)
def test_record_finds_a_replay_of_another_hand(
    monkeypatch: pytest.MonkeyPatch, then: Callable[[HandState], HandState], says: str
) -> None:
    monkeypatch.setattr(fuzz, "parse_hand_record", lambda text: _Record(text, then))
    assert says in _found("record", 150)


# -- public --------------------------------------------------------------------------------


def _every_finding(monkeypatch: pytest.MonkeyPatch, campaign: str, count: int) -> str:
    """Every finding of a small campaign, not only the first five: where another
    invariant's findings come first."""
    classify = fuzz.classify
    monkeypatch.setattr(
        fuzz, "classify", lambda *args, **kwargs: classify(*args, **{**kwargs, "keep": 10**6})
    )
    tally = fuzz.run_campaign(campaign, seed=14, count=count)
    return "\n".join(tally.examples)


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"passes_in_row": 7}, "differs from the engine's"),
        ({"hand": ()}, "holds another hand than was given"),
    ],
)
def test_public_finds_a_rebuilt_view_that_is_not_the_engines(
    monkeypatch: pytest.MonkeyPatch, change: dict[str, Any], says: str
) -> None:
    public_view = fuzz.public_view
    monkeypatch.setattr(
        fuzz,
        "public_view",
        lambda *args: dataclasses.replace(public_view(*args), **change),
    )
    assert says in _every_finding(monkeypatch, "public", 150)


def test_a_history_entry_is_a_pair_only_as_a_two_tuple() -> None:
    # An earlier mutation may leave (), a list or any value where a (seat, move) was.
    assert fuzz._is_pair((0, "draw"))
    assert not fuzz._is_pair(())
    assert not fuzz._is_pair((0,))
    assert not fuzz._is_pair([0, "draw"])


# -- messages and protocol -----------------------------------------------------------------


def test_mutated_message_leaves_the_message_it_was_given_as_it_was() -> None:
    message = {"history": [{"seat": 0, "move": "6-6"}], "hand": ["1-2", "3-4"], "seat": 1}
    kept = copy.deepcopy(message)
    for seed in range(300):
        mutated = fuzz.mutated_message(random.Random(seed), message)
        assert message == kept, mutated


def test_mutated_message_replaces_names_and_messages_and_grows_lists() -> None:
    named = {repr(fuzz.mutated_message(random.Random(seed), "standard")) for seed in range(50)}
    assert named - {"'standard'"}
    message = {"hand": ["1-2"], "seat": 1}
    outs = [fuzz.mutated_message(random.Random(seed), message) for seed in range(3000)]
    assert any(not isinstance(out, dict) for out in outs)  # sometimes any JSON instead
    assert any(isinstance(out, dict) and len(out.get("hand", [])) >= 1000 for out in outs)


def _wrong(value: Any) -> Any:
    return value + 1 if isinstance(value, int) else [*value, "9-9@9>9"]


CLAIMED = ("to_move", "leader", "boneyard_size", "draws_this_turn", "passes_in_row")
"""The fields of a JSON view that state what its history gives (with those below)."""


@pytest.mark.parametrize("key", [*CLAIMED, "hand_sizes", "open_ends", "layout", "legal_moves"])
def test_protocol_finds_each_claim_the_reader_ignores(
    monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    # The view claims a wrong value for `key`, which the reader leaves unread.
    monkeypatch.setattr(
        fuzz, "mutated_message", lambda rng, m: {**m, key: _wrong(m[key])} if key in m else m
    )

    def unread(data: dict[str, Any]) -> Any:
        return view_from_json({k: v for k, v in data.items() if k != key})

    monkeypatch.setattr(fuzz, "view_from_json", unread)
    assert f"a view claiming {key}=" in _found("protocol", 40)


def test_protocol_takes_legal_moves_in_any_order_with_repeats(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def reordered(rng: random.Random, message: dict[str, Any]) -> dict[str, Any]:
        if "legal_moves" not in message:
            return message  # a move's JSON form
        moves = message["legal_moves"]
        return {**message, "legal_moves": [*moves[::-1], *moves[:1]]}

    monkeypatch.setattr(fuzz, "mutated_message", reordered)
    tally = fuzz.run_campaign("protocol", seed=14, count=40)
    assert tally.findings == 0, tally.examples
    assert tally.accepted > 20  # the views were read, not refused


def test_protocol_takes_no_view_of_a_finished_hand_for_a_valid_input(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Its view is refused (no seat is to move), as documented: not a finding.
    build = fuzz.random_state

    def finished(rng: random.Random) -> HandState:
        state = build(rng)
        while not state.is_over:
            state = state.apply(state.legal_moves()[0])
        return state

    monkeypatch.setattr(fuzz, "random_state", finished)
    tally = fuzz.run_campaign("protocol", seed=14, count=60)
    assert tally.findings == 0, tally.examples
    assert tally.errors.get("ProtocolError", 0) > 0


def test_protocol_finds_a_view_that_does_not_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each JSON form of a view raises its scores by one: never read back the same.
    def raised(view: Any) -> dict[str, Any]:
        data = view_to_json(view)
        data["scores"] = [s + 1 for s in data["scores"]]
        return data

    monkeypatch.setattr(fuzz, "view_to_json", raised)
    assert "an accepted view does not read back the same" in _found("protocol", 40)


def test_protocol_finds_the_engines_view_read_as_another(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        fuzz, "view_from_json", lambda data: dataclasses.replace(view_from_json(data), scores=None)
    )
    assert "the engine's view does not read back as the same view" in _found("protocol", 40)


def test_protocol_finds_a_move_that_does_not_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each move's JSON form gives another move.
    def other(move: Move) -> dict[str, Any]:
        return move_to_json(Move("pass") if move == Move("draw") else Move("draw"))

    monkeypatch.setattr(fuzz, "move_to_json", other)
    assert "an accepted move does not read back the same" in _found("protocol", 100)


def test_mutated_messages_misstate_an_integer_claim_by_one_in_its_own_type_and_range() -> None:
    # A reader that checks a claim's type and range but not what the history gives is
    # caught only by such a value; a bool, float, text or negative one is refused anyway.
    state = fuzz._under_way(random.Random(3), Rules.preset("standard"))
    message = view_to_json(state.view(state.to_move))
    rng = random.Random(0)
    misstated = set()
    for _ in range(3000):
        out = fuzz.mutated_message(rng, message)
        for key in ("boneyard_size", "draws_this_turn", "passes_in_row"):
            got = out.get(key) if isinstance(out, dict) else None
            if type(got) is int and got >= 0 and abs(got - message[key]) == 1:
                misstated.add(key)
    assert misstated == {"boneyard_size", "draws_this_turn", "passes_in_row"}


def test_misstated_names_each_field_that_disagrees_with_the_hand() -> None:
    state = fuzz._under_way(random.Random(3), Rules.preset("standard"))
    message = view_to_json(state.view(state.to_move))
    assert fuzz._misstated(message, state) == {}
    for key in ("hand", "boneyard_size", "layout", "open_ends", "hand_sizes", "legal_moves"):
        wrong = {**message, key: _wrong(message[key])}
        assert set(fuzz._misstated(wrong, state)) == {key}, key


# -- policy --------------------------------------------------------------------------------


def test_policy_leaves_no_scratch_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(fuzz.tempfile, "tempdir", str(tmp_path))
    fuzz.run_campaign("policy", seed=14, count=2)
    assert list(tmp_path.iterdir()) == []


def test_policy_breaks_the_model_the_sidecar_and_its_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    load = fuzz.load_policy
    seen: list[tuple[bool, bool, bool]] = []
    cut: list[bool] = []
    shipped: dict[str, Any] = {}

    def recorded(folder: Path) -> Any:
        onnx = (folder / POLICY_FILE).read_bytes()
        try:
            sidecar = json.loads((folder / SIDECAR_FILE).read_bytes())
        except ValueError:
            sidecar = None
        if not shipped:  # the scratch copy, as shipped
            shipped.update(onnx=onnx, sidecar=sidecar)
            return load(folder)
        rules = sidecar.get("rules") if isinstance(sidecar, dict) else None
        shipped_rules = shipped["sidecar"]["rules"]
        cut.append(0 < len(onnx) < len(shipped["onnx"]) and shipped["onnx"].startswith(onnx))
        seen.append(
            (
                onnx != shipped["onnx"],
                sidecar != shipped["sidecar"],
                # A setting of the rules changed or dropped, the rest kept.
                isinstance(rules, dict)
                and rules != shipped_rules
                and set(rules) < set(shipped_rules),
            )
        )
        raise PolicyError("refused")

    monkeypatch.setattr(fuzz, "load_policy", recorded)
    fuzz.run_campaign("policy", seed=14, count=60)
    assert any(model and not sidecar for model, sidecar, _ in seen)
    assert any(sidecar and not model for model, sidecar, _ in seen)
    assert any(rules for _, _, rules in seen)
    assert any(cut)  # a model cut short


# -- bot -----------------------------------------------------------------------------------


class _Answering:
    """A bot of the standard rules that answers ``answer`` to any view it reads."""

    def __init__(self, answer: Callable[[Any], Move]) -> None:
        self.name, self.rules, self.answer = "stand-in", Rules.preset("standard"), answer

    def move_json(self, data: Any, rng: random.Random) -> dict[str, Any]:
        return move_to_json(self.answer(view_from_json(data)))


def test_bot_finds_a_view_of_other_rules_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    bot = _Answering(lambda view: view.legal_moves[0])
    monkeypatch.setattr(fuzz, "load_bot", lambda level: bot)
    assert "not its rules" in _found("bot", 60)


def test_bot_finds_an_illegal_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    bot = _Answering(lambda view: Move("pass"))
    bot.rules = None  # type: ignore[assignment]  # a bot of any rules
    monkeypatch.setattr(fuzz, "load_bot", lambda level: bot)
    assert "answered pass, not a legal move" in _found("bot", 60)


def test_bot_refusing_a_view_of_other_rules_is_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    # Only the trained bot, of the standard rules, is asked: one in five of its views
    # is of another preset, which it refuses as documented.
    trained = matador_env.bot.load_bot("trained")
    monkeypatch.setattr(fuzz, "load_bot", lambda level: trained)
    tally = fuzz.run_campaign("bot", seed=14, count=60)
    assert tally.findings == 0, tally.examples
    assert tally.errors.get("ProtocolError", 0) > 0


def test_bot_reads_the_rules_a_view_names_as_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    # Found by a 900-s run (seed 120771, bot trial 16510): a mutation renamed a
    # two-seat pagat view "standard", the same game under the bot's own rules, which
    # the standard bot rightly answered; the harness had reported it as a view of
    # pagat answered.
    dealt: list[Rules] = []
    named: list[Rules | None] = []
    under_way, named_rules = fuzz._under_way, fuzz._named_rules

    def deal(rng: random.Random, rules: Rules) -> Any:
        dealt.append(rules)
        return under_way(rng, rules)

    def name(message: Any) -> Rules | None:
        named.append(named_rules(message))
        return named[-1]

    monkeypatch.setattr(fuzz, "_under_way", deal)
    monkeypatch.setattr(fuzz, "_named_rules", name)
    tally = fuzz.run_campaign("bot", seed=120771, trials=[16510])
    assert (tally.findings, tally.tried, tally.accepted) == (0, 1, 1), tally.examples
    assert dealt == [Rules.preset("pagat")] and named == [Rules.preset("standard")]
    # What a view names: a preset or fields; nothing where there is no rules field the
    # protocol reads (the bot then refuses the view itself).
    assert fuzz._named_rules({"rules": "leiden"}) == Rules.preset("leiden")
    assert fuzz._named_rules({"rules": {"preset": "pagat", "players": 3}}) == Rules.preset(
        "pagat", players=3
    )
    for message in ({}, {"rules": "nope"}, {"rules": 7}, ["rules"], "standard", None):
        assert fuzz._named_rules(message) is None, message


def test_bot_asks_the_trained_random_and_greedy_bots(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    load = matador_env.bot.load_bot

    def recorded(level: str) -> Any:
        asked.append(level)
        return load(level)

    monkeypatch.setattr(fuzz, "load_bot", recorded)
    fuzz.run_campaign("bot", seed=14, count=1)
    assert sorted(asked) == ["greedy", "random", "trained"]


# -- state ---------------------------------------------------------------------------------


def _batch_engine() -> Any:
    pytest.importorskip("numba")
    from matador_env.batch import BatchEngine

    return BatchEngine


def _after_a_state(
    monkeypatch: pytest.MonkeyPatch,
    owner: Any,
    restore: str,
    name: str,
    broken: Callable[..., Any],
) -> None:
    """``owner.<name>`` as ``broken(original, obj, *args)`` in the objects that took a
    saved state through ``owner.<restore>`` (those a trial plays on from), as it was
    in the others."""
    took, original = getattr(owner, restore), getattr(owner, name)

    def marking(self: Any, state: Any) -> Any:
        out = took(self, state)
        self.took_a_state = True
        return out

    def method(self: Any, *args: Any) -> Any:
        if getattr(self, "took_a_state", False):
            return broken(original, self, *args)
        return original(self, *args)

    monkeypatch.setattr(owner, restore, marking)
    monkeypatch.setattr(owner, name, method)


def _broken_once_taken(
    monkeypatch: pytest.MonkeyPatch, name: str, broken: Callable[..., Any]
) -> None:
    """``BatchEngine.<name>`` as ``broken(original, engine, *args)`` in the engines that
    took a state (those a trial plays on from), as it was in the others."""
    _after_a_state(monkeypatch, _batch_engine(), "set_state", name, broken)


def test_state_finds_play_that_leaves_a_state_no_engine_takes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from matador_env.batch import _kernels as K

    def overcounting(step: Callable[..., Any], eng: Any, actions: Any) -> Any:
        ended = step(eng, actions)
        eng.st[:, K.NACT] = -1  # what an overflowing counter would leave
        return ended

    _broken_once_taken(monkeypatch, "step", overcounting)
    found = _found("state", 40)
    assert "after step 1, its own state is refused: state: slot 0: the actions so far" in found


def test_state_finds_a_running_hand_with_no_legal_action(monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_once_taken(monkeypatch, "legal_masks", lambda masks, eng: masks(eng) * 0)
    assert "after step 0, a hand runs with no legal action" in _found("state", 40)


def test_state_finds_legal_play_refused_after_a_state_was_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A BatchError from play is no refusal of the state: counted as one, it would hide.
    from matador_env.batch import BatchError

    _broken_once_taken(monkeypatch, "step", _refuse(BatchError("slot 0: refused")))
    found = _found("state", 40)
    assert "legal play from a state that was taken refused: slot 0: refused" in found


def test_state_finds_a_state_taken_but_not_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_batch_engine(), "_put_state", lambda self, loaded: None)
    assert "a state was taken, but get_state() gives back another" in _found("state", 40)


def test_state_finds_a_refusal_that_changed_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    from matador_env.batch import BatchError

    engine = _batch_engine()
    read = engine._read_state

    def half_taken(self: Any, state: Any) -> Any:
        self.hand_seeds = [7] * self.size
        return read(self, state)

    monkeypatch.setattr(engine, "_read_state", half_taken)
    assert "a refused state changed what it was given to" in _found("state", 40)
    monkeypatch.setattr(engine, "_read_state", _refuse(BatchError("state: refused")))
    assert "a valid input refused: BatchError: state: refused" in _found("state", 40)


def test_state_reads_a_rules_text_given_back_as_the_rules_it_names() -> None:
    # The engine writes its own text back: a state whose rules were written otherwise
    # (pairs in another order, teams=0) and taken is given back as it was taken.
    pytest.importorskip("numba")
    from matador_env.batch import BatchEngine

    eng = BatchEngine(Rules.preset("standard"), 1)
    eng.deal([3])
    state = eng.get_state()
    text = " ".join(reversed(state["rules"].split())).replace("teams=False", "teams=0")
    written = dict(state, rules=text)
    other = BatchEngine(Rules.preset("standard"), 1)
    other.set_state(written)
    assert other.get_state()["rules"] != text
    assert fuzz._gives_back(written, other.get_state())
    assert not fuzz._gives_back(dict(written, hand_seeds=[4]), other.get_state())
    nested = {"engine": dict(written, rules="players=3"), "learner": [0]}
    assert not fuzz._gives_back(nested, {"engine": other.get_state(), "learner": [0]})


def test_edits_of_a_state_survive_what_earlier_edits_left() -> None:
    # Any part may be replaced by any JSON value, and a later edit must still work on
    # what is left (a list of hand sizes replaced by None, a seat by a string).
    for seed in range(2000):
        rng = random.Random(seed)
        engine: dict[str, Any] = {"loc": [[0, 1, -1], None, "x"], "hsize": [[1, None], 3]}
        state = {"engine": engine, "rules": "standard", "learner": [0]}
        for _ in range(6):
            fuzz._edit_state(rng, state, engine)


# -- live ----------------------------------------------------------------------------------


def test_live_finds_a_state_taken_but_not_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from train.selfplay import BatchOpponentPool, SelfPlayEnv

    restore = SelfPlayEnv.restore_live_state

    def stream_moved(self: Any, state: Any) -> Any:
        obs = restore(self, state)
        self._rng.random()  # the learner's stream moved on: a resumed run plays otherwise
        return obs

    monkeypatch.setattr(SelfPlayEnv, "restore_live_state", stream_moved)
    assert "a live state was taken, but live_state() gives back another" in _found("live", 30)
    monkeypatch.undo()
    pool_restore = BatchOpponentPool.restore_live_state

    def row_lost(self: Any, state: Any) -> None:
        pool_restore(self, state)
        self._episode.pop(next(iter(self._episode), None), None)

    monkeypatch.setattr(BatchOpponentPool, "restore_live_state", row_lost)
    assert "a pool state was taken, but live_state() gives back another" in _found("live", 30)


def test_live_finds_an_episode_with_no_legal_action(monkeypatch: pytest.MonkeyPatch) -> None:
    from train.selfplay import SelfPlayEnv

    _after_a_state(
        monkeypatch, SelfPlayEnv, "restore_live_state", "action_masks", lambda m, env: m(env) * 0
    )
    assert "after step 0, an episode runs with no legal action" in _found("live", 30)


def test_live_finds_play_that_raises_after_a_state_was_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A ValueError from play is no refusal of the state: counted as one, it would hide.
    from matador_env.vector import VectorEnv
    from train.selfplay import BatchOpponentPool, SelfPlayEnv

    refuse = _refuse(ValueError("no"))
    _after_a_state(monkeypatch, SelfPlayEnv, "restore_live_state", "step", refuse)
    assert "play from a state that was taken raised ValueError: no" in _found("live", 30)
    monkeypatch.undo()
    # The vector env plays on after its pool took a state.
    monkeypatch.setattr(VectorEnv, "set_state", refuse)
    assert "play from a state that was taken raised ValueError: no" in _found("live", 30)
    monkeypatch.undo()
    assert _found("live", 30) == ""
    _after_a_state(monkeypatch, BatchOpponentPool, "restore_live_state", "__call__", refuse)
    assert "raised ValueError: no" in _found("live", 60)


def test_live_finds_a_refusal_that_changed_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    from train.selfplay import BatchOpponentPool

    restore = BatchOpponentPool.restore_live_state

    def half_taken(self: Any, state: Any) -> None:
        self._episode[99] = 0
        self.current[99] = "random"
        restore(self, state)

    monkeypatch.setattr(BatchOpponentPool, "restore_live_state", half_taken)
    assert "a refused pool state changed the pool" in _found("live", 60)


def test_live_finds_a_state_as_saved_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import train.selfplay

    monkeypatch.setattr(train.selfplay, "check_live_state", _refuse(ValueError("refused")))
    assert "a valid input refused: ValueError: refused" in _found("live", 30)
    monkeypatch.undo()
    monkeypatch.setattr(
        train.selfplay.BatchOpponentPool, "restore_live_state", _refuse(ValueError("refused"))
    )
    assert "a valid input refused: ValueError: refused" in _found("live", 80)


def test_live_saves_states_at_an_episodes_end_and_with_snapshots_in_play(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import train.selfplay

    seen: list[tuple[bool, str]] = []
    check = train.selfplay.check_live_state

    def seeing(state: Any, env: Any) -> None:
        check(state, env)
        seen.append((state["over"], state["opponent"]))

    monkeypatch.setattr(train.selfplay, "check_live_state", seeing)
    assert _found("live", 60) == ""
    assert any(over for over, _ in seen) and not all(over for over, _ in seen)
    assert {"random", "expert", "greedy", "snapshot:step_100", "snapshot:step_300"} <= {
        name for _, name in seen
    }


def test_live_leaves_no_scratch_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(fuzz.tempfile, "tempdir", str(tmp_path))
    fuzz.run_campaign("live", seed=14, count=20)
    assert list(tmp_path.iterdir()) == []


def test_edits_of_a_live_state_survive_what_earlier_edits_left() -> None:
    for seed in range(2000):
        rng = random.Random(seed)
        state: dict[str, Any] = {"game": {"seed": 1, "actions": [3, None]}, "over": False, "x": "y"}
        for _ in range(6):
            fuzz._edit_live(rng, state)


# -- trials: budget, numbers and seeds -----------------------------------------------------


def test_the_budget_ends_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # A clock that moves one second a reading: the deadline is 3.5 s after the start.
    clock = iter(range(1000))
    monkeypatch.setattr(fuzz, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    assert list(fuzz._budget(3.5, None)) == [0, 1, 2, 3]


def test_trial_i_draws_from_seed_campaign_and_number_and_is_named_by_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: list[tuple[float, str]] = []
    monkeypatch.setattr(
        fuzz, "trial_rules", lambda rng, tally, label: drawn.append((rng.random(), label))
    )
    fuzz.run_campaign("rules", seed=5, trials=[3, 7])
    assert drawn == [
        (random.Random("5/rules/3").random(), "trial 3"),
        (random.Random("5/rules/7").random(), "trial 7"),
    ]


def test_no_trials_asked_runs_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fuzz, "trial_rules", _refuse(AssertionError("no trial was asked")))
    assert fuzz.run_campaign("rules", seed=5, trials=[]).tried == 0


# -- the HTTP campaign's counts ------------------------------------------------------------


def _http_campaign(counts: dict[str, int], sent: list[str]) -> Callable[..., dict[str, int]]:
    """Stands in for ``run_http_campaign``: these counts, and ``sent`` as its examples."""

    def run(seconds: float, seed: int, examples: list[str] | None = None) -> dict[str, int]:
        if examples is not None:
            examples += sent
        return counts

    return run


def test_the_http_counts_become_the_campaigns_tally(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {
        "tried": 10,
        "accepted": 6,
        "refused": 3,
        "findings": 1,
        "finding_5xx": 1,
        "ok_422": 3,
    }
    sent = [f"finding {i}: " + "x" * 700 for i in range(7)]
    monkeypatch.setattr(fuzz_http, "run_http_campaign", _http_campaign(counts, sent))
    result = fuzz.run_http(seconds=1, seed=3)
    assert isinstance(result, fuzz.Tally)
    assert (result.tried, result.accepted, result.refused, result.findings) == (10, 6, 3, 1)
    assert result.errors == {"finding_5xx": 1, "ok_422": 3}
    assert result.examples == [
        *(e[:600] for e in sent[:5]),
        f"see python -m benchmarks.fuzz_http --seed 3: {counts}",
    ]


def test_http_without_findings_gives_no_examples(monkeypatch: pytest.MonkeyPatch) -> None:
    counts = {"tried": 4, "accepted": 4}
    monkeypatch.setattr(fuzz_http, "run_http_campaign", _http_campaign(counts, ["sent"]))
    result = fuzz.run_http(seconds=1, seed=3)
    assert isinstance(result, fuzz.Tally) and result.examples == []


# -- the table and the command -------------------------------------------------------------


def test_the_table_gives_each_campaign_its_counts_refusals_and_findings() -> None:
    rules = fuzz.Tally(4, 1, 2, 1, ["trial 2: invariant: x"], {"RulesError": 2})
    view = fuzz.Tally(tried=2, accepted=2)
    table = fuzz.format_table(
        {"rules": rules, "view": view, "http": "not available (no module)"},
        {"rules": 1.0, "view": 2.0},
    ).splitlines()
    assert table[2].split() == ["rules", "4", "1", "2", "1", "1.0"]
    assert table[3].split() == ["view", "2", "2", "0", "0", "2.0"]
    assert table[4] == f"{'http':10} not available (no module)"
    assert table[6].split() == ["total", "6", "3", "2", "1", "3.0"]
    assert table[8:] == [
        "refused with (documented errors; for http, its own counts):",
        "  rules: RulesError 2",
        "",
        "found:",
        "  rules trial 2: invariant: x",
    ]


# -- a campaign in a process of its own ----------------------------------------------------


def _dying_at_trial_3(*args: Any) -> None:
    """A campaign's process whose trial 3 kills it, as a kernel writing past its arrays
    would (run in the new process: a test's monkeypatch does not reach it)."""
    import os

    import benchmarks.fuzz

    rules = benchmarks.fuzz.trial_rules

    def trial(rng: random.Random, tally: fuzz.Tally, label: str) -> None:
        if label == "trial 1":  # a finding before: its text comes back
            tally.findings += 1
            tally.examples.append("trial 1: invariant: broken")
        if label == "trial 3":
            os.abort()
        rules(rng, tally, label)

    benchmarks.fuzz.trial_rules = trial
    benchmarks.fuzz._campaign_process(*args)


def _dying_at_its_exit(*args: Any) -> None:
    """A campaign's process that dies after it sent its tally, as a process whose heap
    a trial corrupted does when it frees it."""
    import os

    import benchmarks.fuzz

    benchmarks.fuzz._campaign_process(*args)
    os.abort()


def _raising_outside_a_trial(*args: Any) -> None:
    raise RuntimeError("a campaign's own setup failed")


def test_a_campaign_in_its_own_process_counts_as_in_the_runs() -> None:
    assert fuzz.run_guarded("rules", 14, count=30) == fuzz.run_campaign("rules", 14, count=30)
    assert fuzz.run_guarded("apply", 14, trials=[5, 2]) == fuzz.run_campaign(
        "apply", 14, trials=[5, 2]
    )


def test_a_trial_that_kills_its_campaigns_process_is_its_finding() -> None:
    before = fuzz.run_campaign("rules", 14, count=3)
    tally = fuzz.run_guarded("rules", 14, count=10, process=_dying_at_trial_3)
    assert (tally.tried, tally.accepted, tally.refused) == (4, before.accepted, before.refused)
    assert tally.findings == 2 and tally.examples == [
        "trial 1: invariant: broken",
        "trial 3: the campaign's process died (signal SIGABRT); if that trial alone does not "
        "kill it, one before it corrupted memory (rerun them in smaller sets); the counts are "
        "those of the trials before it, less the errors they met",
    ]
    tally = fuzz.run_guarded("rules", 14, count=10, process=_dying_at_its_exit)
    whole = fuzz.run_campaign("rules", 14, count=10)
    assert (tally.tried, tally.errors, tally.findings) == (10, whole.errors, 1)
    assert tally.examples == [
        "after its last trial, the campaign's process died (signal SIGABRT): one of its "
        "trials corrupted memory; rerun them in smaller sets to find which"
    ]
    tally = fuzz.run_guarded("rules", 14, count=10, process=_raising_outside_a_trial)
    assert (tally.tried, tally.findings) == (0, 1)
    assert tally.examples == ["before trial 0: the campaign's process died (exit status 1)"]


class _Campaigns:
    """Stands in for every campaign: records how each was run, finds ``findings``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, findings: int = 0) -> None:
        self.runs: list[tuple[Any, ...]] = []
        self.findings = findings
        monkeypatch.setattr(fuzz, "run_guarded", self.campaign)
        monkeypatch.setattr(fuzz, "run_http", self.http)

    def campaign(self, *args: Any) -> fuzz.Tally:
        self.runs.append(args)
        return fuzz.Tally(tried=1, findings=self.findings)

    def http(self, seconds: float, seed: int) -> str:
        self.runs.append(("http", seed, seconds))
        return "not available (stand-in)"


def test_by_default_every_documented_campaign_shares_60_seconds(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    documented = re.findall(r"^``([a-z]+)`` ", fuzz.__doc__ or "", re.M)  # the table
    campaigns = _Campaigns(monkeypatch)
    assert fuzz.main([]) == 0
    share = 60.0 / len(documented)
    assert campaigns.runs == [
        ("http", 0, share) if name == "http" else (name, 0, share, None, True, None)
        for name in documented
    ]
    assert capsys.readouterr().out.startswith("python -m benchmarks.fuzz --seed 0: 60 s\n")


def test_counted_trials_give_http_5_seconds_and_named_trials_are_rerun(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    campaigns = _Campaigns(monkeypatch)
    fuzz.main(["--count", "4", "--campaign", "rules", "http", "--seed", "2"])
    assert campaigns.runs == [("rules", 2, None, 4, True, None), ("http", 2, 5.0)]
    campaigns.runs.clear()
    fuzz.main(["--trial", "3", "5", "--campaign", "apply", "--no-progress"])
    assert campaigns.runs == [("apply", 0, 60.0, None, False, [3, 5])]
    assert "python -m benchmarks.fuzz --seed 0: trials 3 5\n" in capsys.readouterr().out
    # Without --campaign the trials rerun in every campaign but http, which numbers none
    # (it ran for its share of the time, whatever the trials asked) ...
    campaigns.runs.clear()
    fuzz.main(["--trial", "3", "--no-progress"])
    assert [run[0] for run in campaigns.runs] == list(fuzz.CAMPAIGNS)
    capsys.readouterr()
    # ... and naming it beside --trial is refused.
    with pytest.raises(SystemExit) as exited:
        fuzz.main(["--trial", "3", "--campaign", "rules", "http"])
    assert exited.value.code == 2
    assert "--trial: the http campaign numbers no trials" in capsys.readouterr().err


def test_the_exit_status_is_1_when_anything_was_found(monkeypatch: pytest.MonkeyPatch) -> None:
    _Campaigns(monkeypatch, findings=1)
    assert fuzz.main(["--count", "1", "--campaign", "view"]) == 1


def test_the_table_gives_the_seconds_each_campaign_took(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _Campaigns(monkeypatch)
    clock = iter([10.0, 12.5, 20.0, 21.0])  # rules from 10 to 12.5 s, view from 20 to 21 s
    monkeypatch.setattr(fuzz, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    fuzz.main(["--count", "1", "--campaign", "rules", "view"])
    rows = {line.split()[0]: line.split()[-1] for line in capsys.readouterr().out.splitlines()[3:5]}
    assert rows == {"rules": "2.5", "view": "1.0"}
