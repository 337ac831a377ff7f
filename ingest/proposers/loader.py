"""Choosing a proposer by spec: `heuristic`, `exec:COMMAND`, `openai`, or a third-party `NAME[:ARG]`.

Third parties register a factory in the `brain.proposers` entry-point group; it is called as
`factory(argument, options)` (argument = the text after the first `:`, or None) and must return an object
satisfying the `Proposer` protocol; one that defines only the required members (`ProposerCore`) is given
the protocol's defaults for the rest (`_WithDefaults`). Built-in names cannot be shadowed by an entry point.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Literal

from brain.errors import BrainError, UsageError
from brain.frozen import FrozenModel
from ingest.proposers.base import ProposalResult, Proposer, ProposerCore, SourceText
from ingest.proposers.candidates import Task

ENTRY_POINT_GROUP = "brain.proposers"
DEFAULT_PROPOSER = "heuristic"


@dataclass(frozen=True)
class ProposerOptions:
    """Settings a proposer may use; None means "its own default" (or, for openai, the environment)."""

    timeout: float | None = None
    concurrency: int | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    temperature: str | None = None
    max_output_bytes: int | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ), repr=False)


class ProposerInfo(FrozenModel):
    """One proposer `brain proposers` lists."""

    name: str
    source: Literal["builtin", "entry point"]
    version: str | None
    description: str
    shadowed: bool = False


def _heuristic(argument: str | None, options: ProposerOptions) -> Proposer:
    from ingest.proposers.heuristic import HeuristicProposer

    if argument:
        raise UsageError(f"the heuristic proposer takes no argument (got heuristic:{argument})")
    return HeuristicProposer()


def _exec(argument: str | None, options: ProposerOptions) -> Proposer:
    from ingest.proposers.exec import ExecProposer

    if not argument:
        raise UsageError("exec needs a command: --proposer 'exec:python3 my_proposer.py'")
    tuning: dict[str, Any] = {}
    if options.timeout is not None:
        tuning["timeout"] = options.timeout
    if options.max_output_bytes is not None:
        tuning["max_output_bytes"] = options.max_output_bytes
    return ExecProposer(argument, **tuning)


def _openai(argument: str | None, options: ProposerOptions) -> Proposer:
    from ingest.proposers.openai import OpenAIProposer

    settings = {
        "model": argument or options.model,
        "base_url": options.base_url,
        "api_key": options.api_key,
        "timeout": options.timeout,
        "concurrency": options.concurrency,
        "temperature": options.temperature,
    }
    return OpenAIProposer.from_options(settings, options.environ)


BUILTINS: dict[str, tuple[Callable[[str | None, ProposerOptions], Proposer], str]] = {
    "heuristic": (_heuristic, "offline rules: headings, definitions, step lists, dated lines (default)"),
    "exec": (_exec, "exec:COMMAND - any program reading a task on stdin, answering JSON on stdout"),
    "openai": (_openai, "openai[:MODEL] - an OpenAI-compatible chat-completions endpoint (BRAIN_OPENAI_*)"),
}
BUILTIN_VERSION = "1"


def load_proposer(spec: str, options: ProposerOptions | None = None) -> Proposer:
    """The proposer named by `spec`; raises `UsageError` for an unknown, broken or misbehaving one."""
    options = options or ProposerOptions()
    name, _, argument = spec.partition(":")
    name = name.strip()
    arg = argument if argument else None
    if name in BUILTINS:
        return BUILTINS[name][0](arg, options)
    found = _entry_points().get(name)
    if found is None:
        known = ", ".join(sorted({*BUILTINS, *_entry_points()}))
        raise UsageError(f"unknown proposer {name!r}: choose one of {known}")
    try:
        factory = found.load()
        proposer = factory(arg, options)
    except BrainError:
        raise
    except Exception as e:  # noqa: BLE001 - third-party code: any failure is a bad plugin, reported as such
        raise UsageError(f"proposer {name!r} ({found.value}) failed to load: {type(e).__name__}: {e}") from e
    problem = _protocol_problem(proposer)
    if problem:
        raise UsageError(f"proposer {name!r} ({found.value}) is not a Proposer: {problem}")
    return proposer if isinstance(proposer, Proposer) else _WithDefaults(proposer)


class _WithDefaults(Proposer):
    """A third-party proposer that defines only the required members, with the protocol's defaults for the rest."""

    def __init__(self, plugin: ProposerCore) -> None:
        self.plugin = plugin
        self.id, self.version, self.model, self.parameters = plugin.id, plugin.version, plugin.model, plugin.parameters

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        """The plugin's own answer."""
        return self.plugin.propose(task, source)


def available_proposers() -> list[ProposerInfo]:
    """Built-in proposers, then installed entry points by name (without importing them)."""
    infos = [
        ProposerInfo(name=name, source="builtin", version=BUILTIN_VERSION, description=description)
        for name, (_, description) in BUILTINS.items()
    ]
    for name, entry in sorted(_entry_points(include_shadowed=True).items()):
        dist = entry.dist
        infos.append(
            ProposerInfo(
                name=name,
                source="entry point",
                version=dist.version if dist is not None else None,
                description=f"{entry.value} ({dist.name if dist is not None else 'unknown distribution'})",
                shadowed=name in BUILTINS,
            )
        )
    return infos


def _entry_points(include_shadowed: bool = False) -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if (include_shadowed or entry.name not in BUILTINS) and entry.name not in found:
            found[entry.name] = entry
    return found


def _protocol_problem(proposer: object) -> str | None:
    if not isinstance(proposer, ProposerCore):
        return "it needs id, version, model, parameters and propose(task, source)"
    if not isinstance(proposer.id, str) or not proposer.id or not isinstance(proposer.version, str):
        return "id and version must be non-empty strings"
    if proposer.model is not None and not isinstance(proposer.model, str):
        return "model must be a string or None"
    if not isinstance(proposer.parameters, dict):
        return "parameters must be a dict"
    return None
