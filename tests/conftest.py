"""Shared pytest options and fixtures."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import pytest

# make test runs the suite in pytest-xdist's workers, which each collect it and must
# agree on every test id; an id that holds a memory address (a bare object's repr,
# "<object object at 0x7f...>") differs from process to process.
MEMORY_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


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


def ids_holding_a_memory_address(nodeids: Iterable[str]) -> list[str]:
    """The test ids among ``nodeids`` that another process would collect differently."""
    return [nodeid for nodeid in nodeids if MEMORY_ADDRESS.search(nodeid)]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    unstable = ids_holding_a_memory_address(item.nodeid for item in items)
    if unstable:
        raise pytest.UsageError(
            f"{len(unstable)} test id(s) hold a memory address, which differs in each "
            "process, so pytest-xdist's workers would collect different suites; give "
            "these parameters ids (pytest.param(..., id=...) or ids=): " + ", ".join(unstable[:5])
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
