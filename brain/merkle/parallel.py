"""A two-process split of the Merkle root for very large sets (one extra core halves the hashing).

Block ids are SHA-256 outputs, so splitting on the first hex digit halves the set; each process sorts and
hashes its half. Any aligned full 2^14-leaf subtree is one node of the level-by-level fold, so each side
folds its own aligned chunks: the child first tells the parent how many distinct leaves it holds (which
fixes the alignment), then sends its chunk roots and its unaligned tail leaves; the parent hashes the one
chunk straddling the boundary and folds the rest. Any failure of the child falls back to one process.
"""

from __future__ import annotations

import os
import struct
import threading

from brain.merkle.tree import leaf_hashes_of_sorted_hex, root_of_nodes, sorted_distinct, subtree_roots

CHUNK = 1 << 14
# Below this, fork + pipe costs more than the second core saves.
FORK_THRESHOLD = 200_000
_COUNT = struct.Struct(">Q")


def worth_forking(count: int) -> bool:
    """Whether a set of `count` ids is large enough, and the process simple enough, to fork safely."""
    return (
        count >= FORK_THRESHOLD
        and hasattr(os, "fork")
        and (os.cpu_count() or 1) >= 2
        # Forking a multi-threaded process can deadlock the child on a lock another thread held.
        and threading.active_count() == 1
    )


def parallel_root_of_hex(hexes: list[str]) -> bytes:
    """The raw root over `hexes` (any order, duplicates allowed; non-empty), hashed by two processes."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child, which leaves through os._exit
        status = 1
        try:
            os.close(read_end)
            _child(write_end, [h for h in hexes if h < "8"])
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    try:
        high = sorted_distinct([h for h in hexes if h >= "8"])
        head = _read_exactly(read_end, _COUNT.size)
        low_count = _COUNT.unpack(head)[0] if len(head) == _COUNT.size else 0
        fill = min((-low_count) % CHUNK, len(high))
        high_leaves = leaf_hashes_of_sorted_hex(high)
        own_roots = subtree_roots(high_leaves[fill:], CHUNK)
        message = _read_exactly(read_end, -1)
    finally:
        os.close(read_end)
        _, status = os.waitpid(pid, 0)
    parsed = _parse(message, low_count) if status == 0 and len(head) == _COUNT.size else None
    if parsed is None:
        low_leaves = leaf_hashes_of_sorted_hex(sorted_distinct([h for h in hexes if h < "8"]))
        return root_of_nodes(subtree_roots(low_leaves + high_leaves, CHUNK))
    low_roots, tail = parsed
    boundary = tail + high_leaves[:fill]
    return root_of_nodes(low_roots + ([root_of_nodes(boundary)] if boundary else []) + own_roots)


def _child(fd: int, low: list[str]) -> None:
    low = sorted_distinct(low)
    _write_all(fd, _COUNT.pack(len(low)))
    leaves = leaf_hashes_of_sorted_hex(low)
    aligned = len(leaves) - len(leaves) % CHUNK
    _write_all(fd, b"".join(subtree_roots(leaves[:aligned], CHUNK)) + b"".join(leaves[aligned:]))
    os.close(fd)


def _parse(message: bytes, low_count: int) -> tuple[list[bytes], list[bytes]] | None:
    roots, tail = divmod(low_count, CHUNK)
    if len(message) != 32 * (roots + tail):
        return None
    hashes = [message[i : i + 32] for i in range(0, len(message), 32)]
    return hashes[:roots], hashes[roots:]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, size: int) -> bytes:
    """Read `size` bytes, or to end of file when `size` is -1 (fewer only at end of file)."""
    chunks: list[bytes] = []
    got = 0
    while size < 0 or got < size:
        chunk = os.read(fd, 1 << 20 if size < 0 else size - got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)
