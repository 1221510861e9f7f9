"""The `questions` stage: one streaming scan of the source -> questions with their accepted answers, as text.

The paper (section 3.1) keeps questions carrying the topic's tags that have an accepted answer; we add the
config's date window and an optional cap. Only candidate questions and the answers they accept are held in
memory, so a 100 GB dump costs one pass of lxml over the file (plus, rarely, a second pass restricted to the
few accepted answers that appeared before their question). HTML is converted only for the questions kept.
The tag co-occurrence report is what the paper used to choose each topic's GitHub repositories.

Under an embargo a public revision says what this stage found of the public questions alone (`public_record`):
how many it took and their tags, beside what no question changes (the source, its size in posts and tagged posts).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from freshstack_hf.pipeline.accounting import StagePlan
from freshstack_hf.pipeline.inputs import COOCCURRENCE, QUESTIONS
from freshstack_hf.pipeline.sources.html_text import has_code, html_to_text
from freshstack_hf.pipeline.sources.posts import Post, ScanStats
from freshstack_hf.pipeline.sources.reader import QuestionReader
from freshstack_hf.pipeline.sources.registry import open_source
from freshstack_hf.pipeline.stage import StageContext, read_table, write_json, write_table

if TYPE_CHECKING:
    from freshstack_hf.pipeline.planning.plan_facts import PlanFacts

NAME = "questions"
READS = ("topic", "questions")
VERSION = 1
OUTPUTS = (QUESTIONS, COOCCURRENCE)
PUBLIC = ("source", "format", "newest_post", "files")  # what a public record keeps as is: no question changes it
UNWINDOWED = ("rows_scanned", "questions", "with_topic_tag")  # counts of the source, before the date window
log = logging.getLogger(__name__)

COLUMNS = (
    "query_id", "title", "body", "answer_id", "answer_text", "date", "tags", "score", "answer_score",
    "body_has_code", "answer_has_code",
)  # fmt: skip


def _source(ctx: StageContext) -> QuestionReader:
    q = ctx.config.questions
    return open_source(q.source, q.format, tmp_dir=ctx.work.parent)


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    """What `run` would read, without parsing it (a plan that needs the questions scans them itself)."""
    q = ctx.config.questions
    src = _source(ctx)
    files = src.files()
    details = {
        "stage": NAME,
        "source": str(src.path),
        "format": src.format,
        "files": [{"path": str(p), "bytes": p.stat().st_size} for p in files],
        "bytes": sum(p.stat().st_size for p in files),
        "tags": list(q.tags),
        "since": q.since,
        "until": q.until,
        "max_questions": q.max_questions,
    }
    return StagePlan(NAME, details)


def _tag_precheck(tags: tuple[str, ...]):
    """A substring test on the raw tag string: false positives (`java` in `<javascript>`) are dropped later."""

    def want(raw: str) -> bool:
        for tag in tags:
            if tag in raw:
                return True
        if raw.islower():  # the dumps write tags lowercased: only mixed-case strings need a second look
            return False
        low = raw.lower()
        return any(tag in low for tag in tags)

    return want


def _progress_bar(ctx: StageContext, total: int | None, desc: str):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, disable=not ctx.show_progress)


def run(ctx: StageContext) -> dict[str, Any]:
    q = ctx.config.questions
    src = _source(ctx)
    stats = ScanStats()
    start = time.perf_counter()
    log.info("questions: scanning %s (%s) for tags %s", src.path, src.format, ", ".join(q.tags))
    candidates, answers, counts = _scan(ctx, src, stats)
    passes = 1
    missing = {str(p.accepted_answer_id) for p in candidates.values()} - {str(a) for a in answers}
    if missing and src.answers_may_come_first:
        passes = 2
        _second_pass(ctx, src, missing, answers, stats)

    present = [p for _, p in sorted(candidates.items()) if p.accepted_answer_id in answers]
    kept = present[: q.max_questions] if q.max_questions else present
    seconds = time.perf_counter() - start

    write_table(QUESTIONS.path(ctx.work), _table(kept, answers))
    cooc = cooccurrence((p.tags for p in kept), q.tags, q.cooccurrence_top_k)
    write_json(COOCCURRENCE.path(ctx.work), cooc)
    if not kept:
        log.warning("questions: no question of %s kept; check questions.tags / since / until", src.path)

    counts = {
        "rows_scanned": stats.rows,
        "questions": stats.questions,
        "with_topic_tag": counts["with_topic_tag"],
        "in_window": counts["in_window"],
        "with_accepted_answer_id": counts["with_accepted_answer_id"],
        "accepted_answer_present": len(present),
        "kept": len(kept),
    }
    return {
        "source": str(src.path),
        "format": src.format,
        "bytes_read": stats.bytes_read,
        "passes": passes,
        "seconds": round(seconds, 3),
        "mb_per_s": round(stats.bytes_read / 1e6 / seconds, 2) if seconds > 0 else None,
        "kept": len(kept),
        "newest_post": stats.newest[:10],  # of any post in the source: how recent it is (a refresh checks it)
        "counts": counts,
        "cooccurrence_top10": cooc["cooccurring"][:10],
        "files": [f.name for f in OUTPUTS],
    }


def _scan(ctx: StageContext, src: QuestionReader, stats: ScanStats) -> tuple[dict[int, Post], dict[int, Post], Counter]:
    """The one pass over the source: the candidate questions (topic tag, date window, an accepted answer) by id, the
    answers they accept that the pass decoded, and how many questions each filter let through."""
    q = ctx.config.questions
    topic_tags = frozenset(q.tags)
    counts: Counter = Counter()
    candidates: dict[int, Post] = {}
    wanted: set[str] = set()  # accepted answer ids (as in the source's text) of candidate questions
    answers: dict[int, Post] = {}
    with _progress_bar(ctx, src.stream_size(), "questions: scan") as bar:
        for post in src.scan(_tag_precheck(q.tags), wanted.__contains__, stats, bar.update):
            if not post.is_question:
                answers[post.id] = post
                continue
            if topic_tags.isdisjoint(post.tags):
                continue
            counts["with_topic_tag"] += 1
            day = post.date[:10]
            if (q.since and day < q.since) or (q.until and day > q.until):
                continue
            counts["in_window"] += 1
            if post.accepted_answer_id is None:
                continue
            counts["with_accepted_answer_id"] += 1
            candidates[post.id] = post
            wanted.add(str(post.accepted_answer_id))
    return candidates, answers, counts


def _second_pass(
    ctx: StageContext, src: QuestionReader, missing: set[str], answers: dict[int, Post], stats: ScanStats
) -> None:
    """An accepted answer can precede its question in some layouts (the dump: ids are not strictly creation-ordered
    after merges and migrations): one more pass that decodes only those answers into `answers`."""
    log.info("questions: %d accepted answers came before their question; second pass", len(missing))
    second = ScanStats()
    with _progress_bar(ctx, src.stream_size(), "questions: accepted answers") as bar:
        for post in src.scan(lambda _raw: False, missing.__contains__, second, bar.update):
            answers[post.id] = post
    stats.bytes_read += second.bytes_read


def summary(record: dict[str, Any]) -> str:
    return f"{record.get('kept', record.get('questions', '?'))} questions kept"


def public_record(ctx: StageContext, record: dict[str, Any], public: Collection[str]) -> dict[str, Any]:
    """What the record says of the questions `public` alone, as a build of only them would: how many were taken and
    their tags; of the source's counts only those the date window does not cut."""
    rows = read_table(QUESTIONS.path(ctx.work), ["query_id", "tags"]).to_pylist()
    tags = [r["tags"] for r in rows if r["query_id"] in public]
    q = ctx.config.questions
    counts = {k: record["counts"][k] for k in UNWINDOWED if k in record.get("counts", {})}
    return {
        **{k: record[k] for k in PUBLIC if k in record},
        "kept": len(tags),
        "counts": {**counts, "kept": len(tags)},
        "cooccurrence_top10": cooccurrence(tags, q.tags, q.cooccurrence_top_k)["cooccurring"][:10],
    }


def _table(kept: list[Post], answers: dict[int, Post]):
    import pyarrow as pa

    rows: dict[str, list] = {c: [] for c in COLUMNS}
    for post in kept:
        answer = answers[post.accepted_answer_id]
        rows["query_id"].append(str(post.id))
        rows["title"].append(post.title)
        rows["body"].append(html_to_text(post.body))
        rows["answer_id"].append(str(answer.id))
        rows["answer_text"].append(html_to_text(answer.body))
        rows["date"].append(post.date)
        rows["tags"].append(list(post.tags))
        rows["score"].append(post.score)
        rows["answer_score"].append(answer.score)
        rows["body_has_code"].append(has_code(post.body))
        rows["answer_has_code"].append(has_code(answer.body))
    schema = pa.schema(
        [
            ("query_id", pa.string()),
            ("title", pa.string()),
            ("body", pa.string()),
            ("answer_id", pa.string()),
            ("answer_text", pa.string()),
            ("date", pa.string()),
            ("tags", pa.list_(pa.string())),
            ("score", pa.int64()),
            ("answer_score", pa.int64()),
            ("body_has_code", pa.bool_()),
            ("answer_has_code", pa.bool_()),
        ]
    )
    return pa.table(rows, schema=schema)


def cooccurrence(tags: Iterable[Sequence[str]], topic_tags: tuple[str, ...], top_k: int) -> dict[str, Any]:
    """Tags seen with the topic's tags on kept questions (`tags`: each one's): count and share of questions, most
    frequent first."""
    per_question = [set(t) for t in tags]
    n = len(per_question)
    counter = Counter(t for question in per_question for t in question)

    def entry(tag: str) -> dict[str, Any]:
        return {"tag": tag, "count": counter[tag], "share": round(counter[tag] / n, 4) if n else 0.0}

    others = sorted((t for t in counter if t not in topic_tags), key=lambda t: (-counter[t], t))
    return {
        "questions": n,
        "topic_tags": [entry(t) for t in topic_tags],
        "top_k": top_k,
        "cooccurring": [entry(t) for t in others[:top_k]],
    }
