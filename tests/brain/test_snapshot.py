"""Snapshot (§5.3) and projection (§5.4) documents."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from brain.composition import ModuleRef
from brain.errors import IntegrityError
from brain.identity import OciDigest, canonicalize
from brain.snapshot import Projection, Snapshot, SnapshotDecodeError, TrustKey, TrustRoot, TrustScope

SPEC_ROOT_SNAPSHOT = (
    b'{"boltzmann":1,"created_at":"2026-11-30T13:32:11Z","modules":{"canonical":{"block_count":1,"composition":'
    b'"sha256:bcce8857fbb5d57249129a498dc80735432acfdd141285d77ed905c1635ca953","layout":"rfc6962-sorted/1",'
    b'"memory_type":"canonical","root":"sha256:633b52d4c45f73aa909c08565e26769557849ad66bce405647e67a5eaf1cb05d"},'
    b'"provenance":{"block_count":2,"composition":"sha256:cbe19d22349a378469e4c32176a2ba150c37af93af09d085474dbeb78cb85cb0",'
    b'"layout":"rfc6962-sorted/1","memory_type":"provenance",'
    b'"root":"sha256:3764d4831cafc9a68fec6d648e7a42eca8bb225fed4ed90d1e21d1e8ea28adee"}}}'
)
SPEC_ROOT_DIGEST = OciDigest.parse("sha256:bbf38dfc7183b3969bf0ce3d033672373fb823e0fb9511609401915683f6c637")
P1 = OciDigest.of(b"one")
P2 = OciDigest.of(b"two")
AT = "2026-11-30T13:32:11Z"


def _refs() -> dict[str, ModuleRef]:
    return Snapshot.decode(SPEC_ROOT_SNAPSHOT).modules


def test_spec_root_snapshot_digest_and_round_trip() -> None:
    snapshot = Snapshot.decode(SPEC_ROOT_SNAPSHOT, SPEC_ROOT_DIGEST)
    assert snapshot.digest == SPEC_ROOT_DIGEST
    assert snapshot.parent_digests == () and snapshot.first_parent is None
    assert set(snapshot.modules) == {"canonical", "provenance"} and snapshot.modules["provenance"].block_count == 2
    rebuilt = Snapshot(created_at=AT, modules=snapshot.modules)
    assert rebuilt.to_bytes() == SPEC_ROOT_SNAPSHOT and rebuilt == snapshot


def test_lineage_encoding() -> None:
    child = Snapshot.with_lineage([SPEC_ROOT_DIGEST], created_at=AT, modules=_refs())
    assert b'"parent":"sha256:bbf38dfc' in child.to_bytes() and b'"parents"' not in child.to_bytes()
    assert child.parent_digests == (SPEC_ROOT_DIGEST,) and child.first_parent == SPEC_ROOT_DIGEST
    merge = Snapshot.with_lineage([P1, P2], created_at=AT, modules={})
    assert merge.to_json()["parents"] == [str(P1), str(P2)] and "parent" not in merge.to_json()
    assert merge.first_parent == P1
    assert Snapshot.with_lineage([], created_at=AT, modules={}).parent_digests == ()
    assert Snapshot.decode(merge.to_bytes(), merge.digest) == merge


@pytest.mark.parametrize(
    "fields",
    [
        {"parent": P1, "parents": (P1, P2)},
        {"parents": (P1,)},
        {"parents": ()},
        {"parents": (P1, P1)},
        {"created_at": "2026-11-30T13:32:11.000Z"},
        {"modules": {"semantic": None}},
        {"boltzmann": 2},
        {"unknown": 1},
    ],
)
def test_construction_refusals(fields: dict) -> None:
    with pytest.raises(ValidationError):
        Snapshot(**({"created_at": AT, "modules": {}} | fields))


def test_module_key_must_name_the_reference_type() -> None:
    with pytest.raises(ValidationError, match="holds a reference"):
        Snapshot(created_at=AT, modules={"semantic": _refs()["canonical"]})


def _with(old: bytes, new: bytes) -> bytes:
    assert old in SPEC_ROOT_SNAPSHOT
    return SPEC_ROOT_SNAPSHOT.replace(old, new, 1)


PARENT = b'"parent":"' + str(P1).encode() + b'"'


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (SPEC_ROOT_SNAPSHOT[:-1], "not strict JSON"),
        (b"[]", "JSON object"),
        (_with(b'"boltzmann":1', b'"boltzmann":2'), "boltzmann must be 1"),
        (
            _with(b"}}}", b"}}," + PARENT + b',"parents":["' + str(P1).encode() + b'","' + str(P2).encode() + b'"]}'),
            "both",
        ),
        (_with(b"}}}", b'}},"parent":null}'), "null"),
        (_with(b"}}}", b'}},"parents":[]}'), "parents has 0 entries"),
        (_with(b"}}}", b'}},"parents":["' + str(P1).encode() + b'"]}'), "parents has 1 entries"),
        (_with(b"}}}", b'}},"parents":["' + str(P1).encode() + b'","' + str(P1).encode() + b'"]}'), "repeat"),
        (_with(b"}}}", b'}},"zz":1}'), "zz"),
        (_with(b'"created_at":"2026-11-30T13:32:11Z",', b""), "no created_at"),
        (_with(b'"layout":"rfc6962-sorted/1",', b""), "canonical jcs/1 form"),  # the default would be filled in
        (_with(b'"block_count":1', b'"block_count":"1"'), "block_count"),
        (_with(b'"memory_type":"canonical"', b'"memory_type":"semantic"'), "holds a reference"),
        (SPEC_ROOT_SNAPSHOT + b"\n", "canonical jcs/1 form"),
        (_with(b'"boltzmann":1,', b""), "boltzmann must be 1"),
    ],
)
def test_decode_refusals(data: bytes, message: str) -> None:
    with pytest.raises(SnapshotDecodeError, match=message):
        Snapshot.decode(data)


def test_decode_checks_the_hash_first() -> None:
    with pytest.raises(SnapshotDecodeError, match="hashes to"):
        Snapshot.decode(SPEC_ROOT_SNAPSHOT, P1)
    assert issubclass(SnapshotDecodeError, IntegrityError)


def test_labels_and_trust_root_round_trip() -> None:
    trust = TrustRoot(
        govern_quorum=1,
        keys=(
            TrustKey(
                key="ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4",
                scopes=(TrustScope.GOVERN, TrustScope.DROP_CANONICAL), since=1,
            ),
        ),
        revision=1,
    )
    assert trust.digest == OciDigest.of(canonicalize(trust.to_json()))
    assert trust.to_json()["namespace"] == "boltzmann.snapshot.v1"
    genesis = Snapshot(created_at=AT, modules={}, labels={"release": "v1"}, trust_root=trust)
    decoded = Snapshot.decode(genesis.to_bytes(), genesis.digest)
    assert decoded == genesis and decoded.trust_root == trust and decoded.labels == {"release": "v1"}
    assert Snapshot.decode(Snapshot(created_at=AT, modules={}, labels={}).to_bytes()).labels == {}


def test_projection() -> None:
    refs = _refs()
    projection = Projection(modules={"canonical": refs["canonical"]}, source=SPEC_ROOT_DIGEST)
    assert projection.to_json() == {
        "boltzmann": 1,
        "modules": {"canonical": refs["canonical"].to_json()},
        "source": str(SPEC_ROOT_DIGEST),
    }
    assert Projection.decode(projection.to_bytes(), projection.digest) == projection
    with pytest.raises(ValidationError, match="at least one"):
        Projection(modules={}, source=SPEC_ROOT_DIGEST)
    bad = projection.to_bytes().replace(b'"source"', b'"created_at":"' + AT.encode() + b'","source"')
    with pytest.raises(SnapshotDecodeError, match="created_at"):
        Projection.decode(bad)
