"""The About tab, the retrieval track's: what the page measures (every measure of the one measure table), on which
dataset, how submissions are checked and who scores them, what is logged and moderated, where the figures published
elsewhere are, and where the project's docs are."""

from __future__ import annotations

from collections.abc import Sequence

import gradio as gr

from freshstack_hf.metrics import MEASURES
from leaderboard.defaults import LIVE_RELEASE, LIVE_SCORES_PER_WEEK, scoring_plan
from leaderboard.live_release import release_plan
from leaderboard.page.page import Page, PageTab
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.views import published as reference


def about(
    topics: Sequence[str],
    max_file_mb: float,
    rate_limit: int | None,
    revision: str,
    published: bool,
    oauth: bool = False,
    live_per_week: int = LIVE_SCORES_PER_WEEK,
    live_release: str = LIVE_RELEASE,
    worker_here: bool = False,
) -> str:
    measures = "\n".join(f"| {m.name} | {m.description} |" for m in MEASURES)
    who = "signed-in Hugging Face user" if oauth else "client address"
    limit = f"{rate_limit} per hour per {who}" if rate_limit else "off"
    live = (
        f"at most {live_per_week} models or rerankers per {who} in any 7 days are scored live on the embargoed "
        "questions (where workers hold them); later ones are scored on the public questions only, their live "
        "columns saying why"
        if live_per_week > 0
        else "no submission is scored live on the embargoed questions"
    )
    live += f"; live values are {release_plan(live_release)}"
    signed = " Submitting needs a Hugging Face sign-in." if oauth else ""
    elsewhere = (
        f" Figures published elsewhere are in the **{reference.REFERENCE_TAB}** tab only (source: {reference.SOURCE}):"
        " they were not computed here and come from another dataset release."
        if published
        else ""
    )
    return f"""
FreshStack scores retrieval on niche, recent Stack Overflow questions with nugget-aware measures.
Topics of this dataset: {", ".join(topics)} (dataset revision `{revision}`).

**Average** = plain mean of the topics; a system missing a topic has no average. Rows scored on another
dataset revision are not shown. Every row of the Leaderboard tab was computed on this dataset.{elsewhere}

| measure | meaning |
|---|---|
{measures}

**Submissions.** Run files (TREC 6 columns or JSON `{{query: {{doc: score}}}}`, `.gz` allowed, up to 1,000
docs per query; the board keeps each query's top 100, at most {max_file_mb:g} MB of it) are validated strictly
(bad lines are listed with their line numbers; unknown query or doc ids are refused) and scored at once. Models
(sentence-transformers, safetensors only, no custom code) are queued and scored by an evaluation worker: on this
board, {scoring_plan(worker_here)}. The same ranking (as TREC or JSON, gzipped or not, in any line order), or the
same model and revision, is never scored twice.
Rate limit: {limit}. Live scores: {live}.{signed}

**What is logged.** Every submission (accepted, duplicate or refused, with the reason), every evaluation job's
outcome (done, failed, handed back) and every moderation action is one row of an append-only audit log: the
time, who (the {who}, the worker, the moderator, or the board itself), what kind, the content hash of the file or
model, and the outcome. What the board does by itself (a model measured again on a new snapshot, a run's ranking
re-scored, a baseline row) is logged as the board's act, naming the system's owner. Moderators may hide a
system (it leaves the table, the downloads, the plots and the rank intervals, and can come back) or delete it (its
scores and files are removed, and the same file is refused if submitted again, with the reason).

**Docs.** How to load the topics, evaluate runs offline, submit and run a board of your own: the FreshStack-HF
project's `docs/` folder, or as a site with `make docs-serve` from its clone.
"""


class AboutTab(PageTab):
    label, id = "About", "about"

    def layout(self, page: Page) -> None:
        ctx, settings = page.dataset, page.settings
        published = retrieval_page.published(page) is not None
        text = about(
            ctx.topics,
            settings.max_file_mb,
            settings.rate_limit,
            ctx.revision,
            published,
            settings.oauth,
            settings.live_per_week,
            settings.live_release,
            settings.worker_here,
        )
        gr.Markdown(text)
