"""Registry references: `host[:port]/repository[:tag][@digest]`, validated per the distribution grammar.

A reference always names its registry host: there is no implicit default registry, so a typo can never
send a brain somewhere unexpected. Plain HTTP is used automatically only for loopback hosts.

Where a reference is recorded (`boltzmann/remotes.json`, the trust pin, the push log) it is recorded as its
`repository_key`: host lowercased, the default port (443) dropped, every loopback spelling (`localhost`,
`127.x.y.z`, `[::1]`) written `127.0.0.1`, Docker Hub's aliases written `docker.io` (one-component names
under `library/`). The key only names where something came from; trust never rests on it (`oci.authenticate`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brain.errors import UsageError
from brain.identity import OciDigest

# The grammar of github.com/distribution/reference (domain, path components, tag), sha256 digests only.
_HOST = r"(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?))*"
_DOMAIN = re.compile(rf"(?:{_HOST}|\[[0-9a-fA-F:.]+\])(?::[0-9]{{1,5}})?")
_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*")
_TAG = re.compile(r"[\w][\w.-]{0,127}")
_MAX_NAME = 255
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]"})
_LOOPBACK_KEY = "127.0.0.1"
_DOCKER_HUB = frozenset({"docker.io", "index.docker.io", "registry-1.docker.io", "registry.hub.docker.com"})
_DEFAULT_PORTS = (":443",)
DEFAULT_TAG = "latest"
_FORM = "expected HOST[:PORT]/REPOSITORY[:TAG][@sha256:DIGEST], e.g. localhost:5000/team/brain:v1"


@dataclass(frozen=True)
class Reference:
    """A parsed registry reference; `tag` and `digest` may both be present (the digest wins on fetch)."""

    registry: str
    repository: str
    tag: str | None = None
    digest: OciDigest | None = None
    plain_http: bool = False

    @property
    def hostname(self) -> str:
        """The registry host without its port."""
        host = self.registry
        if host.startswith("["):
            return host[: host.index("]") + 1]
        return host.rsplit(":", 1)[0] if ":" in host else host

    @property
    def is_loopback(self) -> bool:
        """True for localhost, 127.0.0.0/8 and [::1] (any port, any letter case)."""
        return is_loopback_host(self.hostname)

    @property
    def registry_key(self) -> str:
        """The registry host as recorded (see the module docstring): `127.0.0.1:5000`, `docker.io`, `ghcr.io`."""
        return normalized_registry(self.registry)

    @property
    def repository_key(self) -> str:
        """`registry_key/repository` with Docker Hub's implicit `library/`: how a remote is recorded."""
        registry = self.registry_key
        repository = self.repository
        if registry == "docker.io" and "/" not in repository:
            repository = f"library/{repository}"
        return f"{registry}/{repository}"

    @property
    def canonical(self) -> str:
        """`repository_key[:tag][@digest]`: the one spelling recorded in head.json's `origin` (`LOCALHOST:5000/x`,
        `localhost:5000/x` and `127.0.0.1:5000/x` all read `127.0.0.1:5000/x`; `docker.io/x`,
        `index.docker.io/library/x` read `docker.io/library/x`)."""
        text = self.repository_key
        if self.tag is not None:
            text += f":{self.tag}"
        if self.digest is not None:
            text += f"@{self.digest}"
        return text

    @property
    def scheme(self) -> str:
        """`http` for plain-HTTP registries, `https` otherwise."""
        return "http" if self.plain_http else "https"

    @property
    def base_url(self) -> str:
        """`<scheme>://<registry>`."""
        return f"{self.scheme}://{self.registry}"

    @property
    def manifest_reference(self) -> str:
        """What to put after `/manifests/`: the digest if pinned, else the tag (default `latest`)."""
        if self.digest is not None:
            return str(self.digest)
        return self.tag or DEFAULT_TAG

    @property
    def tag_or_default(self) -> str:
        """The tag, or `latest` when none was given."""
        return self.tag or DEFAULT_TAG

    def with_digest(self, digest: OciDigest) -> Reference:
        """The same reference pinned to `digest`."""
        return Reference(self.registry, self.repository, self.tag, digest, self.plain_http)

    def __str__(self) -> str:
        text = f"{self.registry}/{self.repository}"
        if self.tag is not None:
            text += f":{self.tag}"
        if self.digest is not None:
            text += f"@{self.digest}"
        return text


def is_loopback_host(hostname: str) -> bool:
    """`localhost`, an IPv4 address in 127.0.0.0/8, or `[::1]` (letter case ignored)."""
    host = hostname.lower()
    if host in LOOPBACK_HOSTS:
        return True
    octets = host.split(".")
    return len(octets) == 4 and octets[0] == "127" and all(o.isdigit() and int(o) <= 255 for o in octets)


def normalized_registry(registry: str) -> str:
    """`host[:port]` as recorded: lowercased, port 443 dropped, loopback as `127.0.0.1`, Docker Hub as `docker.io`."""
    text = registry.lower()
    for port in _DEFAULT_PORTS:
        text = text.removesuffix(port)
    host, port = text, ""
    if not text.startswith("[") or "]:" in text:
        head, colon, tail = text.rpartition(":")
        if colon and tail.isdigit() and not head.endswith(":"):
            host, port = head, f":{tail}"
    if is_loopback_host(host):
        host = _LOOPBACK_KEY
    elif host in _DOCKER_HUB and not port:
        host = "docker.io"
    return host + port


def normalized_key(text: str) -> str:
    """A recorded `registry/repository` key, normalized (keys written before normalization read the same)."""
    registry, slash, repository = text.partition("/")
    if not slash:
        return text
    key = f"{normalized_registry(registry)}/{repository}"
    if key.startswith("docker.io/") and "/" not in repository:
        key = f"docker.io/library/{repository}"
    return key


def _port_problem(domain: str) -> str | None:
    """Why the port of `host[:port]` is unusable (outside 1-65535), or None."""
    _, colon, port = domain.rsplit("]", 1)[-1].rpartition(":")  # after an IPv6 literal's brackets
    if colon and not 1 <= int(port) <= 65535:
        return f"port {port} is outside 1-65535"
    return None


def _looks_like_host(text: str) -> bool:
    """`127.0.0.1:5000`, `localhost`, `ghcr.io`: a registry host, not a repository with a tag."""
    name, _, port = text.partition(":")
    return _DOMAIN.fullmatch(text) is not None and (
        "." in name or name == "localhost" or (port.isdigit() and ":" in text)
    )


def _bad(text: str, why: str) -> UsageError:
    return UsageError(f"invalid reference {text!r}: {why}", hint=_FORM)


def parse_reference(text: str, *, plain_http: bool = False) -> Reference:
    """Parse and validate `text`; plain HTTP is forced for loopback hosts. Raises `UsageError`."""
    if not isinstance(text, str) or not text or text != text.strip():
        raise _bad(str(text), "empty or surrounded by whitespace")
    rest, digest = text, None
    if "@" in rest:
        rest, _, digest_text = rest.partition("@")
        try:
            digest = OciDigest.parse(digest_text)
        except UsageError:
            raise _bad(text, f"digest {digest_text!r} is not sha256: followed by 64 lowercase hex") from None
    if "/" not in rest or rest.endswith("/"):
        host = rest.rstrip("/")
        if _looks_like_host(host):
            raise _bad(text, f"no repository after the registry host {host!r} (add /REPOSITORY[:TAG])")
        raise _bad(text, "no registry host (references always name their registry)")
    domain, _, path = rest.partition("/")
    if _DOMAIN.fullmatch(domain) is None or not ("." in domain or ":" in domain or domain == "localhost"):
        raise _bad(text, f"{domain!r} is not a registry host (it needs a dot, a port, or to be localhost)")
    if (why := _port_problem(domain)) is not None:
        raise _bad(text, why)
    tag = None
    last_slash = path.rfind("/")
    colon = path.rfind(":")
    if colon > last_slash:
        path, tag = path[:colon], path[colon + 1 :]
        if _TAG.fullmatch(tag) is None:
            raise _bad(text, f"tag {tag!r} must be 1-128 of [A-Za-z0-9_.-], not starting with '.' or '-'")
    components = path.split("/")
    for component in components:
        if _COMPONENT.fullmatch(component) is None:
            raise _bad(
                text,
                f"repository component {component!r} must be lowercase letters and digits, "
                "separated by '.', '_', '__' or '-'",
            )
    if len(domain) + 1 + len(path) > _MAX_NAME:
        raise _bad(text, f"name longer than {_MAX_NAME} characters")
    reference = Reference(domain, path, tag, digest)
    return Reference(domain, path, tag, digest, plain_http or reference.is_loopback)


def parse_registry(text: str, *, plain_http: bool = False) -> Reference:
    """A registry host alone (`host[:port]`, as `brain login` takes it); the repository is empty."""
    host = text.removeprefix("https://").removeprefix("http://").rstrip("/")
    if (
        _DOMAIN.fullmatch(host) is None
        or not ("." in host or ":" in host or host == "localhost")
        or _port_problem(host) is not None
    ):
        raise UsageError(
            f"invalid registry host {text!r}: expected HOST[:PORT] (port 1-65535) with a dot, a port, or localhost",
            hint="e.g. brain login ghcr.io, or brain login localhost:5000",
        )
    reference = Reference(host, "")
    return Reference(host, "", plain_http=plain_http or reference.is_loopback)
