"""Signers: key files (plain, passphrase-protected, wrong type) and a real `ssh-agent` (and one that hangs)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from brain.authn import sshsig
from brain.authn.signer import armored_signature
from brain.errors import AgentError, AgentKeyNotFoundError, SigningKeyError, UsageError
from signers import open_signer
from signers.agent import AgentClient
from tests.authn.keys import public_text, require_tool, write_key

MESSAGE = b'{"boltzmann":1}'


def _no_passphrase(path: Path) -> bytes | None:
    return None


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A real ssh-agent on a socket in tmp_path; yields the environment naming it."""
    binary = require_tool("ssh-agent")
    sock = tmp_path / "agent.sock"
    process = subprocess.Popen([binary, "-D", "-a", str(sock)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if sock.exists():
                break
            threading.Event().wait(0.01)
        yield {"SSH_AUTH_SOCK": str(sock)}
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_key_file_signs_and_never_shows_its_secret(tmp_path: Path) -> None:
    key = write_key(tmp_path, "plain")
    signer = open_signer(str(key), _no_passphrase)
    assert sshsig.check(armored_signature(signer, MESSAGE), MESSAGE) is sshsig.Check.GOOD
    assert signer.public_key.text == public_text(key)
    secret = key.read_text()
    assert not any(line in repr(signer) for line in secret.splitlines()[1:-1])


def test_a_passphrase_protected_key(tmp_path: Path) -> None:
    key = write_key(tmp_path, "locked", passphrase=b"correct horse")
    with pytest.raises(SigningKeyError, match="passphrase-protected and no passphrase"):
        open_signer(str(key), _no_passphrase)
    with pytest.raises(SigningKeyError, match="the passphrase is wrong") as refused:
        open_signer(str(key), lambda p: b"wrong")
    assert "wrong" not in str(refused.value).replace("is wrong", "")
    signer = open_signer(str(key), lambda p: b"correct horse")
    assert sshsig.check(armored_signature(signer, MESSAGE), MESSAGE) is sshsig.Check.GOOD


def test_keys_that_cannot_sign_are_refused_in_one_line(tmp_path: Path) -> None:
    rsa = tmp_path / "rsa"
    subprocess.run([require_tool("ssh-keygen"), "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(rsa)], check=True)
    with pytest.raises(SigningKeyError, match="is a RSA key; brains are signed with Ed25519 keys only"):
        open_signer(str(rsa), _no_passphrase)
    junk = tmp_path / "junk"
    junk.write_text("not a key\n")
    with pytest.raises(SigningKeyError, match="neither a private key file nor a public key"):
        open_signer(str(junk), _no_passphrase)
    with pytest.raises(SigningKeyError, match="no signing key at"):
        open_signer(str(tmp_path / "missing"), _no_passphrase)
    with pytest.raises(UsageError, match="SSH_AUTH_SOCK is not set"):
        open_signer(str(rsa) + ".pub", _no_passphrase, environ={})


def test_a_real_ssh_agent_signs_named_by_pub_file_key_or_fingerprint(tmp_path: Path, agent: dict[str, str]) -> None:
    key = write_key(tmp_path, "held")
    subprocess.run(
        [require_tool("ssh-add"), "-q", str(key)], env={**os.environ, **agent}, check=True, capture_output=True
    )
    text = public_text(key)
    fingerprint = open_signer(str(key), _no_passphrase).public_key.fingerprint
    for spec in (str(key) + ".pub", text, fingerprint):
        signer = open_signer(spec, _no_passphrase, environ=agent)
        assert type(signer).__name__ == "AgentSigner"
        signature = armored_signature(signer, MESSAGE)
        assert sshsig.check(signature, MESSAGE) is sshsig.Check.GOOD
        # Ed25519 is deterministic: the agent's signature is the key file's.
        assert signature == armored_signature(open_signer(str(key), _no_passphrase), MESSAGE)
    other = write_key(tmp_path, "elsewhere")
    with pytest.raises(AgentKeyNotFoundError, match=re.escape(fingerprint)):
        open_signer(str(other) + ".pub", _no_passphrase, environ=agent)


def test_an_agent_that_does_not_answer_times_out(tmp_path: Path) -> None:
    sock_path = tmp_path / "silent.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(sock_path))
    server.listen(1)
    held: list[socket.socket] = []
    thread = threading.Thread(target=lambda: held.append(server.accept()[0]), daemon=True)
    thread.start()
    try:
        with pytest.raises(AgentError, match="did not answer within 0.2 s"):
            AgentClient(sock_path, timeout=0.2).identities()
    finally:
        for conn in held:
            conn.close()
        server.close()
    with pytest.raises(AgentError, match="no ssh-agent listens"):
        AgentClient(tmp_path / "nobody.sock").identities()


def test_key_material_passed_as_the_argument_is_never_echoed(tmp_path: Path) -> None:
    secret = write_key(tmp_path, "pasted").read_text()
    with pytest.raises(SigningKeyError) as refused:
        open_signer(secret, _no_passphrase)
    assert "not the key's contents" in str(refused.value)
    assert not any(line in str(refused.value) for line in secret.splitlines()[1:-1])


def test_ingest_signs_through_the_agent_from_the_cli(tmp_path: Path, agent: dict[str, str], brain) -> None:  # type: ignore[no-untyped-def]
    key = write_key(tmp_path, "agentkey")
    subprocess.run(
        [require_tool("ssh-add"), "-q", str(key)], env={**os.environ, **agent}, check=True, capture_output=True
    )
    key.unlink()  # only the agent holds the private half now
    target = tmp_path / "brain"
    done = brain("--brain", str(target), "init", "--trust-key", f"{key}.pub", "--sign-with", f"{key}.pub", env=agent)
    assert done.code == 0, done
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.txt").write_text("signed by a key that never touches the disk\n")
    done = brain("--brain", str(target), "--actor", "agent@example.org", "ingest", str(tmp_path / "docs"), env=agent | {
        "BRAIN_SIGN_WITH": f"{key}.pub"})
    assert done.code == 0, done
    assert brain("--brain", str(target), "verify", "--json").json()["authenticity"]["state"] == "authorized"


def test_the_passphrase_is_asked_on_a_terminal(tmp_path: Path) -> None:
    import pty
    import sys
    import time

    key = write_key(tmp_path, "locked", passphrase=b"typed secret")
    brain_exe = Path(sys.executable).with_name("brain")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}
    pid, fd = pty.fork()
    if pid == 0:  # the child: `brain init` on the pty's terminal
        os.execve(str(brain_exe), [str(brain_exe), "--brain", str(tmp_path / "b"), "init", "--trust-key", f"{key}.pub",
                                   "--sign-with", str(key)], env)
    seen = b""
    deadline = time.monotonic() + 60
    while b"Passphrase for" not in seen and time.monotonic() < deadline:
        seen += os.read(fd, 1024)
    os.write(fd, b"typed secret\n")
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 1024):
            seen += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, seen
    # Asked with echo off: the typed passphrase never shows on the terminal.
    assert b"Initialized a governed brain" in seen and b"typed secret" not in seen
    assert (tmp_path / "b" / "boltzmann" / "signatures.json").exists()
