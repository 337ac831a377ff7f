"""Discovery over 10,000 small files in 100 directories, with a `.brainignore` and an include glob.

Usage: python bench/bench_ingest_discover.py [files]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from ingest.sources import SourceFile, discover, read_head, sniff


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / ".brainignore").write_text("*.tmp\nbuild/\n")
        for i in range(count):
            folder = root / f"dir-{i % 100:03d}"
            folder.mkdir(exist_ok=True)
            (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\nA note is a short text.\n")
        walks, sniffs = [], []
        for _ in range(5):
            start = time.perf_counter()
            found = [x for x in discover(root, ["*.md"], []) if isinstance(x, SourceFile)]
            walks.append(time.perf_counter() - start)
            start = time.perf_counter()
            for item in found:
                sniff(item.path, read_head(item.path))
            sniffs.append(time.perf_counter() - start)
        assert len(found) == count
        print(f"discover {count} files      median {statistics.median(walks) * 1000:7.1f} ms")
        print(f"read_head + sniff each  median {statistics.median(sniffs) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
