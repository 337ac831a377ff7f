"""A remote brain's state for `brain diff REF`: one manifest, its config (the snapshot, or a projection), and
the compositions of its modules. Compositions already stored locally are read from the local store; the
others come from the history layer (§6.4), streamed once into a temporary directory and checked member by
member (each must hash to its name and decode). Nothing is adopted into the brain."""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from brain.blocks.memory_type import MemoryType
from brain.brain import Brain
from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, UntrustedArtifactError
from brain.identity import OciDigest
from brain.snapshot import Projection, Snapshot
from brain.store.blobs import BlobStore
from oci.auth import resolve_credentials
from oci.manifest import Manifest
from oci.reference import Reference
from oci.tarball_reader import LayerReader, read_all
from oci.transport import RegistryClient

_MAX_COMPOSITION = 256 << 20
_HEX = re.compile("[0-9a-f]{64}")


@dataclass(frozen=True)
class RemoteState:
    """The modules a remote artifact publishes and their member lists."""

    reference: str
    snapshot: OciDigest  # the snapshot the artifact was packed from
    refs: dict[MemoryType, ModuleRef]
    compositions: dict[OciDigest, Composition]


def remote_state(brain: Brain, reference: Reference, *, client: RegistryClient | None = None) -> RemoteState:
    """Read `reference`'s manifest, config and (when needed) history layer; see the module docstring."""
    client = client or RegistryClient(reference, resolve_credentials(reference.registry))
    fetched = client.get_manifest(reference.manifest_reference)
    manifest = Manifest.decode(fetched.data, what=f"manifest of {reference}")
    config = client.get_blob_bytes(manifest.config.digest, manifest.config.size)
    try:
        if manifest.is_projection:
            projection = Projection.decode(config, manifest.config.digest)
            modules, snapshot = projection.modules, projection.source
        else:
            modules, snapshot = Snapshot.decode(config, manifest.config.digest).modules, manifest.config.digest
    except BrainError as e:
        raise UntrustedArtifactError(f"the config of {reference} is not a snapshot document: {e.message}") from None
    refs = {MemoryType(k): v for k, v in modules.items()}
    compositions: dict[OciDigest, Composition] = {}
    wanted = set()
    for ref in refs.values():
        try:
            compositions[ref.composition] = brain.composition(ref)
        except BrainError:
            wanted.add(ref.composition)
    history = manifest.history_layer()
    if wanted and history is not None:
        with tempfile.TemporaryDirectory(prefix="brain-diff-") as scratch:
            store = BlobStore(Path(scratch))
            client.fetch_blob(history.digest, history.size, store)
            with open(store.path(history.digest), "rb") as stream:
                reader = LayerReader(stream, compressed_size=history.size, what=f"history layer of {reference}")
                for entry, chunks in reader.members():
                    prefix, _, hex_digest = entry.name.partition("/")
                    if (
                        prefix != "compositions"
                        or not _HEX.fullmatch(hex_digest)
                        or OciDigest(hex_digest) not in wanted
                    ):
                        continue
                    data = read_all(chunks, _MAX_COMPOSITION, entry.name)
                    try:
                        compositions[OciDigest(hex_digest)] = Composition.decode(data, OciDigest(hex_digest))
                    except BrainError as e:
                        raise UntrustedArtifactError(
                            f"{reference}: {entry.name} is not a composition: {e.message}"
                        ) from None
    missing = [str(ref.memory_type) for ref in refs.values() if ref.composition not in compositions]
    if missing:
        raise UntrustedArtifactError(f"{reference} does not carry the compositions of its {', '.join(missing)} modules")
    for ref in refs.values():
        composition = compositions[ref.composition]
        if composition.root != ref.root or composition.memory_type != ref.memory_type:
            raise UntrustedArtifactError(f"{reference}: the {ref.memory_type} composition does not match its root")
    return RemoteState(str(reference), snapshot, refs, compositions)
