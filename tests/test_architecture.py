"""Dependency direction, checked on the source.

- ``matador_env.engine`` imports only the standard library (and itself): checked on
  the parsed imports of every engine file, and by importing the engine in a fresh
  interpreter in which numpy and every other non-standard top-level package is
  blocked by a ``sys.meta_path`` finder.
- Nothing under ``matador_env`` imports ``agents``, ``train`` or ``evaluate``.
- Nothing imports ``train`` or ``evaluate`` except ``train/``, ``evaluate/`` and ``tests/``.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "matador_env"
ENGINE = PACKAGE / "engine"
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}
SKIP_DIRS = {".venv", "venv", ".git", "build", "dist", "node_modules", "__pycache__"}


def python_files(top: Path) -> list[Path]:
    return sorted(
        p
        for p in top.rglob("*.py")
        if not any(part in SKIP_DIRS or part.startswith(".") for part in p.relative_to(ROOT).parts)
    )


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """(line, absolute module name) of every import in the file: import statements
    (relative ones resolved against the file's package), and importlib.import_module /
    __import__ calls with a literal name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                if node.level - 1 > len(base):
                    yield node.lineno, "<relative import above the top level>"
                    continue
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield node.lineno, module
            # "from pkg import sub" may import the submodule pkg.sub
            for alias in node.names:
                if alias.name != "*":
                    yield node.lineno, f"{module}.{alias.name}"
        elif isinstance(node, ast.Call):
            func = node.func
            called = (
                func.attr
                if isinstance(func, ast.Attribute)
                else func.id
                if isinstance(func, ast.Name)
                else ""
            )
            if (
                called in ("import_module", "__import__")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                yield node.lineno, node.args[0].value


def top_level(module: str) -> str:
    return module.partition(".")[0]


def test_the_scan_sees_the_engine() -> None:
    files = python_files(ENGINE)
    assert ENGINE / "state.py" in files and ENGINE / "__init__.py" in files
    assert "random" in {top_level(m) for _, m in imported_modules(ENGINE / "state.py")}


def test_engine_imports_only_the_standard_library() -> None:
    bad: list[str] = []
    for path in python_files(ENGINE):
        for line, module in imported_modules(path):
            if module == "matador_env.engine" or module.startswith("matador_env.engine."):
                continue
            if top_level(module) in STDLIB:
                continue
            bad.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert not bad, "the engine must import only the standard library:\n" + "\n".join(
        sorted(set(bad))
    )


BLOCKED_IMPORT = textwrap.dedent(
    """
    import importlib.abc
    import json
    import sys

    ALLOWED = set(sys.stdlib_module_names) | {"__future__", "matador_env"}
    attempts = []

    def importer():
        # The file of the frame that asked for the import (past importlib's own).
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename.startswith("<frozen"):
            frame = frame.f_back
        return frame.f_code.co_filename if frame is not None else "?"

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            top = name.partition(".")[0]
            if top == "numpy" or top not in ALLOWED:
                # The standard library probes optional modules (copy tries "org");
                # what counts is an attempt made by matador_env's own code.
                where = importer()
                if top == "numpy" or "matador_env" in where:
                    attempts.append(f"{name} (from {where})")
                raise ImportError(f"blocked by the architecture test: {name}")
            return None

    before = set(sys.modules)
    sys.meta_path.insert(0, Blocker())

    import matador_env.engine as engine

    # Use it, so that lazy imports inside functions run too.
    rules = engine.Rules.preset("standard")
    state = engine.HandState.deal(rules, 1)
    while not state.is_over:
        state = state.apply(state.legal_moves()[0])
    engine.parse_hand_record(engine.hand_record(state)).replay()
    engine.render_table(state)
    match = engine.MatchState.new(rules, 1)
    state.view(0)

    loaded = sorted(
        m for m in set(sys.modules) - before if m.partition(".")[0] not in ALLOWED
    )
    print(json.dumps({"file": engine.__file__, "attempts": attempts, "loaded": loaded}))
    """
)


def test_engine_imports_with_numpy_blocked() -> None:
    done = subprocess.run(
        [sys.executable, "-c", BLOCKED_IMPORT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"importing the engine failed:\n{done.stderr}"
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(report["file"]).resolve().is_relative_to(ENGINE), report["file"]
    assert report["attempts"] == [], f"the engine tried to import {report['attempts']}"
    assert report["loaded"] == [], f"non-stdlib modules loaded: {report['loaded']}"


def test_the_blocker_blocks_numpy() -> None:
    """The subprocess check can fail: the same finder stops a plain numpy import."""
    script = BLOCKED_IMPORT.replace(
        "import matador_env.engine as engine",
        "import numpy  # noqa\nimport matador_env.engine as engine",
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0 and "blocked by the architecture test: numpy" in done.stderr


@pytest.mark.parametrize("forbidden", ["agents", "train", "evaluate"])
def test_package_does_not_import_upper_layers(forbidden: str) -> None:
    bad = {
        f"{path.relative_to(ROOT)}:{line} imports {forbidden}"
        for path in python_files(PACKAGE)
        for line, module in imported_modules(path)
        if top_level(module) == forbidden
    }
    assert not bad, f"matador_env must not import {forbidden}:\n" + "\n".join(sorted(bad))


@pytest.mark.parametrize("forbidden", ["train", "evaluate"])
def test_nothing_else_imports_train_or_evaluate(forbidden: str) -> None:
    # Benchmarks sit on top with train and evaluate: the strength benchmarks run the
    # arena and the training recipe. The library and the agents never import them.
    allowed_dirs = {"train", "evaluate", "tests", "benchmarks"}
    bad = {
        f"{path.relative_to(ROOT)}:{line} imports {forbidden}"
        for path in python_files(ROOT)
        if path.relative_to(ROOT).parts[0] not in allowed_dirs
        for line, module in imported_modules(path)
        if top_level(module) == forbidden
    }
    assert not bad, (
        f"only train/, evaluate/, benchmarks/ and tests/ may import {forbidden}:\n"
        + "\n".join(sorted(bad))
    )


def test_every_data_file_of_the_package_is_installed() -> None:
    """Each file under ``matador_env`` that is not Python source is named by a glob of
    ``[tool.setuptools.package-data]``, so a wheel carries it: an editable install
    reads the checkout and would not notice a bot, page or perft file left out."""
    from tests.test_readme import pyproject

    globs = pyproject()["tool"]["setuptools"]["package-data"]["matador_env"]
    installed = {p for pattern in globs for p in PACKAGE.glob(pattern)}
    data = {
        p
        for p in PACKAGE.rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    }
    assert data - installed == set(), "add them to package-data in pyproject.toml"
    assert PACKAGE / "conformance" / "perft.json" in installed
