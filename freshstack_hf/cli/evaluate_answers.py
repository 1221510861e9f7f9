"""Score generated answers (RAG) against a dataset repo's nuggets: by citation, exactly, and by a nugget judge.

Answer files are TREC RAG 2024 JSONL (`topic_id`, `run_id`, `references`, `answer` = sentences with `citations`
indexing `references`) or JSON `{query_id: {"text": ..., "citations": [doc ids]}}`. They are checked strictly:
any unknown query or doc id, citation index out of range, empty answer or answer over --max-words exits with
status 2, every problem listed with its line, and nothing written.

Citation recall, citation precision and the unjudged share come from the topic's judgments, with no model. All
and Vital (TREC RAG's nugget scores, strict and with half credit for partial support) come from a judge: an
OpenAI-compatible endpoint (--judge-base-url, --judge-model; key from $OPENAI_API_KEY or --judge-api-key-env),
its answers cached so a second scoring makes no request, or with no endpoint the offline word-overlap
heuristic, whose numbers are indicative only (the output says which judge made them). Vital appears only for
topics whose nuggets are graded vital/okay. With two files, the table adds B - A and a paired test's p-value.

Example:
  freshstack-hf evaluate-answers out/freshstack --answers answers.jsonl --offline
  freshstack-hf evaluate-answers out/freshstack --topic langchain --answers a.jsonl --answers b.json --json -
  freshstack-hf evaluate-answers out/freshstack --answers a.jsonl --judge-base-url http://localhost:8000/v1 \\
      --judge-model Qwen/Qwen2.5-7B-Instruct --json scores.json
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from freshstack_hf.answers import compare_answers, make_judge, read_answers, score_answers
from freshstack_hf.answers.answer_set import AnswerSet
from freshstack_hf.answers.judge import OFFLINE_NAME
from freshstack_hf.answers.measures import BY_ID
from freshstack_hf.answers.scores import AnswerScores, answers_json
from freshstack_hf.cli.common import add_repo_argument, add_resampling_arguments, interval_cell, resolve_topics
from freshstack_hf.cli.report import PAIRED_HEADER, add_json_argument, emit, paired_cells, report_document, scored_lines
from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.metrics.scoring import comparison_json
from freshstack_hf.metrics.uncertainty import PairedTest
from freshstack_hf.repo.dataset import Dataset


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, hub=True)
    p.add_argument("--answers", action="append", required=True, metavar="FILE", help="answer file; twice to compare")
    judge = p.add_argument_group("judge (All / Vital)")
    judge.add_argument(
        "--judge-base-url",
        default=os.environ.get("FRESHSTACK_LLM_BASE_URL", ""),
        metavar="URL",
        help="OpenAI-compatible endpoint of the judge (default: $FRESHSTACK_LLM_BASE_URL; none = offline)",
    )
    judge.add_argument(
        "--judge-model",
        default=os.environ.get("FRESHSTACK_LLM_MODEL", ""),
        metavar="M",
        help="the judge's model name (default: $FRESHSTACK_LLM_MODEL)",
    )
    judge.add_argument(
        "--judge-api-key-env", default="OPENAI_API_KEY", metavar="VAR", help="variable holding the endpoint's key"
    )
    judge.add_argument("--offline", action="store_true", help="use the offline word-overlap judge (no endpoint)")
    judge.add_argument("--no-judge", action="store_true", help="citation scores only")
    judge.add_argument("--concurrency", type=int, default=8, help="judge requests in flight at once (default: 8)")
    judge.add_argument(
        "--cache", metavar="PATH", help="judge response cache (default: $FRESHSTACK_CACHE/llm/answer-judge.sqlite)"
    )
    p.add_argument("--max-words", type=int, default=400, help="longest answer accepted, in words (default: 400)")
    add_json_argument(p)
    add_resampling_arguments(p)


def run(args: argparse.Namespace) -> int:
    if len(args.answers) > 2:
        raise FreshStackError("give one --answers file to score, or two to compare")
    if args.max_words < 1 or args.resamples < 1 or args.concurrency < 1:
        raise FreshStackError("--max-words, --resamples and --concurrency must be >= 1")
    if args.offline and args.no_judge:
        raise FreshStackError("--offline and --no-judge contradict each other: pick one")
    base_url = "" if args.offline or args.no_judge else args.judge_base_url.strip()
    if base_url and not args.judge_model.strip():  # before any file is read: a typo costs nothing
        raise FreshStackError(f"a judge endpoint ({base_url}) needs a model name: pass --judge-model")

    names = resolve_topics(args.repo, args.topic, args.revision)
    dataset = Dataset(args.repo, args.revision)
    topics = [dataset.topic(name) for name in names]
    loaded = _read_all(args.answers, dataset, names, args.max_words)
    new_judge = _judge_maker(args, base_url)
    options = {"resamples": args.resamples, "seed": args.seed}
    scores = [score_answers(topics, item, new_judge(), **options) for item in loaded]
    if args.json == "-":  # the table, which names the judge, is not printed: say it on stderr
        print(f"judge: {describe_judge(scores[0].judge)}", file=sys.stderr)
    tests = compare_answers(*scores, resamples=args.resamples, seed=args.seed) if len(scores) == 2 else None

    settings = {"max_words": args.max_words, "resamples": args.resamples, "seed": args.seed}
    emit(
        lambda: render_table(scores, tests),
        lambda: report_document(
            [answers_json(s) for s in scores], "files", None if tests is None else comparison_json(tests), settings
        ),
        args.json,
    )
    return 0


def _read_all(paths: Sequence[str], dataset: Dataset, names: Sequence[str], max_words: int) -> list[AnswerSet]:
    """Every answer file read and checked before any is scored, so one run reports the problems of all of them.

    A whole-dataset file scored on some topics has its answers to the other topics' queries left out (and said),
    not refused."""
    query_ids, doc_ids = dataset.query_ids(names), dataset.doc_ids(names)
    others = dataset.query_ids([t for t in dataset.topics if t not in names])
    loaded, problems = [], []
    for path in paths:
        try:
            item = read_answers(path, query_ids=query_ids, doc_ids=doc_ids, max_words=max_words, other_query_ids=others)
        except ValidationError as exc:
            problems += exc.problems
            continue
        loaded.append(item)
        if item.skipped:
            print(f"note: {path}: {item.skipped} answer(s) to other topics' queries left out", file=sys.stderr)
    if problems:
        raise ValidationError(problems, title="answers refused, nothing scored")
    return loaded


def _judge_maker(args: argparse.Namespace, base_url: str) -> Callable[[], Any]:
    """A maker of one judge per file, so each file's judge stats are its own (the response cache is shared)."""

    def new_judge() -> Any:
        if args.no_judge:
            return None
        if not base_url:
            return make_judge()
        options = {"api_key_env": args.judge_api_key_env, "max_concurrency": args.concurrency}
        return make_judge(base_url, args.judge_model.strip(), args.cache, **options)

    return new_judge


def render_table(scores: Sequence[AnswerScores], tests: Mapping[str, Mapping[str, PairedTest]] | None = None) -> str:
    """One row per topic and measure: value [95% interval]; with two files, A, B, B-A and the paired p-value."""

    def cell(s: AnswerScores, scope: str, m: str) -> str | None:
        values = s.average if scope == AVERAGE else s.topics[scope].metrics
        return interval_cell(values[m], s.intervals.get(scope, {}).get(m)) if m in values else None

    lines = scored_lines("answers", [(s.name, s.source) for s in scores])
    first = scores[0]
    lines.append(f"judge: {describe_judge(first.judge)}")
    scopes = [*first.topics, AVERAGE] if len(first.topics) > 1 and first.average else list(first.topics)
    width = max([len(s) for s in scopes] + [5])
    if len(scores) == 1:
        lines += ["", f"{'topic':<{width}}  {'size':>6}  {'measure':<14}  value [95% CI]"]
    else:
        lines += ["", f"{'topic':<{width}}  {'size':>6}  {'measure':<14}  {PAIRED_HEADER}"]
    for scope in scopes:
        size = f"{len(first.topics)} t" if scope == AVERAGE else f"{len(first.topics[scope].per_query)} q"
        shown = False
        for m in first.measures():
            cells = [cell(s, scope, m) for s in scores]
            if cells[0] is None:
                continue
            head = f"{scope if not shown else '':<{width}}  {size if not shown else '':>6}  {BY_ID[m].name:<14}"
            shown = True
            if len(scores) == 1:
                lines.append(f"{head}  {cells[0]}")
                continue
            lines.append(f"{head}  {paired_cells(cells[0], cells[1], (tests or {}).get(scope, {}).get(m))}")
    return "\n".join(lines)


def describe_judge(name: str | None) -> str:
    """A plain line on who made the nugget scores, with a warning for the offline heuristic."""
    if name is None:
        return "none (citation scores only)"
    if name == OFFLINE_NAME:
        return f"{name} (word overlap, no LLM: All and Vital are indicative only)"
    return name
