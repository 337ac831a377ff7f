"""The OCI image layout around a brain: `oci-layout`, `index.json` and its tags (§5.5, §6.6).

Both files are pretty JSON (2-space indent, sorted keys, trailing newline). OCI objects are not hashed
protocol documents and the OCI spec asks readers to ignore unknown members, so the index models keep
extra members (and write them back) instead of refusing them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from brain.errors import BrainUnreadableError, InvalidInputError, NotABrainError, NotFoundError
from brain.identity import OciDigest
from brain.store.atomic import atomic_write

LAYOUT_FILE = "oci-layout"
INDEX_FILE = "index.json"
LAYOUT_VERSION = "1.0.0"
INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
REF_NAME = "org.opencontainers.image.ref.name"
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")


def pretty_json(value: Any) -> bytes:
    """The layout files' style: 2-space indent, sorted keys, `": "`, trailing newline."""
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode("utf-8")


def validate_tag(tag: str) -> str:
    """Return `tag` unchanged, or raise `InvalidInputError` if it is not an OCI tag."""
    if not isinstance(tag, str) or _TAG.fullmatch(tag) is None:
        raise InvalidInputError(
            f"invalid tag {tag!r}: use 1-128 of [A-Za-z0-9._-], starting with a letter, digit or '_'"
        )
    return tag


class Descriptor(BaseModel):
    """An OCI content descriptor (one entry of `index.json`'s `manifests`)."""

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    mediaType: str
    digest: OciDigest
    size: int = Field(ge=0)
    artifactType: str | None = None
    annotations: dict[str, str] | None = None

    @property
    def tag(self) -> str | None:
        """The `org.opencontainers.image.ref.name` annotation, if any."""
        return None if self.annotations is None else self.annotations.get(REF_NAME)

    def with_tag(self, tag: str | None) -> Descriptor:
        """A copy carrying `tag` as its ref name (or no ref name)."""
        annotations = {k: v for k, v in (self.annotations or {}).items() if k != REF_NAME}
        if tag is not None:
            annotations[REF_NAME] = validate_tag(tag)
        return self.model_copy(update={"annotations": annotations or None})


class ImageIndex(BaseModel):
    """The OCI image index stored as `index.json`."""

    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)

    schemaVersion: int = 2
    mediaType: str = INDEX_MEDIA_TYPE
    manifests: tuple[Descriptor, ...] = ()

    def to_bytes(self) -> bytes:
        """The pretty JSON bytes written to disk."""
        return pretty_json(self.model_dump(mode="json", exclude_none=True))


class Layout:
    """The OCI image layout files of one brain directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def layout_path(self) -> Path:
        """`<root>/oci-layout`."""
        return self.root / LAYOUT_FILE

    @property
    def index_path(self) -> Path:
        """`<root>/index.json`."""
        return self.root / INDEX_FILE

    def create(self) -> None:
        """Write `oci-layout`, an empty `index.json` and `blobs/sha256/`."""
        (self.root / "blobs" / "sha256").mkdir(parents=True, exist_ok=True)
        atomic_write(self.layout_path, pretty_json({"imageLayoutVersion": LAYOUT_VERSION}))
        if not self.index_path.exists():
            atomic_write(self.index_path, ImageIndex().to_bytes())

    def check(self) -> None:
        """Raise `NotABrainError` unless `oci-layout` names version 1.0.0."""
        where = self.layout_path
        try:
            value = json.loads(where.read_bytes())
        except FileNotFoundError:
            raise NotABrainError(
                f"{self.root} is not a brain: {LAYOUT_FILE} is missing", hint="create one with `brain init`"
            ) from None
        except (OSError, ValueError) as e:
            raise NotABrainError(f"{where} is not readable JSON: {e}") from e
        version = value.get("imageLayoutVersion") if isinstance(value, dict) else None
        if version != LAYOUT_VERSION:
            raise NotABrainError(
                f"{where} declares imageLayoutVersion {version!r}; only {LAYOUT_VERSION!r} is supported"
            )

    def index(self) -> ImageIndex:
        """The parsed `index.json`; raises `BrainUnreadableError` if missing, empty or malformed."""
        where = self.index_path
        try:
            data = where.read_bytes()
        except FileNotFoundError:
            raise BrainUnreadableError(f"{where} is missing", hint="restore it from a copy of the brain") from None
        if not data.strip():
            raise BrainUnreadableError(f"{where} is empty", hint="restore it from a copy of the brain")
        try:
            return ImageIndex.model_validate(json.loads(data))
        except ValueError as e:
            detail = e.errors()[0]["msg"] if isinstance(e, ValidationError) else str(e)
            raise BrainUnreadableError(f"{where} is not a valid OCI image index: {detail}") from e

    def write_index(self, index: ImageIndex) -> None:
        """Replace `index.json` atomically (callers hold the writer lock)."""
        atomic_write(self.index_path, index.to_bytes())

    def set_tag(self, tag: str, descriptor: Descriptor) -> None:
        """Point `tag` at `descriptor`: drop the old entry for that tag, append the new one (§6.6)."""
        entry = descriptor.with_tag(validate_tag(tag))
        index = self.index()
        kept = tuple(d for d in index.manifests if d.tag != tag)
        self.write_index(index.model_copy(update={"manifests": (*kept, entry)}))

    def add_manifest(self, descriptor: Descriptor) -> None:
        """Append an untagged entry."""
        index = self.index()
        self.write_index(index.model_copy(update={"manifests": (*index.manifests, descriptor.with_tag(None))}))

    def remove_tag(self, tag: str) -> bool:
        """Remove the entry for `tag`; False if there was none."""
        index = self.index()
        kept = tuple(d for d in index.manifests if d.tag != tag)
        if len(kept) == len(index.manifests):
            return False
        self.write_index(index.model_copy(update={"manifests": kept}))
        return True

    def tags(self) -> list[tuple[str, Descriptor]]:
        """`(tag, descriptor)` for every tagged entry, in index order."""
        return [(d.tag, d) for d in self.index().manifests if d.tag is not None]

    def resolve_tag(self, tag: str) -> Descriptor:
        """The descriptor tagged `tag` (the last one if repeated); raises `NotFoundError`."""
        for name, descriptor in reversed(self.tags()):
            if name == tag:
                return descriptor
        known = ", ".join(name for name, _ in self.tags()) or "none"
        raise NotFoundError(f"no tag {tag!r} in {self.index_path} (tags: {known})")
