"""Load + save time of the fingerprint index with 10,000 entries (target: <= 50 ms together).

Usage: python bench/bench_ingest_fingerprints.py [entries]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from brain.identity import BlockId, OciDigest
from ingest.fingerprints import FingerprintIndex


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        brain = Path(tmp)
        index = FingerprintIndex.load(brain)
        for i in range(count):
            data = str(i).encode()
            index.record(
                f"/home/user/notes/project-{i % 50}/note-{i:05d}.md", size=1000 + i,
                mtime_ns=1_700_000_000_000_000_000 + i,
                blake3=OciDigest.of(data + b"b3").hex, sha256=OciDigest.of(data), block=BlockId.of(data),
                media_type="text/markdown", pipeline="text-nfc", pipeline_version="1+unicode-14.0.0",
            )  # fmt: skip
        index.save()
        loads, saves, lookups = [], [], []
        for _ in range(7):
            start = time.perf_counter()
            index = FingerprintIndex.load(brain)
            loads.append(time.perf_counter() - start)
            start = time.perf_counter()
            for i in range(count):
                index.lookup(
                    f"/home/user/notes/project-{i % 50}/note-{i:05d}.md", 1000 + i, 1_700_000_000_000_000_000 + i
                )
            lookups.append(time.perf_counter() - start)
            index._dirty = True  # force a rewrite: measure the save itself
            start = time.perf_counter()
            index.save()
            saves.append(time.perf_counter() - start)
        size = (brain / "boltzmann" / "fingerprints.json").stat().st_size
        load, save, look = (statistics.median(x) * 1000 for x in (loads, saves, lookups))
        print(f"{count} entries, {size / 1e6:.1f} MB sidecar")
        print(f"load   median {load:6.1f} ms")
        print(f"save   median {save:6.1f} ms (atomic write with fsync)")
        print(f"load+save     {load + save:6.1f} ms   (target <= 50 ms)")
        print(f"{count} lookups median {look:6.1f} ms")


if __name__ == "__main__":
    main()
