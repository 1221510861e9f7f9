"""Answer submissions (the RAG track): checked strictly, scored by citation at once, judged later by a worker.

The checks run in the order of `leaderboard.submit` (whose refusals this reuses): size cap and text fields,
then the dedupe lookup (file hash with the dataset revision), the rate limit, and only then parsing with
`freshstack_hf.answers.read_answers` (every problem listed with its line; nothing is stored on any problem).
Citation scores need no model, so they are computed and stored with the system in one transaction. All/Vital
need a judge: when the app is configured with a judge endpoint (`JudgeEndpoint`), an `answers_judge` job is
queued in the same transaction. Its payload carries the answers, the dataset and the endpoint's URL and model,
never a key: the worker reads the key from its own environment (`leaderboard.answer_jobs.JUDGE_KEY_ENV`).

Stored measures are the library's answer measures prefixed `answers:` (`answers:citation_recall`), so they
never collide with the retrieval measures of the same store.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.answers import read_answers, score_answers, to_trec_rag
from freshstack_hf.answers.measures import BY_ID
from freshstack_hf.answers.parse import DEFAULT_MAX_WORDS, AnswerSet
from freshstack_hf.answers.scores import AnswerScores
from freshstack_hf.defaults import SEED
from freshstack_hf.errors import FreshStackError, ValidationError
from leaderboard.answer_jobs import JOB_KIND
from leaderboard.sanitize import escape_markdown
from leaderboard.schema import ResultMeta, SystemRecord
from leaderboard.submit import SubmitOutcome, Submitter, file_sha256, refused_with_problems

KIND = "answers"  # the systems' kind in the store
PREFIX = "answers:"
BASELINE_PREFIX = "answers-baseline:"  # content hash prefix of the project's answer baselines
BASE_URL_ENV, MODEL_ENV = "FRESHSTACK_JUDGE_BASE_URL", "FRESHSTACK_JUDGE_MODEL"
ANSWER_MODEL_ENV = "FRESHSTACK_ANSWER_MODEL"  # the LLM answer baseline's model, on the judge's endpoint


@dataclass(frozen=True, slots=True)
class JudgeEndpoint:
    """The judge the app queues All/Vital scoring for: an OpenAI-compatible URL and a model (no key here)."""

    base_url: str
    model: str

    @property
    def name(self) -> str:
        return f"openai:{self.model}@{self.base_url}"

    @classmethod
    def from_env(cls) -> JudgeEndpoint | None:
        """`FRESHSTACK_JUDGE_BASE_URL` and `FRESHSTACK_JUDGE_MODEL`, or None when no endpoint is named."""
        url, model = os.environ.get(BASE_URL_ENV, "").strip(), os.environ.get(MODEL_ENV, "").strip()
        if not url:
            return None
        if not model:
            raise FreshStackError(f"{BASE_URL_ENV} is set but {MODEL_ENV} is not: name the judge's model")
        return cls(url, model)

    @classmethod
    def generator_from_env(cls) -> JudgeEndpoint | None:
        """The LLM answer baseline's model, `FRESHSTACK_ANSWER_MODEL`, on the judge's endpoint (None: no row)."""
        judge, model = cls.from_env(), os.environ.get(ANSWER_MODEL_ENV, "").strip()
        return cls(judge.base_url, model) if judge is not None and model else None

    def as_payload(self) -> dict[str, str]:
        return {"base_url": self.base_url, "model": self.model}


@dataclass(frozen=True, slots=True)
class AnswerOutcome(SubmitOutcome):
    """A scored answer file: the page shows the average of each answer measure (named from the measure table)."""

    def markdown(self) -> str:
        plain = SubmitOutcome(self.status, self.message, self.system_id, self.problems)  # message and problems
        lines = [plain.markdown()]
        average = self.details.get("average") or {}
        if average:
            topics = ", ".join(escape_markdown(t) for t in self.details.get("topics", []))
            lines += ["", f"Average of the topics ({topics}):", "", "| measure | average |", "| --- | ---: |"]
            names = {measure_key(m.id): m.name for m in BY_ID.values()}
            lines += [f"| {escape_markdown(names.get(m, m))} | {v:.3f} |" for m, v in average.items()]
        return "\n".join(lines)


def measure_key(measure_id: str) -> str:
    """The store's measure id of an answer measure."""
    return PREFIX + measure_id


def stored_results(scores: AnswerScores, measures: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per topic {"metrics", "per_query", "ci"} with prefixed measure ids (all measures, or only `measures`)."""
    return scores.stored(measures, key=measure_key)


def answers_content_hash(file_hash: str, dataset_revision: str, prefix: str = "answers:") -> str:
    """The same answer file on the same dataset revision is one system."""
    setting = hashlib.sha256(dataset_revision.encode()).hexdigest()[:16]
    return f"{prefix}{file_hash}:{setting}"


def answered_topics(answers: AnswerSet, topics: Iterable[str], query_ids: Mapping[str, frozenset[str]]) -> list[str]:
    """The topics the file answers at least one query of (an answer file may cover one topic or all)."""
    return [t for t in topics if query_ids[t] & answers.answers.keys()]


def judge_payload(
    answers: AnswerSet, dataset: Any, topics: list[str], judge: JudgeEndpoint, max_words: int, resamples: int
) -> dict[str, Any]:
    """What the worker needs to judge the answers from scratch: the checked answers as TREC RAG JSONL (whatever
    format was uploaded, gzipped or not), the dataset and the endpoint; never a secret."""
    return {
        "answers": to_trec_rag(answers),
        "dataset": str(dataset.folder),
        "dataset_revision": dataset.revision,
        "topics": topics,
        "judge": judge.as_payload(),
        "max_words": max_words,
        "resamples": resamples,
    }


class AnswerSubmitter(Submitter):
    """Accepts answer files for one dataset into one store (see the module docstring)."""

    def __init__(
        self,
        store: Any,
        dataset: Any,
        *,
        judge: JudgeEndpoint | None = None,
        max_words: int = DEFAULT_MAX_WORDS,
        **options: Any,
    ) -> None:
        super().__init__(store, dataset, **options)
        self.judge, self.max_words = judge, max_words

    def submit_answers(
        self,
        path: str | Path | None,
        *,
        name: str,
        description: str = "",
        link: str = "",
        identity: str = "",
        display_name: str | None = None,
    ) -> SubmitOutcome:
        """Validate strictly, score citations at once, store, and queue the judge when one is configured."""
        try:
            formats = "TREC RAG JSONL or JSON {query_id: {text, citations}}"
            text = self._checked_upload(path, "answer", formats, name, description, link)
        except (FreshStackError, OSError) as exc:
            return SubmitOutcome("refused", str(exc))
        file_hash = file_sha256(path)
        content_hash = answers_content_hash(file_hash, self.dataset.revision)
        refusal = self._duplicate(content_hash) or self._rate_limited(identity) or self._gzip_bomb(path)
        if refusal is not None:
            return refusal
        label = display_name or Path(path).name
        try:
            answers = read_answers(
                path,
                query_ids=self.dataset.query_ids(),
                doc_ids=self.dataset.doc_ids(),
                max_words=self.max_words,
            )
        except ValidationError as exc:
            return refused_with_problems(exc, f"answers {label}", label)
        except FreshStackError as exc:
            return SubmitOutcome("refused", str(exc).replace(str(path), label))
        ids = {t: self.dataset.query_ids([t]) for t in self.dataset.topics}
        topics = answered_topics(answers, self.dataset.topics, ids)
        stored = self.store_answers(
            answers,
            topics,
            name=text.name,
            content_hash=content_hash,
            description=text.description,
            link=text.link,
            identity=identity,
            params={"job": "answers", "file_sha256": file_hash, "format": answers.fmt, "run_id": answers.run_id},
        )
        if stored is None:
            return SubmitOutcome("refused", f"answers {label}: none of the answered queries has nuggets to score")
        system, created, scores = stored
        if not created:
            return self._duplicate(content_hash) or SubmitOutcome("duplicate", "already submitted", system.id)
        plural = "s" if len(topics) != 1 else ""
        message = f"scored: answers #{system.id} '{system.name}' on {len(topics)} topic{plural} (citations)"
        message += "; judge queued" if self.judge is not None else "; no judge configured, so no All/Vital"
        average = {measure_key(m): v for m, v in scores.average.items()}
        return AnswerOutcome("scored", message, system.id, details={"topics": topics, "average": average})

    def store_answers(
        self,
        answers: AnswerSet,
        topics: list[str],
        *,
        name: str,
        content_hash: str,
        params: Mapping[str, Any],
        description: str = "",
        link: str | None = None,
        identity: str = "",
        kind: str = KIND,
    ) -> tuple[SystemRecord, bool, AnswerScores] | None:
        """Citation scores now, the judge job (when configured) in the same transaction; None when nothing of
        `topics` can be scored (no query with nuggets)."""
        scores = score_answers([self.dataset.topic(t) for t in topics], answers, resamples=self.resamples, seed=SEED)
        results = stored_results(scores)
        if not results:
            return None
        meta_params = {
            **params,
            "topics": topics,
            "judge": None,
            "max_words": self.max_words,
            "resamples": self.resamples,
            "seed": SEED,
            "dataset": self.dataset.source,
        }
        job = None
        if self.judge is not None:
            job = (JOB_KIND, judge_payload(answers, self.dataset, topics, self.judge, self.max_words, self.resamples))
        system, created = self.store.add_system(
            name=name,
            kind=kind,
            content_hash=content_hash,
            description=description,
            link=link,
            identity=identity,
            results=results,
            meta=ResultMeta(self.dataset.revision, __version__, meta_params),
            job=job,
        )
        return system, created, scores
