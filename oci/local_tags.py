"""Local tags in `index.json`: name a packed artifact under another tag, or remove a tag (under the writer lock).

A tag names a manifest descriptor; tagging copies the descriptor, so both tags name the same digest. Removing
a tag deletes no blob (the artifact stays in the store, reachable by digest).
"""

from __future__ import annotations

from collections.abc import Callable

from brain.brain import Brain
from brain.errors import ConflictError, NotFoundError
from brain.frozen import FrozenModel
from brain.identity import OciDigest, is_digest_string
from brain.store.layout import validate_tag
from brain.store.lock import WriterLock


class LocalTagResult(FrozenModel):
    """`tag`/`untag` on the local brain: the tag, the manifest it names (named before, for untag)."""

    tag: str
    digest: OciDigest
    replaced: OciDigest | None = None


def tag_local(
    brain: Brain,
    source: str,
    new_tag: str,
    *,
    force: bool = False,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> LocalTagResult:
    """Point `new_tag` at the manifest `source` (a tag or a manifest digest in `index.json`) names."""
    validate_tag(new_tag)
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        if is_digest_string(source):
            entry = next((d for d in brain.layout.index().manifests if str(d.digest) == source), None)
            if entry is None:
                raise NotFoundError(f"no manifest {source} in {brain.layout.index_path}", hint="see `brain tags`")
        else:
            entry = brain.layout.resolve_tag(source)
        current = next((d for name, d in reversed(brain.layout.tags()) if name == new_tag), None)
        if current is not None and current.digest != entry.digest and not force:
            raise ConflictError(
                f"tag {new_tag} already names {current.digest.short}, not {entry.digest.short}",
                hint="choose another tag, remove it with `brain untag`, or pass --force",
            )
        if current is None or current.digest != entry.digest:
            brain.layout.set_tag(new_tag, entry)
    replaced = current.digest if current is not None and current.digest != entry.digest else None
    return LocalTagResult(tag=new_tag, digest=entry.digest, replaced=replaced)


def untag_local(
    brain: Brain, tag: str, *, lock_timeout: float | None = None, on_wait: Callable[[str], None] | None = None
) -> LocalTagResult:
    """Remove `tag` from `index.json`; raises `NotFoundError` if there is no such tag."""
    with WriterLock(brain.path, timeout=lock_timeout, on_wait=on_wait):
        entry = brain.layout.resolve_tag(tag)
        brain.layout.remove_tag(tag)
    return LocalTagResult(tag=tag, digest=entry.digest)
