"""The browser page's game endpoints (matador_env.web), called in process.

Starlette's ``TestClient`` needs httpx, which the project does not install, so
requests go straight to the ASGI app through :class:`Client` (one event loop per
request, as a server would run it). Every answer of a hand played to its end is
checked against the engine: a replay of the same seed and moves must reach the
same table and hand, and no response may name a tile the person cannot see.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import pytest

pytest.importorskip("starlette")

from starlette.applications import Starlette  # noqa: E402

from matador_env.bot import LEVELS, Bot, load_bot, shipped_configurations  # noqa: E402
from matador_env.configs import configuration_of  # noqa: E402
from matador_env.engine import PRESETS, MatchState, Move, Rules, SeatView  # noqa: E402
from matador_env.policy import BOTS_DIR_VARIABLE  # noqa: E402
from matador_env.serve import DEFAULT_BOTS, create_app, load_bots  # noqa: E402
from matador_env.web import PAGE_DIR, GameSessions, etag, web_routes  # noqa: E402

JSON_TYPE = {"Content-Type": "application/json"}
TILE = re.compile(r"(?<![\w-])(\d{1,2})-(\d{1,2})(?![\w-])")


class Reply:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status_code, self.headers, self.content = status, headers, body

    def json(self) -> Any:
        return json.loads(self.content)


class Client:
    """Just enough of an HTTP client to call an ASGI app in process."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        sent = {k.lower(): v for k, v in (headers or {}).items()}
        raw = b"" if content is None else content
        if body is not None:
            raw = json.dumps(body).encode()
            sent.setdefault("content-type", "application/json")
        sent["content-length"] = str(len(raw))
        path, _, query = path.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [(k.encode(), v.encode()) for k, v in sent.items()],
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 80),
        }
        out: dict[str, Any] = {"body": b""}

        async def run() -> None:
            given = False

            async def receive() -> dict[str, Any]:
                nonlocal given
                if given:
                    return {"type": "http.disconnect"}
                given = True
                return {"type": "http.request", "body": raw, "more_body": False}

            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    out["status"] = message["status"]
                    out["headers"] = {k.decode(): v.decode() for k, v in message["headers"]}
                else:
                    out["body"] += message.get("body", b"")

            await self.app(scope, receive, send)

        asyncio.run(run())
        return Reply(out["status"], out["headers"], out["body"])

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> Reply:
        return self.request("POST", path, body, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Reply:
        return self.request("DELETE", path, **kwargs)


def make_client(sessions: GameSessions | None = None) -> Client:
    return Client(Starlette(routes=web_routes(sessions=sessions)))


@pytest.fixture(scope="module")
def client() -> Client:
    return make_client()


def deal(client: Client, **settings: Any) -> dict[str, Any]:
    reply = client.post("/games", settings)
    assert reply.status_code == 201, reply.content
    game: dict[str, Any] = reply.json()
    return game


def assert_error(reply: Reply, status: int, kind: str, field: str | None) -> None:
    assert reply.status_code == status, reply.content
    error = reply.json()
    assert set(error) == {"error", "field", "message"}, error
    assert (error["error"], error["field"]) == (kind, field), error
    assert error["message"]


def assert_nothing_hidden(text: str, game: dict[str, Any]) -> None:
    """Every tile named anywhere in a response is in the person's hand or on the table."""
    view = game["view"]
    seen = set(view["hand"]) | set(view["layout"])
    text = text.replace(game["id"], "")  # a random id may hold "6-44"
    named = {f"{min(int(a), int(b))}-{max(int(a), int(b))}" for a, b in TILE.findall(text)}
    assert named <= seen, f"tiles the person cannot see: {sorted(named - seen)}"
    assert "boneyard" not in game and "hands" not in game and "hands" not in view


class GameClient(Protocol):
    """What :func:`play_out` needs of a client: this module's in-process one, or one
    over a real connection (``tests/test_wheel.py``)."""

    def post(self, path: str, body: Any = None) -> Reply: ...


def play_out(
    client: GameClient, game: dict[str, Any], rnd: random.Random
) -> Iterator[tuple[dict[str, Any], str]]:
    """Play the game to its end by random legal moves for the person and bot moves,
    yielding each game state and the raw text of the response that carried it."""
    while game["status"] in ("your_turn", "bot_turn", "hand_over"):
        gid = game["id"]
        if game["status"] == "hand_over":
            reply = client.post(f"/games/{gid}/next")
            assert reply.status_code == 200, reply.content
            game = reply.json()
        else:
            if game["status"] == "bot_turn":
                reply = client.post(f"/games/{gid}/bot")
            else:
                move = rnd.choice(game["view"]["legal_moves"])
                reply = client.post(f"/games/{gid}/move", {"move": move})
            assert reply.status_code == 200, reply.content
            event = reply.json()["event"]
            game = reply.json()["game"]
            assert event["text"] and event["move"] == game["view"]["history"][-1]["move"]
        yield game, reply.content.decode()


def play_to_end(client: Client, game: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
    for game, _text in play_out(client, game, rnd):  # noqa: B007, B020
        pass
    return game


# -- dealing ------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize("players, teams", [(2, False), (3, False), (4, False), (4, True)])
def test_deal_every_preset_and_seat_count(
    client: Client, preset: str, players: int, teams: bool
) -> None:
    reply = client.post(
        "/games", {"preset": preset, "players": players, "teams": teams, "level": "random"}
    )
    assert reply.status_code == 201, reply.content
    game = reply.json()
    rules = Rules.preset(preset, players=players, teams=teams)
    view = game["view"]
    assert game["settings"]["preset"] == preset and view["seat"] == 0
    assert len(game["seats"]) == players and len(game["sides"]) == rules.sides
    assert game["totals"] == [0] * rules.sides
    assert game["status"] in ("your_turn", "bot_turn")
    # Before the first action the person holds the dealt tiles; a bot may already
    # have led (the page asks for bot moves itself), never more than that.
    assert len(view["hand"]) == rules.tiles_per_seat[0]
    assert view["history"] == [] and game["table"]["pieces"] == []
    assert bool(view["legal_moves"]) == (game["status"] == "your_turn")
    assert_nothing_hidden(reply.content.decode(), game)


SEATS = {"2": (2, False), "3": (3, False), "4": (4, False), "4t": (4, True)}


@pytest.mark.parametrize("served", [False, True], ids=["every level", "a default server"])
def test_options_name_the_levels_each_seat_count_has(served: bool) -> None:
    # A default server (serve without --bots) offers what every level plays: its plain
    # trained levels only where a bot of that configuration is shipped.
    client = Client(create_app(load_bots(DEFAULT_BOTS))) if served else make_client()
    options = client.get("/games/options").json()
    by_name = {p["name"]: p for p in options["presets"]}
    assert list(by_name) == list(PRESETS)
    assert by_name["standard"]["levels"]["2"] == ["random", "greedy", "casual", "trained"]
    assert by_name["leiden"]["levels"]["3"] == ["random", "greedy"]  # no configuration
    # casual and trained exactly where a bot is shipped for the preset at that table
    shipped = shipped_configurations()
    for name, preset in by_name.items():
        for key, (players, teams) in SEATS.items():
            rules = Rules.preset(name, players=players, teams=teams)
            trained = configuration_of(rules) in shipped
            assert preset["levels"][key][2:] == (["casual", "trained"] if trained else [])
    assert by_name["double_nine"]["link_sum"] == 10
    assert all(p["players"] == [2, 3, 4] and p["teams"] is True for p in options["presets"])
    assert options["max_games"] > 0 and options["idle_expiry_s"] > 0


def test_four_seats_and_partnerships_play_their_trained_bots(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.test_shipped_bots import export_untrained

    monkeypatch.setenv(BOTS_DIR_VARIABLE, str(export_untrained(tmp_path)))
    client = make_client()
    levels = {p["name"]: p["levels"] for p in client.get("/games/options").json()["presets"]}
    assert levels["standard"]["4"] == levels["pagat"]["4t"] == list(LEVELS)
    assert levels["standard"]["2"] == levels["pagat"]["4"] == ["random", "greedy"]
    for settings in (
        {"preset": "standard", "players": 4, "level": "trained"},
        {"preset": "pagat", "players": 4, "teams": True, "level": "casual"},
    ):
        game = play_to_end(client, deal(client, **settings, seed=3), random.Random(3))
        assert game["status"] == "finished" and game["settings"]["level"] == settings["level"]
    reply = client.post("/games", {"preset": "standard", "level": "trained"})
    assert_error(reply, 422, "invalid", "level")
    message = reply.json()["message"]
    assert "shipped: standard_4p, pagat_teams" in message
    assert "levels for these rules: random, greedy" in message


# -- playing ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "preset, players, level, seed",
    [
        ("standard", 2, "trained", 1),
        ("standard", 4, "greedy", 2),
        ("leiden", 2, "casual", 3),
        ("leiden", 3, "greedy", 4),
        ("kardinal", 2, "random", 5),
        ("polish", 2, "greedy", 6),
        ("double_twelve", 4, "random", 7),
    ],
)
def test_a_full_hand_by_legal_moves(
    client: Client, preset: str, players: int, level: str, seed: int
) -> None:
    rules = Rules.preset(preset, players=players)
    if level in ("casual", "trained") and configuration_of(rules) not in shipped_configurations():
        level = "greedy"
    game = deal(client, preset=preset, players=players, level=level, seed=seed)
    rnd = random.Random(seed)
    steps = 0
    for game, text in play_out(client, game, rnd):  # noqa: B020
        steps += 1
        assert_nothing_hidden(text, game)
        view = game["view"]
        # The page's table: one piece per tile placed, one entry per open end.
        assert [p["tile"] for p in game["table"]["pieces"]] == view["layout"]
        assert [e["text"] for e in game["table"]["ends"]] == view["open_ends"]
        assert len(game["log"]) == len(view["history"])
        assert [s["tiles"] for s in game["seats"]] == view["hand_sizes"]
        assert game["drawable"] == max(0, view["boneyard_size"] - rules.boneyard_reserve)
    assert steps > 0 and game["status"] == "finished"
    # Nobody is to move once the hand is over; one hand has no match result.
    assert not any(s["to_move"] for s in game["seats"]) and game["result"] is None
    outcome = game["outcome"]
    # The same seed and moves replay to the same hand in the engine.
    state = MatchState.new(rules, game["settings"]["seed"])
    for action in game["view"]["history"]:
        state = state.apply(action["move"])
    assert state.hand.outcome is not None
    assert outcome["termination"] == state.hand.outcome.termination
    assert outcome["counts"] == list(state.hand.outcome.counts)
    assert game["view"]["hand"] == [str(t) for t in state.hand.hand(0)]
    assert game["totals"] == list(state.totals)
    assert outcome["text"]
    # Each sentence tells the end as it was when the move was made: an ordinary tile
    # laid in line touches it with the half that sums to S with what it showed.
    for line, event in zip(game["log"], state.hand.history, strict=True):
        tile, shows = event.move.tile, event.move.shows
        if tile is None or shows is None or tile.pips in (0, rules.link_sum):
            continue  # not an ordinary tile laid in line
        touching = tile.pips - shows
        if "needs a blank" in line:
            assert touching == 0, line
            continue
        shown = re.search(r"showing (\d+)\)|linking to (\d+) or (\d+)\)", line)
        assert shown, line
        values = [int(v) for v in shown.groups() if v is not None]
        assert rules.link_sum - touching in values, line


def test_a_match_to_a_low_target_runs_hand_after_hand(client: Client) -> None:
    game = deal(client, preset="standard", level="greedy", match=True, target=15, seed=11)
    assert game["settings"]["match"] is True and game["target"] == 15
    hands = set()
    for game, text in play_out(client, game, random.Random(11)):  # noqa: B020
        hands.add(game["hand_no"])
        assert_nothing_hidden(text, game)
    assert game["status"] == "finished"
    assert max(game["totals"]) >= 15
    assert game["result"] and game["result"].startswith("Match over")
    # Past tense reads right after "You" and "P1" alike (it read "You wins").
    assert re.fullmatch(
        r"Match over \(\d+ to \d+\): (You|P1) won\. You (win|lose) the match[.!]",
        game["result"],
    ), game["result"]
    assert len(hands) >= 1
    assert_error(client.post(f"/games/{game['id']}/next"), 409, "finished", None)


def test_a_hand_dealt_again_goes_on_with_next(client: Client) -> None:
    """leiden redeals a blocked hand whose lowest count is shared: a one-hand game
    then waits for ``next`` instead of ending."""

    def play_hand(game: dict[str, Any], rnd: random.Random) -> dict[str, Any]:
        while game["status"] in ("your_turn", "bot_turn"):
            if game["status"] == "bot_turn":
                game = client.post(f"/games/{game['id']}/bot").json()["game"]
            else:
                move = rnd.choice(game["view"]["legal_moves"])
                game = client.post(f"/games/{game['id']}/move", {"move": move}).json()["game"]
        return game

    for seed in range(200):
        game = play_hand(
            deal(client, preset="leiden", level="random", seed=seed), random.Random(seed)
        )
        client.delete(f"/games/{game['id']}")
        if game["outcome"]["termination"] in ("redeal_tie", "no_lead"):
            break
    else:
        raise AssertionError("no redeal in 200 leiden hands")
    # The same seed and choices play the same hand again.
    game = play_hand(deal(client, preset="leiden", level="random", seed=seed), random.Random(seed))
    assert game["status"] == "hand_over" and game["totals"] == [0, 0]
    reply = client.post(f"/games/{game['id']}/next")
    assert reply.status_code == 200, reply.content
    again = reply.json()
    assert again["hand_no"] == 2 and again["status"] in ("your_turn", "bot_turn")
    assert again["view"]["history"] == [] and again["outcome"] is None


def test_the_same_seed_deals_and_plays_the_same_game(client: Client) -> None:
    games = []
    for _ in range(2):
        game = deal(client, preset="leiden", level="random", seed=99)
        game = play_to_end(client, game, random.Random(1))
        games.append(game["view"]["history"])
    assert games[0] == games[1]


def test_the_curl_example_of_the_docs(client: Client) -> None:
    """docs/browser.md's three calls: seed 7 deals a hand the bot leads with 3-6, after
    which 1-2@1>2 is one of the player's legal moves."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "browser.md").read_text()
    assert '"seed": 7}' in doc and "P1 led 3-6" in doc and '{"move": "1-2@1>2"}' in doc
    game = deal(client, preset="standard", level="greedy", seed=7)
    assert game["status"] == "bot_turn"
    reply = client.post(f"/games/{game['id']}/bot")
    assert reply.status_code == 200, reply.content
    assert reply.json()["event"]["text"] == "P1 led 3-6"
    assert reply.json()["game"]["status"] == "your_turn"
    reply = client.post(f"/games/{game['id']}/move", {"move": "1-2@1>2"})
    assert reply.status_code == 200, reply.content
    assert reply.json()["event"]["move"] == "1-2@1>2"
    # Its If-Match example: the game is at "2" after those three calls.
    assert '/bot -H \'If-Match: "1"\'   # 412 once it is at "2"' in doc
    assert reply.headers["etag"] == '"2"'
    stale = client.post(f"/games/{game['id']}/bot", headers={"If-Match": '"1"'})
    assert_error(stale, 412, "stale", "header.If-Match")


# -- errors -------------------------------------------------------------------------------


def first_game(
    client: Client, status: str, preset: str = "standard", level: str = "greedy"
) -> dict[str, Any]:
    """A game whose first turn has ``status`` (``bot_turn``, ``your_turn``)."""
    for seed in range(50):
        game = deal(client, preset=preset, level=level, seed=seed)
        if game["status"] == status:
            return game
    raise AssertionError(f"no deal in 50 seeds starting with {status}")


def test_a_field_sent_as_null_takes_its_default() -> None:
    """JSON clients send null for "not set": every field takes its default then, as
    when left out (the integers did; preset, level, teams and match refused it)."""
    client = make_client()  # its own: the shared one's live games are capped
    for name in ("preset", "players", "teams", "level", "seat", "match", "target"):
        sent = deal(client, seed=11, **{name: None})
        left_out = deal(client, seed=11)
        assert sent["settings"] == left_out["settings"], name
    # Without a seed each deal draws its own.
    seeds = {deal(client, seed=None)["settings"]["seed"], deal(client)["settings"]["seed"]}
    assert len(seeds) == 2 and all(isinstance(seed, int) for seed in seeds), seeds


def test_settings_may_be_left_out_whole() -> None:
    # Every field is optional: an empty body (or one of blanks) needs no Content-Type.
    client = make_client()
    for content in (b"", b" \r\n"):
        reply = client.post("/games", content=content)
        assert reply.status_code == 201, reply.content
        assert reply.json()["settings"]["preset"] == "standard"


def test_the_person_sits_at_the_seat_chosen_with_a_partner_across() -> None:
    game = deal(make_client(), preset="pagat", players=4, teams=True, seat=3, level="random")
    assert game["view"]["seat"] == 3
    assert [s["name"] for s in game["seats"]] == ["P0", "P1 (partner)", "P2", "You"]
    assert game["sides"] == ["P0 + P2", "P1 + P3 (you)"]


def test_the_persons_draw_names_the_tile_drawn_and_a_bots_does_not() -> None:
    client = make_client()
    drew = set()  # who was seen drawing: the person (True), a bot (False)
    for seed in range(20):
        before = deal(client, level="greedy", seed=seed)
        for game, text in play_out(client, before, random.Random(seed)):
            event = json.loads(text).get("event")
            if event is not None and event["move"] == "draw":
                if event["seat"] == 0:
                    (tile,) = set(game["view"]["hand"]) - set(before["view"]["hand"])
                    assert event["text"] == f"You drew {tile}"
                else:
                    assert event["text"] == f"P{event['seat']} drew"
                drew.add(event["seat"] == 0)
            before = game
        client.delete(f"/games/{game['id']}")
        if drew == {True, False}:
            return
    raise AssertionError(f"no draw by both the person and a bot in 20 hands: {drew}")


def test_trained_bots_of_two_configurations_serve_one_page() -> None:
    # Trained bots are kept per rules: leiden's game is played by leiden's bot, not by
    # standard's loaded before it (which refuses leiden's views).
    client = make_client()
    deal(client, level="trained", seed=0)
    game = first_game(client, "bot_turn", preset="leiden", level="trained")
    reply = client.post(f"/games/{game['id']}/bot")
    assert reply.status_code == 200, reply.content


@pytest.mark.parametrize(
    "body, field",
    [
        ({"preset": "chess"}, "preset"),
        ({"level": "grandmaster"}, "level"),
        ({"preset": "leiden", "players": 3, "level": "trained"}, "level"),
        ({"target": 50, "level": "casual"}, "level"),
        ({"players": 5}, "players"),
        ({"players": "2"}, "players"),
        ({"players": 3, "teams": True}, "teams"),
        ({"players": 4, "teams": 1}, "teams"),
        ({"seat": 2}, "seat"),
        ({"target": 0}, "target"),
        ({"target": 10**9 + 1}, "target"),  # past the engine's bound: not "target_score"
        ({"match": "yes"}, "match"),
        ({"seed": -1}, "seed"),
        ({"seed": 1 << 63}, "seed"),
        ({"seed": True}, "seed"),
        ({"target": True}, "target"),
        ({"preset": ["standard"]}, "preset"),
        ({"level": ["greedy"]}, "level"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_settings_name_their_field(client: Client, body: dict[str, Any], field: str) -> None:
    assert_error(client.post("/games", body), 422, "invalid", field)


def test_bad_bodies(client: Client) -> None:
    game = first_game(client, "your_turn")
    path = f"/games/{game['id']}/move"
    json_type = {"Content-Type": "application/json"}
    assert_error(client.post(path, content=b"{", headers=json_type), 400, "bad_json", None)
    assert_error(client.post(path, content=b"[]", headers=json_type), 400, "not_an_object", None)
    assert_error(
        client.post(path, content=b""), 415, "unsupported_media_type", "header.content-type"
    )
    assert_error(
        client.post(path, content=b'{"move": "1-1"}', headers={"Content-Type": "text/plain"}),
        415,
        "unsupported_media_type",
        "header.content-type",
    )
    assert_error(client.post("/games", content=b"{nope", headers=json_type), 400, "bad_json", None)


def test_errors_about_the_body_name_what_the_endpoint_takes(client: Client) -> None:
    # The game endpoints take the game settings or a move, not a view as POST /move does.
    game = first_game(client, "your_turn")
    path = f"/games/{game['id']}/move"
    json_type = {"Content-Type": "application/json"}
    text = {"Content-Type": "text/plain"}
    for target, takes in (("/games", "the game settings"), (path, "the move")):
        for reply, status, kind, field in (
            (client.post(target, content=b"[]", headers=json_type), 400, "not_an_object", None),
            (
                client.post(target, content=b"{}", headers=text),
                415,
                "unsupported_media_type",
                "header.content-type",
            ),
        ):
            assert_error(reply, status, kind, field)
            message = reply.json()["message"]
            assert takes in message and "view" not in message, message
    settings = client.post("/games", content=b"[]", headers=json_type).json()["message"]
    assert "preset, players, teams, level" in settings
    assert (
        '{"move": "2-5@1>5"}'
        in client.post(path, content=b"[]", headers=json_type).json()["message"]
    )
    assert "send the move as JSON" in client.post(path, content=b"").json()["message"]


def test_refusals_echo_no_more_than_a_few_words_of_what_they_refuse() -> None:
    # A refusal must not cost what the request it refuses did: a long value, field
    # name or game id is cut short in the answer, as a query parameter's name is.
    client = make_client()
    long = "x" * 20_000
    for reply, field in (
        (client.post("/games", {"preset": long}), "preset"),
        (client.post("/games", {"level": long}), "level"),
        (client.post("/games", {"teams": long}), "teams"),
        (client.post("/games", {"seed": [0] * 5000}), "seed"),
        (client.post("/games", {long: 1}), "x" * 40),
        (client.get(f"/games/{long}"), "path.id"),
    ):
        assert reply.status_code in (404, 422), reply.content[:200]
        assert reply.json()["field"] == field
        assert len(reply.content) < 400, reply.content[:400]
    reply = client.post("/games", content=b'{"target": 1%s}' % (b"0" * 4000), headers=JSON_TYPE)
    assert_error(reply, 422, "invalid", "target")
    assert "integer of 4001 digits" in reply.json()["message"]


def test_every_game_endpoint_refuses_a_body_over_the_limit() -> None:
    """A body is read up to --max-body wherever it is sent, also to an endpoint that
    takes none: left unread, it was received and dropped for as long as it came."""
    client = Client(create_app(load_bots(["greedy"]), max_body=1000))
    game = deal(client, level="greedy", seed=1)
    gid = game["id"]
    too_large = b" " * 1001
    for method, path in (
        ("GET", "/games/options"),
        ("POST", "/games"),
        ("GET", f"/games/{gid}"),
        ("POST", f"/games/{gid}/move"),
        ("POST", f"/games/{gid}/bot"),
        ("POST", f"/games/{gid}/next"),
        ("DELETE", f"/games/{gid}"),
        ("POST", "/games/no-such-game/bot"),
    ):
        reply = client.request(method, path, content=too_large, headers=JSON_TYPE)
        assert_error(reply, 413, "too_large", None)
        assert "the limit of 1000 bytes" in reply.json()["message"]
    assert client.get(f"/games/{gid}").json() == game  # still there, unchanged
    # A small body where none is taken is still ignored, as before.
    assert client.request("GET", f"/games/{gid}", content=b"{}").status_code == 200


def test_a_wrong_method_or_path_names_the_game_endpoints() -> None:
    client = Client(create_app(load_bots(["greedy"])))
    gid = deal(client, seed=1)["id"]
    reply = client.request("PUT", f"/games/{gid}")
    assert_error(reply, 405, "method_not_allowed", None)
    # GET and DELETE both: Allow named only GET (and HEAD), the first route's methods.
    allowed = {m.strip() for m in reply.headers["allow"].split(",")}
    assert {"GET", "DELETE"} <= allowed, reply.headers
    assert "DELETE" in reply.json()["message"]
    reply = client.post(f"/games/{gid}/moves", {"move": "draw"})
    assert_error(reply, 404, "not_found", None)
    assert "/games" in reply.json()["message"], reply.json()
    assert client.delete(f"/games/{gid}").json() == {"deleted": gid}
    assert_error(client.delete(f"/games/{gid}"), 404, "unknown_game", "path.id")


def post_at_once(
    client: Client, requests: list[tuple[str, Any]], headers: dict[str, str] | None = None
) -> list[Reply]:
    """POST each (path, body) from a thread of its own, all released together."""
    gate = threading.Barrier(len(requests))

    def send(request: tuple[str, Any]) -> Reply:
        path, body = request
        gate.wait()
        return client.post(path, body, headers=headers)

    with ThreadPoolExecutor(len(requests)) as pool:
        return list(pool.map(send, requests))


def test_moves_sent_at_once_apply_one_at_a_time() -> None:
    """Moves and bot moves sent to one game at once are applied one after the other,
    each checked against the game as the one before left it: every answer 200 is one
    action of the hand, every other a refusal, and the hand replays in the engine."""
    client = make_client()
    for seed in range(6):
        game = deal(client, level="greedy", seed=seed)
        gid = game["id"]
        legal = game["view"]["legal_moves"] or ["draw"]
        replies = post_at_once(
            client,
            [(f"/games/{gid}/move", {"move": legal[i % len(legal)]}) for i in range(4)]
            + [(f"/games/{gid}/bot", None)] * 4,
        )
        for reply in replies:
            assert reply.status_code in (200, 409, 422), reply.content
        after = client.get(f"/games/{gid}").json()
        history = after["view"]["history"]
        assert len(history) == sum(r.status_code == 200 for r in replies)
        applied = sorted(r.json()["event"]["move"] for r in replies if r.status_code == 200)
        assert applied == sorted(action["move"] for action in history)
        state = MatchState.new(Rules.preset("standard"), seed)
        for action in history:
            state = state.apply(action["move"])
        assert after["view"]["hand"] == [str(t) for t in state.hand.hand(0)]
        client.delete(f"/games/{gid}")


def _bot_turn_with_bots_after(client: Client) -> dict[str, Any]:
    """A four-seat game at P1's turn, early in the hand: three bots move before the
    person, so only If-Match tells a request sent twice from two moves."""
    game = deal(client, level="greedy", players=4, seat=0, seed=3)
    rnd = random.Random(0)
    while not (game["status"] == "bot_turn" and game["view"]["to_move"] == 1):
        assert game["status"] in ("your_turn", "bot_turn"), "the hand ended first"
        if game["status"] == "your_turn":
            move = rnd.choice(game["view"]["legal_moves"])
            game = client.post(f"/games/{game['id']}/move", {"move": move}).json()["game"]
        else:
            game = client.post(f"/games/{game['id']}/bot").json()["game"]
    return game


def test_every_answer_with_a_game_carries_its_version_as_etag() -> None:
    client = make_client()
    created = client.post("/games", {"level": "greedy", "seed": 4})
    game = created.json()
    assert (game["version"], created.headers["etag"]) == (0, '"0"')
    gid = game["id"]
    versions = [0]
    for reply in play_out(client, game, random.Random(1)):
        versions.append(reply[0]["version"])
    assert versions == list(range(len(versions))), "every change raises it by one"
    shown = client.get(f"/games/{gid}")
    assert shown.headers["etag"] == f'"{versions[-1]}"' == f'"{shown.json()["version"]}"'
    assert "etag" not in client.get("/games/options").headers


def test_if_match_makes_a_request_sent_twice_apply_once() -> None:
    """Two bot moves sent at once with the ETag the client saw: one applies, the other
    is refused as stale; without If-Match both would apply (two bots are to move)."""
    client = make_client()
    game = _bot_turn_with_bots_after(client)
    gid, tag = game["id"], f'"{game["version"]}"'
    replies = post_at_once(client, [(f"/games/{gid}/bot", None)] * 2, {"If-Match": tag})
    assert sorted(r.status_code for r in replies) == [200, 412], [r.content for r in replies]
    stale = next(r for r in replies if r.status_code == 412)
    assert_error(stale, 412, "stale", "header.If-Match")
    after = client.get(f"/games/{gid}").json()
    assert after["version"] == game["version"] + 1
    assert len(after["view"]["history"]) == len(game["view"]["history"]) + 1
    # Without the header each request is one more move (P2 and P3 are bots too).
    replies = post_at_once(client, [(f"/games/{gid}/bot", None)] * 2)
    assert [r.status_code for r in replies] == [200, 200]
    assert client.get(f"/games/{gid}").json()["version"] == game["version"] + 3


class _HeldGreedy(Bot):
    """Greedy, whose moves wait inside the bot until ``release`` is set."""

    name = level = "greedy"
    rules = None

    def __init__(self) -> None:
        self.greedy = load_bot("greedy")
        self.inside = 0
        self.release = threading.Event()

    def _choose(self, view: SeatView, rng: random.Random) -> Move:
        self.inside += 1
        assert self.release.wait(60), "never released"
        return self.greedy.choose(view, rng)


def test_a_request_waits_for_the_move_under_way_before_its_if_match_is_checked() -> None:
    """A bot move under way holds its game: a second request with the same If-Match
    waits, then finds the game moved on (412). Without the game's lock it passed the
    check while the first was still choosing, and both moved."""
    held = _HeldGreedy()
    client = make_client(GameSessions(served=[held]))
    held.release.set()  # the moves that lead to the position
    game = _bot_turn_with_bots_after(client)
    held.release.clear()
    gid, sent = game["id"], {"If-Match": etag(game["version"])}
    before = held.inside
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(client.post, f"/games/{gid}/bot", headers=sent)
        while held.inside == before:  # the first request is choosing its move
            assert not first.done(), first.result().content
            time.sleep(0.01)
        second = pool.submit(client.post, f"/games/{gid}/bot", headers=sent)
        time.sleep(0.5)  # time enough for it to reach the bot, were it let through
        second_inside = held.inside > before + 1
        held.release.set()
        replies = [first.result(), second.result()]
    assert not second_inside, "the second request reached the bot while the first chose"
    assert [r.status_code for r in replies] == [200, 412], [r.content for r in replies]
    assert client.get(f"/games/{gid}").json()["version"] == game["version"] + 1


@pytest.mark.parametrize(
    "header, status",
    [
        ("*", 200),
        ('"CURRENT"', 200),
        ('"99", "CURRENT"', 200),
        ('"99"', 412),
        ('*, "CURRENT"', 400),  # * stands alone
        ('W/"CURRENT"', 412),  # strong comparison: a weak tag matches nothing
        ("CURRENT", 400),
        ('"CURRENT', 400),
        ("", 400),
    ],
)
def test_if_match_on_every_change(header: str, status: int) -> None:
    client = make_client()
    game = _bot_turn_with_bots_after(client)
    gid, version = game["id"], game["version"]
    sent = {"If-Match": header.replace("CURRENT", str(version))}
    reply = client.post(f"/games/{gid}/bot", headers=sent)
    assert reply.status_code == status, reply.content
    after = client.get(f"/games/{gid}").json()
    if status == 200:
        assert after["version"] == version + 1
        return
    assert_error(reply, status, "stale" if status == 412 else "bad_if_match", "header.If-Match")
    assert after == game, "a refused request changes nothing"
    # The person's move and the next hand check it first too (else: 409, a bot's turn),
    # and so does ending the game, which is then still there.
    assert client.post(f"/games/{gid}/move", {"move": "draw"}, headers=sent).status_code == status
    assert client.post(f"/games/{gid}/next", headers=sent).status_code == status
    assert client.delete(f"/games/{gid}", headers=sent).status_code == status
    assert client.get(f"/games/{gid}").json() == game


def test_a_game_is_ended_with_its_current_etag_and_not_with_an_older_one() -> None:
    client = make_client()
    game = _bot_turn_with_bots_after(client)
    gid, seen = game["id"], {"If-Match": etag(game["version"])}
    client.post(f"/games/{gid}/bot", headers=seen)  # another tab moved it on
    assert_error(client.delete(f"/games/{gid}", headers=seen), 412, "stale", "header.If-Match")
    current = client.get(f"/games/{gid}")
    ended = client.delete(f"/games/{gid}", headers={"If-Match": current.headers["etag"]})
    assert (ended.status_code, ended.json()) == (200, {"deleted": gid})
    assert client.get(f"/games/{gid}").status_code == 404


def test_a_stale_if_match_is_refused_before_the_move_is_judged() -> None:
    client = make_client()
    game = deal(client, level="greedy", seed=5)
    gid = game["id"]
    if game["status"] == "bot_turn":
        game = client.post(f"/games/{gid}/bot").json()["game"]
    move = game["view"]["legal_moves"][0]
    stale = f'"{game["version"] - 1}"' if game["version"] else '"77"'
    reply = client.post(f"/games/{gid}/move", {"move": move}, headers={"If-Match": stale})
    assert_error(reply, 412, "stale", "header.If-Match")
    assert "get it again" in reply.json()["message"]
    ok = client.post(
        f"/games/{gid}/move", {"move": move}, headers={"If-Match": f'"{game["version"]}"'}
    )
    assert ok.status_code == 200 and ok.json()["game"]["version"] == game["version"] + 1


def test_unknown_game(client: Client) -> None:
    for reply in (
        client.get("/games/no-such-game"),
        client.post("/games/no-such-game/move", {"move": "draw"}),
        client.post("/games/no-such-game/bot"),
        client.post("/games/no-such-game/next"),
        client.delete("/games/no-such-game"),
    ):
        assert_error(reply, 404, "unknown_game", "path.id")


def test_an_unknown_query_parameter_is_refused_as_on_move(client: Client) -> None:
    # A misspelt parameter would otherwise be ignored without a word (POST /move
    # refuses one); the page at / reads its own (?seed=, ?pause=) in the browser.
    game = first_game(client, "your_turn")
    for reply, name in (
        (client.get("/games/options?preset=leiden"), "preset"),
        (client.post("/games?level=greedy", {}), "level"),
        (client.get(f"/games/{game['id']}?verbose"), "verbose"),
        (client.post(f"/games/{game['id']}/move?seat=0", {"move": "draw"}), "seat"),
    ):
        assert_error(reply, 422, "invalid", f"query.{name}")
    assert client.get("/?seed=7&pause=300").status_code == 200


def test_moves_that_are_not_allowed(client: Client) -> None:
    game = first_game(client, "your_turn")
    gid = game["id"]
    legal = game["view"]["legal_moves"]
    mine = game["view"]["hand"]
    absent = next(f"{a}-{b}" for b in range(7) for a in range(b + 1) if f"{a}-{b}" not in mine)
    assert_error(client.post(f"/games/{gid}/move", {"move": absent}), 422, "invalid", "move")
    assert "draw" not in legal
    assert_error(client.post(f"/games/{gid}/move", {"move": "draw"}), 422, "invalid", "move")
    # Malformed moves are the protocol's errors, with its field paths.
    assert_error(client.post(f"/games/{gid}/move", {"move": "2-5@"}), 422, "invalid", "move")
    assert_error(client.post(f"/games/{gid}/move", {"mvoe": "2-5"}), 422, "invalid", "mvoe")
    assert_error(
        client.post(f"/games/{gid}/move", {"move": legal[0], "kind": "draw"}),
        422,
        "invalid",
        "kind",
    )
    # A bot move on the person's turn.
    assert_error(client.post(f"/games/{gid}/bot"), 409, "wrong_turn", "seat")
    # Nothing was changed by the refused requests.
    assert client.get(f"/games/{gid}").json()["view"] == game["view"]


def test_a_move_on_a_bots_turn(client: Client) -> None:
    game = first_game(client, "bot_turn")
    reply = client.post(f"/games/{game['id']}/move", {"move": "draw"})
    assert_error(reply, 409, "wrong_turn", "seat")
    assert_error(client.post(f"/games/{game['id']}/next"), 409, "hand_over", None)


def test_a_finished_game_takes_no_more_moves(client: Client) -> None:
    game = play_to_end(
        client, deal(client, preset="standard", level="greedy", seed=3), random.Random(3)
    )
    gid = game["id"]
    assert_error(client.post(f"/games/{gid}/bot"), 409, "finished", None)
    assert_error(client.post(f"/games/{gid}/move", {"move": "draw"}), 409, "finished", None)


# -- the bots the server serves ----------------------------------------------------------


def test_a_server_with_chosen_bots_offers_and_deals_only_those() -> None:
    """serve --bots greedy,mine=PATH serves greedy alone on the page (the exported
    policy on /move only): the page's options and POST /games too."""
    client = Client(create_app(load_bots(["greedy", "mine=matador_env/bots/standard"])))
    options = client.get("/games/options").json()
    assert list(options["levels"]) == ["greedy"]
    for preset in options["presets"]:
        assert preset["levels"] == {key: ["greedy"] for key in SEATS}, preset["name"]
    for level in ("trained", "casual", "random"):
        reply = client.post("/games", {"level": level})
        assert_error(reply, 422, "invalid", "level")
        message = reply.json()["message"]
        assert "not served here" in message and "serves only greedy (" in message, message
        assert message.endswith("levels for these rules: greedy"), message
    game = deal(client, seed=4)
    assert game["settings"]["level"] == "greedy"  # the strongest served
    if game["status"] == "bot_turn":
        assert client.post(f"/games/{game['id']}/bot").status_code == 200


def test_a_server_of_one_configuration_offers_its_trained_bot_there_only() -> None:
    """serve --config standard --bots trained,random: trained on standard for two only."""
    client = Client(create_app(load_bots(["trained", "random"], "standard")))
    options = client.get("/games/options").json()
    assert list(options["levels"]) == ["random", "trained"]
    levels = {p["name"]: p["levels"] for p in options["presets"]}
    assert levels["standard"] == {
        "2": ["random", "trained"],
        "3": ["random"],
        "4": ["random"],
        "4t": ["random"],
    }
    assert levels["leiden"]["2"] == ["random"]
    assert deal(client, seed=1)["settings"]["level"] == "trained"
    assert deal(client, preset="leiden", seed=1)["settings"]["level"] == "random"
    for body in ({"preset": "leiden", "level": "trained"}, {"players": 3, "level": "trained"}):
        reply = client.post("/games", body)
        assert_error(reply, 422, "invalid", "level")
        assert reply.json()["message"].endswith("levels for these rules: random")
    assert_error(client.post("/games", {"level": "greedy"}), 422, "invalid", "level")


def test_a_server_with_no_bot_for_a_table_says_so() -> None:
    client = Client(create_app(load_bots(["trained:standard"])))
    levels = {p["name"]: p["levels"] for p in client.get("/games/options").json()["presets"]}
    assert levels["pagat"] == {key: [] for key in SEATS}
    reply = client.post("/games", {"preset": "pagat"})
    assert_error(reply, 422, "invalid", "level")
    assert "no bot on this server plays pagat with 2 players" in reply.json()["message"]
    assert "serves only trained:standard" in reply.json()["message"]
    assert deal(client, seed=2)["settings"]["level"] == "trained"


# -- sessions -----------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_cap_on_live_games_and_the_expiry() -> None:
    clock = FakeClock()
    client = make_client(GameSessions(max_games=2, idle_expiry_s=60, clock=clock))
    first = deal(client, level="random")
    clock.now += 30
    second = deal(client, level="random")
    assert_error(client.post("/games", {"level": "random"}), 503, "too_many_games", None)
    # Ending a game frees its place.
    assert client.delete(f"/games/{second['id']}").json() == {"deleted": second["id"]}
    third = deal(client, level="random")
    assert_error(client.post("/games", {}), 503, "too_many_games", None)
    # A game used within the expiry is kept; one left alone longer is dropped.
    clock.now += 45
    assert client.get(f"/games/{third['id']}").status_code == 200
    assert_error(client.get(f"/games/{first['id']}"), 404, "unknown_game", "path.id")
    deal(client, level="random")
    assert client.get(f"/games/{third['id']}").status_code == 200


def test_a_game_is_dropped_only_past_its_expiry_and_dealing_drops_it() -> None:
    clock = FakeClock()
    client = make_client(GameSessions(max_games=1, idle_expiry_s=60, clock=clock))
    game = deal(client, level="random")
    for idle in (40, 40, 60):  # each use keeps it as long again; exactly that long too
        clock.now += idle
        assert client.get(f"/games/{game['id']}").status_code == 200
    assert_error(client.post("/games", {"level": "random"}), 503, "too_many_games", None)
    clock.now += 61  # past it: the next deal drops the game and takes its place
    deal(client, level="random")
    assert_error(client.get(f"/games/{game['id']}"), 404, "unknown_game", "path.id")


def test_the_cap_and_expiry_are_those_of_the_guide(client: Client) -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "browser.md").read_text()
    options = client.get("/games/options").json()
    assert f"at most **{options['max_games']} live games**" in doc
    assert f"unused for **{options['idle_expiry_s'] // 60} minutes**" in doc


# -- the page -----------------------------------------------------------------------------


def test_the_server_serves_the_page_and_its_files() -> None:
    from matador_env.bot import load_bot

    client = Client(create_app({"greedy": load_bot("greedy")}))
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    html = page.content.decode()
    assert page.headers["cache-control"] == "no-cache"
    for name, kind in (("app.js", "text/javascript"), ("style.css", "text/css")):
        assert f"/web/{name}" in html
        reply = client.get(f"/web/{name}")
        assert reply.status_code == 200 and reply.headers["content-type"].startswith(kind)
        assert reply.headers["cache-control"] == "no-cache"
    for name in ("secret.py", "index.html"):  # the page is served at / only
        assert_error(client.get(f"/web/{name}"), 404, "not_found", "path.name")
    assert client.get("/health").status_code == 200
    assert client.post("/games", {"level": "greedy"}).status_code == 201


def test_the_page_loads_nothing_from_elsewhere() -> None:
    files = sorted(Path(PAGE_DIR).iterdir())
    assert {f.name for f in files} == {"index.html", "app.js", "style.css"}
    for file in files:
        text = file.read_text(encoding="utf-8")
        assert not re.search(
            r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import",
            text.replace("http://www.w3.org/2000/svg", ""),
        ), file.name
