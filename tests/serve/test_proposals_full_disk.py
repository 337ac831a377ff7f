"""A proposal met by a full disk is refused as the user's to fix (HTTP 507, "free space"), not answered as a bug
(500): the brain is copied onto a real, nearly full tmpfs mounted in a user and mount namespace, and the proposal
process's own answering function runs there with a real desk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from http import HTTPStatus
from pathlib import Path

import pytest

from brain.errors import LocalStorageError
from serve.proposals_http import _status
from tests.serve.test_proposals_http import canonical_ids, fact

REPO = Path(__file__).resolve().parents[2]
ANSWER = """
import json, sys
from serve.proposals import ProposalDesk
from serve.proposals_process import _answer
desk = ProposalDesk.open(sys.argv[1], None)
request = {"kind": "propose", "name": "claude", "actor": "agent@example.org", "body": json.loads(sys.argv[2])}
print(json.dumps(_answer(desk, request)))
"""


def test_a_full_disk_is_a_storage_refusal_not_a_bug(corpus_brain: Path, tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("unshare is needed to mount a small tmpfs")
    mount = tmp_path / "full"
    mount.mkdir()
    body = json.dumps({"candidates": [fact(canonical_ids(corpus_brain)[0], label="full disk")]})
    script = (
        'mount -t tmpfs -o size=32m tmpfs "$FULL" || exit 99\n'
        'cp -r "$SOURCE" "$FULL/b" && rm -rf "$FULL/b/boltzmann/search"\n'
        'dd if=/dev/zero of="$FULL/fill" bs=64k 2>/dev/null\n'  # until the tmpfs is full
        '"$PYTHON" -c "$ANSWER" "$FULL/b" "$BODY"\n'
    )
    env = {**os.environ, "FULL": str(mount), "SOURCE": str(corpus_brain), "PYTHON": sys.executable,
           "ANSWER": ANSWER, "BODY": body, "PYTHONPATH": str(REPO)}
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    if done.returncode == 99:
        pytest.skip(f"cannot mount a tmpfs in a user namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer.get("family") == "LocalStorageError", answer
    assert "no space left" in answer["message"] and "free space" in answer["hint"], answer
    assert _status(LocalStorageError(answer["message"])) == HTTPStatus.INSUFFICIENT_STORAGE
