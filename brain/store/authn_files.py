"""The authenticity sidecars (§9.3, §9.5): where they live and how they are read and written.

`boltzmann/signatures.json` indexes the signature records held (the records themselves are blobs),
`boltzmann/trust.json` is the consumer's pin, `boltzmann/remotes.json` remembers references once pulled
signed and authorized. All three are JCS without a newline, local state only (never published), and
written through `brain.store.atomic`. `boltzmann/trust-log.jsonl` records each explicit re-root (one JCS
object a line). Writers hold the brain's writer lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from brain.authn.records import (
    MAX_RECORDS_PER_SNAPSHOT,
    RecordDecodeError,
    SignatureIndex,
    SignatureRecord,
)
from brain.authn.trust import RemoteMemory, TrustPin
from brain.errors import BrainUnreadableError, CanonicalFormError, RefusedError
from brain.identity import OciDigest, canonicalize, parse_strict
from brain.store.atomic import atomic_write
from brain.store.blobs import BlobStore
from brain.store.sidecars import REMOTES, SIGNATURES, TRUST, TRUST_LOG

SIGNATURES_FILE = SIGNATURES.parts
TRUST_FILE = TRUST.parts
REMOTES_FILE = REMOTES.parts
AUTHN_SIDECARS = (SIGNATURES_FILE, TRUST_FILE, REMOTES_FILE)
_FIX = "restore it from a copy of the brain, or delete it to start over (signatures must then be added again)"


def _path(root: Path, name: tuple[str, ...]) -> Path:
    return Path(root).joinpath(*name)


def _read(root: Path, name: tuple[str, ...]) -> bytes | None:
    where = _path(root, name)
    try:
        return where.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise BrainUnreadableError(f"{where} cannot be read: {e.strerror}", hint=_FIX) from None


def _write(root: Path, name: tuple[str, ...], data: bytes) -> None:
    where = _path(root, name)
    where.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(where, data)


def read_signature_index(root: Path) -> SignatureIndex:
    """The signature index (empty when the brain holds no record)."""
    data = _read(root, SIGNATURES_FILE)
    if data is None:
        return SignatureIndex()
    try:
        return SignatureIndex.decode(data)
    except (RecordDecodeError, CanonicalFormError) as e:
        raise BrainUnreadableError(f"{_path(root, SIGNATURES_FILE)}: {e.message}", hint=_FIX) from None


def store_record(root: Path, blobs: BlobStore, record: SignatureRecord) -> tuple[OciDigest, bool]:
    """Store a record blob, then list it in the index; (its digest, whether it was new). Caller holds the lock."""
    return record.digest, store_records(root, blobs, [record]) == 1


def store_records(root: Path, blobs: BlobStore, records: Iterable[SignatureRecord]) -> int:
    """Store record blobs, then list them in the index with one write; returns how many were new.

    A snapshot holds at most 512 records: one more is refused (`RefusedError`) and nothing is written.
    """
    index = read_signature_index(root)
    updated = index
    added = 0
    for record in records:
        held = updated.records_of(record.snapshot)
        if record.digest in held and blobs.verify_file(record.digest):
            continue
        if record.digest not in held and len(held) >= MAX_RECORDS_PER_SNAPSHOT:
            raise RefusedError(
                f"snapshot {record.snapshot} already holds {len(held)} signature records, the most a snapshot may hold",
                hint="prune records nobody needs before adding more",
            )
        blobs.put(record.to_bytes(), sync=False)
        added += record.digest not in held
        updated = updated.with_record(record.snapshot, record.digest)
    if updated is not index:
        blobs.sync()  # the records are durable before the pointer that names them
        _write(root, SIGNATURES_FILE, updated.to_bytes())
    return added


def _model(root: Path, name: tuple[str, ...], model: type[TrustPin | RemoteMemory]) -> TrustPin | RemoteMemory | None:
    data = _read(root, name)
    if data is None:
        return None
    try:
        return model.model_validate(parse_strict(data))
    except CanonicalFormError as e:
        raise BrainUnreadableError(f"{_path(root, name)}: {e.message}", hint=_FIX) from None
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        where = ".".join(map(str, first["loc"])) or "document"
        raise BrainUnreadableError(f"{_path(root, name)} is invalid: {where}: {first['msg']}", hint=_FIX) from None


def read_pin(root: Path) -> TrustPin | None:
    """The consumer's trust pin, if any."""
    pin = _model(root, TRUST_FILE, TrustPin)
    assert pin is None or isinstance(pin, TrustPin)
    return pin


def write_pin(root: Path, pin: TrustPin) -> None:
    """Replace the trust pin."""
    _write(root, TRUST_FILE, canonicalize(pin.to_json()))


def remove_pin(root: Path) -> bool:
    """Delete the trust pin (an explicit re-root to an ungoverned brain); whether there was one."""
    try:
        _path(root, TRUST_FILE).unlink()
    except FileNotFoundError:
        return False
    return True


def append_trust_log(root: Path, entry: dict[str, object]) -> None:
    """Add one entry to `boltzmann/trust-log.jsonl` (the file rewritten atomically with it appended)."""
    data = _read(root, TRUST_LOG.parts) or b""
    if data and not data.endswith(b"\n"):
        data += b"\n"
    _write(root, TRUST_LOG.parts, data + canonicalize(entry) + b"\n")


def read_remotes(root: Path) -> RemoteMemory:
    """What this brain remembers of references pulled signed (empty when none)."""
    memory = _model(root, REMOTES_FILE, RemoteMemory)
    assert memory is None or isinstance(memory, RemoteMemory)
    return memory or RemoteMemory()


def write_remotes(root: Path, memory: RemoteMemory) -> None:
    """Replace the remote memory."""
    _write(root, REMOTES_FILE, canonicalize(memory.to_json()))
