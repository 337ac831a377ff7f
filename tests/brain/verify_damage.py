"""Helpers for `brain verify` tests: copy the reference brain and damage the copy in precise ways.

Forgeries are built from raw JSON on purpose (not through the writer, which would refuse them): a forged
provenance block, a composition, a snapshot chained onto the head, and the head pointed at it.
"""

from __future__ import annotations

import json
import shutil
import stat
from pathlib import Path
from typing import Any

from brain.identity import canonicalize
from brain.identity.digest import BlockId
from brain.merkle import merkle_root
from tests.shared_paths import REFERENCE_BRAIN

REFERENCE = REFERENCE_BRAIN
HEAD = "sha256:095450f76bbc09cdf261edba937a7cc312346096750fe07b49f532d6640e5904"
V1_CONFIG = "sha256:100ea8f01da426a5a2020ddc90f28d49169b57793541cdbb266c2387ef549839"
# Members of the reference brain's head (§8 table and the fixture's compositions).
PDF_SOURCE_BLOCK = "sha256:4c6d5c10a1b47195a77dff1dac2ab6ab40578a293a842d43cd1ba6ff8fa448ea"
PDF_BLOB = "sha256:e038e5313b67a0a1481737ca2f90f40260c0a25b37260d9dbce228cc6ba64a68"
MARKDOWN_BLOCK = "sha256:d85afe5c73c486e72f945e53bb0c1e6690c9e3afc935e3ff38a0ec1790a335bc"
MARKDOWN_BLOB = "sha256:034e79baac785b840518a6457b3372e6cc752b66fa33cd37695249051a28ca2c"
LAPLACE_BLOCK = "sha256:b6dd04859e48eb1213d97fc85e92beb110610be1dae42692ea275ecfbbdb7c7c"
FOURIER_SERIES_BLOCK = "sha256:d603dc5dea6953b9bf6ac925afd3f7d9e3efe1e3715c5b673ed03020151e7f54"
EPISODE_BLOCK = "sha256:c92b4e42f2d2c5a0f1fb75302f30ed0fc6f7ee6a58e31bd4a3713b1778024202"
PROCEDURE_BLOCK = "sha256:ffe556de3d2b35b40d9959a2375adde6e41521322117f9c5b644ee288251dde5"
DROPPED_SEMANTIC_BLOCK = "sha256:85753ad9c7d593b4a6f1a86a0de7e1fe0712704b863e52e23ac9de612eb3cd61"
CANONICAL_COMPOSITION = "sha256:15158afc748ba46e8700223a2be7c1e15a8b9b8abae91725eef325406eba870f"
LAYOUT = "rfc6962-sorted/1"


def reference_source() -> Path:
    """The shared reference brain (read-only)."""
    if (REFERENCE / "oci-layout").is_file():
        return REFERENCE
    raise FileNotFoundError("the reference brain fixture (shared/fixtures/reference-brain) is not available")


def copy_brain(tmp_path: Path) -> Path:
    """A writable copy of the reference brain under `tmp_path`."""
    root = tmp_path / "brain"
    shutil.copytree(reference_source(), root)
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR | (stat.S_IXUSR if path.is_dir() else 0))
    return root


def blob_path(root: Path, digest: str) -> Path:
    """The file of a blob in a brain directory."""
    return root / "blobs" / "sha256" / digest.removeprefix("sha256:")


def flip_byte(root: Path, digest: str, offset: int = 10) -> None:
    """Flip one bit of one byte of a stored blob, in place."""
    path = blob_path(root, digest)
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def read_json(root: Path, digest: str) -> Any:
    """A stored JSON blob, parsed."""
    return json.loads(blob_path(root, digest).read_bytes())


def store_json(root: Path, value: Any) -> str:
    """Store the JCS bytes of `value` as a blob; its digest."""
    data = canonicalize(value)
    digest = "sha256:" + BlockId.of(data).hex
    blob_path(root, digest).write_bytes(data)
    return digest


def head(root: Path) -> dict[str, Any]:
    """The parsed head pointer."""
    return json.loads((root / "boltzmann" / "head.json").read_bytes())


def write_head(root: Path, snapshot: str, retained: list[str] | None = None) -> None:
    """Point the head at `snapshot` (retained: the given list, else the snapshot and the old list)."""
    old = head(root)
    keep = retained if retained is not None else [snapshot, *old["retained"]][:10]
    value = {"boltzmann": 1, "retained": keep, "snapshot": snapshot}
    (root / "boltzmann" / "head.json").write_bytes(canonicalize(value))


def members(root: Path, snapshot: str, module: str) -> list[str]:
    """The member ids of `module` at `snapshot`."""
    ref = read_json(root, snapshot)["modules"][module]
    return list(read_json(root, ref["composition"])["block_ids"])


def commit_modules(root: Path, changes: dict[str, list[str]], created_at: str = "2026-12-01T00:00:00Z") -> str:
    """Chain a new snapshot onto the head whose `changes` modules have exactly the given members; move the head."""
    parent = head(root)["snapshot"]
    snapshot = read_json(root, parent)
    modules = dict(snapshot["modules"])
    for module, block_ids in changes.items():
        ids = sorted(set(block_ids))
        composition = store_json(
            root, {"block_ids": ids, "boltzmann": 1, "layout": LAYOUT, "memory_type": module}
        )
        modules[module] = {
            "block_count": len(ids),
            "composition": composition,
            "layout": LAYOUT,
            "memory_type": module,
            "root": str(merkle_root(BlockId.parse(i) for i in ids)),
        }
    digest = store_json(root, {"boltzmann": 1, "created_at": created_at, "modules": modules, "parent": parent})
    write_head(root, digest)
    return digest


def store_block(root: Path, memory_type: str, payload: dict[str, Any]) -> str:
    """Store a v1 block envelope built from `payload`; its block id."""
    envelope = {
        "boltzmann": 1,
        "memory_type": memory_type,
        "payload": payload,
        "schema_version": 1,
        "serialization": "jcs/1",
    }
    return store_json(root, envelope)


def derivation(block: str, derived_from: list[str], producer_kind: str = "model") -> dict[str, Any]:
    """A provenance payload holding a derivation record."""
    return {
        "record": {
            "actor": {"id": "forger@example.org", "kind": "human"},
            "at": "2026-12-01T00:00:00Z",
            "block": block,
            "derived_from": derived_from,
            "producer": {"id": "acme/extractor", "kind": producer_kind},
            "record_type": "derivation",
        }
    }
