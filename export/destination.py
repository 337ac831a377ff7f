"""Where an export may write: anywhere but inside the brain directory it reads.

An export file or directory inside the brain could replace `boltzmann/head.json`, a blob or `index.json`
and leave a brain no command can open. Both paths are resolved (symlinks included, the missing tail of
the output path taken as written), so an alias, a relative path or a symlinked parent is caught too.
"""

from __future__ import annotations

import os
from pathlib import Path

from brain.errors import UsageError


def outside_brain(brain_root: Path, destination: Path) -> Path:
    """`destination`, checked not to be the brain directory nor inside it; raises `UsageError` (exit 3)."""
    root = Path(os.path.realpath(brain_root))
    target = Path(os.path.realpath(destination))
    if target == root or root in target.parents:
        raise UsageError(
            f"refusing to export to {destination}: it is inside the brain at {brain_root} "
            "(it would overwrite the brain's own files)",
            hint="choose an --to path outside the brain directory",
        )
    return destination
