"""What the tabs of one page share while it is built (`leaderboard.page.app` builds it from `leaderboard.page.tabs`).

A tab (`PageTab`) lays out its components inside its `gr.Tab` (`layout`), then wires its events (`wire`), once
every tab is laid out, so a tab may wire to another's components. Tabs share, through the `Page`:

* the dataset, the store (with the rankings and files behind rows) and the app's settings;
* services built once for the whole page (`shared`: e.g. the retrieval board, read by four tabs);
* parts a tab publishes for others (`publish` / `part`: e.g. the Leaderboard table, which the Detail tab
  listens to, and the event that refreshes it, `REFRESH`, which the Submit and Admin tabs chain);
* the page's load chain (`on_load`): the steps run one after the other when a page opens, in the order the tabs
  add them (the Leaderboard's first rows first, so the page shows them as early as it can);
* how events run at once (`READ`, `WRITE`): every read-only event in one large group, the writes few at a time;
* the signed submit (`signed`): who submits (the signed-in user under OAuth, else the client address, for the
  rate limit), refused unsigned under OAuth (and that refusal logged like any other outcome);
* who moderates (`is_admin`): the signed-in users named with `--admin`, checked on every admin action's call,
  never only by hiding the Admin tab (a hidden tab's events can still be called).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr

from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.repo.dataset import Dataset
from leaderboard.defaults import (
    LIVE_RELEASE,
    LIVE_SCORES_PER_WEEK,
    MAX_UPLOAD_MB,
    RATE_LIMIT_PER_HOUR,
    READ_CONCURRENCY,
    WRITE_CONCURRENCY,
    upload_bytes,
)
from leaderboard.scoring import HERE, Scorer, ScoringApart
from leaderboard.store.audit import SUBMISSION, kind_of
from leaderboard.store.store import Store
from leaderboard.submission.upload import identity_of

# How an event runs in the queue, given with each event (`leaderboard.defaults` has the numbers and why): every
# read-only event joins one group of `READ_CONCURRENCY` at once, so no visitor's table waits behind another's;
# each event that writes (a submission, a moderation) runs `WRITE_CONCURRENCY` calls at once. The load chain's
# steps are reads (`Page.on_load`).
READS = "board-reads"
READ: dict[str, Any] = {"concurrency_id": READS, "concurrency_limit": READ_CONCURRENCY}
WRITE: dict[str, Any] = {"concurrency_limit": WRITE_CONCURRENCY}
# A submission that is scored in this process (a run, a reranked run, answers): one at a time, whatever its kind.
# Scoring holds the interpreter; under one lock, two at once take as long as one after the other, but each thread
# scoring is one more the event loop takes turns with, and every visitor's page waited longer.
SCORING: dict[str, Any] = {"concurrency_id": "board-scoring", "concurrency_limit": 1}
# The part a tab showing the board's main table publishes, (render, inputs, table): a tab whose action changes rows
# (a submission, a moderation) chains it, so the table shows the change at once.
REFRESH = "leaderboard.refresh"
Profile = gr.OAuthProfile | None  # Gradio passes the signed-in profile to a parameter annotated so
SIGN_IN_FIRST = "not signed in: this board takes submissions from signed-in Hugging Face users only"
Path_ = str | None  # an uploaded file's path, or None


@dataclass(frozen=True, slots=True)
class Settings:
    """`build_app`'s options, as the tabs read them."""

    reported_path: str | Path | None = None  # `--reported` figures, shown in the Reference tab
    max_file_mb: float = MAX_UPLOAD_MB
    rate_limit: int | None = RATE_LIMIT_PER_HOUR
    model_roots: tuple[Path, ...] = ()
    oauth: bool = False
    resamples: int = RESAMPLES
    drift_reports: tuple[str | Path, ...] = ()  # `--drift` reports, shown in the Drift tab
    admins: tuple[str, ...] = ()  # `--admin` Hugging Face users: the Admin tab's moderators (OAuth only)
    score_apart: bool = False  # score submissions in a child process (`scoring.ScoringApart`): a served board
    live_per_week: int = LIVE_SCORES_PER_WEEK  # `--live-per-week`: live scorings per identity in 7 days
    live_release: str = LIVE_RELEASE  # `--live-release`: when a live value is shown (`leaderboard.live_release`)
    worker_here: bool = False  # a worker runs in the board's process (`serve_board`, no `--no-worker`), as About says
    # The board's public address (`--board-url`) and the benchmark's Hub dataset id (`--dataset-id`, else the served
    # Hub dataset's): what the board proposes to model pages links, and whose reports the Reference tab reads.
    board_url: str = ""
    dataset_id: str = ""

    def __post_init__(self) -> None:
        """The options as given (paths as text, user names with spaces, any sequence) made what the tabs read, once,
        wherever a page's settings are made."""
        normal = {
            "model_roots": tuple(Path(p) for p in self.model_roots),
            "drift_reports": tuple(Path(p) for p in self.drift_reports),
            "admins": tuple(name.strip() for name in self.admins if name and name.strip()),
            "board_url": self.board_url.strip(),
        }
        for name, value in normal.items():
            object.__setattr__(self, name, value)

    @property
    def max_file_bytes(self) -> int:
        return upload_bytes(self.max_file_mb)


class Page:
    """One page being built: see the module docstring."""

    def __init__(self, demo: gr.Blocks, tabs: gr.Tabs, dataset: Dataset, store: Store, settings: Settings) -> None:
        self.demo, self.tabs, self.dataset, self.store = demo, tabs, dataset, store
        self.settings = settings
        self.first_paint_rows: Callable[[dict[str, str]], dict[str, Any]] | None = None  # see `first_paint`
        self._shared: dict[str, Any] = {}
        self._parts: dict[str, Any] = {}
        self._load: list[tuple[Callable[..., Any], Any, Any, dict[str, Any]]] = []
        self.scorer: Scorer = HERE
        if settings.score_apart:
            self.scorer = ScoringApart()
            self.scorer.warm(dataset)

    def submitter_options(self) -> dict[str, Any]:
        """The settings every submitter of this page is built with (`submission.submitter.BaseSubmitter`): one
        upload cap, one rate limit, one resample count and one scorer for runs, models, rerankers and answers alike,
        and the live quota the kinds scored live count."""
        settings = self.settings
        return {
            "max_file_bytes": settings.max_file_bytes,
            "rate_limit": settings.rate_limit,
            "live_per_week": settings.live_per_week,
            "resamples": settings.resamples,
            "scorer": self.scorer,
        }

    def shared(self, key: str, make: Callable[[], Any]) -> Any:
        """The page's one `key` service, made by `make()` the first time a tab asks for it."""
        if key not in self._shared:
            self._shared[key] = make()
        return self._shared[key]

    def publish(self, name: str, part: Any) -> None:
        """Offer `part` (a component, an event's fn/inputs/outputs, ...) to the other tabs under `name`."""
        self._parts[name] = part

    def part(self, name: str) -> Any:
        if name not in self._parts:
            raise KeyError(f"no tab of this page published {name!r} (published: {', '.join(self._parts) or 'none'})")
        return self._parts[name]

    def on_load(
        self, fn: Callable[..., Any], inputs: Any, outputs: Sequence[Any] | Callable[[], Sequence[Any]], **event: Any
    ) -> None:
        """Add a step to the page's load chain (a read: `READ` unless `event` says otherwise); `outputs` may be a
        function, read once every tab is laid out."""
        self._load.append((fn, inputs, outputs, READ | event))

    def chain_load(self) -> None:
        """Register the load chain: the first step when the page loads, each next one when the previous is done."""
        step = None
        for fn, inputs, outputs, event in self._load:
            targets = outputs() if callable(outputs) else outputs
            if callable(outputs) and not targets:
                continue  # a step filling what no tab of this page laid out
            start = self.demo.load if step is None else step.then
            step = start(fn, inputs, targets, **event)

    def identity(self, request: gr.Request | None, profile: gr.OAuthProfile | None) -> str | None:
        """Who submits: the signed-in user, else the client address; None when OAuth is on and nobody signed in."""
        if self.settings.oauth and profile is None:
            return None
        host = request.client.host if request is not None and request.client else None
        return identity_of(profile.username if profile else None, host)

    def is_admin(self, profile: gr.OAuthProfile | None) -> bool:
        """Whether the caller may moderate: signed in (OAuth on) as one of the `--admin` users."""
        if not self.settings.oauth or profile is None or not getattr(profile, "username", None):
            return False
        return profile.username.casefold() in {a.casefold() for a in self.settings.admins}

    def signed(
        self,
        request: gr.Request | None,
        profile: Profile,
        source: Any,
        submit: Callable[[str], Any],
        what: str = "upload",
    ) -> Any:
        """Submit as the caller's identity (refused unsigned under OAuth, the refusal logged as `submit:<what>`);
        a stored row refreshes `source`."""
        who = self.identity(request, profile)
        if who is None:
            host = request.client.host if request is not None and request.client else None
            self.store.audit.append(identity_of(None, host), kind_of(SUBMISSION, what), "refused", detail=SIGN_IN_FIRST)
            return "Sign in with Hugging Face to submit.", {"status": "refused", "message": "sign in to submit"}
        outcome = submit(who)
        if outcome.accepted:
            source.invalidate()
        return outcome.markdown(), outcome.as_json()


class PageTab:
    """A tab of the page. Subclasses set `label` and `id` and lay out their components; `shown` and `wire` are
    optional. Register a tab by adding it to `leaderboard.page.tabs.TABS`."""

    label: str = ""
    id: str = ""
    private: bool = False  # laid out hidden; the tab shows itself (`page.part("tab.<id>")`) to whom it may

    @classmethod
    def check_inputs(cls, settings: Settings) -> list[str]:
        """Read the files named for this tab (`--reported`, `--drift`) before anything is created, so a bad one is
        the user's error, named; returns what the command says about them."""
        return []

    def shown(self, page: Page) -> bool:
        """Whether this page has the tab (e.g. the Reference tab only when published figures were given)."""
        return True

    def layout(self, page: Page) -> None:
        """The tab's components, built inside its `gr.Tab`."""
        raise NotImplementedError

    def wire(self, page: Page) -> None:
        """The tab's events, once every tab of the page is laid out."""
