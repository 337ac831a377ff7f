"""`jcs/1`: the one canonical serializer (RFC 8785) and the strict parser the protocol reads with.

Everything that is hashed goes through `canonicalize`; everything read from disk or the wire that will be
re-hashed goes through `parse_strict`, which refuses what the spec refuses (§1.2, §1.4).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import rfc8785

from brain.errors import CanonicalFormError

MAX_SAFE_INTEGER = 2**53 - 1
_BOM = b"\xef\xbb\xbf"
# An escaped surrogate half anywhere in the text; only then do we pay for a deep walk of the strings.
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_FOUR_BYTE_LEAD = re.compile(rb"[\xf0-\xf4]")


def canonicalize(value: Any) -> bytes:
    """The JCS bytes of `value`; refuses floats, unsafe integers, non-string keys and lone surrogates."""
    _check_value(value, "$")
    return canonicalize_parsed(value)


def canonicalize_parsed(value: Any) -> bytes:
    """The JCS bytes of a value `parse_strict` returned (already free of what JCS refuses): no re-check walk."""
    try:
        # Fast path: for checked values, sorted-key compact JSON (orjson, ~15x the standard encoder) is
        # byte-identical to JCS except for key order around characters above U+FFFF (UTF-16 vs code-point
        # order) and number forms checked values cannot have; any 4-byte UTF-8 sequence defers to rfc8785.
        fast = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        if _FOUR_BYTE_LEAD.search(fast) is None:
            return fast
        return rfc8785.dumps(value)
    except (rfc8785.CanonicalizationError, UnicodeError, TypeError, ValueError) as e:
        raise CanonicalFormError(f"value cannot be serialized as jcs/1: {e}") from e


def _check_value(value: Any, where: str) -> None:
    # Hot: every block built here passes through it. Strings (most leaves) are skipped without a call, and
    # the path is only spelled out once something is wrong (`_locate`).
    if type(value) is str or value is None or value is True or value is False:
        return
    if _acceptable(value):
        return
    raise _locate(value, where)


def _acceptable(value: Any) -> bool:
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            if type(item) is not str and not _acceptable(item):
                return False
        return True
    if kind is list or kind is tuple:
        return all(type(item) is str or _acceptable(item) for item in value)
    if value is None or value is True or value is False or isinstance(value, str):
        return True
    if isinstance(value, int):
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if isinstance(value, dict):
        return _acceptable(dict(value))
    if isinstance(value, (list, tuple)):
        return _acceptable(list(value))
    return False


def _locate(value: Any, where: str) -> CanonicalFormError:
    """The error for the first thing JCS refuses inside `value` (which is known to hold one)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        raise AssertionError("nothing to refuse")  # pragma: no cover - only called on refused values
    if isinstance(value, int):
        return CanonicalFormError(f"integer at {where} is outside ±(2^53−1): {value}")
    if isinstance(value, float):
        return CanonicalFormError(
            f"float at {where} ({value!r}) is refused in hashed documents; use a string or a scaled integer"
        )
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return CanonicalFormError(f"non-string key {key!r} at {where}")
            if not _acceptable(item):
                return _locate(item, f"{where}.{key}")
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if not _acceptable(item):
                return _locate(item, f"{where}[{index}]")
    return CanonicalFormError(f"value of type {type(value).__name__} at {where} is not JSON")


def _refuse_float(text: str) -> Any:
    raise CanonicalFormError(f"float {text} is refused; protocol documents carry integers only")


def _checked_int(text: str) -> int:
    number = int(text)
    if not -MAX_SAFE_INTEGER <= number <= MAX_SAFE_INTEGER:
        raise CanonicalFormError(f"integer {text} is outside ±(2^53−1)")
    return number


def _refuse_constant(text: str) -> Any:
    raise CanonicalFormError(f"{text} is not JSON")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise CanonicalFormError(f"duplicate key {key!r}")
            seen.add(key)
    return result


def _refuse_lone_surrogates(value: Any) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise CanonicalFormError("escaped lone surrogate in a string") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_lone_surrogates(key)
            _refuse_lone_surrogates(item)
    elif isinstance(value, list):
        for item in value:
            _refuse_lone_surrogates(item)


# Built once: constructing a decoder per call costs as much as parsing a small block.
_DECODER = json.JSONDecoder(
    object_pairs_hook=_unique_keys, parse_float=_refuse_float, parse_int=_checked_int, parse_constant=_refuse_constant
)


def parse_strict(data: bytes) -> Any:
    """Parse RFC 8259 JSON the way the protocol reads: strict UTF-8, no BOM, no duplicate keys,
    no NaN/Infinity, no lone surrogates, no floats, integers within ±(2^53−1)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CanonicalFormError("parse_strict takes bytes")
    data = bytes(data)
    if data.startswith(_BOM):
        raise CanonicalFormError("leading UTF-8 byte-order mark")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CanonicalFormError(f"not valid UTF-8 at byte {e.start}") from None
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as e:
        # Some of json's messages end in "at" and expect the position next ("Unterminated string starting at").
        at = " " if e.msg.endswith(" at") else " at "
        raise CanonicalFormError(f"not JSON: {e.msg}{at}line {e.lineno} column {e.colno}") from None
    except RecursionError:
        raise CanonicalFormError("JSON nested too deeply") from None
    if _ESCAPED_SURROGATE.search(data):
        _refuse_lone_surrogates(value)
    return value


def is_canonical(data: bytes) -> bool:
    """True iff `data` parses strictly and re-serializes to exactly the same bytes."""
    try:
        return canonicalize(parse_strict(data)) == bytes(data)
    except CanonicalFormError:
        return False
