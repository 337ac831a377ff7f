"""Task and candidate-set models, the answer JSON schema, and the hostile-input parser."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from brain.identity import BlockId
from ingest.proposers.base import SourceText, TokenUsage, propose_many, sum_usage
from ingest.proposers.candidates import (
    CANDIDATES_JSON_SCHEMA,
    CandidateSet,
    Task,
    parse_candidate_set,
)
from ingest.proposers.errors import ProposerError

SOURCE = "sha256:" + "a" * 64


def _answer(**extra: object) -> dict:
    candidate = {
        "memory_type": "semantic", "payload": {"kind": "fact", "label": "x", "statement": "y"}, "evidence": [SOURCE],
    }
    return {"schema_version": "boltzmann.candidates/v1", "candidates": [candidate]} | extra


def test_task_sorts_and_refuses_unproposable_types() -> None:
    task = Task(source=SOURCE, allowed_memory_types=["semantic", "episodic", "semantic"])
    assert task.to_json()["allowed_memory_types"] == ["episodic", "semantic"]
    assert task.to_json()["output_schema"] == "boltzmann.candidates/v1"
    for bad in (["canonical"], ["provenance", "semantic"], []):
        with pytest.raises(ValidationError):
            Task(source=SOURCE, allowed_memory_types=bad)
    with pytest.raises(ValidationError):
        Task(source="sha256:short", allowed_memory_types=["semantic"])


def test_parse_good_answer_roundtrips() -> None:
    answer = parse_candidate_set(json.dumps(_answer(task_id="t")).encode())
    assert answer.candidates[0].evidence == (SOURCE,)
    assert parse_candidate_set(answer.to_bytes()) == answer


def test_nullable_members_read_as_absent() -> None:
    answer = _answer(task_id=None, producer=None)
    answer["candidates"][0] |= {"locator": None, "confidence": None}
    parsed = parse_candidate_set(json.dumps(answer).encode())
    assert parsed.task_id is None and parsed.candidates[0].locator is None


def test_float_inside_payload_is_kept_for_the_gate() -> None:
    answer = _answer()
    answer["candidates"][0]["payload"]["statement"] = 0.5
    answer["candidates"].append(
        {"memory_type": "semantic", "payload": {"n": 1}, "evidence": [SOURCE], "confidence": "high"}
    )
    parsed = parse_candidate_set(json.dumps(answer).encode())
    assert parsed.candidates[0].payload["statement"] == 0.5 and len(parsed.candidates) == 2
    assert parse_candidate_set(parsed.to_bytes()) == parsed


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not json",
        b"[]",
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[],"candidates":[]}',
        b'\xef\xbb\xbf{"schema_version":"boltzmann.candidates/v1","candidates":[]}',
        b'{"schema_version":"boltzmann.candidates/v2","candidates":[]}',
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[],"extra":1}',
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[{"memory_type":"semantic","payload":{},"evidence":[]}]}',
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[{"memory_type":"semantic","payload":[],"evidence":["x"]}]}',
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[{"memory_type":"semantic","payload":{},"evidence":["x"],"confidence":0.9}]}',
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[{"memory_type":"semantic","payload":{"a":1.5,"a":2}}]}',
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[{"payload":{"a":NaN}}]}',
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[{"memory_type":"semantic","payload":{"a":1.5,"b":"\\ud800"},"evidence":["x"]}]}',
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[{"memory_type":"semantic","payload":{"a":1.5,"b":9007199254740992},"evidence":["x"]}]}',
        b'{"schema_version":"boltzmann.candidates/v1","producer":{"kind":"wizard","id":"x"},"candidates":[]}',
        b"[" * 100_000,
        b'{"schema_version":"boltzmann.candidates/v1","candidates":[' + b"[" * 100_000 + b"1.5",
    ],
)
def test_garbage_is_refused_whole(data: bytes) -> None:
    with pytest.raises(ProposerError) as caught:
        parse_candidate_set(data)
    assert caught.value.code == "proposer-garbage"


def test_size_cap_and_task_id_check() -> None:
    data = json.dumps(_answer(task_id="other")).encode()
    with pytest.raises(ProposerError, match="over the 10-byte limit"):
        parse_candidate_set(data, limit=10)
    task = Task(source=SOURCE, allowed_memory_types=["semantic"], task_id="mine")
    with pytest.raises(ProposerError, match="is for task 'other'"):
        parse_candidate_set(data, task)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_parser_never_crashes(data: bytes) -> None:
    try:
        parse_candidate_set(data)
    except ProposerError as e:
        assert e.code == "proposer-garbage"


def _closed_everywhere(schema: object) -> list[str]:
    """Objects that break OpenAI strict mode (not closed, or a property missing from `required`)."""
    bad = []
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            if schema.get("additionalProperties") is not False or set(schema["required"]) != set(schema["properties"]):
                bad.append(str(sorted(schema.get("properties", {}))))
        for value in schema.values():
            bad.extend(_closed_everywhere(value))
    elif isinstance(schema, list):
        for value in schema:
            bad.extend(_closed_everywhere(value))
    return bad


def test_answer_schema_is_strict_mode_shaped_and_accepts_answers() -> None:
    from jsonschema import Draft202012Validator

    Draft202012Validator.check_schema(CANDIDATES_JSON_SCHEMA)
    assert _closed_everywhere(CANDIDATES_JSON_SCHEMA) == []
    validator = Draft202012Validator(CANDIDATES_JSON_SCHEMA)
    strict_answer = _answer(task_id=None, producer=None)
    strict_answer["candidates"][0] |= {"locator": "L1", "confidence": None}
    strict_answer["candidates"][0]["payload"] |= {"subject": None, "aliases": None, "relations": None}
    assert list(validator.iter_errors(strict_answer)) == []
    assert CandidateSet.model_validate(strict_answer).candidates[0].locator == "L1"


def test_source_text_page_map() -> None:
    source = SourceText.of(BlockId("b" * 64), "application/pdf", "one\ftwo\f\fthree")
    assert source.page_starts == (0, 4, 8, 9)
    assert [source.page_of(i) for i in (0, 3, 4, 8, 9)] == [1, 1, 2, 3, 4]
    assert SourceText.of(BlockId("b" * 64), "text/plain", "a\fb").page_of(2) is None


def test_usage_sums_and_propose_many_keeps_order_and_errors() -> None:
    assert sum_usage(
        [None, TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=3), TokenUsage(total_tokens=4)]
    ) == TokenUsage(prompt_tokens=1, completion_tokens=2, total_tokens=7)
    assert sum_usage([None]) is None
    source = SourceText.of(BlockId("b" * 64), "text/plain", "x")
    tasks = [Task(source=SOURCE, allowed_memory_types=["semantic"], task_id=str(i)) for i in range(6)]

    def propose(task: Task, _: SourceText):
        if int(task.task_id) % 2:
            raise ProposerError("proposer-crashed", task.task_id)
        from ingest.proposers.base import ProposalResult

        return ProposalResult(CandidateSet(task_id=task.task_id))

    outcomes = propose_many(propose, [(t, source) for t in tasks], concurrency=3)
    assert [o.task.task_id for o in outcomes] == [str(i) for i in range(6)]
    assert [o.error.detail if o.error else o.result.candidates.task_id for o in outcomes] == [str(i) for i in range(6)]
    assert [o.error is None for o in outcomes] == [True, False] * 3
