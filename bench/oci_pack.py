"""Packing a 100,000-block brain, from scratch and unchanged (targets: ≤ 20 s and ≤ 2 s, medians).

The brain is built through the real Writer (not ingest): 40% canonical blocks with a small source blob
each, 40% semantic facts, 20% episodic events, in one commit. "From scratch" deletes the layer cache
sidecar before each run, so every layer is rebuilt and re-compressed; "unchanged" keeps it, and must
write no new blob.

Usage: python bench/oci_pack.py [blocks] [runs]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

# bench/oci.py would shadow the `oci` package: the repository root goes first on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from brain.blocks import Block, CanonicalBlock  # noqa: E402
from brain.brain import Brain  # noqa: E402
from oci.layer_cache import CACHE_FILE  # noqa: E402
from oci.pack import pack  # noqa: E402

TARGET_SCRATCH, TARGET_REPACK = 20.0, 2.0

ACTOR = "bench@example.org"


def build(path: Path, count: int) -> Brain:
    """A brain of `count` blocks in one commit."""
    brain = Brain.init(path)
    with brain.writer(ACTOR) as writer:
        for i in range(count):
            kind = i % 5
            if kind < 2:
                data = f"source document number {i}\n".encode()
                writer.add(CanonicalBlock(blob=writer.put_blob(data), media_type="text/plain", size=len(data)))
            elif kind < 4:
                writer.add(
                    Block.from_payload(
                        "semantic", {"kind": "fact", "label": f"fact {i}", "statement": f"statement {i}"}
                    )
                )
            else:
                writer.add(
                    Block.from_payload("episodic", {"summary": f"event {i}", "occurred_at": "2026-01-01T00:00:00Z"})
                )
        writer.commit()
    return brain


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        brain = build(Path(tmp) / "brain", count)
        print(f"build {count} blocks (setup)    {time.perf_counter() - start:7.2f} s")
        cache = brain.path.joinpath(*CACHE_FILE)
        scratch, digests = [], set()
        for _ in range(runs):
            cache.unlink(missing_ok=True)
            start = time.perf_counter()
            digests.add(pack(brain, "bench").digest)
            scratch.append(time.perf_counter() - start)
        assert len(digests) == 1, "pack is not deterministic"
        blobs = set(brain.blobs.directory.iterdir())
        again = []
        for _ in range(max(runs, 5)):
            start = time.perf_counter()
            result = pack(brain, "bench")
            again.append(time.perf_counter() - start)
            assert all(layer.reused for layer in result.layers)
        assert set(brain.blobs.directory.iterdir()) == blobs, "an unchanged repack wrote a blob"
        size = sum(layer.size for layer in result.layers)
        print(
            f"pack from scratch      median {statistics.median(scratch):7.2f} s  (target 20 s; "
            f"layers {size / 1e6:.1f} MB)"
        )
        print(f"repack unchanged       median {statistics.median(again):7.2f} s  (target 2 s; no new blob)")
        if statistics.median(scratch) > TARGET_SCRATCH or statistics.median(again) > TARGET_REPACK:
            sys.exit("oci_pack: missed a target")


if __name__ == "__main__":
    main()
