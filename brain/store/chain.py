"""`StoreChain`: the authentication decision's reads (`brain.authn.chain.ChainStore`) over a brain's blobs.

Every read is hash-checked; what is missing or unreadable is None (the decision turns that into an open
question or a truncation). Composition members and provenance facts are read lightly (ids, record type,
actor, removals): their full validity is integrity's check, which `brain verify` runs beside this.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import orjson

from brain.authn.chain import LedgerFacts, ledger_facts_of
from brain.authn.records import RecordDecodeError, SignatureRecord
from brain.composition import ModuleRef
from brain.errors import BrainError
from brain.identity import OciDigest
from brain.snapshot import Snapshot
from brain.store.blobs import BlobStore
from brain.identity.rehash import DigestMismatch, decode_rehashed

_MAX_RECORD_BLOCK = 1 << 20


class StoreChain:
    """`ChainStore` over a brain's blob store and a snapshot -> record digests map (its signature index)."""

    def __init__(self, blobs: BlobStore, index: Mapping[str, Sequence[OciDigest]]) -> None:
        self.blobs = blobs
        self.index = index
        self._snapshots: dict[OciDigest, Snapshot | None] = {}
        self._members: dict[OciDigest, frozenset[str] | None] = {}
        self._facts: dict[str, LedgerFacts | None] = {}
        self._directory = str(blobs.directory)

    def snapshot(self, digest: OciDigest) -> Snapshot | None:
        if digest not in self._snapshots:
            try:
                self._snapshots[digest] = Snapshot.decode(self.blobs.get(digest), digest)
            except BrainError:
                self._snapshots[digest] = None
        return self._snapshots[digest]

    def member_ids(self, ref: ModuleRef) -> frozenset[str] | None:
        # The bytes are the ones the snapshot names (hash-checked); that they form a valid composition with
        # the stated root is integrity's check, so only the id list is read here (cheap at 10^5 members).
        if ref.composition not in self._members:
            ids = None
            try:
                document = orjson.loads(self.blobs.get(ref.composition))
                listed = document.get("block_ids") if isinstance(document, dict) else None
                if isinstance(listed, list) and all(isinstance(i, str) for i in listed):
                    ids = frozenset(listed)
            except (BrainError, orjson.JSONDecodeError):
                ids = None
            self._members[ref.composition] = ids
        return self._members[ref.composition]

    def ledger_facts(self, block_ids: Sequence[str]) -> dict[str, LedgerFacts | None]:
        # Read one after the other: threads were measured slower here (the files are small, the GIL is held
        # for hashing and parsing).
        self._facts.update((b, self._read_facts(b)) for b in dict.fromkeys(block_ids) if b not in self._facts)
        return {b: self._facts[b] for b in block_ids}

    def _read_facts(self, block_id: str) -> LedgerFacts | None:
        hex_digest = block_id.removeprefix("sha256:")
        try:
            fd = os.open(os.path.join(self._directory, hex_digest), os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            data = os.read(fd, _MAX_RECORD_BLOCK + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        if len(data) > _MAX_RECORD_BLOCK:
            return None
        try:
            return decode_rehashed(data, hex_digest, ledger_facts_of)
        except DigestMismatch:
            return None

    def records(self, snapshot: OciDigest) -> list[SignatureRecord]:
        found = []
        for digest in self.index.get(str(snapshot), ()):
            try:
                found.append(SignatureRecord.decode(self.blobs.get(digest), digest))
            except (RecordDecodeError, BrainError):
                continue
        return found
