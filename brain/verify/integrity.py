"""Integrity of member blocks and the content blobs they name: re-hash, §1.5 decode, module and size checks.

`inspect_blocks` and `inspect_blobs` are the worker functions (plain data in, plain data out);
`block_problems` and `blob_problems` turn their results into located problems.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

from brain.blocks import Block, BlockDecodeError
from brain.errors import BrainError
from brain.store.blobs import BLOB_DIR, CHUNK, open_regular
from brain.verify.facts import CORRUPT, INVALID, MISSING, OK, BlockFacts, NamedBlob, facts_of
from brain.verify.report import Problem
from brain.identity.rehash import DigestMismatch, decode_rehashed


def _blob_dir(root: Path) -> Path:
    return Path(root).joinpath(*BLOB_DIR)


def read_block_facts(directory: str, block_id: str) -> BlockFacts:
    """Read one block file: missing, corrupt (bytes do not hash to the id), invalid (§1.5), or its facts."""
    try:
        with open_regular(os.path.join(directory, block_id[7:])) as handle:
            data = handle.read()
    except (FileNotFoundError, NotADirectoryError):
        return BlockFacts(block_id, MISSING, "not stored")
    except (BrainError, OSError) as e:  # a FIFO, a directory, no permission: damage, never a hang or a crash
        return BlockFacts(block_id, CORRUPT, unreadable(e))
    try:
        block = decode_rehashed(data, block_id, Block.decode)
    except DigestMismatch as e:
        return BlockFacts(block_id, CORRUPT, f"stored bytes hash to {e.actual}")
    except BlockDecodeError as e:
        return BlockFacts(block_id, INVALID, e.message)
    return facts_of(block, block_id)


def unreadable(error: BaseException) -> str:
    """Why a stored file could not be read, for a problem's detail."""
    if isinstance(error, BrainError):
        return error.message
    return f"cannot be read: {getattr(error, 'strerror', None) or error}"


def inspect_blocks(root: Path, block_ids: Sequence[str]) -> list[BlockFacts]:
    """Worker: the facts of each block id (digest strings), in order."""
    directory = str(_blob_dir(root))
    return [read_block_facts(directory, block_id) for block_id in block_ids]


def inspect_blobs(root: Path, digests: Sequence[str]) -> list[tuple[str, str, int]]:
    """Worker: `(digest, state, stored length)` per content digest; state is ok, missing or corrupt."""
    directory = _blob_dir(root)
    results: list[tuple[str, str, int]] = []
    for digest in digests:
        sha, length = hashlib.sha256(), 0
        try:
            with open_regular(directory / digest.removeprefix("sha256:")) as handle:
                while chunk := handle.read(CHUNK):
                    sha.update(chunk)
                    length += len(chunk)
        except (FileNotFoundError, NotADirectoryError):
            results.append((digest, MISSING, 0))
            continue
        except (BrainError, OSError):
            results.append((digest, CORRUPT, 0))
            continue
        state = OK if "sha256:" + sha.hexdigest() == digest else CORRUPT
        results.append((digest, state, length))
    return results


def block_problems(module: str, facts: BlockFacts, where: str) -> list[Problem]:
    """Problems with one member block of `module`; `where` names the file for the detail."""
    if facts.state == MISSING:
        return [
            Problem.of(
                "block-missing", f"member of {module} is not stored at {where}", module=module, block=facts.block_id
            )
        ]
    if facts.state == CORRUPT:
        return [
            Problem.of(
                "block-corrupt", f"{where}: {facts.detail}, not to its block id", module=module, block=facts.block_id
            )
        ]
    if facts.state == INVALID:
        return [Problem.of("block-invalid", f"{where}: {facts.detail}", module=module, block=facts.block_id)]
    if facts.memory_type != module:
        return [
            Problem.of(
                "block-wrong-module",
                f"a {facts.memory_type} block is a member of the {module} module",
                module=module,
                block=facts.block_id,
            )
        ]
    return []


def blob_problems(
    module: str, named: NamedBlob, owner: str, state: str, length: int, where: str
) -> list[Problem]:
    """Problems with one content blob named by block `owner` of `module`."""
    what = f"{named.role} of block {owner}"
    if state == MISSING:
        return [Problem.of("blob-missing", f"{what} is not stored at {where}", module=module, block=named.digest)]
    if state == CORRUPT:
        return [
            Problem.of(
                "blob-corrupt", f"{what}: {where} does not hash to its digest", module=module, block=named.digest
            )
        ]
    if length != named.size:
        return [
            Problem.of(
                "blob-size-mismatch",
                f"{what}: block states size {named.size}, stored file has {length} bytes",
                module=module,
                block=named.digest,
            )
        ]
    return []
