"""`boltzmann/layers.json`: a local cache from layer contents to the layer blob already built for them.

A module layer's bytes depend only on its composition and tombstones (every member is content-addressed),
and a history layer's only on its member list, so an unchanged module is never re-compressed. The cache is
a hint, never a source of truth: an entry is used only after the layer file it names re-hashes to its
digest, and a missing, corrupt or unreadable cache is simply rebuilt.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection
from pathlib import Path

from pydantic import Field, ValidationError

from brain.frozen import FrozenModel
from brain.identity import BlockId, OciDigest
from brain.store.atomic import atomic_write
from brain.store.blobs import BlobStore
from brain.store.sidecars import LAYERS

CACHE_FILE = LAYERS.parts
# Bounded so the sidecar stays small; old entries only cost a rebuild.
MAX_ENTRIES = 256


class CachedLayer(FrozenModel):
    """A layer built earlier: its digest and size, plus facts about its members worth not recomputing."""

    digest: OciDigest
    size: int = Field(ge=0)
    schema_versions: tuple[int, ...] = ()
    # Uncompressed tar size, so a repack can warn about the consumers' inflate bound without re-inflating.
    inflated_size: int | None = Field(default=None, ge=0)


def module_key(composition: OciDigest, tombstones: Collection[BlockId | str] = ()) -> str:
    """The cache key of a module layer: its composition digest plus its sorted tombstones."""
    if not tombstones:
        return f"module:{composition}"
    return f"module:{composition}:" + ",".join(sorted(str(t) for t in tombstones))


def history_key(member_names: list[str]) -> str:
    """The cache key of a history layer: a digest of its ordered member names."""
    return "history:" + hashlib.sha256("\n".join(member_names).encode("ascii")).hexdigest()


class LayerCache:
    """The cache sidecar of one brain; read once, written back by `save` (callers hold the writer lock)."""

    def __init__(self, root: Path, blobs: BlobStore) -> None:
        self.path = Path(root).joinpath(*CACHE_FILE)
        self.blobs = blobs
        self._entries: dict[str, CachedLayer] = self._load()
        self._dirty = False

    def _load(self) -> dict[str, CachedLayer]:
        try:
            raw = json.loads(self.path.read_bytes())
            return {str(k): CachedLayer.model_validate(v) for k, v in raw.items()}
        except (OSError, ValueError, AttributeError, ValidationError):
            return {}

    def get(self, key: str) -> CachedLayer | None:
        """The cached layer for `key` if its blob is stored and re-hashes to its digest; else None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        try:
            size = self.blobs.path(entry.digest).stat().st_size
        except OSError:
            size = -1
        # Size first (cheap), then a streamed re-hash: a cached name is never trusted on its own.
        if size != entry.size or not self.blobs.verify_file(entry.digest):
            self._entries.pop(key, None)
            self._dirty = True
            return None
        return entry

    def entries(self) -> dict[str, CachedLayer]:
        """Every entry, unchecked (for `oci.redaction`, which deletes layers holding destroyed bytes)."""
        return dict(self._entries)

    def put(self, key: str, entry: CachedLayer) -> None:
        """Remember `entry` under `key` (most recent last)."""
        self._entries.pop(key, None)
        self._entries[key] = entry
        while len(self._entries) > MAX_ENTRIES:
            self._entries.pop(next(iter(self._entries)))
        self._dirty = True

    def save(self) -> None:
        """Write the sidecar back if anything changed."""
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {k: v.model_dump(mode="json") for k, v in self._entries.items()}
        atomic_write(self.path, (json.dumps(document, indent=1) + "\n").encode(), sync=False)
        self._dirty = False
