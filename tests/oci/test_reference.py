"""Reference parsing: the distribution grammar, loopback plain HTTP, clear refusals."""

from __future__ import annotations

import pytest

from brain.errors import UsageError
from brain.identity import OciDigest
from oci.reference import parse_reference, parse_registry

DIGEST = "sha256:" + "ab" * 32


@pytest.mark.parametrize(
    ("text", "registry", "repository", "tag", "digest", "plain"),
    [
        ("localhost:5000/brain:v1", "localhost:5000", "brain", "v1", None, True),
        ("127.0.0.1:5000/team/brain", "127.0.0.1:5000", "team/brain", None, None, True),
        ("[::1]:5000/a/b:c", "[::1]:5000", "a/b", "c", None, True),
        ("localhost/x", "localhost", "x", None, None, True),
        ("ghcr.io/org/my-brain:2026.11", "ghcr.io", "org/my-brain", "2026.11", None, False),
        (
            f"registry.example.org:443/a__b/c.d-e@{DIGEST}", "registry.example.org:443", "a__b/c.d-e", None, DIGEST,
            False,
        ),
        (f"ghcr.io/o/b:v2@{DIGEST}", "ghcr.io", "o/b", "v2", DIGEST, False),
    ],
)
def test_valid_references(text: str, registry: str, repository: str, tag, digest, plain: bool) -> None:
    ref = parse_reference(text)
    assert (ref.registry, ref.repository, ref.tag, ref.plain_http) == (registry, repository, tag, plain)
    assert ref.digest == (OciDigest.parse(digest) if digest else None)
    assert str(ref) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ghcr.io/a/b",
        "brain:v1",  # no host
        "library/brain",  # first component is not a host
        "ghcr.io/Upper/b",
        "ghcr.io/a//b",
        "ghcr.io/a/b:",
        "ghcr.io/a/b:-tag",
        "ghcr.io/a/b:" + "t" * 129,
        "ghcr.io/a/b@sha256:ABC",
        "ghcr.io/a/b@md5:" + "0" * 32,
        "ghcr.io/a_/b",
        "ghcr.io/-a/b",
        "ghcr.io:abc/a",
        "ghcr.io/" + "a" * 260,
        "127.0.0.1:99999/a/b",  # once an internal error (exit 70) from the HTTP library
        "localhost:0/a",
        "[::1]:65536/a",
    ],
)
def test_invalid_references_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="invalid reference"):
        parse_reference(text)


def test_port_range_for_references_and_login_hosts() -> None:
    assert parse_reference("127.0.0.1:65535/a").registry == "127.0.0.1:65535"
    assert parse_reference("[::1]:1/a").is_loopback
    assert parse_registry("ghcr.io:443").registry == "ghcr.io:443"
    for host in ("127.0.0.1:99999", "localhost:0"):
        with pytest.raises(UsageError, match="port 1-65535"):
            parse_registry(host)


def test_plain_http_only_for_loopback_unless_asked() -> None:
    assert parse_reference("ghcr.io/a/b").scheme == "https"
    assert parse_reference("ghcr.io/a/b", plain_http=True).base_url == "http://ghcr.io"
    assert parse_reference("127.0.0.1:5000/a").base_url == "http://127.0.0.1:5000"
    # A name that merely starts like a loopback address is not loopback.
    assert parse_reference("localhost.example.org/a").plain_http is False


def test_manifest_reference_prefers_digest_and_defaults_to_latest() -> None:
    assert parse_reference("ghcr.io/a/b").manifest_reference == "latest"
    assert parse_reference("ghcr.io/a/b:v1").manifest_reference == "v1"
    assert parse_reference(f"ghcr.io/a/b:v1@{DIGEST}").manifest_reference == DIGEST


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("LOCALHOST:5000/x", "127.0.0.1:5000/x"),
        ("localhost:5000/x:v1", "127.0.0.1:5000/x:v1"),
        ("127.0.0.7:5000/team/x:v1", "127.0.0.1:5000/team/x:v1"),
        ("[::1]:5000/x", "127.0.0.1:5000/x"),
        ("docker.io/x", "docker.io/library/x"),
        ("index.docker.io/library/x:v2", "docker.io/library/x:v2"),
        ("Registry-1.Docker.IO/org/x", "docker.io/org/x"),
        ("GHCR.io:443/o/b:v2", "ghcr.io/o/b:v2"),
        (f"ghcr.io/o/b:v2@{DIGEST}", f"ghcr.io/o/b:v2@{DIGEST}"),
    ],
)
def test_canonical_spelling_is_one_per_place(text: str, canonical: str) -> None:
    assert parse_reference(text).canonical == canonical
    assert parse_reference(canonical).canonical == canonical  # already canonical: unchanged


def test_a_trailing_slash_is_refused_not_recorded() -> None:
    with pytest.raises(UsageError, match="invalid reference"):
        parse_reference("localhost:5000/x/")
