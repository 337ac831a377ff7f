"""The diff page's data, computed in the server from `brain.lifecycle.diff` (the code `brain diff` uses) over
the server's cached compositions, in the shape of `brain diff --json`: a snapshot digest or prefix, `HEAD`,
`HEAD~N` or a branch name resolve here; a local tag is left to `brain diff` itself (its manifest is OCI's)."""

from __future__ import annotations

import re
from typing import Any

from brain.blocks.memory_type import MemoryType
from brain.branches.names import is_branch_name
from brain.branches.operations import branches
from brain.brain import Brain
from brain.errors import BrainError, NotFoundError
from brain.identity import BlockId, OciDigest
from brain.composition import ModuleRef, member_changes_of_documents
from brain.lifecycle.diff import ModuleChange, apply_records, module_changes, summary_line
from brain.lifecycle.diff import member_changes as lifecycle_member_changes
from brain.lifecycle.summary import readable_records
from brain.module import read_block
from brain.queries import title_of

MAX_LISTED = 100
MAX_RECORDS = 2000
_HEAD = re.compile(r"^HEAD(?:~(\d{1,4}))?$")
_HEX = re.compile(r"^(?:sha256:)?[0-9a-f]{4,64}$")


def resolve(brain: Brain, text: str) -> OciDigest | None:
    """The snapshot `text` names, or None when only `brain diff` can tell (a local tag)."""
    head = _HEAD.match(text)
    if head:
        steps = int(head.group(1) or 0)
        history = brain.history()
        if steps >= len(history):
            raise NotFoundError(f"{text}: the history stored here has only {len(history)} snapshots")
        return history[steps][0]
    if _HEX.match(text):
        return brain.resolve_snapshot_prefix(text)
    refs = branches(brain) if is_branch_name(text) else None
    if refs is not None and text in refs.branches:
        return refs.branches[text].snapshot
    return None


def snapshot_diff(brain: Brain, a: OciDigest, b: OciDigest) -> dict[str, Any]:
    """`brain diff A B --json`'s shape for two held snapshots (at most 100 blocks listed per kind)."""
    first, second = brain.snapshot(a), brain.snapshot(b)
    assert first is not None and second is not None
    before = {MemoryType(k): v for k, v in first.modules.items()}
    after = {MemoryType(k): v for k, v in second.modules.items()}
    changes = module_changes(before, after, lambda ref: brain.composition(ref).block_ids,
                             pair=lambda old, new: member_changes(brain, old, new))
    added = changes.get(MemoryType.PROVENANCE, ModuleChange()).added[:MAX_RECORDS]
    kinds = {b: t for t, change in changes.items() for b in (*change.added, *change.removed)}
    apply_records(changes, readable_records(brain, added), kinds.get)
    modules = {}
    for memory_type, change in changes.items():
        if change.empty:
            continue
        modules[memory_type.value] = {
            "added": [_item(brain, b) for b in change.added[:MAX_LISTED]],
            "removed": [_item(brain, b, reason=_reason(change, b)) for b in change.removed[:MAX_LISTED]],
            "superseded": [_item(brain, b, reason=f"superseded by {w.short}")
                           for b, w in list(change.superseded.items())[:MAX_LISTED]],
            "demoted": [_item(brain, b, reason=r) for b, r in list(change.demoted.items())[:MAX_LISTED]],
            "redacted": [_item(brain, b) for b in change.redacted[:MAX_LISTED]],
        }
    return {"a_snapshot": str(a), "b_snapshot": str(b), "differ": a != b, "modules": modules,
            "summary": summary_line(changes)}


def member_changes(brain: Brain, old: ModuleRef | None, new: ModuleRef | None) -> tuple[tuple[BlockId, ...],
                                                                                      tuple[BlockId, ...]]:
    """(added, removed) members, ascending, from module `old` to `new` (`brain.lifecycle.diff.member_changes`):
    two stored versions of one module are compared as documents, at a cost that follows the change; a module
    that one side lacks is read whole."""
    if old is not None and new is not None:
        added, removed = member_changes_of_documents(
            new.memory_type, brain.blobs.get(old.composition), brain.blobs.get(new.composition),
            (old.block_count, new.block_count))
        return tuple(map(BlockId, added)), tuple(map(BlockId, removed))
    return lifecycle_member_changes(() if old is None else brain.composition(old).block_ids,
                                    () if new is None else brain.composition(new).block_ids)


def _reason(change: ModuleChange, block: BlockId) -> str | None:
    record = change.removed_by.get(block)
    if record is None:
        return None
    return f"{record.mechanism}: {record.reason}" if record.reason else str(record.mechanism)


def _item(brain: Brain, block: BlockId, reason: str | None = None) -> dict[str, Any]:
    try:
        stored = read_block(brain.blobs, block)
        title = title_of(stored, _NO_LEDGER)
    except BrainError:
        title = None
    return {"block": str(block), "title": title, "reason": reason}


class _NoLedger:
    """`title_of` without a ledger: a source is then named by its media type and size."""

    registrations: dict[BlockId, Any] = {}


_NO_LEDGER: Any = _NoLedger()
