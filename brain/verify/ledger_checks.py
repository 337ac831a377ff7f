"""Ledger consistency at one snapshot (§3.7, §7.1): every member is explained by the records it needs.

Pure logic over `BlockFacts`: derived members have a derivation citing canonical evidence that agrees with
their payload, links resolve, canonical blocks are registered (and normalized views recorded), records name
blocks that are or were members, and no model is credited with a canonical or provenance block.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from brain.blocks.memory_type import MODULE_ORDER, PROPOSABLE_MEMORY_TYPES
from brain.verify.facts import BlockFacts, RecordFacts
from brain.verify.report import Problem

# The modules whose members need `derivation` and `validation` records: the proposable ones (§2), in §6.2 order.
DERIVED_MODULES = tuple(t.value for t in MODULE_ORDER if t in PROPOSABLE_MEMORY_TYPES)
PROTECTED_MODULES = ("canonical", "provenance")


@dataclass
class LedgerIndex:
    """The records of one provenance composition, indexed by the block they are about."""

    derivations: dict[str, list[tuple[str, RecordFacts]]] = field(default_factory=lambda: defaultdict(list))
    validated: set[str] = field(default_factory=set)
    registered: set[str] = field(default_factory=set)
    normalizations: dict[str, list[tuple[str, RecordFacts]]] = field(default_factory=lambda: defaultdict(list))
    # (record id, record) for supersession, demotion and removal records.
    state_changes: list[tuple[str, RecordFacts]] = field(default_factory=list)

    @classmethod
    def of(cls, provenance: list[BlockFacts]) -> LedgerIndex:
        """Index the readable records among `provenance` member facts."""
        index = cls()
        for facts in provenance:
            record = facts.record
            if not facts.ok or record is None:
                continue
            kind = record.record_type
            if kind == "derivation" and record.block:
                index.derivations[record.block].append((facts.block_id, record))
            elif kind == "validation" and record.block:
                index.validated.add(record.block)
            elif kind == "registration" and record.block:
                index.registered.add(record.block)
            elif kind == "normalization" and record.block:
                index.normalizations[record.block].append((facts.block_id, record))
            elif kind in ("supersession", "demotion", "removal"):
                index.state_changes.append((facts.block_id, record))
        return index


def ledger_problems(
    members: Mapping[str, frozenset[str] | None],
    facts: Mapping[str, BlockFacts],
    index: LedgerIndex,
    ever_members: frozenset[str],
    history_complete: bool,
    ledger_complete: bool,
) -> list[Problem]:
    """Every ledger inconsistency of one snapshot.

    A module whose composition is unusable is None in `members`: checks needing it are undecidable and
    skipped. `ledger_complete` is False when some provenance member cannot be read, so a record said to be
    missing might be in it; `ever_members` spans the walked history, complete iff `history_complete`.
    """
    if "provenance" in members and members["provenance"] is None:
        return []
    canonical = members.get("canonical", frozenset())
    known = [m for m in members.values() if m is not None]
    everything = frozenset().union(*known) if len(known) == len(members) else None
    problems: list[Problem] = []
    for module in DERIVED_MODULES:
        for block_id in sorted(members.get(module) or ()):
            found = _derived_problems(module, block_id, facts.get(block_id), index, canonical, everything)
            problems += [p for p in found if ledger_complete or not p.code.endswith("-missing")]
    if ledger_complete:
        for block_id in sorted(canonical or ()):
            problems += _canonical_problems(block_id, facts.get(block_id), index)
    problems += _state_change_problems(index, ever_members, history_complete)
    problems += _precedence_problems(index)
    problems += _model_made_problems(members, index)
    return problems


def _derived_problems(
    module: str,
    block_id: str,
    facts: BlockFacts | None,
    index: LedgerIndex,
    canonical: frozenset[str] | None,
    everything: frozenset[str] | None,
) -> list[Problem]:
    problems: list[Problem] = []
    derivations = index.derivations.get(block_id, [])
    if not derivations:
        problems.append(
            Problem.of(
                "derivation-missing", f"no derivation record names this {module} member", module=module, block=block_id
            )
        )
    if block_id not in index.validated:
        problems.append(
            Problem.of(
                "validation-missing", f"no validation record names this {module} member", module=module, block=block_id
            )
        )
    for record_id, record in derivations:
        for cited in record.derived_from:
            if canonical is not None and cited not in canonical:
                problems.append(
                    Problem.of(
                        "evidence-not-found",
                        f"derivation record for {block_id} cites {cited}, "
                        "which is not a member of the canonical module",
                        module="provenance", block=record_id,
                    )
                )
    if facts is None or not facts.ok:
        return problems
    if facts.evidence is not None and derivations:
        stated = set(facts.evidence)
        if not any(stated == set(record.derived_from) for _, record in derivations):
            recorded = sorted({e for _, record in derivations for e in record.derived_from})
            problems.append(
                Problem.of(
                    "evidence-mismatch",
                    f"payload evidence {sorted(stated)} differs from the derivation record's {recorded}",
                    module=module,
                    block=block_id,
                )
            )
    links = [("relation-target-not-found", "relation target", t) for t in facts.relations]
    links += [("step-use-not-found", "a step uses", t) for t in facts.uses]
    for code, what, target in links:
        if everything is not None and target not in everything:
            detail = f"{what} {target}, which is not a member of any module"
            problems.append(Problem.of(code, detail, module=module, block=block_id))
    return problems


def _canonical_problems(block_id: str, facts: BlockFacts | None, index: LedgerIndex) -> list[Problem]:
    problems: list[Problem] = []
    if block_id not in index.registered:
        problems.append(
            Problem.of(
                "registration-missing", "no registration record names this canonical member", module="canonical",
                block=block_id,
            )
        )
    has_view = facts is not None and facts.ok and any(b.role == "normalized view" for b in facts.blobs)
    if has_view and block_id not in index.normalizations:
        problems.append(
            Problem.of(
                "normalization-missing",
                "the block has a normalized view but no normalization record names it",
                module="canonical",
                block=block_id,
            )
        )
    return problems


def _state_change_problems(index: LedgerIndex, ever_members: frozenset[str], history_complete: bool) -> list[Problem]:
    # With history cut short, a block may have been a member of a snapshot that is not stored: undecidable.
    if not history_complete:
        return []
    problems: list[Problem] = []
    for record_id, record in index.state_changes:
        named = [*record.blocks, *(b for b in (record.block, record.supersedes) if b)]
        for block_id in named:
            if block_id not in ever_members:
                problems.append(
                    Problem.of(
                        "record-target-unknown",
                        f"{record.record_type} record names {block_id}, which is not and never was a member",
                        module="provenance",
                        block=record_id,
                    )
                )
    return problems


def _precedence_problems(index: LedgerIndex) -> list[Problem]:
    """A loser claimed by two different winners (a warning: both edges stand, §7.1)."""
    winners: dict[str, dict[str, str]] = defaultdict(dict)
    for record_id, record in index.state_changes:
        if record.record_type == "supersession" and record.supersedes and record.block:
            winners[record.supersedes].setdefault(record.block, record_id)
    problems = []
    for loser, claimed in sorted(winners.items()):
        if len(claimed) > 1:
            named = ", ".join(sorted(claimed))
            detail = f"block {loser} is superseded by {len(claimed)} different winners ({named})"
            problems.append(Problem.of("precedence-conflict", detail, module="provenance", block=min(claimed.values())))
    return problems


def _model_made_problems(members: Mapping[str, frozenset[str] | None], index: LedgerIndex) -> list[Problem]:
    problems: list[Problem] = []
    for module in PROTECTED_MODULES:
        for block_id in sorted(members.get(module) or ()):
            for record_id, record in index.derivations.get(block_id, []):
                if record.by_model:
                    problems.append(
                        Problem.of(
                            "model-derived-protected",
                            f"derivation record {record_id} credits a model with this {module} block",
                            module=module,
                            block=block_id,
                        )
                    )
    return problems
