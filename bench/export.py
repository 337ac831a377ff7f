"""`brain export` benchmark: records per second, and peak memory that does not grow with the brain's text.

Usage: python bench/export.py [sources ...]   (default 500 4000)

Each brain is built by `brain ingest` from generated Markdown sources of ~6 KB (heuristic proposer), then
`brain export --format jsonl > /dev/null` and `--format markdown` run three times each; the script prints
the median wall time, records per second, and the child's peak RSS. Memory holds the ledger's views
(which grow with the number of blocks), never the blocks' text: a brain with 8x the text should not need
anywhere near 8x the memory.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BRAIN = Path(sys.executable).with_name("brain")
PARAGRAPH = (
    "The {n}th component validates every request before it is stored. Operators rotate its key every "
    "ninety days. A request that fails validation is rejected with a clear error and nothing is written. "
)


MEASURE = (
    "import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True); "
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def build(root: Path, sources: int) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    for n in range(sources):
        body = "\n\n".join(PARAGRAPH.format(n=n) * 4 for _ in range(12))
        (docs / f"doc{n:05d}.md").write_text(f"# Component {n}\n\n{body}\n")
    env = {**os.environ, "BRAIN_ACTOR": "bench@example.org", "SOURCE_DATE_EPOCH": "1767225600"}
    subprocess.run([str(BRAIN), "--brain", str(root / "brain"), "init", "-q"], check=True, env=env)
    subprocess.run([str(BRAIN), "--brain", str(root / "brain"), "ingest", str(docs), "-q"], check=True, env=env,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    return root / "brain"


def run(args: list[str]) -> tuple[float, int]:
    """Wall seconds and the peak RSS (KiB) of one `brain` child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run([str(BRAIN), *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, max(before, peak)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [500, 4000]
    for sources in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            brain = build(Path(tmp), sources)
            text_mb = sum(p.stat().st_size for p in (Path(tmp) / "docs").iterdir()) / 1e6
            for fmt in ("jsonl", "markdown"):
                times, peaks = [], []
                for attempt in range(3):
                    target = Path(tmp) / f"md{attempt}"
                    extra = ["--to", str(target)] if fmt == "markdown" else []
                    seconds, _ = run(["--brain", str(brain), "export", "--format", fmt, *extra])
                    times.append(seconds)
                    shutil.rmtree(target, ignore_errors=True)
                # ru_maxrss of RUSAGE_CHILDREN is the largest child so far: measure peak in a fresh process.
                peak = subprocess.run(
                    [sys.executable, "-c", MEASURE,
                     str(BRAIN), "--brain", str(brain), "export", "--format", "jsonl"],
                    capture_output=True, text=True, check=True,
                ).stdout.strip()  # fmt: skip
                peaks.append(int(peak))
                records = int(subprocess.run(
                    [str(BRAIN), "--brain", str(brain), "export"], capture_output=True, text=True, check=True,
                ).stdout.count("\n"))  # fmt: skip
                median = statistics.median(times)
                print(f"{sources} sources ({text_mb:.1f} MB text), {records} records, {fmt}: median {median:.2f} s, "
                      f"{records / median:.0f} records/s, jsonl peak RSS {peaks[0] / 1024:.0f} MiB")  # fmt: skip


if __name__ == "__main__":
    main()
