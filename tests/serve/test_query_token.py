"""`?token=` is taken only from a loopback client and only on `/ui/`: the real handler class answers a real
socket, with the peer address a remote browser would have."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

from serve.face import BrainFace
from serve.http_api import Routes
from serve.proposals_http import WriteApp
from serve.tokens import TokenTable, load_tokens
from tests.serve.conftest import SECRETS


class _Server:
    """What BaseHTTPRequestHandler reads from its server."""

    server_name = "test"
    server_port = 0


def _answer(handler: Any, peer: str, path: str) -> bytes:
    """One request over a loopback TCP connection, handled as if it came from `peer`."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        theirs = socket.create_connection(listener.getsockname())
        ours, _ = listener.accept()
    with ours, theirs:
        theirs.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        worker = threading.Thread(target=handler, args=(ours, (peer, 4242), _Server()))
        worker.start()
        worker.join(timeout=60)
        ours.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := theirs.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_query_token_only_from_loopback_and_only_for_the_ui(corpus_brain: Path, tokens_file: Path) -> None:
    face = BrainFace(corpus_brain, lambda args: {"args": list(args)})

    def ui(path: str, query: dict[str, list[str]], caller: Any) -> Any:
        from http import HTTPStatus

        return HTTPStatus.OK, "text/plain; charset=utf-8", f"hello {caller.name}"

    app = WriteApp(TokenTable(load_tokens(tokens_file)), None, ui, None)
    handler = app.handler(Routes(face), None)
    secret = SECRETS["reader"]
    assert _answer(handler, "127.0.0.1", f"/ui/?token={secret}").endswith(b"hello reader")
    assert _answer(handler, "::1", f"/ui/?token={secret}").endswith(b"hello reader")
    remote = _answer(handler, "203.0.113.7", f"/ui/?token={secret}")
    assert remote.startswith(b"HTTP/1.1 401") and b"hello" not in remote
    assert _answer(handler, "127.0.0.1", f"/v1/status?token={secret}").startswith(b"HTTP/1.1 401")
    face.close()
