"""The registry commands through the real `brain` entry point: push/pull/fetch/inspect/login and exit codes.

Each command is a separate process forked from a pre-warmed `brain` (tests/prewarmed.py): the console
script's entry point, without an interpreter start per command."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
from pathlib import Path

import pytest

from brain.blocks import CanonicalBlock
from brain.brain import Brain
from tests.prewarmed import ModuleBrain
from tests.registry import RegistryServer

pytestmark = pytest.mark.registry
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "NO_COLOR": "1"}
BRAIN = ModuleBrain(ENV, "push", "pull", "fetch", "inspect", "login", "logout", "ingest")


def run(tmp_path: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "DOCKER_CONFIG": str(tmp_path / "docker"), "HOME": str(tmp_path)}
    return BRAIN.server.run(*args, cwd=tmp_path, env=env, stdin=stdin)


def make_brain(path: Path, *texts: str) -> Brain:
    brain = Brain.init(path)
    with brain.writer("tester@example.org") as writer:
        for text in texts:
            data = text.encode()
            writer.add(CanonicalBlock(blob=writer.put_blob(data), media_type="text/plain", size=len(data)))
        writer.commit()
    return brain


def test_push_pull_fetch_inspect_commands(registry: RegistryServer, tmp_path: Path) -> None:
    source = make_brain(tmp_path / "src", "cli one", "cli two")
    ref = registry.ref("cli/brain:v1")
    pushed = run(tmp_path, "--brain", "src", "push", ref, "--json")
    assert pushed.returncode == 0, pushed.stderr
    digest = json.loads(pushed.stdout)["digest"]
    plain = run(tmp_path, "--brain", "src", "push", ref)
    assert plain.returncode == 0 and plain.stdout.strip() == digest
    assert "0 blob(s) uploaded" in plain.stderr

    pulled = run(tmp_path, "--brain", "dest/nested", "pull", ref, "--json")
    assert pulled.returncode == 0, pulled.stderr
    body = json.loads(pulled.stdout)
    assert body["digest"] == digest and body["initialized"] and body["head_moved"]
    assert Brain.open(tmp_path / "dest" / "nested").snapshot_digest() == source.snapshot_digest()

    fetched = run(tmp_path, "--brain", "fetched", "fetch", ref, "--json")
    assert fetched.returncode == 0 and json.loads(fetched.stdout)["head_moved"] is False

    inspected = run(tmp_path, "inspect", ref, "--json")
    assert inspected.returncode == 0, inspected.stderr
    assert json.loads(inspected.stdout)["modules"][0]["block_count"] == 2

    missing = run(tmp_path, "--brain", "x", "pull", registry.ref("cli/brain:nope"))
    assert missing.returncode == 4 and missing.stderr.startswith("error:")
    unknown = run(tmp_path, "--brain", "y", "pull", ref, "--module", "semantic")
    assert unknown.returncode == 4 and "semantic" in unknown.stderr
    bad = run(tmp_path, "--brain", "src", "push", "no-host-here")
    assert bad.returncode == 3

    with source.writer("tester@example.org") as writer:
        writer.add(CanonicalBlock(blob=writer.put_blob(b"later"), media_type="text/plain", size=5))
        writer.commit()
    as_packed = run(tmp_path, "--brain", "src", "push", ref, "--packed")
    assert as_packed.returncode == 0 and as_packed.stdout.strip() == digest
    assert "drop --packed" in as_packed.stderr
    fresh = run(tmp_path, "--brain", "src", "push", ref)
    assert fresh.returncode == 0 and fresh.stdout.strip() != digest
    assert "re-packed tag v1 from the current head" in fresh.stderr
    republished = run(tmp_path, "inspect", ref, "--json")
    assert json.loads(republished.stdout)["digest"] == fresh.stdout.strip()


def test_login_verifies_then_stores_and_never_echoes(auth_registry: RegistryServer, tmp_path: Path) -> None:
    host = auth_registry.host
    wrong = run(
        tmp_path, "login", host, "--username", auth_registry.username, "--password-stdin", stdin="not-the-password\n"
    )
    assert wrong.returncode == 7
    assert "not-the-password" not in wrong.stdout + wrong.stderr
    assert not (tmp_path / "docker" / "config.json").exists()

    good = run(
        tmp_path, "login", host, "-u", auth_registry.username, "--password-stdin", "--json",
        stdin=auth_registry.password + "\n",
    )
    assert good.returncode == 0, good.stderr
    assert auth_registry.password not in good.stdout + good.stderr
    config = tmp_path / "docker" / "config.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert host in json.loads(config.read_text())["auths"]

    make_brain(tmp_path / "src", "behind a password")
    ref = auth_registry.ref("private/brain:v1")
    assert run(tmp_path, "--brain", "src", "push", ref).returncode == 0
    pulled = run(tmp_path, "--brain", "dest", "pull", ref, "--json")
    assert pulled.returncode == 0, pulled.stderr

    config.unlink()
    anonymous = run(tmp_path, "inspect", ref)
    assert anonymous.returncode == 7 and "brain login" in anonymous.stderr


def test_unreachable_registry_and_bad_port_fail_fast_in_one_line(tmp_path: Path) -> None:
    from tests.registry import free_port

    closed = f"127.0.0.1:{free_port()}/team/brain:v1"
    for args in (("--brain", "new", "pull", closed), ("inspect", closed), ("--brain", "new", "fetch", closed)):
        started = time.monotonic()
        done = run(tmp_path, *args)
        # Refused at once, not after the retry schedule; the brain pull would have created is gone again.
        assert time.monotonic() - started < 5, args
        assert done.returncode == 7 and done.stdout == "", done
        assert done.stderr.splitlines()[0] == f"error: registry {closed.split('/')[0]} refused the connection"
        assert not (tmp_path / "new").exists()
    bad_port = run(tmp_path, "--brain", "new", "pull", "127.0.0.1:99999/team/brain:v1")
    assert bad_port.returncode == 3 and "port 99999 is outside 1-65535" in bad_port.stderr


def test_pull_of_a_missing_tag_creates_no_brain(registry: RegistryServer, tmp_path: Path) -> None:
    make_brain(tmp_path / "src", "one")
    assert run(tmp_path, "--brain", "src", "push", registry.ref("cli/gone:v1")).returncode == 0
    missing = run(tmp_path, "--brain", "dest", "pull", registry.ref("cli/gone:v2"))
    assert missing.returncode == 4 and "has no manifest v2" in missing.stderr
    assert not (tmp_path / "dest").exists()


def test_a_refused_push_leaves_no_new_local_tag(registry: RegistryServer, tmp_path: Path) -> None:
    make_brain(tmp_path / "first", "first")
    make_brain(tmp_path / "other", "other")
    ref = registry.ref("cli/refused:v1")
    assert run(tmp_path, "--brain", "first", "push", ref).returncode == 0
    refused = run(tmp_path, "--brain", "other", "push", ref)
    assert refused.returncode == 5 and "diverged" in refused.stderr
    # The push packed tag v1 to compare it; refused, it must not leave that tag behind.
    assert json.loads(run(tmp_path, "--brain", "other", "tags", "--json").stdout)["tags"] == []
    assert run(tmp_path, "--brain", "other", "push", ref, "--force").returncode == 0
    assert [t["tag"] for t in json.loads(run(tmp_path, "--brain", "other", "tags", "--json").stdout)["tags"]] == ["v1"]


def test_pull_into_a_file_or_a_foreign_directory_is_refused_with_the_right_hint(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    (tmp_path / "foreign").mkdir()
    (tmp_path / "foreign" / "notes.txt").write_text("x")
    # Refused before any network request, so no registry is needed.
    as_file = run(tmp_path, "--brain", "afile", "pull", "127.0.0.1:9/team/brain:v1")
    assert as_file.returncode == 2 and as_file.stderr.startswith("error: afile is a file, not a brain directory")
    foreign = run(tmp_path, "--brain", "foreign", "pull", "127.0.0.1:9/team/brain:v1")
    assert foreign.returncode == 2
    assert "hint: pull into a new or empty directory, or into an existing brain" in foreign.stderr
    assert sorted(p.name for p in (tmp_path / "foreign").iterdir()) == ["notes.txt"]


def test_pulling_the_same_artifact_twice_does_not_move_the_head(registry: RegistryServer, tmp_path: Path) -> None:
    make_brain(tmp_path / "src", "twice")
    ref = registry.ref("cli/twice:v1")
    assert run(tmp_path, "--brain", "src", "push", ref).returncode == 0
    first = run(tmp_path, "--brain", "dest", "pull", ref, "--json")
    assert first.returncode == 0 and json.loads(first.stdout)["head_moved"] is True
    head_file = tmp_path / "dest" / "boltzmann" / "head.json"
    before, stamp = head_file.read_bytes(), head_file.stat().st_mtime_ns
    second = run(tmp_path, "--brain", "dest", "pull", ref, "--json")
    body = json.loads(second.stdout)
    assert second.returncode == 0 and body["blobs_fetched"] == 0
    assert body["head_moved"] is False and body["already_head"] is True
    assert head_file.read_bytes() == before and head_file.stat().st_mtime_ns == stamp
    people = run(tmp_path, "--brain", "dest", "pull", ref)
    assert people.returncode == 0 and "(already the head)" in people.stdout


def test_the_ci_loop_pull_ingest_push_asks_no_question_twice(registry: RegistryServer, tmp_path: Path) -> None:
    # Each CI job starts from a pulled brain without `boltzmann/` caches: nothing answered may be asked again.
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Lumen\n\nA shard is a slice of the keyspace.\n\n1. drain the node\n2. restart it\n")
    (corpus / "b.md").write_text("# Ops\n\n2026-03-01 10:00 restarted node 7\n")
    ref = registry.ref("ci/brain:main")
    assert run(tmp_path, "--brain", "first", "init").returncode == 0
    ingest = ["--actor", "ci@example.org", "ingest", str(corpus), "--strict", "--json"]
    made = run(tmp_path, "--brain", "first", *ingest)
    assert made.returncode == 0 and json.loads(made.stdout)["validated"] > 0, made.stderr
    assert run(tmp_path, "--brain", "first", "push", ref).returncode == 0

    assert run(tmp_path, "--brain", "job2", "pull", ref).returncode == 0
    assert not (tmp_path / "job2" / "boltzmann" / "cache").exists()
    again = run(tmp_path, "--brain", "job2", *ingest)
    body = json.loads(again.stdout)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (body["unchanged"], body["proposed"], body["rejected"], body["blocks_added"]) == (2, 0, 0, 0)

    # (A changed definition would be `contradicted` by the old one, demoted or not: §7.6 counts it.)
    (corpus / "a.md").write_text("# Lumen\n\nA shard is a slice of the keyspace.\n\n1. drain the node\n2. upgrade it\n")
    edited = run(tmp_path, "--brain", "job2", *ingest)
    body = json.loads(edited.stdout)
    assert edited.returncode == 0 and (body["replaced"], body["rejected"]) == (1, 0), edited.stdout
    assert run(tmp_path, "--brain", "job2", "push", ref).returncode == 0
    assert run(tmp_path, "--brain", "job3", "pull", ref).returncode == 0
    third = json.loads(run(tmp_path, "--brain", "job3", *ingest).stdout)
    assert (third["proposed"], third["blocks_added"]) == (0, 0)
    assert run(tmp_path, "--brain", "job3", "verify").returncode == 0
