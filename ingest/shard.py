"""`brain ingest --shard I/N --base REF`: one runner's share of a corpus split over N runners (§10.7).

**The function.** A source belongs to shard `1 + (u64 mod N)`, where `u64` is the first 8 bytes of the
SHA-256 of its origin's UTF-8 bytes read as a big-endian unsigned integer, and the origin is the one its
registration record names (`ingest.register.origin_of`: repository-relative by default, or `--origin`
joined with the path below the root). It is the same on every machine, Python version and run
(`hash()` is salted per process and never used), and it depends on the origin only, so a file keeps its
shard when others are added or removed, and the N shards of one corpus are disjoint and cover it.

A path discovery could not turn into a source (unreadable, a loop, an empty file) has no origin yet; it
is assigned by the same function of the origin it would have had (its relpath under `--origin`, else the
relpath), so exactly one shard reports it.

**Scope.** Everything the run does, `--sync` included, concerns the shard's own sources: a registered
origin outside the shard is never `missing` and never dropped (`ingest.sync` asks `Shard.holds`).

**The base.** Every shard of one build starts from the same snapshot, the last published head (pulled
or fetched) or the empty brain. `--base REF` names it — a digest (`sha256:…`), a tag of the local layout
(`index.json`, e.g. what `brain pull` or `pack` tagged), the registry reference the brain was pulled
from (`head.json`'s or a branch's `origin`), or `empty` — and the run refuses (exit 5, before taking the
lock) unless the brain's head is that snapshot or a first-parent descendant of it (a shard job re-run
after a kill finds its own checkpoints above the base: it carries on from them).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from brain.brain import Brain
from brain.errors import ConflictError, IntegrityError, NotFoundError, UsageError
from brain.identity import OciDigest
from brain.frozen import FrozenModel

_SHARD = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*")
EMPTY_BASE = "empty"
SOURCE_SNAPSHOT = "ai.gaussia.boltzmann.source-snapshot"  # §6.1 (the brain package reads it, oci writes it)
MAX_SHARDS = 1 << 16
_Item = TypeVar("_Item")


def shard_of(origin: str, count: int) -> int:
    """The shard (1..count) holding `origin`: SHA-256 of its UTF-8 bytes, first 8 bytes big-endian, mod count."""
    if count < 1:
        raise UsageError(f"a shard count must be at least 1 (got {count})")
    head = hashlib.sha256(origin.encode("utf-8", "surrogateescape")).digest()[:8]
    return 1 + int.from_bytes(head, "big") % count


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1-based)."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N` with 1 <= I <= N; anything else is a usage error (exit 3)."""
        match = _SHARD.fullmatch(text)
        hint = "give I/N with 1 <= I <= N, e.g. --shard 2/8 (shards are numbered from 1)"
        if match is None:
            raise UsageError(f"--shard {text!r} is not I/N (two whole numbers)", hint=hint)
        index, count = int(match.group(1)), int(match.group(2))
        if count < 1:
            raise UsageError(f"--shard {text!r}: the shard count N must be at least 1", hint=hint)
        if count > MAX_SHARDS:
            raise UsageError(f"--shard {text!r}: at most {MAX_SHARDS} shards", hint=hint)
        if not 1 <= index <= count:
            raise UsageError(f"--shard {text!r}: the shard number must be between 1 and {count}", hint=hint)
        return cls(index, count)

    def holds(self, origin: str) -> bool:
        """Whether `origin` falls in this shard."""
        return self.count == 1 or shard_of(origin, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


class ShardReport(FrozenModel):
    """What `--shard` kept and skipped of the discovered sources (and what the run started from)."""

    shard: str
    index: int
    count: int
    kept: int
    skipped: int
    base: str | None = None
    """The snapshot `--base` named (None: the empty brain, or no `--base`)."""


def select(
    items: Iterable[_Item], shard: Shard | None, origin: Callable[[_Item], str]
) -> tuple[list[_Item], int, int]:
    """The items whose origin is in `shard` (all of them without one), and how many were kept and skipped."""
    kept: list[_Item] = []
    skipped = 0
    for item in items:
        if shard is None or shard.holds(origin(item)):
            kept.append(item)
        else:
            skipped += 1
    return kept, len(kept), skipped


def resolve_base(brain: Brain, ref: str) -> OciDigest | None:
    """The snapshot `--base REF` names in this brain (None for `empty`); `NotFoundError` if none."""
    if ref == EMPTY_BASE:
        return None
    if ref.startswith("sha256:"):
        try:
            return brain.resolve_snapshot_prefix(ref)
        except NotFoundError as e:
            raise NotFoundError(
                f"--base {ref}: {e.message}", hint="`brain pull` or `brain fetch` the base first"
            ) from e
    found = _pulled(brain, ref) or _tagged(brain, ref)
    if found is None:
        raise NotFoundError(
            f"--base {ref}: neither the reference this brain was pulled from nor a tag of its index.json",
            hint=f"`brain pull {ref}` first, or give the snapshot digest (sha256:...) or `empty`",
        )
    return found


def _pulled(brain: Brain, ref: str) -> OciDigest | None:
    """The published snapshot `head.json`'s origin records for `ref` (a pull of exactly that reference)."""
    head = brain.head()
    origin = None if head is None else head.origin
    if origin is None:
        return None
    named = {origin.reference}
    if origin.tag is not None:
        named.add(
            f"{origin.reference.rsplit(':', 1)[0] if _has_tag(origin.reference) else origin.reference}:{origin.tag}"
        )
    return origin.snapshot if ref in named else None


def _has_tag(reference: str) -> bool:
    return ":" in reference.rsplit("/", 1)[-1]


def _tagged(brain: Brain, tag: str) -> OciDigest | None:
    """The full snapshot a manifest tagged `tag` in `index.json` was packed from."""
    try:
        descriptor = brain.layout.resolve_tag(tag)
    except NotFoundError:
        return None
    try:
        manifest = json.loads(brain.blobs.get(OciDigest.parse(str(descriptor.digest))))
        annotations = manifest.get("annotations") or {}
        named = annotations.get(SOURCE_SNAPSHOT) or manifest["config"]["digest"]
        return OciDigest.parse(named)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise IntegrityError(
            f"--base {tag}: the manifest tagged {tag} names no snapshot ({e})", hint="run `brain verify`"
        ) from e


def check_base(brain: Brain, base: OciDigest | None, ref: str, shard: Shard | None = None) -> None:
    """Refuse unless the head is `base` or a first-parent descendant of it. For `empty` (None): the brain is
    empty, or (with `shard`) holds only sources of that shard — what a killed run of this shard left."""
    head = brain.snapshot_digest()
    if head is None:
        if base is None:
            return
        raise ConflictError(
            f"--base {ref}: this brain is empty, the base is {base}",
            hint=f"`brain pull {ref}` (or fetch and check it out) before ingesting the shard",
        )
    if base is None:
        if shard is not None and _only_own_sources(brain, head, shard):
            return
        raise ConflictError(
            f"--base {EMPTY_BASE}: this brain already holds snapshot {head}"
            + ("" if shard is None else f", with sources outside shard {shard}"),
            hint="start the shard from a fresh `brain init`, or give the snapshot it was pulled at",
        )
    seen = 0
    current: OciDigest | None = head
    while current is not None and seen < 1_000_000:
        if current == base:
            return
        snapshot = brain.snapshot(current)
        current = snapshot.first_parent if snapshot is not None else None
        seen += 1
    raise ConflictError(
        f"--base {ref}: the head {head} does not descend from the base {base}",
        hint=f"`brain pull {ref}` into a fresh brain, so every shard starts from the same snapshot",
    )


def _only_own_sources(brain: Brain, head: OciDigest, shard: Shard) -> bool:
    """Every origin the head registers is in `shard` (the lineage log, rebuilt from the ledger if stale)."""
    from ingest.lineage_graph import graph_of

    origins = graph_of(brain, head).lineage.origins
    return all(shard.holds(origin) for origin in origins)


__all__ = ["EMPTY_BASE", "Shard", "ShardReport", "check_base", "resolve_base", "select", "shard_of"]
