"""After a redaction: the packed artifacts in the local layout (`index.json`) that still hold destroyed bytes.

A module layer holds a block's envelope (and its content blobs) unless its module reference tombstones it
(§6.3), so a manifest holds destroyed bytes when a module it packs has, among its members, a block that
the head tombstones but that manifest's config does not. Such manifests leave `index.json` (their tags
are reported, to re-pack), and their module layers holding the bytes and the manifest blob are deleted.
Layers and manifests of other entries are left alone; `brain prune` collects what nothing retains.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.lifecycle.destroy import destroy
from brain.snapshot import Projection, Snapshot
from brain.store.layout import Descriptor
from oci import media_types as mt
from oci.auth import resolve_credentials
from oci.layer_cache import LayerCache
from oci.manifest import Manifest
from oci.reference import Reference
from oci.transport import RegistryClient


@dataclass
class Purged:
    """Index entries removed because their artifact held destroyed bytes."""

    tags: list[str] = field(default_factory=list)
    manifests: list[OciDigest] = field(default_factory=list)
    blobs: int = 0


def _config_modules(brain: Brain, manifest: Manifest) -> dict[MemoryType, ModuleRef]:
    data = brain.blobs.get(manifest.config.digest)
    if manifest.is_projection:
        modules = Projection.decode(data, manifest.config.digest).modules
    else:
        modules = Snapshot.decode(data, manifest.config.digest).modules
    return {MemoryType(k): v for k, v in modules.items()}


def holding_layers(brain: Brain, manifest: Manifest, redacted: frozenset[BlockId]) -> list[OciDigest]:
    """The module layers of `manifest` that pack a block in `redacted` without tombstoning it."""
    refs = _config_modules(brain, manifest)
    holding = []
    for layer in manifest.layers:
        name = layer.annotation(mt.MEMORY_TYPE)
        ref = refs.get(MemoryType(name)) if name in {m.value for m in MemoryType} else None
        if ref is None:
            continue
        members = set(brain.composition(ref).block_ids) & redacted
        if members - set(ref.tombstones or ()):
            holding.append(layer.digest)
    return holding


def purge_cached_layers(brain: Brain, redacted: frozenset[BlockId]) -> int:
    """Delete module layers the pack cache (`boltzmann/layers.json`) built from a composition holding a
    `redacted` block it did not tombstone (they may be untagged); the cache forgets them on next use."""
    cache = LayerCache(brain.path, brain.blobs)
    deleted = 0
    for key, entry in list(cache.entries().items()):
        kind, _, rest = key.partition(":")
        composition_text, _, tombstones_text = rest.partition(":")
        if kind != "module":
            continue
        try:
            composition = Composition.decode(brain.blobs.get(OciDigest.parse(composition_text)))
        except BrainError:
            continue
        tombstoned = {t for t in tombstones_text.split(",") if t}
        if any(str(b) not in tombstoned for b in set(composition.block_ids) & redacted):
            deleted += brain.blobs.delete(entry.digest)
    return deleted


def purge_artifacts(brain: Brain, redacted: frozenset[BlockId]) -> Purged:
    """Remove from the layout every artifact that holds bytes of `redacted` blocks (see the module docstring)."""
    purged = Purged()
    if not redacted:
        return purged
    index = brain.layout.index()
    kept: list[Descriptor] = []
    doomed: set[OciDigest] = set()
    for descriptor in index.manifests:
        try:
            manifest = Manifest.decode(brain.blobs.get(descriptor.digest), what=f"manifest {descriptor.digest}")
            layers = holding_layers(brain, manifest, redacted)
        except BrainError:
            kept.append(descriptor)  # unreadable here: `brain verify` reports it; never guess and delete
            continue
        if not layers:
            kept.append(descriptor)
            continue
        if descriptor.tag is not None:
            purged.tags.append(descriptor.tag)
        purged.manifests.append(descriptor.digest)
        doomed.update([descriptor.digest, *layers])
    purged.blobs += purge_cached_layers(brain, redacted)
    if not purged.manifests:
        return purged
    brain.layout.write_index(index.model_copy(update={"manifests": tuple(kept)}))
    still = {d.digest for d in kept}
    for digest in doomed - still:
        purged.blobs += brain.blobs.delete(digest)
    return purged


def honour_tombstones(brain: Brain) -> Purged:
    """After a pull moved the head to a verified snapshot: destroy the local bytes of the members it
    tombstones and of every digest `tombstones.json` lists, and drop the artifacts that hold them. Never
    called before the new head is verified and current, so a hostile layer cannot delete what the head needs."""
    head = brain.snapshot_digest()
    if head is None:
        return Purged()
    redacted = frozenset().union(*(m.tombstones for m in brain.modules(head).values()))
    if not redacted and not brain.blobs.destroyed():
        return Purged()
    done = destroy(brain, head, "redacted in the pulled snapshot", purge=False)
    purged = purge_artifacts(brain, redacted)
    purged.blobs += done.blobs
    return purged


def remote_tags_holding(brain: Brain, reference: Reference, client: RegistryClient | None = None) -> list[str]:
    """Tags of `reference`'s repository whose artifact (as far as the local store can tell from its config and
    compositions) still packs bytes this brain redacted. A registry is not ours to erase: we only say so."""
    head = brain.snapshot_digest()
    if head is None:
        return []
    redacted = frozenset().union(*(m.tombstones for m in brain.modules(head).values()))
    if not redacted:
        return []
    client = client or RegistryClient(reference, resolve_credentials(reference.registry))
    base = f"{reference.base_url}/v2/{reference.repository}"
    try:
        listed = client.request("GET", f"{base}/tags/list").json().get("tags") or []
    except (BrainError, ValueError, AttributeError):
        return []
    holding = []
    for tag in sorted(t for t in listed if isinstance(t, str)):
        try:
            fetched = client.get_manifest(tag)
            manifest = Manifest.decode(fetched.data, what=f"manifest of tag {tag}")
            if brain.blobs.has(manifest.config.digest) and holding_layers(brain, manifest, redacted):
                holding.append(tag)
        except BrainError:
            continue
    return holding
