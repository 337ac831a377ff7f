"""Throughput of one-pass SHA-256 + BLAKE3 hashing (`ingest.hashing.hash_file`) on a 1 GiB file.

Usage: python bench/bench_ingest_hash.py [size_mib]   (target: >= 300 MB/s, page cache warm)
"""

from __future__ import annotations

import hashlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ingest.hashing import Blake3Tee, hash_file, iter_file_chunks


def _median_rate(label: str, size: int, run) -> None:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(3):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"{label:<42} median {median * 1000:8.1f} ms  {size / median / 1e6:8.0f} MB/s")


def main() -> None:
    size_mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.bin"
        with open(path, "wb") as handle:
            block = os.urandom(1 << 20)
            for _ in range(size_mib):
                handle.write(block)
        size = size_mib << 20
        hash_file(path)  # warm the page cache

        def tee() -> None:
            sha = hashlib.sha256()
            for chunk in (stream := Blake3Tee(iter_file_chunks(path))):
                sha.update(chunk)
            stream.hexdigest()

        _median_rate("hash_file (sha256 + blake3, one pass)", size, lambda: hash_file(path))
        _median_rate("Blake3Tee over iter_file_chunks + sha256", size, tee)


if __name__ == "__main__":
    main()
