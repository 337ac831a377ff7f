"""The typer app: global options on the root callback, and the command registry.

Adding a command
----------------
1. Write `cli/commands/<name>.py` with one function named after the command (`def pull(...)`; a
   trailing `_` is dropped and `_` becomes `-`, so `def lock_status` is `brain lock-status`). Its
   docstring's first line is the help text. It takes `ctx: typer.Context` plus its own options
   (including `as_json: JsonFlag = False` from `cli.options`), gets the global options with
   `cli_context(ctx)`, calls ONE library function, and hands a pydantic result model to
   `cli_context(ctx).output(as_json).result(model, render)`. A command that writes hands the
   library use case `context.actor()`, `lock_timeout=context.lock_timeout` and `on_wait=context.wait_note()`
   (the use case takes the writer lock; no command locks, writes or deletes a file) and reports progress
   with `output.progress(...)`. It never catches `Exception` and never exits: raise a
   `brain.errors` error and `cli.main` maps it to an exit code.
   For a command group (`brain tags list`), export a `typer.Typer(name="tags")` instead.
2. Add it to `COMMANDS` in `cli/commands/__init__.py` (the list order is the `--help` order).

Nothing else: the global options (`--brain`, `--actor`, `-q`, ...) are accepted after the command name as
well as before it, and the project config file (`brain.toml`) sets defaults for every option of every
command by its long name (`[mycommand] my-option = 3`); see `cli/global_options.py` and `cli/config.py`.

Import heavy libraries (openai, oras, pypdf) inside the command function, not at module level: every
command module is imported on every invocation.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Annotated

import typer

from cli.commands import COMMANDS
from cli.completion import ENV_SHELL, install_completion, show_completion
from cli.context import (
    DEFAULT_BRAIN_DIR,
    DEFAULT_LOCK_TIMEOUT,
    CliContext,
    ColorMode,
    OutputFormat,
)
from cli.global_options import CONFIG_META, GLOBAL_OPTIONS, BrainGroup, describe_source

app = typer.Typer(
    name="brain",
    cls=BrainGroup,
    help="Build, verify and publish Boltzmann Protocol v1 knowledge brains.",
    no_args_is_help=True,
    add_completion=False,  # our own options below: typer's cannot find the shell outside a terminal
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
)


def _print_version(value: bool) -> None:
    """Eager `--version`: print and stop before any command runs."""
    if value:
        try:
            typer.echo(f"brain {version('brain')}")
        except PackageNotFoundError:
            typer.echo("brain (not installed)")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    brain: Annotated[
        Path,
        typer.Option("--brain", envvar="BRAIN_DIR", metavar="PATH", help="The brain directory."),
    ] = DEFAULT_BRAIN_DIR,
    actor: Annotated[
        str | None,
        typer.Option(
            "--actor",
            envvar="BRAIN_ACTOR",
            metavar="ID",
            help="Who is acting (name@example.org or org/name); default: git user.email, "
            "else $USER@localhost.localdomain.",
        ),
    ] = None,
    lock_timeout: Annotated[
        float,
        typer.Option(
            "--lock-timeout", envvar="BRAIN_LOCK_TIMEOUT", metavar="SECONDS", min=0.0,
            help="How long to wait for the writer lock.",
        ),
    ] = DEFAULT_LOCK_TIMEOUT,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", envvar="BRAIN_CONFIG", metavar="FILE",
            help="The config file (default: brain.toml or pyproject.toml [tool.brain], found upwards).",
        ),
    ] = None,
    color: Annotated[
        ColorMode,
        typer.Option("--color", envvar="BRAIN_COLOR", help="Colour: never, auto (a terminal, no NO_COLOR), always."),
    ] = ColorMode.AUTO,
    output: Annotated[
        OutputFormat,
        typer.Option("--output", envvar="BRAIN_OUTPUT", help="Result format: table (for people), json, markdown."),
    ] = OutputFormat.TABLE,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or notes on stderr.")] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
    install: Annotated[
        bool,
        typer.Option(
            "--install-completion", callback=install_completion, is_eager=True, expose_value=False,
            help=f"Install shell completion for the current shell (or ${ENV_SHELL}).",
        ),
    ] = False,
    show: Annotated[
        bool,
        typer.Option(
            "--show-completion", callback=show_completion, is_eager=True, expose_value=False,
            help=f"Print the shell completion script for the current shell (or ${ENV_SHELL}).",
        ),
    ] = False,
) -> None:
    """Build, verify and publish Boltzmann Protocol v1 knowledge brains."""
    bound = ctx.meta.get(CONFIG_META)
    values = {
        "brain": brain, "actor": actor, "lock_timeout": lock_timeout, "config": config, "color": color,
        "output": output, "quiet": quiet, "debug": debug,
    }  # fmt: skip
    context = CliContext(config_file=bound)
    params = {param.name: param for param in ctx.command.params}
    for name in GLOBAL_OPTIONS:
        context.set_global(name, values[name], describe_source(params[name], ctx.get_parameter_source(name), bound, ()))
    ctx.obj = context


def command_name(function_name: str) -> str:
    """The CLI name of a command function (`lock_status_` → `lock-status`)."""
    return function_name.rstrip("_").replace("_", "-")


for _command in COMMANDS:
    if isinstance(_command, typer.Typer):
        app.add_typer(_command)
    else:
        app.command(name=command_name(_command.__name__))(_command)
