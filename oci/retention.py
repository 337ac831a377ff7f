"""What `index.json` keeps reachable (`brain prune`): every manifest it lists, that manifest's config and
layers, and the snapshots the configs name (a full snapshot, or a projection's source)."""

from __future__ import annotations

from brain.brain import Brain
from brain.errors import BrainError
from brain.identity import OciDigest
from brain.snapshot import Projection
from oci.manifest import Manifest


def index_roots(brain: Brain) -> tuple[set[str], set[OciDigest]]:
    """(hex digests of manifests, configs and layers, snapshots to keep with their chains)."""
    blobs: set[str] = set()
    snapshots: set[OciDigest] = set()
    for descriptor in brain.layout.index().manifests:
        blobs.add(descriptor.digest.hex)
        try:
            manifest = Manifest.decode(brain.blobs.get(descriptor.digest), what=f"manifest {descriptor.digest}")
        except BrainError:
            continue  # unreadable: keep only the blob itself; `brain verify` reports it
        blobs.add(manifest.config.digest.hex)
        blobs.update(layer.digest.hex for layer in manifest.layers)
        if manifest.is_projection:
            try:
                snapshots.add(Projection.decode(brain.blobs.get(manifest.config.digest), manifest.config.digest).source)
            except BrainError:
                pass
        else:
            snapshots.add(manifest.config.digest)
        source = manifest.source_snapshot
        if source is not None:
            snapshots.add(source)
    return blobs, snapshots
