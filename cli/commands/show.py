"""`brain show ID|ORIGIN`: one block's payload and everything the ledger says about it (§7.1).

The block is named by its id (or a unique prefix), or by the origin its source was registered under (a
path as recorded, e.g. `docs/guide.md`, or a local file, whose default origin is looked up): that shows
the source's current canonical block. Evidence is shown as the sources people know: origin, locator, id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.identity import BlockId
from brain.installed import left_out_evidence_note
from brain.ledger import Ledger
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result
from ingest.targets import resolve_target

TargetArgument = Annotated[
    str,
    typer.Argument(
        metavar="ID|ORIGIN",
        help="A block id or a unique prefix of at least 4 hex digits, or a source's origin (e.g. docs/guide.md).",
        show_default=False,
    ),
]


class Citation(Result):
    """One piece of cited evidence, as people know it: the source's origin and where in it."""

    block: BlockId
    origin: str | None
    locator: str | None


class BlockLedger(Result):
    """The ledger's views of one block; records appear as their wire JSON."""

    accessible: bool
    removed: bool
    evidence: list[BlockId]
    cited: list[Citation]
    dependents: list[BlockId]
    locator: str | None
    producer: dict[str, Any] | None
    task: str | None
    registration: dict[str, Any] | None
    normalization: dict[str, Any] | None
    validation: dict[str, Any] | None
    superseded_by: list[BlockId]
    supersedes: list[BlockId]
    demotion: dict[str, Any] | None


class ShowResult(Result):
    """A block, where it is a member, and its ledger."""

    block_id: BlockId
    memory_type: MemoryType
    schema_version: int
    member_of: list[MemoryType]
    payload: dict[str, Any]
    ledger: BlockLedger


def show(ctx: typer.Context, block: TargetArgument, as_json: JsonFlag = False) -> None:
    """Show a block (by id, or a source by its origin) and what the ledger says about it."""
    from ingest.block_ledger import LedgerReader  # the lineage log and what it needs: not for other commands

    context = cli_context(ctx)
    brain = context.open_brain()
    reader = LedgerReader(brain)  # the records about this block only, when the lineage log is current
    block_id = resolve_target(brain, reader, block)
    ledger = reader.about([block_id])
    found = brain.resolve(block_id)
    modules = brain.modules()
    result = ShowResult(
        block_id=block_id,
        memory_type=found.memory_type,
        schema_version=found.schema_version,
        member_of=[t for t, module in modules.items() if block_id in module],
        payload=found.payload(),
        ledger=ledger_of(block_id, ledger),
    )
    output = context.output(as_json)
    note = left_out_evidence_note(brain.blobs, brain.head(), brain.snapshot(), result.ledger.evidence)
    if note is not None:
        output.message(note)
    output.result(result, lambda r: _render(r, output))


def ledger_of(block_id: BlockId, ledger: Ledger) -> BlockLedger:
    """What `ledger` knows about `block_id`, as plain JSON-ready values."""

    def wire(record: Any) -> dict[str, Any] | None:
        return None if record is None else record.to_json()

    evidence = list(ledger.evidence.get(block_id, ()))
    locator = ledger.locators.get(block_id)

    def origin_of(source: BlockId) -> str | None:
        registration = ledger.registrations.get(source)
        return None if registration is None else registration.origin

    return BlockLedger(
        accessible=ledger.is_accessible(block_id),
        removed=block_id in ledger.removed,
        evidence=evidence,
        cited=[Citation(block=e, origin=origin_of(e), locator=locator) for e in evidence],
        dependents=sorted({*ledger.dependents.get(block_id, ()), *ledger.structural_dependents.get(block_id, ())}),
        locator=ledger.locators.get(block_id),
        producer=wire(ledger.producer.get(block_id)),
        task=ledger.tasks.get(block_id),
        registration=wire(ledger.registrations.get(block_id)),
        normalization=wire(ledger.normalizations.get(block_id)),
        validation=wire(ledger.validations.get(block_id)),
        superseded_by=list(ledger.winners.get(block_id, ())),
        supersedes=sorted({s.supersedes for s in ledger.supersessions if s.block == block_id}),
        demotion=wire(ledger.demotions.get(block_id)),
    )


def _render(result: ShowResult, output: Output) -> Iterable[RenderableType]:
    from rich.json import JSON  # only people need it; keep `--json` startup lean

    members = ", ".join(str(t) for t in result.member_of) or "none (not in the current snapshot)"
    yield f"block       {result.block_id}"
    yield f"type        {result.memory_type} v{result.schema_version}"
    yield f"member of   {members}"
    yield f"accessible  {'yes' if result.ledger.accessible else 'no'}"
    if result.ledger.removed:
        yield "removed     yes (a removal record names it)"
    yield JSON.from_data(result.payload, indent=2, highlight=output.is_terminal)
    table = output.table("ledger", "")
    for citation in result.ledger.cited:
        where = " ".join(part for part in (citation.origin, citation.locator) if part)
        table.add_row("evidence", f"{where} ({citation.block.short})" if where else str(citation.block))
    for name, value in result.ledger.model_dump(
        mode="json", exclude={"accessible", "removed", "evidence", "cited"}
    ).items():
        if value not in (None, []):
            table.add_row(name.replace("_", " "), _describe(value))
    if table.row_count:
        yield table


def _describe(value: Any) -> str:
    """A compact one-line rendering of a ledger value (a record reads `verdict=validated, by X at T`)."""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if not isinstance(value, dict):
        return str(value)
    parts = [f"{k}={_describe(v)}" for k, v in value.items() if k not in _IMPLIED and not isinstance(v, (list, dict))]
    actor = value.get("actor")
    if isinstance(actor, dict):
        parts.append(f"by {actor.get('id')} at {value.get('at')}")
    return ", ".join(parts)


# Record members a one-line summary leaves out: the block is the one shown, lists are long.
_IMPLIED = frozenset({"record_type", "block", "actor", "at"})
