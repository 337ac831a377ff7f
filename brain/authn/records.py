"""Signature records (§9.3) and the local index of them, `boltzmann/signatures.json`.

A record is one signature over one snapshot, stored as JCS bytes under its own digest. Reading is strict:
the JCS re-serialization must equal the stored bytes, so all six keys are mandatory and extra keys,
pretty-printing, a trailing newline and unknown scope names are refused. `scopes` is the signer's claim,
diagnostic only: the decision never reads it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError

from brain.authn.sshsig import MAX_ARMOR_CHARS, NAMESPACE
from brain.blocks.document import JcsDocument, check_boltzmann, read_json_object
from brain.blocks.fields import NonEmptyText
from brain.errors import IntegrityError
from brain.identity import OciDigest
from brain.snapshot import TrustScope

# A record carries at most 8192 characters of armor; anything far larger is refused before parsing.
MAX_RECORD_BYTES = 16384
# Per snapshot (code-only in the reference): the 513th record is refused.
MAX_RECORDS_PER_SNAPSHOT = 512

Armor = Annotated[str, StringConstraints(strict=True, min_length=1, max_length=MAX_ARMOR_CHARS)]


class RecordDecodeError(IntegrityError):
    """Stored bytes are not a canonical signature record (or index)."""


def _first_error(e: ValidationError) -> str:
    first = e.errors(include_url=False)[0]
    return f"{'.'.join(map(str, first['loc'])) or 'document'}: {first['msg']}"


class SignatureRecord(JcsDocument):
    """One signature over one snapshot (§9.3)."""

    boltzmann: Literal[1] = 1
    key: NonEmptyText
    namespace: NonEmptyText = NAMESPACE
    scopes: tuple[TrustScope, ...]
    signature: Armor
    snapshot: OciDigest

    def to_json(self) -> dict[str, Any]:
        # `scopes` is always written, `[]` included (the §1.3 omission of empty lists does not apply).
        return {**super().to_json(), "scopes": [str(s) for s in self.scopes]}

    @classmethod
    def decode(cls, data: bytes, expected: OciDigest | None = None) -> SignatureRecord:
        """Read stored record bytes; raises `RecordDecodeError`."""
        data = bytes(data)
        if len(data) > MAX_RECORD_BYTES:
            raise RecordDecodeError(f"signature record of {len(data)} bytes exceeds {MAX_RECORD_BYTES}")
        actual, document = read_json_object(data, expected, OciDigest, "signature record", RecordDecodeError)
        check_boltzmann(document, "signature record", RecordDecodeError)
        try:
            record = cls.model_validate(document)
        except ValidationError as e:
            raise RecordDecodeError(f"invalid signature record: {_first_error(e)}") from None
        if record.to_bytes() != data:
            raise RecordDecodeError("signature record is not in canonical jcs/1 form (re-serialization differs)")
        record._adopt(data, actual)
        return record


class SignatureIndex(JcsDocument):
    """`boltzmann/signatures.json`: snapshot digest -> its record digests, ascending by hex."""

    boltzmann: Literal[1] = 1
    entries: dict[str, tuple[OciDigest, ...]] = Field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        entries = {key: [str(d) for d in sorted(set(value))] for key, value in sorted(self.entries.items()) if value}
        return {"boltzmann": 1, "entries": entries}

    def records_of(self, snapshot: OciDigest) -> tuple[OciDigest, ...]:
        """The record digests held over `snapshot`."""
        return self.entries.get(str(snapshot), ())

    def with_record(self, snapshot: OciDigest, record: OciDigest) -> SignatureIndex:
        """The index with `record` listed over `snapshot` (a no-op when already listed)."""
        current = set(self.records_of(snapshot))
        entries = {**self.entries, str(snapshot): tuple(sorted(current | {record}))}
        return SignatureIndex(entries=entries)

    @classmethod
    def decode(cls, data: bytes) -> SignatureIndex:
        """Read `signatures.json` (strict JSON, canonical); raises `RecordDecodeError`."""
        _, document = read_json_object(bytes(data), None, OciDigest, "signature index", RecordDecodeError)
        check_boltzmann(document, "signature index", RecordDecodeError)
        try:
            index = cls.model_validate(document)
        except ValidationError as e:
            raise RecordDecodeError(f"invalid signature index: {_first_error(e)}") from None
        for snapshot in index.entries:
            OciDigest.parse(snapshot)
        return index
