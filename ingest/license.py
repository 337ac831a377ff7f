"""`--license` is an SPDX license expression, checked and written in its canonical form.

`license-expression` (the SPDX expression parser of the ScanCode project) knows every SPDX license and
exception id and the expression grammar (`AND`, `OR`, `WITH`, parentheses, `+`). Ids are matched without
regard to case and recorded as SPDX spells them (`mit or apache-2.0` → `MIT OR Apache-2.0`, deprecated
`GPL-2.0+` → `GPL-2.0-or-later`), so two people who mean the same license write the same registration
record. User-defined `LicenseRef-…` (and `DocumentRef-…:LicenseRef-…`) ids are SPDX too and accepted as
written. Anything else ("internal use only", a URL) is recorded verbatim with `--license-unchecked`.
"""

from __future__ import annotations

import difflib
import re
from functools import cache
from typing import Any

from brain.errors import UsageError

# SPDX 2.3 Annex D: idstring = 1*(ALPHA / DIGIT / "-" / "."); user-defined ids carry these prefixes.
_USER_DEFINED = re.compile(r"(DocumentRef-[A-Za-z0-9.-]+:)?LicenseRef-[A-Za-z0-9.-]+")
_HINT = "use SPDX ids (https://spdx.org/licenses/), e.g. Apache-2.0 or 'MIT OR CC-BY-4.0'"
_UNCHECKED = "or --license-unchecked TEXT to record it as written"


@cache
def _licensing() -> Any:  # a `license_expression.Licensing`; the library ships no type information
    from license_expression import get_spdx_licensing  # type: ignore[import-untyped]

    return get_spdx_licensing()


def spdx_expression(text: str) -> str:
    """`text` as a canonical SPDX license expression; `UsageError` naming the problem otherwise."""
    from license_expression import ExpressionError, ExpressionParseError  # type: ignore[import-untyped]

    if not text.strip():
        raise UsageError("--license is empty", hint=f"{_HINT}, {_UNCHECKED}")
    licensing = _licensing()
    try:
        parsed = licensing.parse(text, validate=False, strict=True)
    except (ExpressionError, ExpressionParseError) as e:
        raise UsageError(f"--license {text!r} is not an SPDX license expression: {e}", hint=_HINT) from None
    if parsed is None:
        raise UsageError(f"--license {text!r} is not an SPDX license expression", hint=_HINT)
    unknown = [key for key in licensing.unknown_license_keys(parsed) if not _USER_DEFINED.fullmatch(key)]
    if unknown:
        guesses = [_closest(key) for key in unknown]
        meant = [guess for guess in guesses if guess is not None]
        hint = f"did you mean {' / '.join(meant)}? " if meant else ""
        raise UsageError(
            f"--license {text!r}: unknown SPDX license id(s) {', '.join(unknown)}",
            hint=f"{hint}{_HINT}, {_UNCHECKED}",
        )
    return str(parsed)


def _closest(key: str) -> str | None:
    """The SPDX id that `key` most likely misspells (`Apache 2` → `Apache-2.0`), if one is close."""
    known = {symbol.lower(): symbol for symbol in _licensing().known_symbols}
    simplified = re.sub(r"[\s_]+", "-", key.strip()).lower()
    found = difflib.get_close_matches(simplified, list(known), n=1, cutoff=0.75)
    return known[found[0]] if found else None


def unchecked_license(text: str) -> str:
    """`--license-unchecked TEXT`: anything but an empty string, recorded as written."""
    if not text.strip():
        raise UsageError("--license-unchecked is empty", hint="give the license text to record")
    return text
