"""After `make demo`, people learn how to get `brain` on their PATH (issue 12, item 12): the demo target
ends by saying it, and the README's quick start says it too."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HINTS = (". .venv/bin/activate", "pipx install .", "uv tool install .")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_ends_with_the_path_hint() -> None:
    # `-n` prints the recipe without running it (the demo itself needs a network-free pip install).
    done = subprocess.run(
        ["make", "-n", "-B", "demo"], cwd=REPO, capture_output=True, text=True, check=True, timeout=60
    )
    recipe = done.stdout.splitlines()
    last_brain = max(i for i, line in enumerate(recipe) if "/brain --brain" in line)
    after = "\n".join(recipe[last_brain + 1 :])
    assert all(hint in after for hint in HINTS), done.stdout


def test_readme_quick_start_says_how_to_get_brain_on_path() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert all(hint in quick_start for hint in HINTS), quick_start
