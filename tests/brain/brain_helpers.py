"""Small builders shared by the brain/writer tests: real blocks, written through the real writer."""

from __future__ import annotations

import hashlib
from pathlib import Path

from brain.blocks import CanonicalBlock, SemanticBlock
from brain.brain import Brain
from brain.identity import OciDigest

ACTOR = "tester@example.org"


def canonical(text: str) -> CanonicalBlock:
    """A canonical block describing `text` (the bytes themselves are not stored)."""
    data = text.encode()
    return CanonicalBlock(blob=OciDigest.of(data), media_type="text/plain", size=len(data))


def fact(label: str, statement: str = "s", **extra) -> SemanticBlock:
    """A semantic fact."""
    return SemanticBlock(kind="fact", label=label, statement=statement, **extra)


def brain_with(path: Path, *texts: str) -> Brain:
    """A new brain with one commit adding a canonical block per text."""
    brain = Brain.init(path)
    with brain.writer(ACTOR) as writer:
        for text in texts:
            writer.add(canonical(text))
        writer.commit()
    return brain


def tree_digest(root: Path, exclude: Path | None = None) -> str:
    """A hash over every path, mode and content below `root` (to prove reads change nothing), without what is
    under `exclude` (relative to `root`) when given."""
    sha = hashlib.sha256()
    for path in sorted(Path(root).rglob("*")):
        if exclude is not None and path.relative_to(root).is_relative_to(exclude):
            continue
        sha.update(str(path.relative_to(root)).encode() + b"\0" + oct(path.stat().st_mode).encode())
        if path.is_file():
            sha.update(path.read_bytes())
    return sha.hexdigest()
