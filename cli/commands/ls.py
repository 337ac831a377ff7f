"""`brain ls`: the members of the current snapshot with a one-line title each.

Superseded and demoted blocks stay members (§7.2) but are hidden unless `--all` is given, like the
protocol's single "include superseded" retrieval switch. A listing of nothing (an empty brain, a type the
snapshot has no module for) is empty, not an error: scripts get `[]` and exit 0. Only a module a
selective pull left out is an error, since its members exist but cannot be read here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.errors import NotFoundError
from brain.identity import BlockId
from brain.ledger import Ledger
from brain.queries import not_installed, title_of
from cli.context import cli_context
from cli.options import JsonFlag, MemoryTypeOption, parse_memory_type
from cli.output import Output, Result

AllFlag = Annotated[bool, typer.Option("--all", "-a", help="Include superseded and demoted members.")]


class Member(Result):
    """One member block."""

    block_id: BlockId
    memory_type: MemoryType
    schema_version: int
    title: str
    accessible: bool


def ls(
    ctx: typer.Context, memory_type: MemoryTypeOption = None, show_all: AllFlag = False, as_json: JsonFlag = False
) -> None:
    """List the current members (accessible ones unless --all)."""
    context = cli_context(ctx)
    wanted = parse_memory_type(memory_type)
    brain = context.open_brain()
    modules = brain.modules()  # a type the snapshot has no module for lists nothing: `[]`, exit 0
    left_out = not_installed(brain, modules)
    output = context.output(as_json)
    if wanted in left_out:
        raise NotFoundError(
            f"the {wanted} module was left out when this brain was pulled selectively; its blocks are not stored",
            hint=f"pull it with `brain pull REF --module {wanted}`",
        )
    if left_out:
        output.message(f"not installed (selective pull): {', '.join(str(t) for t in left_out)}")
    modules = {t: m for t, m in modules.items() if t not in left_out}
    # Accessibility and origins come from provenance records alone; skipping the structural edges
    # (which would read every semantic and procedural block a second time) keeps ls to one pass.
    provenance = modules.get(MemoryType.PROVENANCE)
    ledger = Ledger.of({} if provenance is None else {MemoryType.PROVENANCE: provenance}, members=modules)
    members = [
        Member(
            block_id=block.block_id,
            memory_type=block.memory_type,
            schema_version=block.schema_version,
            title=title_of(block, ledger),
            accessible=ledger.is_accessible(block.block_id),
        )
        for t, module in modules.items()
        if wanted is None or t is wanted
        for block in module.blocks()
    ]
    shown = [m for m in members if show_all or m.accessible]
    output.result(shown, lambda rows: _render(rows, output, wanted))


def _render(rows: Sequence[Member], output: Output, wanted: MemoryType | None) -> list[RenderableType]:
    if not rows:
        output.message(f"no {wanted} members" if wanted is not None else "no members")
        return []
    table = output.table("id", "type", "title", "")
    for row in rows:
        table.add_row(row.block_id.short, str(row.memory_type), row.title, "" if row.accessible else "(inaccessible)")
    return [table]
