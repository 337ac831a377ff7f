"""`brain pull REF`: download a remote brain artifact and install it (creating the brain if needed)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any

import typer
from rich.console import RenderableType

from brain.blocks.memory_type import MemoryType
from brain.errors import InvalidInputError
from cli.context import cli_context
from cli.options import JsonFlag
from cli.transfer import PlainHttpFlag, blob_progress

ModuleOption = Annotated[
    list[str] | None,
    typer.Option(
        "--module", "-m", metavar="TYPE",
        help="Install only this module (repeatable); provenance, which explains it, always comes along.",
    ),
]

MaxInflateOption = Annotated[
    int | None,
    typer.Option(
        "--max-inflate", metavar="BYTES", envvar="BRAIN_MAX_INFLATE", min=1,
        help="Let each layer inflate to BYTES (for a source you trust; normally max(100 x compressed, 8 MiB), "
        "at most 4 GiB; this option is capped at 64 GiB).",
    ),
]


def parse_modules(names: list[str] | None) -> set[MemoryType] | None:
    """The memory types named by `--module` options, or None for all of them."""
    if not names:
        return None
    chosen: set[MemoryType] = set()
    for name in names:
        try:
            chosen.add(MemoryType(name))
        except ValueError:
            valid = ", ".join(t.value for t in MemoryType)
            raise InvalidInputError(f"unknown module {name!r}", hint=f"use one of: {valid}") from None
    return chosen


def render(result) -> Iterable[RenderableType]:  # type: ignore[no-untyped-def]
    """The lines `pull` and `fetch` print for people."""
    yield f"{result.reference} {result.digest}"
    if result.already_head:
        yield f"snapshot {result.snapshot} (already the head)"
    else:
        yield f"snapshot {result.snapshot}" + ("" if result.head_moved else " (fetched, head not moved)")
    if result.left_out:
        yield "left out: " + ", ".join(str(t) for t in result.left_out)
    if result.head_moved and result.head != result.snapshot:
        yield f"head {result.head} (a local snapshot of the installed modules, parent {result.snapshot.short})"
    if result.tag:
        yield f"tagged {result.tag} in index.json"
    if getattr(result, "switched_to", None):
        yield f"switched to branch {result.switched_to}"
    authenticity = getattr(result, "authenticity", None)
    if authenticity is not None:
        yield (
            f"authenticity {authenticity.state} ({authenticity.records} signature record(s), {authenticity.stored} new)"
        )
        if authenticity.re_rooted:
            yield (
                "re-rooted: this brain now trusts the pulled chain's trust root (recorded in boltzmann/trust-log.jsonl)"
            )


def pull(
    ctx: typer.Context,
    reference: Annotated[str, typer.Argument(metavar="REF", help="HOST[:PORT]/REPOSITORY[:TAG][@DIGEST]")],
    module: ModuleOption = None,
    force: Annotated[
        bool, typer.Option("--force", help="Move the head even if the local head is not in the pulled history.")
    ] = False,
    plain_http: PlainHttpFlag = False,
    max_inflate: MaxInflateOption = None,
    require_signed: Annotated[
        bool,
        typer.Option("--require-signed", help="Refuse an unsigned head too (default: only for brains seen signed).")
    ] = False,
    allow_unauthorized: Annotated[
        bool,
        typer.Option(
            "--allow-unauthorized", help="Install a head that is not authorized (says so): the explicit escape."
        )
    ] = False,
    branch: Annotated[
        str | None,
        typer.Option("--branch", metavar="NAME", help="Install it as local branch NAME (and switch to it); default: "
                     "the branch the tag names (br.NAME), else the current branch."),
    ] = None,
    re_root: Annotated[
        bool, typer.Option("--re-root", help="Leave this brain's trust root for the served chain's own (pin and memory "
                           "rewritten, logged in boltzmann/trust-log.jsonl); the head must still be authorized.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Pull a brain from a registry into --brain (verified and authenticated before the head moves)."""
    from oci.authenticate import PullPolicy

    authn = PullPolicy(require_signed=require_signed, allow_unauthorized=allow_unauthorized, re_root=re_root)
    run_pull(ctx, reference, plain_http, as_json, modules=parse_modules(module), force=force, max_inflate=max_inflate,
             authn=authn, branch=branch)


def run_pull(ctx: typer.Context, reference: str, plain_http: bool, as_json: bool, **options: Any) -> None:
    """What `pull` and `fetch` share: parse REF, pull into --brain (created if needed), report."""
    from oci.pull import brain_to_pull_into
    from oci.pull import pull as pull_artifact
    from oci.reference import parse_reference

    context = cli_context(ctx)
    ref = parse_reference(reference, plain_http=plain_http)
    output = context.output(as_json)
    with brain_to_pull_into(context.brain_path) as (brain, created), blob_progress(output) as progress:
        result = pull_artifact(
            brain, ref, progress=progress, lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
            on_warning=output.warning, **options
        )
    result = result.model_copy(update={"initialized": created})
    output.message(
        f"{result.blobs_fetched} blob(s) downloaded ({result.bytes_fetched} bytes), "
        f"{result.blobs_reused} already stored"
    )
    output.result(result, render)
