"""Required scopes (§9.6): what a snapshot's change against its first parent needs, never the record's claim.

`scopes` is what is certainly required; every open question adds what it leaves possible, and a key is
fully valid only if it holds `possible`. The same pass collects what §9.7 steps 6 and 11 need from the
provenance blocks the snapshot adds (removals, actors), so those blocks are read once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from brain.authn.chain import ChainStore
from brain.authn.trust import digest_of
from brain.blocks.memory_type import MemoryType
from brain.composition import ModuleRef
from brain.snapshot import Snapshot, TrustScope

S = TrustScope
_REDACTING = frozenset({"tombstone", "crypto_shred", "lineage_rewrite"})


class Question(StrEnum):
    """An open question: the change could not be fully determined."""

    PARENT_UNRESOLVABLE = "parent_unresolvable"
    CANONICAL_UNREADABLE = "canonical_unreadable"
    REDACTION_UNDETERMINED = "redaction_undetermined"


OPENS: dict[Question, frozenset[TrustScope]] = {
    Question.PARENT_UNRESOLVABLE: frozenset({S.INGEST, S.COMMIT, S.DROP_CANONICAL, S.REDACT, S.GOVERN}),
    Question.CANONICAL_UNREADABLE: frozenset({S.INGEST, S.DROP_CANONICAL}),
    Question.REDACTION_UNDETERMINED: frozenset({S.REDACT}),
}


@dataclass
class Change:
    """What a snapshot changes against its first parent, as far as authentication cares."""

    scopes: set[TrustScope] = field(default_factory=set)
    questions: list[Question] = field(default_factory=list)
    # Actor ids of the provenance records the snapshot adds (§9.7 step 11), and how many were unreadable.
    actors: set[str] = field(default_factory=set)
    unreadable_records: list[str] = field(default_factory=list)
    added_records: list[str] = field(default_factory=list)

    @property
    def possible(self) -> frozenset[TrustScope]:
        """`scopes` plus everything an open question leaves possible."""
        opened: set[TrustScope] = set()
        for question in self.questions:
            opened |= OPENS[question]
        return frozenset(self.scopes | opened)

    def ask(self, question: Question) -> None:
        if question not in self.questions:
            self.questions.append(question)


def required_scopes(chain: ChainStore, snapshot: Snapshot, parent: Snapshot | None) -> Change:
    """§9.6 for `snapshot`; `parent` is its first parent (None for a root snapshot, judged against nothing).

    A first parent that is named but not held must be passed as None with `snapshot.first_parent` set:
    that is the `parent_unresolvable` question, and nothing else is determined.
    """
    change = Change()
    if parent is None and snapshot.first_parent is not None:
        change.ask(Question.PARENT_UNRESOLVABLE)
        return change
    if digest_of(snapshot.trust_root) != digest_of(None if parent is None else parent.trust_root):
        change.scopes.add(S.GOVERN)
    before: dict[str, ModuleRef] = {} if parent is None else dict(parent.modules)
    after = dict(snapshot.modules)
    for name in sorted(set(before) | set(after)):
        _module_change(chain, change, name, before.get(name), after.get(name))
    _provenance_change(chain, change, before.get(MemoryType.PROVENANCE.value), after.get(MemoryType.PROVENANCE.value))
    return change


def _module_change(chain: ChainStore, change: Change, name: str, old: ModuleRef | None, new: ModuleRef | None) -> None:
    if new is not None and set(new.tombstones or ()) - set((old.tombstones if old else None) or ()):
        change.scopes.add(S.REDACT)
    if old is not None and new is not None and old.root == new.root:
        return
    if name != MemoryType.CANONICAL.value:
        change.scopes.add(S.COMMIT)
        return
    if old is None:
        if new is not None and new.block_count > 0:
            change.scopes.add(S.INGEST)
        return
    if new is None:
        if old.block_count > 0:
            change.scopes.add(S.DROP_CANONICAL)
        return
    old_ids, new_ids = chain.member_ids(old), chain.member_ids(new)
    if old_ids is None or new_ids is None:
        change.ask(Question.CANONICAL_UNREADABLE)
        return
    if not new_ids <= old_ids:
        change.scopes.add(S.INGEST)
    if not old_ids <= new_ids:
        change.scopes.add(S.DROP_CANONICAL)


def _provenance_change(chain: ChainStore, change: Change, old: ModuleRef | None, new: ModuleRef | None) -> None:
    if new is None or new.block_count == 0 or (old is not None and old.root == new.root):
        return
    after = chain.member_ids(new)
    before = None if old is None else chain.member_ids(old)
    if after is None or (old is not None and before is None):
        change.ask(Question.REDACTION_UNDETERMINED)
        return
    tombstoned = {str(t) for t in new.tombstones or ()}
    added = sorted(after - (before or frozenset()))
    read = chain.ledger_facts([b for b in added if b not in tombstoned])
    for block_id in added:
        change.added_records.append(block_id)
        facts = read.get(block_id)
        if facts is None:
            change.unreadable_records.append(block_id)
            change.ask(Question.REDACTION_UNDETERMINED)
            continue
        change.actors.add(facts.actor)
        if facts.mechanism in _REDACTING:
            change.scopes.add(S.REDACT)
