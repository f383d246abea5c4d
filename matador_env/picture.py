"""Pictures of the table as RGB arrays: what ``render_mode="rgb_array"`` returns.

:func:`draw_frame` draws a hand as a ``FRAME_SHAPE`` array of ``uint8`` (height,
width, RGB), the same size in every state, so that the frames of an episode make a
video (Gymnasium's ``RecordVideo``, SB3's ``VecVideoRecorder``). Top to bottom:

- a status line: the seat to move (or the hand's result), the boneyard, and in a
  match the totals per side and the target;
- the layout as the browser page draws it (:func:`matador_env.layout.layout_geometry`),
  scaled to fit: ivory tiles, matadors on a gold face with red pips, the tile placed
  last outlined in gold, each open end a ring with its text (``3``, ``3*`` a
  spinner side, ``3b`` a branch end, ``2/5`` crosswise, ``_`` needs a blank); values
  above 9 are written as numbers, as on the page;
- one row per seat: its name (with its team, ``A`` or ``B``, in a partnership game),
  its tile count, and its tiles, face up for the shown seat and for every seat once
  the hand is over, face down for the others; the seat to move is marked in gold.

Drawn with numpy alone (the text with a 5 x 7 bitmap font), so drawing needs no
package beyond the environments' own; :func:`write_png` saves a picture as a PNG
file (zlib, from the standard library), as ``python -m matador_env.replay --png``
does.
"""

from __future__ import annotations

import functools
import math
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .engine import HandState
from .engine.rules import LARGEST_SETTING
from .engine.state import _checked_scores
from .engine.tiles import INTEGER_KINDS, shown_value
from .files import atomic_write
from .layout import HalfTile, layout_geometry, layout_tree
from .values import integer_check, seat_value

__all__ = ["FRAME_SHAPE", "draw_domino", "draw_frame", "draw_text", "text_width", "write_png"]

FRAME_SHAPE = (540, 960, 3)
"""Height, width and channels of every frame."""

Color = tuple[int, int, int]

# The browser page's colours (matador_env/web/style.css).
FELT: Color = (0x1F, 0x5E, 0x3B)
FELT_DARK: Color = (0x17, 0x4A, 0x2E)
IVORY: Color = (0xFB, 0xF7, 0xEA)
MATADOR_FACE: Color = (0xFD, 0xE6, 0xB0)
INK: Color = (0x1D, 0x1D, 0x1B)
MATADOR_PIP: Color = (0x9B, 0x1B, 0x1B)
EDGE: Color = (0x3A, 0x3A, 0x36)
GOLD: Color = (0xF2, 0xB7, 0x05)
BACK: Color = (0x8A, 0x1C, 0x1C)
WHITE: Color = (0xFF, 0xFF, 0xFF)
TEXT: Color = (0xF5, 0xF2, 0xE8)
END_FILL: Color = (0x48, 0x7A, 0x5D)  # white at 16% over the felt
END_RING: Color = (0xA0, 0xBD, 0xAD)  # white at 55% over the felt

_STATUS_HEIGHT = 40
_SEATS_HEIGHT = 140
# Pips on a 3 x 3 grid, row by row, as on the page; 10 and above are written.
_PIPS = {
    0: (),
    1: (4,),
    2: (0, 8),
    3: (0, 4, 8),
    4: (0, 2, 6, 8),
    5: (0, 2, 4, 6, 8),
    6: (0, 2, 3, 5, 6, 8),
    7: (0, 2, 3, 4, 5, 6, 8),
    8: (0, 1, 2, 3, 5, 6, 7, 8),
    9: (0, 1, 2, 3, 4, 5, 6, 7, 8),
}
_PIP_STEP = 0.26  # between grid points, in half-tiles
_PIP_RADIUS = 0.085

# -- text --------------------------------------------------------------------------------------

# 5 x 7 glyphs, row by row ("#" ink); text is drawn in capitals, and a character
# without a glyph is drawn as "?".
_GLYPH_ROWS = {
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# ##..# #.#.# #..## #...# #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "####. ....# ....# .###. ....# ....# ####.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
    " ": "..... ..... ..... ..... ..... ..... .....",
    ":": "..... ..#.. ..#.. ..... ..#.. ..#.. .....",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... .##.. ..#.. .#...",
    "-": "..... ..... ..... .###. ..... ..... .....",
    "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "=": "..... ..... ##### ..... ##### ..... .....",
    "/": "....# ....# ...#. ..#.. .#... #.... #....",
    "*": "..... #.#.# .###. ##### .###. #.#.# .....",
    "_": "..... ..... ..... ..... ..... ..... #####",
    "|": "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "^": "..#.. .#.#. #...# ..... ..... ..... .....",
    "<": "...#. ..#.. .#... #.... .#... ..#.. ...#.",
    ">": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "[": ".###. .#... .#... .#... .#... .#... .###.",
    "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
}
_GLYPHS = {
    ch: np.array([[c == "#" for c in row] for row in rows.split()], dtype=bool)
    for ch, rows in _GLYPH_ROWS.items()
}
_GLYPH_W, _GLYPH_H = 5, 7


def text_width(text: str, scale: int = 1) -> int:
    """Pixels that :func:`draw_text` takes for ``text`` at ``scale``."""
    return max(0, len(text) * (_GLYPH_W + 1) * scale - scale)


def draw_text(
    canvas: np.ndarray,
    x: float,
    y: float,
    text: str,
    color: Color,
    scale: int = 1,
    centred: bool = False,
) -> None:
    """``text`` in capitals with its top left at (x, y), or centred on it."""
    if centred:
        x -= text_width(text, scale) / 2
        y -= _GLYPH_H * scale / 2
    left, top = round(x), round(y)
    for k, ch in enumerate(text.upper()):
        _paint(canvas, left + k * (_GLYPH_W + 1) * scale, top, _glyph(ch, scale), color)


@functools.cache
def _glyph(ch: str, scale: int) -> np.ndarray:
    """``ch``'s glyph (``?`` for a character without one), each dot ``scale`` pixels."""
    glyph = _GLYPHS.get(ch, _GLYPHS["?"])
    return glyph.repeat(scale, axis=0).repeat(scale, axis=1)


# -- shapes ------------------------------------------------------------------------------------


def _paint(canvas: np.ndarray, left: int, top: int, mask: np.ndarray, color: Color) -> None:
    """``color`` where ``mask`` is set, its top left at (left, top); clipped."""
    h, w = mask.shape
    y0, x0 = max(top, 0), max(left, 0)
    y1, x1 = min(top + h, canvas.shape[0]), min(left + w, canvas.shape[1])
    if y0 >= y1 or x0 >= x1:
        return
    region = canvas[y0:y1, x0:x1]
    region[mask[y0 - top : y1 - top, x0 - left : x1 - left]] = color


def _pixel_edge(v: float) -> int:
    # Halves round up, not to even: round() sent both edges of a 1-pixel bar from
    # 61.5 to 62.5 to 62, and the bar vanished.
    return math.floor(v + 0.5)


def _rect(canvas: np.ndarray, x0: float, y0: float, x1: float, y1: float, color: Color) -> None:
    top, left = max(_pixel_edge(y0), 0), max(_pixel_edge(x0), 0)
    canvas[top : max(_pixel_edge(y1), top), left : max(_pixel_edge(x1), left)] = color


def _disc(canvas: np.ndarray, cx: float, cy: float, r: float, color: Color) -> None:
    left, top = math.floor(cx - r), math.floor(cy - r)
    # A frame has a few hundred pips of a few sizes and offsets: their masks are kept.
    mask = _disc_mask(round(r, 2), round(cx - left, 2), round(cy - top, 2))
    _paint(canvas, left, top, mask, color)


@functools.lru_cache(maxsize=4096)
def _disc_mask(r: float, cx: float, cy: float) -> np.ndarray:
    """The pixels within ``r`` of (cx, cy), a box's top left corner at (0, 0)."""
    size = math.ceil(2 * r) + 2
    ys, xs = np.ogrid[:size, :size]
    return np.asarray((xs + 0.5 - cx) ** 2 + (ys + 0.5 - cy) ** 2 <= r * r)


def draw_domino(
    canvas: np.ndarray,
    h1: tuple[float, float, int | None],
    h2: tuple[float, float, int | None],
    unit: float,
    matador: bool = False,
    last: bool = False,
) -> None:
    """A domino from the pixel centres of its two halves and their values (None: a
    tile face down), each half ``unit`` pixels square: a ``matador`` on its own face
    with red pips, the tile placed ``last`` outlined in gold."""
    face, pip = (MATADOR_FACE, MATADOR_PIP) if matador else (IVORY, INK)
    edge, edge_width = (GOLD, 0.1) if last else (EDGE, 0.05)
    x0 = min(h1[0], h2[0]) - unit / 2 + 0.03 * unit
    y0 = min(h1[1], h2[1]) - unit / 2 + 0.03 * unit
    x1 = max(h1[0], h2[0]) + unit / 2 - 0.03 * unit
    y1 = max(h1[1], h2[1]) + unit / 2 - 0.03 * unit
    line = max(1.0, edge_width * unit)
    _rect(canvas, x0, y0, x1, y1, edge)
    if h1[2] is None:
        _rect(canvas, x0 + line, y0 + line, x1 - line, y1 - line, BACK)
        return
    _rect(canvas, x0 + line, y0 + line, x1 - line, y1 - line, face)
    bar = max(1.0, 0.04 * unit)
    mx, my = (h1[0] + h2[0]) / 2, (h1[1] + h2[1]) / 2
    if x1 - x0 > y1 - y0:
        _rect(canvas, mx - bar / 2, y0 + 0.14 * unit, mx + bar / 2, y1 - 0.14 * unit, EDGE)
    else:
        _rect(canvas, x0 + 0.14 * unit, my - bar / 2, x1 - 0.14 * unit, my + bar / 2, EDGE)
    for cx, cy, value in (h1, h2):
        assert value is not None
        if value in _PIPS:
            for p in _PIPS[value]:
                px = cx + (p % 3 - 1) * _PIP_STEP * unit
                py = cy + (p // 3 - 1) * _PIP_STEP * unit
                _disc(canvas, px, py, max(1.0, _PIP_RADIUS * unit), pip)
        else:
            scale = max(1, int(unit * 0.45 // _GLYPH_H))
            draw_text(canvas, cx, cy, str(value), pip, scale, centred=True)


# -- the frame ---------------------------------------------------------------------------------


# A match's target, read as Rules reads target_score.
_target_check = integer_check(ValueError, type_error=TypeError)


def draw_frame(
    hand: HandState,
    seat: int | None = None,
    totals: Sequence[int] | None = None,
    target: int | None = None,
    reveal: bool = False,
) -> np.ndarray:
    """The table of ``hand`` as a ``FRAME_SHAPE`` RGB array (see the module docstring).

    ``seat``'s tiles are drawn face up (None: the seat to move's), the others' face
    down until the hand is over, or every seat's with ``reveal``; ``totals`` (per
    side) and ``target`` are a match's (a target is drawn beside its totals, so it
    needs them). ``TypeError`` names a hand, a ``reveal`` or a target of the wrong
    type, ``ValueError`` any other argument that is not one of these (a seat read as
    the engine reads seats, totals as :meth:`HandState.view` takes a match's scores, a
    target as ``Rules.target_score``).
    """
    if not isinstance(hand, HandState):
        raise TypeError(
            f"draw_frame: hand={shown_value(hand)} ({type(hand).__name__}) is not allowed; "
            "allowed: a HandState"
        )
    if not isinstance(reveal, bool):
        raise TypeError(
            f"draw_frame: reveal={shown_value(reveal)} ({type(reveal).__name__}) is not "
            "allowed; allowed: True or False"
        )
    rules = hand.rules
    shown = hand.to_move if seat is None else seat_value(seat, rules.players)
    if shown is None:
        raise ValueError(
            f"seat {shown_value(seat)} is not a seat of a {rules.players}-player game; "
            f"allowed: None (the seat to move) or {INTEGER_KINDS} from 0 to "
            f"{rules.players - 1}"
        )
    totals = _checked_scores(totals, rules, "draw_frame: totals")
    if target is not None:
        if totals is None:
            raise ValueError(
                f"draw_frame: target={shown_value(target)} without totals; a target is "
                "drawn beside a match's totals, so give both or neither"
            )
        target = _target_check("draw_frame: target", target, 1, LARGEST_SETTING)
    canvas = _background().copy()
    over = hand.outcome is not None

    # The status line.
    status = str(hand.outcome) if over else f"P{hand.to_move} to move"
    status += f"   boneyard {hand.boneyard_size}"
    if totals is not None:
        status += "   totals " + " ".join(str(t) for t in totals)
        if target is not None:
            status += f" to {target}"
    scale = 2 if text_width(status, 2) <= FRAME_SHAPE[1] - 24 else 1
    draw_text(canvas, 12, (_STATUS_HEIGHT - _GLYPH_H * scale) / 2, status, TEXT, scale)

    _draw_layout(canvas, hand, _STATUS_HEIGHT, FRAME_SHAPE[0] - _SEATS_HEIGHT)

    # One row per seat.
    top = FRAME_SHAPE[0] - _SEATS_HEIGHT
    row = _SEATS_HEIGHT / rules.players
    unit = min(26.0, row * 0.8)
    for s in range(rules.players):
        y = top + s * row
        cy = y + row / 2
        moving = hand.to_move == s and not over
        if moving:
            _rect(canvas, 0, y + 2, 6, y + row - 2, GOLD)
        name = f"P{s}" + (" " + "AB"[rules.side_of(s)] if rules.teams else "")
        count = hand.hand_sizes[s]
        draw_text(canvas, 14, cy - 7, name, GOLD if moving else TEXT, scale=2)
        draw_text(canvas, 80, cy - 3.5, f"{count} tile{'s' if count != 1 else ''}", TEXT)
        face_up = over or reveal or s == shown
        tiles = list(hand.hand(s)) if face_up else [None] * count
        left, width = 150.0, FRAME_SHAPE[1] - 160
        size = min(unit, width / max(1, 2 * len(tiles) + 0.2 * (len(tiles) - 1)))
        for k, tile in enumerate(tiles):
            x = left + k * 2.2 * size
            if tile is None:
                draw_domino(canvas, (x + size / 2, cy, None), (x + 1.5 * size, cy, None), size)
                continue
            matador = rules.is_matador(tile)
            draw_domino(
                canvas, (x + size / 2, cy, tile[0]), (x + 1.5 * size, cy, tile[1]), size, matador
            )
    return canvas


@functools.cache
def _background() -> np.ndarray:
    """The empty frame: the felt, with the status line's and the seats' bands."""
    canvas = np.empty(FRAME_SHAPE, dtype=np.uint8)
    canvas[:] = FELT
    canvas[:_STATUS_HEIGHT] = FELT_DARK
    canvas[FRAME_SHAPE[0] - _SEATS_HEIGHT :] = FELT_DARK
    canvas.flags.writeable = False
    return canvas


def _draw_layout(canvas: np.ndarray, hand: HandState, top: int, bottom: int) -> None:
    """The layout between rows ``top`` and ``bottom``, scaled to fit them."""
    width = canvas.shape[1]
    if not hand.layout:
        draw_text(canvas, width / 2, (top + bottom) / 2, "no tile on the table yet", TEXT, 2, True)
        return
    table = layout_tree(hand.history, hand.ends, hand.rules)
    placed, spots = layout_geometry(table)
    xs = [0.0] + [h.x for p in placed for h in (p.h1, p.h2)] + [s.centre[0] for s in spots]
    ys = [0.0] + [h.y for p in placed for h in (p.h1, p.h2)] + [s.centre[1] for s in spots]
    # The window around the layout, at least 26 x 11 half-tiles as on the page, so
    # that the first tiles are not drawn huge.
    x0, x1 = min(xs) - 1.2, max(xs) + 1.2
    y0, y1 = min(ys) - 1.2, max(ys) + 1.2
    if x1 - x0 < 26:
        x0, x1 = (x0 + x1 - 26) / 2, (x0 + x1 + 26) / 2
    if y1 - y0 < 11:
        y0, y1 = (y0 + y1 - 11) / 2, (y0 + y1 + 11) / 2
    unit = min(width / (x1 - x0), (bottom - top) / (y1 - y0))
    ox = width / 2 - (x0 + x1) / 2 * unit
    oy = (top + bottom) / 2 - (y0 + y1) / 2 * unit

    def at(h: HalfTile) -> tuple[float, float, int]:
        return (ox + h.x * unit, oy + h.y * unit, h.value)

    for i, p in enumerate(placed):
        draw_domino(canvas, at(p.h1), at(p.h2), unit, p.piece["matador"], i == table["last"])
    for spot in spots:
        cx, cy = ox + spot.centre[0] * unit, oy + spot.centre[1] * unit
        _disc(canvas, cx, cy, 0.5 * unit, END_RING)
        _disc(canvas, cx, cy, 0.5 * unit - max(2.0, 0.06 * unit), END_FILL)
        label = spot.end["text"]
        scale = 2 if text_width(label, 2) <= 0.9 * unit else 1
        draw_text(canvas, cx, cy, label, WHITE, scale, centred=True)


# -- files --------------------------------------------------------------------------------------


def write_png(path: str | Path, picture: np.ndarray) -> Path:
    """``picture`` (height x width x 3, ``uint8``) as a PNG file at ``path``, written
    atomically (:func:`matador_env.files.atomic_write`)."""
    if not isinstance(picture, np.ndarray):
        raise TypeError(
            "a picture is a numpy array, height x width x 3 of uint8 (as draw_frame "
            f"returns), got {type(picture).__name__} {shown_value(picture)}"
        )
    if picture.dtype != np.uint8 or picture.ndim != 3 or picture.shape[2] != 3:
        raise ValueError(
            f"a picture is height x width x 3 of uint8, got {picture.shape} of {picture.dtype}"
        )
    height, width = picture.shape[:2]
    if height == 0 or width == 0:
        raise ValueError(
            f"a picture is at least 1 x 1 pixels (a PNG has no empty picture), got {height} x "
            f"{width}"
        )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    # Each row opens with its filter type, 0 (none).
    rows = np.concatenate([np.zeros((height, 1), np.uint8), picture.reshape(height, -1)], axis=1)
    png = b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),
            chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)),
            chunk(b"IEND", b""),
        ]
    )
    return atomic_write(path, lambda tmp: tmp.write_bytes(png))
