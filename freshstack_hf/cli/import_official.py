"""Convert the official FreshStack release (queries-oct-2024 / corpus-oct-2024 schema) into a dataset repo.

Sources are local parquet files or folders, or Hub dataset ids (read with `datasets`). The conversion is
lossless: `export-official` writes the same tables back.

Problems in the source data (a nugget without a relevant document, a judged id missing from the corpus, ...)
are warnings: the topic is written as given, the problems are listed, and the exit code is 0 (`validate`
reports them too, and `publish` refuses the repo until they are fixed). With --strict the topic is checked
first and nothing is written if it has a problem (exit 2). An unreadable source or a missing column always
stops the import before anything is written (exit 2).

Example:
  freshstack-hf import-official --queries queries.parquet --corpus corpus.parquet --topic langchain --out out/freshstack
  freshstack-hf import-official --queries freshstack/queries-oct-2024 --corpus freshstack/corpus-oct-2024 \\
      --topic langchain --out out/freshstack --revision main
"""

from __future__ import annotations

import argparse
import sys

from freshstack_hf.cli.common import plural
from freshstack_hf.errors import format_problems
from freshstack_hf.repo.official import import_official
from freshstack_hf.split_stats import topic_stats
from freshstack_hf.topic import check_topic_name
from freshstack_hf.topic_check import validate_topic


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--queries", required=True, help="queries: parquet file/folder or Hub id")
    p.add_argument("--corpus", required=True, help="corpus: parquet file/folder or Hub id")
    p.add_argument("--topic", required=True, help="topic name (the official config name, e.g. langchain)")
    p.add_argument("--out", required=True, help="dataset repo folder to create or update")
    p.add_argument("--queries-split", default="test", help="split of a Hub queries dataset (default test)")
    p.add_argument("--corpus-split", default="train", help="split of a Hub corpus dataset (default train)")
    p.add_argument("--revision", default=None, help="Hub revision to pin (default: main)")
    check = p.add_mutually_exclusive_group()
    check.add_argument("--strict", action="store_true", help="write nothing if the topic has any problem (exit 2)")
    check.add_argument("--no-validate", action="store_true", help="skip the check of the imported topic")


def run(args: argparse.Namespace) -> int:
    check_topic_name(args.topic)
    topic = import_official(
        args.queries,
        args.corpus,
        args.topic,
        args.out,
        queries_split=args.queries_split,
        corpus_split=args.corpus_split,
        revision=args.revision,
        strict=args.strict,
    )
    s = topic_stats(topic)
    counts = f"{plural(s.queries, 'query', 'queries')}, {plural(s.corpus, 'doc')}, {plural(s.nuggets, 'nugget')}"
    print(f"imported {args.topic}: {counts} -> {args.out}")
    problems = [] if args.no_validate or args.strict else validate_topic(topic)  # --strict checked before writing
    if problems:
        title = (
            f"warning: {args.out} was written, but topic {args.topic} has problems in its source data "
            f"(`freshstack-hf validate` reports them too; `publish` refuses the repo until they are fixed; "
            f"--strict writes nothing instead)"
        )
        print(format_problems(problems, title), file=sys.stderr)
    return 0
