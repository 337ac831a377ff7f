"""Branch names and the registry tags they publish to (§10.1).

A name is `/`-joined segments of `[A-Za-z0-9][A-Za-z0-9_-]*`; `main` publishes to main's tag (fixed in
`refs.json`, else the origin's tag, else `latest`), any other branch to `br.` + the name with `/` as `.`.
The tag is at most 128 characters, so the longest name is 125. No `.` in a name keeps the mapping reversible.
"""

from __future__ import annotations

import re

from brain.errors import InvalidInputError

MAIN = "main"
DEFAULT_MAIN_TAG = "latest"
TAG_PREFIX = "br."
MAX_TAG = 128
MAX_NAME = MAX_TAG - len(TAG_PREFIX)

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:/[A-Za-z0-9][A-Za-z0-9_-]*)*")
# OCI distribution's tag grammar.
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_GRAMMAR = "segments of [A-Za-z0-9][A-Za-z0-9_-]* joined by '/', e.g. feature/x"


def is_branch_name(name: str) -> bool:
    """Whether `name` is a branch name whose tag fits in 128 characters."""
    return (
        isinstance(name, str)
        and _NAME.fullmatch(name) is not None
        and (name == MAIN or len(name) <= MAX_NAME)
    )


def validate_branch_name(name: str) -> str:
    """`name` if it is a valid branch name (§10.1); else `InvalidInputError` saying why."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise InvalidInputError(f"invalid branch name {name!r}: expected {_GRAMMAR}")
    if name != MAIN and len(name) > MAX_NAME:
        raise InvalidInputError(
            f"branch name {name[:20]}... is {len(name)} characters: its tag br.<name> would exceed "
            f"{MAX_TAG} (at most {MAX_NAME})"
        )
    return name


def is_tag(tag: str) -> bool:
    """Whether `tag` matches OCI's tag grammar (1-128 of [A-Za-z0-9._-], not starting with '.' or '-')."""
    return isinstance(tag, str) and _TAG.fullmatch(tag) is not None


def validate_tag(tag: str) -> str:
    """`tag` if it is an OCI tag; else `InvalidInputError`."""
    if not is_tag(tag):
        shown = tag if len(tag) <= 40 else f"{tag[:40]}... ({len(tag)} characters)"
        raise InvalidInputError(
            f"invalid tag {shown!r}: a tag is 1-{MAX_TAG} of [A-Za-z0-9_.-], not starting with '.' or '-'"
        )
    return tag


def branch_tag(name: str, main_tag: str = DEFAULT_MAIN_TAG) -> str:
    """The tag branch `name` publishes to: `main_tag` for main, `br.<name with / as .>` otherwise."""
    validate_branch_name(name)
    if name == MAIN:
        return main_tag
    return TAG_PREFIX + name.replace("/", ".")


def decode_tag(tag: str, main_tag: str = DEFAULT_MAIN_TAG) -> str | None:
    """The branch a registry tag stands for, or None when it names no branch (§10.1, in that order)."""
    if tag == main_tag:
        return MAIN
    if not is_tag(tag) or not tag.startswith(TAG_PREFIX):
        return None
    name = tag[len(TAG_PREFIX):].replace(".", "/")
    if name == MAIN or not is_branch_name(name):
        return None
    return name


__all__ = [
    "DEFAULT_MAIN_TAG",
    "MAIN",
    "MAX_NAME",
    "MAX_TAG",
    "TAG_PREFIX",
    "branch_tag",
    "decode_tag",
    "is_branch_name",
    "is_tag",
    "validate_branch_name",
    "validate_tag",
]
