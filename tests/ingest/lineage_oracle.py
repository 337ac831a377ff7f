"""The lineage as the ledger tells it: an independent route (typed records, not stored blocks) to check
what `ingest.lineage` logs and rebuilds against."""

from __future__ import annotations

from collections.abc import Iterable

from brain.blocks import Block
from brain.ledger import Ledger
from ingest.lineage import Fact, Lineage, facts_of, facts_of_block


def lineage_of_ledger(ledger: Ledger, semantic: Iterable[Block]) -> tuple[Lineage, list[Fact]]:
    """The lineage of a snapshot from its ledger (records in ledger order) and its semantic (and procedural)
    members, in that order."""
    facts = [f for _, record in ledger.records for f in facts_of(record)]
    facts += [f for block in semantic for f in facts_of_block(block)]
    return Lineage.of_facts(facts), facts
