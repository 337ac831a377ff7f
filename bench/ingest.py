"""Benchmark `brain ingest` end to end through the CLI (a subprocess, as a user runs it); prints medians.

Targets (issue): 10,000 small Markdown/text files (1-4 KB) with the heuristic proposer <= 20 s;
time(10k)/time(1k) <= 12; re-ingest of the unchanged 10,000 <= 2 s; registering a 1 GiB file with
peak RSS <= 150 MB at >= 300 MB/s. Also reported: re-ingest with one file edited (a replacement), and
of the unchanged corpus into the brain without its local caches (as a CI job that pulled it).

File creation dominates the kernel's share, and ext4 makes it slow for minutes after a mass delete (its
inode allocator skips recently freed inodes, `recently_deleted`): runs never delete before they are timed,
and a baseline of the machine's file-create cost is printed first. Deleting the work directory at the end
slows whatever runs next on the same filesystem; wait a few minutes before running the bench again.

usage: python bench/ingest.py [--files 10000] [--repeat 3] [--big-mib 1024] [--keep DIR] [--skip-big]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BRAIN = Path(sys.executable).with_name("brain")
# Bytecode cached as on a user's machine: an environment that sets PYTHONDONTWRITEBYTECODE (this one does) would
# otherwise have every `brain` process compile the modules changed since the last install (~50 ms each).
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_") and k != "PYTHONDONTWRITEBYTECODE"},
    "SOURCE_DATE_EPOCH": "1767225600",
}
WORDS = "cache shard replica node latency eviction policy request client server token index block hash".split()


def make_corpus(root: Path, count: int, seed: int = 1) -> int:
    """`count` Markdown/text files of 1-4 KB (headings, definitions, steps, dated lines); returns bytes."""
    rng = random.Random(seed)
    total = 0
    past = time.time() - 3600  # an hour old, as real notes are (fresh mtimes make fingerprints "racy")
    for i in range(count):
        definition = f"A {WORDS[i % len(WORDS)]}{i} is a {rng.choice(WORDS)} that keeps data close."
        lines = [f"# Topic {i}", "", definition, ""]
        lines += ["## How to deploy", *[f"{k}. {rng.choice(WORDS)} the {rng.choice(WORDS)} {k}" for k in range(1, 5)]]
        lines += ["", f"2026-03-{1 + i % 28:02d} 10:{i % 60:02d} deployed {rng.choice(WORDS)} {i}", ""]
        body = "\n".join(lines)
        target = rng.randint(1024, 4096)
        while len(body) < target:
            body += " ".join(rng.choice(WORDS) for _ in range(12)) + "\n"
        path = root / f"d{i % 100:02d}" / f"n{i:05d}.{'md' if i % 4 else 'txt'}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        os.utime(path, (past, past))
        total += len(body)
    return total


def run(*args: str) -> tuple[float, int]:
    """Run `brain ARGS` and return (wall seconds, peak RSS in KiB of that process)."""
    started = time.perf_counter()
    process = subprocess.Popen([str(BRAIN), *args], env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"brain {' '.join(args)} failed ({process.returncode}): {process.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss


def fresh_ingest(work: Path, corpus: Path, name: str) -> tuple[float, Path]:
    # A new directory per run, all deleted at the end: ext4 skips inodes freed in the last minutes when it
    # allocates (`recently_deleted`), so creating 130k files right after deleting 130k measures the kernel.
    brain = work / f"{name}-{len(list(work.glob(name + '-*')))}"
    os.sync()  # the previous run's and the corpus's writeback is not this run's cost
    run("--brain", str(brain), "init")
    elapsed, _ = run("--brain", str(brain), "--actor", "bench@example.org", "-q", "ingest", str(corpus))
    return elapsed, brain


def file_create_baseline(work: Path, count: int = 5000) -> None:
    """Print what creating one small file costs here now (an ingest of 10,000 notes creates 130,000)."""
    directory = work / "baseline"  # kept until the end: deleting it now would slow the timed runs
    directory.mkdir()
    data = b"x" * 700
    started = time.perf_counter()
    for i in range(count):
        descriptor = os.open(directory / f"{i:064x}", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        os.write(descriptor, data)
        os.close(descriptor)
    per_file = (time.perf_counter() - started) / count
    print(f"file-create baseline: {per_file * 1e6:.0f} us per small file (x 130,000 = {per_file * 130_000:.1f} s)")


def bench_corpus(work: Path, files: int, repeat: int) -> None:
    small, large = work / "corpus-1k", work / "corpus-10k"
    make_corpus(small, files // 10)
    size = make_corpus(large, files)
    print(f"corpus: {files} files, {size / 1e6:.1f} MB; heuristic proposer; CLI subprocess; {repeat} runs each")
    t_small = statistics.median(fresh_ingest(work, small, "b-small")[0] for _ in range(repeat))
    runs = [fresh_ingest(work, large, "b-large") for _ in range(repeat)]
    t_large = statistics.median(t for t, _ in runs)
    brain = runs[-1][1]
    rerun = statistics.median(
        run("--brain", str(brain), "--actor", "bench@example.org", "-q", "ingest", str(large))[0] for _ in range(repeat)
    )
    print(f"ingest {files // 10:>6} files   median {t_small:7.2f} s")
    print(f"ingest {files:>6} files   median {t_large:7.2f} s   (target <= 20 s)  {files / t_large:,.0f} files/s")
    print(f"linearity  time({files})/time({files // 10}) = {t_large / t_small:.1f}   (target <= 12)")
    print(f"re-ingest  {files} unchanged  median {rerun:7.2f} s   (target <= 2 s)")
    replaced = []
    for attempt in range(repeat):  # one edited note per run: a new canonical block, a supersession, demotions
        note = large / "d07" / "n00007.md"
        note.write_text(note.read_text() + f"\nA quorum{attempt} is a majority of the nodes.\n")
        os.utime(note, (time.time() - 60, time.time() - 60))
        replaced.append(run("--brain", str(brain), "--actor", "bench@example.org", "-q", "ingest", str(large))[0])
    print(f"re-ingest  {files} with one file edited  median {statistics.median(replaced):7.2f} s")
    pulled = []
    for _ in range(repeat):  # a CI job: the brain was pulled, so `boltzmann/` holds no cache, index or log
        for local in ("cache", "fingerprints.json"):
            path = brain / "boltzmann" / local
            shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        pulled.append(run("--brain", str(brain), "--actor", "bench@example.org", "-q", "ingest", "--strict",
                          str(large))[0])
    print(f"re-ingest  {files} unchanged, without local caches (a pulled brain)  "
          f"median {statistics.median(pulled):7.2f} s")


def bench_big(work: Path, mib: int, repeat: int) -> None:
    source = work / "big.bin"
    with open(source, "wb") as handle:
        block = random.Random(3).randbytes(1 << 20)
        for i in range(mib):
            handle.write(block[i % 997 :] + block[: i % 997])  # distinct MiBs, cheap to produce
    results = []
    for attempt in range(repeat):
        brain = work / f"b-big-{attempt}"
        os.sync()
        run("--brain", str(brain), "init")
        args = ["--brain", str(brain), "--actor", "bench@example.org", "-q", "ingest", str(source)]
        results.append(run(*args, "--media-type", "application/octet-stream"))
    elapsed = statistics.median(t for t, _ in results)
    rss = max(r for _, r in results) / 1024
    copy = work / "copy.bin"
    started = time.perf_counter()
    shutil.copyfile(source, copy)
    with open(copy, "rb+") as handle:
        os.fsync(handle.fileno())
    baseline = time.perf_counter() - started
    copy.unlink()
    print(f"disk baseline: copy + fsync of the same file {mib * 1.048576 / baseline:,.0f} MB/s")
    print(f"register {mib} MiB file: median {elapsed:.2f} s = {mib * 1.048576 / elapsed:,.0f} MB/s (target >= 300),")
    print(f"    peak RSS {rss:.0f} MB (target <= 150)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-mib", type=int, default=1024)
    parser.add_argument("--skip-big", action="store_true")
    parser.add_argument("--skip-corpus", action="store_true")
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        file_create_baseline(work)
        if not args.skip_corpus:
            bench_corpus(work, args.files, args.repeat)
        if not args.skip_big:
            bench_big(work, args.big_mib, args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
