"""Strict Ed25519 verification (RFC 8032 §5.1.7 plus the refusals §9.1 step 4 asks for).

`cryptography` (OpenSSL) does the verification proper; before it runs, this module refuses what a
lenient verifier would accept: a non-canonical encoding of the public key or of R (y ≥ p, or x = 0 with
the sign bit set), a public key of small order, and S ≥ ℓ. The point arithmetic is only used for those
checks, on public data, so it need not be constant-time.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

P = 2**255 - 19
ORDER = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_MINUS_ONE = pow(2, (P - 1) // 4, P)


class BackendUnavailable(RuntimeError):
    """The cryptography backend cannot verify Ed25519 here (the math cannot run)."""


def _decompress(encoded: bytes) -> tuple[int, int] | None:
    """The affine point an encoding names, or None when it is non-canonical or not on the curve."""
    if len(encoded) != 32:
        return None
    value = int.from_bytes(encoded, "little")
    sign, y = value >> 255, value & ((1 << 255) - 1)
    if y >= P:
        return None
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if v * x * x % P == (-u) % P:
        x = x * SQRT_MINUS_ONE % P
    elif v * x * x % P != u:
        return None
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = P - x
    return x, y


def _add(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    x3 = (x1 * y2 + y1 * x2) * pow(1 + t, P - 2, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, P - 2, P) % P
    return x3, y3


def is_small_order(point: tuple[int, int]) -> bool:
    """Whether [8]point is the identity."""
    for _ in range(3):
        point = _add(point, point)
    return point == (0, 1)


def strict_problem(public_key: bytes, signature: bytes) -> str | None:
    """Why (key, signature) is refused before any verification, or None."""
    if len(signature) != 64:
        return f"an Ed25519 signature is 64 bytes, got {len(signature)}"
    point = _decompress(public_key)
    if point is None:
        return "the public key is not a canonical curve point"
    if is_small_order(point):
        return "the public key has small order"
    if _decompress(signature[:32]) is None:
        return "R is not a canonical curve point"
    if int.from_bytes(signature[32:], "little") >= ORDER:
        return "S is not reduced (S >= l)"
    return None


def verify(public_key: bytes, signature: bytes, message: bytes) -> bool:
    """Strict pure Ed25519 verification; raises `BackendUnavailable` if the backend cannot run it."""
    if strict_problem(public_key, signature) is not None:
        return False
    try:
        key = Ed25519PublicKey.from_public_bytes(public_key)
    except UnsupportedAlgorithm as e:
        raise BackendUnavailable(str(e)) from None
    except ValueError:
        return False
    try:
        key.verify(signature, message)
    except InvalidSignature:
        return False
    return True
