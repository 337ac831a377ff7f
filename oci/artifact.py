"""Verify a packed artifact stored in a brain (§8 step 8): manifest, config, every layer and its members.

Each finding is a `brain.verify.Problem` with a kebab-case code (the README's "Packed artifacts" table explains each).
Module layers are unpacked with the hostile-safe reader and compared with what §6.3 requires, computed
from the layer's own composition and envelopes, so an artifact can be checked without its brain's blocks.
The history layer's members are compared with the list §6.4 rebuilds from the brain's stored snapshots.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping

from brain.blocks.memory_type import MODULE_ORDER, MemoryType
from brain.brain import Brain
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, NotFoundError
from brain.identity import OciDigest, is_canonical, is_digest_string
from brain.snapshot import Projection, Snapshot
from brain.verify.codes import Severity
from brain.verify.report import Problem
from oci import media_types as mt
from oci.annotations import schema_versions_lie, snapshot_count_lie, source_snapshot_lie, trust_root_lies
from oci.manifest import Descriptor, Manifest
from oci.members import BLOBS_PREFIX, COMPOSITION_MEMBER, composition_size, content_hexes, scan_history, tombstones_of
from oci.pack import module_annotations
from oci.tarball_reader import MAX_TRUSTED_BOUND, LayerReader, TarEntry, inflate_bound, read_all
from oci.unpack import MAX_DOCUMENT

# Members up to this size are kept while reading (envelopes usually are); bigger envelopes are read again.
_ENVELOPE_LIMIT = 1 << 20
_TAR_BLOCK = 512


def resolve_manifest(brain: Brain, tag_or_digest: str) -> OciDigest:
    """The manifest digest a tag (or a `sha256:` digest) names in this brain."""
    if is_digest_string(tag_or_digest):
        return OciDigest.parse(tag_or_digest)
    return OciDigest.parse(str(brain.layout.resolve_tag(tag_or_digest).digest))


class _Check:
    """Accumulates problems for one artifact."""

    def __init__(self, brain: Brain) -> None:
        self.brain = brain
        self.problems: list[Problem] = []

    def add(self, code: str, detail: str, *, module: object = None, block: object = None) -> None:
        self.problems.append(Problem.of(code, detail, module=module, block=block))

    def warn_if_beyond_reference_bound(self, layer: Descriptor, inflated: int, module: object = None) -> None:
        """Warn when a layer inflates past the bound reference consumers enforce (§6.8): they would refuse it."""
        bound = inflate_bound(layer.size)
        if inflated > bound:
            detail = (
                f"layer {layer.digest} inflates to about {inflated} bytes, past the {bound}-byte bound consumers "
                "following the reference enforce; they will refuse it (ours accept it with --max-inflate)"
            )
            problem = Problem.of("layer-inflate-ratio", detail, module=module, block=layer.digest)
            self.problems.append(problem.model_copy(update={"severity": Severity.WARNING}))

    def blob(self, descriptor: Descriptor, what: str, prefix: str) -> bool:
        """Whether the described blob is stored with the right size and digest (reporting why not)."""
        blobs, digest = self.brain.blobs, descriptor.digest
        if not blobs.has(digest):
            self.add(f"{prefix}-missing", f"{what} {digest} is not stored", block=digest)
            return False
        size = blobs.size(digest)
        if size != descriptor.size:
            detail = f"{what} is {size} bytes, the manifest says {descriptor.size}"
            self.add(f"{prefix}-size-mismatch", detail, block=digest)
            return False
        if not blobs.verify_file(digest):
            self.add(f"{prefix}-digest-mismatch", f"{what} does not hash to {digest}", block=digest)
            return False
        return True


def _config_modules(check: _Check, manifest: Manifest) -> Mapping[str, ModuleRef] | None:
    """The module references the config publishes, after checking it against the manifest annotations."""
    config = manifest.config
    if not check.blob(config, "config", "config"):
        return None
    data = check.brain.blobs.get(config.digest)
    try:
        if config.mediaType == mt.SNAPSHOT_CONFIG:
            snapshot = Snapshot.decode(data, config.digest)
            for lie in (source_snapshot_lie(manifest, config.digest), *trust_root_lies(manifest, snapshot.trust_root)):
                if lie is not None:
                    check.add("annotation-mismatch", lie)
            return snapshot.modules
        if config.mediaType == mt.PROJECTION_CONFIG:
            projection = Projection.decode(data)
            lie = source_snapshot_lie(manifest, projection.source)
            if lie is not None:
                check.add("annotation-mismatch", lie)
            return projection.modules
    except BrainError as e:
        check.add("config-invalid", f"config {config.digest} does not decode: {e.message}", block=config.digest)
        return None
    check.add("config-invalid", f"config media type {config.mediaType!r} is neither a snapshot nor a projection")
    return None


def _members(
    check: _Check, layer: Descriptor, what: str, module: object = None
) -> Iterator[tuple[TarEntry, Iterator[bytes]]]:
    """A stored layer's members, read with the trusted bound (the bytes are already local).

    Once read through, warns if the layer inflates past the bound reference consumers enforce (§6.8).
    """
    inflated = 0
    with check.brain.blobs.open(layer.digest) as stream:
        reader = LayerReader(stream, compressed_size=layer.size, what=what, max_inflate=MAX_TRUSTED_BOUND)
        for entry, chunks in reader.members():
            inflated += _TAR_BLOCK + -(-entry.size // _TAR_BLOCK) * _TAR_BLOCK
            yield entry, chunks
    check.warn_if_beyond_reference_bound(layer, inflated, module=module)


def _read_module_layer(
    check: _Check, layer: Descriptor, memory_type: MemoryType, ref: ModuleRef
) -> tuple[list[str], dict[str, bytes], bytes | None] | None:
    """Member names, small member bytes and composition bytes of a module layer; None if it cannot be read.

    Each member is bounded by what it is: `composition.json` by the size its block count implies (it can
    be many MiB), other members are kept in memory only up to the envelope limit and hashed beyond it.
    """
    names: list[str] = []
    small: dict[str, bytes] = {}
    composition: bytes | None = None
    what = f"{memory_type} layer {layer.digest}"
    composition_limit = composition_size(ref)
    try:
        for entry, chunks in _members(check, layer, what, module=memory_type):
            names.append(entry.name)
            limit = composition_limit if entry.name == COMPOSITION_MEMBER else _ENVELOPE_LIMIT
            hasher, kept = hashlib.sha256(), bytearray()
            for chunk in chunks:
                hasher.update(chunk)
                if entry.size <= limit:
                    kept += chunk
            hex_digest = entry.name[len(BLOBS_PREFIX) :]
            if entry.name == COMPOSITION_MEMBER:
                composition = bytes(kept) if entry.size <= limit else None
                if composition is None:
                    detail = f"{what}: composition.json is {entry.size} bytes, {ref.block_count} members take {limit}"
                    check.add("layer-composition-mismatch", detail, module=memory_type, block=layer.digest)
                    return None
            elif entry.name.startswith(BLOBS_PREFIX) and hasher.hexdigest() != hex_digest:
                detail = f"{what}: {entry.name} does not hash to its name"
                check.add("layer-member-corrupt", detail, module=memory_type, block=layer.digest)
            elif entry.name.startswith(BLOBS_PREFIX) and entry.size <= _ENVELOPE_LIMIT:
                small[hex_digest] = bytes(kept)
    except BrainError as e:
        check.add("layer-unreadable", e.message, module=memory_type, block=layer.digest)
        return None
    return names, small, composition


def _large_members(check: _Check, layer: Descriptor, wanted: set[str]) -> dict[str, bytes]:
    """A second pass over a stored layer for block envelopes too big to keep on the first one."""
    found: dict[str, bytes] = {}
    try:
        for entry, chunks in _members(check, layer, f"layer {layer.digest}"):
            hex_digest = entry.name[len(BLOBS_PREFIX) :]
            if entry.name.startswith(BLOBS_PREFIX) and hex_digest in wanted:
                data = read_all(chunks, MAX_DOCUMENT, f"layer {layer.digest}")
                if hashlib.sha256(data).hexdigest() == hex_digest:
                    found[hex_digest] = data
    except BrainError:
        return found  # already reported by the first pass
    return found


def _check_module_layer(
    check: _Check, layer: Descriptor, memory_type: MemoryType, ref: ModuleRef
) -> tuple[int, ...] | None:
    """Compare a module layer's members with §6.3; its blocks' schema versions, or None if not checkable."""
    read = _read_module_layer(check, layer, memory_type, ref)
    if read is None:
        return None
    names, small, composition_bytes = read
    what = f"{memory_type} layer {layer.digest}"

    def report(code: str, detail: str) -> None:
        check.add(code, f"{what}: {detail}", module=memory_type, block=layer.digest)

    if composition_bytes is None:
        report("layer-member-missing", "no composition.json")
        return None
    try:
        composition = Composition.decode(composition_bytes, ref.composition)
    except BrainError:
        report("layer-composition-mismatch", f"composition.json is not composition {ref.composition}")
        return None
    required: set[str] = set()
    versions: set[int] = set()
    tombstones = tombstones_of(ref)
    present = set(names)
    large = {
        b.hex for b in composition.block_ids
        if b not in tombstones and b.hex not in small and BLOBS_PREFIX + b.hex in present
        and not check.brain.blobs.has(b)
    }
    if large:
        small = {**small, **_large_members(check, layer, large)}
    for block_id in (b for b in composition.block_ids if b not in tombstones):
        required.add(block_id.hex)
        data = small.get(block_id.hex)
        if data is None and check.brain.blobs.has(block_id):
            data = check.brain.blobs.get(block_id)
        if data is None:
            continue  # reported below as a missing member
        try:
            envelope = json.loads(data)
            versions.add(int(envelope["schema_version"]))
            required.update(content_hexes(str(envelope.get("memory_type")), envelope.get("payload")))
        except (ValueError, KeyError, TypeError):
            report("layer-member-invalid", f"block {block_id} is not a block envelope")
    expected = [COMPOSITION_MEMBER, *(BLOBS_PREFIX + h for h in sorted(required))]
    for name in sorted(set(expected) - set(names)):
        report("layer-member-missing", f"lacks {name}")
    for name in sorted(set(names) - set(expected)):
        report("layer-member-unexpected", f"carries {name}, which §6.3 does not call for")
    if set(names) == set(expected) and names != expected:
        report("layer-member-order", "members are not in §6.3 order")
    return tuple(sorted(versions))


def _check_history(check: _Check, layer: Descriptor, source: OciDigest | None) -> None:
    """Compare the history layer's members and snapshot-count with §6.4."""
    what = f"history layer {layer.digest}"
    names: list[str] = []
    try:
        for entry, chunks in _members(check, layer, what):
            names.append(entry.name)
            hasher = hashlib.sha256()
            for chunk in chunks:
                hasher.update(chunk)
            if hasher.hexdigest() != entry.name.rsplit("/", 1)[-1]:
                detail = f"{what}: {entry.name} does not hash to its name"
                check.add("layer-member-corrupt", detail, block=layer.digest)
    except BrainError as e:
        check.add("layer-unreadable", e.message, block=layer.digest)
        return
    lie = snapshot_count_lie(layer, sum(1 for n in names if n.startswith("snapshots/")))
    if lie is not None:
        check.add("history-count-mismatch", lie, block=layer.digest)
    if source is None or not check.brain.blobs.has(source):
        return
    expected = scan_history(check.brain.blobs, source).member_names()
    for name in sorted(set(expected) - set(names)):
        check.add("history-member-missing", f"{what} lacks {name}", block=layer.digest)
    for name in sorted(set(names) - set(expected)):
        detail = f"{what} carries {name}, not reachable from {source}"
        check.add("history-member-unexpected", detail, block=layer.digest)


def _module_layers(check: _Check, manifest: Manifest) -> dict[MemoryType, Descriptor]:
    """The module layers by memory type, reporting unknown media types and a wrong layer order."""
    layers: dict[MemoryType, Descriptor] = {}
    order: list[MemoryType] = []
    for layer in manifest.layers:
        memory_type = mt.module_of_layer(layer.mediaType)
        if memory_type is not None:
            layers[memory_type] = layer
            order.append(memory_type)
        elif layer.mediaType not in (mt.HISTORY_LAYER, mt.VECTOR_INDEX_LAYER):
            detail = f"layer {layer.digest} has unknown media type {layer.mediaType!r}"
            check.add("layer-unexpected", detail, block=layer.digest)
    histories = [layer for layer in manifest.layers if layer.mediaType == mt.HISTORY_LAYER]
    in_order = order == sorted(order, key=MODULE_ORDER.index) and len(order) == len(set(order))
    if not in_order or len(histories) != 1 or manifest.layers[-1].mediaType != mt.HISTORY_LAYER:
        check.add("layer-order", "layers are not one per module in module order followed by exactly one history layer")
    return layers


def _check_modules(check: _Check, manifest: Manifest, refs: Mapping[str, ModuleRef] | None) -> None:
    """Each module layer against its module reference, then the schema-versions annotation."""
    layers = _module_layers(check, manifest)
    installed = {} if refs is None else {MemoryType(k): v for k, v in refs.items()}
    versions: dict[str, list[int]] = {}
    complete = refs is not None
    for memory_type in sorted(set(installed) | set(layers), key=MODULE_ORDER.index):
        layer, ref = layers.get(memory_type), installed.get(memory_type)
        if layer is None:
            detail = f"the config names {memory_type}; no layer carries it"
            check.add("module-layer-missing", detail, module=memory_type)
            continue
        if ref is None:
            if refs is not None:
                detail = f"no config module for the {memory_type} layer"
                check.add("module-layer-unexpected", detail, module=memory_type)
            continue
        for key, value in module_annotations(ref).items():
            if layer.annotation(key) != value:
                detail = f"{key} is {layer.annotation(key)!r}, the config says {value!r}"
                check.add("annotation-mismatch", detail, module=memory_type, block=layer.digest)
        readable = check.blob(layer, f"{memory_type} layer", "layer")
        found = _check_module_layer(check, layer, memory_type, ref) if readable else None
        if found is None:
            complete = False  # schema versions cannot be recomputed from an unreadable layer
        elif found:
            versions[str(memory_type)] = list(found)
    lie = schema_versions_lie(manifest, versions) if complete else None
    if lie is not None:
        check.add("annotation-mismatch", lie)


def verify_artifact(brain: Brain, tag_or_digest: str) -> list[Problem]:
    """Every problem found in the artifact a tag or manifest digest names; [] when it is sound."""
    digest = resolve_manifest(brain, tag_or_digest)
    check = _Check(brain)
    try:
        data = brain.blobs.get(digest)
    except NotFoundError:
        return [Problem.of("manifest-missing", f"manifest {digest} is not stored", block=digest)]
    except BrainError as e:
        return [Problem.of("manifest-corrupt", e.message, block=digest)]
    if not is_canonical(data):
        check.add("manifest-not-canonical", f"manifest {digest} is not JCS bytes", block=digest)
    try:
        manifest = Manifest.decode(data, what=f"manifest {digest}")
    except BrainError as e:
        check.add("manifest-invalid", e.message, block=digest)
        return check.problems
    _check_modules(check, manifest, _config_modules(check, manifest))
    for layer in manifest.layers:
        if layer.mediaType == mt.VECTOR_INDEX_LAYER:
            check.blob(layer, "vector-index layer", "layer")
    history = [layer for layer in manifest.layers if layer.mediaType == mt.HISTORY_LAYER]
    if not history:
        check.add("history-layer-missing", "the manifest has no history layer")
    elif check.blob(history[-1], "history layer", "layer"):
        _check_history(check, history[-1], manifest.source_snapshot)
    return check.problems
