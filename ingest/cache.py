"""The proposal cache: a proposer's answer for one source, kept locally so re-ingesting costs nothing.

Key = BLAKE3 of the JCS of a structured object (never string concatenation, so no two inputs collide):
cache format, proposer id/version/model/parameters, and the task fields that shape the answer (operation,
source, sorted allowed types, requirements, instructions). The task id is left out: it names a run, not
a question. Entries live at `<brain>/boltzmann/cache/proposals/<2 hex>/<key>.json`, written atomically;
an unreadable or corrupt entry is a miss. Only successful answers are stored. Nothing here is protocol
data: the cache can be deleted at any time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from blake3 import blake3

from brain.errors import CanonicalFormError, InvalidInputError
from brain.identity import canonicalize
from brain.store.atomic import atomic_write
from ingest.proposers.base import ProposalResult, Proposer, TokenUsage
from ingest.proposers.candidates import Task, candidate_set_from_json, parse_candidate_set
from ingest.proposers.errors import ProposerError

CACHE_FORMAT = "brain.proposal-cache/1"
CACHE_DIR = Path("boltzmann") / "cache" / "proposals"


def cache_key(proposer: Proposer, task: Task) -> str:
    """The hex BLAKE3 key of asking `proposer` to do `task`; `InvalidInputError` if parameters are not JCS-able."""
    material = {
        "format": CACHE_FORMAT,
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
    try:
        return blake3(canonicalize(material)).hexdigest()
    except CanonicalFormError as e:
        raise InvalidInputError(f"proposer {proposer.id} parameters cannot be a cache key: {e.message}") from None


class ProposalCache:
    """Cached answers under one brain directory."""

    def __init__(self, brain_dir: Path) -> None:
        self.root = Path(brain_dir) / CACHE_DIR

    def path(self, key: str) -> Path:
        """Where the entry for `key` lives."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, task: Task | None = None) -> ProposalResult | None:
        """The cached answer (re-stamped with `task`'s id), or None on a miss or an unreadable entry."""
        try:
            data = self.path(key).read_bytes()
        except OSError:
            return None
        try:
            entry = json.loads(data)
            if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
                return None
            # Through the same hostile-input parser as a fresh answer: the file may have been edited.
            answer = parse_candidate_set(json.dumps(entry["candidates"]).encode())
            usage = None if entry.get("usage") is None else TokenUsage.model_validate(entry["usage"])
        except (ValueError, KeyError, TypeError, ProposerError):
            return None
        if task is not None:
            answer = candidate_set_from_json(answer.to_json() | {"task_id": task.task_id})
        return ProposalResult(candidates=answer, usage=usage)

    def put(self, key: str, result: ProposalResult) -> None:
        """Store a successful answer (failures are never passed here)."""
        entry: dict[str, Any] = {
            "format": CACHE_FORMAT,
            "key": key,
            "candidates": json.loads(result.candidates.to_bytes()),
            "usage": None if result.usage is None else result.usage.model_dump(),
        }
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Durability is not needed (a lost entry is a miss); atomicity is (a torn entry must never parse).
        atomic_write(path, json.dumps(entry, ensure_ascii=False, sort_keys=True).encode(), sync=False)
