"""`brain export --format markdown`: one Markdown file per source with the knowledge derived from it.

A file is named after the source's origin (`docs/a.md` becomes `docs/a.md.md`), made safe: no absolute
paths, no `..`, no control characters, nothing outside the target directory; two origins that would land
on one name get the source id appended. Knowledge that cites no source goes to `_unsourced.md`. Each
source's file is written as soon as its dependents are read; nothing else is held.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from brain.blocks.memory_type import MemoryType
from brain.errors import ConflictError, UsageError
from export.destination import outside_brain
from export.reader import BrainReader
from export.records import KnowledgeRecord

UNSOURCED = "_unsourced.md"
_UNSAFE = re.compile(r"[^A-Za-z0-9._@+=-]+")
_SECTION = {MemoryType.SEMANTIC: "Knowledge", MemoryType.PROCEDURAL: "Procedures", MemoryType.EPISODIC: "Events"}


def safe_name(origin: str | None, fallback: str) -> Path:
    """A relative path for `origin` that stays inside the target directory."""
    text = (origin or fallback).split("://", 1)[-1]
    parts = [_UNSAFE.sub("_", part).strip("._") for part in re.split(r"[/\\]+", text)]
    parts = [part[:120] for part in parts if part and part not in (".", "..")] or [fallback]
    return Path(*parts[:-1], parts[-1] + ".md")


def _escape(text: str) -> str:
    return text.replace("\r", "")


def _entry(record: KnowledgeRecord) -> Iterator[str]:
    yield f"### {_escape(record.title)}\n\n"
    meta = [f"`{record.id}`", record.kind, f"subject: {record.subject}" if record.subject else None]
    locators = sorted({e.locator for e in record.evidence if e.locator})
    if locators:
        meta.append("at " + ", ".join(locators))
    yield "*" + " · ".join(m for m in meta if m) + "*\n\n"
    yield _escape(record.text) + "\n\n"


def _source_file(source: KnowledgeRecord, derived: list[KnowledgeRecord]) -> Iterator[str]:
    yield f"# {_escape(source.title)}\n\n"
    yield f"- source: `{source.id}`\n- media type: {source.media_type}\n- snapshot: `{source.snapshot}`\n\n"
    for memory_type, heading in _SECTION.items():
        items = [r for r in derived if r.type is memory_type]
        if items:
            yield f"## {heading}\n\n"
            for record in items:
                yield from _entry(record)
    if source.text:
        yield "## Source text\n\n"
        fence = "````" if "```" in source.text else "```"
        yield f"{fence}text\n{source.text.rstrip()}\n{fence}\n"


def _target(directory: Path) -> Path:
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise ConflictError(
            f"{directory} exists and is not an empty directory: export writes into a new one",
            hint="choose another --to, or remove it first",
        )
    directory.mkdir(parents=True, exist_ok=True)
    return directory.resolve()


def write_markdown(reader: BrainReader, directory: Path) -> dict[str, int]:
    """Write one file per accessible source; returns `{"files", "sources", "derived"}` counts."""
    if reader.snapshot is None:
        raise UsageError(f"the brain at {reader.brain.path} is empty: there is nothing to export")
    root = _target(outside_brain(reader.brain.path, directory))
    used: set[Path] = set()
    counts = {"files": 0, "sources": 0, "derived": 0}
    ledger = reader.ledger
    for source in reader.records([MemoryType.CANONICAL]):
        name = safe_name(source.origin, source.id.hex[:16])
        if name in used:
            name = name.with_name(f"{name.stem}-{source.id.hex[:12]}.md")
        used.add(name)
        derived = [reader.show(d) for d in sorted(ledger.dependents.get(source.id, ())) if ledger.is_accessible(d)]
        derived = [r for r in derived if r.type in _SECTION]
        _write(root, name, "".join(_source_file(source, derived)))
        counts["files"] += 1
        counts["sources"] += 1
        counts["derived"] += len(derived)
    unsourced = None
    try:
        for record in reader.records([MemoryType.SEMANTIC, MemoryType.PROCEDURAL, MemoryType.EPISODIC]):
            if record.evidence:
                continue
            if unsourced is None:
                unsourced = _create(root, Path(UNSOURCED))
                unsourced.write("# Knowledge that cites no source\n\n")
                counts["files"] += 1
            unsourced.writelines(_entry(record))
            counts["derived"] += 1
    finally:
        if unsourced is not None:
            unsourced.close()
    return counts


def _create(root: Path, name: Path) -> TextIO:
    path = (root / name).resolve()
    if root not in path.parents:
        raise UsageError(f"refusing to write {name} outside {root}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return open(path, "x", encoding="utf-8")


def _write(root: Path, name: Path, text: str) -> None:
    with _create(root, name) as handle:
        handle.write(text)
