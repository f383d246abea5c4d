"""The README and the docs are true: their Python examples run, their links resolve
inside the repository, their install lines name extras that exist, the notation is
explained before it is used, and docs/rules.md covers every option and preset."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from matador_env.engine import PRESETS, HandState, Rules
from matador_env.play import draw_layout
from tests.scripted import deal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parent.parent


def pyproject() -> dict[str, Any]:
    """The checkout's ``pyproject.toml``, parsed."""
    data: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return data


README = ROOT / "README.md"
RULES_DOC = ROOT / "docs" / "rules.md"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "matador_env" / "bots" / "README.md"]
OURS = [README, RULES_DOC, ROOT / "matador_env" / "bots" / "README.md"]
"""Documents that link only inside the repository (others may cite a library's site)."""
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
MOVE_TEXT = re.compile(r"\d-\d@\d[>x^]")


def test_the_readme_has_examples() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    exec(compile(BLOCKS[index], f"README.md block {index}", "exec"), {})


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings: lower case, punctuation dropped, spaces to -."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", markdown, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves_inside_the_repository(doc: Path) -> None:
    text = doc.read_text()
    for target in LINK.findall(text):
        if doc in OURS:
            assert "://" not in target and not target.startswith("mailto:"), (
                f"{doc.name} links outside the repository: {target}"
            )
        elif "://" in target:
            continue
        path, _, fragment = target.partition("#")
        resolved = (doc.parent / path).resolve() if path else doc
        assert resolved.is_relative_to(ROOT), f"{doc.name}: {target} leaves the repository"
        assert resolved.exists(), f"{doc.name}: {target} does not exist"
        if fragment and resolved.suffix == ".md":
            assert fragment in anchors(resolved.read_text()), f"{doc.name}: no #{fragment}"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_to_files_users_do_not_have(doc: Path) -> None:
    text = doc.read_text()
    assert "RULES.md" not in text and "shared/" not in text
    on_pypi = re.search(r"pip\s+install\s+['\"]?matador-env", text)
    assert not on_pypi, "there is no matador-env on PyPI: install from the checkout"


def test_play_points_at_the_rules_document() -> None:
    source = (ROOT / "matador_env" / "play.py").read_text()
    assert "RULES.md" not in source and "docs/rules.md" in source


def test_install_hints_in_the_code_install_from_the_checkout() -> None:
    # The distribution is not on PyPI: "pip install 'matador-env[serve]'" in an error
    # message or a --help text sent users to an index that does not have it.
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in sorted((ROOT / "matador_env").rglob("*.py"))
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "matador-env[" in line
    ]
    assert found == []


def test_install_lines_name_extras_that_exist() -> None:
    extras = set(pyproject()["project"]["optional-dependencies"])
    text = README.read_text()
    every_doc = "\n".join(doc.read_text() for doc in DOCS)
    lines = [line for line in every_doc.splitlines() if "pip install" in line]
    named = [
        name.strip()
        for line in lines
        for group in re.findall(r"\.\[([^\]]+)\]", line)
        for name in group.split(",")
    ]
    assert {"bot", "serve"} <= set(named), "the bot and server installs are documented"
    assert set(named) <= extras, f"unknown extras: {sorted(set(named) - extras)}"
    # install from the checkout, in an activated virtual environment
    assert ". .venv/bin/activate" in text
    assert ".venv/bin/python" not in text, "one way to run python: activate, then python"


def test_the_notation_is_explained_before_it_is_used() -> None:
    text = README.read_text()
    table = text.index("## Notation")
    first = MOVE_TEXT.search(text)
    assert first is not None and first.start() > table


def test_the_rules_document_has_every_option_preset_and_source() -> None:
    text = RULES_DOC.read_text()
    for field in dataclasses.fields(Rules):
        assert f"`{field.name}`" in text, f"option {field.name} is missing"
    defaults = Rules()
    for field in dataclasses.fields(Rules):
        value = getattr(defaults, field.name)
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        row = next(line for line in text.splitlines() if line.startswith(f"| `{field.name}` |"))
        values = row.split("|")[2].strip()
        assert values.split(",")[0].strip().strip('"').startswith(shown), (
            f"{field.name}: the default {shown} must be listed first, got {values}"
        )
    for name in PRESETS:
        assert f"| `{name}` |" in text or f"`{name}`, " in text, f"preset {name} is missing"
    for source in ("000", "001", "002", "003"):
        assert f"**{source}**" in text
    for heading in ("## Notation", "## Worked examples", "## Scoring"):
        assert heading in text


def _deal(preset: str, hands: list[str]) -> HandState:
    """A two-player hand of ``preset`` with these hands; P0 leads, the rest in the boneyard."""
    return deal(Rules.preset(preset), hands)


# The worked examples of docs/rules.md: (preset, P0's hand, P1's hand, moves) and what the
# document shows after the moves (a layout drawing) and as the legal moves then.
EXAMPLES = [
    ("standard", "2-4 1-1 0-5 3-3 4-4 0-6 5-5", "3-5 3-6 1-5 2-5 0-0 1-2 4-6", ["2-4"]),
    ("standard", "2-4 1-1 0-5 3-3 4-4 0-6 5-5", "3-5 3-6 1-5 2-5 0-0 1-2 4-6", ["2-4", "3-6@1>6"]),
    ("polish", "5-5 1-1 0-3 3-3 4-4 0-6 1-3", "2-5 3-6 1-5 0-2 1-2 4-6 2-6", ["5-5", "2-5@0^"]),
    ("kardinal", "6-6 1-1 0-5 3-3 1-6 1-3 4-6", "3-4 0-2 2-2 0-3 2-3 4-4 0-4", ["6-6", "3-4@0x"]),
    ("leiden", "3-3 1-1 0-5 2-2 4-4 1-6", "3-4 3-6 1-5 0-2 1-2 4-6", ["3-3"]),
    ("leiden", "3-3 1-1 0-5 2-2 4-4 1-6", "3-4 3-6 1-5 0-2 1-2 4-6", ["3-3", "4-6@0>6"]),
]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e[0]}:{' '.join(e[3])}")
def test_the_worked_examples_are_what_the_engine_draws(
    example: tuple[str, str, str, list[str]],
) -> None:
    preset, p0, p1, moves = example
    state = _deal(preset, [p0, p1])
    for move in moves:
        state = state.apply(move)
    drawn = draw_layout(state)
    blocks = re.findall(r"```text\n(.*?)```", RULES_DOC.read_text(), re.S)
    assert drawn + "\n" in blocks, f"docs/rules.md should show:\n{drawn}"


def test_the_worked_examples_name_the_legal_moves() -> None:
    text = RULES_DOC.read_text()
    state = _deal("standard", [EXAMPLES[0][1], EXAMPLES[0][2]]).apply("2-4")
    listed = re.search(r"His ten legal moves:\n\n```text\n(.*?)```", text, re.S)
    assert listed is not None
    assert listed.group(1).split() == [str(m) for m in state.legal_moves()]
    polish = _deal("polish", [EXAMPLES[2][1], EXAMPLES[2][2]]).apply("5-5").apply("2-5@0^")
    assert [str(m) for m in polish.legal_moves()] == ["0-3@0>3", "0-6@0>6"]
    assert "his moves are `0-3@0>3` and\n`0-6@0>6`" in text
    kardinal = _deal("kardinal", [EXAMPLES[3][1], EXAMPLES[3][2]]).apply("6-6").apply("3-4@0x")
    for move in kardinal.legal_moves():
        assert f"`{move}`" in text
    blank = _deal("standard", ["0-4 1-1 0-5 3-3 4-4 0-6 5-5", "1-2 1-5 2-5 2-6 3-4 3-6 4-6"])
    moves = [str(m) for m in blank.apply("0-4").legal_moves()]
    assert len(moves) == 9 and {m.split("@")[0] for m in moves} == {"3-4", "2-5", "3-6"}
    assert "nine moves in\nall" in text
    for draw in ("only_matadors", "never"):
        rules = Rules.preset("standard", voluntary_draw=draw)
        stuck = deal(rules, ["0-0 1-1 2-2", "1-6 5-5"]).apply("0-0")
        moves = [str(m) for m in stuck.legal_moves()]
        if draw == "never":
            assert moves == ["1-6@0>1", "1-6@0>6", "1-6@1>1", "1-6@1>6"]
        else:
            listed = re.search(r"he must lay 1-6:\n\n```text\n(.*?)```", text, re.S)
            assert listed is not None and listed.group(1).split() == moves
    leiden = _deal("leiden", [EXAMPLES[4][1], EXAMPLES[4][2]]).apply("3-3").apply("4-6@0>6")
    assert {m.end for m in leiden.legal_moves()} == {1, 2, 3, None}
