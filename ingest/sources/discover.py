"""Find the source files under an ingest root, in a deterministic order, reporting what cannot be read.

Order: ascending by relative POSIX path (Python string order), produced while walking, so discovery
streams. Siblings are sorted by name with a `/` appended to directory names; every path below a
directory then falls in the same contiguous range as in a global sort.

Decisions (documented in the README's ingest section):
- What is skipped is `ingest.sources.ignore`'s business (ignore files, globs, caches); `.git` entries and
  ignore files are never sources; directories named in `skip` (the brain directory itself, when it lives
  under the root) are not entered, nor are virtualenvs and other brains below the root.
- Each `SourceFile` carries its default origin (`ingest.sources.origins`): the path relative to the
  enclosing repository root, else to the current directory.
- Empty files are reported as `empty` and not registered: they carry nothing to cite, and every empty
  file would collapse into the same canonical block anyway.
- Symbolic links are followed only when their real target stays inside the real root; a link to one of
  its own ancestors (or to itself) is a `symlink-loop`.
- FIFOs, sockets and devices are `not-regular` (reading one could block forever).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from brain.errors import NotFoundError, UsageError
from ingest.sources import problems as p
from ingest.sources.ignore import GIT_DIR, GITIGNORE_FILE, IGNORE_FILE, PathFilters, is_foreign_tree
from ingest.sources.origins import origin_prefix
from ingest.sources.problems import SourceFile, SourceProblem

_NEVER_SOURCES = frozenset({GIT_DIR, IGNORE_FILE, GITIGNORE_FILE})


def discover(
    root: Path,
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    *,
    skip: Iterable[Path] = (),
    vcs_ignore: bool = True,
) -> Iterator[SourceFile | SourceProblem]:
    """Every source under `root` (a directory or one file), ascending by relpath, with its problems.

    `vcs_ignore=False` (`--no-ignore`) stops reading `.gitignore` and `.git/info/exclude`.
    """
    root = Path(root)
    try:
        root_stat = root.stat()
    except FileNotFoundError:
        raise NotFoundError(f"source {root} does not exist", hint="check the path you passed") from None
    except OSError as e:
        raise NotFoundError(f"source {root} cannot be read: {e.strerror}") from None
    filters = PathFilters.from_globs(include, exclude, use_git=vcs_ignore)
    if not stat.S_ISDIR(root_stat.st_mode):
        if not filters.skips(root.name, is_dir=False):
            yield _examine_file(root, root.name, root_stat, origin_prefix(root.parent))
        return
    _refuse_a_brain(root)
    real_root = os.path.realpath(root)
    walker = _Walker(real_root, _identities(skip), origin_prefix(root))
    filters = filters.for_root(Path(real_root))
    yield from walker.walk(root, "", filters, frozenset({(root_stat.st_dev, root_stat.st_ino)}))


def _refuse_a_brain(root: Path) -> None:
    """Another brain's store is blobs and JCS records, never sources: naming one is a mistake, said early."""
    try:
        names = os.listdir(root)
    except OSError:
        return  # the walk reports it as this root's problem
    if is_foreign_tree(names) == "brain":
        raise UsageError(
            f"{root} is a brain directory (oci-layout and boltzmann/), not a folder of sources",
            hint="ingest the documents it was built from, or bring its knowledge in with `brain pull`",
        )


def _identities(paths: Iterable[Path]) -> frozenset[tuple[int, int]]:
    found = set()
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        found.add((st.st_dev, st.st_ino))
    return frozenset(found)


def _examine_file(path: Path, relpath: str, st: os.stat_result, origin_prefix: str) -> SourceFile | SourceProblem:
    """A `SourceFile` for a stat'ed path, or the reason it is not one."""
    if not stat.S_ISREG(st.st_mode):
        return SourceProblem(relpath=relpath, code=p.NOT_REGULAR, detail="not a regular file")
    if st.st_size == 0:
        return SourceProblem(relpath=relpath, code=p.EMPTY, detail="empty file, not registered")
    try:
        # Opening proves readability now rather than halfway through registration.
        os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
    except FileNotFoundError:
        return SourceProblem(relpath=relpath, code=p.VANISHED, detail="deleted while ingesting")
    except OSError as e:
        return SourceProblem(relpath=relpath, code=p.UNREADABLE, detail=e.strerror or str(e))
    origin = origin_prefix + relpath
    return SourceFile(path=path, relpath=relpath, size=st.st_size, mtime_ns=st.st_mtime_ns, origin=origin)


class _Walker:
    """One recursive walk; holds what every level needs to know about the root."""

    def __init__(self, real_root: str, skip: frozenset[tuple[int, int]], origin_prefix: str) -> None:
        self.real_root = real_root
        self.skip = skip
        self.origin_prefix = origin_prefix

    def _inside_root(self, real: str) -> bool:
        return real == self.real_root or real.startswith(self.real_root.rstrip(os.sep) + os.sep)

    def walk(
        self, directory: Path, prefix: str, filters: PathFilters, ancestors: frozenset[tuple[int, int]]
    ) -> Iterator[SourceFile | SourceProblem]:
        """Yield everything below `directory` (whose relpath plus `/` is `prefix`)."""
        dir_rel = prefix.rstrip("/") or "."
        try:
            with os.scandir(directory) as it:
                entries = list(it)
            names = {entry.name for entry in entries}
            if prefix and is_foreign_tree(names) is not None:
                return  # a virtualenv or another brain: nothing in it is a source (the root is as named)
            # Only listed ignore files are read: probing an unreadable directory (or /proc) for one
            # fails with EACCES, which must be this directory's problem line, not the end of the run.
            filters = filters.entering(directory, prefix, names)
        except FileNotFoundError:
            yield SourceProblem(relpath=dir_rel, code=p.VANISHED, detail="directory deleted while ingesting")
            return
        except OSError as e:
            yield SourceProblem(relpath=dir_rel, code=p.UNREADABLE, detail=e.strerror or str(e))
            return
        listed = []
        for entry in entries:
            if entry.name in _NEVER_SOURCES:
                continue
            listed.append(self._classify(entry, prefix))
        listed.sort(key=lambda item: item[0])
        for _key, entry, relpath, result in listed:
            is_dir = isinstance(result, os.stat_result) and stat.S_ISDIR(result.st_mode)
            if filters.skips(relpath, is_dir=is_dir):
                continue
            if isinstance(result, SourceProblem):
                yield result
            elif not is_dir:
                yield _examine_file(Path(entry.path), relpath, result, self.origin_prefix)
            elif (result.st_dev, result.st_ino) in ancestors:
                yield SourceProblem(relpath=relpath, code=p.SYMLINK_LOOP, detail="links to its own ancestor")
            elif (result.st_dev, result.st_ino) not in self.skip:
                inner = ancestors | {(result.st_dev, result.st_ino)}
                yield from self.walk(Path(entry.path), relpath + "/", filters, inner)

    def _classify(
        self, entry: os.DirEntry[str], prefix: str
    ) -> tuple[str, os.DirEntry[str], str, os.stat_result | SourceProblem]:
        """(sort key, entry, relpath, followed stat or the problem that stopped us)."""
        relpath = prefix + entry.name
        try:
            entry.name.encode("utf-8")
        except UnicodeEncodeError:
            shown = os.fsencode(entry.name).decode("utf-8", "backslashreplace")
            problem = SourceProblem(relpath=prefix + shown, code=p.BAD_NAME, detail="file name is not UTF-8")
            return prefix + shown, entry, prefix + shown, problem
        try:
            if entry.is_symlink():
                st = os.stat(entry.path)
                if not self._inside_root(os.path.realpath(entry.path)):
                    problem = SourceProblem(
                        relpath=relpath, code=p.SYMLINK_OUTSIDE_ROOT, detail="link target is outside the root"
                    )
                    return relpath, entry, relpath, problem
            else:
                st = entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            if entry.is_symlink() and os.path.lexists(entry.path):
                problem = SourceProblem(relpath=relpath, code=p.BROKEN_SYMLINK, detail="link target does not exist")
            else:
                problem = SourceProblem(relpath=relpath, code=p.VANISHED, detail="deleted while ingesting")
            return relpath, entry, relpath, problem
        except OSError as e:
            code = p.SYMLINK_LOOP if e.errno == errno.ELOOP else p.UNREADABLE
            problem = SourceProblem(relpath=relpath, code=code, detail=e.strerror or str(e))
            return relpath, entry, relpath, problem
        key = relpath + "/" if stat.S_ISDIR(st.st_mode) else relpath
        return key, entry, relpath, st
