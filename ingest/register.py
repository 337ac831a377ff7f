"""Registering one source file (§3.7 "register source"): bytes, media type, normalized view, canonical block.

Order for each file:
1. Fingerprint fast path: same path, size and mtime as a recorded (non-racy) entry whose canonical block is
   still a member → `unchanged`, nothing is read or hashed.
2. Otherwise the bytes are streamed once into the blob store through `Blake3Tee` (SHA-256 names the blob,
   BLAKE3 feeds the change index), in constant memory whatever the size.
3. A recorded entry for the same content (a touched or renamed file) whose block is a member is also
   `unchanged`, without normalizing again.
4. The pipeline for the media type normalizes the *stored blob* (not the path, which may change or vanish
   meanwhile), so the view always describes the registered bytes. A failure is reported; the source is
   registered without a view.
5. The canonical block is staged with its records; if it was already a member the source is `unchanged`
   (or a `duplicate` of a path registered earlier in this run).

`Registrar.register` is the run's register stage (`ingest.record`): it takes the record discovery made and
returns a new one, with the problems it found for this source, and the view's bytes beside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from brain.blocks import MemoryType
from brain.blocks.canonical import CanonicalBlock, NormalizedView
from brain.identity import BlockId, OciDigest
from ingest.commit import Stager
from ingest.fingerprints import Fingerprint, FingerprintEntry, FingerprintIndex
from ingest.hashing import Blake3Tee, iter_file_chunks
from ingest.normalize import NormalizationError, installed_pipelines, pipeline_for
from ingest.proposers.notes import NO_CANDIDATES
from ingest.record import SourceRecord, StageOrderError
from ingest.replace import RunLineage
from ingest.report import ProblemKind, SourceProblemReport, Status
from ingest.sources import SourceFile, read_head, sniff
from ingest.sources.media import HEAD_SIZE
from ingest.sources import problems as p


REPLACED_OTHER_PATH = "replaced-other-path"
"""A note: the version an origin named came from another file, which this source now replaces."""
ORIGIN_CHANGED = "origin-changed"
"""A note: this file's previous version was registered under another origin; the new version replaces it."""

SMALL_SOURCE = 1 << 20
"""Sources up to this size are read into memory once; larger ones are streamed in constant memory."""


def _read_small(path: Path) -> bytes | None:
    """All bytes of `path`, or None if it grew past `SMALL_SOURCE` (then it is streamed instead)."""
    with open(path, "rb") as handle:
        data = handle.read(SMALL_SOURCE + 1)
    return data if len(data) <= SMALL_SOURCE else None


class Registered(NamedTuple):
    """What the register stage hands on: the source's record, and its normalized view for the ask stage."""

    record: SourceRecord
    view: bytes | None
    """The view's bytes when this run normalized the source (None: not read, or nothing to read)."""


@dataclass(frozen=True)
class RegisterOptions:
    """Per-run settings that shape registration."""

    license: str | None = None
    origin: str | None = None
    media_type: str | None = None
    use_index: bool = True


def origin_of(default: str | None, relpath: str, root_is_dir: bool, origin_option: str | None) -> str:
    """A source's origin: its default one (else its relpath), or `--origin` (joined with the relpath under a dir)."""
    if origin_option is None:
        return default or relpath
    return f"{origin_option.rstrip('/')}/{relpath}" if root_is_dir else origin_option


class Registrar:
    """Registers files one at a time through a `Stager`, consulting the fingerprint index."""

    def __init__(
        self,
        stager: Stager,
        index: FingerprintIndex,
        options: RegisterOptions,
        blob_path: Any | None,
        lineage: RunLineage,
    ) -> None:
        self.stager = stager
        self.lineage = lineage
        self.index = index
        self.options = options
        # Where a stored blob can be read back (None in a dry run: nothing is stored, read the source).
        self._blob_path = blob_path
        self._pipelines = installed_pipelines()
        self._first_path: dict[BlockId, tuple[str, str]] = {}  # block -> (relpath, origin) of its first source
        # origin -> the file this run registered under it (its text: a `Path` held per source is ~3x the bytes)
        self._origin_paths: dict[str, str] = {}
        self._indexed_paths: dict[BlockId, list[str]] | None = None  # block -> files the index saw it from

    def origin_of(self, source: SourceFile, root_is_dir: bool) -> str:
        """The registration record's origin: the default (repository-relative, `ingest.sources.origins`), or
        `--origin` (joined with the path below the ingest root for a directory)."""
        return origin_of(source.origin, source.relpath, root_is_dir, self.options.origin)

    def register(self, discovered: SourceRecord) -> Registered:
        """The register stage for one discovered file; never raises for a problem with the file itself."""
        source = discovered.source
        if source is None:
            raise StageOrderError(f"{discovered.relpath}: only a discovered file can be registered")
        if self.options.use_index:
            entry = self.index.lookup(source.path, source.size, source.mtime_ns)
            if entry is not None and self._still_current(entry):
                return Registered(self._unchanged(discovered, entry), None)
        data: bytes | None = None
        try:
            if source.size <= SMALL_SOURCE:
                # One read for sniffing, hashing, storing and normalizing (the common case: notes, pages).
                data = _read_small(source.path)
            head = read_head(source.path) if data is None else data[:HEAD_SIZE]
            guess = sniff(source.path, head)
            media_type = self.options.media_type or guess.media_type
            tee = Blake3Tee([data] if data is not None else iter_file_chunks(source.path))
            if data is not None:
                # Put in the background: a pipeline that reads files only gets it stored in `_normalize`.
                digest, size = self.stager.put_blob_later(b"".join(tee)), len(data)
            else:
                digest, size = self.stager.sink.put_blob_stream(tee)
        except FileNotFoundError:
            return Registered(_failed(discovered, p.VANISHED, "deleted while ingesting"), None)
        except OSError as e:
            return Registered(_failed(discovered, p.UNREADABLE, e.strerror or str(e)), None)
        found: tuple[SourceProblemReport, ...] = ()
        if self.options.media_type is None and (note := guess.problem(source.relpath)) is not None:
            found = (SourceProblemReport(stage="register", code=note.code, detail=note.detail, kind="note"),)
        if self.options.use_index:
            prior = self.index.get(source.path) or self.index.by_blake3(tee.hexdigest())
            if prior is not None and prior.sha256 == digest and self._still_current(prior):
                seen = Fingerprint(
                    source.path, source.size, source.mtime_ns, tee.hexdigest(), digest, media_type, prior.block,
                    prior.pipeline, prior.pipeline_version,
                )
                read = discovered.noted("register", *found, media_type=media_type, size=size)
                return Registered(self._unchanged(read, prior, seen), None)
        normalized = self._normalize(source.relpath, media_type, digest, source.path, data)
        view, pipeline = normalized.view, normalized.pipeline
        canonical = CanonicalBlock(blob=digest, media_type=media_type, size=size, normalized_view=view)
        fingerprint = Fingerprint(
            source.path, source.size, source.mtime_ns, tee.hexdigest(), digest, media_type, canonical.block_id,
            pipeline[0] if pipeline else None, pipeline[1] if pipeline else None,
        )  # fmt: skip
        read = discovered.noted(
            "register", *found, *normalized.problems, status="registered", block=canonical.block_id,
            media_type=media_type, size=size, fingerprint=fingerprint,
        )  # fmt: skip
        return Registered(self._stage(read, source, canonical, pipeline), normalized.text)

    def _stage(
        self, record: SourceRecord, source: SourceFile, canonical: CanonicalBlock, pipeline: tuple[str, str] | None
    ) -> SourceRecord:
        """Stage the canonical block with its records: new, a replacement of the origin's current version,
        a duplicate of a path registered earlier in this run, or unchanged."""
        origin = record.origin
        previous: list[BlockId] = []
        moved_from: list[str] = []
        if not self.stager.is_member(MemoryType.CANONICAL, canonical.block_id):
            previous = self.lineage.current(origin, canonical.block_id)
            if not previous:
                previous, moved_from = self._own_previous_version(source.path, canonical.block_id)
        added = self.stager.register(
            canonical, origin=origin, license=self.options.license, pipeline=pipeline, supersedes=previous
        )
        notes: list[SourceProblemReport] = []
        status: Status = "registered"
        fingerprint = record.fingerprint
        if added and previous:
            status = "replaced"
            if (other := self._note_other_path(origin, source.path, previous)) is not None:
                notes.append(other)
            if moved_from:
                detail = f"this file's previous version was registered as {', '.join(moved_from)}; this one replaces it"
                notes.append(SourceProblemReport(stage="register", code=ORIGIN_CHANGED, detail=detail, kind="note"))
            stale = self.lineage.stale_dependents(previous)
            self.stager.demote(stale, f"its evidence was replaced: {origin} is now {canonical.block_id}")
        if not added:
            first = self._first_path.get(canonical.block_id)
            status = "duplicate" if first is not None else "unchanged"
            if first is not None:
                detail = f"same bytes as {first[0]}"
                notes.append(SourceProblemReport(stage="register", code="duplicate", detail=detail, kind="note"))
            elif (known := self.index.get(source.path)) is not None and known.sha256 != canonical.blob:
                if (reverted := self._reverted(canonical.block_id)) is not None:
                    notes.append(reverted)
                    fingerprint = None  # not recorded: every run reports it until the brain and the file agree
        self._first_path.setdefault(canonical.block_id, (source.relpath, origin))
        self._origin_paths.setdefault(origin, str(source.path))
        return record.noted(
            "register", *notes, status=status, newly_added=added,
            replaces=tuple(previous) if status == "replaced" else (), fingerprint=fingerprint,
        )  # fmt: skip
    def _own_previous_version(self, path: Path, new: BlockId) -> tuple[list[BlockId], list[str]]:
        """The current version this very file registered under another origin, and that origin.

        The default origin can change for one file (the current directory, outside a repository; brains
        whose origins were relative to the ingest root): the fingerprint index says which block this path
        registered last, and if that block is still current, the new bytes replace it as a changed origin
        would. An explicit `--origin` is taken as meant: no link is made.
        """
        if self.options.origin is not None or not self.options.use_index:
            return [], []
        own = self.index.get(path)
        if own is None or own.block == new:
            return [], []
        if any(other != str(path) and os.path.exists(other) for other in self._paths_of(own.block)):
            return [], []  # another file still has those bytes (this one was its duplicate): not ours to replace
        origins = self.lineage.origins_of(own.block)
        return ([own.block], origins) if origins else ([], [])

    def _paths_of(self, block: BlockId) -> list[str]:
        """Every file the fingerprint index saw `block` from (as the index stood when first asked)."""
        if self._indexed_paths is None:
            self._indexed_paths = {}
            for known in self.index.paths():
                entry = self.index.get(known)
                if entry is not None:
                    self._indexed_paths.setdefault(entry.block, []).append(known)
        return self._indexed_paths.get(block, [])

    def _note_other_path(self, origin: str, path: Path, previous: list[BlockId]) -> SourceProblemReport | None:
        """The note when the version just replaced was read from another file (two files, one origin)."""
        others = {p for p in [self._origin_paths.get(origin)] if p is not None and p != str(path)}
        own = self.index.get(path) if self.options.use_index else None
        if not others and self.options.use_index and (own is None or own.block not in previous):
            # Not this file's own previous version: the index may know which file registered it.
            others = {other for block in previous for other in self._paths_of(block) if other != str(path)}
        if not others:
            return None
        detail = (
            f"was registered from {', '.join(sorted(others))}; now it names the bytes of {path} "
            "(give each file its own --origin, or ingest both from their repository)"
        )
        return SourceProblemReport(stage="register", code=REPLACED_OTHER_PATH, detail=detail, kind="note")

    def _reverted(self, block: BlockId) -> SourceProblemReport | None:
        """The failure when a file changed back to bytes a later version superseded (the brain cannot present
        them again); None when nothing superseded them."""
        winners = self.lineage.superseded_by(block)
        if not winners:
            return None
        detail = (
            f"these bytes are {block.short}, superseded by {', '.join(w.short for w in winners)}, which the "
            "brain still presents as current: §7.2 has no way back (drop the supersession record to restore them)"
        )
        return SourceProblemReport(stage="register", code="reverted-to-superseded", detail=detail, kind="failure")

    def _still_current(self, entry: FingerprintEntry) -> bool:
        """The entry's block is a member and would be built the same way today."""
        if self.options.media_type is not None and entry.media_type != self.options.media_type:
            return False
        if entry.pipeline is not None and self._pipelines.get(entry.pipeline) != entry.pipeline_version:
            return False
        return self.stager.is_member(MemoryType.CANONICAL, entry.block)

    def _unchanged(
        self, record: SourceRecord, entry: FingerprintEntry, seen: Fingerprint | None = None
    ) -> SourceRecord:
        """The record of a source whose block the index vouches for (`seen`: what this run read of it)."""
        notes: tuple[SourceProblemReport, ...] = ()
        status: Status = "unchanged"
        first = self._first_path.get(entry.block)
        if first is not None and first[1] != record.origin:
            # Same bytes as an earlier source of this run: a duplicate, whether or not a checkpoint has
            # recorded that source's fingerprint in between (which is what made this path `unchanged`).
            status = "duplicate"
            notes = (SourceProblemReport(stage="register", code="duplicate", detail=f"same bytes as {first[0]}",
                                         kind="note"),)
        self._first_path.setdefault(entry.block, (record.relpath, record.origin))
        return record.noted(
            "register", *notes, status=status, block=entry.block, media_type=entry.media_type, size=entry.size,
            fingerprint=seen,
        )  # fmt: skip

    def _normalize(
        self, relpath: str, media_type: str, digest: OciDigest, source_path: Path, data: bytes | None
    ) -> Normalized:
        pipeline = pipeline_for(media_type)
        if pipeline is None:
            detail = f"no normalization pipeline reads {media_type}: registered as bytes, nothing to propose from"
            return Normalized((SourceProblemReport(stage="normalize", code=NO_CANDIDATES, detail=detail, kind="note"),))
        readable = source_path if self._blob_path is None else self._blob_path(digest)
        try:
            # `data` hashed to `digest`: it is the stored blob, so the view still describes the registered bytes.
            output = None if data is None else pipeline.normalize_bytes(data)
            if output is None:
                if data is not None and self._blob_path is not None:
                    self.stager.sink.put_blob(data)  # this pipeline reads the stored blob: it must be there now
                output = pipeline.normalize(readable)
        except NormalizationError as e:
            detail = f"{pipeline.name}: {e.detail}".replace(str(readable), relpath)
            kind: ProblemKind = "note" if e.note else "failure"
            return Normalized((SourceProblemReport(stage="normalize", code=e.code, detail=detail, kind=kind),))
        # A view identical to the source shares its blob (already stored and verified just now).
        view_digest = digest if output.data == data else self.stager.sink.put_blob(output.data)
        view = NormalizedView(blob=view_digest, media_type=output.media_type, size=len(output.data))
        notes = []
        for note in output.notes:  # e.g. `charset-mismatch: declared ..., detected ...`
            code, _, detail = note.partition(": ")
            notes.append(SourceProblemReport(stage="normalize", code=code, detail=detail, kind="note"))
        # A composed or parameterized pipeline (`gzip+man-text`, `text-nfc;charset=cp1252`) names itself.
        name = output.pipeline or pipeline.name
        return Normalized(tuple(notes), view, (name, self._pipelines.get(name, pipeline.version)), output.data)


class Normalized(NamedTuple):
    """What normalizing one stored blob gave: its problems, and (when it read) the view, pipeline and bytes."""

    problems: tuple[SourceProblemReport, ...]
    view: NormalizedView | None = None
    pipeline: tuple[str, str] | None = None
    text: bytes | None = None


def _failed(record: SourceRecord, code: str, detail: str) -> SourceRecord:
    problem = SourceProblemReport(stage="register", code=code, detail=detail, kind="failure")
    return record.noted("register", problem, status="failed")
