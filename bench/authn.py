"""Authenticity benchmark: `verify` of a signed 100,000-block brain costs ≤ 5% more than unsigned.

Usage: python bench/authn.py [blocks] [--keep DIR]   (default 100,000 blocks)

The brain is `bench/verify.py`'s realistic mix, built on a governed genesis (one Ed25519 key) and its
head signed. Timed, median of 3 each, on the same brain:
- `verify_brain` alone (integrity, what `brain verify` cost before authenticity existed),
- `verify_brain` plus the §9.7 decision (what `brain verify` now does) with the head's record present,
- the same with the records removed (an unsigned head),
and the decision alone. The target compares signed verification with the unsigned integrity run.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from core import median_seconds, report  # type: ignore[import-not-found]  # bench/core.py, beside this script
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from verify import build  # type: ignore[import-not-found]  # bench/verify.py

from brain.authenticity import (
    governed_genesis,
    judge,
    sign_snapshot,
    write_snapshot_signed,
)
from brain.authn.keys import PublicKey
from brain.authn.signer import make_record
from brain.brain import Brain
from brain.snapshot import TrustKey, TrustRoot, TrustScope
from brain.store.authn_files import SIGNATURES_FILE
from brain.verify import verify_brain

TARGET_RATIO = 1.05
REPEAT = 5


class BenchKey:
    """A fixed Ed25519 key (never a real one)."""

    def __init__(self) -> None:
        self.private = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
        self.public_key = PublicKey.ed25519(self.private.public_key().public_bytes_raw())

    def sign(self, data: bytes) -> bytes:
        return self.private.sign(data)


def build_signed(path: Path, blocks: int) -> None:
    key = BenchKey()
    scopes = (TrustScope.INGEST, TrustScope.COMMIT, TrustScope.GOVERN)
    root = TrustRoot(govern_quorum=1, revision=1, keys=(TrustKey(key=key.public_key.text, scopes=scopes, since=1),))
    genesis = governed_genesis(root)
    brain = Brain.init(path)
    write_snapshot_signed(brain, genesis, [make_record(key, genesis.to_bytes(), {TrustScope.GOVERN})], expect_head=None)
    build(path, blocks, brain)
    sign_snapshot(brain, key)


def main(argv: list[str]) -> int:
    blocks = int(argv[0]) if argv and argv[0].isdigit() else 100_000
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    with tempfile.TemporaryDirectory() as scratch:
        path = (keep or Path(scratch)) / f"authn-{blocks}"
        if not (path / "boltzmann" / "head.json").exists():
            start = time.perf_counter()
            build_signed(path, blocks)
            print(f"built a signed {blocks}-block brain in {time.perf_counter() - start:.1f} s at {path}")
        brain = Brain.open(path)
        auth = judge(brain)
        assert auth.state == "authorized", auth
        assert verify_brain(path).ok
        index = path.joinpath(*SIGNATURES_FILE)
        saved = index.with_name("signatures.json.saved")

        def verify_with_authenticity() -> None:
            verify_brain(path)
            judge(Brain.open(path))

        def unsigned() -> None:
            index.rename(saved)  # no records: the head reads as unsigned
            try:
                verify_with_authenticity()
            finally:
                saved.rename(index)

        # Interleaved, so drift in the machine's load hits the three alike (this VM is shared).
        runs: dict[str, list[tuple[float, float]]] = {"integrity": [], "signed": [], "unsigned": []}
        for _ in range(REPEAT):
            runs["integrity"].append(median_seconds(lambda: verify_brain(path), repeat=1))
            runs["signed"].append(median_seconds(verify_with_authenticity, repeat=1))
            runs["unsigned"].append(median_seconds(unsigned, repeat=1))
        medians = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()}
        report(f"verify_brain alone (integrity), {blocks} blocks", medians["integrity"], 30.0)
        report("verify + authenticity, signed head", medians["signed"], 30.0 * TARGET_RATIO)
        report("verify + authenticity, unsigned head", medians["unsigned"], 30.0)
        report(
            "the §9.7 decision alone (signed head)", median_seconds(lambda: judge(Brain.open(path)), repeat=REPEAT), 1.5
        )
        signed, integrity, plain = medians["signed"], medians["integrity"], medians["unsigned"]
        print(f"signed / integrity-only: {signed[0] / integrity[0]:.3f} wall, {signed[1] / integrity[1]:.3f} CPU "
              f"(target <= {TARGET_RATIO}); signed / unsigned: {signed[0] / plain[0]:.3f} wall, "
              f"{signed[1] / plain[1]:.3f} CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
