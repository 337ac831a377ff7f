"""Run the real `brain` entry point (in-process or as the console script) on copies of the reference brain."""

from __future__ import annotations

import contextlib
import io
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

from brain.blocks import Block
from brain.brain import Brain
from brain.identity import BlockId
from cli.main import main
from tests.shared_paths import REFERENCE_BRAIN

BRAIN_EXE = Path(sys.executable).with_name("brain")


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


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    """The process environment without BRAIN_* settings, pinned clock and colours, plus `env`."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    environment.update({"NO_COLOR": "1", "SOURCE_DATE_EPOCH": "1767225600"})
    environment.update(env or {})
    return environment


@pytest.fixture
def brain_exe(tmp_path: Path) -> BrainRunner:
    """The installed console script in a subprocess: `brain_exe("status", "--json", env={...})`."""

    def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
        done = subprocess.run(
            [str(BRAIN_EXE), *args],
            cwd=cwd or tmp_path,
            env=_environment(env),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return Run(done.returncode, done.stdout, done.stderr)

    return run


@pytest.fixture
def brain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BrainRunner:
    """`cli.main.main` (what the console script runs) in this process: same exit codes, no startup cost."""

    def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
        with monkeypatch.context() as patch:
            for name in [k for k in os.environ if k.startswith("BRAIN_")]:
                patch.delenv(name)
            for name, value in _environment(env).items():
                patch.setenv(name, value)
            patch.chdir(cwd or tmp_path)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(list(args))
        return Run(code, out.getvalue(), err.getvalue())

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


# Two episodes whose block ids share the first four hex digits (found by search, pinned here).
TWIN_PREFIX = "7b5a"


@pytest.fixture
def twin_brain(tmp_path: Path) -> tuple[Path, list[BlockId]]:
    """A brain holding exactly two members whose ids both start with `TWIN_PREFIX`."""
    twins = [
        Block.from_payload("episodic", {"summary": f"event {i}", "occurred_at": "2026-01-01T00:00:00Z"})
        for i in (514, 805)
    ]
    assert all(t.block_id.hex.startswith(TWIN_PREFIX) for t in twins)
    target = tmp_path / "twins"
    with Brain.init(target).writer("tester@example.org") as writer:
        for block in twins:
            writer.add(block)
        writer.commit()
    return target, [t.block_id for t in twins]
