"""Replacing a changed source (§3.7 "replace source"): which canonical blocks an origin currently names.

The ledger is the authority: a canonical member with a `registration` record for origin O that no
supersession or demotion names (§7.2) is a current version of O. When a source registers new bytes under
O, the new block supersedes every current version (one `supersession` record each, no reason).

Derived blocks are not cascaded by §7.2, so facts read from the old bytes would stay accessible next to
the new ones. Our choice: a derived member whose every cited evidence is now superseded is *demoted*
(a `demotion` record with a reason naming the origin and the new block). It stays a member, readable and
provable; `brain ls --all` still shows it. A block that also cites a still-current source is left alone.

What the ledger says about origins, supersessions, demotions and evidence (and the semantic statements
the gate compares) comes from the lineage log (`ingest.lineage`), read once per run, lazily, for the
snapshot the run started on; when the log does not describe that snapshot it is rebuilt from the ledger
and the semantic module (seconds for a large brain) and rewritten. A run that neither registers a new
canonical block nor judges a proposal reads neither. Every block the run stages is applied as it is
staged, so later sources of the same run see it, and appended to the log after the checkpoint that
commits it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from brain.blocks import Block, MemoryType
from brain.blocks.memory_type import PROPOSABLE_MEMORY_TYPES
from brain.identity import BlockId, OciDigest
from ingest.lineage import Fact, Lineage, LineageLog, facts_of_block
from ingest.validate import ContradictionKey

# Members that cite evidence through `derivation` records: what a model may propose (episodic included).
_CITING = tuple(sorted(PROPOSABLE_MEMORY_TYPES))

# The facts a run consults (origins, supersessions, demotions, evidence and task ids, statements). The
# others (`recorded`, `linked`: what `brain show` and the drop cascade read) are logged but not indexed:
# two of every three facts a run stages are `recorded`.
_RUN_KINDS = frozenset({"registered", "superseded", "demoted", "cited", "stated"})


class RunLineage:
    """The lineage (`ingest.lineage`) of the brain as the run found it plus what the run staged: which
    canonical blocks an origin currently names, what a replacement leaves stale, and the statements the
    gate compares."""

    def __init__(
        self,
        brain_path: Path,
        start: OciDigest | None,
        rebuild: Callable[[], tuple[Lineage, list[Fact]]],
        is_member: Callable[[MemoryType, BlockId], bool],
        *,
        persist: bool = True,
    ) -> None:
        self._log = LineageLog(brain_path)
        self._start = start
        self._rebuild_lineage = rebuild  # the start snapshot's lineage read from its blocks (slow)
        self._is_member = is_member
        self._persist = persist  # False for --dry-run: nothing is written, not even a cache
        self._lineage: Lineage | None = None
        self._facts: list[Fact] = []  # what this run staged, in order
        self._saved = 0  # how many of `_facts` are committed (and logged, if the log is current)
        self._committed = start  # the snapshot the last commit of this run made (the start before any)
        self._log_at: str | None | bool = False  # the snapshot the log is known to describe; False: not looked

    def _get(self) -> Lineage:
        if self._lineage is None:
            lineage = Lineage()
            if self._start is not None:
                found = self._log.load(self._start, _RUN_KINDS)
                lineage = found if found is not None else self._rebuild(self._start)
            for fact in self._facts:
                if fact[0] in _RUN_KINDS:
                    lineage.apply(fact)
            self._lineage = lineage
        return self._lineage

    def _rebuild(self, start: OciDigest) -> Lineage:
        lineage, facts = self._rebuild_lineage()
        if not self._persist:
            return lineage
        self._log.rewrite(facts, start)
        self._log_at = str(start)
        if self._saved and self._committed is not None:  # checkpoints of this run came before the rebuild
            self._log.append(self._facts[: self._saved], self._committed)
            self._log_at = str(self._committed)
        return lineage

    def staged(self, block: Block) -> None:
        """A block became a member (the stager calls this for every new one)."""
        facts = facts_of_block(block)
        self._facts += facts
        if self._lineage is not None:
            for fact in facts:
                if fact[0] in _RUN_KINDS:
                    self._lineage.apply(fact)

    def answered(self, source: BlockId, task_id: str) -> bool:
        """Whether a derivation record names `task_id` and cites `source` (the question was asked and answered)."""
        return task_id in self._get().answered.get(source.hex, ())

    def statements(self) -> dict[ContradictionKey, list[tuple[str, BlockId]]]:
        """The member semantic blocks' statements (superseded and demoted included), for the gate."""
        held: dict[ContradictionKey, list[tuple[str, BlockId]]] = {}
        for key, stated in self._get().statements.items():
            found = []
            for block_hex in sorted(stated):  # id order, as reading the members would give
                block = BlockId(block_hex)
                if self._is_member(MemoryType.SEMANTIC, block):
                    found.append((stated[block_hex], block))
            if found:
                held[key] = found
        return held

    def save(self, snapshot: OciDigest) -> None:
        """`snapshot` was just committed: log its facts if the log describes its parent, else leave it stale."""
        facts = self._facts[self._saved :]
        if self._log_at is False:
            self._log_at = self._log.last_snapshot()
        if self._committed is None:
            self._log.rewrite(facts, snapshot)  # a new brain: the log starts here
            self._log_at = str(snapshot)
        elif self._log_at == str(self._committed):
            self._log.append(facts, snapshot)
            self._log_at = str(snapshot)
        self._saved = len(self._facts)
        self._committed = snapshot
        if self._lineage is not None:
            # Committed facts are read again only to build the lineage (`_get`, `_rebuild`), which is built:
            # let them go rather than hold every fact of the run to its end (~1.4 KB a source).
            self._facts, self._saved = [], 0

    def current(self, origin: str, new: BlockId) -> list[BlockId]:
        """The accessible canonical members registered under `origin`, other than `new`, ascending."""
        lineage = self._get()
        found = lineage.origins.get(origin, ())
        return sorted(
            (
                block
                for block in map(BlockId, found)
                if block != new and lineage.is_accessible(block.hex) and self._is_member(MemoryType.CANONICAL, block)
            ),
            key=lambda b: b.hex,
        )

    def origins_of(self, block: BlockId) -> list[str]:
        """The origins `block` is registered under if it is a current canonical member, else []; a scan of
        every origin, for the rare question "which origin did this file's previous version have?"."""
        lineage = self._get()
        if not lineage.is_accessible(block.hex) or not self._is_member(MemoryType.CANONICAL, block):
            return []
        return sorted(origin for origin, blocks in lineage.origins.items() if block.hex in blocks)

    def superseded_by(self, block: BlockId) -> list[BlockId]:
        """The blocks that supersede `block`, ascending; [] if none does."""
        return sorted(map(BlockId, self._get().superseded_by.get(block.hex, ())), key=lambda b: b.hex)

    def stale_dependents(self, superseded: Iterable[BlockId]) -> list[BlockId]:
        """Accessible derived members whose every cited evidence is no longer accessible, ascending."""
        lineage = self._get()
        stale: set[BlockId] = set()
        for source in superseded:
            for derived in lineage.dependents.get(source.hex, ()):
                if not lineage.is_accessible(derived):
                    continue
                block = BlockId(derived)
                if not any(self._is_member(t, block) for t in _CITING):
                    continue
                if not any(lineage.is_accessible(e) for e in lineage.evidence.get(derived, ())):
                    stale.add(block)
        return sorted(stale, key=lambda b: b.hex)
