"""Judging what comes in (§10.5): only members of M that are not ours, in a fixed order, each refusal
leaving the view before the next block is judged; then competing supersessions, the cascade over M from the
exclusions, **withdrawn**, and our checks of incoming removal, supersession and demotion records.

Pure over what it is handed: the module arithmetic, our head's index, and a reader of many blocks at once (the
merge's reads them in forked workers). A block that is not stored is a refusal naming what to fetch; a cascade
reaching an episode is refused with nothing moved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from brain.blocks import Block, MemoryType, Verdict
from brain.blocks.decode import TYPED_V1
from brain.blocks.provenance import (
    DemotionRecord,
    DerivationRecord,
    RemovalMechanism,
    RegistrationRecord,
    RemovalRecord,
    SupersessionRecord,
)
from brain.errors import BrainError, NotFoundError, RefusedError
from brain.gate import (
    ContradictionKey,
    Issue,
    content_issues,
    evidence_issues,
    relation_issues,
    semantic_issues,
    statement_key,
    verdict_of,
)
from brain.identity import BlockId, OciDigest, is_digest_string
from brain.ledger import record_of, structural_targets
from brain.lifecycle.cascade import reach
from brain.lifecycle.describe import title_of
from brain.module import ReadBlocks, Unread
from brain.reconcile.arithmetic import ModuleMerge
from brain.reconcile.index import OurIndex
from brain.reconcile.state import Resolution

_DERIVED = (MemoryType.SEMANTIC, MemoryType.PROCEDURAL, MemoryType.EPISODIC)


@dataclass
class IncomingVerdict:
    """One incoming block's verdict, its issues, and how it was answered."""

    block: BlockId
    memory_type: MemoryType
    verdict: Verdict
    issues: tuple[Issue, ...] = ()
    missing: dict[BlockId, str] = field(default_factory=dict)
    """Per missing citation: `dropped_deliberately` (a removal record names it) or `never_held`."""
    contenders: tuple[BlockId, ...] = ()
    resolution: str | None = None
    """`admit`, `reject` or `prefer` when answered."""

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(sorted({i.code for i in self.issues}))

    @property
    def open(self) -> bool:
        """Not validated and not answered."""
        return self.verdict is not Verdict.VALIDATED and self.resolution is None

    @property
    def enters(self) -> bool:
        if self.verdict is Verdict.VALIDATED:
            return True
        return self.resolution in ("admit", "prefer")


@dataclass(frozen=True)
class RegisteredAgain:
    """Bytes that more than one side registered (each under its own record): one runner registers the same
    bytes once and notes the other origin as a duplicate (§3.7: registering them again is a no-op), so the
    merged provenance holds a registration it would not. Shards meet this when identical files at two origins
    fall into two shards; the merge keeps every record (both origins stay explained) and the plan says so."""

    block: BlockId
    registrations: tuple[tuple[str, str | None], ...]
    """(side, origin) per registration record, ours first, then the incoming ones by side."""


@dataclass
class Judgement:
    """Everything judged: verdicts of the refused (and answered) blocks (`every_verdict` adds the validated ones),
    the result, the cascade, withdrawn."""

    verdicts: dict[BlockId, IncomingVerdict]
    judged: int
    result: dict[MemoryType, frozenset[str]]
    """Per module, the member hex digests of M after judging and the cascade."""
    cascade: dict[MemoryType, tuple[BlockId, ...]]
    withdrawn: dict[MemoryType, tuple[BlockId, ...]]
    withdrawn_by_cascade: dict[MemoryType, tuple[BlockId, ...]]
    prefer: dict[BlockId, tuple[BlockId, tuple[BlockId, ...]]]
    """Resolved competing supersessions: contested block → (winner, the other contenders)."""
    read: dict[BlockId, Block] = field(default_factory=dict)
    """The incoming blocks that were read (for the lineage log of what enters)."""
    incoming: dict[BlockId, MemoryType] = field(default_factory=dict)
    """Every incoming block judged, with its module, in judging order (module, then digest)."""
    origins: dict[BlockId, str] = field(default_factory=dict)
    """Where an incoming source came from, as its incoming registration record says."""
    tombstoned: frozenset[BlockId] = frozenset()
    registered_again: tuple[RegisteredAgain, ...] = ()

    def every_verdict(self) -> list[IncomingVerdict]:
        """A verdict for every incoming block, in judging order: the refused and answered ones as judged, every
        other one `validated` (it passed every check that applies to its module). Built from what judging read."""
        found = [self.verdicts.get(b) or IncomingVerdict(b, t, Verdict.VALIDATED) for b, t in self.incoming.items()]
        found.extend(v for b, v in self.verdicts.items() if b not in self.incoming)
        return found

    def title(self, block_id: BlockId) -> str:
        """A one-line title of an incoming block (a source's origin, a label, a record's type), from the blocks
        judging already read."""
        if block_id in self.tombstoned:
            return "redacted on their side"
        block = self.read.get(block_id)
        if block is None:
            return "unreadable"
        payload = block.payload()  # once for the title and the record it names
        origin = self.origins.get(block_id)
        if origin:
            return f"{origin} ({title_of(block, payload)})"
        record = payload.get("record") if block.memory_type is MemoryType.PROVENANCE else None
        if isinstance(record, dict):
            about = record.get("block") or next(iter(record.get("blocks") or ()), None)
            if is_digest_string(about):
                return f"{title_of(block, payload)} of {BlockId.parse(about).short}"
        return title_of(block, payload)

    def with_result(self, result: Mapping[MemoryType, frozenset[str]]) -> Judgement:
        """The same judgement over another result (a rebase step)."""
        return replace(self, result=dict(result))

    def entering(self) -> list[Block]:
        """The incoming blocks that are members of the result."""
        return [b for i, b in self.read.items() if any(i.hex in ids for ids in self.result.values())]

    @property
    def open_questions(self) -> list[IncomingVerdict]:
        return [v for v in self.verdicts.values() if v.open]


def _ascending(ids: Iterable[BlockId]) -> tuple[BlockId, ...]:
    return tuple(sorted(set(ids), key=lambda b: b.hex))


def _ids(hexes: Iterable[str]) -> tuple[BlockId, ...]:
    return tuple(BlockId(h) for h in sorted(set(hexes)))


class _Hexes:
    """A hex-digest set answering `block_id in` (the gate's checks ask with block ids)."""

    def __init__(self, hexes: set[str]) -> None:
        self.hexes = hexes

    def __contains__(self, block: object) -> bool:
        return isinstance(block, BlockId) and block.hex in self.hexes


class _Incoming:
    """The incoming blocks, read once, and the facts their provenance adds to ours."""

    def __init__(self, read: ReadBlocks, merges: Sequence[ModuleMerge],
                 tombstoned: frozenset[BlockId], theirs: Sequence[OciDigest]) -> None:
        self.blocks: dict[BlockId, Block] = {}
        self.payloads: dict[BlockId, dict[str, Any]] = {}  # semantic payloads from the statements to their checks
        self.unreadable: dict[BlockId, str] = {}
        self.module: dict[BlockId, MemoryType] = {}
        self.derived_from: dict[BlockId, tuple[BlockId, ...]] = {}
        self.dependents: dict[BlockId, set[BlockId]] = {}
        self.structural: dict[BlockId, set[BlockId]] = {}
        self.winners: dict[BlockId, list[tuple[BlockId, BlockId]]] = {}  # loser → [(winner, record)]
        self.removed: set[BlockId] = set()
        self.origins: dict[BlockId, str] = {}
        self.registrations: dict[BlockId, list[tuple[BlockId, str | None]]] = {}  # source → [(record, origin)]
        shown = ", ".join(d.short for d in theirs)
        to_read: list[BlockId] = []
        for merge in merges:
            for block_id in _ids(merge.incoming):
                self.module[block_id] = merge.memory_type
                if block_id not in tombstoned:  # else redacted on their side: a member whose bytes are destroyed
                    to_read.append(block_id)
        for block_id, block in zip(to_read, read(to_read), strict=True):
            if isinstance(block, Unread):
                if block.missing:
                    raise NotFoundError(
                        f"incoming {self.module[block_id]} block {block_id} of {shown} is not held here",
                        hint=f"fetch it first (`brain fetch REF` for {shown}), then merge again",
                    )
                self.unreadable[block_id] = block.message
                continue
            self.blocks[block_id] = block
        for block_id, block in self.blocks.items():
            if self.module[block_id] is MemoryType.PROVENANCE:
                self._learn(block_id, block)
            elif self.module[block_id] in (MemoryType.SEMANTIC, MemoryType.PROCEDURAL):
                try:
                    targets = structural_targets(block)
                except BrainError:
                    targets = set()
                for target in targets:
                    self.structural.setdefault(target, set()).add(block_id)

    def payload(self, block_id: BlockId) -> dict[str, Any]:
        """The payload of a read incoming block, kept for its checks (`take_payload`)."""
        found = self.payloads.get(block_id)
        if found is None:
            found = self.payloads[block_id] = self.blocks[block_id].payload()
        return found

    def take_payload(self, block_id: BlockId) -> dict[str, Any]:
        """The payload `payload` kept (let go of now), else serialized: each block's is built once in judging."""
        found = self.payloads.pop(block_id, None)
        return self.blocks[block_id].payload() if found is None else found

    def _learn(self, block_id: BlockId, block: Block) -> None:
        """What one incoming provenance record adds: derivations, supersessions, removals, source origins."""
        record = record_of(block)
        if isinstance(record, DerivationRecord):
            self.derived_from[record.block] = record.derived_from
            for source in record.derived_from:
                self.dependents.setdefault(source, set()).add(record.block)
        elif isinstance(record, SupersessionRecord):
            self.winners.setdefault(record.supersedes, []).append((record.block, block_id))
        elif isinstance(record, RemovalRecord):
            self.removed.update(record.blocks)
        elif isinstance(record, RegistrationRecord):
            origin = None if record.origin is None else str(record.origin)
            self.registrations.setdefault(record.block, []).append((block_id, origin))
            if origin:
                self.origins[record.block] = origin


def judge(  # noqa: C901 - §10.5's steps in their fixed order, each a short loop
    merges: Sequence[ModuleMerge],
    ours: OurIndex,
    read: ReadBlocks,
    *,
    theirs: Sequence[OciDigest],
    blob_size: Callable[[OciDigest], int | None] | None = None,
    resolutions: Mapping[BlockId, Resolution] | None = None,
    tombstoned: frozenset[BlockId] = frozenset(),
) -> Judgement:
    """Judge the incoming blocks of `merges` (see the module docstring)."""
    answers = dict(resolutions or {})
    incoming = _Incoming(read, merges, tombstoned, theirs)
    our_members = {m.memory_type: m.ours or frozenset() for m in merges}
    view: dict[MemoryType, set[str]] = {m.memory_type: set(m.result) for m in merges}
    verdicts: dict[BlockId, IncomingVerdict] = {}

    def refuse(verdict: IncomingVerdict) -> None:
        answer = answers.get(verdict.block)
        if answer is not None and _allowed(answer, verdict):
            verdict.resolution = answer.kind
        verdicts[verdict.block] = verdict
        if not verdict.enters:
            view[verdict.memory_type].discard(verdict.block.hex)

    # 1. Canonical and provenance blocks: readable and of the right type.
    for memory_type in (MemoryType.CANONICAL, MemoryType.PROVENANCE):
        for block_id in _of(incoming, memory_type):
            problem = _readability(incoming, block_id, memory_type)
            if problem is not None:
                refuse(IncomingVerdict(block_id, memory_type, Verdict.REJECTED, (problem,)))

    # 2. Derived blocks: catalog blocks first, then the others, in module order.
    derived = [b for t in _DERIVED for b in _of(incoming, t)]
    derived.sort(key=lambda b: 0 if _is_catalog(incoming.blocks.get(b)) else 1)
    statements = _Statements(ours, view, incoming)
    for block_id in derived:
        memory_type = incoming.module[block_id]
        problem = _readability(incoming, block_id, memory_type)
        if problem is not None:
            refuse(IncomingVerdict(block_id, memory_type, Verdict.REJECTED, (problem,)))
            continue
        issues, missing = _checks(incoming.blocks[block_id], memory_type, view, incoming, ours, statements, blob_size)
        if issues:
            refuse(IncomingVerdict(block_id, memory_type, verdict_of(i.code for i in issues), tuple(issues), missing))

    # 3. Competing supersessions: a loser left with two standing successors.
    prefer: dict[BlockId, tuple[BlockId, tuple[BlockId, ...]]] = {}
    for loser, claims in sorted(incoming.winners.items(), key=lambda item: item[0].hex):
        for winner, record in claims:
            if record.hex not in view[MemoryType.PROVENANCE]:
                continue
            standing = _standing(loser, ours, incoming, view)
            if len(standing) < 2 or winner not in standing:
                continue
            key = winner if winner in incoming.module else record
            if key in verdicts:
                continue
            shown = ", ".join(s.short for s in standing)
            issue = Issue("pending-review", f"competing supersession of {loser}: {shown}")
            verdict = IncomingVerdict(key, incoming.module.get(key, MemoryType.PROVENANCE), Verdict.PENDING_REVIEW,
                                      (issue,), contenders=standing)
            refuse(verdict)
            answer = answers.get(key)
            if verdict.resolution == "prefer" and answer is not None and answer.prefer is not None:
                prefer[loser] = (answer.prefer, tuple(s for s in standing if s != answer.prefer))

    # The cascade (§7.4) over M from the exclusions; withdrawn = our members leaving M.
    excluded = {BlockId(h) for m in merges for h in m.excluded}
    reached = reach(excluded, lambda b: (*ours.evidence_dependents(b), *ours.structural_dependents(b),
                                         *incoming.dependents.get(b, ()), *incoming.structural.get(b, ())))
    cascade: dict[MemoryType, set[BlockId]] = {}
    for block_id in sorted(reached, key=lambda b: b.hex):
        held_in = next((t for t in view if t is not MemoryType.PROVENANCE and block_id.hex in view[t]), None)
        if held_in is None:
            continue
        if held_in is MemoryType.EPISODIC:
            cause = next((e for e in sorted(excluded, key=lambda b: b.hex)
                          if block_id in reach(e, lambda b: (*ours.evidence_dependents(b),
                                                             *incoming.dependents.get(b, ())))), None)
            said = f" from the exclusion of {cause.short}" if cause is not None else ""
            raise RefusedError(
                f"the cascade{said} reaches episodic block {block_id.short}, and episodes are never dropped (§7.4)",
                hint="nothing was written; demote the episode on the history that keeps it, or do not merge the drop",
            )
        cascade.setdefault(held_in, set()).add(block_id)
    for memory_type, ids in cascade.items():
        view[memory_type] -= {b.hex for b in ids}
    withdrawn: dict[MemoryType, tuple[BlockId, ...]] = {}
    by_cascade: dict[MemoryType, tuple[BlockId, ...]] = {}
    for merge in merges:
        mine = our_members[merge.memory_type]
        cascaded = mine & {b.hex for b in cascade.get(merge.memory_type, set())}
        gone = (mine & merge.excluded) | cascaded
        if gone:
            withdrawn[merge.memory_type] = _ids(gone)
        if cascaded:
            by_cascade[merge.memory_type] = _ids(cascaded)

    # Ours: incoming removal records name only non-members; supersessions and demotions name members.
    incoming.payloads.clear()  # not kept past judging: a merge of many sources would hold every one twice
    known = _Hexes({h for ids in view.values() for h in ids} | {b.hex for b in incoming.module})
    for block_id in _of(incoming, MemoryType.PROVENANCE):
        if block_id.hex not in view[MemoryType.PROVENANCE] or block_id in verdicts:
            continue
        wrong = _record_issue(incoming.blocks[block_id], view, known)
        if wrong is not None:
            refuse(IncomingVerdict(block_id, MemoryType.PROVENANCE, Verdict.REJECTED, (wrong,)))

    return Judgement(
        registered_again=_registered_again(merges, incoming, ours, view),
        verdicts=verdicts,
        judged=len(incoming.module),
        result={t: frozenset(ids) for t, ids in view.items()},
        cascade={t: _ascending(ids) for t, ids in cascade.items()},
        withdrawn=withdrawn,
        withdrawn_by_cascade=by_cascade,
        prefer=prefer,
        read=incoming.blocks,
        incoming=incoming.module,
        origins=incoming.origins,
        tombstoned=tombstoned,
    )


def _registered_again(merges: Sequence[ModuleMerge], incoming: _Incoming, ours: OurIndex,
                      view: Mapping[MemoryType, set[str]]) -> tuple[RegisteredAgain, ...]:
    """The sources that enter M with a registration record beside ours or beside another incoming one."""
    by_type = {m.memory_type: m for m in merges}
    canonical, provenance = by_type.get(MemoryType.CANONICAL), by_type.get(MemoryType.PROVENANCE)
    if provenance is None:
        return ()
    count = len(provenance.added) - 1
    side_of: dict[str, str] = {}
    for i, ids in enumerate(provenance.added[1:], start=1):
        for record_hex in ids:
            side_of.setdefault(record_hex, "theirs" if count == 1 else f"their #{i}")
    ours_canonical = (canonical.ours or frozenset()) if canonical is not None else frozenset()
    entering = view.get(MemoryType.PROVENANCE, set())
    found: list[RegisteredAgain] = []
    for block, records in sorted(incoming.registrations.items(), key=lambda item: item[0].hex):
        kept = [(side_of.get(r.hex, "theirs"), origin) for r, origin in records if r.hex in entering]
        if block.hex in ours_canonical and kept:
            found.append(RegisteredAgain(block, (("ours", ours.origin(block)), *sorted(kept))))
        elif len(kept) > 1:
            found.append(RegisteredAgain(block, tuple(sorted(kept))))
    return tuple(found)


def _allowed(answer: Resolution, verdict: IncomingVerdict) -> bool:
    """§10.6: reject any open question; admit only contradicted or pending_review; prefer only a contender."""
    if answer.kind == "reject":
        return True
    if answer.kind == "admit":
        return verdict.verdict in (Verdict.CONTRADICTED, Verdict.PENDING_REVIEW)
    return bool(verdict.contenders) and answer.prefer in verdict.contenders


def _of(incoming: _Incoming, memory_type: MemoryType) -> list[BlockId]:
    return [b for b, t in incoming.module.items() if t is memory_type]


def _is_catalog(block: Block | None) -> bool:
    return block is not None and block.memory_type is MemoryType.SEMANTIC and block.schema_version == 3


def _readability(incoming: _Incoming, block_id: BlockId, memory_type: MemoryType) -> Issue | None:
    if block_id in incoming.unreadable:
        return Issue("unreadable", f"block {block_id} cannot be read: {incoming.unreadable[block_id]}")
    block = incoming.blocks.get(block_id)
    if block is not None and block.memory_type is not memory_type:
        return Issue("wrong-memory-type", f"block {block_id} is {block.memory_type}, not {memory_type}")
    if block is not None and memory_type is MemoryType.PROVENANCE and record_of(block) is None:
        return Issue("schema", f"provenance block {block_id} holds no record this implementation reads")
    return None


class _Statements:
    """Semantic statements of M as judging goes: ours (from the index) and incoming, still in the view."""

    def __init__(self, ours: OurIndex, view: Mapping[MemoryType, set[str]], incoming: _Incoming) -> None:
        self.ours, self.view = ours, view
        self.incoming: dict[ContradictionKey, list[tuple[str, BlockId]]] = {}
        for block_id in incoming.blocks:
            if incoming.module[block_id] is MemoryType.SEMANTIC:
                key, statement = statement_key(incoming.payload(block_id))
                if key is not None:
                    self.incoming.setdefault(key, []).append((statement, block_id))

    def held(self, key: ContradictionKey) -> list[tuple[str, BlockId]]:
        members = self.view.get(MemoryType.SEMANTIC, set())
        found = [(s, b) for s, b in (*self.ours.statements(key), *self.incoming.get(key, ())) if b.hex in members]
        return list(dict.fromkeys(found))


def _checks(  # noqa: C901 - the §7.6 checks, in their order, against M
    block: Block,
    memory_type: MemoryType,
    view: Mapping[MemoryType, set[str]],
    incoming: _Incoming,
    ours: OurIndex,
    statements: _Statements,
    blob_size: Callable[[OciDigest], int | None] | None,
) -> tuple[list[Issue], dict[BlockId, str]]:
    payload = incoming.take_payload(block.block_id)
    issues: list[Issue] = []
    if type(block) is TYPED_V1.get(memory_type):
        # Decoded as the typed v1 model, which is the oldest schema: re-typing it gives the same block.
        retyped = block.block_id
    else:
        try:
            retyped = Block.from_payload(memory_type, dict(payload)).block_id
        except BrainError as e:
            issues.append(Issue("schema", e.message))
            retyped = block.block_id
    if retyped != block.block_id:
        issues.append(Issue("schema-version-not-canonical", f"re-types to {retyped} (oldest schema that fits)"))
    stated = payload.get("evidence")
    recorded = incoming.derived_from.get(block.block_id) or ours.evidence(block.block_id)
    if isinstance(stated, list) and recorded and {str(s) for s in stated} != {str(r) for r in recorded}:
        issues.append(Issue("evidence-mismatch", "payload evidence differs from the derivation record's"))
    cited = [str(c) for c in stated] if isinstance(stated, list) and stated else [str(r) for r in recorded]
    missing: dict[BlockId, str] = {}
    if not cited:
        issues.append(Issue("evidence-not-found", f"block {block.block_id} cites no evidence"))
    else:
        held = view.get(MemoryType.CANONICAL)
        canonical = None if held is None else _Hexes(held)
        issues.extend(evidence_issues(cited, canonical))
        for cited_id in cited:
            if is_digest_string(cited_id) and (canonical is None or BlockId.parse(cited_id) not in canonical):
                gone = BlockId.parse(cited_id)
                deliberate = gone in incoming.removed or ours.removed(gone)
                missing[gone] = "dropped_deliberately" if deliberate else "never_held"
    if memory_type is MemoryType.SEMANTIC:
        def anywhere(target: BlockId) -> bool:
            return any(target.hex in ids for ids in view.values())
        issues.extend(relation_issues(payload, anywhere))
    issues.extend(content_issues(payload.get("content"), blob_size))
    if memory_type is MemoryType.SEMANTIC:
        # Catalog declarations arrive from a history, not a proposer: only the contradiction check applies.
        issues.extend(i for i in semantic_issues(payload, None, statements.held) if i.code == "contradiction")
    return issues, missing


def _standing(loser: BlockId, ours: OurIndex, incoming: _Incoming,
              view: Mapping[MemoryType, set[str]]) -> tuple[BlockId, ...]:
    """The successors of `loser` that are members of M."""
    claims = {*ours.winners(loser), *(w for w, _ in incoming.winners.get(loser, ()))}
    return _ascending(w for w in claims
                      if any(w.hex in ids for t, ids in view.items() if t is not MemoryType.PROVENANCE))


def _record_issue(block: Block, view: Mapping[MemoryType, set[str]], known: _Hexes) -> Issue | None:
    record = record_of(block)
    if isinstance(record, RemovalRecord) and record.mechanism in (RemovalMechanism.DROP, RemovalMechanism.PRUNE):
        still = [b for b in record.blocks if b.hex in view.get(record.memory_type, set())]
        if still:
            return Issue("removal-names-member",
                         f"removal record names {still[0]}, a {record.memory_type} member of the result")
    elif isinstance(record, SupersessionRecord):
        for named in (record.block, record.supersedes):
            if named not in known:
                return Issue("supersession-names-non-member", f"supersession names {named}, not a member")
    elif isinstance(record, DemotionRecord) and record.block not in known:
        return Issue("demotion-names-non-member", f"demotion names {record.block}, not a member")
    return None


__all__ = ["IncomingVerdict", "Judgement", "RegisteredAgain", "judge"]
