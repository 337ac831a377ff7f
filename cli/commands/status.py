"""`brain status`: the current snapshot and each module's Merkle root and member count."""

from __future__ import annotations

from collections.abc import Iterable

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MODULE_ORDER
from brain.branches.operations import BranchStatus, branch_status
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
    """`{"branch": {...}, "snapshot": digest | null, "modules": {type: {"root", "block_count"}}}` in module order."""

    branch: BranchStatus
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
        branch=branch_status(brain),
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
    yield _branch_line(result.branch)
    if result.branch.reconciling is not None:
        yield (f"reconciling with {result.branch.reconciling.short}: see `brain reconcile status`, then "
               "`brain reconcile continue` or `brain reconcile abort`")
    if result.snapshot is None:
        yield "snapshot  none (empty brain)"
        return
    yield f"snapshot  {result.snapshot}"
    table = output.table("module", "blocks", "root")
    for name, module in result.modules.items():
        table.add_row(name, str(module.block_count), str(module.root))
    yield table


def _branch_line(branch: BranchStatus) -> str:
    line = f"branch    {branch.name} (tag {branch.tag})"
    if branch.remote is None:
        return line
    where = f"{branch.reference} at {branch.remote.short}" if branch.reference else branch.remote.short
    if branch.ahead is None or branch.behind is None:
        return f"{line}, pulled from {where} (not stored)"
    return f"{line}, {branch.ahead} ahead and {branch.behind} behind {where}"
