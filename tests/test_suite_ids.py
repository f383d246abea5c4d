"""The suite's test ids are the same in every process (make test runs it in
pytest-xdist's workers, which collect it each on their own)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.conftest import ids_holding_a_memory_address

ROOT = Path(__file__).resolve().parent.parent


def test_an_id_holding_a_memory_address_is_found_and_others_are_not() -> None:
    address = f"tests/test_x.py::test_y[{object()!r}]"
    assert " at 0x" in address
    kept = [
        "tests/test_x.py::test_y[object()]",
        "tests/test_x.py::test_y[Move(kind='play', tile=None)]",
        "tests/test_x.py::test_y[look at 0 x]",
    ]
    assert ids_holding_a_memory_address([*kept, address]) == [address]


def test_collecting_a_test_with_such_an_id_stops_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    (tmp_path / "tests" / "test_bare.py").write_text(
        textwrap.dedent(
            """
            import pytest

            @pytest.mark.parametrize("value", [1, object()], ids=repr)
            def test_value(value):
                assert value
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0
    assert "1 test id(s) hold a memory address" in done.stdout + done.stderr
    assert "test_bare.py::test_value[<object object at 0x" in done.stdout + done.stderr
    assert "passed" not in done.stdout
