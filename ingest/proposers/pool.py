"""The built-in heuristic run in forked worker processes, so proposing overlaps the caller's registering.

A large ingest spends ~0.25 ms of Python per small source in the heuristic; two workers take that off the
main process. Workers get only what the heuristic reads (`Item`: block id, media type, normalized text,
task id, allowed types, cache key) in chunks, and answer each chunk with compact candidate-set JSON,
re-parsed by the caller (cheaper than unpickling the models), and the proposal-cache entry, so the caller
only appends it. Answers are handed back per chunk in submission order, so callers judge them in source
order exactly as if proposed in-process.

The pool owns its schedule: `suits` says when a run uses it (many sources, the built-in heuristic),
`CHUNK` how many jobs a worker takes at once, `BATCH` how many the caller judges together. The schedule
depends only on the proposer and the source count, never on whether workers started, so snapshots stay
byte-identical either way.

Workers are started by `brain.concurrency` (never while other threads run; they ignore Ctrl-C and exit
when their pipe closes, including when the caller dies). Any failure (no fork, a dead worker, a broken
pipe) makes `results` return None and the caller proposes that chunk itself. Each worker keeps at most
one chunk in flight, so neither side can block on a full pipe while the other does.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import NamedTuple

from brain.concurrency import Worker, can_fork, start_worker
from brain.identity import BlockId
from ingest.cache import cache_entry
from ingest.proposers.base import ProposalResult, Proposer, SourceText
from ingest.proposers.candidates import CandidateSet, Task
from ingest.proposers.heuristic import PRODUCER, HeuristicProposer

MAX_WORKERS = 2
MIN_SOURCES = 256
"""Runs with fewer sources propose in-process: starting workers would cost more than they save."""
CHUNK = 32
"""Jobs handed to a worker at once, while later sources register."""
BATCH = 128
"""Jobs the caller judges together."""


def suits(proposer: Proposer, sources: int) -> bool:
    """Whether a run of `sources` sources proposes with this pool: only the built-in heuristic, and many."""
    return type(proposer) is HeuristicProposer and sources >= MIN_SOURCES


class Item(NamedTuple):
    """What the heuristic reads for one job."""

    block_id: str
    media_type: str
    text: str
    task_id: str | None
    allowed: tuple[str, ...]
    """Allowed memory type names."""
    key: str
    """The proposal-cache key."""


class Answer(NamedTuple):
    """A worker's answer for one item."""

    candidates: bytes
    """Candidate-set JSON."""
    notes: tuple[str, ...]
    entry: bytes
    """The proposal-cache entry."""


class Ticket(NamedTuple):
    """Where one job went: the chunk's ticket and the job's index in it."""

    chunk: int
    position: int


def pack(task: Task, source: SourceText, key: str) -> Item:
    """The picklable essentials of one heuristic job (`key`: its proposal-cache key)."""
    allowed = tuple(m.value for m in task.allowed_memory_types)
    return Item(str(source.block_id), source.media_type, source.text, task.task_id, allowed, key)


def answer(item: Item) -> Answer:
    """What `HeuristicProposer.propose` answers for `item`: compact JSON, notes, and the cache entry."""
    from ingest.proposers.extraction import extract_counted, proposal_notes  # loaded before the fork (`_start`)

    source = SourceText.of(BlockId.parse(item.block_id), item.media_type, item.text)
    found, total = extract_counted(source, frozenset(item.allowed))
    candidates = CandidateSet(task_id=item.task_id, producer=PRODUCER, candidates=tuple(found))
    result = ProposalResult(candidates, notes=proposal_notes(source, len(found), total))
    data = candidates.to_bytes()
    return Answer(data, result.notes, cache_entry(item.key, result, data))


def unpack(reply: Answer) -> tuple[ProposalResult, bytes]:
    """The `ProposalResult` a worker's answer stands for, and its proposal-cache entry."""
    data, notes, entry = reply
    return ProposalResult(CandidateSet.model_validate_json(data), notes=notes), entry


def _serve(connection: Connection) -> None:
    """A worker: answer each chunk it receives, in order, until the pipe closes."""
    while True:
        try:
            ticket, items = connection.recv()
        except (EOFError, OSError):
            return
        connection.send((ticket, [answer(item) for item in items]))


class HeuristicPool:
    """Forked heuristic workers; chunks in, answers out in submission order, None when the caller must redo them."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers if workers is not None else min(MAX_WORKERS, os.cpu_count() or 1)
        self._started: list[Worker] = []
        self._in_flight: list[deque[int]] = []
        self._answers: dict[int, list[Answer] | None] = {}
        self._owner: dict[int, int] = {}
        self._next_ticket = 0
        self._failed = False

    @property
    def _processes(self) -> list[BaseProcess]:
        return [worker.process for worker in self._started]

    def _start(self) -> bool:
        if self._started:
            return True
        if self._failed or self.workers < 1 or not can_fork():
            return False
        # The scan is imported on first use (a run that asks nothing never loads it): here, once, so that the
        # workers inherit it instead of each importing it.
        import ingest.proposers.extraction  # noqa: F401

        try:
            for _ in range(self.workers):
                self._started.append(start_worker(_serve))
                self._in_flight.append(deque())
        except OSError:
            self.close()
            self._failed = True
            return False
        return True

    def submit(self, items: Sequence[Item]) -> int | None:
        """Hand `items` to a worker; the ticket for `results`, or None when no worker can take them."""
        if not items or not self._start():
            return None
        ticket = self._next_ticket
        self._next_ticket += 1
        worker = ticket % len(self._started)
        while self._in_flight[worker]:
            self._receive(worker)
        try:
            self._started[worker].connection.send((ticket, list(items)))
        except (OSError, ValueError):
            return None
        self._in_flight[worker].append(ticket)
        self._owner[ticket] = worker
        return ticket

    def results(self, ticket: int) -> list[tuple[ProposalResult, bytes]] | None:
        """The answers for a submitted chunk, in item order; None when its worker failed."""
        worker = self._owner.pop(ticket, None)
        while worker is not None and ticket not in self._answers and self._in_flight[worker]:
            self._receive(worker)
        replies = self._answers.pop(ticket, None)
        return None if replies is None else [unpack(reply) for reply in replies]

    def _receive(self, worker: int) -> None:
        expected = self._in_flight[worker].popleft()
        try:
            ticket, replies = self._started[worker].connection.recv()
        except (EOFError, OSError, ValueError):
            ticket, replies = expected, None
        if ticket != expected or replies is None:  # a dead or confused worker: its chunks are redone in-process
            self._answers[expected] = None
            while self._in_flight[worker]:
                self._answers[self._in_flight[worker].popleft()] = None
            return
        self._answers[ticket] = replies

    def close(self) -> None:
        """Close the pipes (the workers exit) and reap the workers."""
        for worker in self._started:
            worker.close(terminate=True)
        self._started, self._in_flight = [], []
        self._answers.clear()
        self._owner.clear()


__all__ = ["BATCH", "CHUNK", "Answer", "HeuristicPool", "Item", "Ticket", "answer", "pack", "suits", "unpack"]
