"""The layout as a tree of pieces, and where each piece lies on a grid of half-tiles.

:func:`layout_tree` reads the layout from the public history: each piece lies
``lead`` (across the middle, half ``a`` west), ``spinner`` (a double with four or
three arms: the Leiden cross), ``inline`` (``a`` touching its parent, ``b``
outward), ``cross`` (crosswise, ``a`` on the left of the arm's direction) or
``upright``; it hangs on its ``parent`` piece's ``port`` (``west``, ``east``,
``north``, ``south`` of the lead; ``straight``, ``left``, ``right`` of any other
piece). Each open end says which piece and port it is. ``last`` is the piece
placed last.

:func:`layout_geometry` places that tree on the plane, in units of one half-tile
(a domino is 2 x 1): the browser page (``matador_env/web/app.js``,
``layoutGeometry``) draws the same geometry, and a test holds the two equal. Long
arms coil up instead of stretching the table: an arm runs out along its first
heading, steps one tile to its left, runs back in, and so on; every arm of the lead
coils to its own left (a pinwheel), so each fills a quarter of the table and none
runs into another. A crosswise or upright piece (one unit deep) lies across its end
even at the turn, and the tile after it turns; but on the way back in among a spinner
lead's four arms it turns itself, lying along the arm beside the end, since the tile
turning after it would run into the next arm. Layouts with branches leaving an arm
sideways (branching matadors, a spinner placed in line) run straight instead, since a
coil would run into the branches.

Whatever its arm means, no piece is laid over a tile, nor over the unit square just
beyond an end open at the time (where the next tile there goes, and the end's marker
when the table is crowded there), nor so that an end of its own has no such square: a
piece whose way is taken turns aside, or slides along its end if it lies across, and
runs straight on from there. Where no way is left, the search goes back to a piece in
the way and lays it otherwise (:func:`_lay_out`); should even that fail (branching
matadors crowding a spinner can leave an end no way at all), the piece lies straight
out from its end across a gap. So no two tiles, no tile and end marker and no two
markers ever cover each other, in any state of a hand, and every layout that has the
room lies as its arms mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .engine import End, Event, Rules

__all__ = ["HalfTile", "PlacedPiece", "EndSpot", "layout_geometry", "layout_tree"]


def layout_tree(history: Sequence[Event], ends_now: Sequence[End], rules: Rules) -> dict[str, Any]:
    """The layout as pieces hanging on each other's ports, and where each open end is.

    Read from the public history alone: the ends each placement leaves (the next
    event's ends, or ``ends_now`` after the last) tell how the tile lies, whatever
    rule made it lie so.
    """
    pieces: list[dict[str, Any]] = []
    owners: list[tuple[int | None, str | None]] = []
    plays = [k for k, e in enumerate(history) if e.move.kind == "play"]
    for k in plays:
        event = history[k]
        move, before = event.move, event.ends
        after = history[k + 1].ends if k + 1 < len(history) else tuple(ends_now)
        tile = move.tile
        assert tile is not None
        lo, hi = tile
        piece: dict[str, Any] = {
            "tile": str(tile),
            "a": lo,
            "b": hi,
            "parent": None,
            "port": None,
            "matador": rules.is_matador(tile),
        }
        me = len(pieces)
        if move.mode == "lead":
            if len(after) == 4:
                piece["lie"] = "spinner"
                ports = ["west", "east", "north", "south"]
            else:
                piece["lie"] = "lead"
                piece["a"], piece["b"] = after[0].value, after[1].value
                ports = ["west", "east"]
            owners = [(me, port) for port in ports]
        else:
            i = move.end
            assert i is not None
            added = after[i : i + len(after) - len(before) + 1]
            piece["parent"], piece["port"] = owners[i]
            if move.mode == "inline" and len(added) == 3:
                piece["lie"] = "spinner"
                ports = ["left", "straight", "right"]
            elif move.mode == "inline":
                piece["lie"] = "inline"
                assert move.shows is not None
                piece["a"], piece["b"] = tile.pips - move.shows, move.shows
                ports = ["straight"]
            elif len(added) == 2:  # a branching matador: one branch per half
                piece["lie"] = "cross"
                piece["a"], piece["b"] = added[0].value, added[1].value
                ports = ["left", "right"]
            else:
                piece["lie"] = "cross" if move.mode == "cross" else "upright"
                ports = ["straight"]
            owners[i : i + 1] = [(me, port) for port in ports]
        pieces.append(piece)
    ends = [
        {"index": i, "text": str(end), "kind": end.kind, "piece": owner, "port": port}
        for i, (end, (owner, port)) in enumerate(zip(ends_now, owners, strict=True))
    ]
    return {"pieces": pieces, "ends": ends, "last": len(pieces) - 1 if pieces else None}


# -- geometry ---------------------------------------------------------------------------------

Vector = tuple[float, float]
# A square of the half-unit grid that every tile's edges lie on: cell (i, j) covers x
# from i/2 to (i+1)/2 and y from j/2 to (j+1)/2. Tiles and the open ends claim cells,
# so that whether a place is free is a lookup, not a geometry problem.
Cell = tuple[int, int]
EndKey = tuple[int, str]  # a port, by its piece and name

_HEADINGS: dict[str, Vector] = {"west": (-1, 0), "east": (1, 0), "north": (0, -1), "south": (0, 1)}
# How far an arm runs out (far) and back in (near) before it steps aside, along the
# horizontal and the vertical (the table is wider than it is high).
_REACH = {"horizontal": (13, 2), "vertical": (5, 2)}
# An open end's marker (a disc of radius 0.5) sits this far beyond the last tile,
# along the arm, where the table allows; where a tile lies close ahead, it sits at
# _END_NEAR, inside the unit square just beyond the end, which the end claims while
# it is open (the next tile there lies in it).
_END_GAP = 0.62
_END_NEAR = 0.5
# A crosswise piece may slide this far along itself off the middle of its end (it
# still touches the tile it hangs on) when the middle is taken.
_SLIDES = (0.5, -0.5, 1.0, -1.0)
# How far ahead (in half units) a detour looks for open table, to take the roomier way.
_LOOKAHEAD = 12
# The search for a layout in which every piece touches its parent gives up after this
# many tries of a way (a tenth of a millisecond each, here): nearly every layout needs
# none beyond one a piece, a few need some hundreds.
_SEARCH_TRIES = 2000


def _left(d: Vector) -> Vector:
    return (d[1], -d[0])  # y grows downwards, as on a screen


def _right(d: Vector) -> Vector:
    return (-d[1], d[0])


def _neg(d: Vector) -> Vector:
    return (-d[0], -d[1])


def _add(p: Vector, d: Vector, k: float) -> Vector:
    return (p[0] + d[0] * k, p[1] + d[1] * k)


def _dot(p: Vector, d: Vector) -> float:
    return p[0] * d[0] + p[1] * d[1]


def _cells(p: Vector, q: Vector) -> list[Cell]:
    """The cells of the rectangle with opposite corners ``p`` and ``q``."""
    x0, x1 = sorted((round(2 * p[0]), round(2 * q[0])))
    y0, y1 = sorted((round(2 * p[1]), round(2 * q[1])))
    return [(x, y) for x in range(x0, x1) for y in range(y0, y1)]


def _strip(at: Vector, heading: Vector, start: float, stop: float) -> list[Cell]:
    """The cells of the strip one unit wide centred on ``at``'s line along ``heading``,
    from ``start`` to ``stop`` units ahead of ``at``."""
    return _cells(
        _add(_add(at, heading, start), _left(heading), 0.5),
        _add(_add(at, heading, stop), _right(heading), 0.5),
    )


class HalfTile(NamedTuple):
    """The centre of one half of a placed tile and the value it shows."""

    x: float
    y: float
    value: int


@dataclass(frozen=True)
class PlacedPiece:
    """A piece of :func:`layout_tree` and the centres of its two halves."""

    piece: dict[str, Any]
    h1: HalfTile
    h2: HalfTile


@dataclass(frozen=True)
class EndSpot:
    """An open end of :func:`layout_tree` and where its marker is centred."""

    end: dict[str, Any]
    centre: Vector


@dataclass(frozen=True)
class _Arm:
    """The coiling frame of one arm of the lead (``hemmed``: it has an arm on
    either side, as a spinner lead's arms have)."""

    out: Vector
    side: Vector
    far: float
    near: float
    hemmed: bool


@dataclass(frozen=True)
class _Socket:
    """Where the next tile on a port goes, which way, and how its arm coils (``arm``
    None: it runs straight; ``step``: the heading after a step aside)."""

    at: Vector
    heading: Vector
    arm: _Arm | None
    step: Vector | None

    def ahead(self) -> list[Cell]:
        """The unit square just beyond the end, which the end claims while open."""
        return _strip(self.at, self.heading, 0, 1)


@dataclass(frozen=True)
class _Laid:
    """One way to lay a piece: the centres of its halves and the sockets of its ports."""

    halves: tuple[Vector, Vector]
    sockets: dict[str, _Socket]

    def cells(self) -> list[Cell]:
        (x1, y1), (x2, y2) = self.halves
        return _cells(
            (min(x1, x2) - 0.5, min(y1, y2) - 0.5), (max(x1, x2) + 0.5, max(y1, y2) + 0.5)
        )


def _in_line(at: Vector, heading: Vector, arm: _Arm | None, step: Vector | None) -> _Laid:
    """A tile along ``heading`` from ``at``, half ``a`` first."""
    halves = (_add(at, heading, 0.5), _add(at, heading, 1.5))
    return _Laid(halves, {"straight": _Socket(_add(at, heading, 2), heading, arm, step)})


def _across(centre: Vector, heading: Vector, arm: _Arm | None, step: Vector | None) -> _Laid:
    """A tile across ``heading`` centred on ``centre``, half ``a`` on the left; its
    sides are ports too (the branches of a branching matador, a spinner's arms)."""
    left, right = _left(heading), _right(heading)
    halves = (_add(centre, left, 0.5), _add(centre, right, 0.5))
    sockets = {
        "straight": _Socket(_add(centre, heading, 0.5), heading, arm, step),
        "left": _Socket(_add(centre, left, 1), left, None, None),
        "right": _Socket(_add(centre, right, 1), right, None, None),
    }
    return _Laid(halves, sockets)


def _straight(
    inline: bool, socket: _Socket, arm: _Arm | None, step: Vector | None, slide: float = 0
) -> _Laid:
    """The piece laid beyond the end, the way the arm runs (a crosswise one slid
    ``slide`` to the left of the middle)."""
    at, heading = socket.at, socket.heading
    if inline:
        return _in_line(at, heading, arm, step)
    centre = _add(_add(at, heading, 0.5), _left(heading), slide)
    return _across(centre, heading, arm, step)


def _turned(
    inline: bool, socket: _Socket, turn: Vector, arm: _Arm | None, step: Vector | None
) -> _Laid:
    """The piece laid beside the end, heading ``turn`` (a quarter turn) from then on.

    It reaches no further ahead than one unit: an in-line tile lies with half ``a``
    just beyond the end and half ``b`` to the side; a crosswise one lies along the
    old heading, half beside the last tile and half beyond its end."""
    at, heading = socket.at, socket.heading
    if inline:
        return _in_line(_add(_add(at, heading, 0.5), turn, -0.5), turn, arm, step)
    return _across(_add(at, turn, 1), turn, arm, step)


def _ways(inline: bool, socket: _Socket) -> tuple[list[_Laid], list[_Laid]]:
    """The ways to lay a piece on ``socket``: those its arm means (the first is the
    plan, which every layout without a crowded spot keeps to), and the detours (a
    quarter turn either way, a crosswise piece slid along its end, or straight on off
    a coil), which run straight on from there."""
    heading, arm, step = socket.heading, socket.arm, socket.step
    detours = [
        _turned(inline, socket, _left(heading), None, None),
        _turned(inline, socket, _right(heading), None, None),
    ]
    if not inline:
        detours += [_straight(inline, socket, None, None, slide) for slide in _SLIDES]
    if arm is None:
        return [_straight(inline, socket, None, None)], detours
    detours.insert(0, _straight(inline, socket, None, None))
    if step is not None:
        # Just stepped aside: an in-line tile turns back along the arm; a crosswise
        # one (one unit deep) steps on aside, and the tile after it turns.
        stepping = _straight(inline, socket, arm, step)
        if inline:
            return [_turned(inline, socket, step, arm, None), stepping], detours
        return [stepping], detours
    # An in-line tile turns where it would pass the arm's reach. A crosswise piece
    # (one unit deep) lies across the end even there, and the tile after it turns:
    # out on open table, or back in beside the lead; but not back in among a spinner's
    # four arms, where the tile turning after it would run into the next arm. There
    # it turns itself.
    u = _dot(socket.at, arm.out)
    if heading == arm.out:
        reached = inline and u + 2 > arm.far
    else:
        back_in = heading == _neg(arm.out)
        reached = back_in and (u - 2 < arm.near if inline else arm.hemmed and u - 1 < arm.near)
    turn = _turned(inline, socket, arm.side, arm, _neg(heading))
    if reached:
        return [turn], detours
    return [_straight(inline, socket, arm, None), turn], detours


class _Board:
    """The cells taken by the tiles laid so far, and by the ends open now."""

    def __init__(self, ports: dict[int, list[str]]) -> None:
        self.ports = ports  # each piece's ports in use
        self.tiles: dict[Cell, int] = {}  # cell -> the piece on it
        self.claims: dict[Cell, EndKey] = {}  # cell -> the open end claiming it
        self.sockets: dict[EndKey, _Socket] = {}  # an end claims its socket's ahead()

    def lay(self, i: int, end: EndKey | None, laid: _Laid) -> None:
        """Piece ``i`` laid on ``end`` (None: the lead), closing it and opening its ports."""
        if end is not None:
            for c in self.sockets[end].ahead():
                del self.claims[c]
        self.tiles.update(dict.fromkeys(laid.cells(), i))
        for port in self.ports.get(i, []):
            socket = self.sockets[(i, port)] = laid.sockets[port]
            self.claims.update(dict.fromkeys(socket.ahead(), (i, port)))

    def taker(self, c: Cell, end: EndKey | None) -> int | None:
        """The piece whose tile or open end (other than ``end``) takes cell ``c``, if any."""
        if c in self.tiles:
            return self.tiles[c]
        claim = self.claims.get(c, end)
        return None if claim is None or claim == end else claim[0]

    def blockers(self, i: int, end: EndKey | None, laid: _Laid) -> set[int]:
        """The pieces in the way of laying piece ``i`` on ``end`` as ``laid``: those
        whose tiles or open ends take a cell of its tile or of the squares its own
        ends will claim."""
        cells = laid.cells() + [c for p in self.ports.get(i, []) for c in laid.sockets[p].ahead()]
        return {k for k in (self.taker(c, end) for c in cells) if k is not None}

    def room(self, i: int, end: EndKey | None, laid: _Laid) -> int:
        """How far (in half units, up to _LOOKAHEAD) the table lies open beyond the
        nearest of the ends of piece ``i`` laid on ``end`` as ``laid``."""
        own = set(laid.cells())
        reach = _LOOKAHEAD
        for port in self.ports.get(i, []):
            socket = laid.sockets[port]
            for d in range(reach):
                strip = _strip(socket.at, socket.heading, d / 2, (d + 1) / 2)
                if any(c in own or self.taker(c, end) is not None for c in strip):
                    reach = d
                    break
        return reach


@dataclass
class _Choice:
    """The ways to lay one piece, as the search tries them: the meant ones in order,
    then the detours, the roomiest first; and the pieces found in their way."""

    ways: list[_Laid]
    detours: list[_Laid]
    blamed: set[int]
    tried: int = 0

    def next_way(self, board: _Board, i: int, end: EndKey | None) -> _Laid | None:
        if self.tried == len(self.ways) and self.detours:
            # (sorted keeps the first of equals in front, as the page's sort does)
            self.ways += sorted(self.detours, key=lambda way: -board.room(i, end, way))
            self.detours = []
        if self.tried == len(self.ways):
            return None
        self.tried += 1
        return self.ways[self.tried - 1]


def _lay_out(
    pieces: list[dict[str, Any]], ports: dict[int, list[str]], coil: bool
) -> tuple[list[_Laid], _Board]:
    """How each piece lies, in the order they were played, and the board they leave.

    Each piece takes the first way (:func:`_ways`) that covers no tile and no square
    claimed by an end open at the time, and leaves its own ends their squares. Where
    none is free, the search goes back to the latest piece in the way of them all (or
    the parent, which sets where they are) and lays it its next way, then the pieces
    after it afresh (backjumping). A layout with room enough thus lies exactly as its
    arms mean, and no state of a hand shows anything over anything. Should the search
    fail, a piece left no free way lies straight out from its end instead
    (:func:`_pushed_out`)."""
    ends = [None if p["parent"] is None else (p["parent"], p["port"]) for p in pieces]
    board = _Board(ports)
    laid: list[_Laid] = []
    deepest: list[_Laid] = []  # the most pieces laid so far
    choices: list[_Choice] = []
    tries, searching = 0, True
    while len(laid) < len(pieces):
        i, piece = len(laid), pieces[len(laid)]
        end = ends[i]
        inline = piece["lie"] == "inline"
        if i == len(choices):
            if end is None:
                choices.append(_Choice([_lead(piece, coil)], [], set()))
            else:
                # The parent is to blame too: laid otherwise, it would open other ways.
                choices.append(_Choice(*_ways(inline, board.sockets[end]), {end[0]}))
        choice = choices[i]
        way = None
        while way is None and (candidate := choice.next_way(board, i, end)):
            tries += 1
            blockers = board.blockers(i, end, candidate)
            choice.blamed |= blockers
            way = None if blockers else candidate
        if way is None and searching:
            if choice.blamed and tries <= _SEARCH_TRIES:
                back = max(choice.blamed)
                choices[back].blamed |= choice.blamed - {back}
                del choices[back + 1 :], laid[back:]
            else:
                # The search has failed (rare): back to the most pieces it laid, and on
                # from there without it, a piece with no free way pushed out from its end.
                searching = False
                laid[:] = deepest
                choices[:] = [_Choice([way], [], set()) for way in laid]  # (done with)
            board = _Board(ports)
            for k, earlier in enumerate(laid):
                board.lay(k, ends[k], earlier)
            continue
        if way is None:
            assert end is not None  # (the lead always finds the table empty)
            way = _pushed_out(i, end, inline, board)
        board.lay(i, end, way)
        laid.append(way)
        if len(laid) > len(deepest):
            deepest = laid.copy()
    return laid, board


def _pushed_out(i: int, end: EndKey, inline: bool, board: _Board) -> _Laid:
    """Piece ``i`` laid straight out from ``end``, as near as it fits, the gap showing
    where it hangs: for the rare end left no free way touching it (three branching
    matadors round a spinner can leave none). Beyond the tiles laid so far all is
    free, so the loop ends."""
    socket, distance = board.sockets[end], 0.5
    while True:
        at = _add(socket.at, socket.heading, distance)
        way = _straight(inline, _Socket(at, socket.heading, None, None), None, None)
        if not board.blockers(i, end, way):
            return way
        distance += 0.5


def _lead(piece: dict[str, Any], coil: bool) -> _Laid:
    """The lead, across the middle; a spinner lead stands across the line, its four
    sides taking the four arms."""
    if piece["lie"] == "spinner":
        halves: tuple[Vector, Vector] = ((0, -0.5), (0, 0.5))
        reach = {"west": 0.5, "east": 0.5, "north": 1.0, "south": 1.0}
    else:
        halves = ((-0.5, 0), (0.5, 0))
        reach = {"west": 1.0, "east": 1.0}
    sockets = {}
    for port, distance in reach.items():
        heading = _HEADINGS[port]
        far, near = _REACH["horizontal" if heading[0] != 0 else "vertical"]
        arm = _Arm(heading, _left(heading), far, near, len(reach) == 4) if coil else None
        sockets[port] = _Socket(_add((0, 0), heading, distance), heading, arm, None)
    return _Laid(halves, sockets)


def _end_spots(ends: list[dict[str, Any]], board: _Board) -> list[EndSpot]:
    """Each open end's marker: _END_GAP out where its disc then covers no tile and
    keeps a diameter from every other marker, else _END_NEAR out, inside the square
    the end claims."""
    sockets = [board.sockets[(e["piece"], e["port"])] for e in ends]
    centres = [_add(s.at, s.heading, _END_NEAR) for s in sockets]
    for k, socket in enumerate(sockets):
        far = _add(socket.at, socket.heading, _END_GAP)
        covers = any(c in board.tiles for c in _strip(socket.at, socket.heading, 1, 1.5))
        # (products, not powers: the page's arithmetic, to the last bit)
        if not covers and all(
            (far[0] - c[0]) * (far[0] - c[0]) + (far[1] - c[1]) * (far[1] - c[1]) >= 1 - 1e-9
            for m, c in enumerate(centres)
            if m != k
        ):
            centres[k] = far
    return [EndSpot(end, centre) for end, centre in zip(ends, centres, strict=True)]


def layout_geometry(table: dict[str, Any]) -> tuple[list[PlacedPiece], list[EndSpot]]:
    """Each piece of ``table`` (:func:`layout_tree`) with the centres of its halves,
    and each open end with its marker's centre, in half-tile units around the lead.
    No two tiles, and no tile and marker or two markers, cover each other."""

    def sideways(p: dict[str, Any]) -> bool:
        return p["port"] in ("left", "right")

    pieces = table["pieces"]
    coil = not any(sideways(p) for p in pieces) and not any(sideways(e) for e in table["ends"])
    # The ports in use: each has a piece on it or is an open end.
    ports: dict[int, list[str]] = {}
    for p in pieces:
        if p["parent"] is not None:
            ports.setdefault(p["parent"], []).append(p["port"])
    for e in table["ends"]:
        ports.setdefault(e["piece"], []).append(e["port"])
    laid, board = _lay_out(pieces, ports, coil)
    placed = [
        PlacedPiece(
            piece, HalfTile(*way.halves[0], piece["a"]), HalfTile(*way.halves[1], piece["b"])
        )
        for piece, way in zip(pieces, laid, strict=True)
    ]
    return placed, _end_spots(table["ends"], board)
