"""The read-only Python API a LlamaIndex or LangChain retriever wraps: `open`, `records`, `show`, `evidence`, `search`.

`open(path)` opens a brain for reading (it never takes the writer lock and never writes the brain; `search`
keeps the `retrieval` package's index under `boltzmann/search/`). Records are read
one block at a time from the current snapshot; what is kept in memory is the ledger's views (built from the
provenance module once, on first use), never the blocks or their text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.errors import NotFoundError
from brain.frozen import FrozenModel
from brain.identity import BlockId, OciDigest, is_digest_string
from brain.ledger import Ledger
from export.records import EXPORTED_TYPES, KnowledgeRecord, record_of

if TYPE_CHECKING:
    from export.search import Hit

MAX_VIEW_BYTES = 64 << 20


class EvidenceBundle(FrozenModel):
    """A block and the sources it cites, each with origin, locator and the source's text: what an answer cites."""

    block: KnowledgeRecord
    sources: list[KnowledgeRecord]


class BrainReader:
    """A brain opened for reading by frameworks (see `open`)."""

    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self.snapshot: OciDigest | None = brain.snapshot_digest()
        self._modules = brain.modules() if self.snapshot is not None else {}

    @cached_property
    def ledger(self) -> Ledger:
        """The ledger views of the current snapshot (provenance only: accessibility, evidence, origins)."""
        provenance = self._modules.get(MemoryType.PROVENANCE)
        return Ledger.of({} if provenance is None else {MemoryType.PROVENANCE: provenance})

    def _text(self, digest: OciDigest) -> str | None:
        if not self.brain.blobs.has(digest) or self.brain.blobs.size(digest) > MAX_VIEW_BYTES:
            return None
        return self.brain.blobs.get(digest).decode("utf-8", errors="replace")

    def records(
        self, types: Iterable[MemoryType | str] | None = None, *, provenance: bool = False
    ) -> Iterator[KnowledgeRecord]:
        """Every accessible block of `types` (default: canonical, semantic, procedural, episodic), one at a time."""
        wanted = [MemoryType(t) for t in types] if types is not None else list(EXPORTED_TYPES)
        if provenance and MemoryType.PROVENANCE not in wanted:
            wanted.append(MemoryType.PROVENANCE)
        for memory_type in wanted:
            module = self._modules.get(memory_type)
            if module is None:
                continue
            for block in module.blocks():
                if memory_type is MemoryType.PROVENANCE or self.ledger.is_accessible(block.block_id):
                    yield record_of(block, self.ledger, self.snapshot, self._text)

    def _resolve(self, block: str | BlockId) -> BlockId:
        if isinstance(block, BlockId):
            return block
        if is_digest_string(block):
            return BlockId.parse(block)
        origin = self._by_origin(block)
        return origin if origin is not None else self.brain.resolve_prefix(block)

    def _by_origin(self, origin: str) -> BlockId | None:
        canonical = self._modules.get(MemoryType.CANONICAL)
        matches = [
            b for b, r in self.ledger.registrations.items() if r.origin == origin and canonical and b in canonical
        ]
        return matches[-1] if matches else None

    def show(self, block: str | BlockId) -> KnowledgeRecord:
        """One block by id, id prefix, or (for a source) its origin as recorded; `NotFoundError` if absent."""
        block_id = self._resolve(block)
        if not any(block_id in module for module in self._modules.values()):
            raise NotFoundError(f"{block} is not a member of the current snapshot", hint="see `brain ls`")
        return record_of(self.brain.resolve(block_id), self.ledger, self.snapshot, self._text)

    def evidence(self, block: str | BlockId) -> EvidenceBundle:
        """`block` with the sources it cites (their text included), for an answer that shows its evidence."""
        record = self.show(block)
        sources = [self.show(item.id) for item in record.evidence if any(item.id in m for m in self._modules.values())]
        return EvidenceBundle(block=record, sources=sources)


    def search(self, query: str, k: int = 5, *, types: tuple[str, ...] = (), subject: str | None = None) -> list[Hit]:
        """The `k` best matches for `query`, with verified evidence (the `retrieval` package's index)."""
        from export.search import search

        return search(self, query, k, types=types, subject=subject)


def open(path: str | Path) -> BrainReader:
    """Open the brain at `path` for reading (`NotABrainError` if it is not one)."""
    return BrainReader(Brain.open(Path(path)))
