"""The index is ready when the brain is (issue 21, item 4): what the index update inside `ingest` costs, and the
first query after it.

Ingests the first `--sources` documentation files of /usr/share/doc (Debian documentation nobody here wrote;
~60 blocks per source, so the default 1,700 make a brain of about 100,000 blocks) twice through the real CLI,
each time into a fresh brain:
- `off`: with the head listener unregistered (the ingest as it was before: the index is built by the first query);
- `on`: as shipped (`ingest` brings the index to its head as part of its work).
Prints the ingest's wall and CPU time (child process), its growth, and the first `brain search` after it.
Targets: first query after the ingest ≤ 1 s at 100,000 blocks; the ingest grows by ≤ 15%.

usage: python bench/index_ready.py [--sources 1700] [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXE = str(Path(sys.executable).with_name("brain"))
# The listener is unregistered where `cli.main` looks it up when it runs (brain.store.head), not on cli.main.
OFF = ("import sys, brain.store.head as h, cli.main as m; h.on_head_moved = lambda listener: None; "
       "sys.exit(m.main(sys.argv[1:]))")
QUERY = "how to verify a gpg signature"


def corpus(target: Path, count: int) -> int:
    """Copy the first `count` regular files of /usr/share/doc to `target` (keeping their package paths)."""
    copied = 0
    for path in sorted(Path("/usr/share/doc").rglob("*")):
        if copied >= count:
            break
        if path.is_symlink() or not path.is_file():
            continue
        destination = target / path.relative_to("/usr/share/doc")
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, destination)
        copied += 1
    return copied


def timed(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, cwd=cwd, check=True, capture_output=True, env={**os.environ, "NO_COLOR": "1"})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def run(work: Path, mode: str) -> dict[str, tuple[float, float]]:
    brain = work / f"brain-{mode}"
    shutil.rmtree(brain, ignore_errors=True)
    prefix = [EXE] if mode == "on" else [sys.executable, "-c", OFF]
    subprocess.run([EXE, "--brain", str(brain), "init"], check=True, capture_output=True)
    out = {"ingest": timed([*prefix, "--brain", str(brain), "--quiet", "ingest", "corpus"], work)}
    out["first query"] = timed([EXE, "--brain", str(brain), "search", QUERY, "--json"], work)
    out["second query"] = timed([EXE, "--brain", str(brain), "search", QUERY, "--json"], work)
    return out


def blocks(brain: Path) -> int:
    sys.path[:1] = [str(Path(__file__).resolve().parents[1])]
    from brain.brain import Brain

    return sum(m.ref.block_count for m in Brain.open(brain).modules().values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", type=int, default=1700)
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args()
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} (shared: compare CPU times)")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        copied = corpus(work / "corpus", options.sources)
        results: dict[str, list[dict[str, tuple[float, float]]]] = {"off": [], "on": []}
        for _ in range(options.repeat):
            for mode in ("off", "on"):  # interleaved: both see the same load
                results[mode].append(run(work, mode))
        print(f"{copied} files of /usr/share/doc, {blocks(work / 'brain-on'):,} blocks")
        medians = {}
        for mode, runs in results.items():
            for step in ("ingest", "first query", "second query"):
                wall = statistics.median(r[step][0] for r in runs)
                cpu = statistics.median(r[step][1] for r in runs)
                medians[mode, step] = (wall, cpu)
                print(f"  index update {mode:<3}  {step:<13} {wall:7.2f} s wall  {cpu:7.2f} s CPU")
        wall_growth = medians["on", "ingest"][0] / medians["off", "ingest"][0] - 1
        cpu_growth = medians["on", "ingest"][1] / medians["off", "ingest"][1] - 1
        print(f"ingest growth: {wall_growth:+.1%} wall, {cpu_growth:+.1%} CPU (target ≤ +15%)")
        print(f"first query after the ingest: {medians['on', 'first query'][0]:.2f} s wall (target ≤ 1 s; "
              f"without the update {medians['off', 'first query'][0]:.2f} s)")


if __name__ == "__main__":
    main()
