"""The pointer steps of branch operations, for a caller holding the writer lock (§10.2).

`head.json` is the truth for the current branch; `refs.json` names the others. Every rewrite of `refs.json`
first brings the current branch's entry up to the head, and every rewrite of `head.json` recomputes
`retained` against the branch heads (`brain.store.head.write_head`). A checkout is three writes, each atomic
(`refs.json` with `switching`, `head.json`, `refs.json` without it), and an interrupted one is repaired by
`repair_switching` when the brain is opened or a writer takes the lock, before anything else is written.
"""

from __future__ import annotations

from pathlib import Path

from brain.branches.names import DEFAULT_MAIN_TAG, MAIN, branch_tag
from brain.branches.refs import BranchEntry, Refs, implicit_refs, read_refs, write_refs
from brain.identity import OciDigest
from brain.store.head import Head, read_head, write_head
from brain.store.origin import Origin


def refs_or_implicit(refs: Refs | None, head: Head | None) -> Refs | None:
    """`refs`, or the implicit `main` at the head when there is no `refs.json` (None for an empty brain)."""
    if refs is not None:
        return refs
    return None if head is None else implicit_refs(head.snapshot, head.origin)


def settled(refs: Refs, head: Head | None) -> Refs:
    """What `refs` say once an interrupted checkout is repaired (§10.2): the current branch and no `switching`."""
    if refs.switching is None:
        return refs
    target = refs.branches[refs.switching]
    current = refs.switching if head is not None and head.snapshot == target.snapshot else refs.current
    return refs.model_copy(update={"current": current, "switching": None})


def repair_switching(root: Path) -> Refs | None:
    """Finish or undo an interrupted checkout (the caller holds the writer lock); returns the refs now stored."""
    refs = read_refs(root)
    if refs is None or refs.switching is None:
        return refs
    repaired = settled(refs, read_head(root))
    write_refs(root, repaired)
    return repaired


def store_refs(root: Path, refs: Refs, head: Head | None) -> Refs:
    """Write `refs` with the current branch brought up to `head`, then `head.json` rewritten for its branch heads.

    `head.json` goes first when it must retain a new branch head (so a crash never leaves a branch a prune
    may reclaim); when a branch head leaves, `refs.json` goes first (a crash then only retains one too many).
    """
    if head is not None and refs.current in refs.branches:
        refs = refs.brought_up(head.snapshot, head.origin)
    if head is None:
        write_refs(root, refs)
        return refs
    rewritten = Head.first(head.snapshot, origin=head.origin, previous=head.retained, branch_heads=refs.heads())
    if set(rewritten.retained) >= set(head.retained):
        write_head(root, rewritten, refs)
        write_refs(root, refs)
    else:
        write_refs(root, refs)
        write_head(root, rewritten, refs)
    return refs


def switch(root: Path, refs: Refs, head: Head, target: str) -> Head:
    """Check out `target` in three atomic steps (§10.2): `switching`, then `head.json`, then `current`."""
    leaving = refs.brought_up(head.snapshot, head.origin)
    entry: BranchEntry = leaving.branches[target]
    step_one = leaving.model_copy(update={"switching": target})
    write_refs(root, step_one)
    moved = head.advance(entry.snapshot, origin=entry.origin, branch_heads=step_one.heads())
    written = write_head(root, moved, step_one)
    write_refs(root, leaving.model_copy(update={"current": target, "switching": None}))
    return written




class BranchPull:
    """A pull into a branch other than the current one (§10.2): it installs there and switches to it.

    `base` is the head the install builds on (the branch's, or None for a new branch); `move` writes the three
    pointer steps of a checkout, the first recording the branch's new entry (`snapshot`, the pulled `tag`,
    `reference`, `origin`) with `switching`, so a crash at any point leaves one branch or the other whole.
    A pull into an empty brain leaves a `refs.json` holding only that branch.
    """

    def __init__(self, target: str, tag: str | None, reference: str) -> None:
        self.target = target
        self.tag = tag
        self.reference = reference

    def base(self, root: Path, current: Head | None) -> Head | None:
        """The target branch's head as the install sees it (None when the branch does not exist yet)."""
        refs = refs_or_implicit(read_refs(root), current)
        entry = None if refs is None else refs.branches.get(self.target)
        return None if entry is None else Head(snapshot=entry.snapshot, origin=entry.origin)

    def move(self, root: Path, current: Head | None, installed: OciDigest, origin: Origin) -> Head:
        """Record the branch at `installed`, move `head.json` there, make the branch current; the head written."""
        refs = refs_or_implicit(read_refs(root), current)
        old = None if refs is None else refs.branches.get(self.target)
        tag = old.tag if old is not None and (self.target == MAIN or self.tag is None) else self.tag
        if tag is None:
            tag = branch_tag(self.target, DEFAULT_MAIN_TAG if refs is None else refs.main_tag)
        entry = BranchEntry(snapshot=installed, tag=tag, reference=self.reference, origin=origin)
        if refs is None or current is None:
            step_one = Refs(current=self.target, branches={self.target: entry}, switching=self.target)
        else:
            step_one = refs.brought_up(current.snapshot, current.origin).with_branch(self.target, entry)
            step_one = step_one.model_copy(update={"switching": self.target})
        write_refs(root, step_one)
        moved = (
            Head.first(installed, origin=origin)
            if current is None
            else current.advance(installed, origin=origin, branch_heads=step_one.heads())
        )
        written = write_head(root, moved, step_one)
        write_refs(root, step_one.model_copy(update={"current": self.target, "switching": None}))
        return written


__all__ = ["BranchPull", "refs_or_implicit", "repair_switching", "settled", "store_refs", "switch"]
