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
    """Where the credentials were stored (never the secret itself), and whether the registry checked them."""

    registry: str
    username: str
    config: str
    # False when the registry answered without asking for credentials: it needs none (for reading at least).
    verified: bool = True


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
    path, verified = verify_and_store(host, username, password, plain_http=plain_http)
    result = LoginResult(registry=registry, username=username, config=str(path), verified=verified)
    cli_context(ctx).output(as_json).result(result, _render)


def _render(result: LoginResult) -> str:
    if result.verified:
        return f"Logged in to {result.registry} as {result.username} ({result.config})"
    return (
        f"{result.registry} needs no credentials: it answered without asking for any, so they were not checked "
        f"(stored for {result.username} in {result.config} in case it asks later, e.g. to push)"
    )
