"""`--dry-run`: what a build or a dated snapshot would reuse and ask, before paying: the sum of its stages' plans.

One source of truth for calls and tokens: each stage says what it would send (`plan(ctx, facts)` in its module), told
what is known before building (`pipeline.planning.plan_facts`: the questions, the work folder's caches, the documents,
the previous snapshot's figures), and a plan here only adds them up. `build --dry-run` prints each stage's plan, `build
--snapshot D --dry-run` and `refresh` (which refuses a plan over its budget) the snapshot's sum.

Nothing is written to the work folder or the repo. The commits come from the repositories' history (a clone URL
the work folder holds no clone of yet is cloned into the plan's scratch folder, removed afterwards), the questions
from one scan of the source into a temporary folder.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.accounting import Price, StageEstimate, StagePlan
from freshstack_hf.pipeline.backends import QA
from freshstack_hf.pipeline.build_prompts import nugget_messages
from freshstack_hf.pipeline.config.topic import TopicConfig
from freshstack_hf.pipeline.embargo import embargo_of
from freshstack_hf.pipeline.inputs import CHUNKS, QUESTIONS, read_qas
from freshstack_hf.pipeline.planning.embargo_plan import plan_notes
from freshstack_hf.pipeline.planning.plan_facts import PlanFacts, Previous, read_repositories, work_facts
from freshstack_hf.pipeline.stage import StageContext
from freshstack_hf.pipeline.stages import ORDER, questions, stage_module
from freshstack_hf.pipeline.work_folder import snapshot_work
from freshstack_hf.repo.revisions import revision_of

LLM_STAGES = ("nuggets", "pools", "judgments")


@dataclass(frozen=True)
class SnapshotPlan:
    """One topic's snapshot at a date: its questions (carried from the previous snapshot, new), its repositories'
    files, and every stage's plan; its calls, tokens and price are the sums of the stages' estimates."""

    date: str
    previous: str
    questions: int
    carried: int
    newest_post: str
    repositories: dict[str, dict[str, Any]]
    stages: tuple[StagePlan, ...]
    carried_cached: bool = True  # the carried questions' requests cost nothing (false: the work folder lacks them)
    embargo: dict[str, Any] | None = None  # `planning.embargo_plan.plan_notes`: the split, until when, the notes

    @property
    def estimate(self) -> StageEstimate:
        """The LLM stages' estimates added up (their tokens unknown where one's are)."""
        parts = [s.estimate for s in self.stages if s.estimate is not None]
        total = parts[0] if parts else StageEstimate(0)
        for part in parts[1:]:
            total = total + part
        return total

    @property
    def price(self) -> Price:
        return Price.total(s.price for s in self.stages)

    def stage(self, name: str) -> StagePlan | None:
        return next((s for s in self.stages if s.stage == name), None)

    def as_dict(self) -> dict[str, Any]:
        """The plan as `--json` writes it and a refresh's manifest keeps it."""
        e, files = self.estimate, self.repositories.values()
        out: dict[str, Any] = {
            "date": self.date,
            "previous": self.previous,
            "questions": self.questions,
            "questions_carried": self.carried,
            "questions_new": self.questions - self.carried,
            "source_newest_post": self.newest_post,
            "repositories": self.repositories,
            "files_reused": sum(f["unchanged"] for f in files),
            "files_to_chunk": sum(f["changed"] + f["added"] for f in files),
            "calls": e.calls,
            "requests": e.requests,
            "cached": e.cached,
            "est_input_tokens": e.input_tokens,
            "est_output_tokens": e.output_tokens,
            "est_cost_usd": None if self.price.usd is None else round(self.price.usd, 2),
            "stages": {s.stage: s.as_dict() for s in self.stages if s.stage in LLM_STAGES},
        }
        if self.price.usd is None:
            out["no_price"] = self.price.reason
        if self.embargo is not None:
            out["embargo"] = self.embargo
        return out

    def summary(self) -> str:
        """The plan's line: what is reused, what is asked, at what price."""
        e, files = self.estimate, self.as_dict()
        judgments = self.stage("judgments")
        for_carried = judgments.details.get("calls_for_carried", 0) if judgments else 0
        sent = None if e.requests is None else e.requests - e.cached
        tokens = f"~{e.input_tokens:,} input / {e.output_tokens:,} output tokens" if e.input_tokens is not None else ""
        cached = "cached" if self.carried_cached else "not cached: no work folder"
        return (
            f"  questions: {self.questions} ({self.carried} carried over, {cached}; {self.questions - self.carried} "
            f"new); files: {files['files_reused']} unchanged (chunks reused), {files['files_to_chunk']} to chunk; "
            f"LLM requests: about {sent} ({for_carried} for carried questions' changed documents), {tokens}"
            + (f", ~${round(self.price.usd, 2)}" if self.price.usd else "")
            + (" (offline backend: no paid call)" if e.offline else "")
            + self._embargo_lines()
        )

    def _embargo_lines(self) -> str:
        """The embargo's lines of the plan: the split of the questions taken, then each note."""
        if self.embargo is None:
            return ""
        m = self.embargo
        until = f" until {m['until']}" if m["until"] else ""
        lines = [
            f"\n  embargo: {m['days']} days: of the {self.questions} questions taken, {m['questions']} (asked after "
            f"{m['start']}) go to the private repo {m['private_repo']}{until} and {m['public']} to the public revision"
        ]
        return "".join(lines + [f"\n  note: {note}" for note in m["notes"]])


def scan_questions(config: TopicConfig) -> tuple[list[QA], dict[str, str], str]:
    """The questions the build would take (with their dates) and the date of the newest post in the source (any
    tag): one scan into a folder that is then removed."""
    with tempfile.TemporaryDirectory(prefix="freshstack-plan-") as tmp:
        ctx = StageContext(config, Path(tmp), Path(tmp) / "repo", show_progress=False, dry_run=True)
        ctx.dir("questions")
        record = questions.run(ctx)
        rows = pq.read_table(QUESTIONS.path(ctx.work), columns=["query_id", "date"]).to_pylist()
        qas = read_qas(ctx)
    return qas, {r["query_id"]: r["date"][:10] for r in rows}, record.get("newest_post", "")


def plan_snapshot(
    config: TopicConfig,
    out: Path,
    shared: Path,
    echo: Callable[[str], None] = print,
    scratch: Path | None = None,
    built_before: bool = False,
) -> SnapshotPlan:
    """What building the snapshot `config` into the revision folder `out` would reuse and ask, its work shared in
    `shared`; `scratch` takes the clones it needs; `built_before`: the previous snapshot is built just before this
    one by the same command (see `PlanFacts`)."""
    previous = Path(config.snapshot.previous) if config.snapshot.previous else None
    previous_date = revision_of(previous) if previous else ""
    qas, dates, newest = scan_questions(config)
    carried = frozenset(q for q, d in dates.items() if previous_date and d <= previous_date)
    with tempfile.TemporaryDirectory(prefix="freshstack-plan-") as tmp:
        repositories, documents = read_repositories(config, shared, scratch or Path(tmp), Path(tmp))
    ctx = StageContext(config, snapshot_work(shared, config.snapshot.date), out, dry_run=True, shared_dir=shared)
    known = {"questions": qas, "carried": carried, "documents": documents, "repositories": repositories}
    previous_figures = Previous.of(previous, config.topic)
    with work_facts(config, shared, previous=previous_figures, built_before=built_before, **known) as facts:
        stages = tuple(stage_module(name).plan(ctx, facts) for name in ORDER)
        carried_cached = config.llm.offline or all(
            facts.answered(qa.query_id, nugget_messages(qa)) for qa in qas if qa.query_id in carried
        )
    embargo = embargo_of(config)
    notes = plan_notes(embargo, list(dates.values()), previous_date, config.private_repo) if embargo else None
    plan = SnapshotPlan(
        config.snapshot.date, previous_date, len(qas), len(carried), newest, repositories, stages, carried_cached, notes
    )
    echo(plan.summary())
    return plan


@contextlib.contextmanager
def _build_facts(ctx: StageContext, wanted: list[str]) -> Iterator[PlanFacts | None]:
    """What a plain build's plan can know without doing the build's own work: the questions once the work folder
    holds them, and the documents once the corpus stage has run (its clones are then in the cache). Before that the
    plan reads no question source and clones nothing (a Stack Overflow dump is 100 GB: scanning it is the questions
    stage itself), so the LLM stages' tokens are unknown; `build --stages questions,corpus` first makes them exact.
    A snapshot's plan (`plan_snapshot`) does scan and clone: a refresh must know its price before it pays."""
    if not set(wanted) & set(LLM_STAGES) or not QUESTIONS.path(ctx.work).is_file():
        yield None
        return
    known: dict[str, Any] = {"questions": read_qas(ctx)}
    if CHUNKS.path(ctx.work).is_file():
        try:
            with tempfile.TemporaryDirectory(prefix="freshstack-plan-") as tmp:
                known["repositories"], known["documents"] = read_repositories(
                    ctx.config, ctx.shared, Path(tmp), Path(tmp)
                )
        except FreshStackError:
            pass
    with work_facts(ctx.config, ctx.shared, **known) as facts:
        yield facts


def plan_build(ctx: StageContext, wanted: list[str]) -> dict[str, StagePlan]:
    """`build --dry-run`: each wanted stage's plan, from the same facts."""
    with _build_facts(ctx, wanted) as facts:
        return {name: stage_module(name).plan(ctx, facts) for name in wanted}
