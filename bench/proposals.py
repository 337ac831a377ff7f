"""Proposal and review-UI benchmarks (issue 22), against a real `brain serve --http --allow-propose` process.

Usage: python bench/proposals.py [--blocks 100000] [--rounds 30] [--clients 20] [--seconds 30]
       [--skip-load | --load-only]

The brain is bench/search.py's generated brain (9 blocks per source), copied once to its own directory
(proposals write branches into it). Every figure is a median unless it says p95; the machine is shared, so
the server's CPU time per request is printed beside the wall time.

Targets: a proposal of 10 candidates answered ≤ 150 ms p50 over HTTP at 100,000 blocks; 20 concurrent
proposing clients for 30 s: no error other than 429, no lost proposal, reads p95 ≤ 60 ms meanwhile; every UI
page ≤ 100 ms server time at 100,000 blocks (each page's first view and its warm median are reported).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
# bench/ingest.py would shadow the ingest package: the repository comes first, bench/ only for search.py.
sys.path[:] = [str(REPO), *(p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"), str(REPO / "bench")]

from search import cached_brain, line, percentile  # noqa: E402 - bench/search.py's generator

from brain.blocks import MemoryType  # noqa: E402
from brain.branches.refs import read_refs  # noqa: E402
from brain.brain import Brain  # noqa: E402
from brain.identity import BlockId  # noqa: E402

BRAIN_EXE = REPO / ".venv" / "bin" / "brain"


def own_copy(blocks: int) -> Path:
    """A private copy of the generated brain (its branches are reset on every run)."""
    source = cached_brain(blocks)
    target = Path(tempfile.gettempdir()) / f"brain-bench-proposals-{source.name.rsplit('-', 1)[-1]}"
    marker = target / "boltzmann" / "bench-head"
    if not (marker.exists() and marker.read_bytes() == (source / "boltzmann" / "bench-head").read_bytes()):
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target)
    (target / "boltzmann" / "refs.json").unlink(missing_ok=True)
    (target / "boltzmann" / "head.json").write_bytes(marker.read_bytes())
    # What any ingest or lifecycle command leaves behind: the lineage log `brain show` reads (bench/show.py).
    from ingest.lineage_graph import lineage_of

    brain = Brain.open(target)
    digest = brain.snapshot_digest()
    assert digest is not None
    lineage_of(brain, digest, persist=True)
    return target


def tokens_file(directory: Path, names: list[str]) -> dict[str, str]:
    """Write a tokens file with one read+propose token per name; name → secret."""
    secrets = {name: f"secret-{name}-{os.getpid()}" for name in names}
    lines = []
    for name, secret in secrets.items():
        lines += [f"[tokens.{name}]", f'secret_sha256 = "{hashlib.sha256(secret.encode()).hexdigest()}"',
                  'scopes = ["read", "propose"]', f'actor = "bench/{name}"', ""]
    (directory / "tokens.toml").write_text("\n".join(lines))
    return secrets


class Server:
    def __init__(self, brain: Path, tokens: Path, *extra: str) -> None:
        self.process = subprocess.Popen(
            [str(BRAIN_EXE), "--brain", str(brain), "serve", "--http", "127.0.0.1:0", "--allow-propose",
             "--tokens", str(tokens), *extra],
            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env={**os.environ, "NO_COLOR": "1"})
        assert self.process.stderr is not None
        banner = self.process.stderr.readline()
        match = re.search(r":(\d+) ", banner) or re.search(r":(\d+)", banner)
        assert match, banner
        self.port = int(match.group(1))

    def cpu(self) -> float:
        """User+system seconds the server process tree has used so far (Linux /proc)."""
        return sum(self.cpu_by_role().values())

    def cpu_by_role(self) -> dict[str, float]:
        """User+system seconds so far of the proposal process (the one running niced) and of the others."""
        found = {"proposals": 0.0, "http": 0.0}
        for pid in [self.process.pid, *_children(self.process.pid)]:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                role = "proposals" if int(fields[16]) > os.getpriority(os.PRIO_PROCESS, 0) else "http"
                found[role] += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass
        return found

    def settle(self, secret: str, most: float = 120.0) -> None:
        """Ask once (the first /ui/ request starts the review UI's warm-up), then wait until the server is idle:
        what it reads once per process at start (the proposal process's and the UI's warm-up) is not timed."""
        started = time.monotonic()
        Client(self.port, secret).request("GET", "/ui/branches")
        before = self.cpu()
        while time.monotonic() - started < most:
            time.sleep(1.0)
            now = self.cpu()
            if now - before < 0.05:
                break
            before = now
        line("server warm-up (proposal process and UI, once per process)",
             f"{time.monotonic() - started:.1f} s wall, {self.cpu():.1f} s CPU", "(reported)", True)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


class Client:
    """One keep-alive connection with a bearer token."""

    def __init__(self, port: int, secret: str) -> None:
        self.port, self.secret = port, secret
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any, float]:
        headers = {"Authorization": f"Bearer {self.secret}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        start = time.perf_counter()
        try:
            self.connection.request(method, path, body=data, headers=headers)
            response = self.connection.getresponse()
            payload = response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
            raise
        elapsed = time.perf_counter() - start
        if response.getheader("Connection", "").lower() == "close":
            self.connection.close()
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        parsed = json.loads(payload) if payload[:1] == b"{" else payload
        return response.status, parsed, elapsed


def candidates(sources: list[str], tag: str, n: int = 10) -> dict[str, Any]:
    """`n` fresh semantic facts citing generated sources."""
    return {"candidates": [
        {"memory_type": "semantic", "evidence": [sources[(hash(tag) + i) % len(sources)]], "locator": "L3",
         "payload": {"kind": "fact", "label": f"bench {tag} {i}", "statement": f"Proposal {tag} item {i}."}}
        for i in range(n)]}


def bench_latency(server: Server, secret: str, sources: list[str], rounds: int) -> None:
    client = Client(server.port, secret)
    status, answer, _ = client.request("POST", "/v1/proposals", candidates(sources, "warm"))
    assert status == 200 and answer["committed"] == 10, answer
    walls, cpus = [], []
    for r in range(rounds):
        cpu = server.cpu()
        status, answer, elapsed = client.request("POST", "/v1/proposals", candidates(sources, f"r{r}"))
        assert status == 200 and answer["committed"] == 10, answer
        walls.append(elapsed)
        cpus.append(server.cpu() - cpu)
    p50 = statistics.median(walls)
    line("proposal of 10 candidates over HTTP (p50)",
         f"{p50 * 1000:.0f} ms (server CPU {statistics.median(cpus) * 1000:.0f} ms)", "<= 150 ms", p50 <= 0.150)
    line("  the same, p95",
         f"{percentile(walls, 0.95) * 1000:.0f} ms (server CPU {percentile(cpus, 0.95) * 1000:.0f} ms)",
         "(reported)", True)


def _read_until(port: int, secret: str, stop: float, out: Any) -> None:
    """The reading client (its own process): `GET /v1/search` every 50 ms until `stop`; sends the 200s' times
    and a count of any other status (negated) through `out`."""
    client = Client(port, secret)
    words = ["kalo", "mine", "ruti", "topic", "sabe", "dofa"]
    i = 0
    times: list[float] = []
    refused: dict[int, int] = {}
    while time.monotonic() < stop:
        i += 1
        status, _, elapsed = client.request("GET", f"/v1/search?q={words[i % len(words)]}&limit=5")
        if status == 200:
            times.append(elapsed)
        else:
            refused[-status] = refused.get(-status, 0) + 1
        time.sleep(0.05)
    out.send((times, refused))
    out.close()


def bench_reads_alone(server: Server, secret: str, seconds: float) -> None:
    """The reading client's mix with nothing else running: what the reads cost on their own, to read the
    figure under load against (one of its words, `topic`, is in every generated source)."""
    receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
    reading = multiprocessing.get_context("fork").Process(
        target=_read_until, args=(server.port, secret, time.monotonic() + seconds, sending))
    reading.start()
    sending.close()
    reads, _ = receiving.recv()
    reading.join()
    p95 = percentile(reads, 0.95) if reads else float("inf")
    line("reads alone, the same mix (GET /v1/search, p95)", f"{p95 * 1000:.0f} ms over {len(reads)} reads "
         f"(p50 {statistics.median(reads) * 1000 if reads else 0:.0f} ms)", "(reported)", True)


def bench_load(server: Server, brain: Path, secrets: dict[str, str], sources: list[str], clients: int,
               seconds: float) -> None:
    names = sorted(secrets)[:clients]
    stop = time.monotonic() + seconds
    statuses: dict[int, int] = {}
    committed: dict[str, set[str]] = {name: set() for name in names}
    reads: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def proposer(name: str) -> None:
        client = Client(server.port, secrets[name])
        n = 0
        while time.monotonic() < stop:
            n += 1
            try:
                status, answer, _ = client.request("POST", "/v1/proposals", candidates(sources, f"{name}-{n}", 3))
            except (OSError, http.client.HTTPException) as e:
                with lock:
                    errors.append(f"{name}: {type(e).__name__}: {e}")
                continue
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
            if status == 200:
                committed[name].update(r["block_id"] for r in answer["results"] if r["committed"])
            elif status == 429:
                time.sleep(0.2)  # a polite client backs off (Retry-After is whole seconds)

    # The reader is another client: its own process, forked before any thread starts. In this process it would
    # measure the GIL it shares with the twenty proposing threads as much as the server's answer.
    receiving, sending = multiprocessing.get_context("fork").Pipe(duplex=False)
    reading = multiprocessing.get_context("fork").Process(target=_read_until,
                                                           args=(server.port, secrets["reader"], stop, sending))
    threads = [threading.Thread(target=proposer, args=(n,)) for n in names]
    before = server.cpu_by_role()
    reading.start()
    sending.close()
    # The proposing agents stand for clients on other machines: their JSON work here is not the server's, so
    # this process yields the cores to the server and the reader (which stays at the normal priority).
    niceness = os.nice(0)
    os.nice(10)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    read_times, refused = receiving.recv()
    with contextlib.suppress(PermissionError):  # back to where it was (root may; others go on niced)
        os.setpriority(os.PRIO_PROCESS, 0, niceness)
    reading.join()
    reads.extend(read_times)
    for status, count in refused.items():
        statuses[status] = statuses.get(status, 0) + count
    after = server.cpu_by_role()
    refs = read_refs(brain)
    opened = Brain.open(brain)
    lost = 0
    for name in names:
        entry = None if refs is None else refs.branches.get(f"proposals/{name}")
        if not committed[name]:
            continue
        held = frozenset() if entry is None else opened.module(MemoryType.SEMANTIC, entry.snapshot).members
        lost += sum(1 for b in committed[name] if BlockId.parse(b) not in held)
    bad = {s: c for s, c in statuses.items() if s not in (200, 429)}
    total = sum(len(c) for c in committed.values())
    line(f"{clients} proposing clients for {seconds:.0f} s: statuses", json.dumps(dict(sorted(statuses.items()))),
         "200/429 only", not bad and not errors)
    if errors:
        print("   first errors:", errors[:3])
    line("  committed blocks found on their branches", f"{total - lost:,} of {total:,}", "none lost", lost == 0)
    p95 = percentile(reads, 0.95) if reads else float("inf")
    desk_cpu, http_cpu = (after[k] - before[k] for k in ("proposals", "http"))
    requests = sum(c for s, c in statuses.items() if s > 0) + len(reads)
    line("  server CPU meanwhile: proposal process / HTTP processes",
         f"{desk_cpu:.1f} s ({desk_cpu * 1000 / max(1, statuses.get(200, 0)):.0f} ms a proposal) / "
         f"{http_cpu:.1f} s ({http_cpu * 1000 / max(1, requests):.1f} ms a request)", "(reported)", True)
    line("  reads meanwhile (GET /v1/search, p95)", f"{p95 * 1000:.0f} ms over {len(reads)} reads "
         f"(p50 {statistics.median(reads) * 1000 if reads else 0:.0f} ms)", "<= 60 ms", p95 <= 0.060)


def bench_ui(server: Server, brain: Path, secret: str) -> None:
    """Each page's first view (nothing cached for it yet) and its warm median; judged on the server's CPU time
    (on a shared machine the wall time also counts the wait for a core)."""
    opened = Brain.open(brain)
    ids = opened.module(MemoryType.SEMANTIC).block_ids
    canonical = opened.module(MemoryType.CANONICAL).block_ids[7]
    refs = read_refs(brain)
    branch = next(n for n in (refs.branches if refs else {}) if n.startswith("proposals/"))
    head = opened.snapshot_digest()
    tip = refs.branches[branch].snapshot if refs else head
    client = Client(server.port, secret)
    # The first block page of a process: its warm-up (started with the process) has read the lineage log.
    cpu = server.cpu()
    status, _, elapsed = client.request("GET", f"/ui/blocks/{ids[len(ids) // 2]}")
    assert status == 200, status
    line("UI: the first block page of a process",
         f"{elapsed * 1000:.0f} ms (server CPU {(server.cpu() - cpu) * 1000:.0f} ms)", "(reported)", True)
    pages = {
        "block": f"/ui/blocks/{ids[len(ids) // 3]}",
        "graph": f"/ui/blocks/{ids[len(ids) // 3]}/graph.svg",
        "search": "/ui/?q=kalo+mine&type=semantic",
        "source": f"/ui/sources/{canonical}?locator=L3-L5",
        "branches": "/ui/branches",
        "branch": f"/ui/branches/{branch}",
        "diff": f"/ui/diff?a={head}&b={tip}",
    }
    for name, path in pages.items():
        cpu = server.cpu()
        status, _, first = client.request("GET", path)
        assert status == 200, (name, status)
        first_cpu = server.cpu() - cpu
        walls, cpus = [], []
        for _ in range(7):
            cpu = server.cpu()
            status, _, elapsed = client.request("GET", path)
            walls.append(elapsed)
            cpus.append(server.cpu() - cpu)
        warm, warm_cpu = statistics.median(walls), statistics.median(cpus)
        line(f"UI page {name}: first view / warm (server CPU)",
             f"{first_cpu * 1000:.0f} / {warm_cpu * 1000:.0f} ms (wall {first * 1000:.0f} / {warm * 1000:.0f} ms)",
             "<= 100 ms", max(first_cpu, warm_cpu) <= 0.100)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--blocks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--load-only", action="store_true", help="only the 20-proposer run (A/B of the reads)")
    args = parser.parse_args(argv)
    brain = own_copy(args.blocks)
    total = sum(m.ref.block_count for m in Brain.open(brain).modules().values())
    print(f"brain: {brain} ({total:,} blocks); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    sources = [str(b) for b in Brain.open(brain).module(MemoryType.CANONICAL).block_ids[:5000]]
    names = ["reader", *(f"agent{i:02d}" for i in range(max(args.clients, 1)))]
    directory = Path(tempfile.mkdtemp(prefix="bench-proposals-"))
    secrets = tokens_file(directory, names)
    tokens = directory / "tokens.toml"
    if not args.load_only:
        server = Server(brain, tokens, "--rate-limit", "1000")
        try:
            server.settle(secrets["reader"])
            bench_latency(server, secrets["agent00"], sources, args.rounds)
            bench_ui(server, brain, secrets["reader"])
        finally:
            server.stop()
    if not args.skip_load:
        server = Server(brain, tokens)  # the default rate limit: 5 proposals/s per token, burst 10
        try:
            server.settle(secrets["reader"])
            bench_reads_alone(server, secrets["reader"], min(args.seconds, 15.0))
            bench_load(server, brain, secrets, sources, args.clients, args.seconds)
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
