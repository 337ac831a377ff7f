"""Wire models of the packed artifact: descriptors and the image manifest (§6.1), as JCS bytes.

Field names are the OCI JSON keys. Writing always produces JCS; reading parses strictly and applies the
consumer checks of §6.1 (artifact type, schema version 2, annotations an object of strings, protocol
version an integer no higher than 2) but, like the reference, does not require the bytes to be JCS.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationError, field_validator

from brain.errors import CanonicalFormError, UntrustedArtifactError
from brain.frozen import FrozenModel
from brain.identity import OciDigest, canonicalize, parse_strict
from oci import media_types as mt


class Descriptor(FrozenModel):
    """An OCI content descriptor: media type, digest, size and optional annotations."""

    mediaType: str  # noqa: N815 - the OCI key
    digest: OciDigest
    size: int = Field(ge=0)
    annotations: dict[str, str] | None = None
    artifactType: str | None = None  # noqa: N815 - only on index.json entries

    def to_json(self) -> dict[str, Any]:
        """The descriptor as a JSON object; empty annotation maps and absent members are omitted."""
        out: dict[str, Any] = {"digest": str(self.digest), "mediaType": self.mediaType, "size": self.size}
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        if self.artifactType is not None:
            out["artifactType"] = self.artifactType
        return out

    def annotation(self, key: str) -> str | None:
        """The annotation `key`, or None."""
        return (self.annotations or {}).get(key)


class Manifest(FrozenModel):
    """A Boltzmann brain manifest (§6.1)."""

    schemaVersion: int  # noqa: N815
    mediaType: str = mt.MANIFEST  # noqa: N815
    artifactType: str = mt.ARTIFACT  # noqa: N815
    config: Descriptor
    layers: tuple[Descriptor, ...]
    annotations: dict[str, str]

    @field_validator("schemaVersion")
    @classmethod
    def _schema_version_two(cls, value: int) -> int:
        if value != 2:
            raise ValueError(f"schemaVersion must be 2, got {value}")
        return value

    @field_validator("artifactType")
    @classmethod
    def _brain_artifact(cls, value: str) -> str:
        if value != mt.ARTIFACT:
            raise ValueError(f"artifactType must be {mt.ARTIFACT}, got {value!r}")
        return value

    @field_validator("annotations")
    @classmethod
    def _protocol_version(cls, value: dict[str, str]) -> dict[str, str]:
        version = value.get(mt.PROTOCOL_VERSION)
        highest = mt.MAX_PROTOCOL_VERSION
        if version is not None and (not version.isascii() or not version.isdigit() or int(version) > highest):
            raise ValueError(f"protocol-version annotation must be an integer <= {highest}, got {version!r}")
        return value

    def to_json(self) -> dict[str, Any]:
        """The manifest as a JSON object with descriptors in their written form."""
        return {
            "annotations": dict(self.annotations),
            "artifactType": self.artifactType,
            "config": self.config.to_json(),
            "layers": [layer.to_json() for layer in self.layers],
            "mediaType": self.mediaType,
            "schemaVersion": self.schemaVersion,
        }

    def to_bytes(self) -> bytes:
        """The JCS bytes that are stored and pushed; the manifest digest is over exactly these."""
        return canonicalize(self.to_json())

    @property
    def source_snapshot(self) -> OciDigest | None:
        """The full snapshot the artifact was packed from, if annotated."""
        value = self.annotations.get(mt.SOURCE_SNAPSHOT)
        return None if value is None else OciDigest.parse(value)

    @property
    def is_projection(self) -> bool:
        """True when the config is a projection (a subset publish, §6.7)."""
        return self.config.mediaType == mt.PROJECTION_CONFIG

    def history_layer(self) -> Descriptor | None:
        """The history layer's descriptor, if any."""
        return next((layer for layer in self.layers if layer.mediaType == mt.HISTORY_LAYER), None)

    @classmethod
    def decode(cls, data: bytes, *, what: str = "manifest") -> Manifest:
        """Parse manifest bytes strictly and apply the §6.1 consumer checks; refusals are untrusted-artifact errors."""
        try:
            document = parse_strict(data)
        except CanonicalFormError as e:
            raise UntrustedArtifactError(f"{what}: not strict JSON ({e})") from e
        if not isinstance(document, dict):
            raise UntrustedArtifactError(f"{what}: top level is not an object")
        if "annotations" in document and not isinstance(document["annotations"], dict):
            raise UntrustedArtifactError(f"{what}: annotations is not an object")
        document.setdefault("annotations", {})
        if document.get("artifactType") != mt.ARTIFACT:
            found = document.get("artifactType")
            raise UntrustedArtifactError(f"{what}: artifactType {found!r} is not a Boltzmann brain")
        try:
            return cls.model_validate(document)
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise UntrustedArtifactError(f"{what}: invalid at {where or 'top level'}: {first['msg']}") from e
