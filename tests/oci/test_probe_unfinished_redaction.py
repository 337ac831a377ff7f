"""Issue 24 item 2, library level: while a redaction is unfinished, `pack`, `push`, `pull` and every writer
refuse (naming `brain redact --resume`) and `verify` reports it; the resume clears it."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain.blocks import Block
from brain.brain import Brain
from brain.errors import RefusedError
from brain.store.redaction import RedactionIntent, read_intent, write_intent
from brain.verify.engine import verify_brain
from oci.pack import pack
from oci.pull import pull
from oci.push import push
from oci.reference import parse_reference


@pytest.fixture
def interrupted(tmp_path: Path) -> Brain:
    brain = Brain.init(tmp_path / "brain")
    with brain.writer("tester@example.org") as writer:
        writer.add(Block.from_payload("episodic", {"summary": "an event", "occurred_at": "2026-01-01T00:00:00Z"}))
        writer.commit()
    head = brain.snapshot_digest()
    # What a kill right after the intent leaves when the snapshot never moved.
    write_intent(brain.path, RedactionIntent(parent=head, tombstones={"episodic": ["sha256:" + "ab" * 32]},
                                             destroy={"ab" * 32: "leak"}, reason="leak"))
    return brain


def test_everything_refuses_until_resumed(interrupted: Brain) -> None:
    brain = interrupted
    for attempt in (lambda: pack(brain, "v1"), lambda: push(brain, parse_reference("127.0.0.1:9/x/y:v1")),
                    lambda: pull(brain, parse_reference("127.0.0.1:9/x/y:v1")),
                    lambda: brain.writer("tester@example.org").__enter__()):
        with pytest.raises(RefusedError, match="interrupted") as refused:
            attempt()
        assert "brain redact --resume" in (refused.value.hint or "")
    report = verify_brain(brain, jobs=1)
    assert not report.ok and "redaction-unfinished" in {p.code for p in report.problems if p.is_error}
    from brain.lifecycle.redact_run import resume
    from oci.redaction import purge_copies

    done = resume(brain, purge_copies)
    assert done is not None and done.discarded and read_intent(brain.path) is None  # the head never moved
    assert "redaction-unfinished" not in {p.code for p in verify_brain(brain, jobs=1).problems}
    pack(brain, "v1")
    assert brain.layout.index().manifests
