"""`ingest ROOT --sync` inside a git repository: origins are repository-relative (`ingest.sources.origins`),
so a sync of one root must only consider the sources under that root, never those of a sibling root."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.cli.conftest import BrainRunner

ACTOR = "tester@example.org"


def _ingest(brain: BrainRunner, path: Path, root: Path, cwd: Path, *extra: str) -> dict:
    run = brain("--brain", str(path), "--actor", ACTOR, "ingest", str(root), "--json", *extra, cwd=cwd)
    assert run.code == 0, run
    return run.json()


def test_sync_of_one_root_keeps_the_sources_of_another(brain: BrainRunner, tmp_path: Path):
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "notes").mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "docs" / "a.md").write_text("# Alpha\n\nAn alpha particle is a helium nucleus.\n")
    (repo / "docs" / "b.md").write_text("# Beta\n\nA beta particle is an electron.\n")
    (repo / "notes" / "c.md").write_text("# Gamma\n\nA gamma ray is a photon.\n")
    path = tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    first = _ingest(brain, path, repo / "docs", repo)
    assert sorted(o["origin"] for o in first["outcomes"]) == ["docs/a.md", "docs/b.md"]
    _ingest(brain, path, repo / "notes", repo)
    (repo / "docs" / "b.md").unlink()
    # From another working directory: the origins (and so the sync's scope) do not depend on it.
    synced = _ingest(brain, path, repo / "docs", tmp_path, "--sync")
    assert [(m["origin"], m["action"]) for m in synced["missing"]] == [("docs/b.md", "dropped")]
    listed = brain("--brain", str(path), "ls", "--type", "canonical", "--json")
    assert listed.code == 0, listed
    assert "notes/c.md" in listed.stdout and "docs/a.md" in listed.stdout and "docs/b.md" not in listed.stdout
