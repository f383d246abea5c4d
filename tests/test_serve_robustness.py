"""The HTTP bot server against slow, silent, vanishing and too many clients.

Real servers on loopback (``python -m matador_env.serve`` in a subprocess, as in
``test_serve.py``) with timeouts of a second, driven by raw sockets so that a test
can stall a request half-way, hang up, or hold connections open. Waits for "the
server closed the connection" have a generous upper bound (``TIMEOUT``); nothing
asserts how fast anything is.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from matador_env.bot import load_bot  # noqa: E402
from matador_env.serve import (  # noqa: E402
    DRAIN_LIMIT,
    ConnectionLimits,
    GuardedH11Protocol,
    _ConnectionBook,
    create_app,
    server_config,
)
from tests.test_serve import (  # noqa: E402
    ROOT,
    TIMEOUT,
    Server,
    a_view,
    padded_view,
    start_server,
    stop_server,
)

TRICKLE = 0.2
"""Seconds between two bytes of a slowloris client."""
MAX_BODY = 4096
"""The server's --max-body."""
HEALTH = b"GET /health HTTP/1.1\r\nHost: test\r\n\r\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server that gives a request 1 s to arrive and a kept-alive connection 1 s idle,
    and takes bodies of up to ``MAX_BODY`` bytes."""
    tmp = tmp_path_factory.mktemp("robust")
    srv = start_server(
        tmp,
        "--bots",
        "greedy",
        "--request-timeout",
        "1",
        "--keep-alive-timeout",
        "1",
        "--max-body",
        str(MAX_BODY),
    )
    try:
        yield srv
    finally:
        code = stop_server(srv)
        assert code == 0, srv.logs()
        err = srv.err.read_text()
        assert "Traceback" not in err and "unexpected error" not in err, srv.logs()


# -- raw HTTP -------------------------------------------------------------------------


def connect(server: Server) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT)


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], Any]:
    """One answer: (status, lower-case headers, decoded JSON body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"the server closed the connection without an answer: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status, headers = parse_head(head)
    length = int(headers["content-length"])
    while len(body) < length:
        chunk = sock.recv(4096)
        assert chunk, "the server closed the connection in the middle of an answer"
        body += chunk
    return status, headers, json.loads(body[:length])


def parse_head(head: bytes) -> tuple[int, dict[str, str]]:
    """An answer's status and lower-case headers."""
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines)}
    return int(status_line.split()[1]), headers


def closed_by_server(sock: socket.socket) -> bytes:
    """Read until the server closes the connection; what it sent before. Fails when
    the connection is still open after ``TIMEOUT`` seconds."""
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        pytest.fail(f"the server kept the connection open {TIMEOUT} s (got {received!r})")
    except ConnectionResetError:
        pass
    return received


def trickle_until_answered(sock: socket.socket, data: bytes) -> bytes:
    """Send ``data`` a byte every ``TRICKLE`` seconds (then keep sending header-like
    bytes) until the server answers or closes; what it sent until it closed."""
    sock.settimeout(TRICKLE)
    deadline = time.monotonic() + TIMEOUT
    filler = iter(data + b"X-Padding: yes\r\n" * 10_000)
    while time.monotonic() < deadline:
        try:
            sock.send(bytes([next(filler)]))
        except (BrokenPipeError, ConnectionResetError):
            break  # closed by the server; its answer may still be readable
        try:
            first = sock.recv(4096)
        except TimeoutError:
            continue
        sock.settimeout(TIMEOUT)
        return first + (closed_by_server(sock) if first else b"")
    sock.settimeout(TIMEOUT)
    return closed_by_server(sock)


def parse_answer(raw: bytes) -> tuple[int, dict[str, str], Any]:
    head, _, body = raw.partition(b"\r\n\r\n")
    return (*parse_head(head), json.loads(body))


def open_descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def wait_for_log(server: Server, text: str) -> str:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        err = server.err.read_text()
        if text in err:
            return err
        time.sleep(0.05)
    pytest.fail(f"the server never logged {text!r}:\n{server.logs()}")


def assert_healthy(server: Server) -> None:
    with connect(server) as sock:
        sock.sendall(HEALTH)
        status, _, body = read_answer(sock)
    assert status == 200 and body["status"] == "ok", body


def post_head(length: int) -> bytes:
    return (
        b"POST /move HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(length).encode() + b"\r\n\r\n"
    )


def chunked_post(body: bytes) -> bytes:
    """A whole ``POST /move`` of ``body`` in chunks of 64 KiB, without a Content-Length."""
    parts = [body[i : i + 65536] for i in range(0, len(body), 65536)]
    return (
        b"POST /move HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts)
        + b"0\r\n\r\n"
    )


# -- timeouts -------------------------------------------------------------------------


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts /proc/PID/fd")
def test_silent_connections_are_closed_and_free_their_descriptors(server: Server) -> None:
    assert_healthy(server)
    before = open_descriptors(server.proc.pid)
    silent = [connect(server) for _ in range(12)]
    for sock in silent:
        # Nothing was asked, so nothing is answered: the connection just closes.
        assert closed_by_server(sock) == b""
        sock.close()
    deadline = time.monotonic() + TIMEOUT
    while open_descriptors(server.proc.pid) > before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert open_descriptors(server.proc.pid) <= before
    assert "no request within 1 s (--request-timeout)" in server.err.read_text()
    assert_healthy(server)


def test_trickled_headers_get_408_and_the_connection_closes(server: Server) -> None:
    with connect(server) as sock:
        raw = trickle_until_answered(sock, b"GET /health HTTP/1.1\r\nHost: test\r\n")
    status, headers, body = parse_answer(raw)
    assert status == 408, raw
    assert headers["connection"] == "close"
    assert body["error"] == "timeout" and body["field"] is None
    assert "--request-timeout" in body["message"]
    assert_healthy(server)


def test_a_trickled_body_gets_408_and_the_connection_closes(server: Server) -> None:
    body = json.dumps(a_view()).encode()
    with connect(server) as sock:
        sock.sendall(post_head(len(body)) + body[:10])
        raw = trickle_until_answered(sock, body[10:])
    status, headers, answer = parse_answer(raw)
    assert status == 408, raw
    assert answer["error"] == "timeout"
    assert headers["connection"] == "close"
    assert_healthy(server)


def test_an_idle_kept_alive_connection_is_closed(server: Server) -> None:
    with connect(server) as sock:
        sock.sendall(HEALTH)
        assert read_answer(sock)[0] == 200
        assert closed_by_server(sock) == b""


def test_a_kept_alive_connection_idle_past_the_request_timeout_is_kept(tmp_path: Path) -> None:
    # Between two requests the keep-alive timeout alone counts: the request deadline
    # runs from the opening of a connection and from the first byte of a request.
    own = start_server(
        tmp_path, "--bots", "greedy", "--request-timeout", "1", "--keep-alive-timeout", "60"
    )
    try:
        with connect(own) as sock:
            for idle in (2, 0):  # past the request timeout, within the keep-alive one
                sock.sendall(HEALTH)
                assert read_answer(sock)[0] == 200
                time.sleep(idle)
    finally:
        assert stop_server(own) == 0, own.logs()
    assert "no request within" not in own.err.read_text(), own.logs()


def test_a_second_request_trickled_on_a_kept_alive_connection_gets_408(server: Server) -> None:
    # uvicorn's keep-alive timer stops at the first byte of the next request; the
    # request deadline must take over from there.
    with connect(server) as sock:
        sock.sendall(HEALTH)
        assert read_answer(sock)[0] == 200
        raw = trickle_until_answered(sock, b"GET /bots HTTP/1.1\r\nHost: test\r\n")
    assert parse_answer(raw)[0] == 408, raw


# -- bodies --------------------------------------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize(
    "size", [MAX_BODY, MAX_BODY + 1, 512 * 1024], ids=["at the limit", "one over", "512 KiB"]
)
def test_a_body_up_to_max_body_is_read_and_one_over_it_refused_on_a_kept_connection(
    server: Server, size: int, chunked: bool
) -> None:
    # --max-body bounds a body by its Content-Length or counted while it streams; one
    # over it, up to the 1 MiB that is read and dropped, leaves the connection serving.
    body = padded_view(size)
    with connect(server) as sock:
        sock.sendall(chunked_post(body) if chunked else post_head(size) + body)
        status, headers, answer = read_answer(sock)
        if size <= MAX_BODY:
            assert status == 200 and answer["bot"] == "greedy", answer
        else:
            assert status == 413 and answer["error"] == "too_large", answer
            assert f"the limit of {MAX_BODY} bytes" in answer["message"]
            assert headers.get("connection") != "close", headers
        sock.sendall(HEALTH)
        assert read_answer(sock)[0] == 200


def test_bodies_answered_unread_are_dropped_each_up_to_the_limit_on_one_connection(
    server: Server,
) -> None:
    # The drain limit is per request: two bodies of just under 1 MiB, each answered 404
    # before it is read, do not add up to close a kept-alive connection.
    length = DRAIN_LIMIT - 1024
    with connect(server) as sock:
        for _ in range(2):
            sock.sendall(b"POST /no-such-path HTTP/1.1\r\nHost: test\r\n")
            sock.sendall(b"Content-Length: %d\r\n\r\n" % length + b" " * length)
            assert read_answer(sock)[0] == 404
        sock.sendall(HEALTH)
        assert read_answer(sock)[0] == 200


# -- bodies left unread ---------------------------------------------------------------


@pytest.mark.parametrize(
    "head",
    [
        b"GET /health HTTP/1.1\r\nHost: test\r\n",  # an endpoint that takes no body
        b"POST /no-such-path HTTP/1.1\r\nHost: test\r\n",  # a 404 by the router
        b"POST /move HTTP/1.1\r\nHost: test\r\nContent-Type: text/plain\r\n",  # a 415
    ],
    ids=["no body taken", "404", "415"],
)
def test_a_body_answered_before_it_is_read_is_dropped_only_up_to_a_limit(
    server: Server, head: bytes
) -> None:
    # Answered before its body was read, a request's body was received and dropped
    # for as long as it came (within the request timeout: gigabytes on a fast link),
    # past --max-body and the drain limit that bound a body the app reads.
    length = 32 * DRAIN_LIMIT
    sent = 0
    with connect(server) as sock:
        sock.sendall(head + b"Content-Length: %d\r\n\r\n" % length)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            while sent < length:
                sent += sock.send(b" " * 65536)
    assert sent < length, f"the server took all {sent} bytes of a body it did not read"
    assert_healthy(server)


# -- hang-ups -------------------------------------------------------------------------


def test_a_client_hanging_up_mid_request_is_one_quiet_line(server: Server) -> None:
    body = json.dumps(a_view()).encode()
    with connect(server) as sock:
        sock.sendall(post_head(len(body)) + body[:20])
        port = sock.getsockname()[1]
        assert_healthy(server)  # the partial request has reached the server
    line = f"client 127.0.0.1:{port} hung up before its request was complete"
    err = wait_for_log(server, line)
    mentions = [x for x in err.splitlines() if f":{port} " in x]
    assert len(mentions) == 1 and line in mentions[0], err
    assert "Traceback" not in err and "unexpected error" not in err and "ERROR" not in err, err
    assert_healthy(server)


def test_a_bad_chunk_after_the_head_is_one_400_and_no_traceback(tmp_path: Path) -> None:
    # h11 passes the request to the app, then finds the bad chunk size and answers 400:
    # the app must not answer as well (found by benchmarks.fuzz_http). The app's task
    # runs when it will, so the log is read once the server has stopped.
    own = start_server(tmp_path, "--bots", "greedy")
    try:
        for head in (
            b"GET /health HTTP/1.1\r\n",
            b"POST /move HTTP/1.1\r\nContent-Type: application/json\r\n",
        ):
            with connect(own) as sock:
                sock.sendall(head + b"Host: test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
                raw = closed_by_server(sock)
            assert raw.startswith(b"HTTP/1.1 400 ") and raw.count(b"HTTP/1.1") == 1, raw
            assert_healthy(own)
    finally:
        code = stop_server(own)
    err = own.err.read_text()
    assert code == 0 and "Traceback" not in err and "unexpected error" not in err, err


def test_a_bad_chunk_after_the_answer_gets_no_second_answer(server: Server) -> None:
    # The answer is out (GET /health reads no body): the bad chunk ends the connection,
    # and no 400 follows the 200 as if it answered another request.
    with connect(server) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n")
        assert read_answer(sock)[0] == 200
        sock.sendall(b"zz\r\n")
        assert closed_by_server(sock) == b""


# -- the connection limit -------------------------------------------------------------


def test_connections_past_the_limit_get_503_and_beyond_them_are_closed(
    tmp_path: Path,
) -> None:
    # Long timeouts: the connections held open must outlast the test.
    limits = ["--max-connections", "3", "--request-timeout", "60", "--keep-alive-timeout", "60"]
    capped = start_server(tmp_path, "--bots", "greedy", *limits)
    try:
        served = [connect(capped) for _ in range(3)]
        for sock in served:
            sock.sendall(HEALTH)
            assert read_answer(sock)[0] == 200
        # Accepted in order: three more are let in only to be answered 503 ...
        turned_away = [connect(capped) for _ in range(3)]
        # ... and one past those is closed without an answer.
        with connect(capped) as refused:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                refused.sendall(HEALTH)
            assert closed_by_server(refused) == b""
        for sock in turned_away:
            sock.sendall(HEALTH)
            status, headers, body = read_answer(sock)
            assert status == 503, body
            assert body["error"] == "busy" and "limit of 3 connections" in body["message"]
            assert headers["retry-after"] == "1" and headers["connection"] == "close"
            assert closed_by_server(sock) == b""
            sock.close()
        # Those gone, the next past the limit is answered 503 again, not closed.
        deadline = time.monotonic() + TIMEOUT
        while True:
            with connect(capped) as sock:
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    sock.sendall(HEALTH)
                answer = closed_by_server(sock)
            if answer or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert parse_answer(answer)[0] == 503, answer
        # The connections served go on being served.
        served[0].sendall(b"GET /bots HTTP/1.1\r\nHost: test\r\n\r\n")
        assert read_answer(served[0])[0] == 200
        # When one leaves, a new one is served again.
        served.pop().close()
        deadline = time.monotonic() + TIMEOUT
        while True:
            with connect(capped) as sock:
                sock.sendall(HEALTH)
                status = read_answer(sock)[0]
            if status == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert status == 200
        for sock in served:
            sock.close()
    finally:
        code = stop_server(capped)
    assert code == 0, capped.logs()
    assert "at the limit of 3 connections" in capped.err.read_text()
    assert "Traceback" not in capped.err.read_text(), capped.logs()


# -- settings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "flag", ["--request-timeout", "--keep-alive-timeout", "--max-connections", "--max-body"]
)
def test_command_line_refuses_limits_below_one(flag: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "matador_env.serve", flag, "0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 2
    assert f"{flag} must be >= 1" in done.stderr


@pytest.mark.parametrize("field", ["request_timeout", "keep_alive_timeout", "max_connections"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True, "5"])
def test_connection_limits_refuse_non_positive_integers(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=f"{field} must be a positive integer"):
        ConnectionLimits(**{field: value})


def test_the_note_on_connections_turned_away_counts_those_since_the_last(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # One note per BUSY_LOG_INTERVAL at most; each counts the connections turned away
    # since the one before. Times are passed in: no clock is read.
    book = _ConnectionBook(ConnectionLimits(max_connections=3))
    interval = book.BUSY_LOG_INTERVAL
    with caplog.at_level(logging.WARNING, logger="matador_env.serve"):
        for now in (0.0, 1.0, interval, interval + 1, 2 * interval):
            book.note_refused(now)
    assert [r.getMessage() for r in caplog.records] == [
        f"at the limit of 3 connections: {n} turned away (503 or closed) since the last note"
        for n in (1, 2, 2)
    ]


def test_the_server_configuration_holds_the_limits() -> None:
    # How long an idle connection is kept is uvicorn's keep-alive timeout; the request
    # deadline and the connection cap are the protocol's.
    limits = ConnectionLimits(request_timeout=3, keep_alive_timeout=7, max_connections=2)
    config = server_config(create_app({"greedy": load_bot("greedy")}), limits)
    assert config.timeout_keep_alive == 7
    protocol = config.http
    assert isinstance(protocol, type) and issubclass(protocol, GuardedH11Protocol)
    assert protocol.book.limits == limits


# -- the campaign ---------------------------------------------------------------------


def test_the_http_campaign_runs_every_phase_and_finds_nothing() -> None:
    from benchmarks.fuzz_http import run_http_campaign

    counts = run_http_campaign(seconds=3, seed=0)
    assert counts["findings"] == 0, counts
    # Each phase did its part: moves served, refusals, timeouts, the limit, hang-ups.
    for key in ("accepted", "status_4xx", "answered_408", "timeout_closes", "busy_503"):
        assert counts[key] > 0, (key, counts)
    assert counts["burst_closed"] > 0 and counts["hangup_lines"] > 0, counts
    # The game endpoints: games dealt and played, and the cap on live games reached.
    assert counts["games_dealt"] > 0 and counts["games_503"] == 1, counts
    assert counts["descriptors_after"] <= counts["descriptors_before"], counts


def test_the_campaign_reads_only_the_first_answer_on_a_connection() -> None:
    # Under load, bytes after a mutated chunked body that ended early reach the server
    # in the same read as the request: they get a 400 of their own after the app's JSON
    # answer. The first answer alone says what the request got.
    from benchmarks.fuzz_http import json_error_kind

    body = b'{"error":"too_large","field":null,"message":"over the limit"}'
    first = (
        b"HTTP/1.1 413 Request Entity Too Large\r\ncontent-length: "
        + str(len(body)).encode()
        + b"\r\ncontent-type: application/json\r\n\r\n"
        + body
    )
    second = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\nInvalid HTTP request received."
    assert json_error_kind(first + second) == "too_large"
    assert json_error_kind(first) == "too_large"
