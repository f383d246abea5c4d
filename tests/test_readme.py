"""The README and the docs are true: their Python examples run, their links resolve
inside the repository, their install lines name extras that exist, the notation is
explained before it is used, and docs/rules.md covers every option and preset."""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

import pytest

from matador_env.engine import PRESETS, Rules

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
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
    assert not re.search(r"pip install '?matador-env", text), "there is no matador-env on PyPI"


def test_play_points_at_the_rules_document() -> None:
    source = (ROOT / "matador_env" / "play.py").read_text()
    assert "RULES.md" not in source and "docs/rules.md" in source


def test_install_lines_name_extras_that_exist() -> None:
    extras = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    )
    text = README.read_text()
    lines = [line for line in text.splitlines() if "pip install" in line]
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
