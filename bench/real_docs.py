"""The heuristic proposer on documents nobody here wrote: /usr/share/doc, man pages, installed packages' METADATA.

Prints, per format: sources, sources that gave candidates, candidates, mechanically junk candidates (see
`bench/junk.py`), and the self-contradictions a gate would raise between documents (same label, subject and
kind, another statement). `--sample N` prints N random candidates with their source to read by eye.

Coverage: most package READMEs open by saying what the package is or does. For every installed package's
`METADATA` with a long description, `opening_statement` finds that opening sentence (by its own rules, not the
proposer's: the first prose paragraph after titles, badges, links, code and directives) and the bench counts
how many of them a semantic block covers (its locator spans the sentence's lines). `--openings` prints each.

usage: python bench/real_docs.py [--limit 400] [--sample 40] [--seed 1] [--openings]
"""

from __future__ import annotations

import argparse
import random
import re
import site
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

# Run as a script, this directory is first on sys.path and `bench/ingest.py` would shadow the package.
sys.path[:1] = [str(Path(__file__).resolve().parents[1])]

from bench.junk import junk_reasons
from brain.identity import BlockId
from ingest.normalize import NormalizationError, pipeline_for
from ingest.proposers.base import SourceText
from ingest.proposers.extraction import extract
from ingest.sources import read_head, sniff

ALL = frozenset({"semantic", "procedural", "episodic"})
_SKIPPED = ("#", "<", "[", "!", "|", ".. ", ":", "- ", "* ", "+ ", ">>>", "$ ", "```", "~~~")
_ADORNED = re.compile(r"([=\-~^\"'*+#:._`])\1{2,}\s*")
_LEAD_IN = re.compile(r"[\w-]+: |\*\*[^*]+\*\*:|.*<a href")  # "Project-URL: ...", "**Source Code**: ...", HTML links
_LOCATOR = re.compile(r"(?:p\.[0-9]+ )?L([0-9]+)(?:-L([0-9]+))?")


def opening_statement(text: str) -> tuple[int, int, str] | None:
    """`(first line, last line, sentence)`: the first prose sentence of a `METADATA` long description, or None.

    Skipped before it: the headers, titles (a line over an adornment, `#` lines), badges, links, HTML, code
    (fences, indented lines), reST directives and fields, list items, and paragraphs of fewer than 5 words.
    """
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
    paragraph: list[tuple[int, str]] = []
    fenced = False
    for index in range(start, len(lines) + 1):
        raw = lines[index] if index < len(lines) else ""
        stripped = raw.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            paragraph = []
            continue
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        title = bool(following) and _ADORNED.fullmatch(following) is not None
        if stripped and not fenced and not raw[:1].isspace() and not stripped.startswith(_SKIPPED) and not title \
                and _ADORNED.fullmatch(stripped) is None:
            paragraph.append((index + 1, stripped))
            continue
        words = " ".join(text for _, text in paragraph)
        if len(words.split()) >= 5 and _LEAD_IN.match(words) is None and "://" not in words.split()[0]:
            sentence = re.split(r"(?<=[.!?])\s", words, maxsplit=1)[0]
            last = paragraph[0][0]
            for number, line in paragraph:  # the line the sentence ends on
                last = number
                if sentence.endswith(line) or sentence.find(line) == -1:
                    break
            return paragraph[0][0], last, sentence
        paragraph = []
    return None


def covers(found: list[Any], opening: tuple[int, int, str]) -> bool:
    """Whether a semantic block's locator spans a line of the opening sentence (the metadata `Summary:`
    concept, from the headers, does not count)."""
    for candidate in found:
        located = _LOCATOR.fullmatch(candidate.locator)
        if candidate.memory_type != "semantic" or located is None:
            continue
        first = int(located[1])
        last = int(located[2] or first)
        if first <= opening[1] and last >= opening[0]:
            return True
    return False


def corpus(limit: int, rng: random.Random) -> list[tuple[str, Path]]:
    """(format, path) pairs: a seeded sample of each kind of real document on this machine."""
    groups: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(Path("/usr/share/doc").rglob("*")):
        if not path.is_file() or path.is_symlink():
            continue
        name = path.name.lower()
        if name.endswith(".gz"):
            kind = "changelog.gz" if name.startswith(("changelog", "news")) else "other.gz"
        else:
            kind = {".html": "html", ".htm": "html", ".md": "markdown", ".txt": "text", ".rst": "rst",
                    ".pdf": "pdf"}.get(path.suffix.lower(), "")  # fmt: skip
            if not kind and name in ("readme", "news", "changes", "todo", "authors", "copyright"):
                kind = "text"
        if kind:
            groups[kind].append(path)
    groups["man.gz"] = sorted(Path("/usr/share/man").glob("man[1-8]/*.gz"))
    for base in site.getsitepackages():
        groups["metadata"] += sorted(Path(base).glob("*.dist-info/METADATA"))
    picked = []
    for kind, paths in sorted(groups.items()):
        for path in rng.sample(paths, min(limit, len(paths))):
            picked.append((kind, path))
    return picked


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=400, help="at most this many documents per format")
    parser.add_argument("--sample", type=int, default=0, help="print this many random candidates")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--openings", action="store_true", help="print each README's opening statement, +/- covered")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: Counter[str] = Counter()
    by_key: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    everything = []
    openings = covered = 0
    for kind, path in corpus(args.limit, rng):
        row = stats[kind]
        row["sources"] += 1
        media_type = sniff(path, read_head(path)).media_type
        pipeline = pipeline_for(media_type)
        if pipeline is None:
            row["no pipeline"] += 1
            continue
        try:
            text = pipeline.normalize(path).data.decode("utf-8")
        except NormalizationError as e:
            row[f"failed {e.code}"] += 1
            continue
        block = BlockId.of(text.encode())
        found = extract(SourceText.of(block, media_type, text), ALL)
        opening = opening_statement(text) if kind == "metadata" else None
        if opening is not None:
            openings += 1
            covered += covers(found, opening)
            if args.openings:
                print(f"{'+' if covers(found, opening) else '-'} {path.parent.name}: {opening[2]}")
        row["with candidates"] += bool(found)
        for candidate in found:
            row["candidates"] += 1
            row[candidate.memory_type] += 1
            why = junk_reasons(candidate.memory_type, candidate.payload)
            row["junk"] += bool(why)
            reasons.update(why)
            payload = candidate.payload
            if candidate.memory_type == "semantic":
                by_key[(payload["label"], payload.get("subject", ""), payload["kind"])].add(payload["statement"])
            everything.append((str(path), candidate.locator, candidate.memory_type, payload, why))
    contradictions = sum(len(statements) - 1 for statements in by_key.values())
    print(f"{'format':<14}{'sources':>8}{'w/cand':>8}{'cands':>7}{'junk':>6}{'junk%':>7}  other")
    total: Counter[str] = Counter()
    for kind, row in sorted(stats.items()):
        total.update(row)
        share = 100 * row["junk"] / row["candidates"] if row["candidates"] else 0.0
        rest = ", ".join(f"{k} {v}" for k, v in sorted(row.items()) if k.startswith(("failed", "no pipeline")))
        print(f"{kind:<14}{row['sources']:>8}{row['with candidates']:>8}{row['candidates']:>7}{row['junk']:>6}"
              f"{share:>6.1f}%  {rest}")  # fmt: skip
    share = 100 * total["junk"] / total["candidates"] if total["candidates"] else 0.0
    print(f"{'all':<14}{total['sources']:>8}{total['with candidates']:>8}{total['candidates']:>7}{total['junk']:>6}"
          f"{share:>6.1f}%")  # fmt: skip
    print(f"self-contradictions between documents: {contradictions}")
    sources = sum(row["sources"] for row in stats.values())
    print(f"blocks per source: {total['candidates'] / sources if sources else 0.0:.2f}")
    print(f"package READMEs whose opening statement became a block: {covered} of {openings}"
          f" ({100 * covered / openings if openings else 0.0:.0f}%)")  # fmt: skip
    print("junk reasons:", dict(reasons.most_common()))
    for where, locator, memory_type, payload, why in rng.sample(everything, min(args.sample, len(everything))):
        print(f"\n{where} {locator} {memory_type} {'JUNK ' + ','.join(why) if why else ''}\n  {payload}")


if __name__ == "__main__":
    main()
