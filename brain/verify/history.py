"""The snapshot history: walk head, retained and parent chains; check every snapshot and composition once.

A snapshot the head names (current or retained) must be stored; an older ancestor that is not stored means
the history was cut short (shallow or selective pull, pruning) and is reported as partial, not as damage.
Compositions are read once each and checked against every module reference naming them (see
`compositions.py`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

from brain.composition import ModuleRef
from brain.errors import BrainError, IntegrityError
from brain.identity import OciDigest
from brain.snapshot import Snapshot
from brain.store.blobs import BlobStore, open_regular
from brain.store.head import Head
from brain.verify.compositions import (
    PARALLEL_BYTES,
    composition_problems,
    inspect_compositions,
    ref_problems,
    stored_bytes,
    usable,
)
from brain.concurrency import parallel_map
from brain.verify.integrity import unreadable
from brain.verify.report import Problem
from brain.identity.rehash import DigestMismatch, decode_rehashed


@dataclass
class ModuleState:
    """One module at one snapshot: its reference and, when the composition is usable, its members."""

    memory_type: str
    ref: ModuleRef
    members: frozenset[str] | None

    @cached_property
    def tombstones(self) -> frozenset[str]:
        """Members whose bytes were destroyed on purpose (redaction)."""
        return frozenset(str(t) for t in self.ref.tombstones or ())


@dataclass
class History:
    """The snapshots reachable from the checked one (and from the retained list when it is the head)."""

    target: str
    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    modules: dict[str, dict[str, ModuleState]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    partial: bool = False
    partial_reasons: list[str] = field(default_factory=list)

    def mark_partial(self, reason: str) -> None:
        """Record that the history stops early, and why."""
        self.partial = True
        self.partial_reasons.append(reason)

    def ever_members(self) -> frozenset[str]:
        """Every block that is or was a member of any module in the checked history."""
        # Snapshots sharing a composition share its member set object: union each one once.
        distinct = {id(s.members): s.members for states in self.modules.values() for s in states.values() if s.members}
        return frozenset().union(*distinct.values())


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]


class HistoryWalker:
    """Loads and checks the snapshots of one brain and the compositions they name, each at most once."""

    def __init__(self, blobs: BlobStore, jobs: int | None = None) -> None:
        self.blobs = blobs
        self.jobs = jobs

    def walk(self, head: Head | None, target: OciDigest) -> History:
        """Check `target`, its ancestors and (when it is the head) every retained snapshot."""
        history = History(target=str(target))
        retained: set[str] = set()
        starts = [str(target)]
        if head is not None:
            retained = {str(d) for d in head.retained}
            if head.retained and head.retained[0] != head.snapshot:
                history.problems.append(
                    Problem.of(
                        "head-not-retained",
                        f"boltzmann/head.json names snapshot {head.snapshot} but its retained list starts with "
                        f"{head.retained[0]}",
                        block=head.snapshot,
                    )
                )
            if head.origin is not None and head.origin.partial:
                history.mark_partial(f"pulled partially from {head.origin.reference}")
            if target == head.snapshot:
                starts += [str(d) for d in head.retained]
        named_by = {digest: "named by boltzmann/head.json" for digest in starts}
        queue = deque(starts)
        seen: set[str] = set()
        while queue:
            digest = queue.popleft()
            if digest in seen:
                continue
            seen.add(digest)
            required = digest == str(target) or digest in retained
            snapshot = self._load_snapshot(history, digest, named_by[digest], required)
            if snapshot is None:
                continue
            history.snapshots[digest] = snapshot
            for parent in snapshot.parent_digests:
                named_by.setdefault(str(parent), f"parent of snapshot {digest}")
                queue.append(str(parent))
        self._check_compositions(history)
        return history

    def _load_snapshot(self, history: History, digest: str, named_by: str, required: bool) -> Snapshot | None:
        path = self.blobs.path(OciDigest.parse(digest))
        try:
            with open_regular(path) as handle:
                data = handle.read()
        except (FileNotFoundError, NotADirectoryError):
            if required:
                history.problems.append(
                    Problem.of("snapshot-missing", f"snapshot {named_by} is not stored at {path}", block=digest)
                )
            else:
                history.mark_partial(f"snapshot {digest} ({named_by}) is not stored")
            return None
        except (BrainError, OSError) as e:  # a FIFO, a directory, no permission: damage, never a hang or a crash
            history.problems.append(
                Problem.of("snapshot-corrupt", f"{path} ({named_by}): {unreadable(e)}", block=digest)
            )
            return None
        try:
            return decode_rehashed(data, digest, lambda checked: Snapshot.decode(checked, OciDigest.parse(digest)))
        except DigestMismatch as e:
            history.problems.append(
                Problem.of("snapshot-corrupt", f"{path} ({named_by}) hashes to {e.actual}", block=digest)
            )
            return None
        except IntegrityError as e:
            history.problems.append(Problem.of("snapshot-invalid", f"{path} ({named_by}): {e.message}", block=digest))
            return None

    def _check_compositions(self, history: History) -> None:
        """Read every distinct composition once (in parallel when large), then check each reference to it."""
        first_use: dict[str, tuple[str, str]] = {}
        for digest, snapshot in history.snapshots.items():
            for key, ref in snapshot.modules.items():
                first_use.setdefault(str(ref.composition), (key, digest))
        digests = sorted(first_use)
        heavy = stored_bytes(self.blobs.root, digests) >= PARALLEL_BYTES
        threshold = 1 if heavy else len(digests) + 1
        found = {
            f.digest: f for f in parallel_map(inspect_compositions, self.blobs.root, digests, self.jobs, threshold)
        }
        members: dict[str, frozenset[str] | None] = {}
        for digest, (module, first) in first_use.items():
            facts = found[digest]
            where = f"{self.blobs.path(OciDigest.parse(digest))}, named by snapshot {_short(first)}"
            history.problems.extend(composition_problems(facts, module, where))
            members[digest] = frozenset(facts.ids) if usable(facts) else None
        checked: set[tuple[str, str, str, int, tuple[str, ...]]] = set()
        for digest, snapshot in history.snapshots.items():
            states: dict[str, ModuleState] = {}
            for key, ref in snapshot.modules.items():
                composition = str(ref.composition)
                ids = members[composition]
                states[key] = ModuleState(key, ref, ids)
                once = (key, composition, str(ref.root), ref.block_count, tuple(map(str, ref.tombstones or ())))
                if ids is None or once in checked:
                    continue
                checked.add(once)
                where = f"module reference in snapshot {_short(digest)}"
                history.problems.extend(ref_problems(key, ref, found[composition], ids, where))
            history.modules[digest] = states
