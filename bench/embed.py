"""`brain embed` and fused search benchmarks (issue 21 item 3) against a loopback `/v1/embeddings` server.

Usage: python bench/embed.py [--blocks 22500] [--queries 200]
       python bench/embed.py --fused 27700,277000 [--queries 200] [--rounds 2] [--dimension 64]

The brains are `bench/search.py`'s generated ones (9 blocks per source; canonical passages and the
semantic, procedural and episodic blocks are embedded: about 10,000 units at 27,700 blocks, 100,000 at
277,000). The server (`tests/embeddings/server.py`, hashed bag-of-words, 64 dimensions unless
`--dimension`) runs in this process on its own threads; its CPU (thread time of its handlers) and wall time
(request read to answer written) are counted apart, so "ours" is what this implementation spends.

Without `--fused`: the embed of a copy of the brain (wall, CPU, the server's CPU, ours per 10,000 units),
the embed again with nothing new, then fused search in one warm `Searcher`.

`--fused SIZES`: per size, a cached embedded copy of the brain (`brain-bench-embedded-N` in the temp
directory, index built), then `--rounds` rounds of `--queries` distinct queries (no query-vector cache
hits), each round three ways, interleaved:
- `warm searcher`: one `Searcher` for every query (serve, `bench/search.py`);
- `sdk`: `sdk.Brain.search`, a new `Searcher` per query (what a script does);
- `lexical`: a warm searcher with no endpoint configured (the lexical answer plus its note: the floor).
Printed per way: p50/p95 wall per query, median CPU per query (ours: the server's CPU taken off), and the
server's own wall and CPU per query; the first query of a round (indexes loaded, client made) apart.

Targets: embed of 10,000 units ≤ 10 s excluding the server's time; fused search p50 ≤ 25 ms. The machine
is shared: compare the CPU columns, and interleave A/B runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.search import cached_brain, percentile, query_set  # noqa: E402
from brain.brain import Brain  # noqa: E402
from brain.errors import BrainError  # noqa: E402
from brain.store.head import head_path  # noqa: E402
from ingest.embed import embed_brain  # noqa: E402
from retrieval.embedder import Embedder, EmbedSettings  # noqa: E402
from retrieval.query import Searcher, SearchRequest  # noqa: E402
from tests.embeddings.server import Behaviour, embedding_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blocks", type=int, default=22_500)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--fused", metavar="SIZES", help="fused search only, at these brain sizes (blocks)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--dimension", type=int, default=64)
    args = parser.parse_args()
    if args.fused:
        for blocks in (int(b) for b in args.fused.split(",")):
            bench_fused(blocks, args.queries, args.rounds, args.dimension)
        return
    bench_embed(args.blocks, args.queries)


def bench_embed(blocks: int, queries: int) -> None:
    master = cached_brain(blocks)
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
        asked = query_set(path, queries)
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


def embedded_brain(blocks: int, url: str, dimension: int) -> Path:
    """A cached copy of the generated brain with every module embedded (model `bow`) and its index built."""
    master = cached_brain(blocks)
    path = master.with_name(master.name.replace("search", f"embedded-d{dimension}"))
    marker = path / "boltzmann" / "bench-embedded-head"
    try:
        Brain.open(path)
        if marker.read_bytes() == head_path(path).read_bytes():
            return path
    except (BrainError, OSError):
        pass
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(master, path, ignore=shutil.ignore_patterns("search"))
    brain = Brain.open(path)
    start = time.perf_counter()
    embedder = Embedder(EmbedSettings(model="bow", base_url=url, batch=128))
    report = embed_brain(brain, "bench@example.org", embedder)
    embedder.close()
    Searcher(brain).refresh()
    marker.write_bytes(head_path(path).read_bytes())
    units = sum(m.units for m in report.modules)
    print(f"(embedded {units:,} units in {time.perf_counter() - start:.1f} s: {path})")
    return path


class Way:
    """One way of searching, its per-query measurements over the rounds."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.wall: list[float] = []
        self.ours_cpu: list[float] = []
        self.server_wall: list[float] = []
        self.server_cpu: list[float] = []
        self.first: list[float] = []
        self.fused = 0

    def run(self, server: Behaviour, queries: list[str], search: Callable[[str], Any]) -> None:
        for n, query in enumerate(queries):
            served, server_cpu = server.server_wall, server.server_seconds
            start, cpu = time.perf_counter(), time.process_time()
            result = search(query)
            wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            server_cpu = server.server_seconds - server_cpu
            if n == 0:
                self.first.append(wall * 1000)
                continue
            self.wall.append(wall * 1000)
            self.ours_cpu.append((cpu - server_cpu) * 1000)
            self.server_wall.append((server.server_wall - served) * 1000)
            self.server_cpu.append(server_cpu * 1000)
            self.fused += not result.notes

    def report(self) -> None:
        print(f"  {self.name:<15} p50 {percentile(self.wall, 0.5):6.1f} ms  p95 {percentile(self.wall, 0.95):6.1f} ms  "
              f"CPU ours {statistics.median(self.ours_cpu):5.1f} ms  server wall "
              f"{statistics.median(self.server_wall):4.1f} ms CPU {statistics.median(self.server_cpu):4.1f} ms  "
              f"first {statistics.median(self.first):6.1f} ms  ({self.fused} of {len(self.wall)} fused)")


def bench_fused(blocks: int, queries: int, rounds: int, dimension: int) -> None:
    with embedding_server(Behaviour(dimension=dimension)) as (url, server):
        path = embedded_brain(blocks, url, dimension)
        brain = Brain.open(path)
        snapshot = brain.snapshot()
        assert snapshot is not None
        units = sum(len(_units(brain, ref)) for ref in snapshot.modules.values())
        print(f"\n== fused search: {blocks:,} blocks, {units:,} units, dimension {dimension} (median of {rounds} "
              f"round(s) of {queries} queries; the first query of a round apart)")
        asked = query_set(path, queries * rounds)
        ways = [Way("warm searcher"), Way("sdk"), Way("lexical")]
        from sdk import Brain as SdkBrain

        for r in range(rounds):
            batch = asked[r * queries : (r + 1) * queries]
            _forget()
            os.environ["BRAIN_OPENAI_BASE_URL"] = url
            searcher = Searcher(brain)
            ways[0].run(server, batch, lambda q, s=searcher: s.search(SearchRequest(query=q)))
            _forget()
            library = SdkBrain.open(path)
            ways[1].run(server, batch, library.search)
            searcher.close()
            del os.environ["BRAIN_OPENAI_BASE_URL"]
            lexical = Searcher(brain)
            ways[2].run(server, batch, lambda q, s=lexical: s.search(SearchRequest(query=q)))
            lexical.close()
        for way in ways:
            way.report()


def _units(brain: Brain, ref: Any) -> list[Any]:
    if ref.index_digest is None:
        return []
    from brain.vectors import decode

    return list(decode(brain.blobs.get(ref.index_digest), model=None, memory_type=ref.memory_type,
                       members=None).keys)


def _forget() -> None:
    """The process state a new process has (this implementation's caches; none before it had them)."""
    from retrieval import fusion

    forget = getattr(fusion, "forget", None)
    if forget is not None:
        forget()


if __name__ == "__main__":
    main()
