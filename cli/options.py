"""Option declarations shared by several commands, so every command spells them the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from brain.blocks.memory_type import MemoryType
from brain.errors import UsageError
from brain.identity import BlockId, is_digest_string

if TYPE_CHECKING:
    from brain.brain import Brain

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

MIN_PREFIX_LENGTH = 4


def resolve_block_id(brain: Brain, text: str) -> BlockId:
    """The block `text` names: a full id as given, or the one current member its prefix matches."""
    if is_digest_string(text):
        return BlockId.parse(text)
    digits = text.removeprefix("sha256:")
    if len(digits) < MIN_PREFIX_LENGTH:
        raise UsageError(
            f"block id prefix {text!r} is too short",
            hint=f"give at least {MIN_PREFIX_LENGTH} hex digits of the id (see `brain ls`)",
        )
    return brain.resolve_prefix(text)


def parse_memory_type(name: str | None) -> MemoryType | None:
    """The `--type` value as a `MemoryType` (None when absent); unknown names are usage errors."""
    return None if name is None else MemoryType.parse(name.lower())
