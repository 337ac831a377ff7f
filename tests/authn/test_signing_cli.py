"""The signing commands end to end from the CLI on real files: init, ingest, sign, signatures, verify, trust."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain.authn.records import SignatureRecord
from brain.brain import Brain
from brain.identity import OciDigest, canonicalize
from tests.authn.keys import public_text, write_key
from tests.cli.conftest import BrainRunner, assert_one_line_error

ACTOR = "owner@example.org"


def _docs(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder


@pytest.fixture
def governed(tmp_path: Path, brain: BrainRunner) -> tuple[Path, Path]:
    """A governed brain (one key holding ingest, commit, govern) with one signed ingest; (brain, key)."""
    key = write_key(tmp_path, "owner")
    target = tmp_path / "brain"
    done = brain("--brain", str(target), "init", "--trust-key", f"{key}.pub@{ACTOR}", "--sign-with", str(key), "--json")
    assert done.code == 0, done
    assert done.json()["key"] and done.json()["genesis"]
    docs = _docs(tmp_path, "a.txt", "Fourier series decompose periodic signals.\n")
    done = brain("--brain", str(target), "--actor", ACTOR, "ingest", str(docs), "--sign-with", str(key), "--json")
    assert done.code == 0, done
    assert done.json()["signed"]["scopes"] == ["commit", "ingest"]
    return target, key


def _files(root: Path) -> dict[str, bytes]:
    """Every file of the brain but the lock and the rebuildable caches (`boltzmann/cache/`)."""
    cache = root / "boltzmann" / "cache"
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "lock" and cache not in p.parents}


def test_governed_init_ingest_and_verify(governed: tuple[Path, Path], brain: BrainRunner) -> None:
    target, _ = governed
    done = brain("--brain", str(target), "verify", "--json")
    assert done.code == 0, done
    authenticity = done.json()["authenticity"]
    assert authenticity["state"] == "authorized" and authenticity["role"] == "ordinary"
    assert authenticity["required_scopes"] == ["commit", "ingest"]
    assert authenticity["attribution"]["verified"] == [ACTOR]
    listing = brain("--brain", str(target), "signatures", "--json").json()
    assert [v["outcome"] for v in listing["signatures"]] == ["valid"]
    genesis = Brain.open(target).history()[-1][0]
    assert brain("--brain", str(target), "signatures", str(genesis), "--json").json()["role"] == "genesis"
    human = brain("--brain", str(target), "verify")
    assert "authorized" in human.stdout and human.code == 0


def test_init_refuses_bad_keys_and_writes_nothing(tmp_path: Path, brain: BrainRunner) -> None:
    key = write_key(tmp_path, "owner")
    locked = write_key(tmp_path, "locked", passphrase=b"secret words")
    target = tmp_path / "nothing"
    cases = [
        (("--trust-key", f"{key}.pub=commit", "--sign-with", str(key)), 3),  # no key holds govern
        (("--trust-key", f"{key}.pub", "--sign-with", str(locked)), 3),  # locked, no passphrase
        (("--trust-key", f"{key}.pub",), 3),  # unsigned genesis
        (("--trust-key", f"{locked}.pub=ingest,commit", "--trust-key", f"{key}.pub", "--sign-with", str(locked)), 5),
    ]
    for args, code in cases:
        done = brain(
            "--brain", str(target), "init", *args,
            env={"BRAIN_SIGNING_PASSPHRASE": "secret words"} if code == 5 else None,
        )
        assert_one_line_error(done, code)
        assert not target.exists()
    done = brain("--brain", str(target), "init", "--trust-key", f"{locked}.pub", "--sign-with", str(locked),
                 env={"BRAIN_SIGNING_PASSPHRASE": "secret words"})
    assert done.code == 0, done


def test_a_key_without_the_scope_is_refused_before_anything_is_written(
    governed: tuple[Path, Path], tmp_path: Path, brain: BrainRunner
) -> None:
    target, key = governed
    committer = write_key(tmp_path, "committer")
    done = brain("--brain", str(target), "trust", "rotate", "--add", f"{committer}.pub=commit", "--sign-with", str(key))
    assert done.code == 0, done
    before = _files(target)
    docs = _docs(tmp_path, "b.txt", "A second note.\n")
    done = brain("--brain", str(target), "--actor", ACTOR, "ingest", str(docs), "--sign-with", str(committer))
    assert_one_line_error(done, 5)
    assert "lacks scope ingest" in done.stderr
    assert _files(target) == before
    stranger = write_key(tmp_path, "stranger")
    done = brain("--brain", str(target), "sign", "--sign-with", str(stranger))
    assert_one_line_error(done, 5)
    assert "is not listed" in done.stderr and _files(target) == before


def test_brain_sign_adds_one_record_and_is_idempotent(governed: tuple[Path, Path], brain: BrainRunner) -> None:
    target, key = governed
    first = brain("--brain", str(target), "sign", "--sign-with", str(key), "--json")
    assert first.code == 0 and first.json()["new"] is False  # ingest already signed this head
    index = json.loads((target / "boltzmann" / "signatures.json").read_text())
    assert all(len(v) == 1 for v in index["entries"].values())


@pytest.mark.parametrize(("tamper", "outcome"), [
    ("signature", "invalid_signature"),
    ("armor", "invalid_signature"),
    ("namespace", "wrong_namespace"),
    ("key", "fingerprint_mismatch"),
])
def test_tampering_with_a_record_is_named(
    governed: tuple[Path, Path], brain: BrainRunner, tamper: str, outcome: str
) -> None:
    target, _ = governed
    handle = Brain.open(target)
    head = handle.snapshot_digest()
    index_file = target / "boltzmann" / "signatures.json"
    index = json.loads(index_file.read_text())
    [digest] = index["entries"][str(head)]
    record = json.loads(handle.blobs.get(OciDigest.parse(digest)))
    if tamper == "signature":  # flip one bit of the 64-byte signature (inside the last base64 line)
        lines = record["signature"].split("\n")
        lines[-3] = lines[-3][:10] + ("A" if lines[-3][10] != "A" else "B") + lines[-3][11:]
        record["signature"] = "\n".join(lines)
    elif tamper == "armor":
        record["signature"] = record["signature"].replace("-----END SSH SIGNATURE-----", "")
    elif tamper == "namespace":
        record["namespace"] = "git"
    else:
        record["key"] = "SHA256:" + "A" * 43
    data = canonicalize(record)
    new = handle.blobs.put(data)
    index["entries"][str(head)] = [str(new)]
    index_file.write_bytes(canonicalize(index))
    done = brain("--brain", str(target), "verify", "--json")
    assert done.code == 1
    authenticity = done.json()["authenticity"]
    assert authenticity["state"] == "unauthorized" and done.json()["ok"] is True  # integrity is fine
    assert authenticity["signatures"][0]["outcome"] == outcome
    assert "signatures_below_policy" in [f["code"] for f in authenticity["findings"]]


def test_tampering_with_the_trust_root_is_refused(
    governed: tuple[Path, Path], tmp_path: Path, brain: BrainRunner
) -> None:
    from brain.authenticity import sign_snapshot
    from brain.snapshot import TrustKey, TrustScope
    from signers import open_signer

    target, _ = governed
    handle = Brain.open(target)
    head = handle.snapshot()
    assert head is not None and head.trust_root is not None
    stranger = write_key(tmp_path, "stranger")
    admitted = TrustKey(
        key=public_text(stranger), scopes=(TrustScope.INGEST, TrustScope.COMMIT, TrustScope.GOVERN), since=1
    )
    root = head.trust_root.model_copy(update={"keys": (*head.trust_root.keys, admitted)})
    forged = head.model_copy(update={"trust_root": root})
    digest = handle.blobs.put(forged.to_bytes())
    (target / "boltzmann" / "head.json").write_bytes(
        canonicalize({"boltzmann": 1, "retained": [str(digest)], "snapshot": str(digest)})
    )
    done = brain("--brain", str(target), "verify", "--json")
    # The old record is over other bytes: nothing vouches for these (unsigned is reported, not failed: §9.10 item 5).
    assert done.code == 0 and done.json()["authenticity"]["state"] == "unsigned"
    sign_snapshot(handle, open_signer(str(stranger), lambda p: None), check_scopes=False)
    done = brain("--brain", str(target), "verify", "--json")
    authenticity = done.json()["authenticity"]
    assert done.code == 1 and authenticity["state"] == "unauthorized" and authenticity["role"] == "revision"
    assert {"quorum_failure", "revision_changed_content"} <= {f["code"] for f in authenticity["findings"]}
    assert authenticity["signatures"][0]["outcome"] == "unauthorized_key"


def test_rotation_with_quorum_two_and_a_revoked_keys_later_signature(
    governed: tuple[Path, Path], tmp_path: Path, brain: BrainRunner
) -> None:
    target, owner = governed
    second = write_key(tmp_path, "second")
    done = brain(
        "--brain", str(target), "trust", "rotate", "--add", f"{second}.pub@second@example.org", "--quorum", "2",
        "--sign-with", str(owner), "--json",
    )
    assert done.code == 0 and done.json()["applied"], done
    third = write_key(tmp_path, "third")
    plan = tmp_path / "plan.json"
    done = brain("--brain", str(target), "trust", "rotate", "--add", f"{third}.pub=commit", "--plan", str(plan))
    assert done.code == 0 and plan.exists()
    head_before = Brain.open(target).snapshot_digest()
    for name, key in (("r1", owner), ("r2", second)):
        done = brain(
            "--brain", str(target), "sign", "--document", str(plan), "--sign-with", str(key), "-o", str(tmp_path / name)
        )
        assert done.code == 0, done
    done = brain("--brain", str(target), "trust", "rotate", "--apply", str(plan), "--record", str(tmp_path / "r1"))
    assert_one_line_error(done, 5)
    assert "quorum_failure" in done.stderr and Brain.open(target).snapshot_digest() == head_before
    done = brain("--brain", str(target), "trust", "rotate", "--apply", str(plan), "--record", str(tmp_path / "r1"),
                 "--record", str(tmp_path / "r2"), "--json")
    assert done.code == 0, done
    assert (done.json()["quorum_met"], done.json()["quorum_required"]) == (2, 2)
    assert SignatureRecord.decode((tmp_path / "r1").read_bytes()).snapshot == Brain.open(target).snapshot_digest()
    # Revoke `second` (retired from the new revision) with both govern keys, then its later signature is refused.
    done = brain("--brain", str(target), "trust", "revoke", str(second) + ".pub", "--retired",
                 "--sign-with", str(owner), "--sign-with", str(second))
    assert done.code == 0, done
    docs = _docs(tmp_path, "c.txt", "After the revocation.\n")
    done = brain("--brain", str(target), "--actor", ACTOR, "ingest", str(docs), "--sign-with", str(second))
    assert_one_line_error(done, 5)
    assert "retired" in done.stderr
    done = brain("--brain", str(target), "--actor", ACTOR, "ingest", str(docs), "--sign-with", str(owner))
    assert done.code == 0, done
    from brain.authenticity import sign_snapshot
    from signers import open_signer

    sign_snapshot(Brain.open(target), open_signer(str(second), lambda p: None), check_scopes=False)
    verdicts = brain("--brain", str(target), "signatures", "--json").json()["signatures"]
    assert sorted(v["outcome"] for v in verdicts) == ["retired_key", "valid"]
    shown = brain("--brain", str(target), "trust", "show", "--json").json()
    assert shown["revision"] == 4 and [k["retired_from"] for k in shown["keys"]] == [None, 4, None]
    assert public_text(second) in [k["key"] for k in shown["keys"]]


def test_pin_and_a_pin_that_does_not_match(governed: tuple[Path, Path], brain: BrainRunner) -> None:
    target, _ = governed
    done = brain("--brain", str(target), "trust", "pin", "--json")
    assert done.code == 0 and done.json()["source"] == "first_use"
    assert brain("--brain", str(target), "verify", "--json").json()["authenticity"]["pinned"] is True
    done = brain("--brain", str(target), "trust", "pin", "sha256:" + "ab" * 32)
    assert done.code == 0
    result = brain("--brain", str(target), "verify", "--json")
    assert result.code == 1 and "trust_root_mismatch" in [f["code"] for f in result.json()["authenticity"]["findings"]]


def test_stance_offered_judges_a_proposal(governed: tuple[Path, Path], tmp_path: Path, brain: BrainRunner) -> None:
    target, owner = governed
    proposer = write_key(tmp_path, "proposer")
    assert brain("--brain", str(target), "trust", "rotate", "--add", f"{proposer}.pub=propose@bot@example.org",
                 "--sign-with", str(owner)).code == 0
    docs = _docs(tmp_path, "p.txt", "A proposed addition.\n")
    done = brain("--brain", str(target), "--actor", "bot@example.org", "ingest", str(docs))
    assert done.code == 0, done
    from brain.authenticity import sign_snapshot
    from signers import open_signer

    sign_snapshot(Brain.open(target), open_signer(str(proposer), lambda p: None), check_scopes=False)
    head = brain("--brain", str(target), "verify", "--json")
    assert head.code == 1 and "proposed_head" in [f["code"] for f in head.json()["authenticity"]["findings"]]
    offered = brain("--brain", str(target), "verify", "--stance", "offered", "--json")
    assert offered.code == 0, offered
    authenticity = offered.json()["authenticity"]
    assert authenticity["state"] == "attributable" and authenticity["signatures"][0]["outcome"] == "valid_as_proposal"


def test_an_ungoverned_brain_verifies_as_before(tmp_path: Path, brain: BrainRunner) -> None:
    target = tmp_path / "plain"
    assert brain("--brain", str(target), "init").code == 0
    docs = _docs(tmp_path, "n.txt", "No governance here.\n")
    assert brain("--brain", str(target), "--actor", ACTOR, "ingest", str(docs)).code == 0
    done = brain("--brain", str(target), "verify")
    assert done.code == 0 and "not governed" in done.stdout and "blocking" not in done.stdout
    key = write_key(tmp_path, "k")
    done = brain("--brain", str(target), "--actor", ACTOR, "ingest", str(docs), "--sign-with", str(key))
    assert_one_line_error(done, 5)
    assert "no trust root" in done.stderr


def test_lifecycle_commands_sign_and_check_scopes_first(
    governed: tuple[Path, Path], tmp_path: Path, brain: BrainRunner
) -> None:
    target, owner = governed
    committer = write_key(tmp_path, "committer2")
    assert brain(
        "--brain", str(target), "trust", "rotate", "--add", f"{committer}.pub=commit", "--sign-with", str(owner)
    ).code == 0
    handle = Brain.open(target)
    [source] = handle.module(handle.modules().__iter__().__next__()).block_ids  # the one canonical block
    before = _files(target)
    done = brain("--brain", str(target), "--actor", ACTOR, "drop", str(source), "--reason", "obsolete",
                 "--allow-canonical", "--yes", "--sign-with", str(committer))
    assert_one_line_error(done, 5)
    assert "lacks scope drop:canonical" in done.stderr and _files(target) == before
    done = brain("--brain", str(target), "--actor", ACTOR, "demote", str(source), "--reason", "old", "--sign-with",
                 str(committer), "--json")
    assert done.code == 0, done
    assert done.json()["signed"]["scopes"] == ["commit"]
    verify = brain("--brain", str(target), "verify", "--json").json()["authenticity"]
    assert verify["state"] == "authorized" and verify["required_scopes"] == ["commit"]
    done = brain("--brain", str(target), "--actor", ACTOR, "redact", str(source), "--reason", "leak", "--yes",
                 "--sign-with", str(committer))
    assert_one_line_error(done, 5)
    assert "lacks scope redact" in done.stderr


def test_bad_plan_and_record_files_are_usage_errors(
    governed: tuple[Path, Path], tmp_path: Path, brain: BrainRunner
) -> None:
    target, owner = governed
    junk = tmp_path / "junk.json"
    junk.write_text('{"not": "a plan"}')
    done = brain("--brain", str(target), "sign", "--document", str(junk), "--sign-with", str(owner))
    assert_one_line_error(done, 3)
    assert "is not a rotation plan" in done.stderr
    plan = tmp_path / "plan.json"
    assert brain(
        "--brain", str(target), "trust", "rotate", "--quorum", "1", "--scopes",
        f"{owner}.pub=ingest,commit,govern,redact", "--plan", str(plan)
    ).code == 0
    done = brain("--brain", str(target), "trust", "rotate", "--apply", str(plan), "--record", str(junk))
    assert_one_line_error(done, 3)
    assert "is not a signature record" in done.stderr
