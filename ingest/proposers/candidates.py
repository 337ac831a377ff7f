"""The task handed to a proposer and the candidate set it answers with (§7.6), and the hostile-input parser.

Parsing policy (a proposer's output is untrusted):

* The whole answer is refused (`ProposerError("proposer-garbage")`) when it is larger than the cap, is
  not strict JSON (§1.4: duplicate keys, NaN, bad UTF-8, a BOM, lone surrogates, integers beyond ±(2^53−1)),
  or breaks the answer *shape*: wrong `schema_version`, a `task_id` that is not the task's, a malformed
  `producer`, a candidate that is not an object with a `memory_type` string, a `payload` object, a
  non-empty `evidence` list of strings and string `locator`/`confidence` (a float `confidence` is a shape
  error). A proposer that breaks its own output contract is broken as a whole.
* What is *inside* a payload is judged per candidate by the validation gate: a float there is kept as a
  Python float and the gate rejects that one candidate with `schema` (floats fit no payload schema and
  cannot be hashed), so one sloppy number does not discard its siblings.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import Field, StringConstraints, ValidationError, field_validator

from brain.blocks.memory_type import MemoryType
from brain.blocks.provenance import Producer
from brain.errors import CanonicalFormError
from brain.frozen import FrozenModel
from brain.identity import MAX_SAFE_INTEGER, BlockId, parse_strict
from ingest.proposers.answer_schema import CANDIDATES_JSON_SCHEMA, candidates_json_schema
from ingest.proposers.errors import ProposerError

CANDIDATES_SCHEMA_VERSION: Final = "boltzmann.candidates/v1"
MAX_ANSWER_BYTES = 16 * 1024 * 1024
MAX_CANDIDATES = 10_000
DEFAULT_REQUIREMENTS: tuple[str, ...] = (
    "cite evidence by the canonical block id given as the task's source",
    "use only the allowed memory types",
    "payloads follow the Boltzmann v1 payload schemas; no floating-point numbers",
    "timestamps are UTC YYYY-MM-DDTHH:MM:SSZ",
)

_Str = Annotated[str, StringConstraints(strict=True)]
_NonEmpty = Annotated[str, StringConstraints(strict=True, min_length=1)]


class Operation(StrEnum):
    """What the proposer is asked to do with the source."""

    EXTRACT_KNOWLEDGE = "extract_knowledge"
    REDERIVE = "rederive"


class _Wire(FrozenModel):
    def to_json(self) -> dict[str, Any]:
        """The JSON object, absent optional members omitted."""
        return self.model_dump(mode="json", exclude_none=True)


class Task(_Wire):
    """A processing task (not stored): extract knowledge of the allowed types from one canonical source."""

    operation: Operation = Operation.EXTRACT_KNOWLEDGE
    source: BlockId
    allowed_memory_types: Annotated[tuple[MemoryType, ...], Field(min_length=1)]
    requirements: tuple[_Str, ...] = DEFAULT_REQUIREMENTS
    output_schema: Literal["boltzmann.candidates/v1"] = CANDIDATES_SCHEMA_VERSION
    task_id: _NonEmpty | None = None
    instructions: _Str | None = None

    @field_validator("allowed_memory_types", mode="after")
    @classmethod
    def _proposable_sorted(cls, value: tuple[MemoryType, ...]) -> tuple[MemoryType, ...]:
        # §2: a task may only allow episodic, semantic, procedural; the wire form is a sorted set.
        refused = [m.value for m in value if not m.is_proposable]
        if refused:
            raise ValueError(f"a task may not allow {', '.join(refused)}: only episodic, procedural, semantic")
        return tuple(sorted(set(value), key=lambda m: m.value))


class Candidate(_Wire):
    """One proposed block: its type, payload, cited evidence, and where in the source it came from."""

    # Kept as strings so `canonical`, `provenance` or nonsense reach the gate as per-candidate rejections.
    memory_type: _NonEmpty
    payload: dict[str, Any]
    evidence: Annotated[tuple[_NonEmpty, ...], Field(min_length=1)]
    locator: _Str | None = None
    # Never persisted (§7.6); a string so it never brings a float near a hashed document.
    confidence: _Str | None = None


class CandidateSet(_Wire):
    """A proposer's answer: `boltzmann.candidates/v1`."""

    schema_version: Literal["boltzmann.candidates/v1"] = CANDIDATES_SCHEMA_VERSION
    task_id: _NonEmpty | None = None
    producer: Producer | None = None
    candidates: Annotated[tuple[Candidate, ...], Field(max_length=MAX_CANDIDATES)] = ()

    def to_bytes(self) -> bytes:
        """Compact JSON of the answer (payload floats kept as JSON numbers so a re-parse judges them again)."""
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


__all__ = [
    "CANDIDATES_JSON_SCHEMA",
    "CANDIDATES_SCHEMA_VERSION",
    "Candidate",
    "CandidateSet",
    "Operation",
    "Task",
    "candidate_set_from_json",
    "candidates_json_schema",
    "parse_candidate_set",
]


def parse_candidate_set(data: bytes, task: Task | None = None, *, limit: int = MAX_ANSWER_BYTES) -> CandidateSet:
    """Parse untrusted proposer output; raises `ProposerError("proposer-garbage")`, never anything else."""
    if len(data) > limit:
        raise ProposerError("proposer-garbage", f"answer is {len(data)} bytes, over the {limit}-byte limit")
    try:
        document = _load(data)
    except CanonicalFormError as e:
        raise ProposerError("proposer-garbage", f"answer is not strict JSON: {e.message}") from e
    return candidate_set_from_json(document, task)


def candidate_set_from_json(document: Any, task: Task | None = None) -> CandidateSet:
    """Check an already-decoded answer's shape (and its task id against `task`)."""
    if not isinstance(document, dict):
        raise ProposerError("proposer-garbage", "answer is not a JSON object")
    missing = [key for key in ("schema_version", "candidates") if key not in document]
    if missing:
        raise ProposerError("proposer-garbage", f"answer lacks {' and '.join(missing)}")
    try:
        answer = CandidateSet.model_validate(document)
    except ValidationError as e:
        detail = f"answer does not follow boltzmann.candidates/v1: {_first(e)}"
        raise ProposerError("proposer-garbage", detail) from e
    if task is not None and answer.task_id is not None and answer.task_id != task.task_id:
        raise ProposerError("proposer-garbage", f"answer is for task {answer.task_id!r}, not {task.task_id!r}")
    return answer


def _first(error: ValidationError) -> str:
    issue = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in issue["loc"]) or "(top)"
    more = error.error_count() - 1
    return f"{where}: {issue['msg']}" + (f" (and {more} more)" if more else "")


def _load(data: bytes) -> Any:
    try:
        return parse_strict(data)
    except CanonicalFormError as e:
        if not e.message.startswith("float "):
            raise
    # parse_strict stops at the first float; re-read keeping floats (judged per candidate) and every other rule.
    try:
        document = json.loads(
            bytes(data).decode("utf-8"),
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_refuse_constant,
        )
    except json.JSONDecodeError as e:
        raise CanonicalFormError(f"{e.msg} at line {e.lineno} column {e.colno}") from e
    except RecursionError:
        raise CanonicalFormError("JSON nested too deeply") from None
    _check_tree(document)
    return document


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise CanonicalFormError("duplicate key in an object")
    return result


def _refuse_constant(text: str) -> Any:
    raise CanonicalFormError(f"{text} is not JSON")


def _check_tree(value: Any) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise CanonicalFormError("escaped lone surrogate in a string") from None
        elif isinstance(item, bool) or item is None or isinstance(item, float):
            continue
        elif isinstance(item, int):
            if not -MAX_SAFE_INTEGER <= item <= MAX_SAFE_INTEGER:
                raise CanonicalFormError(f"integer {item} is outside ±(2^53−1)")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        else:
            stack.extend(item)
