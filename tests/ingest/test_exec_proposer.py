"""`exec:COMMAND` with real tiny Python scripts: good answers, hangs, crashes, garbage, and hostile answers
that the validation gate must reject."""

from __future__ import annotations

import os
import shlex
import sys
import textwrap
import time
from pathlib import Path

import pytest

from brain.blocks import Block, MemoryType
from brain.errors import UsageError
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Task
from ingest.proposers.errors import ProposerError
from ingest.proposers.exec import ExecProposer
from ingest.validate import GateContext, RejectedCandidate, ValidatedCandidate, validate_candidates

SOURCE = Block.from_payload("canonical", {"blob": "sha256:" + "1" * 64, "media_type": "text/plain", "size": 4})
OTHER = Block.from_payload("canonical", {"blob": "sha256:" + "2" * 64, "media_type": "text/plain", "size": 4})
TASK = Task(source=SOURCE.block_id, allowed_memory_types=["episodic", "semantic"], task_id="t-7")
TEXT = SourceText.of(SOURCE.block_id, "text/plain", "The FFT is a fast algorithm.")
CONTEXT = GateContext.build({MemoryType.CANONICAL: [SOURCE.block_id, OTHER.block_id], MemoryType.SEMANTIC: []})

# The answering script reads the request and answers with CANDIDATES (a Python expression over `request`).
ANSWER = """
import json, sys
request = json.load(sys.stdin)
source = request["task"]["source"]
CANDIDATES
json.dump({"schema_version": "boltzmann.candidates/v1", "task_id": request["task"].get("task_id"),
           "candidates": candidates}, sys.stdout)
"""


def _proposer(tmp_path: Path, body: str, name: str = "script.py", **options: float) -> ExecProposer:
    script = tmp_path / name
    script.write_text(textwrap.dedent(body))
    return ExecProposer(f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}", **options)


def _answering(tmp_path: Path, candidates: str) -> ExecProposer:
    return _proposer(tmp_path, ANSWER.replace("CANDIDATES", f"candidates = {candidates}"))


def _failure(proposer: ExecProposer) -> ProposerError:
    with pytest.raises(ProposerError) as caught:
        proposer.propose(TASK, TEXT)
    return caught.value


def test_good_script_sees_task_schema_and_text(tmp_path: Path) -> None:
    proposer = _answering(
        tmp_path,
        '[{"memory_type": "semantic", "evidence": [source], "locator": "L1", "payload": {"kind": "concept", '
        '"label": "FFT", "statement": request["text"] + " " + ",".join(sorted(request["schema"]["properties"]))}}]',
    )
    result = proposer.propose(TASK, TEXT)
    assert result.usage is None and result.candidates.task_id == "t-7"
    [candidate] = result.candidates.candidates
    assert candidate.payload["statement"] == "The FFT is a fast algorithm. candidates,producer,schema_version,task_id"
    [validated] = validate_candidates(result.candidates, TASK, CONTEXT)
    assert isinstance(validated, ValidatedCandidate)


def test_hang_is_killed_with_its_children(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    proposer = _proposer(
        tmp_path,
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open({str(marker)!r}, "w").write(str(child.pid))
        time.sleep(60)
        """,
        timeout=1.0,
    )
    started = time.monotonic()
    assert _failure(proposer).code == "proposer-timeout"
    assert time.monotonic() - started < 10
    child = int(marker.read_text())
    for _ in range(100):
        if not _alive(child):
            break
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_crash_reports_stderr_tail(tmp_path: Path) -> None:
    error = _failure(
        _proposer(tmp_path, "import sys\nsys.stderr.write('x' * 10000 + ' model exploded')\nsys.exit(3)\n")
    )
    assert error.code == "proposer-crashed"
    assert "exited with status 3" in error.detail and error.detail.endswith("model exploded")
    assert len(error.detail) < 2300


def test_script_that_ignores_stdin_and_prints_garbage(tmp_path: Path) -> None:
    assert _failure(_proposer(tmp_path, "print('hello, I am not JSON')\n")).code == "proposer-garbage"
    assert _failure(_proposer(tmp_path, "print('{}')\n")).code == "proposer-garbage"


def test_huge_output_is_capped(tmp_path: Path) -> None:
    proposer = _proposer(tmp_path, "import sys\nsys.stdout.write('[' * 5_000_000)\n", max_output_bytes=1000)
    error = _failure(proposer)
    assert error.code == "proposer-garbage" and "more than 1000 bytes" in error.detail


def test_endless_output_is_stopped_at_the_cap_not_at_the_timeout(tmp_path: Path) -> None:
    # Once, a flood ran until the (120 s default) timeout for every source.
    flood = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    proposer = _proposer(tmp_path, flood, max_output_bytes=1000, timeout=60.0)
    started = time.monotonic()
    error = _failure(proposer)
    assert error.code == "proposer-garbage" and "more than 1000 bytes" in error.detail
    assert time.monotonic() - started < 30


def test_wrong_task_id_is_garbage(tmp_path: Path) -> None:
    script = ANSWER.replace('request["task"].get("task_id")', '"someone-else"').replace("CANDIDATES", "candidates = []")
    assert "someone-else" in _failure(_proposer(tmp_path, script)).detail


def _judged(tmp_path: Path, candidates: str) -> list[RejectedCandidate | ValidatedCandidate]:
    result = _answering(tmp_path, candidates).propose(TASK, TEXT)
    return validate_candidates(result.candidates, TASK, CONTEXT)


def test_proposing_canonical_and_provenance_is_rejected(tmp_path: Path) -> None:
    judged = _judged(
        tmp_path,
        '[{"memory_type": "canonical", "evidence": [source], "payload": {"blob": "sha256:" + "3" * 64, '
        '"media_type": "text/plain", "size": 1}}, {"memory_type": "provenance", "evidence": [source], '
        '"payload": {"record": {"record_type": "demotion"}}}]',
    )
    assert [r.codes[0] if isinstance(r, RejectedCandidate) else None for r in judged] == ["memory-type-not-allowed"] * 2


def test_float_rejects_only_its_candidate(tmp_path: Path) -> None:
    judged = _judged(
        tmp_path,
        '[{"memory_type": "semantic", "evidence": [source], "payload": {"kind": "fact", "label": "pi", '
        '"statement": "pi", "weight": 3.14}}, {"memory_type": "episodic", "evidence": [source], '
        '"payload": {"summary": "met", "occurred_at": "2026-01-01T00:00:00Z"}}]',
    )
    assert isinstance(judged[0], RejectedCandidate) and judged[0].codes == ("schema",)
    assert isinstance(judged[1], ValidatedCandidate)


def test_relation_to_missing_block_and_foreign_evidence(tmp_path: Path) -> None:
    judged = _judged(
        tmp_path,
        '[{"memory_type": "semantic", "evidence": [source], "payload": {"kind": "fact", "label": "a", '
        '"statement": "b", "relations": [{"predicate": "cites", "target": "sha256:" + "4" * 64}]}}, '
        f'{{"memory_type": "semantic", "evidence": ["{OTHER.block_id}"], "payload": {{"kind": "fact", "label": "c", '
        '"statement": "d"}}]',
    )
    assert [r.codes for r in judged] == [("relation-target-not-found",), ("evidence-not-in-task",)]


def test_bad_commands_are_usage_errors(tmp_path: Path) -> None:
    for command in ("", "'unterminated", "/no/such/program --flag"):
        with pytest.raises(UsageError):
            ExecProposer(command)


def test_script_hash_is_part_of_the_parameters(tmp_path: Path) -> None:
    first = _proposer(tmp_path, "print(1)\n")
    second = _proposer(tmp_path, "print(2)\n")
    assert first.parameters["argv"] == second.parameters["argv"]
    assert first.parameters["files"] != second.parameters["files"]
    assert os.fspath(tmp_path / "script.py") in first.parameters["files"]
