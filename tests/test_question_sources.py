"""A new question source is one reader class registered in one place: a toy layout (a JSON file of threads, each a
question with its accepted answer inline) is registered by the test, named in a topic YAML, and a whole offline
build reads its questions from it. Detection of the built-in layouts is checked on real files too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from freshstack_hf.errors import ValidationError
from freshstack_hf.pipeline.config.topic import parse_topic
from freshstack_hf.pipeline.runner import run_build
from freshstack_hf.pipeline.sources.posts import Post
from freshstack_hf.pipeline.sources.reader import BY_NAME, NO, QuestionReader
from freshstack_hf.pipeline.sources.registry import (
    READERS,
    detect_format,
    formats,
    open_source,
    register_reader,
)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "laravel_dump" / "Posts.xml"

THREADS = [  # (id, date, tags, title, question html, answer id or None, answer html)
    (7001, "2024-03-02T10:00:00", ["toyfw"], "How do I register a widget?",
     "<p>My <code>Widget</code> never shows up. How do I register it with the toy framework?</p>",
     7101, "<p>Call <code>toyfw.register(Widget)</code> before <code>toyfw.start()</code>; it is read once.</p>"),
    (7002, "2024-04-11T08:30:00", ["toyfw", "config"], "Where does toyfw read its settings?",
     "<p>Which file holds the settings of the toy framework?</p>",
     7102, "<p>Settings live in <code>toyfw.toml</code> at the project root; set <code>debug = true</code> there.</p>"),
    (7003, "2024-05-20T12:00:00", ["toyfw"], "Unanswered question about toyfw",
     "<p>Nobody answered this one.</p>", None, ""),
    (7004, "2024-05-21T12:00:00", ["otherfw"], "A question on another framework",
     "<p>Off topic.</p>", 7104, "<p>Off-topic answer text.</p>"),
]  # fmt: skip
KEPT = {"7001", "7002"}  # tagged toyfw, with an accepted answer


class ToyThreads(QuestionReader):
    """A JSON file `{"threads": [{"id", "date", "tags", "title", "body", "answer": {"id", "body"} | null}]}`."""

    format = "toy"

    @classmethod
    def file_score(cls, name: str, head: bytes) -> int:
        return BY_NAME if name.endswith(".threads.json") else NO

    def files(self) -> list[Path]:
        return [self.path]

    def scan(self, want_question, want_answer, stats, progress=None) -> Iterator[Post]:
        threads = json.loads(self.path.read_text(encoding="utf-8"))["threads"]
        stats.bytes_read += self.path.stat().st_size
        answers = []
        for t in threads:
            stats.rows += 1
            stats.questions += 1
            answer = t["answer"]
            if want_question("|".join(t["tags"])):
                yield Post(t["id"], True, t["date"], 1, t["body"], t["title"], tuple(t["tags"]),
                           answer["id"] if answer else None)  # fmt: skip
            if answer:
                answers.append(Post(answer["id"], False, t["date"], 2, answer["body"], parent_id=t["id"]))
        for post in answers:  # every question before any answer, as the stage expects of one-pass layouts
            stats.rows += 1
            if want_answer(str(post.id)):
                yield post


@pytest.fixture
def toy_reader():
    register_reader(ToyThreads)  # the one place a layout is registered
    try:
        yield ToyThreads
    finally:
        READERS.pop("toy", None)  # a test undoes its registration; the library needs no unregister
    assert "toy" not in formats()


def write_threads(path: Path) -> Path:
    threads = [
        {"id": i, "date": d, "tags": tags, "title": title, "body": body,
         "answer": {"id": aid, "body": answer} if aid else None}
        for i, d, tags, title, body, aid, answer in THREADS
    ]  # fmt: skip
    path.write_text(json.dumps({"threads": threads}), encoding="utf-8")
    return path


def toy_definition(tmp_path: Path) -> dict:
    docs = tmp_path / "toyfw-docs"
    docs.mkdir()
    (docs / "register.md").write_text(
        "# Registering widgets\n\nCall `toyfw.register(Widget)` before `toyfw.start()`. The registry is read once, "
        "when the framework starts, so a widget registered later never shows up.\n",
        encoding="utf-8",
    )
    (docs / "settings.md").write_text(
        "# Settings\n\nThe toy framework reads `toyfw.toml` at the project root. Set `debug = true` to log every "
        "widget it loads.\n",
        encoding="utf-8",
    )
    return {
        "topic": "toyfw",
        "questions": {"source": str(write_threads(tmp_path / "dump.threads.json")), "tags": ["toyfw"]},
        "corpus": {"repositories": [{"source": str(docs), "keyword": "toyfw-docs", "commit": "v1.0"}]},
        "pooling": {"depth": 5},
    }


def test_an_unregistered_format_is_refused_with_its_key(tmp_path):
    definition = toy_definition(tmp_path)
    definition["questions"]["format"] = "toy"
    with pytest.raises(ValidationError) as err:
        parse_topic(definition, "toy.yaml", tmp_path)
    assert "questions.format" in str(err.value) and "'toy'" in str(err.value)


def test_a_registered_reader_is_chosen_by_name_and_by_auto(toy_reader, tmp_path):
    path = write_threads(tmp_path / "x.threads.json")
    assert "toy" in formats() and READERS["toy"] is ToyThreads
    assert detect_format(path) == "toy"  # `auto` asks the registered reader too
    assert isinstance(open_source(path, "toy"), ToyThreads)
    with pytest.raises(ValueError, match="already registered"):
        register_reader(ToyThreads)


@pytest.mark.slow
def test_a_whole_build_reads_its_questions_from_the_registered_reader(toy_reader, tmp_path):
    definition = toy_definition(tmp_path)
    definition["questions"]["format"] = "toy"
    config = parse_topic(definition, "toy.yaml", tmp_path)
    out = tmp_path / "freshstack"
    results = run_build(config, out, show_progress=False, echo=lambda _line: None)

    work = tmp_path / "freshstack-work" / "toyfw"
    assert results["questions"]["format"] == "toy"
    kept = pq.read_table(work / "questions" / "questions.parquet").to_pylist()
    assert {r["query_id"] for r in kept} == KEPT
    first = next(r for r in kept if r["query_id"] == "7001")
    assert first["title"] == "How do I register a widget?" and first["answer_id"] == "7101"
    assert "toyfw.register(Widget)" in first["answer_text"] and "<code>" not in first["answer_text"]

    from freshstack_hf.repo.check import validate_repo
    from freshstack_hf.repo.reader import load_topic

    assert validate_repo(out) == []
    topic = load_topic(out, "toyfw")
    assert set(topic.query_ids) <= KEPT
    assert {d.doc_id.split("_")[0] for d in topic.docs} == {"toyfw-docs/register.md", "toyfw-docs/settings.md"}


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("Posts.xml", None, "stackexchange"),  # the real fixture dump
        ("posts_questions.csv", "id,title\n", "bigquery"),
        ("page.json", '{"items": []}', "api"),
        ("page.json.gz", None, "api"),  # only the extension speaks
        ("export.dat", "<?xml version='1.0'?><posts/>", "stackexchange"),  # by its first bytes
    ],
)
def test_auto_detection_of_the_built_in_layouts(tmp_path, name, content, expected):
    path = tmp_path / name
    if name == "Posts.xml":
        path.write_bytes(FIXTURE.read_bytes())
    elif content is None:
        path.write_bytes(b"\x1f\x8b\x08\x00binary")
    else:
        path.write_text(content, encoding="utf-8")
    assert detect_format(path) == expected
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "posts_questions.csv").write_text("id\n")
    (folder / "Posts.xml").write_text("<posts/>")
    assert detect_format(folder) == "bigquery"  # the distinctive table names win a tie
