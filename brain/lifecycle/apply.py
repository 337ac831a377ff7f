"""Committing a lifecycle plan through the one write path (`brain.writer`): members out, records in, one
snapshot. The writer's ordering (blobs, compositions, snapshot, then head) makes each write all-or-nothing."""

from __future__ import annotations

from collections.abc import Sequence

from brain.blocks.provenance import ProvenanceBlock
from brain.identity import OciDigest
from brain.lifecycle.drop import DropPlan
from brain.writer import Writer


def commit_records(
    writer: Writer, records: Sequence[ProvenanceBlock], plan: DropPlan | None = None
) -> OciDigest | None:
    """Remove what `plan` removes (if any), add `records`, commit; the new snapshot's digest (None: no change)."""
    if plan is not None:
        for memory_type, block_ids in plan.removals.items():
            writer.remove(memory_type, block_ids)
    for record in records:
        writer.add(record)
    return writer.commit()
