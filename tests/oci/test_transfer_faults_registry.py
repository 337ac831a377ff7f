"""Issue 12 items 14 and 17 against a real registry behind a fault-injecting proxy.

Manifest and config reads survive a reset or a truncated body; downloads resume inside a blob with HTTP
Range; uploads resume from the offset the registry reports; a wrong Content-Length is asked again once
before it is called tampering; a reset after the registry answered never suggests --plain-http. Each
transfer is checked by what crossed the proxy and, where it matters, with skopeo.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

import pytest

from brain.brain import Brain
from brain.errors import RemoteError, UntrustedArtifactError
from brain.identity import OciDigest
from brain.store.blobs import BlobStore
from oci.inspect import inspect
from oci.pull import open_or_init, pull
from oci.push import push
from oci.reference import parse_reference
from oci.retry import RetryPolicy
from oci.transport import RegistryClient
from tests.oci.test_push_pull_registry import commit_texts
from tests.registry import (
    CutBody,
    FaultyProxy,
    RegistryServer,
    ResetRequest,
    WrongLength,
    require_tool,
)

pytestmark = pytest.mark.registry
FAST = RetryPolicy(attempts=4, base_delay=0.01, max_delay=0.05, max_retry_after=0.1)
MB = 1 << 20


def _client(host: str, repo: str, **kwargs) -> RegistryClient:  # type: ignore[no-untyped-def]
    return RegistryClient(parse_reference(f"{host}/{repo}"), retry=FAST, **kwargs)


def _once(fault: object, method: str, path_part: str):  # type: ignore[no-untyped-def]
    """A hook applying `fault` to the first matching request only."""
    left = {"n": 1}

    def hook(seen_method: str, path: str):  # type: ignore[no-untyped-def]
        if seen_method == method and path_part in path and left["n"]:
            left["n"] -= 1
            return fault
        return None

    return hook


def test_a_download_reset_mid_blob_resumes_with_range(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    data = os.urandom(12 * MB)
    digest = OciDigest.of(data)
    _client(registry.host, "faults/range").push_blob(digest, len(data), lambda: io.BytesIO(data))
    faulty_proxy.hook = _once(CutBody(3 * MB), "GET", f"/blobs/{digest}")
    store = BlobStore(tmp_path)
    _client(faulty_proxy.host, "faults/range").fetch_blob(digest, len(data), store)
    assert store.get(digest) == data
    gets = [
        (headers, sent)
        for method, path, headers, sent in faulty_proxy.answers
        if method == "GET" and str(digest) in path
    ]
    assert len(gets) == 2 and gets[1][0].get("Range") == f"bytes={3 * MB}-"
    # About 12 MB crossed the link, not 3 + 12.
    assert faulty_proxy.bytes_sent(str(digest)) == len(data)


def test_a_wrong_content_length_is_asked_again_once_then_refused(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    data = b"a blob a proxy mangles" * 50
    digest = OciDigest.of(data)
    _client(registry.host, "faults/length").push_blob(digest, len(data), lambda: io.BytesIO(data))
    store = BlobStore(tmp_path)
    faulty_proxy.hook = _once(WrongLength(len(data) - 7), "GET", f"/blobs/{digest}")
    _client(faulty_proxy.host, "faults/length").fetch_blob(digest, len(data), store)
    assert store.get(digest) == data
    (tmp_path / "again").mkdir()
    other = BlobStore(tmp_path / "again")
    faulty_proxy.hook = lambda method, path: WrongLength(len(data) - 7) if f"/blobs/{digest}" in path else None
    with pytest.raises(UntrustedArtifactError, match="announced"):
        _client(faulty_proxy.host, "faults/length").fetch_blob(digest, len(data), other)
    assert list(other.digests()) == []


@pytest.mark.parametrize("fault", [ResetRequest(), CutBody(40)], ids=["reset", "truncated"])
def test_manifest_and_config_reads_survive_a_reset_or_a_truncated_body(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path, fault: object
) -> None:
    repo = f"faults/manifest-{type(fault).__name__.lower()}:v1"
    source = Brain.init(tmp_path / "source")
    commit_texts(source, "manifest faults")
    push(source, parse_reference(registry.ref(repo)), client=_client(registry.host, repo))
    proxied = parse_reference(f"{faulty_proxy.host}/{repo}")
    faulty_proxy.hook = _once(fault, "GET", "/manifests/")
    assert inspect(proxied, client=_client(faulty_proxy.host, repo)).digest is not None
    snapshot = source.snapshot_digest()
    faulty_proxy.hook = _once(fault, "GET", f"/blobs/{snapshot}")
    assert inspect(proxied, client=_client(faulty_proxy.host, repo)).digest is not None
    faulty_proxy.hook = _once(fault, "GET", "/manifests/")
    target, _ = open_or_init(tmp_path / "pulled")
    result = pull(target, proxied, client=_client(faulty_proxy.host, repo))
    assert result.head_moved and target.snapshot_digest() == snapshot


def test_an_upload_reset_mid_blob_resumes_from_the_registry_offset(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    data = os.urandom(6 * MB)
    digest = OciDigest.of(data)
    # The connection resets while the fourth 1 MiB chunk is sent: the registry still holds three.
    patches = {"n": 0}

    def reset_fourth_chunk(method: str, path: str):  # type: ignore[no-untyped-def]
        if method == "PATCH":
            patches["n"] += 1
            if patches["n"] == 4:
                return ResetRequest()
        return None

    faulty_proxy.hook = reset_fourth_chunk
    client = _client(faulty_proxy.host, "faults/upload", chunk_size=1 * MB)
    assert client.push_blob(digest, len(data), lambda: io.BytesIO(data)) is True
    uploaded = sum(n for method, _, n in faulty_proxy.received if method in ("PATCH", "PUT"))
    assert uploaded == len(data) + MB  # only the chunk that was cut is sent again (a restart would be +4 MiB)
    assert sum(1 for m, _ in faulty_proxy.requests_seen if m == "POST") == 1
    store = BlobStore(tmp_path)
    _client(registry.host, "faults/upload").fetch_blob(digest, len(data), store)
    assert store.get(digest) == data


def test_an_upload_whose_answer_was_lost_completes(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    # The registry applied the chunk but its answer never came back. CNCF distribution then refuses the
    # session's older state token, so the upload starts over; it must still complete, and correctly.
    data = os.urandom(3 * MB)
    digest = OciDigest.of(data)
    faulty_proxy.hook = _once(ResetRequest(forward=True), "PATCH", "/blobs/uploads/")
    client = _client(faulty_proxy.host, "faults/lost", chunk_size=1 * MB)
    assert client.push_blob(digest, len(data), lambda: io.BytesIO(data)) is True
    store = BlobStore(tmp_path)
    _client(registry.host, "faults/lost").fetch_blob(digest, len(data), store)
    assert store.get(digest) == data


def test_a_reset_after_the_registry_answered_gives_no_plain_http_hint(
    registry: RegistryServer, faulty_proxy: FaultyProxy
) -> None:
    data = os.urandom(3 * MB)
    faulty_proxy.hook = lambda method, path: ResetRequest() if method == "PATCH" else None
    client = _client(faulty_proxy.host, "faults/nohint", chunk_size=1 * MB)
    with pytest.raises(RemoteError) as caught:
        client.push_blob(OciDigest.of(data), len(data), lambda: io.BytesIO(data))
    assert "plain-http" not in str(caught.value) and "dropped" in caught.value.message
    assert caught.value.hint is not None and "again" in caught.value.hint


def test_a_pushed_brain_through_resets_is_what_skopeo_reads(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    skopeo = require_tool("skopeo")
    source = Brain.init(tmp_path / "source")
    commit_texts(source, "skopeo after faults", "second source")
    patches = {"n": 0}

    def every_other_put(method: str, path: str):  # type: ignore[no-untyped-def]
        if method == "PUT" and "/blobs/uploads/" in path:
            patches["n"] += 1
            if patches["n"] % 2 == 1:
                return ResetRequest(forward=True)
        return None

    faulty_proxy.hook = every_other_put
    pushed = push(source, parse_reference(f"{faulty_proxy.host}/faults/skopeo:v1"),
                  client=_client(faulty_proxy.host, "faults/skopeo:v1"))
    done = subprocess.run(
        [skopeo, "inspect", "--raw", "--tls-verify=false", f"docker://{registry.ref('faults/skopeo:v1')}"],
        capture_output=True, timeout=60, check=True,
    )
    assert OciDigest.of(done.stdout) == pushed.digest
    layers = [layer["digest"] for layer in json.loads(done.stdout)["layers"]]
    copy = subprocess.run(
        [skopeo, "copy", "--src-tls-verify=false", f"docker://{registry.ref('faults/skopeo:v1')}",
         f"dir:{tmp_path / 'copied'}"], capture_output=True, timeout=120, check=False,
    )
    assert copy.returncode == 0, copy.stderr
    for digest in layers:
        assert OciDigest.of((tmp_path / "copied" / digest.removeprefix("sha256:")).read_bytes()) == OciDigest.parse(
            digest
        )
