"""After a redaction: the packed artifacts in the local layout (`index.json`) that still hold destroyed bytes.

A module layer holds a block's envelope (and its content blobs) unless its module reference tombstones it
(§6.3), so a manifest holds destroyed bytes when a module it packs has, among its members, a block that
the head tombstones but that manifest's config does not. Such manifests leave `index.json` (their tags
are reported, to re-pack), and their module layers holding the bytes and the manifest blob are deleted.
Layers and manifests of other entries are left alone; `brain prune` collects what nothing retains.

`purge_copies` adds every other gzip layer in the blob store whose members name a destroyed digest
(`blobs/<hex>`, §6.3): layers of untagged packs, of manifests `index.json` no longer lists, of older
pack-cache entries. Which remote tags and digests still hold the bytes is `remote_copies`' business.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError
from brain.identity import BlockId, OciDigest
from brain.lifecycle.destroy import destroy
from brain.snapshot import Projection, Snapshot
from brain.store.layout import Descriptor
from oci import media_types as mt
from oci.tarball_reader import LayerReader
from oci.auth import resolve_credentials
from oci.layer_cache import LayerCache
from oci.manifest import Manifest
from oci.reference import Reference
from oci.remote_copy import RemoteCopy

if TYPE_CHECKING:  # the HTTP client (oras, requests: ~0.3 s to import) only when a registry is asked
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


_GZIP = b"\x1f\x8b"


def _names_a_destroyed(path: str, size: int, hexes: frozenset[str]) -> bool:
    """Whether the gzip tar at `path` has a `blobs/<hex>` member with `hex` in `hexes` (any other file: no)."""
    try:
        with open(path, "rb") as stream:
            if stream.read(2) != _GZIP:
                return False
            stream.seek(0)
            reader = LayerReader(stream, compressed_size=size, what=path)
            for entry, _ in reader.members():
                if entry.name.startswith("blobs/") and entry.name[6:] in hexes:
                    return True
    except (BrainError, OSError, EOFError, ValueError):
        return False  # not a layer (or a damaged one: `brain verify --tag` reports those)
    return False


def purge_stray_layers(brain: Brain, redacted: frozenset[BlockId]) -> int:
    """Delete every gzip layer in the blob store that packs a redacted digest; how many went."""
    hexes = frozenset(b.hex for b in redacted)
    deleted = 0
    if not hexes:
        return 0
    with os.scandir(brain.blobs.directory) as entries:
        candidates = [(e.name, e.path, e.stat().st_size) for e in entries if e.is_file(follow_symlinks=False)]
    for name, path, size in candidates:
        if len(name) == 64 and _names_a_destroyed(path, size, hexes):
            deleted += brain.blobs.delete(OciDigest(name))
    return deleted


def purge_copies(brain: Brain, redacted: frozenset[BlockId]) -> Purged:
    """Every packed copy of `redacted` bytes in the directory: `index.json` artifacts, then any other layer."""
    purged = purge_artifacts(brain, redacted)
    purged.blobs += purge_stray_layers(brain, redacted)
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


def redacted_here(brain: Brain) -> frozenset[BlockId]:
    """Every block the head tombstones and every digest `tombstones.json` lists (as block ids)."""
    head = brain.snapshot_digest()
    tombstoned = (
        frozenset() if head is None else frozenset().union(*(m.tombstones for m in brain.modules(head).values()))
    )
    return tombstoned | {BlockId(h) for h in brain.blobs.destroyed()}


class _Holding:
    """Whether a snapshot's modules pack a redacted block they do not tombstone (compositions read once)."""

    def __init__(self, brain: Brain, redacted: frozenset[BlockId]) -> None:
        self.brain, self.redacted = brain, redacted
        self._compositions: dict[OciDigest, frozenset[BlockId]] = {}

    def __call__(self, snapshot: OciDigest) -> bool:
        try:
            modules = self.brain.modules(snapshot)
        except BrainError:
            return False  # not held here: nothing says it holds them
        for module in modules.values():
            ref = module.ref
            if ref.composition not in self._compositions:
                try:
                    self._compositions[ref.composition] = (
                        frozenset(self.brain.composition(ref).block_ids) & self.redacted
                    )
                except BrainError:
                    self._compositions[ref.composition] = frozenset()
            if self._compositions[ref.composition] - set(ref.tombstones or ()):
                return True
        return False


def _delete_command(repository: str, digest: OciDigest | None, plain_http: bool) -> str:
    tls = "--tls-verify=false " if plain_http else ""
    if digest is None:
        return f"skopeo delete {tls}docker://{repository}:TAG  (its tags: brain tags {repository})"
    return f"skopeo delete {tls}docker://{repository}@{digest}"


def remote_copies(brain: Brain, redacted: frozenset[BlockId] | None = None) -> list[RemoteCopy]:
    """Each pushed manifest (`boltzmann/pushes.json`) and each repository pulled signed (`remotes.json`) whose
    snapshot still packs redacted bytes, with the command that deletes it. A registry is not ours to erase."""
    from brain.store.authn_files import read_remotes
    from oci.push_log import read_pushes
    from oci.reference import is_loopback_host, normalized_key

    redacted = redacted_here(brain) if redacted is None else redacted
    if not redacted:
        return []
    holds = _Holding(brain, redacted)
    copies: dict[tuple[str, OciDigest | None], RemoteCopy] = {}
    for entry in read_pushes(brain):
        if (entry.repository, entry.digest) not in copies and holds(entry.snapshot):
            copies[(entry.repository, entry.digest)] = RemoteCopy(
                repository=entry.repository, tag=entry.tag, digest=entry.digest, snapshot=entry.snapshot,
                known_from="push log", delete=_delete_command(entry.repository, entry.digest, entry.plain_http))
    pushed = {repository for repository, _ in copies}
    for key, snapshot in read_remotes(brain.path).seen_signed.items():
        repository = normalized_key(key)
        if repository not in pushed and holds(snapshot):
            loopback = is_loopback_host(repository.partition("/")[0].rsplit(":", 1)[0])
            copies[(repository, None)] = RemoteCopy(
                repository=repository, tag=None, digest=None, snapshot=snapshot, known_from="pulled signed",
                delete=_delete_command(repository, None, loopback))
    return list(copies.values())


def _client_for(reference: Reference) -> RegistryClient:
    from oci.transport import RegistryClient

    return RegistryClient(reference, resolve_credentials(reference.registry))


def remote_tags_holding(brain: Brain, reference: Reference, client: RegistryClient | None = None) -> list[RemoteCopy]:
    """Tags of `reference`'s repository whose artifact (as far as the local store can tell from its config and
    compositions) still packs bytes this brain redacted, with their manifest digests."""
    redacted = redacted_here(brain)
    if not redacted:
        return []
    client = client or _client_for(reference)
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
                holding.append(RemoteCopy(
                    repository=reference.repository_key, tag=tag, digest=fetched.digest,
                    snapshot=manifest.config.digest,
                    known_from="registry tag", delete=_delete_command(reference.repository_key, fetched.digest,
                                                                      reference.plain_http)))
        except BrainError:
            continue
    return holding


def copies_after_push(brain: Brain, reference: Reference, replaced: OciDigest | None,
                      client: RegistryClient | None = None) -> list[RemoteCopy]:
    """After a push: every remote copy of redacted bytes known here — `remote_copies`, the registry's tags of
    `reference` that hold them, and the manifest the push replaced (its tag moved; it stays pullable by digest)."""
    redacted = redacted_here(brain)
    if not redacted:
        return []
    client = client or _client_for(reference)
    found = {(c.repository, c.digest): c for c in remote_copies(brain, redacted)}
    for copy in remote_tags_holding(brain, reference, client):
        found.setdefault((copy.repository, copy.digest), copy)
    if replaced is not None and (reference.repository_key, replaced) not in found:
        try:
            manifest = Manifest.decode(client.get_manifest(str(replaced)).data, what=f"manifest {replaced}")
            if brain.blobs.has(manifest.config.digest) and holding_layers(brain, manifest, redacted):
                found[(reference.repository_key, replaced)] = RemoteCopy(
                    repository=reference.repository_key, tag=None, digest=replaced, snapshot=manifest.config.digest,
                    known_from="replaced by this push", delete=_delete_command(reference.repository_key, replaced,
                                                                               reference.plain_http))
        except BrainError:
            pass
    return list(found.values())
