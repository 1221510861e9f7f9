"""Score one run (or compare two) on a dataset repo's topics: alpha-nDCG@10, Coverage@20, Recall@50.

Each value comes with a 95% bootstrap interval over queries; with two runs, the table adds the difference
B - A and a paired randomization test's p-value. Runs are TREC 6-column files or JSON {query: {doc: score}}
(`.gz` allowed). By default problems other than malformed lines (unknown queries or docs, repeated docs, runs
deeper than --max-depth) are repaired and reported as warnings; --strict refuses the run instead, as the
leaderboard does. A malformed run exits with status 2 and names every bad line. With --after DATE only the
questions asked strictly after that day are scored (a contamination window: a model's release or training
cutoff); the table and --json say how many questions of each topic that leaves. --json holds the headline measures
and every measure family at each --k cutoff, or the measures --measures names (any registered family, at any k).

Example:
  freshstack-hf evaluate out/freshstack --topic all --run runs/bm25.trec
  freshstack-hf evaluate out/freshstack --topic langchain --run bm25.trec --run dense.json --json -
  freshstack-hf evaluate out/freshstack --run bm25.trec --k 5,10,20,50,100 --json scores.json --strict
  freshstack-hf evaluate out/freshstack --run bm25.trec --measures ndcg@10,judged@20 --json -
  freshstack-hf evaluate out/freshstack --run my-llm.trec --after 2024-06-30
"""

from __future__ import annotations

import argparse
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from typing import Any

from freshstack_hf.cli.common import add_repo_argument, add_resampling_arguments, interval_cell, plural, resolve_topics
from freshstack_hf.cli.report import PAIRED_HEADER, add_json_argument, emit, paired_cells, report_document, scored_lines
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import FAMILIES, HEADLINE, measures_at, parse_measures, with_params
from freshstack_hf.metrics.engine import RunCoverageWarning
from freshstack_hf.metrics.measures import Measure
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.metrics.scoring import RunScores, compare_runs, comparison_json, scores_json
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import LoadedRun, load_run
from freshstack_hf.windows import parse_day


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, hub=True)
    p.add_argument("--run", action="append", required=True, metavar="RUN", help="run file; give twice to compare")
    extra = p.add_mutually_exclusive_group()
    extra.add_argument(
        "--k", default="10,20,50", help="cutoffs of the extra measures written to --json (default: 10,20,50)"
    )
    extra.add_argument(
        "--measures",
        metavar="LIST",
        help="the extra measures written to --json instead of every family at each --k, comma-separated, e.g. "
        f"ndcg@10,judged@20 (families: {', '.join(FAMILIES)})",
    )
    add_json_argument(p)
    p.add_argument("--strict", action="store_true", help="refuse runs with any problem (the leaderboard's rule)")
    p.add_argument("--max-depth", type=int, default=1000, help="most docs allowed per query (default: 1000)")
    p.add_argument("--alpha", type=float, default=0.5, help="alpha of alpha-nDCG (default: 0.5, as ndeval)")
    p.add_argument(
        "--after",
        metavar="YYYY-MM-DD",
        help="score only the questions asked strictly after this day (e.g. the model's training cutoff)",
    )
    add_resampling_arguments(p)


def run(args: argparse.Namespace) -> int:
    if len(args.run) > 2:
        raise FreshStackError("give one --run to score, or two to compare")
    if args.max_depth < 1 or args.resamples < 1 or not 0.0 <= args.alpha <= 1.0:
        raise FreshStackError("--max-depth and --resamples must be >= 1, --alpha within [0, 1]")
    extra = _measures(args.measures) if args.measures is not None else measures_at(_cutoffs(args.k), FAMILIES)
    headline = with_params(HEADLINE, alpha=args.alpha)  # alpha belongs to the measure, and travels with it
    measures = with_params([*HEADLINE, *extra], alpha=args.alpha)

    dataset = Dataset(args.repo, args.revision, topics=resolve_topics(args.repo, args.topic, args.revision))
    after = _window(dataset, args.after) if args.after else None
    loaded = _load_runs(args, dataset, depth=max(m.k for m in measures))
    scores = _score(args, dataset, loaded, measures, headline, after)
    tests = None
    if len(scores) == 2:
        tests = compare_runs(scores[0], scores[1], headline, resamples=args.resamples, seed=args.seed)

    if args.json != "-" and after is not None:
        for topic in dataset.topics:
            print(f"{topic}: {dataset.window(topic, after).describe()}")
    emit(
        lambda: render_table([(item.name, item.source) for item in loaded], scores, tests, headline),
        lambda: _report(args, dataset, loaded, scores, tests, measures, after),
        args.json,
    )
    return 0


def _load_runs(args: argparse.Namespace, dataset: Dataset, depth: int) -> list[LoadedRun]:
    """Each --run read and checked against the dataset (its ids read meanwhile), its warnings printed; a run that
    ranks nothing for any of the dataset's queries is refused.

    Every measure at cutoff k reads a query's top k under the tie rule and nothing below, so each query is kept to
    the deepest cutoff asked (`depth`): the same scores, from a tenth of a 1,000-deep run's rows as Python objects."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(dataset.warm)  # ids, judgments and revision read while the runs are parsed (Arrow, no GIL)
        loaded = [
            load_run(
                path,
                query_ids=dataset.query_ids,  # called once the file is read; waits for `warm` to have read them
                doc_ids=dataset.doc_ids,
                max_depth=args.max_depth,
                strict=args.strict,
                keep=depth,
            )
            for path in args.run
        ]
    for item in loaded:
        for warning in item.warnings:
            print(f"warning: {item.source}: {warning}", file=sys.stderr)
        if not any(item.run.values()):
            raise FreshStackError(
                f"{item.source}: the run ranks no document for any query of {plural(len(dataset.topics), 'topic')} "
                f"({', '.join(dataset.topics)}); check that its query ids are this dataset's (an empty run scores 0)"
            )
    return loaded


def _score(
    args: argparse.Namespace,
    dataset: Dataset,
    loaded: list[LoadedRun],
    measures: tuple[Measure, ...],
    headline: tuple[Measure, ...],
    after: date | None,
) -> list[RunScores]:
    """Each run's scores, and one warning per run and topic counting the judged queries it does not rank."""
    options = {"interval_measures": headline, "resamples": args.resamples, "seed": args.seed}
    with warnings.catch_warnings():  # the missing queries are reported below, per run and topic, with counts
        warnings.simplefilter("ignore", RunCoverageWarning)
        scores = [dataset.score(item.run, measures=measures, after=after, **options) for item in loaded]
    for item, s in zip(loaded, scores, strict=True):
        for topic, missing in s.missing.items():
            if missing:
                judged = len(s.topics[topic].per_query)
                print(
                    f"warning: {item.source}: {missing} of {judged} judged queries of topic {topic!r} have no "
                    "ranking in the run; they score 0",
                    file=sys.stderr,
                )
    return scores


def _report(
    args: argparse.Namespace,
    dataset: Dataset,
    loaded: list[LoadedRun],
    scores: list[RunScores],
    tests: dict[str, dict[str, Any]] | None,
    measures: tuple[Measure, ...],
    after: date | None,
) -> dict[str, Any]:
    """The --json document: each run's full-precision scores (and the comparison of two) with the settings."""
    report = [
        {"run": {"name": item.name, "path": item.source, "warnings": list(item.warnings)}, **scores_json(s)}
        for item, s in zip(loaded, scores, strict=True)
    ]
    settings = {
        "measures": [m.spec for m in measures],
        "resamples": args.resamples,
        "seed": args.seed,
        "strict": args.strict,
        "dataset_revision": dataset.revision,
    }
    if after is not None:
        settings["after"] = after.isoformat()
        settings["window"] = {t: dataset.window(t, after).counts() for t in dataset.topics}
    return report_document(report, "runs", None if tests is None else comparison_json(tests), settings)


def _window(dataset, text: str):
    """`--after` as a date, checked against every topic before anything is scored or written."""
    after = parse_day(text, "--after")
    empty = [w for w in (dataset.window(t, after) for t in dataset.topics) if not w.asked]
    if empty:
        said = "; ".join(f"{w.topic}: {w.describe()}" for w in empty)
        raise FreshStackError(
            f"--after {after.isoformat()}: no judged question was asked after that day in {said}; give an earlier "
            "--after, or leave such topics out with --topic"
        )
    return after


def _cutoffs(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        ks = []
    if not ks or min(ks) < 1:
        raise FreshStackError(f"--k {text!r}: give comma-separated cutoffs >= 1, e.g. 10,20,50")
    return sorted(set(ks))


def _measures(text: str):
    """`--measures` parsed, an unknown family named with the registered ones (`metrics.measures.FAMILIES`)."""
    try:
        measures = parse_measures(text)
    except FreshStackError as exc:
        raise FreshStackError(f"--measures: {exc}") from None
    if not measures:
        raise FreshStackError(f"--measures {text!r}: give comma-separated measures, e.g. ndcg@10,judged@20")
    return measures


def render_table(runs, scores, tests=None, headline=None) -> str:
    """The headline table: one row per topic (plus the average); with two runs, one row per topic and measure."""
    shown = HEADLINE if headline is None else headline

    lines = scored_lines("run", runs)
    first = scores[0]
    scopes = [*first.topics, AVERAGE] if first.average else list(first.topics)

    def size(scope: str) -> str:
        return plural(len(first.topics), "topic") if scope == AVERAGE else f"{len(first.topics[scope].per_query)} q"

    def value(s, scope: str, m: str) -> float:
        return s.average[m] if scope == AVERAGE else s.topics[scope].metrics[m]

    width = max([len(s) for s in scopes] + [5])
    if tests is None:
        header = f"{'topic':<{width}}  {'size':>9}  " + "  ".join(f"{m.name:<21}" for m in shown)
        lines += ["", header.rstrip()]
        for scope in scopes:
            cells = [interval_cell(value(first, scope, m.id), first.intervals.get(scope, {}).get(m.id)) for m in shown]
            lines.append(f"{scope:<{width}}  {size(scope):>9}  " + "  ".join(f"{c:<21}" for c in cells).rstrip())
        return "\n".join(lines)
    lines += ["", f"{'topic':<{width}}  {'measure':<11}  {PAIRED_HEADER}"]
    for scope in scopes:
        for i, m in enumerate(shown):
            a, b = (interval_cell(value(s, scope, m.id), s.intervals.get(scope, {}).get(m.id)) for s in scores)
            label = scope if i == 0 else ""
            lines.append(f"{label:<{width}}  {m.name:<11}  {paired_cells(a, b, tests[scope][m.id])}")
    return "\n".join(lines)
