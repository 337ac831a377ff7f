"""What `brain merge` and `sdk.Brain.merge` take as the other side: a registry reference (fetched first, verified,
without moving the head), else what `branch create --at` takes (`brain.branches.operations.resolve_start`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from brain.errors import NotFoundError
from brain.identity import OciDigest

if TYPE_CHECKING:
    from brain.brain import Brain
    from oci.pull import PullResult


def is_registry_reference(text: str) -> bool:
    """`HOST[:PORT]/REPOSITORY[:TAG]`: a first component with a dot or a colon (a branch name holds neither)."""
    first = text.split("/")[0]
    return "/" in text and ("." in first or ":" in first)


def resolve_merge_target(
    brain: Brain, text: str, *, plain_http: bool = False, lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None, on_warning: Callable[[str], None] | None = None,
) -> tuple[OciDigest, PullResult | None]:  # fmt: skip
    """The snapshot `text` names, and the fetch that brought it (None: it was held already): a registry
    reference, a branch, HEAD~N, a local tag, or a held snapshot's digest or prefix."""
    from brain.branches.operations import resolve_start
    from oci.diff_sides import local_tag_snapshot

    if is_registry_reference(text):
        from oci.pull import pull
        from oci.reference import parse_reference

        pulled = pull(brain, parse_reference(text, plain_http=plain_http), fetch_only=True, lock_timeout=lock_timeout,
                      on_wait=on_wait, on_warning=on_warning)
        return pulled.snapshot, pulled
    try:
        return resolve_start(brain, text, tagged=lambda tag: local_tag_snapshot(brain, tag)), None
    except NotFoundError as e:
        if not (e.hint or "").startswith("REF is"):
            raise
        raise NotFoundError(e.message, hint=f"{e.hint}; or a registry reference HOST[:PORT]/REPOSITORY[:TAG]") from None


__all__ = ["is_registry_reference", "resolve_merge_target"]
