"""The snapshot history: walk head, retained and parent chains; check every snapshot and composition once.

A snapshot the head names (current or retained) must be stored; an older ancestor that is not stored means
the history was cut short (shallow or selective pull, pruning) and is reported as partial, not as damage.
Compositions are checked against the module reference naming them: canonical form, memory type, count,
recomputed Merkle root, tombstones.
"""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import dataclass, field

from brain.composition import Composition, ModuleRef
from brain.errors import IntegrityError
from brain.identity import OciDigest
from brain.snapshot import Snapshot
from brain.store.blobs import BlobStore
from brain.store.head import Head
from brain.verify.report import Problem


@dataclass(frozen=True)
class ModuleState:
    """One module at one snapshot: its reference and, when the composition is usable, its members."""

    memory_type: str
    ref: ModuleRef
    members: frozenset[str] | None

    @property
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

    def first_parent_pairs(self) -> list[tuple[str, str]]:
        """(child, first parent) for every checked snapshot whose first parent was checked too, newest first."""
        pairs = []
        for digest, snapshot in self.snapshots.items():
            parent = snapshot.first_parent
            if parent is not None and str(parent) in self.snapshots:
                pairs.append((digest, str(parent)))
        return pairs

    def ever_members(self) -> frozenset[str]:
        """Every block that is or was a member of any module in the checked history."""
        found: set[str] = set()
        for states in self.modules.values():
            for state in states.values():
                if state.members is not None:
                    found |= state.members
        return frozenset(found)


def _short(digest: str) -> str:
    return digest.removeprefix("sha256:")[:12]


class HistoryWalker:
    """Loads and checks snapshots and compositions of one brain, each at most once."""

    def __init__(self, blobs: BlobStore) -> None:
        self.blobs = blobs
        self._compositions: dict[str, frozenset[str] | None] = {}
        self._checked_refs: set[tuple[str, str, str, int, tuple[str, ...]]] = set()
        # Roots are recomputed once per composition; every reference to it is compared against the cache.
        self._roots: dict[str, str] = {}
        self._types: dict[str, str] = {}

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
                self._mark_partial(history, f"pulled partially from {head.origin.reference}")
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
            history.modules[digest] = self._check_modules(history, digest, snapshot)
            for parent in snapshot.parent_digests:
                named_by.setdefault(str(parent), f"parent of snapshot {digest}")
                queue.append(str(parent))
        return history

    def _mark_partial(self, history: History, reason: str) -> None:
        history.partial = True
        history.partial_reasons.append(reason)

    def _load_snapshot(self, history: History, digest: str, named_by: str, required: bool) -> Snapshot | None:
        path = self.blobs.path(OciDigest.parse(digest))
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            if required:
                history.problems.append(
                    Problem.of("snapshot-missing", f"snapshot {named_by} is not stored at {path}", block=digest)
                )
            else:
                self._mark_partial(history, f"snapshot {digest} ({named_by}) is not stored")
            return None
        actual = "sha256:" + hashlib.sha256(data).hexdigest()
        if actual != digest:
            history.problems.append(
                Problem.of("snapshot-corrupt", f"{path} ({named_by}) hashes to {actual}", block=digest)
            )
            return None
        try:
            return Snapshot.decode(data, OciDigest.parse(digest))
        except IntegrityError as e:
            history.problems.append(Problem.of("snapshot-invalid", f"{path} ({named_by}): {e.message}", block=digest))
            return None

    def _check_modules(self, history: History, digest: str, snapshot: Snapshot) -> dict[str, ModuleState]:
        states: dict[str, ModuleState] = {}
        for key, ref in snapshot.modules.items():
            members = self._composition(history, key, ref, digest)
            if members is not None:
                self._check_ref(history, key, ref, members, digest)
            states[key] = ModuleState(key, ref, members)
        return states

    def _composition(self, history: History, module: str, ref: ModuleRef, snapshot: str) -> frozenset[str] | None:
        digest = str(ref.composition)
        if digest in self._compositions:
            return self._compositions[digest]
        members: frozenset[str] | None = None
        path = self.blobs.path(ref.composition)
        where = f"{path}, named by snapshot {_short(snapshot)}"
        try:
            data = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            history.problems.append(Problem.of("composition-missing", f"not stored at {where}", module=module, block=digest))
            data = None
        if data is not None:
            actual = "sha256:" + hashlib.sha256(data).hexdigest()
            if actual != digest:
                history.problems.append(
                    Problem.of("composition-corrupt", f"{where}: hashes to {actual}", module=module, block=digest)
                )
            else:
                members = self._decode(history, module, data, ref, where)
        self._compositions[digest] = members
        return members

    def _decode(self, history: History, module: str, data: bytes, ref: ModuleRef, where: str) -> frozenset[str] | None:
        try:
            composition = Composition.decode(data, ref.composition)
        except IntegrityError as e:
            history.problems.append(Problem.of("composition-invalid", f"{where}: {e.message}", module=module, block=str(ref.composition)))
            return None
        self._roots[str(ref.composition)] = str(composition.root)
        self._types[str(ref.composition)] = composition.memory_type.value
        return frozenset(str(b) for b in composition.block_ids)

    def _check_ref(self, history: History, module: str, ref: ModuleRef, members: frozenset[str], snapshot: str) -> None:
        key = (module, str(ref.composition), str(ref.root), ref.block_count, tuple(str(t) for t in ref.tombstones or ()))
        if key in self._checked_refs:
            return
        self._checked_refs.add(key)
        where = f"module reference in snapshot {_short(snapshot)}"
        composition = str(ref.composition)
        kind = self._types.get(composition)
        if kind is not None and kind != module:
            history.problems.append(
                Problem.of(
                    "memory-type-mismatch",
                    f"{where} names a {kind} composition for the {module} module",
                    module=module,
                    block=composition,
                )
            )
        root = self._roots.get(composition)
        if root is not None and root != str(ref.root):
            history.problems.append(
                Problem.of(
                    "root-mismatch",
                    f"{where} says root {ref.root}; the composition's members recompute to {root}",
                    module=module,
                    block=composition,
                )
            )
        if ref.block_count != len(members):
            history.problems.append(
                Problem.of(
                    "block-count-mismatch",
                    f"{where} says {ref.block_count} members; the composition has {len(members)}",
                    module=module,
                    block=composition,
                )
            )
        for tombstone in ref.tombstones or ():
            if str(tombstone) not in members:
                history.problems.append(
                    Problem.of(
                        "tombstone-not-member",
                        f"{where} lists tombstone {tombstone}, which is not a member",
                        module=module,
                        block=str(tombstone),
                    )
                )
