"""`build --snapshot ... --dry-run`: per snapshot, what would be reused and what would be asked, before paying.

Nothing is written to the work folder or the repo. The commits come from the repositories' history (a
`git ls-tree` per commit says which files are unchanged since the previous snapshot: their chunks are reused;
a clone URL the work folder holds no clone of yet is cloned into the plan's scratch folder, removed afterwards),
the questions from one scan of the source into a temporary folder (questions asked up to the previous snapshot
carry over: their nuggets and pooling prompts are cached). Judgment calls of carried questions are bounded by
the documents of changed files, the only ones a pair memo cannot answer.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from freshstack_hf.pipeline.accounting import with_cost
from freshstack_hf.pipeline.corpus.repos import git, history, pick_commit
from freshstack_hf.pipeline.inputs import QUESTIONS, REPO_CACHE
from freshstack_hf.pipeline.topic_config import TopicConfig
from freshstack_hf.repo.revisions import revision_of

# Per-request token estimates, the stages' own (`nuggets.plan`, `judgments.plan`).
NUGGET_TOKENS = (900, 250)
POOL_TOKENS = (800, 300)
JUDGE_TOKENS = (9000, 600)


def _tree(git_dir: Path, sha: str, subdir: str) -> dict[str, str]:
    """path -> blob sha of every file at `sha` (under `subdir`)."""
    args = ["ls-tree", "-r", sha] + ([f"{subdir}/"] if subdir else [])
    files = {}
    for line in git(git_dir, *args).splitlines():
        meta, path = line.split("\t", 1)
        files[path] = meta.split()[2]
    return files


def file_changes(config: TopicConfig, shared: Path, scratch: Path | None = None) -> dict[str, dict[str, int]]:
    """Per repository: files unchanged, changed, added and deleted since the previous snapshot's commit."""
    from freshstack_hf.repo.manifest import read_manifest

    prev_commits: dict[str, str] = {}
    previous = config.snapshot.previous
    if previous and Path(previous).is_dir():
        entry = read_manifest(Path(previous)).get("topics", {}).get(config.topic, {})
        prev_commits = (entry.get("snapshot") or {}).get("commits", {})
    out: dict[str, dict[str, int]] = {}
    for repo in config.corpus.repositories:
        git_dir = history(repo, REPO_CACHE.path(shared), scratch=scratch)
        if git_dir is None:
            continue
        commit = pick_commit(repo, git_dir)
        now = _tree(git_dir, commit, repo.subdir)
        before_sha = prev_commits.get(repo.keyword, "")
        if not before_sha and config.snapshot.previous:  # planned, not built yet: its date's commit
            before_sha = pick_commit(replace(repo, snapshot_date=revision_of(config.snapshot.previous)), git_dir)
        before = _tree(git_dir, before_sha, repo.subdir) if before_sha else {}
        out[repo.keyword] = {
            "commit": commit,
            "unchanged": sum(1 for p, b in now.items() if before.get(p) == b),
            "changed": sum(1 for p, b in now.items() if p in before and before[p] != b),
            "added": sum(1 for p in now if p not in before),
            "deleted": sum(1 for p in before if p not in now),
        }
    return out


def question_dates(config: TopicConfig) -> tuple[dict[str, str], str]:
    """query id -> date of the questions the snapshot would take, and the date of the newest post in the source
    (any tag), scanned into a folder that is then removed."""
    import pyarrow.parquet as pq

    from freshstack_hf.pipeline.stage import StageContext
    from freshstack_hf.pipeline.stages import questions

    with tempfile.TemporaryDirectory(prefix="freshstack-plan-") as tmp:
        ctx = StageContext(config, Path(tmp), Path(tmp) / "repo", show_progress=False, dry_run=True)
        ctx.dir("questions")
        record = questions.run(ctx)
        rows = pq.read_table(QUESTIONS.path(ctx.work), columns=["query_id", "date"]).to_pylist()
    return {r["query_id"]: r["date"][:10] for r in rows}, record.get("newest_post", "")


def plan_snapshot(
    config: TopicConfig, shared: Path, echo: Callable[[str], None] = print, scratch: Path | None = None
) -> dict[str, Any]:
    """What building the snapshot `config` would reuse and ask; `scratch` takes the clones it needs."""
    previous_date = revision_of(config.snapshot.previous) if config.snapshot.previous else ""
    dates, newest = question_dates(config)
    carried = sum(1 for d in dates.values() if previous_date and d <= previous_date)
    new = len(dates) - carried
    files = file_changes(config, shared, scratch)
    moved_files = sum(f["changed"] + f["added"] for f in files.values())
    all_files = sum(f["unchanged"] + f["changed"] + f["added"] for f in files.values()) or 1
    pooling, judging = config.pooling, config.judging
    llm_techniques = sum(t in pooling.techniques for t in ("subquestions", "closed_book"))
    per_question = -(-pooling.depth * len(pooling.techniques) // judging.docs_per_call)
    judge_new = new * per_question
    judge_carried = round(carried * per_question * moved_files / all_files)  # docs of changed files only
    calls = new * (1 + llm_techniques) + judge_new + judge_carried
    offline = config.llm.offline
    tokens_in = (
        new * (NUGGET_TOKENS[0] + llm_techniques * POOL_TOKENS[0]) + (judge_new + judge_carried) * JUDGE_TOKENS[0]
    )
    tokens_out = (
        new * (NUGGET_TOKENS[1] + llm_techniques * POOL_TOKENS[1]) + (judge_new + judge_carried) * JUDGE_TOKENS[1]
    )
    plan = {
        "date": config.snapshot.date,
        "previous": previous_date,
        "questions": len(dates),
        "questions_carried": carried,
        "questions_new": new,
        "source_newest_post": newest,
        "repositories": files,
        "files_reused": sum(f["unchanged"] for f in files.values()),
        "files_to_chunk": moved_files,
        "calls": 0 if offline else calls,
        "requests": calls,
        "calls_saved_estimate": carried * (1 + llm_techniques + per_question) - judge_carried,
        "est_input_tokens": tokens_in,
        "est_output_tokens": tokens_out,
    }
    plan = with_cost(plan, config)
    echo(
        f"  questions: {len(dates)} ({carried} carried over, cached; {new} new); files: "
        f"{plan['files_reused']} unchanged (chunks reused), {moved_files} to chunk; LLM requests: about {calls} "
        f"({judge_carried} for carried questions' changed documents), ~{tokens_in:,} input / {tokens_out:,} output "
        f"tokens"
        + (f", ~${plan['est_cost_usd']}" if isinstance(plan.get("est_cost_usd"), float) else "")
        + (" (offline backend: no paid call)" if offline else "")
    )
    return plan
