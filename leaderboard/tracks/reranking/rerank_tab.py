"""The Reranking tab, beside the Leaderboard: the reranking table (`rerank_table`, with the first-stage reference
line) and its two submit forms (`rerank_submit`): a reranked run, checked against each query's candidates and
scored at once, and a sentence-transformers CrossEncoder, queued for a worker (`rerank_job`), with the Submit tab's
opt-in to have its results proposed to its Hub page. Both are signed like the Submit tab's (the signed-in identity
under OAuth); an accepted submission refreshes the table.

On every page, with the same API (`/rerank_table`, `/submit_rerank_run`, `/submit_reranker`): on a dataset where
some topic lacks its `top_ranked` candidates (a `synth` repo has none), the tab says which topics and how to write
them, and a submission is refused naming them, since there is nothing to rerank there.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gradio as gr

from leaderboard.page.page import READ, SCORING, Page, PageTab, Path_, Profile
from leaderboard.page.submit_form import submit_group, submit_outcome
from leaderboard.sanitize import escape_markdown
from leaderboard.tracks.reranking.rerank_submit import RerankedRunSubmitter, RerankerSubmitter, missing_candidates
from leaderboard.tracks.reranking.rerank_table import RerankSource, legend
from leaderboard.tracks.retrieval.tabs import retrieval_page
from leaderboard.tracks.retrieval.tabs.submit_tab import MODEL_NAME_LABEL, propose_box, with_proposal

INTRO = (
    "Rerankers scored on fixed candidates: each query's RRF hybrid top-100 (`top_ranked`, the candidates of MTEB's "
    "`FreshStackReranking`). A reranker can only reorder them, so its rows are ranked here only, never beside full "
    "retrieval in the Leaderboard tab. A CrossEncoder's numbers equal `mteb run -t FreshStackReranking -m MODEL` "
    "on this dataset."
)


def missing_candidates_note(topics: list[str]) -> str:
    """What the tab says when topics lack their candidates: which, what it means here, and how to write them."""
    named = ", ".join(escape_markdown(t) for t in topics)
    return (
        f"**Nothing to rerank yet:** topic(s) {named} have no `top_ranked` candidates in this dataset (the hybrid "
        "top-100 of each query, `T-top_ranked`), so the table has no first-stage line for them and reranking "
        "submissions are refused. Write them into the dataset repo with `freshstack-hf candidates DIR`, then "
        "restart the board."
    )


class RerankTab(PageTab):
    label, id = "Reranking", "reranking"

    def layout(self, page: Page) -> None:
        runs = RerankedRunSubmitter(page.store, page.dataset, **page.submitter_options())
        models = RerankerSubmitter(
            page.store, page.dataset, model_roots=page.settings.model_roots, **page.submitter_options()
        )
        source = RerankSource(page.store, page.dataset, retrieval_page.live(page, page.dataset))
        gr.Markdown(INTRO)
        if missing := missing_candidates(page.dataset):
            gr.Markdown(missing_candidates_note(missing), elem_id="rerank-missing")
        table = gr.Dataframe(interactive=False, elem_id="rerank-table", max_height=480, wrap=False, pinned_columns=2)
        gr.Markdown(f"{legend()} Bold: best value of each column.")
        with gr.Row():
            with gr.Column():
                run_button, run_inputs = _reranked_run_form(runs)
            with gr.Column():
                model_button, model_inputs = _reranker_form()

        def rerank_table() -> Any:
            return gr.update(value=source.display(), datatype=source.datatypes())

        self.table, self.outputs = table, submit_outcome("rerank-outcome")
        self.forms = (
            (run_button, _reranked_run_event(page, source, runs), run_inputs, "submit_rerank_run"),
            (model_button, _reranker_event(page, source, models), model_inputs, "submit_reranker"),
        )
        self.refresh = rerank_table

    def wire(self, page: Page) -> None:
        page.demo.load(self.refresh, None, self.table, api_name="rerank_table", **READ)  # beside the load chain
        for button, submit, inputs, api_name in self.forms:
            button.click(submit, inputs, self.outputs, api_name=api_name, **SCORING).then(
                self.refresh, None, self.table, api_name=False, **READ
            )


def _reranked_run_form(runs: RerankedRunSubmitter) -> tuple[Any, list[Any]]:
    """The reranked run's form: its button, and its inputs in the order of `/submit_rerank_run`'s arguments."""
    gr.Markdown("### A reranked run\nEach query ranks its own candidates only; scored at once.")
    run_file = gr.File(label="Reranked run (TREC or JSON)", type="filepath", elem_id="rerank-run-file")
    scope = gr.Dropdown(runs.scopes(), value="auto", label="Topics (auto: those the run covers)")
    group = submit_group("Submit reranked run", name_id="rerank-run-name", button_id="rerank-run-submit")
    return group.button, [run_file, scope, *group.inputs]


def _reranker_form() -> tuple[Any, list[Any]]:
    """The CrossEncoder's form: its button, and its inputs in the order of `/submit_reranker`'s arguments."""
    gr.Markdown("### A CrossEncoder\nsentence-transformers, safetensors only; queued for a worker.")
    model = gr.Textbox(label="Model (Hub id org/name)", elem_id="rerank-model")
    revision = gr.Textbox(label="Revision (branch, tag or commit; default main; pinned to its commit)")
    group = submit_group(
        "Submit reranker",
        name_label=MODEL_NAME_LABEL,
        button_id="rerank-model-submit",
        extras=lambda: [propose_box("rerank-propose")],
    )
    return group.button, [model, revision, *group.inputs]


def _reranked_run_event(page: Page, source: RerankSource, runs: RerankedRunSubmitter) -> Callable[..., Any]:
    """The reranked run form's event, the `/submit_rerank_run` API: its parameters are the API's arguments."""

    def submit_rerank_run(
        file: Path_, scope: str, name: str, desc: str, link: str, request: gr.Request, profile: Profile
    ) -> Any:
        shown = os.path.basename(file) if file else None
        options = {"name": name, "description": desc, "link": link, "scope": scope, "display_name": shown}
        return page.signed(
            request,
            profile,
            source,
            lambda who: runs.submit(file, identity=who, **options),
            what="reranked_run",
        )

    return submit_rerank_run


def _reranker_event(page: Page, source: RerankSource, models: RerankerSubmitter) -> Callable[..., Any]:
    """The CrossEncoder form's event, the `/submit_reranker` API: its parameters are the API's arguments."""

    def submit_reranker(
        model: str,
        revision: str,
        name: str,
        desc: str,
        link: str,
        propose: bool = False,  # last, and optional: API clients written before it still work
        request: gr.Request = None,  # type: ignore[assignment]  (gradio always passes these two)
        profile: Profile = None,
    ) -> Any:
        options = {"revision": revision, "name": name, "description": desc, "link": link, "propose": bool(propose)}

        def send(who: str) -> Any:
            return with_proposal(page, lambda: models.submit(model, identity=who, **options), model, bool(propose))

        return page.signed(request, profile, source, send, what="reranker")

    return submit_reranker
