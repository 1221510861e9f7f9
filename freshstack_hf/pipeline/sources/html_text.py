"""Stack Overflow post HTML -> plain text that keeps code readable (fenced blocks, `inline` code, list bullets).

Questions and answers feed LLM prompts and BM25/dense retrieval, so the text must keep what an engineer would see
on the page: code verbatim (entities unescaped, indentation kept), paragraphs apart, link targets when the text does
not already show them. Everything outside code is whitespace-collapsed. The stdlib `html.parser` is used because a
post is small and only kept posts are converted: a few thousand posts (~3 MB of HTML) a second on one core is
far from the bottleneck, since the dump scan, not the conversion, dominates.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLOCKS = {"p", "div", "ul", "ol", "table", "blockquote", "pre", "hr", "dl", "section", "details", "summary", "figure"}
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_SKIP = {"script", "style", "head", "title"}
_SPACES = re.compile(r"\s+")
_MANY_NEWLINES = re.compile(r"\n{3,}")


class _Para:
    """Marker: a paragraph boundary (one blank line in the output)."""


class _Line:
    """Marker: a hard line break."""


class _Verbatim(str):
    """A finished block (fenced code, a rendered blockquote) that must not be re-collapsed."""


class _Prefix(str):
    """A list marker or indentation at the start of a line, kept as written."""


PARA, LINE = _Para(), _Line()


def _render(parts: list) -> str:
    """Join inline text, line breaks and verbatim blocks into paragraphs separated by one blank line."""
    blocks: list[str] = []
    lines: list[str] = [""]

    def end_block() -> None:
        nonlocal lines
        text = "\n".join(line.rstrip() for line in lines).strip("\n")
        if text.strip():
            blocks.append(_MANY_NEWLINES.sub("\n\n", text))
        lines = [""]

    for part in parts:
        if part is PARA:
            end_block()
        elif part is LINE:
            lines.append("")
        elif isinstance(part, _Verbatim):
            end_block()
            blocks.append(str(part))
        else:
            line = lines[-1]
            if part[:1] == " " and not isinstance(part, _Prefix) and (not line or line[-1] == " "):
                part = part[1:]
            lines[-1] = line + part
    end_block()
    return "\n\n".join(blocks)


class _Converter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[list] = [[]]  # one parts list per open blockquote
        self.lists: list[list] = []  # per open list: [ordered, next number]
        self.pre: list[str] | None = None
        self.code_depth = 0
        self.skip = 0
        self.links: list[tuple[str, int]] = []  # (href, index into parts where the link text starts)
        self.at_start = True  # nothing but whitespace written since the last line or paragraph break
        self.prefix = ""  # list marker or indentation, written before the line's first text

    def _emit(self, text: str) -> None:
        if self.at_start:
            if not text.strip():
                return
            if self.prefix:
                self.parts.append(_Prefix(self.prefix))
            self.at_start = False
            text = text.lstrip()
        self.parts.append(text)

    def _break(self, marker: object, prefix: str = "") -> None:
        """A paragraph or line break, never two in a row: empty `<p>`s and whitespace between tags add nothing."""
        if marker is PARA or not self.at_start:
            self.parts.append(marker)
        self.at_start, self.prefix = True, prefix

    @property
    def parts(self) -> list:
        return self.stack[-1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self.skip += 1
            return
        if self.pre is not None:
            if tag == "br":
                self.pre.append("\n")
            return
        parts = self.parts
        if tag == "code":
            self.code_depth += 1
            if self.code_depth == 1:
                self._emit("`")
        elif tag == "pre":
            self._break(PARA)
            self.pre = []
        elif tag == "br":
            self._break(LINE, "  " * len(self.lists))
        elif tag == "li":
            depth = max(len(self.lists), 1)
            marker = "- "
            if self.lists and self.lists[-1][0]:
                marker = f"{self.lists[-1][1]}. "
                self.lists[-1][1] += 1
            self._break(LINE, "  " * (depth - 1) + marker)
        elif tag in ("ul", "ol"):
            self._break(PARA if not self.lists else LINE)
            start = dict(attrs).get("start") or "1"
            self.lists.append([tag == "ol", int(start) if start.isdigit() else 1])
        elif tag == "blockquote":
            self._break(PARA)
            self.stack.append([])
        elif tag in _HEADINGS:
            self._break(PARA, "#" * _HEADINGS[tag] + " ")
        elif tag == "a":
            self.links.append((dict(attrs).get("href") or "", len(parts)))
        elif tag == "img":
            a = dict(attrs)
            alt = _SPACES.sub(" ", a.get("alt") or "").strip()
            self._emit(" " + (alt or "[image]") + " ")
        elif tag == "tr":
            self._break(LINE)
        elif tag in ("td", "th"):
            if not self.at_start:
                self._emit(" | ")
        elif tag == "hr":
            self._break(PARA)
            self._emit("---")
            self._break(PARA)
        elif tag in _BLOCKS:
            self._block()

    def _block(self) -> None:
        # Inside a list item a paragraph is a new line of the item, not a new paragraph of the document.
        if self.lists:
            if not self.at_start:
                self._break(LINE, "  " * len(self.lists))
        else:
            self._break(PARA)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in ("br", "img", "hr"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if tag == "pre" and self.pre is not None:
            code = "".join(self.pre)
            code = code[1:] if code.startswith("\n") else code
            code = code.rstrip("\n")
            fence = "````" if "```" in code else "```"
            self.parts.append(_Verbatim(f"{fence}\n{code}\n{fence}"))
            self.pre = None
            self._break(PARA)
            return
        if self.pre is not None:
            return
        parts = self.parts
        if tag == "code":
            if self.code_depth:
                self.code_depth -= 1
                if self.code_depth == 0:
                    self._emit("`")
        elif tag in ("ul", "ol"):
            if self.lists:
                self.lists.pop()
            self._break(PARA if not self.lists else LINE)
        elif tag == "blockquote" and len(self.stack) > 1:
            inner = _render(self.stack.pop())
            quoted = "\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))
            if inner:
                self.parts.append(_Verbatim(quoted))
            self._break(PARA)
        elif tag in _HEADINGS:
            self._break(PARA)
        elif tag == "a" and self.links:
            href, start = self.links.pop()
            text = "".join(p for p in parts[start:] if type(p) is str).strip().strip("`")
            if href and text and text != href and not href.startswith("#"):
                self._emit(f" ({href})")
        elif tag in _BLOCKS and tag != "hr":
            self._block()

    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.pre is not None:
            self.pre.append(data)
        elif self.code_depth:
            self._emit(data.replace("\n", " "))
        else:
            self._emit(_SPACES.sub(" ", data))

    def text(self) -> str:
        while len(self.stack) > 1:  # unclosed blockquote: keep its text
            inner = self.stack.pop()
            self.stack[-1].extend([PARA, *inner, PARA])
        if self.pre is not None:
            self.handle_endtag("pre")
        return _render(self.stack[0])


def html_to_text(html: str) -> str:
    """A post body as text: ``` fences for code blocks, `x` for inline code, `- ` / `1. ` list items, `#` headings."""
    if not html:
        return ""
    if "<" not in html and "&" not in html:
        return _SPACES.sub(" ", html).strip()
    conv = _Converter()
    conv.feed(html)
    conv.close()
    return conv.text()


def has_code(html: str) -> bool:
    """Whether a post holds a code block (`<pre>`): the paper's "code snippet"; inline `<code>` words do not count."""
    return "<pre" in html if html else False
