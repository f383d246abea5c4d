"""The HTTP bot server, tested with real HTTP requests (stdlib http.client only).

One server is started in a subprocess for the module (``python -m
matador_env.serve --port 0``, which prints the port it got); a malformed request
of every kind must get its 4xx and a JSON body naming the problem, and the server
must keep answering. The server is stopped with SIGINT and must exit cleanly.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("onnxruntime")

from matador_env.bot import Bot, BotError, load_bot, shipped_configurations  # noqa: E402
from matador_env.engine import HandState, Rules  # noqa: E402
from matador_env.policy import BOTS_DIR_VARIABLE  # noqa: E402
from matador_env.protocol import view_to_json  # noqa: E402
from tests.scripted import midgame_states  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0  # generous: the machine may be busy with other work
JSON = {"Content-Type": "application/json"}


# -- a server in a subprocess ---------------------------------------------------------


class Server:
    def __init__(self, proc: subprocess.Popen[bytes], out: Path, err: Path, port: int) -> None:
        self.proc, self.out, self.err, self.port = proc, out, err, port

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=TIMEOUT)

    def logs(self) -> str:
        return self.out.read_text() + "\n--- stderr ---\n" + self.err.read_text()


def start_server(
    tmp: Path,
    *args: str,
    env: dict[str, str] | None = None,
    command: tuple[str, ...] = (sys.executable, "-m", "matador_env.serve"),
    cwd: Path = ROOT,
) -> Server:
    """``python -m matador_env.serve --port 0 ARGS`` in the checkout; ``env`` adds to the
    environment, ``command`` and ``cwd`` run another copy of the server (a wheel's)."""
    out, err = tmp / "stdout.txt", tmp / "stderr.txt"
    with out.open("wb") as fout, err.open("wb") as ferr:
        proc = subprocess.Popen(
            [*command, "--port", "0", *args],
            cwd=cwd,
            stdout=fout,
            stderr=ferr,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        match = re.search(r"serving on http://127\.0\.0\.1:(\d+)", out.read_text())
        if match:
            return Server(proc, out, err, int(match.group(1)))
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    raise AssertionError(f"the server did not start:\n{out.read_text()}\n{err.read_text()}")


def stop_server(server: Server) -> int:
    server.proc.send_signal(signal.SIGINT)
    try:
        return server.proc.wait(TIMEOUT)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        server.proc.wait()
        raise AssertionError("the server did not stop on SIGINT:\n" + server.logs()) from None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("serve")
    srv = start_server(tmp, "--bots", "trained,casual,greedy,random", "--seed", "0")
    try:
        yield srv
    finally:
        code = stop_server(srv)
        # Ctrl-C is a clean exit, after the goodbye line.
        assert code == 0, srv.logs()
        assert "stopped" in srv.out.read_text()
        assert "Traceback" not in srv.err.read_text(), srv.logs()


def call(
    conn: http.client.HTTPConnection,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], Any]:
    """One request on ``conn``: (status, headers, decoded JSON body)."""
    if body is not None and not isinstance(body, (bytes, Iterator)):
        body = json.dumps(body).encode()
    conn.request(method, path, body=body, headers=headers or {})
    resp = conn.getresponse()
    raw = resp.read()
    assert resp.getheader("content-type", "").startswith("application/json"), raw
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, json.loads(raw)


def request(server: Server, method: str, path: str, body: Any = None, **headers: str) -> Any:
    conn = server.connect()
    try:
        return call(conn, method, path, body, {k.replace("_", "-"): v for k, v in headers.items()})
    finally:
        conn.close()


def assert_healthy(server: Server) -> None:
    status, _, body = request(server, "GET", "/health")
    assert status == 200 and body["status"] == "ok"


def assert_error(answer: tuple[int, dict[str, str], Any], status: int, kind: str) -> dict:
    code, _, body = answer
    assert code == status, body
    assert set(body) == {"error", "field", "message"}, body
    assert body["error"] == kind, body
    assert isinstance(body["message"], str) and len(body["message"]) > 10, body
    return body


# -- views from real hands ------------------------------------------------------------


def views(rules: Rules, count: int, seed: int = 0) -> list[dict[str, Any]]:
    """JSON views of the seat to act, at random points of random hands."""
    return [view_to_json(s.view(s.to_move)) for s in midgame_states(rules, count, seed, 30)]


@pytest.fixture(scope="module")
def standard_views() -> list[dict[str, Any]]:
    return views(Rules.preset("standard"), 24)


def a_view() -> dict[str, Any]:
    return {
        "rules": "standard",
        "seat": 1,
        "hand": ["1-6", "0-3", "2-2", "4-5", "0-5", "3-5", "5-6"],
        "first": 0,
        "history": [{"seat": 0, "move": "6-6"}],
    }


def padded_view(size: int) -> bytes:
    """:func:`a_view` as JSON of exactly ``size`` bytes (spaces before its last brace)."""
    raw = json.dumps(a_view()).encode()
    assert size >= len(raw)
    return raw[:-1] + b" " * (size - len(raw)) + b"}"


# -- the endpoints --------------------------------------------------------------------


def test_health(server: Server) -> None:
    status, headers, body = request(server, "GET", "/health")
    assert status == 200
    assert body == {"status": "ok", "protocol": 1, "version": "0.1.0"}
    import matador_env

    assert body["version"] == matador_env.__version__


def test_bots(server: Server) -> None:
    status, _, body = request(server, "GET", "/bots")
    assert status == 200
    assert body["default"] == "trained"
    shipped = [c.name for c in shipped_configurations()]
    assert [b["name"] for b in body["bots"]] == [
        "trained",
        *(f"trained:{c}" for c in shipped),
        "casual",
        *(f"casual:{c}" for c in shipped),
        "greedy",
        "random",
    ]
    by_name = {b["name"]: b for b in body["bots"]}
    assert by_name["trained"]["default"] is True
    assert by_name["greedy"]["default"] is False
    assert by_name["trained"]["rules"] == "view"
    assert by_name["trained"]["configurations"] == shipped
    assert by_name["trained:standard"]["rules"] == "standard"
    assert by_name["trained:standard"]["configuration"] == "standard"
    assert by_name["casual:standard"]["plays"] == "standard (standard, 2 players)"
    assert by_name["greedy"]["rules"] == "any"
    assert by_name["greedy"]["configuration"] is None
    assert all(b["about"] for b in body["bots"])


@pytest.mark.parametrize("bot", ["trained", "greedy", "casual", "random", None])
def test_moves_are_legal(server: Server, standard_views: list[dict], bot: str | None) -> None:
    conn = server.connect()  # one kept-alive connection for every move
    try:
        for view in standard_views[:8]:
            path = "/move" if bot is None else f"/move?bot={bot}"
            status, _, move = call(conn, "POST", path, view, JSON)
            assert status == 200, move
            # a plain trained level answers with its configuration's bot
            plain = {None: "trained:standard", "trained": "trained:standard"}
            assert move["bot"] == {**plain, "casual": "casual:standard"}.get(bot, bot)
            assert move["format"] == "matador-move" and move["version"] == 1
            assert move["move"] in view["legal_moves"]
    finally:
        conn.close()


def test_trained_and_greedy_answer_as_in_process(
    server: Server, standard_views: list[dict]
) -> None:
    for level in ("trained", "greedy"):
        local = load_bot(level)
        for view in standard_views[:6]:
            status, _, move = request(server, "POST", f"/move?bot={level}", view, **JSON)
            assert status == 200
            assert move == {**local.move_json(view), "bot": local.name}


def test_by_default_every_configuration_is_served(tmp_path: Path) -> None:
    from tests.test_shipped_bots import export_untrained

    bots = export_untrained(tmp_path / "bots")
    srv = start_server(tmp_path, "--seed", "1", env={BOTS_DIR_VARIABLE: str(bots)})
    try:
        _, _, body = request(srv, "GET", "/bots")
        assert [b["name"] for b in body["bots"]] == [
            "trained",
            "trained:standard_4p",
            "trained:pagat_teams",
            "casual",
            "casual:standard_4p",
            "casual:pagat_teams",
            "greedy",
            "random",
        ]
        teams = {b["name"]: b for b in body["bots"]}["trained:pagat_teams"]
        assert teams["rules"] == Rules.preset("pagat", players=4, teams=True).to_dict()
        for name, rules in (
            ("standard_4p", Rules.preset("standard", players=4)),
            ("pagat_teams", Rules.preset("pagat", players=4, teams=True)),
        ):
            for view in views(rules, 3, seed=2):
                status, _, move = request(srv, "POST", "/move", view, **JSON)
                assert status == 200 and move["bot"] == f"trained:{name}", move
                assert move["move"] in view["legal_moves"]
        error = assert_error(
            request(srv, "POST", "/move?bot=casual", a_view(), **JSON), 422, "no_bot"
        )
        assert "shipped for: standard_4p, pagat_teams" in error["message"]
        assert "rules: every shipped configuration" in srv.out.read_text()
    finally:
        assert stop_server(srv) == 0, srv.logs()


@pytest.mark.parametrize("preset", ["leiden", "double_nine"])
def test_greedy_plays_other_presets(server: Server, preset: str) -> None:
    for view in views(Rules.preset(preset), 6, seed=3):
        status, _, move = request(server, "POST", "/move?bot=greedy", view, **JSON)
        assert status == 200, move
        assert move["move"] in view["legal_moves"]


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json; charset=utf-8",
        "application/json; charset=utf8",
        'application/json; charset="UTF-8"',
        "Application/JSON",
    ],
)
def test_a_minimal_view_and_extra_headers(server: Server, content_type: str) -> None:
    view = a_view()
    status, _, move = request(server, "POST", "/move?bot=greedy", view, content_type=content_type)
    assert status == 200, move
    assert move["move"] == load_bot("greedy").move_json(view)["move"]


def test_a_chunked_body_within_the_limit(server: Server) -> None:
    raw = json.dumps(a_view()).encode()
    chunks = iter([raw[:10], raw[10:50], raw[50:]])
    conn = server.connect()
    try:
        status, _, move = call(conn, "POST", "/move?bot=greedy", chunks, JSON)
        assert status == 200, move
    finally:
        conn.close()


# -- malformed requests ---------------------------------------------------------------


def with_(view: dict[str, Any], **changes: Any) -> dict[str, Any]:
    return {**view, **changes}


def without(view: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in view.items() if k != key}


def not_to_act(view: dict[str, Any]) -> dict[str, Any]:
    # Seat 1 acted after the lead; the view still claims seat 1 is to act now.
    return with_(view, seat=0, hand=["0-3", "2-2", "4-5", "0-5", "3-5", "5-6"])


VIEW = a_view()

# (name, method, path, body, headers, status, error kind, field or None)
MALFORMED: list[tuple[str, str, str, Any, dict[str, str], int, str, str | None]] = [
    ("bad json", "POST", "/move", b'{"rules": "standard", ', JSON, 400, "bad_json", None),
    ("empty body", "POST", "/move", b"", JSON, 400, "bad_json", None),
    ("not utf-8", "POST", "/move", b'{"rules": "\xff"}', JSON, 400, "bad_json", None),
    ("nan", "POST", "/move", b'{"seat": NaN}', JSON, 400, "bad_json", None),
    ("deep nesting", "POST", "/move", b"[" * 20000 + b"]" * 20000, JSON, 400, "bad_json", None),
    ("array", "POST", "/move", [VIEW], JSON, 400, "not_an_object", None),
    ("string", "POST", "/move", "standard", JSON, 400, "not_an_object", None),
    ("missing hand", "POST", "/move", without(VIEW, "hand"), JSON, 422, "invalid", "hand"),
    ("missing rules", "POST", "/move", without(VIEW, "rules"), JSON, 422, "invalid", "rules"),
    ("unknown field", "POST", "/move", with_(VIEW, bot="greedy"), JSON, 422, "invalid", "bot"),
    (
        "unknown tile",
        "POST",
        "/move",
        with_(VIEW, hand=["7-7", *VIEW["hand"][1:]]),
        JSON,
        422,
        "invalid",
        "hand[0]",
    ),
    (
        "not a tile",
        "POST",
        "/move",
        with_(VIEW, hand=[*VIEW["hand"][:2], "two-five", *VIEW["hand"][3:]]),
        JSON,
        422,
        "invalid",
        "hand[2]",
    ),
    (
        "bad move text",
        "POST",
        "/move",
        with_(VIEW, history=[{"seat": 0, "move": "6-6@"}]),
        JSON,
        422,
        "invalid",
        "history[0].move",
    ),
    (
        "tile in hand and on the table",
        "POST",
        "/move",
        with_(VIEW, hand=["6-6", *VIEW["hand"][1:]]),
        JSON,
        422,
        "invalid",
        "history[0].move",
    ),
    (
        "wrong rules for one configuration's trained bot",
        "POST",
        "/move?bot=trained:standard",
        with_(VIEW, rules="leiden"),
        JSON,
        422,
        "invalid",
        "rules",
    ),
    (
        "rules no trained bot is shipped for (no configuration's: another target)",
        "POST",
        "/move",
        with_(VIEW, rules={"preset": "standard", "target_score": 50}),
        JSON,
        422,
        "no_bot",
        "rules",
    ),
    (
        "unknown rules field",
        "POST",
        "/move?bot=greedy",
        with_(VIEW, rules={"preset": "standard", "colour": "red"}),
        JSON,
        422,
        "invalid",
        "rules.colour",
    ),
    ("not the seat's turn", "POST", "/move", not_to_act(VIEW), JSON, 422, "invalid", "seat"),
    (
        "a false claim",
        "POST",
        "/move",
        with_(VIEW, open_ends=["6", "5"]),
        JSON,
        422,
        "invalid",
        "open_ends",
    ),
    ("seat out of range", "POST", "/move", with_(VIEW, seat=4), JSON, 422, "invalid", "seat"),
    (
        "wrong content type",
        "POST",
        "/move",
        VIEW,
        {"Content-Type": "text/plain"},
        415,
        "unsupported_media_type",
        "header.content-type",
    ),
    (
        "no content type",
        "POST",
        "/move",
        VIEW,
        {},
        415,
        "unsupported_media_type",
        "header.content-type",
    ),
    (
        "a charset other than utf-8",
        "POST",
        "/move",
        VIEW,
        {"Content-Type": "application/json; Charset=latin-1"},
        415,
        "unsupported_media_type",
        "header.content-type",
    ),
    (
        "form content type",
        "POST",
        "/move",
        b"seat=1",
        {"Content-Type": "application/x-www-form-urlencoded"},
        415,
        "unsupported_media_type",
        "header.content-type",
    ),
    (
        "a key twice (json.loads would keep the last)",
        "POST",
        "/move",
        json.dumps(VIEW).replace('"seat": 1', '"seat": 0, "seat": 1').encode(),
        JSON,
        400,
        "bad_json",
        None,
    ),
    (
        "a tile in arabic-indic digits",
        "POST",
        "/move?bot=greedy",
        with_(VIEW, hand=["\u0661-\u0666", *VIEW["hand"][1:]]),
        JSON,
        422,
        "invalid",
        "hand[0]",
    ),
    (
        "a move in fullwidth digits",
        "POST",
        "/move?bot=greedy",
        with_(VIEW, history=[{"seat": 0, "move": "\uff16-\uff16"}]),
        JSON,
        422,
        "invalid",
        "history[0].move",
    ),
    (
        "an open end after a space",
        "POST",
        "/move?bot=greedy",
        with_(VIEW, open_ends=[" 6", "6"]),
        JSON,
        422,
        "invalid",
        "open_ends[0]",
    ),
    (
        "preset null",
        "POST",
        "/move?bot=greedy",
        with_(VIEW, rules={"preset": None}),
        JSON,
        422,
        "invalid",
        "rules.preset",
    ),
    ("unknown bot", "POST", "/move?bot=grandmaster", VIEW, JSON, 404, "unknown_bot", "query.bot"),
    ("unknown query", "POST", "/move?level=greedy", VIEW, JSON, 422, "invalid", "query.level"),
    ("unknown query on /health", "GET", "/health?x=1", None, {}, 422, "invalid", "query.x"),
    (
        "unknown query on /bots",
        "GET",
        "/bots?level=greedy",
        None,
        {},
        422,
        "invalid",
        "query.level",
    ),
    ("a trailing slash on /move", "POST", "/move/", VIEW, JSON, 404, "not_found", None),
    ("a trailing slash on /bots", "GET", "/bots/", None, {}, 404, "not_found", None),
    ("a trailing slash on /health", "GET", "/health/", None, {}, 404, "not_found", None),
    ("two bots", "POST", "/move?bot=greedy&bot=random", VIEW, JSON, 422, "invalid", "query.bot"),
    ("get /move", "GET", "/move", None, {}, 405, "method_not_allowed", None),
    ("put /move", "PUT", "/move", VIEW, JSON, 405, "method_not_allowed", None),
    ("post /health", "POST", "/health", VIEW, JSON, 405, "method_not_allowed", None),
    ("delete /bots", "DELETE", "/bots", None, {}, 405, "method_not_allowed", None),
    ("unknown path", "GET", "/moves", None, {}, 404, "not_found", None),
    ("no such page", "GET", "/index.php", None, {}, 404, "not_found", None),
]


@pytest.mark.parametrize(
    "method, path, body, headers, status, kind, field",
    [case[1:] for case in MALFORMED],
    ids=[case[0] for case in MALFORMED],
)
def test_malformed_requests_are_refused(
    server: Server,
    method: str,
    path: str,
    body: Any,
    headers: dict[str, str],
    status: int,
    kind: str,
    field: str | None,
) -> None:
    answer = request(
        server, method, path, body, **{k.replace("-", "_"): v for k, v in headers.items()}
    )
    error = assert_error(answer, status, kind)
    assert error["field"] == field, error
    if status == 405:
        assert answer[1]["allow"]
    assert_healthy(server)


def test_a_hand_that_is_over(server: Server) -> None:
    rules = Rules.preset("standard")
    state = HandState.deal(rules, 5)
    bot = load_bot("greedy")
    while state.outcome is None:
        state = state.apply(bot.choose(state.view(state.to_move)))
    error = assert_error(
        request(server, "POST", "/move?bot=greedy", view_to_json(state.view(0)), **JSON),
        422,
        "invalid",
    )
    assert error["field"] == "history" and "hand" in error["message"]
    assert_healthy(server)


def test_oversized_bodies(server: Server) -> None:
    limit = 64 * 1024
    padded = padded_view(limit + 100)  # valid JSON, too long

    # With a Content-Length: refused, and the kept-alive connection still serves.
    conn = server.connect()
    try:
        error = assert_error(call(conn, "POST", "/move", padded, JSON), 413, "too_large")
        assert str(limit) in error["message"]
        assert call(conn, "GET", "/health")[0] == 200
    finally:
        conn.close()

    # Chunked, without a length: counted while it streams.
    chunks = iter([padded[i : i + 4096] for i in range(0, len(padded), 4096)])
    conn = server.connect()
    try:
        assert_error(call(conn, "POST", "/move", chunks, JSON), 413, "too_large")
        assert call(conn, "GET", "/health")[0] == 200
    finally:
        conn.close()

    # Only the headers: refused by the Content-Length before any body is read.
    conn = server.connect()
    try:
        conn.putrequest("POST", "/move")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(100 * 1024 * 1024))
        conn.endheaders()
        resp = conn.getresponse()
        assert resp.status == 413
        assert resp.getheader("connection") == "close"
        assert json.loads(resp.read())["error"] == "too_large"
    finally:
        conn.close()
    assert_healthy(server)


@pytest.mark.parametrize(
    "length",
    [b"lots", b"-1", b"+5", b"1, 2", b"\xd9\xa1", b"\xef\xbc\x93", b"9" * 5000],
    ids=["lots", "-1", "+5", "1, 2", "arabic-indic 1", "fullwidth 3", "5000 digits"],
)
def test_bad_content_length(server: Server, length: bytes) -> None:
    # h11 refuses it before the app sees the request: the answer is still the
    # documented JSON error, not uvicorn's text/plain one.
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)
    try:
        sock.sendall(
            b"POST /move HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + length + b"\r\n\r\n{}"
        )
        reply = b""
        while chunk := sock.recv(65536):  # the server closes the connection after a 400
            reply += chunk
    finally:
        sock.close()
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 "), reply[:300]
    headers = {
        k.strip().lower(): v.strip()
        for k, _, v in (line.partition(b":") for line in head.split(b"\r\n")[1:])
    }
    assert headers[b"content-type"] == b"application/json" and headers[b"connection"] == b"close"
    assert int(headers[b"content-length"]) == len(body)
    error = json.loads(body)
    assert error == {
        "error": "bad_request",
        "field": "header.content-length",
        "message": error["message"],
    }
    assert "Content-Length" in error["message"], error
    assert_healthy(server)


@pytest.mark.parametrize(
    "length",
    ["\u0661", "\uff13", "\u00b2", "+5", "1_0", "9" * 5000],
    ids=["arabic-indic 1", "fullwidth 3", "superscript 2", "+5", "1_0", "5000 digits"],
)
def test_read_body_takes_a_content_length_in_the_digits_0_to_9_only(length: str) -> None:
    """Under another ASGI server than uvicorn's h11 the header reaches the app as it
    came: "١" passed isdigit and was read as 1, "²" raised a bare ValueError (a 500)."""
    import asyncio

    from starlette.requests import Request

    from matador_env.serve import RequestFailed, read_body

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/move",
        "headers": [(b"content-length", length.encode())],
    }
    with pytest.raises(RequestFailed) as info:
        asyncio.run(read_body(Request(scope, receive), 1000))
    assert (info.value.status, info.value.kind) == (400, "bad_request")
    assert info.value.field == "header.content-length"
    assert "digits 0-9" in info.value.message


def test_if_match_sent_as_several_headers_is_one_list(server: Server) -> None:
    # RFC 9110: If-Match headers sent apart are one list; the second here names the
    # game's ETag, so the request is judged (the hand is not over), not refused as stale.
    status, headers, game = request(server, "POST", "/games", {"level": "greedy"}, **JSON)
    assert status == 201, game
    conn = server.connect()
    try:
        conn.putrequest("POST", f"/games/{game['id']}/next")
        for tag in ('"99"', headers["etag"]):
            conn.putheader("If-Match", tag)
        conn.endheaders()
        resp = conn.getresponse()
        error = json.loads(resp.read())
    finally:
        conn.close()
    assert (resp.status, error["error"]) == (409, "hand_over"), error


# -- concurrency ----------------------------------------------------------------------


def test_concurrent_clients(server: Server, standard_views: list[dict]) -> None:
    expected = {
        level: [load_bot(level).move_json(v)["move"] for v in standard_views]
        for level in ("trained", "greedy")
    }
    failures: list[str] = []

    def client(index: int) -> int:
        level = ("trained", "greedy", "random", "casual")[index % 4]
        conn = server.connect()
        done = 0
        try:
            for round_ in range(3):
                for i, view in enumerate(standard_views[index::4][:4]):
                    status, _, move = call(conn, "POST", f"/move?bot={level}", view, JSON)
                    j = standard_views.index(view)
                    if status != 200 or move["move"] not in view["legal_moves"]:
                        failures.append(f"client {index}: {status} {move}")
                    elif level in expected and move["move"] != expected[level][j]:
                        failures.append(f"client {index}: {move['move']} != {expected[level][j]}")
                    done += 1
                    if (i + round_) % 3 == 0:
                        assert call(conn, "GET", "/health")[0] == 200
        finally:
            conn.close()
        return done

    with ThreadPoolExecutor(8) as pool:
        counts = list(pool.map(client, range(8)))
    assert not failures, failures[:5]
    assert sum(counts) == 8 * 3 * 4
    assert_healthy(server)


def test_health_answers_while_moves_are_computed(server: Server, standard_views: list) -> None:
    stop = threading.Event()

    def load() -> None:
        conn = server.connect()
        try:
            while not stop.is_set():
                call(conn, "POST", "/move?bot=trained", standard_views[0], JSON)
        finally:
            conn.close()

    threads = [threading.Thread(target=load) for _ in range(3)]
    for t in threads:
        t.start()
    try:
        for _ in range(5):
            assert_healthy(server)
    finally:
        stop.set()
        for t in threads:
            t.join(TIMEOUT)


# -- an in-process server: bugs answer 500 and the server keeps serving ------------------


class BrokenBot(Bot):
    name = level = "broken"
    rules = None

    def _choose(self, view, rng):  # type: ignore[no-untyped-def]
        raise RuntimeError("a bug")


class CheatingBot(Bot):
    name = level = "cheat"
    rules = None

    def _choose(self, view, rng):  # type: ignore[no-untyped-def]
        from matador_env.engine import Move

        return Move.parse("pass")


@contextlib.contextmanager
def serving(bots: dict[str, Bot]) -> Iterator[Server]:
    """``create_app(bots)`` on uvicorn in a thread of this process."""
    import uvicorn

    from matador_env.serve import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        create_app(bots), log_level="critical", access_log=False, lifespan="off"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + TIMEOUT
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        yield Server(None, Path(), Path(), port)  # type: ignore[arg-type]
    finally:
        server.should_exit = True
        thread.join(TIMEOUT)
        sock.close()


def test_unexpected_errors_answer_500() -> None:
    bots = {"broken": BrokenBot(), "cheat": CheatingBot(), "greedy": load_bot("greedy")}
    with serving(bots) as srv:
        error = assert_error(request(srv, "POST", "/move", a_view(), **JSON), 500, "internal")
        assert error["field"] is None and "RuntimeError" in error["message"]
        assert "a bug" not in error["message"]  # no internals leak
        error = assert_error(
            request(srv, "POST", "/move?bot=cheat", a_view(), **JSON), 500, "internal"
        )
        assert "not legal" in error["message"]
        status, _, move = request(srv, "POST", "/move?bot=greedy", a_view(), **JSON)
        assert status == 200 and move["bot"] == "greedy"
        assert_healthy(srv)


def test_a_bot_served_under_another_name_is_listed_and_answers_under_it() -> None:
    """``--bots mine=...`` and ``create_app`` name a bot as they like: ``/bots`` lists it
    under that name with its own as ``bot``, and its moves carry the served name, also
    for a plain level whose configuration's entries are not served."""
    from matador_env.bot import load_level

    with serving({"mine": load_bot("greedy"), "level": load_level("trained", 0)}) as srv:
        _, _, listed = request(srv, "GET", "/bots")
        assert [(b["name"], b["bot"]) for b in listed["bots"]] == [
            ("mine", "greedy"),
            ("level", "trained"),
        ]
        for name in ("mine", "level"):
            status, _, move = request(srv, "POST", f"/move?bot={name}", a_view(), **JSON)
            assert status == 200 and move["bot"] == name, move


def test_create_app_checks_its_arguments() -> None:
    from matador_env.serve import create_app

    greedy = load_bot("greedy")
    with pytest.raises(ValueError, match="no bots"):
        create_app({})
    for max_body in (0, True):
        with pytest.raises(ValueError, match="max_body"):
            create_app({"g": greedy}, max_body=max_body)
    with pytest.raises(ValueError, match="non-empty string"):
        create_app({"": greedy})
    with pytest.raises(ValueError, match="default"):
        create_app({"g": greedy}, default="h")
    with pytest.raises(TypeError, match="not a Bot"):
        create_app({"g": "greedy"})  # type: ignore[dict-item]


def test_command_line_errors(tmp_path: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "matador_env.serve", "--port", "0", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            # An empty folder of bots: no trained bot is shipped at all.
            env={**os.environ, BOTS_DIR_VARIABLE: str(tmp_path)},
        )

    for config_flag in ("--config", "--preset"):
        done = run("--bots", "trained", config_flag, "leiden")
        assert done.returncode == 2
        assert "no trained bot is shipped for leiden" in done.stderr
        assert "shipped for: none" in done.stderr
    done = run("--bots", "trained")
    assert done.returncode == 2 and "no trained bot is shipped" in done.stderr
    done = run("--bots", "trained:leiden_3p")
    assert done.returncode == 2 and "no configuration 'leiden_3p'" in done.stderr
    done = run("--bots", "greedy,grandmaster")
    assert done.returncode == 2 and "unknown bot 'grandmaster'" in done.stderr
    assert done.stderr.startswith("python -m matador_env.serve: error: "), done.stderr
    with pytest.raises(BotError):
        from matador_env.serve import load_bots

        load_bots(["greedy", "greedy"])


def test_by_default_levels_with_no_bot_are_left_out_with_a_note(tmp_path: Path) -> None:
    """Without --bots, a level that has no bot to serve is a note, not an error."""
    empty = tmp_path / "no-bots"
    empty.mkdir()
    srv = start_server(tmp_path, env={BOTS_DIR_VARIABLE: str(empty)})
    try:
        _, _, body = request(srv, "GET", "/bots")
        assert body["default"] == "greedy"
        assert [b["name"] for b in body["bots"]] == ["greedy", "random"]
    finally:
        assert stop_server(srv) == 0, srv.logs()
    err = srv.err.read_text()
    assert "note: not serving trained" in err and "note: not serving casual" in err, err


def test_a_bot_of_one_configuration_takes_the_seed(standard_views: list[dict]) -> None:
    # ``--bots casual:standard --seed 5`` plays as ``load_bot`` of that seed does.
    from matador_env.serve import load_bots

    served = load_bots(["casual:standard"], seed=5)["casual:standard"]
    local = load_bot("casual", rules="standard", seed=5)
    assert [served.move_json(v) for v in standard_views] == [
        local.move_json(v) for v in standard_views
    ]


def test_one_configuration_only() -> None:
    from matador_env.serve import load_bots

    bots = load_bots(["trained", "casual", "greedy", "mine=matador_env/bots/standard"], "standard")
    assert list(bots) == ["trained", "casual", "greedy", "mine"]
    assert bots["trained"].rules == bots["mine"].rules == Rules.preset("standard")
    assert bots["casual"].name == "casual:standard"
    # An exported policy is checked against the configuration served.
    with pytest.raises(BotError, match="cannot play these rules"):
        load_bots(["mine=matador_env/bots/standard"], "standard_3p")
    with pytest.raises(BotError, match="listed twice"):
        load_bots(["trained", "trained:standard"])
    # A level of another configuration is refused: --config promises this one only.
    with pytest.raises(
        BotError,
        match=r"bad bot entry 'trained:pagat': --config standard serves standard only; "
        r"give trained \(it plays standard\), or leave --config out",
    ):
        load_bots(["trained:pagat", "greedy"], "standard")
    # The same configuration by its own name, or a preset of the same rules, is served.
    assert load_bots(["casual:standard"], "standard")["casual:standard"].rules == Rules.preset(
        "standard"
    )


def test_help_says_the_browser_page_serves_the_same_bots(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from matador_env.serve import main

    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "the browser page at / offers only the levels served here" in text
    assert "LEVEL:CONFIGURATION (trained:pagat)" in text
    assert "only, on /move and on the browser page" in text
