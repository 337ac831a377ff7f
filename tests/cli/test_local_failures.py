"""Issue 12 items 14-15: local failures are one line with a documented exit code, never 70, never a hang.

A FIFO where a blob belongs, a directory where `index.json` or a layer belongs, an unreadable snapshot blob
(run without root's power over modes: root reads whatever the mode), and a full disk (a real 1 MiB tmpfs mounted in
a user namespace) — each through the installed console script.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from brain.brain import Brain
from tests.unprivileged import run_unprivileged
from tests.cli.conftest import (
    BRAIN_EXE,
    BrainRunner,
    Run,
    _environment,
    assert_one_line_error,
)

HEAD = "095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"
# A canonical member of the reference brain (also packed in the v2 canonical layer).
CANONICAL = "4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea"
CANONICAL_LAYER = "57207defa4a4dc6bbec7c431bae429dd137e4a76998e6235c623f80bdb5aa393"


def test_a_fifo_in_place_of_a_block_blob_is_damage_not_a_hang(brain_exe: BrainRunner, reference_brain: Path) -> None:
    blob = reference_brain / "blobs" / "sha256" / CANONICAL
    blob.unlink()
    os.mkfifo(blob)
    at = ("--brain", str(reference_brain))
    verify = brain_exe(*at, "verify", "--json")  # the runner's 60 s timeout fails the test on a hang
    assert verify.code == 1
    assert any(p["block"] == "sha256:" + CANONICAL and "FIFO" in p["detail"] for p in verify.json()["problems"])
    listed = brain_exe(*at, "ls")
    assert listed.code == 2 and "is a FIFO" in listed.stderr and "Traceback" not in listed.stderr
    assert_one_line_error(brain_exe(*at, "show", CANONICAL[:12]), 2)
    tagged = brain_exe(*at, "verify", "--tag", "v2")
    assert tagged.code == 1 and "Traceback" not in tagged.stderr


def test_a_fifo_in_place_of_a_layer_is_reported_by_verify_tag(brain_exe: BrainRunner, reference_brain: Path) -> None:
    layer = reference_brain / "blobs" / "sha256" / CANONICAL_LAYER
    layer.unlink()
    os.mkfifo(layer)
    run = brain_exe("--brain", str(reference_brain), "verify", "--tag", "v2", "--json")
    assert run.code == 1 and "Traceback" not in run.stderr, run


def test_a_directory_where_a_file_belongs(brain_exe: BrainRunner, reference_brain: Path) -> None:
    at = ("--brain", str(reference_brain))
    layer = reference_brain / "blobs" / "sha256" / CANONICAL_LAYER
    layer.unlink()
    layer.mkdir()
    tagged = brain_exe(*at, "verify", "--tag", "v2")
    assert tagged.code == 1 and "Traceback" not in tagged.stderr, tagged
    index = reference_brain / "index.json"
    index.unlink()
    index.mkdir()
    assert_one_line_error(brain_exe(*at, "tags"), 2)
    assert_one_line_error(brain_exe(*at, "pack", "--tag", "again"), 2)


def _unprivileged(*args: str, cwd: Path) -> Run:
    done = run_unprivileged([str(BRAIN_EXE), *args], cwd=cwd, env=_environment(None))
    return Run(done.returncode, done.stdout, done.stderr)


def test_an_unreadable_snapshot_blob_is_one_line(tmp_path: Path, reference_brain: Path) -> None:
    os.chmod(reference_brain / "blobs" / "sha256" / HEAD, 0o000)
    at = ("--brain", str(reference_brain))
    for command in (["status"], ["log"], ["ls"], ["show", CANONICAL[:12]], ["pack", "--tag", "x"]):
        run = _unprivileged(*at, *command, cwd=tmp_path)
        assert run.code == 2 and "permission denied" in run.stderr, (command, run)
        assert_one_line_error(run, 2)
    verify = _unprivileged(*at, "verify", "--json", cwd=tmp_path)
    assert verify.code in (1, 2) and "Traceback" not in verify.stderr, verify


def _on_full_tmpfs(script: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    """Run `script` (sh) with a 1 MiB, 200-inode tmpfs mounted at $FULL, in a user+mount namespace."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare is needed to mount a small tmpfs")
    mount = workdir / "full"
    mount.mkdir()
    wrapped = f'mount -t tmpfs -o size=1m,nr_inodes=200 tmpfs "$FULL" || exit 99\n{script}'
    env = {**_environment(None), "FULL": str(mount), "BRAIN": str(BRAIN_EXE)}
    done = subprocess.run(["unshare", "-rm", "sh", "-c", wrapped], cwd=workdir, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    if done.returncode == 99:
        pytest.skip(f"cannot mount a tmpfs in a user namespace here: {done.stderr.strip()}")
    return done


def test_a_full_disk_is_exit_8_and_the_brain_stays_at_its_snapshot(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "small.md").write_text("# small\n\nfits easily\n")
    big = docs / "big"
    big.mkdir()
    for number in range(40):
        (big / f"part{number}.txt").write_bytes(os.urandom(40_000))
    script = (
        '"$BRAIN" --brain "$FULL/b" init >/dev/null && "$BRAIN" --brain "$FULL/b" ingest docs/small.md >/dev/null\n'
        'echo "first=$?"\n'
        '"$BRAIN" --brain "$FULL/b" status --json > before.json\n'
        '"$BRAIN" --brain "$FULL/b" ingest docs/big 2> ingest.err; echo "ingest=$?"\n'
        '"$BRAIN" --brain "$FULL/b" pack --tag t 2> pack.err; echo "pack=$?"\n'
        '"$BRAIN" --brain "$FULL/b" status --json > after.json\n'
        '"$BRAIN" --brain "$FULL/b" verify >/dev/null 2>&1; echo "verify=$?"\n'
    )
    done = _on_full_tmpfs(script, tmp_path)
    assert "first=0" in done.stdout, done
    assert "ingest=8" in done.stdout, (done, (tmp_path / "ingest.err").read_text())
    lines = (tmp_path / "ingest.err").read_text().splitlines()
    error = [line for line in lines if line.startswith(("error: ", "hint: "))]  # progress lines go before
    assert len(error) == 2 and error[0].startswith("error: cannot write ") and "Traceback" not in "".join(lines)
    assert "no space left on the device; the brain stays at its last committed snapshot" in error[0]
    assert (tmp_path / "before.json").read_text() == (tmp_path / "after.json").read_text()
    assert "verify=0" in done.stdout, done
    assert "pack=8" in done.stdout or "pack=0" in done.stdout, done


def test_the_blob_store_reads_a_fifo_as_damage(reference_brain: Path) -> None:
    from brain.errors import NotRegularFileError
    from brain.identity import OciDigest

    blob = reference_brain / "blobs" / "sha256" / CANONICAL
    blob.unlink()
    os.mkfifo(blob)
    store = Brain.open(reference_brain).blobs
    with pytest.raises(NotRegularFileError, match="is a FIFO"):
        store.get(OciDigest(CANONICAL))
    with pytest.raises(NotRegularFileError):
        store.open(OciDigest(CANONICAL))
    assert not store.verify_file(OciDigest(CANONICAL))


@pytest.mark.registry
def test_a_full_disk_during_pull_is_exit_8(tmp_path: Path, registry: object) -> None:
    from oci.push import push
    from oci.reference import parse_reference
    from tests.oci.test_push_pull_registry import commit_texts

    source = Brain.init(tmp_path / "source")
    commit_texts(source, os.urandom(1 << 20).hex())  # a 2 MB source: more than the 1 MiB disk holds
    ref = f"{registry.host}/faults/full:v1"  # type: ignore[attr-defined]
    push(source, parse_reference(ref))
    done = _on_full_tmpfs(f'"$BRAIN" --brain "$FULL/p" pull {ref} 2> pull.err; echo "pull=$?"\n', tmp_path)
    errors = [line for line in (tmp_path / "pull.err").read_text().splitlines() if line.startswith("error: ")]
    assert "pull=8" in done.stdout, (done, errors)
    assert len(errors) == 1 and "no space left on the device" in errors[0]
