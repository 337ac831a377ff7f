"""Authenticity of a local brain: its records, signing its snapshots, and judging them (§9).

The thin layer between the `Brain` facade, the sidecars of `brain.store.authn_files` and the pure
decision of `brain.authn`: commands and the pull path call these functions, never the pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from brain.authn.decision import Authentication, Policy, authenticate
from brain.authn.outcomes import Stance, State
from brain.authn.records import SignatureRecord
from brain.authn.rotation import RootChange, revise, revision_snapshot
from brain.authn.scopes import Change, required_scopes
from brain.authn.signer import Signer, make_record
from brain.authn.trust import entry_for, is_retired, sorted_scopes
from brain.brain import Brain
from brain.errors import ConflictError, NotFoundError, RefusedError
from brain.identity import OciDigest, utc_timestamp
from brain.snapshot import Snapshot, TrustRoot, TrustScope
from brain.store.authn_files import (
    read_pin,
    read_signature_index,
    store_record,
    store_records,
)
from brain.store.chain import StoreChain
from brain.store.head import Head, read_head, write_head
from brain.store.lock import WriterLock


def chain_of(brain: Brain) -> StoreChain:
    """The decision's view of `brain`: its blobs and its signature index."""
    return StoreChain(brain.blobs, read_signature_index(brain.path).entries)


def records_over(brain: Brain, digest: OciDigest) -> list[SignatureRecord]:
    """The readable records held over `digest` (unreadable ones are skipped, as §9.4 does)."""
    return chain_of(brain).records(digest)


def judge(
    brain: Brain,
    digest: OciDigest | None = None,
    *,
    stance: Stance = Stance.HEAD,
    policy: Policy | None = None,
    newest: TrustRoot | None = None,
) -> Authentication:
    """§9.7 for `digest` (default: the head), with the brain's pin and the head's root as the newest known."""
    head = brain.snapshot()
    target = digest if digest is not None else brain.snapshot_digest()
    if target is None or head is None:
        raise NotFoundError(f"the brain at {brain.path} is empty: there is no snapshot to authenticate")
    chain = chain_of(brain)
    snapshot = chain.snapshot(target)
    if snapshot is None:
        raise NotFoundError(f"snapshot {target} is not stored (or not readable) in {brain.path}")
    return authenticate(
        chain, target, snapshot, pin=read_pin(brain.path), newest=newest or head.trust_root, stance=stance,
        policy=policy,
    )


def change_of(brain: Brain, snapshot: Snapshot) -> Change:
    """§9.6 for `snapshot` against its first parent in `brain`."""
    chain = chain_of(brain)
    parent = None if snapshot.first_parent is None else chain.snapshot(snapshot.first_parent)
    return required_scopes(chain, snapshot, parent)


def signing_root(brain: Brain, snapshot: Snapshot) -> TrustRoot | None:
    """The trust root a signature over `snapshot` is judged against (its first parent's; a genesis: its own)."""
    if snapshot.first_parent is None:
        return snapshot.trust_root
    parent = chain_of(brain).snapshot(snapshot.first_parent)
    return None if parent is None else parent.trust_root


def refusal(root: TrustRoot | None, signer: Signer, needed: Iterable[TrustScope], what: str) -> RefusedError | None:
    """Why `signer` may not sign `what` needing `needed` under `root`, or None when it may."""
    key = signer.public_key
    if root is None:
        return RefusedError(
            f"cannot sign {what} with {key.fingerprint}: the brain has no trust root, so no key is authorized",
            hint="create a governed brain with `brain init --trust-key PUBKEY --sign-with KEY`",
        )
    entry = entry_for(root, key)
    if entry is None:
        return RefusedError(
            f"cannot sign {what}: key {key.fingerprint} is not listed in trust root revision {root.revision}",
            hint="sign with a listed key (see `brain trust show`), or add this one with `brain trust rotate`",
        )
    if is_retired(entry, root.revision):
        return RefusedError(f"cannot sign {what}: key {key.fingerprint} is retired from revision {entry.retired_from}")
    missing = set(needed) - set(entry.scopes)
    if missing:
        names = ", ".join(str(s) for s in sorted_scopes(missing))
        return RefusedError(
            f"cannot sign {what}: key {key.fingerprint} lacks scope {names} (it holds "
            f"{', '.join(str(s) for s in entry.scopes)})",
            hint="sign with a key that holds it, or grant it with `brain trust rotate`",
        )
    return None


def sign_snapshot(
    brain: Brain,
    signer: Signer,
    digest: OciDigest | None = None,
    *,
    check_scopes: bool = True,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> tuple[SignatureRecord, bool]:
    """Sign snapshot `digest` (default: the head) claiming the scopes §9.6 requires; (record, newly stored).

    With `check_scopes`, a key the trust root does not grant those scopes is refused and nothing is written.
    """
    target = digest if digest is not None else brain.snapshot_digest()
    if target is None:
        raise RefusedError(f"the brain at {brain.path} is empty: there is no snapshot to sign")
    snapshot = brain.snapshot(target)
    assert snapshot is not None
    change = change_of(brain, snapshot)
    if check_scopes:
        problem = refusal(signing_root(brain, snapshot), signer, change.possible, f"snapshot {target.short}")
        if problem is not None:
            raise problem
    record = make_record(signer, snapshot.to_bytes(), change.scopes)
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        _, added = store_record(brain.path, brain.blobs, record)
    return record, added


def add_record(
    brain: Brain, record: SignatureRecord, *, lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None
) -> bool:
    """Store a record made elsewhere (a countersignature, a pulled record); True if it was new."""
    if not brain.blobs.has(record.snapshot):
        raise NotFoundError(f"the record is over snapshot {record.snapshot}, which is not stored in {brain.path}")
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        return store_record(brain.path, brain.blobs, record)[1]


def governed_genesis(root: TrustRoot, labels: dict[str, str] | None = None, created_at: str | None = None) -> Snapshot:
    """The genesis of a governed brain (§5.3, §9.5): no parent, no modules, the trust root, optional labels."""
    return Snapshot(created_at=created_at or utc_timestamp(), modules={}, labels=labels or None, trust_root=root)


def write_snapshot_signed(
    brain: Brain,
    snapshot: Snapshot,
    records: Iterable[SignatureRecord],
    *,
    expect_head: OciDigest | None,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> OciDigest:
    """Store `snapshot` and its records, then move the head to it (head last); the head must still be `expect_head`.

    For snapshots the writer does not make: a governed genesis and a trust-root revision.
    """
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        head = read_head(brain.path)
        current = None if head is None else head.snapshot
        if current != expect_head:
            raise ConflictError(
                f"the head of {brain.path} moved (now {current}, expected {expect_head}) while this was prepared",
                hint="run the command again",
            )
        digest = brain.blobs.put(snapshot.to_bytes(), sync=False)
        brain.blobs.sync()
        store_records(brain.path, brain.blobs, records)
        write_head(brain.path, Head.first(digest) if head is None else head.advance(digest, origin=head.origin))
    return digest


def plan_refusal(brain: Brain, plan: Snapshot, signer: Signer) -> RefusedError | None:
    """Why `signer` may not countersign the revision `plan` (its key must hold govern where the plan's parent is)."""
    parent = None if plan.first_parent is None else chain_of(brain).snapshot(plan.first_parent)
    if parent is None:
        return None  # not our copy of that brain: the apply step judges the record
    return refusal(parent.trust_root, signer, {TrustScope.GOVERN}, f"the revision plan {plan.digest.short}")


def plan_revision(brain: Brain, change: RootChange) -> tuple[OciDigest, Snapshot]:
    """The revision snapshot a rotation makes on top of the head: (head digest, plan)."""
    head_digest = brain.snapshot_digest()
    head = brain.snapshot()
    if head_digest is None or head is None:
        raise RefusedError(f"the brain at {brain.path} is empty: nothing to rotate")
    if head.trust_root is None:
        raise RefusedError(
            f"the brain at {brain.path} is not governed: it has no trust root to rotate",
            hint="a trust root can only be introduced by a governed `brain init`",
        )
    root = revise(head.trust_root, change)
    return head_digest, revision_snapshot(head_digest, head, root, utc_timestamp())


def apply_revision(
    brain: Brain,
    plan: Snapshot,
    records: Iterable[SignatureRecord],
    *,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> tuple[OciDigest, Authentication]:
    """Move the head to the revision `plan` once its records meet the quorum §9.7 asks; refuses otherwise."""
    head_digest = brain.snapshot_digest()
    if plan.first_parent is None or plan.first_parent != head_digest:
        raise ConflictError(
            f"the plan {plan.digest.short} was made on {plan.first_parent}, but the head is {head_digest}",
            hint="plan the rotation again on the current head",
        )
    records = [r for r in records if r.snapshot == plan.digest]
    chain = chain_of(brain)
    auth = authenticate(chain, plan.digest, plan, records, pin=read_pin(brain.path), newest=plan.trust_root)
    if auth.state is not State.AUTHORIZED:
        codes = ", ".join(f"{f.code} ({f.detail})" for f in auth.blocking) or str(auth.state)
        raise RefusedError(
            f"the revision {plan.digest.short} is not approved: {codes}",
            hint=f"it needs {auth.quorum_required or 1} govern signature(s) from the keys in force: "
            "`brain trust rotate --plan FILE`, then `brain sign --document FILE` by each holder",
        )
    digest = write_snapshot_signed(
        brain, plan, records, expect_head=head_digest, lock_timeout=lock_timeout, on_wait=on_wait
    )
    return digest, auth
