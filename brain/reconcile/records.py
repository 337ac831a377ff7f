"""The records written with a reconciliation's result (§10.6): one `removal` per module losing our members
by cascade (actor and time of the acceptance), one `supersession` per other contender of a `prefer`.

Exclusions need no record (the history that dropped the blocks wrote one), and a refused incoming block
needs none either (§10.8 item 11): only blocks that were our members are named.
"""

from __future__ import annotations

from collections.abc import Mapping

from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import ProvenanceBlock, RemovalMechanism, RemovalRecord
from brain.identity import BlockId, OciDigest
from brain.lifecycle.records import ascending, supersession_record
from brain.reconcile.state import AcceptedRemovals, Resolution


def short(theirs: OciDigest) -> str:
    """`sha256:` + the first 12 hex digits, as the records' reasons name a history."""
    return f"sha256:{theirs.hex[:12]}"


def cascade_records(
    withdrawn_by_cascade: Mapping[MemoryType, tuple[BlockId, ...]], theirs: OciDigest, accepted: AcceptedRemovals
) -> list[ProvenanceBlock]:
    """One `removal` per module that loses blocks by cascade, in module-name order."""
    reason = f"the evidence these blocks cite was withdrawn by the history reconciled from {short(theirs)}"
    if accepted.reason:
        reason += f"; accepted: {accepted.reason}"
    records = []
    for memory_type, ids in sorted(withdrawn_by_cascade.items(), key=lambda item: item[0].value):
        if ids:
            record = RemovalRecord(actor=accepted.actor, at=accepted.at, blocks=ascending(ids),
                                   mechanism=RemovalMechanism.DROP, memory_type=memory_type, reason=reason)
            records.append(ProvenanceBlock(record=record))
    return records


def prefer_records(
    prefer: Mapping[BlockId, tuple[BlockId, tuple[BlockId, ...]]],
    resolutions: Mapping[BlockId, Resolution],
    theirs: OciDigest,
) -> list[ProvenanceBlock]:
    """For every `prefer`, one supersession from the winner over each other contender."""
    by_winner = {r.prefer: r for r in resolutions.values() if r.kind == "prefer" and r.prefer is not None}
    records = []
    for _loser, (winner, others) in sorted(prefer.items(), key=lambda item: item[0].hex):
        answer = by_winner.get(winner)
        if answer is None:
            continue
        reason = answer.reason or f"precedence settled while reconciling {short(theirs)}"
        records += [supersession_record(winner, other, actor=answer.actor, at=answer.at, reason=reason)
                    for other in others]
    return records
