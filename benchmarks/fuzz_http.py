"""The HTTP bot server under fuzzed, stalled, vanishing and too many clients.

``python -m benchmarks.fuzz_http [--seconds 60] [--seed 0]`` prints the counts of
:func:`run_http_campaign` as JSON, and on stderr what was sent and answered for the
first findings of each kind (exit status 1 when there are any); ``python -m
benchmarks.fuzz`` adds the counts to its table (campaign ``http``).

The server (``python -m matador_env.serve``: bots ``greedy`` and ``random``,
``--request-timeout 2 --keep-alive-timeout 2 --max-connections 16``) runs in a
subprocess on a free port of 127.0.0.1; every client is in this process, on
loopback. The campaign runs these phases, each bounded in count and in time (a
share of ``seconds``; every phase tries at least one input, client or round, so a
very short campaign takes about ten seconds):

``views``
    Views of random-play hands of every preset, valid or mutated (a field dropped,
    added, retyped, out of range, a move or tile garbled, the text truncated, a
    byte flipped, not UTF-8), posted to ``/move`` on a kept-alive connection. A
    ``200`` must carry a legal move of the view that was sent; any other answer
    must be a documented JSON error. ``?bot=nobody`` must get ``404``, ``?x=1``
    ``422``, and a valid view to a bot served ``200``.
``games``
    The browser page's game endpoints (``/games``, :mod:`matador_env.web`) on a
    kept-alive connection: games dealt with settings valid or mutated (a field
    dropped, retyped, out of range or unknown, the text cut or garbled), played to
    their end by the person's legal moves, bot moves and ``next``, among mutated
    requests: a garbled or illegal move, another game's move, a move, a bot move or
    ``next`` out of turn, a wrong ``Content-Type``, an unknown game, a query
    parameter, a body over the limit to an endpoint that takes none, an ``If-Match``
    of the game's version or of another (``412``) on a step or on ending a finished
    game, and now and then four moves and bot moves sent to one game at once, half
    the time each with the ``If-Match`` of the game's version. A valid deal must get
    ``201`` and a valid step ``200``, each refusal its documented status. Every game
    is replayed in the engine: each action answered must be legal there and the
    answer's view, totals and outcome the engine's; a refused request must leave the
    game as it was; requests sent at once must add as many actions as they got
    ``200``, and at most one with one ``If-Match``. At the end games are dealt until
    ``503 too_many_games``, which must come at the ``max_games`` of
    ``GET /games/options``, and every game is ended.
``requests``
    Raw HTTP requests, valid ones mutated: methods, paths, versions, header
    names and values, ``Content-Length`` and ``Transfer-Encoding`` (and their
    conflicts), chunk sizes, oversized heads, ``Expect: 100-continue``,
    pipelining, bytes flipped, inserted or cut, to the bot and the game endpoints.
    Sent by eight clients at once.
``hangups``
    Clients that die mid-request: after part of the head, part of the body, the
    whole request (before the answer), or with a reset (``SO_LINGER`` 0).
``stalls``
    Silent connections, heads and bodies trickled a byte at a time (slowloris),
    connections kept alive and left idle: every one must be closed by the server
    within its timeouts (plus a margin), trickled ones with a ``408``.
``burst``
    Twice the connection limit plus eight clients connect at once, then each posts
    a view: the first ones are served, the next get ``503`` (``busy``), the rest
    are closed unanswered; nothing may hang.

At the end the server must answer ``/health``, hold no more descriptors than
before the campaign (``/proc/PID/fd``), have logged no traceback, and stop
cleanly on SIGINT.

Counts: ``tried`` (inputs and clients), ``accepted`` (2xx), ``refused`` (4xx,
``503 busy``, connections the server closed as documented), ``findings`` (the sum
of the ``finding_*`` counts: 5xx other than ``busy`` and ``too_many_games``, an
answer that is not HTTP or not a documented error, a final answer of 1xx or 3xx
(``finding_unexpected_status``), an illegal move, a stalled client the server did
not close, a burst client left hanging, descriptors leaked, a traceback, no
``/health`` at the end, an unclean stop, a views or games answer of
another status than the one required, a game answer the engine's replay disagrees
with (``finding_engine_disagrees``), a game changed by a refused request
(``finding_game_changed``), requests at once that added another number of actions
than answers ``200``, or more than one with one ``If-Match`` (``finding_race``), the
cap on live games not enforced where it is named (``finding_cap_not_enforced``));
and details: ``requests``, ``status_2xx`` ... ``status_5xx``, ``no_answer``,
``timeout_closes`` (connections closed by the server's timeouts), ``answered_408``,
``busy_503``, ``burst_served``, ``burst_closed``, ``hangups``, ``hangup_lines`` (the
server's one-line notes), ``games_dealt``, ``games_finished``, ``game_races`` (rounds
of requests at once), ``game_races_if_match`` (those sent with one ``If-Match``),
``games_503`` (``too_many_games``), ``descriptors_before``, ``descriptors_after``.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import random
import re
import select
import socket
import struct
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchmarks.bot import HEADERS, ServerProcess
from matador_env.engine import PRESETS, HandState, MatchState, Rules
from matador_env.flags import positive_number, seed_arg
from matador_env.protocol import ProtocolError, move_from_json, view_from_json, view_to_json
from matador_env.serve import DEFAULT_MAX_BODY
from matador_env.streams import run_main
from matador_env.web import SETTINGS_FIELDS, etag

REQUEST_TIMEOUT = 2
KEEP_ALIVE_TIMEOUT = 2
MAX_CONNECTIONS = 16
MARGIN = 8.0
"""Seconds past its timeout that a stalled connection may stay open before it counts
as a finding (the machine may be busy)."""
TRICKLE = 0.25
"""Seconds between two bytes of a trickling client."""
ANSWER_WAIT = REQUEST_TIMEOUT + MARGIN
"""Longest wait for an answer or a close."""
SHARES = {"views": 0.3, "games": 0.1, "requests": 0.25, "hangups": 0.1, "stalls": 0.15}
SHARES["burst"] = 0.1
LIMITS = {"views": 20_000, "games": 20_000, "requests": 20_000, "hangups": 2_000}
LIMITS.update(stalls=20, burst=5)
"""Most inputs (views, requests, game requests, hang-ups) or rounds (stalls, bursts) of
a phase."""
GAMES_LIVE = 6
"""Games the ``games`` phase keeps live at once (far under the server's cap)."""
RACERS = 4
"""Requests the ``games`` phase sends to one game at once."""
DOCUMENTED_KINDS = {
    "bad_json",
    "not_an_object",
    "bad_request",
    "not_found",
    "unknown_bot",
    "method_not_allowed",
    "timeout",
    "too_large",
    "unsupported_media_type",
    "invalid",
    "busy",
    # the game endpoints' own (matador_env.web)
    "unknown_game",
    "wrong_turn",
    "hand_over",
    "finished",
    "stale",
    "bad_if_match",
    "too_many_games",
}


# -- the server -----------------------------------------------------------------------


class ServerUnderTest(ServerProcess):
    """The server under test: bots ``greedy`` and ``random``, short timeouts, few
    connections (module docs)."""

    def __init__(self, seed: int) -> None:
        options = ["--seed", str(seed), "--request-timeout", str(REQUEST_TIMEOUT)]
        options += ["--keep-alive-timeout", str(KEEP_ALIVE_TIMEOUT)]
        options += ["--max-connections", str(MAX_CONNECTIONS), "--no-access-log"]
        super().__init__(["greedy", "random"], options, prefix="matador-fuzz-http-")

    def open_socket(self, timeout: float = ANSWER_WAIT) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def settled_descriptors(self, at_most: int, wait: float) -> int:
        """The descriptor count once it is down to ``at_most``, or after ``wait`` s."""
        deadline = time.monotonic() + wait
        count = self.descriptors()
        while count > at_most and time.monotonic() < deadline:
            time.sleep(0.1)
            count = self.descriptors()
        return count

    def healthy(self) -> bool:
        conn = self.connect(ANSWER_WAIT)
        try:
            conn.request("GET", "/health")
            resp = conn.getresponse()
            return resp.status == 200 and json.loads(resp.read())["status"] == "ok"
        except (OSError, http.client.HTTPException, ValueError, KeyError):
            return False
        finally:
            conn.close()


# -- raw HTTP -------------------------------------------------------------------------


def read_until_closed(sock: socket.socket, wait: float) -> tuple[bytes, bool]:
    """What the server sends until it closes the connection, and whether it did
    within ``wait`` seconds."""
    received = b""
    deadline = time.monotonic() + wait
    try:
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                return received, True
            received += chunk
    except TimeoutError:
        return received, False
    except OSError:  # reset by the server
        return received, True
    return received, False


def read_answer(sock: socket.socket, wait: float = ANSWER_WAIT) -> bytes:
    """One whole answer (or what came before the close or the wait ran out)."""
    data = b""
    deadline = time.monotonic() + wait
    try:
        while (left := deadline - time.monotonic()) > 0:
            head, sep, body = data.partition(b"\r\n\r\n")
            if sep:
                length = content_length(head)
                if length is not None and len(body) >= length:
                    return data
                if length is None and head.startswith(b"HTTP/1.1 1"):
                    data = body  # an interim answer (100 Continue): the real one follows
                    continue
            sock.settimeout(left)
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    return data


def status_of(answer: bytes) -> int | None:
    """The status of an HTTP/1.1 answer, None when there is no answer."""
    match = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return int(match.group(1)) if match else None


def content_length(head: bytes) -> int | None:
    """The Content-Length an answer's head announces, None without one."""
    found = re.search(rb"(?im)^content-length:\s*(\d+)\s*$", head)
    return int(found.group(1)) if found else None


def json_error_kind(answer: bytes) -> str | None:
    """The ``error`` of a JSON error answer, None when it is not one.

    Only the first answer counts: bytes the client sent after a complete request
    (a mutated chunked body can end early) are a request of their own, which the
    server may answer too (a 400) before it closes.
    """
    head, _, body = answer.partition(b"\r\n\r\n")
    length = content_length(head)
    if length is not None:
        body = body[:length]
    if b"application/json" not in head.lower():
        return None
    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"error", "field", "message"}:
        return None
    kind = data["error"]
    return kind if isinstance(kind, str) else None


class Tally:
    """Counts shared by the client threads, and the first examples of each finding."""

    EXAMPLES_PER_FINDING = 3

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.examples: list[str] = []
        self.lock = threading.Lock()

    def add(self, *keys: str, sent: bytes = b"", got: bytes = b"") -> None:
        with self.lock:
            self.counts.update(keys)
            for key in keys:
                if key.startswith("finding_") and self.counts[key] <= self.EXAMPLES_PER_FINDING:
                    self.examples.append(f"{key}: sent {sent[:300]!r}, got {got[:300]!r}")

    def answer(self, answer: bytes, sent: bytes = b"") -> int | None:
        """Count one answer to ``sent`` by status class; check what an error answer says."""
        status = status_of(answer)
        keys = ["requests"]
        if status is None:
            keys.append("no_answer" if not answer else "finding_not_http")
            if not answer:
                keys.append("refused")
        else:
            keys.append(f"status_{status // 100}xx")
            kind = json_error_kind(answer)
            if status == 503 and kind == "busy":
                keys += ["busy_503", "refused"]
            elif status == 503 and kind == "too_many_games":
                keys += ["games_503", "refused"]
            elif status >= 500:
                keys.append("finding_5xx")
            elif status >= 400:
                keys.append("refused")
                # What h11 cannot parse gets the JSON bad_request too (uvicorn's own
                # 400 is plain text); the answer to HEAD has no body to say what was wrong.
                head = sent.startswith(b"HEAD ")
                if not head and kind not in DOCUMENTED_KINDS:
                    keys.append("finding_undocumented_error")
            elif 200 <= status < 300:
                keys.append("accepted")
            else:
                # The server answers no request with a redirect, and no final answer
                # with 1xx (read_answer skips a 100 Continue): either is a finding.
                keys.append("finding_unexpected_status")
        self.add(*keys, sent=sent, got=answer)
        return status


# -- views ----------------------------------------------------------------------------


def sample_views(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """JSON views of the seat to act, at random points of random hands of every preset."""
    found: list[dict[str, Any]] = []
    presets = sorted(PRESETS)
    while len(found) < count:
        state = HandState.deal(Rules.preset(rng.choice(presets)), rng.randrange(1 << 30))
        for _ in range(rng.randrange(40)):
            if state.outcome is not None:
                break
            moves = state.legal_moves()
            state = state.apply(moves[rng.randrange(len(moves))])
        if state.outcome is None:
            found.append(view_to_json(state.view(state.to_move)))
    return found


JUNK: list[Any] = [None, True, False, 0, -1, 7, 2**63, 1e308, 0.5, "", "x", "1-6"]
JUNK += ["9-9@0>1", "ü" * 50, [], [None], {}, {"a": 1}, [[[[]]]], "x" * 5000, list(range(300))]


def _cut(rng: random.Random, data: Any) -> bytes:
    """``data`` as JSON, cut short at a random byte."""
    text = json.dumps(data).encode()
    return text[: rng.randrange(len(text))]


def _flipped(rng: random.Random, data: Any, flips: int = 1) -> bytes:
    """``data`` as JSON with ``flips`` random bytes set to random values."""
    flipped = bytearray(json.dumps(data).encode())
    for _ in range(flips):
        flipped[rng.randrange(len(flipped))] = rng.randrange(256)
    return bytes(flipped)


def mutate_view(rng: random.Random, view: dict[str, Any]) -> tuple[bytes, bool]:
    """A view's body, mutated or not; True when it was left valid."""
    data = json.loads(json.dumps(view))
    how = rng.randrange(12)
    if how == 0:
        return json.dumps(data).encode(), True
    if how == 1 and data:
        del data[rng.choice(sorted(data))]
    elif how == 2:
        data[rng.choice(["extra", "Seat", "", "hand "])] = rng.choice(JUNK)
    elif how == 3 and data:
        data[rng.choice(sorted(data))] = rng.choice(JUNK)
    elif how == 4 and data.get("history"):
        entry = rng.choice(data["history"])
        if isinstance(entry, dict):
            key = rng.choice(sorted(entry) or ["move"])
            entry[key] = rng.choice(JUNK)
    elif how == 5 and data.get("hand"):
        hand = data["hand"]
        choice = rng.randrange(3)
        if choice == 0:
            hand.append(rng.choice(hand))
        elif choice == 1:
            hand[rng.randrange(len(hand))] = rng.choice(JUNK)
        else:
            hand.clear()
    elif how == 6:
        data["seat"] = rng.choice([-1, 4, 99, True, "0", None, 1.0])
    elif how == 7 and data.get("history"):
        history = data["history"]
        choice = rng.randrange(3)
        if choice == 0:
            history.append(rng.choice(history))
        elif choice == 1:
            del history[rng.randrange(len(history)) :]
        else:
            data["history"] = history * rng.choice([50, 400])
    elif how == 8:
        return _cut(rng, data), False
    elif how == 9:
        return _flipped(rng, data, rng.randrange(1, 4)), False
    elif how == 10:
        return rng.choice([b"\xff\xfe{}", b"[1,2]", b"null", b"NaN", b"{" * 3000, b""]), False
    else:
        data = rng.choice([[data], {"view": data}, json.dumps(data)])
    return json.dumps(data).encode(), False


def legal_reply(view_body: bytes, reply: dict[str, Any]) -> bool:
    """Whether a 200 reply is one of the legal moves of the view that was sent."""
    try:
        view = view_from_json(json.loads(view_body))
        return move_from_json(reply) in view.legal_moves
    except (ProtocolError, ValueError):
        return False


class KeptAlive:
    """A kept-alive connection to the server, opened again when the server closed it."""

    def __init__(self, server: ServerUnderTest) -> None:
        self.conn = server.connect(ANSWER_WAIT)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[bytes, bytes] | None:
        """The answer as HTTP (head and body, for :meth:`Tally.answer`) and its body;
        None when no answer came."""
        for _attempt in range(2):
            try:
                self.conn.request(method, path, body, headers or {})
                resp = self.conn.getresponse()
                raw = resp.read()
                break
            except (OSError, http.client.HTTPException):
                # Once more on a new connection: the server may have closed the last
                # one (an answer with Connection: close, or the keep-alive timeout).
                self.conn.close()
        else:
            return None
        head = f"HTTP/1.1 {resp.status} X\r\n".encode()
        for name, value in resp.getheaders():
            head += f"{name}: {value}\r\n".encode()
        return head + b"\r\n" + raw, raw

    def close(self) -> None:
        self.conn.close()


def views_phase(server: ServerUnderTest, tally: Tally, rng: random.Random, until: float) -> None:
    pool = sample_views(rng, 120)
    client = KeptAlive(server)
    try:
        for i in range(LIMITS["views"]):
            if i and time.monotonic() >= until:  # at least one, however short the time
                break
            body, valid = mutate_view(rng, rng.choice(pool))
            bot = rng.choice(["", "?bot=greedy", "?bot=random", "?bot=nobody", "?x=1"])
            tally.add("tried")
            answered = client.request("POST", "/move" + bot, body, HEADERS)
            if answered is None:
                tally.add("requests", "no_answer", "refused")
                continue
            answer, raw = answered
            status = tally.answer(answer, sent=body)
            # What the server must answer, whatever else it may: the query is checked
            # first, and a valid view to a bot served gets its move.
            expected = {"?bot=nobody": 404, "?x=1": 422}.get(bot, 200 if valid else None)
            if expected is not None and status != expected:
                sent = f"POST /move{bot} (must get {expected}) ".encode() + body
                tally.add("finding_wrong_status", sent=sent, got=answer)
            if status == 200:
                try:
                    reply = json.loads(raw)
                except ValueError:
                    reply = None
                if not isinstance(reply, dict) or not legal_reply(body, reply):
                    tally.add("finding_illegal_move", sent=body, got=raw)
    finally:
        client.close()


# -- mutated requests -----------------------------------------------------------------


def valid_requests(view: bytes) -> list[bytes]:
    post = (
        b"POST /move?bot=greedy HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(view)).encode() + b"\r\n\r\n" + view
    )
    chunked = (
        b"POST /move HTTP/1.1\r\nHost: fuzz\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n"
        + b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in (view[:7], view[7:]))
        + b"0\r\n\r\n"
    )
    return [
        b"GET /health HTTP/1.1\r\nHost: fuzz\r\n\r\n",
        b"GET /bots HTTP/1.1\r\nHost: fuzz\r\nAccept: */*\r\n\r\n",
        post,
        chunked,
    ]


METHODS = [b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH", b"CONNECT", b"TRACE", b"get"]
METHODS += [b"P\x00ST", b"X" * 300]
PATHS = [b"/", b"/move/", b"//health", b"/%00", b"/../../etc/passwd", b"/" + b"a" * 20000]
PATHS += [b"*", b"http://x/health", b"/move?bot=%ff", b"/move?bot=greedy&bot=random", b"/\xff"]
# The game endpoints; a game dealt here (a body cut to nothing) is left to the cap.
PATHS += [b"/games", b"/games/options", b"/games/nope/move", b"/games/%ff/bot", b"/web/app.js"]
VERSIONS = [b"HTTP/1.0", b"HTTP/2.0", b"HTTP/0.9", b"HTTP/1.1x", b"", b"FTP/1"]
HEADER_LINES = [b"Content-Length: 5", b"Content-Length: -1", b"Content-Length: 1e3"]
HEADER_LINES += [b"Content-Length: 99999999999999999999", b"Transfer-Encoding: gzip"]
HEADER_LINES += [b"Transfer-Encoding: chunked", b"Expect: 100-continue", b"Connection: close"]
HEADER_LINES += [b"Upgrade: websocket\r\nConnection: Upgrade", b"Content-Type: text/plain"]
HEADER_LINES += [b"X: " + b"y" * 20000, b"Bad Header: x", b": empty", b"X:\x00\x01", b" folded"]
HEADER_LINES += [b"Host: a\r\nHost: b"]
BAD_CHUNKS = [b"zz\r\nx\r\n0\r\n\r\n", b"-1\r\n\r\n", b"ffffffffffffffff\r\nx"]
BAD_CHUNKS += [b"3;ext=1\r\nabc\r\n0\r\nTrailer: x\r\n\r\n"]


def mutate_request(rng: random.Random, request: bytes) -> bytes:
    head, _, body = request.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    how = rng.randrange(16)
    if how == 0:
        return request
    if how == 1:
        lines[0] = rng.choice(METHODS) + b" " + lines[0].split(b" ", 1)[1]
    elif how == 2:
        parts = lines[0].split(b" ")
        lines[0] = b" ".join([parts[0], rng.choice(PATHS), *parts[2:]])
    elif how == 3:
        lines[0] = b" ".join(lines[0].split(b" ")[:2] + [rng.choice(VERSIONS)])
    elif how == 4:
        lines.insert(rng.randrange(1, len(lines) + 1), rng.choice(HEADER_LINES))
    elif how == 5:
        lines += [b"X-Many-%d: %d" % (i, i) for i in range(rng.choice([100, 1000]))]
    elif how == 6:
        return request + request  # pipelined
    elif how == 7:
        return request.replace(b"\r\n", rng.choice([b"\n", b"\r", b"\r\r\n"]))
    elif how == 8:
        return request[: rng.randrange(len(request))] + b"\r\n\r\n"
    elif how == 9:
        data = bytearray(request)
        for _ in range(rng.randrange(1, 6)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    elif how == 10:
        cut = rng.randrange(len(request))
        return request[:cut] + bytes(rng.randrange(256) for _ in range(40)) + request[cut:]
    elif how == 11:
        body = rng.choice(BAD_CHUNKS)
        lines = [x for x in lines if not x.lower().startswith(b"content-length")]
        lines.append(b"Transfer-Encoding: chunked")
    elif how == 12:
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    elif how == 13:
        body = body + b" " * rng.choice([70_000, 2_000_000])  # over --max-body
        lines = [x for x in lines if not x.lower().startswith(b"content-length")]
        lines.append(b"Content-Length: %d" % len(body))
    elif how == 14:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300)))
    else:
        return b"\r\n" * rng.randrange(1, 5) + request  # empty lines before the request
    return b"\r\n".join(lines) + b"\r\n\r\n" + body


def send_raw(server: ServerUnderTest, tally: Tally, request: bytes) -> None:
    tally.add("tried")
    try:
        with server.open_socket() as sock:
            sock.sendall(request)
            answer = read_answer(sock)
    except OSError:
        answer = b""
    tally.answer(answer, sent=request)


def requests_phase(server: ServerUnderTest, tally: Tally, rng: random.Random, until: float) -> None:
    bases = [
        base for view in sample_views(rng, 8) for base in valid_requests(json.dumps(view).encode())
    ]
    inputs = (mutate_request(rng, rng.choice(bases)) for _ in range(LIMITS["requests"]))
    with ThreadPoolExecutor(8) as workers:
        pending = set()
        for i, request in enumerate(inputs):
            if i and time.monotonic() >= until:  # at least one, however short the time
                break
            pending.add(workers.submit(send_raw, server, tally, request))
            if len(pending) >= 16:
                done = next(iter(pending))
                done.result()
                pending.discard(done)
        for future in pending:
            future.result()


# -- the game endpoints --------------------------------------------------------------


def game_settings(rng: random.Random) -> dict[str, Any]:
    """Valid settings of POST /games: the server serves ``greedy`` and ``random``,
    which play every preset and seat count."""
    players = rng.choice([2, 3, 4])
    settings: dict[str, Any] = {"preset": rng.choice(sorted(PRESETS)), "players": players}
    settings.update(level=rng.choice(["greedy", "random"]), seed=rng.randrange(1 << 53))
    settings["seat"] = rng.randrange(players)
    if players == 4 and rng.random() < 0.5:
        settings["teams"] = True
    if rng.random() < 0.3:
        settings.update(match=True, target=rng.choice([1, 20, 50]))
    return settings


SETTINGS_JUNK = [*JUNK, 1, 2, 3, 4, 5, 2**53, 2**63, 10**9 + 1, "standard", "greedy", "trained"]
OUT_OF_RANGE = [-1, 0, 5, 2**63, 10**9 + 1]
MOVE_JUNK = [*JUNK, "draw", "pass", "0-0", "6-6@0>6", "1-6@0x", "2-5@1^", "12-12@3>12"]
MOVE_JUNK += ["3-4@99>3", "6-6@-1>6", "1-2@1>2 ", "1-2@1>2\x00"]


def mutate_settings(rng: random.Random, settings: dict[str, Any]) -> tuple[bytes, bool]:
    """The body of POST /games, mutated or not; True when it was left valid."""
    data: dict[str, Any] = dict(settings)
    how = rng.randrange(8)
    if how == 0:
        return json.dumps(data).encode(), True
    if how == 1:
        del data[rng.choice(sorted(data))]  # every field is optional, but not every pair
    elif how == 2:
        data[rng.choice(SETTINGS_FIELDS)] = rng.choice(SETTINGS_JUNK)
    elif how == 3:
        data[rng.choice(["colour", "Preset", "", "x" * 300])] = rng.choice(JUNK)
    elif how == 4:
        return _cut(rng, data), False
    elif how == 5:
        return _flipped(rng, data), False
    elif how == 6:
        return rng.choice([b"[]", b"null", b'"standard"', b"\xff{}", b"{" * 3000, b"{}{}"]), False
    else:
        data[rng.choice(["players", "seat", "target", "seed"])] = rng.choice(OUT_OF_RANGE)
    return json.dumps(data).encode(), False


def mutate_move(
    rng: random.Random, legal: list[str], elsewhere: list[str]
) -> tuple[bytes, dict[str, str], int | None]:
    """A mutated body of POST /games/{id}/move, its headers, and the status it must
    get (None: any documented refusal, or a 200 where the mutation left it legal)."""
    data: Any = {"move": rng.choice(legal or ["draw"])}
    how = rng.randrange(7)
    if how == 0:
        data["move"] = rng.choice(MOVE_JUNK)
    elif how == 1:
        data["move"] = rng.choice(elsewhere or ["draw"])  # another game's move
    elif how == 2:
        fields = ["kind", "tile", "end", "shows", "mode", "bot", "format", "version", "seat"]
        data[rng.choice(fields)] = rng.choice(JUNK)
    elif how == 3:
        return _cut(rng, data), HEADERS, None
    elif how == 4:
        return _flipped(rng, data), HEADERS, None
    elif how == 5:
        data = rng.choice([[data], data["move"], None, {"view": data}])
    else:
        media = rng.choice(["text/plain", "application/json; charset=latin-1", ""])
        return json.dumps(data).encode(), {"Content-Type": media}, 415
    return json.dumps(data).encode(), HEADERS, None


class LiveGame:
    """A game dealt by the phase: its last answer and the engine's replay of its actions."""

    def __init__(self, game: dict[str, Any]) -> None:
        settings = game["settings"]
        rules = Rules.preset(
            settings["preset"], players=settings["players"], teams=settings["teams"]
        ).replace(target_score=settings["target"])
        self.state = MatchState.new(rules, settings["seed"])
        self.seat: int = settings["seat"]
        self.game = game

    def agrees(self, game: Any) -> bool:
        """Whether an answer's game is the engine's: the seat's view, the totals, the
        hand's outcome."""
        if not isinstance(game, dict):
            return False
        outcome = self.state.hand.outcome
        points = None if outcome is None else outcome.points
        return (
            game.get("view") == view_to_json(self.state.view(self.seat))
            and game.get("totals") == list(self.state.totals)
            and (game.get("outcome") or {}).get("points") == points
        )

    def replay(self, moves: list[str]) -> bool:
        """Apply ``moves`` (text forms) in the engine; False when one is not legal there."""
        try:
            for move in moves:
                self.state = self.state.apply(move)
        except ValueError:  # IllegalMoveError and MoveParseError are ValueErrors
            return False
        return True


def game_call(
    client: KeptAlive,
    tally: Tally,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    expected: int | None = None,
) -> tuple[int | None, Any]:
    """One request to the game endpoints, counted: its status (None without an answer)
    and its JSON (None when not JSON). ``expected``: the status it must get."""
    sent = f"{method} {path} ".encode() + (body or b"")[:2000]
    answered = client.request(method, path, body, headers)
    if answered is None:
        tally.add("requests", "no_answer", "refused")
        return None, None
    answer, raw = answered
    status = tally.answer(answer, sent=sent)
    if expected is not None and status != expected:
        tally.add("finding_wrong_status", sent=b"(must get %d) " % expected + sent, got=answer)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, None


def deal_game(
    client: KeptAlive, tally: Tally, rng: random.Random, live: dict[str, LiveGame]
) -> None:
    """POST /games with settings valid or mutated; a game dealt joins ``live`` (the
    oldest is ended first when ``live`` is full)."""
    if len(live) >= GAMES_LIVE:
        oldest = next(iter(live))
        del live[oldest]
        game_call(client, tally, "DELETE", f"/games/{oldest}", expected=200)
    body, valid = mutate_settings(rng, game_settings(rng))
    status, game = game_call(client, tally, "POST", "/games", body, HEADERS, 201 if valid else None)
    if status != 201:
        return
    tally.add("games_dealt")
    entry = LiveGame(game)
    if not entry.agrees(game):
        tally.add(
            "finding_engine_disagrees", sent=b"POST /games " + body, got=json.dumps(game).encode()
        )
    live[game["id"]] = entry


def game_step(
    client: KeptAlive, tally: Tally, rng: random.Random, live: dict[str, LiveGame], gid: str
) -> None:
    """One request on the live game ``gid``, valid or not; its answer checked against
    the engine, and a refusal against the game as it was."""
    entry = live[gid]
    status_before = entry.game["status"]
    legal = entry.game["view"]["legal_moves"]
    path = f"/games/{gid}"
    request: tuple[str, str, bytes | None, dict[str, str], int | None]
    move = json.dumps({"move": rng.choice(legal or ["draw"])}).encode()

    def must(turn: str) -> int:
        return 200 if status_before == turn else 409

    # Each of bot, move and next, with the status it must get now.
    steps: dict[str, tuple[str, str, bytes | None, dict[str, str], int | None]] = {
        "bot_turn": ("POST", path + "/bot", None, {}, must("bot_turn")),
        "your_turn": ("POST", path + "/move", move, HEADERS, must("your_turn")),
        "hand_over": ("POST", path + "/next", None, {}, must("hand_over")),
        "finished": ("DELETE", path, None, {}, 200),
    }
    how = rng.randrange(10)
    if how < 4:  # what moves the game on (a finished game is ended)
        request = steps[status_before]
    elif how == 4:
        request = ("GET", path, None, {}, 200)
    elif how == 5:  # a step, in turn or not
        request = steps[rng.choice(["bot_turn", "your_turn", "hand_over"])]
    elif how <= 8:
        others = [g.game["view"]["legal_moves"] for g in live.values() if g is not entry]
        request = ("POST", path + "/move", *mutate_move(rng, legal, sum(others, [])))
    else:
        request = rng.choice(
            [
                ("GET", "/games/no-such-game", None, {}, 404),
                ("POST", path + "/bot?x=1", None, {}, 422),
                ("POST", path + "/bot", b" " * (DEFAULT_MAX_BODY + 1), {}, 413),
            ]
        )
    method, path, body, headers, expected = request
    if (how < 4 or how == 5) and method in ("POST", "DELETE") and rng.random() < 0.3:
        # The game's version applies as before; another one is refused first.
        version = entry.game["version"]
        if rng.random() < 0.5:
            headers = {**headers, "If-Match": etag(version)}
        else:
            headers = {**headers, "If-Match": etag(version + rng.choice([-1, 1, 9]))}
            expected = 412
    status, answer = game_call(client, tally, method, path, body, headers, expected)
    sent = f"{method} {path} ".encode() + (body or b"")[:2000]
    if status == 200 and method == "DELETE":
        del live[gid]
        return
    if status == 200 and isinstance(answer, dict):
        game: Any = answer
        if path.endswith("/next"):
            entry.state = entry.state.next_hand()
        elif path.endswith(("/move", "/bot")):
            game = answer.get("game")
            event = answer.get("event")
            played = event.get("move") if isinstance(event, dict) else None
            if not isinstance(played, str) or not entry.replay([played]):
                tally.add("finding_illegal_move", sent=sent, got=json.dumps(answer).encode())
        if not isinstance(game, dict) or not entry.agrees(game):
            tally.add("finding_engine_disagrees", sent=sent, got=json.dumps(answer).encode())
            return
        if method == "GET" and game != entry.game:
            tally.add("finding_game_changed", sent=sent, got=json.dumps(answer).encode())
        if game["status"] == "finished" and status_before != "finished":
            tally.add("games_finished")
        entry.game = game
    elif status is not None and 400 <= status < 500 and path.startswith(f"/games/{gid}"):
        # Refused: the game must be as it was.
        now_status, now = game_call(client, tally, "GET", f"/games/{gid}", expected=200)
        if now_status == 200 and now != entry.game:
            tally.add("finding_game_changed", sent=sent, got=json.dumps(now).encode())


def race(
    server: ServerUnderTest,
    client: KeptAlive,
    tally: Tally,
    rng: random.Random,
    gid: str,
    entry: LiveGame,
) -> None:
    """``RACERS`` moves and bot moves sent to one game at once, each on a connection of
    its own: they must apply one at a time, as many actions as answers 200; half the
    time all with the ``If-Match`` of the game's version, and then one at most."""
    tally.add("game_races")
    if_match = {"If-Match": etag(entry.game["version"])} if rng.random() < 0.5 else {}
    if if_match:
        tally.add("game_races_if_match")
    legal = entry.game["view"]["legal_moves"] or ["draw"]
    requests = [
        (f"/games/{gid}/move", json.dumps({"move": rng.choice(legal)}).encode())
        if rng.random() < 0.5
        else (f"/games/{gid}/bot", None)
        for _ in range(RACERS)
    ]
    racers = [KeptAlive(server) for _ in requests]
    gate = threading.Barrier(len(requests))

    def send(k: int) -> tuple[bytes, bytes] | None:
        with contextlib.suppress(threading.BrokenBarrierError):
            gate.wait(ANSWER_WAIT)
        path, body = requests[k]
        return racers[k].request("POST", path, body, {**(HEADERS if body else {}), **if_match})

    try:
        with ThreadPoolExecutor(len(requests)) as pool:
            answers = list(pool.map(send, range(len(requests))))
    finally:
        for racer in racers:
            racer.close()
    sent = b"at once: " + b"; ".join(p.encode() + b" " + (b or b"") for p, b in requests)
    applied = 0
    for answered in answers:
        if answered is None:
            tally.add("requests", "no_answer", "refused")
        elif tally.answer(answered[0], sent=sent) == 200:
            applied += 1
    status, game = game_call(client, tally, "GET", f"/games/{gid}", expected=200)
    if status != 200 or not isinstance(game, dict):
        return
    before = len(entry.game["view"]["history"])
    added = [action["move"] for action in game["view"]["history"][before:]]
    if len(added) != applied or (if_match and applied > 1):
        got = f"{applied} answers 200, {len(added)} actions added: {added}".encode()
        tally.add("finding_race", sent=sent + f" ({if_match})".encode(), got=got)
    if not entry.replay(added) or not entry.agrees(game):
        tally.add("finding_engine_disagrees", sent=sent, got=json.dumps(game).encode())
    entry.game = game


def check_the_cap(client: KeptAlive, tally: Tally, live: dict[str, LiveGame]) -> None:
    """Deal until ``503 too_many_games``: it must come at the cap ``GET /games/options``
    names, and not before; then end every game."""
    tally.add("tried")
    status, options = game_call(client, tally, "GET", "/games/options", expected=200)
    if status != 200 or not isinstance(options, dict):
        return
    cap = options["max_games"]
    dealt: list[str] = []
    body = json.dumps({"level": "random"}).encode()
    for _ in range(cap + 1 - len(live)):
        status, game = game_call(client, tally, "POST", "/games", body, HEADERS)
        if status != 201 or not isinstance(game, dict):
            break
        dealt.append(game["id"])
    if status != 503 or len(dealt) + len(live) != cap:
        got = f"{len(dealt) + len(live)} games live, then status {status}".encode()
        tally.add("finding_cap_not_enforced", sent=b"POST /games (cap %d)" % cap, got=got)
    for gid in [*dealt, *live]:
        game_call(client, tally, "DELETE", f"/games/{gid}", expected=200)
    live.clear()


def games_phase(server: ServerUnderTest, tally: Tally, rng: random.Random, until: float) -> None:
    client = KeptAlive(server)
    live: dict[str, LiveGame] = {}
    try:
        for i in range(LIMITS["games"]):
            if i and time.monotonic() >= until:  # at least one, however short the time
                break
            tally.add("tried")
            if not live or rng.random() < 0.01:
                deal_game(client, tally, rng, live)
                continue
            gid = rng.choice(sorted(live))
            if rng.random() < 0.03:
                race(server, client, tally, rng, gid, live[gid])
            else:
                game_step(client, tally, rng, live, gid)
        check_the_cap(client, tally, live)
    finally:
        client.close()


# -- hang-ups -------------------------------------------------------------------------


def hang_up(server: ServerUnderTest, tally: Tally, rng: random.Random, view: bytes) -> None:
    request = valid_requests(view)[2]
    head_end = request.index(b"\r\n\r\n") + 4
    how = rng.randrange(4)
    cut = [rng.randrange(1, head_end), rng.randrange(head_end, len(request)), len(request)][
        min(how, 2)
    ]
    tally.add("tried", "hangups")
    try:
        sock = server.open_socket()
        try:
            sock.sendall(request[:cut])
            time.sleep(rng.random() * 0.05)
            if how == 3:  # a reset instead of a goodbye
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        finally:
            sock.close()
    except OSError:
        pass


def hangups_phase(server: ServerUnderTest, tally: Tally, rng: random.Random, until: float) -> None:
    views = [json.dumps(v).encode() for v in sample_views(rng, 8)]
    for i in range(LIMITS["hangups"]):
        if i and time.monotonic() >= until:  # at least one, however short the time
            break
        hang_up(server, tally, rng, rng.choice(views))


# -- stalls ---------------------------------------------------------------------------


class Stalled:
    """A client that stalls: silent, trickling a head or a body, or idle after an answer."""

    def __init__(self, server: ServerUnderTest, kind: str, view: bytes) -> None:
        self.kind = kind
        self.sock = server.open_socket()
        self.received = b""
        self.closed = False
        self.pending = b""  # what is left to trickle
        self.first_answer: bytes | None = None
        if kind == "slow_head":
            head = b"GET /health HTTP/1.1\r\nHost: fuzz\r\n" + b"X-Slow: yes\r\n" * 2000
            # Its first byte goes at once: the server's request timeout runs from the
            # connection's opening, so a head that began only with the trickle could be
            # closed as a silent client (no answer) while the other clients connect.
            self.sock.sendall(head[:1])
            self.pending = head[1:]
        elif kind == "slow_body":
            post = valid_requests(view)[2]
            split = post.index(b"\r\n\r\n") + 10
            self.sock.sendall(post[:split])
            self.pending = post[split:]
        elif kind == "idle_keep_alive":
            self.sock.sendall(b"GET /health HTTP/1.1\r\nHost: fuzz\r\n\r\n")
            self.first_answer = read_answer(self.sock)
        self.sock.setblocking(False)

    def trickle(self) -> None:
        if self.pending and not self.closed:
            with contextlib.suppress(BlockingIOError):
                try:
                    self.sock.send(self.pending[:1])
                    self.pending = self.pending[1:]
                except OSError:
                    self.closed = True

    def read(self) -> None:
        try:
            chunk = self.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            self.received += chunk
        else:
            self.closed = True


STALL_KINDS = ("silent", "slow_head", "slow_body", "idle_keep_alive")


def stall_round(server: ServerUnderTest, tally: Tally, views: list[bytes], each: int) -> None:
    clients = [
        Stalled(server, kind, views[i % len(views)]) for kind in STALL_KINDS for i in range(each)
    ]
    tally.add(*["tried"] * len(clients))
    for client in clients:
        if client.first_answer is not None and tally.answer(client.first_answer) != 200:
            tally.add("finding_keep_alive_not_served", got=client.first_answer)
    bound = time.monotonic() + max(REQUEST_TIMEOUT, KEEP_ALIVE_TIMEOUT) + MARGIN
    next_byte = time.monotonic()
    try:
        while time.monotonic() < bound and not all(c.closed for c in clients):
            if time.monotonic() >= next_byte:
                for client in clients:
                    client.trickle()
                next_byte += TRICKLE
            socks = [c.sock for c in clients if not c.closed]
            readable, _, _ = select.select(socks, [], [], 0.05)
            for client in clients:
                if client.sock in readable:
                    client.read()
        for client in clients:
            if not client.closed:
                tally.add("finding_stall_not_closed", sent=client.kind.encode())
                continue
            tally.add("timeout_closes", "refused")
            if client.kind in ("slow_head", "slow_body"):
                # Part of a request came: the server says why it gives up.
                answered = status_of(client.received) == 408
                key = "answered_408" if answered else "finding_stall_not_408"
                tally.add(key, sent=client.kind.encode(), got=client.received)
            elif client.received:
                tally.add(
                    "finding_stall_answered_unasked", sent=client.kind.encode(), got=client.received
                )
    finally:
        for client in clients:
            client.sock.close()


def stalls_phase(server: ServerUnderTest, tally: Tally, rng: random.Random, until: float) -> None:
    views = [json.dumps(v).encode() for v in sample_views(rng, 4)]
    # Three of each kind: twelve connections, under the limit of sixteen.
    for _ in range(LIMITS["stalls"]):
        stall_round(server, tally, views, 3)
        if time.monotonic() >= until:
            break


# -- a burst past the connection limit ------------------------------------------------


def burst_round(server: ServerUnderTest, tally: Tally, view: bytes) -> None:
    count = 2 * MAX_CONNECTIONS + 8
    request = valid_requests(view)[2]
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            socks.append(server.open_socket())
        tally.add(*["tried"] * count)

        def post(sock: socket.socket) -> tuple[bytes, bool]:
            with contextlib.suppress(OSError):
                sock.sendall(request)
            answer = read_answer(sock)
            return answer, bool(answer) or read_until_closed(sock, ANSWER_WAIT)[1]

        with ThreadPoolExecutor(count) as clients:
            results = list(clients.map(post, socks))
        for answer, ended in results:
            status = tally.answer(answer, sent=request)
            if status == 200:
                tally.add("burst_served")
            elif not answer:
                tally.add("burst_closed" if ended else "finding_burst_hung", sent=request)
    finally:
        for sock in socks:
            sock.close()


def burst_phase(server: ServerUnderTest, tally: Tally, rng: random.Random, until: float) -> None:
    view = json.dumps(sample_views(rng, 1)[0]).encode()
    for _ in range(LIMITS["burst"]):
        burst_round(server, tally, view)
        if time.monotonic() >= until:
            break


# -- the campaign ---------------------------------------------------------------------

PHASES: dict[str, Callable[[ServerUnderTest, Tally, random.Random, float], None]] = {
    "views": views_phase,
    # Before the raw requests, which may deal games (a body cut to nothing) and never
    # end them: this phase counts the live games against the cap.
    "games": games_phase,
    "requests": requests_phase,
    "hangups": hangups_phase,
    "stalls": stalls_phase,
    "burst": burst_phase,
}


def run_http_campaign(
    seconds: float = 60.0, seed: int = 0, examples: list[str] | None = None
) -> dict[str, int]:
    """Fuzz and load a server on loopback for about ``seconds``; the counts (module docs).
    ``examples``, when given, gets what was sent and answered for the first findings
    of each kind, and the server's first traceback."""
    if not seconds > 0:
        raise ValueError(f"run_http_campaign: seconds must be > 0, got {seconds!r}")
    rng = random.Random(seed)
    tally = Tally()
    server = ServerUnderTest(seed)
    try:
        if not server.healthy():
            raise RuntimeError(f"the server does not answer /health:\n{server.err.read_text()}")
        # Measured with no client connected: the listening socket, the event loop's.
        time.sleep(0.5)
        before = server.descriptors()
        start = time.monotonic()
        for name, phase in PHASES.items():
            phase(server, tally, rng, time.monotonic() + SHARES[name] * seconds)
        # Every client is gone; the server must let go of every connection.
        wait = max(REQUEST_TIMEOUT, KEEP_ALIVE_TIMEOUT) + MARGIN
        after = server.settled_descriptors(before, wait)
        healthy = server.healthy()
        tally.counts["seconds"] = round(time.monotonic() - start)
        code = server.stop()
        err = server.err.read_text()
    finally:
        server.close()
    counts = tally.counts
    counts["descriptors_before"] = before
    counts["descriptors_after"] = after
    counts["finding_descriptors_leaked"] = max(0, after - before)
    counts["finding_no_health_at_end"] = int(not healthy)
    counts["finding_traceback"] = err.count("Traceback")
    counts["finding_unclean_stop"] = int(code != 0)
    counts["hangup_lines"] = err.count(" hung up ")
    if examples is not None:
        examples += tally.examples
        if "Traceback" in err:
            at = err.index("Traceback")
            examples.append("finding_traceback: " + err[max(0, at - 200) : at + 3000])
    counts["findings"] = sum(v for k, v in counts.items() if k.startswith("finding_"))
    for key in (
        "tried",
        "accepted",
        "refused",
        "requests",
        "no_answer",
        "timeout_closes",
        "answered_408",
        "busy_503",
        "burst_served",
        "burst_closed",
        "hangups",
        "games_dealt",
        "games_finished",
        "game_races",
        "game_races_if_match",
        "games_503",
    ):
        counts.setdefault(key, 0)
    for status_class in range(2, 6):
        counts.setdefault(f"status_{status_class}xx", 0)
    return dict(sorted(counts.items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.fuzz_http",
        description="Fuzz and load the HTTP bot server on loopback; print the counts.",
    )
    parser.add_argument(
        "--seconds", type=positive_number, default=60.0, help="about how long (default 60)"
    )
    parser.add_argument("--seed", type=seed_arg, default=0, help="seed of the inputs (default 0)")
    args = parser.parse_args(argv)
    examples: list[str] = []
    counts = run_http_campaign(args.seconds, args.seed, examples)
    print(json.dumps(counts, indent=1))
    for example in examples:
        print(example, file=sys.stderr)
    return 1 if counts["findings"] else 0


if __name__ == "__main__":
    run_main(main)
