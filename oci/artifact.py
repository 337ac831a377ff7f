"""Verify a packed artifact stored in a brain (§8 step 8): manifest, config, every layer and its members.

Each finding is a `brain.verify.Problem` with a kebab-case code (docs/problem-codes-oci.md explains each).
Module layers are unpacked with the hostile-safe reader and compared with what §6.3 requires, computed
from the layer's own composition and envelopes, so an artifact can be checked without its brain's blocks.
The history layer's members are compared with the list §6.4 rebuilds from the brain's stored snapshots.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, NotFoundError
from brain.identity import OciDigest, canonicalize, is_canonical, is_digest_string
from brain.snapshot import Projection, Snapshot
from brain.verify.report import Problem
from oci import media_types as mt
from oci.manifest import Descriptor, Manifest
from oci.members import BLOBS_PREFIX, COMPOSITION_MEMBER, content_hexes, scan_history, tombstones_of
from oci.pack import module_annotations
from oci.tarball_reader import LayerReader

# Envelopes are small; anything bigger is content and is only hashed.
_ENVELOPE_LIMIT = 1 << 20


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

    def blob(self, descriptor: Descriptor, what: str, prefix: str) -> bool:
        """Whether the described blob is stored with the right size and digest (reporting why not)."""
        blobs = self.brain.blobs
        if not blobs.has(descriptor.digest):
            self.add(f"{prefix}-missing", f"{what} {descriptor.digest} is not stored", block=descriptor.digest)
            return False
        size = blobs.size(descriptor.digest)
        if size != descriptor.size:
            self.add(f"{prefix}-size-mismatch", f"{what} is {size} bytes, the manifest says {descriptor.size}", block=descriptor.digest)
            return False
        if not blobs.verify_file(descriptor.digest):
            self.add(f"{prefix}-digest-mismatch", f"{what} does not hash to {descriptor.digest}", block=descriptor.digest)
            return False
        return True


def _config_modules(check: _Check, manifest: Manifest) -> Mapping[str, ModuleRef] | None:
    config = manifest.config
    if not check.blob(config, "config", "config"):
        return None
    data = check.brain.blobs.get(config.digest)
    source = manifest.source_snapshot
    try:
        if config.mediaType == mt.SNAPSHOT_CONFIG:
            snapshot = Snapshot.decode(data, config.digest)
            if source != config.digest:
                check.add("annotation-mismatch", f"source-snapshot {source} differs from the snapshot config {config.digest}")
            trust = getattr(snapshot, "trust_root", None) is not None
            if manifest.annotations.get(mt.PROTOCOL_VERSION) != ("2" if trust else "1"):
                check.add("annotation-mismatch", "protocol-version does not match the snapshot's trust root")
            return snapshot.modules
        if config.mediaType == mt.PROJECTION_CONFIG:
            projection = Projection.decode(data)
            if source != projection.source:
                check.add("annotation-mismatch", f"source-snapshot {source} differs from the projection's source {projection.source}")
            return projection.modules
    except BrainError as e:
        check.add("config-invalid", f"config {config.digest} does not decode: {e.message}", block=config.digest)
        return None
    check.add("config-invalid", f"config media type {config.mediaType!r} is neither a snapshot nor a projection")
    return None


def _check_module_layer(check: _Check, layer: Descriptor, memory_type: MemoryType, ref: ModuleRef) -> tuple[int, ...] | None:
    """Unpack one module layer and compare its members with §6.3; its blocks' schema versions, None if unreadable."""
    names: list[str] = []
    envelopes: dict[str, bytes] = {}
    composition_bytes: bytes | None = None
    blobs = check.brain.blobs
    what = f"{memory_type} layer {layer.digest}"
    try:
        with blobs.open(layer.digest) as stream:
            for entry, chunks in LayerReader(stream, compressed_size=layer.size, what=what).members():
                names.append(entry.name)
                hasher = hashlib.sha256()
                kept = bytearray()
                for chunk in chunks:
                    hasher.update(chunk)
                    if entry.size <= _ENVELOPE_LIMIT:
                        kept += chunk
                if entry.name == COMPOSITION_MEMBER:
                    composition_bytes = bytes(kept)
                elif entry.name.startswith(BLOBS_PREFIX):
                    if hasher.hexdigest() != entry.name[len(BLOBS_PREFIX) :]:
                        check.add("layer-member-corrupt", f"{entry.name} does not hash to its name", module=memory_type, block=layer.digest)
                    elif entry.size <= _ENVELOPE_LIMIT:
                        envelopes[entry.name[len(BLOBS_PREFIX) :]] = bytes(kept)
    except BrainError as e:
        check.add("layer-unreadable", e.message, module=memory_type, block=layer.digest)
        return None
    if composition_bytes is None:
        check.add("layer-member-missing", f"{what} has no composition.json", module=memory_type, block=layer.digest)
        return None
    if OciDigest.of(composition_bytes) != ref.composition:
        check.add("layer-composition-mismatch", f"{what}: composition.json is not composition {ref.composition}", module=memory_type)
        return None
    composition = Composition.decode(composition_bytes, ref.composition)
    tombstones = tombstones_of(ref)
    required: set[str] = set()
    versions: set[int] = set()
    for block_id in composition.block_ids:
        if block_id in tombstones:
            continue
        required.add(block_id.hex)
        data = envelopes.get(block_id.hex)
        if data is None and blobs.has(block_id):
            data = blobs.get(block_id)
        if data is None:
            continue  # reported below as a missing member
        envelope = json.loads(data)
        versions.add(int(envelope["schema_version"]))
        required.update(content_hexes(str(envelope.get("memory_type")), envelope.get("payload")))
    expected = [COMPOSITION_MEMBER, *(BLOBS_PREFIX + h for h in sorted(required))]
    for name in sorted(set(expected) - set(names)):
        check.add("layer-member-missing", f"{what} lacks {name}", module=memory_type, block=layer.digest)
    for name in sorted(set(names) - set(expected)):
        check.add("layer-member-unexpected", f"{what} carries {name}, which §6.3 does not call for", module=memory_type, block=layer.digest)
    if set(names) == set(expected) and names != expected:
        check.add("layer-member-order", f"{what}: members are not in §6.3 order", module=memory_type, block=layer.digest)
    return tuple(sorted(versions))


def _check_history(check: _Check, layer: Descriptor, source: OciDigest | None) -> None:
    what = f"history layer {layer.digest}"
    names: list[str] = []
    try:
        with check.brain.blobs.open(layer.digest) as stream:
            for entry, chunks in LayerReader(stream, compressed_size=layer.size, what=what).members():
                names.append(entry.name)
                hasher = hashlib.sha256()
                for chunk in chunks:
                    hasher.update(chunk)
                if hasher.hexdigest() != entry.name.rsplit("/", 1)[-1]:
                    check.add("layer-member-corrupt", f"{what}: {entry.name} does not hash to its name", block=layer.digest)
    except BrainError as e:
        check.add("layer-unreadable", e.message, block=layer.digest)
        return
    count = sum(1 for n in names if n.startswith("snapshots/"))
    if layer.annotation(mt.SNAPSHOT_COUNT) != str(count):
        check.add("history-count-mismatch", f"snapshot-count says {layer.annotation(mt.SNAPSHOT_COUNT)}, the layer has {count}", block=layer.digest)
    if source is None or not check.brain.blobs.has(source):
        return
    expected = scan_history(check.brain.blobs, source).member_names()
    for name in sorted(set(expected) - set(names)):
        check.add("history-member-missing", f"{what} lacks {name}", block=layer.digest)
    for name in sorted(set(names) - set(expected)):
        check.add("history-member-unexpected", f"{what} carries {name}, not reachable from {source}", block=layer.digest)


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
    refs = _config_modules(check, manifest)
    module_layers: dict[MemoryType, Descriptor] = {}
    order: list[MemoryType] = []
    history = [layer for layer in manifest.layers if layer.mediaType == mt.HISTORY_LAYER]
    for layer in manifest.layers:
        memory_type = mt.module_of_layer(layer.mediaType)
        if memory_type is not None:
            module_layers[memory_type] = layer
            order.append(memory_type)
        elif layer.mediaType not in (mt.HISTORY_LAYER, mt.VECTOR_INDEX_LAYER):
            check.add("layer-unexpected", f"layer {layer.digest} has unknown media type {layer.mediaType!r}", block=layer.digest)
    if order != sorted(order, key=list(MemoryType).index) or len(history) != 1 or manifest.layers[-1].mediaType != mt.HISTORY_LAYER:
        check.add("layer-order", "layers are not one per module in module order followed by exactly one history layer")
    versions: dict[str, list[int]] = {}
    complete = refs is not None
    installed = {} if refs is None else {MemoryType(k): v for k, v in refs.items()}
    for memory_type in sorted(set(installed) | set(module_layers), key=list(MemoryType).index):
        layer = module_layers.get(memory_type)
        ref = installed.get(memory_type)
        if layer is None:
            check.add("module-layer-missing", f"the config names {memory_type} but no layer carries it", module=memory_type)
            continue
        if ref is None:
            if refs is not None:
                check.add("module-layer-unexpected", f"a {memory_type} layer is not named by the config", module=memory_type)
            continue
        for key, value in module_annotations(ref).items():
            if layer.annotation(key) != value:
                check.add("annotation-mismatch", f"{key} is {layer.annotation(key)!r}, the config says {value!r}", module=memory_type, block=layer.digest)
        found = _check_module_layer(check, layer, memory_type, ref) if check.blob(layer, f"{memory_type} layer", "layer") else None
        if found is None:
            complete = False  # schema versions cannot be recomputed from an unreadable layer
        elif found:
            versions[str(memory_type)] = list(found)
    if complete and manifest.annotations.get(mt.SCHEMA_VERSIONS) != canonicalize(versions).decode():
        check.add("annotation-mismatch", f"schema-versions is {manifest.annotations.get(mt.SCHEMA_VERSIONS)!r}, the layers hold {canonicalize(versions).decode()}")
    for layer in manifest.layers:
        if layer.mediaType == mt.VECTOR_INDEX_LAYER:
            check.blob(layer, "vector-index layer", "layer")
    if history:
        if check.blob(history[-1], "history layer", "layer"):
            _check_history(check, history[-1], manifest.source_snapshot)
    else:
        check.add("history-layer-missing", "the manifest has no history layer")
    return check.problems
