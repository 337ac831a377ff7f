"""`brain serve`: read-only access for agents (MCP over stdio, or HTTP)."""

from __future__ import annotations

import typer


def serve(ctx: typer.Context) -> None:
    """Serve the brain read-only to agents (MCP over stdio, or HTTP)."""
