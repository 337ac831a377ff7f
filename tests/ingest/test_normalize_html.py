"""`html-text`: dropped elements, block structure, entities, whitespace, `pre`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ingest.normalize import HtmlText, NormalizationError
from ingest.normalize.html_text import html_to_text

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "corpus"


def test_name_and_version() -> None:
    pipeline = HtmlText()
    assert pipeline.name == "html-text"
    assert pipeline.version.startswith(f"1+py{sys.version_info.major}.{sys.version_info.minor}+unicode-")
    assert pipeline.accepts("text/html") and not pipeline.accepts("text/plain")


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("<p>one</p><p>two</p>", "one\n\ntwo\n"),
        ("<div>a</div><div>b</div>", "a\nb\n"),
        ("a<br>b<br/>c", "a\nb\nc\n"),
        ("<p>  lots \n\t of   space  </p>", "lots of space\n"),
        ("<p>x&nbsp;&nbsp;y &amp; z &lt;3 &#233;&#x00e9;</p>", "x y & z <3 éé\n"),
        ("<head><title>T</title></head><script>var a;</script><style>p{}</style><p>kept</p>", "kept\n"),
        ("<h1>Title</h1><h3>Sub</h3>text", "# Title\n\n### Sub\n\ntext\n"),
        ("<ol><li>one</li><li>two</li></ol>", "1. one\n2. two\n"),
        ('<ol start="3"><li>three<li>four</ol>', "3. three\n4. four\n"),
        ("<ul><li>a<ul><li>b</li></ul></li><li>c</li></ul>", "- a\n  - b\n- c\n"),
        ("<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>", "a b\nc d\n"),
        ("<pre>\n  keep   this\n\n  and this</pre><p>after</p>", "  keep   this\n\n  and this\n\nafter\n"),
        ("<p>caf\u0065\u0301</p>", "caf\u0065\u0301\n"),  # html_to_text itself does not normalize
        ("<b>in</b><i>line</i> <em>stays</em> together", "inline stays together\n"),
        # a loose list, as in Markdown
        ("<ul><li><p>para in item</p></li><li>plain</li></ul>", "- para in item\n\n- plain\n"),
        ("<ol><li></li><li>two</li></ol><p>after</p>", "2. two\n\nafter\n"),  # empty items still count
        ("<ul><li><ul><li>only nested</li></ul></li></ul>", "  - only nested\n"),
        ("<h2></h2><p>no empty heading</p>", "no empty heading\n"),
        ("", ""),
        ("<script>only</script>", ""),
    ],
)
def test_html_to_text(html: str, expected: str) -> None:
    assert html_to_text(html) == expected


def test_pipeline_applies_nfc_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "p.html"
    path.write_bytes("<pre>a\r\nb</pre><p>cafe\u0301</p>".encode())
    assert HtmlText().normalize(path).data == "a\nb\n\ncaf\u00e9\n".encode()


def test_corpus_page() -> None:
    text = HtmlText().normalize(CORPUS / "pages" / "onboarding.html").data.decode()
    assert text.startswith("Home · Docs\n\n# Welcome to the Lumen team\n\nLumen is the image cache")
    assert "1. Ask your manager to add you to the lumen-ops group.\n" in text
    assert "\n\nmake dev\nlumenctl status --local\n\n" in text
    assert "is always a miss — that is expected." in text
    assert "window.analytics" not in text and "font-family" not in text and "<" not in text
    assert text.endswith("© 2026 Lumen team – internal use\n")


def test_declared_latin1_html_is_read_as_windows_1252_and_named(tmp_path: Path) -> None:
    path = tmp_path / "latin1.html"
    path.write_bytes(b'<meta charset="ISO-8859-1"><p>caf\xe9 \x93quoted\x94</p>')
    output = HtmlText().normalize(path)
    assert output.data.decode() == "caf\u00e9 \u201cquoted\u201d\n"
    assert output.pipeline == "html-text;charset=cp1252" and output.notes == ()


def test_undecodable_html_is_a_decode_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.html"
    path.write_bytes(b"<p>\x81\x8d\x8f\x90\x9d" + bytes(range(1, 32)) * 4)
    with pytest.raises(NormalizationError) as caught:
        HtmlText().normalize(path)
    assert caught.value.code == "decode-error"
