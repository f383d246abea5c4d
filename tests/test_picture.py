"""The table as a picture (matador_env.picture), and render_mode="rgb_array".

The pictures are checked by what they show, counted in pixels: the pips of each half,
one face per tile on the table, one marker per open end, the tiles of each seat face
up or down, the tile placed last outlined in gold.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import numpy as np
import pytest

from matador_env import MatadorSingleEnv, env, raw_env
from matador_env.engine import HandState, Rules
from matador_env.matador_v0 import RENDER_MODES
from matador_env.picture import (
    BACK,
    END_RING,
    FELT,
    FRAME_SHAPE,
    GOLD,
    INK,
    IVORY,
    MATADOR_FACE,
    MATADOR_PIP,
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
        assert len(components(colour(board, END_RING))) == len(state.ends)
        assert (colour(board, GOLD).sum() > 0) == bool(state.layout)  # the last tile
        # The shown seat's tiles face up, the others' backs, until the hand is over.
        seats = picture[SEATS]
        hidden = 0 if state.is_over else sum(state.hand_sizes) - state.hand_sizes[0]
        assert len(components(colour(seats, BACK))) == hidden


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
    assert list(tmp_path.iterdir()) == []
