"""A small loopback OCI registry that implements the Referrers API (distribution 2.8 does not).

Enough of the distribution protocol for `brain push`/`pull`: blob uploads (POST, PATCH, PUT?digest),
HEAD/GET of blobs and manifests by tag or digest, manifest PUT (answering `OCI-Subject` when the manifest
has a `subject`, as OCI 1.1 registries do), and `GET /v2/<repo>/referrers/<digest>` honouring the
`artifactType` filter after form-decoding the query the way Go's `net/url` does (so an unescaped `+`
would read as a space, §9.10 item 3). With `referrers_api=False` it behaves like an older registry:
no `OCI-Subject`, referrers answer 404, and the fallback tag is just a tag.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import socket
import uuid
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from tests.loopback import LoopbackServer

_PATH = re.compile(r"^/v2/(?P<repo>.+?)/(?P<kind>blobs/uploads|blobs|manifests|referrers)(?:/(?P<ref>[^/]*))?$")


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class LoopbackRegistry:
    """The registry's whole state, in memory; `requests` records (method, path with query)."""

    referrers_api: bool = True
    blobs: dict[str, bytes] = field(default_factory=dict)
    manifests: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    uploads: dict[str, bytes] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    host: str = ""

    def start(self) -> LoopbackRegistry:  # noqa: C901 - the handler class inside: one branch per registry route
        registry = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out as separate writes: without this, delayed ACKs cost 40 ms a request.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _reply(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for key, value in {"Content-Length": str(len(body)), **(headers or {})}.items():
                    self.send_header(key, value)
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(body)

            def _unknown(self, code: str) -> None:
                self._reply(
                    404, json.dumps({"errors": [{"code": code}]}).encode(), {"Content-Type": "application/json"}
                )

            def _handle(self) -> None:
                registry.requests.append((self.command, self.path))
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                if parts.path == "/v2/":
                    self._reply(200, b"{}")
                    return
                match = _PATH.match(parts.path)
                if match is None:
                    self._reply(404)
                    return
                kind, ref = match["kind"], match["ref"] or ""
                getattr(self, "_" + kind.replace("/", "_"))(ref, body, parse_qs(parts.query))

            def _blobs_uploads(self, ref: str, body: bytes, query: dict[str, list[str]]) -> None:
                if self.command == "POST":
                    session = uuid.uuid4().hex
                    registry.uploads[session] = b""
                    self._reply(202, headers={"Location": f"{self.path.split('?')[0].rstrip('/')}/{session}"})
                    return
                registry.uploads[ref] = registry.uploads.get(ref, b"") + body
                if self.command == "PATCH":
                    self._reply(202, headers={"Location": self.path.split("?")[0]})
                    return
                data = registry.uploads.pop(ref)
                if _digest(data) != query.get("digest", [""])[0]:
                    self._reply(400)
                    return
                registry.blobs[_digest(data)] = data
                self._reply(201, headers={"Docker-Content-Digest": _digest(data)})

            def _blobs(self, ref: str, body: bytes, query: dict[str, list[str]]) -> None:
                data = registry.blobs.get(ref)
                if data is None:
                    self._unknown("BLOB_UNKNOWN")
                    return
                self._reply(200, data, {"Docker-Content-Digest": ref})

            def _manifests(self, ref: str, body: bytes, query: dict[str, list[str]]) -> None:
                if self.command == "PUT":
                    digest = _digest(body)
                    registry.manifests[digest] = (body, self.headers.get("Content-Type", ""))
                    if not ref.startswith("sha256:"):
                        registry.tags[ref] = digest
                    headers = {"Docker-Content-Digest": digest}
                    subject = json.loads(body).get("subject")
                    if registry.referrers_api and subject:
                        headers["OCI-Subject"] = subject["digest"]
                    self._reply(201, headers=headers)
                    return
                digest = registry.tags.get(ref, ref)
                if digest not in registry.manifests:
                    self._unknown("MANIFEST_UNKNOWN")
                    return
                data, media_type = registry.manifests[digest]
                self._reply(200, data, {"Content-Type": media_type, "Docker-Content-Digest": digest})

            def _referrers(self, ref: str, body: bytes, query: dict[str, list[str]]) -> None:
                if not registry.referrers_api:
                    self._reply(404)
                    return
                wanted = query.get("artifactType", [None])[0]
                found = []
                for digest, (data, media_type) in registry.manifests.items():
                    try:
                        document = json.loads(data)
                    except ValueError:
                        continue
                    if (document.get("subject") or {}).get("digest") != ref:
                        continue
                    if wanted is not None and document.get("artifactType") != wanted:
                        continue
                    found.append(
                        {
                            "annotations": document.get("annotations", {}),
                            "artifactType": document.get("artifactType"), "digest": digest, "mediaType": media_type,
                            "size": len(data),
                        }
                    )
                index = {"manifests": found, "mediaType": "application/vnd.oci.image.index.v1+json", "schemaVersion": 2}
                self._reply(
                    200, json.dumps(index).encode(), {"Content-Type": "application/vnd.oci.image.index.v1+json"}
                )

            do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = _handle

        self._server = LoopbackServer(Handler).start()
        self.host = f"127.0.0.1:{self._server.port}"
        return self

    def stop(self) -> None:
        self._server.close()
