"""The §9.7 decision against every case of `protocol/vectors/signatures.json`, plus the cases §9.10 fixes."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from brain.authn.chain import LedgerFacts
from brain.authn.decision import Authentication, authenticate
from brain.authn.keys import PublicKey
from brain.authn.outcomes import Outcome, Role, Stance, State
from brain.authn.records import SignatureRecord
from brain.authn.signer import make_record
from brain.authn.trust import PinSource, TrustPin
from brain.composition import Composition, ModuleRef
from brain.identity import BlockId, OciDigest, canonicalize
from brain.snapshot import Snapshot, TrustKey, TrustRoot, TrustScope
from tests.authn.keys import load_vectors

DATA = load_vectors("signatures")
SNAPSHOTS = {OciDigest.parse(s["digest"]): Snapshot.decode(s["canonical"].encode()) for s in DATA["snapshots"].values()}
RECORDS = {name: SignatureRecord.decode(canonicalize(r)) for name, r in DATA["signatures"].items()}
KEY_NAMES = {k["fingerprint"]: k["name"] for k in DATA["keys"]}


class MemoryChain:
    """A `ChainStore` over in-memory documents: the vectors' snapshots and every record they publish."""

    def __init__(self, snapshots: dict[OciDigest, Snapshot], records: Sequence[SignatureRecord]) -> None:
        self.snapshots = snapshots
        self.all_records = list(records)

    def snapshot(self, digest: OciDigest) -> Snapshot | None:
        return self.snapshots.get(digest)

    def member_ids(self, ref: ModuleRef) -> frozenset[str] | None:
        return None

    def ledger_facts(self, block_ids: Sequence[str]) -> dict[str, LedgerFacts | None]:
        return dict.fromkeys(block_ids)

    def records(self, snapshot: OciDigest) -> list[SignatureRecord]:
        return [r for r in self.all_records if r.snapshot == snapshot]


def _digest(name: str) -> OciDigest:
    return OciDigest.parse(DATA["snapshots"][name]["digest"])


@pytest.mark.parametrize("case", DATA["cases"], ids=lambda c: c["name"])
def test_vector_case(case: dict) -> None:
    pin = None
    if "pin" in case:
        pin = TrustPin(pinned_at="2026-12-01T00:00:00Z", source=PinSource.OUT_OF_BAND,
                       trust_root=OciDigest.parse(DATA["trust_roots"][case["pin"]]["digest"]))
    newest = None
    if "current_trust_root" in case:
        newest = TrustRoot.model_validate(DATA["trust_roots"][case["current_trust_root"]]["document"])
    chain = MemoryChain(SNAPSHOTS, list(RECORDS.values()))
    result = authenticate(chain, _digest(case["snapshot"]), records=[RECORDS[n] for n in case["signatures"]],
                          pin=pin, newest=newest)
    expect = case["expect"]
    assert result.state == expect["state"]
    for field in ("role", "required_scopes", "quorum_met", "quorum_required", "pinned"):
        if field in expect:
            assert getattr(result, field) == expect[field], field
    for code in expect.get("findings_include", ()):
        assert code in result.codes
    outcomes = {KEY_NAMES[v.key]: v.outcome for v in result.signatures}
    for name, outcome in expect.get("outcomes", {}).items():
        assert outcomes[name] == outcome
    if "withdrawn" in expect:
        assert [KEY_NAMES[v.key] for v in result.withdrawn] == expect["withdrawn"]
    # Every finding carries the blocking flag §9.7 gives its code, and the state follows from them.
    if any(f.blocking for f in result.findings) and result.signatures:
        assert result.state is State.UNAUTHORIZED


# --- beyond the vectors: the decisions §9.10 says the reference gets wrong --------------------------


class Key:
    def __init__(self, seed: int) -> None:
        self.private = Ed25519PrivateKey.from_private_bytes(bytes([seed]) * 32)
        self.public_key = PublicKey.ed25519(self.private.public_key().public_bytes_raw())

    def sign(self, data: bytes) -> bytes:
        return self.private.sign(data)


GOVERNOR, PROPOSER, STRANGER = Key(1), Key(2), Key(3)
ROOT = TrustRoot(govern_quorum=1, revision=1, keys=(
    TrustKey(key=GOVERNOR.public_key.text, scopes=(TrustScope.INGEST, TrustScope.COMMIT, TrustScope.GOVERN), since=1),
    TrustKey(key=PROPOSER.public_key.text, scopes=(TrustScope.PROPOSE,), since=1),
))
GENESIS = Snapshot(created_at="2026-12-01T00:00:00Z", modules={}, trust_root=ROOT)
SEMANTIC = Composition.of("semantic", [BlockId.of(b"x")])
CHILD = Snapshot(created_at="2026-12-01T00:00:01Z", modules={"semantic": SEMANTIC.module_ref()}, parent=GENESIS.digest,
                 trust_root=ROOT)


def _judge(signers: list[Key], stance: Stance = Stance.HEAD, snapshot: Snapshot = CHILD) -> Authentication:
    records = [make_record(s, snapshot.to_bytes(), {TrustScope.COMMIT}) for s in signers]
    chain = MemoryChain({GENESIS.digest: GENESIS, CHILD.digest: CHILD}, records)
    return authenticate(chain, snapshot.digest, stance=stance)


def test_a_propose_only_signature_is_a_proposal_never_authorized() -> None:
    head = _judge([PROPOSER])
    assert head.state is State.UNAUTHORIZED and "proposed_head" in head.codes
    offered = _judge([PROPOSER], Stance.OFFERED)
    assert offered.signatures[0].outcome is Outcome.VALID_AS_PROPOSAL
    assert offered.state is State.ATTRIBUTABLE  # §9.10 item 4: the reference says authorized here


def test_a_stranger_is_unauthorized_as_head_and_attributable_when_offered() -> None:
    head = _judge([STRANGER])
    assert head.state is State.UNAUTHORIZED and head.signatures[0].outcome is Outcome.UNAUTHORIZED_KEY
    offered = _judge([STRANGER], Stance.OFFERED)
    assert offered.state is State.ATTRIBUTABLE and offered.signatures[0].outcome is Outcome.ATTRIBUTABLE_KEY


def test_the_governor_authorizes_and_a_truncated_chain_does_not() -> None:
    assert _judge([GOVERNOR]).state is State.AUTHORIZED
    record = make_record(GOVERNOR, CHILD.to_bytes(), {TrustScope.COMMIT})
    truncated = authenticate(MemoryChain({CHILD.digest: CHILD}, [record]), CHILD.digest)
    assert truncated.role is Role.TRUNCATED and truncated.state is State.UNAUTHORIZED
    assert {"chain_truncated", "evidence_incomplete"} <= set(truncated.codes)
    assert truncated.signatures[0].outcome is Outcome.UNAUTHORIZED_KEY


def test_tampered_records_name_their_outcome() -> None:
    good = make_record(GOVERNOR, CHILD.to_bytes(), {TrustScope.COMMIT})
    chain = MemoryChain({GENESIS.digest: GENESIS, CHILD.digest: CHILD}, [])
    wrong_key = good.model_copy(update={"key": STRANGER.public_key.fingerprint})
    wrong_ns = good.model_copy(update={"namespace": "git"})
    broken = good.model_copy(update={"signature": good.signature.replace("U1NIU0lH", "U1NIU0lI", 1)})
    other = make_record(GOVERNOR, GENESIS.to_bytes(), {TrustScope.COMMIT}).signature
    swapped = good.model_copy(update={"signature": other})
    outcomes = [
        authenticate(chain, CHILD.digest, records=[r]).signatures[0].outcome
        for r in (wrong_key, wrong_ns, broken, swapped)
    ]
    assert outcomes == [
        Outcome.FINGERPRINT_MISMATCH, Outcome.WRONG_NAMESPACE, Outcome.INVALID_SIGNATURE, Outcome.INVALID_SIGNATURE,
    ]


def test_brain_authn_is_pure() -> None:
    """brain/authn reads nothing itself: no file, socket, subprocess or terminal access in its modules."""
    import ast
    from pathlib import Path

    forbidden = {"socket", "subprocess", "getpass", "os", "shutil", "io", "pathlib"}
    package = Path(__file__).resolve().parents[2] / "brain" / "authn"
    for path in package.glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {
            n.module.split(".")[0]
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0
        }
        assert not names & forbidden, (path.name, names & forbidden)
        assert "open(" not in path.read_text(), path.name


def test_a_compromise_marker_beyond_a_missing_second_parent_is_undecidable() -> None:
    # The marker names a snapshot the chain does not hold; the merge's second parent is missing, so
    # whether the signed snapshot descends from the marker cannot be told (§9.7 step 8 g).
    signer = Key(4)
    marker = OciDigest.of(b"a snapshot this chain does not hold")
    root = TrustRoot(govern_quorum=1, revision=1, keys=(
        TrustKey(
            key=GOVERNOR.public_key.text, scopes=(TrustScope.INGEST, TrustScope.COMMIT, TrustScope.GOVERN), since=1
        ),
        TrustKey(key=signer.public_key.text, scopes=(TrustScope.COMMIT,), since=1, compromised_from=marker),
    ))  # fmt: skip
    genesis = Snapshot(created_at="2026-12-01T00:00:00Z", modules={}, trust_root=root)
    missing = OciDigest.of(b"a second parent nobody stored")
    merge = Snapshot(created_at="2026-12-01T00:00:01Z", modules={"semantic": SEMANTIC.module_ref()},
                     parents=(genesis.digest, missing), trust_root=root)
    records = [make_record(k, merge.to_bytes(), {TrustScope.COMMIT}) for k in (signer, GOVERNOR)]
    chain = MemoryChain({genesis.digest: genesis, merge.digest: merge}, records)
    result = authenticate(chain, merge.digest)
    outcomes = {v.key: v.outcome for v in result.signatures}
    assert outcomes[signer.public_key.fingerprint] is Outcome.COMPROMISE_UNDECIDABLE
    assert outcomes[GOVERNOR.public_key.fingerprint] is Outcome.VALID
    assert not result.withdrawn  # undecidable is not proof of compromise: nothing is withdrawn
    # Once the second parent is held (and descends from nothing marked), the key's signature counts.
    other = Snapshot(created_at="2026-11-30T00:00:00Z", modules={}, trust_root=root)
    decided = Snapshot(created_at="2026-12-01T00:00:02Z", modules={"semantic": SEMANTIC.module_ref()},
                       parents=(genesis.digest, other.digest), trust_root=root)
    records = [make_record(signer, decided.to_bytes(), {TrustScope.COMMIT})]
    held = MemoryChain({genesis.digest: genesis, other.digest: other, decided.digest: decided}, records)
    assert authenticate(held, decided.digest).signatures[0].outcome is Outcome.VALID
