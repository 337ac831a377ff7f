"""`brain serve --mcp | --http HOST:PORT`: the brain, read-only, for agents (HTTP on 127.0.0.1:8742 by default).

The server answers `show`, `prove`, `status` and `ls` by running those very commands in-process with
`--json` (see `serve.face`), so its JSON is the CLI's by construction.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from brain.errors import UsageError
from cli.context import cli_context

DEFAULT_HTTP = "127.0.0.1:8742"


def serve(
    ctx: typer.Context,
    mcp: Annotated[bool, typer.Option("--mcp", help="Speak the Model Context Protocol on stdin/stdout.")] = False,
    http: Annotated[
        str | None,
        typer.Option("--http", metavar="HOST:PORT", help=f"Serve HTTP on HOST:PORT (e.g. {DEFAULT_HTTP})."),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option("--token-file", metavar="PATH", help="Require `Authorization: Bearer <token>` (HTTP)."),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option("--workers", metavar="N", min=1, max=64, help="HTTP worker processes (default: one per core, "
                     "at most 4)."),
    ] = None,
) -> None:
    """Serve the brain read-only to agents (MCP over stdio, or HTTP; default: HTTP on 127.0.0.1:8742)."""
    if mcp and http is not None:
        raise UsageError("choose one of --mcp or --http HOST:PORT", hint=f"e.g. `brain serve --http {DEFAULT_HTTP}`")
    if not mcp and http is None:
        http = DEFAULT_HTTP
    context = cli_context(ctx)
    brain = context.open_brain()  # a clear error before anything listens
    from serve.face import BrainFace

    face = BrainFace(brain.path, _cli_json(brain.path, ctx.find_root().command))
    try:
        if mcp:
            if token_file is not None:
                raise UsageError("--token-file applies to --http; an MCP client owns the stdio pipe it talks over")
            from serve.mcp_stdio import run_stdio

            run_stdio(face)
        else:
            from serve.http_api import serve_http

            assert http is not None
            processes = workers if workers is not None else min(os.cpu_count() or 1, 4)
            serve_http(face, http, token_file, note=context.output(False).message, workers=processes)
    finally:
        face.close()


def _cli_json(brain_path: Path, cli: Callable[..., Any]) -> Callable[[Sequence[str]], Any]:
    """Run a read-only command of this CLI (`cli`: the root command, as the running context names it, so
    this module need not import the app that imports it) in-process with --json; its parsed output."""
    import click  # only a server needs it: not loaded with every command

    lock = threading.Lock()  # redirecting stdout is process-wide

    def run(args: Sequence[str]) -> Any:
        out = io.StringIO()
        with lock, contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            try:
                cli(["--brain", str(brain_path), "--quiet", *args, "--json"], prog_name="brain", standalone_mode=False)
            except click.ClickException as e:
                raise UsageError(e.format_message()) from None
        return json.loads(out.getvalue())

    return run
