"""`--sign-with KEY`: a private key file, or a key held by the ssh-agent named by its public key or fingerprint.

As with `ssh-keygen -Y sign -f`, a `.pub` file (or a public key line, or a `SHA256:` fingerprint) means
"the agent holds the private half"; a private key file is loaded and used directly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from brain.authn.keys import FINGERPRINT_PATTERN, KeyFormatError, parse_public_key_line
from brain.authn.signer import Signer
from brain.errors import SigningKeyError, UsageError
from brain.store.user_files import read_user_file
from signers.agent import AgentClient, AgentSigner
from signers.file_key import FileKeySigner, PassphraseSource, is_private_key_file

MAX_KEY_FILE = 64 * 1024


def _agent(environ: Mapping[str, str]) -> AgentClient:
    sock = environ.get("SSH_AUTH_SOCK")
    if not sock:
        raise UsageError(
            "signing with an agent key needs an ssh-agent, but SSH_AUTH_SOCK is not set",
            hint="start one (`eval $(ssh-agent)`), `ssh-add` the key, or pass a private key file",
        )
    return AgentClient(sock)


def open_signer(spec: str, passphrase: PassphraseSource, environ: Mapping[str, str] | None = None) -> Signer:
    """The signer `spec` names (see module docstring)."""
    environ = os.environ if environ is None else environ
    text = spec.strip()
    if "PRIVATE KEY" in text or "\n" in text:
        # Key material pasted as the argument: say so without ever echoing it.
        raise SigningKeyError(
            "--sign-with takes a key file's path (or an agent key's .pub, public key or fingerprint), "
            "not the key's contents", hint="write the key to a file readable only by you (chmod 600)",
        )
    if FINGERPRINT_PATTERN.fullmatch(text):
        return AgentSigner.find(_agent(environ), fingerprint=text)
    if text.startswith("ssh-"):
        try:
            key = parse_public_key_line(text)
        except KeyFormatError as e:
            raise SigningKeyError(f"--sign-with {text[:40]!r}: {e.message}") from None
        return AgentSigner.find(_agent(environ), key=key)
    path = Path(text).expanduser()
    try:
        data = read_user_file(path, "signing key", MAX_KEY_FILE, error=SigningKeyError)
    except FileNotFoundError:
        raise SigningKeyError(
            f"no signing key at {path}",
            hint="pass a private key file, a .pub file of an agent key, or a SHA256: fingerprint"
        ) from None
    except OSError as e:
        raise SigningKeyError(f"cannot read signing key {path}: {e.strerror}") from None
    if is_private_key_file(data):
        return FileKeySigner.load(path, data, passphrase)
    try:
        key = parse_public_key_line(data.decode("utf-8"))
    except (UnicodeDecodeError, KeyFormatError):
        raise SigningKeyError(
            f"{path} is neither a private key file nor a public key",
            hint="use an OpenSSH private key (`ssh-keygen -t ed25519`) or the .pub of a key in your ssh-agent",
        ) from None
    return AgentSigner.find(_agent(environ), key=key)
