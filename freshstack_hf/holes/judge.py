"""Judging holes with the topic's own judge: the build's task builder, prompts, client and response cache.

A filled judgment must mean what the build's judgments mean, so nothing here is a second judge: holes go through
`pipeline.judge_agreement.rejudge` (hence `judgments.judge_tasks`: blocks of documents, all the query's nuggets per
call, documents cut as the build cut them) on a backend from `pipeline.choose.make_backend`. The judge settings
and endpoint default to what built the topic (the manifest's build definition), then `JudgingConfig`'s defaults;
the cache defaults to the build's (`REPO-work/TOPIC/llm-cache.sqlite`), so a pair judged once is never paid again.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf.holes.find import Holes
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.pipeline.accounting import delta, usage_total
from freshstack_hf.pipeline.choose import effective_config, make_backend
from freshstack_hf.pipeline.config.topic import JudgingConfig
from freshstack_hf.pipeline.judge_agreement import rejudge
from freshstack_hf.records import NuggetJudgment
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import base_repo
from freshstack_hf.topic import Topic


@dataclass(frozen=True)
class JudgeSetup:
    """Who judges and how: the endpoint (offline when it names none), the batching, the cache file."""

    llm: LLMConfig
    judging: JudgingConfig
    cache_path: Path

    def backend(self, show_progress: bool = False) -> Any:
        if self.llm.base_url:  # the offline judge keeps no cache: leave no folder behind
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        return make_backend(self.llm, self.cache_path, show_progress=show_progress)


def judge_setup(
    folder: str | Path,
    topic: str,
    *,
    base_url: str | None = None,
    model: str | None = None,
    offline: bool = False,
    work: str | Path | None = None,
) -> JudgeSetup:
    """The topic's judge: its build's `llm`/`judging` definition where the manifest keeps one (the environment's
    `FRESHSTACK_LLM_*` applied, as a build applies them), overridden by `base_url`/`model`; `offline` forces the
    heuristic backend. `work` is the folder holding the LLM cache (default: the build's, `REPO-work/TOPIC`)."""

    definition = (read_manifest(Path(folder)).get("topics", {}).get(topic, {}).get("build") or {}).get("definition")
    definition = definition or {}
    llm = _fields(LLMConfig, definition.get("llm"))
    judging = _fields(JudgingConfig, definition.get("judging"))
    llm = effective_config(llm)
    if base_url:
        llm = dataclasses.replace(llm, base_url=base_url)
    if model:
        llm = dataclasses.replace(llm, model=model)
    if offline:
        llm = dataclasses.replace(llm, base_url="")
    base = base_repo(folder)
    work_dir = Path(work) if work else base.parent / f"{base.name}-work" / topic
    return JudgeSetup(llm, judging, work_dir / "llm-cache.sqlite")


def _fields(cls: Any, values: dict[str, Any] | None) -> Any:
    """`cls(**values)` keeping only the fields `cls` knows (a manifest may come from another version)."""
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in (values or {}).items() if k in known})


def judge_holes(
    topic: Topic, holes: Holes, backend: Any, judging: JudgingConfig
) -> tuple[list[NuggetJudgment], dict[str, Any]]:
    """Every hole of each query against all the query's nuggets: the new judgments and what judging them cost
    (`calls` planned, `requests` sent to an endpoint, `cache_hits`)."""

    nuggets: dict[str, list[tuple[str, str]]] = {}
    for n in topic.nuggets:
        nuggets.setdefault(n.query_id, []).append((n.nugget_id, n.text))
    docs = {q: ids for q, ids in holes.by_query.items() if nuggets.get(q)}
    needed = {d for ids in docs.values() for d in ids}
    text_of = {d.doc_id: d.text for d in topic.docs if d.doc_id in needed}
    questions = {q.query_id: f"{q.title}\n\n{q.body}".strip() for q in topic.queries if q.query_id in docs}
    before = backend.stats()
    predicted, calls = rejudge(
        backend, questions, nuggets, docs, text_of, judging.docs_per_call, judging.max_doc_tokens
    )
    usage = delta(before, backend.stats())
    judgments = [
        NuggetJudgment(qid, nugget_id, doc_id, predicted[(nugget_id, doc_id)])
        for qid, ids in docs.items()
        for doc_id in ids
        for nugget_id, _ in nuggets[qid]
    ]
    cost = {
        "calls": calls,
        "requests": usage_total(usage, "calls", "retries", "reasks"),
        "cache_hits": usage_total(usage, "cache_hits"),
    }
    return judgments, cost
