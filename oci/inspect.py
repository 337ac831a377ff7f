"""`brain inspect`: describe a remote brain artifact from its manifest and config alone (two small requests).

No layer is downloaded: modules, roots and counts come from the config (cross-checked against the layer
annotations), sizes from the descriptors, and the history length from the `snapshot-count` annotation.
"""

from __future__ import annotations

import json

from pydantic import Field

from brain.blocks.memory_type import MemoryType
from brain.errors import BrainError, UntrustedArtifactError
from brain.frozen import FrozenModel
from brain.identity import MerkleRoot, OciDigest
from brain.snapshot import Projection, Snapshot
from oci import media_types as mt
from oci.auth import resolve_credentials
from oci.manifest import Manifest
from oci.reference import Reference
from oci.referrers import SignatureSummary, summarize_signatures
from oci.transport import RegistryClient


class InspectedModule(FrozenModel):
    """One module of a remote artifact."""

    memory_type: MemoryType
    root: MerkleRoot
    block_count: int
    layer: OciDigest
    layer_size: int
    embedding_model: str | None = None


class InspectResult(FrozenModel):
    """What a remote artifact holds, read from its manifest and config."""

    reference: str
    digest: OciDigest
    snapshot: OciDigest
    subset: bool
    created_at: str | None
    protocol_version: str | None
    schema_versions: dict[str, list[int]] | None
    modules: list[InspectedModule]
    history_length: int | None
    history_size: int | None
    total_size: int
    # Signature records its referrers carry (§9.4); whether their keys were allowed is for pull/verify.
    signatures: list[SignatureSummary] = Field(default_factory=list)
    trust_root: str | None = None


def _schema_versions(text: str | None) -> dict[str, list[int]] | None:
    """The schema-versions annotation as an object (module → versions), or None if absent or malformed."""
    try:
        value = json.loads(text) if text is not None else None
    except ValueError:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(v, list) and all(type(n) is int for n in v) for v in value.values()
    ):
        return None
    return {str(k): list(v) for k, v in value.items()}


def describe(reference: Reference, digest: OciDigest, manifest: Manifest, config: bytes) -> InspectResult:
    """Pure part of `inspect`: combine a verified manifest and its config bytes into a description."""
    created_at: str | None = None
    try:
        if manifest.is_projection:
            projection = Projection.decode(config)
            refs, snapshot = projection.modules, projection.source
        else:
            decoded = Snapshot.decode(config, manifest.config.digest)
            refs, snapshot, created_at = decoded.modules, manifest.config.digest, decoded.created_at
    except BrainError as e:
        raise UntrustedArtifactError(
            f"{reference}: the config {manifest.config.digest} is not valid: {e.message}"
        ) from e
    layers = {mt.module_of_layer(layer.mediaType): layer for layer in manifest.layers}
    modules: list[InspectedModule] = []
    for name, ref in refs.items():
        memory_type = MemoryType(name)
        layer = layers.get(memory_type)
        if layer is None:
            raise UntrustedArtifactError(f"{reference}: the config names module {name} but no layer carries it")
        if layer.annotation(mt.MERKLE_ROOT) != str(ref.root) or layer.annotation(mt.BLOCK_COUNT) != str(
            ref.block_count
        ):
            raise UntrustedArtifactError(f"{reference}: the {name} layer's annotations disagree with the config")
        modules.append(
            InspectedModule(
                memory_type=memory_type,
                root=ref.root,
                block_count=ref.block_count,
                layer=layer.digest,
                layer_size=layer.size,
                embedding_model=ref.embedding_model,
            )
        )
    modules.sort(key=lambda m: list(MemoryType).index(m.memory_type))
    history = manifest.history_layer()
    count = None if history is None else history.annotation(mt.SNAPSHOT_COUNT)
    return InspectResult(
        reference=str(reference),
        digest=digest,
        snapshot=manifest.source_snapshot or snapshot,
        subset=manifest.is_projection,
        created_at=None if created_at is None else str(created_at),
        protocol_version=manifest.annotations.get(mt.PROTOCOL_VERSION),
        schema_versions=_schema_versions(manifest.annotations.get(mt.SCHEMA_VERSIONS)),
        modules=modules,
        history_length=int(count) if count is not None and count.isdigit() else None,
        history_size=None if history is None else history.size,
        total_size=manifest.config.size + sum(layer.size for layer in manifest.layers),
    )


def inspect(reference: Reference, *, client: RegistryClient | None = None) -> InspectResult:
    """Describe the artifact `reference` names (one manifest request, one config request)."""
    client = client or RegistryClient(reference, resolve_credentials(reference.registry))
    fetched = client.get_manifest(reference.manifest_reference)
    manifest = Manifest.decode(fetched.data, what=f"manifest of {reference}")
    config = client.get_blob_bytes(manifest.config.digest, manifest.config.size)
    signatures, _ = summarize_signatures(client, fetched.digest, config)
    described = describe(reference, fetched.digest, manifest, config)
    return described.model_copy(
        update={"signatures": signatures, "trust_root": manifest.annotations.get(mt.TRUST_ROOT)}
    )
