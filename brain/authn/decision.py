"""The authentication decision (§9.7) as one pure function: `authenticate(chain, digest, ...)`.

It never raises on hostile input: every unreadable record, missing ancestor or undecidable question
becomes an outcome or a finding. The result names the state, the role, the trust root in force, the
required scopes, one verdict per record and every finding with its blocking flag. Unlike the reference
(§9.10 item 4) a `propose`-only signature never makes a snapshot `authorized`: it stays a proposal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from brain.authn.chain import ChainStore, descends_from, first_parent_walk
from brain.authn.keys import PublicKey, parse_trust_key
from brain.authn.outcomes import BLOCKING, FindingCode, Outcome, Role, Stance, State
from brain.authn.records import SignatureRecord
from brain.authn.scopes import Change, Question, required_scopes
from brain.authn.sshsig import (
    NAMESPACE,
    Check,
    SshsigFormatError,
    check_signature,
    parse_armored,
)
from brain.authn.trust import (
    TrustPin,
    digest_of,
    entry_for,
    govern_holders,
    is_retired,
    sorted_scopes,
)
from brain.blocks.memory_type import MemoryType
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.snapshot import Snapshot, TrustKey, TrustRoot, TrustScope

_CHECK_OUTCOME = {
    Check.NAMESPACE_MISMATCH: Outcome.WRONG_NAMESPACE,
    Check.UNSUPPORTED_KEY: Outcome.UNSUPPORTED_KEY_TYPE,
    Check.UNVERIFIABLE: Outcome.UNVERIFIABLE,
    Check.INVALID: Outcome.INVALID_SIGNATURE,
    Check.FORMAT: Outcome.INVALID_SIGNATURE,
}
_ACCEPTED = frozenset({Outcome.VALID, Outcome.VALID_AS_PROPOSAL})
_PROPOSABLE = frozenset({TrustScope.INGEST, TrustScope.COMMIT})


class Policy(FrozenModel):
    """Local policy of the decision: how many distinct valid keys a head needs, and whether a proposal may be one."""

    required_signatures: int = 1
    allow_propose_head: bool = False


class Finding(FrozenModel):
    """One finding about the snapshot; `blocking` findings make it `unauthorized`."""

    code: FindingCode
    blocking: bool
    detail: str


class Verdict(FrozenModel):
    """What one record proves."""

    record: OciDigest
    key: str
    embedded_key: str | None = None
    subject: str | None = None
    claimed_scopes: list[str]
    held_scopes: list[str] = []
    outcome: Outcome
    detail: str | None = None


class Attribution(FrozenModel):
    """Who the provenance records this snapshot adds name as actors, and whether a valid key vouches for them."""

    snapshot: OciDigest
    verified: list[str] = []
    asserted: list[str] = []
    evidence_gaps: list[str] = []


class Authentication(FrozenModel):
    """The §9.7 result for one snapshot."""

    snapshot: OciDigest
    state: State
    role: Role
    stance: Stance
    trust_root: OciDigest | None
    trust_root_revision: int | None
    pinned: bool
    pin: OciDigest | None
    required_scopes: list[str]
    undetermined: list[Question]
    signatures: list[Verdict]
    withdrawn: list[Verdict]
    quorum_required: int | None
    quorum_met: int | None
    findings: list[Finding]
    signatures_required: int
    attribution: Attribution

    @property
    def blocking(self) -> list[Finding]:
        """The findings that block."""
        return [f for f in self.findings if f.blocking]

    @property
    def codes(self) -> list[str]:
        """The finding codes, in order."""
        return [str(f.code) for f in self.findings]


@dataclass
class _Judged:
    verdict: Verdict
    key: PublicKey | None
    entry: TrustKey | None


class _Findings(list[Finding]):
    def add(self, code: FindingCode, detail: str, blocking: bool | None = None) -> None:
        self.append(Finding(code=code, blocking=code in BLOCKING if blocking is None else blocking, detail=detail))


def authenticate(  # noqa: C901 - §9's decision procedure, one numbered step after another as the spec gives it
    chain: ChainStore,
    digest: OciDigest,
    snapshot: Snapshot | None = None,
    records: Sequence[SignatureRecord] | None = None,
    *,
    pin: TrustPin | None = None,
    newest: TrustRoot | None = None,
    stance: Stance = Stance.HEAD,
    policy: Policy | None = None,
) -> Authentication:
    """Judge snapshot `digest` (read from `chain` unless given) and its records (default: `chain.records`).

    `newest` is the newest trust root the verifier knows (compromise markers are read from it; default:
    the snapshot's own); `pin` the consumer's pin, if any.
    """
    policy = policy or Policy()
    if snapshot is None:
        snapshot = chain.snapshot(digest)
        if snapshot is None:
            raise ValueError(f"snapshot {digest} is not held")
    newest = newest if newest is not None else snapshot.trust_root
    held = [r for r in (chain.records(digest) if records is None else records) if r.snapshot == digest]
    findings = _Findings()

    # 1. Locate.
    parent_digest = snapshot.first_parent
    parent = None if parent_digest is None else chain.snapshot(parent_digest)
    if parent_digest is None:
        role, in_force = Role.GENESIS, snapshot.trust_root
    elif parent is None:
        role, in_force = Role.TRUNCATED, None
        findings.add(FindingCode.CHAIN_TRUNCATED, f"the first parent {parent_digest} is not held")
    else:
        in_force = parent.trust_root
        role = Role.REVISION if digest_of(snapshot.trust_root) != digest_of(in_force) else Role.ORDINARY
    walk, truncated = first_parent_walk(chain, digest, snapshot)

    # 2. Pin.
    pinned = False
    if pin is not None:
        reached = walk[-1][0] if not truncated else None
        if pin.genesis is not None and reached is not None and reached != pin.genesis:
            findings.add(
                FindingCode.PIN_BRAIN_MISMATCH, f"pinned genesis {pin.genesis}, this chain starts at {reached}"
            )
        elif digest_of(in_force) == pin.trust_root or (
            not truncated and any(digest_of(s.trust_root) == pin.trust_root for _, s in walk)
        ):
            pinned = True
        else:
            findings.add(
                FindingCode.TRUST_ROOT_MISMATCH,
                f"no snapshot of this chain carries the pinned trust root {pin.trust_root}",
            )

    # 3. Since.
    if in_force is not None and role is not Role.TRUNCATED:
        _since_findings(findings, in_force, walk)

    # 4. Ancestry.
    for position, (ancestor_digest, ancestor) in enumerate(walk[1:], start=1):
        above = walk[position + 1][1] if position + 1 < len(walk) else None
        if ancestor.first_parent is None or above is None:
            continue
        if digest_of(ancestor.trust_root) == digest_of(above.trust_root):
            continue
        previous = above.trust_root
        count = 0 if previous is None else _revision_quorum(chain, ancestor_digest, ancestor, previous, newest)
        if previous is None or count < previous.govern_quorum:
            need = (
                "no trust root was in force"
                if previous is None
                else f"{count} of {previous.govern_quorum} govern signatures"
            )
            findings.add(FindingCode.QUORUM_FAILURE, f"ancestor revision {ancestor_digest} is not approved: {need}")
    if truncated and role is not Role.TRUNCATED:
        findings.add(FindingCode.CHAIN_TRUNCATED, f"the history ends at {walk[-1][0]}, whose parent is not held",
                     blocking=not pinned)

    # 5. Scopes.
    change = required_scopes(chain, snapshot, parent)
    if change.questions:
        findings.add(FindingCode.EVIDENCE_INCOMPLETE, "open question(s): " + ", ".join(change.questions))

    # 6. Removals.
    if parent is not None:
        _removal_findings(findings, chain, snapshot, parent)

    judged: list[_Judged] = []
    quorum_required = quorum_met = None
    if not held:
        # 7. No records.
        findings.add(FindingCode.UNSIGNED_BRAIN, "no signature record is held over this snapshot")
    else:
        # 8. Each record.
        judged = [_judge(chain, r, digest, snapshot, in_force, newest, change, stance) for r in held]
        for j in judged:
            if j.verdict.outcome is Outcome.COMPROMISED_KEY:
                findings.add(
                    FindingCode.COMPROMISED_KEY,
                    f"signature by {j.verdict.embedded_key} withdrawn: the key is compromised",
                )
            elif j.verdict.outcome is Outcome.UNVERIFIABLE:
                findings.add(FindingCode.UNVERIFIABLE, f"signature by {j.verdict.embedded_key} cannot be checked here")
        # 9. Governance.
        quorum_required, quorum_met = _governance(findings, role, snapshot, parent, in_force, judged)
        # 10. Policy.
        if stance is Stance.HEAD:
            _policy(findings, judged, policy)
        # 11. Attribution (below).
    attribution = _attribution(findings, digest, change, judged)
    signatures = [j.verdict for j in judged if j.verdict.outcome is not Outcome.COMPROMISED_KEY]
    withdrawn = [j.verdict for j in judged if j.verdict.outcome is Outcome.COMPROMISED_KEY]
    state = _state(findings, judged, signatures, withdrawn, stance, policy)
    return Authentication(
        snapshot=digest, state=state, role=role, stance=stance, trust_root=digest_of(in_force),
        trust_root_revision=None if in_force is None else in_force.revision, pinned=pinned,
        pin=None if pin is None else pin.trust_root, required_scopes=[str(s) for s in sorted_scopes(change.scopes)],
        undetermined=list(change.questions), signatures=signatures, withdrawn=withdrawn,
        quorum_required=quorum_required, quorum_met=quorum_met, findings=list(findings),
        signatures_required=policy.required_signatures, attribution=attribution,
    )


def _since_findings(findings: _Findings, in_force: TrustRoot, walk: list[tuple[OciDigest, Snapshot]]) -> None:
    roots = {root.digest: root for _, s in walk if (root := s.trust_root) is not None}
    for entry in in_force.keys:
        key = PublicKey.from_blob(_blob(entry))
        for root in roots.values():
            if root.revision >= entry.since and entry_for(root, key) is None:
                findings.add(
                    FindingCode.SINCE_REFUTED,
                    f"key {key.fingerprint} claims since {entry.since}, but revision {root.revision} does not list it",
                )
                break


def _blob(entry: TrustKey) -> bytes:
    return parse_trust_key(entry.key).blob


def _verify_record(record: SignatureRecord, message: bytes) -> tuple[Outcome | None, PublicKey | None, str | None]:
    """Tests a-d of step 8: (failing outcome or None, embedded key, detail)."""
    if record.namespace != NAMESPACE:
        return Outcome.WRONG_NAMESPACE, None, f"record namespace {record.namespace!r}"
    try:
        signature = parse_armored(record.signature)
    except SshsigFormatError as e:
        return Outcome.INVALID_SIGNATURE, None, e.message
    key = signature.public_key
    if key.fingerprint != record.key:
        return (
            Outcome.FINGERPRINT_MISMATCH, key, f"the record says {record.key}, the signature embeds {key.fingerprint}",
        )
    checked = check_signature(signature, message)
    if checked is not Check.GOOD:
        return _CHECK_OUTCOME[checked], key, None
    return None, key, None


def _compromise(
    chain: ChainStore, digest: OciDigest, snapshot: Snapshot, key: PublicKey, entry: TrustKey, newest: TrustRoot | None
) -> Outcome | None:
    newest_entry = entry_for(newest, key)
    marker = (
        newest_entry.compromised_from
        if newest_entry is not None and newest_entry.compromised_from
        else entry.compromised_from
    )
    if marker is None:
        return None
    descends = descends_from(chain, digest, snapshot, marker)
    if descends is None:
        return Outcome.COMPROMISE_UNDECIDABLE
    return Outcome.COMPROMISED_KEY if descends else None


def _judge(
    chain: ChainStore,
    record: SignatureRecord,
    digest: OciDigest,
    snapshot: Snapshot,
    in_force: TrustRoot | None,
    newest: TrustRoot | None,
    change: Change,
    stance: Stance,
) -> _Judged:
    claimed = [str(s) for s in record.scopes]

    def verdict(
        outcome: Outcome, key: PublicKey | None, entry: TrustKey | None = None, detail: str | None = None
    ) -> _Judged:
        return _Judged(
            Verdict(
                record=record.digest, key=record.key, embedded_key=None if key is None else key.fingerprint,
                subject=None if entry is None else entry.subject, claimed_scopes=claimed,
                held_scopes=[] if entry is None else [str(s) for s in entry.scopes], outcome=outcome, detail=detail,
            ),
            key,
            entry,
        )

    failed, key, detail = _verify_record(record, snapshot.to_bytes())
    if failed is not None or key is None:
        return verdict(failed or Outcome.INVALID_SIGNATURE, key, detail=detail)
    entry = entry_for(in_force, key)
    if in_force is None or entry is None:
        outcome = Outcome.ATTRIBUTABLE_KEY if stance is Stance.OFFERED else Outcome.UNAUTHORIZED_KEY
        why = "no trust root is in force" if in_force is None else "the key is not listed in the trust root in force"
        return verdict(outcome, key, detail=why)
    if is_retired(entry, in_force.revision):
        return verdict(Outcome.RETIRED_KEY, key, entry, f"retired from revision {entry.retired_from}")
    compromised = _compromise(chain, digest, snapshot, key, entry, newest)
    if compromised is not None:
        return verdict(compromised, key, entry)
    held = frozenset(entry.scopes)
    if change.possible <= held:
        return verdict(Outcome.VALID, key, entry)
    if change.scopes <= held:
        return verdict(
            Outcome.INSUFFICIENT_EVIDENCE, key, entry, "missing possibly required: " + _names(change.possible - held)
        )
    if TrustScope.PROPOSE in held and change.possible <= _PROPOSABLE:
        return verdict(Outcome.VALID_AS_PROPOSAL, key, entry)
    return verdict(Outcome.INSUFFICIENT_SCOPE, key, entry, "missing " + _names(change.scopes - held))


def _names(scopes: frozenset[TrustScope] | set[TrustScope]) -> str:
    return ", ".join(str(s) for s in sorted_scopes(set(scopes)))


def _revision_quorum(
    chain: ChainStore, digest: OciDigest, snapshot: Snapshot, previous: TrustRoot, newest: TrustRoot | None
) -> int:
    """Distinct keys of `previous` holding govern (not retired, not compromised) with a good signature over `digest`."""
    keys: set[bytes] = set()
    for record in chain.records(digest):
        if record.snapshot != digest:
            continue
        failed, key, _ = _verify_record(record, snapshot.to_bytes())
        if failed is not None or key is None:
            continue
        entry = entry_for(previous, key)
        if entry is None or TrustScope.GOVERN not in entry.scopes or is_retired(entry, previous.revision):
            continue
        if _compromise(chain, digest, snapshot, key, entry, newest) is not None:
            continue
        keys.add(key.blob)
    return len(keys)


def _distinct(judged: list[_Judged], outcomes: frozenset[Outcome]) -> int:
    return len({j.key.blob for j in judged if j.key is not None and j.verdict.outcome in outcomes})


def _governance(
    findings: _Findings, role: Role, snapshot: Snapshot, parent: Snapshot | None, in_force: TrustRoot | None,
    judged: list[_Judged],
) -> tuple[int | None, int | None]:
    """Step 9; returns (quorum required, quorum met) for a revision."""
    root = snapshot.trust_root
    if role in (Role.GENESIS, Role.REVISION) and root is not None:
        holders = len(govern_holders(root))
        if holders <= root.govern_quorum:
            findings.add(
                FindingCode.QUORUM_MARGIN, f"{holders} govern holder(s) for a quorum of {root.govern_quorum}: no margin"
            )
    govern_signers = len({
        j.key.blob for j in judged
        if j.key is not None and j.verdict.outcome is Outcome.VALID and j.entry is not None
        and TrustScope.GOVERN in j.entry.scopes
    })
    if role is Role.GENESIS and root is not None and govern_signers < root.govern_quorum:
        findings.add(
            FindingCode.GENESIS_BELOW_QUORUM,
            f"{govern_signers} of its own quorum {root.govern_quorum} signed the genesis",
        )
    if role is not Role.REVISION or parent is None:
        return None, None
    if snapshot.modules != parent.modules:
        findings.add(
            FindingCode.REVISION_CHANGED_CONTENT, "a trust-root revision must keep the parent's modules verbatim"
        )
    if in_force is None:
        findings.add(
            FindingCode.QUORUM_FAILURE,
            "the revision introduces a trust root onto an ungoverned chain: no quorum exists",
        )
        return None, govern_signers
    if root is not None and root.revision <= in_force.revision:
        findings.add(FindingCode.REVISION_REGRESSED, f"revision {root.revision} does not exceed {in_force.revision}")
    if govern_signers < in_force.govern_quorum:
        findings.add(
            FindingCode.QUORUM_FAILURE,
            f"{govern_signers} of {in_force.govern_quorum} govern signatures approve this revision",
        )
    return in_force.govern_quorum, govern_signers


def _policy(findings: _Findings, judged: list[_Judged], policy: Policy) -> None:
    valid = _distinct(judged, frozenset({Outcome.VALID}))
    proposals = _distinct(judged, frozenset({Outcome.VALID_AS_PROPOSAL}))
    counted = valid + (proposals if policy.allow_propose_head else 0)
    if counted >= policy.required_signatures:
        return
    if proposals and not policy.allow_propose_head:
        findings.add(FindingCode.PROPOSED_HEAD, "only proposal signatures: a proposal cannot be a head")
    else:
        findings.add(
            FindingCode.SIGNATURES_BELOW_POLICY, f"{valid} valid key(s); the policy needs {policy.required_signatures}"
        )


def _attribution(findings: _Findings, digest: OciDigest, change: Change, judged: list[_Judged]) -> Attribution:
    covered = {
        j.entry.subject for j in judged if j.entry is not None and j.entry.subject and j.verdict.outcome in _ACCEPTED
    }
    verified = sorted(change.actors & covered)
    asserted = sorted(change.actors - covered)
    if asserted and judged:
        findings.add(FindingCode.ATTRIBUTION_UNVERIFIED, "actor(s) no valid key vouches for: " + ", ".join(asserted))
    return Attribution(snapshot=digest, verified=verified, asserted=asserted,
                       evidence_gaps=[str(b) for b in change.unreadable_records])


def _state(
    findings: _Findings, judged: list[_Judged], signatures: list[Verdict], withdrawn: list[Verdict], stance: Stance,
    policy: Policy,
) -> State:
    if not signatures and not withdrawn:
        return State.UNSIGNED
    if any(f.blocking for f in findings):
        return State.UNAUTHORIZED
    valid = _distinct(judged, frozenset({Outcome.VALID}))
    proposals = _distinct(judged, frozenset({Outcome.VALID_AS_PROPOSAL}))
    if valid + (proposals if policy.allow_propose_head and stance is Stance.HEAD else 0) >= policy.required_signatures:
        return State.AUTHORIZED
    if stance is Stance.OFFERED and (proposals or any(v.outcome is Outcome.ATTRIBUTABLE_KEY for v in signatures)):
        return State.ATTRIBUTABLE
    return State.UNAUTHORIZED


def _removal_findings(findings: _Findings, chain: ChainStore, child: Snapshot, parent: Snapshot) -> None:
    """Step 6: §7.7 between the first parent and the snapshot."""
    removed: dict[str, set[str]] = {}
    for name in sorted(set(child.modules) | set(parent.modules)):
        before, after = parent.modules.get(name), child.modules.get(name)
        if before is None or (after is not None and after.root == before.root):
            continue
        old = chain.member_ids(before)
        new = None if after is None else chain.member_ids(after)
        if old is None or (after is not None and new is None):
            findings.add(FindingCode.REMOVAL_UNDECIDABLE, f"the {name} compositions cannot both be read")
            return
        gone = old - (new or frozenset())
        if gone:
            removed[name] = set(gone)
    if not removed:
        return
    ref = child.modules.get(MemoryType.PROVENANCE.value)
    records = None if ref is None else chain.member_ids(ref)
    if ref is not None and records is None:
        findings.add(FindingCode.REMOVAL_UNDECIDABLE, "the provenance composition cannot be read")
        return
    explained: dict[str, set[str]] = {}
    for facts in chain.ledger_facts(sorted(records or ())).values():
        if facts is not None and facts.record_type == "removal" and facts.memory_type is not None:
            explained.setdefault(facts.memory_type, set()).update(facts.blocks)
    unexplained = [f"{name} {b}" for name, gone in removed.items() for b in sorted(gone - explained.get(name, set()))]
    if unexplained:
        more = f" and {len(unexplained) - 3} more" if len(unexplained) > 3 else ""
        findings.add(
            FindingCode.REMOVAL_INVARIANT, "removed without a removal record: " + ", ".join(unexplained[:3]) + more
        )
