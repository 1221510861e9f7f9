"""What a submitter types must reach the page as plain text: no tag, no script, no javascript: link."""

from __future__ import annotations

import re

import pytest

from freshstack_hf.errors import FreshStackError
from leaderboard.sanitize import (
    MAX_DESCRIPTION,
    escape_html,
    escape_markdown,
    sanitize_link,
    sanitize_submission,
    sanitize_text,
)

HOSTILE = [
    ("<script>alert(1)</script>BM25", "BM25"),
    ("<SCRIPT type='text/javascript'>\nalert(1)\n</SCRIPT >ok", "ok"),
    ("&lt;script&gt;alert(1)&lt;/script&gt;x", "x"),  # encoded: must not become a tag after decoding
    ("&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;y", "y"),  # double-encoded
    ("<img src=x onerror=alert(1)>dense", "dense"),
    ('<a href="javascript:alert(1)" onclick="steal()">click</a>', "click"),
    ("<b style='x'>bold</b> and <i>it</i>", "bold and it"),
    ("<scr<script>ipt>alert(1)</script>", ""),  # nested: removing one tag must not reveal another
    ("<svg onload=alert(1)><script>1</script></svg>z", "z"),
    ("<iframe src=//evil></iframe>frame", "frame"),
    ("x <!-- hidden <script>1</script> --> y", "x y"),
    ("name <script src=//evil.js", "name"),  # unterminated tag runs to the end, as a browser reads it
    ("<style>body{display:none}</style>css", "css"),
]


@pytest.mark.parametrize(("raw", "clean"), HOSTILE)
def test_markup_and_script_are_removed(raw, clean):
    out = sanitize_text(raw)
    assert out == clean
    assert not re.search(r"<[a-zA-Z/!?]", out)
    assert "script" not in out.lower() or clean  # script content never survives


def test_plain_text_is_kept_including_comparison_signs_and_entities_decoded():
    assert sanitize_text("BM25 + dense (RRF, k=60) -> 0.52 > 0.48") == "BM25 + dense (RRF, k=60) -> 0.52 > 0.48"
    assert sanitize_text("a < b") == "a < b"
    assert sanitize_text("AT&amp;T Q&A") == "AT&T Q&A"


def test_control_bidi_and_whitespace():
    assert sanitize_text("evil\u202etxt.exe\x00\x07 \t name") == "eviltxt.exe name"
    assert sanitize_text("a\r\n\r\n\r\n\r\nb  c", MAX_DESCRIPTION, multiline=True) == "a\n\nb c"
    assert sanitize_text("a\nb") == "a b"  # single-line fields fold newlines
    assert sanitize_text(None) == "" and sanitize_text("   ") == ""


def test_long_text_is_cut_with_an_ellipsis_within_the_limit():
    out = sanitize_text("word " * 1000, 100)
    assert len(out) <= 100 and out.endswith("…")
    assert len(sanitize_text("x" * 5000, MAX_DESCRIPTION, multiline=True)) == MAX_DESCRIPTION


@pytest.mark.parametrize("raw", [raw for raw, _ in HOSTILE] + ["x" * 500, "a < b", "AT&amp;T"])
def test_sanitize_is_idempotent(raw):
    once = sanitize_text(raw, 100)
    assert sanitize_text(once, 100) == once


@pytest.mark.parametrize(
    "url",
    [
        "https://arxiv.org/abs/2504.13128",
        "http://example.org/a?b=1&c=2#frag",
        "https://huggingface.co/org/model",
    ],
)
def test_http_links_are_accepted(url):
    assert sanitize_link(f"  {url} ") == url


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("javascript:alert(1)", "not an http"),
        ("JaVaScRiPt:alert(1)", "not an http"),
        ("data:text/html,<script>alert(1)</script>", "angle brackets"),
        ("vbscript:msgbox", "not an http"),
        ("//evil.example/x", "not an http"),
        ("https://", "not an http"),
        ("ftp://example.org/file", "not an http"),
        ('https://example.org/"onmouseover="alert(1)', "quotes"),
        ("https://example.org/a b", "spaces"),
        ("https://user:pw@example.org/", "password"),
        ("https://example.org/" + "a" * 600, "under 500"),
        ("https://exa\u202emple.org/", "control"),
    ],
)
def test_bad_links_are_refused_with_a_reason(url, reason):
    with pytest.raises(FreshStackError, match=reason):
        sanitize_link(url)


def test_empty_link_is_none():
    assert sanitize_link("") is None and sanitize_link(None) is None and sanitize_link("   ") is None


def test_submission_reports_every_problem_at_once():
    with pytest.raises(FreshStackError) as err:
        sanitize_submission("<script>x</script>", "desc", "javascript:alert(1)")
    assert "name is empty" in str(err.value) and "not an http" in str(err.value)
    ok = sanitize_submission("<b>My model</b>", "<p>Trained on <i>X</i></p>", "https://x.org")
    assert (ok.name, ok.description, ok.link) == ("My model", "Trained on X", "https://x.org")


def test_escaping_for_html_and_markdown():
    assert escape_html('a < b & "c"') == "a &lt; b &amp; &quot;c&quot;"
    md = escape_markdown("[click](javascript:alert(1)) *b* <i>")
    assert "](" not in md.replace("\\](", "") and "<i>" not in md
    assert md.startswith("\\[click\\]\\(")
