"""Composition documents (§5.1) against the module references naming them (§5.2).

Each distinct composition is read once (`inspect_compositions`, a worker function: decoding and the Merkle
root dominate verification of a long history, so they run in the pool), then every reference naming it is
compared: memory type, recomputed root, member count, tombstones.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from brain.composition import Composition, ModuleRef
from brain.errors import BrainError, IntegrityError
from brain.identity import OciDigest
from brain.store.blobs import BLOB_DIR, open_regular
from brain.verify.facts import CORRUPT, INVALID, MISSING, OK
from brain.verify.integrity import unreadable
from brain.verify.report import Problem
from brain.identity.rehash import DigestMismatch, decode_rehashed

# A composition that decodes, but whose inclusion proofs do not verify (a Merkle implementation fault).
UNPROVABLE = "unprovable"
# Below this many stored composition bytes (~14,000 member ids) the pool costs more than it saves.
PARALLEL_BYTES = 1 << 20


class CompositionFacts(NamedTuple):
    """The outcome of reading one composition document."""

    digest: str
    state: str
    detail: str = ""
    memory_type: str | None = None
    root: str | None = None
    ids: tuple[str, ...] = ()


def inspect_compositions(root: Path, digests: Sequence[str]) -> list[CompositionFacts]:
    """Worker: read, re-hash, decode (§5.1) and recompute the root of each composition."""
    directory = os.path.join(root, *BLOB_DIR)
    return [_read(directory, digest) for digest in digests]


def _read(directory: str, digest: str) -> CompositionFacts:
    try:
        with open_regular(os.path.join(directory, digest.removeprefix("sha256:"))) as handle:
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return CompositionFacts(digest, MISSING)
    except (BrainError, OSError) as e:  # a FIFO, a directory, no permission: damage, never a hang or a crash
        return CompositionFacts(digest, CORRUPT, unreadable(e))
    try:
        composition = decode_rehashed(
            data, digest, lambda checked: Composition.decode(checked, OciDigest.parse(digest))
        )
    except DigestMismatch as e:
        return CompositionFacts(digest, CORRUPT, f"hashes to {e.actual}")
    except IntegrityError as e:
        return CompositionFacts(digest, INVALID, e.message)
    ids = tuple(map(str, composition.block_ids))
    # §8.6: a few inclusion proofs (first, middle, last member) must verify against the recomputed root.
    for index in sorted({0, len(ids) // 2, len(ids) - 1}) if ids else ():
        member = composition.block_ids[index]
        if not composition.prove(member).verify(composition.root):
            detail = f"the inclusion proof of member {member} does not verify against the recomputed root"
            return CompositionFacts(
                digest, UNPROVABLE, detail, composition.memory_type.value, str(composition.root), ids
            )
    return CompositionFacts(digest, OK, memory_type=composition.memory_type.value, root=str(composition.root), ids=ids)


def stored_bytes(root: Path, digests: Sequence[str]) -> int:
    """The total size of the stored files among `digests` (to decide whether a pool pays off)."""
    directory = Path(root).joinpath(*BLOB_DIR)
    total = 0
    for digest in digests:
        try:
            total += (directory / digest.removeprefix("sha256:")).stat().st_size
        except OSError:
            continue
    return total


def usable(facts: CompositionFacts) -> bool:
    """Whether the members of a composition are known (it decoded, even if a proof failed)."""
    return facts.state in (OK, UNPROVABLE)


def composition_problems(facts: CompositionFacts, module: str, where: str) -> list[Problem]:
    """A composition that is missing, corrupt, invalid, or whose inclusion proofs fail."""
    codes = {
        MISSING: "composition-missing",
        CORRUPT: "composition-corrupt",
        INVALID: "composition-invalid",
        UNPROVABLE: "proof-invalid",
    }
    if facts.state == OK:
        return []
    detail = f"not stored at {where}" if facts.state == MISSING else f"{where}: {facts.detail}"
    return [Problem.of(codes[facts.state], detail, module=module, block=facts.digest)]


def ref_problems(
    module: str, ref: ModuleRef, facts: CompositionFacts, members: frozenset[str], where: str
) -> list[Problem]:
    """Disagreements between a module reference and the (readable) composition it names."""
    problems: list[Problem] = []
    composition = facts.digest
    if facts.memory_type != module:
        detail = f"{where} names a {facts.memory_type} composition for the {module} module"
        problems.append(Problem.of("memory-type-mismatch", detail, module=module, block=composition))
    if facts.root != str(ref.root):
        detail = f"{where} says root {ref.root}; the composition's members recompute to {facts.root}"
        problems.append(Problem.of("root-mismatch", detail, module=module, block=composition))
    if ref.block_count != len(members):
        detail = f"{where} says {ref.block_count} members; the composition has {len(members)}"
        problems.append(Problem.of("block-count-mismatch", detail, module=module, block=composition))
    for tombstone in ref.tombstones or ():
        if str(tombstone) not in members:
            detail = f"{where} lists tombstone {tombstone}, which is not a member"
            problems.append(Problem.of("tombstone-not-member", detail, module=module, block=str(tombstone)))
    return problems
