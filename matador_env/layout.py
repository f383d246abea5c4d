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
runs into another. Layouts with branches leaving an arm sideways (branching
matadors, a spinner placed in line) run straight instead, since a coil would run
into the branches.
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

_HEADINGS: dict[str, Vector] = {"west": (-1, 0), "east": (1, 0), "north": (0, -1), "south": (0, 1)}
# How far an arm runs out (far) and back in (near) before it steps aside, along the
# horizontal and the vertical (the table is wider than it is high).
_REACH = {"horizontal": (13, 2), "vertical": (5, 2)}
# An open end's marker sits this far beyond the last tile, along the arm.
_END_GAP = 0.62


def _left(d: Vector) -> Vector:
    return (d[1], -d[0])  # y grows downwards, as on a screen


def _right(d: Vector) -> Vector:
    return (-d[1], d[0])


def _neg(d: Vector) -> Vector:
    return (-d[0], -d[1])


def _add(p: Vector, d: Vector, k: float) -> Vector:
    return (p[0] + d[0] * k, p[1] + d[1] * k)


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
    """The coiling frame of one arm of the lead."""

    out: Vector
    side: Vector
    far: float
    near: float


@dataclass(frozen=True)
class _Socket:
    """Where the next tile on a port goes, which way, and how its arm coils (``arm``
    None: it runs straight; ``step``: the heading after a step aside)."""

    at: Vector
    heading: Vector
    arm: _Arm | None
    step: Vector | None


def layout_geometry(table: dict[str, Any]) -> tuple[list[PlacedPiece], list[EndSpot]]:
    """Each piece of ``table`` (:func:`layout_tree`) with the centres of its halves,
    and each open end with its marker's centre, in half-tile units around the lead."""

    def sideways(p: dict[str, Any]) -> bool:
        return p["port"] in ("left", "right")

    coil = not any(sideways(p) for p in table["pieces"]) and not any(
        sideways(e) for e in table["ends"]
    )
    placed: list[PlacedPiece] = []
    sockets: dict[tuple[int, str], _Socket] = {}
    for i, piece in enumerate(table["pieces"]):
        a, b = piece["a"], piece["b"]
        if piece["parent"] is None:
            spinner = piece["lie"] == "spinner"
            # A spinner lead stands across the line; its four sides take the four arms.
            if spinner:
                placed.append(PlacedPiece(piece, HalfTile(0, -0.5, a), HalfTile(0, 0.5, b)))
                half = {"west": 0.5, "east": 0.5, "north": 1.0, "south": 1.0}
            else:
                placed.append(PlacedPiece(piece, HalfTile(-0.5, 0, a), HalfTile(0.5, 0, b)))
                half = {"west": 1.0, "east": 1.0}
            for port, reach in half.items():
                heading = _HEADINGS[port]
                far, near = _REACH["horizontal" if heading[0] != 0 else "vertical"]
                arm = _Arm(heading, _left(heading), far, near) if coil else None
                sockets[(i, port)] = _Socket(_add((0, 0), heading, reach), heading, arm, None)
            continue
        socket = sockets[(piece["parent"], piece["port"])]
        at, heading, arm, step = socket.at, socket.heading, socket.arm, socket.step
        across = piece["lie"] != "inline"
        if arm is not None and not across:
            u = at[0] * arm.out[0] + at[1] * arm.out[1]
            turn: Vector | None = None
            if step is not None:
                turn = step
            elif (heading == arm.out and u + 2 > arm.far) or (
                heading == _neg(arm.out) and u - 2 < arm.near
            ):
                turn = arm.side
            if turn is not None:
                step = _neg(heading) if turn == arm.side else None
                # The turning tile lies beside the end of the last one, not over it.
                at = _add(_add(at, heading, 0.5), turn, -0.5)
                heading = turn
        if across:
            centre = _add(at, heading, 0.5)
            left, right = _left(heading), _right(heading)
            halves = (_add(centre, left, 0.5), _add(centre, right, 0.5))
            sockets[(i, "straight")] = _Socket(_add(at, heading, 1), heading, arm, step)
            sockets[(i, "left")] = _Socket(_add(centre, left, 1), left, None, None)
            sockets[(i, "right")] = _Socket(_add(centre, right, 1), right, None, None)
        else:
            halves = (_add(at, heading, 0.5), _add(at, heading, 1.5))
            sockets[(i, "straight")] = _Socket(_add(at, heading, 2), heading, arm, step)
        placed.append(PlacedPiece(piece, HalfTile(*halves[0], a), HalfTile(*halves[1], b)))
    spots = []
    for end in table["ends"]:
        socket = sockets[(end["piece"], end["port"])]
        spots.append(EndSpot(end, _add(socket.at, socket.heading, _END_GAP)))
    return placed, spots
