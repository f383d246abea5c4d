"""What the HTTP bot server (``matador_env.serve``) and the browser page's game
endpoints (``matador_env.web``) promise that no other fast test held them to, found by
mutation testing: the documented default limits, a refused query parameter naming
what the endpoint takes, a non-object body named by its JSON type, ``create_app``'s
default bot, the drain limit of a body answered unread (to the byte), the command
line's port range, its start-up lines and the limits it hands to uvicorn, the event
sentences, the outcome and match texts, flags that take true or false only, the
version raised by a new hand and the refusals between hands, and the cap's message.

Everything runs in process: the apps through ``tests.test_web.Client``, the guarded
h11 protocol fed bytes through a stand-in transport, ``main`` with uvicorn's run
replaced. No server process is started and no clock is asserted on.
"""

from __future__ import annotations

import asyncio
import random
import re
import signal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

import h11  # noqa: E402
import uvicorn  # noqa: E402
from uvicorn.server import ServerState  # noqa: E402

from matador_env import __version__  # noqa: E402
from matador_env.bot import BotError, load_bot  # noqa: E402
from matador_env.engine import (  # noqa: E402
    BLANK,
    BRANCH,
    CROSS,
    PLAIN,
    SPINNER,
    End,
    Move,
    Rules,
    Termination,
)
from matador_env.policy import BOTS_DIR_VARIABLE  # noqa: E402
from matador_env.protocol import PROTOCOL_VERSION  # noqa: E402
from matador_env.serve import (  # noqa: E402
    DEFAULT_MAX_BODY,
    DRAIN_LIMIT,
    ConnectionLimits,
    GuardedH11Protocol,
    RequestFailed,
    _url,
    create_app,
    load_bots,
    main,
    parse_json,
    server_config,
)
from matador_env.web import GameSessions, WebGame, describe_event, etag  # noqa: E402
from tests.test_serve import a_view  # noqa: E402
from tests.test_web import Client, assert_error, deal, make_client, play_out  # noqa: E402


@pytest.fixture(scope="module")
def greedy_app() -> Client:
    """``create_app`` serving greedy alone, called in process."""
    return Client(create_app({"greedy": load_bot("greedy")}))


# -- defaults -------------------------------------------------------------------------


def test_the_connection_limits_default_to_the_documented_values() -> None:
    # The module docs: --request-timeout 10, --keep-alive-timeout 5, --max-connections 100.
    limits = ConnectionLimits()
    assert (limits.request_timeout, limits.keep_alive_timeout, limits.max_connections) == (
        10,
        5,
        100,
    )
    assert DEFAULT_MAX_BODY == 64 * 1024


# -- query parameters -----------------------------------------------------------------


@pytest.mark.parametrize(
    "method, path, allowed",
    [
        ("POST", "/move?level=greedy", "the only one is 'bot'"),
        ("GET", "/health?verbose=1", "it takes none"),
        ("GET", "/bots?level=greedy", "it takes none"),
        ("GET", "/games/options?preset=leiden", "it takes none"),
    ],
)
def test_an_unknown_query_parameter_is_refused_naming_what_the_endpoint_takes(
    greedy_app: Client, method: str, path: str, allowed: str
) -> None:
    # The refusal names the parameter at fault and what is allowed instead.
    reply = greedy_app.request(method, path, body={} if method == "POST" else None)
    name = path.partition("?")[2].partition("=")[0]
    assert_error(reply, 422, "invalid", f"query.{name}")
    message = reply.json()["message"]
    assert repr(name) in message and allowed in message, message


def test_a_long_query_parameter_name_is_cut_short_in_the_field_too(greedy_app: Client) -> None:
    # A refusal echoes no more than a few words of what it refuses: the name is cut to
    # 40 characters in the message and in ``field`` alike.
    name = "x" * 5000
    reply = greedy_app.post(f"/move?{name}=1", {})
    assert_error(reply, 422, "invalid", "query." + "x" * 40)
    assert len(reply.content) < 400, reply.content[:400]


# -- bodies ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, kind",
    [
        (b"[1]", "array"),
        (b'"standard"', "string"),
        (b"true", "boolean"),
        (b"false", "boolean"),
        (b"null", "null"),
        (b"7", "number"),
        (b"1.5", "number"),
    ],
)
def test_a_body_that_is_json_but_not_an_object_is_named_by_its_json_type(
    body: bytes, kind: str
) -> None:
    # 400 not_an_object, saying what was sent (a JSON boolean, not "a JSON number").
    with pytest.raises(RequestFailed) as info:
        parse_json(body)
    assert (info.value.status, info.value.kind, info.value.field) == (400, "not_an_object", None)
    assert info.value.message.endswith(f"got a JSON {kind}"), info.value.message


# -- the bots served ------------------------------------------------------------------


def test_a_default_bot_other_than_the_first_is_listed_and_answers_as_the_default() -> None:
    # create_app(default=...): /bots flags that bot, not the first, and /move without
    # ?bot= is its move.
    client = Client(
        create_app({"greedy": load_bot("greedy"), "random": load_bot("random")}, default="random")
    )
    listed = client.get("/bots").json()
    assert listed["default"] == "random"
    assert [(b["name"], b["default"]) for b in listed["bots"]] == [
        ("greedy", False),
        ("random", True),
    ]
    reply = client.post("/move", a_view())
    assert reply.status_code == 200 and reply.json()["bot"] == "random", reply.content


# -- the guarded protocol -------------------------------------------------------------


class FakeTransport(asyncio.Transport):
    """What the protocol writes and whether it closed the connection."""

    def __init__(self) -> None:
        super().__init__()
        self.written = bytearray()
        self.closed = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        addresses = {"peername": ("127.0.0.1", 50000), "sockname": ("127.0.0.1", 8000)}
        return addresses.get(name, default)

    def write(self, data: Any) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def test_a_body_answered_unread_is_dropped_up_to_the_drain_limit_then_the_connection_closes() -> (
    None
):
    """The module docs: a body answered before it is read (here a 404) is dropped as it
    arrives up to 1 MiB; past that the connection is closed. The protocol is fed the
    bytes in process, so the limit is checked to the byte, with no clock involved."""

    async def run() -> tuple[bool, bool]:
        app = create_app({"greedy": load_bot("greedy")})
        config = server_config(app, ConnectionLimits(), log_level="critical", lifespan="off")
        config.load()
        guarded = config.http
        assert isinstance(guarded, type) and issubclass(guarded, GuardedH11Protocol)
        protocol = guarded(config=config, server_state=ServerState(), app_state={})
        transport = FakeTransport()
        protocol.connection_made(transport)
        protocol.data_received(
            b"POST /no-such-path HTTP/1.1\r\nHost: test\r\nContent-Length: %d\r\n\r\n"
            % (4 * DRAIN_LIMIT)
        )
        for _ in range(1000):  # the app answers in a task of the loop
            if protocol.conn.our_state is h11.DONE:
                break
            await asyncio.sleep(0.01)
        assert transport.written.startswith(b"HTTP/1.1 404 "), bytes(transport.written[:200])
        chunk = b" " * (DRAIN_LIMIT // 16)
        for _ in range(16):
            protocol.data_received(chunk)
        open_at_the_limit = not transport.closed
        protocol.data_received(b" ")
        closed_past_it = transport.closed
        protocol.connection_lost(None)
        return open_at_the_limit, closed_past_it

    assert asyncio.run(run()) == (True, True)


# -- the command line -----------------------------------------------------------------


def test_nothing_to_serve_is_an_error_not_a_server_without_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every level left out (no trained bot shipped, strict=False as without --bots), or
    # no entry at all (--bots ,): a BotError that says so, for the command line's exit 2.
    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(tmp_path))
    with pytest.raises(BotError, match="no bot to serve$"):
        load_bots(["trained", "casual"], strict=False)
    with pytest.raises(BotError, match="no bot to serve for leiden$"):
        load_bots(["trained"], config="leiden", strict=False)
    with pytest.raises(BotError, match="no bot to serve$"):
        load_bots([])


@pytest.mark.parametrize(
    "address, url",
    [
        (("127.0.0.1", 8000), "http://127.0.0.1:8000"),
        (("::1", 8001, 0, 0), "http://[::1]:8001"),  # an IPv6 address goes in brackets
    ],
)
def test_the_address_printed_at_start_up_is_a_url(address: tuple[Any, ...], url: str) -> None:
    class Bound:
        def getsockname(self) -> tuple[Any, ...]:
            return address

    assert _url(Bound()) == url  # type: ignore[arg-type]


@pytest.mark.parametrize("port", ["-1", "65536"])
def test_a_port_out_of_range_is_refused(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--port", port])
    assert info.value.code == 2
    assert "--port must be from 0 to 65535" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["0", "65535"])
def test_the_ports_at_the_ends_of_the_range_are_taken(
    port: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The port passes the check; the unknown bot after it is what stops the server.
    monkeypatch.setattr(signal, "signal", lambda *args: None)  # keep pytest's SIGTERM
    assert main(["--port", port, "--bots", "grandmaster"]) == 2
    err = capsys.readouterr().err
    assert "unknown bot 'grandmaster'" in err and "--port" not in err, err


def test_the_start_up_lines_and_the_limits_handed_to_uvicorn(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``main`` up to uvicorn's run, which is replaced: the first line is the address,
    then one line per bot, the default marked, each saying what it plays; the limits
    of the command line reach the server's configuration."""
    ran: list[uvicorn.Config] = []
    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: ran.append(self.config))
    monkeypatch.setattr(signal, "signal", lambda *args: None)
    bots = "greedy,trained:standard,mine=matador_env/bots/standard"
    limits = ["--request-timeout", "3", "--keep-alive-timeout", "4", "--max-connections", "5"]
    assert main(["--port", "0", "--bots", bots, *limits]) == 0
    lines = capsys.readouterr().out.splitlines()
    match = re.fullmatch(r"serving on (http://127\.0\.0\.1:\d+)", lines[0])
    assert match, lines
    greedy = load_bot("greedy").describe()
    standard = load_bot("trained", rules="standard").describe()
    rules = "rules: every shipped configuration"
    assert lines[1] == f"matador-env {__version__}, protocol {PROTOCOL_VERSION}, {rules}; bots:"
    assert lines[2:5] == [
        f"  greedy (default): {greedy['about']}",  # plays every rules configuration
        f"  trained:standard: {standard['plays']}",  # a level's bot of one configuration
        f"  mine: an exported policy [{standard['plays']}]",
    ]
    assert f"play in the browser: {match.group(1)}/" in lines
    assert lines[-1] == "stopped"
    (config,) = ran
    assert config.timeout_keep_alive == 4
    assert config.http.book.limits == ConnectionLimits(3, 4, 5)  # type: ignore[union-attr]


# -- the page's game: events, settings, the game's fields ------------------------------

# Open ends of every kind, for describe_event: a plain end, a spinner's side, a
# branch, a crosswise end and one that needs a blank (standard: 0-0 and 1-6 are matadors).
ENDS = [End(PLAIN, 3), End(SPINNER, 4), End(BRANCH, 5), End(CROSS, 2, 5), End(BLANK, None)]


@pytest.mark.parametrize(
    "move, text",
    [
        ("draw", "P1 drew"),
        ("pass", "P1 passed"),
        ("3-3", "P1 led 3-3"),
        ("1-6", "P1 led 1-6, a matador"),
        ("1-3@0>1", "P1 played 1-3 on end 0 (showing 3), 1 outward"),
        ("1-6@0>6", "P1 played 1-6 on end 0 (showing 3), 6 outward, a matador"),
        ("2-4@1>2", "P1 played 2-4 on end 1 (a spinner side showing 4), 2 outward"),
        ("2-3@2>2", "P1 played 2-3 on end 2 (a branch showing 5), 2 outward"),
        ("1-2@3x", "P1 played 1-2 crosswise on end 3 (a crosswise end, linking to 2 or 5)"),
        ("0-0@4^", "P1 played 0-0 upright on end 4 (an end that needs a blank), a matador"),
        ("2-3@7>2", "P1 played 2-3 on end 7, 2 outward"),  # an end not among those given
    ],
)
def test_each_event_is_a_sentence_naming_the_tile_the_end_and_how_it_lies(
    move: str, text: str
) -> None:
    # The guide's form: "P1 played 1-6 on end 0 (showing 3), 6 outward, a matador".
    assert describe_event("P1", Move.parse(move), ENDS, Rules.preset("standard")) == text


@pytest.mark.parametrize(
    "body, field",
    [
        ({"match": 1}, "match"),  # true or false only: 1 is not true
        ({"match": 0}, "match"),
        ({"teams": 0}, "teams"),
        ({"match": "true"}, "match"),
    ],
)
def test_a_flag_takes_true_or_false_only(body: dict[str, Any], field: str) -> None:
    reply = make_client().post("/games", {"level": "random", **body})
    assert_error(reply, 422, "invalid", field)
    assert "expected true or false" in reply.json()["message"]


def game_ended(
    termination: str,
    winner: int | None = None,
    teams: bool = False,
    match_over: bool = False,
    winners: tuple[int, ...] = (),
    counts: tuple[int, ...] = (),
    points: int = 9,
) -> WebGame:
    """A game of the person at seat 0 whose state is replaced by a stand-in: a hand
    ended by ``termination`` (won by seat ``winner``) and, with ``match_over``, a
    match won by the sides ``winners``."""
    players = 4 if teams else 2
    settings = {"level": "random", "players": players, "teams": teams, "match": True}
    game = GameSessions().create({**settings, "seed": 1})
    side = None if winner is None else game.rules.side_of(winner)
    outcome = SimpleNamespace(
        termination=termination, winner=winner, winning_side=side, points=points, counts=counts
    )
    game.state = SimpleNamespace(  # type: ignore[assignment]
        hand=SimpleNamespace(outcome=outcome),
        is_over=match_over,
        winners=winners,
        totals=(120, 80) if len(winners) < 2 else (110, 110),
    )
    return game


@pytest.mark.parametrize(
    "ended, text",
    [
        (
            (Termination.DOMINO, {"winner": 0}),
            "You played the last tile (domino) and win 9 points.",
        ),
        (
            (Termination.DOMINO, {"winner": 1}),
            "P1 played the last tile (domino) and wins 9 points.",
        ),
        (
            (Termination.BLOCKED, {"winner": 0}),
            "Blocked: You have the lowest count and win 9 points.",
        ),
        (
            # P2 holds the lowest count, yet partners win a block on their two hands
            # added together: P1 + P3's 21 against 27. It had said "P3 has the lowest
            # count".
            (Termination.BLOCKED, {"winner": 3, "teams": True, "counts": (23, 11, 4, 10)}),
            "Blocked: P1 + P3 has the lower count, 21 against 27, and wins 9 points.",
        ),
        (
            (Termination.BLOCKED, {"winner": 2, "teams": True, "counts": (5, 20, 9, 3)}),
            "Blocked: P0 + P2 (you) have the lower count, 14 against 23, and win 9 points.",
        ),
        (
            (Termination.DOMINO, {"winner": 1, "points": 1}),
            "P1 played the last tile (domino) and wins 1 point.",
        ),
        (
            (Termination.VOID_TIE, {}),
            "Blocked with the lowest count shared: nobody scores.",
        ),
        (
            (Termination.REDEAL_TIE, {}),
            "Blocked with the lowest count shared: the hand is dealt again.",
        ),
        (
            (Termination.VOID_TIE, {"teams": True, "counts": (10, 4, 3, 9)}),
            "Blocked with the teams' counts level at 13: nobody scores.",
        ),
        ((Termination.NO_LEAD, {}), "Nobody could lead: the hand is dealt again."),
    ],
    ids=[
        "you domino",
        "bot domino",
        "you blocked",
        "other team blocked",
        "your team blocked",
        "one point",
        "void",
        "redeal",
        "teams void",
        "no lead",
    ],
)
def test_the_outcome_of_a_hand_says_who_won_what_or_that_nobody_scores(
    ended: tuple[str, dict[str, Any]], text: str
) -> None:
    termination, how = ended
    assert game_ended(termination, **how).outcome_text() == text


@pytest.mark.parametrize(
    "winners, verdict",
    [((0,), "You win the match!"), ((1,), "You lose the match."), ((0, 1), "The match is shared.")],
)
def test_the_result_of_a_match_says_whether_the_person_won_lost_or_shared_it(
    winners: tuple[int, ...], verdict: str
) -> None:
    game = game_ended(Termination.DOMINO, winner=winners[0], match_over=True, winners=winners)
    result = game.result_text()
    assert result is not None and result.endswith(verdict), result
    assert result.startswith("Match over (120 to 80)" if len(winners) == 1 else "Match over (110")


def test_between_hands_only_next_is_taken_and_it_raises_the_version_by_one() -> None:
    # The guide: "each move, bot move and new hand raises it by one".
    client = make_client()
    game = dealt = deal(client, level="greedy", match=True, target=500, seed=2)
    for game, _text in play_out(client, dealt, random.Random(2)):  # noqa: B007
        if game["status"] == "hand_over":
            break
    assert game["status"] == "hand_over", game["status"]
    # Between hands, a move or a bot move is refused as the hand being over.
    gid = game["id"]
    assert_error(client.post(f"/games/{gid}/move", {"move": "draw"}), 409, "hand_over", None)
    assert_error(client.post(f"/games/{gid}/bot"), 409, "hand_over", None)
    reply = client.post(f"/games/{game['id']}/next", headers={"If-Match": etag(game["version"])})
    assert reply.status_code == 200, reply.content
    after = reply.json()
    assert after["hand_no"] == game["hand_no"] + 1
    assert after["version"] == game["version"] + 1
    assert reply.headers["etag"] == etag(game["version"] + 1)


def test_a_deal_past_the_cap_says_when_a_place_frees_up() -> None:
    # 503 too_many_games: the refusal says how long an unused game lives, so a client
    # knows that trying again later can work.
    client = make_client(GameSessions(max_games=1, idle_expiry_s=90))
    deal(client, level="random")
    reply = client.post("/games", {"level": "random"})
    assert_error(reply, 503, "too_many_games", None)
    assert "after 90 s unused" in reply.json()["message"], reply.json()


def test_the_options_give_the_cap_and_expiry_of_the_sessions_served() -> None:
    # /games/options reports the server's own cap and expiry, not the module defaults.
    options = make_client(GameSessions(max_games=3, idle_expiry_s=90)).get("/games/options")
    assert (options.json()["max_games"], options.json()["idle_expiry_s"]) == (3, 90)


def test_a_path_not_served_is_a_404_naming_the_endpoints(greedy_app: Client) -> None:
    reply = greedy_app.get("/moves")
    assert_error(reply, 404, "not_found", None)
    message = reply.json()["message"]
    assert "POST /move" in message and "/games" in message, message
