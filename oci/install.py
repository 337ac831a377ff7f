"""Adopt a verified artifact into a brain: layers into blobs, the removal invariant, and the head LAST.

`pull` fetches a manifest and its blobs, then calls `install_artifact` with a way to obtain each blob.
Everything is re-verified here whatever the transport checked: descriptors, the config, the layer
annotations against the config, every layer member (see `oci.unpack`), and §7.7 between the new head and
its first parent. A refusal raises `UntrustedArtifactError`, deletes the blobs this install added, and
leaves the head where it was. A selective install always records its provenance in `head.origin`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from brain.blocks.base import Block
from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.blocks.provenance import RemovalRecord
from brain.brain import Brain
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, NotFoundError, UntrustedArtifactError
from brain.frozen import FrozenModel
from brain.identity import BlockId, OciDigest, utc_timestamp
from brain.ledger import record_of
from brain.snapshot import Projection, Snapshot
from brain.branches.pointers import BranchPull
from brain.store import Head, Origin, WriterLock, read_head, write_head
from brain.store.blobs import BlobStore
from brain.vectors import decode as decode_vectors
from oci import media_types as mt
from oci.annotations import (
    schema_versions_lie,
    snapshot_count_lie,
    source_snapshot_lie,
    trust_root_lies,
)
from oci.manifest import Descriptor, Manifest
from oci.pack import module_annotations, record_manifest
from oci.unpack import (
    BlobSource,
    Staging,
    open_blob,
    read_blob,
    unpack_history,
    unpack_module,
)

HeadGuard = Callable[[Head | None, OciDigest], None]


class InstallResult(FrozenModel):
    """What an install adopted: the manifest, the snapshot now current (or fetched), and the modules."""

    manifest: OciDigest
    # The published snapshot, and the snapshot the head now names (a new local one after a partial install).
    snapshot: OciDigest
    head: OciDigest
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


def _config_refs(fetch: BlobSource, manifest: Manifest) -> Mapping[str, ModuleRef]:
    """The module references the config publishes (verified), to plan an install before taking the lock."""
    return _config(fetch, manifest)[1]


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
        # A module absent from the child was not installed (a partial install, §6.8), not emptied: every
        # write keeps a module in `modules` once it appeared (§5.3), so only an install can leave one out.
        if before is None or after is None or after.root == before.root:
            continue
        old = _composition(blobs, before.composition)
        new = _composition(blobs, after.composition)
        if old is None or new is None:
            continue  # undecidable: not a violation
        removed = set(old.block_ids) - set(new.block_ids)
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
    branch: BranchPull | None = None,
) -> InstallResult:
    """Verify and adopt an artifact; move the head last (unless `fetch_only`).

    A complete install of a full snapshot makes the published snapshot the head verbatim; installing
    fewer modules than it has (or a projection) makes the head a new local snapshot of exactly the
    installed modules whose parent is the published snapshot (§6.8, see `partial_snapshot`).
    `guard(current_head, published_snapshot)` runs under the writer lock just before the head moves and may
    raise (e.g. pull refusing a diverged history without --force). `max_inflate` raises the per-layer
    inflate bound for a trusted source (see `oci.tarball_reader.inflate_bound`). With `record`, an
    artifact installed whole is named in `index.json` (under `record_tag`, else untagged), so that
    `brain tags`, `verify --tag` and `push` see it; a selective install stores only part of it and is not.
    `on_wait` is told who holds the writer lock while this waits for it. With `branch`, the install builds on
    that branch's head (the guard judges against it) and switches to the branch (§10.2).
    """
    manifest = Manifest.decode(manifest_bytes)
    refs = _config_refs(fetch_blob, manifest)
    layers, _ = _plan(manifest, refs)
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
            published = verify_published(manifest_bytes, fetch_blob, staging, max_inflate)
            source, snapshot = published.source, published.snapshot
            versions: dict[str, tuple[int, ...]] = {}
            for memory_type in chosen:
                with open_blob(fetch_blob, layers[memory_type]) as stream:
                    unpacked = unpack_module(
                        stream, layers[memory_type], memory_type, refs[str(memory_type)], staging, max_inflate
                    )
                versions[str(memory_type)] = unpacked.schema_versions
                _vector_layers(manifest, memory_type, refs[str(memory_type)], unpacked.composition, fetch_blob,
                               staging)
            left_out = [t for t in MODULE_ORDER if t.value in snapshot.modules and t not in chosen]
            partial = bool(left_out) or manifest.config.mediaType == mt.PROJECTION_CONFIG
            lie = schema_versions_lie(manifest, versions, None if chosen == carried else versions)
            if lie is not None:
                raise UntrustedArtifactError(f"manifest annotations lie: {lie}")
            head_moved = already_head = False
            installed = source
            if not fetch_only:
                _check_removals(brain.blobs, source, snapshot)
                current = brain_head = read_head(brain.path)
                if branch is not None:
                    current = branch.base(brain.path, brain_head)
                if guard is not None:
                    guard(current, source)
                origin = Origin(partial=partial, reference=reference, snapshot=source, tag=tag)
                if partial:
                    installed = _partial_head_snapshot(brain, current, snapshot, source, chosen, staging)
                brain.blobs.sync()
                if branch is not None:
                    branch.move(brain.path, brain_head, installed, origin)
                else:
                    head = next_head(current, installed, origin)
                    if head is not None:
                        write_head(brain.path, head)
                already_head = current is not None and current.snapshot == installed
                head_moved = not already_head or branch is not None
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
        manifest=OciDigest.of(manifest_bytes), snapshot=source, head=installed, modules=chosen, left_out=left_out,
        partial=partial, head_moved=head_moved, blobs_added=len(staging.added), recorded=recorded,
        already_head=already_head,
    )


@dataclass(frozen=True)
class Published:
    """What an artifact publishes, verified from its manifest, config and history layer alone."""

    manifest: Manifest
    source: OciDigest
    snapshot: Snapshot
    refs: Mapping[str, ModuleRef]
    layers: dict[MemoryType, Descriptor]
    history_layer: Descriptor
    config_bytes: bytes


def verify_published(
    manifest_bytes: bytes,
    fetch_blob: BlobSource,
    staging: Staging | None = None,
    max_inflate: int | None = None,
) -> Published:
    """Check the config, the layer plan, the history layer and every manifest annotation they decide.

    Reads only the config and the history layer, so `pull` can run it before downloading any module
    layer. With `staging`, the history's documents, the config and the manifest are adopted as well.
    """
    manifest = Manifest.decode(manifest_bytes)
    source, refs, config_bytes = _config(fetch_blob, manifest)
    layers, history_layer = _plan(manifest, refs)
    with open_blob(fetch_blob, history_layer) as stream:
        snapshots = unpack_history(stream, history_layer, staging, max_inflate)
    snapshot = snapshots.get(source)
    if snapshot is None:
        raise UntrustedArtifactError(f"history layer {history_layer.digest} lacks the source snapshot {source}")
    if any(snapshot.modules.get(k) != v for k, v in refs.items()):
        raise UntrustedArtifactError(f"config {manifest.config.digest} does not match its source snapshot {source}")
    lies = [
        lie
        for lie in (
            source_snapshot_lie(manifest, source),
            *trust_root_lies(manifest, snapshot.trust_root),
            snapshot_count_lie(history_layer, len(snapshots)),
        )
        if lie is not None
    ]
    if lies:
        raise UntrustedArtifactError(
            f"manifest {OciDigest.of(manifest_bytes).short}: annotations lie: {'; '.join(lies)}",
            hint="the publisher's annotations disagree with the artifact's own documents; nothing was installed",
        )
    if staging is not None:
        staging.put(manifest.config.digest.hex, config_bytes)
        staging.put(OciDigest.of(manifest_bytes).hex, manifest_bytes)
    return Published(manifest, source, snapshot, refs, layers, history_layer, config_bytes)


def partial_snapshot(published: Snapshot, source: OciDigest, installed: list[MemoryType], created_at: str) -> Snapshot:
    """§6.8: the local snapshot of a partial install: the installed module references verbatim, parent =
    the published snapshot, its labels and trust root carried over."""
    return Snapshot(
        created_at=created_at,
        modules={str(t): published.modules[str(t)] for t in installed},
        parent=source,
        labels=published.labels,
        trust_root=published.trust_root,
    )


def installed_from(brain: Brain, head: Head | None) -> OciDigest | None:
    """The published snapshot an untouched partial install stands for (None if the head is not one).

    An untouched partial install is a head marked partial whose snapshot is the child of its origin's
    snapshot; a later local write makes the head a descendant of it, which then is ordinary local work.
    """
    if head is None or head.origin is None or not head.origin.partial:
        return None
    if head.snapshot == head.origin.snapshot:
        return head.snapshot  # written by an earlier release: the published snapshot itself was the head
    try:
        snapshot = brain.snapshot(head.snapshot)
    except BrainError:
        return None
    return head.origin.snapshot if snapshot is not None and snapshot.parent == head.origin.snapshot else None


def _partial_head_snapshot(
    brain: Brain, current: Head | None, published: Snapshot, source: OciDigest, chosen: list[MemoryType],
    staging: Staging,
) -> OciDigest:
    """The local snapshot to make the head after a partial install (the current one if it already is it)."""
    if current is not None and current.snapshot == source:
        return source  # the whole published snapshot already is the head: a subset of it adds nothing
    if current is not None and installed_from(brain, current) == source:
        try:
            held = brain.snapshot(current.snapshot)
        except BrainError:
            held = None
        wanted = {str(t): published.modules[str(t)] for t in chosen}
        if held is not None and held.parent == source and dict(held.modules) == wanted:
            return current.snapshot
    document = partial_snapshot(published, source, chosen, utc_timestamp())
    data = document.to_bytes()
    digest = OciDigest.of(data)
    staging.put(digest.hex, data)
    return digest


def next_head(current: Head | None, installed: OciDigest, origin: Origin) -> Head | None:
    """The head to write after installing `installed`, or None when `head.json` should stay as it is.

    Installing the snapshot that already is the head leaves the head alone (its retained list and origin
    stay): only a head recorded as a partial pull becomes whole when this install left nothing out.
    """
    if current is None:
        return Head.first(installed, origin=origin)
    if current.snapshot != installed:
        return current.advance(installed, origin=origin)
    if current.origin is not None and current.origin.partial and not origin.partial:
        return current.model_copy(update={"origin": origin})
    return None


def _vector_layers(
    manifest: Manifest, memory_type: MemoryType, ref: ModuleRef, composition: Composition, fetch: BlobSource,
    staging: Staging,
) -> None:
    """Stage the module's vector index after checking it as hostile input: the one layer the reference's
    `index_digest` names, its annotations, and a payload that decodes against the reference's model and the
    module's members (`brain.vectors.decode`)."""
    layers = [layer for layer in manifest.layers
              if layer.mediaType == mt.VECTOR_INDEX_LAYER and layer.annotation(mt.MEMORY_TYPE) == str(memory_type)]
    if ref.index_digest is None:
        if layers:
            raise UntrustedArtifactError(f"a {memory_type} vector-index layer, but the module reference names none")
        return
    if len(layers) != 1 or layers[0].digest != ref.index_digest:
        raise UntrustedArtifactError(
            f"the {memory_type} module reference names vector index {ref.index_digest}, the manifest carries "
            f"{', '.join(str(layer.digest) for layer in layers) or 'none'}")
    layer = layers[0]
    if layer.annotation(mt.EMBEDDING_MODEL) != ref.embedding_model or layer.annotation(mt.INDEX_KIND) != "vector":
        raise UntrustedArtifactError(f"{memory_type} vector-index layer {layer.digest}: annotations disagree with the "
                                     f"module reference (model {ref.embedding_model!r})")
    data = read_blob(fetch, layer, limit=4 << 30)
    tombstoned = set(ref.tombstones or ())
    decode_vectors(data, model=ref.embedding_model, memory_type=str(memory_type),
                   members=[i.hex for i in composition.block_ids if i not in tombstoned])
    staging.put(layer.digest.hex, data)


def _check_removals(blobs: BlobStore, digest: OciDigest, snapshot: Snapshot) -> None:
    parents = snapshot.parent_digests
    if not parents:
        return
    parent = None
    if blobs.has(parents[0]):
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

