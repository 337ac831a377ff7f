"""The project config file: `brain.toml`, or `[tool.brain]` in `pyproject.toml`, found the way git finds a repo.

Where it comes from: `--config FILE` (anywhere on the command line), else `$BRAIN_CONFIG`, else the first
directory from the current one upwards holding `brain.toml` or a `pyproject.toml` with a `[tool.brain]`
table (`brain.toml` wins in the same directory).

What it holds: top-level keys are the global options by their long names (`brain`, `actor`,
`lock-timeout`, ...); a table per command holds that command's options by their long names (`[ingest]`
with `license`, `include`, ...; a command group nests: `[proposers.list]`), and its arguments by their
names (`[push] reference = "ghcr.io/org/brain:v1"`, `[ingest] paths = ["docs"]`). A global option may also sit in
a command's table (`[ingest] lock-timeout = 60`): it applies to that command only. Relative paths (options
whose type is a path) are relative to the file's directory.

Precedence: a flag on the command line > its environment variable > the config file > the built-in default.
This is click's own order for `Context.default_map`, which is what the file becomes: nothing here is
specific to a command, so every command (today's and tomorrow's) takes its defaults from the file.

Refused, each with `file:line`: a file that is not TOML, an unknown key or command, a value of the wrong
type, and any key that looks like a secret (API keys and passwords come from the environment or a
credential helper, never from a file that is committed).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from brain.errors import ConfigFileError
from brain.store.user_files import MIB, read_user_file
from cli.config_secrets import looks_like_secret as looks_like_secret  # re-exported for callers of cli.config
from cli.config_secrets import secret_kind

CONFIG_NAME = "brain.toml"
PYPROJECT_NAME = "pyproject.toml"
PYPROJECT_TABLE = ("tool", "brain")
ENV_CONFIG = "BRAIN_CONFIG"
CONFIG_OPTION = "--config"
MAX_CONFIG_BYTES = MIB  # a config file is a few hundred bytes; a pyproject.toml rarely 100 KiB

_TABLE_LINE = re.compile(r"^\s*\[(?!\[)\s*(?P<key>[^\]]+?)\s*\]\s*(#.*)?$")
_BARE_OR_QUOTED = r'(?:"(?:[^"\\]|\\.)*"|\'[^\']*\'|[A-Za-z0-9_-]+)'
_KEY_LINE = re.compile(rf"^\s*(?P<key>{_BARE_OR_QUOTED}(?:\s*\.\s*{_BARE_OR_QUOTED})*)\s*=")
_KEY_PART = re.compile(_BARE_OR_QUOTED)


@dataclass(frozen=True)
class ConfigFile:
    """One parsed config file: the brain table and the line of every key in it."""

    path: Path
    table: Mapping[str, Any]
    prefix: tuple[str, ...] = ()
    lines: Mapping[tuple[str, ...], int] = field(default_factory=dict)

    @property
    def directory(self) -> Path:
        """What relative paths in the file are relative to."""
        return self.path.parent

    def where(self, keys: tuple[str, ...]) -> str:
        """`path:line` of a key (path of keys below the brain table), or the path alone if unknown."""
        full = (*self.prefix, *keys)
        for end in range(len(full), 0, -1):
            line = self.lines.get(full[:end])
            if line is not None:
                return f"{self.path}:{line}"
        return str(self.path)


def _key_parts(text: str) -> tuple[str, ...]:
    parts = []
    for match in _KEY_PART.finditer(text):
        part = match.group()
        if part[:1] in ('"', "'"):
            part = part[1:-1]
        parts.append(part)
    return tuple(parts)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """The 1-based line of every table header and key (full dotted path); tomllib reports no positions."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        if (header := _TABLE_LINE.match(line)) is not None:
            table = _key_parts(header.group("key"))
            lines.setdefault(table, number)
            continue
        if (assignment := _KEY_LINE.match(line)) is not None:
            lines.setdefault((*table, *_key_parts(assignment.group("key"))), number)
            rest = line[assignment.end() :]
            for quotes in ('"""', "'''"):
                if rest.count(quotes) % 2 == 1:
                    in_multiline = quotes
    return lines


def read_config(path: Path) -> ConfigFile:
    """Parse `path` (brain.toml, or a pyproject.toml's `[tool.brain]`); raises `ConfigFileError`."""
    try:
        text = read_user_file(path, "config file", MAX_CONFIG_BYTES, error=ConfigFileError).decode("utf-8")
    except FileNotFoundError:
        raise ConfigFileError(
            f"config file {path} does not exist", hint=f"fix --config or ${ENV_CONFIG}, or create it"
        ) from None
    except UnicodeDecodeError as e:
        raise ConfigFileError(f"{path}: not UTF-8 text (byte {e.start})", hint="TOML files are UTF-8") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        message = str(e)
        at = re.search(r"\s*\(at line (\d+), column (\d+)\)", message)
        if at is not None:
            message = f"{path}:{at.group(1)}: not valid TOML: {message[: at.start()]} (column {at.group(2)})"
        else:
            message = f"{path}: not valid TOML: {message}"
        raise ConfigFileError(message, hint="see https://toml.io") from None
    lines = key_lines(text)
    if path.name == PYPROJECT_NAME:
        table = data.get("tool", {}).get("brain") if isinstance(data.get("tool"), dict) else None
        if not isinstance(table, dict):
            raise ConfigFileError(f"{path} has no [tool.brain] table", hint="add one, or use a brain.toml")
        return ConfigFile(path, table, PYPROJECT_TABLE, lines)
    return ConfigFile(path, data, (), lines)


def _pyproject_has_brain_table(path: Path) -> bool:
    """Cheap test before parsing: a pyproject.toml without `tool.brain` in it is not ours."""
    try:
        text = read_user_file(path, "config file", MAX_CONFIG_BYTES, error=ConfigFileError).decode("utf-8", "replace")
    except FileNotFoundError:
        return False
    return re.search(r"^\s*\[\s*tool\s*\.\s*brain\s*[\].]|^\s*tool\s*\.\s*brain\s*[.=]", text, re.MULTILINE) is not None


def find_config(start: Path) -> Path | None:
    """The nearest `brain.toml`, or `pyproject.toml` with a `[tool.brain]` table, from `start` upwards.

    Whatever stands under the name counts as found (a FIFO or a directory named `brain.toml` is then an
    error when it is read, never silently skipped); a `pyproject.toml` is ours only with a brain table.
    """
    directory = start.resolve()
    for candidate in (directory, *directory.parents):
        brain_toml = candidate / CONFIG_NAME
        if os.path.lexists(brain_toml):
            return brain_toml
        pyproject = candidate / PYPROJECT_NAME
        if os.path.lexists(pyproject) and _pyproject_has_brain_table(pyproject):
            return pyproject
    return None


def explicit_config_argument(args: list[str]) -> str | None:
    """The value of the last `--config FILE` / `--config=FILE` before `--` (it may follow the command)."""
    found = None
    options = args[: args.index("--")] if "--" in args else args
    for index, arg in enumerate(options):
        if arg == CONFIG_OPTION and index + 1 < len(options):
            found = options[index + 1]
        elif arg.startswith(CONFIG_OPTION + "="):
            found = arg[len(CONFIG_OPTION) + 1 :]
    return found


def locate_config(args: list[str], cwd: Path | None = None) -> tuple[Path | None, str]:
    """Which config file applies and why: (`path`, `"--config"` | `"$BRAIN_CONFIG"` | `"found"` | `"none"`)."""
    explicit = explicit_config_argument(args)
    if explicit:
        return Path(explicit), CONFIG_OPTION
    from_env = os.environ.get(ENV_CONFIG)
    if from_env:
        return Path(from_env), f"${ENV_CONFIG}"
    found = find_config(cwd or Path.cwd())
    return (found, "found") if found is not None else (None, "none")


# -- binding a file to the command tree --------------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One value the config file sets: for which command (() = global), which option, and where."""

    command: tuple[str, ...]
    key: str
    param: str
    value: Any
    where: str


@dataclass(frozen=True)
class BoundConfig:
    """A config file checked against the command tree: click's `default_map` and what it set, where."""

    file: ConfigFile
    default_map: dict[str, Any]
    settings: tuple[Setting, ...]

    def setting(self, command: tuple[str, ...], param: str) -> Setting | None:
        """The setting for `param` of `command`, if the file has one."""
        for setting in self.settings:
            if setting.command == command and setting.param == param:
                return setting
        return None


def _long_names(param: Any) -> list[str]:
    return [opt[2:] for opt in (*param.opts, *getattr(param, "secondary_opts", ())) if opt.startswith("--")]


def _options_by_long_name(command: Any, skip: frozenset[str]) -> dict[str, Any]:
    """Every parameter of `command` a config may set: options by their long names, arguments by name (`reference`)."""
    found: dict[str, Any] = {}
    for param in command.params:
        if param.is_eager or param.name in skip:
            continue
        kind = type(param).__name__
        if kind == "TyperOption":
            for name in _long_names(param):
                found.setdefault(name, param)
        elif kind == "TyperArgument":
            found.setdefault(param.name.rstrip("_").replace("_", "-"), param)
    return found


def _base_type(annotation: Any) -> tuple[Any, bool]:
    """(`element type`, `is_list`) of an option annotation, Optional unwrapped."""
    origin = get_origin(annotation)
    if origin is Union or type(annotation).__name__ == "UnionType":
        members = [a for a in get_args(annotation) if a is not type(None)]
        annotation = members[0] if len(members) == 1 else annotation
        origin = get_origin(annotation)
    if origin is list:
        (element,) = get_args(annotation)
        return _base_type(element)[0], True
    return annotation, False


def _type_problem(value: Any, expected: Any) -> str | None:
    """Why `value` (as TOML parsed it) cannot be an option of type `expected`, or None."""
    if expected is bool:
        return None if isinstance(value, bool) else "expected true or false"
    if isinstance(value, (bool, dict, list)):
        return f"expected {_type_word(expected)}, got {_toml_word(value)}"
    if expected is int:
        return None if isinstance(value, int) else f"expected an integer, got {_toml_word(value)}"
    if expected is float:
        return None if isinstance(value, (int, float)) else f"expected a number, got {_toml_word(value)}"
    if expected in (str, Path) or (isinstance(expected, type) and issubclass(expected, Enum)):
        return None if isinstance(value, str) else f"expected a string, got {_toml_word(value)}"
    return None


def _type_word(expected: Any) -> str:
    return {int: "an integer", float: "a number", bool: "true or false"}.get(expected, "a string")


def _toml_word(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, (int, float)):
        return "a number"
    return "a string" if isinstance(value, str) else type(value).__name__


class _Binder:
    def __init__(self, file: ConfigFile, skip: frozenset[str]) -> None:
        self.file = file
        self.skip = skip  # param names a config never sets (--config itself, eager options)
        self.settings: list[Setting] = []

    def error(self, keys: tuple[str, ...], message: str, hint: str | None = None) -> ConfigFileError:
        return ConfigFileError(f"{self.file.where(keys)}: {message}", hint=hint)

    def bind(
        self, command: Any, table: Mapping[str, Any], path: tuple[str, ...], keys: tuple[str, ...]
    ) -> dict[str, Any]:
        options = _options_by_long_name(command, self.skip)
        subcommands = getattr(command, "commands", {}) or {}
        defaults: dict[str, Any] = {}
        for key, value in table.items():
            here = (*keys, key)
            if (kind := secret_kind(key, value)) is not None:
                raise self.error(
                    here,
                    f"{key!r} looks like a secret ({kind}), and secrets never live in the config file",
                    hint="put it in the environment (or a credential helper) and name the variable, e.g. api-key-env",
                )
            if key in subcommands and isinstance(value, dict):
                defaults[subcommands[key].name or key] = self.bind(subcommands[key], value, (*path, key), here)
                continue
            param = options.get(key)
            if param is None:
                raise self._unknown(key, value, path, here, options, subcommands)
            defaults[param.name] = self.convert(command, param, key, value, here)
            self.settings.append(Setting(path, key, param.name, defaults[param.name], self.file.where(here)))
        return defaults

    def _unknown(
        self, key: str, value: Any, path: tuple[str, ...], here: tuple[str, ...], options: dict, subcommands: dict
    ) -> ConfigFileError:
        known = [*options, *subcommands]
        close = difflib.get_close_matches(key, known, n=1)
        what = "command" if isinstance(value, dict) and not path else "key"
        scope = f"[{'.'.join(path)}]" if path else "the top level"
        hint = f"did you mean {close[0]!r}?" if close else None
        if hint is None and not path:
            hint = "top-level keys are global options (see `brain --help`); tables are commands"
        elif hint is None:
            hint = f"see `brain {' '.join(path)} --help` for its options"
        return self.error(here, f"unknown {what} {key!r} in {scope}", hint=hint)

    def convert(self, command: Any, param: Any, key: str, value: Any, here: tuple[str, ...]) -> Any:
        expected, is_list = _base_type(param.type_descriptor.annotation)
        if param.multiple or is_list:
            items = value if isinstance(value, list) else [value]
            for item in items:
                if (problem := _type_problem(item, expected)) is not None:
                    raise self.error(here, f"{key}: {problem} (or an array of them)")
            converted: Any = [self._path(item, expected) for item in items]
        else:
            if (problem := _type_problem(value, expected)) is not None:
                raise self.error(here, f"{key}: {problem}")
            converted = self._path(value, expected)
        self._check_value(command, param, key, converted, here)
        return converted

    def _path(self, value: Any, expected: Any) -> Any:
        if expected is Path and isinstance(value, str):
            path = Path(value).expanduser()
            return str(path if path.is_absolute() else self.file.directory / path)
        return value

    def _check_value(self, command: Any, param: Any, key: str, value: Any, here: tuple[str, ...]) -> None:
        """Run the option's own conversion (ranges, choices) so a bad value fails here, naming the line."""
        import typer

        ctx = typer.Context(command)
        try:
            param.get_runtime_param().coerce(value, param=param, ctx=ctx)
        except typer.BadParameter as e:
            raise self.error(here, f"{key}: {e.message}") from None


def bind_config(file: ConfigFile, root: Any, *, skip: frozenset[str] = frozenset()) -> BoundConfig:
    """Check `file` against the command tree under `root` and turn it into click's `default_map`."""
    binder = _Binder(file, skip)
    default_map = binder.bind(root, file.table, (), ())
    return BoundConfig(file, default_map, tuple(binder.settings))


def iter_commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every leaf command under `command` with its path of names (`("proposers", "list")`)."""
    subcommands = getattr(command, "commands", None)
    if not subcommands:
        yield path, command
        return
    for name, sub in subcommands.items():
        yield from iter_commands(sub, (*path, name))
