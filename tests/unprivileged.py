"""Permission tests that mean the same as root: run the code under test without root's power over file modes.

The suite runs as root in CI, and root reads a file whatever its mode, so a test of "this file cannot be
read" would prove nothing — or be skipped, and a skip is not a pass. `run_unprivileged` runs the command,
when the suite is root, with the two capabilities that let root ignore modes (`CAP_DAC_OVERRIDE`,
`CAP_DAC_READ_SEARCH`) dropped from its bounding set by `setpriv`: still uid 0, owner of the files the test
made (and of a checkout in a private directory, which another user could not even run), but a mode of 000
now refuses it as it refuses anyone.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

_DAC = "-dac_override,-dac_read_search"


def run_unprivileged(
    command: Sequence[str], *, cwd: Path, env: dict[str, str], timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`command` where file modes bind it: as is for a normal user, without root's DAC capabilities for root."""
    argv = list(command)
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        assert setpriv, "setpriv (util-linux) is needed to run a permission test without root's capabilities"
        argv = [setpriv, f"--bounding-set={_DAC}", f"--inh-caps={_DAC}", *argv]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
