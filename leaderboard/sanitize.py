"""Cleaning what submitters type (name, description, link) before it is stored or shown.

Stored text is plain text: tags are removed (with the whole content of script-like elements), entities are
decoded first so an encoded `&lt;script&gt;` cannot turn into a tag later, control and bidi-override characters
are dropped, and length is capped. Plain text is what every renderer expects; a view that puts it into HTML or
Markdown must still escape it (`escape_html`, `escape_markdown`), so two independent layers stand between a
submitter and the page. Links are accepted only as absolute http(s) URLs without characters that could break
out of an attribute.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import urlsplit

from freshstack_hf.errors import FreshStackError

MAX_NAME = 100
MAX_DESCRIPTION = 2000
MAX_LINK = 500

_DROP_WITH_CONTENT = re.compile(
    r"<\s*(script|style|iframe|object|embed|template|noscript|svg|math)\b.*?(<\s*/\s*\1\s*>|$)",
    re.IGNORECASE | re.DOTALL,
)
_COMMENT = re.compile(r"<!--.*?(-->|$)", re.DOTALL)
# A tag starts with `<` then a letter, `/`, `!` or `?`; an unterminated one runs to the end, as browsers read it.
_TAG = re.compile(r"<[a-zA-Z/!?][^>]*(>|$)")
_BIDI = dict.fromkeys(map(ord, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"))
_URL_FORBIDDEN = re.compile(r"[\s<>\"'`\\^{}|]")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~])")


def _strip_markup(text: str) -> str:
    for _ in range(5):  # until stable: entities may hide tags, and removing one tag may reveal another
        before = text
        text = html.unescape(text)
        text = _COMMENT.sub("", text)
        text = _DROP_WITH_CONTENT.sub("", text)
        text = _TAG.sub("", text)
        if text == before:
            break
    return text


def _drop_controls(text: str) -> str:
    """Whitespace controls stay (folded later); other controls, bidi overrides and private-use characters go."""
    text = text.translate(_BIDI)
    return "".join(c for c in text if c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cf", "Cs", "Co"))


def sanitize_text(text: str | None, max_length: int = MAX_NAME, *, multiline: bool = False) -> str:
    """Plain text with no markup, no control characters, collapsed whitespace and at most `max_length` chars.

    Idempotent, so the store can apply it again to text the app has already cleaned.
    """
    if not text:
        return ""
    text = _drop_controls(_strip_markup(str(text).replace("\r\n", "\n").replace("\r", "\n")))
    if multiline:
        text = "\n".join(re.sub(r"[ \t]+", " ", line).strip() for line in text.split("\n"))
        text = re.sub(r"\n{3,}", "\n\n", text).strip()
    else:
        text = re.sub(r"\s+", " ", text).strip()
    if len(text) > max_length:
        text = text[: max(max_length - 1, 0)].rstrip() + "…"
    return text


def sanitize_link(url: str | None) -> str | None:
    """An absolute http(s) URL, or None for an empty value; anything else raises `FreshStackError`."""
    url = (url or "").strip()
    if not url:
        return None
    if len(url) > MAX_LINK:
        raise FreshStackError(f"link is {len(url)} characters long: keep it under {MAX_LINK}")
    if _URL_FORBIDDEN.search(url) or any(unicodedata.category(c)[0] == "C" for c in url):
        raise FreshStackError("link contains spaces, quotes, angle brackets or control characters: percent-encode them")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise FreshStackError(f"link {url[:80]!r} is not an http(s) URL: give one like https://example.org/paper")
    if parts.username or parts.password:
        raise FreshStackError("link contains a user name or password: remove the credentials")
    return url


def escape_html(text: str) -> str:
    """For putting stored text into HTML (attributes included)."""
    return html.escape(text, quote=True)


def escape_markdown(text: str) -> str:
    """For putting stored text into Markdown: no link, emphasis or raw HTML can be formed from it.

    `&`, `<` and `>` become entities; quotes stay as typed (they are harmless in Markdown text, and the
    numeric entity `&#x27;` would be shown literally once its `#` is backslash-escaped below).
    """
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


@dataclass(frozen=True, slots=True)
class SubmissionText:
    name: str
    description: str
    link: str | None


def sanitize_submission(name: str | None, description: str | None = "", link: str | None = "") -> SubmissionText:
    """Clean the three free-text fields of a submission, reporting every problem at once."""
    problems: list[str] = []
    clean_name = sanitize_text(name, MAX_NAME)
    if not clean_name:
        problems.append("name is empty (after removing markup): give a short plain-text name")
    clean_link = None
    try:
        clean_link = sanitize_link(link)
    except FreshStackError as exc:
        problems.append(str(exc))
    if problems:
        raise FreshStackError("; ".join(problems))
    return SubmissionText(clean_name, sanitize_text(description, MAX_DESCRIPTION, multiline=True), clean_link)
