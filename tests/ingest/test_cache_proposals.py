"""The proposal cache: key material, round trips, corrupt entries as misses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from brain.errors import InvalidInputError
from brain.identity import BlockId
from ingest.cache import ProposalCache, cache_key
from ingest.proposers.base import ProposalResult, SourceText, TokenUsage
from ingest.proposers.candidates import Candidate, CandidateSet, Task
from ingest.proposers.heuristic import HeuristicProposer

SOURCE = BlockId("6" * 64)


class _Fixed:
    """A proposer with chosen identity fields (the cache only reads them)."""

    def __init__(self, id: str = "acme/x", version: str = "1", model: str | None = None, **parameters: Any) -> None:
        self.id, self.version, self.model, self.parameters = id, version, model, parameters

    def propose(self, task: Task, source: SourceText) -> ProposalResult:
        return ProposalResult(CandidateSet())


def _task(**fields: Any) -> Task:
    return Task(**({"source": SOURCE, "allowed_memory_types": ["semantic", "episodic"]} | fields))


def _result() -> ProposalResult:
    candidate = Candidate(memory_type="semantic", payload={"kind": "fact", "label": "x", "statement": "é", "n": 0.5},
                          evidence=(str(SOURCE),), locator="L1", confidence="high")
    return ProposalResult(CandidateSet(task_id="run-1", candidates=(candidate,)), TokenUsage(prompt_tokens=3, total_tokens=3))


def test_key_depends_on_every_input_but_not_task_id() -> None:
    base = cache_key(_Fixed(), _task())
    assert len(base) == 64
    assert cache_key(_Fixed(), _task(task_id="other")) == base
    assert cache_key(_Fixed(), _task(allowed_memory_types=["episodic", "semantic"])) == base
    variants = [
        cache_key(_Fixed(id="acme/y"), _task()),
        cache_key(_Fixed(version="2"), _task()),
        cache_key(_Fixed(model="m"), _task()),
        cache_key(_Fixed(temperature="0.2"), _task()),
        cache_key(_Fixed(), _task(source=BlockId("7" * 64))),
        cache_key(_Fixed(), _task(allowed_memory_types=["semantic"])),
        cache_key(_Fixed(), _task(instructions="be brief")),
        cache_key(_Fixed(), _task(requirements=())),
        cache_key(_Fixed(), _task(operation="rederive")),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_key_is_structured_not_concatenated() -> None:
    assert cache_key(_Fixed(id="a/b", version="c"), _task()) != cache_key(_Fixed(id="a/bc", version=""), _task())


def test_float_parameters_are_refused() -> None:
    with pytest.raises(InvalidInputError, match="cache key"):
        cache_key(_Fixed(temperature=0.2), _task())


def test_roundtrip_restamps_task_id(tmp_path: Path) -> None:
    cache = ProposalCache(tmp_path)
    key = cache_key(HeuristicProposer(), _task())
    assert cache.get(key) is None
    cache.put(key, _result())
    assert cache.path(key) == tmp_path / "boltzmann/cache/proposals" / key[:2] / f"{key}.json"
    assert cache.get(key) == _result()
    again = cache.get(key, _task(task_id="run-2"))
    assert again.candidates.task_id == "run-2" and again.usage == _result().usage
    assert [p.name for p in cache.path(key).parent.iterdir()] == [f"{key}.json"]


@pytest.mark.parametrize(
    "damage",
    [
        b"",
        b"{",
        b"[]",
        b'{"format":"brain.proposal-cache/0"}',
        b'{"format":"brain.proposal-cache/1","key":"wrong","candidates":{},"usage":null}',
        b"\xff\xfe",
    ],
)
def test_corrupt_entry_is_a_miss(tmp_path: Path, damage: bytes) -> None:
    cache = ProposalCache(tmp_path)
    key = "ab" * 32
    cache.put(key, _result())
    cache.path(key).write_bytes(damage)
    assert cache.get(key) is None


def test_tampered_answer_is_a_miss(tmp_path: Path) -> None:
    cache = ProposalCache(tmp_path)
    key = "cd" * 32
    cache.put(key, _result())
    entry = json.loads(cache.path(key).read_bytes())
    entry["candidates"]["candidates"][0]["evidence"] = []
    cache.path(key).write_text(json.dumps(entry))
    assert cache.get(key) is None
    entry["candidates"] = _result().candidates.to_json()
    entry["usage"] = {"prompt_tokens": -1}
    cache.path(key).write_text(json.dumps(entry))
    assert cache.get(key) is None
