"""The trust use cases of `brain trust pin|rotate|revoke` and `brain sign --document` (§9.5, §9.7), with the
documents key holders hand each other: a rotation plan (the revision snapshot's exact bytes) and signature
records. Deciding is `brain.authenticity`; this module adds the files and the order.

A pin is written under the writer lock; a plan or a record file is written whole or not at all
(`atomic_write`), so a holder never signs half a plan.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brain.authn.rotation import RootChange
from brain.brain import Brain
from brain.errors import BrainError, InvalidInputError, UsageError
from brain.identity import OciDigest, utc_timestamp
from brain.snapshot import Snapshot, TrustRoot, TrustScope
from brain.store.atomic import atomic_write
from brain.store.user_files import MIB, read_user_file

if TYPE_CHECKING:
    from brain.authn.decision import Authentication
    from brain.authn.records import SignatureRecord
    from brain.authn.signer import Signer
    from brain.authn.trust import TrustPin

OnWait = Callable[[str], None]
MAX_DOCUMENT_BYTES = MIB  # a trust root, rotation plan or signature record is a few KiB


def init_governed(
    path: Path, root: TrustRoot, signer: Signer, *, lock_timeout: float | None = None, on_wait: OnWait | None = None
) -> tuple[Brain, OciDigest, SignatureRecord]:
    """Create a governed brain at `path` whose genesis holds `root`, signed by `signer` (a govern key of it):
    (the brain, the genesis digest, the record). Everything that can fail happens before the directory exists."""
    from brain.authenticity import governed_genesis, refusal, write_snapshot_signed
    from brain.authn.signer import make_record

    problem = refusal(root, signer, {TrustScope.GOVERN}, "the genesis")
    if problem is not None:
        raise problem
    genesis = governed_genesis(root)
    record = make_record(signer, genesis.to_bytes(), {TrustScope.GOVERN})
    brain = Brain.init(path)
    digest = write_snapshot_signed(
        brain, genesis, [record], expect_head=None, lock_timeout=lock_timeout, on_wait=on_wait
    )
    return brain, digest, record


def pin_trust_root(
    brain: Brain, digest: OciDigest | None = None, *, lock_timeout: float | None = None, on_wait: OnWait | None = None
) -> TrustPin:
    """Pin `digest` (a trust root obtained out of band; default: the head's, trusted on first use) in
    `boltzmann/trust.json`, with the chain's genesis when the whole chain is stored."""
    from brain.authenticity import chain_of
    from brain.authn.chain import first_parent_walk
    from brain.authn.trust import PinSource, TrustPin
    from brain.store.authn_files import write_pin
    from brain.store.lock import WriterLock

    head_digest, head = brain.snapshot_digest(), brain.snapshot()
    if head_digest is None or head is None:
        raise UsageError(f"the brain at {brain.path} is empty: pull or init it first")
    if digest is None:
        if head.trust_root is None:
            raise UsageError(
                "the head has no trust root to pin", hint="pin a digest obtained out of band: brain trust pin DIGEST"
            )
        target, source = head.trust_root.digest, PinSource.FIRST_USE
    else:
        target, source = digest, PinSource.OUT_OF_BAND
    walk, truncated = first_parent_walk(chain_of(brain), head_digest, head)
    genesis = None if truncated else walk[-1][0]
    current = brain.head()
    origin = None if current is None else current.origin
    record = TrustPin(
        genesis=genesis, pinned_at=utc_timestamp(), reference=None if origin is None else _repository(origin.reference),
        source=source, trust_root=target,
    )
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        write_pin(brain.path, record)
    return record


def _repository(reference: str) -> str:
    """The `<repo>` a pin records (§9.8): the origin's canonical reference without its tag and digest."""
    name = reference.partition("@")[0]
    head, slash, last = name.rpartition("/")
    return f"{head}{slash}{last.partition(':')[0]}" if slash else name


@dataclass(frozen=True)
class Revision:
    """A trust-root revision: the plan (the snapshot it makes), and once applied its digest and the decision."""

    plan: Snapshot
    digest: OciDigest | None = None
    authentication: Authentication | None = None
    records: tuple[SignatureRecord, ...] = ()

    @property
    def applied(self) -> bool:
        return self.digest is not None


def revise_trust_root(
    brain: Brain,
    change: RootChange,
    signers: Iterable[Signer] = (),
    *,
    plan_file: Path | None = None,
    lock_timeout: float | None = None,
    on_wait: OnWait | None = None,
) -> Revision:
    """Plan the revision `change` makes on the head; write it to `plan_file` for several holders to sign, or
    sign it with `signers` (govern keys, taken once the plan is made) and move the head once their quorum is met."""
    from brain.authenticity import plan_revision
    from brain.authn.signer import make_record

    _, plan = plan_revision(brain, change)
    if plan_file is not None:
        write_document(plan_file, plan.to_bytes())
        return Revision(plan)
    records = [make_record(s, plan.to_bytes(), {TrustScope.GOVERN}) for s in signers]
    if not records:
        raise UsageError("a revision must be signed", hint="add --sign-with KEY, or --plan FILE for several signers")
    return apply_plan(brain, plan, records, lock_timeout=lock_timeout, on_wait=on_wait)


def apply_plan(
    brain: Brain,
    plan: Snapshot,
    records: Iterable[SignatureRecord],
    signers: Iterable[Signer] = (),
    *,
    lock_timeout: float | None = None,
    on_wait: OnWait | None = None,
) -> Revision:
    """Move the head to the revision `plan` with `records` (plus a record by each of `signers`); refused
    (nothing written) unless they meet the govern quorum §9.7 asks."""
    from brain.authenticity import apply_revision
    from brain.authn.signer import make_record

    every = [*records, *(make_record(s, plan.to_bytes(), {TrustScope.GOVERN}) for s in signers)]
    digest, auth = apply_revision(brain, plan, every, lock_timeout=lock_timeout, on_wait=on_wait)
    return Revision(plan, digest, auth, tuple(every))


def sign_plan(brain: Brain | None, plan: Snapshot, signer: Signer, *, output: Path | None = None) -> SignatureRecord:
    """A govern record over the plan's exact bytes (refused when `brain`, our copy, shows the key lacks govern
    where the plan's parent is); written to `output` if given."""
    from brain.authenticity import plan_refusal
    from brain.authn.signer import make_record

    if brain is not None:
        problem = plan_refusal(brain, plan, signer)
        if problem is not None:
            raise problem
    record = make_record(signer, plan.to_bytes(), {TrustScope.GOVERN})
    if output is not None:
        write_document(output, record.to_bytes())
    return record


MAX_DOCUMENT_BYTES = MIB  # a trust root, rotation plan or signature record is a few KiB


def read_plan(path: Path, option: str) -> Snapshot:
    """The rotation plan (a snapshot document) in the file `path`, named by `option` in errors."""
    try:
        data = read_user_file(path, option, MAX_DOCUMENT_BYTES)
    except OSError as e:
        raise UsageError(f"cannot read {option} {path}: {e.strerror}") from None
    try:
        return Snapshot.decode(data)  # a plan is a snapshot document, byte for byte what the head will be
    except BrainError as e:
        raise InvalidInputError(f"{option} {path} is not a rotation plan (a snapshot document): {e.message}") from None


def read_record(path: Path, option: str = "--record") -> SignatureRecord:
    """The signature record in the file `path` (as `brain sign --document -o` writes it)."""
    from brain.authn.records import SignatureRecord

    try:
        return SignatureRecord.decode(read_user_file(path, option, MAX_DOCUMENT_BYTES).rstrip(b"\n"))
    except OSError as e:
        raise UsageError(f"cannot read {option} {path}: {e.strerror}") from None
    except BrainError as e:
        raise InvalidInputError(f"{option} {path} is not a signature record: {e.message}") from None


def write_document(path: Path, data: bytes) -> None:
    """Write a plan or a record file whole (a reader never sees half of it)."""
    atomic_write(Path(path), data)


__all__ = [
    "Revision",
    "apply_plan",
    "init_governed",
    "pin_trust_root",
    "read_plan",
    "read_record",
    "revise_trust_root",
    "sign_plan",
    "write_document",
]
