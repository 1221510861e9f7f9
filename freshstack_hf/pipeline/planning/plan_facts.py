"""What a plan knows before it builds: the facts the stages' `plan(ctx, facts)` estimate a build or a snapshot from.

A stage's estimate is only as good as what it is told, and most of what decides the calls of a snapshot is known
before a single stage runs:

- *the questions* (one scan of the source into a temporary folder), so every nugget, sub-question and closed-book
  prompt can be written and counted as the endpoint will bill it, and which of them were asked by the previous
  snapshot (`carried`);
- *what the work folder already answers*: the response cache, read without being written (`CachedAnswers`: a
  request it holds costs nothing, and a cached nugget answer gives the very nuggets a judge prompt will carry), and
  whether the judgment memo exists (a carried question is then judged only on documents whose text is new);
- *the documents*: each repository's files at the snapshot's commit (`git ls-tree`, no checkout), which of them
  hold text the previous snapshot did not have, and a sample of them chunked by the corpus stage's own chunker
  (`Documents`: how many documents, how long each is in a judge prompt);
- *the previous snapshot's own figures* (its manifest's stage records): how many documents its pools held per
  question, and how long the model's answers were (`Previous`).

Nothing is written: clones a plan needs go to its scratch folder, the cache is opened immutable.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from freshstack_hf.llm.cache import request_key
from freshstack_hf.llm.client import LLMClient
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.llm.registry import OPENAI, transport_kind
from freshstack_hf.pipeline.accounting import StageEstimate, prompt_tokens
from freshstack_hf.pipeline.backends import QA
from freshstack_hf.pipeline.config.topic import RepoConfig, TopicConfig
from freshstack_hf.pipeline.corpus.file_selection import walk_files
from freshstack_hf.pipeline.corpus.repos import git, history, pick_commit, source_kind
from freshstack_hf.pipeline.inputs import JUDGMENT_MEMO, REPO_CACHE
from freshstack_hf.pipeline.stages import corpus as corpus_stage
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.revisions import revision_of

SAMPLE_FILES = 64  # files chunked per repository to learn its documents' length: evenly spread over its paths

Messages = Sequence[Mapping[str, str]]


@dataclass(frozen=True)
class Previous:
    """What the previous snapshot recorded about itself (its manifest's `build.stages`): the documents its pools
    held per question, its corpus size, and the model's completion tokens per call, per accounting stage."""

    pool_size: float | None = None
    corpus: int | None = None
    completion_per_call: dict[str, float] = field(default_factory=dict)

    @staticmethod
    def of(folder: Path | None, topic: str) -> Previous:
        if folder is None or not (folder / "manifest.json").is_file():
            return Previous()
        stages = read_manifest(folder).get("topics", {}).get(topic, {}).get("build", {}).get("stages", {})
        per_call: dict[str, float] = {}
        for record in stages.values():
            for stage, usage in (record.get("usage") or {}).items():
                if isinstance(usage, dict) and usage.get("calls"):
                    per_call[stage] = usage.get("completion_tokens", 0) / usage["calls"]
        pools, corpus = stages.get("pools", {}), stages.get("corpus", {})
        return Previous((pools.get("pool_size") or {}).get("mean"), corpus.get("chunks"), per_call)


class CachedAnswers:
    """The work folder's response cache, opened immutable (nothing written, not even a lock file): the answer it
    holds for a request, so a plan counts a cached request as free. Only the `openai` transport's cache is read,
    the one whose keys this project writes; a cache a killed build left with a write-ahead log is read with it."""

    def __init__(self, path: Path, llm: LLMConfig) -> None:
        self.config = llm  # what `LLMClient.chat_request` reads: the request is keyed exactly as the client keys it
        self._db: sqlite3.Connection | None = None
        if path.is_file() and not llm.offline and transport_kind(llm.base_url) == OPENAI:
            mode = "mode=ro" if path.with_name(path.name + "-wal").exists() else "immutable=1"
            self._db = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)

    def answer(self, messages: Messages) -> str | None:
        """The cached reply's text for `messages`, or None when the request would be sent."""
        if self._db is None:
            return None
        key = request_key(LLMClient.chat_request(self, messages))  # type: ignore[arg-type]  # config is its state
        row = self._db.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        choices = json.loads(row[0]).get("choices") or [{}]
        return (choices[0].get("message") or {}).get("content") or ""

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


@dataclass(frozen=True)
class Documents:
    """The corpus a build would judge from, before it is chunked: `count` documents, `tokens` the mean cl100k tokens
    one shows in a judge prompt (cut at `judging.max_doc_tokens`), `new_share` the share whose text no earlier
    snapshot had (changed and added files; a moved file keeps its text, and so its judgments)."""

    count: float
    tokens: float
    new_share: float = 1.0


@dataclass
class PlanFacts:
    """Everything the stages' plans read (see the module docstring). `questions` None: unknown without a scan.
    `built_before`: the previous snapshot is built by the same command just before this one (`build --snapshot A
    --snapshot B`), so its answers and verdicts will be in the work folder when this one is built."""

    llm: LLMConfig
    questions: list[QA] | None = None
    carried: frozenset[str] = frozenset()
    documents: Documents | None = None
    answers: CachedAnswers | None = None
    memo: bool = False
    previous: Previous = field(default_factory=Previous)
    repositories: dict[str, dict[str, Any]] = field(default_factory=dict)
    built_before: bool = False

    def cached(self, messages: Messages) -> str | None:
        """The response cache's answer to `messages` now, if it holds one."""
        return self.answers.answer(messages) if self.answers is not None else None

    def answered(self, query_id: str, messages: Messages) -> bool:
        """Whether the request `messages` about question `query_id` will cost nothing when the build sends it."""
        return (self.built_before and query_id in self.carried) or self.cached(messages) is not None

    def judged_before(self, query_id: str, nuggets_known: bool) -> bool:
        """Whether the memo will answer the question's verdicts on documents whose text is not new: it was judged by
        the previous snapshot on the very nuggets it will carry."""
        carried = query_id in self.carried
        return carried and (self.built_before or (self.memo and nuggets_known))

    def estimate(self, requests: Sequence[tuple[str, Messages]], completion_tokens: float) -> StageEstimate:
        """The estimate of sending `requests` ((question id, prompt) pairs): those answered already are free, the
        others bill their prompt as counted and about `completion_tokens` each."""
        sent = [m for qid, m in requests if not self.answered(qid, m)]
        return StageEstimate(
            requests=len(requests),
            cached=len(requests) - len(sent),
            input_tokens=sum(prompt_tokens(m) for m in sent),
            output_tokens=round(len(sent) * completion_tokens),
            offline=self.llm.offline,
        )

    def completion_per_call(self, stage: str, default: float) -> float:
        """The previous snapshot's completion tokens per call of `stage`, else the stage's own allowance."""
        return self.previous.completion_per_call.get(stage, default)


@contextlib.contextmanager
def work_facts(config: TopicConfig, shared: Path, **known: Any) -> Iterator[PlanFacts]:
    """The facts of the work folder `shared` (its response cache and judgment memo) with `known`; the cache is
    closed on leaving."""
    answers = CachedAnswers(shared / "llm-cache.sqlite", config.llm)
    try:
        yield PlanFacts(config.llm, answers=answers, memo=JUDGMENT_MEMO.path(shared).is_file(), **known)
    finally:
        answers.close()


# ---- the repositories ------------------------------------------------------------------------------------------


def _tree(git_dir: Path, sha: str, subdir: str) -> dict[str, str]:
    """path -> blob sha of every file at `sha` (under `subdir`); links and submodules are no documents."""
    args = ["ls-tree", "-r", sha] + ([f"{subdir}/"] if subdir else [])
    files = {}
    for line in git(git_dir, *args).splitlines():
        meta, path = line.split("\t", 1)
        mode, kind, blob = meta.split()
        if kind == "blob" and mode != "120000":
            files[path] = blob
    return files


def _previous_commit(config: TopicConfig, repo: RepoConfig, git_dir: Path) -> str:
    """The commit the previous snapshot read `repo` at: recorded in its manifest, or (planned, not built yet)
    its date's last commit."""
    previous = config.snapshot.previous
    if not previous:
        return ""
    if Path(previous).is_dir():
        entry = read_manifest(Path(previous)).get("topics", {}).get(config.topic, {})
        sha = (entry.get("snapshot") or {}).get("commits", {}).get(repo.keyword, "")
        if sha:
            return sha
    return pick_commit(replace(repo, snapshot_date=revision_of(previous), commit=""), git_dir)


def _changes(now: dict[str, str], before: dict[str, str]) -> dict[str, int]:
    return {
        "unchanged": sum(1 for p, b in now.items() if before.get(p) == b),
        "changed": sum(1 for p, b in now.items() if p in before and before[p] != b),
        "added": sum(1 for p in now if p not in before),
        "deleted": sum(1 for p in before if p not in now),
    }


def _sample(paths: list[str]) -> list[str]:
    """At most `SAMPLE_FILES` paths, evenly spread over the sorted list (deterministic)."""
    paths = sorted(paths)
    if len(paths) <= SAMPLE_FILES:
        return paths
    step = len(paths) / SAMPLE_FILES
    return [paths[int(i * step)] for i in range(SAMPLE_FILES)]


@dataclass
class _Tally:
    """Documents summed over repositories: files read, files with new text, and the chunked sample's figures."""

    files: int = 0
    new_files: int = 0
    sampled: int = 0
    tokens: list[int] = field(default_factory=list)  # judged tokens of each document of the sample

    def add(self, files: int, new_files: int, sampled: int, tokens: list[int]) -> None:
        self.files, self.new_files = self.files + files, self.new_files + new_files
        self.sampled += sampled
        self.tokens += tokens

    def documents(self) -> Documents | None:
        if not self.sampled or not self.tokens:
            return None
        per_file = len(self.tokens) / self.sampled
        return Documents(self.files * per_file, sum(self.tokens) / len(self.tokens), self.new_files / self.files)


def read_repositories(
    config: TopicConfig, shared: Path, scratch: Path, samples: Path
) -> tuple[dict[str, dict[str, Any]], Documents | None]:
    """Per repository its commit and files unchanged, changed, added and deleted since the previous snapshot; and
    the corpus's `Documents`, from a sample of the files the corpus stage would read (written into `samples`),
    chunked by its own chunker (`stages.corpus.chunk_tokens`); clones the work folder lacks go to `scratch`. A
    tarball has no tree to read without extracting it: no documents then."""
    out: dict[str, dict[str, Any]] = {}
    tally, known = _Tally(), True
    for repo in config.corpus.repositories:
        kind = source_kind(repo.source)
        if kind == "folder":
            _add_folder(config, repo, tally)
            continue
        if kind not in ("git", "clone"):
            known = False
            continue
        git_dir = history(repo, REPO_CACHE.path(shared), scratch=scratch)
        assert git_dir is not None
        commit = pick_commit(repo, git_dir)
        now = _tree(git_dir, commit, repo.subdir)
        before_sha = _previous_commit(config, repo, git_dir)
        before = _tree(git_dir, before_sha, repo.subdir) if before_sha else {}
        out[repo.keyword] = {"commit": commit, **_changes(now, before)}
        readable = corpus_stage.readable_paths(config.corpus, repo, list(now))
        seen = set(before.values())
        folder = samples / repo.keyword
        files = []
        for rel in _sample(readable):
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(_blob(git_dir, now[rel]))
            files.append((rel, folder / rel))
        tokens = corpus_stage.chunk_tokens(config.corpus, repo, files, config.judging.max_doc_tokens)
        tally.add(len(readable), sum(1 for rel in readable if now[rel] not in seen), len(files), tokens)
    return out, (tally.documents() if known else None)


def _blob(git_dir: Path, sha: str) -> bytes:
    """A file's bytes (a blob-less clone fetches it on demand)."""
    done = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "blob", sha], capture_output=True)
    return done.stdout if done.returncode == 0 else b""


def _add_folder(config: TopicConfig, repo: RepoConfig, tally: _Tally) -> None:
    """A folder source: its files as the corpus stage walks them (no history: every text is new)."""
    rules = "release" if config.corpus.chunker != "sections" else "sections"
    files, _ = walk_files(Path(repo.source), repo.subdir, repo.include, repo.exclude, rules=rules)
    picked = set(_sample([rel for rel, _ in files]))
    sample = [(rel, path) for rel, path in files if rel in picked]
    tokens = corpus_stage.chunk_tokens(config.corpus, repo, sample, config.judging.max_doc_tokens)
    tally.add(len(files), len(files), len(sample), tokens)


def expected_new(pool: float, share: float, per_call: int) -> tuple[float, float]:
    """(documents, calls) expected to be judged for a question whose pool of `pool` documents is judged only where
    a document's text is new, each new with probability `share`: the count of new ones is Binomial(pool, share),
    and they go `per_call` to a call."""
    n = max(0, round(pool))
    if share <= 0 or n == 0:
        return 0.0, 0.0
    if share >= 1:
        return float(n), float(math.ceil(n / per_call))
    calls = sum(math.comb(n, k) * share**k * (1 - share) ** (n - k) * math.ceil(k / per_call) for k in range(1, n + 1))
    return n * share, calls
