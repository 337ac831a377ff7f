"""What an operating-system failure met while reading or writing a brain means, as one `BrainError`.

Writes are ordered so that a failure at any point leaves the brain at its previous snapshot (blobs, then
the snapshot, then `head.json`); what was missing was the message. This turns the failures a user can
meet and fix (a full disk, no inodes left, a quota, a read-only filesystem, a permission, a directory
where a file belongs, a name too long for the filesystem) into one line naming the file and the fix;
anything else stays a bug.
"""

from __future__ import annotations

import errno
import os

from brain.errors import BrainError, BrainUnreadableError, LocalStorageError, UsageError

_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
_SAFE = "the brain stays at its last committed snapshot"


def translate_os_error(error: OSError) -> BrainError | None:
    """The user-facing error for `error`, or None when it is not one a user can fix (a bug: exit 70)."""
    where = error.filename if error.filename is not None else "a file of the brain"
    if error.errno in _FULL:
        what = "quota exceeded" if error.errno == errno.EDQUOT else _space_or_inodes(error.filename)
        return LocalStorageError(
            f"cannot write {where}: {what}; {_SAFE}", hint="free space (or inodes) on that filesystem and re-run"
        )
    if error.errno == errno.EROFS:
        return LocalStorageError(f"cannot write {where}: the filesystem is read-only; {_SAFE}",
                                 hint="use a writable directory for --brain")
    if isinstance(error, PermissionError):
        return BrainUnreadableError(
            f"{where}: permission denied", hint="check the owner and mode of the file and its directory (chmod, chown)"
        )
    if isinstance(error, IsADirectoryError):
        return BrainUnreadableError(
            f"{where} is a directory where a file belongs", hint="move the directory away, then run `brain verify`"
        )
    if error.errno == errno.ENAMETOOLONG:  # a name the user gave (ids are bounded before any lookup)
        shown = os.fsdecode(where) if isinstance(where, (str, bytes)) else str(where)
        return UsageError(f"file name too long: {shown[:60]!r}… ({len(shown):,} characters)",
                          hint="a file name is at most 255 bytes, a path at most 4,096")
    if isinstance(error, NotADirectoryError):
        return BrainUnreadableError(
            f"{where}: a file stands where a directory belongs", hint="move the file away, then run `brain verify`"
        )
    return None


def _space_or_inodes(filename: object) -> str:
    """'no space left' or 'no inodes left', from the filesystem holding `filename` (when known)."""
    directory = os.path.dirname(os.fsdecode(filename)) if isinstance(filename, (str, bytes)) else None
    if directory:
        try:
            stats = os.statvfs(directory)
        except OSError:
            return "no space left on the device"
        if stats.f_files and stats.f_favail == 0:
            return "no inodes left on the device"
    return "no space left on the device"
