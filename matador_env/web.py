"""Matador in the browser: the page at ``/`` and the small JSON game endpoints it uses.

``python -m matador_env.serve`` serves, besides the bot endpoints, a page on which a
person plays a hand or a match against bots of any level, on any preset, with 2 to
4 seats (four as two partnerships where chosen). The page is plain HTML, CSS and
JavaScript shipped in ``matador_env/web/``; it loads nothing from elsewhere (its
``Content-Security-Policy`` allows only its own server) and talks to the server
only through the endpoints below. The game is kept on the server; the page gets
the person's seat view and what is public, never another hand or the boneyard
order. ``docs/browser.md`` is the user's guide.

Endpoints
=========

``GET /``, ``GET /web/app.js``, ``GET /web/style.css``
    The page.

``GET /games/options``
    What can be dealt: ``{"presets": [{"name", "players": [2, 3, 4], "default_players",
    "teams": bool, "target", "link_sum", "levels": {"2": [...], "3": [...], "4": [...],
    "4t": [...]}}], "levels": {NAME: ABOUT}, "max_games", "idle_expiry_s"}``; a
    level list names the levels that play that seat count (``4t``: four in teams)
    and that the server serves, and ``levels`` the levels it serves at all. A
    server started with ``--bots`` or ``--config`` (:mod:`matador_env.serve`) offers
    only the levels of the bots it serves, each where that bot plays: ``--bots
    greedy`` offers ``greedy`` alone, ``--bots trained:leiden,random`` ``trained`` on
    ``leiden`` for two and ``random`` everywhere; an exported policy
    (``NAME=PATH``) is not offered on the page.

``POST /games``
    Deal a game. Body (every field optional; ``null`` is the default, as a field
    left out)::

        {"preset": "standard", "players": 2, "teams": false, "level": "trained",
         "seat": 0, "match": false, "target": 100, "seed": 7}

    ``201`` with the game (below). ``match`` plays hands to ``target`` (default: the
    preset's); without it the game is one hand (a hand dealt again by the rules, a
    tie with ``tie="redeal"`` or no lead, continues with ``next``). ``level``
    defaults to the strongest level offered for the table; a level the server does
    not serve for it is refused (``422 invalid``, ``field`` ``level``, naming the
    levels it has for these rules).

``GET /games/{id}``
    The game.

Every answer that carries a game carries its ``version`` (in the game and as the
``ETag`` header, ``"3"``), which each move, bot move and new hand raises by one.
``POST /games/{id}/move``, ``/bot``, ``/next`` and ``DELETE /games/{id}`` take an
optional ``If-Match`` header: with the ETag of the game the client last saw, the
request applies only to that game (``412 stale`` otherwise), so a request sent twice
(a retry after a lost answer, a double click) cannot make two moves, nor end a game
that another client moved on since. ``If-Match: *`` matches any version.

``POST /games/{id}/move``
    The person's move, a move object of the protocol (``{"move": "2-5@1>5"}``,
    :func:`matador_env.protocol.move_from_json`). ``200 {"event": EVENT, "game": GAME}``.

``POST /games/{id}/bot``
    One move of the bot whose turn it is (no body), so that the page can pause
    between bot moves. ``200 {"event": EVENT, "game": GAME}``.

``POST /games/{id}/next``
    Deal the next hand once this one is over (a match, or a hand dealt again).

``DELETE /games/{id}``
    End the game now: ``200 {"deleted": ID}``.

An EVENT is ``{"seat", "move", "text"}``: the move's text form and a sentence
(``"P1 played 1-6 on end 0 (showing 3), 6 outward"``); the person's own draw names
the tile drawn. A GAME is::

    {"id", "version", "settings": {the dealt settings, seed included}, "hand_no",
     "view": the person's seat view (matador_env.protocol.view_to_json),
     "table": {"pieces": [{"tile", "lie", "a", "b", "parent", "port", "matador"}],
               "ends": [{"index", "text", "kind", "piece", "port"}], "last"},
     "seats": [{"seat", "name", "side", "tiles", "to_move"}],
     "sides": [names], "totals": [per side], "target", "link_sum", "drawable",
     "log": [sentences of this hand], "status": "your_turn" | "bot_turn" |
     "hand_over" | "finished", "outcome": null | {"termination", "winner",
     "winning_side", "points", "counts", "text"}, "result": null | TEXT}

``table`` describes the layout as a tree of pieces, each hanging on a port of
another, with the open ends (:func:`matador_env.layout.layout_tree`); the page places
it with the geometry of :func:`matador_env.layout.layout_geometry`.

Sessions
========

At most :data:`MAX_GAMES` games live at once; a game unused for
:data:`IDLE_EXPIRY_S` seconds is dropped. Dealing a game beyond the cap, when no
game has expired, is refused with ``503 too_many_games``.

Errors
======

As for ``POST /move``: JSON ``{"error", "field", "message"}``.

======  ==================  ======================================================
status  ``error``           when
======  ==================  ======================================================
400     ``bad_json``        the body is not UTF-8 JSON (or has a key twice in one
                            object); ``not_an_object``: not an object;
                            ``bad_if_match``: an ``If-Match`` that is neither ``*``
                            nor entity tags in quotes (``field`` ``header.If-Match``)
404     ``unknown_game``    no live game has this id (``field`` ``path.id``)
409     ``wrong_turn``      a move while a bot is to act, or a bot move on the
                            person's turn (``field`` ``seat``)
409     ``hand_over``       a move after the hand ended; ``next`` before it ended
409     ``finished``        the game is over (``next`` after the last hand)
412     ``stale``           ``If-Match`` names none of the game's current ETag: it
                            changed since (``field`` ``header.If-Match``)
413     ``too_large``       the body is over the server's ``--max-body``, on every
                            endpoint (one that takes no body ignores a smaller one)
415     ``unsupported_media_type``  a body that is not ``application/json``
422     ``invalid``         bad settings (``field``: ``preset``, ``level`` (also a
                            level the server does not serve for the table),
                            ``players``, ``teams``, ``seat``, ``target``, ``seed``,
                            ``match`` or an unknown field's name), a move that is
                            malformed or not legal now (``field`` ``move``), or a
                            query parameter, which these endpoints take none of
                            (``field`` ``query.NAME``)
503     ``too_many_games``  the cap of live games is reached
======  ==================  ======================================================
"""

from __future__ import annotations

import random
import re
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from .bot import (
    LEVELS,
    Bot,
    BotError,
    LevelBot,
    levels_for,
    load_bot,
    shipped_configurations,
)
from .engine import (
    BLANK,
    BRANCH,
    CROSS,
    PRESETS,
    SPINNER,
    End,
    IllegalMoveError,
    MatchState,
    Move,
    Rules,
    RulesError,
    Termination,
    derive_seed,
    side_counts,
)
from .engine.rules import LARGEST_SETTING
from .engine.tiles import shown_value
from .layout import layout_tree
from .play import points_text
from .protocol import ProtocolError, move_from_json, view_to_json
from .serve import (
    DEFAULT_MAX_BODY,
    RequestFailed,
    check_content_type,
    check_query,
    parse_json,
    read_body,
)

__all__ = [
    "IDLE_EXPIRY_S",
    "MAX_GAMES",
    "GameSessions",
    "WebGame",
    "describe_event",
    "web_routes",
]

MAX_GAMES = 64
"""Live games kept at once."""
IDLE_EXPIRY_S = 30 * 60
"""A game unused this long is dropped."""
PAGE_DIR = Path(__file__).resolve().parent / "web"
PAGE_FILES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}
# The page loads nothing from elsewhere; the browser is told so.
PAGE_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:",
    "Cache-Control": "no-cache",
}
SETTINGS_FIELDS = ("preset", "players", "teams", "level", "seat", "match", "target", "seed")
# What POST /games and POST /games/{id}/move take, for their errors about the body:
# (what to send, what the JSON object is).
SETTINGS_BODY = (
    "the game settings",
    "the game settings, every field optional: " + ", ".join(SETTINGS_FIELDS),
)
MOVE_BODY = ("the move", 'the move, e.g. {"move": "2-5@1>5"}')
# An entity tag in If-Match: strong ("3") or weak (W/"3"), its characters per RFC 9110.
_ENTITY_TAG = re.compile(r'(?:W/)?"[\x21\x23-\x7e\x80-\xff]*"')


def etag(version: int) -> str:
    """The ETag of a game at ``version``."""
    return f'"{version}"'


def if_match_header(request: Request) -> str | None:
    """The request's ``If-Match``, several of them as one list (RFC 9110), or None."""
    values = request.headers.getlist("if-match")
    return ", ".join(values) if values else None


# -- words --------------------------------------------------------------------------------


def describe_end(end: End) -> str:
    if end.kind is SPINNER:
        return f"a spinner side showing {end.value}"
    if end.kind is BRANCH:
        return f"a branch showing {end.value}"
    if end.kind is CROSS:
        return f"a crosswise end, linking to {end.value} or {end.value2}"
    if end.kind is BLANK:
        return "an end that needs a blank"
    return f"showing {end.value}"


def describe_event(who: str, move: Move, ends: Sequence[End], rules: Rules) -> str:
    """``move`` by ``who`` as a sentence, given the open ends before it."""
    if move.kind == "draw":
        return f"{who} drew"
    if move.kind == "pass":
        return f"{who} passed"
    tile = move.tile
    assert tile is not None
    matador = ", a matador" if rules.is_matador(tile) else ""
    if move.mode == "lead":
        return f"{who} led {tile}{matador}"
    assert move.end is not None
    where = f"end {move.end}"
    if move.end < len(ends):
        where += f" ({describe_end(ends[move.end])})"
    if move.mode == "inline":
        how = f"on {where}, {move.shows} outward"
    elif move.mode == "cross":
        how = f"crosswise on {where}"
    else:
        how = f"upright on {where}"
    return f"{who} played {tile} {how}{matador}"


# -- games ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GameSettings:
    preset: str
    players: int
    teams: bool
    level: str
    seat: int
    match: bool
    target: int
    seed: int

    def to_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in SETTINGS_FIELDS}


def _invalid(field_name: str, message: str) -> RequestFailed:
    return RequestFailed(422, "invalid", message, field_name)


def read_settings(
    data: dict[str, Any],
    levels: Callable[[Rules], list[str]] = levels_for,
    served: Sequence[str] | None = None,
) -> tuple[GameSettings, Rules]:
    """Settings of a new game from a request body, each field checked. ``levels``
    gives the levels offered for a table's rules, weakest first (default: every level
    that plays them); ``served`` names the bots of a server that serves a chosen set
    (``--bots``, ``--config``), for the message refusing a level it does not serve."""
    unknown = sorted(set(data) - set(SETTINGS_FIELDS))
    if unknown:
        # Cut short as check_query cuts a parameter's name: a refusal echoes no more
        # than a few words of what it refuses, however long the body sent.
        raise _invalid(
            unknown[0][:40], f"unknown field; the fields are {', '.join(SETTINGS_FIELDS)}"
        )
    # A field sent as null takes its default, as one left out does (JSON clients often
    # send null for "not set"); the integers took it so, the others refused it.
    data = {name: value for name, value in data.items() if value is not None}

    def integer(name: str, default: int, low: int, high: int | None = None) -> int:
        value = data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise _invalid(name, f"expected an integer, got {shown_value(value)}")
        if value < low or (high is not None and value > high):
            span = f"from {low} to {high}" if high is not None else f">= {low}"
            raise _invalid(name, f"expected an integer {span}, got {shown_value(value)}")
        return value

    def flag(name: str) -> bool:
        value = data.get(name, False)
        if not isinstance(value, bool):
            raise _invalid(name, f"expected true or false, got {shown_value(value)}")
        return value

    preset = data.get("preset", "standard")
    if not isinstance(preset, str) or preset not in PRESETS:
        shown = shown_value(preset)
        raise _invalid("preset", f"no preset {shown}; the presets are {', '.join(PRESETS)}")
    base = Rules.preset(preset)
    players = integer("players", base.players, 2, 4)
    teams = flag("teams")
    match = flag("match")
    try:
        rules = Rules.preset(preset, players=players, teams=teams)
    except RulesError as exc:
        raise _invalid(exc.field, str(exc)) from None
    # The engine's own bounds, checked here so that a refusal names the field as sent
    # (the engine's RulesError would name its own field, target_score).
    target = integer("target", rules.target_score, 1, LARGEST_SETTING)
    rules = rules.replace(target_score=target)
    offered = levels(rules)
    teamed = " in teams" if teams else ""
    table = f"{preset} with {players} players{teamed}"
    table += f" to {target}" if target != base.target_score else ""
    serves = f"this server serves only {', '.join(served)} (its --bots, --config)" if served else ""
    if "level" not in data:
        if not offered:
            raise _invalid("level", f"no bot on this server plays {table}: {serves}")
        level = offered[-1]  # the strongest
    else:
        level = data["level"]
    if not isinstance(level, str) or level not in LEVELS:
        shown = shown_value(level)
        raise _invalid("level", f"no level {shown}; the levels are {', '.join(LEVELS)}")
    if level not in offered:
        here = f"levels for these rules: {', '.join(offered) or 'none on this server'}"
        if level in levels_for(rules):
            raise _invalid("level", f"level {level!r} is not served here: {serves}; {here}")
        raise _invalid(
            "level",
            f"level {level!r} does not play {table}"
            ": a trained bot plays only the exact rules of its configuration (shipped: "
            f"{', '.join(c.name for c in shipped_configurations()) or 'none'}); {here}",
        )
    seat = integer("seat", 0, 0, players - 1)
    seed = integer("seed", random.SystemRandom().randrange(1 << 31), 0, (1 << 63) - 1)
    return GameSettings(preset, players, teams, level, seat, match, target, seed), rules


class WebGame:
    """One person and bots at a table; every method is called with ``lock`` held."""

    def __init__(self, game_id: str, settings: GameSettings, rules: Rules, bot: Bot) -> None:
        self.id = game_id
        self.settings = settings
        self.rules = rules
        self.bot = bot
        self.seat = settings.seat
        # The bots' choices come from the game's own generator, so a seed replays them.
        self.rng = random.Random(derive_seed(settings.seed, -1))
        self.state = MatchState.new(rules, settings.seed)
        self.hand_no = 1
        self.lock = threading.Lock()
        self.touched = 0.0
        self.version = 0  # raised by every change, for the ETag and If-Match

    # -- names

    def name(self, seat: int) -> str:
        if seat == self.seat:
            return "You"
        if self.rules.teams and seat % 2 == self.seat % 2:
            return f"P{seat} (partner)"
        return f"P{seat}"

    def side_name(self, side: int) -> str:
        if self.rules.teams:
            mine = " (you)" if side == self.seat % 2 else ""
            return f"P{side} + P{side + 2}{mine}"
        return "You" if side == self.seat else f"P{side}"

    # -- the state the page gets

    @property
    def finished(self) -> bool:
        hand = self.state.hand
        if self.state.is_over:
            return True
        outcome = hand.outcome
        return not self.settings.match and outcome is not None and not outcome.redeal

    def status(self) -> str:
        if self.finished:
            return "finished"
        if self.state.hand_over:
            return "hand_over"
        return "your_turn" if self.state.to_move == self.seat else "bot_turn"

    def to_json(self) -> dict[str, Any]:
        state, hand = self.state, self.state.hand
        view = state.view(self.seat)
        history = hand.history
        log = [describe_event(self.name(e.seat), e.move, e.ends, self.rules) for e in history]
        outcome = hand.outcome
        return {
            "id": self.id,
            "version": self.version,
            "settings": self.settings.to_json(),
            "hand_no": self.hand_no,
            "view": view_to_json(view),
            "table": layout_tree(history, hand.ends, self.rules),
            "seats": [
                {
                    "seat": s,
                    "name": self.name(s),
                    "side": self.rules.side_of(s),
                    "tiles": n,
                    "to_move": s == hand.to_move and outcome is None,
                }
                for s, n in enumerate(hand.hand_sizes)
            ],
            "sides": [self.side_name(s) for s in range(self.rules.sides)],
            "totals": list(state.totals),
            "target": self.rules.target_score,
            "link_sum": self.rules.link_sum,
            "drawable": max(0, hand.boneyard_size - self.rules.boneyard_reserve),
            "log": log,
            "status": self.status(),
            "outcome": None if outcome is None else self.outcome_json(),
            "result": self.result_text(),
        }

    def outcome_json(self) -> dict[str, Any]:
        outcome = self.state.hand.outcome
        assert outcome is not None
        return {
            "termination": outcome.termination,
            "winner": outcome.winner,
            "winning_side": outcome.winning_side,
            "points": outcome.points,
            "counts": list(outcome.counts),
            "text": self.outcome_text(),
        }

    def outcome_text(self) -> str:
        outcome = self.state.hand.outcome
        assert outcome is not None
        t = outcome.termination
        points = points_text(outcome.points)
        if t == Termination.BLOCKED and self.rules.teams:
            # Partners win a block on their two hands added together (see play.py).
            assert outcome.winning_side is not None
            side = outcome.winning_side
            sums = side_counts(self.rules, outcome.counts)
            mine = side == self.rules.side_of(self.seat)
            return (
                f"Blocked: {self.side_name(side)} {'have' if mine else 'has'} the lower count, "
                f"{sums[side]} against {sums[1 - side]}, and {'win' if mine else 'wins'} {points}."
            )
        if t in (Termination.DOMINO, Termination.BLOCKED):
            assert outcome.winner is not None and outcome.winning_side is not None
            who = self.name(outcome.winner)
            wins = "win" if outcome.winner == self.seat else "wins"
            team = f" for {self.side_name(outcome.winning_side)}" if self.rules.teams else ""
            if t == Termination.DOMINO:
                how = f"{who} played the last tile (domino)"
            else:
                how = f"Blocked: {who} {'have' if wins == 'win' else 'has'} the lowest count"
            return f"{how} and {wins} {points}{team}."
        shared = (
            f"the teams' counts level at {side_counts(self.rules, outcome.counts)[0]}"
            if self.rules.teams
            else "the lowest count shared"
        )
        if t == Termination.VOID_TIE:
            return f"Blocked with {shared}: nobody scores."
        if t == Termination.REDEAL_TIE:
            return f"Blocked with {shared}: the hand is dealt again."
        return "Nobody could lead: the hand is dealt again."

    def result_text(self) -> str | None:
        if not self.state.is_over or not self.settings.match:
            return None
        winners = self.state.winners or ()
        mine = self.rules.side_of(self.seat)
        names = " and ".join(self.side_name(s) for s in winners)
        scores = " to ".join(str(t) for t in sorted(self.state.totals, reverse=True))
        if mine in winners:
            verdict = "You win the match!" if len(winners) == 1 else "The match is shared."
        else:
            verdict = "You lose the match."
        # Past tense, which reads right after "You", "P1" and a team alike.
        won = "shared the win" if len(winners) > 1 else "won"
        return f"Match over ({scores}): {names} {won}. {verdict}"

    # -- steps

    def check_if_match(self, header: str | None) -> None:
        """Refuse a change asked for with an ``If-Match`` that names none of the
        game's current ETag (``412 stale``); ``None``, no header, matches."""
        if header is None:
            return
        tags = [t.strip() for t in header.split(",")]
        if tags == ["*"]:
            return
        if not all(_ENTITY_TAG.fullmatch(t) for t in tags):
            raise RequestFailed(
                400,
                "bad_if_match",
                f"If-Match: {shown_value(header)} is not allowed; allowed: * or entity "
                f'tags in quotes, e.g. If-Match: "{self.version}" (the ETag of an answer)',
                "header.If-Match",
            )
        # Strong comparison (RFC 9110): a weak tag W/"3" matches nothing.
        if etag(self.version) not in tags:
            raise RequestFailed(
                412,
                "stale",
                f"If-Match {shown_value(header)} does not name the game's ETag, "
                f"{etag(self.version)}: it changed since; get it again (GET /games/{{id}}) "
                "and decide anew",
                "header.If-Match",
            )

    def _check_open(self) -> None:
        if self.finished:
            raise RequestFailed(409, "finished", "the game is over; deal a new one (POST /games)")
        if self.state.hand_over:
            raise RequestFailed(
                409, "hand_over", "the hand is over; deal the next (POST /games/{id}/next)"
            )

    def _apply(self, move: Move) -> dict[str, Any]:
        seat = self.state.to_move
        before = self.state.hand
        self.state = self.state.apply(move)
        self.version += 1
        text = describe_event(self.name(seat), move, before.ends, self.rules)
        if move.kind == "draw" and seat == self.seat:
            new = [t for t in self.state.hand.hand(seat) if t not in before.hand(seat)]
            text += f" {new[0]}" if new else ""
        return {"seat": seat, "move": str(move), "text": text}

    def person_move(self, move: Move) -> dict[str, Any]:
        self._check_open()
        if self.state.to_move != self.seat:
            raise RequestFailed(
                409,
                "wrong_turn",
                f"it is P{self.state.to_move}'s turn, a bot's: ask for its move "
                "(POST /games/{id}/bot)",
                "seat",
            )
        try:
            self.state.hand.apply(move)
        except IllegalMoveError as exc:
            raise _invalid("move", str(exc)) from None
        return self._apply(move)

    def bot_move(self) -> dict[str, Any]:
        self._check_open()
        seat = self.state.to_move
        if seat == self.seat:
            raise RequestFailed(
                409, "wrong_turn", "it is your turn: send your move (POST /games/{id}/move)", "seat"
            )
        move = self.bot.choose(self.state.view(seat), self.rng)
        return self._apply(move)

    def next_hand(self) -> None:
        if self.finished:
            raise RequestFailed(409, "finished", "the game is over; deal a new one (POST /games)")
        if not self.state.hand_over:
            raise RequestFailed(409, "hand_over", "the hand is not over yet")
        self.state = self.state.next_hand()
        self.hand_no += 1
        self.version += 1


@dataclass
class GameSessions:
    """The live games: at most ``max_games``, each dropped after ``idle_expiry_s``
    seconds unused. ``clock`` is injectable for tests.

    ``served`` is the server's bots (``create_app``'s, from ``--bots`` and
    ``--config``): games are then offered and dealt with those bots' levels only,
    each where its bot plays, and played by those bots. None: every level, wherever
    it plays (:func:`matador_env.bot.levels_for`), with bots loaded as needed."""

    max_games: int = MAX_GAMES
    idle_expiry_s: float = IDLE_EXPIRY_S
    clock: Callable[[], float] = time.monotonic
    served: Sequence[Bot] | None = None
    _games: dict[str, WebGame] = field(default_factory=dict)
    _bots: dict[tuple[str, Rules | None], Bot] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __len__(self) -> int:
        with self._lock:
            self._expire()
            return len(self._games)

    def _expire(self) -> None:
        now = self.clock()
        for game_id in [g.id for g in self._games.values() if now - g.touched > self.idle_expiry_s]:
            del self._games[game_id]

    def _served_bot(self, level: str, rules: Rules) -> Bot | None:
        """The served bot of ``level`` that plays ``rules``, if any."""
        for bot in self.served or ():
            if getattr(bot, "level", None) != level:
                continue  # another level, or an exported policy (not offered here)
            if isinstance(bot, LevelBot):
                found = bot.bots.get(rules)
                if found is not None:
                    return found
            elif bot.rules is None or bot.rules == rules:
                return bot
        return None

    def levels(self, rules: Rules) -> list[str]:
        """The levels a game on ``rules`` may have here, weakest first."""
        if self.served is None:
            return levels_for(rules)
        return [level for level in LEVELS if self._served_bot(level, rules) is not None]

    def _bot(self, level: str, rules: Rules) -> Bot:
        if self.served is not None:
            served = self._served_bot(level, rules)
            if served is None:  # read_settings refused it already
                raise BotError(f"no {level} bot served for these rules")
            return served
        # Bots are shared between threads and games; each game draws on its own rng.
        # Heuristic levels play any rules, so one of each serves every game (and odd
        # targets cannot grow the cache); trained levels exist for a few configurations.
        key = (level, rules if level in ("casual", "trained") else None)
        bot = self._bots.get(key)
        if bot is None:
            bot = self._bots[key] = load_bot(level, rules=rules)
        return bot

    def create(self, data: dict[str, Any]) -> WebGame:
        served = None
        if self.served is not None:  # the names of its level bots, for a refusal
            served = [b.name for b in self.served if getattr(b, "level", None) in LEVELS]
        settings, rules = read_settings(data, self.levels, served)
        with self._lock:
            self._expire()
            if len(self._games) >= self.max_games:
                raise RequestFailed(
                    503,
                    "too_many_games",
                    f"{len(self._games)} games are live, the most this server keeps; "
                    f"one is dropped after {self.idle_expiry_s:g} s unused: try again later",
                )
            try:
                bot = self._bot(settings.level, rules)
            except BotError as exc:
                raise _invalid("level", str(exc)) from None
            game = WebGame(secrets.token_urlsafe(12), settings, rules, bot)
            game.touched = self.clock()
            self._games[game.id] = game
            return game

    def get(self, game_id: str) -> WebGame:
        with self._lock:
            self._expire()
            game = self._games.get(game_id)
            if game is None:
                raise RequestFailed(
                    404,
                    "unknown_game",
                    f"no live game {shown_value(game_id)}: deal one with POST /games (a game is "
                    f"dropped after {self.idle_expiry_s:g} s unused)",
                    "path.id",
                )
            game.touched = self.clock()
            return game

    def delete(self, game_id: str) -> None:
        self.get(game_id)
        with self._lock:
            self._games.pop(game_id, None)

    def options(self) -> dict[str, Any]:
        presets = []
        for name in PRESETS:
            base = Rules.preset(name)
            levels: dict[str, list[str]] = {}
            for players in (2, 3, 4):
                levels[str(players)] = self.levels(Rules.preset(name, players=players))
            levels["4t"] = self.levels(Rules.preset(name, players=4, teams=True))
            presets.append(
                {
                    "name": name,
                    "players": [2, 3, 4],
                    "default_players": base.players,
                    "teams": True,
                    "target": base.target_score,
                    "link_sum": base.link_sum,
                    "levels": levels,
                }
            )
        kinds = LEVELS if self.served is None else {getattr(b, "level", None) for b in self.served}
        return {
            "presets": presets,
            "levels": {name: about for name, about in LEVELS.items() if name in kinds},
            "max_games": self.max_games,
            "idle_expiry_s": self.idle_expiry_s,
        }


# -- routes ---------------------------------------------------------------------------------


def web_routes(
    max_body: int = DEFAULT_MAX_BODY, sessions: GameSessions | None = None
) -> list[BaseRoute]:
    """The page and the game endpoints, to mount in the server's app."""
    games = GameSessions() if sessions is None else sessions
    page = {name: (PAGE_DIR / name).read_bytes() for name in PAGE_FILES}

    def serve_file(name: str) -> Response:
        return Response(page[name], media_type=PAGE_FILES[name], headers=PAGE_HEADERS)

    async def index(request: Request) -> Response:
        return serve_file("index.html")

    async def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in page or name == "index.html":
            return RequestFailed(404, "not_found", f"no file /web/{name}", "path.name").response()
        return serve_file(name)

    def json_body(
        request: Request, raw: bytes, what: tuple[str, str], empty_ok: bool
    ) -> dict[str, Any]:
        if empty_ok and not raw.strip():
            return {}
        check_content_type(request, what[0])
        return parse_json(raw, what[1])

    def answer(
        handler: Callable[[Request, bytes], Awaitable[Any]], status: int = 200
    ) -> Callable[..., Any]:
        async def endpoint(request: Request) -> Response:
            try:
                # Every body is read first (413 past --max-body), also where the
                # endpoint takes none: one answered unread would be received and
                # dropped, whatever its size, instead of refused as documented.
                raw = await read_body(request, max_body)
                check_query(request)  # as the bot endpoints do; the page reads its own
                data = await handler(request, raw)
                game = data.get("game", data)
                headers = {"ETag": etag(game["version"])} if "version" in game else None
                return JSONResponse(data, status_code=status, headers=headers)
            except ClientDisconnect:  # nobody left to answer; not a server error
                return Response(status_code=400)
            except RequestFailed as exc:
                return exc.response()
            except ProtocolError as exc:
                return JSONResponse(exc.to_json(), status_code=422)

        return endpoint

    def locked(game: WebGame, step: Callable[[], Any]) -> Any:
        with game.lock:
            return step()

    async def change(request: Request, game: WebGame, step: Callable[[], Any]) -> Any:
        """``step``, which changes ``game``, under its lock once the request's If-Match
        names the game's version: every request that changes a game goes through here."""
        if_match = if_match_header(request)

        def checked() -> Any:
            game.check_if_match(if_match)
            return step()

        return await run_in_threadpool(locked, game, checked)

    async def options(request: Request, raw: bytes) -> dict[str, Any]:
        return games.options()

    async def create(request: Request, raw: bytes) -> dict[str, Any]:
        data = json_body(request, raw, SETTINGS_BODY, empty_ok=True)
        game = await run_in_threadpool(games.create, data)
        return await run_in_threadpool(locked, game, game.to_json)

    async def show_or_delete(request: Request, raw: bytes) -> dict[str, Any]:
        game_id = request.path_params["id"]
        game = games.get(game_id)
        if request.method == "DELETE":
            await change(request, game, lambda: games.delete(game_id))
            return {"deleted": game_id}
        return await run_in_threadpool(locked, game, game.to_json)

    async def move(request: Request, raw: bytes) -> dict[str, Any]:
        game = games.get(request.path_params["id"])
        chosen = move_from_json(json_body(request, raw, MOVE_BODY, empty_ok=False))
        return await change(
            request, game, lambda: {"event": game.person_move(chosen), "game": game.to_json()}
        )

    async def bot(request: Request, raw: bytes) -> dict[str, Any]:
        game = games.get(request.path_params["id"])
        return await change(
            request, game, lambda: {"event": game.bot_move(), "game": game.to_json()}
        )

    async def next_hand(request: Request, raw: bytes) -> dict[str, Any]:
        game = games.get(request.path_params["id"])

        def step() -> dict[str, Any]:
            game.next_hand()
            return game.to_json()

        return await change(request, game, step)

    return [
        Route("/", index, methods=["GET"]),
        Route("/web/{name}", asset, methods=["GET"]),
        Route("/games/options", answer(options), methods=["GET"]),
        Route("/games", answer(create, 201), methods=["POST"]),
        # One route for both methods: a 405 names the methods of the first route whose
        # path matches, so a route of its own would leave DELETE out of the Allow header.
        Route("/games/{id}", answer(show_or_delete), methods=["GET", "DELETE"]),
        Route("/games/{id}/move", answer(move), methods=["POST"]),
        Route("/games/{id}/bot", answer(bot), methods=["POST"]),
        Route("/games/{id}/next", answer(next_hand), methods=["POST"]),
    ]
