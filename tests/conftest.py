"""Shared pytest options and fixtures."""

from __future__ import annotations

from collections.abc import Iterator

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


@pytest.fixture(autouse=True, scope="session")
def sb3_logs_in_pytest_tmp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """SB3's ``learn()`` on a model without a logger makes an empty folder in the
    system's temp dir (``SB3-<time>``) for each run; the tests' go to pytest's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """torch at one thread for the test (the project's training setting on two
    cores), and its thread count put back after."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
