"""The search index is ready when the brain is: ingest, pull and lifecycle commands bring it to the head as part
of their work, so the first query has nothing to build (issue 21, item 4)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from brain.brain import Brain
from retrieval.index import SearchIndex
from retrieval.paths import index_path
from tests.cli.conftest import BRAIN_EXE
from tests.registry import RegistryServer
from tests.retrieval.conftest import CORPUS, ingest, run_cli


def _index_is_current(path: Path) -> bool:
    assert index_path(path).is_file()
    index = SearchIndex.open(Brain.open(path))
    try:
        return index.is_current()
    finally:
        index.close()


def test_a_head_pointer_that_changes_only_its_retained_list_leaves_the_index_current(tmp_path: Path) -> None:
    # A commit on another branch (an agent's proposal) rewrites head.json's `retained`, not the snapshot searched.
    brain = tmp_path / "brain"
    ingest(brain, CORPUS)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "kites.md").write_text("# Kites\n\nA kite flies on a string.\n")
    ingest(brain, extra)
    assert _index_is_current(brain)
    held = Brain.open(brain).head()
    assert held is not None and len(held.retained) > 1
    (brain / "boltzmann" / "head.json").write_bytes(held.model_copy(update={"retained": held.retained[:1]}).to_bytes())
    assert _index_is_current(brain)
    index = SearchIndex.open(Brain.open(brain))
    try:
        generation = index.meta("generation")
        assert index.ensure_current().rebuilt is False and index.meta("generation") == generation
    finally:
        index.close()


def test_ingest_and_lifecycle_commands_leave_the_index_at_the_head(tmp_path: Path) -> None:
    brain = tmp_path / "brain"
    ingest(brain, CORPUS)
    assert _index_is_current(brain)
    first = run_cli("--brain", str(brain), "search", "consistent hashing", "--json")
    assert first.code == 0 and "search index built" not in first.stderr  # nothing left to build
    semantic = json.loads(run_cli("--brain", str(brain), "ls", "--type", "semantic", "--json").stdout)
    dropped = run_cli("--brain", str(brain), "drop", semantic[0]["block_id"], "--reason", "wrong", "--yes", "--json")
    assert dropped.code == 0, dropped
    assert _index_is_current(brain)
    demoted = run_cli("--brain", str(brain), "demote", semantic[1]["block_id"], "--reason", "stale", "--json")
    assert demoted.code == 0, demoted
    assert _index_is_current(brain)
    after = json.loads(run_cli("--brain", str(brain), "search", semantic[1]["title"], "--json").stdout)
    assert semantic[1]["block_id"] not in [m["block"] for m in after["matches"]]  # the update took effect


def test_a_read_only_index_never_fails_the_command(tmp_path: Path) -> None:
    brain = tmp_path / "brain"
    ingest(brain, CORPUS / "notes")
    search = index_path(brain).parent
    for path in search.iterdir():
        path.unlink()
    search.chmod(0o500)  # the sidecar cannot be written: the ingest still succeeds, the next search copes
    try:
        ingest(brain, CORPUS / "pages")
        found = run_cli("--brain", str(brain), "search", "onboarding first week", "--json")
        assert found.code == 0, found
    finally:
        search.chmod(0o700)


@pytest.mark.registry
def test_pull_leaves_the_index_at_the_head(registry: RegistryServer, tmp_path: Path) -> None:
    source = tmp_path / "src"
    ingest(source, CORPUS / "notes")
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "NO_COLOR": "1",
           "DOCKER_CONFIG": str(tmp_path / "docker"), "HOME": str(tmp_path)}
    ref = registry.ref("retrieval/follow:v1")
    for args in (["--brain", str(source), "push", ref], ["--brain", str(tmp_path / "dest"), "pull", ref]):
        done = subprocess.run([str(BRAIN_EXE), *args], env=env, capture_output=True, text=True, timeout=120,
                              check=False)
        assert done.returncode == 0, done.stderr
    assert _index_is_current(tmp_path / "dest")
