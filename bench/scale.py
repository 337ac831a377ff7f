"""Scale past one machine (issue 20): ingest at 10k and 100k sources, sharded ingests and their merge, merge cost
against N, and what a pull of a head differing by 1% of its sources moves. Every figure is a whole CLI process
(`wait4`: wall, user+system CPU of the process and its forked workers, the peak RSS of the largest of them).

Sections (all by default; `--only` picks some):
- `ingest`: a fresh ingest of each `--sizes` corpus (bench/ingest.py's notes, ~13 files each): wall, CPU,
  peak RSS, files created in the brain, and the growth from the first size to the last (target <= 11x for 10x;
  peak RSS <= 1 GiB at 100k).
- `shards`: the first size split `--shards` ways (`ingest --shard I/N`, each from the empty brain): the sum
  of the shard ingests against the single ingest (target <= 1.15x), then the n-way merge of the shard heads
  (`merge --allow-unrelated`, the shards' blobs linked into the first shard's brain, as a fetch would put them)
  against the single ingest (target <= 0.15x); the merged module roots must equal the single run's.
- `merge-n`: `--merge-files` sources split 2, 4, 8 ways: the merge's time for the same total against N.
- `pull`: the first size's brain packed, 1% of its sources edited and re-ingested, packed again: the bytes of
  the layers a consumer holding the first must fetch for the second, against a full pull (target <= 5%).

Runs never delete before they are timed (ext4 is slow to create files right after a mass delete). Every
commit syncs the filesystem (`syncfs`), so on a machine shared with other writers a wall time includes
their writeback: read CPU next to wall.

usage: python bench/scale.py [--sizes 10000,100000] [--shards 3] [--merge-files 3000] [--repeat 1]
                             [--only ingest,shards,merge-n,pull] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest import BRAIN, ENV, make_corpus  # noqa: E402 - the bench corpus and environment

ACTOR = ("--actor", "bench@example.org")


@dataclass(frozen=True)
class Measured:
    wall: float
    cpu: float
    rss_mib: float
    stdout: str


def run(*args: str, cwd: Path | None = None) -> Measured:
    """`brain ARGS` as a subprocess: wall, user+system CPU of it and its waited-for children, peak RSS."""
    started = time.perf_counter()
    process = subprocess.Popen([str(BRAIN), *args], env=ENV, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate()
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"brain {' '.join(args)} failed ({process.returncode}): {err.decode()[-2000:]}")
    return Measured(elapsed, 0.0, 0.0, out.decode())


def run_measured(*args: str, cwd: Path | None = None) -> Measured:
    """As `run`, with the process's own accounting (`wait4`)."""
    started = time.perf_counter()
    process = subprocess.Popen([str(BRAIN), *args], env=ENV, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdout is not None
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"brain {' '.join(args)} failed ({os.waitstatus_to_exitcode(status)})")
    return Measured(elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out.decode())


def count_files(root: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(root))


def fresh(work: Path, name: str) -> Path:
    """A new brain directory (never reused: see the module docstring)."""
    index = len(list(work.glob(f"{name}-*")))
    brain = work / f"{name}-{index}"
    os.sync()  # earlier runs' writeback is not this run's cost
    run("--brain", str(brain), "init", "-q")
    return brain


def ingest(brain: Path, corpus: Path, *extra: str) -> Measured:
    return run_measured("--brain", str(brain), *ACTOR, "-q", "ingest", str(corpus), *extra)


def roots(brain: Path) -> dict[str, str]:
    snapshot = head_snapshot(brain)
    document = json.loads((brain / "blobs" / "sha256" / snapshot.removeprefix("sha256:")).read_bytes())
    return {name: ref["root"] for name, ref in document["modules"].items()}


def head_snapshot(brain: Path) -> str:
    return str(json.loads((brain / "boltzmann" / "head.json").read_bytes())["snapshot"])


def median(values: list[float]) -> float:
    return statistics.median(values)


def section_ingest(work: Path, sizes: list[int], repeat: int) -> dict[int, tuple[Measured, Path]]:
    print("## ingest")
    results: dict[int, tuple[Measured, Path]] = {}
    for size in sizes:
        corpus = work / f"corpus-{size}"
        if not corpus.exists():
            megabytes = make_corpus(corpus, size) / 1e6
            print(f"corpus {size:,} notes, {megabytes:.1f} MB")
        runs = []
        brain = work
        for _ in range(repeat if size <= 20_000 else 1):
            brain = fresh(work, f"ingest-{size}")
            runs.append(ingest(brain, corpus))
        wall, cpu, rss = median([r.wall for r in runs]), median([r.cpu for r in runs]), max(r.rss_mib for r in runs)
        files = count_files(brain)
        print(f"ingest {size:>7,} sources  wall {wall:8.2f} s  cpu {cpu:8.2f} s  peak RSS {rss:7.1f} MiB  "
              f"files {files:,} ({files / size:.1f}/source)  {size / wall:,.0f} sources/s  runs {len(runs)}")
        rerun = median([ingest(brain, corpus).wall for _ in range(repeat if size <= 20_000 else 1)])
        print(f"re-ingest {size:>7,} unchanged  wall {rerun:6.2f} s")
        results[size] = (Measured(wall, cpu, rss, ""), brain)
    if len(sizes) > 1:
        first, last = sizes[0], sizes[-1]
        ratio = results[last][0].wall / results[first][0].wall
        cpu_ratio = results[last][0].cpu / results[first][0].cpu
        print(f"growth {first:,} -> {last:,} ({last / first:.0f}x the sources): {ratio:.2f}x the wall, "
              f"{cpu_ratio:.2f}x the cpu (target <= 11x)")
    return results


def link_blobs(source: Path, target: Path) -> None:
    """The blobs of brain `source` into brain `target` (hard links: what a fetch of its head would store)."""
    into = target / "blobs" / "sha256"
    for entry in os.scandir(source / "blobs" / "sha256"):
        if not entry.name.startswith(".") and not os.path.exists(into / entry.name):
            os.link(entry.path, into / entry.name)


def _link_blobs_copy_state(source: str, target: str) -> str:
    """Blobs hard-linked (immutable), everything else copied: the merge appends to the lineage log and writes
    the head, which must not reach the shard's brain through a shared inode (a second merge would find the
    shard's log describing the first merge and rebuild it from every block)."""
    if f"{os.sep}blobs{os.sep}" in source:
        os.link(source, target)
        return target
    return str(shutil.copy2(source, target))


def merge_shards(work: Path, shards: list[Path], name: str) -> tuple[Measured, Path]:
    """The n-way merge of the shard heads into a copy of the first shard's brain (unrelated: from empty)."""
    target = work / name
    shutil.copytree(shards[0], target, copy_function=_link_blobs_copy_state)
    for shard in shards[1:]:
        link_blobs(shard, target)
    os.sync()
    heads = [head_snapshot(s) for s in shards[1:]]
    measured = run_measured("--brain", str(target), *ACTOR, "-q", "merge", *heads, "--allow-unrelated",
                            "--reason", f"bench: {len(shards)} shards")
    return measured, target


def sharded(work: Path, corpus: Path, count: int, label: str) -> tuple[list[Measured], list[Path]]:
    runs, brains = [], []
    for i in range(1, count + 1):
        brain = fresh(work, f"{label}-shard{i}of{count}")
        runs.append(ingest(brain, corpus, "--shard", f"{i}/{count}", "--base", "empty"))
        brains.append(brain)
    return runs, brains


def section_shards(work: Path, size: int, count: int, single: tuple[Measured, Path] | None) -> None:
    print(f"## shards ({count} of {size:,})")
    corpus = work / f"corpus-{size}"
    if not corpus.exists():
        make_corpus(corpus, size)
    if single is None:
        brain = fresh(work, f"ingest-{size}")
        single = (ingest(brain, corpus), brain)
    one = single[0]
    runs, brains = sharded(work, corpus, count, f"s{size}")
    total, cpu = sum(r.wall for r in runs), sum(r.cpu for r in runs)
    print(f"single ingest wall {one.wall:7.2f} s cpu {one.cpu:7.2f} s; {count} shard ingests wall "
          + " + ".join(f"{r.wall:.2f}" for r in runs)
          + f" = {total:.2f} s = {total / one.wall:.2f}x, cpu {cpu:.2f} s = {cpu / one.cpu:.2f}x (target <= 1.15x); "
          f"the slowest shard {max(r.wall for r in runs):.2f} s = {max(r.wall for r in runs) / one.wall:.2f}x "
          "(a matrix's wall)")
    merged, target = merge_shards(work, brains, f"merged-{size}-{count}")
    print(f"merge of {count} shards  wall {merged.wall:7.2f} s  cpu {merged.cpu:7.2f} s  "
          f"peak RSS {merged.rss_mib:6.1f} MiB  = {merged.wall / one.wall:.2f}x the single ingest's wall, "
          f"{merged.cpu / one.cpu:.2f}x its cpu (target <= 0.15x)")
    same = roots(target) == roots(single[1])
    print(f"merged module roots equal the single run's: {same}")
    if not same:
        print(f"  merged {roots(target)}\n  single {roots(single[1])}")


def section_merge_n(work: Path, files: int, counts: list[int]) -> None:
    print(f"## merge against N ({files:,} sources in all)")
    corpus = work / f"corpus-{files}"
    if not corpus.exists():
        make_corpus(corpus, files)
    for count in counts:
        _, brains = sharded(work, corpus, count, f"n{files}")
        merged, _ = merge_shards(work, brains, f"merged-n{files}-{count}")
        incoming = files - files // count
        print(f"N={count:<3} merge wall {merged.wall:7.2f} s  cpu {merged.cpu:7.2f} s  "
              f"peak RSS {merged.rss_mib:6.1f} MiB  "
              f"({merged.cpu / incoming * 1000:.2f} ms cpu per incoming source, ~{incoming:,} incoming)")


def manifest_layers(brain: Path, tag: str) -> list[dict[str, object]]:
    index = json.loads((brain / "index.json").read_bytes())
    name = "org.opencontainers.image.ref.name"
    (entry,) = [m for m in index["manifests"] if m.get("annotations", {}).get(name) == tag]
    manifest = json.loads((brain / "blobs" / "sha256" / str(entry["digest"]).removeprefix("sha256:")).read_bytes())
    return [manifest["config"], *manifest["layers"]]


def section_pull(work: Path, size: int, brain: Path | None) -> None:
    print(f"## pull of a head differing by 1% ({size:,} sources)")
    corpus = work / f"corpus-{size}"
    if brain is None:
        if not corpus.exists():
            make_corpus(corpus, size)
        brain = fresh(work, f"ingest-{size}")
        ingest(brain, corpus)
    run("--brain", str(brain), "-q", "pack", "--tag", "before")
    notes = sorted(corpus.rglob("*.md"))
    edited = notes[:: max(1, len(notes) // (size // 100))][: size // 100]
    past = time.time() - 60
    for note in edited:
        note.write_text(note.read_text() + f"\nA revision of {note.stem} is a change to one note.\n")
        os.utime(note, (past, past))
    ingest(brain, corpus)
    run("--brain", str(brain), "-q", "pack", "--tag", "after")
    before = {str(d["digest"]) for d in manifest_layers(brain, "before")}
    after = manifest_layers(brain, "after")
    full = sum(int(str(d["size"])) for d in after)
    moved = sum(int(str(d["size"])) for d in after if str(d["digest"]) not in before)
    print(f"{len(edited)} of {size:,} sources edited: a full pull {full / 1e6:.1f} MB, the update {moved / 1e6:.1f} MB "
          f"= {100 * moved / full:.1f}% (target <= 5%)")
    for descriptor in after[1:]:
        annotations = descriptor.get("annotations") or {}
        assert isinstance(annotations, dict)
        kind = annotations.get("ai.gaussia.boltzmann.memory-type", "history")
        fetched = "fetched" if str(descriptor["digest"]) not in before else "held"
        print(f"  layer {kind:<10} {int(str(descriptor['size'])) / 1e6:8.2f} MB  {fetched}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--merge-files", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure for corpora up to 20,000 (median)")
    parser.add_argument("--only", default="ingest,shards,merge-n,pull")
    parser.add_argument("--keep", type=Path, help="work directory to keep (default: a temporary one, deleted)")
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",")]
    only = set(options.only.split(","))
    work = options.keep or Path(tempfile.mkdtemp(prefix="brain-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"work {work}; {os.cpu_count()} CPUs; load {os.getloadavg()[0]:.1f}")
    try:
        done = section_ingest(work, sizes, options.repeat) if "ingest" in only else {}
        if "shards" in only:
            section_shards(work, sizes[0], options.shards, done.get(sizes[0]))
        if "merge-n" in only:
            section_merge_n(work, options.merge_files, [2, 4, 8])
        if "pull" in only:
            section_pull(work, sizes[0], done.get(sizes[0], (0.0, None))[1])
    finally:
        if options.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
