"""Perft counts (golden tier): every line of play from fixed positions, counted.

``matador_env/conformance/perft.json`` (shipped with the package, so that ``python -m
matador_env.perft --check`` can check an installation against it) holds, for
positions under every option of docs/rules.md
(the opening, the middle and the end of hands of each shipped configuration and of
rule sets that cover every value of every option), the counts of
:func:`matador_env.engine.perft` at each depth up to a few thousand lines. A change
of move generation or scoring shows up as a changed count; the batch engine must
count the same. Each position is stored as its deal (tiles, boneyard in draw order,
leader) and the moves played from it, so that an implementation in another language
can check itself against the file (docs/rules.md, "Checking an implementation: perft
counts").

The file is generated, never edited by hand: ``make golden`` (``pytest
tests/test_golden.py tests/test_perft.py --regen-golden``) picks each position's depth
(the deepest whose lines stay within ``LINES_PER_CASE``) and rewrites it; review the
diff and commit it. Without the flag the positions and depths are read back from the
file and every count is computed again.
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from matador_env.configs import CONFIGURATIONS
from matador_env.engine import (
    HandState,
    Move,
    Perft,
    Rules,
    RulesError,
    Termination,
    perft,
    perft_divide,
)
from matador_env.engine.rules import CHOICES
from matador_env.perft import (
    FORMAT,
    PERFT_FILE,
    batch_case_position,
    batch_position,
    count_rows,
    stored_counts,
)
from tests.notes import record_notes
from tests.scripted import midgame_states
from tests.test_golden import compare_or_regen

PATH = PERFT_FILE
LINES_PER_CASE = 4000
"""A position's depth is the deepest whose lines stay within this (and within
``MAX_DEPTH``), so that the whole file is counted again in seconds."""
MAX_DEPTH = 60
RULE_SETS = 14
"""Rule sets drawn over every option besides the shipped configurations."""
RULES_SEED = 2026
NUMBER_WORDS = {14: "fourteen"}  # how docs/rules.md writes RULE_SETS
STAGES = ("opening", "middle", "end")
COLUMNS = ("depth", *Perft._fields)


@dataclasses.dataclass(frozen=True)
class Case:
    name: str
    rules: Rules
    seed: int
    moves: tuple[str, ...]

    def dealt(self) -> HandState:
        return HandState.deal(self.rules, self.seed)

    def position(self) -> HandState:
        state = self.dealt()
        for move in self.moves:
            state = state.apply(move)
        return state


def drawn_rule_sets(count: int, rng: random.Random) -> list[Rules]:
    """``count`` rule sets over every option. Each enumerated option takes its values in
    a shuffled cycle, so that every value comes once in any run of as many sets as it
    has values; the flags alternate from a random start; sets run from double-three
    to double-twelve, two to five seats (teams half the time with four), the hand
    sizes the rules allow and every boneyard reserve up to three. The combinations
    the rules refuse are mended (see below); where the sizes make one, they are drawn
    again."""
    cycles = {}
    for name, values in CHOICES.items():
        order = list(values)
        rng.shuffle(order)
        cycles[name] = order
    flips = {flag: rng.random() < 0.5 for flag in ("matador_as_regular", "matador_only_when_stuck")}
    out = []
    for i in range(count):
        settings: dict[str, Any] = {name: order[i % len(order)] for name, order in cycles.items()}
        settings.update({flag: (i % 2 == 0) == start for flag, start in flips.items()})
        # The combinations docs/rules.md refuses, mended: the crossed lead double needs
        # a double lead; a full round needs the lead to rotate and to be free.
        if settings["spinner"] == "lead_double_cross":
            settings["lead_tile"] = "double_not_blank"
        if settings["match_end"] == "complete_round":
            settings["next_leader"] = "rotate"
            if settings["lead_tile"] == "double_not_blank":
                settings["match_end"] = "first_to_target"
        for _ in range(1000):
            settings["set_max"] = rng.choice((3, 4, 6, 9, 12))
            settings["players"] = rng.choice((2, 3, 4, 4, 5))
            settings["teams"] = settings["players"] == 4 and rng.random() < 0.5
            settings["hand_size"] = rng.choice(("by_players", "all", 3, 5))
            settings["boneyard_reserve"] = rng.choice((0, 1, 2, 3))
            try:
                out.append(Rules(**settings))
                break
            except RulesError:
                continue
        else:
            raise AssertionError(f"no sizes make a valid rule set of {settings}")
    return out


NO_LEAD_RULES = Rules(set_max=3, hand_size=1, lead_tile="double_not_blank", draw_rule="none")
"""Rules under which a hand can end with nobody leading (``no_lead``): one tile each,
no draws, and only 1-1, 2-2 or 3-3 may lead."""


def no_lead_seed() -> int:
    """The first deal under NO_LEAD_RULES in which neither seat holds a double it may
    lead, so that the hand ends unled."""
    for seed in range(1, 1000):
        state = HandState.deal(NO_LEAD_RULES, seed)
        if all(not (t.is_double and t.high > 0) for hand in state.hands for t in hand):
            return seed
    raise AssertionError("no deal without a leading double in 1000 seeds")


def stage_moves(rules: Rules, seed: int, stage: str) -> tuple[str, ...]:
    """Random legal moves from the deal of ``seed``: none for the opening, until half
    the dealt tiles are gone for the middle, until each seat holds about two for the
    end. Random play that ends the hand sooner (a block, often) is tried again with
    the next stream, up to 100 times; then the last try stops one move short of its
    end."""
    if stage == "opening":
        return ()
    dealt = HandState.deal(rules, seed)
    left = sum(dealt.hand_sizes) // 2 if stage == "middle" else 2 * rules.players
    for attempt in range(100):
        rng = random.Random(1000 * seed + attempt)
        state = dealt
        moves: list[str] = []
        while sum(state.hand_sizes) > left:
            move = rng.choice(state.legal_moves())
            after = state.apply(move)
            if after.is_over:
                break
            moves.append(str(move))
            state = after
        else:
            return tuple(moves)
    return tuple(moves)


def all_cases() -> list[Case]:
    """The positions of the file, in its order: each shipped configuration, then the
    drawn rule sets, at each stage of a hand."""
    named = [(name, c.rules()) for name, c in CONFIGURATIONS.items()]
    drawn = drawn_rule_sets(RULE_SETS, random.Random(RULES_SEED))
    named += [(f"drawn{i}", rules) for i, rules in enumerate(drawn)]
    cases = [Case("no_lead/opening", NO_LEAD_RULES, no_lead_seed(), ())]
    for k, (name, rules) in enumerate(named):
        for j, stage in enumerate(STAGES):
            seed = 100 * k + j + 1
            cases.append(Case(f"{name}/{stage}", rules, seed, stage_moves(rules, seed, stage)))
    return cases


def level_counts(state: HandState, depth_limit: int, lines_limit: int) -> list[Perft]:
    """Perft at depths 1, 2, ... walked breadth first (a second walker beside the
    engine's depth-first one): up to ``depth_limit``, and in the regenerating run only
    while a depth's lines stay within ``lines_limit`` (a depth that would exceed it is
    not kept)."""
    sides = state.rules.sides
    counts: list[Perft] = []
    frontier = [state]
    for _ in range(depth_limit):
        children = [child for s in frontier for child in map(s.apply, s.legal_moves())]
        if not children or len(children) > lines_limit:
            break
        total = Perft.none(sides)
        for child in children:
            total += perft(child, 0)
        counts.append(total)
        frontier = children
    return counts


def case_text(case: Case, counts: list[Perft]) -> str:
    dealt = case.dealt()
    head = {
        "name": case.name,
        "rules": case.rules.to_dict(),
        "seed": case.seed,
        "deal": {
            "hands": [" ".join(map(str, hand)) for hand in dealt.hands],
            "boneyard": " ".join(map(str, dealt.boneyard)),
            "leader": dealt.leader,
        },
        "moves": " ".join(case.moves),
    }
    lines = [f'   "{key}": {json.dumps(value)},' for key, value in head.items()]
    lines[0] = "  {" + lines[0][3:]
    rows = [json.dumps([depth, *count]) for depth, count in enumerate(counts, 1)]
    lines.append('   "perft": [\n    ' + ",\n    ".join(rows) + "]}")
    return "\n".join(lines)


def golden_text(depth_of: Callable[[str], int] | None) -> str:
    """The file's text: every case's counts to the depth ``depth_of`` gives it (read
    from the file), or with None to the depth the line limit allows."""
    parts = []
    for case in all_cases():
        state = case.position()
        if depth_of is None:
            counts = level_counts(state, MAX_DEPTH, LINES_PER_CASE)
        else:
            counts = level_counts(state, depth_of(case.name), 2**62)
        parts.append(case_text(case, counts))
    about = (
        "Generated by `make golden` (tests/test_perft.py); do not edit by hand. Each case: "
        "the rules (docs/rules.md, Options), the deal (hands by seat, boneyard in draw "
        "order, the seat that leads), the moves played from it (text forms), and per "
        "depth the lines of exactly that many legal actions, the hands their last "
        "action ends by termination, and each side's points in those hands."
    )
    return (
        "{\n"
        f' "format": {json.dumps(FORMAT)},\n'
        f' "about": {json.dumps(about)},\n'
        f' "columns": {json.dumps(list(COLUMNS))},\n'
        ' "cases": [\n' + ",\n".join(parts) + "]}\n"
    )


def stored() -> dict[str, Any]:
    if not PATH.exists():
        pytest.fail(f"{PATH} is missing; generate it with `make golden`")
    data: dict[str, Any] = json.loads(PATH.read_text())
    return data


def stored_cases() -> Iterator[tuple[Case, dict[str, Any]]]:
    by_name = {case.name: case for case in all_cases()}
    for entry in stored()["cases"]:
        yield by_name[entry["name"]], entry


# -- the golden file --------------------------------------------------------------------


def test_perft_golden(regen_golden: bool) -> None:
    """Every count of the file, counted again breadth first to the stored depths."""
    if regen_golden:
        compare_or_regen(PATH, golden_text(None), regen=True)
    depths = {entry["name"]: len(entry["perft"]) for entry in stored()["cases"]}
    compare_or_regen(PATH, golden_text(lambda name: depths.get(name, 0)), regen=False)


def test_engine_perft_agrees_with_the_breadth_first_counts() -> None:
    """perft() at every stored depth (``count_rows``, what ``--check`` counts), and
    perft_divide's parts summing to the deepest, keyed by move texts that parse back to
    the legal moves in their order."""
    for case, entry in stored_cases():
        rows = stored_counts(entry)
        assert count_rows(entry, "python") == rows, case.name
        if not rows:
            continue
        state = case.position()
        parts = perft_divide(state, len(rows))
        assert [Move.parse(text) for text in parts] == list(state.legal_moves())
        total = Perft.none(case.rules.sides)
        for part in parts.values():
            total += part
        assert total == rows[-1], case.name


def test_stored_deals_are_the_seeds_deals() -> None:
    """The deal written out for other implementations is the seed's, and built from it
    by ``HandState.from_deal`` (``matador_env.perft.case_position``, as the command
    builds a case) it plays the stored moves to the same position."""
    from matador_env.perft import case_position

    for case, entry in stored_cases():
        assert Rules.from_dict(entry["rules"]) == case.rules
        deal = entry["deal"]
        seeded = case.dealt()
        assert [text.split() for text in deal["hands"]] == [
            [str(t) for t in hand] for hand in seeded.hands
        ]
        assert deal["boneyard"].split() == [str(t) for t in seeded.boneyard]
        assert deal["leader"] == seeded.to_move
        rebuilt = case_position(entry)
        position = case.position()
        assert rebuilt.hands == position.hands and rebuilt.ends == position.ends
        assert rebuilt.to_move == position.to_move
        assert rebuilt.legal_moves() == position.legal_moves()


def test_cases_cover_every_option_and_ending() -> None:
    """The positions cover every value of every option, and their lines reach every
    way a hand ends, every blocked scoring under a block, and each tie rule its tie."""
    entries = list(stored_cases())
    rules = [case.rules for case, _ in entries]
    for name, values in CHOICES.items():
        seen = {getattr(r, name) for r in rules}
        assert seen == set(values), f"{name}: no case has {sorted(set(values) - seen)}"
    for flag in ("matador_as_regular", "matador_only_when_stuck", "teams"):
        assert {getattr(r, flag) for r in rules} == {False, True}, flag
    assert {r.players for r in rules} >= {2, 3, 4, 5}
    assert {r.set_max for r in rules} >= {3, 6, 9, 12}

    def reached(field: str, option: str = "", value: object = None) -> bool:
        """Some line ends a hand so (``field``), under rules whose ``option`` is ``value``
        where one is named."""
        index = COLUMNS.index(field)
        return any(
            row[index] > 0
            for case, entry in entries
            if not option or getattr(case.rules, option) == value
            for row in entry["perft"]
        )

    for termination in Termination.ALL:
        assert reached(termination), f"no line ends a hand by {termination}"
    for scoring in CHOICES["blocked_scoring"]:
        assert reached("blocked", "blocked_scoring", scoring), scoring
    assert reached("void_tie", "tie", "void")
    assert reached("redeal_tie", "tie", "redeal")


# -- the engine's perft ---------------------------------------------------------------


def test_perft_at_the_edges() -> None:
    """Depth 0 is the position itself; a finished hand has no line beyond it."""
    rules = Rules.preset("standard")
    state = HandState.deal(rules, 1)
    assert perft(state, 0) == Perft(1, 0, 0, 0, 0, 0, (0, 0))
    assert perft(state, 1).lines == len(state.legal_moves())
    rng = random.Random(1)
    while not state.is_over:
        last = state
        state = state.apply(rng.choice(state.legal_moves()))
    outcome = state.outcome
    assert outcome is not None
    at_end = perft(state, 0)
    assert (at_end.lines, at_end.hands_ended) == (1, 1)
    assert getattr(at_end, outcome.termination) == 1
    assert at_end.side_points == outcome.side_points(2)
    assert perft(state, 3) == Perft.none(2)
    assert perft_divide(state, 2) == {}
    # The move that ended it is one of the lines of depth 1 that end the hand.
    assert perft(last, 1).hands_ended >= 1


@pytest.mark.parametrize("depth", [-1, True, 1.0, "2", None])
def test_perft_refuses_a_depth_that_is_no_count(depth: object) -> None:
    state = HandState.deal(Rules(), 1)
    with pytest.raises(ValueError, match="depth: expected an integer of 0 or more"):
        perft(state, depth)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="depth"):
        perft_divide(state, depth)  # type: ignore[arg-type]


def test_perft_refuses_what_is_no_position() -> None:
    with pytest.raises(ValueError, match="state: expected a HandState, got str"):
        perft("6-6", 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="state: expected a HandState"):
        perft_divide(None, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="depth 0 has no first action"):
        perft_divide(HandState.deal(Rules(), 1), 0)


def test_counts_add_field_by_field() -> None:
    a = Perft(1, 2, 3, 4, 5, 6, (7, 8))
    assert a + a == Perft(2, 4, 6, 8, 10, 12, (14, 16))
    assert a.hands_ended == 20
    with pytest.raises(TypeError):
        a + (1, 2)  # type: ignore[operator]


# -- the batch engine's perft -----------------------------------------------------------


def test_batch_engine_counts_the_same() -> None:
    """The compiled kernels, walked by matador_env.batch.perft, give every stored count
    (a second engine checked against the first over every line of the file; what
    ``--check --engine batch`` counts), and a walk leaves its engine as it was."""
    pytest.importorskip("numba")
    from matador_env.batch import perft as batch_perft

    for k, (case, entry) in enumerate(stored_cases()):
        assert count_rows(entry, "batch") == stored_counts(entry), case.name
        if k % 5:
            continue
        engine = batch_case_position(entry)
        before = engine.get_state()
        batch_perft(engine, 0, len(entry["perft"]))
        assert batch_perft(engine, 0, 0) == perft(case.position(), 0), case.name
        assert engine.get_state() == before, f"{case.name}: the walk changed the engine"


def test_batch_perft_refuses_what_it_cannot_walk() -> None:
    pytest.importorskip("numba")
    from matador_env.batch import BatchEngine, BatchError
    from matador_env.batch import perft as batch_perft

    engine = BatchEngine(Rules(), 2)
    engine.deal([1, 2])
    with pytest.raises(BatchError, match="slot 2 does not exist"):
        batch_perft(engine, 2, 1)
    with pytest.raises(BatchError, match="depth"):
        batch_perft(engine, 0, -1)
    with pytest.raises(BatchError, match="depth"):
        batch_perft(engine, 0, 65)
    with pytest.raises(BatchError, match="engine: expected a BatchEngine, got HandState"):
        batch_perft(HandState.deal(Rules(), 1), 0, 1)  # type: ignore[arg-type]
    # Slot 1 is walked, not slot 0.
    assert batch_perft(engine, 1, 2) == perft(HandState.deal(Rules(), 2), 2)


def test_take_copies_slots_and_leaves_the_engine() -> None:
    """take() copies each named slot (repeats allowed) with its match and seeds; the
    copies step on their own; refusals name the slot."""
    pytest.importorskip("numba")
    import numpy as np

    from matador_env.batch import BatchEngine, BatchError

    rules = Rules.preset("leiden")
    engine = BatchEngine(rules, 3)
    engine.new_matches([11, 12, 13])
    for _ in range(5):  # a few moves in, so that the slots differ in more than the deal
        engine.step([int(np.flatnonzero(row)[0]) for row in engine.legal_masks()])
    before = engine.get_state()
    copy = engine.take([2, 0, 2])
    assert engine.get_state() == before
    state = copy.get_state()
    for i, b in enumerate([2, 0, 2]):
        for name in BatchEngine._STATE_ARRAYS:
            assert state[name][i] == before[name][b], (name, i)
        assert copy.hand_seeds[i] == engine.hand_seeds[b]
        assert copy.match_seeds[i] == engine.match_seeds[b]
    # The two copies of slot 2 step apart, and slot 2 itself does not move.
    masks = copy.legal_masks()
    legal = np.flatnonzero(masks[0])
    assert legal.size >= 2
    copy.step([legal[0], -1, legal[1]])
    assert copy.get_state()["loc"][0] != copy.get_state()["loc"][2]
    assert engine.get_state() == before
    refused: list[tuple[Any, str]] = [
        ([], "at least one slot"),
        ([3], "slot 3 does not exist; allowed: 0 to 2"),
        ([-1], "slot -1 does not exist"),
        ([[0, 1]], "1-d"),
        ([0.0], "slot numbers"),
        (np.zeros(0, np.int64), "at least one slot"),
        (None, "at least one slot"),
    ]
    for bad, message in refused:
        with pytest.raises(BatchError, match=message):
            engine.take(bad)


def test_the_rules_document_describes_this_file() -> None:
    """docs/rules.md's section on the file: its counts of positions and rule sets are
    the file's, its columns are the file's, and its Python example runs."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text()
    section = text.split("## Checking an implementation: perft counts", 1)[1]
    flowing = " ".join(section.split())
    assert f"holds {len(stored()['cases'])} positions" in flowing
    assert f"under {NUMBER_WORDS[RULE_SETS]} rule sets" in flowing
    for column in COLUMNS[2:7]:
        assert f"`{column}`" in section, column
    assert stored()["columns"] == list(COLUMNS)
    assert stored()["format"] == FORMAT and f'`"{FORMAT}"`' in section
    for field in {key for entry in stored()["cases"] for key in entry}:
        assert f"- `{field}`: " in section, field
    (example,) = re.findall(r"```python\n(.*?)```", section, re.S)
    exec(compile(example, "docs/rules.md perft example", "exec"), {})


def test_engines_count_the_same_from_random_positions(long_run: bool) -> None:
    """Beyond the file: random positions under random rule sets (up to double-fifteen
    and eight seats), each counted by both engines to the first depth past a line
    limit. CI counts a few small trees; ``pytest --long -s`` counts 300 trees of up to
    30,000 lines and prints its figures."""
    pytest.importorskip("numba")
    from matador_env.batch import perft as batch_perft
    from tests.test_batch_differential import random_rules

    positions, lines_limit = (300, 30_000) if long_run else (12, 1_000)
    rng = random.Random(515)
    counted = 0
    for _ in range(positions):
        rules = random_rules(rng)
        (state,) = midgame_states(rules, 1, seed=rng.randrange(2**32), max_moves=40)
        moves = tuple(map(str, state.moves))
        engine = batch_position(rules, state.seed, moves)
        depth = 1
        while True:
            count = batch_perft(engine, 0, depth)
            if count.lines == 0 or count.lines > lines_limit or depth == 40:
                break
            depth += 1
        where = f"{rules.to_text()} seed {state.seed} moves {' '.join(moves)}"
        assert perft(state, depth) == count, f"depth {depth}: {where}"
        counted += count.lines
    if long_run:
        print(f"\nperft: both engines agree on {positions} positions, {counted:,} lines")


# -- the command ------------------------------------------------------------------------


def run_command(*argv: str) -> tuple[int, str, str]:
    import io

    from matador_env.perft import main

    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def table(text: str) -> dict[str, list[str]]:
    """The printed rows after the header row, by their first cell."""
    lines = text.splitlines()
    start = next(
        i
        for i, line in enumerate(lines)
        if line.split()[:2] in (["depth", "lines"], ["action", "lines"])
    )
    return {line.split()[0]: line.split()[1:] for line in lines[start + 1 :]}


def printed(count: Perft) -> list[str]:
    return [str(v) for v in count[:6]] + [str(p) for p in count.side_points]


@pytest.mark.parametrize("engine", ["python", "batch"])
def test_command_prints_a_case_as_the_file_holds_it(engine: str) -> None:
    """--case deals the file's deal, plays its moves and counts to its deepest depth:
    the rows are the file's, counted by either engine."""
    if engine == "batch":
        pytest.importorskip("numba")
    (entry,) = [e for e in stored()["cases"] if e["name"] == "kardinal_hard/end"]
    code, out, err = run_command("--case", "kardinal_hard/end", "--engine", engine)
    assert (code, err) == (0, "")
    rows = table(out)
    assert list(rows) == [str(row[0]) for row in entry["perft"]]
    for depth, count in enumerate(stored_counts(entry), 1):
        assert rows[str(depth)] == printed(count)
    assert f"moves: {entry['moves']}" in out


def test_command_counts_with_the_batch_engine_after_moves() -> None:
    """--engine batch plays --moves on the compiled engine too: its rows are the
    Python engine's, on a seeded deal and on a case."""
    pytest.importorskip("numba")
    for argv in (
        ["--preset", "leiden", "--players", "3", "--seed", "4", "--moves", "draw"],
        ["--case", "drawn2/middle", "--moves", "3-4@1>4"],
    ):
        python = run_command(*argv, "--depth", "5")
        batch = run_command(*argv, "--depth", "5", "--engine", "batch")
        assert python[0] == batch[0] == 0, (python, batch)
        assert table(python[1]) == table(batch[1]), argv


BOTH_MODES = pytest.mark.parametrize(
    "argv",
    [["--depth", "2"], ["--check", "--case", "standard/opening"]],
    ids=["count", "check"],
)
"""The command's two modes that count with ``--engine batch``."""


@BOTH_MODES
def test_command_refuses_the_batch_engine_without_numba_naming_the_install(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As where numba is not installed: the batch engine's package cannot be imported.
    monkeypatch.setitem(sys.modules, "matador_env.batch", None)
    code, out, err = run_command(*argv, "--engine", "batch")
    assert code == 2 and "Traceback" not in err
    assert err.startswith("python -m matador_env.perft: error: --engine batch: the batch engine")
    assert "needs numba" in err and "pip install '.[batch]'" in err and "--engine python" in err


@BOTH_MODES
def test_command_loads_the_batch_kernels_under_a_note_before_counting(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # With numba's cache cold the kernels compile for about half a minute; the note
    # (matador_env.streams.note_when_slow, tested in tests/test_closed_streams.py)
    # says so after two seconds. Here: the command loads them inside it.
    pytest.importorskip("numba")
    import matador_env.perft as command

    said = record_notes(monkeypatch, command)
    code, _, err = run_command(*argv, "--engine", "batch")
    assert (code, err) == (0, "")
    assert said == [(command.SLOW_LOAD_NOTE, 2.0), "done"]
    assert "compiling the batch engine's kernels" in command.SLOW_LOAD_NOTE


@pytest.mark.parametrize(
    "argv",
    [
        ["--depth", "2", "--moves", "draw"],
        ["--case", "leiden/end", "--depth", "2", "--moves", "9-9"],
        ["--case", "leiden/end", "--depth", "2", "--moves", "draw 0-0"],
    ],
    ids=["dealt", "case", "case-second-move"],
)
def test_command_refuses_a_move_before_it_loads_the_batch_kernels(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a cold cache the load compiles for half a minute: a typo in --moves is
    # refused first, by the Python engine that checks every move anyway.
    import matador_env.perft as command

    loaded: list[bool] = []
    monkeypatch.setattr(command, "_load_batch_kernels", lambda: loaded.append(True))
    code, out, err = run_command(*argv, "--engine", "batch")
    assert (code, out) == (2, "")
    assert err.startswith("python -m matador_env.perft: error: --moves: "), err
    assert loaded == []


def test_command_divides_and_plays_moves_on() -> None:
    case = next(c for c, _ in stored_cases() if c.name == "leiden/end")
    code, out, _ = run_command(
        "--case", "leiden/end", "--moves", "draw", "--depth", "4", "--divide"
    )
    assert code == 0
    position = case.position().apply("draw")
    parts = perft_divide(position, 4)
    rows = table(out)
    assert list(rows) == [*parts, "total"]
    for text, count in parts.items():
        assert rows[text] == printed(count)
    assert rows["total"] == printed(perft(position, 4))


def test_command_deals_any_rules_by_seed() -> None:
    code, out, _ = run_command(
        "--preset", "pagat", "--players", "4", "--teams", "--rules", "spinner=first_double",
        "--seed", "9", "--depth", "3",
    )  # fmt: skip
    assert code == 0
    rules = Rules.preset("pagat", players=4, teams=True).replace(spinner="first_double")
    assert f"rules: {rules.to_text()}" in out
    state = HandState.deal(rules, 9)
    rows = table(out)
    assert [rows[str(d)] for d in (1, 2, 3)] == [printed(perft(state, d)) for d in (1, 2, 3)]


def test_command_on_a_finished_hand_says_so() -> None:
    state = HandState.deal(Rules(), 3)
    rng = random.Random(3)
    while not state.is_over:
        state = state.apply(rng.choice(state.legal_moves()))
    moves = " ".join(map(str, state.moves))
    code, out, _ = run_command("--seed", "3", "--moves", moves, "--depth", "2")
    assert code == 0
    assert "the hand is over: no lines beyond it" in out
    assert table(out)["2"][0] == "0"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--case", "nope"],
            f"--case: 'nope' is not in {PERFT_FILE}; allowed: one of its 76",
        ),
        (["--case", "leiden/end", "--players", "3"], "--players: not with --case"),
        (["--case", "leiden/end", "--rules", "tie=void"], "--rules: not with --case"),
        (["--case", "leiden/end", "--preset", "pagat"], "--preset: not with --case"),
        (["--case", "leiden/end", "--seed", "3"], "--seed: not with --case"),
        (["--depth", "70", "--engine", "batch"], "--depth: 70 is deeper than --engine batch"),
        (["--depth", "2", "--engine", "batch", "--divide"], "--engine batch: not with --divide"),
        (["--depth", "2", "--moves", "9-9"], "--moves: "),
        (["--depth", "2", "--moves", "draw"], "--moves: illegal move 'draw' by seat"),
        (["--depth", "2", "--players", "9"], "--players: hand_size='by_players' is not allowed"),
        (["--depth", "2", "--rules", "spinner=sideways"], "--rules: spinner='sideways'"),
        ([], "--depth: required without --case"),
        # Counting a deal reads no file: the one given was ignored, even a missing one.
        (["--depth", "2", "--file", "nowhere.json"], "--file: only with --case or --check"),
    ],
)
def test_command_refuses_with_status_2(argv: list[str], message: str) -> None:
    code, out, err = run_command(*argv)
    assert code == 2
    assert out == ""
    assert err.startswith("python -m matador_env.perft: error: " + message), err


def test_command_refuses_a_file_that_is_no_perft_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    code, _, err = run_command("--case", "x", "--file", str(missing))
    assert code == 2 and f"--file: cannot read {missing}" in err
    other = tmp_path / "other.json"
    other.write_text('{"cases": 3}')
    code, _, err = run_command("--case", "x", "--file", str(other))
    assert code == 2 and f"--file: {other} is not a perft file" in err
    broken = tmp_path / "broken.json"
    broken.write_text(PATH.read_text().replace('"hands": ["', '"hands": ["7-7 ', 1))
    first = stored()["cases"][0]["name"]
    code, _, err = run_command("--case", first, "--file", str(broken))
    assert code == 2 and f"--case: {first!r} in {broken} is not a position" in err


# -- the conformance check --------------------------------------------------------------


def small_file(tmp_path: Path, change: Callable[[list[dict[str, Any]]], None]) -> Path:
    """A perft file of three of the shipped cases, changed by ``change``."""
    data = stored()
    data["cases"] = [e for e in data["cases"] if e["name"].startswith("pagat_teams/")]
    change(data["cases"])
    path = tmp_path / "perft.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("engine", ["python", "batch"])
def test_check_passes_on_the_shipped_file(engine: str) -> None:
    """--check counts a case of the file the package ships to every stored depth (the
    whole file's counts are checked by the tests above, through the same count_rows)."""
    if engine == "batch":
        pytest.importorskip("numba")
    entry = next(e for e in stored()["cases"] if e["name"] == "pagat_teams/middle")
    code, out, err = run_command("--check", "--case", "pagat_teams/middle", "--engine", engine)
    assert (code, err) == (0, "")
    lines = sum(count.lines for count in stored_counts(entry))
    depths = len(entry["perft"])
    assert out.startswith(f"checking 1 case of {PERFT_FILE} with the {engine} engine\n")
    assert f"pagat_teams/middle  agrees ({depths} depths, {lines:,} lines)\n" in out
    assert f"1 case, {depths} depths, {lines:,} lines: every count agrees" in out


@pytest.mark.parametrize("engine", ["python", "batch"])
def test_check_names_every_count_that_differs(tmp_path: Path, engine: str) -> None:
    """A changed count, changed points and a move that is not legal each make their case
    differ, with the file's row and the counted one side by side; the check exits 1."""
    if engine == "batch":
        pytest.importorskip("numba")

    def change(cases: list[dict[str, Any]]) -> None:
        cases[0]["perft"][1][1] += 1  # opening: depth 2 counts one line more
        cases[1]["perft"][-1][-1][1] += 5  # middle: the last depth's side 1 points
        cases[2]["moves"] += " 6-6"  # end: a tile that is down already

    path = small_file(tmp_path, change)
    counted = [count_rows(e, "python") for e in stored()["cases"] if "pagat_teams/" in e["name"]]
    code, out, err = run_command("--check", "--file", str(path), "--engine", engine)
    assert (code, err) == (1, "")
    opening, middle, end = (
        out.split(f"pagat_teams/{stage}")[1].split("pagat_teams/")[0] for stage in STAGES
    )
    assert opening.lstrip().startswith("DIFFERS at depth 2:\n")
    depth2 = counted[0][1]
    assert table(opening) == {
        "file": ["2", *printed(depth2._replace(lines=depth2.lines + 1))],
        "counted": ["2", *printed(depth2)],
    }
    last = len(counted[1])
    assert middle.lstrip().startswith(f"DIFFERS at depth {last}:\n")
    assert table(middle)["counted"] == [str(last), *printed(counted[1][-1])]
    assert end.lstrip().startswith("DIFFERS: cannot be counted (")
    assert out.endswith("3 of 3 cases differ from " + str(path) + "\n")


def test_batch_check_refuses_a_seed_that_deals_otherwise(tmp_path: Path) -> None:
    """The batch engine deals only by seed: a case whose seed does not deal the deal
    written out differs there, while the Python engine, which builds the written deal,
    agrees."""
    pytest.importorskip("numba")

    def change(cases: list[dict[str, Any]]) -> None:
        cases[0]["seed"] += 1

    path = small_file(tmp_path, change)
    code, out, _ = run_command("--check", "--file", str(path))
    assert code == 0
    code, out, _ = run_command("--check", "--file", str(path), "--engine", "batch")
    assert code == 1
    seed = next(e["seed"] for e in stored()["cases"] if e["name"] == "pagat_teams/opening")
    assert (
        f"pagat_teams/opening  DIFFERS: cannot be counted (the batch engine's deal of seed "
        f"{seed + 1} is not the deal the file writes out)" in out
    )
    # Counting the case alone refuses it as no position for that engine.
    argv = ["--case", "pagat_teams/opening", "--file", str(path), "--depth", "1"]
    code, out, err = run_command(*argv, "--engine", "batch")
    assert (code, out) == (2, "")
    assert err.startswith(
        f"python -m matador_env.perft: error: --case: 'pagat_teams/opening' in {path} is not "
        f"a position (the batch engine's deal of seed {seed + 1} is not the deal"
    ), err


def test_check_reports_a_row_that_is_no_count_row(tmp_path: Path) -> None:
    def change(cases: list[dict[str, Any]]) -> None:
        cases[2]["perft"][0] = [1, 2, 3]
        cases[1]["perft"][1][0] = 7

    code, out, _ = run_command("--check", "--file", str(small_file(tmp_path, change)))
    assert code == 1
    end = "pagat_teams/end      DIFFERS: cannot be counted (perft: row [1, 2, 3] is "
    assert end in out
    assert "row [7, " in out and "should be of depth 2" in out


@pytest.mark.parametrize(
    "change",
    [
        lambda row: row.__setitem__(1, "12"),  # a count that is text
        lambda row: row.__setitem__(2, -1),  # below 0
        lambda row: row.__setitem__(3, True),  # a flag
        lambda row: row.__setitem__(4, 1.0),  # a float
        lambda row: row.__setitem__(7, 5),  # points that are no list
        lambda row: row[7].append(None),  # a side's points that are nothing
        lambda row: row.append(0),  # a ninth column
    ],
)
def test_check_reports_a_count_that_is_no_whole_number(
    tmp_path: Path, change: Callable[[list[Any]], None]
) -> None:
    """Each count of a row must be a whole number of 0 or more (a string summed into
    the lines checked gave a TypeError traceback); the row is reported, not counted."""

    def mutate(cases: list[dict[str, Any]]) -> None:
        change(cases[0]["perft"][0])

    code, out, _ = run_command("--check", "--file", str(small_file(tmp_path, mutate)))
    assert code == 1
    assert "pagat_teams/opening  DIFFERS: cannot be counted (perft: row [1, " in out
    assert "is no count row; allowed: [depth, lines, domino, blocked, void_tie, " in out


KINDS = {"rules": dict, "seed": int, "deal": dict, "deal.hands": list,
         "deal.boneyard": str, "deal.leader": int, "moves": str}  # fmt: skip


@pytest.mark.parametrize("engine", ["python", "batch"])
@pytest.mark.parametrize("path", list(KINDS))
def test_a_case_part_of_the_wrong_kind_is_named_not_a_traceback(
    tmp_path: Path, engine: str, path: str
) -> None:
    """Each part of a case replaced by values of other kinds (or removed): --check
    reports the case as not counted, naming the part, and --case refuses it with status
    2; no exception escapes (an int in deal.hands gave an AttributeError)."""
    if engine == "batch":
        pytest.importorskip("numba")
    *parents, key = path.split(".")
    values: list[object] = [None, 1, True, "x", [], {}, [1], "__removed__"]
    for value in values:
        if isinstance(value, KINDS[path]) and not isinstance(value, bool):
            continue

        def change(cases: list[dict[str, Any]], value: object = value) -> None:
            holder = cases[2]
            for parent in parents:
                holder = holder[parent]
            if value == "__removed__":
                del holder[key]
            else:
                holder[key] = value

        file = str(small_file(tmp_path, change))
        argv = ["--file", file, "--case", "pagat_teams/end", "--engine", engine]
        code, out, _ = run_command("--check", *argv)
        if path == "seed" and engine == "python":
            assert code == 0, (value, out)  # the Python engine builds the written deal
            continue
        assert code == 1 and f"DIFFERS: cannot be counted ({path}" in out, (value, out)
        code, _, err = run_command(*argv)
        assert code == 2 and "is not a position (" in err and path in err, (value, err)


def test_batch_check_refuses_more_rows_than_it_walks(tmp_path: Path) -> None:
    """A case of more than 64 rows cannot be counted by the batch engine (it says so at
    once instead of walking the first 64); the Python engine counts it."""
    pytest.importorskip("numba")

    def change(cases: list[dict[str, Any]]) -> None:
        rows = cases[2]["perft"]
        sides = len(rows[0][-1])
        rows += [[d, 0, 0, 0, 0, 0, 0, [0] * sides] for d in range(len(rows) + 1, 66)]

    path = small_file(tmp_path, change)
    code, out, _ = run_command("--check", "--file", str(path), "--case", "pagat_teams/end")
    assert code == 0, out
    code, out, _ = run_command(
        "--check", "--file", str(path), "--case", "pagat_teams/end", "--engine", "batch"
    )
    assert code == 1
    assert "DIFFERS: cannot be counted (65 rows: deeper than the batch engine walks" in out


@pytest.mark.parametrize(
    "flags",
    [["--depth", "3"], ["--divide"], ["--moves", "draw"], ["--seed", "2"], ["--preset", "pagat"],
     ["--players", "3"], ["--teams"], ["--rules", "tie=void"]],
)  # fmt: skip
def test_check_refuses_flags_that_would_name_another_position(flags: list[str]) -> None:
    code, out, err = run_command("--check", *flags)
    assert (code, out) == (2, "")
    assert err.startswith(f"python -m matador_env.perft: error: {flags[0]}: not with --check")


def test_check_refuses_files_that_are_no_perft_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    code, _, err = run_command("--check", "--file", str(missing))
    assert code == 2 and f"--file: cannot read {missing}" in err
    for text, why in [
        ("[1, 2", "is not a perft file (Expecting"),
        ('{"cases": []}', "is not a perft file (format None; allowed: 'matador-env perft 1')"),
        (
            json.dumps({"format": FORMAT, "cases": [{"name": "x"}]}),
            "is not a perft file (its cases are no list of named cases)",
        ),
    ]:
        path = tmp_path / "other.json"
        path.write_text(text)
        code, _, err = run_command("--check", "--file", str(path))
        assert code == 2 and f"--file: {path} {why}" in err, err
    code, _, err = run_command("--check", "--case", "nope")
    assert code == 2 and "--case: 'nope' is not in" in err
