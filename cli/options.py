"""Option declarations shared by several commands, so every command spells them the same way."""

from __future__ import annotations

from typing import Annotated

import typer

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
