"""The board's verified results proposed to the model repos: one pull request per repo (`propose`), opened with
`HfApi.create_commit(create_pr=True)` by the account whose token the board holds.

Idempotent: a file is proposed only where neither the repo's main branch (a merged pull request, or the owner's own
commit) nor an open pull request of the board's account holds the same values (`eval_results.values_of`: dataset,
task, revision and value of every entry; a reworded note changes nothing), so running it twice opens nothing the
second time, and a repo whose files all hold the same values gets none. A repo the Hub refuses (no token, no right,
the rate limit, gone) is named with the fix, and the others go on. Every pull request opened, and every failure,
is in the audit log, one row per row of the board it holds (`kind_of(group, ACT)`: `admin:model_page` from the
command, `board:model_page` from the board itself).

`Proposer` is the board's side: the rows whose submitter ticked "propose these results to my model's page"
(`verified.PROPOSE` in the job's payload) are proposed once scored, by the board's loop (`freshstack-hf leaderboard
--board-url`), which holds the operator's token; a row it cannot propose (a folder, no Hub commit) is logged as not
proposed with why, a Hub failure is logged and tried again an hour later.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.eval_results import read_entries, values_of
from freshstack_hf.retrieval.models import hub_offline
from leaderboard.model_pages.hub_files import OFFLINE, client, hub_errors, hub_problem, read_text
from leaderboard.model_pages.verified import COMMIT, HUB_ID, PROPOSE, ModelFile, Plan, Target, plan
from leaderboard.store.audit import BOARD, BOARD_ACTS, kind_of
from leaderboard.store.records import SystemState
from leaderboard.store.store import Store
from leaderboard.submission.outcome import SubmitOutcome

log = logging.getLogger(__name__)

TITLE = "FreshStack results verified by the FreshStack-HF leaderboard"
ACT = "model_page"  # the audit rows' kind: `admin:model_page`, `board:model_page`
OPENED, UNCHANGED, WOULD_OPEN, FAILED, NOT_PROPOSED = "opened", "unchanged", "would open", "failed", "not proposed"
RETRY_SECONDS = 3600.0  # a row the Hub refused is tried again this much later by the board's loop


@dataclass(frozen=True, slots=True)
class RepoOutcome:
    """What became of one model repo: `status` (opened, unchanged, would open, failed), `detail` (the pull
    request's address, what holds the same values, or the problem and its fix), the files and the board's rows."""

    repo_id: str
    status: str
    detail: str
    paths: tuple[str, ...] = ()
    system_ids: tuple[int, ...] = ()

    def line(self) -> str:
        rows = ", ".join(f"#{i}" for i in self.system_ids)
        return f"{self.repo_id} ({rows}): {self.status}: {self.detail}"

    def as_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo_id,
            "status": self.status,
            "detail": self.detail,
            "paths": list(self.paths),
            "systems": list(self.system_ids),
        }


def description(files: list[ModelFile], target: Target, endpoint: str) -> str:
    """The pull request's text: who measured what, how, where the numbers are on the board, what merging does."""
    rows = [row for f in files for row in f.rows]
    commits = ", ".join(sorted({f"`{row.model_commit[:12]}`" for row in rows}))
    snapshots = ", ".join(sorted({f"{row.snapshot} (revision `{row.dataset_revision[:12]}`)" for row in rows}))
    versions = ", ".join(sorted({row.evaluator for row in rows}))
    links = "\n".join(f"  - `{f.path}`: {f.entries[0].source_url}" for f in files if f.entries)
    return (
        f"The [FreshStack-HF leaderboard]({target.board_url}) measured this model itself, and proposes its results for "
        "this model's page, in the Hub's `.eval_results` format.\n\n"
        f"- Benchmark: [{target.dataset_id}]({endpoint.rstrip('/')}/datasets/{target.dataset_id}), snapshot "
        f"{snapshots}.\n"
        f"- How: a worker of the board loaded this repo at commit {commits}, ranked every question of each topic "
        "(over the whole corpus, or over each question's candidates for a reranking task), and scored the rankings "
        "against the benchmark's nugget-level judgments (α-nDCG@10, Coverage@20, Recall@50; an average is the plain "
        f"mean of the topics) with freshstack-hf {versions}. Values are as the board stores them, at full precision "
        "(it shows them to three decimals).\n"
        "- Each entry links its row's Detail view on the board (per-topic values, intervals, per-query scores):\n"
        f"{links}\n\n"
        "Merge it to show these results on the model's page; close it to decline. It changes nothing else in the repo. "
        "The task ids are those the benchmark's dataset card lists."
    )


def propose(
    store: Store,
    planned: Plan,
    target: Target,
    *,
    by: str,
    group: str,
    dry_run: bool = False,
    api: Any = None,
) -> list[RepoOutcome]:
    """One pull request per repo of `planned` holding the files no board pull request or main branch holds the same
    values of (see the module docstring); with `dry_run`, what would be opened, nothing else. Audited as `by`
    (`kind_of(group, ACT)`): each pull request opened and each failure (a repo that needed none changed nothing)."""
    from huggingface_hub import CommitOperationAdd

    if not target.board_url:
        raise FreshStackError("proposing results needs the board's public address (--board-url): each entry links it")
    api = api or client()
    me, why = _account(api)
    outcomes = []
    for repo_id, files in planned.files.items():
        ids = tuple(i for f in files for i in f.system_ids)
        try:
            fresh, held, older = _unproposed(api, repo_id, files, me)
            if not fresh:
                outcome = RepoOutcome(repo_id, UNCHANGED, f"{'; '.join(held)} the same values", (), ids)
            elif dry_run:
                outcome = RepoOutcome(repo_id, WOULD_OPEN, _paths(fresh), tuple(f.path for f in fresh), ids)
            else:
                if why is not None:  # no account: the Hub would refuse the pull request with less to say
                    raise why
                text = description(fresh, target, api.endpoint)
                if older:
                    text += f"\n\nIt supersedes the board's earlier pull request{'s' if len(older) > 1 else ''} "
                    text += ", ".join(f"#{n}" for n in older) + ", which hold older values of these files."
                operations = [CommitOperationAdd(path_in_repo=f.path, path_or_fileobj=f.text.encode()) for f in fresh]
                info = api.create_commit(
                    repo_id, operations, commit_message=TITLE, commit_description=text, create_pr=True
                )
                fresh_ids = tuple(i for f in fresh for i in f.system_ids)
                paths = tuple(f.path for f in fresh)
                if info.pr_url:
                    outcome = RepoOutcome(repo_id, OPENED, f"{info.pr_url} ({_paths(fresh)})", paths, fresh_ids)
                else:  # the Hub found nothing to change: its main branch holds these very files
                    outcome = RepoOutcome(repo_id, UNCHANGED, "its main branch holds these files", paths, fresh_ids)
        except hub_errors() as exc:
            outcome = RepoOutcome(repo_id, FAILED, hub_problem(repo_id, exc).removeprefix(f"{repo_id}: "), (), ids)
        outcomes.append(outcome)
        if not dry_run and outcome.status in (OPENED, FAILED):
            _audit(store, outcome, by, group)
    return outcomes


def _paths(files: Iterable[ModelFile]) -> str:
    return ", ".join(f.path for f in files)


def _account(api: Any) -> tuple[str | None, BaseException | None]:
    """(the name of the account the token belongs to, whose open pull requests are the board's; None with why, the
    error, when the Hub cannot say: no usable token, or no answer). A dry run still reads public repos without."""
    try:
        return str(api.whoami()["name"]), None
    except hub_errors() as exc:
        return None, exc


def _same(text: str | None, f: ModelFile, where: str) -> bool:
    if text is None:
        return False
    try:
        return values_of(read_entries(text, where)) == values_of(f.entries)
    except FreshStackError:  # a file nobody can read holds no values: ours replaces it
        return False


def _unproposed(
    api: Any, repo_id: str, files: list[ModelFile], me: str | None
) -> tuple[list[ModelFile], list[str], list[int]]:
    """(the files neither the main branch nor an open pull request of the board holds the same values of; what holds
    the others; the board's open pull requests holding other values of these files)."""
    opened = [
        d
        for d in api.get_repo_discussions(repo_id, author=me, discussion_type="pull_request", discussion_status="open")
        if d.title == TITLE
    ]
    fresh, held, older = [], [], []
    for f in files:
        if _same(read_text(api, repo_id, f.path), f, f"{repo_id} {f.path}"):
            held.append(f"{f.path}: its main branch holds")
            continue
        holder = None
        for pr in opened:
            text = read_text(api, repo_id, f.path, pr.git_reference)
            if _same(text, f, f"{repo_id} {f.path} at {pr.git_reference}"):
                holder = pr.num
                break
            if text is not None and pr.num not in older:
                older.append(pr.num)
        if holder is None:
            fresh.append(f)
        else:
            held.append(f"{f.path}: the board's open pull request #{holder} holds")
    return fresh, held, older


def _audit(store: Store, outcome: RepoOutcome, by: str, group: str) -> None:
    for system_id in outcome.system_ids:
        store.audit.append(
            by, kind_of(group, ACT), outcome.status, system_id=system_id, detail=f"{outcome.repo_id}: {outcome.detail}"
        )


def blocker(board_url: str, dataset_id: str, dataset_revision: str) -> str | None:
    """Why this board cannot propose a row's results to its model's page, or None when it can: the settings it
    runs with, the revision it serves, the Hub and the token its process holds."""
    from huggingface_hub import get_token

    if not board_url:
        return "this board runs without a public address to link the results to (the operator's --board-url)"
    if not dataset_id:
        return "this board serves a local folder, with no Hub dataset for the results to name (--dataset-id)"
    if not COMMIT.match(dataset_revision):
        return f"the revision this board serves ({dataset_revision[:20]}) is a local folder's, no Hub commit"
    if hub_offline():
        return OFFLINE
    if get_token() is None:
        return "this board holds no Hugging Face token (HF_TOKEN) to open the pull request with"
    return None


def proposal_note(model: str, why_not: str | None) -> str:
    """What a submitter who ticked "propose these results to my model's page" is told: what will happen, or why
    it will not (`blocker`'s reason) and how it still can."""
    if not HUB_ID.match(model.strip()):
        return "Nothing will be proposed to a model page: this model is not a Hub repo."
    if why_not:
        return (
            f"Not proposed to {model}'s page: {why_not}. The board's operator can propose it later "
            "(freshstack-hf admin eval-results --open-prs)."
        )
    return (
        f"Once it is scored, the board opens a pull request on {model} proposing these results for its page (an "
        ".eval_results file); the repo's owner merges or closes it."
    )


def told_proposal(outcome: SubmitOutcome, model: str, why_not: str | None) -> SubmitOutcome:
    """An accepted submission's outcome with what becomes of its "propose these results to my model's page"
    (`proposal_note`), so a submitter whose board cannot propose them learns it now, not never."""
    if not outcome.accepted:
        return outcome
    note = proposal_note(model, why_not)
    return dataclasses.replace(
        outcome, message=f"{outcome.message}. {note}", details={**outcome.details, "propose": note}
    )


@dataclass
class Proposer:
    """The board's own proposals: the rows whose submitter asked for them, once scored (see the module docstring).
    `run_once` is one pass; the board's loop calls it every minute or so."""

    store: Store
    target: Target
    api_factory: Callable[[], Any] = client
    clock: Callable[[], float] = time.monotonic
    handled: set[int] | None = None  # rows proposed (or that never can be), read from the audit log at first
    retry_at: dict[int, float] = field(default_factory=dict)

    def _handled(self) -> set[int]:
        if self.handled is None:
            kind = kind_of(BOARD_ACTS, ACT)
            final = (OPENED, NOT_PROPOSED)
            self.handled = {
                r.system_id
                for r in self.store.audit.rows()
                if r.kind == kind and r.outcome in final and r.system_id is not None
            }
        return self.handled

    def waiting(self) -> list[int]:
        """The scored, listed rows that asked to be proposed and were not yet (nor failed within the hour)."""
        handled, now = self._handled(), self.clock()
        asked = [sid for sid, p in self.store.queue.first_payloads().items() if p.get(PROPOSE)]
        ready = []
        for sid in asked:
            if sid in handled or self.retry_at.get(sid, 0.0) > now:
                continue
            system = self.store.get_system(sid)
            if system is None or not system.listed:
                handled.add(sid)  # deleted or hidden: never proposed
            elif system.status == SystemState.SCORED:
                ready.append(sid)
        return ready

    def run_once(self) -> list[RepoOutcome]:
        ready = self.waiting()
        if not ready:
            return []
        handled = self._handled()
        planned = plan(self.store, self.target, only=ready)
        for skipped in planned.skipped:
            self.store.audit.append(
                BOARD, kind_of(BOARD_ACTS, ACT), NOT_PROPOSED, system_id=skipped.system_id, detail=skipped.why
            )
            handled.add(skipped.system_id)
        outcomes = propose(self.store, planned, self.target, by=BOARD, group=BOARD_ACTS, api=self.api_factory())
        for outcome in outcomes:
            if outcome.status == FAILED:
                for sid in outcome.system_ids:
                    self.retry_at[sid] = self.clock() + RETRY_SECONDS
            else:
                handled.update(outcome.system_ids)
            log.info("model pages: %s", outcome.line())
        return outcomes
