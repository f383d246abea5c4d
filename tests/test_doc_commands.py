"""Every ``python -m ...`` command the README and the docs show is one its module's
argument parser accepts: flags that were renamed or removed, and values outside a
flag's choices, fail here instead of in a user's shell.

Only the parsing is run (each module's ``main`` up to its ``parse_args``), so a
command that would train for an hour costs milliseconds. Commands with placeholders
(``NAME``, ``...``, ``[--only NAME]``) are skipped; so are code spans in prose that
name a module without arguments.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_readme import DOCS, ROOT

PLACEHOLDER = re.compile(r"^(\.\.\.|[A-Z][A-Z_]*|.*[\[\]].*)$")


def commands(doc: Path) -> list[str]:
    """The ``python -m`` command lines of ``doc``: each line of a shell block (joined
    over ``\\`` continuations) and each inline code span, without comments, output
    redirections and pipes."""
    text = doc.read_text(encoding="utf-8")
    found: list[str] = []
    for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            found.extend(re.findall(r"python -m [^#|>]*", line))
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        span = " ".join(span.split())
        # A span with the module alone names it in prose; with arguments it is a command.
        if span.startswith("python -m ") and len(span.split()) > 3:
            found.append(re.split(r"[#|>]", span)[0])
    return [c.strip() for c in found]


CASES = sorted(
    {
        (str(doc.relative_to(ROOT)), line)
        for doc in DOCS
        for line in commands(doc)
        if not any(PLACEHOLDER.match(token) for token in shlex.split(line)[2:])
    }
)


class _Parsed(Exception):
    """Raised in place of running the command once its arguments parsed."""


def _entry(module: str) -> Any:
    """The ``main`` that ``python -m module`` runs."""
    mod = importlib.import_module(module)
    if hasattr(mod, "__path__"):  # a package: its __main__ (which may import main)
        mod = importlib.import_module(f"{module}.__main__")
    return mod.main


def test_the_docs_show_commands() -> None:
    modules = {shlex.split(line)[2] for _, line in CASES}
    assert {"train", "evaluate", "matador_env.serve", "benchmarks.strength"} <= modules
    assert len(CASES) >= 40


@pytest.mark.parametrize(("doc", "line"), CASES, ids=[f"{d}: {c}" for d, c in CASES])
def test_documented_command_parses(
    doc: str, line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tokens = shlex.split(line)
    module, argv = tokens[2], tokens[3:]
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
        original(self, *args, **kwargs)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    monkeypatch.setattr(sys, "argv", [module, *argv])
    main = _entry(module)
    takes_argv = bool(inspect.signature(main).parameters)
    try:
        main(argv) if takes_argv else main()
    except _Parsed:
        return
    except SystemExit as exc:
        # --help prints and exits 0; a parse error exits 2 with its message on stderr.
        assert exc.code in (0, None), f"{doc}: `{line}` is refused: {capsys.readouterr().err}"
        return
    pytest.fail(f"{doc}: `{line}` ran without parsing its arguments")
