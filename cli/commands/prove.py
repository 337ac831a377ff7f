"""`brain prove ID`: an inclusion proof (§4.1) of a member in its module's Merkle root, checked here."""

from __future__ import annotations

from collections.abc import Iterable

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.errors import NotFoundError
from brain.identity import MerkleRoot
from brain.merkle import InclusionProof
from cli.context import cli_context
from cli.options import BlockIdArgument, JsonFlag, MemoryTypeOption, parse_memory_type, resolve_block_id
from cli.output import Result


class ProveResult(Result):
    """A proof, the root it claims to reach, and whether it does."""

    memory_type: MemoryType
    root: MerkleRoot
    proof: InclusionProof
    verified: bool


def prove(
    ctx: typer.Context, block: BlockIdArgument, memory_type: MemoryTypeOption = None, as_json: JsonFlag = False
) -> None:
    """Print and check an inclusion proof of a member."""
    context = cli_context(ctx)
    brain = context.open_brain()
    block_id = resolve_block_id(brain, block)
    modules = brain.modules()
    wanted = parse_memory_type(memory_type)
    if wanted is None:
        # A block id commits to its memory type, so at most one module holds it.
        holders = [t for t, module in modules.items() if block_id in module]
        if not holders:
            raise NotFoundError(f"block {block_id} is not a member of any module of the current snapshot")
        wanted = holders[0]
    inclusion = brain.prove(block_id, wanted)
    root = brain.module(wanted).ref.root
    result = ProveResult(
        memory_type=wanted,
        root=root,
        proof=inclusion,
        verified=inclusion.verify(root),
    )
    context.output(as_json).result(result, _render)


def _render(result: ProveResult) -> Iterable[RenderableType]:
    yield f"block       {result.proof.block_id}"
    yield f"module      {result.memory_type} (root {result.root})"
    yield f"leaf        {result.proof.leaf_index} of {result.proof.tree_size}"
    for i, sibling in enumerate(result.proof.audit_path):
        yield f"{'path' if i == 0 else '':<12}{sibling}"
    yield f"verified    {'yes' if result.verified else 'NO: the proof does not reach the root'}"
