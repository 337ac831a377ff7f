"""The proposal cache: key material, round trips, corrupt entries as misses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from brain.errors import InvalidInputError
from brain.identity import BlockId
from ingest.cache import _SOURCE_SLOT, ProposalCache, QuestionIds, cache_key, question_ids
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
    return ProposalResult(
        CandidateSet(task_id="run-1", candidates=(candidate,)), TokenUsage(prompt_tokens=3, total_tokens=3)
    )


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


@pytest.mark.parametrize(
    "fields",
    [
        {}, {"instructions": "only d\u00e9finitions \"quoted\""}, {"instructions": f"see {BlockId('0' * 64)}"},
        {"instructions": f"the slot {_SOURCE_SLOT} in the text"},  # appears twice: each question built whole
    ],
)
def test_the_ids_of_a_question_template_are_those_of_each_sources_question(fields: dict[str, Any]) -> None:
    proposer, template = _Fixed(temperature="0.2"), _task(**fields)
    ids = QuestionIds(proposer, template)
    for source in (SOURCE, BlockId("0" * 64), *(BlockId(f"{i:064x}") for i in range(1, 40, 7))):
        assert ids.of(source) == question_ids(proposer, template.model_copy(update={"source": source}))


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
    cache.close()
    assert cache.file == tmp_path / "boltzmann/cache/proposals.log"
    assert cache.get(key) == _result()
    reopened = ProposalCache(tmp_path)  # read back from the file, not the writer's memory
    again = reopened.get(key, _task(task_id="run-2"))
    assert again.candidates.task_id == "run-2" and again.usage == _result().usage
    assert [p.name for p in cache.file.parent.iterdir()] == ["proposals.log"]
    assert cache.file.read_bytes().count(b"\n") == 1 and cache.file.read_bytes().startswith(key.encode() + b" ")


def test_notes_survive_the_cache(tmp_path: Path) -> None:
    cache = ProposalCache(tmp_path)
    key = cache_key(HeuristicProposer(), _task())
    noted = ProposalResult(_result().candidates, notes=("proposals-capped: kept the first 1 of 2 candidates",))
    cache.put(key, noted)
    cache.close()
    assert ProposalCache(tmp_path).get(key) == noted
    plain_key = cache_key(HeuristicProposer(), _task(instructions="other"))
    cache.put(plain_key, _result())
    cache.close()
    assert b"notes" not in cache.file.read_bytes().splitlines()[-1]  # entries without notes are as before
    assert ProposalCache(tmp_path).get(plain_key) == _result()
    _overwrite(cache, key, json.dumps({"format": "brain.proposal-cache/1", "key": key, "candidates":
                                       json.loads(_result().candidates.to_bytes()), "notes": [3]}).encode())
    assert ProposalCache(tmp_path).get(key) is None


def _overwrite(cache: ProposalCache, key: str, entry: bytes) -> None:
    """Append a later line for `key` (the last line for a key wins)."""
    cache.close()
    with open(cache.file, "ab") as handle:
        handle.write(key.encode() + b" " + entry + b"\n")


def test_a_torn_last_line_is_a_miss_and_does_not_swallow_the_next_answer(tmp_path: Path) -> None:
    cache = ProposalCache(tmp_path)
    cache.put("ab" * 32, _result())
    cache.close()
    whole = cache.file.read_bytes()
    cache.file.write_bytes(whole + whole[: len(whole) // 2].replace(b"ab" * 32, b"cd" * 32))  # killed mid-append
    assert ProposalCache(tmp_path).get("cd" * 32) is None
    later = ProposalCache(tmp_path)
    later.put("ef" * 32, _result())
    later.close()
    assert ProposalCache(tmp_path).get("ef" * 32) == _result()
    assert ProposalCache(tmp_path).get("ab" * 32) == _result()


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
    _overwrite(cache, key, damage)
    assert ProposalCache(tmp_path).get(key) is None


def test_tampered_answer_is_a_miss(tmp_path: Path) -> None:
    cache = ProposalCache(tmp_path)
    key = "cd" * 32
    cache.put(key, _result())
    cache.close()
    entry = json.loads(cache.file.read_bytes().split(b" ", 1)[1])
    entry["candidates"]["candidates"][0]["evidence"] = []
    _overwrite(cache, key, json.dumps(entry).encode())
    assert ProposalCache(tmp_path).get(key) is None
    entry["candidates"] = _result().candidates.to_json()
    entry["usage"] = {"prompt_tokens": -1}
    _overwrite(cache, key, json.dumps(entry).encode())
    assert ProposalCache(tmp_path).get(key) is None


def test_a_runs_own_answers_are_read_back_while_it_appends(tmp_path: Path) -> None:
    """An answer put by this cache is found again before `close` (the append is flushed for the read) and
    after later appends, from where it was written; one cut short under it (the file replaced) is a miss."""
    cache = ProposalCache(tmp_path)
    first, second = "ab" * 32, "cd" * 32
    cache.put(first, _result())
    assert cache.get(first) == _result()
    cache.put(second, _result())
    assert cache.get(first) == _result() and cache.get(second) == _result() and cache.has(first)
    cache.close()
    cache.file.write_bytes(cache.file.read_bytes()[:10])  # another tool cut the log: this process's offsets lie
    assert cache.get(first) is None and cache.get(second) is None
