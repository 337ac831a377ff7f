"""The travelling vector-index payload (§5.2 `embedding_model`/`index_digest`, §6.2 vector-index layer).

The protocol leaves the payload opaque; this implementation's format, `boltzmann-vectors/1`
(documented in docs/search.md), is:

1. 8 bytes magic `BZVECT01`;
2. a 4-byte little-endian length, then that many bytes of a JCS header
   `{"count":N,"dimension":D,"format":"boltzmann-vectors/1","memory_type":M,"model":ID}`;
3. N entries, strictly ascending by (id, locator): the 32 raw bytes of a member's block id, a 2-byte
   little-endian length and the UTF-8 locator (empty: the whole block; else the passage of a source);
4. N × D float32 little-endian values, the vectors in entry order, each of unit length (or all zero).

`decode` treats the bytes as hostile: every length is checked against the rest, the header must be
canonical, the model and memory type must be what the module reference says, every id must be a member,
and every value finite. Anything else raises `UntrustedArtifactError` naming what lies.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from brain.identity.jcs import canonicalize
from brain.errors import BrainError, UntrustedArtifactError

MAGIC = b"BZVECT01"
FORMAT = "boltzmann-vectors/1"
MAX_DIMENSION = 65_536
MAX_LOCATOR_BYTES = 1024
_HEADER_KEYS = {"count", "dimension", "format", "memory_type", "model"}


@dataclass(frozen=True)
class VectorIndex:
    """A decoded payload: who made it, and one unit-length float32 row per (block id hex, locator)."""

    model: str
    memory_type: str
    dimension: int
    keys: tuple[tuple[str, str], ...]  # (block id hex, locator or "")
    vectors: np.ndarray  # float32, shape (count, dimension)

    @property
    def count(self) -> int:
        """How many entries."""
        return len(self.keys)


def normalized(rows: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (an all-zero row stays zero), as float32."""
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True) if rows.size else np.ones((len(rows), 1), np.float32)
    return (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def encode(model: str, memory_type: str, dimension: int, entries: Sequence[tuple[str, str, np.ndarray]]) -> bytes:
    """The payload of `entries` (block id hex, locator, vector; unit length, see `normalized`), sorted here."""
    if not model or not 1 <= dimension <= MAX_DIMENSION:
        raise ValueError(f"bad model {model!r} or dimension {dimension}")
    ordered = sorted(entries, key=lambda e: (bytes.fromhex(e[0]), e[1].encode("utf-8")))
    header = canonicalize({"count": len(ordered), "dimension": dimension, "format": FORMAT,
                           "memory_type": memory_type, "model": model})
    parts = [MAGIC, struct.pack("<I", len(header)), header]
    for hex_id, locator, _ in ordered:
        raw = locator.encode("utf-8")
        parts += [bytes.fromhex(hex_id), struct.pack("<H", len(raw)), raw]
    if ordered:
        matrix = np.stack([np.asarray(v, dtype=np.float32).reshape(dimension) for _, _, v in ordered])
        parts.append(matrix.astype("<f4").tobytes())
    return b"".join(parts)


def decode(data: bytes, *, model: str | None, memory_type: str, members: Collection[str] | None) -> VectorIndex:
    """The index in `data`, checked against the module reference's model and the module's members (hex ids;
    None: not checked). Raises `UntrustedArtifactError` saying what lies."""
    header, offset = _header(data, model, memory_type)
    count, dimension = header["count"], header["dimension"]
    keys, offset = _entries(data, offset, count, None if members is None else set(members), memory_type)
    if len(data) - offset != count * dimension * 4:
        raise _lie(memory_type, f"{len(data) - offset} bytes of vectors, expected {count} × {dimension} × 4 "
                   "(wrong length)")
    # A read-only view over `data` (no copy on a little-endian machine).
    vectors = np.frombuffer(data, dtype="<f4", offset=offset).reshape(count, dimension).astype(np.float32, copy=False)
    if count and not np.isfinite(vectors).all():
        raise _lie(memory_type, "a vector holds NaN or infinity")
    return VectorIndex(model=header["model"], memory_type=memory_type, dimension=dimension, keys=tuple(keys),
                       vectors=vectors)


def _lie(memory_type: str, what: str) -> UntrustedArtifactError:
    return UntrustedArtifactError(f"{memory_type} vector index: {what}",
                                  hint="re-run `brain embed` where it was made, or pull again")


def _header(data: bytes, model: str | None, memory_type: str) -> tuple[dict[str, Any], int]:
    if data[:8] != MAGIC or len(data) < 12:
        raise _lie(memory_type, f"not a {FORMAT} payload (bad magic)")
    (size,) = struct.unpack_from("<I", data, 8)
    if 12 + size > len(data):
        raise _lie(memory_type, "header runs past the end (wrong length)")
    raw = data[12 : 12 + size]
    try:
        header = json.loads(raw)
    except ValueError:
        raise _lie(memory_type, "header is not JSON") from None
    if not isinstance(header, dict) or set(header) != _HEADER_KEYS or _jcs(header) != raw:
        raise _lie(memory_type, "header is not the canonical {count, dimension, format, memory_type, model} object")
    count, dimension = header["count"], header["dimension"]
    if header["format"] != FORMAT:
        raise _lie(memory_type, f"format {str(header['format'])[:40]!r} is not {FORMAT}")
    if not (isinstance(count, int) and isinstance(dimension, int) and count >= 0 and 1 <= dimension <= MAX_DIMENSION):
        raise _lie(memory_type, "count or dimension out of range")
    if header["memory_type"] != memory_type:
        raise _lie(memory_type, f"header names module {str(header['memory_type'])[:40]!r}")
    if not isinstance(header["model"], str) or (model is not None and header["model"] != model):
        raise _lie(memory_type, f"header names model {str(header['model'])[:80]!r}, the module reference {model!r}")
    return header, 12 + size


def _entries(
    data: bytes, offset: int, count: int, wanted: set[str] | None, memory_type: str
) -> tuple[list[tuple[str, str]], int]:
    keys: list[tuple[str, str]] = []
    previous: tuple[bytes, bytes] | None = None
    for _ in range(count):
        if offset + 34 > len(data):
            raise _lie(memory_type, "entries run past the end (wrong length)")
        raw_id = data[offset : offset + 32]
        (length,) = struct.unpack_from("<H", data, offset + 32)
        if length > MAX_LOCATOR_BYTES or offset + 34 + length > len(data):
            raise _lie(memory_type, "a locator runs past the end (wrong length)")
        raw_locator = data[offset + 34 : offset + 34 + length]
        offset += 34 + length
        if previous is not None and (raw_id, raw_locator) <= previous:
            raise _lie(memory_type, "entries are not strictly ascending")
        previous = (raw_id, raw_locator)
        try:
            locator = raw_locator.decode("utf-8")
        except UnicodeDecodeError:
            raise _lie(memory_type, "a locator is not UTF-8") from None
        hex_id = raw_id.hex()
        if wanted is not None and hex_id not in wanted:
            raise _lie(memory_type, f"sha256:{hex_id} is not a member of the module")
        keys.append((hex_id, locator))
    return keys, offset


def _jcs(value: object) -> bytes | None:
    try:
        return canonicalize(value)
    except (BrainError, ValueError, TypeError):
        return None
