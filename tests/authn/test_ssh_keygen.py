"""Conformance with OpenSSH's own `ssh-keygen -Y` (the real binary) in both directions (§9.1)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from brain.authn.records import SignatureRecord
from brain.brain import Brain
from brain.identity import OciDigest
from brain.snapshot import TrustScope
from brain.store.authn_files import store_record
from tests.authn.keys import (
    LECTURER_SEED,
    SIGNED_BRAIN,
    public_text,
    require_tool,
    write_key,
)
from tests.cli.conftest import BrainRunner

NAMESPACE = "boltzmann.snapshot.v1"


def _keygen(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [require_tool("ssh-keygen"), "-Y", *args], input=stdin, capture_output=True, timeout=30, check=False
    )


def _governed(tmp_path: Path, brain: BrainRunner, key: Path) -> Path:
    target = tmp_path / "governed"
    done = brain(
        "--brain", str(target), "init", "--trust-key", f"{key}.pub@signer@example.org", "--sign-with", str(key)
    )
    assert done.code == 0, done
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "note.txt").write_text("Signed notes travel with their signatures.\n")
    done = brain(
        "--brain", str(target), "--actor", "signer@example.org", "ingest", str(tmp_path / "docs"), "--sign-with",
        str(key),
    )
    assert done.code == 0, done
    return target


def test_ssh_keygen_accepts_every_signature_this_tool_writes(tmp_path: Path, brain: BrainRunner) -> None:
    key = write_key(tmp_path, "signer")
    target = _governed(tmp_path, brain, key)
    index = json.loads((target / "boltzmann" / "signatures.json").read_text())["entries"]
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f'signer@example.org namespaces="{NAMESPACE}" {public_text(key)}\n')
    assert len(index) == 2  # the genesis and the ingest's snapshot
    for snapshot, records in index.items():
        message = (target / "blobs" / "sha256" / snapshot.removeprefix("sha256:")).read_bytes()
        for record_digest in records:
            record = SignatureRecord.decode(
                (target / "blobs" / "sha256" / record_digest.removeprefix("sha256:")).read_bytes()
            )
            sig = tmp_path / "sig"
            sig.write_text(record.signature)
            check = _keygen("check-novalidate", "-n", NAMESPACE, "-s", str(sig), stdin=message)
            assert check.returncode == 0 and b'Good "boltzmann.snapshot.v1" signature' in check.stdout, check
            verify = _keygen(
                "verify", "-f", str(allowed), "-I", "signer@example.org", "-n", NAMESPACE, "-s", str(sig), stdin=message
            )
            assert verify.returncode == 0 and b"for signer@example.org" in verify.stdout, verify
            assert _keygen("verify", "-f", str(allowed), "-I", "signer@example.org", "-n", "git", "-s", str(sig),
                           stdin=message).returncode != 0
            assert _keygen("check-novalidate", "-n", NAMESPACE, "-s", str(sig), stdin=message + b"x").returncode != 0


def test_the_fixture_key_signs_exactly_what_the_reference_wrote(tmp_path: Path) -> None:
    key = write_key(tmp_path, "lecturer", LECTURER_SEED)
    message = (SIGNED_BRAIN / "snapshot-head.json").read_bytes()
    done = subprocess.run([require_tool("ssh-keygen"), "-Y", "sign", "-n", NAMESPACE, "-f", str(key)], input=message,
                          capture_output=True, timeout=30, check=True)
    assert done.stdout.decode() == (SIGNED_BRAIN / "record-head.sig").read_text()


def test_brain_verify_accepts_a_record_wrapping_an_ssh_keygen_signature(tmp_path: Path, brain: BrainRunner) -> None:
    key = write_key(tmp_path, "signer")
    target = _governed(tmp_path, brain, key)
    (target / "boltzmann" / "signatures.json").unlink()  # only ssh-keygen's signature over the head remains
    handle = Brain.open(target)
    head = handle.snapshot_digest()
    assert head is not None
    message = handle.blobs.get(head)
    signed = subprocess.run([require_tool("ssh-keygen"), "-Y", "sign", "-n", NAMESPACE, "-f", str(key)], input=message,
                            capture_output=True, timeout=30, check=True).stdout.decode()
    from brain.authn.keys import parse_public_key_line

    record = SignatureRecord(
        key=parse_public_key_line(public_text(key)).fingerprint, scopes=(TrustScope.COMMIT, TrustScope.INGEST),
        signature=signed, snapshot=OciDigest.parse(str(head)),
    )
    store_record(handle.path, handle.blobs, record)
    done = brain("--brain", str(target), "verify", "--json")
    assert done.code == 0, done
    authenticity = done.json()["authenticity"]
    assert authenticity["state"] == "authorized" and authenticity["signatures"][0]["outcome"] == "valid"
    sha256 = subprocess.run(
        [require_tool("ssh-keygen"), "-Y", "sign", "-O", "hashalg=sha256", "-n", NAMESPACE, "-f", str(key)],
        input=message, capture_output=True, timeout=30, check=True,
    ).stdout.decode()
    store_record(handle.path, handle.blobs, record.model_copy(update={"signature": sha256}))
    done = brain("--brain", str(target), "verify", "--json")
    outcomes = sorted(v["outcome"] for v in done.json()["authenticity"]["signatures"])
    assert outcomes == ["invalid_signature", "valid"] and done.code == 0  # one valid key is enough by default
