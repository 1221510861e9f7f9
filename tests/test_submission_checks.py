"""Each kind of submission declares its checks as one ordered list (`checks()`), and that list is the order they
run in, each once (`BaseSubmitter.checked`): a submission meeting two refusals is told the one that comes first in
its kind's list, and a step after the first answer never runs (a duplicate is never counted by the rate limit; a
refused parse is counted, and a rate-limited identity is told so before what is wrong with its file)."""

from __future__ import annotations

import gzip

import pytest
from hub_models import COMMIT, OTHER_COMMIT
from submission_files import answers_text, merged, write_trec

from leaderboard.submission.outcome import SubmitOutcome, SubmitStatus
from leaderboard.submission.submitter import BaseSubmitter
from leaderboard.submission.upload import Upload
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.tracks.reranking.rerank_submit import RerankedRunSubmitter, RerankerSubmitter
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter

RUN_CHECKS = [
    "check_fields",
    "dedupe_file",
    "parse_within_cap",
    "dedupe_ranking",
    "rate_limit",
    "refuse_unparsed",
    "cap_kept_ranking",
    "require_a_query",
    "score_and_store",
]
MODEL_CHECKS = ["check_reference", "dedupe", "rate_limit", "live_quota", "queue"]  # scored live: the quota last
ANSWER_CHECKS = ["check_fields", "dedupe", "rate_limit", "gzip_bomb", "parse", "score_and_store"]


def names(submitter: BaseSubmitter) -> list[str]:
    return [check.__name__ for check in submitter.checks()]


def test_each_kind_declares_its_checks_in_one_order(store, lb_dataset):
    assert names(RunSubmitter(store, lb_dataset)) == RUN_CHECKS
    assert names(RerankedRunSubmitter(store, lb_dataset)) == RUN_CHECKS  # a run of the reranking track
    assert names(ModelSubmitter(store, lb_dataset)) == MODEL_CHECKS
    assert names(RerankerSubmitter(store, lb_dataset)) == MODEL_CHECKS
    assert names(AnswerSubmitter(store, lb_dataset)) == ANSWER_CHECKS
    for checks in (RUN_CHECKS, MODEL_CHECKS, ANSWER_CHECKS):  # every dedupe stands before the rate limit
        assert max(i for i, name in enumerate(checks) if name.startswith("dedupe")) < checks.index("rate_limit")
    assert MODEL_CHECKS.index("rate_limit") < MODEL_CHECKS.index("live_quota")  # a refusal spends no live scoring


class Toy(BaseSubmitter[Upload]):
    """A kind whose steps record that they ran; `answers` names the steps that answer."""

    def __init__(self, store, dataset, answers: set[str]) -> None:
        super().__init__(store, dataset)
        self.answers, self.ran = answers, []

    def checks(self):
        return (self.first, self.second, self.third)

    def step(self, name: str, upload: Upload) -> SubmitOutcome | None:
        self.ran.append(name)
        upload.content_hash = f"key after {name}"
        return SubmitOutcome(SubmitStatus.REFUSED, name) if name in self.answers else None

    def first(self, upload: Upload) -> SubmitOutcome | None:
        return self.step("first", upload)

    def second(self, upload: Upload) -> SubmitOutcome | None:
        return self.step("second", upload)

    def third(self, upload: Upload) -> SubmitOutcome | None:
        return self.step("third", upload)


def test_the_first_check_to_answer_is_the_outcome_and_no_later_check_runs(store, lb_dataset):
    toy = Toy(store, lb_dataset, {"second", "third"})
    outcome = toy.checked(Upload(identity="ip:1", file_sha256="f"))
    assert (outcome.message, toy.ran) == ("second", ["first", "second"])
    assert (outcome.content_hash, outcome.file_sha256) == ("key after second", "f")  # the keys known by then
    quiet = Toy(store, lb_dataset, set())  # a list whose last step lets the upload through fails loudly
    with pytest.raises(AssertionError, match="the last of its checks stores the submission and answers"):
        quiet.checked(Upload(identity="ip:1"))
    assert quiet.ran == ["first", "second", "third"]


def test_a_run_meeting_two_refusals_is_told_the_first_of_its_list(store, lb_dataset, bm25_runs, tmp_path):
    runs = RunSubmitter(store, lb_dataset, rate_limit=1, resamples=0)
    good = write_trec(tmp_path / "good.trec", merged(bm25_runs), depth=10)
    other = write_trec(tmp_path / "other.trec", merged(bm25_runs), depth=11)
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 doc 1\n", encoding="utf-8")
    assert runs.submit(good, name="first", identity="ip:a").status == "scored"  # ip:a is at its limit now

    # at its limit, ip:a is told of a cheap refusal first, then of a duplicate (never counted), then of the limit,
    # before what is wrong with its file
    assert runs.submit(other, name="x", scope="nope", identity="ip:a").message.startswith("unknown topic 'nope'")
    assert runs.submit(good, name="again", identity="ip:a").status == "duplicate"
    assert runs.submit(bad, name="bad", identity="ip:a").status == "rate_limited"
    assert runs.submit(other, name="other", identity="ip:a").status == "rate_limited"

    # a refused parse is counted: ip:b's bad file is refused, and its next file is over the limit
    refused = runs.submit(bad, name="bad", identity="ip:b", display_name="bad.trec")
    assert refused.status == "refused" and refused.problems and refused.problems[0].startswith("bad.trec line 1")
    assert runs.submit(other, name="other", identity="ip:b").status == "rate_limited"
    assert [r.outcome for r in store.audit.rows()] == [
        "scored", "refused", "duplicate", "rate_limited", "rate_limited", "refused", "rate_limited"
    ]  # fmt: skip


def test_a_model_meeting_two_refusals_is_told_the_first_of_its_list(store, lb_dataset):
    models = ModelSubmitter(store, lb_dataset, rate_limit=1)
    first = models.submit("org/embedder", revision=COMMIT, identity="ip:a")
    assert first.status == "queued"  # ip:a is at its limit now
    store.moderation.delete_system(first.system_id, reason="not a retrieval model", by="local:operator")
    assert models.submit("", identity="ip:a").message == "no model: give a Hub id (org/name)"
    deleted = models.submit("org/embedder", revision=COMMIT, identity="ip:a")  # deleted, and over the limit
    assert deleted.status == "refused" and "not a retrieval model" in deleted.message
    assert models.submit("org/embedder", revision=OTHER_COMMIT, identity="ip:a").status == "rate_limited"

    rerankers = RerankerSubmitter(store, lb_dataset, rate_limit=1)
    assert rerankers.submit("org/cross-encoder", revision=COMMIT, identity="ip:c").status == "queued"
    assert rerankers.submit("org/cross-encoder", revision=COMMIT, identity="ip:c").status == "duplicate"
    limited = rerankers.submit("org/other-cross-encoder", revision=COMMIT, identity="ip:c")
    assert limited.status == "rate_limited" and limited.content_hash.startswith("reranker:")


def test_answers_meeting_two_refusals_are_told_the_first_of_their_list(store, lb_dataset, bm25_runs, tmp_path):
    answers = AnswerSubmitter(store, lb_dataset, rate_limit=1, resamples=0, max_file_bytes=200_000)
    good = tmp_path / "answers.jsonl"
    good.write_text(answers_text(lb_dataset, bm25_runs))
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b"\n" * (200_000 * 26)))
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    assert answers.submit(good, name="first", identity="ip:a").status == "scored"  # ip:a is at its limit now
    assert answers.submit(good, name="again", identity="ip:a").status == "duplicate"
    assert answers.submit(bomb, name="bomb", identity="ip:a").status == "rate_limited"  # the limit, then the bomb
    assert answers.submit(junk, name="junk", identity="ip:a").status == "rate_limited"  # the limit, then the parse
    assert answers.submit(bomb, name="bomb", identity="ip:b").message.startswith("answers file expands past")
    assert answers.submit(junk, name="junk", identity="ip:b").status == "rate_limited"  # the bomb was counted
