"""Issue 24 item 5: `ingest --sync` decides what is gone from the files on disk and the brain's origins alone,
the same with or without the local caches; excluded files are out of scope; a moved project still syncs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.cli.conftest import BrainRunner

ACTOR = "tester@example.org"
TEXTS = {
    "a.md": "# Alpha\n\nAn alpha particle is a helium nucleus.\n",
    "b.md": "# Beta\n\nA beta particle is an electron.\n",
    "c.md": "# Gamma\n\nA gamma ray is a photon.\n",
    "d.md": "# Delta\n\nA delta ray is a secondary electron.\n",
}


def _project(root: Path) -> None:
    for folder in ("", "notes/"):
        for name, text in TEXTS.items():
            path = root / "docs" / f"{folder}{name}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text.replace("#", f"# {folder}"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def _ingest(brain: BrainRunner, path: Path, cwd: Path, *extra: str) -> dict:
    run = brain("--brain", str(path), "--actor", ACTOR, "ingest", "docs", "--json", *extra, cwd=cwd)
    assert run.code == 0, run
    return run.json()


def _canonical(brain: BrainRunner, path: Path) -> list[str]:
    listed = brain("--brain", str(path), "ls", "--type", "canonical", "--json")
    assert listed.code == 0, listed
    return sorted(m["title"].split(" (")[0] for m in listed.json())


def test_without_caches_an_excluded_file_on_disk_is_never_dropped(brain: BrainRunner, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _project(project)
    built = tmp_path / "built"
    assert brain("--brain", str(built), "init").code == 0
    _ingest(brain, built, project)
    before = _canonical(brain, built)
    assert len(before) == 8
    outcomes = {}
    for caches in (True, False):
        # What a pull into a fresh directory holds: the brain without its local caches.
        copy = tmp_path / f"copy-{caches}"
        shutil.copytree(
            built, copy, ignore=None if caches else shutil.ignore_patterns("fingerprints.json", "cache", "search")
        )
        synced = _ingest(brain, copy, project, "--sync", "--exclude", "notes/**")
        outcomes[caches] = synced["missing"]
        assert _canonical(brain, copy) == before, (caches, synced["missing"])
    assert outcomes[True] == outcomes[False] == []


def test_a_deleted_excluded_file_is_out_of_scope_and_a_deleted_one_in_scope_goes(
    brain: BrainRunner, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    _project(project)
    path = tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    _ingest(brain, path, project)
    (project / "docs" / "notes" / "c.md").unlink()
    (project / "docs" / "b.md").unlink()
    (path / "boltzmann" / "fingerprints.json").unlink()
    synced = _ingest(brain, path, project, "--sync", "--exclude", "notes/**")
    assert [(m["origin"], m["action"]) for m in synced["missing"]] == [("docs/b.md", "dropped")]
    assert "docs/notes/c.md" in _canonical(brain, path)


def test_sync_after_the_project_moved(brain: BrainRunner, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    _project(project)
    path = tmp_path / "brain"
    assert brain("--brain", str(path), "init").code == 0
    _ingest(brain, path, project)
    moved = tmp_path / "proj2"
    project.rename(moved)
    (moved / "docs" / "b.md").unlink()
    synced = _ingest(brain, path, moved, "--sync")
    assert [(m["origin"], m["action"]) for m in synced["missing"]] == [("docs/b.md", "dropped")]
    assert "docs/b.md" not in _canonical(brain, path) and len(_canonical(brain, path)) == 7
    again = _ingest(brain, path, moved, "--sync")
    assert again["missing"] == []
