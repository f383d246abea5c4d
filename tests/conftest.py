"""Shared pytest options and fixtures."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        default=False,
        help="rewrite tests/golden/ from the current engine instead of comparing with it",
    )
    parser.addoption(
        "--long",
        action="store_true",
        default=False,
        help="also run the long tests (fuzz campaigns, differential checks): minutes",
    )


@pytest.fixture
def regen_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--regen-golden"))


@pytest.fixture
def long_run(request: pytest.FixtureRequest) -> bool:
    """True under ``pytest --long``: the fuzz campaigns run for minutes, not seconds."""
    return bool(request.config.getoption("--long"))
