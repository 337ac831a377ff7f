"""Builders for the oci tests: raw (possibly hostile) tar layers and a writable copy of the reference brain."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from brain.identity import OciDigest, canonicalize
from oci.tarball import BLOCK_SIZE, gzip_chunks
from tests.shared_paths import REFERENCE_BRAIN

REFERENCE = REFERENCE_BRAIN
REFERENCE_BLOBS = REFERENCE / "blobs" / "sha256"
V1 = "8d25935c3d932970d012695e280363409a3df5e24486b731be4100b46c283894"
V2 = "004f409811fb337ad94948e57b795f8969ae12adb54bfce8979d1269424a0727"
HEAD = "095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"


def header(name: bytes, size: int, kind: bytes = b"0", *, link: bytes = b"") -> bytes:
    """A ustar header with a valid checksum and whatever name, size and type flag we ask for."""
    block = bytearray(BLOCK_SIZE)
    block[0 : len(name)] = name
    block[100:108] = b"0000644\0"
    block[124:136] = b"%011o\0" % size
    block[136:148] = b"00000000000\0"
    block[148:156] = b" " * 8
    block[156:157] = kind
    block[157 : 157 + len(link)] = link
    block[257:265] = b"ustar\x0000"
    block[148:156] = b"%06o\0 " % sum(block)
    return bytes(block)


def raw_layer(*entries: tuple[bytes, bytes]) -> bytes:
    """A gzip tar made of (header, data) pairs, for archives our writer would never produce."""
    body = b"".join(h + d + b"\0" * (-len(d) % BLOCK_SIZE) for h, d in entries) + b"\0" * 1024
    return b"".join(gzip_chunks([body]))


def entry(name: str, data: bytes) -> tuple[bytes, bytes]:
    """A regular-file (header, data) pair."""
    return header(name.encode(), len(data)), data


def copy_reference(target: Path) -> Path:
    """A writable copy of the reference brain."""
    shutil.copytree(REFERENCE, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target


def reference_manifest() -> dict:
    """The reference v2 manifest as JSON."""
    return json.loads((REFERENCE_BLOBS / V2).read_bytes())


def store(directory: Path, data: bytes) -> OciDigest:
    """Put `data` under its digest in a flat blob directory."""
    digest = OciDigest.of(data)
    (directory / digest.hex).write_bytes(data)
    return digest


def manifest_bytes(document: dict) -> bytes:
    """JCS bytes of a manifest document."""
    return canonicalize(document)
