"""Which paths discovery skips: `.brainignore` files (gitignore syntax) and `--include/--exclude` globs.

Every pattern is gitwildmatch, matched against the path relative to the directory that declares it
(the ingest root for command-line globs). As in git, the deepest `.brainignore` with a matching pattern
decides (so a nested `!keep.md` re-includes), and a file inside an ignored directory cannot be
re-included because the directory is never entered. `--exclude` wins over everything; `--include`, when
given, keeps only files matching one of its globs (directories are always entered, so `docs/**/*.md`
works).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pathspec
from pathspec.patterns.gitwildmatch import GitWildMatchPatternError

from brain.errors import UsageError

IGNORE_FILE = ".brainignore"


def _spec(patterns: Iterable[str], origin: str) -> pathspec.GitIgnoreSpec:
    try:
        return pathspec.GitIgnoreSpec.from_lines(list(patterns))
    except (GitWildMatchPatternError, ValueError, TypeError) as e:
        raise UsageError(f"bad ignore pattern in {origin}: {e}", hint="use gitignore glob syntax") from e


@dataclass(frozen=True)
class _Level:
    prefix: str  # "" for the root, else "sub/dir/"
    spec: pathspec.GitIgnoreSpec


@dataclass(frozen=True)
class PathFilters:
    """The command-line globs plus the `.brainignore` files of the directories entered so far."""

    include: pathspec.PathSpec | None
    exclude: pathspec.PathSpec | None
    levels: tuple[_Level, ...] = ()

    @classmethod
    def from_globs(cls, include: Iterable[str], exclude: Iterable[str]) -> PathFilters:
        """Filters for `--include` / `--exclude`; raises `UsageError` on a malformed glob."""
        inc, exc = list(include), list(exclude)
        return cls(
            include=_spec(inc, "--include") if inc else None,
            exclude=_spec(exc, "--exclude") if exc else None,
        )

    def entering(self, directory: Path, prefix: str) -> PathFilters:
        """These filters plus `directory/.brainignore` if it exists (`prefix` is its relpath + "/")."""
        ignore_file = directory / IGNORE_FILE
        try:
            text = ignore_file.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return self
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(f"cannot read {ignore_file}: {e}", hint="fix or delete the file") from e
        spec = _spec(text.splitlines(), str(ignore_file))
        return PathFilters(self.include, self.exclude, (*self.levels, _Level(prefix, spec)))

    def skips(self, relpath: str, *, is_dir: bool) -> bool:
        """True if `relpath` (POSIX, relative to the root) must not be yielded or entered."""
        probe = relpath + "/" if is_dir else relpath
        if self.exclude is not None and self.exclude.match_file(probe):
            return True
        for level in reversed(self.levels):
            result = level.spec.check_file(probe[len(level.prefix) :])
            if result.include is not None:
                if result.include:
                    return True
                break
        if is_dir or self.include is None:
            return False
        return not self.include.match_file(relpath)
