"""Runs the build stages in order, skipping those already done with the same inputs; and a topic's snapshots.

A stage's fingerprint hashes the config sections and the earlier stages' fingerprints it reads (its `READS`),
plus its code version. A finished stage leaves `record.json` with that fingerprint; on the next run the stage
is skipped when the fingerprint is unchanged (`resume`, the default), and re-run otherwise, which in turn
changes the fingerprints after it. So editing `judging:` re-judges and re-filters but re-parses no dump, and
the LLM cache makes re-running a stage free of calls for every request it has seen.

The runner holds the record of every stage it ran or found done, as stored, and hands a stage the records of
the stages before it (`StageContext.records`): nothing under `pipeline/` needs to import the runner back. Where a
work folder lies, and its lock, are `pipeline.work_folder`'s, below the planners, so the runner imports the planners
(for `--dry-run`) and none of them imports it.
Dated snapshots (`run_snapshots`) are builds of one definition cut at several dates (`pipeline.snapshots`).

A work folder is private (`freshstack_hf.owner_only`): whatever a build makes in it, the clones, stage outputs,
memos, LLM cache and any private revision, is readable by its owner alone, with or without an embargo (it holds
paid answers either way). Only the public revision is made as the user's umask says, and so is the folder the
repo sits in, made before the private block starts so that it never ends up 0700 for having been made first for
the work folder beside it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.owner_only import owner_only
from freshstack_hf.pipeline.choose import effective_config
from freshstack_hf.pipeline.config.embargo_settings import private_base
from freshstack_hf.pipeline.config.topic import TopicConfig
from freshstack_hf.pipeline.inputs import REPO_CACHE
from freshstack_hf.pipeline.planning.snapshot_plan import plan_build, plan_snapshot
from freshstack_hf.pipeline.snapshots import check_snapshots, previous_revision, snapshot_config
from freshstack_hf.pipeline.stage import StageContext, write_json
from freshstack_hf.pipeline.stages import ORDER, stage_module
from freshstack_hf.pipeline.work_folder import default_work_dir, snapshot_work, work_lock
from freshstack_hf.repo.revisions import revision_folder

log = logging.getLogger(__name__)

CONFIG_SECTIONS = (
    "topic",
    "questions",
    "corpus",
    "llm",
    "pooling",
    "judging",
    "snapshot",
    "embargo_days",
    "private_repo",
)


def parse_stages(value: str | None) -> list[str]:
    if not value or value == "all":
        return list(ORDER)
    wanted = [s.strip() for s in value.split(",") if s.strip()]
    unknown = [s for s in wanted if s not in ORDER]
    if unknown:
        raise FreshStackError(f"unknown stage(s) {', '.join(unknown)}: choose from {', '.join(ORDER)}")
    return [s for s in ORDER if s in wanted]


def fingerprint(ctx: StageContext, name: str, done: dict[str, str]) -> str:
    module = stage_module(name)
    parts: list[str] = [name, str(module.VERSION)]
    for item in module.READS:
        if item in CONFIG_SECTIONS:
            parts.append(f"{item}={ctx.config.fingerprint(item)}")
        else:
            parts.append(f"{item}={done.get(item) or _recorded(ctx, item)}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def _recorded(ctx: StageContext, stage: str) -> str:
    path = ctx.record_path(stage)
    if not path.is_file():
        return "missing"
    return json.loads(path.read_text(encoding="utf-8")).get("fingerprint", "missing")


def run_build(
    config: TopicConfig,
    out: Path,
    *,
    work: Path | None = None,
    shared: Path | None = None,
    stages: list[str] | None = None,
    resume: bool = True,
    dry_run: bool = False,
    show_progress: bool = True,
    backend: Any = None,
    echo: Callable[[str], None] = print,
    llm_env: bool = True,
) -> dict[str, Any]:
    """Run (or plan, with `dry_run`) the wanted stages; returns {stage: record or plan}.

    `shared` is the folder a topic's dated snapshots share (caches and memos; see `pipeline.snapshots`).
    `llm_env` applies the FRESHSTACK_LLM_* overrides to `config.llm`, once per build; a caller that has applied
    them already (the `build` command does, under its own flags) passes False.
    """
    out = Path(out)
    _refuse_undated_embargo(config)  # before any stage: nothing paid for a build refused
    if backend is None and llm_env:  # the overrides count in the fingerprints, as in the backend they pick
        config = replace(config, llm=effective_config(config.llm))
    work = Path(work) if work else default_work_dir(out, config.topic)
    ctx = StageContext(
        config, work, out, show_progress=show_progress, dry_run=dry_run, backend_override=backend, shared_dir=shared
    )
    wanted = stages or list(ORDER)
    if dry_run:
        return _plan_stages(ctx, wanted, echo)
    results: dict[str, Any] = {}
    done: dict[str, str] = {}
    out.parent.mkdir(parents=True, exist_ok=True)  # the repo's folder: the user's, before the private block
    with owner_only(), work_lock(work):
        for i, name in enumerate(wanted, 1):
            step = f"[{i}/{len(wanted)}] {name}"
            fp = fingerprint(ctx, name, done)
            old = _finished(ctx, name, fp) if resume else None
            if old is not None:
                echo(f"{step}: up to date (finished {old.get('finished_at', '?')})")
                record = old
            else:
                echo(f"{step}: running")
                record = _run_stage(ctx, name, fp, results)
                echo(f"{step}: done in {record['seconds_total']:.1f} s — {stage_module(name).summary(record)}")
            done[name] = fp
            results[name] = record
    return results


def _refuse_undated_embargo(config: TopicConfig) -> None:
    """An embargo counts back from a snapshot's date: a build without one cannot keep any question private."""
    if config.embargo_days and not config.snapshot.date:
        raise FreshStackError(
            f"{config.path}: embargo_days: {config.embargo_days} counts back from a snapshot's date, and this build "
            "has none; build dated snapshots (`snapshots:` or --snapshot DATE) or refresh, or set embargo_days: 0"
        )


def _plan_stages(ctx: StageContext, wanted: list[str], echo: Callable[[str], None]) -> dict[str, Any]:
    """`--dry-run`: each wanted stage's plan, said one line a stage."""
    results: dict[str, Any] = {}
    for i, (name, plan) in enumerate(plan_build(ctx, wanted).items(), 1):
        results[name] = plan.as_dict()
        echo(f"[{i}/{len(wanted)}] {name}: {_plan_line(results[name])}")
    return results


def _finished(ctx: StageContext, name: str, fp: str) -> dict[str, Any] | None:
    """The record a previous run left for stage `name`, when it was made from the same inputs (fingerprint `fp`)."""
    record_path = ctx.record_path(name)
    if not record_path.is_file():
        return None
    old = json.loads(record_path.read_text(encoding="utf-8"))
    return old if old.get("fingerprint") == fp else None


def _run_stage(ctx: StageContext, name: str, fp: str, held: dict[str, Any]) -> dict[str, Any]:
    """Run stage `name`, check it wrote every file it declares, and store its record (`held`: this run's records)."""
    module = stage_module(name)
    start = time.perf_counter()
    ctx.dir(name)
    ctx.records = _earlier_records(ctx, name, held)
    record = module.run(ctx)
    missing = [str(f.path(ctx.work)) for f in module.OUTPUTS if not f.path(ctx.work).exists()]
    if missing:  # a stage that forgot a declared file must not be recorded as done
        raise FreshStackError(f"stage `{name}` finished without writing {', '.join(missing)}")
    record = _as_stored(
        {
            "stage": name,
            "fingerprint": fp,
            "seconds_total": round(time.perf_counter() - start, 3),
            "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            **record,
        }
    )
    write_json(ctx.record_path(name), record)
    return record


def _earlier_records(ctx: StageContext, name: str, held: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The records of the stages before `name`, in stage order: the ones this run holds, else as a previous run
    left them on disk (a build of `--stages write` still accounts for every stage); a stage never run is absent."""
    records = {}
    for stage in ORDER[: ORDER.index(name)]:
        path = ctx.record_path(stage)
        if stage in held:
            records[stage] = held[stage]
        elif path.is_file():
            records[stage] = json.loads(path.read_text(encoding="utf-8"))
    return records


def _as_stored(record: dict[str, Any]) -> dict[str, Any]:
    """`record` as `record.json` keeps it (JSON types only), so what later stages are handed is what a resumed
    build reads back from disk."""
    return json.loads(json.dumps(record, default=str))


def run_snapshots(
    config: TopicConfig,
    out: Path,
    dates: list[str],
    *,
    work_root: Path | None = None,
    echo: Callable[[str], None] = print,
    dry_run: bool = False,
    **build: Any,
) -> dict[str, Any]:
    """Build (or, with `dry_run`, plan) each snapshot in date order; returns {date: stage records or plan}.

    A plan writes nothing: the clones it needs and the work folder lacks go to a folder removed afterwards."""
    shared = Path(work_root) if work_root else default_work_dir(Path(out), config.topic)
    with contextlib.ExitStack() as stack:
        scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="freshstack-plan-"))) if dry_run else None
        if scratch is None:  # the clones go into the work folder: private from their first file
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            stack.enter_context(owner_only())
        check_snapshots(config, dates, REPO_CACHE.path(shared), scratch=scratch)
        results: dict[str, Any] = {}
        dates = sorted(dates)
        previous = previous_revision(out, config.topic, dates[0])
        for date in dates:
            target = revision_folder(out, date)
            private = None
            if config.embargo_days:  # the embargoed questions' revision (`pipeline.embargo`)
                private = revision_folder(private_base(config.private_repo, Path(out)), date)
            dated = snapshot_config(config, date, previous, private)
            echo(f"snapshot {date}: {target}" + (f" (carrying over {previous.name})" if previous else ""))
            if scratch is not None:
                results[date] = plan_snapshot(
                    dated, target, shared, echo=echo, scratch=scratch, built_before=date != dates[0]
                ).as_dict()
            else:
                results[date] = run_build(
                    dated, target, work=snapshot_work(shared, date), shared=shared, echo=echo, dry_run=False, **build
                )
            previous = target
    return results


def _plan_line(plan: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in plan.items() if v not in (None, "", [], {}))
