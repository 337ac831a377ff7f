"""Permission tests that mean the same as root: run the code under test as an unprivileged user.

The suite runs as root in CI, and root reads a file whatever its mode, so a test of "this file cannot be
read" would prove nothing — or be skipped, and a skip is not a pass. These helpers run the command as
`nobody` through `setpriv` when the suite is root (as itself otherwise), in a directory every user can
enter: pytest's own temporary directories are private to root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

NOBODY = 65534


@pytest.fixture
def world_dir() -> Iterator[Path]:
    """An empty directory that an unprivileged user can enter and write (removed after the test)."""
    path = Path(tempfile.mkdtemp(prefix="brain-unprivileged-"))
    path.chmod(0o777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def share(root: Path) -> None:
    """Let an unprivileged user read and write everything below `root` (modes set later stay the test's)."""
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(0o777 if path.is_dir() else 0o666)


def run_unprivileged(
    command: Sequence[str], *, cwd: Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`command` as `nobody` when this process is root (the setpriv package must be there), else as is."""
    argv = list(command)
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to run a permission test as an unprivileged user"
        argv = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
