"""Proposals are committed by a process of their own (`serve.proposals_process`), never by the processes that
answer reads; it dies with the server, and a server whose proposal process died says so (503) and keeps
reading."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from tests.serve.conftest import bearer
from tests.serve.test_proposals_http import branch_head, canonical_ids, fact


def _children(pid: int) -> list[int]:
    """The processes the server's main thread forked (its request threads come and go, and fork nothing)."""
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
@pytest.mark.parametrize("workers", ["1", "2"])
def test_proposals_commit_outside_the_reading_processes(
    corpus_brain: Path, tokens_file: Path, start_server: Any, workers: str
) -> None:
    server = start_server(corpus_brain, "--allow-propose", "--tokens", str(tokens_file), "--workers", workers)
    # One proposal process; with --workers 2 also the two HTTP workers (forked once the banner is out).
    expected, deadline = 1 if workers == "1" else 3, time.monotonic() + 10
    while len(children := _children(server.process.pid)) < expected and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(children) == expected, children
    source = canonical_ids(corpus_brain)[0]
    for i in range(3):  # fresh connections: with two workers both of them hand proposals over
        status, answer, _ = server.post("/v1/proposals", {"candidates": [fact(source, label=f"process {i}")]})
        assert status == 200 and answer["committed"] == 1, answer
        assert branch_head(corpus_brain) == answer["snapshot"]
    assert _children(server.process.pid) == children  # the same processes: none was forked per proposal


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
def test_the_proposal_process_dies_with_the_server(corpus_brain: Path, tokens_file: Path, start_server: Any) -> None:
    server = start_server(corpus_brain, "--allow-propose", "--tokens", str(tokens_file), "--workers", "1")
    [child] = _children(server.process.pid)
    assert _alive(child)
    os.kill(server.process.pid, signal.SIGKILL)
    server.process.wait()
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), _command(child)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads the process tree from /proc")
def test_a_dead_proposal_process_is_a_503_and_reads_go_on(
    corpus_brain: Path, tokens_file: Path, start_server: Any
) -> None:
    server = start_server(corpus_brain, "--allow-propose", "--tokens", str(tokens_file), "--workers", "1")
    [child] = _children(server.process.pid)
    source = canonical_ids(corpus_brain)[0]
    before = branch_head(corpus_brain)
    os.kill(child, signal.SIGKILL)
    status, answer, _ = server.post("/v1/proposals", {"candidates": [fact(source, label="after the crash")]})
    assert status == 503, answer
    assert "proposal process" in answer["error"] and "\n" not in answer["error"]
    assert branch_head(corpus_brain) == before
    status, found, _ = server.raw("GET", "/v1/search?q=shard", bearer("reader"))
    assert status == 200 and found["matches"]
    assert server.alive()


def test_warming_reads_what_a_first_proposal_and_a_first_review_need(corpus_brain: Path) -> None:
    from brain.brain import Brain
    from brain.blocks import MemoryType
    from serve.face import BrainFace
    from serve.proposals import ProposalDesk
    from serve.ui import ReviewUI

    semantic = Brain.open(corpus_brain).module(MemoryType.SEMANTIC).ref.composition
    desk = ProposalDesk.open(corpus_brain, None)
    assert desk._statements._composition is None
    desk.warm()
    assert desk._statements._composition == semantic

    asked: list[list[str]] = []
    face = BrainFace(corpus_brain, lambda args: asked.append(list(args)) or {})
    ui = ReviewUI(face, face._cli_json)
    ui._warm()
    assert ui._statements._composition == semantic
    assert asked and asked[0][0] == "merge" and "--plan" in asked[0]
    assert ui.env.cache is not None and len(ui.env.cache) == len(ui.env.list_templates())  # compiled already
