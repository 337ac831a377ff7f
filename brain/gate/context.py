"""What the gate needs to know about a brain (`GateContext`), and the contradiction key of a semantic payload."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from brain.blocks import Block, MemoryType
from brain.identity import BlockId, OciDigest

ContradictionKey = tuple[str, str | None, str]


@dataclass(frozen=True)
class GateContext:
    """What the brain holds, as far as the gate cares."""

    members: Mapping[MemoryType, frozenset[BlockId]]
    """Member ids of every installed module (an uninstalled module is absent)."""
    statements: Mapping[ContradictionKey, tuple[tuple[str, BlockId], ...]] = field(default_factory=dict)
    """Member semantic blocks, superseded and demoted included: (label, subject, kind) → (statement, id)."""
    blob_size: Callable[[OciDigest], int | None] | None = None
    """Size of a stored blob, None when not stored (for v2 `content` checks)."""

    @classmethod
    def build(
        cls,
        members: Mapping[MemoryType, Iterable[BlockId]],
        semantic_blocks: Iterable[Block] = (),
        blob_size: Callable[[OciDigest], int | None] | None = None,
    ) -> GateContext:
        """A context from module members and the member semantic blocks (any schema version)."""
        statements: dict[ContradictionKey, list[tuple[str, BlockId]]] = {}
        for block in semantic_blocks:
            key, statement = statement_key(block.payload())
            if key is not None:
                statements.setdefault(key, []).append((statement, block.block_id))
        return cls(
            members={mt: frozenset(ids) for mt, ids in members.items()},
            statements={key: tuple(held) for key, held in statements.items()},
            blob_size=blob_size,
        )


def statement_key(payload: Mapping[str, Any]) -> tuple[ContradictionKey | None, str]:
    """A semantic payload's (label, subject, kind) and its statement; (None, "") when it has none."""
    label, kind, statement = payload.get("label"), payload.get("kind"), payload.get("statement")
    subject = payload.get("subject")
    if not (isinstance(label, str) and isinstance(kind, str) and isinstance(statement, str)):
        return None, ""
    return (label, subject if isinstance(subject, str) else None, kind), statement
