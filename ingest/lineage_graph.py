"""The lifecycle commands' view of the ledger, from the lineage log (`ingest.lineage`): the edges a drop
cascades over, who made what, supersessions and demotions, origins, without decoding every provenance block.

`graph_of(brain, snapshot)` loads the log when it describes `snapshot`, else rebuilds it from the
snapshot's provenance, semantic and procedural members once (and rewrites it, unless told not to);
`log_commit` appends what a lifecycle commit added, so the next command (or ingest) finds it current.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from brain.blocks import Block, MemoryType
from brain.blocks.provenance import Producer
from brain.brain import Brain
from brain.identity import BlockId, OciDigest
from ingest.lineage import Fact, Lineage, LineageLog, facts_of_block, read_lineage

_LINKED = (MemoryType.SEMANTIC, MemoryType.PROCEDURAL)


class LineageGraph:
    """`brain.lifecycle.graph.DependencyGraph` over a `Lineage` (hex keys turned into block ids)."""

    def __init__(self, lineage: Lineage) -> None:
        self.lineage = lineage
        self._origins: dict[str, str] | None = None

    def evidence_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return map(BlockId, self.lineage.dependents.get(block.hex, ()))

    def structural_dependents(self, block: BlockId) -> Iterable[BlockId]:
        return map(BlockId, self.lineage.linked.get(block.hex, ()))

    def made_by(self, producer: Producer) -> set[BlockId]:
        kind, pid, version = producer.kind.value, producer.id, producer.version
        return {
            BlockId(block)
            for block, made in self.lineage.producers.items()
            if made[0] == kind and made[1] == pid and (version is None or made[2] == version)
        }

    def winners(self, loser: BlockId) -> tuple[BlockId, ...]:
        return tuple(BlockId(w) for w in sorted(self.lineage.superseded_by.get(loser.hex, ())))

    def is_demoted(self, block: BlockId) -> bool:
        return block.hex in self.lineage.demoted

    def origin(self, block: BlockId) -> str | None:
        if self._origins is None:
            self._origins = {b: origin for origin, blocks in self.lineage.origins.items() for b in blocks}
        return self._origins.get(block.hex)

    def evidence(self, block: BlockId) -> tuple[BlockId, ...]:
        return tuple(map(BlockId, self.lineage.evidence.get(block.hex, ())))


def readable_members(brain: Brain, snapshot: OciDigest, memory_types: Sequence[MemoryType]) -> list[BlockId]:
    """The members of `memory_types` at `snapshot` whose bytes exist (redacted ones excluded)."""
    modules = brain.modules(snapshot)
    found: list[BlockId] = []
    for memory_type in memory_types:
        module = modules.get(memory_type)
        if module is not None:
            tombstones = module.tombstones
            found += [b for b in module.block_ids if b not in tombstones]
    return found


def lineage_of(brain: Brain, snapshot: OciDigest, *, persist: bool = True) -> Lineage:
    """The lineage of `snapshot`: the log if it describes it, else rebuilt from the blocks (and logged)."""
    log = LineageLog(brain.path)
    found = log.load(snapshot)
    if found is not None:
        return found
    provenance = readable_members(brain, snapshot, [MemoryType.PROVENANCE])
    lineage, facts = read_lineage(brain.path, provenance, readable_members(brain, snapshot, _LINKED))
    if persist:
        log.rewrite(facts, snapshot)
    return lineage


def graph_of(brain: Brain, snapshot: OciDigest, *, persist: bool = True) -> LineageGraph:
    """The dependency graph of `snapshot` (see the module docstring)."""
    return LineageGraph(lineage_of(brain, snapshot, persist=persist))


def log_commit(brain: Brain, parent: OciDigest, snapshot: OciDigest, added: Iterable[Block]) -> None:
    """`snapshot` was committed on `parent`, adding `added`: log their facts if the log describes `parent`
    (otherwise it stays stale and is rebuilt when next needed)."""
    log = LineageLog(brain.path)
    if log.last_snapshot() != str(parent):
        return
    facts: list[Fact] = [fact for block in added for fact in facts_of_block(block)]
    log.append(facts, snapshot)
