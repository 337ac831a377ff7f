"""The default origin of a source: where it lives, said so that it means the same on every machine.

Inside a git work tree (the nearest `.git` directory or file at or above the path) the origin is the path
relative to the repository root, so a CI job that pulls a brain and re-ingests a fresh checkout names
every source exactly as the laptop that built it did, whichever directory either ran `brain` from.
Elsewhere it is the path relative to the current directory; a path outside both is recorded absolute.
Paths are taken as named (`os.path.abspath`, symbolic links not resolved): the origin is where the user
sees the file. Either way `a/README.md` and `b/README.md` never share an origin by accident.
"""

from __future__ import annotations

import os
from pathlib import Path

from ingest.sources.ignore import enclosing_repository


def origin_anchor(path: Path) -> Path | None:
    """The directory origins of `path` are relative to (None: none applies, the origin is absolute)."""
    absolute = Path(os.path.abspath(path))
    repository = enclosing_repository(absolute)
    if repository is not None:
        return repository
    cwd = Path(os.getcwd())
    return cwd if absolute == cwd or absolute.is_relative_to(cwd) else None


def origin_prefix(root: Path) -> str:
    """What precedes a relpath under the ingest root `root` in its origin: "" or "docs/" or "/abs/docs/"."""
    absolute = Path(os.path.abspath(root))
    anchor = origin_anchor(absolute)
    if anchor is None:
        return absolute.as_posix().rstrip("/") + "/"
    relative = absolute.relative_to(anchor).as_posix()
    return "" if relative == "." else relative + "/"


def default_origin(path: Path) -> str:
    """The default origin of the source file `path` (see the module docstring)."""
    absolute = Path(os.path.abspath(path))
    return origin_prefix(absolute.parent) + absolute.name
