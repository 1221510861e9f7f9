"""What a public revision says of a build with an embargo: the account of its public questions, and no more.

A manifest keeps the build's account, stage by stage, so a reader can tell how a topic was made. Under an embargo
that account, as the stages record it, counts every question the build took, the embargoed ones too: `filter.kept`
3 beside 2 public queries, `judgments.supported_pairs` 16 beside 6 tells how many of the embargoed questions'
pairs are relevant. And it names where the build ran: the private repo, the folder it was staged in, the work
folder, the definition's path. The public revision may say how many questions are embargoed and until when (the
`embargo` entry, `Embargo.public_summary`); so its manifest (and the card and drift report made from it) gets
`public_entry`'s account instead:

- each stage that counts questions says what it counts of the public questions alone (its `public_record`, by the
  same `tally` rule its record uses), beside its settings and backend; the public questions are those taken and
  not embargoed, so the counts are those a build of only them makes;
- what is not told apart per question (LLM calls, tokens and cost, cache hits, judgment pairs an earlier snapshot
  answered, timings) is left to the private revision's manifest, which keeps the whole account;
- no private repo, staged folder or local absolute path (nor `file:` URL): a path is named by its last part.

A snapshot whose embargo holds no question has nothing to hide but where it ran: its counts stay whole.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from freshstack_hf.pipeline.embargo import Embargo
from freshstack_hf.pipeline.inputs import QUESTIONS
from freshstack_hf.pipeline.stage import StageContext, read_table
from freshstack_hf.pipeline.stages import stage_module

KEPT = ("stage", "fingerprint", "finished_at", "backend", "kind")  # what every stage's public record keeps
REUSE = ("files_reused", "files_chunked")  # the corpus's reuse: no question changes it


def public_entry(
    ctx: StageContext, source: dict[str, Any], entry: dict[str, Any], embargo: Embargo, held: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`source` and `entry` (the topic's manifest entry, as `stages.write` makes it) as the public revision of a
    snapshot with `embargo`, of which `held` questions are embargoed, keeps them."""
    definition = {k: v for k, v in entry["build"]["definition"].items() if k != "private_repo"}
    definition["snapshot"] = {k: v for k, v in definition["snapshot"].items() if k != "private"}
    build = {**entry["build"], "definition": definition}
    entry = {**entry, "build": build}
    if held:
        public = public_questions(ctx, embargo)
        build["stages"] = {name: public_record(ctx, name, record, public) for name, record in build["stages"].items()}
        if "reuse" in entry:
            entry["reuse"] = {k: v for k, v in entry["reuse"].items() if k in REUSE}
    return without_paths(source), without_paths(entry)


def public_questions(ctx: StageContext, embargo: Embargo) -> set[str]:
    """The questions the build took that the embargo does not hold: a build of only these counts what the public
    revision says (it takes them as the embargoed build did: same source, same window start)."""
    rows = read_table(QUESTIONS.path(ctx.work), ["query_id", "date"]).to_pylist()
    return {r["query_id"] for r in rows if not embargo.holds(r["date"])}


def public_record(ctx: StageContext, name: str, record: dict[str, Any], public: Collection[str]) -> dict[str, Any]:
    """One stage's record as the public revision keeps it: a stage whose record counts questions says what it counts
    of `public` alone (`public_record` of its module); one that counts none (the corpus) is kept whole."""
    count = getattr(stage_module(name), "public_record", None)
    if count is None:
        return record
    kept = {k: record[k] for k in KEPT if k in record}
    if "usage" in record:
        kept["usage"] = settings_only(record["usage"])
    return {**kept, **count(ctx, record, public)}


def settings_only(usage: Any) -> Any:
    """A stage's LLM usage without its numbers (calls, tokens, cost: over every question), keeping how it was made
    (the offline judge's rule and its measured agreement, which the card quotes)."""
    if isinstance(usage, dict):
        return {k: settings_only(v) for k, v in usage.items() if isinstance(v, dict | str | bool)}
    return usage


def without_paths(value: Any) -> Any:
    """`value` with every local absolute path (or `file:` URL) replaced by its last part (a file's name, a folder's):
    where a build ran on the maintainer's machine is nobody's business, and a private repo's folder names it."""
    if isinstance(value, str):
        if value.startswith("file://"):  # a corpus cloned from a folder of this machine
            return Path(urlparse(value).path).name
        return Path(value).name if os.path.isabs(value) else value
    if isinstance(value, dict):
        return {k: without_paths(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [without_paths(v) for v in value]
    return value
