"""A recorder for the tests of the notes that say why a first use is slow.

:func:`matador_env.streams.note_when_slow` itself (its line after two seconds, on a
closed or broken error stream) is tested in ``tests/test_closed_streams.py``; the
tests of its callers check, with :func:`record_notes`, which blocks run inside it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import ModuleType

import pytest


def record_notes(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[object]:
    """Replaces ``module.note_when_slow`` by a recorder; the list it returns gets
    ``(message, after_s)`` as each block under a note starts and ``"done"`` as it ends
    without raising."""
    said: list[object] = []

    @contextlib.contextmanager
    def recorded(message: str, after_s: float = 2.0) -> Iterator[None]:
        said.append((message, after_s))
        yield
        said.append("done")

    monkeypatch.setattr(module, "note_when_slow", recorded)
    return said
