"""Manifest wire model: JCS bytes identical to the reference's, and the §6.1 consumer checks."""

from __future__ import annotations

import json

import pytest

from brain.errors import UntrustedArtifactError
from brain.identity import OciDigest
from oci import media_types as mt
from oci.manifest import Descriptor, Manifest
from tests.shared_paths import REFERENCE_BLOBS

BLOBS = REFERENCE_BLOBS
V2 = "004f409811fb337ad94948e57b795f8969ae12adb54bfce8979d1269424a0727"
V1 = "8d25935c3d932970d012695e280363409a3df5e24486b731be4100b46c283894"


@pytest.mark.skipif(not BLOBS.exists(), reason="reference brain fixture not present")
@pytest.mark.parametrize("digest", [V1, V2])
def test_reference_manifests_round_trip_byte_exact(digest: str) -> None:
    data = (BLOBS / digest).read_bytes()
    manifest = Manifest.decode(data)
    assert manifest.to_bytes() == data
    assert manifest.layers[-1].mediaType == mt.HISTORY_LAYER
    assert manifest.layers[0].annotation(mt.MEMORY_TYPE) == "canonical"
    assert manifest.source_snapshot == manifest.config.digest
    assert not manifest.is_projection


def _manifest_json() -> dict[str, object]:
    return json.loads((BLOBS / V2).read_bytes())


def test_descriptor_omits_empty_annotations() -> None:
    descriptor = Descriptor(mediaType=mt.SNAPSHOT_CONFIG, digest=OciDigest.of(b"x"), size=1, annotations={})
    assert descriptor.to_json() == {"digest": str(OciDigest.of(b"x")), "mediaType": mt.SNAPSHOT_CONFIG, "size": 1}


def test_pretty_printed_manifest_is_accepted() -> None:
    pretty = json.dumps(_manifest_json(), indent=2).encode()
    assert Manifest.decode(pretty).to_bytes() == (BLOBS / V2).read_bytes()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"artifactType": "application/vnd.other+json"}, "artifactType"),
        ({"schemaVersion": 1}, "schemaVersion"),
        ({"annotations": []}, "annotations is not an object"),
        ({"annotations": {mt.PROTOCOL_VERSION: "3"}}, "protocol-version"),
        ({"annotations": {mt.PROTOCOL_VERSION: "one"}}, "protocol-version"),
        ({"extra": 1}, "extra"),
        ({"config": {"digest": "sha256:ABC", "mediaType": "x", "size": 1}}, "config"),
    ],
)
def test_consumer_checks_refuse(change: dict[str, object], message: str) -> None:
    document = _manifest_json() | change
    with pytest.raises(UntrustedArtifactError, match=message):
        Manifest.decode(json.dumps(document).encode())


def test_protocol_version_two_is_accepted() -> None:
    document = _manifest_json()
    document["annotations"] = dict(document["annotations"]) | {mt.PROTOCOL_VERSION: "2"}  # type: ignore[arg-type]
    assert Manifest.decode(json.dumps(document).encode()).annotations[mt.PROTOCOL_VERSION] == "2"


def test_non_strict_json_is_refused() -> None:
    with pytest.raises(UntrustedArtifactError, match="strict JSON"):
        Manifest.decode(b'{"a":1,"a":2}')
