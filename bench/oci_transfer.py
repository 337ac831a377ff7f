"""Push/pull benchmark: a brain holding one large source through a real local registry.

Targets: peak RSS of push and of pull <= 200 MB with a 1 GiB source (each measured in a fresh child
process via getrusage), and an unchanged re-push sending only existence checks plus the manifest.
Run: `.venv/bin/python bench/oci_transfer.py [--size-mib N]` (also called from bench/oci.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RSS_LIMIT_MB = 200
_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from brain.brain import Brain
from oci.reference import parse_reference
from oci.transport import RegistryClient
op, brain_dir, ref_text = sys.argv[2], sys.argv[3], sys.argv[4]
ref = parse_reference(ref_text)
calls = []
client = RegistryClient(ref, observer=lambda m, u, s: calls.append(m))
started = time.perf_counter()
if op == "push":
    from oci.push import push
    result = push(Brain.open(brain_dir), ref, client=client)
else:
    from oci.pull import open_or_init, pull
    brain, _ = open_or_init(brain_dir)
    result = pull(brain, ref, client=client)
elapsed = time.perf_counter() - started
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": elapsed, "peak_rss_mb": peak_mb, "requests": calls, "digest": str(result.digest)}))
"""


def _source_file(path: Path, size: int) -> None:
    """`size` bytes of incompressible data (the worst case for gzip and for memory)."""
    with open(path, "wb") as out:
        remaining = size
        while remaining:
            chunk = os.urandom(min(remaining, 16 << 20))
            out.write(chunk)
            remaining -= len(chunk)


def _build_brain(directory: Path, source: Path) -> None:
    from brain.blocks import CanonicalBlock
    from brain.brain import Brain
    from oci.pack import pack

    brain = Brain.init(directory)
    with brain.writer("bench@example.org") as writer, open(source, "rb") as handle:
        digest, size = writer.put_blob_stream(iter(lambda: handle.read(1 << 20), b""))
        writer.add(CanonicalBlock(blob=digest, media_type="application/octet-stream", size=size))
        writer.commit()
    started = time.perf_counter()
    pack(brain, "bench")
    print(
        f"setup: pack of the {size >> 20} MiB brain took {time.perf_counter() - started:.1f}s "
        "(pack section measures this)"
    )


def _child(op: str, brain_dir: Path, ref: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ROOT), op, str(brain_dir), ref], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{op} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(size_mib: int) -> bool:
    """Run the push/pull benchmark; True when every target is met."""
    from tests.registry import start_registry, stop_registry

    work = Path(tempfile.mkdtemp(prefix="brain-bench-oci-"))
    server = start_registry(work / "registry")
    try:
        source = work / "source.bin"
        _source_file(source, size_mib << 20)
        _build_brain(work / "brain", source)
        ref = server.ref("bench/brain:bench")
        first = _child("push", work / "brain", ref)
        again = _child("push", work / "brain", ref)
        pulled = _child("pull", work / "pulled", ref)
        mib = size_mib
        print(
            f"push:     {first['seconds']:.1f}s ({mib / first['seconds']:.0f} MiB/s), "
            f"peak RSS {first['peak_rss_mb']:.0f} MB"
        )
        print(f"re-push:  {again['seconds']:.2f}s, requests {' '.join(again['requests'])}")
        print(
            f"pull:     {pulled['seconds']:.1f}s ({mib / pulled['seconds']:.0f} MiB/s), "
            f"peak RSS {pulled['peak_rss_mb']:.0f} MB"
        )
        only_checks = all(m in ("GET", "HEAD") for m in again["requests"][:-1]) and again["requests"][-1] == "PUT"
        ok = max(first["peak_rss_mb"], pulled["peak_rss_mb"]) <= RSS_LIMIT_MB and only_checks
        print(
            f"targets:  peak RSS <= {RSS_LIMIT_MB} MB and unchanged re-push = checks + manifest: "
            f"{'met' if ok else 'MISSED'}"
        )
        return ok
    finally:
        stop_registry(server.process)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mib", type=int, default=1024)
    args = parser.parse_args()
    print("== oci push/pull ==")
    sys.exit(0 if run(args.size_mib) else 1)


if __name__ == "__main__":
    main()
