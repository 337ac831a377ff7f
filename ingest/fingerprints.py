"""The local change index: which source files were already registered, so re-ingesting skips them.

A sidecar `boltzmann/fingerprints.json` (local only, never published, not part of the protocol) maps each
source's absolute path to what was registered from it. `lookup(path, size, mtime_ns)` is a hit when all
three match, with no hashing at all; on a miss the caller hashes the file (`hash_file`) and may still find
identical content seen before with `by_blake3` (a touched or renamed file).

Racy entries: a file modified within `RACY_WINDOW_NS` of being recorded could change again without its
mtime moving (coarse filesystem clocks), so such an entry never counts as a hit (git's "racy clean" rule).

The file is a cache: if it is missing, unreadable or from another format, the index starts empty and
`discarded` says why; the worst case is re-hashing. Load and save it while holding the brain's writer
lock (two runs would otherwise drop each other's entries). A hit says the file is unchanged since it was
registered, not that its block is still a member of the current snapshot: callers check membership.
Format: `{"format": "brain.fingerprints/1", "entries": {path: [size, mtime_ns, blake3, sha256, block,
media_type, pipeline, pipeline_version, recorded_ns]}}`; rows stay lists until looked up, so loading
10,000 entries is one `json.loads`.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, NamedTuple

from brain.errors import InvalidInputError
from brain.identity import BlockId, OciDigest
from brain.store.atomic import atomic_write
from brain.store.sidecars import FINGERPRINTS
from ingest.hashing import Blake3Tee, FileHashes, hash_file, iter_file_chunks

FORMAT = "brain.fingerprints/1"
SIDECAR = Path(*FINGERPRINTS.parts)
RACY_WINDOW_NS = 2_000_000_000

__all__ = [
    "FORMAT",
    "SIDECAR",
    "Blake3Tee",
    "FileHashes",
    "Fingerprint",
    "FingerprintEntry",
    "FingerprintIndex",
    "hash_file",
    "iter_file_chunks",
]


class Fingerprint(NamedTuple):
    """What registering one source found, for `FingerprintIndex.remember` once the source is fully handled."""

    path: Path
    size: int
    mtime_ns: int
    blake3: str
    sha256: OciDigest
    media_type: str
    block: BlockId
    pipeline: str | None = None
    pipeline_version: str | None = None


class FingerprintEntry(NamedTuple):
    """What was registered from one source path, and the file state it was registered at."""

    path: str
    size: int
    mtime_ns: int
    blake3: str
    sha256: OciDigest
    block: BlockId
    media_type: str
    pipeline: str | None
    pipeline_version: str | None
    recorded_ns: int

    @property
    def is_racy(self) -> bool:
        """True if the file changed too close to recording for its mtime to prove it unchanged since."""
        return self.mtime_ns >= self.recorded_ns - RACY_WINDOW_NS

    def _row(self) -> list[Any]:
        return [
            self.size, self.mtime_ns, self.blake3, self.sha256.hex, self.block.hex,
            self.media_type, self.pipeline, self.pipeline_version, self.recorded_ns,
        ]  # fmt: skip

    @classmethod
    def _from_row(cls, path: str, row: list[Any]) -> FingerprintEntry:
        size, mtime_ns, b3, sha, block, media_type, pipeline, version, recorded = row
        return cls(path, size, mtime_ns, b3, OciDigest(sha), BlockId(block), media_type, pipeline, version, recorded)


def _key(path: Path | str) -> str:
    return os.path.abspath(path)


class FingerprintIndex:
    """The change index of one brain; load, look up, record, save."""

    def __init__(self, file: Path, rows: dict[str, list[Any]], discarded: str | None = None) -> None:
        self.file = file
        self._rows = rows
        self._by_blake3: dict[str, str] | None = None
        self._dirty = False
        self.discarded = discarded

    @classmethod
    def load(cls, brain_path: Path) -> FingerprintIndex:
        """The index stored in `brain_path` (empty if absent; empty with `discarded` set if unusable)."""
        file = Path(brain_path) / SIDECAR
        try:
            document = json.loads(file.read_bytes())
        except FileNotFoundError:
            return cls(file, {})
        except (OSError, ValueError) as e:
            return cls(file, {}, discarded=f"{file} unreadable ({e}); starting an empty index")
        if not isinstance(document, dict) or document.get("format") != FORMAT:
            return cls(file, {}, discarded=f"{file} is not {FORMAT}; starting an empty index")
        rows = document.get("entries")
        if not isinstance(rows, dict) or not all(isinstance(r, list) and len(r) == 9 for r in rows.values()):
            return cls(file, {}, discarded=f"{file} has malformed entries; starting an empty index")
        return cls(file, rows)

    def __len__(self) -> int:
        return len(self._rows)

    def paths(self) -> list[str]:
        """Every recorded absolute path, sorted."""
        return sorted(self._rows)

    def get(self, path: Path | str) -> FingerprintEntry | None:
        """The entry for `path` regardless of its current state, or None."""
        key = _key(path)
        return self._entry(key, self._rows.get(key))

    @staticmethod
    def _entry(key: str, row: list[Any] | None) -> FingerprintEntry | None:
        if row is None:
            return None
        try:
            return FingerprintEntry._from_row(key, row)
        except (InvalidInputError, ValueError, TypeError):
            # A hand-edited or damaged row is just a miss; the caller re-hashes and re-records.
            return None

    def lookup(self, path: Path | str, size: int, mtime_ns: int) -> FingerprintEntry | None:
        """The entry for `path` if its size and mtime still match and it is not racy; no hashing."""
        key = _key(path)  # once: `abspath` is a third of a lookup, paid for each of a re-run's sources
        row = self._rows.get(key)
        # Compare the raw row first: most lookups of a changed file end here, without building digests.
        if row is None or row[0] != size or row[1] != mtime_ns:
            return None
        entry = self._entry(key, row)
        return None if entry is None or entry.is_racy else entry

    def by_blake3(self, blake3_hex: str) -> FingerprintEntry | None:
        """Some entry whose content has this BLAKE3 (the smallest path, for determinism), or None."""
        if self._by_blake3 is None:
            index: dict[str, str] = {}
            for path in sorted(self._rows, reverse=True):
                index[self._rows[path][2]] = path
            self._by_blake3 = index
        found = self._by_blake3.get(blake3_hex)
        entry = None if found is None else self._entry(found, self._rows.get(found))  # `found` is a key already
        if entry is not None and entry.blake3 != blake3_hex:
            # The path was re-recorded with other content since: rebuild the map once and look again.
            self._by_blake3 = None
            return self.by_blake3(blake3_hex)
        return entry

    def record(
        self,
        path: Path | str,
        *,
        size: int,
        mtime_ns: int,
        blake3: str,
        sha256: OciDigest,
        block: BlockId,
        media_type: str,
        pipeline: str | None = None,
        pipeline_version: str | None = None,
        recorded_ns: int | None = None,
    ) -> FingerprintEntry:
        """Remember what `path` (at `size`/`mtime_ns`) registered as; replaces any earlier entry."""
        entry = FingerprintEntry(
            _key(path), size, mtime_ns, blake3, OciDigest.parse(sha256), BlockId.parse(block), media_type,
            pipeline, pipeline_version, time.time_ns() if recorded_ns is None else recorded_ns,
        )  # fmt: skip
        self._rows[entry.path] = entry._row()
        if self._by_blake3 is not None:
            # Kept current instead of rebuilt: a run records thousands of entries between lookups.
            held = self._by_blake3.get(blake3)
            if held is None or entry.path < held or self._rows[held][2] != blake3:
                self._by_blake3[blake3] = entry.path
        self._dirty = True
        return entry

    def remember(self, fingerprint: Fingerprint) -> FingerprintEntry:
        """`record` what registering a source found."""
        path, size, mtime_ns, blake3, sha256, media_type, block, pipeline, pipeline_version = fingerprint
        return self.record(
            path, size=size, mtime_ns=mtime_ns, blake3=blake3, sha256=sha256, block=block, media_type=media_type,
            pipeline=pipeline, pipeline_version=pipeline_version,
        )  # fmt: skip

    def forget(self, path: Path | str) -> bool:
        """Drop the entry for `path`; True if there was one."""
        removed = self._rows.pop(_key(path), None) is not None
        if removed:
            self._by_blake3 = None
            self._dirty = True
        return removed

    def save(self) -> bool:
        """Write the index atomically if anything changed; True if a file was written."""
        if not self._dirty:
            return False
        document = {"entries": self._rows, "format": FORMAT}
        data = json.dumps(document, separators=(",", ":"), sort_keys=True).encode()
        self.file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.file, data)
        self._dirty = False
        return True
