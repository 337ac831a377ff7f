"""Branch use cases (§10.2): list, resolve, create, delete and check out the branches of a brain.

Reads never write (an interrupted checkout is read as its repair would leave it); writes take the brain's
writer (`Brain.writer`, so the writer lock and every guard a writer applies cover them) and move only
pointers through `brain.branches.pointers`: a checkout never rewrites a composition.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from brain.branches.guard import authenticate_move
from brain.branches.names import DEFAULT_MAIN_TAG, MAIN, branch_tag, validate_branch_name
from brain.branches.pointers import refs_or_implicit, settled, store_refs, switch
from brain.branches.refs import BranchEntry, Refs, read_refs
from brain.brain import Brain
from brain.errors import BrainError, BrainUnreadableError, ConflictError, NotFoundError, RefusedError
from brain.frozen import FrozenModel
from brain.identity import OciDigest
from brain.snapshot import Snapshot
from brain.store.head import Head

_FIX_REFS = "restore boltzmann/refs.json from a copy of the brain, or delete the branch's entry"


class BranchInfo(FrozenModel):
    """One branch as `brain branch` lists it; ahead/behind count snapshots against the current branch."""

    name: str
    head: OciDigest
    tag: str
    current: bool
    reference: str | None = None
    ahead: int | None = None
    behind: int | None = None


class BranchList(FrozenModel):
    """`brain branch --json`: the current branch and every branch by name."""

    current: str
    branches: list[BranchInfo]


class BranchChange(FrozenModel):
    """What `branch create`/`branch delete` did."""

    branch: str
    snapshot: OciDigest
    tag: str
    created: bool
    authenticated: str | None = None


class CheckoutResult(FrozenModel):
    """What `brain checkout` did: `moved` is False when the branch already was current."""

    branch: str
    previous: str
    snapshot: OciDigest
    previous_snapshot: OciDigest | None
    moved: bool
    authenticated: str | None = None


def load_refs(brain: Brain) -> Refs | None:
    """`refs.json` read strictly (None when absent), every branch checked to name a stored snapshot."""
    refs = read_refs(brain.path)
    if refs is None:
        return None
    for name, entry in refs.branches.items():
        _check_snapshot(brain, name, entry.snapshot)
    return refs


def _check_snapshot(brain: Brain, name: str, digest: OciDigest) -> Snapshot:
    where = "boltzmann/refs.json"
    if not brain.blobs.has(digest):
        raise BrainUnreadableError(
            f"{where}: branch {name} names snapshot {digest}, which is not stored in {brain.path}", hint=_FIX_REFS
        )
    try:
        snapshot = brain.snapshot(digest)
    except BrainError as e:
        raise BrainUnreadableError(
            f"{where}: branch {name} names {digest}, which is not a snapshot ({e.message})", hint=_FIX_REFS
        ) from e
    assert snapshot is not None
    return snapshot


def branches(brain: Brain) -> Refs | None:
    """The brain's branches as they stand (an interrupted checkout read as repaired); None for an empty brain."""
    head = brain.head()
    refs = load_refs(brain)
    if refs is None:
        return refs_or_implicit(None, head)
    refs = settled(refs, head)
    return refs if head is None else refs.brought_up(head.snapshot, head.origin)


def branch_heads(brain: Brain) -> list[OciDigest]:
    """Every branch's head snapshot (the current one's from head.json), for reachability (prune)."""
    refs = branches(brain)
    return [] if refs is None else refs.heads()


def current_branch(brain: Brain) -> str:
    """The name of the current branch (`main` for a brain without `refs.json`)."""
    refs = branches(brain)
    return MAIN if refs is None else refs.current


def resolve_branch(brain: Brain, name: str) -> OciDigest:
    """The head snapshot of branch `name` (the current branch resolves to `head.json`'s snapshot)."""
    validate_branch_name(name)
    refs = branches(brain)
    if refs is None or name not in refs.branches:
        raise NotFoundError(f"no branch {name} in {brain.path}", hint="see `brain branch` for the branches")
    return refs.branches[name].snapshot


def list_branches(brain: Brain, *, counts: bool = True) -> list[BranchInfo]:
    """Every branch, by name, with its head, tag and (with `counts`) ahead/behind of the current branch."""
    refs = branches(brain)
    if refs is None:
        return []
    from brain.queries import local_history

    ours = refs.branches[refs.current].snapshot
    history = local_history(brain, ours) if counts else set()
    infos = []
    for name in sorted(refs.branches):
        entry = refs.branches[name]
        ahead = behind = None
        if counts:
            theirs = history if entry.snapshot == ours else local_history(brain, entry.snapshot)
            ahead, behind = len(theirs - history), len(history - theirs)
        infos.append(BranchInfo(
            name=name, head=entry.snapshot, tag=entry.tag, current=name == refs.current,
            reference=entry.reference, ahead=ahead, behind=behind,
        ))
    return infos


def branch_list(brain: Brain) -> BranchList:
    """`list_branches` with the current branch named (`main` for an empty brain)."""
    infos = list_branches(brain)
    return BranchList(current=next((i.name for i in infos if i.current), MAIN), branches=infos)


class BranchStatus(FrozenModel):
    """`brain status`'s branch line: the current branch, its tag, and where it stands against the snapshot it
    was last pulled from (`remote`, when known and stored), and the open reconciliation's other head, if any."""

    name: str
    tag: str
    reference: str | None = None
    remote: OciDigest | None = None
    ahead: int | None = None
    behind: int | None = None
    reconciling: OciDigest | None = None


def branch_status(brain: Brain) -> BranchStatus:
    """The current branch's status (`main` and its default tag for an empty brain without `refs.json`)."""
    from brain.queries import local_history
    from brain.reconcile.state import read_state

    state = read_state(brain.path)
    reconciling = None if state is None else state.theirs
    refs = branches(brain)
    if refs is None:
        return BranchStatus(name=MAIN, tag=local_main_tag(brain.path), reconciling=reconciling)
    entry = refs.branches[refs.current]
    remote = None if entry.origin is None else entry.origin.snapshot
    ahead = behind = None
    if remote is not None and brain.blobs.has(remote):
        ours, theirs = local_history(brain, entry.snapshot), local_history(brain, remote)
        ahead, behind = len(ours - theirs), len(theirs - ours)
    return BranchStatus(name=refs.current, tag=entry.tag, reference=entry.reference, remote=remote, ahead=ahead,
                        behind=behind, reconciling=reconciling)


def create_branch(
    brain: Brain,
    name: str,
    actor: str,
    at: OciDigest | None = None,
    *,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> BranchChange:
    """Create branch `name` at `at` (default: the head); the current branch stays current.

    A governed brain's new branch head is authenticated first (§9.7; exit 6, nothing written, if it is not).
    """
    validate_branch_name(name)
    with brain.writer(actor, lock_timeout=lock_timeout, on_wait=on_wait, pointers_only=True) as writer:
        head = writer.head
        if head is None:
            raise RefusedError(
                f"the brain at {brain.path} is empty: there is no snapshot to branch from",
                hint="commit something first (e.g. `brain ingest`)",
            )
        found = refs_or_implicit(load_refs(brain), head)
        assert found is not None
        refs = found.brought_up(head.snapshot, head.origin)  # the new entry takes the current one's reference
        if name in refs.branches:
            raise ConflictError(
                f"branch {name} already exists (at {refs.branches[name].snapshot.short})",
                hint=f"check it out with `brain checkout {name}`, or delete it first",
            )
        target = head.snapshot if at is None else at
        if at is not None:
            _check_target(brain, at)
        state = authenticate_move(brain, target, f"branch create {name}") if at is not None else None
        current = refs.branches[refs.current]
        entry = BranchEntry(snapshot=target, tag=branch_tag(name, refs.main_tag), reference=current.reference)
        store_refs(brain.path, refs.with_branch(name, entry), head)
    return BranchChange(branch=name, snapshot=target, tag=entry.tag, created=True, authenticated=state)


def create_branch_at(
    brain: Brain,
    name: str,
    actor: str,
    at: str | None = None,
    *,
    tagged: Callable[[str], OciDigest | None] | None = None,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> BranchChange:
    """`create_branch` with `at` given as the CLI takes it (see `resolve_start`)."""
    target = None if at is None else resolve_start(brain, at, tagged=tagged)
    return create_branch(brain, name, actor, target, lock_timeout=lock_timeout, on_wait=on_wait)


_ANCESTRY = re.compile(r"(?P<base>[^~^]+)(?:~(?P<steps>\d+)|(?P<carets>\^+))?")
_REF_HINT = (
    "REF is a branch (`brain branch`), HEAD, a local tag (`brain tags`) or a snapshot digest prefix (`brain log`), "
    "optionally followed by ~N"
)


def resolve_start(brain: Brain, text: str, *, tagged: Callable[[str], OciDigest | None] | None = None) -> OciDigest:
    """`--at REF`: a branch name (first), `HEAD`, a local tag (read through `tagged`: the manifest a tag names
    is `oci`'s to decode), or a stored snapshot's digest or prefix; each may end in `~N` or `^`, `^^`…: that
    many first parents back, as `brain log` lists them."""
    match = _ANCESTRY.fullmatch(text)
    if match is None:
        raise NotFoundError(f"no branch or snapshot {text!r} in {brain.path}", hint=_REF_HINT)
    base = match.group("base")
    steps = int(match.group("steps")) if match.group("steps") else len(match.group("carets") or "")
    digest = _named_start(brain, base, tagged)
    for step in range(steps):
        snapshot = brain.snapshot(digest) if brain.blobs.has(digest) else None
        parent = None if snapshot is None else snapshot.first_parent
        if parent is None or not brain.blobs.has(parent):
            held = f"{step} first-parent ancestor{'' if step == 1 else 's'}"
            raise NotFoundError(f"{text} goes past the history stored in {brain.path}: {base} has {held}",
                                hint="see `brain log` for the snapshots")
        digest = parent
    return digest


def _named_start(brain: Brain, text: str, tagged: Callable[[str], OciDigest | None] | None) -> OciDigest:
    if text == "HEAD":
        head = brain.snapshot_digest()
        if head is None:
            raise NotFoundError(f"the brain at {brain.path} is empty: HEAD names nothing",
                                hint="commit something first (e.g. `brain ingest`)")
        return head
    refs = branches(brain)
    if refs is not None and text in refs.branches:
        return refs.branches[text].snapshot
    found = None if tagged is None else tagged(text)
    if found is not None:
        return found
    hexits = text.removeprefix("sha256:")
    if len(hexits) < 4 or not all(c in "0123456789abcdef" for c in hexits.lower()):
        raise NotFoundError(f"no branch, tag or snapshot {text!r} in {brain.path}", hint=_REF_HINT)
    return brain.resolve_snapshot_prefix(text)


def local_main_tag(path: Path) -> str:
    """Main's tag in the brain at `path` (decodes a registry's tags); `latest` when there is no brain there."""
    try:
        refs = branches(Brain.open(path))
    except BrainError:
        return DEFAULT_MAIN_TAG
    return DEFAULT_MAIN_TAG if refs is None else refs.main_tag


def current_tag(brain: Brain) -> str:
    """The tag the current branch publishes to (`push` without a tag): main's tag, or `br.<name>`."""
    refs = branches(brain)
    return DEFAULT_MAIN_TAG if refs is None else refs.branches[refs.current].tag


def _check_target(brain: Brain, digest: OciDigest) -> None:
    if not brain.blobs.has(digest):
        raise NotFoundError(f"snapshot {digest} is not stored in {brain.path}", hint="see `brain log` for snapshots")
    try:
        brain.snapshot(digest)
    except BrainError as e:
        raise NotFoundError(f"{digest} is not a snapshot ({e.message})", hint="see `brain log` for snapshots") from e


def delete_branch(
    brain: Brain,
    name: str,
    actor: str,
    *,
    force: bool = False,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> BranchChange:
    """Delete branch `name` (its snapshots stay stored until pruned).

    Refused for the current branch; without `force`, also for a branch whose head is in no other branch's
    history nor in the history of the snapshot its `origin` records (unmerged and unpublished).
    """
    validate_branch_name(name)
    with brain.writer(actor, lock_timeout=lock_timeout, on_wait=on_wait, pointers_only=True) as writer:
        head = writer.head
        refs = refs_or_implicit(load_refs(brain), head)
        if refs is None or name not in refs.branches:
            raise NotFoundError(f"no branch {name} in {brain.path}", hint="see `brain branch` for the branches")
        if head is not None:
            refs = refs.brought_up(head.snapshot, head.origin)
        if name == refs.current:
            raise RefusedError(
                f"branch {name} is the current branch: it cannot be deleted",
                hint="check out another branch first (`brain checkout NAME`)",
            )
        entry = refs.branches[name]
        if not force and not _contained(brain, refs, name, entry):
            raise RefusedError(
                f"branch {name} (at {entry.snapshot.short}) is not merged into another branch and not published",
                hint=f"merge it first, or delete it anyway with `brain branch delete {name} --force`",
            )
        store_refs(brain.path, refs.without_branch(name), head)
    return BranchChange(branch=name, snapshot=entry.snapshot, tag=entry.tag, created=False)


def _contained(brain: Brain, refs: Refs, name: str, entry: BranchEntry) -> bool:
    from brain.queries import local_history

    places = [e.snapshot for n, e in refs.branches.items() if n != name]
    if entry.origin is not None:
        places.append(entry.origin.snapshot)
    return any(entry.snapshot in local_history(brain, place) for place in dict.fromkeys(places))


def checkout(
    brain: Brain,
    name: str,
    actor: str,
    *,
    lock_timeout: float | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> CheckoutResult:
    """Make `name` the current branch: `head.json` moves to its head (pointers only, crash-safe, §10.2).

    On a governed brain the branch's head is authenticated first (§9.7; exit 6, nothing moved, if not).
    """
    validate_branch_name(name)
    with brain.writer(actor, lock_timeout=lock_timeout, on_wait=on_wait, pointers_only=True) as writer:
        head = writer.head
        refs = refs_or_implicit(load_refs(brain), head)
        if refs is None or name not in refs.branches:
            raise NotFoundError(
                f"no branch {name} in {brain.path}", hint=f"create it with `brain branch create {name}`"
            )
        previous = refs.current
        if name == previous or head is None:
            snapshot = refs.branches[name].snapshot if head is None else head.snapshot
            return CheckoutResult(
                branch=name, previous=previous, snapshot=snapshot,
                previous_snapshot=None if head is None else head.snapshot,
                moved=False,
            )
        target = refs.branches[name].snapshot
        state = authenticate_move(brain, target, f"checkout {name}")
        written: Head = switch(brain.path, refs, head, name)
    return CheckoutResult(
        branch=name, previous=previous, snapshot=written.snapshot, previous_snapshot=head.snapshot, moved=True,
        authenticated=state,
    )


__all__ = [
    "BranchChange",
    "BranchInfo",
    "BranchList",
    "BranchStatus",
    "CheckoutResult",
    "branch_heads",
    "branch_list",
    "branch_status",
    "branches",
    "checkout",
    "create_branch",
    "create_branch_at",
    "current_tag",
    "current_branch",
    "delete_branch",
    "list_branches",
    "load_refs",
    "local_main_tag",
    "resolve_branch",
    "resolve_start",
]
