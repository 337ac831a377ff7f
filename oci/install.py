"""Adopt a verified artifact into a brain: layers into blobs, the removal invariant, and the head LAST.

`pull` fetches a manifest and its blobs, then calls `install_artifact` with a way to obtain each blob.
Everything is re-verified here whatever the transport checked: descriptors, the config, the layer
annotations against the config, every layer member (see `oci.unpack`), and §7.7 between the new head and
its first parent. A refusal raises `UntrustedArtifactError`, deletes the blobs this install added, and
leaves the head where it was. A selective install always records its provenance in `head.origin`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping


from brain.blocks.base import Block
from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.blocks.provenance import RemovalRecord
from brain.brain import Brain
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, NotFoundError, UntrustedArtifactError
from brain.frozen import FrozenModel
from brain.identity import BlockId, OciDigest
from brain.ledger import record_of
from brain.snapshot import Projection, Snapshot
from brain.store import Head, Origin, WriterLock, read_head, write_head
from brain.store.blobs import BlobStore
from oci import media_types as mt
from oci.manifest import Descriptor, Manifest
from oci.pack import module_annotations, record_manifest
from oci.unpack import BlobSource, Staging, open_blob, read_blob, unpack_history, unpack_module

HeadGuard = Callable[[Head | None, OciDigest], None]


class InstallResult(FrozenModel):
    """What an install adopted: the manifest, the snapshot now current (or fetched), and the modules."""

    manifest: OciDigest
    snapshot: OciDigest
    modules: list[MemoryType]
    left_out: list[MemoryType]
    partial: bool
    head_moved: bool
    blobs_added: int
    recorded: bool = False
    # The installed snapshot already was the head (head_moved is then False).
    already_head: bool = False


def _plan(manifest: Manifest, refs: Mapping[str, ModuleRef]) -> tuple[dict[MemoryType, Descriptor], Descriptor]:
    """Map module layers to config modules, check their annotations, and find the history layer."""
    layers: dict[MemoryType, Descriptor] = {}
    history: list[Descriptor] = []
    for layer in manifest.layers:
        memory_type = mt.module_of_layer(layer.mediaType)
        if memory_type is not None:
            if memory_type in layers:
                raise UntrustedArtifactError(f"manifest carries two {memory_type} layers")
            if str(memory_type) not in refs:
                raise UntrustedArtifactError(
                    f"layer {layer.digest} carries {memory_type}, which the config does not name"
                )
            expected = module_annotations(refs[str(memory_type)])
            lies = sorted(k for k, v in expected.items() if layer.annotation(k) != v)
            if lies:
                raise UntrustedArtifactError(
                    f"{memory_type} layer {layer.digest}: annotation(s) {', '.join(lies)} disagree with the config"
                )
            layers[memory_type] = layer
        elif layer.mediaType == mt.HISTORY_LAYER:
            history.append(layer)
        elif layer.mediaType != mt.VECTOR_INDEX_LAYER:
            raise UntrustedArtifactError(f"layer {layer.digest} has unknown media type {layer.mediaType!r}")
    missing = sorted(k for k in refs if MemoryType.parse(k) not in layers)
    if missing:
        raise UntrustedArtifactError(f"the config names module(s) {', '.join(missing)} but no layer carries them")
    if len(history) != 1:
        raise UntrustedArtifactError(f"manifest must carry exactly one history layer, found {len(history)}")
    return layers, history[0]


def _config(fetch: BlobSource, manifest: Manifest) -> tuple[OciDigest, Mapping[str, ModuleRef], bytes]:
    """The source snapshot digest, the published module refs, and the config bytes (verified)."""
    data = read_blob(fetch, manifest.config)
    try:
        if manifest.config.mediaType == mt.SNAPSHOT_CONFIG:
            return manifest.config.digest, Snapshot.decode(data, manifest.config.digest).modules, data
        if manifest.config.mediaType == mt.PROJECTION_CONFIG:
            projection = Projection.decode(data, manifest.config.digest)
            return projection.source, projection.modules, data
    except BrainError as e:
        raise UntrustedArtifactError(f"config {manifest.config.digest} is invalid: {e.message}") from None
    kind = manifest.config.mediaType
    raise UntrustedArtifactError(f"config media type {kind!r} is not a Boltzmann snapshot or projection")


def _composition(blobs: BlobStore, digest: OciDigest) -> Composition | None:
    try:
        return Composition.decode(blobs.get(digest), digest)
    except BrainError:
        return None


def removal_violations(blobs: BlobStore, child: Snapshot, parent: Snapshot) -> list[str]:
    """§7.7: blocks that left a module between `parent` and `child` with no readable removal record in the child."""
    unexplained: list[str] = []
    explained: dict[str, set[BlockId]] | None = None
    for name in sorted(set(child.modules) | set(parent.modules)):
        before, after = parent.modules.get(name), child.modules.get(name)
        if before is None or (after is not None and after.root == before.root):
            continue
        old = _composition(blobs, before.composition)
        new = None if after is None else _composition(blobs, after.composition)
        if old is None or (after is not None and new is None):
            continue  # undecidable: not a violation
        removed = set(old.block_ids) - (set() if new is None else set(new.block_ids))
        if not removed:
            continue
        if explained is None:
            explained = _removals(blobs, child)
            if explained is None:
                return []
        unexplained += [f"{name} {block_id}" for block_id in sorted(removed - explained.get(name, set()))]
    return unexplained


def _removals(blobs: BlobStore, child: Snapshot) -> dict[str, set[BlockId]] | None:
    """Blocks named by readable v1 removal records of the child's provenance, per memory type."""
    ref = child.modules.get(MemoryType.PROVENANCE.value)
    composition = None if ref is None else _composition(blobs, ref.composition)
    if ref is not None and composition is None:
        return None
    named: dict[str, set[BlockId]] = {}
    for block_id in () if composition is None else composition.block_ids:
        try:
            record = record_of(Block.decode(blobs.get(block_id), block_id))
        except BrainError:
            continue  # not readable: explains nothing
        if isinstance(record, RemovalRecord):
            named.setdefault(str(record.memory_type), set()).update(record.blocks)
    return named


def install_artifact(
    brain: Brain,
    manifest_bytes: bytes,
    fetch_blob: BlobSource,
    modules: set[MemoryType] | None = None,
    *,
    reference: str,
    tag: str | None = None,
    fetch_only: bool = False,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
    guard: HeadGuard | None = None,
    max_inflate: int | None = None,
    record: bool = False,
    record_tag: str | None = None,
) -> InstallResult:
    """Verify and adopt an artifact; move the head to its snapshot last (unless `fetch_only`).

    `guard(current_head, new_snapshot)` runs under the writer lock just before the head moves and may
    raise (e.g. pull refusing a diverged history without --force). `max_inflate` raises the per-layer
    inflate bound for a trusted source (see `oci.tarball_reader.inflate_bound`). With `record`, an
    artifact installed whole is named in `index.json` (under `record_tag`, else untagged), so that
    `brain tags`, `verify --tag` and `push` see it; a selective install stores only part of it and is not.
    `on_wait` is told who holds the writer lock while this waits for it.
    """
    manifest = Manifest.decode(manifest_bytes)
    source, refs, config_bytes = _config(fetch_blob, manifest)
    layers, history_layer = _plan(manifest, refs)
    carried = [t for t in MODULE_ORDER if t in layers]
    if modules is not None:
        absent = sorted(str(t) for t in modules if t not in layers)
        if absent:
            raise NotFoundError(
                f"the artifact does not carry module(s) {', '.join(absent)} (it carries {', '.join(map(str, carried))})"
            )
    chosen = carried if modules is None else [t for t in carried if t in modules]
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        staging = Staging(brain.blobs)
        try:
            with open_blob(fetch_blob, history_layer) as stream:
                snapshots = unpack_history(stream, history_layer, staging, max_inflate)
            staging.put(manifest.config.digest.hex, config_bytes)
            staging.put(OciDigest.of(manifest_bytes).hex, manifest_bytes)
            snapshot = snapshots.get(source)
            if snapshot is None:
                raise UntrustedArtifactError(f"history layer {history_layer.digest} lacks the source snapshot {source}")
            if any(snapshot.modules.get(k) != v for k, v in refs.items()):
                raise UntrustedArtifactError(
                    f"config {manifest.config.digest} does not match its source snapshot {source}"
                )
            for memory_type in chosen:
                with open_blob(fetch_blob, layers[memory_type]) as stream:
                    unpack_module(stream, layers[memory_type], memory_type, refs[str(memory_type)], staging, max_inflate)
                _vector_layers(manifest, memory_type, fetch_blob, staging)
            left_out = [t for t in MODULE_ORDER if t.value in snapshot.modules and t not in chosen]
            head_moved = already_head = False
            if not fetch_only:
                _check_removals(brain.blobs, source, snapshot, snapshots)
                current = read_head(brain.path)
                if guard is not None:
                    guard(current, source)
                origin = Origin(partial=bool(left_out), reference=reference, snapshot=source, tag=tag)
                head = next_head(current, source, origin)
                brain.blobs.sync()
                if head is not None:
                    write_head(brain.path, head)
                already_head = current is not None and current.snapshot == source
                head_moved = not already_head
            else:
                brain.blobs.sync()
        except BaseException:
            staging.rollback()
            raise
        # After the try: once adopted, blobs are never rolled back because naming them failed.
        recorded = record and chosen == carried
        if recorded:
            record_manifest(brain, OciDigest.of(manifest_bytes), len(manifest_bytes), record_tag)
    return InstallResult(
        manifest=OciDigest.of(manifest_bytes), snapshot=source, modules=chosen, left_out=left_out,
        partial=bool(left_out), head_moved=head_moved, blobs_added=len(staging.added), recorded=recorded,
        already_head=already_head,
    )


def next_head(current: Head | None, source: OciDigest, origin: Origin) -> Head | None:
    """The head to write after installing `source`, or None when `head.json` should stay as it is.

    Installing the snapshot that already is the head leaves the head alone (its retained list and origin
    stay): only a head recorded as a partial pull becomes whole when this install left nothing out.
    """
    if current is None:
        return Head.first(source, origin=origin)
    if current.snapshot != source:
        return current.advance(source, origin=origin)
    if current.origin is not None and current.origin.partial and not origin.partial:
        return current.model_copy(update={"origin": origin})
    return None


def _vector_layers(manifest: Manifest, memory_type: MemoryType, fetch: BlobSource, staging: Staging) -> None:
    for layer in manifest.layers:
        if layer.mediaType == mt.VECTOR_INDEX_LAYER and layer.annotation(mt.MEMORY_TYPE) == str(memory_type):
            staging.put(layer.digest.hex, read_blob(fetch, layer, limit=4 << 30))


def _check_removals(
    blobs: BlobStore, digest: OciDigest, snapshot: Snapshot, snapshots: Mapping[OciDigest, Snapshot]
) -> None:
    parents = snapshot.parent_digests
    if not parents:
        return
    parent = snapshots.get(parents[0])
    if parent is None and blobs.has(parents[0]):
        try:
            parent = Snapshot.decode(blobs.get(parents[0]), parents[0])
        except BrainError:
            parent = None
    if parent is None:
        return  # undecidable
    violations = removal_violations(blobs, snapshot, parent)
    if violations:
        raise UntrustedArtifactError(
            f"snapshot {digest}: {len(violations)} block(s) left a module since its parent {parents[0].short} "
            f"without a readable removal record (§7.7), e.g. {violations[0]}",
            hint="install the provenance module too, or pull the whole artifact",
        )

