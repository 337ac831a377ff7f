"""One knowledge block as frameworks want it: id, type, title, text, subject, evidence with origin and locator.

Pure: a block, the ledger views and a way to read a canonical source's text go in, a `KnowledgeRecord` comes
out. This is the shape of `brain export --format jsonl` lines and of what the Python API returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from brain.blocks.base import Block
from brain.blocks.memory_type import MemoryType
from brain.frozen import FrozenModel
from brain.identity import BlockId, OciDigest
from brain.ledger import Ledger

EXPORTED_TYPES = (MemoryType.CANONICAL, MemoryType.SEMANTIC, MemoryType.PROCEDURAL, MemoryType.EPISODIC)


class Evidence(FrozenModel):
    """A source a block cites: its id, the origin it was registered from, and where in it (the locator)."""

    id: BlockId
    origin: str | None = None
    locator: str | None = None


class KnowledgeRecord(FrozenModel):
    """One exported block. `text` is what a retriever indexes; `payload` is the block's own JSON."""

    id: BlockId
    type: MemoryType
    title: str
    text: str
    subject: str | None = None
    kind: str | None = None
    origin: str | None = None
    media_type: str | None = None
    evidence: list[Evidence] = []
    snapshot: OciDigest | None = None
    payload: dict[str, Any]
    provenance: dict[str, Any] | None = None

    def metadata(self) -> dict[str, Any]:
        """Everything but the text, JSON-ready: what a framework's document metadata holds."""
        return self.model_dump(mode="json", exclude={"text", "payload"}, exclude_none=True)


def _lines(*parts: str | None) -> str:
    return "\n".join(part for part in parts if part)


def _procedure_text(payload: dict[str, Any]) -> str:
    steps = [f"{i}. {step['action']}" + (f" (if {step['condition']})" if step.get("condition") else "")
             for i, step in enumerate(payload.get("steps", []), start=1)]  # fmt: skip
    pre = payload.get("preconditions") or []
    done = payload.get("success_criteria") or []
    return _lines(
        payload.get("goal"),
        ("Preconditions: " + "; ".join(pre)) if pre else None,
        "\n".join(steps),
        ("Success: " + "; ".join(done)) if done else None,
    )


def evidence_of(block_id: BlockId, ledger: Ledger) -> list[Evidence]:
    """The sources `block_id` cites (derivation evidence), each with its registered origin and the locator."""
    locator = ledger.locators.get(block_id)
    found = []
    for source in ledger.evidence.get(block_id, ()):
        registration = ledger.registrations.get(source)
        found.append(Evidence(id=source, origin=registration.origin if registration else None, locator=locator))
    return found


def record_of(
    block: Block, ledger: Ledger, snapshot: OciDigest | None, read_text: Callable[[OciDigest], str | None]
) -> KnowledgeRecord:
    """The export record of `block` (canonical text comes from its normalized view through `read_text`)."""
    payload = block.payload()
    block_id = block.block_id
    memory_type = block.memory_type
    common: dict[str, Any] = {"id": block_id, "type": memory_type, "snapshot": snapshot, "payload": payload}
    if memory_type is MemoryType.CANONICAL:
        registration = ledger.registrations.get(block_id)
        origin = registration.origin if registration is not None else None
        view = payload.get("normalized_view")
        text = read_text(OciDigest.parse(view["blob"])) if view else None
        return KnowledgeRecord(
            **common, title=origin or f"{payload['media_type']} source", text=text or "",
            origin=origin, media_type=payload.get("media_type"),
        )  # fmt: skip
    evidence = evidence_of(block_id, ledger)
    if memory_type is MemoryType.SEMANTIC:
        aliases = payload.get("aliases") or []
        text = _lines(payload["statement"], ("Also known as: " + ", ".join(aliases)) if aliases else None)
        return KnowledgeRecord(
            **common, title=payload["label"], text=text, subject=payload.get("subject"), kind=payload.get("kind"),
            evidence=evidence,
        )  # fmt: skip
    if memory_type is MemoryType.PROCEDURAL:
        return KnowledgeRecord(
            **common, title=payload["label"], text=_procedure_text(payload), subject=payload.get("subject"),
            evidence=evidence,
        )  # fmt: skip
    if memory_type is MemoryType.EPISODIC:
        when = payload["occurred_at"] + (f" to {payload['ended_at']}" if payload.get("ended_at") else "")
        text = _lines(
            payload["summary"], payload.get("context"), payload.get("outcome") and f"Outcome: {payload['outcome']}"
        )
        return KnowledgeRecord(**common, title=f"{when}: {payload['summary']}"[:200], text=text, evidence=evidence)
    record = payload.get("record") or {}
    return KnowledgeRecord(
        **common, title=str(record.get("record_type", "record")), text="", provenance=record, evidence=evidence
    )
