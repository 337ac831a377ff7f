"""`brain login HOST`: check credentials against a registry and store them in Docker's config.json."""

from __future__ import annotations

import getpass
import sys
from typing import Annotated

import typer

from brain.errors import UsageError
from cli.context import cli_context
from cli.options import JsonFlag
from cli.output import Result
from cli.transfer import PlainHttpFlag


class LoginResult(Result):
    """Where the verified credentials were stored (never the secret itself)."""

    registry: str
    username: str
    config: str


def _read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask for the password", hint="pipe it in with --password-stdin")
    return getpass.getpass("Password: ")


def login(
    ctx: typer.Context,
    host: Annotated[str, typer.Argument(metavar="HOST", help="Registry host, e.g. ghcr.io or localhost:5000")],
    username: Annotated[str | None, typer.Option("--username", "-u", help="Account name.")] = None,
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the password from stdin.")] = False,
    plain_http: PlainHttpFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Log in to a registry (verified against it, then saved to Docker's config.json)."""
    from oci.login import login as verify_and_store
    from oci.reference import parse_registry

    registry = parse_registry(host, plain_http=plain_http).registry
    if username is None:
        if not sys.stdin.isatty() or password_stdin:
            raise UsageError("no username given", hint="pass --username NAME")
        username = input("Username: ").strip()
    password = _read_password(password_stdin)
    path = verify_and_store(host, username, password, plain_http=plain_http)
    result = LoginResult(registry=registry, username=username, config=str(path))
    cli_context(ctx).output(as_json).result(result, lambda r: f"Logged in to {r.registry} as {r.username} ({r.config})")
