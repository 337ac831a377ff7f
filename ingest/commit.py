"""Staging what a run produces: blocks, the provenance records §3.7 asks for, and the gate's view of the brain.

A run writes only through a `Sink`: the brain's `Writer` (under its lock), or `DryRunSink`, which hashes
everything and stores nothing, so `--dry-run` follows exactly the same path. `Stager` keeps one mutable
member set per module (read from the sink once), so membership checks and the gate's context cost O(1)
per source instead of copying a module's member set every time.

Crash safety: blobs are written unsynced and made durable by the writer's one filesystem sync inside
`commit()`, before the head moves; a blob is referenced only by a snapshot written after that sync, so a
kill at any moment leaves the previous head naming only durable bytes (leftover unreferenced blobs are
harmless). All records of one source are staged before the next checkpoint can run, so a snapshot holds
a source's canonical block, its records and its derived blocks together, or none of them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol, cast

from brain.blocks import Block, MemoryType, Verdict
from brain.blocks.canonical import CanonicalBlock
from brain.blocks.provenance import (
    Actor,
    ActorKind,
    DerivationRecord,
    DemotionRecord,
    NormalizationRecord,
    Producer,
    ProducerKind,
    ProvenanceBlock,
    RegistrationRecord,
    SupersessionRecord,
    ValidationRecord,
)
from brain.identity import BlockId, OciDigest, utc_timestamp
from ingest.lineage import statement_of
from ingest.validate import ContradictionKey, GateContext, ValidatedCandidate

if TYPE_CHECKING:
    from brain.brain import Brain
    from ingest.proposers.candidates import CandidateSet


class Sink(Protocol):
    """The write surface a run needs (`brain.writer.Writer` satisfies it; `DryRunSink` subclasses it)."""

    def put_blob_stream(
        self, chunks: Iterable[bytes], expected: OciDigest | None = None
    ) -> tuple[OciDigest, int]: ...  # noqa: D102

    def put_blob(self, data: bytes) -> OciDigest: ...  # noqa: D102

    def put_blob_later(self, data: bytes) -> OciDigest:
        """`put_blob` for bytes nothing reads back before the next commit; the writer stores them in the
        background. The default stores them now."""
        return self.put_blob(data)

    def add(self, block: Block) -> bool: ...  # noqa: D102

    def members(self, memory_type: MemoryType) -> frozenset[BlockId]: ...  # noqa: D102

    def live_members(self, memory_type: MemoryType) -> set[BlockId] | None:
        """The sink's own live member set of a module (committed plus staged), kept current by `add`, for
        callers that only read it; None (the default) when the sink keeps none to share."""
        return None

    def commit(self, labels: dict[str, str] | None = None) -> OciDigest | None: ...  # noqa: D102


class DryRunSink(Sink):
    """A sink that computes every digest and membership change but writes nothing."""

    def __init__(self, brain: Brain) -> None:
        self._modules = brain.modules()
        self._added: dict[MemoryType, set[BlockId]] = {}

    def put_blob_stream(self, chunks: Iterable[bytes], expected: OciDigest | None = None) -> tuple[OciDigest, int]:
        """Hash the stream (it is still read in full, in constant memory)."""
        sha, size = hashlib.sha256(), 0
        for chunk in chunks:
            sha.update(chunk)
            size += len(chunk)
        return OciDigest(sha.hexdigest()), size

    def put_blob(self, data: bytes) -> OciDigest:
        """The digest `data` would be stored under."""
        return OciDigest.of(data)

    def add(self, block: Block) -> bool:
        """True if `block` would become a new member."""
        memory_type = block.memory_type
        module = self._modules.get(memory_type)
        if module is not None and block.block_id in module:
            return False
        added = self._added.setdefault(memory_type, set())
        if block.block_id in added:
            return False
        added.add(block.block_id)
        return True

    def members(self, memory_type: MemoryType) -> frozenset[BlockId]:
        """Committed members plus what this dry run would add."""
        module = self._modules.get(memory_type)
        return (module.members if module is not None else frozenset()) | self._added.get(memory_type, set())

    def commit(self, labels: dict[str, str] | None = None) -> OciDigest | None:
        """Nothing is ever committed."""
        return None


def acting_actor(actor_id: str) -> Actor:
    """The `actor` object for a validated id: an address is a person, a namespaced id an agent."""
    return Actor(id=actor_id, kind=ActorKind.HUMAN if "@" in actor_id else ActorKind.AGENT)


class Members:
    """The live member set of each module (committed plus staged): the sink's own when it shares one (the
    writer's: no second copy of every member id), else read from the sink once per module."""

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._sets: dict[MemoryType, set[BlockId]] = {}

    def of(self, memory_type: MemoryType) -> set[BlockId]:
        """The live member set of one module (the stager adds to it as it stages)."""
        found = self._sets.get(memory_type)
        if found is None:
            live = getattr(self._sink, "live_members", None)  # a sink may follow the protocol without subclassing
            shared = None if live is None else live(memory_type)
            found = self._sets[memory_type] = set(self._sink.members(memory_type)) if shared is None else shared
        return found

    def has(self, memory_type: MemoryType, block_id: BlockId) -> bool:
        """Whether `block_id` is (or is staged to become) a member of `memory_type`'s module."""
        return block_id in self.of(memory_type)


class StagedLineage(Protocol):
    """What the stager tells the run's lineage (`ingest.replace.RunLineage`) and asks it for."""

    def staged(self, block: Block) -> None:
        """`block` just became a member."""
        ...

    def statements(self) -> dict[ContradictionKey, list[tuple[str, BlockId]]]:
        """The member semantic statements the gate compares new ones with."""
        ...


class Stager:
    """Stages blocks and their records through a sink, tracking membership and the gate's context."""

    def __init__(
        self,
        sink: Sink,
        actor: Actor,
        members: Members,
        lineage: StagedLineage,
        blob_size: Callable[[OciDigest], int | None],
    ) -> None:
        self.sink = sink
        self.actor = actor
        self._members = members
        self._lineage = lineage  # told of every block that becomes a member; holds the statements
        self._blob_size = blob_size
        # Blobs put in the background this run: not on disk yet, but stored by the next commit.
        self.deferred_sizes: dict[OciDigest, int] = {}
        self._statements: dict[ContradictionKey, list[tuple[str, BlockId]]] | None = None
        self.blocks_added = 0
        # The ids registered and cited since the last checkpoint, by `sha256:` string: a derived block's evidence
        # (its source, cited by each block derived from it) is then the registered id itself, not another copy
        # of it that the run's lineage would hold to the end (~240 bytes a source).
        self._ids: dict[str, BlockId] = {}

    def members(self, memory_type: MemoryType) -> set[BlockId]:
        """The live member set of one module (committed plus staged)."""
        return self._members.of(memory_type)

    def is_member(self, memory_type: MemoryType, block_id: BlockId) -> bool:
        """Whether `block_id` is (or is staged to become) a member of `memory_type`'s module."""
        return self._members.has(memory_type, block_id)

    def add(self, block: Block) -> bool:
        """Stage one block; True if it became a new member."""
        added = self.sink.add(block)
        if added:
            self.members(block.memory_type).add(block.block_id)
            self.blocks_added += 1
            self._lineage.staged(block)
            if self._statements is not None and (stated := statement_of(block)) is not None:
                key, statement = stated
                self._statements.setdefault(key, []).append((statement, block.block_id))
        return added

    def register(
        self,
        canonical: CanonicalBlock,
        *,
        origin: str | None,
        license: str | None,
        pipeline: tuple[str, str] | None,
        supersedes: Sequence[BlockId] = (),
    ) -> bool:
        """Add a canonical block with its registration (and normalization) record; False if already a member.

        `supersedes` names the previous versions of the same origin (§3.7 "replace source"): each gets a
        `supersession` record (no reason) sharing the registration's timestamp.
        """
        if not self.add(canonical):
            return False
        self._ids[str(canonical.block_id)] = canonical.block_id
        at = utc_timestamp()
        self.add(
            ProvenanceBlock(
                record=RegistrationRecord(
                    actor=self.actor, at=at, block=canonical.block_id, origin=origin, license=license
                )
            )
        )
        for old in supersedes:
            record = SupersessionRecord(actor=self.actor, at=at, block=canonical.block_id, supersedes=old)
            self.add(ProvenanceBlock(record=record))
        if pipeline is not None:
            name, version = pipeline
            normalization = NormalizationRecord(
                actor=self.actor, at=utc_timestamp(), block=canonical.block_id, pipeline=name, pipeline_version=version
            )
            self.add(ProvenanceBlock(record=normalization))
        return True

    def demote(self, block_ids: Iterable[BlockId], reason: str) -> int:
        """Stage one `demotion` record per block (they stay members); returns how many were written."""
        at = utc_timestamp()
        return sum(
            self.add(ProvenanceBlock(record=DemotionRecord(actor=self.actor, at=at, block=b, reason=reason)))
            for b in block_ids
        )

    def commit_validated(
        self, validated: ValidatedCandidate, answer: CandidateSet, task_id: str | None, at: str | None = None
    ) -> bool:
        """Add a validated block with its derivation and validation records (§3.7); `at` defaults to now.

        One answer's blocks are one "commit validated candidates" operation, so callers pass one `at` for them.
        """
        block = validated.block
        if not self.add(block):
            return False
        producer = answer.producer or Producer(kind=ProducerKind.ACTOR, id=self.actor.id)
        evidence = tuple(map(self._block_id, dict.fromkeys(validated.candidate.evidence)))
        at = at or utc_timestamp()
        derivation = DerivationRecord(
            actor=self.actor,
            at=at,
            block=block.block_id,
            derived_from=evidence,
            producer=producer,
            task=task_id,
            locator=validated.candidate.locator,
        )
        validation = ValidationRecord(
            actor=self.actor,
            at=at,
            block=block.block_id,
            verdict=Verdict.VALIDATED,
            checks=tuple(sorted(validated.checks)),
            task=task_id,
        )
        self.add(ProvenanceBlock(record=derivation))
        self.add(ProvenanceBlock(record=validation))
        return True

    def _block_id(self, text: str) -> BlockId:
        found = self._ids.get(text)
        if found is None:
            found = self._ids[text] = BlockId.parse(text)
        return found

    def put_blob_later(self, data: bytes) -> OciDigest:
        """Store bytes nothing reads back before the next checkpoint (in the background when the sink can)."""
        digest = self.sink.put_blob_later(data)
        self.deferred_sizes[digest] = len(data)
        return digest

    def blob_size(self, digest: OciDigest) -> int | None:
        """The size of a stored (or deferred) blob, None if it is not stored."""
        size = self.deferred_sizes.get(digest)
        return size if size is not None else self._blob_size(digest)

    def gate_context(self) -> GateContext:
        """The gate's view of the brain: live member sets and the member semantic statements.

        Built on first use (a run that proposes nothing never needs the statements) and kept current by
        `add`, so it is never rebuilt per source.
        """
        if self._statements is None:
            self._statements = self._lineage.statements()
        members = {t: self.members(t) for t in MemoryType}
        # The gate only tests membership and iterates statements; live sets stand in for its frozen ones.
        return GateContext(
            members=cast("dict[MemoryType, frozenset[BlockId]]", members),
            statements=cast("dict[ContradictionKey, tuple[tuple[str, BlockId], ...]]", self._statements),
            blob_size=self.blob_size,
        )

    def checkpoint(self) -> OciDigest | None:
        """Commit what is staged (a new snapshot if anything changed)."""
        digest = self.sink.commit()
        self._ids.clear()
        if digest is not None:  # the background blobs are stored now: their sizes are read from the store
            self.deferred_sizes.clear()
        return digest
