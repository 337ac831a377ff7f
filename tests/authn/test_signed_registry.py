"""Signed brains through registries: the real one (distribution 2.8: the fallback index) and a loopback one
with the Referrers API; pulls that refuse what is not authorized (§9.8, §9.10)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from brain.authenticity import sign_snapshot
from brain.authn.records import SignatureRecord
from brain.brain import Brain
from brain.errors import UntrustedArtifactError
from brain.identity import OciDigest, canonicalize
from oci.pull import pull
from oci.reference import parse_reference
from oci.signature_manifests import fallback_tag
from oci.retry import RetryPolicy
from oci.transport import RegistryClient
from signers import open_signer
from tests.authn.keys import write_key
from tests.authn.referrers_registry import LoopbackRegistry
from tests.cli.conftest import BrainRunner, assert_one_line_error
from tests.registry import RegistryServer, require_tool

pytestmark = pytest.mark.registry
ACTOR = "publisher@example.org"
FAST = RetryPolicy(attempts=2, base_delay=0.01, max_delay=0.02)


@pytest.fixture
def loopback() -> Iterator[LoopbackRegistry]:
    server = LoopbackRegistry().start()
    yield server
    server.stop()


def _publish(tmp_path: Path, brain: BrainRunner, ref: str, *texts: str) -> tuple[Path, Path]:
    """A governed brain signed by one key, ingested and pushed to `ref`; (brain dir, key)."""
    key = write_key(tmp_path, "publisher")
    source = tmp_path / "source"
    assert brain("--brain", str(source), "init", "--trust-key", f"{key}.pub@{ACTOR}", "--sign-with", str(key)).code == 0
    _ingest(tmp_path, brain, source, key, *texts)
    done = brain("--brain", str(source), "push", ref, "--json")
    assert done.code == 0, done
    return source, key


def _ingest(tmp_path: Path, brain: BrainRunner, source: Path, key: Path | None, *texts: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir(exist_ok=True)
    for i, text in enumerate(texts):
        (docs / f"{abs(hash(text))}-{i}.txt").write_text(text)
    args = ["--brain", str(source), "--actor", ACTOR, "ingest", str(docs)] + (["--sign-with", str(key)] if key else [])
    done = brain(*args)
    assert done.code == 0, done


def _client(host: str, name: str, calls: list | None = None) -> tuple[RegistryClient, object]:
    reference = parse_reference(f"{host}/{name}")
    observer = (lambda m, u, s: calls.append((m, u, s))) if calls is not None else None
    return RegistryClient(reference, retry=FAST, observer=observer), reference


def test_ci_loop_through_the_real_registry(registry: RegistryServer, tmp_path: Path, brain: BrainRunner) -> None:
    ref = registry.ref("signed/loop:v1")
    source, key = _publish(tmp_path, brain, ref, "Fourier series decompose periodic signals.\n")
    head = Brain.open(source).snapshot_digest()
    # No Referrers API: the signatures went to the sha256-<hex> fallback index, read back by skopeo.
    manifest = json.loads(subprocess.run(
        [require_tool("skopeo"), "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
        capture_output=True, check=True, timeout=60).stdout)
    digest = OciDigest.of(subprocess.run(
        [require_tool("skopeo"), "inspect", "--raw", "--tls-verify=false", f"docker://{ref}"],
        capture_output=True, check=True, timeout=60).stdout)
    assert manifest["annotations"]["ai.gaussia.boltzmann.protocol-version"] == "2"
    fallback = json.loads(subprocess.run(
        [
            require_tool("skopeo"), "inspect", "--raw", "--tls-verify=false",
            f"docker://{registry.ref('signed/loop:' + fallback_tag(digest))}",
        ],
        capture_output=True, check=True, timeout=60).stdout)
    snapshots = sorted(e["annotations"]["ai.gaussia.boltzmann.signature-snapshot"] for e in fallback["manifests"])
    assert len(snapshots) == 2 and str(head) in snapshots  # the head and the genesis travel
    inspected = brain("inspect", ref, "--json").json()
    assert inspected["trust_root"] and sorted(s["over_config"] for s in inspected["signatures"]) == [False, True]
    assert [s["signature_ok"] for s in inspected["signatures"] if s["over_config"]] == [True]
    # fetch merges the records without moving the head.
    fetched = tmp_path / "fetched"
    assert brain("--brain", str(fetched), "init").code == 0
    done = brain("--brain", str(fetched), "fetch", ref, "--json")
    assert done.code == 0 and Brain.open(fetched).snapshot_digest() is None, done
    assert str(head) in json.loads((fetched / "boltzmann" / "signatures.json").read_text())["entries"]
    consumer = tmp_path / "consumer"
    done = brain("--brain", str(consumer), "pull", ref, "--json")
    assert done.code == 0, done
    assert done.json()["authenticity"]["state"] == "authorized" and done.json()["authenticity"]["remembered"]
    verify = brain("--brain", str(consumer), "verify", "--json")
    assert verify.code == 0 and verify.json()["authenticity"]["state"] == "authorized"
    assert json.loads((consumer / "boltzmann" / "remotes.json").read_text())["seen_signed"] == {
        f"{registry.host}/signed/loop": str(head)}

    # A rotation with quorum 2: admit a second govern key (quorum 1 signs it), then one more key by plan,
    # countersigned by both, applied, pushed and pulled.
    second = write_key(tmp_path, "second")
    done = brain(
        "--brain", str(source), "trust", "rotate", "--add", f"{second}.pub@second@example.org", "--quorum", "2",
        "--sign-with", str(key),
    )
    assert done.code == 0, done
    third = write_key(tmp_path, "third")
    plan = tmp_path / "plan.json"
    assert (
        brain("--brain", str(source), "trust", "rotate", "--add", f"{third}.pub=commit", "--plan", str(plan)).code == 0
    )
    for name, signer in (("r1", key), ("r2", second)):
        assert brain(
            "--brain", str(source), "sign", "--document", str(plan), "--sign-with", str(signer), "-o",
            str(tmp_path / name)
        ).code == 0
    done = brain("--brain", str(source), "trust", "rotate", "--apply", str(plan), "--record", str(tmp_path / "r1"),
                 "--record", str(tmp_path / "r2"))
    assert done.code == 0, done
    assert brain("--brain", str(source), "push", ref).code == 0
    done = brain("--brain", str(consumer), "pull", ref, "--json")
    assert done.code == 0, done
    assert done.json()["authenticity"]["state"] == "authorized"
    verify = brain("--brain", str(consumer), "verify", "--json").json()["authenticity"]
    assert (verify["role"], verify["quorum_met"], verify["quorum_required"]) == ("revision", 2, 2)


def test_a_head_re_signed_with_a_throwaway_key_is_refused_before_module_layers(
    registry: RegistryServer, tmp_path: Path, brain: BrainRunner
) -> None:
    ref = registry.ref("signed/throwaway:v1")
    source, _key = _publish(tmp_path, brain, ref, "first release\n")
    consumer = tmp_path / "consumer"
    assert brain("--brain", str(consumer), "pull", ref).code == 0
    before = Brain.open(consumer).snapshot_digest()
    # The attacker ingests more and signs with a key of their own, then pushes over the tag.
    _ingest(tmp_path, brain, source, None, "planted text\n")
    throwaway = write_key(tmp_path, "throwaway")
    sign_snapshot(Brain.open(source), open_signer(str(throwaway), lambda p: None), check_scopes=False)
    assert brain("--brain", str(source), "push", ref).code == 0
    calls: list = []
    client, reference = _client(registry.host, "signed/throwaway:v1", calls)
    target = Brain.open(consumer)
    with pytest.raises(UntrustedArtifactError, match="unauthorized_key"):
        pull(target, reference, client=client)  # type: ignore[arg-type]
    assert target.snapshot_digest() == before
    manifest = json.loads(client.get_manifest("v1").data)
    modules = {layer["digest"] for layer in manifest["layers"][:-1]}
    fetched = {u.rsplit("/", 1)[1] for m, u, _ in calls if m == "GET" and "/blobs/" in u}
    assert not fetched & modules  # refused from config, history and records alone
    done = brain("--brain", str(consumer), "pull", ref)
    assert_one_line_error(done, 6)
    assert "--allow-unauthorized" in done.stderr
    # The explicit escape installs it and says so.
    done = brain("--brain", str(consumer), "pull", ref, "--allow-unauthorized")
    assert done.code == 0 and "--allow-unauthorized: installing although" in done.stderr


def test_unsigned_heads_policy(registry: RegistryServer, tmp_path: Path, brain: BrainRunner) -> None:
    ref = registry.ref("signed/stripped:v1")
    source, _key = _publish(tmp_path, brain, ref, "signed release\n")
    consumer = tmp_path / "consumer"
    assert brain("--brain", str(consumer), "pull", ref).code == 0
    _ingest(tmp_path, brain, source, None, "an unsigned follow-up\n")
    assert brain("--brain", str(source), "push", ref).code == 0
    before = Brain.open(consumer).snapshot_digest()
    done = brain("--brain", str(consumer), "pull", ref)
    assert_one_line_error(done, 6)
    assert "pulled signed before" in done.stderr and Brain.open(consumer).snapshot_digest() == before
    # A consumer that never saw it signed installs it with a warning, unless it requires signatures.
    fresh = tmp_path / "fresh"
    done = brain("--brain", str(fresh), "pull", ref)
    assert done.code == 0 and "installing an unsigned head" in done.stderr
    strict = tmp_path / "strict"
    done = brain("--brain", str(strict), "pull", ref, "--require-signed")
    assert_one_line_error(done, 6)
    assert not strict.exists()


def test_a_pinned_consumer_refuses_another_trust_root(
    registry: RegistryServer, tmp_path: Path, brain: BrainRunner
) -> None:
    ref = registry.ref("signed/pinned:v1")
    _publish(tmp_path, brain, ref, "pinned release\n")
    consumer = tmp_path / "consumer"
    assert brain("--brain", str(consumer), "pull", ref).code == 0
    assert brain("--brain", str(consumer), "trust", "pin", "sha256:" + "cd" * 32).code == 0
    other = tmp_path / "other"
    other.mkdir()
    _publish(other, brain, registry.ref("signed/pinned:v2"), "a different brain entirely\n")
    done = brain("--brain", str(consumer), "pull", registry.ref("signed/pinned:v2"), "--force")
    assert_one_line_error(done, 6)
    assert "trust_root_mismatch" in done.stderr or "does not descend" in done.stderr


def test_the_referrers_api_path(loopback: LoopbackRegistry, tmp_path: Path, brain: BrainRunner) -> None:
    ref = f"{loopback.host}/api/brain:v1"
    source, _ = _publish(tmp_path, brain, ref, "through the referrers API\n")
    assert not any(t.startswith("sha256-") for t in loopback.tags)  # OCI-Subject answered: no fallback index
    consumer = tmp_path / "consumer"
    done = brain("--brain", str(consumer), "pull", ref, "--json")
    assert done.code == 0 and done.json()["authenticity"]["state"] == "authorized", done
    queries = [p for m, p in loopback.requests if "/referrers/" in p]
    assert queries and all("artifactType=application%2Fvnd.gaussia.boltzmann.signature.v1%2Bjson" in q for q in queries)
    assert Brain.open(consumer).snapshot_digest() == Brain.open(source).snapshot_digest()


def _subject(loopback: LoopbackRegistry) -> str:
    return loopback.tags["v1"]


def test_hostile_referrers(loopback: LoopbackRegistry, tmp_path: Path, brain: BrainRunner) -> None:
    loopback.referrers_api = False
    ref = f"{loopback.host}/hostile/brain:v1"
    _publish(tmp_path, brain, ref, "hostile registry\n")
    subject = OciDigest.parse(_subject(loopback))
    tag = fallback_tag(subject)
    genuine = loopback.tags[tag]
    # A fallback index that is not JSON: one line, exit 6, nothing written.
    loopback.manifests[OciDigest.of(b"not json").__str__()] = (b"not json", "application/vnd.oci.image.index.v1+json")
    loopback.tags[tag] = str(OciDigest.of(b"not json"))
    consumer = tmp_path / "consumer"
    done = brain("--brain", str(consumer), "pull", ref)
    assert_one_line_error(done, 6)
    assert "not a JSON image index" in done.stderr and not consumer.exists()
    # A referrer whose subject is another manifest, and a record announcing 10 MB: skipped, said why.
    index = json.loads(loopback.manifests[genuine][0])
    real = index["manifests"][0]
    document = json.loads(loopback.manifests[real["digest"]][0])
    other_subject = dict(document, subject={**document["subject"], "digest": "sha256:" + "0" * 64})
    big = dict(document, layers=[{**document["layers"][0], "size": 10 << 20}])
    extra = []
    for variant in (other_subject, big):
        data = canonicalize(variant)
        loopback.manifests[str(OciDigest.of(data))] = (data, "application/vnd.oci.image.manifest.v1+json")
        extra.append({**real, "digest": str(OciDigest.of(data)), "size": len(data)})
    forged = canonicalize({**index, "manifests": [*extra, *index["manifests"]]})
    loopback.manifests[str(OciDigest.of(forged))] = (forged, "application/vnd.oci.image.index.v1+json")
    loopback.tags[tag] = str(OciDigest.of(forged))
    done = brain("--brain", str(consumer), "pull", ref, "--json")
    assert done.code == 0, done
    warnings = done.json()["authenticity"]["warnings"]
    assert any("not the pulled manifest" in w for w in warnings) and any("10485760 bytes" in w for w in warnings)
    assert done.json()["authenticity"]["state"] == "authorized"


@pytest.mark.parametrize("count", [600, 10_000])
def test_many_records_over_one_snapshot(
    loopback: LoopbackRegistry, tmp_path: Path, brain: BrainRunner, count: int
) -> None:
    loopback.referrers_api = False
    ref = f"{loopback.host}/many/brain:v1"
    source, _key = _publish(tmp_path, brain, ref, "many signatures\n")
    subject = OciDigest.parse(_subject(loopback))
    tag = fallback_tag(subject)
    index = json.loads(loopback.manifests[loopback.tags[tag]][0])
    head = next(e for e in index["manifests"]
            if e["annotations"]["ai.gaussia.boltzmann.signature-snapshot"] == str(Brain.open(source).snapshot_digest()))
    template = json.loads(loopback.manifests[head["digest"]][0])
    record = SignatureRecord.decode(loopback.blobs[template["layers"][0]["digest"]])
    entries = list(index["manifests"])
    for n in range(count):
        # The same signature, re-armored: a distinct record digest, one key.
        variant = record.model_copy(
            update={"signature": record.signature + " " * (n % 7) + "\n" * (n // 7 % 5) + f"#{n}"}
        )
        data = variant.to_bytes()
        loopback.blobs[str(variant.digest)] = data
        manifest = canonicalize(
            {**template, "layers": [{**template["layers"][0], "digest": str(variant.digest), "size": len(data)}]}
        )
        loopback.manifests[str(OciDigest.of(manifest))] = (manifest, "application/vnd.oci.image.manifest.v1+json")
        entries.append({**head, "digest": str(OciDigest.of(manifest)), "size": len(manifest)})
    fallback = canonicalize({**index, "manifests": entries})
    loopback.manifests[str(OciDigest.of(fallback))] = (fallback, "application/vnd.oci.image.index.v1+json")
    loopback.tags[tag] = str(OciDigest.of(fallback))
    consumer = tmp_path / "consumer"
    done = brain("--brain", str(consumer), "pull", ref, "--json")
    if count == 10_000:  # a listing of 4 MB: refused in one line, nothing written
        assert_one_line_error(done, 6)
        assert "referrers fallback index" in done.stderr and not consumer.exists()
        return
    assert done.code == 0, done
    result = done.json()["authenticity"]
    assert result["state"] == "authorized" and result["records"] <= 513
    assert any("more than 512 records" in w for w in result["warnings"])
    stored = json.loads((consumer / "boltzmann" / "signatures.json").read_text())["entries"]
    assert max(len(v) for v in stored.values()) <= 512


def test_copying_a_signed_fixture_layout(
    tmp_path: Path, loopback: LoopbackRegistry, signed_brain: Path, brain: BrainRunner
) -> None:
    """The reference's signed brain, pushed by us, pulled by a fresh consumer: both records travel."""
    ref = f"{loopback.host}/fixture/signed:v1"
    done = brain("--brain", str(signed_brain), "push", ref, "--json")
    assert done.code == 0 and done.json()["signatures"] == 2, done
    assert done.json()["digest"] == "sha256:63f19363e64a985ffe705121a6649f82b9e01ca789c54e94ac33c28a2e9545cd"
    consumer = tmp_path / "consumer"
    done = brain("--brain", str(consumer), "pull", ref, "--json")
    assert done.code == 0 and done.json()["authenticity"]["state"] == "authorized", done
    assert (consumer / "boltzmann" / "signatures.json").read_bytes() == (
        signed_brain / "boltzmann" / "signatures.json"
    ).read_bytes()
    shutil.rmtree(consumer)
