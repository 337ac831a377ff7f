"""`brain merge REF`: a branch published to a real registry is fetched (history and blocks, no head move)
and reconciled; the result verifies and is checked as pushed with skopeo."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from brain.brain import Brain
from tests.oci.test_registry_cli import run
from tests.registry import RegistryServer, require_tool, skopeo_raw_manifest

pytestmark = pytest.mark.registry
DOCS = sorted(p for p in Path("/usr/share/doc").glob("*/copyright") if p.is_file())[:4]
ACTOR = ("--actor", "ci@example.org")


def _ok(done) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout) if done.stdout.lstrip().startswith("{") else {}


def _doc(tmp_path: Path, i: int) -> str:
    path = tmp_path / "docs" / f"{i}.txt"
    path.parent.mkdir(exist_ok=True)
    shutil.copyfile(DOCS[i], path)
    return str(path)


def test_merge_a_registry_ref(registry: RegistryServer, tmp_path: Path) -> None:
    require_tool("skopeo")
    _ok(run(tmp_path, "--brain", "ours", "init"))
    _ok(run(tmp_path, "--brain", "ours", *ACTOR, "ingest", _doc(tmp_path, 0)))
    shutil.copytree(tmp_path / "ours", tmp_path / "theirs")
    _ok(run(tmp_path, "--brain", "theirs", *ACTOR, "ingest", _doc(tmp_path, 1)))
    ref = registry.ref("merge/docs:br.x")
    _ok(run(tmp_path, "--brain", "theirs", "push", ref, "--plain-http", "--json"))
    _ok(run(tmp_path, "--brain", "ours", *ACTOR, "ingest", _doc(tmp_path, 2)))
    ours = Brain.open(tmp_path / "ours").snapshot_digest()
    theirs = Brain.open(tmp_path / "theirs").snapshot_digest()
    plan = _ok(run(tmp_path, "--brain", "ours", *ACTOR, "merge", ref, "--plan", "--plain-http", "--json"))
    assert plan["outcome"] == "planned" and plan["theirs"] == [str(theirs)]
    assert Brain.open(tmp_path / "ours").snapshot_digest() == ours  # a fetch never moves the head
    merged = _ok(run(tmp_path, "--brain", "ours", *ACTOR, "merge", ref, "--reason", "join x", "--plain-http", "--json"))
    assert merged["outcome"] == "merged"
    brain = Brain.open(tmp_path / "ours")
    assert brain.snapshot().parents == (ours, theirs)
    _ok(run(tmp_path, "--brain", "ours", "verify", "--json"))
    published = registry.ref("merge/docs:latest")
    _ok(run(tmp_path, "--brain", "ours", "push", published, "--plain-http", "--json"))
    manifest = json.loads(skopeo_raw_manifest(published))
    assert manifest["config"]["digest"] == str(brain.snapshot_digest())
