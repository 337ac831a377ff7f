"""The hostile suite: what an attacker or an unlucky operator hands the CLI and the servers (issue #24).

Every test here runs against the real entry points (`cli.main.main` in this process, guarded against hangs
and runaway reads, or a real `brain serve` process) on a private copy of the reference brain, and stays
small: the whole suite is meant to run in well under a minute on two cores.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import (  # noqa: F401 - fixtures shared with the CLI tests
    BrainRunner,
    Run,
    assert_one_line_error,
    brain,
    brain_exe,
    reference_brain,
)

HEADROOM = 512 << 20  # a command that tries to read the zero device fails at +512 MiB instead of taking the machine


class Hung(BaseException):
    """A guarded command still ran when its time was up (a read that waits on a FIFO)."""


@contextlib.contextmanager
def guard(seconds: int) -> Iterator[None]:
    """Run the body with at most HEADROOM more address space and at most `seconds` (SIGALRM raises `Hung`)."""
    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)

    def alarm(signum: int, frame: object) -> None:
        raise Hung(f"still running after {seconds}s")

    previous = signal.signal(signal.SIGALRM, alarm)
    resource.setrlimit(resource.RLIMIT_AS, (size + HEADROOM, hard))
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def guarded(brain: BrainRunner) -> BrainRunner:  # noqa: F811 - the fixture of that name
    """`brain` in this process, guarded: a hang fails after 10 s, a runaway read at +512 MiB (MemoryError)."""

    def run(*args: str, **options: object) -> Run:
        with guard(10):
            return brain(*args, **options)

    return run


@pytest.fixture
def hostile_files(tmp_path: Path) -> dict[str, Path]:
    """Paths that are not bounded regular files: a FIFO nobody writes, the zero device, a directory, 20 MiB."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    directory = tmp_path / "a-directory"
    directory.mkdir()
    big = tmp_path / "big"
    with open(big, "wb") as handle:
        handle.truncate(20 << 20)
    return {"fifo": fifo, "zero": Path("/dev/zero"), "directory": directory, "big": big}


@pytest.fixture(scope="module")
def shared_brain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One writable copy of the reference brain per module, for tests whose commands are refused before writing."""
    import shutil

    from tests.shared_paths import REFERENCE_BRAIN

    target = tmp_path_factory.mktemp("shared") / "reference-brain"
    shutil.copytree(REFERENCE_BRAIN, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    return target
