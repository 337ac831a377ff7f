"""Snapshot (§5.3) and projection (§5.4) documents: which version of each module a brain (or artifact) is at."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, Self

from pydantic import Field, ValidationError, model_validator

from brain.authn.keys import parse_trust_key
from brain.blocks.document import JcsDocument, check_boltzmann, read_json_object
from brain.blocks.fields import NonEmptyText, Text, Timestamp, WireModel
from brain.composition import DocumentDecodeError, ModuleRef
from brain.identity import MAX_SAFE_INTEGER, OciDigest, actor_id_problem, canonicalize

Positive = Annotated[int, Field(strict=True, ge=1, le=MAX_SAFE_INTEGER)]


class SnapshotDecodeError(DocumentDecodeError):
    """Stored snapshot or projection bytes are not a valid, canonical document."""


class TrustScope(StrEnum):
    """What a trust-root key may sign."""

    INGEST = "ingest"
    COMMIT = "commit"
    DROP_CANONICAL = "drop:canonical"
    REDACT = "redact"
    GOVERN = "govern"
    PROPOSE = "propose"


class TrustKey(WireModel):
    """One key of a trust root (§5.3, §9.5): the key, what it may sign, and when it entered or left."""

    key: NonEmptyText
    scopes: tuple[TrustScope, ...]
    since: Positive
    subject: Text | None = None
    retired_from: Positive | None = None
    compromised_from: OciDigest | None = None

    @model_validator(mode="after")
    def _rules(self) -> Self:
        parse_trust_key(self.key)  # KeyFormatError is a ValueError for pydantic: the snapshot is refused
        if not self.scopes:
            raise ValueError("a trust-root key needs at least one scope")
        if len(set(self.scopes)) != len(self.scopes):
            raise ValueError("a trust-root key lists a scope twice")
        if self.subject is not None and (problem := actor_id_problem(self.subject)) is not None:
            raise ValueError(f"subject {self.subject!r} is not an actor id: {problem}")
        if self.retired_from is not None and self.retired_from <= self.since:
            raise ValueError("retired_from must be greater than since")
        return self


class TrustRoot(WireModel):
    """The governance root carried by a governed brain's snapshots (§9.5)."""

    boltzmann: Literal[1] = 1
    govern_quorum: Positive
    keys: tuple[TrustKey, ...]
    namespace: NonEmptyText = "boltzmann.snapshot.v1"
    revision: Positive

    @model_validator(mode="after")
    def _rules(self) -> Self:
        if self.namespace != "boltzmann.snapshot.v1":
            raise ValueError(f"trust-root namespace {self.namespace!r} is not boltzmann.snapshot.v1")
        if not self.keys:
            raise ValueError("a trust root lists at least one key")
        blobs = [parse_trust_key(entry.key).blob for entry in self.keys]
        if len(set(blobs)) != len(blobs):
            raise ValueError("a trust root lists the same key twice")
        if not any(TrustScope.GOVERN in entry.scopes for entry in self.keys):
            raise ValueError("a trust root needs at least one key holding govern")
        for entry in self.keys:
            if entry.since > self.revision:
                raise ValueError(f"a key's since {entry.since} exceeds the revision {self.revision}")
            if entry.retired_from is not None and entry.retired_from > self.revision:
                raise ValueError(f"a key's retired_from {entry.retired_from} exceeds the revision {self.revision}")
        return self

    @property
    def digest(self) -> OciDigest:
        """SHA-256 of the JCS bytes of the trust-root object."""
        return OciDigest.of(canonicalize(self.to_json()))


def _check_modules(modules: dict[str, ModuleRef]) -> None:
    for key, ref in modules.items():
        if key != ref.memory_type.value:
            raise ValueError(f"module {key!r} holds a reference to memory_type {ref.memory_type.value!r}")


class _Document(JcsDocument):
    """A snapshot-like document: decoded with schema validation, then compared byte for byte."""

    @classmethod
    def _decode(cls, data: bytes, expected: OciDigest | None, what: str) -> Self:
        data = bytes(data)
        actual, document = read_json_object(data, expected, OciDigest, what, SnapshotDecodeError)
        check_boltzmann(document, what, SnapshotDecodeError)
        cls._refuse_encoding(document)
        nulls = sorted(key for key, value in document.items() if value is None)
        if nulls:
            raise SnapshotDecodeError(f"{what} has explicit null for {', '.join(nulls)} (absent members are omitted)")
        try:
            parsed = cls.model_validate(document)
        except ValidationError as e:
            first = e.errors(include_url=False)[0]
            where = ".".join(map(str, first["loc"])) or "document"
            raise SnapshotDecodeError(f"invalid {what}: {where}: {first['msg']}") from e
        if parsed.to_bytes() != data:
            raise SnapshotDecodeError(f"{what} is not in canonical jcs/1 form (re-serialization differs)")
        parsed._adopt(data, actual)
        return parsed

    @classmethod
    def _refuse_encoding(cls, document: dict[str, Any]) -> None:
        """Document-specific refusals with clearer messages than schema validation gives."""


class Snapshot(_Document):
    """The state of a brain: a module reference per memory type, lineage, and optional labels/trust root."""

    boltzmann: Literal[1] = 1
    created_at: Timestamp
    modules: dict[str, ModuleRef]
    parent: OciDigest | None = None
    parents: tuple[OciDigest, ...] | None = None
    labels: dict[Text, Text] | None = None
    trust_root: TrustRoot | None = None

    @model_validator(mode="after")
    def _lineage_and_modules(self) -> Self:
        if self.parent is not None and self.parents is not None:
            raise ValueError("a snapshot has either parent (one predecessor) or parents (two or more), not both")
        if self.parents is not None:
            if len(self.parents) < 2:
                raise ValueError("parents needs two or more digests; one predecessor is written as parent")
            if len(set(self.parents)) != len(self.parents):
                raise ValueError("parents must not repeat a digest")
        _check_modules(self.modules)
        return self

    @classmethod
    def with_lineage(cls, predecessors: tuple[OciDigest, ...] | list[OciDigest], **fields: Any) -> Snapshot:
        """A snapshot whose lineage is encoded per §5.3: none → no key, one → `parent`, more → `parents`."""
        predecessors = tuple(predecessors)
        if len(predecessors) == 1:
            return cls(parent=predecessors[0], **fields)
        return cls(parents=predecessors or None, **fields)

    @property
    def parent_digests(self) -> tuple[OciDigest, ...]:
        """All predecessors, first = the history this snapshot was built onto."""
        if self.parents is not None:
            return self.parents
        return () if self.parent is None else (self.parent,)

    @property
    def first_parent(self) -> OciDigest | None:
        """The predecessor this snapshot was built onto, or None for a root snapshot."""
        digests = self.parent_digests
        return digests[0] if digests else None

    @classmethod
    def decode(cls, data: bytes, expected: OciDigest | None = None) -> Snapshot:
        """Read stored snapshot bytes, refusing everything §5.3 refuses; raises `SnapshotDecodeError`."""
        return cls._decode(data, expected, "snapshot")

    @classmethod
    def _refuse_encoding(cls, document: dict[str, Any]) -> None:
        if "parent" in document and "parents" in document:
            raise SnapshotDecodeError("snapshot has both parent and parents")
        parents = document.get("parents")
        if isinstance(parents, list) and len(parents) < 2:
            raise SnapshotDecodeError(
                f"snapshot parents has {len(parents)} entries; it needs two or more (one is parent)"
            )
        for required in ("created_at", "modules"):
            if required not in document:
                raise SnapshotDecodeError(f"snapshot has no {required}")


class Projection(_Document):
    """The config of a subset artifact: verbatim module references of the published modules (§5.4)."""

    boltzmann: Literal[1] = 1
    modules: dict[str, ModuleRef]
    source: OciDigest

    @model_validator(mode="after")
    def _non_empty_modules(self) -> Self:
        if not self.modules:
            raise ValueError("a projection publishes at least one module")
        _check_modules(self.modules)
        return self

    @classmethod
    def decode(cls, data: bytes, expected: OciDigest | None = None) -> Projection:
        """Read stored projection bytes; raises `SnapshotDecodeError`."""
        return cls._decode(data, expected, "projection")
