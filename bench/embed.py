"""`brain embed` and fused search benchmarks (issue 21 item 3) against a loopback `/v1/embeddings` server.

Usage: python bench/embed.py [--blocks 22500] [--queries 200]

The brain is `bench/search.py`'s generated one (9 blocks per source; canonical passages and the semantic,
procedural and episodic blocks are embedded: about 10,000 units at 22,500 blocks). The server
(`tests/embeddings/server.py`, hashed bag-of-words, 64 dimensions) runs in this process on its own
threads; its CPU time (thread time of its handlers) is subtracted from ours, so "ours" is the CPU this
implementation spends (reading blocks, building texts, the openai client, JSON, encoding, the snapshot).
Fused search: warm `Searcher` in process, query embedded through the real client each time (no query-vector
cache hits: every query is distinct), p50/p95 wall time.

Targets: embed of 10,000 units ≤ 10 s excluding the server's time; fused search p50 ≤ 25 ms.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.search import cached_brain, percentile, query_set  # noqa: E402
from brain.brain import Brain  # noqa: E402
from ingest.embed import embed_brain  # noqa: E402
from retrieval.embedder import Embedder, EmbedSettings  # noqa: E402
from retrieval.query import Searcher, SearchRequest  # noqa: E402
from tests.embeddings.server import embedding_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=22_500)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    master = cached_brain(args.blocks)
    with tempfile.TemporaryDirectory() as work, embedding_server() as (url, server):
        path = Path(work) / "brain"
        shutil.copytree(master, path, ignore=shutil.ignore_patterns("search"))
        brain = Brain.open(path)
        embedder = Embedder(EmbedSettings(model="bow", base_url=url, batch=128))
        cpu, wall = time.process_time(), time.perf_counter()
        report = embed_brain(brain, "bench@example.org", embedder)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        units = sum(m.units for m in report.modules)
        ours = cpu - server.server_seconds
        print(f"embed: {units:,} units in {report.requests} requests: wall {wall:.2f} s, CPU {cpu:.2f} s, "
              f"server CPU {server.server_seconds:.2f} s, ours {ours:.2f} s "
              f"({ours / units * 10_000:.2f} s per 10,000 units; target ≤ 10 s)")
        again = time.perf_counter()
        embed_brain(brain, "bench@example.org", embedder)
        print(f"embed again (nothing new): {time.perf_counter() - again:.2f} s wall")
        embedder.close()
        os.environ["BRAIN_OPENAI_BASE_URL"] = url
        searcher = Searcher(brain)
        searcher.refresh()
        asked = query_set(path, args.queries)
        searcher.search(SearchRequest(query=asked[0]))  # warm: indexes loaded, connections open
        times, fused = [], 0
        for query in asked[1:]:
            start = time.perf_counter()
            result = searcher.search(SearchRequest(query=query))
            times.append((time.perf_counter() - start) * 1000)
            fused += not result.notes
        searcher.close()
        print(f"fused search: {len(times)} queries ({fused} fused), p50 {percentile(times, 0.5):.1f} ms, "
              f"p95 {percentile(times, 0.95):.1f} ms (target p50 ≤ 25 ms)")


if __name__ == "__main__":
    main()
