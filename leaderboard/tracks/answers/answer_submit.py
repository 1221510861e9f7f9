"""Answer submissions (the RAG track): checked strictly, scored by citation at once, judged later by a worker.

`AnswerSubmitter.checks` is the one order an answer file goes through: size cap and text fields, then the dedupe
lookup (the file's hash with the dataset revision), the rate limit, a gzip bomb, and only then parsing with
`freshstack_hf.answers.read_answers` (every problem listed with its line; nothing is stored on any problem) and
scoring. Citation scores need no model, so they are computed and stored with the system in one transaction,
together with the checked answers themselves (TREC RAG JSONL, a blob of the system filed by its sha256,
`leaderboard.store.blobs`). All/Vital need a judge: when the app is configured with a judge endpoint
(`JudgeEndpoint`), an `answers_judge` job is queued in the same transaction. Its payload names the answers' hash,
the dataset and the endpoint's URL and model, never a key: the worker reads the answers from the store and the key
from its own environment (`JUDGE_KEY_ENV`). Stored measures are named by `answer_rows`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.answers import read_answers, score_answers, to_trec_rag
from freshstack_hf.answers.measures import BY_ID
from freshstack_hf.answers.parse import DEFAULT_MAX_WORDS, AnswerSet
from freshstack_hf.answers.scores import AnswerScores
from freshstack_hf.defaults import SEED
from freshstack_hf.errors import FreshStackError
from leaderboard.sanitize import SubmissionText, sanitize_submission
from leaderboard.store.audit import AuditEntry
from leaderboard.store.blobs import Blob
from leaderboard.store.records import ResultMeta, SystemRecord
from leaderboard.submission.audited import audited, logged_with
from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus, parse_refusal, refused
from leaderboard.submission.submitter import BaseSubmitter
from leaderboard.submission.upload import Check, Upload
from leaderboard.submission.uploaded_files import file_sha256, gzip_bomb, uploaded_size
from leaderboard.tracks.answers import ANSWERS_BLOB, JUDGE_JOB_KIND, SYSTEM_KIND
from leaderboard.tracks.answers.answer_rows import answers_content_hash, measure_key, stored_results
from leaderboard.worker.job_contract import payload_dataset
from leaderboard.worker.judge_endpoint import JudgeEndpoint

NAMES = {measure_key(m.id): m.name for m in BY_ID.values()}  # stored answer measure id -> display name


@dataclass(frozen=True, slots=True)
class AnswerOutcome(SubmitOutcome):
    """A scored answer file: its averages are stored answer measures (`answers:...`), named from their table."""

    def measure_name(self, measure: str) -> str:
        return NAMES.get(measure, measure)


def answered_topics(answers: AnswerSet, topics: Iterable[str], query_ids: Mapping[str, frozenset[str]]) -> list[str]:
    """The topics the file answers at least one query of (an answer file may cover one topic or all)."""
    return [t for t in topics if query_ids[t] & answers.answers.keys()]


def judge_payload(
    answers_sha256: str, dataset: Any, topics: list[str], judge: JudgeEndpoint, max_words: int, resamples: int
) -> dict[str, Any]:
    """What the worker needs to judge the answers: the hash of the checked answers the store keeps (TREC RAG JSONL,
    whatever format was uploaded, gzipped or not), the dataset and the endpoint; never a secret."""
    return {
        "answers_sha256": answers_sha256,
        **payload_dataset(dataset),
        "topics": topics,
        "judge": judge.as_payload(),
        "max_words": max_words,
        "resamples": resamples,
    }


@dataclass(kw_only=True)
class AnswersUpload(Upload):
    """An answer file as given, and what its checks learn of it in their order."""

    path: str | Path | None
    given: tuple[str, str, str]  # name, description, link as typed
    display_name: str | None
    text: SubmissionText | None = None
    file_hash: str = ""  # the key names it already: the audit log is not told it twice
    label: str = ""
    answers: AnswerSet | None = None


class AnswerSubmitter(BaseSubmitter[AnswersUpload]):
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

    @audited("answers")
    def submit(
        self,
        path: str | Path | None,
        *,
        name: str,
        description: str = "",
        link: str = "",
        display_name: str | None = None,
        identity: str = "",
    ) -> SubmitOutcome:
        """Validate strictly, score citations at once, store, and queue the judge when one is configured."""
        given = (name, description, link)
        return self.checked(AnswersUpload(identity=identity, path=path, given=given, display_name=display_name))

    def checks(self) -> tuple[Check[AnswersUpload], ...]:
        return (self.check_fields, self.dedupe, self.rate_limit, self.gzip_bomb, self.parse, self.score_and_store)

    def check_fields(self, upload: AnswersUpload) -> SubmitOutcome | None:
        """The cheap refusals: no file, over the size cap, unusable name, description or link; what passes is keyed
        by the file's hash on the dataset revision."""
        try:
            formats = "TREC RAG JSONL or JSON {query_id: {text, citations}}"
            self.within_cap(uploaded_size(upload.path, "answer", formats), "answer")
            upload.text = sanitize_submission(*upload.given)
        except (FreshStackError, OSError) as exc:
            return refused(str(exc))
        upload.file_hash = file_sha256(str(upload.path))
        upload.content_hash = answers_content_hash(upload.file_hash, self.dataset.revision)
        upload.label = upload.display_name or Path(str(upload.path)).name
        return None

    def gzip_bomb(self, upload: AnswersUpload) -> SubmitOutcome | None:
        """A gzipped file that expands past `GZIP_RATIO` times the cap is refused before it is parsed."""
        return gzip_bomb(str(upload.path), "answers", self.max_file_bytes)

    def parse(self, upload: AnswersUpload) -> SubmitOutcome | None:
        """The strict parser, against the dataset's query and doc ids (read only now)."""
        path = str(upload.path)
        try:
            ids = {"query_ids": self.dataset.query_ids(), "doc_ids": self.dataset.doc_ids()}
            upload.answers = read_answers(path, **ids, max_words=self.max_words)
        except FreshStackError as exc:
            return parse_refusal(exc, "answers", upload.label, path)
        return None

    def score_and_store(self, upload: AnswersUpload) -> SubmitOutcome:
        """Citation scores stored with the row and the checked answers, the judge queued (when configured)."""
        answers, text = upload.answers, upload.text
        assert answers is not None and text is not None and upload.content_hash is not None
        ids = {t: self.dataset.query_ids([t]) for t in self.dataset.topics}
        topics = answered_topics(answers, self.dataset.topics, ids)
        plural = "s" if len(topics) != 1 else ""
        judged = "; judge queued" if self.judge is not None else "; no judge configured, so no All/Vital"

        def told(system: SystemRecord) -> SubmitOutcome:  # the averages are added once the store has returned
            message = f"scored: answers #{system.id} '{system.name}' on {len(topics)} topic{plural} (citations)"
            return AnswerOutcome(SubmitStatus.SCORED, message + judged, system.id)

        audit, answer = logged_with(upload, told)
        stored = self.store_answers(
            answers,
            topics,
            name=text.name,
            content_hash=upload.content_hash,
            description=text.description,
            link=text.link,
            identity=upload.identity,
            params={"job": "answers", "file_sha256": upload.file_hash, "format": answers.fmt, "run_id": answers.run_id},
            audit=audit,
        )
        if stored is None:
            return refused(f"answers {upload.label}: none of the answered queries has nuggets to score")
        system, created, scores = stored
        if not created:
            return self.raced(upload, system)
        average = {measure_key(m): v for m, v in scores.average.items()}
        return dataclasses.replace(answer(system), details={"topics": topics, "average": average})

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
        kind: str = SYSTEM_KIND,
        audit: AuditEntry | Callable[[SystemRecord], AuditEntry | None] | None = None,
    ) -> tuple[SystemRecord, bool, AnswerScores] | None:
        """Citation scores now, the judge job (when configured) and the `audit` row in the same transaction; None
        when nothing of `topics` can be scored (no query with nuggets)."""
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
        # Stored with the row, filed under the text's sha256: the judge job names it so and reads it from the store.
        checked = Blob.of(to_trec_rag(answers).encode("utf-8"), ANSWERS_BLOB)
        job = None
        if self.judge is not None:
            payload = judge_payload(checked.sha256, self.dataset, topics, self.judge, self.max_words, self.resamples)
            job = (JUDGE_JOB_KIND, payload)
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
            blobs={ANSWERS_BLOB: checked},
            audit=audit,
        )
        return system, created, scores
