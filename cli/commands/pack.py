"""`brain pack`: materialize the current snapshot as its OCI artifact inside the brain, optionally tagged."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output


def pack(
    ctx: typer.Context,
    tag: Annotated[str | None, typer.Option("--tag", metavar="TAG", help="Tag the artifact in index.json.")] = None,
    module: Annotated[
        list[str] | None,
        typer.Option(
            "--module", "-m", metavar="TYPE",
            help="Publish only these modules (repeatable; §6.7 subset); provenance always comes along.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Pack the current snapshot into an OCI artifact; prints the manifest digest."""
    from oci.pack import pack as pack_brain

    context = cli_context(ctx)
    modules = None if not module else {MemoryType.parse(name.lower()) for name in module}
    brain = context.open_brain()
    result = pack_brain(brain, tag, modules, lock_timeout=context.lock_timeout, on_wait=context.wait_note())
    output = context.output(as_json)
    if result.implied:
        implied = ", ".join(str(t) for t in result.implied)
        output.message(f"also packed {implied}: a subset always carries the ledger that explains it")
    for warning in result.warnings:
        output.warning(warning)
    output.result(result, lambda r: _render(r, output))


def _render(result, output: Output) -> Iterable[RenderableType]:  # type: ignore[no-untyped-def]
    yield f"{result.digest}" + (f"  (tag {result.tag})" if result.tag else "")
    table = output.table("layer", "digest", "size", "reused")
    for layer in result.layers:
        name = str(layer.memory_type or "history")
        table.add_row(name, str(layer.digest), str(layer.size), "yes" if layer.reused else "no")
    yield table
