"""The reliability suite (benchmarks/fuzz.py, benchmarks/fuzz_http.py) fails when what
it guards is broken: each test breaks one thing in this process (an engine rule, a
check that refuses bad input, an entry point that refuses good input) and runs the
campaign that guards it, which must report a finding."""

from __future__ import annotations

import contextlib
import json
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

import benchmarks.fuzz as fuzz
import benchmarks.fuzz_http as fuzz_http
import matador_env.bot
import matador_env.engine.state
import matador_env.perft
import matador_env.protocol
from matador_env.engine import HandState, Move, MoveParseError, Rules, RulesError
from matador_env.engine.public import HistoryError
from matador_env.engine.rules import CHOICES
from matador_env.policy import OnnxPolicy
from matador_env.protocol import ProtocolError


def _found(campaign: str, count: int, seed: int = 14) -> str:
    """The findings of a small campaign, one a line ("" when there are none)."""
    tally = fuzz.run_campaign(campaign, seed=seed, count=count)
    return "\n".join(tally.examples) if tally.findings else ""


def _refuse(error: Exception) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise error

    return refuse


# -- the play campaign: the engine's invariants ------------------------------------------


def test_play_finds_a_tile_lost_in_a_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    draw = HandState._draw

    def losing_draw(self: HandState, move: Move) -> HandState:
        after = draw(self, move)
        hands = list(after._hands)
        hands[self._to_move] = self._hands[self._to_move]  # the drawn tile is gone
        after._hands = tuple(hands)
        return after

    monkeypatch.setattr(HandState, "_draw", losing_draw)
    assert "hands, boneyard and table hold" in _found("play", 60)


def test_play_finds_wrong_blocked_points(monkeypatch: pytest.MonkeyPatch) -> None:
    def others_plus_own_always(scoring: str, low: int, others: int) -> int:
        return others + low

    # The function itself is broken, wherever it was imported.
    blocked_points = matador_env.engine.state.blocked_points
    monkeypatch.setattr(blocked_points, "__code__", others_plus_own_always.__code__)
    assert "blocked hand scored" in _found("play", 60)


def test_play_finds_a_tie_that_ignores_the_tie_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matador_env.engine.state.Termination, "REDEAL_TIE", "void_tie")
    assert "ended void_tie (tie=redeal)" in _found("play", 1000, seed=1)


def test_play_finds_a_record_that_does_not_read_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # A RulesError from the record of accepted rules is the engine's, not a refusal.
    monkeypatch.setattr(Rules, "from_text", _refuse(RulesError("rules", "x", "no text")))
    assert "RulesError in play" in _found("play", 60)


def test_play_draws_every_option_and_plays_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    played: list[Rules] = []
    matches: list[Rules] = []
    play_hand, play_match = fuzz._play_hand, fuzz._play_match

    def counted_hand(rules: Rules, rng: random.Random) -> None:
        played.append(rules)
        play_hand(rules, rng)

    def counted_match(rules: Rules, rng: random.Random) -> None:
        matches.append(rules)
        play_match(rules, rng)

    monkeypatch.setattr(fuzz, "_play_hand", counted_hand)
    monkeypatch.setattr(fuzz, "_play_match", counted_match)
    tally = fuzz.run_campaign("play", seed=14, count=300)
    assert tally.findings == 0, tally.examples
    seen = {(name, getattr(rules, name)) for rules in played for name in CHOICES}
    missing = {(name, value) for name, values in CHOICES.items() for value in values} - seen
    assert not missing
    assert any(rules.teams for rules in played)
    assert len(matches) >= len(played) / 16  # one in eight, by chance


# -- every campaign: a valid input refused is a finding ----------------------------------


@pytest.mark.parametrize(
    ("campaign", "owner", "name", "error"),
    [
        ("apply", Move, "parse", MoveParseError("refused")),
        ("view", HandState, "view", ValueError("refused")),
        ("record", fuzz, "parse_hand_record", MoveParseError("refused")),
        ("public", fuzz, "public_view", HistoryError("history", "refused")),
        ("protocol", fuzz, "view_from_json", ProtocolError("history", "refused")),
        ("bot", matador_env.bot, "view_from_json", ProtocolError("history", "refused")),
    ],
)
def test_an_entry_point_that_refuses_everything_is_found(
    monkeypatch: pytest.MonkeyPatch, campaign: str, owner: Any, name: str, error: Exception
) -> None:
    monkeypatch.setattr(owner, name, _refuse(error))
    assert "a valid input refused" in _found(campaign, 150)


def test_protocol_finds_claims_left_unchecked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matador_env.protocol, "_check_claims", lambda data, view: None)
    assert "was accepted, though its history gives" in _found("protocol", 150)


def test_protocol_finds_a_view_that_misstates_the_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    to_json = matador_env.protocol.view_to_json

    def reversed_sizes(view: Any) -> dict[str, Any]:
        data = to_json(view)
        data["hand_sizes"] = data["hand_sizes"][::-1]
        return data

    monkeypatch.setattr(matador_env.protocol, "view_to_json", reversed_sizes)
    monkeypatch.setattr(fuzz, "view_to_json", reversed_sizes)
    assert "view_to_json misstates the hand" in _found("protocol", 150)


def test_perft_finds_a_case_part_of_the_wrong_kind_let_through(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the reader's kind check an int among a case's hands reaches ``split``."""
    monkeypatch.setattr(matador_env.perft, "_part", lambda entry, path, kind: _dig(entry, path))
    assert "AttributeError" in _found("perft", 200)


def _dig(entry: Any, path: str) -> Any:
    for key in path.split("."):
        entry = entry[key]
    return entry


def test_perft_finds_a_row_of_other_than_counts_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matador_env.perft, "_is_count", lambda value: True)
    assert "a stored row accepted with other than counts" in _found("perft", 200)


def test_perft_finds_the_engine_counting_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    """An intact case must count as stored: a perft that counts no lines is found."""
    count = matador_env.perft.perft
    monkeypatch.setattr(
        matador_env.perft, "perft", lambda state, d: count(state, d)._replace(lines=0)
    )
    assert "the shipped case counts otherwise" in _found("perft", 100)


def test_bot_finds_a_view_of_other_rules_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    read = matador_env.bot.view_from_json
    monkeypatch.setattr(matador_env.bot, "view_from_json", lambda data, rules=None: read(data))
    assert "for its own" in _found("bot", 300)


def test_policy_finds_an_illegal_move(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(OnnxPolicy, "choose", lambda self, view, *args: Move("pass"))
    assert "chose an illegal move" in _found("policy", 40)


def test_an_input_that_takes_too_long_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rules.from_text read a 100,000-character text in 80 s (seed 9, trial 147 of
    # "rules"): the campaign ran past its time and reported nothing.
    monkeypatch.setattr(fuzz, "SLOW_INPUT_SECONDS", 0.01)
    tally = fuzz.Tally()

    def slow_refusal() -> None:
        time.sleep(0.05)
        raise ValueError("no")

    assert fuzz.classify(tally, slow_refusal, (ValueError,), "t") == "finding"
    assert tally.examples[0].startswith("t: slow: refused after")


def test_an_input_that_hangs_is_stopped_and_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # An endless loop never reached the slow-input check: the run hung with no table.
    # The loop catches Exception, as code under test may: the stop must get through.
    monkeypatch.setattr(fuzz, "HUNG_INPUT_SECONDS", 0.05)
    tally = fuzz.Tally()

    def endless() -> None:
        while True:
            with contextlib.suppress(Exception):
                time.sleep(0.01)

    assert fuzz.classify(tally, endless, (ValueError,), "t") == "finding"
    assert tally.examples == ["t: hung: stopped after 0.05 s"]
    # The timer is off again and the handler put back, for the inputs after it.
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL


# -- the HTTP campaign -------------------------------------------------------------------


def test_the_http_findings_reach_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    def campaign(seconds: float, seed: int, examples: list[str] | None = None) -> dict[str, int]:
        if examples is not None:
            examples.append("finding_5xx: sent b'POST /move', got b'HTTP/1.1 500'")
        return {"tried": 1, "findings": 1, "finding_5xx": 1}

    monkeypatch.setattr(fuzz_http, "run_http_campaign", campaign)
    result = fuzz.run_http(seconds=1, seed=3)
    assert isinstance(result, fuzz.Tally)
    # What was sent and answered, not the counts alone.
    assert result.examples[0].startswith("finding_5xx: sent b'POST /move'"), result.examples


class _RefusingServer:
    """Stands in for the server under test: answers every request with a documented
    422, as a server that refused every view would."""

    def __init__(self) -> None:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.dumps({"error": "invalid", "field": "x", "message": "no"}).encode()
                self.send_response(422)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def connect(self, timeout: float) -> Any:
        import http.client

        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)


@pytest.fixture
def refusing_server() -> Iterator[_RefusingServer]:
    server = _RefusingServer()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def test_http_views_find_a_server_that_refuses_every_view(
    refusing_server: _RefusingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(fuzz_http.LIMITS, "views", 60)
    tally = fuzz_http.Tally()
    fuzz_http.views_phase(refusing_server, tally, random.Random(0), until=float("inf"))  # type: ignore[arg-type]
    counts: Counter[str] = tally.counts
    # Valid views refused, ?bot=nobody answered 422 where 404 is documented: each
    # reported with what was sent and what it had to get.
    assert counts["finding_wrong_status"] > 0, counts
    assert all("(must get " in e for e in tally.examples), tally.examples
