"""The table as a picture (matador_env.picture), and render_mode="rgb_array".

The pictures are checked by what they show, counted in pixels: the pips of each half,
one face per tile on the table, one marker per open end, the tiles of each seat face
up or down, the tile placed last outlined in gold; and the text they write (the
status line, each seat's name and tile count) by drawing it again over them.
"""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

import numpy as np
import pytest

import matador_env
from matador_env import MatadorSingleEnv, env, raw_env
from matador_env.engine import HandState, Rules
from matador_env.matador_v0 import RENDER_MODES
from matador_env.picture import (
    BACK,
    EDGE,
    END_RING,
    FELT,
    FELT_DARK,
    FRAME_SHAPE,
    GOLD,
    INK,
    IVORY,
    MATADOR_FACE,
    MATADOR_PIP,
    TEXT,
    WHITE,
    draw_domino,
    draw_frame,
    draw_text,
    text_width,
)
from tests.scripted import played_states

CONFIGS = [
    ("standard", 2, False),
    ("kardinal", 2, False),
    ("kardinal_hard", 3, False),
    ("polish", 2, False),
    ("leiden", 3, False),
    ("double_nine", 4, False),
    ("double_twelve", 2, False),
    ("pagat", 4, True),
]
BOARD = slice(40, FRAME_SHAPE[0] - 140)
SEATS = slice(FRAME_SHAPE[0] - 140, FRAME_SHAPE[0])


def components(mask: np.ndarray) -> list[int]:
    """The sizes of the 4-connected regions of ``mask``."""
    seen = np.zeros_like(mask)
    sizes = []
    h, w = mask.shape
    for y, x in zip(*np.nonzero(mask), strict=True):
        if seen[y, x]:
            continue
        seen[y, x] = True
        queue, size = deque([(y, x)]), 0
        while queue:
            cy, cx = queue.popleft()
            size += 1
            for ny, nx in ((cy + 1, cx), (cy - 1, cx), (cy, cx + 1), (cy, cx - 1)):
                if 0 <= ny < h and 0 <= nx < w and mask[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    queue.append((ny, nx))
        sizes.append(size)
    return sizes


def colour(picture: np.ndarray, rgb: tuple[int, int, int]) -> np.ndarray:
    return np.all(picture == np.array(rgb, dtype=np.uint8), axis=-1)


def shows(
    picture: np.ndarray, x: float, y: float, text: str, rgb: tuple[int, int, int], scale: int = 1
) -> bool:
    """Whether ``text`` is written in ``picture`` at (x, y) in ``rgb``: writing it there
    again changes no pixel."""
    again = picture.copy()
    draw_text(again, x, y, text, rgb, scale)
    return np.array_equal(again, picture)


def page_pips() -> dict[int, set[int]]:
    """The browser page's pips of each value, on its 3 x 3 grid (matador_env/web/app.js)."""
    script = (Path(matador_env.__file__).parent / "web" / "app.js").read_text()
    found = re.search(r"const PIPS = \{(.*?)\};", script, re.S)
    assert found is not None
    return {
        int(value): {int(p) for p in points.split(",") if p.strip()}
        for value, points in re.findall(r"(\d+): \[([\d, ]*)\]", found.group(1))
    }


@pytest.mark.parametrize("unit", [16, 26, 40])
def test_each_half_shows_its_pips_and_values_above_nine_are_written(unit: int) -> None:
    for value in range(13):
        canvas = np.zeros((3 * unit, 4 * unit, 3), dtype=np.uint8)
        canvas[:] = FELT
        draw_domino(canvas, (1.5 * unit, 1.5 * unit, value), (2.5 * unit, 1.5 * unit, 0), unit)
        left = colour(canvas[:, : 2 * unit], INK)
        right = colour(canvas[:, 2 * unit :], INK)
        assert right.sum() == 0  # a blank half
        if value <= 9:
            assert len(components(left)) == value, value
        else:
            assert left.sum() > 0 and len(components(left)) < value  # digits, not pips


@pytest.mark.parametrize("unit", [16, 26, 40])
def test_pips_stand_on_the_pages_grid_and_grow_with_the_tile(unit: int) -> None:
    pips = page_pips()
    assert sorted(pips) == list(range(10))
    third = unit / 3
    for value, points in pips.items():
        canvas = np.zeros((3 * unit, 4 * unit, 3), dtype=np.uint8)
        draw_domino(canvas, (1.5 * unit, 1.5 * unit, value), (2.5 * unit, 1.5 * unit, 0), unit)
        half = colour(canvas[unit : 2 * unit, unit : 2 * unit], INK)
        cells = {
            3 * row + col
            for row in range(3)
            for col in range(3)
            if half[
                round(row * third) : round((row + 1) * third),
                round(col * third) : round((col + 1) * third),
            ].any()
        }
        assert cells == points, value
        # A pip is a disc of its half's size, not a dot (at least 1% of the half).
        assert all(size >= 0.01 * unit**2 for size in components(half)), value


@pytest.mark.parametrize("unit", [30, 24])  # 24: a line 1 pixel wide from 61.5 to 62.5
@pytest.mark.parametrize("vertical", [False, True])
def test_a_line_parts_the_halves_of_a_tile_across_its_middle(vertical: bool, unit: int) -> None:
    canvas = np.zeros((100, 100, 3), dtype=np.uint8)
    second = (50, 50 + unit, 0) if vertical else (50 + unit, 50, 0)
    draw_domino(canvas, (50, 50, 0), second, unit)
    if vertical:
        canvas = canvas.transpose(1, 0, 2)  # the same checks, along the tile
    ys, xs = np.nonzero(colour(canvas, IVORY))
    face = canvas[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    line_ys, line_xs = np.nonzero(colour(face, EDGE))
    assert line_xs.size > 0
    middle = face.shape[1] / 2
    assert np.abs(line_xs + 0.5 - middle).max() <= 1.5  # only at the middle
    assert np.ptp(line_ys) + 1 >= face.shape[0] / 2  # across most of the tile


def test_a_matador_is_drawn_on_its_own_face_and_a_tile_face_down_shows_its_back() -> None:
    canvas = np.zeros((60, 200, 3), dtype=np.uint8)
    draw_domino(canvas, (30, 30, 3), (55, 30, 4), 25, matador=True)
    draw_domino(canvas, (130, 30, None), (155, 30, None), 25)
    assert len(components(colour(canvas, MATADOR_PIP))) == 7
    assert colour(canvas[:, :100], MATADOR_FACE).sum() > 0
    assert colour(canvas[:, 100:], BACK).sum() > 0 and colour(canvas[:, 100:], INK).sum() == 0


def test_text_has_a_glyph_for_every_character_it_draws() -> None:
    a = np.zeros((20, 200, 3), dtype=np.uint8)
    b = np.zeros((20, 200, 3), dtype=np.uint8)
    draw_text(a, 0, 0, "blocked: seat 1 wins 24 (counts [9, 1])", IVORY)
    draw_text(b, 0, 0, "BLOCKED: SEAT 1 WINS 24 (COUNTS [9, 1])", IVORY)
    assert np.array_equal(a, b)  # drawn in capitals
    # A character without a glyph is drawn as "?".
    c = np.zeros((20, 40, 3), dtype=np.uint8)
    d = np.zeros((20, 40, 3), dtype=np.uint8)
    draw_text(c, 0, 0, "1~", IVORY)
    draw_text(d, 0, 0, "1?", IVORY)
    assert np.array_equal(c, d)
    assert text_width("ab", 2) == 2 * 12 - 2


@pytest.mark.parametrize(("preset", "players", "teams"), CONFIGS)
def test_every_state_of_a_hand_is_drawn_as_it_is(preset: str, players: int, teams: bool) -> None:
    rules = Rules.preset(preset, players=players, teams=teams)
    states = played_states(rules, seed=11)
    # Every state of the hand for the shape; the picture's contents counted at a few.
    for k, state in enumerate(states):
        picture = draw_frame(state, seat=0, totals=[0] * rules.sides, target=100)
        assert picture.shape == FRAME_SHAPE and picture.dtype == np.uint8
        if k % 7 and state is not states[-1]:
            continue
        board = picture[BOARD]
        faces = colour(board, IVORY) | colour(board, MATADOR_FACE)
        # (Digits on a face enclose small holes of it.)
        assert len([s for s in components(faces) if s > 100]) == len(state.layout)
        matadors = [t for t in state.layout if rules.is_matador(t)]
        assert len([s for s in components(colour(board, MATADOR_FACE)) if s > 100]) == len(matadors)
        assert len(components(colour(board, END_RING))) == len(state.ends)
        assert colour(board, WHITE).any() == bool(state.ends)  # each end's text
        assert (colour(board, GOLD).sum() > 0) == bool(state.layout)  # the last tile
        # The shown seat's tiles face up, the others' backs, until the hand is over.
        seats = picture[SEATS]
        hidden = 0 if state.is_over else sum(state.hand_sizes) - state.hand_sizes[0]
        assert len(components(colour(seats, BACK))) == hidden
        shown = range(rules.players) if state.is_over else [0]
        matadors = [t for seat in shown for t in state.hand(seat) if rules.is_matador(t)]
        assert len([s for s in components(colour(seats, MATADOR_FACE)) if s > 100]) == len(matadors)


def test_the_tile_placed_last_is_the_one_outlined_in_gold() -> None:
    states = played_states(Rules.preset("standard"), seed=11)
    for state in states[1:]:
        last = [e.move.tile for e in state.history if e.move.kind == "play"][-1]
        assert last is not None
        board = draw_frame(state)[BOARD]
        ys, xs = np.nonzero(colour(board, GOLD))
        outlined = board[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
        pips = colour(outlined, INK) | colour(outlined, MATADOR_PIP)
        assert len(components(pips)) == sum(last), (state.layout, last)


def test_the_layout_is_centred_and_its_first_tile_drawn_no_larger_than_on_the_page() -> None:
    # The page shows at least 26 x 11 half-tiles, so that the first tiles are not huge.
    height = BOARD.stop - BOARD.start
    states = played_states(Rules.preset("standard"), seed=11)
    first = colour(draw_frame(states[1])[BOARD], GOLD)  # the one tile, placed last
    ys, xs = np.nonzero(first)
    outline = sorted((np.ptp(ys) + 1, np.ptp(xs) + 1))
    assert 0.9 * height / 11 <= outline[0] <= height / 11
    assert outline[1] <= 2 * FRAME_SHAPE[1] / 26
    for state in states[1::5]:
        ys, xs = np.nonzero(~colour(draw_frame(state)[BOARD], FELT))
        assert abs((xs.min() + xs.max() + 1) / 2 - FRAME_SHAPE[1] / 2) <= 2
        assert abs((ys.min() + ys.max() + 1) / 2 - height / 2) <= 2


def test_an_empty_table_says_so() -> None:
    picture = draw_frame(HandState.deal(Rules.preset("standard"), 3))
    message = "no tile on the table yet"
    middle = ((BOARD.start + BOARD.stop) - 7 * 2) / 2
    assert shows(picture, (FRAME_SHAPE[1] - text_width(message, 2)) / 2, middle, message, TEXT, 2)


@pytest.mark.parametrize(
    ("players", "seed", "move", "totals", "target", "status", "scale"),
    [
        (2, 3, 0, None, None, "P1 to move   boneyard 14", 2),
        (2, 3, 0, (10, 20), 150, "P1 to move   boneyard 14   totals 10 20 to 150", 2),
        (2, 3, 0, (10, 20), None, "P1 to move   boneyard 14   totals 10 20", 2),
        (3, 3, -1, None, None, "domino: seat 0 wins 71 (counts [0, 57, 14])   boneyard 2", 2),
        (
            3,
            3,
            -1,
            (71, 2000000, 3000000),
            999999999,
            "domino: seat 0 wins 71 (counts [0, 57, 14])   boneyard 2   "
            "totals 71 2000000 3000000 to 999999999",
            1,  # too long for the larger letters
        ),
    ],
)
def test_the_status_line_says_who_moves_or_the_result_the_boneyard_and_the_match(
    players: int,
    seed: int,
    move: int,
    totals: tuple[int, ...] | None,
    target: int | None,
    status: str,
    scale: int,
) -> None:
    state = played_states(Rules.preset("standard", players=players), seed=seed)[move]
    picture = draw_frame(state, totals=totals, target=target)
    assert shows(picture, 12, (BOARD.start - 7 * scale) / 2, status, TEXT, scale)
    band = picture[: BOARD.start]
    assert (colour(band, FELT_DARK) | colour(band, TEXT)).all()  # the line alone, on dark felt
    assert text_width(status, scale) < FRAME_SHAPE[1] - 12  # all of it


@pytest.mark.parametrize(
    ("preset", "players", "teams", "seed", "move", "reveal", "names"),
    [
        ("standard", 3, False, 3, 22, False, ["P0", "P1", "P2"]),
        ("standard", 3, False, 3, 22, True, ["P0", "P1", "P2"]),
        ("standard", 3, False, 3, -1, False, ["P0", "P1", "P2"]),  # the hand is over
        ("pagat", 4, True, 11, 9, False, ["P0 A", "P1 B", "P2 A", "P3 B"]),
    ],
)
def test_each_seat_has_a_row_with_its_name_tile_count_and_tiles_the_seat_to_move_in_gold(
    preset: str, players: int, teams: bool, seed: int, move: int, reveal: bool, names: list[str]
) -> None:
    rules = Rules.preset(preset, players=players, teams=teams)
    state = played_states(rules, seed=seed)[move]
    picture = draw_frame(state, reveal=reveal)
    height = (SEATS.stop - SEATS.start) / players
    for s, name in enumerate(names):
        top = SEATS.start + s * height
        row = picture[round(top) : round(top + height)]
        assert colour(row, FELT_DARK).any() and not colour(row, FELT).any()  # the seats' band
        moving = not state.is_over and s == state.to_move
        assert colour(row[:, :6], GOLD).any() == moving  # the marker at the left
        assert shows(picture, 14, top + height / 2 - 7, name, GOLD if moving else TEXT, 2)
        count = state.hand_sizes[s]
        tiles = f"{count} tile" if count == 1 else f"{count} tiles"
        assert shows(picture, 80, top + height / 2 - 3.5, tiles, TEXT)
        hand = state.hand(s)
        if state.is_over or reveal or s == state.to_move:
            faces = colour(row, IVORY) | colour(row, MATADOR_FACE)
            assert len([c for c in components(faces) if c > 100]) == count
            pips = colour(row, INK) | colour(row, MATADOR_PIP)
            assert len(components(pips)) == sum(a + b for a, b in hand), (name, hand)
            assert not colour(row, BACK).any()
        else:
            assert len(components(colour(row, BACK))) == count


def test_the_seat_to_move_is_shown_unless_another_is_asked_for() -> None:
    rules = Rules.preset("standard", players=3)
    state = HandState.deal(rules, 4)
    backs = len(components(colour(draw_frame(state)[SEATS], BACK)))
    assert backs == sum(state.hand_sizes) - state.hand_sizes[state.to_move]
    with pytest.raises(ValueError, match="seat 3 is not a seat of a 3-player game"):
        draw_frame(state, seat=3)


@pytest.mark.parametrize("make", [raw_env, env])
def test_the_aec_env_renders_rgb_arrays(make: object) -> None:
    assert "rgb_array" in RENDER_MODES
    e = make(preset="polish", episode="match", render_mode="rgb_array")  # type: ignore[operator]
    e.reset(seed=3)
    for _ in range(30):
        picture = e.render()
        assert isinstance(picture, np.ndarray) and picture.shape == FRAME_SHAPE
        game = e.unwrapped.game
        assert np.array_equal(picture, game.frame())
        if e.terminations[e.agent_selection] or e.truncations[e.agent_selection]:
            break
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(int(np.flatnonzero(mask)[0]))


def test_the_single_env_shows_the_learners_tiles() -> None:
    e = MatadorSingleEnv(preset="standard", players=3, seat=1, render_mode="rgb_array")
    e.reset(seed=5)
    hand = e.game.hand
    picture = e.render()
    assert isinstance(picture, np.ndarray)
    assert np.array_equal(picture, draw_frame(hand, seat=1))
    backs = len(components(colour(picture[SEATS], BACK)))
    assert backs == sum(hand.hand_sizes) - hand.hand_sizes[1]


def test_gymnasium_collects_an_episodes_frames_by_the_id() -> None:
    import gymnasium

    import matador_env

    e = gymnasium.make(matador_env.GYM_ID, preset="leiden", render_mode="rgb_array_list")
    _, info = e.reset(seed=1)
    steps, done = 0, False
    while not done:
        _, _, terminated, truncated, info = e.step(int(np.flatnonzero(info["action_mask"])[0]))
        steps, done = steps + 1, terminated or truncated
    frames: np.ndarray | list[np.ndarray] | None = e.render()
    assert isinstance(frames, list) and len(frames) == steps + 1
    assert all(f.shape == FRAME_SHAPE for f in frames)
    assert not np.array_equal(frames[0], frames[-1])


@pytest.mark.parametrize("seat", [1.5, "0", True, 2, -1])
def test_a_seat_that_is_not_one_is_refused_naming_what_is_allowed(seat: object) -> None:
    # Before: 1.5 and True drew a picture (1.5 with every seat face down), "0" raised a
    # bare TypeError from a comparison.
    state = HandState.deal(Rules.preset("standard"), 3)
    with pytest.raises(ValueError, match=r"is not a seat of a 2-player game; allowed: None "):
        draw_frame(state, seat=seat)  # type: ignore[arg-type]
    assert np.array_equal(draw_frame(state, seat=np.int64(1)), draw_frame(state, seat=1))


def test_totals_are_one_per_side() -> None:
    # Before: any number of totals was drawn.
    state = HandState.deal(Rules.preset("standard", players=3), 3)
    with pytest.raises(ValueError, match=r"draw_frame: totals must be None or 3 match totals"):
        draw_frame(state, totals=[1, 2, 3, 4, 5], target=100)
    with pytest.raises(ValueError, match=r"draw_frame: totals: each total must be"):
        draw_frame(state, totals=[1, -2, 3], target=100)
    assert draw_frame(state, totals=(1, 2, 3), target=100).shape == FRAME_SHAPE


@pytest.mark.parametrize(
    ("arguments", "error", "message"),
    [
        (
            {"hand": None},
            TypeError,
            r"draw_frame: hand=None \(NoneType\) is not allowed; allowed: a HandState",
        ),
        (
            {"reveal": "yes"},
            TypeError,
            r"draw_frame: reveal='yes' \(str\) is not allowed; allowed: True or False",
        ),
        (
            {"target": 100},
            ValueError,
            r"draw_frame: target=100 without totals; .* give both or neither",
        ),
        (
            {"totals": (1, 2), "target": 0},
            ValueError,
            r"draw_frame: target=0 is not allowed; allowed: an integer from 1 to 1000000000$",
        ),
        (
            {"totals": (1, 2), "target": "100"},
            TypeError,
            r"draw_frame: target='100' is not allowed; allowed: an integer from 1",
        ),
        ({"totals": (1, 2), "target": True}, TypeError, r"draw_frame: target=True is not allowed"),
    ],
)
def test_a_hand_target_or_reveal_that_is_not_one_is_refused(
    arguments: dict[str, object], error: type[Exception], message: str
) -> None:
    # Before: a hand that is none raised AttributeError ('NoneType' object has no
    # attribute 'rules'); a target without totals was dropped unseen; a target of 0,
    # '100' or True and a reveal of 'yes' were drawn.
    state = HandState.deal(Rules.preset("standard"), 3)
    with pytest.raises(error, match=message):
        draw_frame(**{"hand": state, **arguments})  # type: ignore[arg-type]
    assert draw_frame(state, totals=(1, 2), target=np.int64(100)).shape == FRAME_SHAPE


def test_write_png_refuses_what_is_no_picture_naming_what_is(tmp_path: Path) -> None:
    # Before: a list raised AttributeError, an empty array numpy's reshape error.
    from matador_env.picture import write_png

    with pytest.raises(TypeError, match=r"a picture is a numpy array, height x width x 3 of uint8"):
        write_png(tmp_path / "a.png", [[0]])  # type: ignore[arg-type]
    for shape in ((0, 0, 3), (0, 4, 3), (4, 0, 3)):
        with pytest.raises(ValueError, match=r"a picture is at least 1 x 1 pixels"):
            write_png(tmp_path / "b.png", np.zeros(shape, np.uint8))
    for picture in (
        np.zeros((2, 2, 3)),
        np.zeros((2, 2, 3), np.uint16),
        np.zeros((2, 2), np.uint8),
    ):
        with pytest.raises(ValueError, match=r"a picture is height x width x 3 of uint8, got"):
            write_png(tmp_path / "c.png", picture)
    assert list(tmp_path.iterdir()) == []
