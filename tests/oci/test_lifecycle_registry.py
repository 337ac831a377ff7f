"""The CI loop through a real registry: ingest, push, delete a file, `ingest --sync`, `diff` against the pushed
tag (a registry REF), push, pull into a fresh brain, verify — checked with skopeo too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.brain import Brain
from tests.oci.test_registry_cli import run
from tests.registry import RegistryServer, require_tool, skopeo_raw_manifest

pytestmark = pytest.mark.registry
DOCS = sorted(p for p in Path("/usr/share/doc").glob("*/README*") if p.is_file() and p.stat().st_size > 200)[:10]


def _ok(done) -> dict:
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout) if done.stdout.lstrip().startswith("{") else {}


def test_ci_loop_follows_the_folder_through_the_registry(registry: RegistryServer, tmp_path: Path) -> None:
    require_tool("skopeo")
    docs = tmp_path / "docs"
    docs.mkdir()
    for i, source in enumerate(DOCS):
        shutil.copyfile(source, docs / f"{i:02d}-{source.name}")
    ref = registry.ref("lifecycle/docs:main")
    _ok(run(tmp_path, "--brain", "brain", "init"))
    first = _ok(run(tmp_path, "--brain", "brain", "--actor", "ci@example.org", "ingest", "docs", "--json"))
    _ok(run(tmp_path, "--brain", "brain", "push", ref, "--json"))
    gone = next(o for o in first["outcomes"] if o["validated"] > 0)
    (docs / gone["relpath"]).unlink()

    synced = _ok(run(tmp_path, "--brain", "brain", "--actor", "ci@example.org", "ingest", "docs", "--sync", "--json"))
    assert [(m["origin"], m["action"]) for m in synced["missing"]] == [(gone["origin"], "dropped")]

    differ = run(tmp_path, "--brain", "brain", "diff", ref, "HEAD", "--exit-code", "--json")
    assert differ.returncode == 1, differ.stderr
    report = json.loads(differ.stdout)
    removed = report["modules"]["canonical"]["removed"]
    assert [(r["block"], r["origin"], r["mechanism"]) for r in removed] == [(gone["block"], gone["origin"], "drop")]
    assert report["counts"]["removed"] == 1 + gone["validated"]
    markdown = run(tmp_path, "--brain", "brain", "diff", ref, "--format", "markdown")
    assert markdown.returncode == 0 and "| canonical | removed |" in markdown.stdout

    # A fresh brain that never saw the compositions diffs against the registry too (history layer).
    _ok(run(tmp_path, "--brain", "other", "init"))
    remote = run(tmp_path, "--brain", "other", "diff", ref, ref, "--exit-code", "--json")
    assert remote.returncode == 0 and json.loads(remote.stdout)["differ"] is False, remote.stderr
    assert not list((tmp_path / "other" / "blobs" / "sha256").iterdir())  # nothing adopted

    pushed = _ok(run(tmp_path, "--brain", "brain", "push", ref, "--json"))
    assert skopeo_raw_manifest(ref) == Brain.open(tmp_path / "brain").blobs.get(pushed_digest(pushed))
    _ok(run(tmp_path, "--brain", "fresh", "pull", ref, "--json"))
    _ok(run(tmp_path, "--brain", "fresh", "verify"))
    fresh = Brain.open(tmp_path / "fresh")
    assert fresh.snapshot_digest() == Brain.open(tmp_path / "brain").snapshot_digest()
    assert gone["block"] not in {str(b) for b in fresh.module(MemoryType.CANONICAL).block_ids}
    same = run(tmp_path, "--brain", "fresh", "diff", ref, "HEAD", "--exit-code")
    assert same.returncode == 0, same.stdout + same.stderr


def pushed_digest(result: dict):
    from brain.identity import OciDigest

    return OciDigest.parse(result["digest"])


def test_after_a_redaction_push_names_remote_tags_holding_the_bytes_and_pull_never_restores_them(
    registry: RegistryServer, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    secret = docs / "secret.md"
    secret.write_text("# Vault\n\nThe vault passphrase is walrus-orchid-ledger.\n\nA vault is a strong room.\n")
    shutil.copyfile(DOCS[0], docs / "other.txt")
    _ok(run(tmp_path, "--brain", "brain", "init"))
    first = _ok(run(tmp_path, "--brain", "brain", "--actor", "ci@example.org", "ingest", "docs", "--json"))
    block = next(o["block"] for o in first["outcomes"] if o["relpath"] == "secret.md")
    old = registry.ref("lifecycle/secret:old")
    _ok(run(tmp_path, "--brain", "brain", "push", old))
    _ok(run(tmp_path, "--brain", "brain", "--actor", "ci@example.org", "redact", block, "--reason", "leak", "--yes"))
    new = registry.ref("lifecycle/secret:new")
    pushed = run(tmp_path, "--brain", "brain", "push", new)
    assert pushed.returncode == 0, pushed.stderr
    assert "lifecycle/secret:old@sha256:" in pushed.stderr and "still holds redacted bytes" in pushed.stderr
    assert "skopeo delete --tls-verify=false docker://" in pushed.stderr  # the command that deletes it (issue 24)
    envelope = tmp_path / "brain" / "blobs" / "sha256" / block.removeprefix("sha256:")
    # Pulling the old artifact (which still holds the bytes) never writes them back.
    head = (tmp_path / "brain" / "boltzmann" / "head.json").read_bytes()
    refused = run(tmp_path, "--brain", "brain", "pull", old, "--force")
    assert refused.returncode == 5 and "redacted in this brain" in refused.stderr, refused.stderr
    assert (tmp_path / "brain" / "boltzmann" / "head.json").read_bytes() == head
    assert not envelope.exists()
    blobs = tmp_path / "brain" / "blobs" / "sha256"
    assert not any(b"walrus-orchid-ledger" in p.read_bytes() for p in blobs.iterdir() if p.is_file())
    _ok(run(tmp_path, "--brain", "brain", "verify"))
    # A fresh brain pulling the new tag gets the tombstone, never the bytes.
    _ok(run(tmp_path, "--brain", "fresh", "pull", new))
    _ok(run(tmp_path, "--brain", "fresh", "verify"))
    fresh = tmp_path / "fresh" / "blobs" / "sha256"
    assert not (fresh / block.removeprefix("sha256:")).exists()
