"""Media types and annotation keys of the packed Boltzmann artifact (§6.1, §6.2, §6.6)."""

from __future__ import annotations

from brain.blocks.memory_type import MemoryType
from brain.store.layout import INDEX_MEDIA_TYPE, MANIFEST_MEDIA_TYPE

# Defined once, in the store that writes `index.json` (`brain.store.layout`); the registry client uses them too.
MANIFEST = MANIFEST_MEDIA_TYPE
INDEX = INDEX_MEDIA_TYPE
ARTIFACT = "application/vnd.gaussia.boltzmann.brain.v1+json"
SIGNATURE_ARTIFACT = "application/vnd.gaussia.boltzmann.signature.v1+json"
SNAPSHOT_CONFIG = "application/vnd.gaussia.boltzmann.snapshot.v1+json"
PROJECTION_CONFIG = "application/vnd.gaussia.boltzmann.projection.v1+json"
HISTORY_LAYER = "application/vnd.gaussia.boltzmann.history.v1+tar+gzip"
VECTOR_INDEX_LAYER = "application/vnd.gaussia.boltzmann.index.vector.v1+bin"

_PREFIX = "ai.gaussia.boltzmann."
PROTOCOL_VERSION = _PREFIX + "protocol-version"
SCHEMA_VERSIONS = _PREFIX + "schema-versions"
SOURCE_SNAPSHOT = _PREFIX + "source-snapshot"
TRUST_ROOT = _PREFIX + "trust-root"
MEMORY_TYPE = _PREFIX + "memory-type"
MERKLE_ROOT = _PREFIX + "merkle-root"
MERKLE_LAYOUT = _PREFIX + "merkle-layout"
BLOCK_COUNT = _PREFIX + "block-count"
EMBEDDING_MODEL = _PREFIX + "embedding-model"
INDEX_KIND = _PREFIX + "index-kind"
SNAPSHOT_COUNT = _PREFIX + "snapshot-count"
REF_NAME = "org.opencontainers.image.ref.name"

MERKLE_LAYOUT_NAME = "rfc6962-sorted/1"
# The highest protocol-version annotation a consumer accepts (§6.1).
MAX_PROTOCOL_VERSION = 2


def module_layer(memory_type: MemoryType) -> str:
    """The media type of the layer carrying module `memory_type`."""
    return f"application/vnd.gaussia.boltzmann.module.{memory_type.value}.v1.tar+gzip"


def module_of_layer(media_type: str) -> MemoryType | None:
    """The memory type a module-layer media type names, or None for any other media type."""
    for memory_type in MemoryType:
        if media_type == module_layer(memory_type):
            return memory_type
    return None
