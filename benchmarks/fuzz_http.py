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
``requests``
    Raw HTTP requests, valid ones mutated: methods, paths, versions, header
    names and values, ``Content-Length`` and ``Transfer-Encoding`` (and their
    conflicts), chunk sizes, oversized heads, ``Expect: 100-continue``,
    pipelining, bytes flipped, inserted or cut. Sent by eight clients at once.
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
of the ``finding_*`` counts: 5xx other than ``busy``, an answer that is not HTTP
or not a documented error, an illegal move, a stalled client the server did not
close, a burst client left hanging, descriptors leaked, a traceback, no ``/health``
at the end, an unclean stop, a views answer of another status than the one
required); and details: ``requests``, ``status_2xx`` ...
``status_5xx``, ``no_answer``, ``timeout_closes`` (connections closed by the
server's timeouts), ``answered_408``, ``busy_503``, ``burst_served``,
``burst_closed``, ``hangups``, ``hangup_lines`` (the server's one-line notes),
``descriptors_before``, ``descriptors_after``.
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

from benchmarks.bot import ServerProcess
from matador_env.engine import PRESETS, HandState, Rules
from matador_env.flags import positive_number, seed_arg
from matador_env.protocol import ProtocolError, move_from_json, view_from_json, view_to_json

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
SHARES = {"views": 0.35, "requests": 0.3, "hangups": 0.1, "stalls": 0.15, "burst": 0.1}
LIMITS = {"views": 20_000, "requests": 20_000, "hangups": 2_000, "stalls": 20, "burst": 5}
"""Most inputs (views, requests, hang-ups) or rounds (stalls, bursts) of a phase."""
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
            elif status >= 500:
                keys.append("finding_5xx")
            elif status >= 400:
                keys.append("refused")
                # What h11 cannot parse gets the JSON bad_request too (uvicorn's own
                # 400 is plain text); the answer to HEAD has no body to say what was wrong.
                head = sent.startswith(b"HEAD ")
                if not head and kind not in DOCUMENTED_KINDS:
                    keys.append("finding_undocumented_error")
            else:
                keys.append("accepted")
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
        text = json.dumps(data).encode()
        return text[: rng.randrange(len(text))], False
    elif how == 9:
        flipped = bytearray(json.dumps(data).encode())
        for _ in range(rng.randrange(1, 4)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        return bytes(flipped), False
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


def views_phase(server: ServerUnderTest, tally: Tally, rng: random.Random, until: float) -> None:
    pool = sample_views(rng, 120)
    conn = server.connect(ANSWER_WAIT)
    try:
        for i in range(LIMITS["views"]):
            if i and time.monotonic() >= until:  # at least one, however short the time
                break
            body, valid = mutate_view(rng, rng.choice(pool))
            bot = rng.choice(["", "?bot=greedy", "?bot=random", "?bot=nobody", "?x=1"])
            tally.add("tried")
            for _attempt in range(2):
                try:
                    conn.request("POST", "/move" + bot, body, {"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    raw = resp.read()
                    break
                except (OSError, http.client.HTTPException):
                    # Once more on a new connection: the server may have closed the last
                    # one (an answer with Connection: close, or the keep-alive timeout).
                    conn.close()
            else:
                tally.add("requests", "no_answer", "refused")
                continue
            head = f"HTTP/1.1 {resp.status} X\r\n".encode()
            for name, value in resp.getheaders():
                head += f"{name}: {value}\r\n".encode()
            answer = head + b"\r\n" + raw
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
        conn.close()


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
            self.pending = b"GET /health HTTP/1.1\r\nHost: fuzz\r\n" + b"X-Slow: yes\r\n" * 2000
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
    raise SystemExit(main())
