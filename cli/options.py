"""Option declarations shared by several commands, so every command spells them the same way."""

from __future__ import annotations

from typing import Annotated

import typer

from brain.blocks.memory_type import MemoryType
from ingest.targets import MIN_PREFIX_LENGTH as MIN_PREFIX_LENGTH
from ingest.targets import resolve_block_id as resolve_block_id

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")]

MemoryTypeOption = Annotated[
    str | None,
    typer.Option(
        "--type",
        "-t",
        metavar="TYPE",
        help="Memory type: canonical, episodic, semantic, procedural or provenance.",
    ),
]

BlockIdArgument = Annotated[
    str,
    typer.Argument(
        metavar="ID",
        help="A block id, or an unambiguous prefix of at least 4 hex digits ('sha256:' optional).",
        show_default=False,
    ),
]

def parse_memory_type(name: str | None) -> MemoryType | None:
    """The `--type` value as a `MemoryType` (None when absent); unknown names are usage errors."""
    return None if name is None else MemoryType.parse(name.lower())
