"""Test keys: the published vector keys (seeds in the shared vectors) written as real OpenSSH key files."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tests.shared_paths import SHARED_DIR

VECTORS = SHARED_DIR / "protocol" / "vectors"
SIGNED_BRAIN = SHARED_DIR / "fixtures" / "signed-brain"
LECTURER_SEED = bytes(range(32))


def load_vectors(name: str) -> dict:
    """`protocol/vectors/<name>.json`."""
    return json.loads((VECTORS / f"{name}.json").read_text())


def write_key(directory: Path, name: str, seed: bytes | None = None, passphrase: bytes | None = None) -> Path:
    """An OpenSSH Ed25519 private key file `<directory>/<name>` (and `<name>.pub`); random unless `seed`."""
    key = Ed25519PrivateKey.generate() if seed is None else Ed25519PrivateKey.from_private_bytes(seed)
    encryption = (
        serialization.NoEncryption() if passphrase is None else serialization.BestAvailableEncryption(passphrase)
    )
    path = directory / name
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, encryption))
    path.chmod(0o600)
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    path.with_name(name + ".pub").write_bytes(public + f" {name}\n".encode())
    return path


def public_text(private: Path) -> str:
    """`ssh-ed25519 AAAA...` of a key written by `write_key`."""
    return " ".join(private.with_name(private.name + ".pub").read_text().split()[:2])


def require_tool(name: str) -> str:
    """The path of `name`; skip locally, fail in CI (BRAIN_REQUIRE_REGISTRY=1) when it is missing."""
    path = shutil.which(name)
    if path is None:
        reason = f"{name} is not installed (apt-get install openssh-client)"
        if os.environ.get("BRAIN_REQUIRE_REGISTRY") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    return path
