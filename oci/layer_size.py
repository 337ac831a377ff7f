"""How far a packed layer inflates, and whether consumers following the reference bound will accept it.

§6.8 readers bound inflation (the reference: max(100 × compressed size, 8 MiB), never above 4 GiB; see
`oci.tarball_reader.inflate_bound`). Highly repetitive text compresses far better than 100:1, so a
legitimate brain can pack into a layer that such readers refuse as a decompression bomb. `pack` measures
each layer's uncompressed tar size while writing it and warns when that happens.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from brain.identity import OciDigest
from oci.tarball import BLOCK_SIZE, RECORD_SIZE, Member
from oci.tarball_reader import MAX_TRUSTED_BOUND, inflate_bound

_READ = 1 << 16
_STEP = 1 << 20


class TarSize:
    """Counts the uncompressed §6.5 tar size of the members streamed through `count`."""

    def __init__(self) -> None:
        self._members = 0

    def count(self, members: Iterable[Member]) -> Iterator[Member]:
        """Yield `members` unchanged, adding each one's header, data and padding to the total."""
        for member in members:
            size = len(member.data) if member.data is not None else Path(member.path or "").stat().st_size
            self._members += BLOCK_SIZE + size + (-size % BLOCK_SIZE)
            yield member

    @property
    def total(self) -> int:
        """Members, the two zero blocks ending the archive, and the padding to a whole record."""
        end = self._members + 2 * BLOCK_SIZE
        return end + (-end % RECORD_SIZE)


def inflated_size(path: Path) -> int:
    """The uncompressed size of the gzip file at `path` (streamed; memory stays constant)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    total = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_READ):
            total += len(inflater.decompress(chunk, _STEP))
            while inflater.unconsumed_tail:
                total += len(inflater.decompress(inflater.unconsumed_tail, _STEP))
    return total


def bound_warning(name: str, digest: OciDigest, size: int, inflated: int) -> str | None:
    """A warning when a layer of `size` compressed bytes inflating to `inflated` exceeds the reference bound."""
    bound = inflate_bound(size)
    if inflated <= bound:
        return None
    refused = (
        f"consumers following the reference inflate bound will refuse the {name} layer {digest}: it inflates to "
        f"{inflated} bytes from {size} ({inflated // max(size, 1)}x), more than their {bound}-byte limit; "
    )
    if inflated > MAX_TRUSTED_BOUND:
        return refused + f"even `brain pull --max-inflate` stops at {MAX_TRUSTED_BOUND} bytes: split the sources"
    return refused + f"`brain pull --max-inflate {inflated}` accepts it from a source you trust"
