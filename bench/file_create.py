"""What creating one small file costs this kernel, the way a brain's blob store creates them, and how a mass
deletion just before changes it (docs/scale.md, session 17).

An ingest creates ~13 files per source (`blobs/sha256/<hex>`, one per blob: the OCI layout's). Three ways are
timed, interleaved, in a new directory each round: `O_CREAT|O_EXCL` under the final name (3 syscalls; leaves a
torn file under its name after a kill, so the store does not use it), an unnamed `O_TMPFILE` linked under its
name (the store's way), and a temporary name renamed over (the portable fallback). Then `--delete` files are
created, synced and deleted, and the store's way is timed right after and `--wait` seconds later: a journal-less
ext4 will not reuse an inode freed in the last minute (`recently_deleted`), and walks past each one per create.

Reported: system-CPU microseconds per file (the kernel's work; wall time follows it on a quiet machine).
Run it on a disk nothing else is deleting on; it deletes what it created at the end.

usage: python bench/file_create.py [--files 20000] [--rounds 3] [--delete 100000] [--wait 65] [--dir DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

PAYLOAD = b"x" * 700  # about a block envelope


def _names(count: int, tag: str) -> list[str]:
    return [hashlib.sha256(f"{tag}{i}".encode()).hexdigest() for i in range(count)]


def create_exclusive(directory: int, names: list[str]) -> None:
    for name in names:
        fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o644, dir_fd=directory)
        os.write(fd, PAYLOAD)
        os.close(fd)


def create_unnamed(directory: int, names: list[str]) -> None:
    for name in names:
        fd = os.open(".", os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o644, dir_fd=directory)
        os.write(fd, PAYLOAD)
        os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=directory)
        os.close(fd)


def create_renamed(directory: int, names: list[str]) -> None:
    for name in names:
        temporary = f".{name}.tmp"
        fd = os.open(temporary, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o644, dir_fd=directory)
        os.write(fd, PAYLOAD)
        os.close(fd)
        os.rename(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)


def system_us_per_file(work: Path, label: str, create: Callable[[int, list[str]], None], names: list[str]) -> float:
    """Create `names` in a new directory under `work`; the system CPU it took, per file."""
    path = work / label
    path.mkdir()
    directory = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        before = os.times()
        create(directory, names)
        after = os.times()
    finally:
        os.close(directory)
    return 1e6 * (after.system - before.system) / len(names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delete", type=int, default=100_000)
    parser.add_argument("--wait", type=float, default=65.0)
    parser.add_argument("--dir", type=Path, default=None, help="where to work (default: a new temporary directory)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-file-create-", dir=args.dir))
    ways = {"O_CREAT|O_EXCL": create_exclusive, "O_TMPFILE+linkat": create_unnamed, "temp+rename": create_renamed}
    try:
        figures: dict[str, list[float]] = {way: [] for way in ways}
        for round_ in range(args.rounds):
            for way, create in ways.items():
                figures[way].append(system_us_per_file(work, f"{way}-{round_}", create, _names(args.files, way)))
        for way, values in figures.items():
            shown = ", ".join(f"{v:.0f}" for v in values)
            print(f"{way:18s} median {statistics.median(values):5.0f} us system per file  (rounds: {shown})")
        doomed = work / "doomed"
        system_us_per_file(work, "doomed", create_unnamed, _names(args.delete, "doomed"))
        os.sync()
        shutil.rmtree(doomed)
        os.sync()
        deleted_at = time.monotonic()
        names = _names(args.files, "after")
        right_after = system_us_per_file(work, "after-0", create_unnamed, names)
        time.sleep(max(0.0, args.wait - (time.monotonic() - deleted_at)))
        later = system_us_per_file(work, "after-1", create_unnamed, names)
        print(f"after deleting {args.delete:,} files: O_TMPFILE+linkat {right_after:.0f} us at once, "
              f"{later:.0f} us {args.wait:.0f} s later")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
