"""Where the layout's tiles and open ends lie (matador_env.layout.layout_geometry).

Random hands of every preset and of the rule combinations that crowd the table
(crosswise, upright and branching matadors, spinners, bigger sets, more seats) are
played move by move, and every state's geometry is held to what the picture and the
page promise: no two tiles overlap, no end marker lies over a tile or another
marker, every tile touches the piece it hangs on (its touching half next to it; only
where branching matadors crowd a spinner may one lie straight out from its end
instead, across an empty gap), each marker sits just beyond its own piece, and the
pieces and ends are the state's. Scripted hands pin the layouts that once broke
these, and the page's own script is held to the same geometry.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from matador_env.engine import PRESETS, HandState, Rules
from matador_env.layout import PlacedPiece, layout_geometry, layout_tree
from tests.scripted import played_states

EPS = 1e-6
MARKER_RADIUS = 0.5
# An end's marker is centred this far beyond its piece: 0.62 where the table is open,
# 0.5 (touching it) where a tile lies close ahead.
MARKER_GAPS = (0.5, 0.62)


def rectangles(placed: list[PlacedPiece]) -> np.ndarray:
    """Each tile as (x0, y0, x1, y1): the box round the unit squares of its halves."""
    return np.array(
        [
            (
                min(p.h1.x, p.h2.x) - 0.5,
                min(p.h1.y, p.h2.y) - 0.5,
                max(p.h1.x, p.h2.x) + 0.5,
                max(p.h1.y, p.h2.y) + 0.5,
            )
            for p in placed
        ]
    ).reshape(-1, 4)


def distances(points: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The distance from each point (rows) to each box (columns)."""
    px, py = points[:, None, 0], points[:, None, 1]
    dx = np.maximum.reduce(
        [boxes[None, :, 0] - px, np.zeros_like(px - boxes[None, :, 0]), px - boxes[None, :, 2]]
    )
    dy = np.maximum.reduce(
        [boxes[None, :, 1] - py, np.zeros_like(py - boxes[None, :, 1]), py - boxes[None, :, 3]]
    )
    return np.hypot(dx, dy)


def facing(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """How far boxes ``a`` and ``b`` overlap along x and along y (negative: a gap)."""
    return (min(a[2], b[2]) - max(a[0], b[0]), min(a[3], b[3]) - max(a[1], b[1]))


def touch(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether boxes ``a`` and ``b`` share a stretch of edge."""
    along_x, along_y = facing(a, b)
    return (abs(along_x) < EPS and along_y > EPS) or (abs(along_y) < EPS and along_x > EPS)


def hangs_across_a_gap(a: np.ndarray, b: np.ndarray, boxes: np.ndarray) -> bool:
    """Whether boxes ``a`` and ``b`` face each other across a gap no box lies in."""
    along_x, along_y = facing(a, b)
    if not ((along_x > EPS and along_y < -EPS) or (along_y > EPS and along_x < -EPS)):
        return False
    # Along each axis, the stretch the two share, or the one between them.
    x0, x1 = sorted((max(a[0], b[0]), min(a[2], b[2])))
    y0, y1 = sorted((max(a[1], b[1]), min(a[3], b[3])))
    over_x = np.minimum(boxes[:, 2], x1) - np.maximum(boxes[:, 0], x0)
    over_y = np.minimum(boxes[:, 3], y1) - np.maximum(boxes[:, 1], y0)
    return not np.any((over_x > EPS) & (over_y > EPS))


def check(state: HandState, rules: Rules) -> list[str]:
    """What is wrong with the geometry of ``state``'s layout (nothing: [])."""
    table = layout_tree(state.history, state.ends, rules)
    placed, spots = layout_geometry(table)
    problems = []
    if [p.piece["tile"] for p in placed] != [str(t) for t in state.layout]:
        problems.append("the pieces are not the state's layout")
    if [s.end["text"] for s in spots] != [str(e) for e in state.ends]:
        problems.append("the ends are not the state's ends")
    boxes = rectangles(placed)
    names = [f"{p.piece['tile']} ({p.piece['lie']})" for p in placed]
    for p in placed:
        if sorted((p.h1.value, p.h2.value)) != sorted(int(v) for v in p.piece["tile"].split("-")):
            problems.append(f"{p.piece['tile']} shows {p.h1.value} and {p.h2.value}")
        if any((2 * v) % 1 for v in (p.h1.x, p.h1.y, p.h2.x, p.h2.y)):
            problems.append(f"{p.piece['tile']} is off the half-unit grid")
    # No two tiles overlap.
    over_x = np.minimum(boxes[:, None, 2], boxes[None, :, 2]) - np.maximum(
        boxes[:, None, 0], boxes[None, :, 0]
    )
    over_y = np.minimum(boxes[:, None, 3], boxes[None, :, 3]) - np.maximum(
        boxes[:, None, 1], boxes[None, :, 1]
    )
    for i, j in zip(*np.nonzero(np.triu((over_x > EPS) & (over_y > EPS), 1)), strict=True):
        problems.append(f"tiles {names[i]} and {names[j]} overlap")
    # No marker lies over a tile or another marker, and each sits beyond its own piece.
    centres = np.array([s.centre for s in spots]).reshape(-1, 2)
    if len(spots) and len(placed):
        to_tiles = distances(centres, boxes)
        for k, i in zip(*np.nonzero(to_tiles < MARKER_RADIUS - EPS), strict=True):
            problems.append(f"the marker of end {spots[k].end['text']!r} lies over {names[i]}")
        for k, spot in enumerate(spots):
            own = to_tiles[k, spot.end["piece"]]
            if not any(abs(own - gap) < EPS for gap in MARKER_GAPS):
                problems.append(f"the marker of end {spot.end['text']!r} is {own} from its piece")
    apart = np.hypot(*(centres[:, None, :] - centres[None, :, :]).transpose(2, 0, 1))
    for k, m in zip(*np.nonzero(np.triu(apart < 2 * MARKER_RADIUS - EPS, 1)), strict=True):
        problems.append(
            f"the markers of ends {spots[k].end['text']!r}, {spots[m].end['text']!r} overlap"
        )
    # Every piece touches its parent, its touching half next to it; or, where no way
    # touching the end was free (only branching matadors round a spinner leave none),
    # it lies straight out from it across an empty gap.
    for i, p in enumerate(placed):
        parent = p.piece["parent"]
        if parent is None:
            continue
        a, b = boxes[i], boxes[parent]
        if not touch(a, b) and not (crowded(rules) and hangs_across_a_gap(a, b, boxes)):
            problems.append(f"{names[i]} does not touch {names[parent]}")
        if p.piece["lie"] == "inline":
            middle = (boxes[parent, :2] + boxes[parent, 2:]) / 2
            near, far = (np.hypot(*(np.array(h[:2]) - middle)) for h in (p.h1, p.h2))
            if not near < far:
                problems.append(f"{names[i]} turns its outward half to {names[parent]}")
    return problems


def crowded(rules: Rules) -> bool:
    """Whether ``rules`` can leave an end no free way touching it: branching matadors
    with a spinner."""
    return rules.matador_placement == "branching" and rules.spinner != "none"


def detached(state: HandState, rules: Rules) -> int:
    """How many pieces of ``state``'s layout do not touch their parents."""
    placed, _ = layout_geometry(layout_tree(state.history, state.ends, rules))
    boxes = rectangles(placed)
    return sum(
        p.piece["parent"] is not None and not touch(boxes[i], boxes[p.piece["parent"]])
        for i, p in enumerate(placed)
    )


PLACEMENTS = ["inline", "crosswise_choice", "crosswise_on_blank", "upright", "branching"]
# (name, preset, overrides, hands): every preset as it stands, with more seats, and
# the combinations that crowd the table most.
CASES: list[tuple[str, str, dict[str, Any], int]] = [
    *[
        (name, name, {}, 8 if name == "double_twelve" else 12 if name == "double_nine" else 30)
        for name in PRESETS
    ],
    ("standard, 3 seats", "standard", {"players": 3}, 20),
    ("standard, 4 seats", "standard", {"players": 4}, 20),
    ("pagat, 4 seats in teams", "pagat", {"players": 4, "teams": True}, 20),
    ("kardinal, 3 seats", "kardinal", {"players": 3}, 30),
    ("kardinal_hard, 4 seats", "kardinal_hard", {"players": 4}, 30),
    (
        "kardinal, all tiles dealt",
        "kardinal",
        {"hand_size": "all", "matador_only_when_stuck": False},
        30,
    ),
    ("polish, 3 seats", "polish", {"players": 3}, 20),
    ("double_nine, 4 seats", "double_nine", {"players": 4}, 10),
    ("double_twelve, 3 seats", "double_twelve", {"players": 3}, 6),
    *[(f"leiden, {p}", "leiden", {"matador_placement": p}, 100) for p in PLACEMENTS],
    *[
        (
            f"first_double spinner, {p}",
            "standard",
            {"spinner": "first_double", "matador_placement": p},
            60,
        )
        for p in PLACEMENTS
    ],
    (
        "first_double spinner, branching, all tiles dealt",
        "standard",
        {"spinner": "first_double", "matador_placement": "branching", "hand_size": "all"},
        40,
    ),
    (
        "double_nine, branching first_double, all dealt",
        "standard",
        {
            "set_max": 9,
            "spinner": "first_double",
            "matador_placement": "branching",
            "hand_size": "all",
        },
        12,
    ),
    (
        "double_twelve, branching, all dealt",
        "standard",
        {"set_max": 12, "matador_placement": "branching", "hand_size": "all"},
        5,
    ),
    (
        "double_twelve, first_double, all dealt",
        "standard",
        {"set_max": 12, "spinner": "first_double", "hand_size": "all"},
        4,
    ),
]


@pytest.mark.parametrize(
    ("preset", "overrides", "hands"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_random_hands_never_draw_anything_over_anything(
    preset: str, overrides: dict[str, Any], hands: int
) -> None:
    rules = Rules.preset(preset, **overrides)
    placements = 0
    for seed in range(hands):
        for k, state in enumerate(played_states(rules, seed)):
            problems = check(state, rules)
            assert not problems, (seed, k, " ".join(map(str, state.moves)), problems)
            placements += bool(state.layout)
    assert placements > 5 * hands


def play(rules: Rules, seed: int, moves: str) -> list[HandState]:
    """Every state of a scripted hand."""
    states = [HandState.deal(rules, seed)]
    for move in moves.split():
        states.append(states[-1].apply(move))
    return states


# Hands whose layouts the geometry once drew with tiles or markers over each other:
# (what went wrong, rules, seed, moves).
ONCE_BROKEN = [
    (
        "an upright matador at a coiled arm's turn: the arm ran on into the next arm",
        Rules.preset("leiden", matador_placement="upright"),
        379,
        "2-2 3-4@1^ 4-5@3>4 draw draw draw 5-6@2>6 draw draw 0-5@0>0 1-3@2>3 2-4@2>2 2-3@3>2 "
        "0-2@1>2 draw 5-5@3>5 1-2@3>1 4-6@3>4 draw 1-6@3^ draw draw draw 3-5@1>3 0-1@3>1",
    ),
    (
        "kardinal: an arm ran straight into a branch, its end marker over a tile",
        Rules.preset("kardinal"),
        3362,
        "1-1 2-6@1>2 5-6@1>6 0-6@0>0 0-1@1>0 0-0@0x draw draw pass draw draw 1-6@2x 6-6@2>6 "
        "draw draw 1-3@2>3 1-4@3>4 4-5@2>5 2-4@2>4 3-5@3>5 0-3@2>0 2-2@3>2 0-5@3>0 draw draw "
        "pass draw 2-5@1>2 draw 5-5@1>5 draw draw 3-4@1x 3-3@2>3 0-4@1>0 4-4@2>4 draw draw "
        "pass 2-3@2>2 1-5@2>1 3-6@2>3",
    ),
    (
        "a spinner lead's arms with branching matadors: their branches crossed",
        Rules.preset("standard", spinner="first_double", matador_placement="branching"),
        13,
        "4-4 2-5@1x 0-0@3x 3-4@1>3",
    ),
]


@pytest.mark.parametrize(
    ("rules", "seed", "moves"), [c[1:] for c in ONCE_BROKEN], ids=[c[0] for c in ONCE_BROKEN]
)
def test_layouts_that_once_overlapped_do_not(rules: Rules, seed: int, moves: str) -> None:
    for k, state in enumerate(play(rules, seed, moves)):
        problems = check(state, rules)
        assert not problems, (k, problems)
        assert detached(state, rules) == 0


def test_a_piece_left_no_free_way_lies_straight_out_from_its_end() -> None:
    """Three branching matadors round a spinner lead leave the third no way to touch
    it that is clear of the others' branches: it lies out from its end, with a gap,
    and still nothing covers anything."""
    rules = Rules.preset("leiden", matador_placement="branching")
    states = play(rules, 115, "5-5 2-4@1>4 1-6@0x 3-4@3x 0-0@5x")
    for state in states:
        assert not check(state, rules)
    assert [detached(s, rules) for s in states[1:]] == [0, 0, 0, 0, 1]


# The page (matador_env/web/app.js) run by node, its calls on the browser answered by
# a stand-in that takes everything and does nothing: each table in, the page's own
# layoutGeometry of it out.
PAGE_GEOMETRY = """
const fs = require("fs");
const vm = require("vm");
const inert = new Proxy(function () {}, { get: () => inert, apply: () => inert, set: () => true });
const page = {
  location: { search: "" }, URLSearchParams, document: inert, window: inert,
  fetch: () => new Promise(() => {}),
};
vm.createContext(page);
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), page);
const tables = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(tables.map((table) => {
  const { placed, ends } = page.layoutGeometry(table);
  return [placed.map(({ h1, h2 }) => [h1, h2]), ends.map(({ centre }) => centre)];
})));
"""


def test_the_page_lays_out_the_crowded_tables_as_layout_geometry_does() -> None:
    """tests/test_browser.py holds the page's layoutGeometry equal to layout_geometry
    on random hands in Chromium; this holds them equal (under node, where there is
    one) on the crowded tables that take detours, the search and the push."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node to run the page's script")
    tables = []
    for rules, seed, moves in [c[1:] for c in ONCE_BROKEN] + [
        (
            Rules.preset("leiden", matador_placement="branching"),
            115,
            "5-5 2-4@1>4 1-6@0x 3-4@3x 0-0@5x",
        )
    ]:
        tables += [layout_tree(s.history, s.ends, rules) for s in play(rules, seed, moves)[1:]]
    for preset, overrides, hands in [
        c[1:] for c in CASES if "branching" in c[0] or "upright" in c[0]
    ]:
        rules = Rules.preset(preset, **overrides)
        for seed in range(min(hands, 10)):
            states = played_states(rules, seed)
            tables += [layout_tree(s.history, s.ends, rules) for s in states if s.layout]
    app = Path(__file__).resolve().parent.parent / "matador_env" / "web" / "app.js"
    run = subprocess.run(
        [node, "-e", PAGE_GEOMETRY, str(app)],
        input=json.dumps(tables),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    drawn = json.loads(run.stdout)
    assert len(drawn) == len(tables) > 1000
    for table, (halves, centres) in zip(tables, drawn, strict=True):
        placed, spots = layout_geometry(table)
        ours = [[list(p.h1), list(p.h2)] for p in placed], [list(s.centre) for s in spots]
        assert ours == (halves, centres), table


# -- what the tree and the geometry say beyond "nothing over anything" -------------------------

# The rules whose ends show a number beside one half of the piece they open on: plain
# ends, branches of branching matadors (one per half), spinner sides, crosswise pieces.
SHOWN_CASES = [
    ("standard", {}),
    ("kardinal", {}),
    ("leiden", {}),
    ("polish", {}),
    ("standard", {"spinner": "first_double", "matador_placement": "branching"}),
    ("standard", {"matador_placement": "crosswise_choice"}),
]


@pytest.mark.parametrize(
    ("preset", "overrides"), SHOWN_CASES, ids=[f"{p} {o}" for p, o in SHOWN_CASES]
)
def test_each_end_marker_lies_beside_the_half_that_shows_its_value(
    preset: str, overrides: dict[str, Any]
) -> None:
    """An end shows the outward half of its piece: the marker is nearer that half (a
    tile's touching half turned outward, or a branch's marker beside the other half of
    its matador, read wrong on the table)."""
    rules = Rules.preset(preset, **overrides)
    checked = 0
    for seed in range(4):
        for k, state in enumerate(played_states(rules, seed)):
            if not state.layout:
                continue
            placed, spots = layout_geometry(layout_tree(state.history, state.ends, rules))
            for spot in spots:
                end = state.ends[spot.end["index"]]
                if end.value is None or end.value2 is not None:
                    continue  # a needs-a-blank or a crosswise two-valued end
                piece = placed[spot.end["piece"]]
                near = [
                    np.hypot(h.x - spot.centre[0], h.y - spot.centre[1])
                    for h in (piece.h1, piece.h2)
                ]
                if abs(near[0] - near[1]) < EPS:
                    continue  # a double across its end: both halves alike
                half = piece.h1 if near[0] < near[1] else piece.h2
                assert half.value == end.value, (seed, k, " ".join(map(str, state.moves)), spot)
                checked += 1
    assert checked > 100


@pytest.mark.parametrize("preset", ["standard", "kardinal", "leiden", "polish"])
def test_the_tree_names_the_last_piece_and_the_matadors(preset: str) -> None:
    """``last`` (the piece the picture and the page outline) is the tile placed last,
    and ``matador`` (the face they draw it on) is the rules' word on each tile."""
    rules = Rules.preset(preset)
    flags: set[bool] = set()
    for seed in range(3):
        for state in played_states(rules, seed):
            table = layout_tree(state.history, state.ends, rules)
            pieces = table["pieces"]
            assert [p["tile"] for p in pieces] == [str(t) for t in state.layout]
            if not pieces:
                assert table["last"] is None
                continue
            played = [e.move.tile for e in state.history if e.move.kind == "play"]
            assert pieces[table["last"]]["tile"] == str(played[-1])
            assert [p["matador"] for p in pieces] == [rules.is_matador(t) for t in state.layout]
            flags.update(p["matador"] for p in pieces)
    assert flags == {True, False}


def test_an_upright_matador_coming_back_in_beside_a_two_arm_lead_lies_across_its_end() -> None:
    """The coil of a two-arm lead: an upright (or crosswise) piece lies across its end
    even on the way back in (it turns itself only among a spinner lead's four arms).
    Polish, seed 16: 3-4 upright on the arm of 5-5 that runs back in, westward."""
    rules = Rules.preset("polish")
    moves = (
        "0-4 3-5@1>5 0-2@1>0 draw draw draw 2-5@1^ 0-1@1>1 draw 1-6@1^ 0-6@1>6 1-5@1>5 draw "
        "2-3@1>3 4-5@1>5 draw 2-6@1>6 1-1@1>1 6-6@1>6 1-2@1>2 draw 0-0@0^ 5-5@1>5 draw draw "
        "draw 3-4@1^"
    )
    state = play(rules, 16, moves)[-1]
    assert not check(state, rules)
    placed, spots = layout_geometry(layout_tree(state.history, state.ends, rules))
    upright, parent = placed[-1], placed[placed[-1].piece["parent"]]
    assert (upright.piece["tile"], upright.piece["lie"], parent.piece["tile"]) == (
        "3-4",
        "upright",
        "5-5",
    )
    # 5-5 runs west along y = -2; 3-4 stands across that line, the open end beyond it.
    assert parent.h1.y == parent.h2.y == -2 and parent.h2.x < parent.h1.x
    assert upright.h1.x == upright.h2.x == parent.h2.x - 1
    assert sorted((upright.h1.y, upright.h2.y)) == [-2.5, -1.5]
    assert spots[-1].centre[1] == -2 and spots[-1].centre[0] < upright.h1.x
