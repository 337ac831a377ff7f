"""The lifecycle commands' view of the ledger, from the lineage log (`ingest.lineage`): the edges a drop
cascades over, who made what, supersessions and demotions, origins, without decoding every provenance block.

`graph_of(brain, snapshot)` loads the log when it describes `snapshot`; else, when the snapshot the log
describes is an earlier state of `snapshot`'s ledger, reads only the members added since and appends their
facts; else rebuilds it from the snapshot's provenance, semantic and procedural members once (and writes
the log, unless told not to);
`log_commit` appends what a lifecycle commit added, so the next command (or ingest) finds it current.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from brain.blocks import Block, MemoryType
from brain.blocks.provenance import Producer
from brain.brain import Brain
from brain.concurrency import PARALLEL_THRESHOLD
from brain.errors import BrainError
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


def lineage_of(brain: Brain, snapshot: OciDigest, *, persist: bool = True,
               threshold: int = PARALLEL_THRESHOLD) -> Lineage:
    """The lineage of `snapshot`: the log if it describes it; else the log caught up with what `snapshot` added
    over the snapshot the log describes (`caught_up`); else rebuilt from the blocks. Logged unless told not to."""
    return _lineage(brain, snapshot, persist, threshold)[0]


def _lineage(brain: Brain, snapshot: OciDigest, persist: bool, threshold: int) -> tuple[Lineage, str]:
    """`lineage_of`, and how it was found: "logged", "caught up from <snapshot>" or "rebuilt"."""
    log = LineageLog(brain.path)
    found = log.read()
    if found is not None and found[1] == str(snapshot):
        return found[0], "logged"
    caught = None if found is None else caught_up(brain, found, snapshot, threshold=threshold)
    if caught is not None:
        lineage, facts = caught
        if persist:
            log.append(facts, snapshot)
        assert found is not None
        return lineage, f"caught up from {found[1]} ({len(facts):,} facts)"
    provenance = readable_members(brain, snapshot, [MemoryType.PROVENANCE])
    lineage, facts = read_lineage(brain.path, provenance, readable_members(brain, snapshot, _LINKED),
                                  threshold=threshold)
    if persist:
        log.rewrite(facts, snapshot)
    return lineage, "rebuilt"


def caught_up(brain: Brain, logged: tuple[Lineage, str], snapshot: OciDigest, *,
              threshold: int = PARALLEL_THRESHOLD) -> tuple[Lineage, list[Fact]] | None:
    """The log's lineage (`logged`: what `LineageLog.read` gives) brought to `snapshot` by reading only the
    provenance, semantic and procedural members `snapshot` has and the logged snapshot has not, and the facts
    read (what to append); None when that would not be `snapshot`'s lineage or would not be cheaper.

    Appending them is what `log_commit` would have done, commit by commit, had whoever moved the head (a tool
    without the hook, a pull, a kill between commit and append) logged its commits: it holds only when every
    readable provenance member of the logged snapshot is still one of `snapshot`'s (the ledger only grows
    along a history; facts of semantic and procedural blocks since dropped are ignored by readers, as after a
    drop). Another branch, a reset to an older snapshot or a redaction fails that test, and so does a logged
    snapshot that can no longer be read: the caller rebuilds the log from the blocks.
    """
    lineage, logged_at = logged
    try:
        since = OciDigest.parse(logged_at)
        old_provenance = set(readable_members(brain, since, [MemoryType.PROVENANCE]))
        old_linked = set(readable_members(brain, since, _LINKED))
    except (BrainError, ValueError):
        return None
    provenance = readable_members(brain, snapshot, [MemoryType.PROVENANCE])
    if not old_provenance.issubset(provenance):
        return None
    linked = readable_members(brain, snapshot, _LINKED)
    new_provenance = [b for b in provenance if b not in old_provenance]
    new_linked = [b for b in linked if b not in old_linked]
    if 2 * (len(new_provenance) + len(new_linked)) > len(provenance) + len(linked):
        return None  # most of it is new: a rebuild reads as much and leaves no stale facts behind
    _, facts = read_lineage(brain.path, new_provenance, new_linked, threshold=threshold)
    for fact in facts:
        lineage.apply(fact)
    return lineage, facts


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


def bring_up_to_date(brain: Brain, *, lock_timeout: float | None = 0.0) -> str | None:
    """Make the log describe the brain's head, for a long-running reader (`brain serve`) before it serves.

    Its block pages read the few records the log names about a block; a stale log leaves them the whole
    ledger, read again by every process and never written back (a reader does not write the log). Run once
    at start, under the writer lock (a commit appends to the log under it): the log caught up with what the
    head added since the snapshot the log describes, or rebuilt once. A lock held by a writer, or a brain
    directory this user cannot write, leaves the log as it is. Returns what was done, for the server's log.
    """
    from brain.store.lock import WriterLock  # a writer's module: not for the readers of the log

    head = brain.snapshot_digest()
    found = LineageLog(brain.path).read(frozenset())  # every line checked, none indexed
    if head is None or (found is not None and found[1] == str(head)):
        return None
    try:
        with WriterLock(brain.path, timeout=lock_timeout, sweep_blobs=False):
            head = brain.snapshot_digest()
            assert head is not None
            how = _lineage(brain, head, True, PARALLEL_THRESHOLD)[1]
    except (BrainError, OSError) as e:
        return f"the lineage log stays stale ({getattr(e, 'message', e)}): block pages read the whole ledger"
    return None if how == "logged" else f"the lineage log of {head} was {how}"
