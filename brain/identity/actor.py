"""Actor-identifier grammar (§3.6), enforced whenever this implementation writes an actor id."""

from __future__ import annotations

import re

from brain.errors import InvalidInputError

_LOCAL = re.compile(r"[a-z0-9._%+-]{1,64}")
_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
_SEGMENT = re.compile(r"[a-z0-9](?:[a-z0-9._-]{0,126}[a-z0-9])?")


def actor_id_problem(actor_id: str) -> str | None:
    """Why `actor_id` is not a valid actor id, or None when it is."""
    if not isinstance(actor_id, str) or not 1 <= len(actor_id) <= 320:
        return "must be 1 to 320 characters"
    if any(not ("\x21" <= ch <= "\x7e") for ch in actor_id):
        return "only printable ASCII without spaces is allowed"
    if any("A" <= ch <= "Z" for ch in actor_id):
        return "uppercase letters are not allowed"
    has_at, has_slash = "@" in actor_id, "/" in actor_id
    if has_at and has_slash:
        return "must not contain both '@' and '/'"
    if has_at:
        local, _, domain = actor_id.partition("@")
        if not _LOCAL.fullmatch(local) or local.startswith(".") or local.endswith(".") or ".." in local:
            return "the local part must be 1-64 of [a-z0-9._%+-], no leading/trailing '.' or '..'"
        labels = domain.split(".")
        if not 1 <= len(domain) <= 255 or len(labels) < 2 or not all(_LABEL.fullmatch(x) for x in labels):
            return "the domain needs two or more dot-separated labels of [a-z0-9-]"
        return None
    if has_slash:
        parts = actor_id.split("/")
        if len(parts) != 2 or not all(_SEGMENT.fullmatch(p) for p in parts):
            return "use exactly one '/' between two segments of [a-z0-9._-], each starting and ending alphanumeric"
        return None
    return "use an address (name@example.org) or a namespaced name (org/name)"


def validate_actor_id(actor_id: str) -> str:
    """Return `actor_id` unchanged, or raise `InvalidInputError` saying what to fix."""
    problem = actor_id_problem(actor_id)
    if problem is not None:
        raise InvalidInputError(f"invalid actor id {actor_id!r}: {problem}")
    return actor_id
