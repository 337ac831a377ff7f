"""What a user may name on a command line or in a request: ids, id prefixes, origins and paths, bounded.

Every argument that names a block, a snapshot or a source passes through here before anything looks it up
or touches the filesystem: an id or prefix is at most 64 hex digits (`sha256:` optional), any other name
at most `MAX_NAME` characters. A name that cannot be a file name (a component over `NAME_MAX` bytes) is
refused as usage once the lookups that need no filesystem (recorded origins) have failed. Error messages
quote at most `QUOTE` characters of what was given, so a megabyte argument never comes back as a megabyte
message.
"""

from __future__ import annotations

from brain.errors import InvalidInputError, UsageError

HEX_DIGITS = 64
MAX_NAME = 4096  # PATH_MAX on Linux: no origin or path a person types is longer
NAME_MAX = 255  # bytes in one path component (every common filesystem)
QUOTE = 40
_HEX = frozenset("0123456789abcdef")


def shown(text: str, limit: int = QUOTE) -> str:
    """`text` quoted for an error message: whole when short, else its start, an ellipsis and its length."""
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def bounded_name(text: str, what: str = "argument") -> str:
    """`text` if it is at most `MAX_NAME` characters; else a `UsageError` naming `what`."""
    if len(text) > MAX_NAME:
        raise UsageError(f"{what} {shown(text)} is too long (at most {MAX_NAME:,} characters)",
                         hint="give a block id, a prefix of at least 4 hex digits, or a source origin")
    return text


def id_digits(text: str, kind: str = "block") -> str:
    """The lowercase hex digits of an id or id prefix (`sha256:` optional): 1 to 64 of them, or `InvalidInputError`."""
    digits = text.removeprefix("sha256:").lower()
    if not digits or len(digits) > HEX_DIGITS or not set(digits) <= _HEX:
        raise InvalidInputError(
            f"invalid {kind} id prefix {shown(text)}: expected 1 to {HEX_DIGITS} hex digits, optionally after 'sha256:'"
        )
    return digits


def can_be_file_name(text: str) -> bool:
    """Whether `text` could name a file at all (each component at most `NAME_MAX` bytes), without asking the OS."""
    if len(text) > MAX_NAME or "\0" in text:
        return False
    return all(len(part.encode("utf-8", "surrogateescape")) <= NAME_MAX for part in text.split("/"))
