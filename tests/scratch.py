"""A scratch directory in memory, for the crash loops that copy a brain of thousands of blobs per trial.

On the CI machine the temporary directory is on ext4 mounted with `discard`, where removing a file costs
about a millisecond (2,000 small files: 3.3 s to delete on /tmp, 0.01 s on /dev/shm, measured 2026-12-02),
so deleting each trial's copy cost more than the trial. A SIGKILL loses what the process had not written,
not what the kernel holds, so where the copies live does not change what a kill test proves.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

MEMORY = Path("/dev/shm")


@pytest.fixture
def memory_dir(tmp_path: Path) -> Iterator[Path]:
    """An empty directory on /dev/shm when the machine has a writable one, else `tmp_path` (removed after)."""
    if not (MEMORY.is_dir() and os.access(MEMORY, os.W_OK | os.X_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="brain-test-", dir=MEMORY))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
