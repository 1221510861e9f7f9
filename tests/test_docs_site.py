"""The docs site and the README as a whole: the site builds with --strict and reads offline, its generated reference
holds every command, table and config, the hand-written reference pages agree with the code, the README fits on a
screen, every command or file a page names exists, the pages are sorted by purpose and short, each links the terms
it uses to Concepts, and the pages' worked numbers are the library's."""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import io
import json
import math
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from browser_checks import headless_chromium
from docs_pages import ROOT, Block, all_blocks, blocks, output_matches, page_name, pages, shell_commands
from test_docs_examples import PageRun, fill_sandbox

README = ROOT / "README.md"
PRODUCT = ("freshstack_hf", "leaderboard", "loaders", "scripts", "benchmarks")
VARIABLE = re.compile(r"\bFRESHSTACK_[A-Z0-9_]*[A-Z0-9]\b")
PATH = re.compile(r"`((?:freshstack_hf|leaderboard|loaders|scripts|tests|benchmarks|docs)/[\w/.-]+\.\w+)`")


# ---- the README ------------------------------------------------------------------------------------------------


def test_the_readme_fits_on_a_screen_and_keeps_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    quick = text[text.index("## Quick start") : text.index("\n## ", text.index("## Quick start") + 1)]
    assert "\nmake demo   #" in quick and "\nmake test   #" in quick  # the CI hooks grep for both
    assert "make docs-serve" in text and "](docs/" in text and "@article{thakur2025freshstack" in text
    links = re.findall(r"\]\(((?:docs/)[^)#]*)", text)
    assert len(links) >= 15 and all((ROOT / link).exists() for link in links), links
    languages = [lang for lang, _, _ in all_blocks(README)]
    assert languages.count("python") >= 1 and languages.count("bash") >= 3  # load, evaluate, serve


# ---- what the pages name ---------------------------------------------------------------------------------------


def test_every_command_a_page_shows_parses(freshstack_main):
    """Each `freshstack-hf` command of every shell block (and of the text blocks quoting one, such as a crontab
    line, but not the output blocks), run or not, is accepted by the console script's own parser."""
    from freshstack_hf.cli.main import build_parser

    parser, checked = build_parser(), 0
    for page in pages():
        outputs = {block.output_line for block in blocks(page)}  # what a command printed: not commands
        for lang, source, line in all_blocks(page):
            if lang not in ("bash", "text") or line in outputs:
                continue
            for words in shell_commands(source):
                err = io.StringIO()
                try:
                    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                        parser.parse_args(words)
                except SystemExit as exc:
                    assert not exc.code, f"{page_name(page)}:{line}: freshstack-hf {' '.join(words)}\n{err.getvalue()}"
                checked += 1
    assert checked >= 60


def test_every_file_a_page_names_exists():
    named: set[str] = set()
    for page in pages():
        named |= set(PATH.findall(page.read_text(encoding="utf-8")))
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert len(named) >= 30 and not missing, missing


def _code_variables() -> set[str]:
    found: set[str] = set()
    for folder in PRODUCT:
        for path in (ROOT / folder).rglob("*.py"):
            found |= set(VARIABLE.findall(path.read_text(encoding="utf-8")))
    return found


def test_the_environment_page_lists_every_variable_the_code_reads_and_no_other():
    page = (ROOT / "docs" / "reference" / "environment.md").read_text(encoding="utf-8")
    listed = set(VARIABLE.findall(page))
    in_tests = {v for p in (ROOT / "tests").glob("*.py") for v in VARIABLE.findall(p.read_text(encoding="utf-8"))}
    code = _code_variables()
    assert not code - listed, f"read by the code, missing from the page: {sorted(code - listed)}"
    assert not listed - code - in_tests, f"on the page, read nowhere: {sorted(listed - code - in_tests)}"


def test_the_extension_recipes_register_and_are_taken_back(tmp_path):
    """extend.md's method, measure family and LLM transport register as written (the method's run is BM25 cut to
    ten), and the page's end takes them out again."""
    from freshstack_hf.baselines.registry import METHODS, Resources, compute
    from freshstack_hf.llm.registry import transport_kind
    from freshstack_hf.metrics import FAMILIES, parse_measure
    from freshstack_hf.samples.synth import SynthConfig, synth_topic

    page = ROOT / "docs" / "extend.md"
    assert [b.lang for b in blocks(page)] == ["python"] * 3
    run = PageRun(page, fill_sandbox(tmp_path / "sandbox", None))
    try:
        run.run_through(len(run.examples) - 1)
        assert transport_kind("anthropic+https://api.anthropic.com") == "anthropic"
        assert parse_measure("first_rel@10").name == "First rel.@10"
        topic = synth_topic("pylibs", SynthConfig(queries=4, docs=60, seed=2))
        runs = compute(topic, ["bm25_top10"], Resources())
        assert METHODS["bm25_top10"].inputs == ("bm25",) and runs.keys() == {"bm25", "bm25_top10"}
        assert runs["bm25_top10"].run == {q: hits[:10] for q, hits in runs["bm25"].run.items()}
    finally:
        run.close()
    assert "bm25_top10" not in METHODS and "first_rel" not in FAMILIES
    assert transport_kind("anthropic+https://api.anthropic.com") == "openai"  # an unknown kind: a plain URL again


# ---- where the docs are ----------------------------------------------------------------------------------------


def test_the_cli_help_and_the_about_tab_say_where_the_docs_are():
    from freshstack_hf.cli.main import build_parser
    from leaderboard.tracks.retrieval.tabs.about_tab import about

    assert "make docs-serve" in build_parser().format_help() and "docs/" in build_parser().format_help()
    text = about(["pylibs"], 50, 10, "local-0", published=False)
    assert "make docs-serve" in text and "docs/" in text


# ---- the site --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built as `make docs` builds it, with --strict: a broken link, a page missing from the navigation, a
    docstring mkdocstrings cannot render or a generator's error fails the build."""
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    out = tmp_path_factory.mktemp("site")
    with contextlib.chdir(ROOT):
        config = load_config(str(ROOT / "mkdocs.yml"), strict=True, site_dir=str(out))
        build(config)
    return out


ASSET = re.compile(
    r"<(?:script|img|iframe|source|audio|video|embed)\b[^>]*\bsrc=[\"']?(https?:)?//|"
    r"<link\b[^>]*\bhref=[\"']?(https?:)?//|"
    r"url\(\s*[\"']?(https?:)?//|@import\s+[\"']?(https?:)?//",
    re.I,
)


@pytest.mark.slow
def test_the_site_reads_offline(site):
    """No page, stylesheet or script of the built site makes the browser fetch anything from the network: no
    src= or <link href=> to another host, no url() or @import of one (links a reader clicks are fine)."""
    found = []
    for path in site.rglob("*"):
        if path.suffix in (".html", ".css", ".js") and path.is_file():
            for match in ASSET.finditer(path.read_text(encoding="utf-8", errors="replace")):
                found.append(f"{path.relative_to(site)}: {match[0][:80]}")
    assert not found, found
    assert (site / "leaderboard.png").is_file() and (site / "search" / "search_index.json").is_file()
    assert (site / "search" / "search_index.js").is_file() and (site / "javascripts" / "iframe-worker.js").is_file()


@pytest.mark.slow
def test_the_site_opened_from_its_files_searches(site):
    """The built site opened as files (`make docs`, then site/index.html in a browser): typing "nugget" in the
    search box lists pages that say it, the Concepts page among them, and the browser asks for nothing but the
    site's own files. A file:// page may not start Material's search worker: the offline plugin's
    search/search_index.js and the project's shim (docs/javascripts/iframe-worker.js, no CDN) make it search; without
    the shim the search box is never shown."""
    requests: list[str] = []
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("request", lambda request: requests.append(request.url))
        page.route(re.compile(r"^(https?|wss?)://"), lambda route: route.abort())  # nothing outside may answer
        page.goto((site / "index.html").as_uri())
        page.locator("input.md-search__input").click()
        page.keyboard.type("nugget")
        page.wait_for_selector(".md-search-result__item", timeout=20_000)
        links = [a.get_attribute("href") for a in page.locator(".md-search-result__item > a").all()]
    found = {Path(urlsplit(link).path).relative_to(site).as_posix() for link in links}
    assert "concepts.html" in found, found
    for name in found:
        assert "nugget" in (site / name).read_text(encoding="utf-8").lower(), name
    assert len(found) >= 5 and {urlsplit(u).scheme for u in requests} == {"file"}, requests


@pytest.mark.slow
def test_the_reference_is_generated_from_the_code(site, freshstack_main):
    from freshstack_hf.cli.main import build_parser
    from freshstack_hf.repo.layout import CONFIGS
    from leaderboard.store.schema import Base

    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    for name, sub in commands.items():
        assert f'id="{name}"' in cli, name
        usage = sub.format_usage().split()[1:4]  # "freshstack-hf NAME [-h]": rendered as written
        assert " ".join(usage).replace("[", "") in re.sub(r"<[^>]+>", "", cli).replace("[", ""), name
    store = (site / "reference" / "store.html").read_text(encoding="utf-8")
    assert all(f"<code>{table}</code>" in store for table in Base.metadata.tables)
    configs = (site / "reference" / "configs.html").read_text(encoding="utf-8")
    assert all(f"<code>T{c.suffix}</code>" in configs for c in CONFIGS)
    api = (site / "reference" / "api.html").read_text(encoding="utf-8")
    for name in (
        "freshstack_hf.load_topic",
        "freshstack_hf.Dataset",
        "freshstack_hf.runs.load_run",
        "freshstack_hf.metrics.evaluate",
        "freshstack_hf.baselines.register_method",
        "freshstack_hf.metrics.register_family",
        "freshstack_hf.llm.registry.register",
        "freshstack_hf.pipeline.sources.registry.register_reader",
        "leaderboard.store.dialect.register_dialect",
    ):
        assert f'id="{name}"' in api, name  # rendered from its docstring, under its full name


# ---- the demo's first run --------------------------------------------------------------------------------------


@pytest.mark.slow
def test_the_demo_page_shows_what_the_demo_printed(demo_build):
    """The first `make demo` output on "What the demo builds" is what the session's demo build printed (that build
    runs with --no-serve: one step fewer, and no serving lines), under the output blocks' rule."""
    page = ROOT / "docs" / "demo.md"
    shown = next(s for lang, s, _ in all_blocks(page) if lang == "text" and s.startswith("[1/"))
    steps = int(re.match(r"\[1/(\d+)\]", shown)[1])
    shown = shown[: shown.index("  submit demo-out/runs/bm25.trec on the leaderboard's Submit tab")]
    shown = re.sub(rf"^\[(\d+)/{steps}\]", rf"[\1/{steps - 1}]", shown, flags=re.M)  # the demo's steps, not the build's
    printed = (demo_build / "first-run.txt").read_text(encoding="utf-8")
    printed = "\n".join(line for line in printed.splitlines() if not line.endswith(": running"))
    assert output_matches(shown, printed) is None, output_matches(shown, printed)


# ---- pages by purpose ------------------------------------------------------------------------------------------

MAX_WORDS = 1500
FENCE = re.compile(r"^(`{3,}|~{3,}).*?^\1[ \t]*$", re.M | re.S)
GENERATED = re.compile(r"\{\{ [a-z]+: [a-z0-9_.]+ \}\}|<!-- generated: [a-z-]+ -->")


def prose_words(markdown: str) -> int:
    """The words a reader reads on a page: its Markdown source outside fenced blocks (code and outputs) and outside
    generated placeholders (figures, generated reference parts)."""
    return len(GENERATED.sub(" ", FENCE.sub(" ", markdown)).split())


def test_no_page_is_over_1500_words():
    """A page says one thing for one purpose: no page of the site, nor the README, has more than 1,500 words of
    prose (fenced blocks and generated placeholders left out)."""
    assert prose_words("one two\n```bash\nthree four\n```\n{{ figure: release.evaluate_s }} five") == 3
    assert prose_words("a\n````text\n```\nb\n```\n````\nc <!-- generated: cli -->") == 2  # a fence in a fence
    counts = {page_name(page): prose_words(page.read_text(encoding="utf-8")) for page in pages()}
    over = {name: words for name, words in counts.items() if words > MAX_WORDS}
    assert not over, f"pages over {MAX_WORDS} words: {over} (split them by purpose)"
    assert len(counts) >= 30


def _nav_files(entries) -> list[str]:
    found = []
    for entry in entries:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        found += _nav_files(value) if isinstance(value, list) else [value]
    return found


def test_the_navigation_is_sorted_by_purpose_and_holds_every_page():
    """mkdocs.yml's navigation: Get started (Install, Quickstart, Score your model, Concepts), then how-to guides,
    explanation and reference, then the FAQ, Performance, Changelog and Contributing; the pages a newcomer needs
    exist, and every page of docs/ is in it once."""
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    sections = [next(iter(entry)) for entry in nav]
    assert sections == [
        "Home",
        "Get started",
        "How-to guides",
        "Explanation",
        "Reference",
        "FAQ",
        "Performance",
        "Changelog",
        "Contributing",
    ]
    section = {next(iter(entry)): next(iter(entry.values())) for entry in nav}
    assert _nav_files(section["Get started"]) == ["install.md", "get-started.md", "score-your-model.md", "concepts.md"]
    how_to = _nav_files(section["How-to guides"])
    assert {"submit-a-model.md", "leaderboard.md", "build.md", "refresh.md", "embargo.md"} <= set(how_to)
    assert {"chunking.md", "judge-calibration.md", "live-scores.md"} <= set(_nav_files(section["Explanation"]))
    assert section["FAQ"] == "faq.md"
    listed = _nav_files(nav)
    on_disk = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(listed) == on_disk and len(listed) == len(set(listed))


# Each term of the Concepts page and its anchor there: a page that uses the term links its first use to it.
CONCEPT_TERMS = {
    "nugget": (re.compile(r"\bnuggets?\b", re.I), "nugget"),
    "judgment": (re.compile(r"\bjudgments?\b", re.I), "judgment"),
    "qrels": (re.compile(r"\bqrels\b", re.I), "qrels"),
    "Nano": (re.compile(r"\bNano\b"), "nano-lists"),
    "snapshot": (re.compile(r"\bsnapshots?\b", re.I), "snapshot"),
    "embargo": (re.compile(r"\bembargo(?:es|ed)?\b", re.I), "embargo"),
    "live score": (re.compile(r"\blive scor(?:e|es|ing)\b", re.I), "live-scores"),
}
NOT_LINKED = {"docs/concepts.md", "docs/changelog.md", "README.md"}  # the definitions; a history; the README links it
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]*)\)")


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match[0])


def unlinked_terms(markdown: str) -> list[str]:
    """The Concepts terms whose first use in the page's prose (not in code, a heading, a placeholder or a
    mkdocstrings directive) is not inside a link to that term on the Concepts page."""
    text = FENCE.sub(_blank, markdown)
    for pattern in (r"<!--.*?-->", r"^#.*$", r"`[^`\n]*`", r"\{\{.*?\}\}", r"^:::.*$(?:\n^    .*$)*"):
        text = re.sub(pattern, _blank, text, flags=re.M | re.S)
    links = [(m.start(), m.end(), m[2]) for m in LINK.finditer(text)]
    for start, end, _ in links:  # the addresses are not prose
        url_start = text.index("](", start) + 2
        text = text[:url_start] + " " * (end - 1 - url_start) + text[end - 1 :]
    missing = []
    for term, (pattern, anchor) in CONCEPT_TERMS.items():
        first = pattern.search(text)
        if first is None:
            continue
        target = re.compile(rf"^(?:\.\./)*concepts\.md#{anchor}$")
        if not any(start <= first.start() < end and target.match(url) for start, end, url in links):
            line = text.count("\n", 0, first.start()) + 1
            missing.append(f"{term} (line {line})")
    return missing


def test_every_page_links_a_term_to_concepts_on_its_first_use():
    """A reader who meets "nugget", "judgment", "qrels", "Nano", "snapshot", "embargo" or "live score" on a page for
    the first time can click it: its first use is a link to the term on the Concepts page."""
    assert unlinked_terms("## Snapshots\nEach [nugget](concepts.md#nugget), a nugget again; `qrels` in code") == []
    assert unlinked_terms("A nugget, then [nuggets](concepts.md#nugget).") == ["nugget (line 1)"]
    assert unlinked_terms("The [embargo](embargo.md) page.") == ["embargo (line 1)"]  # a link, but not to Concepts
    assert unlinked_terms("a [snapshot](../concepts.md#snapshot)") == []
    found = {}
    for page in pages():
        name = page_name(page)
        if name not in NOT_LINKED and (missing := unlinked_terms(page.read_text(encoding="utf-8"))):
            found[name] = missing
    assert not found, found


# ---- the worked example ---------------------------------------------------------------------------------------


def test_the_concepts_worked_example_states_what_the_library_computes(tmp_path):
    """The Concepts page computes alpha-nDCG@3, Coverage@3 and Recall@3 of a three-document ranking by hand; its
    Python block scores the same tiny topic with the library, and the hand-worked numbers in the prose are what the
    library gives (the output block is compared by the docs examples' test too)."""
    page = ROOT / "docs" / "concepts.md"
    run = PageRun(page, fill_sandbox(tmp_path / "sandbox", None))
    try:
        run.run_through(len(run.examples) - 1)
    finally:
        run.close()
    metrics = run.document.namespace["result"].metrics
    text = " ".join(page.read_text(encoding="utf-8").split())
    dcg = 1 + 1.5 / math.log2(3)  # d2 (A), then d1 (A again at half, B), then d3 (nothing)
    ideal = 2 + 1 / math.log2(3) + 0.5 / math.log2(4)  # d1 (A, B), d4 (C), d5 (A again at half)
    assert math.isclose(metrics["alpha_ndcg@3"], dcg / ideal, rel_tol=1e-12)
    assert f"**Coverage@3** = 2/3 = {metrics['coverage@3']:.3f}" in text
    assert f"**Recall@3** = 2/4 = {metrics['recall@3']:.3f}" in text
    assert f"so {1.5 / math.log2(3):.3f}" in text and f"1 + {1.5 / math.log2(3):.3f} = {dcg:.3f}" in text
    assert f"= 0.25): {ideal:.3f}. So" in text
    assert f"alpha-nDCG@3 = {dcg:.3f} / {ideal:.3f} = {metrics['alpha_ndcg@3']:.3f}" in text


# ---- the real benchmark's page, on the demo's topic ------------------------------------------------------------

AVERAGE_LINE = re.compile(r"^average\s+1 topic\s+([\d.]+) \[[^\]]*\]\s+([\d.]+) \[[^\]]*\]\s+([\d.]+) ", re.M)


@pytest.mark.slow
def test_the_score_page_runs_on_the_demo_topic_in_the_official_schema(demo_build, tmp_path, freshstack_main):
    """The page "Score your model on FreshStack" needs the Hub, so its blocks are not run as they stand. Here they
    are, on the demo's topic exported in the official release's schema (`export-official`): the page's import, its
    command line, its MTEB run and its Python, with the Hub ids replaced by those files, langchain by the demo's
    topic and the model by the packaged MiniLM. The three ways give the same three numbers, as the page says.

    The topic is the demo's Nano subset of 200 documents (its 99 judged ones and 101 of its candidates): each way
    encodes the whole corpus on one CPU thread, and three encodings of the 738 chunks took two minutes."""
    from freshstack_hf.retrieval.models import packaged_model_dir

    page = ROOT / "docs" / "score-your-model.md"
    run = PageRun(page, fill_sandbox(tmp_path / "sandbox", demo_build))
    sandbox = run.sandbox
    run.shell(Block("setup", 0, "bash", "freshstack-hf nano freshstack --topic pylibs --max-docs 200 --out nano"))
    exported = run.shell(Block("setup", 0, "bash", "freshstack-hf export-official nano --topic pylibs --out rel"))
    assert "wrote rel/queries.parquet" in exported
    local = {
        "freshstack/queries-oct-2024": "rel/queries.parquet",
        "freshstack/corpus-oct-2024": "rel/corpus.parquet",
        "sentence-transformers/all-MiniLM-L6-v2": str(packaged_model_dir()),
        "langchain": "pylibs",
    }

    def here(block: Block) -> Block:
        source = block.source
        for hub, there in local.items():
            source = source.replace(hub, there)
        return dataclasses.replace(block, source=source)

    imported, cli, with_mteb, python = (
        next(b for b in blocks(page) if word in b.source)
        for word in ("import-official", "retrieve official", "mteb run", "encode_query")
    )
    assert all(b.needs for b in (imported, cli, with_mteb, python))  # not run by the docs examples' test
    assert "imported pylibs: 7 queries, 200 docs, 41 nuggets -> official" in run.shell(here(imported))
    by_cli = [float(v) for v in AVERAGE_LINE.search(run.shell(here(cli))).groups()]
    by_mteb = [float(v) for v in AVERAGE_LINE.search(run.shell(here(with_mteb))).groups()]
    (results,) = (sandbox / "results").rglob("FreshStack.json")
    (mteb_scores,) = json.loads(results.read_text(encoding="utf-8"))["scores"]["test"]
    printed = run.python(here(python))
    by_python = ast.literal_eval(printed.strip().splitlines()[-1])  # the dict the block prints
    assert by_cli == by_mteb == [by_python["alpha_ndcg@10"], by_python["coverage@20"], by_python["recall@50"]]
    assert round(mteb_scores["main_score"], 3) == by_cli[0] and round(mteb_scores["recall_at_50"], 3) == by_cli[2]
    assert by_cli[0] > 0.5  # a real model on a topic it can answer, not an empty run scoring 0
