"""What `brain diff A B` compares: A and B as `brain.lifecycle.compare.Side`s.

A and B are snapshot digests or prefixes, local tags, `HEAD`, `HEAD~N`, or a registry REF (one manifest, its
config and, when the compositions are not stored here, its history layer). Default: the head's first parent
and the head; one argument: that and the head. `A...B` (one argument) compares B with the merge base of A
and B (either may also be a branch name).
"""

from __future__ import annotations

import re

from brain.brain import Brain
from brain.errors import NotFoundError
from brain.identity import OciDigest
from brain.lifecycle.compare import EMPTY, DiffResult, Side, compare
from brain.lifecycle.usecases import Lineage

_HEAD = re.compile(r"HEAD(?:~(\d+)|(\^+))?")


def diff(
    brain: Brain, a: str | None = None, b: str | None = None, *, plain_http: bool = False,
    lineage: Lineage | None = None
) -> DiffResult:
    """The diff of A and B (see the module docstring); origins from `lineage` (default: the head's ledger)."""
    left, right = sides(brain, a, b, plain_http=plain_http)
    return compare(brain, left, right, lineage)


def sides(brain: Brain, a: str | None, b: str | None, *, plain_http: bool = False) -> tuple[Side, Side]:
    """A and B resolved, with the defaults (a first snapshot is compared with nothing)."""
    if a is not None and b is None and "..." in a:
        return three_dot(brain, a)
    if a is None and b is None:
        a = "HEAD~1"
        history = brain.history()
        if len(history) == 1 and history[0][1].first_parent is None:
            a = EMPTY  # a first snapshot: everything in it is new
    left = Side.empty() if a == EMPTY else side_of(brain, a or "HEAD", plain_http)
    return left, side_of(brain, b or "HEAD", plain_http)


def side_of(brain: Brain, text: str, plain_http: bool) -> Side:
    """Resolve A or B (see the module docstring)."""
    local = _local_snapshot(brain, text)
    if local is not None:
        return Side.local(brain, text, local)
    if "/" not in text:
        raise NotFoundError(
            f"{text!r} is not a stored snapshot, a local tag or HEAD~N",
            hint="see `brain log` and `brain tags`; a registry reference looks like host/repository:tag",
        )
    from oci.reference import parse_reference
    from oci.remote_snapshot import remote_state  # the registry client: only for a REF

    state = remote_state(brain, parse_reference(text, plain_http=plain_http))
    return Side(text, state.snapshot, state.refs, lambda ref: state.compositions[ref.composition].block_ids)


def three_dot(brain: Brain, text: str) -> tuple[Side, Side]:
    """`A...B`: what B changed since the merge base of A and B (either side defaults to HEAD)."""
    from brain.reconcile.ancestor import merge_base

    a_text, _, b_text = text.partition("...")
    a_digest, b_digest = (_named_snapshot(brain, t or "HEAD") for t in (a_text, b_text))
    base = merge_base(brain, a_digest, b_digest)
    right = Side.local(brain, b_text or "HEAD", b_digest)
    if base is None:
        return Side(f"{EMPTY} (no common ancestor)", None, {}, lambda ref: ()), right
    return Side.local(brain, f"merge base of {a_text or 'HEAD'} and {b_text or 'HEAD'}", base), right


def _named_snapshot(brain: Brain, text: str) -> OciDigest:
    """A held snapshot, tag or HEAD~N, else a branch name."""
    from brain.branches.names import is_branch_name
    from brain.branches.operations import resolve_branch

    hexlike = re.fullmatch(r"(sha256:)?[0-9a-f]{4,64}", text) is not None
    local = None if text != "HEAD" and is_branch_name(text) and not hexlike else _local_snapshot(brain, text)
    if local is None and is_branch_name(text):
        return resolve_branch(brain, text)
    if local is None:
        raise NotFoundError(
            f"{text!r} is not a stored snapshot, a local tag, HEAD~N or a branch", hint="see `brain log`"
        )
    return local


def _local_snapshot(brain: Brain, text: str) -> OciDigest | None:
    match = _HEAD.fullmatch(text)
    if match is not None:
        steps = int(match.group(1)) if match.group(1) else len(match.group(2) or "")
        history = brain.history()
        if not history:
            raise NotFoundError(f"the brain at {brain.path} is empty: {text} names nothing")
        if steps >= len(history):
            raise NotFoundError(f"{text}: the history stored here has only {len(history)} snapshots",
                                hint="see `brain log`")
        return history[steps][0]
    tagged = local_tag_snapshot(brain, text)
    if tagged is not None:
        return tagged
    if re.fullmatch(r"(sha256:)?[0-9a-f]{4,64}", text):
        return brain.resolve_snapshot_prefix(text)
    return None


def local_tag_snapshot(brain: Brain, tag: str) -> OciDigest | None:
    """The snapshot the local tag `tag` (in `index.json`) names; None when there is no such tag."""
    for name, descriptor in brain.layout.tags():
        if name == tag:
            return _tagged_snapshot(brain, descriptor.digest, tag)
    return None


def _tagged_snapshot(brain: Brain, manifest_digest: OciDigest, tag: str) -> OciDigest:
    from oci.manifest import Manifest

    manifest = Manifest.decode(brain.blobs.get(manifest_digest), what=f"manifest of tag {tag}")
    source = manifest.source_snapshot if manifest.is_projection else manifest.config.digest
    if source is None or not brain.blobs.has(source):
        raise NotFoundError(f"tag {tag} names a snapshot that is not stored here", hint="pull it, or diff the REF")
    return source


__all__ = ["diff", "local_tag_snapshot", "side_of", "sides", "three_dot"]
