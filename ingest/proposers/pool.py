"""The built-in heuristic run in forked worker processes, so proposing overlaps the caller's registering.

A large ingest spends ~0.25 ms of Python per small source in the heuristic; two workers take that off the
main process. Workers get only what the heuristic reads (block id, media type, normalized text, task id,
allowed types, cache key) in chunks, and answer each chunk with compact candidate-set JSON, re-parsed by
the caller (cheaper than unpickling the models), and the proposal-cache entry, so the caller only appends it. Answers are handed back per chunk in submission order, so callers
judge them in source order exactly as if proposed in-process.

Never forks while other threads run (a fork copies locks held by them); any failure (no fork, a dead
worker, a broken pipe) makes `results` return None and the caller proposes that chunk itself. Each
worker keeps at most one chunk in flight, so neither side can block on a full pipe while the other does.
Workers ignore Ctrl-C and exit when their pipe closes, including when the caller dies.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from brain.identity import BlockId
from ingest.cache import cache_entry
from ingest.proposers.base import ProposalResult, SourceText
from ingest.proposers.candidates import CandidateSet, Task
from ingest.proposers.heuristic import PRODUCER, extract_counted, proposal_notes

MAX_WORKERS = 2

# (block id, media type, text, task id, allowed memory type names, cache key): what the heuristic reads.
Item = tuple[str, str, str, str, tuple[str, ...], str]
# (candidate-set JSON, notes, proposal-cache entry) per item.
Answer = tuple[bytes, tuple[str, ...], bytes]


def pack(task: Task, source: SourceText, key: str) -> Item:
    """The picklable essentials of one heuristic job (`key`: its proposal-cache key)."""
    allowed = tuple(m.value for m in task.allowed_memory_types)
    return (str(source.block_id), source.media_type, source.text, task.task_id, allowed, key)


def answer(item: Item) -> Answer:
    """What `HeuristicProposer.propose` answers for `item`: compact JSON, notes, and the cache entry."""
    block_id, media_type, text, task_id, allowed, key = item
    source = SourceText.of(BlockId.parse(block_id), media_type, text)
    found, total = extract_counted(source, frozenset(allowed))
    candidates = CandidateSet(task_id=task_id, producer=PRODUCER, candidates=tuple(found))
    result = ProposalResult(candidates, notes=proposal_notes(source, len(found), total))
    data = candidates.to_bytes()
    return data, result.notes, cache_entry(key, result, data)


def unpack(reply: Answer) -> tuple[ProposalResult, bytes]:
    """The `ProposalResult` a worker's answer stands for, and its proposal-cache entry."""
    data, notes, entry = reply
    return ProposalResult(CandidateSet.model_validate_json(data), notes=notes), entry


def _serve(connection: Connection, inherited: Sequence[Connection]) -> None:
    """A worker: answer each chunk it receives, in order, until the pipe closes."""
    for other in inherited:
        other.close()  # else a sibling's pipe never reaches EOF when the caller dies
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the caller's; it closes the pipe
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
        self._ends: list[Connection] = []
        self._processes: list[Any] = []
        self._in_flight: list[deque[int]] = []
        self._answers: dict[int, list[Answer] | None] = {}
        self._owner: dict[int, int] = {}
        self._next_ticket = 0
        self._failed = False

    def _start(self) -> bool:
        if self._ends:
            return True
        if self._failed or self.workers < 1 or threading.active_count() > 1:
            return False
        context = multiprocessing.get_context("fork")
        try:
            for _ in range(self.workers):
                ours, theirs = context.Pipe()
                process = context.Process(target=_serve, args=(theirs, [*self._ends, ours]), daemon=True)
                process.start()
                theirs.close()
                self._ends.append(ours)
                self._processes.append(process)
                self._in_flight.append(deque())
        except OSError:
            self.close()
            self._failed = True
            return False
        return True

    def submit(self, items: list[Item]) -> int | None:
        """Hand `items` to a worker; the ticket for `results`, or None when no worker can take them."""
        if not items or not self._start():
            return None
        ticket = self._next_ticket
        self._next_ticket += 1
        worker = ticket % len(self._ends)
        while self._in_flight[worker]:
            self._receive(worker)
        try:
            self._ends[worker].send((ticket, items))
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
            ticket, replies = self._ends[worker].recv()
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
        for end in self._ends:
            end.close()
        for process in self._processes:
            # Idle workers hold nothing; a process forked later (the blob helper) may keep their pipe open.
            process.terminate()
            process.join()
        self._ends, self._processes, self._in_flight = [], [], []
        self._answers.clear()
        self._owner.clear()


__all__ = ["HeuristicPool", "Item", "answer", "pack", "unpack"]
