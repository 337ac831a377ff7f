"""What a pull leaves behind and what it accepts, against a real registry: subset packs, tags, inflate bounds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import UntrustedArtifactError
from brain.verify import verify_brain
from oci.artifact import verify_artifact
from oci.pack import pack
from oci.pull import open_or_init, pull
from oci.push import push
from tests.oci.layer_helpers import copy_reference
from tests.oci.test_push_pull_registry import client_for, commit_texts
from tests.registry import RegistryServer

pytestmark = pytest.mark.registry


def test_a_subset_pack_pulls_into_a_new_brain_and_verifies(registry: RegistryServer, tmp_path: Path) -> None:
    # The head's last step removed a semantic block; its removal record lives in provenance (§7.7).
    source = Brain.open(copy_reference(tmp_path / "source"))
    packed = pack(source, "p", {MemoryType.CANONICAL, MemoryType.SEMANTIC})
    assert packed.implied == [MemoryType.PROVENANCE]
    client, ref = client_for(registry.host, "subset/brain:p")
    push(source, ref, client=client)
    target, _ = open_or_init(tmp_path / "pulled")
    result = pull(target, ref, client=client)
    assert result.head_moved and result.modules == packed.modules
    report = verify_brain(target, jobs=1)
    assert report.ok, report.problems


def test_a_pulled_artifact_is_tagged_verifiable_and_pushed_again_without_repacking(
    registry: RegistryServer, tmp_path: Path
) -> None:
    source = Brain.init(tmp_path / "source")
    commit_texts(source, "one", "two")
    client, ref = client_for(registry.host, "tagged/brain:v3")
    pushed = push(source, ref, client=client)
    target, _ = open_or_init(tmp_path / "pulled")
    result = pull(target, ref, client=client)
    assert result.recorded and result.tag == "v3"
    assert [(tag, d.digest) for tag, d in target.layout.tags()] == [("v3", pushed.digest)]
    assert verify_artifact(target, "v3") == []
    _, elsewhere = client_for(registry.host, "tagged/copy:v3")
    again = push(target, elsewhere, client=client_for(registry.host, "tagged/copy:v3")[0])
    assert not again.packed and again.digest == pushed.digest

    # Pinned to a digest: an untagged entry; a selective pull stores part of the artifact and names nothing.
    by_digest, _ = open_or_init(tmp_path / "by-digest")
    pinned, pinned_ref = client_for(registry.host, f"tagged/brain@{pushed.digest}")
    assert pull(by_digest, pinned_ref, client=pinned).tag is None
    assert [(d.tag, d.digest) for d in by_digest.layout.index().manifests] == [(None, pushed.digest)]
    selective, _ = open_or_init(tmp_path / "selective")
    with_canonical = Brain.init(tmp_path / "rich")
    commit_texts(with_canonical, "three")
    client2, ref2 = client_for(registry.host, "tagged/partial:v1")
    push(with_canonical, ref2, client=client2)
    assert not pull(selective, ref2, {MemoryType.PROVENANCE}, client=client2).recorded
    assert selective.layout.tags() == []


def test_a_highly_compressible_layer_needs_max_inflate(registry: RegistryServer, tmp_path: Path) -> None:
    source = Brain.init(tmp_path / "source")
    commit_texts(source, "the same line again and again\n" * 400_000)  # 12 MB that gzip shrinks far beyond 100:1
    client, ref = client_for(registry.host, "bomb/brain:v1")
    assert pack(source, "v1").warnings  # the publisher is told
    push(source, ref, client=client)
    target, _ = open_or_init(tmp_path / "pulled")
    with pytest.raises(UntrustedArtifactError, match="decompression bomb") as refused:
        pull(target, ref, client=client)
    assert refused.value.hint is not None and "--max-inflate" in refused.value.hint
    assert target.snapshot_digest() is None
    result = pull(target, ref, client=client, max_inflate=64 << 20)
    assert result.head_moved and verify_brain(target, jobs=1).ok


def test_cli_warns_refuses_with_the_option_named_then_accepts_and_tags(
    registry: RegistryServer, tmp_path: Path
) -> None:
    from tests.oci.test_registry_cli import run

    source = Brain.init(tmp_path / "source")
    commit_texts(source, "again and again\n" * 800_000)
    packed = run(tmp_path, "--brain", "source", "pack", "--tag", "v1")
    assert packed.returncode == 0 and "warning: consumers following the reference inflate bound" in packed.stderr
    ref = registry.ref("cli-bomb/brain:v1")
    assert run(tmp_path, "--brain", "source", "push", ref).returncode == 0
    refused = run(tmp_path, "--brain", "pulled", "pull", ref)
    assert (
        refused.returncode == 6
        and "hint: if you trust the source, pull or fetch again with --max-inflate" in refused.stderr
    )
    pulled = run(tmp_path, "--brain", "pulled", "pull", ref, "--max-inflate", str(64 << 20))
    assert pulled.returncode == 0, pulled.stderr
    assert "tagged v1 in index.json" in pulled.stdout
    assert [t["tag"] for t in json.loads(run(tmp_path, "--brain", "pulled", "tags", "--json").stdout)["tags"]] == ["v1"]
    fetched = run(tmp_path, "--brain", "fetched", "fetch", ref, "--max-inflate", str(64 << 20))
    assert fetched.returncode == 0, fetched.stderr
