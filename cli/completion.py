"""`brain --install-completion` / `--show-completion`: shell completion scripts (typer's), for the shell in use.

The shell is `$BRAIN_COMPLETION_SHELL` if set, else the one this process runs under (shellingham walks the
process tree), else the login shell (`$SHELL`): a CI job or a script has no interactive parent, and typer's
own options then fail with "Shell  not supported".
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

# typer's scripts and installers live in typer._completion_shared; imported when asked for, not at startup.
ENV_SHELL = "BRAIN_COMPLETION_SHELL"
PROG_NAME = "brain"
COMPLETE_VAR = "_BRAIN_COMPLETE"


def detect_shell() -> str:
    """The shell to complete for (see the module docstring); `UsageError` when none is supported."""
    import shellingham  # type: ignore[import-untyped]
    from typer._completion_shared import Shells

    names: list[str] = []
    if os.environ.get(ENV_SHELL):
        names.append(os.environ[ENV_SHELL])
    else:
        try:
            names.append(shellingham.detect_shell()[0])
        except shellingham.ShellDetectionFailure:
            pass
        if os.environ.get("SHELL"):
            names.append(Path(os.environ["SHELL"]).name)
    for name in names:
        if name.lower() in {s.value for s in Shells}:
            return name.lower()
    from brain.errors import UsageError

    seen = ", ".join(names) or "none"
    raise UsageError(
        f"cannot tell which shell to complete for (found: {seen})",
        hint=f"set {ENV_SHELL} to one of {', '.join(s.value for s in Shells)}",
    )


def show_completion(value: bool) -> None:
    """Eager `--show-completion`: print the script and stop."""
    if value:
        from typer._completion_shared import get_completion_script

        typer.echo(get_completion_script(prog_name=PROG_NAME, complete_var=COMPLETE_VAR, shell=detect_shell()))
        raise typer.Exit()


def install_completion(value: bool) -> None:
    """Eager `--install-completion`: install the script in the shell's startup files and stop."""
    if value:
        from typer._completion_shared import install

        shell, path = install(shell=detect_shell(), prog_name=PROG_NAME, complete_var=COMPLETE_VAR)
        typer.echo(f"{shell} completion installed in {path}; it takes effect in a new shell")
        raise typer.Exit()


def prepare_shell_completion() -> None:
    """Register typer's completion classes when the shell asks for completions (`_BRAIN_COMPLETE` is set)."""
    if os.environ.get(COMPLETE_VAR):
        from typer._completion_classes import completion_init

        completion_init()
