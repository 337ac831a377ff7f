"""`--tokens FILE`: the file's checks, and 401/403/429 from a real server process (reads accept `read` tokens)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from brain.errors import UsageError
from serve.tokens import RateLimiter, Scope, TokenTable, load_tokens
from tests.serve.conftest import SECRETS, bearer

GOOD = 'secret_sha256 = "' + hashlib.sha256(b"s").hexdigest() + '"\nscopes = ["read"]\nactor = "agents/a"\n'


def _file(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "t.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def test_a_tokens_file_is_parsed_and_looked_up_by_digest(tokens_file: Path) -> None:
    table = TokenTable(load_tokens(tokens_file))
    claude = table.principal(f"Bearer {SECRETS['claude']}")
    assert claude is not None and claude.name == "claude" and claude.actor == "agents/claude"
    assert claude.may(Scope.PROPOSE) and claude.may(Scope.READ)
    assert table.principal("Bearer wrong") is None
    assert table.principal(SECRETS["claude"]) is None  # no scheme
    assert table.principal(None) is None
    assert table.by_secret(SECRETS["reader"]).scopes == frozenset({Scope.READ})  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not toml [", "is not TOML"),
        (b"\xff\xfe", "is not TOML"),
        ("[tokens]\n", "tokens"),
        ("[tokens.a]\n" + GOOD.replace('["read"]', '["write"]'), "scopes"),
        ("[tokens.a]\n" + GOOD.replace('["read"]', "[]"), "scopes"),
        ("[tokens.a]\n" + GOOD.replace("agents/a", "Alex"), "actor"),
        ("[tokens.a]\n" + GOOD.replace(hashlib.sha256(b"s").hexdigest(), "abc"), "secret_sha256"),
        ("[tokens.a]\n" + GOOD + "secret = \"plaintext\"\n", "secret"),
        ('[tokens."a/b"]\n' + GOOD, "branch"),
        ("[tokens.a]\n" + GOOD + "[tokens.b]\n" + GOOD, "share one secret"),
        ("x" * (300 * 1024), "bytes"),
    ],
)
def test_a_bad_tokens_file_is_one_clear_error(tmp_path: Path, text: str | bytes, message: str) -> None:
    with pytest.raises(UsageError) as error:
        load_tokens(_file(tmp_path, text))
    assert message in str(error.value)
    assert "plaintext" not in str(error.value)


def test_a_missing_tokens_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot read --tokens"):
        load_tokens(tmp_path / "absent.toml")


def test_the_rate_limiter_refills_and_says_when() -> None:
    limiter = RateLimiter(("a",), {"propose": (2.0, 2.0)})
    assert limiter.take("a", "propose") == 0.0
    assert limiter.take("a", "propose") == 0.0
    wait = limiter.take("a", "propose")
    assert 0 < wait <= 0.5
    assert RateLimiter.retry_after(wait) == "1"
    assert limiter.take("unknown", "propose") == 0.0


def test_reads_need_a_read_token(corpus_brain: Path, tokens_file: Path, start_server: Any) -> None:
    server = start_server(corpus_brain, "--tokens", str(tokens_file), "--workers", "1")
    assert server.raw("GET", "/healthz")[0] == 401
    status, body, headers = server.raw("GET", "/v1/status")
    assert status == 401 and headers["www-authenticate"].startswith("Bearer")
    assert server.raw("GET", "/v1/status", {"Authorization": "Bearer nope"})[0] == 401
    assert server.raw("GET", "/v1/status", bearer("reader"))[0] == 200
    assert server.raw("GET", "/v1/status", bearer("claude"))[0] == 200
    status, body, _ = server.raw("GET", "/v1/status", bearer("proposer"))
    assert status == 403 and "read scope" in body["error"]
    # ?token= is for the UI only: the JSON routes never take a secret from the URL.
    assert server.raw("GET", f"/v1/status?token={SECRETS['reader']}")[0] == 401
    assert server.raw("POST", "/v1/proposals", bearer("claude"))[0] == 405  # not --allow-propose


def test_the_legacy_token_file_still_reads_beside_tokens(
    corpus_brain: Path, tokens_file: Path, tmp_path: Path, start_server: Any
) -> None:
    legacy = tmp_path / "token"
    legacy.write_text("legacy-secret\n")
    server = start_server(corpus_brain, "--tokens", str(tokens_file), "--token-file", str(legacy), "--workers", "2")
    assert server.raw("GET", "/v1/status", {"Authorization": "Bearer legacy-secret"})[0] == 200
    assert server.raw("GET", "/v1/status", bearer("reader"))[0] == 200
    assert server.raw("GET", "/v1/status")[0] == 401


def test_reads_are_rate_limited_per_token_with_retry_after(
    corpus_brain: Path, tokens_file: Path, start_server: Any
) -> None:
    # --rate-limit 0.1: reads refill at 2/s, burst 4; shared by both worker processes.
    server = start_server(corpus_brain, "--tokens", str(tokens_file), "--rate-limit", "0.1", "--workers", "2")
    statuses = [server.raw("GET", "/v1/status", bearer("reader")) for _ in range(8)]
    codes = [s[0] for s in statuses]
    assert codes[:4] == [200] * 4 and 429 in codes[4:]
    limited = next(s for s in statuses if s[0] == 429)
    assert int(limited[2]["retry-after"]) >= 1
    assert server.raw("GET", "/v1/status", bearer("claude"))[0] == 200  # another token's bucket


def test_a_non_loopback_bind_is_allowed_with_tokens_only(corpus_brain: Path, tokens_file: Path) -> None:
    from tests.retrieval.conftest import run_cli

    done = run_cli("--brain", str(corpus_brain), "serve", "--http", "0.0.0.0:1", "--mcp")
    assert done.code == 3
    done = run_cli("--brain", str(corpus_brain), "serve", "--mcp", "--tokens", str(tokens_file))
    assert done.code == 3 and "--tokens apply to --http" in done.stderr
