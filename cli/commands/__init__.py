"""The command registry: one module per command, listed here in `--help` order (see `cli/app.py`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from cli.commands import init, log, ls, prove, show, status

COMMANDS: list[Callable[..., Any] | typer.Typer] = [
    init.init,
    status.status,
    log.log,
    ls.ls,
    show.show,
    prove.prove,
]
