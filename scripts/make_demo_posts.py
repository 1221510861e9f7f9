"""Regenerate the demo topic's Stack Exchange dump: freshstack_hf/samples/demo_data/Posts.xml and sources.json.

The posts are data, in scripts/demo_posts.yaml (whose header describes its fields and the light markup of the
bodies). This script gives each post its id, renders the markup as Stack Overflow HTML and writes the dump in the
real Posts.xml format, plus sources.json: for each question with `sources`, the site-packages files (relative
paths) where the facts of its accepted answer were verified. tests/test_demo_topic.py checks that the shipped files
are exactly what this script makes of the YAML.

Usage (from the repository root):  python scripts/make_demo_posts.py [--out DIR]
"""

from __future__ import annotations

import argparse
import html
import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from xml.sax.saxutils import quoteattr

import yaml

ROOT = Path(__file__).resolve().parent.parent
POSTS = Path(__file__).resolve().parent / "demo_posts.yaml"
OUT_DIR = ROOT / "freshstack_hf" / "samples" / "demo_data"

_INLINE = re.compile(r"`([^`]+)`")


def _inline(text: str) -> str:
    parts = _INLINE.split(text)
    out = []
    for i, part in enumerate(parts):
        out.append(f"<code>{html.escape(part, quote=False)}</code>" if i % 2 else html.escape(part, quote=False))
    return "".join(out)


def md(text: str) -> str:
    """The light markup described in demo_posts.yaml -> Stack Overflow style HTML."""
    blocks: list[str] = []
    lines = text.strip("\n").split("\n")
    i = 0
    para: list[str] = []
    items: list[str] = []

    def flush() -> None:
        if para:
            blocks.append("<p>" + _inline(" ".join(s.strip() for s in para)) + "</p>")
            para.clear()
        if items:
            blocks.append("<ul>\n" + "\n".join(f"<li>{_inline(it)}</li>" for it in items) + "\n</ul>")
            items.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            code: list[str] = []
            i += 1
            while not lines[i].startswith("```"):
                code.append(lines[i])
                i += 1
            blocks.append("<pre><code>" + html.escape("\n".join(code) + "\n", quote=False) + "</code></pre>")
        elif line.startswith("- "):
            if para:
                flush()
            items.append(line[2:].strip())
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()  # continuation of a list item
        elif not line.strip():
            flush()
        else:
            if items:
                flush()
            para.append(line)
        i += 1
    flush()
    return "\n".join(blocks) + "\n"


class Dump:
    def __init__(self, first_id: int) -> None:
        self.next_id = first_id
        self.rows: list[tuple[int, list[tuple[str, object]]]] = []
        self.sources: dict[str, list[str]] = {}
        self.library: dict[str, str] = {}

    def _id(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    def question(
        self,
        *,
        date: str,
        tags: list[str],
        title: str,
        body: str,
        answer: str | None = None,
        answer_date: str | None = None,
        sources: list[str] | None = None,
        score: int = 3,
        views: int = 250,
        answer_score: int = 4,
        others: Sequence[dict] = (),
        accepted_missing: bool = False,
        library: str | None = None,
    ) -> int:
        """Add a question, its accepted answer (if any) and its other answers (each with date, score and body)."""
        qid = self._id()
        answers = []
        acc = None
        if answer is not None:
            acc = self._id()
            answers.append((acc, answer_date or date, answer, answer_score))
        for other in others:
            answers.append((self._id(), other["date"], other["body"], other["score"]))
        if accepted_missing:
            acc = qid + 97  # an answer id that is not in this dump
        attrs: list[tuple[str, object]] = [("Id", qid), ("PostTypeId", 1)]
        if acc is not None:
            attrs.append(("AcceptedAnswerId", acc))
        attrs += [
            ("CreationDate", date),
            ("Score", score),
            ("ViewCount", views),
            ("Body", md(body)),
            ("OwnerUserId", 1000 + qid % 211),
            ("LastActivityDate", max([date] + [a[1] for a in answers])),
            ("Title", title),
            ("Tags", "".join(f"<{t}>" for t in tags)),
            ("AnswerCount", len(answers)),
            ("CommentCount", qid % 3),
            ("ContentLicense", "CC BY-SA 4.0"),
        ]
        self.rows.append((qid, attrs))
        for aid, adate, abody, ascore in answers:
            self.rows.append(
                (
                    aid,
                    [
                        ("Id", aid),
                        ("PostTypeId", 2),
                        ("ParentId", qid),
                        ("CreationDate", adate),
                        ("Score", ascore),
                        ("Body", md(abody)),
                        ("OwnerUserId", 2000 + aid % 173),
                        ("LastActivityDate", adate),
                        ("CommentCount", aid % 2),
                        ("ContentLicense", "CC BY-SA 4.0"),
                    ],
                )
            )
        if sources:
            self.sources[str(qid)] = sources
        if library:
            self.library[str(qid)] = library
        return qid

    def xml(self) -> str:
        out = ['<?xml version="1.0" encoding="utf-8"?>', "<posts>"]
        for _, attrs in sorted(self.rows, key=lambda r: r[0]):
            out.append("  <row " + " ".join(f"{k}={quoteattr(str(v), {chr(10): '&#xA;'})}" for k, v in attrs) + " />")
        out.append("</posts>")
        return "\n".join(out) + "\n"


def load_dump(posts: Path = POSTS) -> Dump:
    data = yaml.safe_load(posts.read_text(encoding="utf-8"))
    dump = Dump(first_id=data["first_id"])
    for question in data["questions"]:
        dump.question(**question)
    return dump


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--posts", type=Path, default=POSTS, help="the posts (default: %(default)s)")
    parser.add_argument("--out", type=Path, default=OUT_DIR, help="where Posts.xml and sources.json go")
    args = parser.parse_args(argv)
    dump = load_dump(args.posts)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "Posts.xml").write_text(dump.xml(), encoding="utf-8")
    (args.out / "sources.json").write_text(json.dumps(dump.sources, indent=2) + "\n", encoding="utf-8")
    counts = dict(Counter(dump.library.values()))
    print(f"wrote {len(dump.rows)} rows; answered questions per library: {counts}")


if __name__ == "__main__":
    main()
