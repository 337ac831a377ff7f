"""SSH public keys (§9.2): the RFC 4253 key blob, the trust-root text form, and fingerprints.

Keys are compared on the full blob, never on a fingerprint; a fingerprint is only an index.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass

from brain.authn.wire import FramingError, Reader, string
from brain.errors import InvalidInputError

ED25519 = "ssh-ed25519"
ED25519_KEY_BYTES = 32
MAX_KEY_BLOB = 16384
FINGERPRINT_PATTERN = re.compile(r"^SHA256:[A-Za-z0-9+/]{43}$")
_BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


class KeyFormatError(InvalidInputError):
    """Text or bytes that are not a public key in the form the protocol requires."""


def strict_b64decode(text: str) -> bytes:
    """Standard padded base64, refusing anything else (no whitespace, no URL alphabet, exact padding)."""
    if not _BASE64.fullmatch(text) or len(text) % 4:
        raise ValueError("not standard padded base64")
    try:
        data = base64.b64decode(text, validate=True)
    except binascii.Error as e:
        raise ValueError(f"not base64: {e}") from None
    if base64.b64encode(data).decode("ascii") != text:
        raise ValueError("non-canonical base64 (stray bits in the padding)")
    return data


def fingerprint_of_blob(blob: bytes) -> str:
    """`SHA256:` + unpadded base64 of SHA-256(blob), as `ssh-keygen -lf` prints it."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode("ascii").rstrip("=")


@dataclass(frozen=True)
class PublicKey:
    """An SSH public key blob; `key_type` is its first field. Only Ed25519 keys can be verified here."""

    blob: bytes
    key_type: str

    @classmethod
    def from_blob(cls, blob: bytes) -> PublicKey:
        """Parse a key blob; an Ed25519 blob must be exactly `string(type) string(32 bytes)`."""
        if len(blob) > MAX_KEY_BLOB:
            raise KeyFormatError(f"a key blob of {len(blob)} bytes exceeds {MAX_KEY_BLOB}")
        reader = Reader(blob)
        try:
            name = reader.string(64).decode("ascii")
            if name == ED25519:
                if len(reader.string(64)) != ED25519_KEY_BYTES:
                    raise KeyFormatError("an ssh-ed25519 key must hold exactly 32 bytes")
                reader.end()
        except (FramingError, UnicodeDecodeError) as e:
            raise KeyFormatError(f"the key blob does not frame: {e}") from None
        if not name:
            raise KeyFormatError("the key blob names no key type")
        return cls(bytes(blob), name)

    @classmethod
    def ed25519(cls, raw: bytes) -> PublicKey:
        """The key blob of a raw 32-byte Ed25519 public key."""
        if len(raw) != ED25519_KEY_BYTES:
            raise KeyFormatError("an Ed25519 public key is 32 bytes")
        return cls(string(ED25519.encode()) + string(raw), ED25519)

    @property
    def raw_ed25519(self) -> bytes:
        """The 32 key bytes of an Ed25519 key."""
        if self.key_type != ED25519:
            raise KeyFormatError(f"{self.key_type} is not an Ed25519 key")
        return self.blob[-ED25519_KEY_BYTES:]

    @property
    def text(self) -> str:
        """The trust-root text form: `<type> <base64 of blob>`."""
        return f"{self.key_type} {base64.b64encode(self.blob).decode('ascii')}"

    @property
    def fingerprint(self) -> str:
        """`SHA256:...` of the blob."""
        return fingerprint_of_blob(self.blob)


def parse_trust_key(text: str) -> PublicKey:
    """The exact trust-root text form (§9.2): one space, standard base64, no options, no comment."""
    if not isinstance(text, str) or text.count(" ") != 1:
        raise KeyFormatError(f"trust-root key {text!r} is not '<type> <base64>' with exactly one space")
    name, encoded = text.split(" ")
    try:
        blob = strict_b64decode(encoded)
    except ValueError as e:
        raise KeyFormatError(f"trust-root key {name} …: {e}") from None
    key = PublicKey.from_blob(blob)
    if key.key_type != name:
        raise KeyFormatError(f"trust-root key names type {name!r} but its blob is {key.key_type!r}")
    return key


def parse_public_key_line(text: str) -> PublicKey:
    """A public key as `.pub` files and `authorized_keys` lines hold it: `<type> <base64> [comment]`."""
    fields = text.strip().split()
    if len(fields) < 2:
        raise KeyFormatError("expected a public key line: 'ssh-ed25519 AAAA... [comment]'")
    try:
        return parse_trust_key(f"{fields[0]} {fields[1]}")
    except KeyFormatError as e:
        raise KeyFormatError(f"not a public key line: {e.message}") from None
