"""A small ssh-agent client (draft-miller-ssh-agent): list identities and sign, over `SSH_AUTH_SOCK`.

Only the two requests a signer needs. Every socket operation has a timeout, so an agent that never
answers (or waits for a hardware touch that never comes) fails with one clear line instead of hanging.
"""

from __future__ import annotations

import socket
import struct
from pathlib import Path

from brain.authn.keys import ED25519, KeyFormatError, PublicKey
from brain.authn.wire import FramingError, Reader, string, uint32
from brain.errors import AgentError, AgentKeyNotFoundError

REQUEST_IDENTITIES = 11
IDENTITIES_ANSWER = 12
SIGN_REQUEST = 13
SIGN_RESPONSE = 14
FAILURE = 5
MAX_MESSAGE = 256 * 1024
CONNECT_TIMEOUT = 5.0
# Signing with a hardware token may wait for a touch.
SIGN_TIMEOUT = 60.0


class AgentClient:
    """One connection per request to the agent listening on `socket_path`."""

    def __init__(
        self, socket_path: str | Path, *, timeout: float = CONNECT_TIMEOUT, sign_timeout: float = SIGN_TIMEOUT
    ) -> None:
        self.socket_path = str(socket_path)
        self.timeout = timeout
        self.sign_timeout = sign_timeout

    def _request(self, kind: int, payload: bytes, timeout: float) -> tuple[int, Reader]:
        message = bytes([kind]) + payload
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(self.timeout)
                conn.connect(self.socket_path)
                conn.settimeout(timeout)
                conn.sendall(uint32(len(message)) + message)
                length = struct.unpack(">I", _receive(conn, 4))[0]
                if not 1 <= length <= MAX_MESSAGE:
                    raise AgentError(f"ssh-agent at {self.socket_path} sent a malformed answer ({length} bytes)")
                answer = _receive(conn, length)
        except TimeoutError:
            raise AgentError(
                f"ssh-agent at {self.socket_path} did not answer within {timeout:g} s",
                hint="is the agent alive (or waiting for a hardware-key touch)? check SSH_AUTH_SOCK",
            ) from None
        except (FileNotFoundError, ConnectionRefusedError):
            raise AgentError(
                f"no ssh-agent listens at {self.socket_path}",
                hint="start one (`eval $(ssh-agent)`) and `ssh-add` the key"
            ) from None
        except OSError as e:
            raise AgentError(f"ssh-agent at {self.socket_path}: {e.strerror or e}") from None
        return answer[0], Reader(answer[1:])

    def identities(self) -> list[tuple[PublicKey, str]]:
        """Every (key, comment) the agent holds; keys of types this tool cannot parse are skipped."""
        kind, reader = self._request(REQUEST_IDENTITIES, b"", self.timeout)
        if kind != IDENTITIES_ANSWER:
            raise AgentError(f"ssh-agent at {self.socket_path} refused to list its keys (answer type {kind})")
        found = []
        try:
            for _ in range(reader.uint32()):
                blob, comment = reader.string(), reader.string()
                try:
                    found.append((PublicKey.from_blob(blob), comment.decode("utf-8", "replace")))
                except KeyFormatError:
                    continue
        except FramingError as e:
            raise AgentError(f"ssh-agent at {self.socket_path} sent a malformed key list: {e}") from None
        return found

    def sign(self, key: PublicKey, data: bytes) -> bytes:
        """The raw Ed25519 signature the agent makes over `data` with `key`."""
        kind, reader = self._request(SIGN_REQUEST, string(key.blob) + string(data) + uint32(0), self.sign_timeout)
        if kind != SIGN_RESPONSE:
            raise AgentError(f"ssh-agent at {self.socket_path} refused to sign with {key.fingerprint}")
        try:
            inner = Reader(reader.string())
            algorithm, raw = inner.string().decode("ascii"), inner.string()
        except (FramingError, UnicodeDecodeError) as e:
            raise AgentError(f"ssh-agent at {self.socket_path} sent a malformed signature: {e}") from None
        if algorithm != ED25519 or len(raw) != 64:
            raise AgentError(f"ssh-agent at {self.socket_path} answered with a {algorithm} signature, not Ed25519")
        return raw


def _receive(conn: socket.socket, count: int) -> bytes:
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise AgentError("the ssh-agent closed the connection mid-answer")
        data += chunk
    return data


class AgentSigner:
    """Signs with a key held by an ssh-agent (or a hardware token behind one)."""

    def __init__(self, client: AgentClient, key: PublicKey) -> None:
        self.client = client
        self._key = key

    @property
    def public_key(self) -> PublicKey:
        return self._key

    def sign(self, data: bytes) -> bytes:
        return self.client.sign(self._key, data)

    @classmethod
    def find(cls, client: AgentClient, *, key: PublicKey | None = None, fingerprint: str | None = None) -> AgentSigner:
        """The agent's identity matching `key` (full blob) or `fingerprint`."""
        held = client.identities()
        for candidate, _ in held:
            if (key is not None and candidate.blob == key.blob) or (
                fingerprint is not None and candidate.fingerprint == fingerprint
            ):
                if candidate.key_type != ED25519:
                    raise AgentKeyNotFoundError(
                        f"the agent's key {candidate.fingerprint} is {candidate.key_type}, not Ed25519"
                    )
                return cls(client, candidate)
        wanted = fingerprint or (key.fingerprint if key is not None else "?")
        listed = ", ".join(k.fingerprint for k, _ in held) or "none"
        raise AgentKeyNotFoundError(
            f"the ssh-agent at {client.socket_path} does not hold key {wanted} (it holds: {listed})",
            hint="add it with `ssh-add KEYFILE`",
        )
