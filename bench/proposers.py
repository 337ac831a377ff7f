"""Heuristic proposer throughput: median ms per KB over a synthetic Markdown corpus (target <= 0.3 ms/KB)."""

from __future__ import annotations

import statistics
import time

from brain.identity import BlockId
from ingest.proposers.base import SourceText
from ingest.proposers.candidates import Task
from ingest.proposers.heuristic import HeuristicProposer

DOC = """# Topic {i}

The widget {i} is a small component that renders a chart.
It draws lines. The default color is blue.
Plain prose follows here with nothing to find in it at all, just words and more words.

## How to install widget {i}

1. Download the archive
2. Unpack it
3. Run the installer

## Glossary

- Chart: a picture of numbers
- Axis: a reference line

## Log

- 2026-03-{day:02d} 09:12 Released version {i}
"""


def main() -> None:
    proposer = HeuristicProposer()
    sources = []
    for i in range(10_000):
        text = DOC.format(i=i, day=i % 28 + 1)
        block_id = BlockId.of(text.encode())
        sources.append((Task(source=block_id, allowed_memory_types=["episodic", "procedural", "semantic"]),
                        SourceText.of(block_id, "text/markdown", text)))
    kilobytes = sum(len(s.text.encode()) for _, s in sources) / 1024
    runs, cpu = [], []
    for _ in range(5):
        start, start_cpu = time.perf_counter(), time.process_time()
        found = sum(len(proposer.propose(t, s).candidates.candidates) for t, s in sources)
        runs.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    median, median_cpu = statistics.median(runs), statistics.median(cpu)
    print(
        f"heuristic: {len(sources)} files, {kilobytes:.0f} KB, {found} candidates, median {median:.2f} s wall "
        f"({median * 1000 / kilobytes:.3f} ms/KB), {median_cpu:.2f} s CPU ({median_cpu * 1000 / kilobytes:.3f} ms/KB)"
    )


if __name__ == "__main__":
    main()
