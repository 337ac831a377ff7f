"""`Block.from_payload` has a typed fast path; it must never accept what the registry's v1 schema refuses."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.blocks import Block, MemoryType
from brain.blocks.decode import _typed_v1
from brain.blocks.generic import drop_nulls
from brain.blocks.schemas import select_schema_version
from brain.errors import InvalidInputError

DIGEST = "sha256:" + "ab" * 32
AT = "2026-11-30T13:32:11Z"
ODD = [
    None,
    "",
    "x",
    "\ud800",
    1,
    -1,
    2**53,
    1.5,
    True,
    [],
    ["x"],
    [1],
    {},
    DIGEST,
    "SHA256:" + "AB" * 32,
    AT,
    "２０２６-11-30T13:32:11Z",
]
VALID: dict[MemoryType, dict[str, Any]] = {
    MemoryType.CANONICAL: {
        "blob": DIGEST, "media_type": "text/plain", "size": 3,
        "normalized_view": {"blob": DIGEST, "media_type": "text/plain", "size": 3},
    },
    MemoryType.EPISODIC: {"summary": "s", "occurred_at": AT, "ended_at": AT, "tags": ["t"], "evidence": [DIGEST]},
    MemoryType.SEMANTIC: {
        "kind": "fact", "label": "l", "statement": "s", "relations": [{"predicate": "p", "target": DIGEST}],
        "aliases": [],
    },
    MemoryType.PROCEDURAL: {
        "label": "l", "goal": "g", "steps": [{"action": "a", "uses": [DIGEST], "alternatives": ["b"]}],
    },
    MemoryType.PROVENANCE: {
        "record": {
            "record_type": "validation", "actor": {"id": "a@b.org", "kind": "human"}, "at": AT, "block": DIGEST,
            "verdict": "validated", "checks": ["c"],
        }
    },
}  # fmt: skip


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _replace(value: Any, path: tuple, new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


@settings(max_examples=250, deadline=None)
@given(st.sampled_from(list(VALID)), st.data())
def test_typed_fast_path_accepts_only_what_v1_accepts(memory_type: MemoryType, data: st.DataObject) -> None:
    payload = VALID[memory_type]
    for _ in range(data.draw(st.integers(0, 2))):
        path = data.draw(st.sampled_from(_paths(payload)))
        payload = _replace(payload, path, data.draw(st.sampled_from(ODD)))
    cleaned = drop_nulls(payload)
    fast = _typed_v1(memory_type, cleaned)
    try:
        version = select_schema_version(memory_type, cleaned)
    except InvalidInputError:
        version = None
    if fast is not None:
        assert version == 1
        assert fast.payload() == cleaned and Block.decode(fast.canonical_bytes()) == fast


@pytest.mark.parametrize("memory_type", list(VALID))
def test_valid_payloads_take_the_fast_path(memory_type: MemoryType) -> None:
    assert _typed_v1(memory_type, VALID[memory_type]) == Block.from_payload(memory_type, VALID[memory_type])


def test_lone_surrogates_fall_back_to_the_explained_refusal() -> None:
    payload = VALID[MemoryType.SEMANTIC] | {"label": "\ud800"}
    assert _typed_v1(MemoryType.SEMANTIC, payload) is None
    with pytest.raises(InvalidInputError, match="surrogate"):
        Block.from_payload("semantic", payload)
