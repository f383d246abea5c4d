"""What the HTTP fuzz campaign (``benchmarks/fuzz_http.py``) promises that no other fast
test held it to (found by mutation testing): how it reads raw answers and counts them,
which finding each kind of misbehaving server gets (a view refused, an illegal move,
a game the engine disagrees with, a game changed by a refusal or a GET, a stale
``If-Match`` taken, requests at once miscounted, the cap on games not enforced, a
stalled or burst client left open, a connection closed without ``408``), what the
inputs it sends are, and how :func:`run_http_campaign` and ``main`` put the counts
together. No server process is started: the game and move endpoints are the ASGI apps
called in process (``tests.test_web.Client``), raw sockets meet small stand-in servers
on loopback, and the campaign's server is replaced by a stand-in, so the whole file
runs in seconds."""

from __future__ import annotations

import contextlib
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from types import SimpleNamespace
from typing import Any

import pytest

import benchmarks.fuzz_http as fuzz_http
from benchmarks.bot import HEADERS
from benchmarks.fuzz_http import (
    KeptAlive,
    LiveGame,
    Tally,
    json_error_kind,
    read_answer,
    read_until_closed,
    status_of,
)
from matador_env.bot import load_bot
from matador_env.engine import HandState, Rules
from matador_env.protocol import view_to_json
from matador_env.serve import create_app
from matador_env.web import GameSessions
from tests.test_benchmark_refusals import _DeadServer
from tests.test_web import Client, Reply, make_client

# -- stand-ins ------------------------------------------------------------------------

Lie = Callable[[str, str, bytes | None, dict[str, str]], Reply | None]


def json_reply(status: int, data: Any) -> Reply:
    return Reply(status, {"content-type": "application/json"}, json.dumps(data).encode())


class _Response:
    def __init__(self, reply: Reply) -> None:
        self.status = reply.status_code
        self.reply = reply

    def read(self) -> bytes:
        return self.reply.content

    def getheaders(self) -> list[tuple[str, str]]:
        return list(self.reply.headers.items())


class _Connection:
    """Just enough of ``http.client.HTTPConnection`` for :class:`KeptAlive`."""

    def __init__(self, server: AppServer) -> None:
        self.server = server
        self.reply: Reply | None = None

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.reply = self.server.answer(method, path, body, headers or {})

    def getresponse(self) -> _Response:
        assert self.reply is not None
        return _Response(self.reply)

    def close(self) -> None:
        pass


class AppServer:
    """Stands in for the server under test: an ASGI app called in process, one request
    at a time. ``lie``, when set, may answer a request in the app's place; ``drops``
    requests fail as on a connection the server closed."""

    def __init__(self, app_client: Client) -> None:
        self.client = app_client
        self.lock = threading.Lock()
        self.lie: Lie | None = None
        self.drops = 0
        self.sent: list[tuple[str, str, dict[str, str]]] = []

    def connect(self, timeout: float) -> _Connection:
        return _Connection(self)

    def answer(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        with self.lock:
            if self.drops:
                self.drops -= 1
                raise ConnectionResetError("closed by the server")
            self.sent.append((method, path, dict(headers)))
            told = self.lie(method, path, body, headers) if self.lie else None
            if told is not None:
                return told
            return self.honest(method, path, body, headers)

    def honest(self, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        return self.client.request(method, path, content=body, headers=headers)


def games_server(max_games: int = 8) -> AppServer:
    return AppServer(make_client(GameSessions(max_games=max_games)))


@pytest.fixture(scope="module")
def move_app() -> Client:
    return Client(create_app({"greedy": load_bot("greedy"), "random": load_bot("random")}))


class Scripted(random.Random):
    """A ``random.Random`` whose first ``randrange`` and ``random`` results are given
    (then drawn from a seeded one)."""

    def __init__(self, ranges: list[int] | None = None, floats: list[float] | None = None) -> None:
        super().__init__(0)
        self.ranges, self.floats = list(ranges or []), list(floats or [])
        # What is not given is drawn here: Random's own choice would take our floats.
        self.drawn = random.Random(0)

    def randrange(self, *args: Any, **kwargs: Any) -> int:
        return self.ranges.pop(0) if self.ranges else self.drawn.randrange(*args, **kwargs)

    def random(self) -> float:
        return self.floats.pop(0) if self.floats else self.drawn.random()

    def choice(self, seq: Any) -> Any:
        return self.drawn.choice(seq)


class Lowest(random.Random):
    """Draws ``how`` for ``randrange(n)`` and the lowest value of every other range: the
    mutation or hang-up ``how``, each cut or place at its lowest; no pause."""

    def __init__(self, how: int) -> None:
        super().__init__(0)
        self.how = how

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        return self.how if stop is None else start

    def random(self) -> float:
        return 0.0


def deal(server: AppServer, **settings: Any) -> tuple[str, LiveGame]:
    game = server.honest("POST", "/games", json.dumps(settings).encode(), HEADERS).json()
    return game["id"], LiveGame(game)


def get_game(server: AppServer, gid: str) -> dict[str, Any]:
    game: dict[str, Any] = server.honest("GET", f"/games/{gid}", None, {}).json()
    return game


# -- reading answers ------------------------------------------------------------------


class FakeSocket:
    """Gives ``chunks`` to ``recv`` (an exception is raised), then fails the test if it
    is read again: what reads an answer must stop at its end or at the close."""

    def __init__(self, *chunks: bytes | Exception) -> None:
        self.chunks = list(chunks)

    def settimeout(self, timeout: float) -> None:
        pass

    def recv(self, size: int) -> bytes:
        assert self.chunks, "read past the end of the answer or the close"
        chunk = self.chunks.pop(0)
        if isinstance(chunk, Exception):
            raise chunk
        return chunk


OK_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"


def test_an_answer_is_read_to_its_content_length_and_no_further() -> None:
    assert read_answer(FakeSocket(OK_ANSWER[:20], OK_ANSWER[20:]), wait=30) == OK_ANSWER  # type: ignore[arg-type]


def test_an_interim_100_continue_is_skipped_for_the_answer_after_it() -> None:
    sock = FakeSocket(b"HTTP/1.1 100 Continue\r\n\r\n", OK_ANSWER, b"")
    assert read_answer(sock, wait=30) == OK_ANSWER  # type: ignore[arg-type]


def test_reading_stops_when_the_server_closes() -> None:
    # A second read after the close would fail the fake socket.
    assert read_answer(FakeSocket(b"HTTP/1.1 400 Bad", b""), wait=30) == b"HTTP/1.1 400 Bad"  # type: ignore[arg-type]


def test_read_until_closed_tells_a_close_or_reset_from_a_wait_run_out() -> None:
    assert read_until_closed(FakeSocket(b"x", b""), 30) == (b"x", True)  # type: ignore[arg-type]
    assert read_until_closed(FakeSocket(b"y", ConnectionResetError()), 30) == (b"y", True)  # type: ignore[arg-type]
    assert read_until_closed(FakeSocket(TimeoutError()), 30) == (b"", False)  # type: ignore[arg-type]


def test_the_status_of_an_answer_is_read_from_its_status_line_only() -> None:
    assert status_of(b"HTTP/1.0 408 Request Timeout\r\n\r\n") == 408
    assert status_of(OK_ANSWER) == 200
    assert status_of(b"garbage HTTP/1.1 200 OK\r\n") is None


def json_answer(
    body: bytes,
    status: bytes = b"400 Bad Request",
    media: bytes = b"application/json",
    after: bytes = b"",
) -> bytes:
    """An answer with ``body``; ``after``: bytes that follow it on the connection."""
    head = b"HTTP/1.1 " + status + b"\r\nContent-Type: " + media
    return head + b"\r\nCONTENT-LENGTH: " + str(len(body)).encode() + b"\r\n\r\n" + body + after


def test_a_json_error_is_an_object_of_error_field_and_message_only() -> None:
    error = {"error": "invalid", "field": "seat", "message": "no"}
    # Header names and the media type in any case; the body to its Content-Length.
    assert json_error_kind(json_answer(json.dumps(error).encode(), after=b"junk")) == "invalid"
    assert (
        json_error_kind(json_answer(json.dumps(error).encode(), media=b"Application/JSON"))
        == "invalid"
    )
    assert json_error_kind(json_answer(json.dumps({**error, "extra": 1}).encode())) is None
    assert json_error_kind(json_answer(json.dumps({**error, "error": 7}).encode())) is None
    assert json_error_kind(json_answer(json.dumps(error).encode(), media=b"text/plain")) is None


# -- counting answers -----------------------------------------------------------------


def test_the_first_three_examples_of_each_finding_are_kept_and_no_other_counts() -> None:
    tally = Tally()
    for i in range(5):
        tally.add("finding_a", "requests", sent=b"%d" % i)
        tally.add("finding_b", sent=b"b")
    assert tally.counts["finding_a"] == 5 and tally.counts["requests"] == 5
    assert [e.split(",")[0] for e in tally.examples].count("finding_a: sent b'2'") == 1
    assert sum(e.startswith("finding_a") for e in tally.examples) == 3
    assert sum(e.startswith("finding_b") for e in tally.examples) == 3
    assert len(tally.examples) == 6


def error_answer(status: str, kind: Any) -> bytes:
    return json_answer(
        json.dumps({"error": kind, "field": None, "message": "m"}).encode(), status.encode()
    )


@pytest.mark.parametrize(
    ("answer", "sent", "keys"),
    [
        (b"", b"", {"requests", "no_answer", "refused"}),
        (b"SSH-2.0\r\n", b"", {"requests", "finding_not_http"}),
        (OK_ANSWER, b"", {"requests", "status_2xx", "accepted"}),
        # No request is redirected and no final answer is 1xx: accepted is 2xx only.
        (
            b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n",
            b"",
            {"requests", "status_3xx", "finding_unexpected_status"},
        ),
        (
            b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
            b"",
            {"requests", "status_1xx", "finding_unexpected_status"},
        ),
        (error_answer("503 X", "busy"), b"", {"requests", "status_5xx", "busy_503", "refused"}),
        (
            error_answer("503 X", "too_many_games"),
            b"",
            {"requests", "status_5xx", "games_503", "refused"},
        ),
        (error_answer("503 X", "overloaded"), b"", {"requests", "status_5xx", "finding_5xx"}),
        (error_answer("500 X", "busy"), b"", {"requests", "status_5xx", "finding_5xx"}),
        (error_answer("500 X", "too_many_games"), b"", {"requests", "status_5xx", "finding_5xx"}),
        (error_answer("404 X", "unknown_game"), b"", {"requests", "status_4xx", "refused"}),
        (error_answer("429 X", "busy"), b"", {"requests", "status_4xx", "refused"}),
        (
            error_answer("400 X", "whatever"),
            b"",
            {"requests", "status_4xx", "refused", "finding_undocumented_error"},
        ),
        (
            error_answer("400 X", None),
            b"",
            {"requests", "status_4xx", "refused", "finding_undocumented_error"},
        ),
        # The answer to HEAD has no body to name the error.
        (
            b"HTTP/1.1 405 X\r\nContent-Length: 0\r\n\r\n",
            b"HEAD / HTTP/1.1",
            {"requests", "status_4xx", "refused"},
        ),
    ],
)
def test_each_answer_is_counted_by_its_status_and_what_its_error_says(
    answer: bytes, sent: bytes, keys: set[str]
) -> None:
    tally = Tally()
    tally.answer(answer, sent=sent)
    assert set(+tally.counts) == keys


# -- views ----------------------------------------------------------------------------


def test_a_view_flagged_valid_is_sent_as_it_was_and_others_are_mutated() -> None:
    view = fuzz_http.sample_views(random.Random(5), 1)[0]
    rng = random.Random(1)
    flags = []
    for _ in range(300):
        body, valid = fuzz_http.mutate_view(rng, view)
        flags.append(valid)
        if valid:
            assert json.loads(body) == view
    assert True in flags and False in flags


def test_sampled_views_are_of_the_seat_to_act_in_hands_not_over() -> None:
    views = fuzz_http.sample_views(random.Random(2), 40)
    assert len(views) == 40
    for view in views:
        assert view["legal_moves"], view
    assert len({(len(v["hand"]), v["seat"]) for v in views}) > 3
    assert len({v["rules"] for v in views}) > 2  # of every preset


def test_a_cut_body_is_always_short_of_the_whole() -> None:
    rng = random.Random(0)
    data = {"move": "1-2"}
    assert all(len(fuzz_http._cut(rng, data)) < len(json.dumps(data)) for _ in range(300))


def test_a_reply_is_legal_only_when_it_is_a_legal_move_of_the_view() -> None:
    state = HandState.deal(Rules.preset("standard"), 3)
    view = view_to_json(state.view(state.to_move))
    body = json.dumps(view).encode()
    legal = view["legal_moves"][0]
    assert fuzz_http.legal_reply(body, {"move": legal})
    other = next(m for m in ["draw", "pass", "0-0@0>0", "6-6"] if m not in view["legal_moves"])
    assert not fuzz_http.legal_reply(body, {"move": other})
    assert not fuzz_http.legal_reply(b"{not json", {"move": legal})


def move_lie(change: Callable[[bytes | None, str], Reply | None]) -> Lie:
    def lie(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply | None:
        return change(body, path) if path.startswith("/move") else None

    return lie


def run_views(
    move_app: Client, lie: Lie | None, monkeypatch: pytest.MonkeyPatch
) -> tuple[Tally, AppServer]:
    monkeypatch.setitem(fuzz_http.LIMITS, "views", 80)
    server = AppServer(move_app)
    server.lie = lie
    tally = Tally()
    fuzz_http.views_phase(server, tally, random.Random(4), until=float("inf"))  # type: ignore[arg-type]
    return tally, server


def test_views_of_an_honest_server_find_nothing_and_try_every_query(
    move_app: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    tally, server = run_views(move_app, None, monkeypatch)
    assert not [k for k in tally.counts if k.startswith("finding_")], tally.examples
    paths = {path for _, path, _ in server.sent}
    assert {"/move?bot=nobody", "/move?x=1", "/move", "/move?bot=greedy"} <= paths
    assert tally.counts["accepted"] > 0 and tally.counts["refused"] > 0


def test_views_find_a_valid_view_refused(move_app: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    # Only valid views are refused: the queries are answered as documented.
    def refuse_valid(body: bytes | None, path: str) -> Reply | None:
        if "nobody" in path or "x=1" in path:
            return None
        reply = move_app.request("POST", path, content=body, headers=HEADERS)
        return (
            json_reply(422, {"error": "invalid", "field": None, "message": "no"})
            if reply.status_code == 200
            else reply
        )

    tally, _ = run_views(move_app, move_lie(refuse_valid), monkeypatch)
    assert tally.counts["finding_wrong_status"] > 0
    assert tally.counts["finding_illegal_move"] == 0


def test_views_find_an_illegal_move(move_app: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def illegal(body: bytes | None, path: str) -> Reply | None:
        reply = move_app.request("POST", path, content=body, headers=HEADERS)
        if reply.status_code != 200:
            return reply
        return json_reply(200, {**reply.json(), "move": "6-6@0>6", "kind": "play"})

    tally, _ = run_views(move_app, move_lie(illegal), monkeypatch)
    assert tally.counts["finding_illegal_move"] > 0


def test_a_view_that_gets_no_answer_is_counted_as_one() -> None:
    tally = Tally()
    fuzz_http.views_phase(_DeadServer(), tally, random.Random(0), until=time.monotonic() - 1)  # type: ignore[arg-type]
    assert (tally.counts["requests"], tally.counts["no_answer"], tally.counts["refused"]) == (
        1,
        1,
        1,
    )


# -- kept-alive connections -----------------------------------------------------------


def test_a_kept_alive_request_is_sent_again_once_after_the_server_closed_it() -> None:
    server = games_server()
    server.drops = 1
    client = KeptAlive(server)  # type: ignore[arg-type]
    answered = client.request("GET", "/games/nope")
    assert answered is not None
    answer, raw = answered
    # The status and headers come through: the error kind is read from the answer.
    assert status_of(answer) == 404 and json_error_kind(answer) == "unknown_game"
    assert json.loads(raw)["error"] == "unknown_game"
    server.drops = 2
    assert client.request("GET", "/games/nope") is None


# -- raw requests ---------------------------------------------------------------------


def dechunk(body: bytes) -> bytes:
    data = b""
    while True:
        size, _, body = body.partition(b"\r\n")
        n = int(size, 16)
        if n == 0:
            assert body == b"\r\n"
            return data
        data, body = data + body[:n], body[n:]
        assert body.startswith(b"\r\n")
        body = body[2:]


def test_the_valid_requests_are_well_formed() -> None:
    view = b'{"seat": 0, "hand": ["1-2", "3-4"]}'
    health, bots, post, chunked = fuzz_http.valid_requests(view)
    assert health.endswith(b"\r\n\r\n") and bots.endswith(b"\r\n\r\n")
    head, _, body = post.partition(b"\r\n\r\n")
    assert body == view and fuzz_http.content_length(head) == len(view)
    head, _, body = chunked.partition(b"\r\n\r\n")
    assert b"Transfer-Encoding: chunked" in head and dechunk(body) == view


REQUEST = fuzz_http.valid_requests(b'{"seat": 1}')[2]


def mutated(how: int) -> bytes:
    return fuzz_http.mutate_request(Lowest(how), REQUEST)


def test_request_mutations_keep_what_they_do_not_mutate() -> None:
    assert mutated(0) == REQUEST
    # A header inserted after the request line; the body after a whole head.
    inserted = mutated(4)
    assert inserted.startswith(b"POST /move?bot=greedy HTTP/1.1\r\n")
    assert inserted.endswith(b"\r\n\r\n" + b'{"seat": 1}')
    assert mutated(6) == REQUEST + REQUEST
    chunked = mutated(11)
    assert b"Content-Length" not in chunked and chunked.count(b"Transfer-Encoding: chunked") == 1
    big = mutated(13)
    head, _, body = big.partition(b"\r\n\r\n")
    assert len(body) > fuzz_http.DEFAULT_MAX_BODY and fuzz_http.content_length(head) == len(body)


def test_a_raw_request_that_reaches_no_server_is_counted_unanswered() -> None:
    tally = Tally()
    fuzz_http.send_raw(_DeadServer(), tally, b"GET / HTTP/1.1\r\n\r\n")  # type: ignore[arg-type]
    assert (tally.counts["tried"], tally.counts["no_answer"], tally.counts["requests"]) == (1, 1, 1)


def test_raw_requests_wait_for_their_clients_and_pass_on_their_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fuzz_http, "sample_views", lambda rng, count: [{"seat": 0}] * count)
    counts = {"made": 0, "done": 0, "backlog": 0}
    lock = threading.Lock()

    def make(rng: random.Random, request: bytes) -> bytes:
        with lock:
            counts["backlog"] = max(counts["backlog"], counts["made"] - counts["done"])
            counts["made"] += 1
        return request

    def send(server: Any, tally: Tally, request: bytes) -> None:
        time.sleep(0.002)
        with lock:
            counts["done"] += 1

    monkeypatch.setattr(fuzz_http, "mutate_request", make)
    monkeypatch.setattr(fuzz_http, "send_raw", send)
    monkeypatch.setitem(fuzz_http.LIMITS, "requests", 200)
    fuzz_http.requests_phase(None, Tally(), random.Random(0), float("inf"))  # type: ignore[arg-type]
    # At most sixteen requests waiting on the eight clients at any time.
    assert counts["done"] == 200 and counts["backlog"] <= 16, counts

    def broken(server: Any, tally: Tally, request: bytes) -> None:
        raise RuntimeError("a client failed")

    monkeypatch.setattr(fuzz_http, "send_raw", broken)
    with pytest.raises(RuntimeError, match="a client failed"):
        fuzz_http.requests_phase(None, Tally(), random.Random(0), time.monotonic() - 1)  # type: ignore[arg-type]


# -- game settings and moves ----------------------------------------------------------


def test_game_settings_are_valid_and_reach_every_seat_count() -> None:
    server = games_server(max_games=1000)
    rng = random.Random(3)
    players = set()
    for _ in range(60):
        settings = fuzz_http.game_settings(rng)
        players.add(settings["players"])
        reply = server.honest("POST", "/games", json.dumps(settings).encode(), HEADERS)
        assert reply.status_code == 201, (settings, reply.content)
        live = LiveGame(reply.json())
        assert live.state.rules.target_score == reply.json()["settings"]["target"]
    assert players == {2, 3, 4}


def test_settings_left_valid_are_sent_as_they_were() -> None:
    rng = random.Random(8)
    settings = fuzz_http.game_settings(rng)
    flags = [fuzz_http.mutate_settings(rng, settings) for _ in range(100)]
    assert any(valid for _, valid in flags)
    assert all(json.loads(body) == settings for body, valid in flags if valid)


def test_a_move_sent_with_another_media_type_must_get_415() -> None:
    body, headers, expected = fuzz_http.mutate_move(Scripted([6]), ["draw"], [])
    assert expected == 415 and headers["Content-Type"] != "application/json"


def test_the_engine_replay_agrees_with_a_game_only_when_view_totals_and_outcome_do() -> None:
    server = games_server()
    gid, entry = deal(server, preset="standard", players=2, level="greedy", seed=5, seat=0)
    game = entry.game
    assert entry.agrees(game)
    assert not entry.agrees([game])
    assert not entry.agrees({**game, "totals": [9, 9]})
    assert not entry.agrees({**game, "view": {**game["view"], "hand": []}})
    assert not entry.agrees({**game, "outcome": {"points": [1, 0]}})
    assert not entry.replay(["6-6@0>6@7"]) and not entry.replay(["not a move"])


# -- game_call and deal_game ----------------------------------------------------------


def test_a_game_answer_of_another_status_than_required_is_a_finding() -> None:
    server = games_server()
    tally = Tally()
    client = KeptAlive(server)  # type: ignore[arg-type]
    status, game = fuzz_http.game_call(client, tally, "GET", "/games/nope", expected=200)
    assert status == 404 and game["error"] == "unknown_game"
    assert tally.counts["finding_wrong_status"] == 1
    server.lie = lambda *request: Reply(200, {}, b"not json")
    assert fuzz_http.game_call(client, tally, "GET", "/games/x", expected=200) == (200, None)


def test_dealing_ends_the_oldest_game_when_six_are_live() -> None:
    server = games_server()
    tally = Tally()
    client = KeptAlive(server)  # type: ignore[arg-type]
    live: dict[str, LiveGame] = {}
    rng = random.Random(0)
    while len(live) < fuzz_http.GAMES_LIVE:
        fuzz_http.deal_game(client, tally, rng, live)
    oldest = next(iter(live))
    for _ in range(10):
        fuzz_http.deal_game(client, tally, rng, live)
        assert len(live) <= fuzz_http.GAMES_LIVE
    assert oldest not in live
    assert ("DELETE", f"/games/{oldest}") in [(m, p) for m, p, _ in server.sent]
    assert not [k for k in tally.counts if k.startswith("finding_")], tally.examples


def test_dealing_finds_valid_settings_refused_and_a_deal_the_engine_disagrees_with(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server = games_server()
    tally = Tally()
    settings = {"preset": "standard", "players": 2, "level": "random", "seed": 1, "seat": 0}
    monkeypatch.setattr(
        fuzz_http, "mutate_settings", lambda rng, s: (json.dumps(settings).encode(), True)
    )
    server.lie = lambda *request: json_reply(
        422, {"error": "invalid", "field": None, "message": "no"}
    )
    fuzz_http.deal_game(KeptAlive(server), tally, random.Random(0), {})  # type: ignore[arg-type]
    assert tally.counts["finding_wrong_status"] == 1

    def other_totals(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply:
        reply = server.honest(method, path, body, headers)
        return json_reply(reply.status_code, {**reply.json(), "totals": [3, 0]})

    server.lie = other_totals
    fuzz_http.deal_game(KeptAlive(server), tally, random.Random(0), {})  # type: ignore[arg-type]
    assert tally.counts["finding_engine_disagrees"] == 1


# -- game steps -----------------------------------------------------------------------


def play_games(server: AppServer, steps: int, seed: int) -> Tally:
    """``steps`` requests of the games phase (deals, steps, no race)."""
    tally = Tally()
    client = KeptAlive(server)  # type: ignore[arg-type]
    live: dict[str, LiveGame] = {}
    rng = random.Random(seed)
    for _ in range(steps):
        if not live or rng.random() < 0.05:
            fuzz_http.deal_game(client, tally, rng, live)
        else:
            fuzz_http.game_step(client, tally, rng, live, rng.choice(sorted(live)))
    return tally


def findings(tally: Tally) -> dict[str, int]:
    return {k: v for k, v in tally.counts.items() if k.startswith("finding_")}


def test_game_steps_on_an_honest_server_find_nothing_and_play_games_out() -> None:
    tally = play_games(games_server(), 400, seed=1)
    assert findings(tally) == {}, tally.examples
    assert 0 < tally.counts["games_finished"] <= tally.counts["games_dealt"], tally.counts
    assert tally.counts["status_4xx"] > 0


def ignore_if_match(server: AppServer) -> None:
    """Makes ``server`` take every request as if it had no ``If-Match``."""

    def lie(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply | None:
        if "If-Match" not in headers:
            return None
        return server.honest(
            method, path, body, {k: v for k, v in headers.items() if k != "If-Match"}
        )

    server.lie = lie


def test_game_steps_find_a_server_that_takes_a_stale_if_match() -> None:
    server = games_server()
    ignore_if_match(server)
    assert findings(play_games(server, 300, seed=1)).get("finding_wrong_status", 0) > 0


@pytest.mark.parametrize(
    "wrong",
    ["unknown game found", "query taken", "body taken"],
)
def test_game_steps_find_each_refusal_answered_otherwise(wrong: str) -> None:
    server = games_server()

    # Another documented refusal, which leaves the game as it was.
    wrong_turn = json_reply(409, {"error": "wrong_turn", "field": None, "message": "not now"})

    def lie(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply | None:
        if wrong == "unknown game found" and path == "/games/no-such-game":
            return json_reply(200, {})
        if wrong == "query taken" and path.endswith("?x=1"):
            return wrong_turn
        if wrong == "body taken" and body and path.endswith("/bot"):
            return wrong_turn
        return None

    server.lie = lie
    assert findings(play_games(server, 400, seed=2)).get("finding_wrong_status", 0) > 0


def bump_gets(server: AppServer) -> None:
    """Makes ``server`` answer each GET of a game with another version of it."""

    def lie(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply | None:
        if method != "GET":
            return None
        game = server.honest(method, path, body, headers).json()
        return json_reply(200, {**game, "version": game["version"] + 100})

    server.lie = lie


def test_a_game_step_finds_a_game_changed_by_a_get() -> None:
    server = games_server()
    gid, entry = deal(server, preset="standard", players=2, level="random", seed=1, seat=0)
    bump_gets(server)
    tally = Tally()
    fuzz_http.game_step(KeptAlive(server), tally, Scripted([4]), {gid: entry}, gid)  # type: ignore[arg-type]
    assert findings(tally) == {"finding_game_changed": 1}


def test_a_game_step_finds_a_game_changed_by_a_request_refused() -> None:
    server = games_server()
    gid, entry = deal(server, preset="standard", players=2, level="random", seed=1, seat=0)
    bump_gets(server)
    tally = Tally()
    # The step that moves the game on, with the If-Match of another version: 412.
    rng = Scripted([0], floats=[0.1, 0.9])
    fuzz_http.game_step(KeptAlive(server), tally, rng, {gid: entry}, gid)  # type: ignore[arg-type]
    assert tally.counts["status_4xx"] == 1
    assert findings(tally) == {"finding_game_changed": 1}


def play_until(server: AppServer, gid: str, entry: LiveGame, until: str) -> None:
    """The game played by the person's first legal moves until its status is ``until``
    (the end of the first hand); the hand replayed in ``entry``."""
    game = get_game(server, gid)
    while game["status"] != until:
        status = game["status"]
        if status == "your_turn":
            move = json.dumps({"move": game["view"]["legal_moves"][0]}).encode()
            server.honest("POST", f"/games/{gid}/move", move, HEADERS)
        else:
            server.honest(
                "POST", f"/games/{gid}/{'bot' if status == 'bot_turn' else 'next'}", None, {}
            )
        game = get_game(server, gid)
    assert entry.replay([action["move"] for action in game["view"]["history"]])
    entry.game = game


def test_a_finished_game_must_be_ended_with_200() -> None:
    server = games_server()
    gid, entry = deal(server, preset="standard", players=2, level="random", seed=1, seat=0)
    play_until(server, gid, entry, "finished")
    tally = Tally()
    live = {gid: entry}
    # A GET of the finished game: the game was finished before, not by this step.
    fuzz_http.game_step(KeptAlive(server), tally, Scripted([4]), live, gid)  # type: ignore[arg-type]
    assert findings(tally) == {} and tally.counts["games_finished"] == 0
    server.lie = lambda method, *_: (
        json_reply(409, {"error": "finished", "field": None, "message": "kept"})
        if method == "DELETE"
        else None
    )
    fuzz_http.game_step(KeptAlive(server), tally, Scripted([0], floats=[0.9]), live, gid)  # type: ignore[arg-type]
    assert findings(tally) == {"finding_wrong_status": 1} and gid in live
    server.lie = None
    fuzz_http.game_step(KeptAlive(server), tally, Scripted([0], floats=[0.9]), live, gid)  # type: ignore[arg-type]
    assert live == {}


def test_the_next_hand_is_dealt_in_the_engine_too() -> None:
    server = games_server()
    settings = dict(preset="standard", players=2, level="random", seed=2, seat=0)
    gid, entry = deal(server, **settings, match=True, target=50)
    play_until(server, gid, entry, "hand_over")
    tally = Tally()
    fuzz_http.game_step(KeptAlive(server), tally, Scripted([0], floats=[0.9]), {gid: entry}, gid)  # type: ignore[arg-type]
    assert findings(tally) == {} and tally.counts["status_2xx"] == 1, tally.examples
    assert entry.game["status"] != "hand_over" and entry.agrees(get_game(server, gid))


def test_game_steps_find_a_move_answered_with_a_game_the_engine_disagrees_with() -> None:
    server = games_server()

    def other_totals(
        method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> Reply | None:
        if method != "POST" or not path.endswith(("/move", "/bot")):
            return None
        reply = server.honest(method, path, body, headers)
        if reply.status_code != 200:
            return reply
        answer = reply.json()
        return json_reply(200, {**answer, "game": {**answer["game"], "totals": [7, 7]}})

    server.lie = other_totals
    assert findings(play_games(server, 200, seed=4)).get("finding_engine_disagrees", 0) > 0


def test_game_steps_find_a_move_that_is_not_legal_in_the_engine() -> None:
    server = games_server()

    def other_move(
        method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> Reply | None:
        if method != "POST" or not path.endswith("/bot"):
            return None
        reply = server.honest(method, path, body, headers)
        if reply.status_code != 200:
            return reply
        answer = reply.json()
        return json_reply(200, {**answer, "event": {**answer["event"], "move": "12-12@3>12"}})

    server.lie = other_move
    assert findings(play_games(server, 200, seed=5)).get("finding_illegal_move", 0) > 0


# -- requests at once -----------------------------------------------------------------


def at_bot_turn(server: AppServer) -> tuple[str, LiveGame]:
    """A four-seat game where a bot is to move (the person's first move made)."""
    gid, entry = deal(server, preset="standard", players=4, level="random", seed=11, seat=0)
    while entry.game["status"] != "bot_turn":
        move = entry.game["view"]["legal_moves"][0]
        server.honest("POST", f"/games/{gid}/move", json.dumps({"move": move}).encode(), HEADERS)
        entry.replay([move])
        entry.game = get_game(server, gid)
    return gid, entry


def race_once(
    server: AppServer,
    rng: random.Random,
    gid: str,
    entry: LiveGame,
) -> Tally:
    tally = Tally()
    fuzz_http.race(server, KeptAlive(server), tally, rng, gid, entry)  # type: ignore[arg-type]
    return tally


def test_requests_at_once_with_one_if_match_apply_one() -> None:
    server = games_server()
    gid, entry = at_bot_turn(server)
    before = len(entry.game["view"]["history"])
    # If-Match, and four bot moves.
    tally = race_once(server, Scripted(floats=[0.1, 0.9, 0.9, 0.9, 0.9]), gid, entry)
    assert findings(tally) == {}, tally.examples
    assert len(entry.game["view"]["history"]) == before + 1
    assert (tally.counts["game_races"], tally.counts["game_races_if_match"]) == (1, 1)
    # No If-Match: each bot move applies while bots are to move.
    tally = race_once(server, Scripted(floats=[0.9, 0.9, 0.9, 0.9, 0.9]), gid, entry)
    assert findings(tally) == {}, tally.examples
    assert tally.counts["status_2xx"] > 2
    assert entry.agrees(get_game(server, gid))


def test_requests_at_once_find_a_stale_if_match_taken_or_answers_that_applied_nothing() -> None:
    server = games_server()
    gid, entry = at_bot_turn(server)
    ignore_if_match(server)
    tally = race_once(server, Scripted(floats=[0.1, 0.9, 0.9, 0.9, 0.9]), gid, entry)
    assert tally.counts["finding_race"] == 1
    gid, entry = at_bot_turn(server)
    server.lie = lambda method, path, body, headers: (
        json_reply(200, {}) if method == "POST" and path.endswith("/bot") else None
    )
    tally = race_once(server, Scripted(floats=[0.9, 0.9, 0.9, 0.9, 0.9]), gid, entry)
    assert tally.counts["finding_race"] == 1


def test_requests_at_once_find_a_game_the_engine_disagrees_with() -> None:
    server = games_server()
    gid, entry = at_bot_turn(server)

    def other_totals(
        method: str, path: str, body: bytes | None, headers: dict[str, str]
    ) -> Reply | None:
        if method != "GET":
            return None
        return json_reply(
            200, {**server.honest(method, path, body, headers).json(), "totals": [5, 5, 5, 5]}
        )

    server.lie = other_totals
    tally = race_once(server, Scripted(floats=[0.9, 0.9, 0.9, 0.9, 0.9]), gid, entry)
    assert tally.counts["finding_engine_disagrees"] == 1


# -- the cap on live games ------------------------------------------------------------


def test_the_cap_is_reached_where_it_is_named_and_every_game_is_ended() -> None:
    server = games_server(max_games=5)
    client = KeptAlive(server)  # type: ignore[arg-type]
    tally = Tally()
    live = dict([deal(server, level="random", seed=1), deal(server, level="random", seed=2)])
    fuzz_http.check_the_cap(client, tally, live)
    assert findings(tally) == {} and tally.counts["games_503"] == 1, tally.examples
    assert live == {}
    # Every game was ended: the cap's worth of games can be dealt again.
    for seed in range(5):
        assert deal(server, level="random", seed=seed)[1].game["status"] != "finished"
    assert server.honest("POST", "/games", b"{}", HEADERS).status_code == 503


@pytest.mark.parametrize("wrong", ["named above the cap", "not 503 at the cap"])
def test_a_cap_not_enforced_where_it_is_named_is_a_finding(wrong: str) -> None:
    server = games_server(max_games=4)

    def lie(method: str, path: str, body: bytes | None, headers: dict[str, str]) -> Reply | None:
        reply = server.honest(method, path, body, headers)
        if path == "/games/options" and wrong == "named above the cap":
            return json_reply(200, {**reply.json(), "max_games": 6})
        if reply.status_code == 503 and wrong == "not 503 at the cap":
            return json_reply(429, reply.json())
        return reply

    server.lie = lie
    tally = Tally()
    fuzz_http.check_the_cap(KeptAlive(server), tally, {})  # type: ignore[arg-type]
    assert tally.counts["finding_cap_not_enforced"] == 1


# -- hang-ups, stalls and bursts against stand-ins on loopback ------------------------


Handler = Callable[[socket.socket, int, threading.Event], None]


class TcpStandIn:
    """A server on a free port of 127.0.0.1: ``handle`` is called with each connection
    (in a thread of its own), its number, and an event set when the server closes (what
    a handler keeps open until then)."""

    def __init__(self, handle: Handler) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.handle = handle
        self.closing = threading.Event()
        self.handled = threading.Semaphore(0)
        self.count = 0
        self.threads: list[threading.Thread] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.listener.accept()
                thread = threading.Thread(target=self.run, args=(conn, self.count), daemon=True)
                self.count += 1
                thread.start()
                self.threads.append(thread)

    def run(self, conn: socket.socket, number: int) -> None:
        try:
            self.handle(conn, number, self.closing)
        finally:
            self.handled.release()

    def wait_handled(self, count: int) -> None:
        """Until ``count`` connections were handled (the clients are done with them)."""
        for _ in range(count):
            assert self.handled.acquire(timeout=10), "a connection was not handled"

    def open_socket(self, timeout: float = 5.0) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def close(self) -> None:
        self.closing.set()
        self.listener.close()
        for thread in self.threads:
            thread.join(5)


@contextlib.contextmanager
def stand_in(handle: Handler) -> Iterator[TcpStandIn]:
    server = TcpStandIn(handle)
    try:
        yield server
    finally:
        server.close()


def received_by(conn: socket.socket) -> bytes | str:
    """What a client sent until it closed, or ``"reset"``."""
    data = b""
    try:
        while chunk := conn.recv(65536):
            data += chunk
    except ConnectionResetError:
        return "reset"
    finally:
        conn.close()
    return data


@pytest.mark.parametrize(
    ("how", "got"), [(0, "part of the head"), (1, "the head"), (2, "all"), (3, "reset")]
)
def test_clients_hang_up_where_they_say(how: int, got: str) -> None:
    seen: list[bytes | str] = []
    with stand_in(lambda conn, *_: seen.append(received_by(conn))) as server:
        tally = Tally()
        fuzz_http.hang_up(server, tally, Lowest(how), b'{"seat": 0}')  # type: ignore[arg-type]
        server.wait_handled(1)
    request = fuzz_http.valid_requests(b'{"seat": 0}')[2]
    head = request[: request.index(b"\r\n\r\n") + 4]
    expected = {"part of the head": request[:1], "the head": head, "all": request, "reset": "reset"}
    assert seen == [expected[got]]
    assert (tally.counts["tried"], tally.counts["hangups"]) == (1, 1)


@pytest.fixture
def short_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    # A stalled client is given up on after a fraction of a second. The margins are
    # wider than the stand-ins need, because the test suite may share a busy machine:
    # they cost time only where a connection is left open on purpose.
    monkeypatch.setattr(fuzz_http, "REQUEST_TIMEOUT", 0.3)
    monkeypatch.setattr(fuzz_http, "KEEP_ALIVE_TIMEOUT", 0.3)
    monkeypatch.setattr(fuzz_http, "MARGIN", 2.0)
    monkeypatch.setattr(fuzz_http, "ANSWER_WAIT", 2.0)
    monkeypatch.setattr(fuzz_http, "TRICKLE", 0.01)
    monkeypatch.setattr(fuzz_http, "read_answer", partial(read_answer, wait=2.0))


HEALTH = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
TIMED_OUT = b"HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n"


def stall_server(
    answer_trickled: bytes = TIMED_OUT, keep: str = "", health: bytes = HEALTH, unasked: bytes = b""
) -> Handler:
    """Closes each stalled connection after its timeout (0.3 s), as the server under
    test does: trickled ones with ``answer_trickled``; keeps the kind ``keep`` open."""

    def handle(conn: socket.socket, _: int, closing: threading.Event) -> None:
        got = b""
        deadline = time.monotonic() + 0.3
        with contextlib.suppress(TimeoutError):
            while (left := deadline - time.monotonic()) > 0:
                conn.settimeout(left)
                got += conn.recv(65536)
                if got == b"GET /health HTTP/1.1\r\nHost: fuzz\r\n\r\n":
                    conn.sendall(health)
                    deadline = time.monotonic() + 0.3  # now idle, kept alive
        if got.startswith(b"GET /health HTTP/1.1\r\nHost: fuzz\r\n\r\n"):
            kind = "idle_keep_alive"
        else:
            kind = "silent" if not got else "slow_head" if got.startswith(b"GET") else "slow_body"
        if kind in ("slow_head", "slow_body"):
            conn.sendall(answer_trickled)
        elif kind == "silent":
            conn.sendall(unasked)
        if kind == keep:
            closing.wait(10)
        conn.close()

    return handle


def stall(handle: Handler) -> Tally:
    tally = Tally()
    with stand_in(handle) as server:
        fuzz_http.stall_round(server, tally, [b'{"seat": 0}'], 1)  # type: ignore[arg-type]
    return tally


@pytest.mark.usefixtures("short_timeouts")
def test_stalled_clients_closed_as_documented_are_no_finding() -> None:
    tally = stall(stall_server())
    assert findings(tally) == {}, tally.examples
    assert (
        tally.counts["timeout_closes"],
        tally.counts["answered_408"],
        tally.counts["tried"],
    ) == (4, 2, 4)


@pytest.mark.usefixtures("short_timeouts")
@pytest.mark.parametrize(
    ("server", "finding", "count"),
    [
        (dict(keep="silent"), "finding_stall_not_closed", 1),
        (
            dict(answer_trickled=b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"),
            "finding_stall_not_408",
            2,
        ),
        (dict(unasked=b"HTTP/1.1 200 OK\r\n\r\n"), "finding_stall_answered_unasked", 1),
        (dict(health=error_answer("503 X", "busy")), "finding_keep_alive_not_served", 1),
    ],
)
def test_each_stall_the_server_mishandles_is_a_finding(
    server: dict[str, Any], finding: str, count: int
) -> None:
    assert findings(stall(stall_server(**server))) == {finding: count}


@pytest.mark.usefixtures("short_timeouts")
def test_a_slow_head_delayed_past_the_timeout_is_still_answered_408(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The clients connect one after another; here the idle client's answer takes longer
    # than the stand-in's timeout, so the trickle starts after the slow head's connection
    # has timed out. Its first byte, sent on connecting, makes it a partial request (408),
    # not a silent client closed without an answer (a false finding, as a busy CI saw).
    read_promptly = fuzz_http.read_answer

    def read_late(sock: socket.socket) -> bytes:
        time.sleep(0.5)
        return read_promptly(sock)

    monkeypatch.setattr(fuzz_http, "read_answer", read_late)
    tally = stall(stall_server())
    assert findings(tally) == {}, tally.examples
    assert tally.counts["answered_408"] == 2


def test_a_slow_body_comes_after_the_whole_head_a_byte_at_a_time() -> None:
    first = threading.Event()
    seen: list[bytes | str] = []

    def handle(conn: socket.socket, *_: Any) -> None:
        seen.append(conn.recv(65536))
        first.set()
        seen.append(received_by(conn))

    request = fuzz_http.valid_requests(b'{"seat": 0}')[2]
    with stand_in(handle) as server:
        client = fuzz_http.Stalled(server, "slow_body", b'{"seat": 0}')  # type: ignore[arg-type]
        assert first.wait(10)
        for _ in range(len(request)):
            client.trickle()
        client.sock.close()
        server.wait_handled(1)
    head_end = request.index(b"\r\n\r\n") + 4
    assert isinstance(seen[0], bytes) and head_end < len(seen[0]) < len(request)
    assert seen[0] + seen[1] == request  # type: ignore[operator]


def burst_server(served: int, busy: int, hang: bool = False) -> Handler:
    """Serves the first ``served`` connections, answers ``503 busy`` to the next ``busy``,
    closes the others (or leaves them open when ``hang``)."""

    def handle(conn: socket.socket, number: int, closing: threading.Event) -> None:
        conn.recv(65536)
        if number < served:
            conn.sendall(HEALTH)
        elif number < served + busy:
            conn.sendall(error_answer("503 Service Unavailable", "busy"))
        elif hang:
            closing.wait(10)
        conn.close()

    return handle


@pytest.mark.usefixtures("short_timeouts")
def test_a_burst_counts_the_clients_served_turned_away_and_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(fuzz_http, "MAX_CONNECTIONS", 2)
    tally = Tally()
    with stand_in(burst_server(2, 3)) as server:
        fuzz_http.burst_round(server, tally, b'{"seat": 0}')  # type: ignore[arg-type]
    counts = tally.counts
    assert findings(tally) == {}, tally.examples
    assert (
        counts["tried"],
        counts["burst_served"],
        counts["busy_503"],
        counts["burst_closed"],
    ) == (12, 2, 3, 7)
    tally = Tally()
    with stand_in(burst_server(2, 3, hang=True)) as server:
        fuzz_http.burst_round(server, tally, b'{"seat": 0}')  # type: ignore[arg-type]
    assert findings(tally) == {"finding_burst_hung": 7}


# -- the campaign and its command -----------------------------------------------------


class FakeServerUnderTest:
    """The campaign's server: healthy at the start, then as told; its descriptors and
    exit status as told."""

    def __init__(self, seed: int) -> None:
        self.health = [True, FAKE.healthy_at_end]
        self.err = SimpleNamespace(read_text=lambda: FAKE.err)
        self.settled: list[int] = []

    def healthy(self) -> bool:
        return self.health.pop(0)

    def descriptors(self) -> int:
        return FAKE.before

    def settled_descriptors(self, at_most: int, wait: float) -> int:
        assert at_most == FAKE.before
        return FAKE.after

    def stop(self) -> int | None:
        return FAKE.code

    def close(self) -> None:
        pass


FAKE = SimpleNamespace()


@pytest.fixture
def fake_campaign(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The campaign with its server and phases replaced, at a clock that stands still."""
    FAKE.__dict__.update(healthy_at_end=True, err="", before=10, after=10, code=0)
    monkeypatch.setattr(fuzz_http, "ServerUnderTest", FakeServerUnderTest)
    monkeypatch.setattr(
        fuzz_http, "time", SimpleNamespace(monotonic=lambda: 100.0, sleep=lambda s: None)
    )
    calls: dict[str, Any] = {"until": {}, "draws": []}

    def phase(name: str) -> Callable[[Any, Tally, random.Random, float], None]:
        def run(server: Any, tally: Tally, rng: random.Random, until: float) -> None:
            calls["until"][name] = until
            calls["draws"].append(rng.random())
            tally.add("tried")
            if name == "views":
                tally.add("finding_illegal_move", sent=b"a view", got=b"a move")

        return run

    monkeypatch.setattr(fuzz_http, "PHASES", {name: phase(name) for name in fuzz_http.PHASES})
    return calls


def test_the_campaign_gives_each_phase_its_share_of_the_time(fake_campaign: dict[str, Any]) -> None:
    counts = fuzz_http.run_http_campaign(seconds=20, seed=3)
    assert fake_campaign["until"] == {
        name: 100 + share * 20 for name, share in fuzz_http.SHARES.items()
    }
    # The seed is the inputs'.
    rng = random.Random(3)
    assert fake_campaign["draws"] == [rng.random() for _ in fuzz_http.PHASES]
    assert counts["tried"] == len(fuzz_http.PHASES) and counts["seconds"] == 0


def test_the_campaign_counts_every_finding_and_each_detail(fake_campaign: dict[str, Any]) -> None:
    FAKE.__dict__.update(
        healthy_at_end=False, before=10, after=12, code=1,
        err="a client hung up mid-request\nTraceback (most recent call last): X\n"
        "a client hung up early\nTraceback again\nhungry\n",
    )  # fmt: skip
    examples: list[str] = []
    counts = fuzz_http.run_http_campaign(seconds=1, seed=0, examples=examples)
    assert (counts["descriptors_before"], counts["descriptors_after"]) == (10, 12)
    assert counts["finding_descriptors_leaked"] == 2
    assert counts["finding_no_health_at_end"] == 1
    assert counts["finding_traceback"] == 2 and counts["finding_unclean_stop"] == 1
    assert counts["finding_illegal_move"] == 1 and counts["hangup_lines"] == 2
    assert counts["findings"] == 2 + 1 + 2 + 1 + 1
    assert examples[0] == "finding_illegal_move: sent b'a view', got b'a move'"
    assert examples[1].startswith("finding_traceback: a client hung up mid-request\nTraceback")
    # The details are there when none was counted.
    for key in ("busy_503", "burst_served", "games_503", "status_5xx", "status_3xx", "no_answer"):
        assert counts[key] == 0


def test_a_server_stopped_cleanly_with_its_descriptors_back_is_no_finding(
    fake_campaign: dict[str, Any],
) -> None:
    FAKE.__dict__.update(before=10, after=9)
    counts = fuzz_http.run_http_campaign(seconds=1, seed=0)
    assert counts["finding_descriptors_leaked"] == 0 and counts["descriptors_after"] == 9
    assert counts["findings"] == 1  # the phase's illegal move


def test_the_campaign_refuses_a_time_it_cannot_run_for(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_server(seed: int) -> None:
        raise AssertionError("a server was started")

    monkeypatch.setattr(fuzz_http, "ServerUnderTest", no_server)
    for seconds in (0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="seconds must be > 0"):
            fuzz_http.run_http_campaign(seconds=seconds)


def test_the_command_prints_the_counts_the_examples_and_its_status(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[tuple[float, int]] = []

    def campaign(seconds: float, seed: int, examples: list[str]) -> dict[str, int]:
        asked.append((seconds, seed))
        examples.append("finding_5xx: sent b'x', got b'y'")
        return {"findings": len(asked) - 1, "tried": 3}

    monkeypatch.setattr(fuzz_http, "run_http_campaign", campaign)
    assert fuzz_http.main(["--seconds", "2", "--seed", "7"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"findings": 0, "tried": 3}
    assert err == "finding_5xx: sent b'x', got b'y'\n"
    assert fuzz_http.main([]) == 1
    assert asked == [(2.0, 7), (60.0, 0)]
    for bad in (["--seed", "-1"], ["--seconds", "0"]):
        with pytest.raises(SystemExit) as exit_info:
            fuzz_http.main(bad)
        assert exit_info.value.code == 2


def test_the_servers_health_is_its_answer_status_ok() -> None:
    # ``healthy`` needs the answer's status to be "ok", not any 200.
    server = AppServer(Client(create_app({"greedy": load_bot("greedy")})))
    assert fuzz_http.ServerUnderTest.healthy(server)  # type: ignore[arg-type]
    server.lie = lambda *request: json_reply(200, {"status": "starting"})
    assert not fuzz_http.ServerUnderTest.healthy(server)  # type: ignore[arg-type]
    server.lie = lambda *request: json_reply(200, {})
    assert not fuzz_http.ServerUnderTest.healthy(server)  # type: ignore[arg-type]
    server.lie = lambda *request: Reply(200, {}, b"<html>")
    assert not fuzz_http.ServerUnderTest.healthy(server)  # type: ignore[arg-type]


def test_the_descriptor_count_is_taken_once_it_is_down_to_the_count_before() -> None:
    counts = [12, 11, 10]

    def descriptors() -> int:
        assert counts, "counted again after it was down to the count before"
        return counts.pop(0)

    server = SimpleNamespace(descriptors=descriptors)
    assert fuzz_http.ServerUnderTest.settled_descriptors(server, 10, wait=30) == 10  # type: ignore[arg-type]
    counts[:] = [10]
    assert fuzz_http.ServerUnderTest.settled_descriptors(server, 10, wait=30) == 10  # type: ignore[arg-type]


def test_the_games_phase_deals_plays_races_and_reaches_the_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(fuzz_http.LIMITS, "games", 300)
    tally = Tally()
    fuzz_http.games_phase(games_server(max_games=10), tally, random.Random(6), float("inf"))  # type: ignore[arg-type]
    assert findings(tally) == {}, tally.examples
    counts = tally.counts
    assert counts["game_races"] > 0 and counts["games_503"] == 1 and counts["tried"] == 301
    # Most requests play the live games: some are played to their end.
    assert counts["games_finished"] > 0


def test_the_server_under_test_is_started_as_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[tuple[list[str], list[str]]] = []

    def start(self: Any, bots: list[str], options: list[str], prefix: str) -> None:
        started.append((bots, list(options)))

    monkeypatch.setattr(fuzz_http.ServerProcess, "__init__", start)
    fuzz_http.ServerUnderTest(7)
    bots, options = started[0]
    assert bots == ["greedy", "random"]
    pairs = dict(zip(options[::2], options[1::2], strict=False))
    assert pairs["--seed"] == "7" and pairs["--request-timeout"] == "2"
    assert pairs["--keep-alive-timeout"] == "2" and pairs["--max-connections"] == "16"
    assert "--no-access-log" in options
