"""The heuristic proposer on documents nobody here wrote: /usr/share/doc, man pages, installed packages' METADATA.

Prints, per format: sources, sources that gave candidates, candidates, mechanically junk candidates (see
`bench/junk.py`), and the self-contradictions a gate would raise between documents (same label, subject and
kind, another statement). `--sample N` prints N random candidates with their source to read by eye.

usage: python bench/real_docs.py [--limit 400] [--sample 40] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import site
import sys
from collections import Counter, defaultdict
from pathlib import Path

# Run as a script, this directory is first on sys.path and `bench/ingest.py` would shadow the package.
sys.path[:1] = [str(Path(__file__).resolve().parents[1])]

from bench.junk import junk_reasons
from brain.identity import BlockId
from ingest.normalize import NormalizationError, pipeline_for
from ingest.proposers.base import SourceText
from ingest.proposers.heuristic import extract
from ingest.sources import read_head, sniff

ALL = frozenset({"semantic", "procedural", "episodic"})


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
    args = parser.parse_args()
    rng = random.Random(args.seed)
    stats: dict[str, Counter[str]] = defaultdict(Counter)
    reasons: Counter[str] = Counter()
    by_key: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    everything = []
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
    print("junk reasons:", dict(reasons.most_common()))
    for where, locator, memory_type, payload, why in rng.sample(everything, min(args.sample, len(everything))):
        print(f"\n{where} {locator} {memory_type} {'JUNK ' + ','.join(why) if why else ''}\n  {payload}")


if __name__ == "__main__":
    main()
