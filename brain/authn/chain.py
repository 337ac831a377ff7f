"""What the decision reads from a brain, as a protocol (`ChainStore`), and walks over it.

The decision (`brain.authn.decision`) asks for snapshots, composition members, provenance facts and
signature records by digest; "not held" and "unreadable" are both None, because §9.6-§9.7 treat them
alike (an open question, a truncation). The implementation over a brain's blobs is
`brain.store.chain.StoreChain`; tests and the pull path hand in others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import orjson

from brain.authn.records import SignatureRecord
from brain.composition import ModuleRef
from brain.identity import OciDigest
from brain.snapshot import Snapshot


class LedgerFacts(NamedTuple):
    """What authentication reads from one provenance record: its type and actor; for a removal, what it removed."""

    record_type: str
    actor: str
    mechanism: str | None = None
    memory_type: str | None = None
    blocks: tuple[str, ...] = ()


def ledger_facts_of(data: bytes) -> LedgerFacts | None:
    """The facts of a provenance block's stored bytes (already hash-checked), or None if it is not one.

    Only the members authentication needs are read; whether the block is otherwise valid is integrity's
    question (`brain verify` reports it), and an unexpected shape here simply counts as unreadable.
    """
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    payload = document.get("payload") if isinstance(document, dict) else None
    record = (
        payload.get("record") if isinstance(payload, dict) and document.get("memory_type") == "provenance" else None
    )
    if not isinstance(record, dict):
        return None
    actor: Any = record.get("actor")
    kind = record.get("record_type")
    if not isinstance(actor, dict) or not isinstance(actor.get("id"), str) or not isinstance(kind, str):
        return None
    if kind != "removal":
        return LedgerFacts(kind, actor["id"])
    blocks = record.get("blocks")
    if not isinstance(blocks, list) or not all(isinstance(b, str) for b in blocks):
        return None
    mechanism, memory_type = record.get("mechanism"), record.get("memory_type")
    if not isinstance(mechanism, str) or not isinstance(memory_type, str):
        return None
    return LedgerFacts(kind, actor["id"], mechanism, memory_type, tuple(blocks))


class ChainStore(Protocol):
    """Read access to snapshots, compositions, ledger records and signature records."""

    def snapshot(self, digest: OciDigest) -> Snapshot | None:
        """The stored snapshot `digest`, or None when it is not held or unreadable."""
        ...

    def member_ids(self, ref: ModuleRef) -> frozenset[str] | None:
        """The member ids (`sha256:<hex>` strings) of the composition a reference names, or None when not held."""
        ...

    def ledger_facts(self, block_ids: Sequence[str]) -> dict[str, LedgerFacts | None]:
        """What each provenance block records (None when it is not held or unreadable), read as a batch."""
        ...

    def records(self, snapshot: OciDigest) -> Sequence[SignatureRecord]:
        """The signature records held over `snapshot`."""
        ...


def first_parent_walk(
    chain: ChainStore, start: OciDigest, snapshot: Snapshot
) -> tuple[list[tuple[OciDigest, Snapshot]], bool]:
    """`start` and its first-parent ancestors while held, and whether the walk was truncated."""
    walk = [(start, snapshot)]
    seen = {start}
    parent = snapshot.first_parent
    while parent is not None:
        if parent in seen:
            return walk, True  # a cycle cannot be a real history
        held = chain.snapshot(parent)
        if held is None:
            return walk, True
        walk.append((parent, held))
        seen.add(parent)
        parent = held.first_parent
    return walk, False


def descends_from(chain: ChainStore, start: OciDigest, snapshot: Snapshot, marker: OciDigest) -> bool | None:
    """Whether `start` is `marker` or descends from it through any parent; None when undecidable."""
    pending = [(start, snapshot)]
    seen: set[OciDigest] = set()
    complete = True
    while pending:
        digest, current = pending.pop()
        if digest == marker:
            return True
        if digest in seen:
            continue
        seen.add(digest)
        for parent in current.parent_digests:
            if parent == marker:
                return True
            held = chain.snapshot(parent)
            if held is None:
                complete = False
            else:
                pending.append((parent, held))
    return False if complete else None
