"""The registry client against a real CNCF distribution registry (and a fault-injecting loopback proxy)."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import pytest

from brain.errors import NotFoundError, RemoteError, UntrustedArtifactError
from brain.identity import OciDigest
from brain.store.blobs import BlobStore
from oci.auth import Credentials
from oci.reference import parse_reference
from oci.retry import RetryPolicy
from oci.transport import RegistryClient
from tests.registry import FaultyProxy, RegistryServer, skopeo_raw_manifest

pytestmark = pytest.mark.registry
FAST = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05, max_retry_after=2.0)


def _client(host: str, repo: str, calls: list | None = None, **kwargs) -> RegistryClient:
    observer = (lambda m, u, s: calls.append((m, u, s))) if calls is not None else None
    return RegistryClient(parse_reference(f"{host}/{repo}"), retry=FAST, observer=observer, **kwargs)


def _push_bytes(client: RegistryClient, data: bytes) -> OciDigest:
    digest = OciDigest.of(data)
    client.push_blob(digest, len(data), lambda: io.BytesIO(data))
    return digest


def _manifest(config: OciDigest, config_size: int, layer: OciDigest, layer_size: int) -> bytes:
    return (
        '{"config":{"digest":"%s","mediaType":"application/vnd.test.config","size":%d},'
        '"layers":[{"digest":"%s","mediaType":"application/vnd.test.layer","size":%d}],'
        '"mediaType":"application/vnd.oci.image.manifest.v1+json","schemaVersion":2}'
        % (config, config_size, layer, layer_size)
    ).encode()


def test_chunked_upload_then_verified_download(registry: RegistryServer, tmp_path: Path) -> None:
    data = os.urandom(300_000)
    calls: list = []
    client = _client(registry.host, "transport/chunked", calls, chunk_size=64 * 1024)
    digest = OciDigest.of(data)
    assert client.push_blob(digest, len(data), lambda: io.BytesIO(data)) is True
    patches = [c for c in calls if c[0] == "PATCH"]
    assert len(patches) == 4  # 300000 bytes in 64 KiB chunks: 4 PATCHes, the 5th chunk rides in the PUT
    assert client.blob_size(digest) == len(data)
    assert client.push_blob(digest, len(data), lambda: io.BytesIO(data)) is False
    store = BlobStore(tmp_path)
    seen: list[int] = []
    client.fetch_blob(digest, len(data), store, progress=lambda d, done, total: seen.append(done))
    assert store.get(digest) == data
    assert seen[-1] == len(data)


def test_manifest_round_trip_matches_skopeo(registry: RegistryServer) -> None:
    client = _client(registry.host, "transport/manifest")
    config, layer = b"{}", b"layer bytes"
    manifest = _manifest(_push_bytes(client, config), 2, _push_bytes(client, layer), len(layer))
    digest = client.put_manifest("v1", manifest)
    fetched = client.get_manifest("v1")
    assert fetched.data == manifest and fetched.digest == digest
    assert client.get_manifest(str(digest)).data == manifest
    assert skopeo_raw_manifest(registry.ref("transport/manifest:v1")) == manifest


def test_missing_manifest_is_not_found_and_missing_blob_is_none(registry: RegistryServer) -> None:
    client = _client(registry.host, "transport/nothing")
    with pytest.raises(NotFoundError):
        client.get_manifest("v9")
    assert client.blob_size(OciDigest.of(b"never pushed")) is None


def test_corrupted_blob_is_refused_and_nothing_stored(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    data = b"the true bytes of a layer" * 100
    digest = _push_bytes(_client(registry.host, "transport/corrupt"), data)
    faulty_proxy.hook = lambda method, path: (
        (lambda body: body[:-1] + bytes([body[-1] ^ 1])) if method == "GET" and "/blobs/" in path else None
    )
    store = BlobStore(tmp_path)
    with pytest.raises(UntrustedArtifactError, match="hashing to"):
        _client(faulty_proxy.host, "transport/corrupt").fetch_blob(digest, len(data), store)
    assert not store.has(digest)
    with pytest.raises(UntrustedArtifactError, match="manifest says"):
        _client(registry.host, "transport/corrupt").fetch_blob(digest, len(data) - 1, store)
    assert list(store.digests()) == []


def test_manifest_by_digest_with_wrong_bytes_is_refused(registry: RegistryServer, faulty_proxy: FaultyProxy) -> None:
    client = _client(registry.host, "transport/liar")
    config, layer = b"{}", b"x"
    digest = client.put_manifest("v1", _manifest(_push_bytes(client, config), 2, _push_bytes(client, layer), 1))
    faulty_proxy.hook = lambda method, path: (
        (lambda body: body.replace(b'"size":1', b'"size":2')) if "/manifests/" in path else None
    )
    with pytest.raises(UntrustedArtifactError):
        _client(faulty_proxy.host, "transport/liar").get_manifest(str(digest))


def test_503_with_retry_after_is_retried(registry: RegistryServer, faulty_proxy: FaultyProxy) -> None:
    failures = {"left": 2}

    def flaky(method: str, path: str):
        if path == "/v2/" and failures["left"] > 0:
            failures["left"] -= 1
            return 503, {"Retry-After": "1"}, b"busy"
        return None

    faulty_proxy.hook = flaky
    started = time.monotonic()
    _client(faulty_proxy.host, "transport/retry").ping()
    assert time.monotonic() - started >= 1.9  # two honoured Retry-After: 1 waits
    assert faulty_proxy.requests_seen.count(("GET", "/v2/")) == 3


def test_persistent_503_gives_up_with_remote_error(faulty_proxy: FaultyProxy) -> None:
    faulty_proxy.hook = lambda method, path: (503, {"Retry-After": "0"}, b"down")
    with pytest.raises(RemoteError, match="HTTP 503"):
        _client(faulty_proxy.host, "transport/down").ping()
    assert len(faulty_proxy.requests_seen) == FAST.attempts


def test_a_read_only_registry_says_so(faulty_proxy: FaultyProxy) -> None:
    refused = (405, {"Allow": "GET, HEAD"}, b"Method not allowed")
    faulty_proxy.hook = lambda method, path: refused if method == "POST" else None
    client = _client(faulty_proxy.host, "transport/readonly")
    data = b"refused upload"
    with pytest.raises(RemoteError, match=r"unexpected HTTP 405") as caught:
        client.push_blob(OciDigest.of(data), len(data), lambda: io.BytesIO(data))
    assert "read-only" in (caught.value.hint or "")


def test_upload_resumes_after_a_failed_chunk(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    data = os.urandom(200_000)
    failures = {"left": 1}

    def break_first_patch(method: str, path: str):
        if method == "PATCH" and failures["left"] > 0:
            failures["left"] -= 1
            return 502, {}, b"bad gateway"
        return None

    faulty_proxy.hook = break_first_patch
    client = _client(faulty_proxy.host, "transport/restart", chunk_size=64 * 1024)
    digest = OciDigest.of(data)
    assert client.push_blob(digest, len(data), lambda: io.BytesIO(data)) is True
    # The session survives: its offset is asked (GET on the upload) and the upload goes on from there.
    assert sum(1 for m, _ in faulty_proxy.requests_seen if m == "POST") == 1
    assert any(m == "GET" and "/blobs/uploads/" in p for m, p in faulty_proxy.requests_seen)
    store = BlobStore(tmp_path)
    _client(registry.host, "transport/restart").fetch_blob(digest, len(data), store)
    assert store.get(digest) == data


def test_unreachable_registry_is_a_remote_error() -> None:
    from tests.registry import free_port

    # A refused connection is reported at once, not after the whole (here: very slow) backoff schedule.
    slow = RetryPolicy(attempts=5, base_delay=30.0, max_delay=30.0)
    client = RegistryClient(parse_reference(f"127.0.0.1:{free_port()}/transport/gone"), retry=slow)
    started = time.monotonic()
    with pytest.raises(RemoteError, match="refused the connection"):
        client.ping()
    assert time.monotonic() - started < 10


def test_basic_auth_registry(auth_registry: RegistryServer) -> None:
    ref = parse_reference(auth_registry.ref("transport/auth"))
    with pytest.raises(RemoteError, match=r"requires a login \(HTTP 401\) and no credentials are stored"):
        RegistryClient(ref, None, retry=FAST).ping()
    wrong = Credentials(auth_registry.username, "wrong-password", source="BRAIN_REGISTRY_USERNAME")
    refused = r"refused the credentials for .* from BRAIN_REGISTRY_USERNAME \(HTTP 401\)"
    with pytest.raises(RemoteError, match=refused) as caught:
        RegistryClient(ref, wrong, retry=FAST).ping()
    assert "wrong-password" not in str(caught.value)
    good = RegistryClient(ref, Credentials(auth_registry.username, auth_registry.password), retry=FAST)
    good.ping()
    digest = _push_bytes(good, b"authenticated bytes")
    assert good.blob_size(digest) == len(b"authenticated bytes")


def test_bearer_token_flow_through_oras(registry: RegistryServer, faulty_proxy: FaultyProxy) -> None:
    """A token-auth registry: 401 Bearer challenge, token from the realm with basic creds, then access."""
    import base64

    good_basic = "Basic " + base64.b64encode(b"alice:s3cret").decode()
    issued: list[str] = []

    def token_gate(method: str, path: str, headers: dict[str, str]):
        if path.startswith("/token"):
            if headers.get("Authorization") != good_basic:
                return 401, {}, b'{"errors":[{"code":"UNAUTHORIZED"}]}'
            issued.append(path)
            return 200, {"Content-Type": "application/json"}, b'{"token":"tok-123"}'
        if headers.get("Authorization") != "Bearer tok-123":
            challenge = f'Bearer realm="http://{faulty_proxy.host}/token",service="test",scope="repository:transport/bearer:pull,push"'
            return 401, {"Www-Authenticate": challenge}, b'{"errors":[{"code":"UNAUTHORIZED"}]}'
        return None

    faulty_proxy.gate = token_gate
    ref = parse_reference(f"{faulty_proxy.host}/transport/bearer")
    client = RegistryClient(ref, Credentials("alice", "s3cret"), retry=FAST)
    digest = _push_bytes(client, b"behind a token")
    assert client.blob_size(digest) == len(b"behind a token")
    assert len(issued) == 1 and "scope=repository" in issued[0]
    with pytest.raises(RemoteError, match="401") as caught:
        RegistryClient(ref, Credentials("alice", "wrong"), retry=FAST).ping()
    assert "wrong" not in str(caught.value)


def test_a_silent_server_times_out_and_is_retried() -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts connections (kernel backlog) but never answers
    try:
        host = f"127.0.0.1:{listener.getsockname()[1]}"
        client = RegistryClient(parse_reference(f"{host}/transport/silent"), retry=FAST, timeout=(1.0, 0.3))
        started = time.monotonic()
        with pytest.raises(RemoteError, match=r"did not answer in time \(ReadTimeout\)"):
            client.ping()
        assert time.monotonic() - started < 5
    finally:
        listener.close()
