"""The forked heuristic pool answers exactly what the in-process heuristic does, in order, and falls back cleanly."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from brain.blocks import MemoryType
from brain.identity import BlockId
from ingest.cache import ProposalCache, cache_entry, cache_key
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Task
from ingest.proposers.heuristic import HeuristicProposer
from ingest.proposers.pool import HeuristicPool, answer, pack, unpack

ALLOWED = (MemoryType.EPISODIC, MemoryType.PROCEDURAL, MemoryType.SEMANTIC)


def _jobs(count: int) -> list[tuple[Task, SourceText, str]]:
    jobs = []
    for i in range(count):
        text = f"# Topic {i}\n\nA shard{i} is a slice that keeps data close.\n\n## How to deploy\n1. build\n2. ship\n"
        block = BlockId.parse(f"sha256:{i:064x}")
        task = Task(source=block, allowed_memory_types=ALLOWED, requirements=(), instructions=None)
        jobs.append((task, SourceText.of(block, "text/markdown", text), cache_key(HeuristicProposer(), task)))
    return jobs


def test_answer_round_trips_to_the_in_process_result_and_cache_entry() -> None:
    for task, source, key in _jobs(3):
        expected = HeuristicProposer().propose(task, source)
        result, entry = unpack(answer(pack(task, source, key)))
        assert result == expected and len(result.candidates.candidates) == 2
        assert entry == cache_entry(key, expected)


def _alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Other tests of the session may leave idle threads behind; the thread guard is tested on its own below."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)


def test_pool_answers_chunks_in_submission_order(monkeypatch: pytest.MonkeyPatch) -> None:
    _alone(monkeypatch)
    jobs = _jobs(10)
    pool = HeuristicPool(workers=2)
    try:
        tickets = [pool.submit([pack(*job) for job in jobs[at : at + 3]]) for at in range(0, 10, 3)]
        assert all(t is not None for t in tickets)
        got = [reply for t in tickets for reply in pool.results(t) or []]  # type: ignore[arg-type]
    finally:
        pool.close()
    assert [r for r, _ in got] == [HeuristicProposer().propose(task, source) for task, source, _ in jobs]


def test_a_dead_worker_yields_none_for_its_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    _alone(monkeypatch)
    pool = HeuristicPool(workers=1)
    try:
        assert pool.submit([pack(*_jobs(1)[0])]) is not None
        os.kill(pool._processes[0].pid, signal.SIGKILL)
        pool._processes[0].join()
        ticket = pool.submit([pack(*_jobs(2)[1])])
        assert ticket is None or pool.results(ticket) is None
    finally:
        pool.close()


def test_no_fork_while_other_threads_run() -> None:
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        pool = HeuristicPool(workers=2)
        assert pool.submit([pack(*_jobs(1)[0])]) is None and not pool._processes
    finally:
        release.set()
        thread.join()


def test_put_entry_is_read_back_like_put(tmp_path) -> None:  # type: ignore[no-untyped-def]
    task, source, key = _jobs(1)[0]
    result, entry = unpack(answer(pack(task, source, key)))
    cache = ProposalCache(tmp_path)
    cache.put_entry(key, entry)
    cache.close()
    assert ProposalCache(tmp_path).get(key, task) == result
