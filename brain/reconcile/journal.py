"""The local history log `boltzmann/history.jsonl` (§10.8 item 3, ours): for every snapshot a
reconciliation wrote, who asked for it, why, and every admit/reject/prefer decision and acceptance.

One JCS line per entry; written (read, add a line, atomic replace, fsynced) once the snapshot is durable and
before the head moves, under the writer lock. A line whose snapshot never became the head is harmless:
`brain log` shows entries only for snapshots in the history it walks. Unreadable lines are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from brain.errors import BrainError
from brain.identity import OciDigest, canonicalize
from brain.store.atomic import atomic_write
from brain.store.sidecars import HISTORY

_MAX = 64 << 20


def append_entry(root: Path, entry: dict[str, Any]) -> None:
    """Add one entry (must hold the writer lock)."""
    where = HISTORY.path(root)
    try:
        old = where.read_bytes()[-_MAX:]
    except FileNotFoundError:
        old = b""
    if old and not old.endswith(b"\n"):
        old = old[: old.rfind(b"\n") + 1]
    where.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(where, old + canonicalize(entry) + b"\n")


def entries(root: Path) -> dict[OciDigest, dict[str, Any]]:
    """Entries by snapshot digest (the last one wins)."""
    try:
        data = HISTORY.path(root).read_bytes()
    except FileNotFoundError:
        return {}
    found: dict[OciDigest, dict[str, Any]] = {}
    for line in data.splitlines():
        try:
            entry = json.loads(line)
            found[OciDigest.parse(entry["snapshot"])] = entry
        except (ValueError, KeyError, TypeError, BrainError):
            continue
    return found
