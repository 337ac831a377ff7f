"""A hostile-safe reader for gzip-compressed tar layers (§6.8).

Layers come from registries and are treated as hostile: inflation is bounded (max(100 × compressed size,
8 MiB), never above 4 GiB, and never above a caller's cap; a caller that trusts the source may raise it to
`max_inflate`, at most 64 GiB — see `brain pull --max-inflate`), ustar headers are parsed here rather than by
`tarfile` so that every field is checked, and anything that could name, link or create something other
than a plain file under a plain relative path is refused: absolute paths, `..`, links, devices, FIFOs,
directories with content, duplicate names, GNU long-name headers and pax headers that set a path, a link
or a size. Nothing is ever written by this module except through `spool`, which writes one temp file in a
directory the caller chose.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from brain.errors import UntrustedArtifactError
from brain.store.atomic import open_temp, temp_file

BLOCK_SIZE = 512
MIN_BOUND = 8 << 20
MAX_BOUND = 4 << 30
# The most `--max-inflate` may allow per layer: a trusted source still must not fill the disk unbounded.
MAX_TRUSTED_BOUND = 64 << 30
INFLATE_HINT = (
    "if you trust the source, pull or fetch again with --max-inflate BYTES (env BRAIN_MAX_INFLATE; "
    f"at most {MAX_TRUSTED_BOUND} bytes per layer)"
)
_READ_SIZE = 1 << 16
_INFLATE_STEP = 1 << 20
_REGULAR = (b"0", b"\0", b"7")
_NAME = re.compile(r"[!-~]+")
# pax keys that only describe metadata we ignore; any other key (path, linkpath, size, GNU.sparse...) is refused.
_HARMLESS_PAX_KEYS = frozenset(
    {"mtime", "atime", "ctime", "uid", "gid", "uname", "gname", "comment", "charset", "hdrcharset"}
)
_MAX_PAX = 64 << 10


def inflate_bound(compressed_size: int, cap: int | None = None, max_inflate: int | None = None) -> int:
    """The most bytes a layer of `compressed_size` may inflate to (`max_inflate` raises it, up to 64 GiB)."""
    bound = min(max(100 * compressed_size, MIN_BOUND), MAX_BOUND)
    if max_inflate is not None:
        bound = max(bound, min(max_inflate, MAX_TRUSTED_BOUND))
    return bound if cap is None else min(bound, cap)


@dataclass(frozen=True, slots=True)
class TarEntry:
    """A regular-file member: its validated relative path and its size in bytes."""

    name: str
    size: int


class ByteStream(Protocol):
    """What a layer is read from: a blocking `read` (a file, a verifying reader, a fetched blob)."""

    def read(self, size: int = -1, /) -> bytes: ...  # noqa: D102


class _Inflater:
    """Exact-length reads from a gzip stream, refusing to produce more than `bound` bytes."""

    def __init__(self, stream: ByteStream, bound: int, what: str) -> None:
        self._stream = stream
        self._bound = bound
        self._what = what
        self._inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._buffer = bytearray()
        self._produced = 0
        self._eof = False

    def _refuse(self, why: str) -> UntrustedArtifactError:
        return UntrustedArtifactError(f"{self._what}: {why}")

    def _fill(self) -> bool:
        """Inflate some more into the buffer; False once the gzip stream has ended."""
        if self._eof:
            return False
        try:
            if self._inflater.unconsumed_tail:
                out = self._inflater.decompress(self._inflater.unconsumed_tail, _INFLATE_STEP)
            else:
                compressed = self._stream.read(_READ_SIZE)
                if not compressed:
                    raise self._refuse("gzip stream is truncated")
                out = self._inflater.decompress(compressed, _INFLATE_STEP)
        except zlib.error as e:
            raise self._refuse(f"gzip stream is corrupt ({e})") from e
        self._produced += len(out)
        if self._produced > self._bound:
            why = f"{self._what}: inflates beyond the {self._bound}-byte bound (a decompression bomb?)"
            raise UntrustedArtifactError(why, hint=INFLATE_HINT)
        self._buffer += out
        if self._inflater.eof:
            self._eof = True
            if self._inflater.unused_data or self._stream.read(1):
                raise self._refuse("unexpected bytes after the end of the gzip stream")
        return True

    def read(self, size: int) -> bytes:
        """Exactly `size` inflated bytes; refuses a stream that ends early."""
        while len(self._buffer) < size:
            if not self._fill():
                raise self._refuse("tar archive is truncated")
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data

    def drain_zeros(self) -> None:
        """Consume the rest of the stream, which must be zero padding."""
        while True:
            if self._buffer.count(0) != len(self._buffer):
                raise self._refuse("unexpected data after the end-of-archive marker")
            self._buffer.clear()
            if not self._fill():
                return


def _octal(field: bytes, what: str) -> int:
    text = field.rstrip(b"\0 ").lstrip(b" ")
    if not text or not re.fullmatch(rb"[0-7]+", text):
        raise UntrustedArtifactError(f"{what}: malformed numeric header field {field!r}")
    return int(text, 8)


def _check_name(name: str, what: str) -> str:
    parts = name.split("/")
    if (
        not _NAME.fullmatch(name)
        or name.startswith("/")
        or "\\" in name
        or any(part in ("", ".", "..") for part in parts)
    ):
        raise UntrustedArtifactError(
            f"{what}: refused member name {name!r} (absolute, '..', or not a plain relative path)"
        )
    return name


def _pax_keys(data: bytes, what: str) -> set[str]:
    keys: set[str] = set()
    rest = data
    while rest:
        match = re.match(rb"(\d+) ", rest)
        if match is None:
            raise UntrustedArtifactError(f"{what}: malformed pax header")
        length = int(match.group(1))
        record = rest[:length]
        if length <= len(match.group(0)) or len(record) != length or not record.endswith(b"\n") or b"=" not in record:
            raise UntrustedArtifactError(f"{what}: malformed pax header record")
        keys.add(record[len(match.group(0)) :].split(b"=", 1)[0].decode("utf-8", "replace"))
        rest = rest[length:]
    return keys


class LayerReader:
    """Iterate the regular-file members of one gzip tar layer, enforcing every §6.8 safety rule."""

    def __init__(
        self, stream: ByteStream, *, compressed_size: int, what: str, cap: int | None = None,
        max_inflate: int | None = None
    ) -> None:
        self._inflater = _Inflater(stream, inflate_bound(compressed_size, cap, max_inflate), what)
        self._what = what
        self._seen: set[str] = set()
        self._left = 0

    def _header(self) -> tuple[str, int, bytes] | None:
        block = self._inflater.read(BLOCK_SIZE)
        if block.count(0) == BLOCK_SIZE:
            return None
        expected = _octal(block[148:156], self._what)
        actual = sum(block[:148]) + 8 * 32 + sum(block[156:])
        if expected != actual:
            raise UntrustedArtifactError(f"{self._what}: tar header checksum mismatch")
        magic = block[257:265]
        if magic not in (b"ustar\x0000", b"ustar  \0"):
            raise UntrustedArtifactError(f"{self._what}: not a ustar archive (magic {magic!r})")
        if block[124] & 0x80:
            raise UntrustedArtifactError(f"{self._what}: base-256 size fields are refused")
        size = _octal(block[124:136], self._what)
        raw_name = self._text_field(block[0:100], "name")
        prefix = self._text_field(block[345:500], "prefix") if magic == b"ustar\x0000" else b""
        try:
            name = ((prefix + b"/" if prefix else b"") + raw_name).decode("ascii")
        except UnicodeDecodeError:
            raise UntrustedArtifactError(f"{self._what}: refused non-ASCII member name {raw_name!r}") from None
        return name, size, block[156:157]

    def _text_field(self, field: bytes, label: str) -> bytes:
        """A NUL-terminated header field; bytes after the NUL would be a second, hidden name: refused."""
        text, _, rest = field.partition(b"\0")
        if rest.count(0) != len(rest):
            raise UntrustedArtifactError(
                f"{self._what}: refused member whose {label} field hides bytes after its NUL ({text!r} ...)"
            )
        return text

    def _skip(self, count: int) -> None:
        remaining = count
        while remaining:
            step = min(remaining, _INFLATE_STEP)
            self._inflater.read(step)
            remaining -= step

    def _data(self) -> Iterator[bytes]:
        while self._left:
            step = min(self._left, _INFLATE_STEP)
            chunk = self._inflater.read(step)
            self._left -= step
            yield chunk

    def members(self) -> Iterator[tuple[TarEntry, Iterator[bytes]]]:
        """Yield each regular member with an iterator over its data; unread data is skipped for you."""
        while True:
            header = self._header()
            if header is None:
                self._inflater.drain_zeros()
                return
            name, size, kind = header
            if kind in (b"x", b"g"):
                if size > _MAX_PAX:
                    raise UntrustedArtifactError(f"{self._what}: oversized pax header")
                keys = _pax_keys(self._inflater.read(size + (-size % BLOCK_SIZE))[:size], self._what)
                if not keys <= _HARMLESS_PAX_KEYS:
                    refused = ", ".join(sorted(keys - _HARMLESS_PAX_KEYS))
                    raise UntrustedArtifactError(f"{self._what}: refused pax header setting {refused}")
                continue
            if kind == b"5":
                _check_name(name.rstrip("/"), self._what)
                if size:
                    raise UntrustedArtifactError(f"{self._what}: directory member {name!r} carries data")
                continue
            if kind not in _REGULAR:
                label = {b"1": "hard link", b"2": "symbolic link", b"3": "character device", b"4": "block device",
                         b"6": "FIFO", b"L": "GNU long name", b"K": "GNU long link"}.get(kind, f"type {kind!r}")
                raise UntrustedArtifactError(f"{self._what}: refused {label} member {name!r}")
            _check_name(name, self._what)
            if name in self._seen:
                raise UntrustedArtifactError(f"{self._what}: duplicate member {name!r}")
            self._seen.add(name)
            self._left = size
            yield TarEntry(name, size), self._data()
            # Whatever the consumer left unread, plus the padding, is skipped before the next header.
            self._skip(self._left + (-size % BLOCK_SIZE))
            self._left = 0


def read_all(chunks: Iterator[bytes], limit: int, what: str) -> bytes:
    """Collect a member's data in memory, refusing more than `limit` bytes."""
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > limit:
            raise UntrustedArtifactError(f"{what}: member exceeds {limit} bytes")
    return bytes(out)


@dataclass(frozen=True, slots=True)
class Spooled:
    """A member copied into a temp file: its path, SHA-256 hex and size."""

    path: Path
    sha256: str
    size: int


def spool_file(chunks: Iterator[bytes], directory: Path) -> Spooled:
    """Copy a member into a new `.tmp-` file in `directory` while hashing; the caller removes or renames it."""
    name, fd = open_temp(directory)
    hasher = hashlib.sha256()
    size = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            for chunk in chunks:
                hasher.update(chunk)
                handle.write(chunk)
                size += len(chunk)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)
        raise
    return Spooled(Path(name), hasher.hexdigest(), size)


@contextlib.contextmanager
def spool(chunks: Iterator[bytes], directory: Path) -> Iterator[Spooled]:
    """Copy a member into a `.tmp-` file in `directory` while hashing; the file is removed after the yield."""
    hasher = hashlib.sha256()
    size = 0
    with temp_file(Path(directory)) as (temp, handle):
        for chunk in chunks:
            hasher.update(chunk)
            handle.write(chunk)
            size += len(chunk)
        handle.flush()
        yield Spooled(temp, hasher.hexdigest(), size)
