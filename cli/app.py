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

A command module is imported only when its command is looked up (`brain status` imports
`cli.commands.status` and nothing of the others; `brain --help` imports them all for their help lines), so
`import cli.main` stays light. Import heavy libraries (openai, oras, pypdf) inside the command function
anyway: a module's imports are paid by `--help`, by shell completion and by a config file's check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from importlib import import_module
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.core import Command, Context  # typer vendors click; these are its own types

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



class LazyCommands(MutableMapping[str, Command]):
    """A group's commands by name, in registry order, each built by `load(name)` on first lookup."""

    def __init__(self, names: list[str], load: Callable[[str], Command]) -> None:
        self._order = dict.fromkeys(names)
        self._load = load
        self._built: dict[str, Command] = {}

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            if name not in self._order:
                raise KeyError(name)
            self._built[name] = self._load(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._order[name] = None
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._order[name]
        self._built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._order

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


class LazyBrainGroup(BrainGroup):
    """The root group: the commands of `cli.commands.COMMANDS`, each module imported when its command is needed."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        registered = dict(self.commands)
        self.commands = LazyCommands([*registered, *_REGISTRY], self._build)
        for name, command in registered.items():
            self.commands[name] = command

    def _build(self, name: str) -> Command:
        module, attribute = _REGISTRY[name]
        command = _click_command(getattr(import_module(f"cli.commands.{module}"), attribute), name)
        self.spread_globals(command)
        return command

    def list_commands(self, ctx: Context) -> list[str]:
        """The command names in registry order, without building the commands."""
        return list(self.commands)


app = typer.Typer(
    name="brain",
    cls=LazyBrainGroup,
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
        from importlib.metadata import PackageNotFoundError, version

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


# CLI name -> (module, attribute) of cli.commands, in `--help` order.
_REGISTRY = {command_name(attribute): (module, attribute) for module, attribute in COMMANDS}


def _click_command(target: Callable[..., Any] | typer.Typer, name: str) -> Command:
    """The click command typer builds for a command function or group registered on `app` as `name`."""
    scratch = typer.Typer()  # registers exactly as `app.command` / `app.add_typer` would
    if isinstance(target, typer.Typer):
        scratch.add_typer(target)
        group = typer.main.get_group_from_info(
            scratch.registered_groups[0], pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode, suggest_commands=app.suggest_commands,
        )
        command: Command = group
    else:
        scratch.command(name=name)(target)
        command = typer.main.get_command_from_info(
            scratch.registered_commands[0], pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
        )
    if command.name != name:
        raise RuntimeError(f"cli.commands.COMMANDS registers {name!r}, but the command is named {command.name!r}")
    return command
