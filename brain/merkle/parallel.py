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
from multiprocessing.connection import Connection

from brain.concurrency import can_fork, start_worker
from brain.merkle.tree import (
    leaf_hashes_of_sorted_hex,
    merkle_root_of_sorted_hex,
    root_of_nodes,
    sorted_distinct,
    subtree_roots,
)

CHUNK = 1 << 14
# Below this, fork + pipe costs more than the second core saves.
FORK_THRESHOLD = 200_000
_COUNT = struct.Struct(">Q")


def worth_forking(count: int) -> bool:
    """Whether a set of `count` ids is large enough, and the process simple enough, to fork safely."""
    return count >= FORK_THRESHOLD and (os.cpu_count() or 1) >= 2 and can_fork()


def parallel_root_of_hex(hexes: list[str]) -> bytes:
    """The raw root over `hexes` (any order, duplicates allowed; non-empty), hashed by two processes."""
    try:
        worker = start_worker(_child, hexes)
    except OSError:  # no process to be had: one process does it all
        return merkle_root_of_sorted_hex(sorted_distinct(hexes)).raw
    try:
        high = sorted_distinct([h for h in hexes if h >= "8"])
        head = _receive(worker.connection)
        counted = len(head) == _COUNT.size
        low_count = _COUNT.unpack(head)[0] if counted else 0
        fill = min((-low_count) % CHUNK, len(high))
        high_leaves = leaf_hashes_of_sorted_hex(high)
        own_roots = subtree_roots(high_leaves[fill:], CHUNK)
        message = _receive(worker.connection) if counted else b""
    finally:
        worker.close()
    parsed = _parse(message, low_count) if counted and worker.process.exitcode == 0 else None
    if parsed is None:
        low_leaves = leaf_hashes_of_sorted_hex(sorted_distinct([h for h in hexes if h < "8"]))
        return root_of_nodes(subtree_roots(low_leaves + high_leaves, CHUNK))
    low_roots, tail = parsed
    boundary = tail + high_leaves[:fill]
    return root_of_nodes(low_roots + ([root_of_nodes(boundary)] if boundary else []) + own_roots)


def _receive(connection: Connection) -> bytes:
    """One message from the child; empty if it died first (the caller then hashes its half itself)."""
    try:
        return connection.recv_bytes()
    except (EOFError, OSError):
        return b""


def _child(connection: Connection, hexes: list[str]) -> None:
    low = sorted_distinct([h for h in hexes if h < "8"])
    connection.send_bytes(_COUNT.pack(len(low)))
    leaves = leaf_hashes_of_sorted_hex(low)
    aligned = len(leaves) - len(leaves) % CHUNK
    connection.send_bytes(b"".join(subtree_roots(leaves[:aligned], CHUNK)) + b"".join(leaves[aligned:]))
    connection.close()


def _parse(message: bytes, low_count: int) -> tuple[list[bytes], list[bytes]] | None:
    roots, tail = divmod(low_count, CHUNK)
    if len(message) != 32 * (roots + tail):
        return None
    hashes = [message[i : i + 32] for i in range(0, len(message), 32)]
    return hashes[:roots], hashes[roots:]
