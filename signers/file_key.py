"""An Ed25519 private key read from an OpenSSH (or PKCS#8 PEM) key file.

Passphrase-protected keys (bcrypt KDF) are decrypted with the passphrase the caller supplies; errors say
what is wrong with the file without ever quoting its contents.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from brain.authn.keys import PublicKey
from brain.errors import SigningKeyError

PassphraseSource = Callable[[Path], bytes | None]
OPENSSH_BEGIN = b"-----BEGIN OPENSSH PRIVATE KEY-----"
PEM_BEGIN = b"-----BEGIN PRIVATE KEY-----"
PEM_ENCRYPTED_BEGIN = b"-----BEGIN ENCRYPTED PRIVATE KEY-----"


def is_private_key_file(data: bytes) -> bool:
    """Whether `data` looks like a private key file this module reads."""
    head = data.lstrip()[:64]
    return any(head.startswith(marker) for marker in (OPENSSH_BEGIN, PEM_BEGIN, PEM_ENCRYPTED_BEGIN))


def _encrypted(data: bytes) -> bool:
    try:
        serialization.load_ssh_private_key(data, None) if data.lstrip().startswith(OPENSSH_BEGIN) else \
            serialization.load_pem_private_key(data, None)
    except TypeError:
        return True
    except (ValueError, UnsupportedAlgorithm):
        return False
    return False


def _load(data: bytes, password: bytes | None) -> object:
    if data.lstrip().startswith(OPENSSH_BEGIN):
        return serialization.load_ssh_private_key(data, password)
    return serialization.load_pem_private_key(data, password)


class FileKeySigner:
    """Signs with an Ed25519 private key held in memory, loaded from a key file."""

    def __init__(self, private_key: Ed25519PrivateKey, origin: Path) -> None:
        self._private = private_key
        self.origin = origin
        raw = private_key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self._public = PublicKey.ed25519(raw)

    @property
    def public_key(self) -> PublicKey:
        return self._public

    def sign(self, data: bytes) -> bytes:
        return self._private.sign(data)

    def __repr__(self) -> str:  # never the key material
        return f"FileKeySigner({self.origin}, {self._public.fingerprint})"

    @classmethod
    def load(cls, path: Path, data: bytes, passphrase: PassphraseSource) -> FileKeySigner:
        """Parse a key file's bytes; `passphrase(path)` is asked only when the key is encrypted."""
        password = None
        if _encrypted(data):
            password = passphrase(path)
            if password is None:
                raise SigningKeyError(
                    f"signing key {path} is passphrase-protected and no passphrase was given",
                    hint="run on a terminal to be asked, or set BRAIN_SIGNING_PASSPHRASE",
                )
        try:
            key = _load(data, password)
        except UnsupportedAlgorithm as e:
            raise SigningKeyError(f"signing key {path} uses an unsupported algorithm or cipher ({e})") from None
        except TypeError:
            raise SigningKeyError(f"signing key {path} is passphrase-protected and no passphrase was given") from None
        except ValueError:
            what = "the passphrase is wrong" if password is not None else "it is not a readable private key"
            raise SigningKeyError(f"cannot load signing key {path}: {what}") from None
        if not isinstance(key, Ed25519PrivateKey):
            kind = type(key).__name__.removeprefix("_").replace("PrivateKey", "") or "unknown"
            raise SigningKeyError(
                f"signing key {path} is a {kind} key; brains are signed with Ed25519 keys only",
                hint="create one with `ssh-keygen -t ed25519`",
            )
        return cls(key, path)
