"""A real loopback `/v1/embeddings` server (an `http.server` thread) with deterministic vectors.

A text's vector is a hashed bag of its words (each lower-cased word adds 1 at `blake2b(word) mod D`), so two
texts sharing words are near: dense ranking is testable without a model. Misbehaviours on demand: the
first `fail_429` requests answer 429 with `Retry-After`, `delay` seconds of silence before answering,
`dimension_after`: requests after that many answer vectors of `wrong_dimension`. It counts requests, inputs,
TCP connections, and its own CPU and wall time (for the benchmarks' "the server's own time").
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

from tests.loopback import LoopbackServer

_WORD = re.compile(r"[a-z0-9]+")


def bag_of_words(text: str, dimension: int) -> list[float]:
    """The deterministic vector of `text`."""
    vector = [0.0] * dimension
    for word in _WORD.findall(text.lower()):
        slot = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little") % dimension
        vector[slot] += 1.0
    if not any(vector):
        vector[0] = 1.0
    return vector


@dataclass
class Behaviour:
    """What the server does (mutable while it runs)."""

    dimension: int = 64
    fail_429: int = 0
    retry_after: str = "0"
    delay: float = 0.0
    dimension_after: int | None = None
    wrong_dimension: int = 7
    requests: int = 0
    inputs: int = 0
    models: list[str] = field(default_factory=list)
    connections: int = 0
    server_seconds: float = 0.0  # CPU (thread time) of the handlers
    server_wall: float = 0.0  # wall time from a request read to its answer written


@contextmanager
def embedding_server(behaviour: Behaviour | None = None) -> Iterator[tuple[str, Behaviour]]:
    """Serve on 127.0.0.1; yields the base URL (`…/v1`) and the behaviour to change or inspect."""
    state = behaviour or Behaviour()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; with Nagle on, the body waits for the client's delayed ACK
        # (~40 ms on Linux loopback), which real embedding servers do not add and which hid our own cost.
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's name
            pass

        def setup(self) -> None:
            super().setup()
            with lock:
                state.connections += 1

        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            started, began = time.thread_time(), time.perf_counter()
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            with lock:
                state.requests += 1
                number = state.requests
                state.models.append(body.get("model", ""))
                refuse = number <= state.fail_429
            if self.path.rstrip("/") != "/v1/embeddings":
                self._answer(404, {"error": {"message": "not found"}})
                return
            if refuse:
                self._answer(429, {"error": {"message": "slow down"}}, {"Retry-After": state.retry_after})
                return
            if state.delay:
                self.server.closing.wait(state.delay)  # type: ignore[attr-defined]  # a LoopbackServer
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            dimension = state.dimension
            if state.dimension_after is not None and number > state.dimension_after:
                dimension = state.wrong_dimension
            data = [{"object": "embedding", "index": i, "embedding": bag_of_words(t, dimension)}
                    for i, t in enumerate(texts)]
            with lock:
                state.inputs += len(texts)
            self._answer(200, {"object": "list", "data": data, "model": body.get("model"),
                               "usage": {"prompt_tokens": 0, "total_tokens": 0}})
            with lock:
                state.server_seconds += time.thread_time() - started
                state.server_wall += time.perf_counter() - began

        def _answer(self, status: int, payload: object, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    server = LoopbackServer(Handler).start()
    try:
        yield f"http://127.0.0.1:{server.port}/v1", state
    finally:
        server.close()
