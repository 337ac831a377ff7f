"""Resolvability, three ways: a block or content blob is resolvable, tombstoned (destroyed on purpose) or missing.

Tombstoned blocks are the members a module reference lists in `tombstones` (§7.5); tombstoned content blobs
are the digests in the local `boltzmann/tombstones.json`. Anything stored but damaged cannot be resolved,
so it counts as missing (the problem list says how it is damaged).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from brain.store.sidecars import TOMBSTONES
from brain.verify.facts import OK, BlockFacts
from brain.verify.report import Counts

RESOLVABLE, TOMBSTONED, MISSING = "resolvable", "tombstoned", "missing"
TOMBSTONES_FILE = TOMBSTONES.parts


def read_tombstoned_blobs(root: Path) -> frozenset[str]:
    """Digests of blobs destroyed by redaction, from `boltzmann/tombstones.json` (absent or unreadable: none)."""
    try:
        mapping = json.loads(Path(root).joinpath(*TOMBSTONES_FILE).read_bytes())
    except (FileNotFoundError, ValueError):
        return frozenset()
    if not isinstance(mapping, dict):
        return frozenset()
    return frozenset(key if key.startswith("sha256:") else f"sha256:{key}" for key in mapping)


def block_resolvability(block_id: str, tombstones: frozenset[str], facts: BlockFacts | None) -> str:
    """How a member block resolves."""
    if block_id in tombstones:
        return TOMBSTONED
    return RESOLVABLE if facts is not None and facts.state == OK else MISSING


def content_resolvability(digest: str, tombstoned: frozenset[str], state: str | None) -> str:
    """How a content blob resolves, given its inspection state (None when it was not inspected)."""
    if digest in tombstoned:
        return TOMBSTONED
    return RESOLVABLE if state == OK else MISSING


def tally(states: list[str]) -> Counts:
    """Counts of a list of resolvability states."""
    counted = Counter(states)
    return Counts(resolvable=counted[RESOLVABLE], tombstoned=counted[TOMBSTONED], missing=counted[MISSING])
