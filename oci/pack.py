"""`brain pack`: materialize the current snapshot as the §6 OCI artifact inside the brain's own layout.

Config = the snapshot blob verbatim (or a §5.4 projection for a subset, §6.7), one layer per module in
`MODULE_ORDER` (a vector-index layer right after a module that carries one), the history layer last.
An unchanged module reuses the layer blob built before (see `oci.layer_cache`), so repacking an unchanged
brain writes no new blob. Layers and the manifest are written first, made durable, and only then is
`index.json` updated — all under the writer lock.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.brain import Brain
from brain.composition import ModuleRef
from brain.errors import NotFoundError, RefusedError
from brain.frozen import FrozenModel
from brain.identity import OciDigest, canonicalize
from brain.snapshot import Projection, Snapshot
from brain.store.redaction import refuse_if_unfinished
from brain.store.layout import Descriptor as IndexEntry
from brain.store.layout import validate_tag
from brain.store.lock import WriterLock
from oci import media_types as mt
from oci.layer_cache import CachedLayer, LayerCache, history_key, module_key
from oci.layer_size import TarSize, bound_warning, inflated_size
from oci.manifest import Descriptor, Manifest
from oci.members import scan_history, scan_module, tombstones_of
from oci.selection import select_modules
from oci.tarball import LayerFile, write_layer


class PackedLayer(FrozenModel):
    """One layer of a packed artifact, and whether its blob was reused from an earlier pack."""

    media_type: str
    digest: OciDigest
    size: int
    memory_type: MemoryType | None = None
    reused: bool
    inflated_size: int | None = None


class PackResult(FrozenModel):
    """What `pack` produced: the manifest digest, the tag it now carries, and its layers in order."""

    digest: OciDigest
    size: int
    tag: str | None
    snapshot: OciDigest
    config: OciDigest
    modules: list[MemoryType]
    implied: list[MemoryType] = []
    layers: list[PackedLayer]
    warnings: list[str] = []


def module_annotations(ref: ModuleRef) -> dict[str, str]:
    """The §6.2 annotations of a module layer, from its module reference."""
    annotations = {
        mt.MEMORY_TYPE: str(ref.memory_type),
        mt.MERKLE_ROOT: str(ref.root),
        mt.MERKLE_LAYOUT: ref.layout,
        mt.BLOCK_COUNT: str(ref.block_count),
    }
    if ref.embedding_model:
        annotations[mt.EMBEDDING_MODEL] = ref.embedding_model
    return annotations


def _build_module_layer(
    brain: Brain, memory_type: MemoryType, ref: ModuleRef
) -> tuple[LayerFile, tuple[int, ...], int]:
    contents = scan_module(brain.blobs, memory_type, ref)
    tar = TarSize()
    written = write_layer(tar.count(contents.members(brain.blobs)), brain.blobs.directory)
    return written, contents.schema_versions, tar.total


def _cached_inflated_size(brain: Brain, cache: LayerCache, key: str, cached: CachedLayer) -> int:
    """The cached layer's uncompressed size, measured once for entries cached before it was recorded."""
    if cached.inflated_size is not None:
        return cached.inflated_size
    size = inflated_size(brain.blobs.path(cached.digest))
    cache.put(key, cached.model_copy(update={"inflated_size": size}))
    return size


def _module_layers(
    brain: Brain, cache: LayerCache, chosen: list[MemoryType], installed: Mapping[MemoryType, ModuleRef]
) -> dict[MemoryType, tuple[PackedLayer, tuple[int, ...]]]:
    """Each chosen module's layer: reused from the cache, or built (several at once: zlib runs without the GIL)."""
    done: dict[MemoryType, tuple[PackedLayer, tuple[int, ...]]] = {}
    missing: list[MemoryType] = []
    for memory_type in chosen:
        key = module_key(installed[memory_type].composition, tombstones_of(installed[memory_type]))
        cached = cache.get(key)
        if cached is None:
            missing.append(memory_type)
            continue
        layer = PackedLayer(media_type=mt.module_layer(memory_type), digest=cached.digest, size=cached.size,
                            memory_type=memory_type, reused=True,
                            inflated_size=_cached_inflated_size(brain, cache, key, cached))
        done[memory_type] = (layer, cached.schema_versions)
    workers = max(1, min(len(missing), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {t: pool.submit(_build_module_layer, brain, t, installed[t]) for t in missing}
        for memory_type, future in futures.items():
            written, versions, inflated = future.result()
            ref = installed[memory_type]
            cache.put(module_key(ref.composition, tombstones_of(ref)),
                      CachedLayer(digest=written.digest, size=written.size, schema_versions=versions,
                                  inflated_size=inflated))
            layer = PackedLayer(media_type=mt.module_layer(memory_type), digest=written.digest, size=written.size,
                                memory_type=memory_type, reused=False, inflated_size=inflated)
            done[memory_type] = (layer, versions)
    return done


def _history_layer(brain: Brain, cache: LayerCache, snapshot_digest: OciDigest) -> tuple[PackedLayer, int]:
    history = scan_history(brain.blobs, snapshot_digest)
    key = history_key(history.member_names())
    cached = cache.get(key)
    if cached is not None:
        inflated = _cached_inflated_size(brain, cache, key, cached)
        layer = PackedLayer(media_type=mt.HISTORY_LAYER, digest=cached.digest, size=cached.size, reused=True,
                            inflated_size=inflated)
        return layer, len(history.snapshots)
    tar = TarSize()
    written = write_layer(tar.count(history.members(brain.blobs)), brain.blobs.directory)
    cache.put(key, CachedLayer(digest=written.digest, size=written.size, inflated_size=tar.total))
    layer = PackedLayer(media_type=mt.HISTORY_LAYER, digest=written.digest, size=written.size, reused=False,
                        inflated_size=tar.total)
    return layer, len(history.snapshots)


def _vector_layer(brain: Brain, memory_type: MemoryType, ref: ModuleRef) -> tuple[PackedLayer, Descriptor]:
    digest = ref.index_digest
    if digest is None:  # the caller packs a vector layer only for a module that has an index
        raise NotFoundError(f"the {memory_type} module has no vector index")
    if not brain.blobs.verify_file(digest):
        where = brain.blobs.path(digest)
        raise NotFoundError(f"the {memory_type} vector index {digest} is not stored intact at {where}")
    size = brain.blobs.size(digest)
    annotations = {mt.MEMORY_TYPE: str(memory_type), mt.INDEX_KIND: "vector", mt.EMBEDDING_MODEL: ref.embedding_model}
    layer = PackedLayer(
        media_type=mt.VECTOR_INDEX_LAYER, digest=digest, size=size, memory_type=memory_type, reused=True
    )
    return layer, Descriptor(mediaType=mt.VECTOR_INDEX_LAYER, digest=digest, size=size, annotations=annotations)


def build_manifest(
    brain: Brain, snapshot_digest: OciDigest, snapshot: Snapshot, wanted: set[MemoryType] | None
) -> tuple[Manifest, list[PackedLayer]]:
    """Write every layer (reusing cached ones) and the config blob; return the manifest and layer report."""
    installed: dict[MemoryType, ModuleRef] = {MemoryType(k): v for k, v in snapshot.modules.items()}
    chosen = list(select_modules(installed, wanted, publishing=True, holder="the brain").chosen)
    full = wanted is None or set(chosen) == set(installed)
    if full:
        size = brain.blobs.size(snapshot_digest)
        config = Descriptor(mediaType=mt.SNAPSHOT_CONFIG, digest=snapshot_digest, size=size)
    else:
        projection = Projection(modules={str(t): installed[t] for t in chosen}, source=snapshot_digest)
        data = projection.to_bytes()
        config = Descriptor(mediaType=mt.PROJECTION_CONFIG, digest=brain.blobs.put(data, sync=False), size=len(data))
    cache = LayerCache(brain.path, brain.blobs)
    layers: list[PackedLayer] = []
    descriptors: list[Descriptor] = []
    schema_versions: dict[str, list[int]] = {}
    built = _module_layers(brain, cache, chosen, installed)
    for memory_type in chosen:
        ref = installed[memory_type]
        layer, versions = built[memory_type]
        layers.append(layer)
        descriptors.append(Descriptor(mediaType=layer.media_type, digest=layer.digest, size=layer.size,
                                      annotations=module_annotations(ref)))
        if versions:
            schema_versions[str(memory_type)] = list(versions)
        if ref.index_digest is not None:
            vector, descriptor = _vector_layer(brain, memory_type, ref)
            layers.append(vector)
            descriptors.append(descriptor)
    history, count = _history_layer(brain, cache, snapshot_digest)
    layers.append(history)
    descriptors.append(Descriptor(mediaType=mt.HISTORY_LAYER, digest=history.digest, size=history.size,
                                  annotations={mt.SNAPSHOT_COUNT: str(count)}))
    cache.save()
    trust_root = snapshot.trust_root
    annotations = {
        mt.PROTOCOL_VERSION: "2" if trust_root is not None else "1",
        mt.SCHEMA_VERSIONS: canonicalize(schema_versions).decode("utf-8"),
        mt.SOURCE_SNAPSHOT: str(snapshot_digest),
    }
    if trust_root is not None:
        annotations[mt.TRUST_ROOT] = str(trust_root.digest)
    manifest = Manifest(schemaVersion=2, config=config, layers=tuple(descriptors), annotations=annotations)
    return manifest, layers


def pack(
    brain: Brain,
    tag: str | None = None,
    modules: set[MemoryType] | None = None,
    *,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> PackResult:
    """Pack the current snapshot (or a subset of its modules), store it, and tag it in `index.json`.

    `on_wait` is told who holds the writer lock while this waits for it (see `WriterLock`).
    """
    if tag is not None:
        validate_tag(tag)
    refuse_if_unfinished(brain.path, "pack")  # an interrupted redaction's bytes are never packed
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        snapshot_digest = brain.snapshot_digest()
        snapshot = brain.snapshot()
        if snapshot_digest is None or snapshot is None:
            message = f"the brain at {brain.path} is empty: there is nothing to pack"
            raise RefusedError(message, hint="ingest or add something first")
        manifest, layers = build_manifest(brain, snapshot_digest, snapshot, modules)
        data = manifest.to_bytes()
        digest = brain.blobs.put(data, sync=False)
        # Layers, config and manifest become durable before index.json can name them.
        brain.blobs.sync()
        record_manifest(brain, digest, len(data), tag)
        # §9.4: the signatures travel as untagged referrers of the brain manifest.
        from oci.signature_manifests import record_signatures

        record_signatures(brain, snapshot_digest, digest, len(data))
    chosen = [t for t in MODULE_ORDER if any(layer.memory_type is t for layer in layers)]
    implied = [] if modules is None else [t for t in chosen if t not in modules]
    return PackResult(
        digest=digest, size=len(data), tag=tag, snapshot=snapshot_digest, config=manifest.config.digest,
        modules=chosen, implied=implied, layers=layers, warnings=_inflate_warnings(layers),
    )


def record_manifest(brain: Brain, digest: OciDigest, size: int, tag: str | None) -> None:
    """Name a stored brain manifest in `index.json`: under `tag`, else as one untagged entry (callers hold the lock)."""
    entry = IndexEntry(mediaType=mt.MANIFEST, digest=digest, size=size, artifactType=mt.ARTIFACT)
    manifests = brain.layout.index().manifests
    if tag is not None:
        current = next((d for d in reversed(manifests) if d.tag == tag), None)
        if current is None or current.digest != digest:
            brain.layout.set_tag(tag, entry)
    elif not any(d.digest == digest and d.tag is None for d in manifests):
        brain.layout.add_manifest(entry)


def _inflate_warnings(layers: list[PackedLayer]) -> list[str]:
    """One warning per gzip layer that readers following the reference inflate bound would refuse."""
    warnings: list[str] = []
    for layer in layers:
        if layer.inflated_size is not None:
            name = str(layer.memory_type or "history")
            warning = bound_warning(name, layer.digest, layer.size, layer.inflated_size)
            if warning is not None:
                warnings.append(warning)
    return warnings
