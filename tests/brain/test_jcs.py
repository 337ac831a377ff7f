"""`jcs/1` (§1.2) and strict parsing (§1.4): the spec's confirmed outputs as golden bytes, every refusal,
and properties against the rfc8785 reference serializer (which the fast path must equal byte for byte)."""

from __future__ import annotations

import random

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from brain.errors import CanonicalFormError
from brain.identity import MAX_SAFE_INTEGER, canonicalize, is_canonical, parse_strict
from brain.identity.jcs import canonicalize_parsed


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"b": 1, "a": 2, "A": 3}, b'{"A":3,"a":2,"b":1}'),
        ({"\U0001f600": 1, "\uff5e": 2}, '{"\U0001f600":1,"\uff5e":2}'.encode()),  # UTF-16 order: surrogates < U+FF5E
        ({"\uff5e": 2, "\U0001f600": 1}, '{"\U0001f600":1,"\uff5e":2}'.encode()),
        ({"s": "\x1f\x0b é/"}, '{"s":"\\u001f\\u000b é/"}'.encode()),
        ({"n": [0, -1, MAX_SAFE_INTEGER]}, b'{"n":[0,-1,9007199254740991]}'),
        ({"n": -MAX_SAFE_INTEGER}, b'{"n":-9007199254740991}'),
        ({"e": '\b\t\n\f\r"\\'}, b'{"e":"\\b\\t\\n\\f\\r\\"\\\\"}'),
        ({"raw": "\x7f\u2028\u2029\ufeff"}, '{"raw":"\x7f\u2028\u2029\ufeff"}'.encode()),
        ({"t": True, "f": False, "z": None, "l": [], "o": {}}, b'{"f":false,"l":[],"o":{},"t":true,"z":null}'),
        ([3, 1, 2], b"[3,1,2]"),  # arrays keep their order
        ("caf\u00e9", '"caf\u00e9"'.encode()),
        ("cafe\u0301", '"cafe\u0301"'.encode()),  # no normalization: NFD stays NFD
        ((1, 2), b"[1,2]"),
    ],
)
def test_confirmed_outputs(value: object, expected: bytes) -> None:
    assert canonicalize(value) == expected
    assert is_canonical(expected)


@pytest.mark.parametrize(
    "value",
    [
        1.0,
        0.5,
        {"x": [1.5]},
        2**53,
        -(2**53),
        {1: "a"},
        "\ud800",
        {"k": "\udfff"},
        {"\ud800": 1},
        object(),
        {1, 2},
        b"x",
    ],
)
def test_canonicalize_refusals(value: object) -> None:
    with pytest.raises(CanonicalFormError):
        canonicalize(value)


@pytest.mark.parametrize(
    ("value", "where"),
    [
        ({"x": [1, {"y": 1.5}]}, r"float at \$\.x\[1\]\.y "),
        ([["a", 2**60]], r"integer at \$\[0\]\[1\] "),
        ({"a": {"b": {2: "c"}}}, r"non-string key 2 at \$\.a\.b"),
        ({"a": ("ok", {"b": None}, object())}, r"type object at \$\.a\[2\]"),
    ],
)
def test_canonicalize_refusal_names_the_path(value: object, where: str) -> None:
    with pytest.raises(CanonicalFormError, match=where):
        canonicalize(value)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\xff", "UTF-8"),
        (b"\xef\xbb\xbf{}", "byte-order mark"),
        (b'{"a":1,"a":2}', "duplicate key"),
        (b'{"\\u0061":1,"a":2}', "duplicate key"),
        (b"[NaN]", "NaN"),
        (b"[Infinity]", "Infinity"),
        (b"[-Infinity]", "Infinity"),
        (b'["\\ud800"]', "surrogate"),
        (b'{"\\udc00":1}', "surrogate"),
        (b"[1.0]", "float"),
        (b"[1e3]", "float"),
        (b"[9007199254740992]", "2\\^53"),
        (b"[-9007199254740992]", "2\\^53"),
        (b"{", "not JSON"),
        (b"[01]", "not JSON"),
        (b"'a'", "not JSON"),
        (b"", "not JSON"),
    ],
)
def test_strict_parse_refusals(data: bytes, message: str) -> None:
    with pytest.raises(CanonicalFormError, match=message):
        parse_strict(data)


def test_strict_parse_names_the_position_once() -> None:
    with pytest.raises(CanonicalFormError) as unterminated:
        parse_strict(b'{"a":"b')
    assert unterminated.value.message == "not JSON: Unterminated string starting at line 1 column 6"
    with pytest.raises(CanonicalFormError) as extra:
        parse_strict(b"[1] 2")
    assert extra.value.message == "not JSON: Extra data at line 1 column 5"


def test_strict_parse_accepts_an_escaped_pair_as_one_char() -> None:
    assert parse_strict(b'["\\ud83d\\ude00"]') == ["\U0001f600"]
    assert not is_canonical(b'["\\ud83d\\ude00"]')  # JCS emits the raw character
    assert is_canonical('["\U0001f600"]'.encode())


def test_parse_strict_takes_bytes_only() -> None:
    with pytest.raises(CanonicalFormError):
        parse_strict("{}")  # type: ignore[arg-type]


# Keys and strings mixing ASCII, BMP characters near the surrogate range, and astral characters: exactly
# where code-point and UTF-16 ordering disagree.
_chars = st.sampled_from(
    [
        "a",
        "B",
        "z",
        "\x00",
        "\x1f",
        "\x7f",
        "é",
        "\u2028",
        "\ud7ff",
        "\ue000",
        "\uff5e",
        "\uffff",
        "\U00010000",
        "\U0001f600",
    ]
)
_text = st.lists(_chars, max_size=6).map("".join) | st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
_ints = st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
_json = st.recursive(
    st.none() | st.booleans() | _ints | _text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_text, children, max_size=5),
    max_leaves=20,
)


@settings(max_examples=600, deadline=None)
@given(_json)
def test_fast_path_equals_the_rfc8785_reference(value: object) -> None:
    assert canonicalize(value) == rfc8785.dumps(value)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(_text, _ints | _text, max_size=8), st.randoms())
def test_object_member_order_does_not_matter(value: dict, rnd: random.Random) -> None:
    items = list(value.items())
    rnd.shuffle(items)
    assert canonicalize(dict(items)) == canonicalize(value)


@settings(max_examples=80, deadline=None)
@given(_json)
def test_parse_then_canonicalize_is_a_fixed_point(value: object) -> None:
    data = canonicalize(value)
    assert parse_strict(data) == value
    assert canonicalize(parse_strict(data)) == data and is_canonical(data)
    assert canonicalize_parsed(parse_strict(data)) == data
