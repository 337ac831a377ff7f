"""Where the search index lives: one sidecar directory under `boltzmann/`, safe to delete at any time.

Nothing here is packed, pushed or needed for interchange; `brain search` rebuilds it when it is missing,
stale, torn or corrupt.
"""

from __future__ import annotations

from pathlib import Path

from brain.store.sidecars import SEARCH

SEARCH_DIR = SEARCH.parts
INDEX_FILE = "index.sqlite"
REBUILD_LOCK = "rebuild.lock"  # held while the file is deleted and built again: one rebuild at a time


def search_dir(brain_root: Path) -> Path:
    """The sidecar directory of the search index of the brain at `brain_root`."""
    return Path(brain_root).joinpath(*SEARCH_DIR)


def index_path(brain_root: Path) -> Path:
    """The SQLite file of the search index (plus its `-wal`/`-shm` companions while open)."""
    return search_dir(brain_root) / INDEX_FILE


def rebuild_lock_path(index_file: Path) -> Path:
    """The lock file beside `index_file` that a rebuild holds (empty; only its lock means anything)."""
    return index_file.with_name(REBUILD_LOCK)
