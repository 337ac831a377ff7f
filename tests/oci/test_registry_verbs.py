"""Registry verbs end to end against the real registry, checked with skopeo: copy, tags REF, tag, untag,
push --immutable, logout. Each `brain` command is a separate process forked from a pre-warmed `brain`
(tests/prewarmed.py), the console script's entry point without an interpreter start per command."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest
import requests

from brain.blocks import CanonicalBlock
from brain.brain import Brain
from brain.identity import OciDigest
from oci.reference import parse_reference
from oci.remote_tags import list_tags
from oci.transport import RegistryClient
from tests.prewarmed import ModuleBrain
from tests.registry import (
    FaultyProxy,
    RegistryServer,
    require_tool,
    skopeo_raw_manifest,
)

pytestmark = pytest.mark.registry
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("BRAIN_")}, "NO_COLOR": "1"}
BRAIN = ModuleBrain(ENV, "copy", "tags", "tag", "push", "pull", "login", "logout", "sign", "init")


def run(
    tmp_path: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {**ENV, "DOCKER_CONFIG": str(tmp_path / "docker"), "HOME": str(tmp_path), **(env or {})}
    return BRAIN.server.run(*args, cwd=tmp_path, env=environment, stdin=stdin)


def make_brain(path: Path, *texts: str) -> Brain:
    """A brain (new, or the one at `path`) with one more snapshot holding `texts` as canonical blocks."""
    brain = Brain.open(path) if path.exists() else Brain.init(path)
    with brain.writer("tester@example.org") as writer:
        for data in (text.encode() for text in texts):
            writer.add(CanonicalBlock(blob=writer.put_blob(data), media_type="text/plain", size=len(data)))
        writer.commit()
    return brain


def skopeo_digest(reference: str) -> str:
    return "sha256:" + hashlib.sha256(skopeo_raw_manifest(reference)).hexdigest()


def skopeo_missing(reference: str) -> bool:
    binary = require_tool("skopeo")
    done = subprocess.run(
        [binary, "inspect", "--raw", "--tls-verify=false", f"docker://{reference}"], capture_output=True, timeout=60,
        check=False
    )
    return done.returncode != 0


def one_line_error(done: subprocess.CompletedProcess[str], code: int) -> None:
    assert done.returncode == code, (done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert lines and lines[0].startswith("error: ") and all(line.startswith("hint: ") for line in lines[1:]), (
        done.stderr
    )


def pushed(tmp_path: Path, registry: RegistryServer, name: str, *texts: str) -> tuple[str, str]:
    make_brain(tmp_path / name, *texts)
    ref = registry.ref(f"verbs/{name}:v1")
    done = run(tmp_path, "--brain", name, "push", ref, "--json")
    assert done.returncode == 0, done.stderr
    return ref, json.loads(done.stdout)["digest"]


# -- copy --------------------------------------------------------------------------------------------------


def test_copy_between_repositories_keeps_the_digest_and_pulls(registry: RegistryServer, tmp_path: Path) -> None:
    source, digest = pushed(tmp_path, registry, "copysrc", "alpha", "beta")
    destination = registry.ref("verbs/copied:release")
    done = run(tmp_path, "copy", source, destination, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["digest"] == digest and result["blobs_copied"] >= 3
    assert skopeo_digest(destination) == digest
    assert not (tmp_path / "brain").exists()  # no local brain was made
    pulled = run(tmp_path, "--brain", "pulled", "pull", destination)
    assert pulled.returncode == 0, pulled.stderr
    assert Brain.open(tmp_path / "pulled").snapshot_digest() == Brain.open(tmp_path / "copysrc").snapshot_digest()
    again = run(tmp_path, "copy", source, destination, "--json")
    assert again.returncode == 0 and json.loads(again.stdout)["blobs_copied"] == 0
    # Without a tag on DST, SRC's tag is used.
    untagged = run(tmp_path, "copy", source, registry.ref("verbs/sametag"))
    assert untagged.returncode == 0, untagged.stderr
    assert skopeo_digest(registry.ref("verbs/sametag:v1")) == digest


def test_copy_across_registries_and_without_push_rights(
    registry: RegistryServer, auth_registry: RegistryServer, tmp_path: Path
) -> None:
    source, digest = pushed(tmp_path, registry, "crosssrc", "gamma")
    destination = auth_registry.ref("verbs/crossed:v1")
    denied = run(tmp_path, "copy", source, destination)
    one_line_error(denied, 7)
    assert "requires a login" in denied.stderr
    creds = {
        "BRAIN_REGISTRY_USERNAME": auth_registry.username or "",
        "BRAIN_REGISTRY_PASSWORD": auth_registry.password or "",
    }
    done = run(tmp_path, "copy", source, destination, env=creds)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == digest
    raw = subprocess.run(
        [require_tool("skopeo"), "inspect", "--raw", "--tls-verify=false",
         f"--creds={creds['BRAIN_REGISTRY_USERNAME']}:{creds['BRAIN_REGISTRY_PASSWORD']}", f"docker://{destination}"],
        capture_output=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "sha256:" + hashlib.sha256(raw).hexdigest() == digest


def test_copy_refuses_a_tampered_blob_and_writes_no_manifest(
    registry: RegistryServer, faulty_proxy: FaultyProxy, tmp_path: Path
) -> None:
    pushed(tmp_path, registry, "tampersrc", "delta " * 1000)
    manifest = json.loads(skopeo_raw_manifest(registry.ref("verbs/tampersrc:v1")))
    victim = manifest["layers"][0]["digest"]

    def corrupt(method: str, path: str):  # type: ignore[no-untyped-def]
        if method == "GET" and path.endswith(f"/blobs/{victim}"):
            return lambda body: body[:-1] + bytes([body[-1] ^ 1])
        return None

    faulty_proxy.hook = corrupt
    destination = registry.ref("verbs/tampered:v1")
    done = run(tmp_path, "copy", f"{faulty_proxy.host}/verbs/tampersrc:v1", destination)
    one_line_error(done, 6)
    assert victim in done.stderr
    assert skopeo_missing(destination)
    check = requests.head(f"http://{registry.host}/v2/verbs/tampered/blobs/{victim}", timeout=10)
    assert check.status_code == 404


def _put_signature_referrer(registry: RegistryServer, repository: str, subject: str, subject_size: int) -> str:
    """A signature-like referrer (config + one layer, `subject` = the artifact) and its fallback index."""
    client = RegistryClient(parse_reference(registry.ref(f"{repository}:x")))
    config, layer = b"{}", b"-----BEGIN SSH SIGNATURE-----\nnot a real one\n-----END SSH SIGNATURE-----\n"
    for blob in (config, layer):
        client.push_blob(OciDigest.of(blob), len(blob), lambda b=blob: __import__("io").BytesIO(b))
    referrer = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "artifactType": "application/vnd.example.signature",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": str(OciDigest.of(config)), "size": 2},
        "layers": [
            {"mediaType": "application/vnd.example.sig", "digest": str(OciDigest.of(layer)), "size": len(layer)}
        ],
        "subject": {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": subject, "size": subject_size},
    }).encode()  # fmt: skip
    referrer_digest = client.put_manifest(str(OciDigest.of(referrer)), referrer)
    index = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": str(referrer_digest),
                       "size": len(referrer), "artifactType": "application/vnd.example.signature"}],
    }).encode()  # fmt: skip
    url = f"http://{registry.host}/v2/{repository}/manifests/sha256-{subject.removeprefix('sha256:')}"
    response = requests.put(
        url, data=index, headers={"Content-Type": "application/vnd.oci.image.index.v1+json"}, timeout=10
    )
    assert response.status_code == 201, response.text
    return str(referrer_digest)


def test_copy_brings_the_signatures_along(registry: RegistryServer, tmp_path: Path) -> None:
    source, digest = pushed(tmp_path, registry, "signedsrc", "epsilon")
    size = len(skopeo_raw_manifest(source))
    referrer = _put_signature_referrer(registry, "verbs/signedsrc", digest, size)
    destination = registry.ref("verbs/signedcopy:v1")
    done = run(tmp_path, "copy", source, destination, "--json")
    assert done.returncode == 0, done.stderr
    assert [r["digest"] for r in json.loads(done.stdout)["referrers"]] == [referrer]
    assert skopeo_digest(destination) == digest
    assert skopeo_digest(registry.ref(f"verbs/signedcopy@{referrer}")) == referrer
    index = json.loads(skopeo_raw_manifest(registry.ref(f"verbs/signedcopy:sha256-{digest.removeprefix('sha256:')}")))
    assert [m["digest"] for m in index["manifests"]] == [referrer]
    skipped = run(tmp_path, "copy", source, registry.ref("verbs/unsigned:v1"), "--no-referrers", "--json")
    assert skipped.returncode == 0 and json.loads(skipped.stdout)["referrers"] == []


def test_copy_refuses_a_broken_referrers_index_before_writing_the_destination(
    registry: RegistryServer, tmp_path: Path
) -> None:
    source, digest = pushed(tmp_path, registry, "brokenidx", "zeta")
    # The registry stores this fallback index (JSON with a duplicate key parses for it); strict JSON refuses it.
    index = (
        b'{"schemaVersion": 2, "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", '
        b'"manifests": []}'
    )
    url = f"http://{registry.host}/v2/verbs/brokenidx/manifests/sha256-{digest.removeprefix('sha256:')}"
    response = requests.put(
        url, data=index, headers={"Content-Type": "application/vnd.oci.image.index.v1+json"}, timeout=10
    )
    assert response.status_code == 201, response.text
    destination = registry.ref("verbs/brokenidxcopy:v1")
    refused = run(tmp_path, "copy", source, destination)
    one_line_error(refused, 6)
    assert "referrers" in refused.stderr and "nothing was installed" in refused.stderr
    assert skopeo_missing(destination) and skopeo_missing(registry.ref(f"verbs/brokenidxcopy@{digest}"))
    done = run(tmp_path, "copy", source, destination, "--no-referrers", "--json")
    assert done.returncode == 0, done.stderr
    assert skopeo_digest(destination) == digest


def test_copy_refuses_moving_a_destination_tag(registry: RegistryServer, tmp_path: Path) -> None:
    first, first_digest = pushed(tmp_path, registry, "movea", "zeta")
    second, _ = pushed(tmp_path, registry, "moveb", "eta")
    destination = registry.ref("verbs/moved:v1")
    assert run(tmp_path, "copy", first, destination).returncode == 0
    refused = run(tmp_path, "copy", second, destination)
    one_line_error(refused, 5)
    assert skopeo_digest(destination) == first_digest
    assert run(tmp_path, "copy", second, destination, "--force").returncode == 0
    assert skopeo_digest(destination) != first_digest


# -- tags and tag ------------------------------------------------------------------------------------------


def test_remote_tags_listing_and_pagination(
    registry: RegistryServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, _ = pushed(tmp_path, registry, "listed", "theta")
    for name in ("v2", "v3", "latest"):
        assert run(tmp_path, "tag", source, name).returncode == 0
    done = run(tmp_path, "tags", registry.ref("verbs/listed"), "--json")
    assert done.returncode == 0, done.stderr
    assert sorted(json.loads(done.stdout)["tags"]) == ["latest", "v1", "v2", "v3"]
    monkeypatch.setattr("oci.remote_tags.PAGE_SIZE", 1)
    assert sorted(list_tags(RegistryClient(parse_reference(registry.ref("verbs/listed"))))) == [
        "latest", "v1", "v2", "v3",
    ]
    missing = run(tmp_path, "tags", registry.ref("verbs/never-pushed"))
    one_line_error(missing, 4)
    local = run(tmp_path, "--brain", "listed", "tags", "--json")
    assert [t["tag"] for t in json.loads(local.stdout)["tags"]] == ["v1"]


def test_remote_tag_keeps_the_digest_and_never_moves_silently(registry: RegistryServer, tmp_path: Path) -> None:
    source, digest = pushed(tmp_path, registry, "retag", "iota")
    done = run(tmp_path, "tag", source, "stable", "--json")
    assert done.returncode == 0, done.stderr
    assert skopeo_digest(registry.ref("verbs/retag:stable")) == digest
    one_line_error(run(tmp_path, "tag", registry.ref("verbs/retag:nope"), "other"), 4)
    assert skopeo_missing(registry.ref("verbs/retag:other"))
    make_brain(tmp_path / "retag", "kappa")
    assert run(tmp_path, "--brain", "retag", "push", registry.ref("verbs/retag:v2")).returncode == 0
    refused = run(tmp_path, "tag", registry.ref("verbs/retag:v2"), "stable")
    one_line_error(refused, 5)
    assert skopeo_digest(registry.ref("verbs/retag:stable")) == digest
    one_line_error(run(tmp_path, "tag", source, "bad tag!"), 3)


def test_local_tag_and_untag(tmp_path: Path) -> None:
    brain = make_brain(tmp_path / "local", "lambda")
    assert run(tmp_path, "--brain", "local", "pack", "--tag", "v1").returncode == 0
    index_before = (tmp_path / "local" / "index.json").read_bytes()
    one_line_error(run(tmp_path, "--brain", "local", "tag", "nope", "v2"), 4)
    assert (tmp_path / "local" / "index.json").read_bytes() == index_before
    done = run(tmp_path, "--brain", "local", "tag", "v1", "release", "--json")
    assert done.returncode == 0, done.stderr
    tags = {name: d.digest for name, d in brain.layout.tags()}
    assert tags["release"] == tags["v1"]
    make_brain(tmp_path / "local", "mu")
    assert run(tmp_path, "--brain", "local", "pack", "--tag", "v2").returncode == 0
    one_line_error(run(tmp_path, "--brain", "local", "tag", "v2", "release"), 5)
    assert run(tmp_path, "--brain", "local", "tag", "v2", "release", "--force").returncode == 0
    assert dict(brain.layout.tags())["release"].digest == dict(brain.layout.tags())["v2"].digest
    untagged = run(tmp_path, "--brain", "local", "untag", "release")
    assert untagged.returncode == 0, untagged.stderr
    assert "release" not in dict(brain.layout.tags())
    one_line_error(run(tmp_path, "--brain", "local", "untag", "release"), 4)
    assert brain.blobs.has(tags["release"])  # untag keeps the artifact's blobs


# -- push --immutable, logout -----------------------------------------------------------------------------


def test_push_immutable_keeps_release_tags(registry: RegistryServer, tmp_path: Path) -> None:
    ref, digest = pushed(tmp_path, registry, "immutable", "nu")
    again = run(tmp_path, "--brain", "immutable", "push", ref, "--immutable")
    assert again.returncode == 0, again.stderr  # the same manifest: nothing moves
    make_brain(tmp_path / "immutable", "xi")
    refused = run(tmp_path, "--brain", "immutable", "push", ref, "--immutable")
    one_line_error(refused, 5)
    assert "already names" in refused.stderr
    assert skopeo_digest(ref) == digest
    one_line_error(run(tmp_path, "--brain", "immutable", "push", ref, "--immutable", "--force"), 3)
    (tmp_path / "brain.toml").write_text("[push]\nimmutable = true\n")
    one_line_error(run(tmp_path, "--brain", "immutable", "push", ref), 5)  # from the config file
    assert (
        run(tmp_path, "--brain", "immutable", "push", registry.ref("verbs/immutable:v2"), "--immutable").returncode == 0
    )


def test_logout_forgets_credentials(auth_registry: RegistryServer, tmp_path: Path) -> None:
    login = run(
        tmp_path, "login", auth_registry.host, "--username", auth_registry.username or "", "--password-stdin",
        stdin=(auth_registry.password or "") + "\n",
    )  # fmt: skip
    assert login.returncode == 0, login.stderr
    config = tmp_path / "docker" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "other": {"kept": True}}))
    done = run(tmp_path, "logout", auth_registry.host, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["removed"] is True
    stored = json.loads(config.read_text())
    assert stored["auths"] == {} and stored["other"] == {"kept": True}
    assert (config.stat().st_mode & 0o777) == 0o600
    again = run(tmp_path, "logout", auth_registry.host)
    assert again.returncode == 0 and "not logged in" in again.stdout
    one_line_error(run(tmp_path, "logout", "not a host"), 3)
    # Logged out, the registry refuses us again.
    one_line_error(run(tmp_path, "tags", auth_registry.ref("verbs/any")), 7)


def test_copy_of_a_signed_brain_pulls_authenticated_and_without_signatures_does_not(
    registry: RegistryServer, tmp_path: Path
) -> None:
    key = tmp_path / "key"
    subprocess.run([require_tool("ssh-keygen"), "-q", "-t", "ed25519", "-N", "", "-C", "k", "-f", str(key)], check=True)
    (tmp_path / "doc.md").write_text("# Doc\n\nA brain is a content-addressed store of typed knowledge blocks.\n")
    env = {"BRAIN_ACTOR": "ci@example.org", "BRAIN_SIGN_WITH": str(key)}
    assert run(tmp_path, "--brain", "signed", "init", "--trust-key", f"{key}.pub", env=env).returncode == 0
    assert run(tmp_path, "--brain", "signed", "ingest", "doc.md", env=env).returncode == 0
    source = registry.ref("verbs/signed:v1")
    pushed_ = run(tmp_path, "--brain", "signed", "push", source, "--json")
    assert pushed_.returncode == 0, pushed_.stderr
    digest = json.loads(pushed_.stdout)["digest"]

    copied = run(tmp_path, "copy", source, registry.ref("verbs/signed-copy:v1"), "--json")
    assert copied.returncode == 0, copied.stderr
    assert len(json.loads(copied.stdout)["referrers"]) >= 2  # the genesis and the ingest signatures
    assert skopeo_digest(registry.ref("verbs/signed-copy:v1")) == digest
    pulled = run(tmp_path, "--brain", "consumer", "pull", registry.ref("verbs/signed-copy:v1"), "--require-signed")
    assert pulled.returncode == 0, pulled.stderr

    bare = run(tmp_path, "copy", source, registry.ref("verbs/unsigned-copy:v1"), "--no-referrers")
    assert bare.returncode == 0, bare.stderr
    refused = run(tmp_path, "--brain", "consumer2", "pull", registry.ref("verbs/unsigned-copy:v1"), "--require-signed")
    assert refused.returncode != 0
    assert not (tmp_path / "consumer2" / "boltzmann" / "head.json").exists()
