"""`fixtures/signed-brain` (§9.9): it authenticates as the other implementation says, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain.authenticity import judge
from brain.authn.records import RecordDecodeError, SignatureIndex, SignatureRecord
from brain.brain import Brain
from brain.identity import OciDigest
from brain.store.authn_files import SIGNATURES_FILE, read_signature_index, store_record
from oci.pack import pack
from tests.authn.keys import SIGNED_BRAIN

HEAD = OciDigest.parse("sha256:256dafdd493635c81b5f55843feecb16fce1ed6c19bac1e69b2fb56d69b1761c")
GENESIS = OciDigest.parse("sha256:91740fe238eb5d0b847cbed4a4052b01790d691852f685c310861990cd70248f")
EXPECTED = json.loads((SIGNED_BRAIN / "authenticate.json").read_text())


def test_the_head_authenticates_exactly_as_the_reference_reports() -> None:
    result = judge(Brain.open(SIGNED_BRAIN / "brain")).model_dump(mode="json")
    for key in (
        "snapshot", "role", "trust_root", "trust_root_revision", "pinned", "pin", "required_scopes", "undetermined",
        "withdrawn", "quorum_required", "quorum_met", "findings", "signatures_required", "stance",
    ):
        assert result[key] == EXPECTED[key], key
    assert result["state"] == "authorized"
    [verdict] = result["signatures"]
    [expected] = EXPECTED["signatures"]
    for key in ("key", "embedded_key", "subject", "claimed_scopes", "held_scopes", "outcome", "detail"):
        assert verdict[key] == expected[key], key
    assert result["attribution"]["verified"] == EXPECTED["attribution"]["verified"]


def test_the_genesis_is_authorized_with_a_quorum_margin_note() -> None:
    result = judge(Brain.open(SIGNED_BRAIN / "brain"), GENESIS)
    assert (result.state, result.role, result.required_scopes) == ("authorized", "genesis", ["govern"])
    assert [(f.code, f.blocking) for f in result.findings] == [("quorum_margin", False)]


def test_records_and_their_index_are_read_and_rewritten_byte_for_byte(tmp_path: Path) -> None:
    head = (SIGNED_BRAIN / "record-head.json").read_bytes()
    genesis = (SIGNED_BRAIN / "record-genesis.json").read_bytes()
    record = SignatureRecord.decode(head)
    assert str(record.digest) == "sha256:9a4454101edfc5f01760dfa33f653bfbcd86bae90c5494b3bf6fcd4fa2402905"
    assert record.to_bytes() == head and record.signature == (SIGNED_BRAIN / "record-head.sig").read_text()
    brain = Brain.init(tmp_path / "fresh")
    for data in (genesis, head):
        store_record(brain.path, brain.blobs, SignatureRecord.decode(data))
        assert store_record(brain.path, brain.blobs, SignatureRecord.decode(data))[1] is False  # twice: a no-op
    stored = brain.path.joinpath(*SIGNATURES_FILE).read_bytes()
    assert stored == (SIGNED_BRAIN / "brain" / "boltzmann" / "signatures.json").read_bytes()
    assert str(OciDigest.of(stored)) == "sha256:701178fa18078ace32062f346e135a06e79bc086469b493b82213084728985b0"
    assert read_signature_index(brain.path) == SignatureIndex.decode(stored)


@pytest.mark.parametrize("mutate", [
    lambda d: d + b"\n",
    lambda d: json.dumps(json.loads(d), indent=1).encode(),
    lambda d: json.dumps({k: v for k, v in json.loads(d).items() if k != "scopes"}, separators=(",", ":")).encode(),
    lambda d: d.replace(b'"boltzmann":1,', b'"boltzmann":1,"extra":0,'),
    lambda d: d.replace(b'"commit","ingest"', b'"commit","owner"'),
    lambda d: d.replace(b'"boltzmann":1', b'"boltzmann":2'),
    lambda d: b" " * (10 << 20),
], ids=["newline", "pretty", "no-scopes", "extra-key", "unknown-scope", "boltzmann-2", "ten-megabytes"])
def test_record_reading_is_strict(mutate) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RecordDecodeError):
        SignatureRecord.decode(mutate((SIGNED_BRAIN / "record-head.json").read_bytes()))


def test_unsorted_scopes_read_and_another_namespace_reads(tmp_path: Path) -> None:
    data = (SIGNED_BRAIN / "record-head.json").read_bytes()
    assert SignatureRecord.decode(data.replace(b'"commit","ingest"', b'"ingest","commit"')).scopes == (
        "ingest", "commit",
    )
    assert SignatureRecord.decode(data.replace(b'"boltzmann.snapshot.v1"', b'"git"')).namespace == "git"


def test_repacking_reproduces_the_index_and_signature_manifests(signed_brain: Path) -> None:
    index = (signed_brain / "index.json").read_bytes()
    # Without its signature manifests (as if packed before signing), a pack writes them back exactly.
    document = json.loads(index)
    document["manifests"] = document["manifests"][:1]
    (signed_brain / "index.json").write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    for entry in json.loads(index)["manifests"][1:]:
        (signed_brain / "blobs" / "sha256" / entry["digest"].removeprefix("sha256:")).unlink()
    brain = Brain.open(signed_brain)
    result = pack(brain, "v1")
    assert str(result.digest) == "sha256:63f19363e64a985ffe705121a6649f82b9e01ca789c54e94ac33c28a2e9545cd"
    assert (signed_brain / "index.json").read_bytes() == index
    manifest = brain.blobs.get(
        OciDigest.parse("sha256:68dc7d08def1afb39eecfc9f4088caafbd3d11d42c8a0b15113be05d8e31eebd")
    )
    assert manifest == (SIGNED_BRAIN / "signature-manifest-head.json").read_bytes()
    pack(brain, "v1")  # again: nothing is listed twice
    assert (signed_brain / "index.json").read_bytes() == index


def test_a_snapshot_holds_at_most_512_records_and_the_513th_writes_nothing(tmp_path: Path) -> None:
    from brain.errors import RefusedError

    brain = Brain.init(tmp_path / "many")
    record = SignatureRecord.decode((SIGNED_BRAIN / "record-head.json").read_bytes())
    # The same signature with different trailing text after the armor: distinct records, one key (§9.3).
    variants = [record.model_copy(update={"signature": record.signature + f"#{n}"}) for n in range(513)]
    from brain.store.authn_files import store_records

    assert store_records(brain.path, brain.blobs, variants[:512]) == 512
    before = brain.path.joinpath(*SIGNATURES_FILE).read_bytes()
    with pytest.raises(RefusedError, match="already holds 512 signature records"):
        store_records(brain.path, brain.blobs, variants[512:])
    assert brain.path.joinpath(*SIGNATURES_FILE).read_bytes() == before
    assert not brain.blobs.has(variants[512].digest)
