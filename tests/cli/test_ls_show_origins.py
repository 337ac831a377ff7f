"""Issue 12 items 8-9 through the CLI: a listing of nothing is `[]` and exit 0; `show` speaks in origins
(evidence as origin + locator, and `show ORIGIN` for the current canonical block of a source)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.cli.test_ingest_cli_replace import _write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ACTOR = "curator@example.org"
GLOSSARY = "# Glossary\n\nA shard is a slice of the keyspace.\n"


def _ingested(brain: BrainRunner, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """`docs/glossary.md` in a git work tree at `tmp_path`, ingested into `tmp_path/brain`."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, capture_output=True)
    _write(tmp_path, {"docs/glossary.md": GLOSSARY})
    brain_dir = tmp_path / "brain"
    assert brain("--brain", str(brain_dir), "init").code == 0
    run = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", "docs", "--json")
    assert run.code == 0, run
    return brain_dir, run.json()


def test_listing_a_type_the_brain_has_no_module_for_is_empty(brain: BrainRunner, tmp_path: Path) -> None:
    brain_dir, _ = _ingested(brain, tmp_path)
    run = brain("--brain", str(brain_dir), "ls", "--type", "episodic", "--json")
    assert (run.code, run.json(), run.stderr) == (0, [], "")
    people = brain("--brain", str(brain_dir), "ls", "--type", "episodic")
    assert (people.code, people.stdout, people.stderr) == (0, "", "no episodic members\n")
    empty = tmp_path / "empty"
    assert brain("--brain", str(empty), "init").code == 0
    for memory_type in ("canonical", "procedural", "provenance"):
        assert brain("--brain", str(empty), "ls", "--type", memory_type, "--json").json() == []
    assert_one_line_error(brain("--brain", str(empty), "ls", "--type", "nonsense"), 3)


def test_show_names_evidence_by_origin_and_locator(brain: BrainRunner, tmp_path: Path) -> None:
    brain_dir, _ = _ingested(brain, tmp_path)
    facts = brain("--brain", str(brain_dir), "ls", "--type", "semantic", "--json").json()
    assert facts, "the heuristic proposer reads the definition"
    run = brain("--brain", str(brain_dir), "show", facts[0]["block_id"][7:19])
    assert run.code == 0, run
    evidence = next(line for line in run.stdout.splitlines() if line.startswith("evidence"))
    assert "docs/glossary.md L3" in evidence, run.stdout
    data = brain("--brain", str(brain_dir), "show", facts[0]["block_id"], "--json").json()
    (citation,) = data["ledger"]["cited"]
    assert citation["origin"] == "docs/glossary.md" and citation["locator"].startswith("L3")
    assert data["ledger"]["evidence"] == [citation["block"]]


def test_show_origin_shows_the_current_canonical_block(brain: BrainRunner, tmp_path: Path) -> None:
    brain_dir, first = _ingested(brain, tmp_path)
    old = first["outcomes"][0]["block"]
    shown = brain("--brain", str(brain_dir), "show", "docs/glossary.md", "--json")
    assert shown.code == 0 and shown.json()["block_id"] == old, shown
    glossary = tmp_path / "docs" / "glossary.md"
    glossary.write_text(GLOSSARY + "\nA replica is a copy of a shard.\n")
    os.utime(glossary, (1, 1))
    again = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", "docs", "--json").json()
    new = again["outcomes"][0]["block"]
    assert again["replaced"] == 1 and new != old
    assert brain("--brain", str(brain_dir), "show", "docs/glossary.md", "--json").json()["block_id"] == new
    # A local path is looked up by its default origin (repository-relative), from wherever the user stands,
    # even where the same name is another source's origin (`README.md` at the root vs `docs/README.md`).
    inside = brain("--brain", str(brain_dir), "show", "glossary.md", "--json", cwd=tmp_path / "docs")
    assert inside.code == 0 and inside.json()["block_id"] == new, inside
    _write(tmp_path, {"README.md": "# Top\n\nThe top is a page.\n", "docs/README.md": "# Docs\n\nDocs are pages.\n"})
    readmes = brain("--brain", str(brain_dir), "--actor", ACTOR, "ingest", "README.md", "docs", "--json").json()
    ids = {o["origin"]: o["block"] for o in readmes["outcomes"]}
    for cwd, block in ((tmp_path, ids["README.md"]), (tmp_path / "docs", ids["docs/README.md"])):
        assert brain("--brain", str(brain_dir), "show", "README.md", "--json", cwd=cwd).json()["block_id"] == block
    assert_one_line_error(brain("--brain", str(brain_dir), "show", "docs/missing.md"), 4)
