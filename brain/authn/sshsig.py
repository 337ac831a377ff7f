"""OpenSSH `PROTOCOL.sshsig` v1, detached, as §9.1 pins it: namespace `boltzmann.snapshot.v1`, SHA-512.

Writing builds the signed data, the outer blob and the armor byte for byte as `ssh-keygen -Y sign`
does. Reading checks the structure in §9.1 step 1's order (each failure is a format error), then the
namespace, the key type and the math (steps 2-4); `check` returns the outcome instead of raising.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from enum import StrEnum

from brain.authn import ed25519
from brain.authn.keys import ED25519, MAX_KEY_BLOB, KeyFormatError, PublicKey
from brain.authn.wire import FramingError, Reader, string, uint32
from brain.errors import InvalidInputError

NAMESPACE = "boltzmann.snapshot.v1"
MAGIC = b"SSHSIG"
VERSION = 1
HASH_ALGORITHM = "sha512"
BEGIN = "-----BEGIN SSH SIGNATURE-----"
END = "-----END SSH SIGNATURE-----"
ARMOR_WIDTH = 70
MAX_ARMOR_CHARS = 8192
MAX_BLOB_BYTES = 4096
_WHITESPACE = re.compile(r"\s+")


class SshsigFormatError(InvalidInputError):
    """Armored text or an SSHSIG blob that does not parse (§9.1 step 1)."""


class Check(StrEnum):
    """What verifying one SSHSIG against a message found (§9.1 steps 1-4)."""

    GOOD = "good"
    FORMAT = "format"
    NAMESPACE_MISMATCH = "namespace_mismatch"
    UNSUPPORTED_KEY = "unsupported_key_type"
    UNVERIFIABLE = "unverifiable"
    INVALID = "invalid"


@dataclass(frozen=True)
class Signature:
    """A parsed SSHSIG outer blob."""

    public_key: PublicKey
    namespace: str
    reserved: bytes
    hash_algorithm: str
    signature_algorithm: str
    raw_signature: bytes


def signed_data(message: bytes, namespace: str = NAMESPACE) -> bytes:
    """What the key signs: no version, no public key, and `reserved` always empty."""
    digest = hashlib.sha512(message).digest()
    return MAGIC + string(namespace.encode()) + string(b"") + string(HASH_ALGORITHM.encode()) + string(digest)


def outer_blob(public_key: PublicKey, raw_signature: bytes, namespace: str = NAMESPACE) -> bytes:
    """The SSHSIG blob `ssh-keygen -Y sign` writes for an Ed25519 signature."""
    inner = string(ED25519.encode()) + string(raw_signature)
    return (
        MAGIC + uint32(VERSION) + string(public_key.blob) + string(namespace.encode()) + string(b"")
        + string(HASH_ALGORITHM.encode()) + string(inner)
    )


def armor(blob: bytes) -> str:
    """BEGIN line, padded base64 in lines of 70, END line, trailing newline."""
    encoded = base64.b64encode(blob).decode("ascii")
    lines = [encoded[i : i + ARMOR_WIDTH] for i in range(0, len(encoded), ARMOR_WIDTH)]
    return "\n".join([BEGIN, *lines, END]) + "\n"


def dearmor(text: str) -> bytes:
    """The blob inside armored text: BEGIN at offset 0, any whitespace in the body, strict base64."""
    if not isinstance(text, str) or len(text) > MAX_ARMOR_CHARS:
        raise SshsigFormatError(f"armored signature is longer than {MAX_ARMOR_CHARS} characters")
    if not text.startswith(BEGIN) or text[len(BEGIN) : len(BEGIN) + 1] not in ("\n", "\r"):
        raise SshsigFormatError(f"armored signature does not start with {BEGIN!r} on its own line")
    end = text.find(END, len(BEGIN))
    if end < 0:
        raise SshsigFormatError(f"armored signature has no {END!r} line")
    body = _WHITESPACE.sub("", text[len(BEGIN) : end])
    try:
        if len(body) % 4:
            raise ValueError("length is not a multiple of 4")
        blob = base64.b64decode(body, validate=True)
    except ValueError as e:
        raise SshsigFormatError(f"armored signature body is not strict base64: {e}") from None
    if len(blob) > MAX_BLOB_BYTES:
        raise SshsigFormatError(f"SSHSIG blob of {len(blob)} bytes exceeds {MAX_BLOB_BYTES}")
    return blob


def parse_blob(blob: bytes) -> Signature:
    """Parse an outer blob with every §9.1 step 1 check; raises `SshsigFormatError`."""
    if len(blob) > MAX_BLOB_BYTES:
        raise SshsigFormatError(f"SSHSIG blob of {len(blob)} bytes exceeds {MAX_BLOB_BYTES}")
    reader = Reader(blob)
    try:
        if reader.raw(len(MAGIC)) != MAGIC:
            raise SshsigFormatError("the blob does not start with the SSHSIG preamble")
        version = reader.uint32()
        if version != VERSION:
            raise SshsigFormatError(f"SSHSIG version {version} is not 1")
        key_blob = reader.string(MAX_KEY_BLOB)
        namespace = reader.string().decode("utf-8")
        if not namespace:
            raise SshsigFormatError("the SSHSIG namespace is empty")
        reserved = reader.string()
        hash_name = reader.string().decode("ascii")
        if hash_name != HASH_ALGORITHM:
            raise SshsigFormatError(f"hash algorithm {hash_name!r} is not sha512")
        inner = Reader(reader.string())
        algorithm = inner.string().decode("ascii")
        raw = inner.string()
        inner.end()
        reader.end()
        public_key = PublicKey.from_blob(key_blob)
    except (FramingError, UnicodeDecodeError, KeyFormatError) as e:
        raise SshsigFormatError(f"malformed SSHSIG blob: {e}") from None
    return Signature(public_key, namespace, reserved, hash_name, algorithm, raw)


def parse_armored(text: str) -> Signature:
    """`parse_blob(dearmor(text))`."""
    return parse_blob(dearmor(text))


def check_signature(signature: Signature, message: bytes, namespace: str = NAMESPACE) -> Check:
    """§9.1 steps 2-4 on a parsed signature."""
    if signature.namespace != namespace:
        return Check.NAMESPACE_MISMATCH
    if signature.public_key.key_type != ED25519:
        return Check.UNSUPPORTED_KEY
    if signature.signature_algorithm != ED25519:
        return Check.INVALID
    # Rebuilt with an empty `reserved` whatever the blob carries: a non-empty one can never verify.
    data = signed_data(message, signature.namespace)
    try:
        good = ed25519.verify(signature.public_key.raw_ed25519, signature.raw_signature, data)
    except ed25519.BackendUnavailable:
        return Check.UNVERIFIABLE
    return Check.GOOD if good else Check.INVALID


def check(armored: str, message: bytes, namespace: str = NAMESPACE) -> Check:
    """The outcome of verifying armored SSHSIG text over `message` (steps 1-4)."""
    try:
        signature = parse_armored(armored)
    except SshsigFormatError:
        return Check.FORMAT
    return check_signature(signature, message, namespace)
