"""Shared fixtures for the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.registry import auth_registry, faulty_proxy, registry  # noqa: F401 - registry fixtures (see tests/registry.py)
from tests.scratch import memory_dir  # noqa: F401 - a scratch directory in memory, for the crash loops
from tests.unprivileged import world_dir  # noqa: F401 - a directory an unprivileged user can enter


_SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests measured slow (tests/slow_tests.txt) `slow`, so `make test-fast` leaves them to `make test`."""
    listed = {line for line in _SLOW_TESTS.read_text().splitlines() if line and not line.startswith("#")}
    for item in items:
        if item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
