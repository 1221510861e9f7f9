"""Convert the official FreshStack release (queries-oct-2024 / corpus-oct-2024 schema) into a dataset repo.

Sources are local parquet files or folders, or Hub dataset ids (read with `datasets`). The conversion is
lossless: `export-official` writes the same tables back.

Example:
  freshstack-hf import-official --queries queries.parquet --corpus corpus.parquet --topic langchain --out out/freshstack
  freshstack-hf import-official --queries freshstack/queries-oct-2024 --corpus freshstack/corpus-oct-2024 \\
      --topic langchain --out out/freshstack --revision main
"""

from __future__ import annotations

import argparse

NAME = "import-official"
HELP = "import the official FreshStack release schema into a dataset repo"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--queries", required=True, help="queries: parquet file/folder or Hub id")
    p.add_argument("--corpus", required=True, help="corpus: parquet file/folder or Hub id")
    p.add_argument("--topic", required=True, help="topic name (the official config name, e.g. langchain)")
    p.add_argument("--out", required=True, help="dataset repo folder to create or update")
    p.add_argument("--queries-split", default="test", help="split of a Hub queries dataset (default test)")
    p.add_argument("--corpus-split", default="train", help="split of a Hub corpus dataset (default train)")
    p.add_argument("--revision", default=None, help="Hub revision to pin (default: main)")
    p.add_argument("--no-validate", action="store_true", help="skip validation of the imported topic")


def run(args: argparse.Namespace) -> int:
    from freshstack_hf.errors import ValidationError
    from freshstack_hf.official import import_official
    from freshstack_hf.stats import topic_stats
    from freshstack_hf.topic import check_topic_name
    from freshstack_hf.validate import validate_topic

    check_topic_name(args.topic)
    topic = import_official(
        args.queries,
        args.corpus,
        args.topic,
        args.out,
        queries_split=args.queries_split,
        corpus_split=args.corpus_split,
        revision=args.revision,
    )
    s = topic_stats(topic)
    print(f"imported {args.topic}: {s.queries} queries, {s.corpus:,} docs, {s.nuggets} nuggets -> {args.out}")
    if not args.no_validate:
        problems = validate_topic(topic)
        if problems:
            raise ValidationError(problems, f"imported topic {args.topic} has problems (it was written)")
    return 0
