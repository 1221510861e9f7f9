"""The topic definition a build starts from: a YAML file, checked whole before any stage runs.

A typo in a key or a wrong type is reported with the file and the dotted key (`corpus.repositories[2].commit`),
every problem at once, before a single question is parsed or a paid call made. Relative paths are taken from the
YAML file's folder, and `${VAR}` / `${VAR:-default}` in strings read the environment, so one YAML serves a
laptop with a local dump and a build machine with the 100 GB one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from freshstack_hf.baselines.registry import runnable
from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.pipeline.config.embargo_settings import EMBARGO_KEYS, read_embargo
from freshstack_hf.pipeline.config.reader import YamlReader, resolve_path, section_dataclass
from freshstack_hf.pipeline.config.repository import RepoConfig, read_repository
from freshstack_hf.pipeline.sources.registry import formats as question_formats
from freshstack_hf.topic import TOPIC_NAME_RE

# `freshstack-0.0.6` reproduces the released corpus (the official chunker, file by file); `sections` is the
# gap-free chunker that budgets in any tokenizer (see docs/chunking.md).
CHUNKERS = ("freshstack-0.0.6", "sections")
NOTEBOOK_MODES = ("script", "text")
TECHNIQUES = ("question", "subquestions", "closed_book", "answer", "nuggets")
RETRIEVERS = ("bm25", "dense")  # the default pooling retrievers; any registered method may be named


@dataclass(frozen=True)
class QuestionsConfig:
    """Where the questions come from and which ones to keep (tags: any of; window: inclusive dates)."""

    source: str
    tags: tuple[str, ...]
    format: str = "auto"
    since: str = ""  # ISO date, inclusive; "" = no lower bound
    until: str = ""  # ISO date, inclusive; "" = no upper bound
    max_questions: int | None = None
    cooccurrence_top_k: int = 25


@dataclass(frozen=True)
class CorpusConfig:
    repositories: tuple[RepoConfig, ...]
    chunker: str = CHUNKERS[0]
    max_tokens: int = 2048  # the released corpus's chunk limit
    # freshstack-0.0.6 only: the official's per-file limits
    max_chunks_per_file: int = 100
    max_file_chars: int = 1_000_000
    # notebooks: "script" (freshstack 0.0.6: nbconvert to a script, parsed as Python) or "text" (the raw JSON
    # through the text splitter, as the released corpus holds them: langchainjs' notebooks at their commit)
    notebooks: str = "script"
    # sections only
    min_tokens: int = 5  # chunks below this are near-empty: dropped and counted
    tokenizer: str = "regex"  # an offline tokenizer name, recorded in the manifest
    max_file_bytes: int = 2_000_000  # larger files are generated or data, not documentation


@dataclass(frozen=True)
class PoolingConfig:
    techniques: tuple[str, ...] = TECHNIQUES
    retrievers: tuple[str, ...] = RETRIEVERS
    dense_model: str = ""  # "" = the packaged MiniLM; "openai:MODEL" = the endpoint's embeddings
    depth: int = 20  # top fused docs per technique that enter the pool (the paper's 20)
    retrieval_depth: int = 100  # each retriever's list before fusion
    max_pool_docs: int | None = None  # cap per question (after the union), None = no cap


@dataclass(frozen=True)
class JudgingConfig:
    docs_per_call: int = 20  # the paper's n+k batching: up to 20 documents with all nuggets of a question
    max_doc_tokens: int = 1024  # each document is cut to this many tokens in the prompt


@dataclass(frozen=True)
class SnapshotConfig:
    """Which dated snapshot a build makes (set by `pipeline.snapshots`, never read from the YAML): the date every
    repository and the question window are cut at, and the previous snapshot's revision folder, if any."""

    date: str = ""
    previous: str = ""  # the earlier revision folder whose questions are carried over ("" = none)
    private: str = ""  # with an embargo: the folder the embargoed questions' topic is written to (`pipeline.embargo`)


@dataclass(frozen=True)
class TopicConfig:
    topic: str
    questions: QuestionsConfig
    corpus: CorpusConfig
    llm: LLMConfig = field(default_factory=LLMConfig)
    pooling: PoolingConfig = field(default_factory=PoolingConfig)
    judging: JudgingConfig = field(default_factory=JudgingConfig)
    description: str = ""
    path: str = ""  # the YAML file this came from
    snapshots: tuple[str, ...] = ()  # dated snapshots to build (ISO dates, sorted)
    snapshot: SnapshotConfig = field(default_factory=SnapshotConfig)
    embargo_days: int = 0  # questions asked within this many days before a snapshot's date stay private
    private_repo: str = ""  # where they go: a local folder (absolute once read) or a Hub dataset id

    def fingerprint(self, section: str) -> str:
        """A short hash of one section: a stage re-runs when the part of the config it reads changes.

        Of `llm` only what changes the model's output counts (endpoint, model, temperature, output cap), not
        concurrency, prices or batch mode; it also names the judge whose verdicts a snapshot may reuse."""
        if section == "llm":
            llm = self.llm
            blob = json.dumps([llm.base_url, llm.model, llm.temperature, llm.max_output_tokens]).encode()
            return hashlib.sha256(blob).hexdigest()[:16]
        value = asdict(self)[section] if section != "topic" else self.topic
        blob = json.dumps(value, sort_keys=True, default=str).encode()
        return hashlib.sha256(blob).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---- parsing ---------------------------------------------------------------------------------------------
def parse_topic(data: Any, path: str = "<topic>", base: Path | None = None) -> TopicConfig:
    """A validated `TopicConfig` from an already-parsed YAML mapping (raises `ValidationError` with every problem)."""
    r = YamlReader(path)
    base = base or Path.cwd()
    if not isinstance(data, dict):
        raise ValidationError(
            [Problem(path, "the file must hold a mapping with `topic:`, `questions:`, `corpus:`")],
            f"{path} is not a topic definition",
        )
    r.unknown(
        data,
        {"topic", "description", "questions", "corpus", "llm", "pooling", "judging", "snapshots", *EMBARGO_KEYS},
        "",
    )
    name = r.get(data, "topic", str, "", "", required=True)
    if name and not TOPIC_NAME_RE.match(name):
        r.problem("topic", f"invalid topic name {name!r}", "a lowercase slug such as `laravel` or `my_topic`")
    questions = _read_questions(r, r.section(data, "questions", ""), base)
    corpus = _read_corpus(r, r.section(data, "corpus", ""), base)
    llm, pooling, judging = _read_model_sections(r, data)
    snapshots = _read_snapshots(r, data, corpus)
    days, private = read_embargo(r, data, base)
    if r.problems:
        raise ValidationError(r.problems, f"{path}: invalid topic definition")
    description = r.get(data, "description", str, "", "")
    return TopicConfig(
        name,
        questions,
        corpus,
        llm,
        pooling,
        judging,
        description=description,
        path=path,
        snapshots=snapshots,
        embargo_days=days,
        private_repo=private,
    )


def _read_questions(r: YamlReader, q: dict, base: Path) -> QuestionsConfig:
    """`questions:`: the source, its format, the tags and the date window."""
    r.unknown(q, {f.name for f in QuestionsConfig.__dataclass_fields__.values()}, "questions.")
    fmt = r.get(q, "format", str, "questions.", "auto")
    if fmt not in question_formats():
        r.problem("questions.format", f"unknown format {fmt!r}", f"one of {', '.join(question_formats())}")
    questions = QuestionsConfig(
        source=resolve_path(base, r.get(q, "source", str, "questions.", "", required=bool(q))),
        tags=tuple(t.lower() for t in r.strings(q, "tags", "questions.", required=bool(q))),
        format=fmt,
        since=r.date(q, "since", "questions."),
        until=r.date(q, "until", "questions."),
        max_questions=r.get(q, "max_questions", int, "questions."),
        cooccurrence_top_k=r.get(q, "cooccurrence_top_k", int, "questions.", 25),
    )
    r.positive(questions.max_questions, "questions.max_questions", allow_none=True)
    if questions.since and questions.until and questions.since > questions.until:
        r.problem("questions.since", f"{questions.since} is after until {questions.until}", "swap the dates")
    return questions


def _read_repositories(r: YamlReader, c: dict, base: Path) -> tuple[RepoConfig, ...]:
    """`corpus.repositories`: a non-empty list, each keyword (the corpus id prefix) used once."""
    repos: list[RepoConfig] = []
    raw_repos = c.get("repositories")
    if (c and not isinstance(raw_repos, list)) or (isinstance(raw_repos, list) and not raw_repos):
        r.problem(
            "corpus.repositories",
            "expected a non-empty list of repositories",
            "each item: {source: URL|path|tarball, commit: SHA} or {source: ..., snapshot_date: YYYY-MM-DD}",
        )
    for i, item in enumerate(raw_repos if isinstance(raw_repos, list) else []):
        repos.append(read_repository(r, item, f"corpus.repositories[{i}].", base))
    seen: dict[str, int] = {}
    for i, repo in enumerate(repos):
        if repo.keyword in seen:
            r.problem(
                f"corpus.repositories[{i}].keyword",
                f"keyword {repo.keyword!r} already used by item {seen[repo.keyword]}",
                "give each repository a distinct `keyword:` (the corpus id prefix)",
            )
        seen.setdefault(repo.keyword, i)
    return tuple(repos)


def _read_corpus(r: YamlReader, c: dict, base: Path) -> CorpusConfig:
    """`corpus:`: the repositories and the chunker with its own settings (another chunker's are refused)."""
    r.unknown(c, {f.name for f in CorpusConfig.__dataclass_fields__.values()}, "corpus.")
    repos = _read_repositories(r, c, base)
    chunker = r.get(c, "chunker", str, "corpus.", CHUNKERS[0])
    if chunker not in CHUNKERS:
        r.problem("corpus.chunker", f"unknown chunker {chunker!r}", f"one of {', '.join(CHUNKERS)}")
    only = {"freshstack-0.0.6": ("max_chunks_per_file", "max_file_chars", "notebooks"), "sections": SECTIONS_KEYS}
    for other, keys in only.items():
        for key in keys:
            if other != chunker and key in c:
                r.problem(f"corpus.{key}", f"applies to `chunker: {other}` only", f"remove it or set chunker: {other}")
    corpus = CorpusConfig(
        repositories=repos,
        chunker=chunker,
        max_tokens=r.get(c, "max_tokens", int, "corpus.", 2048),
        max_chunks_per_file=r.get(c, "max_chunks_per_file", int, "corpus.", 100),
        max_file_chars=r.get(c, "max_file_chars", int, "corpus.", 1_000_000),
        notebooks=r.get(c, "notebooks", str, "corpus.", "script"),
        min_tokens=r.get(c, "min_tokens", int, "corpus.", 5),
        tokenizer=_tokenizer(r.get(c, "tokenizer", str, "corpus.", "regex"), base),
        max_file_bytes=r.get(c, "max_file_bytes", int, "corpus.", 2_000_000),
    )
    r.positive(corpus.max_tokens, "corpus.max_tokens")
    r.positive(corpus.max_chunks_per_file, "corpus.max_chunks_per_file")
    r.positive(corpus.max_file_chars, "corpus.max_file_chars")
    if corpus.notebooks not in NOTEBOOK_MODES:
        r.problem("corpus.notebooks", f"unknown value {corpus.notebooks!r}", f"one of {', '.join(NOTEBOOK_MODES)}")
    if corpus.min_tokens >= corpus.max_tokens:
        r.problem("corpus.min_tokens", "must be below max_tokens")
    return corpus


def _read_model_sections(r: YamlReader, data: dict) -> tuple[LLMConfig, PoolingConfig, JudgingConfig]:
    """`llm:`, `pooling:` and `judging:`: who answers, how the pools are made, how they are judged."""
    llm = section_dataclass(r, data, "llm", LLMConfig)
    if llm.temperature < 0 or llm.temperature > 2:
        r.problem("llm.temperature", f"must be between 0 and 2, got {llm.temperature}")
    r.positive(llm.max_concurrency, "llm.max_concurrency")
    pooling = section_dataclass(r, data, "pooling", PoolingConfig)
    for key, allowed in (("techniques", TECHNIQUES), ("retrievers", pooling_retrievers())):
        for v in getattr(pooling, key):
            if v not in allowed:
                r.problem(f"pooling.{key}", f"unknown value {v!r}", f"choose from {', '.join(allowed)}")
    r.positive(pooling.depth, "pooling.depth")
    judging = section_dataclass(r, data, "judging", JudgingConfig)
    if not 1 <= judging.docs_per_call <= 50:
        r.problem("judging.docs_per_call", f"must be 1..50, got {judging.docs_per_call}", "the paper uses 20")
    return llm, pooling, judging


def _read_snapshots(r: YamlReader, data: dict, corpus: CorpusConfig) -> tuple[str, ...]:
    """`snapshots:`: dates, and then no repository pinned (each snapshot picks its own commits)."""
    snapshots = read_snapshot_dates(r, data.get("snapshots"), "snapshots")
    if snapshots:
        for i, repo in enumerate(corpus.repositories):
            for key in ("commit", "snapshot_date"):
                if getattr(repo, key):
                    r.problem(
                        f"corpus.repositories[{i}].{key}",
                        f"a {key.replace('_', ' ')} cannot be combined with `snapshots:` (each snapshot picks every "
                        "repository's last commit on or before its date)",
                        "remove it, or remove `snapshots:` to build this pinned corpus once",
                    )
    return snapshots


def pooling_retrievers() -> tuple[str, ...]:
    """What `pooling.retrievers` may name: the registered retrieval methods (`baselines.METHODS`, a plugin's too)
    that a build can run, i.e. those needing no cross-encoder; a name outside them is refused with the file and
    key before any stage runs, not deep inside the pools stage."""
    return tuple(runnable())


def read_snapshot_dates(r: YamlReader, value: Any, key: str, today: str = "") -> tuple[str, ...]:
    """`snapshots:` (or `--snapshot`): ISO dates, none in the future, returned sorted and unique.

    A future date would silently be "today" for the repositories and change meaning as commits land, so it is
    refused; so is anything that is not a list of dates."""
    from datetime import date as date_type

    if value is None:
        return ()
    items = value if isinstance(value, list) else [value]
    today = today or date_type.today().isoformat()
    dates: list[str] = []
    for i, item in enumerate(items):
        where = f"{key}[{i}]" if isinstance(value, list) else key
        parsed = _iso_date(item)
        if not parsed:
            r.problem(where, f"not a date: {item!r}", "write it as YYYY-MM-DD")
        elif parsed > today:
            r.problem(where, f"{parsed} is in the future (today is {today})", "give a date on or before today")
        else:
            dates.append(parsed)
    return tuple(sorted(set(dates)))


SECTIONS_KEYS = ("min_tokens", "tokenizer", "max_file_bytes")


def _iso_date(value: Any) -> str:
    """YAML gives dates as `date` objects, the command line as strings; "" when it is neither."""
    from datetime import date, datetime

    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    try:
        return date.fromisoformat(str(value).strip()).isoformat()
    except ValueError:
        return ""


def _tokenizer(name: str, base: Path) -> str:
    """`hf:PATH` names a local tokenizer.json, taken from the YAML's folder like every other path."""
    return f"hf:{resolve_path(base, name[3:])}" if name.startswith("hf:") else name


def load_topic_config(path: str | Path) -> TopicConfig:
    """Read and validate a topic YAML; every problem names the file and the dotted key."""
    path = Path(path)
    if not path.is_file():
        hint = "it is a folder; give the .yaml file inside it" if path.is_dir() else "check the path"
        raise FreshStackError(f"{path}: no such topic file ({hint}; examples in scripts/topics/)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise FreshStackError(f"{path}: not valid YAML{where}: {getattr(exc, 'problem', exc)}") from exc
    except UnicodeDecodeError as exc:
        raise FreshStackError(f"{path}: not a UTF-8 text file ({exc.reason})") from exc
    return parse_topic(data, str(path), path.resolve().parent)
