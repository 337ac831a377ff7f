"""Fixtures of the authenticity tests: the CLI runners of tests/cli and writable copies of the signed brain."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from tests.authn.keys import SIGNED_BRAIN
from tests.cli.conftest import brain, brain_exe  # noqa: F401 - shared CLI runner fixtures


@pytest.fixture
def signed_brain(tmp_path: Path) -> Path:
    """A writable copy of `fixtures/signed-brain/brain`."""
    target = tmp_path / "signed-brain"
    shutil.copytree(SIGNED_BRAIN / "brain", target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target
