"""`brain inspect REF`: what a remote artifact holds, from its manifest and config alone."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import typer
from rich.console import RenderableType

from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output
from cli.transfer import PlainHttpFlag


def inspect(
    ctx: typer.Context,
    reference: Annotated[str, typer.Argument(metavar="REF", help="HOST[:PORT]/REPOSITORY[:TAG][@DIGEST]")],
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Show a remote brain's modules, roots, counts, sizes and history length without pulling it."""
    from oci.inspect import inspect as inspect_artifact
    from oci.reference import parse_reference

    context = cli_context(ctx)
    result = inspect_artifact(parse_reference(reference, plain_http=plain_http))
    output = context.output(as_json)
    output.result(result, lambda r: _render(r, output))


def _render(result, output: Output) -> Iterable[RenderableType]:  # type: ignore[no-untyped-def]
    yield f"reference  {result.reference}"
    yield f"manifest   {result.digest}"
    yield f"snapshot   {result.snapshot}" + (" (subset)" if result.subset else "")
    if result.created_at:
        yield f"created    {result.created_at}"
    history = "unknown" if result.history_length is None else f"{result.history_length} snapshot(s)"
    yield f"history    {history}"
    yield f"size       {result.total_size} bytes"
    if result.schema_versions:
        versions = ", ".join(f"{name} {'/'.join(map(str, v))}" for name, v in result.schema_versions.items())
        yield f"schemas    {versions} (protocol {result.protocol_version or '?'})"
    table = output.table("module", "blocks", "layer bytes", "root")
    for module in result.modules:
        table.add_row(str(module.memory_type), str(module.block_count), str(module.layer_size), str(module.root))
    yield table
    if result.trust_root:
        yield f"trust root {result.trust_root}"
    if result.signatures:
        signed = output.table("signature", "key", "snapshot", "claimed", "math")
        for sig in result.signatures:
            math = "-" if sig.signature_ok is None else ("good" if sig.signature_ok else "BAD")
            signed.add_row(sig.record.short, sig.key, sig.snapshot.short + (" (config)" if sig.over_config else ""),
                           ",".join(sig.claimed_scopes), math)
        yield signed
    else:
        yield "signatures none"
