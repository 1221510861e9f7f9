"""What every submission goes through, whatever its track: the outcome the submitter is told, and the checks in
their order.

The order of the checks is the point. Cheap refusals come first (size cap, text fields), then the dedupe
lookup (a content hash, always together with the dataset revision, so a resubmission is answered with the stored
row and never scored twice nor counted against the quota), then the per-identity rate limit, a gzip bomb, and
only then the expensive part: the track's strict parser (every problem listed with its line; nothing is stored
on any problem) and scoring. A run is the exception: it is read as a stream to the depth the board keeps, so
the cap applies to that part and to the text read (no separate gzip pass), and its dedupe key is the canonical
ranking's, known once it is parsed (the file's own hash is still looked up first, as older boards keyed runs by
it, and the audit log keeps it); the rate limit follows that lookup, so a duplicate is never counted.

The store's unique content hash settles races between identical submissions arriving together; a content hash a
moderator deleted stays in the store as a tombstone, so the same content is refused, naming the reason, whichever
check meets it. The tracks' submitters (`tracks.retrieval.run_submit`,
`tracks.answers.answer_submit`) build on `BaseSubmitter`, and mark each public submit method `@audited`: every
call, whatever its outcome, appends one row to the store's audit log (`leaderboard.store.audit`).
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.metrics import parse_measure
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import GZIP_RATIO, MAX_UPLOAD_MB, RATE_LIMIT_PER_HOUR, upload_bytes
from leaderboard.sanitize import SubmissionText, escape_markdown, sanitize_submission
from leaderboard.store.audit import SUBMISSION, kind_of
from leaderboard.store.records import SystemRecord
from leaderboard.store.schema import DELETED, HIDDEN
from leaderboard.store.store import Store

MAX_PROBLEMS = 100  # listed back to the submitter; the rest are counted


@dataclass(frozen=True, slots=True)
class SubmitOutcome:
    """What the submitter is told. `status`: scored, queued, duplicate, refused or rate_limited. `content_hash`:
    the submission's dedupe key, once it was computed (the audit log keeps it; the submitter is not told)."""

    status: str
    message: str
    system_id: int | None = None
    problems: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    content_hash: str | None = None
    file_sha256: str | None = None  # the uploaded bytes' hash, for the audit log (a run's key is its ranking's)

    @property
    def accepted(self) -> bool:
        return self.status in ("scored", "queued")

    def markdown(self) -> str:
        """What the page shows: the message, the problems, and for a scored run each measure's average.

        Message and problems are escaped (they quote file content and submitter text); numbers have three
        decimals. The full-precision figures are in `as_json` (the API's second output).
        """
        lines = [escape_markdown(self.message)] + [f"- {escape_markdown(p)}" for p in self.problems]
        average = self.details.get("average") or {}
        if average:
            topics = ", ".join(escape_markdown(t) for t in self.details.get("topics", []))
            lines += ["", f"Average of the topics ({topics}):", "", "| measure | average |", "| --- | ---: |"]
            lines += [f"| {escape_markdown(self.measure_name(m))} | {v:.3f} |" for m, v in average.items()]
        return "\n".join(lines)

    def measure_name(self, measure: str) -> str:
        """How the average table names a measure id (a retrieval measure: its display name)."""
        return parse_measure(measure).name

    def logged(self) -> str:
        """The audit log's detail: the message, the first problems and the uploaded file's hash, on one line."""
        uploaded = [f"file sha256 {self.file_sha256}"] if self.file_sha256 else []
        return "; ".join([self.message, *self.problems[:5], *uploaded]).replace("\n", " ")

    def as_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "message": self.message,
            "system_id": self.system_id,
            "problems": list(self.problems),
            **self.details,
        }


def refused_with_problems(exc: ValidationError, what: str, label: str) -> SubmitOutcome:
    """A refusal listing the file's problems (the first `MAX_PROBLEMS`), each located in the file as uploaded."""
    problems = [str(dataclasses.replace(p, where=label)) for p in exc.problems[:MAX_PROBLEMS]]
    if len(exc.problems) > MAX_PROBLEMS:
        problems.append(f"... and {len(exc.problems) - MAX_PROBLEMS} more")
    return SubmitOutcome("refused", f"{what} refused: {len(exc.problems)} problem(s)", problems=tuple(problems))


def audited(what: str) -> Callable[[Callable[..., SubmitOutcome]], Callable[..., SubmitOutcome]]:
    """Mark a submitter's public submit method: each call's outcome becomes one audit row (`submit:<what>`), as
    the `identity` keyword it was given, with the outcome's content hash, system and message."""

    def wrap(submit: Callable[..., SubmitOutcome]) -> Callable[..., SubmitOutcome]:
        @functools.wraps(submit)
        def logged(self: BaseSubmitter, *args: Any, **options: Any) -> SubmitOutcome:
            outcome = submit(self, *args, **options)
            self.store.audit.append(
                options.get("identity", ""),
                kind_of(SUBMISSION, what),
                outcome.status,
                content_hash=outcome.content_hash,
                system_id=outcome.system_id,
                detail=outcome.logged(),
            )
            return outcome

        return logged

    return wrap


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def identity_of(username: str | None, client_host: str | None) -> str:
    """Rate-limit identity: the signed-in user when OAuth is on, else the client address."""
    return f"user:{username}" if username else f"ip:{client_host or 'unknown'}"


class BaseSubmitter:
    """The checks every track's submissions get, for one dataset and one store (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        dataset: Dataset,
        *,
        max_file_bytes: int = upload_bytes(MAX_UPLOAD_MB),
        rate_limit: int | None = RATE_LIMIT_PER_HOUR,
        resamples: int = RESAMPLES,
    ) -> None:
        self.store, self.dataset = store, dataset
        self.max_file_bytes, self.rate_limit, self.resamples = max_file_bytes, rate_limit, resamples

    def _duplicate(self, content_hash: str) -> SubmitOutcome | None:
        """The stored system of `content_hash`: a duplicate, or refused when a moderator deleted it (its reason
        named); None when it is new."""
        found = self.store.find_system(content_hash)
        if found is None:
            return None
        if found.moderation == DELETED:
            day = found.moderated_at.strftime("%Y-%m-%d") if found.moderated_at else "an earlier day"
            message = (
                f"refused: deleted from the board on {day} (system #{found.id}), reason: {found.moderation_reason}; "
                "the same content is not accepted again"
            )
            return SubmitOutcome("refused", message, found.id, content_hash=content_hash)
        if found.moderation == HIDDEN:
            message = f"already submitted as system #{found.id}, which the moderators have hidden; not scored again"
        else:
            message = f"already submitted: see system #{found.id} '{found.name}' ({found.status}); not scored again"
        return SubmitOutcome("duplicate", message, found.id, content_hash=content_hash)

    def _rate_limited(self, identity: str) -> SubmitOutcome | None:
        if not self.rate_limit or self.rate_limit <= 0:
            return None
        decision = self.store.rate_limit.check(identity, self.rate_limit)
        if decision:
            return None
        wait = max(1, round(decision.retry_after_seconds / 60))
        return SubmitOutcome("rate_limited", f"rate limit: {decision.limit} submissions per hour; retry in {wait} min")

    def _gzip_bomb(self, path: str | Path, what: str) -> SubmitOutcome | None:
        """Refuse a gzipped upload (`what`: run, answers) that expands past the cap times `GZIP_RATIO`, reading at
        most that much."""
        if not str(path).endswith(".gz"):
            return None
        limit, total = self.max_file_bytes * GZIP_RATIO, 0
        try:
            with gzip.open(path, "rb") as fh:
                while block := fh.read(1 << 20):
                    total += len(block)
                    if total > limit:
                        return SubmitOutcome("refused", f"{what} file expands past {limit:,} bytes once decompressed")
        except (OSError, EOFError) as exc:
            return SubmitOutcome("refused", f"{what} file is not a readable gzip file ({exc})")
        return None

    def _checked_upload(
        self, path: str | Path | None, what: str, formats: str, *text: str, capped: bool = True
    ) -> SubmissionText:
        """The cheap refusals every upload gets first: no file, over the cap (unless `capped` is False: a run's
        cap applies to what is kept of it), unusable name/description/link."""
        if path is None:
            raise FreshStackError(f"no {what} file: upload {formats}")
        size = os.path.getsize(path)
        if capped and size > self.max_file_bytes:
            raise FreshStackError(f"{what} file is {size:,} bytes, over the {self.max_file_bytes:,}-byte cap")
        return sanitize_submission(*text)

    def _parsed_upload(
        self,
        path: str | Path,
        what: str,
        label: str,
        content_hash: str,
        identity: str,
        parse: Callable[[], Any],
        *,
        streamed: bool = False,
    ) -> Any:
        """After the cheap refusals: the dedupe lookup, the rate limit and a gzip bomb, then `parse()` (the
        track's strict parser); returns what it parsed, or the `SubmitOutcome` refusing the upload, its problems
        located in the file as uploaded (`label`, never the server's path).

        `streamed` (a run): `parse` reads within a limit of its own, and the caller dedupes what it parsed before
        the rate limit counts it; an upload the parser refuses is counted here, as it would have been before
        parsing (a rate-limited identity is told so rather than what is wrong with its file)."""
        if streamed:
            refusal = self._duplicate(content_hash)
        else:
            refusal = self._duplicate(content_hash) or self._rate_limited(identity) or self._gzip_bomb(path, what)
        if refusal is not None:
            return dataclasses.replace(refusal, content_hash=content_hash)
        try:
            return parse()
        except ValidationError as exc:
            refused = refused_with_problems(exc, f"{what} {label}", label)
        except FreshStackError as exc:
            refused = SubmitOutcome("refused", str(exc).replace(str(path), label))
        limited = self._rate_limited(identity) if streamed else None
        return dataclasses.replace(limited or refused, content_hash=content_hash)

    def _add(
        self, text: SubmissionText, kind: str, content_hash: str, identity: str, **stored: Any
    ) -> tuple[SystemRecord, bool]:
        """`Store.add_system` with the submitter's sanitized name, description and link."""
        return self.store.add_system(
            name=text.name,
            kind=kind,
            content_hash=content_hash,
            description=text.description,
            link=text.link,
            identity=identity,
            **stored,
        )
