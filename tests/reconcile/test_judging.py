"""The refusals and checks of §10.3-§10.5 beyond the common paths: trust roots, n-way merges, incoming
provenance that lies, a composition not held."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.blocks import MemoryType
from brain.blocks.provenance import ProvenanceBlock, RemovalMechanism, RemovalRecord
from brain.errors import NotFoundError, RefusedError
from brain.identity import utc_timestamp
from brain.reconcile.index import LedgerIndex
from brain.reconcile.operations import merge
from brain.reconcile.state import state_path
from brain.snapshot import Snapshot, TrustKey, TrustRoot, TrustScope
from brain.verify.engine import verify_brain
from tests.reconcile.helpers import ACTOR, AT, WHO, add, base, fact, members, source

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4"


def _index(brain):
    return lambda snapshot: LedgerIndex(brain, snapshot)


def _merge(brain, *theirs, **options):
    return merge(brain, ACTOR, list(theirs), _index(brain), reason="join", **options)


def test_different_trust_roots_are_a_governance_conflict(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    head = brain.snapshot()
    assert head is not None
    root = TrustRoot(govern_quorum=1, keys=(TrustKey(key=KEY, scopes=(TrustScope.GOVERN,), since=1),), revision=1)
    governed = Snapshot.with_lineage((brain.snapshot_digest(),), created_at=utc_timestamp(), modules=head.modules,
                                     trust_root=root)
    theirs = brain.blobs.put(governed.to_bytes())
    ours = brain.snapshot_digest()
    with pytest.raises(RefusedError, match="governance conflict"):
        _merge(brain, theirs)
    assert brain.snapshot_digest() == ours and not state_path(brain.path).exists()


def test_n_way_merge_of_shards_is_one_snapshot_with_every_parent(tmp_path: Path) -> None:
    from brain.branches.operations import create_branch

    brain, _, _ = base(tmp_path / "b")
    create_branch(brain, "y", ACTOR)
    ours = add(brain, source("shard 0"))
    one = add(brain, source("shard 1"), branch="x")
    two = add(brain, source("shard 2"), branch="y")
    outcome = _merge(brain, one, two)
    assert outcome.kind == "merged"
    assert brain.snapshot().parents == (ours, one, two)
    want = set().union(*(members(brain, d)["canonical"] for d in (ours, one, two)))
    assert members(brain)["canonical"] == want
    assert verify_brain(brain, jobs=1).ok


def test_incoming_removal_naming_a_member_is_rejected(tmp_path: Path) -> None:
    """Their removal record claims our source left, but it is a member of the result (§10.5, ours)."""
    brain, a, _ = base(tmp_path / "b")
    add(brain, source("main"))
    lie = ProvenanceBlock(record=RemovalRecord(actor=WHO, at=AT, blocks=(a.block_id,), mechanism=RemovalMechanism.DROP,
                                               memory_type=MemoryType.CANONICAL, reason="never happened"))
    with brain.writer(ACTOR, branch="x") as writer:
        writer.add(lie)
        theirs = writer.commit()
    assert theirs is not None
    outcome = _merge(brain, theirs)
    assert outcome.kind == "halted"
    [verdict] = outcome.plan.judgement.verdicts.values()
    assert verdict.block == lie.block_id and verdict.codes == ("removal-names-member",)


def test_incoming_supersession_of_a_non_member_is_rejected(tmp_path: Path) -> None:
    from brain.identity import BlockId
    from brain.lifecycle.records import supersession_record

    brain, _, s = base(tmp_path / "b")
    add(brain, source("main"))
    ghost = BlockId("ab" * 32)
    record = supersession_record(ghost, s.block_id, actor=WHO, at=AT, reason=None)
    with brain.writer(ACTOR, branch="x") as writer:
        writer.add(record)
        theirs = writer.commit()
    assert theirs is not None
    outcome = _merge(brain, theirs)
    [verdict] = outcome.plan.judgement.verdicts.values()
    assert verdict.block == record.block_id and verdict.codes == ("supersession-names-non-member",)


def test_incoming_block_citing_what_was_never_held(tmp_path: Path) -> None:
    brain, a, _ = base(tmp_path / "b")
    add(brain, source("main"))
    stranger = source("never registered anywhere")
    orphan = fact("Orphan", "cites a stranger", stranger)
    theirs = add(brain, orphan, branch="x")  # the block only, its source never added
    outcome = _merge(brain, theirs)
    [verdict] = outcome.plan.judgement.verdicts.values()
    assert verdict.block == orphan[0].block_id and "evidence-not-found" in verdict.codes
    assert verdict.missing == {stranger.block_id: "never_held"}


def test_a_block_not_held_names_what_to_fetch(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    add(brain, source("main"))
    extra = source("theirs, not fetched")
    theirs = add(brain, extra, branch="x")
    brain.blobs.path(extra.block_id).unlink()
    with pytest.raises(NotFoundError, match="not held here") as caught:
        _merge(brain, theirs)
    assert "brain fetch" in (caught.value.hint or "")


def test_a_composition_not_held_names_what_to_fetch(tmp_path: Path) -> None:
    brain, _, _ = base(tmp_path / "b")
    add(brain, source("main"))
    theirs = add(brain, source("theirs"), branch="x")
    snapshot = brain.snapshot(theirs)
    brain.blobs.path(snapshot.modules["canonical"].composition).unlink()
    with pytest.raises(NotFoundError, match="composition .* is not held"):
        _merge(brain, theirs)


def test_their_episodic_exclusion_is_refused(tmp_path: Path) -> None:
    from tests.reconcile.helpers import episode

    brain, a, _ = base(tmp_path / "b")
    add(brain, episode("an episode both hold", a))
    from brain.branches.operations import create_branch

    create_branch(brain, "z", ACTOR)
    add(brain, source("main"))
    with brain.writer(ACTOR, branch="z") as writer:  # a history no conforming writer makes
        writer.remove(MemoryType.EPISODIC, members(brain)["episodic"])
        theirs = writer.commit()
    assert theirs is not None
    with pytest.raises(RefusedError, match="episodic"):
        _merge(brain, theirs)


def test_an_n_way_merge_needing_answers_is_refused_naming_the_pairwise_fix(tmp_path: Path) -> None:
    # §10.6's reconcile.json holds one `theirs`: an n-way halt cannot be written exactly, so it is refused whole
    # and the refusal says how to get there (one head at a time, each of which can halt and be resolved).
    from brain.branches.operations import create_branch

    brain, _, _ = base(tmp_path / "b")
    create_branch(brain, "y", ACTOR)
    ours = add(brain, source("shard 0"))
    one = add(brain, source("shard 1"), branch="x")
    stranger = source("never registered anywhere")
    two = add(brain, fact("Orphan", "cites a stranger", stranger), branch="y")
    with pytest.raises(RefusedError, match="an n-way merge needs answers") as refused:
        _merge(brain, one, two)
    assert "merge the heads one at a time" in (refused.value.hint or "")
    assert brain.snapshot_digest() == ours and not state_path(brain.path).exists()
    # The fix it names works: the clean head merges, the other halts into a resolvable reconciliation.
    assert _merge(brain, one).kind == "merged"
    assert _merge(brain, two).kind == "halted" and state_path(brain.path).exists()
