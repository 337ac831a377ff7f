"""Issue 24 item 6: `export --to` never writes inside the brain directory (exit 3), symlinks resolved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.conftest import BrainRunner, assert_one_line_error


@pytest.fixture
def small_brain(brain: BrainRunner, tmp_path: Path) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A\n\nA brain is a content-addressed store of typed knowledge blocks.\n")
    assert brain("init", "--actor", "ci@example.org").code == 0
    assert brain("ingest", "docs", "--actor", "ci@example.org").code == 0
    return tmp_path / "brain"


@pytest.mark.parametrize("target", ["boltzmann/head.json", "boltzmann/new.jsonl", "index.json", "blobs/x.jsonl", "."])
def test_jsonl_into_the_brain_is_refused(brain: BrainRunner, small_brain: Path, target: str) -> None:
    head = (small_brain / "boltzmann" / "head.json").read_bytes()
    done = brain("--brain", str(small_brain), "export", "--to", str(small_brain / target))
    assert_one_line_error(done, 3)
    assert "inside the brain" in done.stderr
    assert (small_brain / "boltzmann" / "head.json").read_bytes() == head
    assert brain("--brain", str(small_brain), "verify").code == 0


def test_markdown_into_the_brain_is_refused(brain: BrainRunner, small_brain: Path) -> None:
    done = brain(
        "--brain", str(small_brain), "export", "--format", "markdown", "--to", str(small_brain / "boltzmann" / "md")
    )
    assert_one_line_error(done, 3)
    assert not (small_brain / "boltzmann" / "md").exists()


def test_a_symlink_into_the_brain_is_refused(brain: BrainRunner, small_brain: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(small_brain / "boltzmann")
    (tmp_path / "head-alias.json").symlink_to(small_brain / "boltzmann" / "head.json")
    head = (small_brain / "boltzmann" / "head.json").read_bytes()
    for target in (tmp_path / "alias" / "head.json", tmp_path / "head-alias.json"):
        done = brain("--brain", str(small_brain), "export", "--to", str(target))
        assert_one_line_error(done, 3)
    relative = brain("--brain", str(small_brain), "export", "--to", os.path.join("brain", "boltzmann", "head.json"))
    assert_one_line_error(relative, 3)
    assert (small_brain / "boltzmann" / "head.json").read_bytes() == head


def test_outside_the_brain_still_works(brain: BrainRunner, small_brain: Path, tmp_path: Path) -> None:
    done = brain("--brain", str(small_brain), "export", "--to", str(tmp_path / "out.jsonl"))
    assert done.code == 0, done
    assert (tmp_path / "out.jsonl").read_text().strip()
