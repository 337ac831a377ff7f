"""RFC 4251 framing: `string` = uint32 big-endian length, then that many bytes."""

from __future__ import annotations

import struct


class FramingError(ValueError):
    """Bytes do not frame as the structure expects (truncated, oversized or trailing bytes)."""


def string(data: bytes) -> bytes:
    """`data` as an RFC 4251 string."""
    return struct.pack(">I", len(data)) + data


def uint32(value: int) -> bytes:
    """`value` as a big-endian uint32."""
    return struct.pack(">I", value)


class Reader:
    """Reads framed fields from a byte string; every read that runs past the end raises `FramingError`."""

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(bytes(data))
        self._at = 0

    def raw(self, count: int) -> bytes:
        """The next `count` bytes, unframed."""
        if self._at + count > len(self._data):
            raise FramingError(f"truncated: needs {count} bytes at offset {self._at}, {self.remaining} left")
        chunk = bytes(self._data[self._at : self._at + count])
        self._at += count
        return chunk

    def uint32(self) -> int:
        """The next big-endian uint32."""
        return int(struct.unpack(">I", self.raw(4))[0])

    def string(self, limit: int | None = None) -> bytes:
        """The next RFC 4251 string (refused when longer than `limit`)."""
        length = self.uint32()
        if limit is not None and length > limit:
            raise FramingError(f"a field of {length} bytes exceeds the {limit} allowed")
        return self.raw(length)

    @property
    def remaining(self) -> int:
        """Bytes not read yet."""
        return len(self._data) - self._at

    def end(self) -> None:
        """Refuse trailing bytes."""
        if self.remaining:
            raise FramingError(f"{self.remaining} trailing byte(s) after the structure")
