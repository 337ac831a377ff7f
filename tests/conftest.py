"""Shared fixtures for the whole suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.loopback import handler_threads_left
from tests.registry import auth_registry, faulty_proxy, registry  # noqa: F401 - registry fixtures (see tests/registry.py)
from tests.scratch import memory_dir  # noqa: F401 - a scratch directory in memory, for the crash loops


_SLOW_TESTS = Path(__file__).with_name("slow_tests.txt")
_DURATIONS = Path(__file__).with_name("durations.txt")


def _module_seconds() -> dict[str, float]:
    """Test file -> the measured seconds of its long tests (tests/durations.txt)."""
    seconds: dict[str, float] = {}
    for line in _DURATIONS.read_text().splitlines():
        if line and not line.startswith("#"):
            value, _, nodeid = line.partition(" ")
            module = nodeid.split("::", 1)[0]
            seconds[module] = seconds.get(module, 0.0) + float(value)
    return seconds


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests measured slow (tests/slow_tests.txt) `slow`, so `make test-fast` leaves them to `make test`;
    then run the test files holding the most measured time first, each file's tests together and in order.

    xdist's worksteal gives each worker a contiguous half of this order and an idle worker steals the tail
    of the other's queue, so with the long files first the run ends on short tests on both workers."""
    listed = {line for line in _SLOW_TESTS.read_text().splitlines() if line and not line.startswith("#")}
    for item in items:
        if item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
    seconds = _module_seconds()
    position = {id(item): index for index, item in enumerate(items)}
    items.sort(key=lambda item: (-seconds.get(item.nodeid.split("::", 1)[0], 0.0), position[id(item)]))


@pytest.fixture(autouse=True)
def _no_http_handler_left_running() -> Iterator[None]:
    """A test leaves no HTTP handler thread of an in-process fake behind (`tests.loopback` says why it matters)."""
    yield
    left = handler_threads_left()
    assert not left, f"HTTP handler threads still running after the test: {left}; serve fakes with tests.loopback"
