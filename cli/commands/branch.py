"""`brain branch [--json]`, `brain branch create NAME [--at REF]`, `brain branch delete NAME [--force]`,
`brain branch --remote REF` (§10.1-§10.2; docs/branches.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import typer
from rich.console import RenderableType

from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Output
from cli.transfer import PlainHttpFlag

branch = typer.Typer(
    name="branch", help="List, create and delete branches (with --remote REF: a registry's branches).",
    invoke_without_command=True,
)


@branch.callback()
def branches(
    ctx: typer.Context,
    remote: Annotated[
        str | None,
        typer.Option(
            "--remote", metavar="REF", help="List the branches a registry repository publishes (its br.* tags)."
        ),
    ] = None,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """List the branches: name, head, tag, which is current, and snapshots ahead/behind of the current one."""
    if ctx.invoked_subcommand is not None:
        return
    context = cli_context(ctx)
    output = context.output(as_json)
    if remote is not None:
        from oci.auth import resolve_credentials
        from oci.reference import parse_reference
        from oci.transport import RegistryClient

        from brain.branches.operations import local_main_tag
        from oci.branches import remote_branches

        ref = parse_reference(remote, plain_http=plain_http)
        found = remote_branches(
            RegistryClient(ref, resolve_credentials(ref.registry)), local_main_tag(context.brain_path)
        )
        output.result(found, lambda r: _render_remote(r, output))
        return
    from brain.branches.operations import branch_list

    output.result(branch_list(context.open_brain()), lambda r: _render(r, output))


def _render(result, output: Output) -> RenderableType:  # type: ignore[no-untyped-def]
    table = output.table("", "branch", "head", "tag", "ahead", "behind")
    for info in result.branches:
        table.add_row(
            "*" if info.current else "", info.name, info.head.short, info.tag, str(info.ahead), str(info.behind)
        )
    return table


def _render_remote(result, output: Output) -> Iterable[RenderableType]:  # type: ignore[no-untyped-def]
    table = output.table("branch", "tag")
    for remote in result.branches:
        table.add_row(remote.name, remote.tag)
    yield table


@branch.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The new branch (segments of [A-Za-z0-9_-] joined by '/').")
    ],
    at: Annotated[
        str | None,
        typer.Option(
            "--at", metavar="REF",
            help="Start it at this branch, HEAD, local tag or snapshot (digest or prefix), "
            "optionally with ~N (N first parents back); default: the head.",
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create a branch at the head (or --at REF); the current branch stays current."""
    from brain.branches.operations import create_branch_at
    from oci.diff_sides import local_tag_snapshot

    context = cli_context(ctx)
    brain = context.open_brain()
    change = create_branch_at(
        brain, name, context.actor(), at, tagged=lambda tag: local_tag_snapshot(brain, tag),
        lock_timeout=context.lock_timeout, on_wait=context.wait_note(),
    )
    context.output(as_json).result(
        change, lambda r: f"created branch {r.branch} at {r.snapshot} (publishes as {r.tag})"
    )


@branch.command("delete")
def delete(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The branch to delete (its snapshots stay until pruned).")
    ],
    force: Annotated[
        bool, typer.Option("--force", help="Delete it even if it is neither merged nor published.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Delete a branch (never the current one; without --force, only one merged into another or published)."""
    from brain.branches.operations import delete_branch

    context = cli_context(ctx)
    brain = context.open_brain()
    change = delete_branch(
        brain, name, context.actor(), force=force, lock_timeout=context.lock_timeout, on_wait=context.wait_note()
    )
    context.output(as_json).result(change, lambda r: f"deleted branch {r.branch} (was at {r.snapshot})")
