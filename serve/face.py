"""What a server can answer: the read-only face of one brain, shared by the MCP and HTTP transports.

Read-only by construction: this class has no method that writes to the brain, and the transports expose
nothing else. (The one file it may write is the search index sidecar, which is not part of the brain.)
Every answer is the JSON of the matching CLI command's `--json`: `search` and `cat` are answered here by
`retrieval` (the same functions the CLI calls); `show`, `prove`, `status` and `ls` by the CLI command
itself, run in-process through the `CliJson` callable the CLI hands in, so there is one implementation of
each answer and the two faces cannot drift apart.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from brain.brain import Brain
from brain.errors import UsageError
from retrieval.models import CatResult
from retrieval.passages import parse_locator
from retrieval.proofs import Prover
from retrieval.query import DEFAULT_LIMIT, Searcher, SearchRequest, Views
from retrieval.recovery import answered
from retrieval.sources import SourceView, read_view, resolve_source

CliJson = Callable[[Sequence[str]], Any]
"""Runs one read-only `brain` command with `--json` in-process (arguments after the command name) and
returns its parsed JSON; raises the command's `BrainError`."""

READ_ONLY_COMMANDS = frozenset({"show", "prove", "status", "ls"})


class BrainFace:
    """Answers for one brain directory; thread-safe (one index connection per thread)."""

    def __init__(self, brain_path: Path, cli_json: CliJson) -> None:
        self.brain_path = Path(brain_path)
        self.brain = Brain.open(self.brain_path)
        self._cli_json = cli_json
        self._lock = threading.Lock()
        self._idle: list[Searcher] = []
        self._all: list[Searcher] = []
        # Proof trees and views are shared by every searcher: a new connection must not start cold.
        self._prover = Prover(self.brain)
        self._views = Views(self.brain)

    @contextlib.contextmanager
    def _searcher(self) -> Iterator[Searcher]:
        """A searcher for this thread's request (SQLite connections are not shared between threads)."""
        with self._lock:
            searcher = self._idle.pop() if self._idle else None
        if searcher is None:
            searcher = Searcher(self.brain, prover=self._prover, views=self._views)
            with self._lock:
                self._all.append(searcher)
        try:
            yield searcher
        finally:
            with self._lock:
                self._idle.append(searcher)

    def close(self) -> None:
        """Close every index connection this face opened."""
        with self._lock:
            for searcher in self._all:
                searcher.close()
            self._all.clear()
            self._idle.clear()

    def search(
        self,
        query: str,
        limit: int = DEFAULT_LIMIT,
        types: Sequence[str] = (),
        include_superseded: bool = False,
        subject: str | None = None,
        since: str | None = None,
        until: str | None = None,
        expand: bool = True,
        tags: Sequence[str] = (),
    ) -> dict[str, Any]:
        """`brain search --json`."""
        request = SearchRequest(
            query=query, types=tuple(t.lower() for t in types), subject=subject, since=since, until=until,
            limit=limit, include_superseded=include_superseded, expand=expand, tags=tuple(tags),
        )
        request.validate()
        with self._searcher() as searcher:
            return answered(lambda: searcher.index, lambda: searcher.search(request), _log).model_dump(mode="json")

    def context(self, query: str, max_tokens: int, types: Sequence[str] = (),
                include_superseded: bool = False, tags: Sequence[str] = ()) -> dict[str, Any]:
        """`brain context --json`."""
        from retrieval.context import ContextRequest, pack

        request = ContextRequest(query=query, max_tokens=max_tokens, types=tuple(t.lower() for t in types),
                                 include_superseded=include_superseded, tags=tuple(tags))
        request.validate()
        request.search().validate()
        with self._searcher() as searcher:
            return answered(lambda: searcher.index, lambda: pack(searcher, request), _log).model_dump(mode="json")

    def cat(self, source: str, locator: str | None = None) -> dict[str, Any]:
        """`brain cat --json`."""
        if locator is not None:
            parse_locator(locator)
        with self._searcher() as searcher:
            searcher.refresh()

            def work() -> SourceView:
                block_id = resolve_source(searcher.brain, searcher.index, source)
                return read_view(searcher.brain, searcher.index, block_id, locator)

            view = answered(lambda: searcher.index, work, _log)
        return CatResult.of(view).model_dump(mode="json")

    def refresh(self) -> None:
        """Bring the search index to the brain's head (what the first `search` or `cat` would do)."""
        if self.brain.snapshot_digest() is None:
            return  # an empty brain: nothing to index
        with self._searcher() as searcher:
            answered(lambda: searcher.index, searcher.refresh, _log)

    def status(self) -> Any:
        """`brain status --json`."""
        return self._cli(["status"])

    def show(self, block: str) -> Any:
        """`brain show ID --json`."""
        return self._cli(["show", _argument(block)])

    def prove(self, block: str) -> Any:
        """`brain prove ID --json`."""
        return self._cli(["prove", _argument(block)])

    def ls(self, memory_type: str | None = None) -> Any:
        """`brain ls [--type T] --json`."""
        return self._cli(["ls", *(["--type", _argument(memory_type)] if memory_type else [])])

    def _cli(self, args: list[str]) -> Any:
        if args[0] not in READ_ONLY_COMMANDS:
            raise UsageError(f"{args[0]!r} is not a read-only command")
        return self._cli_json(args)


def _log(line: str) -> None:
    """One line on the server's stderr (its log): what it repaired on its own."""
    print(f"brain serve: {line}", file=sys.stderr, flush=True)


def _argument(value: str) -> str:
    """A user value passed as a command argument: never taken for an option."""
    if not isinstance(value, str) or not value or value.startswith("-"):
        raise UsageError(f"invalid argument {value!r}", hint="give a block id or a memory type")
    return value
