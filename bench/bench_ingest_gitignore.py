"""Discovery in a git work tree: 10,000 small files in 100 directories under a typical 40-line `.gitignore`
(plus a nested one), against the same tree outside git (no rules read) and with `vcs_ignore=False`.

Usage: python -P bench/bench_ingest_gitignore.py [files]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ingest.sources import SourceFile, discover

# The kind of file `git init` templates and GitHub's Python/Node templates leave at a project's root.
GITIGNORE = """\
__pycache__/
*.py[cod]
*$py.class
*.so
.Python
build/
develop-eggs/
dist/
downloads/
eggs/
.eggs/
lib64/
parts/
sdist/
var/
wheels/
*.egg-info/
.installed.cfg
*.egg
MANIFEST
*.manifest
*.spec
pip-log.txt
htmlcov/
.tox/
.coverage
.coverage.*
.cache
nosetests.xml
coverage.xml
*.cover
.hypothesis/
.pytest_cache/
*.log
local_settings.py
instance/
.scrapy
docs/_build/
target/
!keep.log
"""


def _tree(root: Path, count: int) -> None:
    for i in range(count):
        folder = root / f"dir-{i % 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\nA note is a short text.\n")
    (root / "dir-007" / ".gitignore").write_text("note-0*.md\n!note-00007.md\n")


def _median_ms(root: Path, **options: object) -> tuple[float, int]:
    times, found = [], 0
    for _ in range(5):
        start = time.perf_counter()
        found = sum(isinstance(x, SourceFile) for x in discover(root, **options))  # type: ignore[arg-type]
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, found


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        plain, repo = Path(tmp) / "plain", Path(tmp) / "repo"
        for root in (plain, repo):
            root.mkdir()
            _tree(root, count)
            (root / ".gitignore").write_text(GITIGNORE)
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        _median_ms(plain)  # warm the dentry and inode caches of both trees first
        _median_ms(repo)
        outside, n_outside = _median_ms(plain)
        inside, n_inside = _median_ms(repo)
        off, n_off = _median_ms(repo, vcs_ignore=False)
        print(f"outside git (rules not read)  {n_outside:6d} files  median {outside:7.1f} ms")
        print(f"git work tree, 2 .gitignores  {n_inside:6d} files  median {inside:7.1f} ms  ({inside / outside:.2f}x)")
        print(f"same, --no-ignore             {n_off:6d} files  median {off:7.1f} ms")


if __name__ == "__main__":
    main()
