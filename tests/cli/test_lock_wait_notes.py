"""pack, push, pull and fetch say whom they wait for when another process holds the writer lock."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from brain.blocks import CanonicalBlock
from brain.brain import Brain
from tests.registry import RegistryServer

BRAIN_EXE = Path(sys.executable).with_name("brain")

# Holds the lock until a line arrives on stdin, so a test decides exactly when it is released.
HOLD = textwrap.dedent(
    """
    import sys
    from brain.store import WriterLock
    with WriterLock(sys.argv[1]):
        print("locked", flush=True)
        sys.stdin.readline()
    """
)


@contextmanager
def held(brain: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding `brain`'s writer lock for the duration of the block."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(brain)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.communicate("release\n", timeout=30)


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    env.update({"NO_COLOR": "1", "DOCKER_CONFIG": str(tmp_path / "docker"), "HOME": str(tmp_path)})
    return env


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BRAIN_EXE), *args], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=120,
        check=False,
    )


def make_brain(path: Path, text: str = "locked out") -> Brain:
    brain = Brain.init(path)
    with brain.writer("tester@example.org") as writer:
        writer.add(CanonicalBlock(blob=writer.put_blob(text.encode()), media_type="text/plain", size=len(text)))
        writer.commit()
    return brain


def assert_waited_then_gave_up(done: subprocess.CompletedProcess[str], holder: subprocess.Popen[str]) -> None:
    assert done.returncode == 5, done.stderr
    assert f"waiting for writer pid {holder.pid} on host " in done.stderr, done.stderr
    assert "gave up after 1s" in done.stderr


def test_pack_says_whom_it_waits_for_and_times_out(tmp_path: Path) -> None:
    make_brain(tmp_path / "b")
    with held(tmp_path / "b") as holder:
        done = run(tmp_path, "--brain", "b", "--lock-timeout", "1", "pack", "--tag", "t")
    assert_waited_then_gave_up(done, holder)
    assert run(tmp_path, "--brain", "b", "tags", "--json").stdout.count('"tag"') == 0


def test_pack_waits_then_packs_once_the_lock_is_released(tmp_path: Path) -> None:
    make_brain(tmp_path / "b")
    with held(tmp_path / "b") as holder:
        process = subprocess.Popen(
            [str(BRAIN_EXE), "--brain", "b", "--lock-timeout", "20", "pack"],
            cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert process.stderr is not None
        assert process.stderr.readline().startswith(f"waiting for writer pid {holder.pid} on host ")
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0 and out.startswith("sha256:")


def test_quiet_pack_waits_silently(tmp_path: Path) -> None:
    make_brain(tmp_path / "b")
    with held(tmp_path / "b"):
        done = run(tmp_path, "--quiet", "--brain", "b", "--lock-timeout", "1", "pack")
    assert done.returncode == 5 and "waiting for" not in done.stderr


@pytest.mark.registry
def test_push_that_packs_says_whom_it_waits_for(registry: RegistryServer, tmp_path: Path) -> None:
    make_brain(tmp_path / "src")
    with held(tmp_path / "src") as holder:
        done = run(tmp_path, "--brain", "src", "--lock-timeout", "1", "push", registry.ref("lockwait/push:v1"))
    assert_waited_then_gave_up(done, holder)


@pytest.mark.registry
def test_pull_and_fetch_say_whom_they_wait_for(registry: RegistryServer, tmp_path: Path) -> None:
    make_brain(tmp_path / "src")
    ref = registry.ref("lockwait/pull:v1")
    assert run(tmp_path, "--brain", "src", "push", ref).returncode == 0
    Brain.init(tmp_path / "dest")
    with held(tmp_path / "dest") as holder:
        pulled = run(tmp_path, "--brain", "dest", "--lock-timeout", "1", "pull", ref)
        fetched = run(tmp_path, "--brain", "dest", "--lock-timeout", "1", "fetch", ref)
    assert_waited_then_gave_up(pulled, holder)
    assert_waited_then_gave_up(fetched, holder)
    assert Brain.open(tmp_path / "dest").snapshot_digest() is None
