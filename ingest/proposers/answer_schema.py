"""`CANDIDATES_JSON_SCHEMA`: the answer shape as JSON Schema, for `exec:` scripts and structured output.

It is written for OpenAI's strict structured-output subset (every object closed, every property listed in
`required`, optional members as `null`-able), which Ollama, vLLM and llama.cpp also accept. It guides the
proposer; it is not the judge: the validation gate checks payloads against the protocol's own registry.
Payloads here omit `evidence` (the gate inserts the candidate's evidence, §7.6) and v2/v3 extensions.
"""

from __future__ import annotations

from typing import Any

DIGEST = {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$"}
TIMESTAMP = {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$"}
STRING = {"type": "string"}
STRINGS = {"type": "array", "items": STRING}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _closed(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    optional = optional or {}
    properties = dict(required) | {name: _nullable(schema) for name, schema in optional.items()}
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


_PRODUCER = _closed(
    {"kind": {"type": "string", "enum": ["model", "pipeline", "batch", "actor"]}, "id": STRING}, {"version": STRING}
)
_RELATION = _closed({"predicate": STRING, "target": DIGEST})
_STEP = _closed(
    {"action": STRING},
    {"condition": STRING, "alternatives": STRINGS, "uses": {"type": "array", "items": DIGEST}},
)
PAYLOADS: dict[str, dict[str, Any]] = {
    "semantic": _closed(
        {
            "kind": {"type": "string", "enum": ["concept", "fact", "formula", "relation", "constraint"]},
            "label": STRING,
            "statement": STRING,
        },
        {"subject": STRING, "aliases": STRINGS, "relations": {"type": "array", "items": _RELATION}},
    ),
    "procedural": _closed(
        {"label": STRING, "goal": STRING, "steps": {"type": "array", "items": _STEP, "minItems": 1}},
        {"preconditions": STRINGS, "success_criteria": STRINGS, "subject": STRING},
    ),
    "episodic": _closed(
        {"summary": STRING, "occurred_at": TIMESTAMP},
        {"ended_at": TIMESTAMP, "context": STRING, "participants": STRINGS, "outcome": STRING, "tags": STRINGS},
    ),
}


def _candidate(memory_type: str) -> dict[str, Any]:
    return _closed(
        {
            "memory_type": {"type": "string", "enum": [memory_type]},
            "payload": PAYLOADS[memory_type],
            "evidence": {"type": "array", "items": DIGEST, "minItems": 1},
        },
        {"locator": STRING, "confidence": STRING},
    )


def candidates_json_schema(
    memory_types: tuple[str, ...] = ("episodic", "procedural", "semantic"), *, constraints: bool = True
) -> dict[str, Any]:
    """The answer schema, narrowed to candidates of `memory_types` (a task's allowed types).

    Without `constraints`, `pattern` and `minItems` are left out: the most portable structured-output subset
    (some OpenAI-compatible servers refuse them); the gate enforces both anyway.
    """
    schema = _closed(
        {
            "schema_version": {"type": "string", "enum": ["boltzmann.candidates/v1"]},
            "candidates": {"type": "array", "items": {"anyOf": [_candidate(t) for t in sorted(memory_types)]}},
        },
        {"task_id": STRING, "producer": _PRODUCER},
    )
    return schema if constraints else _without_constraints(schema)


def _without_constraints(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _without_constraints(v) for k, v in schema.items() if k not in ("pattern", "minItems")}
    if isinstance(schema, list):
        return [_without_constraints(v) for v in schema]
    return schema


CANDIDATES_JSON_SCHEMA: dict[str, Any] = candidates_json_schema()
