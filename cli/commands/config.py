"""`brain config show [COMMAND...]`: the effective settings and where each came from."""

from __future__ import annotations

import os
from collections.abc import Iterable
from enum import Enum
from typing import Annotated, Any

import typer
from rich.console import RenderableType

from brain.errors import UsageError
from cli.config_secrets import looks_like_secret
from cli.context import cli_context
from cli.global_options import COPY_PREFIX, GLOBAL_OPTIONS
from cli.options import JsonFlag
from cli.output import Output, Result

config = typer.Typer(name="config", help="Show the project config file's effect (brain.toml, [tool.brain]).")


class SettingRow(Result):
    """One option's effective value: `source` is `flag --x`, `environment $X`, `config FILE:LINE` or `default`."""

    command: str
    option: str
    value: Any
    source: str


class ConfigShowResult(Result):
    """The config file in use (if any), the global options, and the options the file or COMMAND sets."""

    file: str | None
    settings: list[SettingRow]


def _shown(option: str, value: Any) -> Any:
    """The value as printed: a secret (from the environment, say) is named, never shown."""
    return "(a secret: not shown)" if looks_like_secret(option, _plain(value)) else _plain(value)


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value if isinstance(value, (str, int, float, bool)) or value is None else str(value)


def _command_rows(root: Any, path: list[str], bound: Any) -> list[SettingRow]:
    """Every option of the command at `path`, with the value it would take without flags, and why."""
    command = root
    for name in path:
        sub = getattr(command, "commands", {}).get(name)
        if sub is None:
            raise UsageError(f"no command {' '.join(path)!r}", hint="see `brain --help`")
        command = sub
    rows = []
    for param in command.params:
        if type(param).__name__ not in ("TyperOption", "TyperArgument") or param.is_eager:
            continue
        setting = bound.setting(tuple(path), param.name) if bound is not None else None
        if param.name.startswith(COPY_PREFIX) and setting is None:
            continue  # a global option, listed above, unless this command's table sets it
        if type(param).__name__ == "TyperArgument":
            long_name = param.name.rstrip("_").replace("_", "-")
        else:
            long_name = next((o for o in param.opts if o.startswith("--")), param.opts[0])
        envvars = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
        given = [v for v in envvars if os.environ.get(v)]
        if given:
            value, source = os.environ[given[0]], f"environment ${given[0]}"
        elif setting is not None:
            value, source = setting.value, f"config {setting.where}"
        else:
            value, source = param.default, "default"
        option = long_name.lstrip("-")
        rows.append(SettingRow(command=" ".join(path), option=option, value=_shown(option, value), source=source))
    return rows


@config.command()
def show(
    ctx: typer.Context,
    command: Annotated[
        list[str] | None,
        typer.Argument(metavar="[COMMAND]...", help="Also list every option of this command (e.g. ingest)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Print the effective settings (global options, and what the config file sets) and where each came from."""
    context = cli_context(ctx)
    bound = context.config_file
    values = {
        "brain": context.brain_path, "actor": context.actor_option, "lock_timeout": context.lock_timeout,
        "config": bound.file.path if bound is not None else None, "color": context.color,
        "output": context.output_format, "quiet": context.quiet, "debug": context.debug,
    }  # fmt: skip
    rows = [
        SettingRow(
            command="", option=name.replace("_", "-"), value=_plain(values[name]),
            source=context.sources.get(name, "default"),
        )
        for name in GLOBAL_OPTIONS
    ]
    if bound is not None and rows[3].source == "default":
        rows[3] = rows[3].model_copy(update={"source": "found (nearest brain.toml or pyproject.toml [tool.brain])"})
    if command:
        rows += _command_rows(ctx.find_root().command, command, bound)
    elif bound is not None:
        rows += [
            SettingRow(
                command=" ".join(s.command), option=s.key, value=_shown(s.key, s.value), source=f"config {s.where}"
            )
            for s in bound.settings
            if s.command
        ]
    result = ConfigShowResult(file=str(bound.file.path) if bound is not None else None, settings=rows)
    output = context.output(as_json)
    output.result(result, lambda r: _render(r, output))


def _render(result: ConfigShowResult, output: Output) -> Iterable[RenderableType]:
    yield f"config file: {result.file}" if result.file else "config file: none (no brain.toml or [tool.brain] found)"
    table = output.table("command", "option", "value", "source")
    for row in result.settings:
        value = (
            ""
            if row.value is None
            else ",".join(map(str, row.value))
            if isinstance(row.value, list)
            else str(row.value)
        )
        table.add_row(row.command or "(global)", row.option, value, row.source)
    yield table
