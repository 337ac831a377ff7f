"""Global options anywhere, and the config file's defaults for every command: one mechanism, no per-command code.

`BrainGroup` is the root click group typer builds. When it is built it gives every leaf command a copy of
each global option (`brain status --brain DIR` parses like `brain --brain DIR status`); the copy has no
default and no environment variable, and the command's value replaces the root's only when it was given on
that command's line, or set in that command's table of the config file while the root's value is a
default. A command that declares an option with the same spelling keeps its own.

Before parsing, the root context gets the config file (see `cli.config`) as click's `default_map`, so
click's own order applies to every option of every command: flag > environment > config file > default.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer._click.core import (  # typer vendors click; these are its own types
    Context,
    ParameterSource,
)
from typer.core import TyperGroup

from brain.errors import BrainError
from cli.config import (
    BoundConfig,
    bind_config,
    iter_commands,
    locate_config,
    read_config,
)

# Root-callback parameter names that every command accepts too (the order is the help order).
GLOBAL_OPTIONS = ("brain", "actor", "lock_timeout", "config", "color", "output", "quiet", "debug")
# Options a config file cannot set: where the config is, and the eager ones (--version, completion).
NOT_FROM_CONFIG = frozenset({"config", "_global_config"})
COPY_PREFIX = "_global_"
CONFIG_META = "brain.config"


def copy_name(name: str) -> str:
    """The parameter name of a global option's copy on a command (`brain` → `_global_brain`)."""
    return COPY_PREFIX + name


def describe_source(
    param: Any, source: ParameterSource | None, bound: BoundConfig | None, command: tuple[str, ...]
) -> str:
    """Where a parameter's value came from, for people: `--brain`, `$BRAIN_DIR`, `brain.toml:3`, `default`."""
    if source is ParameterSource.COMMANDLINE:
        return "flag " + (param.opts[0] if param.opts else param.name)
    if source is ParameterSource.ENVIRONMENT:
        names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
        given = [name for name in names if os.environ.get(name)]
        return "environment $" + (given[0] if given else "?")
    if source is ParameterSource.DEFAULT_MAP and bound is not None:
        setting = bound.setting(command, param.name)
        return "config " + (setting.where if setting is not None else str(bound.file.path))
    return "default"


class BrainGroup(TyperGroup):
    """The root group: spreads the global options to every command and reads the config file."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for command in self.commands.values():
            self.spread_globals(command)

    def spread_globals(self, command: Any) -> None:
        """Give every leaf command under `command` (one of this group's) a copy of each global option."""
        globals_ = {p.name: p for p in self.params if p.name in GLOBAL_OPTIONS}
        for _path, leaf in iter_commands(command):
            _spread(leaf, [globals_[name] for name in GLOBAL_OPTIONS if name in globals_])

    def make_context(
        self, info_name: str | None, args: list[str], parent: Context | None = None, **extra: Any
    ) -> Context:
        """The root context, with the config file as its `default_map` (shell completion ignores a broken one)."""
        bound = None
        if parent is None and "default_map" not in extra:
            try:
                bound = load_config(self, args)
            except BrainError:
                if not extra.get("resilient_parsing"):
                    raise
            extra["default_map"] = bound.default_map if bound is not None else None
        ctx = super().make_context(info_name, args, parent, **extra)
        if parent is None:
            ctx.meta[CONFIG_META] = bound
        return ctx


def load_config(root: Any, args: list[str], cwd: Path | None = None) -> BoundConfig | None:
    """The config file that applies to `args` (see `cli.config.locate_config`), checked against `root`."""
    path, _why = locate_config(args, cwd)
    if path is None:
        return None
    return bind_config(read_config(path), root, skip=NOT_FROM_CONFIG)


def _spread(command: Any, globals_: list[Any]) -> None:
    """Give `command` a copy of each global option it does not spell itself, applied before it runs."""
    taken = {opt for param in command.params for opt in (*param.opts, *getattr(param, "secondary_opts", ()))}
    added: list[str] = []
    for original in globals_:
        if set(original.opts) & taken:
            continue
        duplicate = copy.copy(original)
        duplicate.name = copy_name(original.name)
        duplicate.default = None
        duplicate.envvar = None
        duplicate.show_default = False
        duplicate.show_envvar = False
        duplicate.is_eager = False
        duplicate.callback = None
        duplicate.help = f"{original.help} (global option)" if original.help else "(global option)"
        duplicate._runtime_param = None
        command.params.append(duplicate)
        added.append(original.name)
    if added:
        command.invoke = _applying_globals(command.invoke, added)


def _applying_globals(invoke: Callable[[Context], Any], names: list[str]) -> Callable[[Context], Any]:
    def run(ctx: Context) -> Any:
        from cli.context import cli_context

        root = ctx.find_root()
        context = cli_context(ctx)  # type: ignore[arg-type]  # typer.Context is this Context plus nothing used
        bound = root.meta.get(CONFIG_META)
        path = tuple(c.info_name or "" for c in _chain(ctx))
        for name in names:
            value = ctx.params.pop(copy_name(name), None)
            source = ctx.get_parameter_source(copy_name(name))
            root_source = root.get_parameter_source(name)
            from_command_table = source is ParameterSource.DEFAULT_MAP and root_source in (
                ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP, None,
            )
            if source is ParameterSource.COMMANDLINE or from_command_table:
                param = next(p for p in ctx.command.params if p.name == copy_name(name))
                context.set_global(name, value, describe_source(param, source, bound, path))
        return invoke(ctx)

    return run


def _chain(ctx: Context) -> list[Context]:
    """The contexts from below the root down to `ctx` (the command path without the program name)."""
    chain = []
    current: Context | None = ctx
    while current is not None and current.parent is not None:
        chain.append(current)
        current = current.parent
    return list(reversed(chain))

