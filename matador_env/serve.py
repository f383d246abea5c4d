"""An HTTP bot server over the JSON protocol: ``python -m matador_env.serve``.

::

    pip install '.[serve]'    # in the checkout: Starlette on uvicorn, onnxruntime
    python -m matador_env.serve --port 8000    # --bots trained,casual,greedy,random

A game frontend in any language sends a seat's *view* (:mod:`matador_env.protocol`)
and gets the bot's *move* back. The server is a Starlette app on uvicorn;
:func:`create_app` builds the app for tests or for embedding in another ASGI server.

Endpoints
=========

``GET /health``
    ``200 {"status": "ok", "protocol": 1, "version": "0.1.0"}`` (the package version).

``GET /bots``
    The bots served, in order, and the default one::

        {"default": "trained",
         "bots": [{"name": "trained", "default": true, "level": "trained",
                   "rules": "view", "configuration": null,
                   "configurations": ["standard", "standard_4p", ...],
                   "plays": "the view's rules, ...", "about": "...", "bot": "trained"},
                  {"name": "trained:standard_4p", "default": false, "level": "trained",
                   "rules": {"players": 4, ...every field}, "configuration": "standard_4p",
                   "plays": "standard_4p (standard, 4 players, each for himself)",
                   "about": "...", "bot": "trained:standard_4p"},
                  ...,
                  {"name": "greedy", ..., "rules": "any", "configuration": null, ...}]}

    By default the trained levels are served for every configuration a bot is
    shipped for (:mod:`matador_env.configs`; ``python -m matador_env.bot levels``):
    one entry ``LEVEL:CONFIGURATION`` per configuration and level (``trained:leiden``,
    ``casual:pagat_teams``), each playing that configuration's rules only, and the
    plain level (``trained``, ``casual``), which plays every view with the bot of
    the view's rules (``rules`` is ``"view"``; ``configurations`` lists them).
    ``rules`` is otherwise ``"any"`` for a bot that plays every rules configuration,
    else the rules it is limited to in the protocol's form (a preset name, or every
    field); ``configuration`` names the configuration of those rules (or null);
    ``bot`` is the bot's own name.

``POST /move[?bot=NAME]``
    Body: a view, ``Content-Type: application/json``, UTF-8. ``bot`` picks a bot
    from ``GET /bots`` (default: the default bot); it is a query parameter because
    the view format allows no extra fields. A plain trained level (``trained``,
    ``casual``, the default ``trained`` included) picks the bot whose
    configuration's rules equal the view's rules exactly; a view whose rules have
    no shipped bot is answered ``422 no_bot`` naming the shipped configurations
    (never another bot's move). Answer ``200``: the move object of the protocol
    plus ``"bot"``, the name from ``GET /bots`` of the bot that chose it (for a
    plain level, its configuration's entry, e.g. ``trained:standard_4p``), e.g.
    ``{"format": "matador-move", "version": 1, "move": "1-6@0>1", "kind": "play",
    "tile": "1-6", "end": 0, "shows": 1, "mode": "inline", "bot": "greedy"}`` (the
    protocol's optional ``bot`` field; :func:`matador_env.protocol.move_from_json`
    reads the reply as it is). The move is always one of the view's legal moves.

``GET /`` and ``/games/...``
    The browser page, on which a person plays against the bot levels, and the small
    JSON game endpoints it uses (deal, the person's move, one bot move); they are
    :mod:`matador_env.web` and are documented in ``docs/browser.md``. They offer
    only the levels of the bots served (``GET /bots``), each for the rules its bot
    plays: with ``--bots greedy`` the page deals games against ``greedy`` alone, and
    ``POST /games`` refuses another level (``422 invalid``, ``field`` ``level``).
    Exported policies (``NAME=PATH``) are served on ``/move`` only.

Errors
======

Every error is JSON ``{"error": KIND, "field": PATH or null, "message": TEXT}``:

======  ==========================  ================================================
status  ``error``                   when
======  ==========================  ================================================
400     ``bad_json``                the body is not UTF-8 JSON, or is JSON that readers
                                    take differently: a key twice in one object,
                                    ``NaN`` (``field`` null)
400     ``not_an_object``           the body is JSON but not an object
400     ``bad_request``             a malformed ``Content-Length`` header (``field``
                                    ``header.content-length``), or anything else that
                                    is not HTTP/1.1 (``field`` null); the connection
                                    is then closed
404     ``not_found``               no such path (``/move/`` is not ``/move``: no
                                    redirect)
404     ``unknown_bot``             ``?bot=`` names no bot served (``field`` ``query.bot``)
405     ``method_not_allowed``      e.g. ``GET /move`` (an ``Allow`` header lists the methods)
408     ``timeout``                 the request's headers and body did not all arrive
                                    within ``--request-timeout`` seconds (the
                                    connection is then closed)
413     ``too_large``               the body is over ``--max-body`` bytes: by its
                                    ``Content-Length``, or counted while it streams
                                    (a chunked body has no length)
415     ``unsupported_media_type``  ``Content-Type`` is not ``application/json``
                                    (``field`` ``header.content-type``)
422     ``invalid``                 the protocol refuses the view (``field`` is the path
                                    of the value at fault, e.g. ``history[3].move``,
                                    ``hand[0]``, ``rules``); a view in which the seat
                                    has nothing to do (``seat``: another seat is to
                                    act; ``history``: the hand is over); a query
                                    parameter the endpoint does not take
                                    (``query.NAME``): ``/move`` takes ``bot``, the
                                    other JSON endpoints none (the page at ``/`` and
                                    its files ignore the query, which the page reads)
422     ``no_bot``                  a plain trained level (``trained``, ``casual``)
                                    and a view whose rules have no shipped bot
                                    (``field`` ``rules``; the message names the
                                    shipped configurations)
500     ``internal``                never expected: a bug, logged by the server, which
                                    keeps serving
503     ``busy``                    ``--max-connections`` connections are open; the
                                    answer has ``Retry-After: 1`` and closes the
                                    connection
======  ==========================  ================================================

Concurrency
===========

Bots are safe to share between threads (:mod:`matador_env.bot`). Each move is
computed in a worker thread (``run_in_threadpool``), so the event loop keeps
answering ``/health`` and reading other requests while moves are computed.

Connections
===========

The server speaks HTTP/1.1 (uvicorn's h11 protocol) with keep-alive, and guards
its connections so that slow or silent clients cannot hold them:

``--request-timeout SECONDS`` (default 10)
    A request's headers and body must all arrive within this time, counted from
    the connection's opening or, on a kept-alive connection, from the first byte
    of the next request. Trickling bytes does not extend it (a *slowloris*
    client). A client that sent part of a request gets ``408`` (``timeout``); one
    that sent nothing is closed without an answer. Computing the move is not
    counted. (uvicorn alone times out only the idle time between two requests.)
``--keep-alive-timeout SECONDS`` (default 5)
    A connection idle after an answer is closed after this time.
``--max-connections N`` (default 100)
    At most this many connections are served at once. Past it, up to N more are
    accepted only to answer their request with ``503`` (``busy``, ``Retry-After:
    1``) and close; connections beyond those are closed at once, unanswered. So
    the server holds at most 2N connections, and never queues work it cannot do.

A body the server answers before reading it (a ``404``, a ``415``, ``GET /health``)
is dropped as it arrives, up to 1 MiB; past that the connection is closed, as it is
after a ``413`` for a body that large.

A client that hangs up before its answer is sent is logged as one line
(``client 127.0.0.1:51234 hung up before its request was complete``), and so is
a connection closed by a timeout; neither is an error.

Command line
============

``python -m matador_env.serve [--host 127.0.0.1] [--port 8000] [--bots LIST]
[--config NAME] [--max-body BYTES] [--request-timeout SECONDS]
[--keep-alive-timeout SECONDS] [--max-connections N] [--seed N] [--log-level info]
[--no-access-log]``

``--bots`` is a comma-separated list of levels (``trained``, ``casual``,
``greedy``, ``random``), one configuration's trained bot (``trained:leiden``), or
``NAME=PATH`` entries for exported policies (``mine=runs/x/best``); the first is
the default bot. Without ``--config`` the trained levels serve every shipped
configuration as described under ``GET /bots``. ``--config NAME`` (or its alias
``--preset``; a configuration, or a preset for its own seats) serves one
configuration only: ``trained`` and ``casual`` are then that configuration's bots
and refuse other rules (``422 invalid``, ``field`` ``rules``), and exported
policies are checked against its rules, as is a ``LEVEL:CONFIGURATION`` entry
(``--bots trained:pagat --config standard`` is refused). When ``--bots`` is not
given, levels with no bot to serve are left out with a note. The browser page and its game
endpoints use the same bots: they offer only the levels served, each where its
bot plays (so ``--config leiden`` offers ``trained`` and ``casual`` on ``leiden``
for two only). ``--port 0`` picks a free port.
The first line printed is ``serving on http://HOST:PORT``; Ctrl-C (or SIGTERM)
stops the server after the requests in flight are answered, and the last line is
``stopped``, with status 0: its normal end, not an interruption (status 130) as for
the other commands.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import logging
import signal
import socket
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from . import __version__
from .bot import LEVELS, Bot, BotError, LevelBot, load_bot, load_level, resolve_rules
from .configs import CONFIGURATIONS
from .engine import PRESETS
from .engine.tiles import parse_digits
from .flags import integer_arg, seed_arg
from .policy import bots_dir
from .protocol import PROTOCOL_VERSION, ProtocolError, loads, move_to_json, view_from_json
from .streams import run_main

try:
    import h11
    import uvicorn
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.exceptions import HTTPException
    from starlette.requests import ClientDisconnect, Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import BaseRoute, Route
    from starlette.types import Receive, Scope, Send
    from uvicorn.protocols.http.h11_impl import H11Protocol
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "matador_env.serve needs Starlette and uvicorn: pip install '.[serve]' in the checkout"
    ) from exc

__all__ = [
    "DEFAULT_BOTS",
    "DEFAULT_MAX_BODY",
    "ConnectionLimits",
    "RequestFailed",
    "check_content_type",
    "check_query",
    "create_app",
    "load_bots",
    "main",
    "parse_json",
    "read_body",
    "server_config",
]

DEFAULT_BOTS = ("trained", "casual", "greedy", "random")
DEFAULT_MAX_BODY = 64 * 1024
DRAIN_LIMIT = 1 << 20
"""An over-limit body up to this size is read to its end and dropped, so that the
connection stays usable; a larger one gets its answer with ``Connection: close``."""
DRAIN_TIMEOUT = 5.0
"""Seconds to wait for each further chunk of an over-limit body being dropped."""
CONTENT_LENGTH_DIGITS = 20
"""The most digits a Content-Length may have, as h11 allows (far beyond any body)."""

log = logging.getLogger("matador_env.serve")


# -- guarding connections -------------------------------------------------------------


@dataclass(frozen=True)
class ConnectionLimits:
    """How long a client may take and how many may connect (module docs, *Connections*)."""

    request_timeout: int = 10
    """Seconds for a request's headers and body to arrive."""
    keep_alive_timeout: int = 5
    """Seconds a connection may stay idle after an answer."""
    max_connections: int = 100
    """Connections served at once; as many more get a 503, the rest are closed."""

    def __post_init__(self) -> None:
        for name in ("request_timeout", "keep_alive_timeout", "max_connections"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"ConnectionLimits: {name} must be a positive integer, got {value!r}"
                )


class _ConnectionBook:
    """The connections of one server, shared by their protocol objects."""

    BUSY_LOG_INTERVAL = 10.0
    """Seconds between two warnings that connections are being turned away."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        self.served: set[asyncio.Protocol] = set()
        self.turned_away: set[asyncio.Protocol] = set()
        self.refused_since_log = 0
        self.last_busy_log = -self.BUSY_LOG_INTERVAL
        body = {
            "error": "busy",
            "field": None,
            "message": f"the server is at its limit of {limits.max_connections} "
            "connections; try again in a moment",
        }
        self.busy_body = json.dumps(body).encode()
        self.timeout_answer = _raw_json_answer(
            408,
            "Request Timeout",
            {
                "error": "timeout",
                "field": None,
                "message": "the request did not arrive within "
                f"{limits.request_timeout} s (--request-timeout); send it whole",
            },
        )

    def note_refused(self, now: float) -> None:
        self.refused_since_log += 1
        if now - self.last_busy_log >= self.BUSY_LOG_INTERVAL:
            log.warning(
                "at the limit of %d connections: %d turned away (503 or closed) "
                "since the last note",
                self.limits.max_connections,
                self.refused_since_log,
            )
            self.last_busy_log = now
            self.refused_since_log = 0

    async def busy(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI app of a connection past the limit: 503, then the connection closes."""
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(self.busy_body)).encode()),
            (b"retry-after", b"1"),
            (b"connection", b"close"),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": self.busy_body})


def _raw_json_answer(status: int, reason: str, body: dict[str, Any]) -> bytes:
    """A whole HTTP/1.1 answer that closes the connection, as bytes: for writing when
    no request was parsed (h11 can only answer a request it has read)."""
    data = json.dumps(body).encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(data)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + data


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a request deadline and a connection limit.

    uvicorn arms its keep-alive timer only after an answer, and every byte received
    cancels it: a connection that never sends a request, or sends one a byte at a
    time, is held for ever. Here a deadline runs from the opening of the connection,
    or from the first byte of a later request, until the request has fully arrived.
    Use :meth:`bound` to get the class for a set of limits.
    """

    book: ClassVar[_ConnectionBook]

    @classmethod
    def bound(cls, limits: ConnectionLimits) -> type[GuardedH11Protocol]:
        """A protocol class for one server, counting its connections against ``limits``."""
        return type(cls.__name__, (cls,), {"book": _ConnectionBook(limits)})

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._deadline: asyncio.TimerHandle | None = None
        self._fresh = True  # no request started on this connection yet
        self._peer_closed = False
        self._dropped = 0  # bytes of an unread body received after its answer
        book, limits = self.book, self.book.limits
        if len(book.served) < limits.max_connections:
            book.served.add(self)
        elif len(book.turned_away) < limits.max_connections:
            book.turned_away.add(self)
            book.note_refused(self.loop.time())
            self.app = book.busy
        else:
            book.note_refused(self.loop.time())
            self.transport.abort()
            return
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.SEND_BODY:
            # Answered before its body was read (a 404, a 415, an endpoint that takes
            # no body): uvicorn drops the rest for as long as it comes. As for a body
            # over --max-body, DRAIN_LIMIT bytes are dropped, then the connection ends.
            self._dropped += len(data)
            if self._dropped > DRAIN_LIMIT:
                self.transport.close()
        self._watch()

    def on_response_complete(self) -> None:
        self._dropped = 0
        super().on_response_complete()
        self._watch()  # a pipelined request may have started

    def send_400_response(self, msg: str) -> None:
        # h11 could not parse the request (a malformed Content-Length, a bad request
        # line), or found garbage after a request it had passed to the app (a bad
        # chunk, bytes after "Connection: close"). uvicorn's own 400 is text/plain;
        # this one is the documented JSON error. The 400 ends the connection, so the
        # app must not answer too: its answer would break h11's state and log a
        # traceback.
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True
            cycle.message_event.set()
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self.transport.write(self._bad_request_answer(msg))
        # else part of an answer is out already: no room for a 400
        self.transport.close()

    @staticmethod
    def _bad_request_answer(msg: str) -> bytes:
        # uvicorn calls send_400_response in its "except h11.RemoteProtocolError"
        # clause, so the error is at hand, and its text says what was wrong ("bad
        # Content-Length"); uvicorn's own message says only that something was.
        error = sys.exc_info()[1]
        detail = str(error) if isinstance(error, h11.RemoteProtocolError) else ""
        detail = (detail or msg)[:200]
        field = "header.content-length" if "content-length" in detail.lower() else None
        body = {
            "error": "bad_request",
            "field": field,
            "message": f"the request is not valid HTTP ({detail}); the connection is closed",
        }
        return _raw_json_answer(400, "Bad Request", body)

    def eof_received(self) -> None:
        self._peer_closed = True
        super().eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        hung_up = self._mid_request() if self._peer_closed or exc is not None else ""
        if hung_up:
            log.info("%s hung up %s", self._client_name(), hung_up)
        self._cancel_deadline()
        self.book.served.discard(self)
        self.book.turned_away.discard(self)
        super().connection_lost(exc)

    def _mid_request(self) -> str:
        """How far the current request got ("" when there is none)."""
        theirs = self.conn.their_state
        if theirs is h11.SEND_BODY or (theirs is h11.IDLE and self.conn.trailing_data[0]):
            return "before its request was complete"
        if self.cycle is not None and not self.cycle.response_complete:
            return "before its answer was sent"
        return ""

    def _watch(self) -> None:
        """Arm the deadline while a request is awaited or arriving, else disarm it."""
        if self.transport.is_closing():
            self._cancel_deadline()
            return
        theirs = self.conn.their_state
        if theirs is not h11.IDLE:
            self._fresh = False
        awaited = theirs is h11.SEND_BODY or (
            theirs is h11.IDLE and (self._fresh or bool(self.conn.trailing_data[0]))
        )
        if not awaited:
            self._cancel_deadline()
        elif self._deadline is None:
            timeout = self.book.limits.request_timeout
            self._deadline = self.loop.call_later(timeout, self._deadline_passed)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _deadline_passed(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        started = self._mid_request()
        if started and self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE):
            self.transport.write(self.book.timeout_answer)
        log.info(
            "closed the connection of %s: %s within %d s (--request-timeout)",
            self._client_name(),
            "its request was not complete" if started else "no request",
            self.book.limits.request_timeout,
        )
        self.transport.close()

    def _client_name(self) -> str:
        # The address is unknown when the client was gone before its connection was taken.
        return f"client {self.client[0]}:{self.client[1]}" if self.client else "a client"


def server_config(
    app: Starlette, limits: ConnectionLimits | None = None, **options: Any
) -> uvicorn.Config:
    """A uvicorn configuration serving ``app`` with :class:`GuardedH11Protocol` under
    ``limits``; ``options`` go to :class:`uvicorn.Config` as they are."""
    limits = ConnectionLimits() if limits is None else limits
    return uvicorn.Config(
        app,
        http=GuardedH11Protocol.bound(limits),
        ws="none",
        timeout_keep_alive=limits.keep_alive_timeout,
        **options,
    )


class RequestFailed(Exception):
    """A request answered with a JSON error."""

    def __init__(
        self,
        status: int,
        kind: str,
        message: str,
        field: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.field = field
        self.headers = dict(headers or {})

    def response(self) -> JSONResponse:
        return error_response(self.status, self.kind, self.message, self.field, self.headers)


def error_response(
    status: int,
    kind: str,
    message: str,
    field: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    body = {"error": kind, "field": field, "message": message}
    return JSONResponse(body, status_code=status, headers=dict(headers or {}))


# -- reading a request ----------------------------------------------------------------


def check_query(request: Request, allowed: Sequence[str] = ()) -> None:
    """Refuse with 422 a query parameter the endpoint does not take: a misspelt one
    (``?bots=``) would otherwise be ignored without a word."""
    unknown = sorted(set(request.query_params) - set(allowed))
    if unknown:
        takes = f"the only one is {allowed[0]!r}" if len(allowed) == 1 else "it takes none"
        raise RequestFailed(
            422,
            "invalid",
            f"unknown query parameter {unknown[0][:40]!r} on {request.url.path}; {takes}",
            f"query.{unknown[0][:40]}",
        )


def check_content_type(request: Request, what: str = "the view") -> None:
    """Refuse with 415 a body that is not declared as UTF-8 JSON; the message asks for
    ``what`` (the body the endpoint takes)."""
    raw = request.headers.get("content-type")
    media, _, params = (raw or "").partition(";")
    charset = ""
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
    if media.strip().lower() != "application/json" or charset not in ("", "utf-8", "utf8"):
        got = "no Content-Type" if raw is None else f"Content-Type {raw!r}"
        raise RequestFailed(
            415,
            "unsupported_media_type",
            f"send {what} as JSON with Content-Type: application/json (UTF-8); got {got}",
            "header.content-type",
        )


async def _drain(chunks: AsyncIterator[bytes], budget: int) -> bool:
    """Read and drop the rest of a body, up to ``budget`` bytes; True when it ended."""
    while budget >= 0:
        try:
            chunk = await asyncio.wait_for(chunks.__anext__(), DRAIN_TIMEOUT)
        except StopAsyncIteration:
            return True
        except (asyncio.TimeoutError, OSError):
            return False
        budget -= len(chunk)
    return False


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 past ``limit`` bytes whatever the headers say."""
    too_large = f"the body is over the limit of {limit} bytes"
    declared = request.headers.get("content-length")
    if declared is not None:
        # uvicorn's h11 refuses a bad Content-Length before the app sees it (see
        # GuardedH11Protocol.send_400_response); another ASGI server may pass it on.
        length = parse_digits(declared.strip(), CONTENT_LENGTH_DIGITS)
        if length is None:
            raise RequestFailed(
                400,
                "bad_request",
                "Content-Length must be a number of bytes in the digits 0-9 (at most "
                f"{CONTENT_LENGTH_DIGITS} of them), got {declared[:40]!r}",
                "header.content-length",
            )
        if length > limit:
            # uvicorn drops the unread body of a kept-alive connection; a huge one
            # is not worth receiving, so that connection is closed instead.
            close = {"connection": "close"} if length > DRAIN_LIMIT else {}
            raise RequestFailed(
                413, "too_large", f"{too_large} (Content-Length: {length})", headers=close
            )
    body = bytearray()
    chunks = request.stream().__aiter__()
    async for chunk in chunks:
        body += chunk
        if len(body) > limit:  # a chunked body, or one longer than it said
            ended = await _drain(chunks, DRAIN_LIMIT)
            raise RequestFailed(
                413,
                "too_large",
                f"{too_large} (counted while it was sent)",
                headers={} if ended else {"connection": "close"},
            )
    return bytes(body)


def parse_json(body: bytes, what: str = "a view") -> dict[str, Any]:
    """The body as a JSON object, refused with 400 otherwise (read by
    :func:`matador_env.protocol.loads`: a key twice in one object is refused too);
    the message names ``what`` the object is to be (the body the endpoint takes)."""
    try:
        data = loads(body, "the body")
    except ProtocolError as exc:
        raise RequestFailed(400, "bad_json", exc.message) from None
    if not isinstance(data, dict):
        raise RequestFailed(
            400,
            "not_an_object",
            f"the body must be a JSON object ({what}), got a JSON {_json_type(data)}",
        )
    return data


def _json_type(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


def _decide(bot: Bot, data: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The move for a view and, for a plain trained level, the name of the bot of the
    view's configuration that chose it (run in a worker thread). ProtocolError and
    RequestFailed are the client's fault; anything else is a bug."""
    view = view_from_json(data, rules=bot.rules)
    chosen: str | None = None
    if isinstance(bot, LevelBot):
        try:
            bot = bot.bot_for(view.rules)
        except BotError as exc:
            raise RequestFailed(422, "no_bot", str(exc), "rules") from None
        chosen = bot.name
    if not view.legal_moves:
        # view_from_json refuses a history that ends the hand (ProtocolError at
        # "history"), so a view without moves is one where another seat is to act.
        raise RequestFailed(
            422,
            "invalid",
            f"seat {view.seat} is not to act: seat {view.to_move} is (by the history)",
            "seat",
        )
    return move_to_json(bot.choose(view)), chosen


# -- the app --------------------------------------------------------------------------


def create_app(
    bots: Mapping[str, Bot] | None = None,
    max_body: int = DEFAULT_MAX_BODY,
    default: str | None = None,
) -> Starlette:
    """The Starlette app serving ``bots`` (name -> bot; default: :func:`load_bots` of
    :data:`DEFAULT_BOTS`, every shipped configuration). ``default`` is the bot of a request
    without ``?bot=`` (default: the first). ``max_body`` limits request bodies."""
    if bots is None:
        bots = load_bots(DEFAULT_BOTS, strict=False)
    bots = dict(bots)
    if not bots:
        raise ValueError("create_app: no bots to serve")
    for name, bot in bots.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"create_app: a bot name must be a non-empty string, got {name!r}")
        if not isinstance(bot, Bot):
            raise TypeError(f"create_app: bot {name!r} is a {type(bot).__name__}, not a Bot")
    default = next(iter(bots)) if default is None else default
    if default not in bots:
        raise ValueError(f"create_app: the default bot {default!r} is not among {list(bots)}")
    if isinstance(max_body, bool) or not isinstance(max_body, int) or max_body < 1:
        raise ValueError(f"create_app: max_body must be a positive integer, got {max_body!r}")

    catalogue = {
        "default": default,
        "bots": [
            {
                "name": name,
                "default": name == default,
                **{k: v for k, v in bot.describe().items() if k != "name"},
                "bot": bot.name,
            }
            for name, bot in bots.items()
        ],
    }

    async def health(request: Request) -> Response:
        try:
            check_query(request)
        except RequestFailed as exc:
            return exc.response()
        return JSONResponse({"status": "ok", "protocol": PROTOCOL_VERSION, "version": __version__})

    async def list_bots(request: Request) -> Response:
        try:
            check_query(request)
        except RequestFailed as exc:
            return exc.response()
        return JSONResponse(catalogue)

    async def move(request: Request) -> Response:
        try:
            check_query(request, ["bot"])
            names = request.query_params.getlist("bot")
            if len(names) > 1:
                raise RequestFailed(422, "invalid", "give ?bot= once", "query.bot")
            name = names[0] if names else default
            bot = bots.get(name)
            if bot is None:
                raise RequestFailed(
                    404,
                    "unknown_bot",
                    f"no bot {name!r} here; the bots are {', '.join(bots)} (GET /bots)",
                    "query.bot",
                )
            check_content_type(request)
            data = parse_json(await read_body(request, max_body))
            reply, chosen = await run_in_threadpool(_decide, bot, data)
        except ClientDisconnect:
            # The client hung up while sending: the protocol logs it, there is no one to
            # answer, and it is not a server error.
            return Response(status_code=400)
        except RequestFailed as exc:
            return exc.response()
        except ProtocolError as exc:
            return JSONResponse(exc.to_json(), status_code=422)
        except Exception as exc:  # a bug: answer, log, keep serving
            return _internal(request, exc)
        # A plain level's entry for the configuration (trained:leiden) when it is served.
        reply["bot"] = chosen if chosen in bots else name
        return JSONResponse(reply)

    routes: list[BaseRoute] = [
        Route("/health", health, methods=["GET"]),
        Route("/bots", list_bots, methods=["GET"]),
        Route("/move", move, methods=["POST"]),
    ]
    from .web import GameSessions, web_routes  # the page and its games (web imports serve)

    # The page offers the levels of the bots served here, each where its bot plays.
    routes += web_routes(max_body, GameSessions(served=list(bots.values())))
    app = Starlette(
        routes=routes,
        exception_handlers={HTTPException: _http_error, Exception: _internal},
    )
    # Starlette answers /move/ with a bare 307 to /move, not the documented JSON:
    # a path is served as it is written, or is a 404.
    app.router.redirect_slashes = False
    return app


_HTTP_KINDS = {
    400: "bad_request",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_media_type",
}


def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no such path, wrong method) as JSON."""
    assert isinstance(exc, HTTPException)
    kind = _HTTP_KINDS.get(exc.status_code, "error")
    message = f"{exc.detail}: {request.method} {request.url.path}"
    if exc.status_code == 404:
        message += (
            " (the bot endpoints are GET /health, GET /bots and POST /move; the game "
            "endpoints of the page at / are under /games, see docs/browser.md)"
        )
    elif exc.status_code == 405 and exc.headers:
        message += f" (allowed: {exc.headers.get('Allow', '')})"
    return error_response(exc.status_code, kind, message, None, exc.headers)


def _internal(request: Request, exc: Exception) -> Response:
    log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
    if isinstance(exc, BotError):
        message = f"the bot failed: {exc}"
    else:
        message = f"unexpected server error ({type(exc).__name__}); the server logged it"
    return error_response(500, "internal", message)


# -- command line ---------------------------------------------------------------------


def load_bots(
    specs: Sequence[str],
    config: str | None = None,
    seed: int | None = None,
    strict: bool = True,
) -> dict[str, Bot]:
    """Bots by level name, ``LEVEL:CONFIGURATION`` or ``NAME=PATH`` (an exported
    policy), in order.

    With ``config`` None a plain trained level (``trained``, ``casual``) is a
    :class:`~matador_env.bot.LevelBot` over every shipped configuration, followed by
    one entry ``LEVEL:CONFIGURATION`` per configuration. With ``config`` (a
    configuration or preset name) the trained levels play that configuration and
    exported policies are checked against its rules. With ``strict=False`` a level
    that has no bot to serve is left out (with a note on stderr) instead of raising
    :class:`BotError`.
    """
    bots: dict[str, Bot] = {}

    def add(name: str, bot: Bot) -> None:
        if name in bots:
            raise BotError(f"bot {name!r} is listed twice")
        bots[name] = bot

    for spec in specs:
        name, sep, target = spec.partition("=")
        name, target = name.strip(), target.strip()
        if not sep:
            target = name
        if not name or not target:
            raise BotError(f"bad bot entry {spec!r}: a level, LEVEL:CONFIGURATION or NAME=PATH")
        level, colon, config_name = target.partition(":")
        try:
            if colon and level in ("trained", "casual"):
                if config_name not in CONFIGURATIONS:
                    raise BotError(
                        f"bad bot entry {spec!r}: no configuration {config_name!r}; "
                        f"the configurations are {', '.join(CONFIGURATIONS)}"
                    )
                if config is not None and resolve_rules(config_name) != resolve_rules(config):
                    # --config promises that configuration only (its rules line too).
                    raise BotError(
                        f"bad bot entry {spec!r}: --config {config} serves {config} only; "
                        f"give {level} (it plays {config}), or leave --config out"
                    )
                add(name, load_bot(level, rules=config_name, seed=seed))
            elif target in ("trained", "casual") and config is None:
                every = load_level(target, seed)
                if not every.bots:
                    raise BotError(f"no trained bot is shipped (looked in {bots_dir()})")
                add(name, every)
                for bot in every.bots.values():
                    add(bot.name, bot)
            else:
                add(name, load_bot(target, rules=config, seed=seed))
        except BotError as exc:
            if strict:
                raise
            print(f"note: not serving {name}: {exc}", file=sys.stderr)
    if not bots:
        raise BotError(f"no bot to serve{'' if config is None else ' for ' + config}")
    return bots


def _bind(host: str, port: int) -> socket.socket:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        if sys.platform != "win32":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _stop(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m matador_env.serve",
        description="Serve Matador bots over HTTP: POST /move (a view in, a move out), "
        "GET /bots, GET /health. Details: python -c 'import matador_env.serve as s; "
        "help(s)'",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=integer_arg, default=8000, help="port (0: a free one)")
    parser.add_argument(
        "--bots",
        default=None,
        help="comma-separated levels (" + ", ".join(LEVELS) + "), LEVEL:CONFIGURATION "
        "(trained:pagat) or NAME=PATH of an exported policy; the first is the default "
        "(default: " + ",".join(DEFAULT_BOTS) + "); "
        "the browser page at / offers only the levels served here",
    )
    parser.add_argument(
        "--config",
        "--preset",
        default=None,
        choices=[*CONFIGURATIONS, *(p for p in PRESETS if p not in CONFIGURATIONS)],
        metavar="NAME",
        help="serve the trained levels of this configuration (or preset) only, on "
        "/move and on the browser page (default: every configuration a bot is shipped "
        "for, each view to the bot of its rules); one of " + ", ".join(CONFIGURATIONS),
    )
    parser.add_argument(
        "--max-body",
        type=integer_arg,
        default=DEFAULT_MAX_BODY,
        metavar="BYTES",
        help=f"largest request body (default {DEFAULT_MAX_BODY})",
    )
    defaults = ConnectionLimits()
    parser.add_argument(
        "--request-timeout",
        type=integer_arg,
        default=defaults.request_timeout,
        metavar="SECONDS",
        help="time for a request's headers and body to arrive, trickled or not "
        f"(default {defaults.request_timeout})",
    )
    parser.add_argument(
        "--keep-alive-timeout",
        type=integer_arg,
        default=defaults.keep_alive_timeout,
        metavar="SECONDS",
        help=f"close a connection idle this long after an answer "
        f"(default {defaults.keep_alive_timeout})",
    )
    parser.add_argument(
        "--max-connections",
        type=integer_arg,
        default=defaults.max_connections,
        metavar="N",
        help="connections served at once; N more get 503, the rest are closed "
        f"(default {defaults.max_connections})",
    )
    parser.add_argument("--seed", type=seed_arg, default=None, help="seed of the bots' generators")
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["critical", "error", "warning", "info", "debug"],
        help="uvicorn's log level (default info)",
    )
    parser.add_argument("--no-access-log", action="store_true", help="do not log each request")
    args = parser.parse_args(argv)
    if args.max_body < 1:
        parser.error("--max-body must be >= 1")
    if not 0 <= args.port <= 65535:
        parser.error("--port must be from 0 to 65535")
    for flag in ("request_timeout", "keep_alive_timeout", "max_connections"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be >= 1")
    limits = ConnectionLimits(
        request_timeout=args.request_timeout,
        keep_alive_timeout=args.keep_alive_timeout,
        max_connections=args.max_connections,
    )

    signal.signal(signal.SIGTERM, _stop)
    try:
        specs = DEFAULT_BOTS if args.bots is None else [s for s in args.bots.split(",") if s]
        try:
            bots = load_bots(specs, args.config, args.seed, strict=args.bots is not None)
        except BotError as exc:
            print(f"{parser.prog}: error: {exc}", file=sys.stderr)
            return 2
        app = create_app(bots, max_body=args.max_body)
        try:
            sock = _bind(args.host, args.port)
        except OSError as exc:
            print(
                f"{parser.prog}: error: cannot listen on {args.host}:{args.port}: {exc}",
                file=sys.stderr,
            )
            return 2
        default = next(iter(bots))
        print(f"serving on {_url(sock)}", flush=True)
        rules = "every shipped configuration" if args.config is None else args.config
        print(f"matador-env {__version__}, protocol {PROTOCOL_VERSION}, rules: {rules}; bots:")
        for name, bot in bots.items():
            about = bot.describe()
            if bot.rules is None:
                text = about["about"]
            elif about["level"] in ("trained", "casual"):  # a level's bot of one configuration
                text = about["plays"]
            else:
                text = f"{about['about']} [{about['plays']}]"
            print(f"  {name}{' (default)' if name == default else ''}: {text}")
        print(f"play in the browser: {_url(sock)}/", flush=True)
        print("POST /move[?bot=NAME]  GET /bots  GET /health   (Ctrl-C stops)", flush=True)
        # The server's own lines (hang-ups, timeouts, errors) go out as uvicorn's do.
        log_config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
        log_config["loggers"][log.name] = {
            "handlers": ["default"],
            "level": args.log_level.upper(),
            "propagate": False,
        }
        config = server_config(
            app,
            limits,
            log_config=log_config,
            log_level=args.log_level,
            access_log=not args.no_access_log,
            lifespan="off",
            timeout_graceful_shutdown=10,
            # uvicorn decides on colours by asking sys.stdout.isatty(), which fails when
            # the output is closed (>&-: sys.stdout None); a closed stream needs none.
            use_colors=None if sys.stdout and sys.stderr else False,
        )
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    print("stopped", flush=True)
    return 0


if __name__ == "__main__":
    run_main(main)
