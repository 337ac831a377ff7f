"""Run the real `brain` console script in a subprocess, on throwaway copies of the reference brain."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

BRAIN_EXE = Path(sys.executable).with_name("brain")
REFERENCE_BRAIN = Path("/work/shared/fixtures/reference-brain")


@dataclass(frozen=True)
class Run:
    """The outcome of one `brain` process."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        """stdout parsed as JSON."""
        return json.loads(self.stdout)


BrainRunner = Callable[..., Run]


@pytest.fixture
def brain(tmp_path: Path) -> BrainRunner:
    """Call as `brain("status", "--json", cwd=..., env={...})`; runs with a clean, pinned environment."""

    def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
        environment.update({"NO_COLOR": "1", "SOURCE_DATE_EPOCH": "1767225600"})
        environment.update(env or {})
        done = subprocess.run(
            [str(BRAIN_EXE), *args],
            cwd=cwd or tmp_path,
            env=environment,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return Run(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture
def reference_brain(tmp_path: Path) -> Path:
    """A writable copy of the reference brain (the shared fixture is read-only)."""
    target = tmp_path / "reference-brain"
    shutil.copytree(REFERENCE_BRAIN, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


def assert_one_line_error(run: Run, code: int) -> None:
    """The run failed with `code` and said so in one `error:` line (plus an optional hint), no traceback."""
    assert run.code == code, run
    lines = run.stderr.splitlines()
    assert lines and lines[0].startswith("error: "), run.stderr
    assert all(line.startswith("hint: ") for line in lines[1:]), run.stderr
    assert "Traceback" not in run.stderr
