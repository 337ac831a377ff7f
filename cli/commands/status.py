"""`brain status`: the current snapshot and each module's Merkle root and member count."""

from __future__ import annotations

from collections.abc import Iterable

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MODULE_ORDER
from brain.identity import MerkleRoot, OciDigest
from brain.queries import not_installed
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output, Result


class ModuleStatus(Result):
    """One module at the current snapshot."""

    root: MerkleRoot
    block_count: int


class StatusResult(Result):
    """`{"snapshot": digest | null, "modules": {type: {"root", "block_count"}}}` in module order."""

    snapshot: OciDigest | None
    modules: dict[str, ModuleStatus]


def status(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Show the current snapshot, module roots and counts."""
    context = cli_context(ctx)
    brain = context.open_brain()
    # The snapshot's module references carry root and count: no composition is read, so this stays
    # cheap at any size (`brain verify` is what checks them against the compositions).
    snapshot = brain.snapshot()
    refs = {} if snapshot is None else snapshot.modules
    result = StatusResult(
        snapshot=None if snapshot is None else snapshot.digest,
        modules={
            str(t): ModuleStatus(root=refs[t].root, block_count=refs[t].block_count)
            for t in MODULE_ORDER
            if t in refs
        },
    )
    output = context.output(as_json)
    left_out = not_installed(brain, brain.modules()) if snapshot is not None else []
    if left_out:
        output.message(f"not installed (selective pull): {', '.join(str(t) for t in left_out)}")
    output.result(result, lambda r: _render(r, output))


def _render(result: StatusResult, output: Output) -> Iterable[RenderableType]:
    if result.snapshot is None:
        yield "snapshot  none (empty brain)"
        return
    yield f"snapshot  {result.snapshot}"
    table = output.table("module", "blocks", "root")
    for name, module in result.modules.items():
        table.add_row(name, str(module.block_count), str(module.root))
    yield table
