"""Reading a file the user names (a config, a token, a key, a trust root, a plan): regular, bounded, never waited on.

One rule for every such read: open with `O_NONBLOCK` (opening a FIFO does not wait for a writer), `fstat`
the opened descriptor (not the name, which could be swapped), accept only a regular file, and read at most
`limit` bytes (a file that grows while read is refused too). So a FIFO never hangs a command, the zero
device never grows memory, and a directory is an error naming the file, not something silently skipped.
Failures are `UsageError`s (exit 3) naming the file and what it is; a missing file raises
`FileNotFoundError` for the caller to word (a missing config and a missing key mean different things).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from brain.errors import UsageError

KIB = 1024
MIB = 1024 * KIB

_KINDS = {stat.S_IFIFO: "a FIFO", stat.S_IFDIR: "a directory", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFLNK: "a symbolic link"}


def file_kind(mode: int) -> str:
    """What a file of `st_mode` `mode` is, for a message: `a FIFO`, `a directory`, ..."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def read_user_file(path: str | Path, what: str, limit: int, *, error: type[UsageError] = UsageError) -> bytes:
    """The bytes of the regular file `path` (at most `limit` of them); `what` names it in errors (`--config`).

    Raises `FileNotFoundError` if nothing is there, else `error` (a `UsageError`) for anything but a
    readable regular file of at most `limit` bytes.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as e:
        raise error(f"{what} {path} cannot be read: {e.strerror or e}", hint=_hint(what, limit)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise error(f"{what} {path} is {file_kind(info.st_mode)}, not a regular file", hint=_hint(what, limit))
        if info.st_size > limit:
            raise error(f"{what} {path} is {info.st_size:,} bytes, more than the {limit:,} allowed",
                        hint=_hint(what, limit))
        chunks: list[bytes] = []
        size = 0
        while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as e:
        raise error(f"{what} {path} cannot be read: {e.strerror or e}", hint=_hint(what, limit)) from None
    finally:
        os.close(fd)
    if size > limit:
        raise error(f"{what} {path} grew past the {limit:,} bytes allowed while it was read", hint=_hint(what, limit))
    return b"".join(chunks)


def _hint(what: str, limit: int) -> str:
    return f"{what} must be a readable regular file of at most {limit:,} bytes"
