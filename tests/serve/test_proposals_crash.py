"""A SIGKILL in the middle of proposals leaves the proposals branch at a previous head (never a torn one), the
served head untouched, the brain verifiable, and the next proposal completes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brain.branches.refs import read_refs
from brain.brain import Brain
from tests.retrieval.conftest import run_cli
from tests.serve.test_proposals_http import canonical_ids

REPO = Path(__file__).resolve().parents[2]
WORKER = """
import sys
from pathlib import Path
from serve.proposals import ProposalDesk, ProposedCandidate
desk = ProposalDesk.open(Path(sys.argv[1]), None)
source = sys.argv[2]
round = 0
while True:
    round += 1
    candidates = [ProposedCandidate(memory_type="semantic", evidence=(source,), payload={
        "kind": "fact", "label": f"crash {sys.argv[3]} {round} {i}", "statement": f"statement {round} {i}"})
        for i in range(20)]
    desk.submit("crasher", "agents/crasher", candidates)
    print(round, flush=True)
"""


@pytest.mark.slow
def test_sigkill_mid_proposal_leaves_the_branch_at_a_previous_head(corpus_brain: Path) -> None:
    source = canonical_ids(corpus_brain)[0]
    served = Brain.open(corpus_brain).snapshot_digest()
    heads: list[str] = []
    # A probe: the time until the first proposal is committed (killed then, inside its second one); the
    # later kills land before, around and after that point, whatever the machine's load.
    probe = subprocess.Popen([sys.executable, "-c", WORKER, str(corpus_brain), source, "probe"],
                             cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = time.monotonic()
    assert probe.stdout is not None and probe.stdout.readline().strip() == "1", probe.stderr
    first = time.monotonic() - started
    delays = [0.0, first * 0.6, first * 0.9, first * 1.2, first * 1.6]
    for attempt, delay in enumerate(delays):
        if attempt == 0:
            child = probe
        else:
            child = subprocess.Popen([sys.executable, "-c", WORKER, str(corpus_brain), source, str(attempt)],
                                     cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        refs = read_refs(corpus_brain)
        entry = None if refs is None else refs.branches.get("proposals/crasher")
        if entry is not None:
            brain = Brain.open(corpus_brain)
            tip = brain.snapshot(entry.snapshot)  # stored and whole: every module it names resolves
            assert tip is not None
            for module in brain.modules(tip).values():
                assert len(module.block_ids) == module.ref.block_count
            heads.append(str(entry.snapshot))
        assert Brain.open(corpus_brain).snapshot_digest() == served
        done = run_cli("--brain", str(corpus_brain), "verify")
        assert done.code == 0, done
    assert heads, "no proposal was ever committed: the kills came too early"
    # After the kills a proposal completes and builds on the branch's last head.
    from serve.proposals import ProposalDesk, ProposedCandidate

    candidate = ProposedCandidate(memory_type="semantic", evidence=(source,),
                                  payload={"kind": "fact", "label": "after the crash", "statement": "it resumes"})
    result = ProposalDesk.open(corpus_brain, None).submit("crasher", "agents/crasher", [candidate])
    assert result.committed == 1 and str(result.base) == heads[-1]
