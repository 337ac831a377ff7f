"""Heuristic proposer throughput: median ms per KB over a synthetic Markdown corpus (target <= 0.3 ms/KB).

`--eval`: precision, recall and junk rate per format on `fixtures/eval/docs/` (targets: precision >= 0.85,
recall >= 0.7, junk <= 5%), through the real media-type detection and normalization pipelines.
A derived block matches an expected one by memory type and label (semantic: also kind; labels compared
case-insensitively); an episode matches by its date. Junk is judged by `bench/junk.py`'s checks.

usage: python bench/proposers.py [--eval [--show]]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

# Run as a script, this directory is first on sys.path and `bench/ingest.py` would shadow the package.
sys.path[:1] = [str(Path(__file__).resolve().parents[1])]

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


EVAL = Path(__file__).resolve().parents[1] / "fixtures" / "eval" / "docs"
ALL_TYPES = frozenset({"episodic", "procedural", "semantic"})


def _key(memory_type: str, payload: dict) -> tuple[str, ...]:
    if memory_type == "episodic":
        return (memory_type, str(payload.get("date") or payload.get("occurred_at", ""))[:10])
    if memory_type == "semantic":
        return (memory_type, payload["kind"], payload["label"].casefold())
    return (memory_type, payload["label"].casefold())


def evaluate(show: bool) -> None:
    """Score the heuristic against the evaluation corpus; print a table per format."""
    from bench.junk import junk_reasons
    from ingest.normalize import NormalizationError, pipeline_for
    from ingest.proposers.extraction import extract
    from ingest.sources import read_head, sniff

    rows: dict[str, Counter[str]] = {}
    for sidecar in sorted(EVAL.glob("*.expected.json")):
        path = sidecar.with_name(sidecar.name.removesuffix(".expected.json"))
        spec = json.loads(sidecar.read_text())
        row = rows.setdefault(spec["format"], Counter())
        row["documents"] += 1
        media_type = sniff(path, read_head(path)).media_type
        pipeline = pipeline_for(media_type)
        found = []
        if pipeline is not None:
            try:
                text = pipeline.normalize(path).data.decode()
            except NormalizationError as e:
                print(f"{path.name}: {e.code}: {e.detail}")
            else:
                block_id = BlockId.of(path.read_bytes())
                found = extract(SourceText.of(block_id, media_type, text), ALL_TYPES)
        expected = Counter(_key(e["memory_type"], e) for e in spec["expected"])
        derived = Counter(_key(c.memory_type, c.payload) for c in found)
        matched = sum((expected & derived).values())
        row["expected"] += sum(expected.values())
        row["derived"] += len(found)
        row["matched"] += matched
        junk = [c for c in found if junk_reasons(c.memory_type, c.payload)]
        row["junk"] += len(junk)
        if show:
            for missing in expected - derived:
                print(f"{path.name}: missed {missing}")
            for extra in derived - expected:
                print(f"{path.name}: extra  {extra}")
            for candidate in junk:
                print(
                    f"{path.name}: junk   {junk_reasons(candidate.memory_type, candidate.payload)} {candidate.payload}"
                )
    total: Counter[str] = Counter()
    print(f"{'format':<10}{'docs':>5}{'expected':>9}{'derived':>8}{'precision':>10}{'recall':>7}{'junk':>7}")
    for fmt, row in [*sorted(rows.items()), ("all", total)]:
        if fmt != "all":
            total.update(row)
        precision = row["matched"] / row["derived"] if row["derived"] else 1.0
        recall = row["matched"] / row["expected"] if row["expected"] else 1.0
        junk_rate = row["junk"] / row["derived"] if row["derived"] else 0.0
        print(f"{fmt:<10}{row['documents']:>5}{row['expected']:>9}{row['derived']:>8}{precision:>10.2f}{recall:>7.2f}"
              f"{junk_rate:>6.1%}")  # fmt: skip


def main() -> None:
    if "--eval" in sys.argv[1:]:
        evaluate("--show" in sys.argv[1:])
        return
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
