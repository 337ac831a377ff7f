"""The proposal cache: a proposer's answer for one source, kept locally so re-ingesting costs nothing.

Key = BLAKE3 of the JCS of a structured object (never string concatenation, so no two inputs collide):
cache format, proposer id/version/model/parameters, and the task fields that shape the answer (operation,
source, sorted allowed types, requirements, instructions). The task id is left out: it is derived from
the same question (`task_id_for`). Only successful answers are stored. Nothing here is protocol data:
the cache can be deleted at any time (the records' task ids still say which sources were answered).

Storage: one append-only file, `<brain>/boltzmann/cache/proposals.log`, one line per answer:
`<key> <entry JSON>` (JSON never holds a raw newline). One file instead of one per source: creating a
file costs more than everything else a small source's answer needs. The last line for a key wins; a
torn line (a writer killed mid-append), an unreadable file or a corrupt entry is a miss. Appends happen
under the brain's writer lock. Lines are indexed by key when first looked up and parsed only when used.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, BinaryIO

from blake3 import blake3
from pydantic import ConfigDict

from brain.errors import CanonicalFormError, InvalidInputError
from brain.blocks import MemoryType
from brain.identity import BlockId, canonicalize
from brain.store.sidecars import PROPOSALS
from ingest.proposers.base import ProposalResult, Proposer, TokenUsage
from ingest.proposers.candidates import Task, candidate_set_from_json, parse_candidate_set
from ingest.proposers.errors import ProposerError

CACHE_FORMAT = "brain.proposal-cache/1"
TASK_FORMAT = "brain.task/1"
CACHE_FILE = Path(*PROPOSALS.parts)
_KEY_SIZE = 64  # hex digits of a BLAKE3 key


def _question(proposer: Proposer, task: Task) -> dict[str, Any]:
    """What makes two proposals the same question: the proposer as configured and the task's fields."""
    return {
        "proposer": {
            "id": proposer.id,
            "version": proposer.version,
            "model": proposer.model,
            "parameters": proposer.parameters,
        },
        "task": {
            "operation": task.operation.value,
            "source": str(task.source),
            "allowed_memory_types": sorted(m.value for m in task.allowed_memory_types),
            "requirements": list(task.requirements),
            "instructions": task.instructions,
        },
    }


def _canonical_question(proposer: Proposer, question: dict[str, Any]) -> bytes:
    try:
        return canonicalize(question)
    except CanonicalFormError as e:
        raise InvalidInputError(f"proposer {proposer.id} parameters cannot be a cache key: {e.message}") from e


def cache_key(proposer: Proposer, task: Task) -> str:
    """The hex BLAKE3 key of asking `proposer` to do `task`; `InvalidInputError` if parameters are not JCS-able."""
    return question_ids(proposer, task)[0]


def task_id_for(proposer: Proposer, task: Task) -> str:
    """The task id of asking `proposer` to do `task`: the hex SHA-256 of the same question.

    Written into the `derivation` and `validation` records (§3.7 `task`), so any copy of the brain (one
    just pulled, without this cache) knows which sources this exact question has already answered.
    SHA-256, not BLAKE3: it leaves the machine.
    """
    return question_ids(proposer, task)[1]


def question_ids(proposer: Proposer, task: Task) -> tuple[str, str]:
    """`(cache_key, task_id_for)` of one question, built once."""
    question = _question(proposer, task)
    key = blake3(_canonical_question(proposer, {"format": CACHE_FORMAT, **question})).hexdigest()
    task_id = hashlib.sha256(_canonical_question(proposer, {"format": TASK_FORMAT, **question})).hexdigest()
    return key, task_id


class _OpenSource(Task):
    """The task of a question asked about every source of a run: validated like a task, its source left open."""

    model_config = ConfigDict(title="Task")  # its validation errors read as a task's

    source: BlockId | None = None  # type: ignore[assignment]  # the one field the question leaves open


# Where each source's id goes in a question's canonical bytes: a JSON string JCS leaves as it is, not an id.
_SOURCE_SLOT = "<source>"


class QuestionIds:
    """`question_ids` of one question asked about many sources: `task` as a template (its source aside).

    The canonical bytes of a question differ between sources only in the source id, a plain ASCII string:
    they are built once with a slot where the id goes, and each source's are that text with its id in
    (about 15x cheaper than building them, for every source of every run, unchanged ones included). The
    question holds no source: every task `task_for` hands out names its real one.
    """

    def __init__(self, proposer: Proposer, task: Task | _OpenSource) -> None:
        self._proposer = proposer
        self._fields = {name: getattr(task, name) for name in Task.model_fields if name != "source"}
        self._fields_set = task.model_fields_set | {"source"}
        question = _question(proposer, task)
        question["task"]["source"] = _SOURCE_SLOT
        slot = _SOURCE_SLOT.encode()
        self._key = _canonical_question(proposer, {"format": CACHE_FORMAT, **question}).split(slot)
        self._task_id = _canonical_question(proposer, {"format": TASK_FORMAT, **question}).split(slot)

    @classmethod
    def asking(
        cls,
        proposer: Proposer,
        allowed: tuple[MemoryType, ...],
        requirements: tuple[str, ...],
        instructions: str | None,
    ) -> QuestionIds:
        """The question `proposer` is asked about every source of a run; its task is validated here, once."""
        task = _OpenSource(allowed_memory_types=allowed, requirements=requirements, instructions=instructions)
        return cls(proposer, task)

    def task_for(self, source: BlockId, task_id: str) -> Task:
        """The question's task about `source` (the template was validated when it was made)."""
        return self._task(source, task_id)

    def _task(self, source: BlockId, task_id: str | None) -> Task:
        fields, fields_set = {**self._fields, "source": source}, set(self._fields_set)
        if task_id is not None:
            fields["task_id"] = task_id
            fields_set.add("task_id")
        return Task.model_construct(fields_set, **fields)  # the fields were validated with the question

    def of(self, source: BlockId) -> tuple[str, str]:
        """`(cache_key, task_id_for)` of the question about `source`."""
        if len(self._key) != 2 or len(self._task_id) != 2:  # the slot also appears elsewhere (instructions)
            return question_ids(self._proposer, self._task(source, None))
        named = str(source).encode()
        key = blake3(self._key[0] + named + self._key[1]).hexdigest()
        task_id = hashlib.sha256(self._task_id[0] + named + self._task_id[1]).hexdigest()
        return key, task_id


def cache_entry(key: str, result: ProposalResult, candidates: bytes | None = None) -> bytes:
    """The entry JSON `put` stores for `result` (`candidates`: its `to_bytes()`, when already made)."""
    entry: dict[str, Any] = {
        "format": CACHE_FORMAT,
        "key": key,
        "candidates": json.loads(result.candidates.to_bytes() if candidates is None else candidates),
        "usage": None if result.usage is None else result.usage.model_dump(),
    }
    if result.notes:  # a cache hit must report what the fresh answer did (e.g. `proposals-capped`)
        entry["notes"] = list(result.notes)
    return json.dumps(entry, ensure_ascii=False, sort_keys=True).encode()


class ProposalCache:
    """Cached answers under one brain directory."""

    def __init__(self, brain_dir: Path) -> None:
        self.file = Path(brain_dir) / CACHE_FILE
        # key (64 hex, as bytes) -> its last whole line, or where this process appended it (offset, length): a
        # run's own answers are read back from the file if asked again, not held (~1.3 KB a source).
        self._lines: dict[bytes, bytes | tuple[int, int]] | None = None
        self._appender: BinaryIO | None = None

    def _index(self) -> dict[bytes, bytes | tuple[int, int]]:
        if self._lines is None:
            try:
                data = self.file.read_bytes()
            except OSError:
                data = b""
            # Every key is 64 hex digits, so a line is indexed by its first 64 bytes when a space follows them
            # (anything else can never be asked for); the entry is cut out only when used. Every run asks,
            # unchanged sources included: this is half the cost of splitting each line at its space.
            self._lines = {
                line[:_KEY_SIZE]: line for line in data.split(b"\n") if line[_KEY_SIZE : _KEY_SIZE + 1] == b" "
            }
        return self._lines

    def has(self, key: str) -> bool:
        """Whether an entry (not necessarily a readable one) is stored for `key`."""
        return key.encode("ascii", "replace") in self._index()

    def get(self, key: str, task: Task | None = None) -> ProposalResult | None:
        """The cached answer (re-stamped with `task`'s id), or None on a miss or an unreadable entry."""
        line = self._line(key.encode("ascii", "replace"))
        if line is None:
            return None
        data = line[_KEY_SIZE + 1 :]
        try:
            entry = json.loads(data)
            if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
                return None
            # Through the same hostile-input parser as a fresh answer: the file may have been edited.
            answer = parse_candidate_set(json.dumps(entry["candidates"]).encode())
            usage = None if entry.get("usage") is None else TokenUsage.model_validate(entry["usage"])
            notes = entry.get("notes", [])
            if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
                return None
        except (ValueError, KeyError, TypeError, ProposerError):
            return None
        if task is not None:
            answer = candidate_set_from_json(answer.to_json() | {"task_id": task.task_id})
        return ProposalResult(candidates=answer, usage=usage, notes=tuple(notes))

    def put(self, key: str, result: ProposalResult) -> None:
        """Store a successful answer (failures are never passed here)."""
        self.put_entry(key, cache_entry(key, result))

    def put_entry(self, key: str, data: bytes) -> None:
        """Store an entry `cache_entry(key, ...)` built (e.g. in a proposer worker process)."""
        if len(key) != _KEY_SIZE:
            raise ValueError(f"not a proposal-cache key (64 hex digits): {key!r}")
        if self._appender is None:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            self._appender = open(self.file, "ab")  # noqa: SIM115 - closed by close()
            if self._appender.tell() and not self._ends_with_newline():
                self._appender.write(b"\n")  # a killed writer's torn line must not swallow this one
        # Durability is not needed (a lost entry is a miss); one write per line keeps a torn one detectable.
        line = key.encode("ascii") + b" " + data
        index = self._index()
        at = self._appender.tell()
        self._appender.write(line + b"\n")
        index[line[:_KEY_SIZE]] = (at, len(line))

    def _line(self, key: bytes) -> bytes | None:
        """The last whole line stored for `key` (read back from the file when this process appended it)."""
        found = self._index().get(key)
        if not isinstance(found, tuple):
            return found
        if self._appender is not None:
            self._appender.flush()
        at, size = found
        try:
            with open(self.file, "rb") as handle:
                handle.seek(at)
                line = handle.read(size)
        except OSError:
            return None
        return line if len(line) == size and line[:_KEY_SIZE] == key else None

    def _ends_with_newline(self) -> bool:
        with open(self.file, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            return handle.read(1) == b"\n"

    def close(self) -> None:
        """Flush and close the append handle (a no-op if nothing was put)."""
        if self._appender is not None:
            self._appender.close()
            self._appender = None
