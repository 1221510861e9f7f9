"""Stage `write`: the topic the build keeps, with its candidate lists and the build's account, as a dataset repo.

It reads what the earlier stages left (`inputs.read_topic`, the `candidates` stage's lists, the stage records
the runner hands over), validates the topic in memory, and only then lands topic, candidates and account in one
atomic commit of the repo writer. An interrupted or failed build therefore leaves the previous repo exactly as
it was. The repo is public: it is written as the user's umask says (`owner_only.as_published`), while an
embargo's private revision, like everything else of a build, is readable by its owner alone. Under an embargo the
public manifest keeps the account of the public questions only (`pipeline.public_account`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.owner_only import as_published
from freshstack_hf.pipeline.accounting import StagePlan, snapshot_account
from freshstack_hf.pipeline.embargo import embargo_of
from freshstack_hf.pipeline.inputs import (
    CANDIDATE_LISTS,
    CARRYOVER,
    EMBARGOED_CANDIDATE_LISTS,
    EMBARGOED_CANDIDATES_RECORD,
    read_candidate_lists,
    read_topic,
)
from freshstack_hf.pipeline.public_account import public_entry
from freshstack_hf.pipeline.stage import StageContext
from freshstack_hf.repo.tables import candidates_table
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.topic_check import validate_topic

if TYPE_CHECKING:
    import pyarrow as pa

    from freshstack_hf.pipeline.planning.plan_facts import PlanFacts
    from freshstack_hf.topic import Topic

NAME = "write"
READS = (
    *("topic", "questions", "corpus", "nuggets", "pools", "judgments", "filter", "candidates", "snapshot"),
    *("embargo_days", "private_repo"),
)
VERSION = 4  # 2: a snapshot records its commits, window, reuse and carry-over; 3: candidates are a stage's; 4: embargo
OUTPUTS = ()  # the dataset repo at `ctx.out`, committed atomically by the writer, not a work-folder file


def manifest_entry(ctx: StageContext) -> tuple[dict[str, Any], dict[str, Any]]:
    """The topic's `source` and the rest of its manifest entry: the candidate lists' record, the build's account
    (the records of the stages that made the topic, and the definition they ran from) and, for a dated snapshot,
    its commits, reuse and carry-over. The `candidates` stage's record is the `candidates` entry, not repeated
    under `build`."""
    stages = {name: record for name, record in ctx.records.items() if name != "candidates"}
    judged_by = stages.get("judgments", {})
    source = {
        "kind": "build",
        "definition": ctx.config.path,
        "judged_by": judged_by.get("backend", "unknown"),
        "heuristic_judgments": judged_by.get("kind") == "offline",
    }
    entry = {
        "candidates": ctx.record("candidates")["candidates"],
        "build": {"definition": ctx.config.to_dict(), "stages": stages},
    }
    if ctx.config.snapshot.date:
        entry.update(snapshot_account(stages, ctx.config))
        carried = json.loads(CARRYOVER.path(ctx.work).read_text(encoding="utf-8"))
        if carried.get("previous"):
            entry["carryover"] = carried
    return source, entry


def run(ctx: StageContext) -> dict[str, Any]:
    source, entry = manifest_entry(ctx)
    topic = read_topic(ctx)
    problems = validate_topic(topic)
    if problems:
        raise ValidationError(problems, f"topic {topic.name!r} built in {ctx.work} is not valid; nothing was written")
    tables = candidate_tables(ctx, topic)
    private = _write_private(ctx, source, entry)
    if private is not None:
        source, entry = public_entry(ctx, source, entry, embargo_of(ctx.config), private["questions"])
        entry["embargo"] = private
    with as_published():
        extra = {topic.name: tables}
        write_topics(ctx.out, [topic], source=source, extra_tables=extra, extra_manifest={topic.name: entry})
    record = {
        "repo": str(ctx.out),
        "topic": topic.name,
        "queries": len(topic.queries),
        "nuggets": len(topic.nuggets),
        "docs": len(topic.docs),
        "judgments": len(topic.judgments),
        "candidate_quality": entry["candidates"]["quality"],
    }
    if private is not None:
        record["embargo"] = private
    return record


def candidate_tables(ctx: StageContext, topic: Topic, *, embargoed: bool = False) -> dict[str, pa.Table]:
    """The `candidates` stage's lists of `topic` (the kept questions, or with `embargoed` the embargoed ones) as the
    repo's tables, refused unless they are that topic's questions in its order: lists made before the last
    `filter`, or missing, are made again by the stage, never published stale."""
    files = (
        [*EMBARGOED_CANDIDATE_LISTS.values(), EMBARGOED_CANDIDATES_RECORD] if embargoed else CANDIDATE_LISTS.values()
    )
    made = all(file.path(ctx.work).is_file() for file in files)
    lists = read_candidate_lists(ctx, embargoed=embargoed) if made else None
    if lists is None or any(list(table) != topic.query_ids for table in lists.values()):
        which = "embargoed" if embargoed else "kept"
        raise FreshStackError(
            f"{ctx.work / 'candidates'}: the candidate lists are not those of the {which} questions; run "
            f"`freshstack-hf build {ctx.config.path} --out {ctx.out} --stages candidates,write` (or without --stages)"
        )
    return {stem: candidates_table(table) for stem, table in lists.items()}


def _write_private(ctx: StageContext, source: dict[str, Any], entry: dict[str, Any]) -> dict[str, Any] | None:
    """Under an embargo, the embargoed questions' topic (the same configs, corpus included, so the private revision
    is a repo that `evaluate` reads as is) with their candidate lists, made by the `candidates` stage as the public
    ones are and written as they are (the manifest's `candidates` their record), into `snapshot.private`, before the
    public revision; returns what the public manifest may say of it (how many, until when:
    `Embargo.public_summary`)."""
    embargo = embargo_of(ctx.config)
    if embargo is None:  # no embargo (a plain build with one is refused by `runner.run_build`)
        return None
    private = read_topic(ctx, embargoed=True)
    asked = [q.date for q in private.queries]
    summary = embargo.public_summary(asked)
    if private.queries:
        tables = candidate_tables(ctx, private, embargoed=True)
        ends = {q.query_id: embargo.ends(q.date) for q in private.queries}
        extra = {
            **entry,
            "candidates": json.loads(EMBARGOED_CANDIDATES_RECORD.path(ctx.work).read_text(encoding="utf-8")),
        }
        extra["embargo"] = {**summary, "snapshot": embargo.date, "public_revision": embargo.date, "ends": ends}
        write_topics(
            Path(ctx.config.snapshot.private),
            [private],
            source=source,
            extra_tables={private.name: tables},
            extra_manifest={private.name: extra},
        )
    return summary


def summary(record: dict[str, Any]) -> str:
    return f"{record['repo']}: {record['queries']} queries, {record['docs']} docs, {record['judgments']} judgments"


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    details = {"writes": str(ctx.out), "calls": 0, "then": "validate, then one atomic commit with the candidate lists"}
    return StagePlan(NAME, details)
