"""push / pull / fetch / inspect against a real registry: round trips, resumption, refusals."""

from __future__ import annotations


import shutil
import subprocess
from pathlib import Path

import pytest

from brain.blocks import Actor, CanonicalBlock, ProvenanceBlock, RegistrationRecord
from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import ConflictError, NotFoundError, RemoteError, UntrustedArtifactError
from brain.identity import OciDigest, utc_timestamp
from brain.verify import verify_brain
from oci.inspect import inspect
from oci.manifest import Manifest
from oci.pull import brain_to_pull_into, open_or_init, pull
from oci.push import push
from oci.reference import parse_reference
from oci.retry import RetryPolicy
from oci.transport import RegistryClient
from tests.shared_paths import REFERENCE_BRAIN
from tests.registry import FaultyProxy, RegistryServer, require_tool, skopeo_raw_manifest

pytestmark = pytest.mark.registry
FAST = RetryPolicy(attempts=3, base_delay=0.01, max_delay=0.02, max_retry_after=0.1)
ACTOR = "tester@example.org"
V2_SNAPSHOT = "sha256:095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"
V2_MANIFEST = "sha256:004f409811fb337ad94948e57b795f8969ae12adb54bfce8979d1269424a0727"


def commit_texts(brain: Brain, *texts: str) -> OciDigest:
    """One commit registering a canonical block (its source bytes and a registration record) per text."""
    with brain.writer(ACTOR) as writer:
        for text in texts:
            data = text.encode()
            block = CanonicalBlock(blob=writer.put_blob(data), media_type="text/plain", size=len(data))
            writer.add(block)
            record = RegistrationRecord(actor=Actor(id=ACTOR, kind="human"), at=utc_timestamp(), block=block.block_id)
            writer.add(ProvenanceBlock(record=record))
        digest = writer.commit()
    assert digest is not None
    return digest


def client_for(host: str, ref: str, calls: list | None = None) -> tuple[RegistryClient, object]:
    reference = parse_reference(f"{host}/{ref}")
    observer = (lambda m, u, s: calls.append((m, u, s))) if calls is not None else None
    return RegistryClient(reference, retry=FAST, observer=observer), reference


def member_ids(brain: Brain) -> dict[str, list[str]]:
    return {str(t): sorted(str(i) for i in m.block_ids) for t, m in brain.modules().items()}


def assert_same_brain(pulled: Brain, original_snapshot: OciDigest, original_members: dict) -> None:
    assert pulled.snapshot_digest() == original_snapshot
    assert member_ids(pulled) == original_members
    for module in pulled.modules().values():
        for block_id in module.block_ids:
            pulled.resolve(block_id)  # re-hashed and decoded
    report = verify_brain(pulled, jobs=1)
    assert report.ok, report.problems


def test_push_pull_round_trip_and_unchanged_repush(registry: RegistryServer, tmp_path: Path) -> None:
    brain = Brain.init(tmp_path / "source")
    commit_texts(brain, "alpha", "beta")
    snapshot = commit_texts(brain, "gamma")
    calls: list = []
    client, ref = client_for(registry.host, "roundtrip/brain:v1", calls)
    result = push(brain, ref, client=client)
    assert result.packed and result.blobs_uploaded == 4 and result.snapshot == snapshot
    assert skopeo_raw_manifest(registry.ref("roundtrip/brain:v1")) == brain.blobs.get(result.digest)

    calls.clear()
    again = push(brain, ref, client=client)
    assert again.digest == result.digest and again.blobs_uploaded == 0 and again.blobs_present == 4
    methods = [m for m, _, _ in calls]
    assert methods == ["GET", "HEAD", "HEAD", "HEAD", "HEAD", "PUT"]  # tag check, existence checks, manifest
    assert "/manifests/" in calls[-1][1]

    target, created = open_or_init(tmp_path / "pulled" / "new")
    assert created
    pulled = pull(target, ref, client=client_for(registry.host, "roundtrip/brain:v1")[0])
    assert pulled.head_moved and pulled.blobs_fetched == 4 and pulled.digest == result.digest
    assert_same_brain(target, snapshot, member_ids(brain))
    head = target.head()
    assert head is not None and head.origin is not None and head.origin.partial is False


def test_diverged_tag_is_refused_unless_forced(registry: RegistryServer, tmp_path: Path) -> None:
    first = Brain.init(tmp_path / "first")
    commit_texts(first, "one")
    other = Brain.init(tmp_path / "other")
    commit_texts(other, "something else entirely")
    client, ref = client_for(registry.host, "diverge/brain:v1")
    pushed = push(first, ref, client=client)
    commit_texts(first, "two")  # a descendant: fast-forward is fine once repacked
    shutil.rmtree(first.path / "boltzmann" / "layers", ignore_errors=True)
    first.layout.remove_tag("v1")
    forward = push(first, ref, client=client)
    assert forward.replaced == pushed.digest and not forward.forced
    with pytest.raises(ConflictError, match="diverged"):
        push(other, ref, client=client)
    assert client.get_manifest("v1").digest == forward.digest
    forced = push(other, ref, force=True, client=client)
    assert forced.forced and client.get_manifest("v1").digest == forced.digest


def test_a_tag_holding_an_image_index_is_not_overwritten_without_force(
    registry: RegistryServer, tmp_path: Path
) -> None:
    import requests

    index = b'{"manifests":[],"mediaType":"application/vnd.oci.image.index.v1+json","schemaVersion":2}'
    put = requests.put(
        f"http://{registry.host}/v2/multiarch/app/manifests/latest", data=index,
        headers={"Content-Type": "application/vnd.oci.image.index.v1+json"}, timeout=10,
    )
    assert put.status_code == 201
    brain = Brain.init(tmp_path / "b")
    commit_texts(brain, "not an app image")
    client, ref = client_for(registry.host, "multiarch/app:latest")
    # The registry answers 404 to a client that does not accept indexes: the tag once looked free.
    with pytest.raises(ConflictError, match="not a Boltzmann brain"):
        push(brain, ref, client=client)
    assert client.get_manifest("latest").data == index
    with pytest.raises(UntrustedArtifactError, match="not a Boltzmann brain"):
        pull(Brain.init(tmp_path / "target"), ref, client=client)
    assert push(brain, ref, force=True, client=client).forced


def test_error_while_checking_remote_refuses(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    brain = Brain.init(tmp_path / "b")
    commit_texts(brain, "x")
    faulty_proxy.hook = lambda method, path: (500, {}, b"oops") if "/manifests/" in path else None
    client, ref = client_for(faulty_proxy.host, "checkfail/brain:v1")
    with pytest.raises(RemoteError, match="500"):
        push(brain, ref, client=client)
    assert not any(m in ("PUT", "POST") for m, _ in faulty_proxy.requests_seen)


def test_corrupt_registry_is_refused_with_head_unmoved(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    source = Brain.init(tmp_path / "source")
    commit_texts(source, "payload one", "payload two")
    client, ref = client_for(registry.host, "corrupt/brain:v1")
    pushed = push(source, ref, client=client)
    target = Brain.init(tmp_path / "target")
    before = commit_texts(target, "local work")
    manifest = source.blobs.get(pushed.digest)
    layer = next(line for line in manifest.split(b'"digest":"')[1:] if b"module.canonical" in line.split(b"}")[0])
    layer_digest = layer.split(b'"')[0].decode()

    def corrupt(method: str, path: str):
        if method == "GET" and path.endswith(layer_digest):
            return lambda body: body[:10] + bytes([body[10] ^ 0xFF]) + body[11:]
        return None

    faulty_proxy.hook = corrupt
    proxied, proxied_ref = client_for(faulty_proxy.host, "corrupt/brain:v1")
    with pytest.raises(UntrustedArtifactError):
        pull(target, proxied_ref, client=proxied, force=True)
    assert target.snapshot_digest() == before
    assert not target.blobs.has(OciDigest.parse(layer_digest))


def test_interrupted_pull_resumes_without_refetching(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    source = Brain.init(tmp_path / "source")
    commit_texts(source, "resume a", "resume b")
    client, ref = client_for(registry.host, "resume/brain:v1")
    push(source, ref, client=client)
    # Config and history come first, then the module layers: make the last module layer (provenance) fail
    # so the first pull stops after the others.
    tagged = next(iter(source.layout.tags()))[1]
    last_module = str(Manifest.decode(source.blobs.get(tagged.digest)).layers[-2].digest)
    faulty_proxy.hook = lambda method, path: (503, {"Retry-After": "0"}, b"") if path.endswith(last_module) else None
    target = Brain.init(tmp_path / "target")
    proxied, proxied_ref = client_for(faulty_proxy.host, "resume/brain:v1")
    with pytest.raises(RemoteError):
        pull(target, proxied_ref, client=proxied)
    assert target.snapshot_digest() is None
    calls: list = []
    direct, _ = client_for(registry.host, "resume/brain:v1", calls)
    result = pull(target, ref, client=direct)
    assert result.blobs_fetched == 1 and result.blobs_reused == 3
    assert [u.rsplit("/", 1)[1] for m, u, _ in calls if m == "GET" and "/blobs/" in u] == [last_module]


def test_selective_pull_and_unknown_module(registry: RegistryServer, tmp_path: Path) -> None:
    source = Brain.init(tmp_path / "source")
    commit_texts(source, "only canonical here")
    client, ref = client_for(registry.host, "select/brain:v1")
    push(source, ref, client=client)
    target = Brain.init(tmp_path / "target")
    with pytest.raises(NotFoundError, match="semantic"):
        pull(target, ref, {MemoryType.SEMANTIC}, client=client)
    assert target.snapshot_digest() is None
    result = pull(target, ref, {MemoryType.CANONICAL}, client=client)
    assert result.modules == [MemoryType.CANONICAL, MemoryType.PROVENANCE] and result.head_moved


def test_fetch_does_not_move_head_and_inspect_reads_manifest_only(registry: RegistryServer, tmp_path: Path) -> None:
    source = Brain.init(tmp_path / "source")
    commit_texts(source, "f1")
    snapshot = commit_texts(source, "f2", "f3")
    calls: list = []
    client, ref = client_for(registry.host, "fetch/brain:v1", calls)
    pushed = push(source, ref, client=client)
    calls.clear()
    described = inspect(ref, client=client)
    # The manifest and the config, then the signature lookup (Referrers API, then the sha256-<hex> fallback tag).
    assert [m for m, _, _ in calls] == ["GET", "GET", "GET", "GET"]
    assert "/referrers/" in calls[2][1] and "/manifests/sha256-" in calls[3][1]
    assert described.digest == pushed.digest and described.snapshot == snapshot and described.history_length == 2
    assert [(m.memory_type, m.block_count) for m in described.modules] == [
        (MemoryType.CANONICAL, 3), (MemoryType.PROVENANCE, 3),
    ]
    # The annotation is JSON text on the wire; --json consumers get it as an object, not a string in a string.
    assert described.schema_versions == {"canonical": [1], "provenance": [1]}
    target = Brain.init(tmp_path / "target")
    result = pull(target, ref, fetch_only=True, client=client)
    assert not result.head_moved and target.snapshot_digest() is None
    assert target.blobs.has(snapshot)


@pytest.fixture(scope="module")
def reference_on_registry(registry: RegistryServer, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The reference fixture's v1 and v2 copied to the registry by skopeo (digests preserved)."""
    skopeo = require_tool("skopeo")
    copy = tmp_path_factory.mktemp("fixture") / "reference-brain"
    shutil.copytree(REFERENCE_BRAIN, copy)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)  # shared/ may be read-only; skopeo and cleanup need write bits
    for tag in ("v1", "v2"):
        done = subprocess.run(
            [skopeo, "copy", "--preserve-digests", "--dest-tls-verify=false",
             f"oci:{copy}:{tag}", f"docker://{registry.host}/ref:{tag}"],
            capture_output=True, timeout=120, check=False,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
    return registry.host


def test_reference_fixture_pulls_v1_then_v2(reference_on_registry: str, tmp_path: Path) -> None:
    host = reference_on_registry
    assert OciDigest.of(skopeo_raw_manifest(f"{host}/ref:v2")) == OciDigest.parse(V2_MANIFEST)
    target, _ = open_or_init(tmp_path / "pulled")
    first = pull(target, parse_reference(f"{host}/ref:v1"))
    calls: list = []
    client, ref = client_for(host, "ref:v2", calls)
    second = pull(target, ref, client=client)
    assert str(second.digest) == V2_MANIFEST and str(target.snapshot_digest()) == V2_SNAPSHOT
    assert second.blobs_reused >= 1 and first.head_moved and second.head_moved
    assert (
        sum(1 for m, u, _ in calls if "/manifests/" in u and "/manifests/sha256-" not in u) == 1
    )  # one manifest request plans the pull
    reference = Brain.open(REFERENCE_BRAIN)
    assert_same_brain(target, reference.snapshot_digest(), member_ids(reference))
    assert len(target.history()) == 10


def test_pulling_an_ancestor_is_refused_as_a_step_back(reference_on_registry: str, tmp_path: Path) -> None:
    target, _ = open_or_init(tmp_path / "ahead")
    pull(target, parse_reference(f"{reference_on_registry}/ref:v2"))
    with pytest.raises(ConflictError, match="is an ancestor of the local head .* would move the head back"):
        pull(target, parse_reference(f"{reference_on_registry}/ref:v1"))
    assert str(target.snapshot_digest()) == V2_SNAPSHOT
    rolled = pull(target, parse_reference(f"{reference_on_registry}/ref:v1"), force=True)
    assert rolled.head_moved and target.snapshot_digest() == rolled.snapshot


def test_reference_fixture_selective_canonical(reference_on_registry: str, tmp_path: Path) -> None:
    target, _ = open_or_init(tmp_path / "partial")
    result = pull(target, parse_reference(f"{reference_on_registry}/ref:v2"), {MemoryType.CANONICAL})
    assert result.modules == [MemoryType.CANONICAL, MemoryType.PROVENANCE]
    assert set(result.left_out) == {MemoryType.EPISODIC, MemoryType.SEMANTIC, MemoryType.PROCEDURAL}
    head = target.head()
    assert head is not None and head.origin is not None and head.origin.partial


def test_reference_fixture_selective_semantic_installs_exactly_semantic_and_provenance(
    reference_on_registry: str, tmp_path: Path
) -> None:
    target, _ = open_or_init(tmp_path / "semantic")
    result = pull(target, parse_reference(f"{reference_on_registry}/ref:v2"), {MemoryType.SEMANTIC})
    # §6.8: exactly what was asked for, plus the ledger that explains it; canonical stays out.
    assert result.modules == [MemoryType.SEMANTIC, MemoryType.PROVENANCE]
    assert set(result.left_out) == {MemoryType.CANONICAL, MemoryType.EPISODIC, MemoryType.PROCEDURAL}
    assert str(result.snapshot) == V2_SNAPSHOT and result.head != result.snapshot
    snapshot = target.snapshot()
    assert snapshot is not None and sorted(snapshot.modules) == ["provenance", "semantic"]
    published = target.snapshot(OciDigest.parse(V2_SNAPSHOT))
    assert published is not None and snapshot.parent == published.digest
    assert {k: v for k, v in snapshot.modules.items()} == {k: published.modules[k] for k in snapshot.modules}
    assert snapshot.labels == published.labels and snapshot.trust_root == published.trust_root
    head = target.head()
    assert head is not None and head.origin is not None and head.origin.partial
    assert str(head.origin.snapshot) == V2_SNAPSHOT and head.snapshot == result.head
    stored = {p.name for p in target.blobs.directory.iterdir()}
    assert not any(b.hex in stored for b in published_module_ids(target, published, "canonical"))
    assert verify_brain(target, jobs=1).ok
    # Pulling the same again changes nothing; pulling it whole moves on from the partial head.
    again = pull(target, parse_reference(f"{reference_on_registry}/ref:v2"), {MemoryType.SEMANTIC})
    assert again.already_head and target.snapshot_digest() == result.head
    whole = pull(target, parse_reference(f"{reference_on_registry}/ref:v2"))
    assert whole.head_moved and str(target.snapshot_digest()) == V2_SNAPSHOT
    head = target.head()
    assert head is not None and head.origin is not None and not head.origin.partial


def published_module_ids(brain: Brain, snapshot, name: str) -> list:  # type: ignore[no-untyped-def]
    from brain.composition import Composition

    ref = snapshot.modules[name]
    return list(Composition.decode(brain.blobs.get(ref.composition), ref.composition).block_ids)


def test_a_failed_pull_leaves_no_new_brain_behind(registry: RegistryServer, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for path in (tmp_path / "new" / "brain", empty):
        with pytest.raises(NotFoundError), brain_to_pull_into(path) as (target, created):
            assert created
            pull(target, parse_reference(registry.ref("nothing/here:v1")))
    assert not (tmp_path / "new" / "brain").exists() and list(empty.iterdir()) == []
    existing = Brain.init(tmp_path / "existing")
    with pytest.raises(NotFoundError), brain_to_pull_into(existing.path) as (target, created):
        assert not created
        pull(target, parse_reference(registry.ref("nothing/here:v1")))
    assert Brain.open(existing.path).head() is None


def test_interrupted_push_resends_nothing_complete(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    brain = Brain.init(tmp_path / "b")
    commit_texts(brain, "push resume one", "push resume two")
    uploads = {"count": 0}

    def fail_after_two_uploads(method: str, path: str):
        if method == "POST" and "/blobs/uploads/" in path:
            uploads["count"] += 1
            if uploads["count"] > 2:
                return 500, {}, b"disk full"
        return None

    faulty_proxy.hook = fail_after_two_uploads
    proxied, proxied_ref = client_for(faulty_proxy.host, "pushresume/brain:v1")
    with pytest.raises(RemoteError):
        push(brain, proxied_ref, client=proxied)
    calls: list = []
    client, ref = client_for(registry.host, "pushresume/brain:v1", calls)
    result = push(brain, ref, client=client)
    assert result.blobs_present == 2 and result.blobs_uploaded == 2
    assert sum(1 for m, _, _ in calls if m == "POST") == 2


def test_push_repacks_a_lagging_subset_tag_with_the_same_modules(registry: RegistryServer, tmp_path: Path) -> None:
    from oci.manifest import Manifest
    from oci.pack import pack

    from brain.blocks import EpisodicBlock

    brain = Brain.init(tmp_path / "src")
    commit_texts(brain, "first")
    with brain.writer(ACTOR) as writer:
        writer.add(EpisodicBlock(summary="an event outside the subset", occurred_at="2026-01-01T00:00:00Z"))
        writer.commit()
    packed = pack(brain, "sub", {MemoryType.CANONICAL})
    head = commit_texts(brain, "second")
    result = push(brain, parse_reference(registry.ref("repack/brain:sub")))
    assert result.repacked_from is not None and result.snapshot == head and result.digest != packed.digest
    manifest = Manifest.decode(brain.blobs.get(result.digest), what="pushed")
    assert manifest.config.mediaType.endswith("projection.v1+json")
    assert [layer.annotations.get("ai.gaussia.boltzmann.memory-type") for layer in manifest.layers[:-1]] == [
        "canonical",
        "provenance",
    ]


@pytest.mark.parametrize(
    ("spelling", "name"),
    [("LOCALHOST:{port}", "spelled/upper"), ("localhost:{port}", "spelled/lower"), ("127.0.0.1:{port}", "spelled/ip"),
     ("LocalHost:{port}", "spelled/mixed")],
)
def test_origin_records_the_canonical_spelling_of_the_reference(
    registry: RegistryServer, tmp_path: Path, spelling: str, name: str
) -> None:
    source = Brain.init(tmp_path / "source")
    snapshot = commit_texts(source, f"alpha {spelling}")
    client, ref = client_for(registry.host, f"{name}:v1")
    push(source, ref, client=client)
    port = registry.host.rsplit(":", 1)[1]
    target, _ = open_or_init(tmp_path / "pulled")
    spelled = parse_reference(f"{spelling.format(port=port)}/{name}:v1")
    pull(target, spelled, client=RegistryClient(spelled, retry=FAST))
    head = target.head()
    assert head is not None and head.origin is not None and head.snapshot == snapshot
    assert head.origin.reference == f"127.0.0.1:{port}/{name}:v1"
    # The pin records the repository alone, in the same spelling, whatever the user typed.
    from brain.trust_ops import _repository

    assert _repository(head.origin.reference) == f"127.0.0.1:{port}/{name}"
