"""Bytes on the wire when a transfer is cut mid-blob (issue 12 item 17), through a real local registry.

A 40 MiB blob is downloaded through a loopback proxy that hangs up after 10 MiB of the first answer, and
uploaded (8 MiB chunks) through one that resets the connection during the third chunk. Reported: the
bytes that crossed the proxy and the seconds taken (median of `--runs`); before Range/offset resumption
the download sent 10 + 40 MiB and the upload restarted from byte 0.
Run: `.venv/bin/python bench/oci_resume.py [--size-mib 40] [--cut-mib 10] [--runs 3]`.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from brain.identity import OciDigest  # noqa: E402
from brain.store.blobs import BlobStore  # noqa: E402
from oci.reference import parse_reference  # noqa: E402
from oci.retry import RetryPolicy  # noqa: E402
from oci.transport import RegistryClient  # noqa: E402
from tests.registry import CutBody, FaultyProxy, ResetRequest, start_registry, stop_registry  # noqa: E402

MIB = 1 << 20
RETRY = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05)


def _client(host: str, **kwargs: int) -> RegistryClient:
    return RegistryClient(parse_reference(f"{host}/bench/resume"), retry=RETRY, **kwargs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=40)
    parser.add_argument("--cut-mib", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_registry(Path(tmp) / "registry")
        try:
            data = os.urandom(args.size_mib * MIB)
            digest = OciDigest.of(data)
            _client(server.host).push_blob(digest, len(data), lambda: io.BytesIO(data))
            down_bytes, down_seconds, up_bytes, up_seconds = [], [], [], []
            for run in range(args.runs):
                proxy = FaultyProxy(server.host).start()
                first = {"left": 1}

                def cut_once(method: str, path: str, first: dict[str, int] = first):  # type: ignore[no-untyped-def]
                    if method == "GET" and str(digest) in path and first["left"]:
                        first["left"] -= 1
                        return CutBody(args.cut_mib * MIB)
                    return None

                proxy.hook = cut_once
                store = BlobStore(Path(tmp) / f"pulled-{run}")
                started = time.perf_counter()
                _client(proxy.host).fetch_blob(digest, len(data), store)
                down_seconds.append(time.perf_counter() - started)
                down_bytes.append(proxy.bytes_sent(str(digest)))
                proxy.stop()

                fresh = os.urandom(args.size_mib * MIB)
                proxy = FaultyProxy(server.host).start()
                patches = {"n": 0}

                def reset_third(method: str, path: str, patches: dict[str, int] = patches):  # type: ignore[no-untyped-def]
                    if method == "PATCH":
                        patches["n"] += 1
                        if patches["n"] == 3:
                            return ResetRequest()
                    return None

                proxy.hook = reset_third
                started = time.perf_counter()
                _client(proxy.host, chunk_size=8 * MIB).push_blob(
                    OciDigest.of(fresh), len(fresh), lambda b=fresh: io.BytesIO(b)
                )
                up_seconds.append(time.perf_counter() - started)
                up_bytes.append(sum(n for method, _, n in proxy.received if method in ("PATCH", "PUT")))
                proxy.stop()
        finally:
            stop_registry(server.process)
    size = args.size_mib
    print(f"download of {size} MiB cut at {args.cut_mib} MiB: median {statistics.median(down_bytes) / MIB:.1f} MiB "
          f"on the wire ({statistics.median(down_bytes) / (size * MIB):.2f}x the blob), "
          f"{statistics.median(down_seconds):.2f} s")
    print(f"upload of {size} MiB reset in its 3rd 8 MiB chunk: median {statistics.median(up_bytes) / MIB:.1f} MiB "
          f"sent ({statistics.median(up_bytes) / (size * MIB):.2f}x the blob), {statistics.median(up_seconds):.2f} s")


if __name__ == "__main__":
    main()
