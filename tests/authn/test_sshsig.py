"""SSHSIG (§9.1) against the shared vectors: the one vector byte for byte, and all nine rejections."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from brain.authn import ed25519, sshsig
from brain.authn.keys import (
    KeyFormatError,
    PublicKey,
    fingerprint_of_blob,
    parse_trust_key,
)
from brain.authn.signer import armored_signature
from tests.authn.keys import load_vectors

VECTORS = load_vectors("sshsig")
VECTOR = VECTORS["vectors"][0]
MESSAGE = base64.b64decode(VECTOR["message_base64"])
LECTURER = VECTORS["keys"][0]


class SeedSigner:
    def __init__(self, seed: bytes) -> None:
        self.private = Ed25519PrivateKey.from_private_bytes(seed)
        self.public_key = PublicKey.ed25519(self.private.public_key().public_bytes_raw())

    def sign(self, data: bytes) -> bytes:
        return self.private.sign(data)


def test_the_vector_verifies_and_is_reproduced_byte_for_byte() -> None:
    assert sshsig.check(VECTOR["armored"], MESSAGE) is sshsig.Check.GOOD
    assert sshsig.signed_data(MESSAGE).hex() == VECTOR["signed_data_blob_hex"]
    signer = SeedSigner(bytes.fromhex(LECTURER["seed_hex"]))
    assert signer.public_key.blob.hex() == LECTURER["public_key_blob_hex"]
    assert armored_signature(signer, MESSAGE) == VECTOR["armored"]
    parsed = sshsig.parse_armored(VECTOR["armored"])
    assert parsed.raw_signature.hex() == VECTOR["raw_signature_hex"]
    assert sshsig.dearmor(VECTOR["armored"]).hex() == VECTOR["signature_blob_hex"]


def test_keys_and_fingerprints() -> None:
    key = parse_trust_key(LECTURER["public"])
    assert key.fingerprint == LECTURER["fingerprint"] == fingerprint_of_blob(key.blob)
    assert key.text == LECTURER["public"]
    for bad in (LECTURER["public"] + " comment", LECTURER["public"].replace(" ", "  "),
                "ssh-rsa " + LECTURER["public"].split()[1], "ssh-ed25519 AAAA", "ssh-ed25519 !!!!"):
        with pytest.raises(KeyFormatError):
            parse_trust_key(bad)


@pytest.mark.parametrize("case", VECTORS["rejections"], ids=lambda c: c["name"])
def test_every_rejection_fails_as_labelled(case: dict) -> None:
    expected = {"format": sshsig.Check.FORMAT, "invalid": sshsig.Check.INVALID,
                "namespace_mismatch": sshsig.Check.NAMESPACE_MISMATCH}[case["expect"]]
    armored = case.get("armored") or sshsig.armor(bytes.fromhex(case["blob_hex"]))
    assert sshsig.check(armored, MESSAGE, case.get("verify_under", sshsig.NAMESPACE)) is expected


def test_armor_reading_rules() -> None:
    body = base64.b64encode(sshsig.dearmor(VECTOR["armored"])).decode()
    rewrapped = "\r\n".join([sshsig.BEGIN, *(body[i : i + 76] for i in range(0, len(body), 76)), sshsig.END]) + "\r\n"
    assert sshsig.check(rewrapped, MESSAGE) is sshsig.Check.GOOD
    assert sshsig.check(VECTOR["armored"] + "trailing text is ignored", MESSAGE) is sshsig.Check.GOOD
    assert sshsig.check(VECTOR["armored"], MESSAGE + b" ") is sshsig.Check.INVALID
    assert sshsig.check(VECTOR["armored"].replace("U1NI", "U1N*", 1), MESSAGE) is sshsig.Check.FORMAT
    assert sshsig.check("x" * 9000, MESSAGE) is sshsig.Check.FORMAT


def test_strict_ed25519_refusals() -> None:
    parsed = sshsig.parse_armored(VECTOR["armored"])
    key, signature = parsed.public_key.raw_ed25519, parsed.raw_signature
    data = sshsig.signed_data(MESSAGE)
    assert ed25519.verify(key, signature, data)
    s = int.from_bytes(signature[32:], "little") + ed25519.ORDER  # same signature, S not reduced
    assert s < 2**256 and not ed25519.verify(key, signature[:32] + s.to_bytes(32, "little"), data)
    identity = (1).to_bytes(32, "little")  # the neutral point: small order
    assert ed25519.strict_problem(identity, signature) == "the public key has small order"
    non_canonical = (2**255 - 19 + 1).to_bytes(32, "little")  # y = p + 1 encodes 1 again
    assert ed25519.strict_problem(non_canonical, signature) == "the public key is not a canonical curve point"


def test_other_key_types_are_unsupported_not_forged() -> None:
    rsa_blob = b"\x00\x00\x00\x07ssh-rsa" + b"\x00\x00\x00\x01\x03" + b"\x00\x00\x00\x02\x00\xff"
    blob = sshsig.outer_blob(PublicKey.from_blob(rsa_blob), b"\x00" * 64)
    assert sshsig.check(sshsig.armor(blob), MESSAGE) is sshsig.Check.UNSUPPORTED_KEY
