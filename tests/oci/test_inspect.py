"""`describe` (the pure part of inspect): the schema-versions annotation becomes an object, or None if it lies."""

from __future__ import annotations

import pytest

from oci.inspect import _schema_versions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"canonical":[1],"semantic":[1,2]}', {"canonical": [1], "semantic": [1, 2]}),
        ("{}", {}),
        (None, None),
        ("not json", None),
        ("[1]", None),
        ('{"canonical":"1"}', None),
        ('{"canonical":[true]}', None),
        ('{"canonical":[1.0]}', None),
    ],
)
def test_schema_versions_annotation(text: str | None, expected: dict | None) -> None:
    assert _schema_versions(text) == expected
