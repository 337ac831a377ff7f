"""The schema registry (`schemas.json`, JSON Schema 2020-12): registered versions and payload checks (§3, §3.8).

The registry decides what fits which version; the typed v1 models mirror it for speed on the read path.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from brain.blocks.memory_type import MemoryType
from brain.errors import CanonicalFormError, InvalidInputError
from brain.identity import canonicalize, parse_timestamp

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator


@cache
def _registry() -> dict[MemoryType, dict[int, dict[str, Any]]]:
    raw = json.loads(resources.files("brain.blocks").joinpath("schemas.json").read_text(encoding="utf-8"))
    return {
        MemoryType(name): {entry["schema_version"]: entry["schema"] for entry in entries}
        for name, entries in raw["schemas"].items()
    }


REGISTERED_VERSIONS: dict[MemoryType, tuple[int, ...]] = {
    memory_type: tuple(sorted(versions)) for memory_type, versions in _registry().items()
}


@cache
def _validator(memory_type: MemoryType, version: int) -> Draft202012Validator:
    # Imported on first use: only blocks of later schema versions need it, and every CLI start pays for imports.
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_registry()[memory_type][version])


def schema_of(memory_type: MemoryType, version: int) -> dict[str, Any]:
    """The JSON Schema of one registered payload version; raises `InvalidInputError` if not registered."""
    if version not in REGISTERED_VERSIONS.get(memory_type, ()):
        registered = ", ".join(map(str, REGISTERED_VERSIONS.get(memory_type, ())))
        raise InvalidInputError(f"{memory_type} has no schema_version {version!r} (registered: {registered})")
    return _registry()[memory_type][version]


def payload_problems(memory_type: MemoryType, version: int, payload: Any) -> list[str]:
    """Why `payload` is not a valid `memory_type` payload of `version` (empty when it is).

    Beyond the registry: values must be `jcs/1`-serializable and an episodic range must not run backwards.
    """
    schema_of(memory_type, version)
    errors = sorted(
        _validator(memory_type, version).iter_errors(payload), key=lambda e: list(map(str, e.absolute_path))
    )
    problems = [f"{_where(error.absolute_path)}: {error.message}" for error in errors]
    try:
        canonicalize(payload)
    except CanonicalFormError as e:
        problems.append(e.message)
    if not problems and memory_type is MemoryType.EPISODIC and payload.get("ended_at") is not None:
        problems.extend(_range_problems(payload["occurred_at"], payload["ended_at"]))
    record = payload.get("record") if isinstance(payload, dict) else None
    if memory_type is MemoryType.PROVENANCE and isinstance(record, dict) and "record_type" not in record:
        # The registry gives record_type a default, but the protocol requires it on read (§3.5).
        problems.append("payload.record: record_type is required")
    return problems


def select_schema_version(memory_type: MemoryType, payload: Any) -> int | None:
    """The oldest registered version whose schema accepts `payload` (the writer rule), or None."""
    for version in REGISTERED_VERSIONS[memory_type]:
        if not payload_problems(memory_type, version, payload):
            return version
    return None


def _range_problems(occurred_at: str, ended_at: str) -> list[str]:
    try:
        start, end = parse_timestamp(occurred_at), parse_timestamp(ended_at)
    except InvalidInputError as e:
        return [e.message]
    return [f"ended_at {ended_at} is before occurred_at {occurred_at}"] if end < start else []


def _where(path: Any) -> str:
    return "payload" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
