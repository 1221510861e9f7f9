"""The Submit tab: a run file, scored at once (`run_submit`), or a sentence-transformers model, queued for a worker
(`model_submit`), each as the signed-in identity under OAuth; an accepted submission refreshes the Leaderboard
table, and a queued model starts its Computing line again, so its row turns scored on the open page. Each form
takes an optional cutoff date (`cutoff`), last among the API's arguments so older clients work; the model form then
takes the opt-in "propose these results to my model's page" (`leaderboard.model_pages`: the board opens a pull
request with the verified results on the model's Hub repo once it is scored), whose outcome says at once when this
board cannot."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import gradio as gr

from leaderboard.model_pages.pull_requests import blocker, told_proposal
from leaderboard.page.computing import WATCH
from leaderboard.page.page import READ, REFRESH, SCORING, WRITE, Page, PageTab, Path_, Profile
from leaderboard.page.submit_form import submit_group, submit_outcome
from leaderboard.submission.outcome import SubmitOutcome
from leaderboard.tracks.retrieval.submissions.model_submit import ModelSubmitter
from leaderboard.tracks.retrieval.submissions.run_submit import RunSubmitter
from leaderboard.tracks.retrieval.tabs import retrieval_page

# Optional on both forms (and the last argument of the submit APIs): the After-cutoff view uses it.
CUTOFF_LABEL = "Cutoff date (optional: model release or training cutoff, YYYY-MM-DD)"
# On the model forms (here and the Reranking tab's; each API's last argument): `leaderboard.model_pages`.
PROPOSE_LABEL = "Propose these results to my model's page (a pull request on its Hub repo, once scored)"
MODEL_NAME_LABEL = "Name (default: the model id)"  # on the model forms: an empty name is the model's


def propose_box(elem_id: str) -> gr.Checkbox:
    """The opt-in of a model form: the board opens a pull request with the row's verified results on the model's
    Hub repo once a worker scored it (`model_pages.pull_requests.Proposer`)."""
    return gr.Checkbox(label=PROPOSE_LABEL, value=False, elem_id=elem_id)


def with_proposal(page: Page, submit: Callable[[], SubmitOutcome], model: str, propose: bool) -> SubmitOutcome:
    """`submit()`'s outcome, telling a submitter who asked for the proposal what will become of it (this board's
    reason when it cannot: no public address, no token, a local dataset)."""
    outcome = submit()
    if not propose:
        return outcome
    settings = page.settings
    return told_proposal(outcome, model, blocker(settings.board_url, settings.dataset_id, page.dataset.revision))


class SubmitTab(PageTab):
    label, id = "Submit", "submit"

    def layout(self, page: Page) -> None:
        board, settings = retrieval_page.board(page), page.settings
        runs = RunSubmitter(page.store, page.dataset, **page.submitter_options())
        models = ModelSubmitter(page.store, page.dataset, model_roots=settings.model_roots, **page.submitter_options())
        with gr.Row():
            with gr.Column():
                run_button, run_inputs = _run_form(runs)
            with gr.Column():
                model_button, model_inputs = _model_form()
        self.outputs = submit_outcome("submit-outcome")
        self.run = run_button, _run_event(page, board, runs), run_inputs
        self.model = model_button, _model_event(page, board, models), model_inputs

    def wire(self, page: Page) -> None:
        refresh = page.part(REFRESH)  # the Leaderboard table shows the new row at once
        (run_button, submit_run, run_inputs), (model_button, submit_model, model_inputs) = self.run, self.model
        run_button.click(submit_run, run_inputs, self.outputs, api_name="submit_run", **SCORING).then(
            *refresh, api_name=False, **READ
        )
        model_button.click(submit_model, model_inputs, self.outputs, api_name="submit_model", **WRITE).then(
            *refresh, api_name=False, **READ
        ).then(*page.part(WATCH), api_name=False, **READ)


def _run_form(runs: RunSubmitter) -> tuple[Any, list[Any]]:
    """The run file's form: its button, and its inputs in the order of `/submit_run`'s arguments."""
    gr.Markdown("### A run file\nScored at once against this dataset's judgments.")
    run_file = gr.File(label="Run (TREC or JSON)", type="filepath", elem_id="run-file")
    scope = gr.Dropdown(runs.scopes(), value="auto", label="Topics (auto: those the run covers)")
    group = submit_group(
        "Submit run",
        name_id="run-name",
        button_id="run-submit",
        extras=lambda: [gr.Textbox(label=CUTOFF_LABEL, placeholder="YYYY-MM-DD", elem_id="run-cutoff")],
    )
    return group.button, [run_file, scope, *group.inputs]


def _model_form() -> tuple[Any, list[Any]]:
    """The model's form: its button, and its inputs in the order of `/submit_model`'s arguments."""
    gr.Markdown("### A sentence-transformers model\nQueued; an evaluation worker scores it.")
    model = gr.Textbox(label="Model (Hub id org/name)", elem_id="model-id")
    revision = gr.Textbox(
        label="Revision (branch, tag or commit; default main; pinned to its commit)",
        elem_id="model-revision",
    )
    track = gr.Radio(["full", "nano"], value="full", label="Track (full corpora or nano pools)")

    def cutoff_and_proposal() -> list[Any]:
        cutoff = gr.Textbox(label=CUTOFF_LABEL + "; empty: the model card's", placeholder="YYYY-MM-DD")
        return [cutoff, propose_box("model-propose")]

    group = submit_group("Submit model", name_label=MODEL_NAME_LABEL, extras=cutoff_and_proposal)
    return group.button, [model, revision, track, *group.inputs]


def _run_event(page: Page, board: Any, runs: RunSubmitter) -> Callable[..., Any]:
    """The run form's event, the `/submit_run` API: its parameters are the API's arguments, by name."""

    def submit_run(
        file: Path_,
        scope: str,
        name: str,
        desc: str,
        link: str,
        cutoff: str | None = None,  # a default keeps it optional for API clients written before it existed
        request: gr.Request = None,  # type: ignore[assignment]  (gradio always passes these two)
        profile: Profile = None,
    ) -> Any:
        shown = os.path.basename(file) if file else None
        options = {"name": name, "description": desc, "link": link, "scope": scope, "display_name": shown}
        options["cutoff"] = cutoff or ""
        return page.signed(request, profile, board, lambda who: runs.submit(file, identity=who, **options), what="run")

    return submit_run


def _model_event(page: Page, board: Any, models: ModelSubmitter) -> Callable[..., Any]:
    """The model form's event, the `/submit_model` API: its parameters are the API's arguments, by name."""

    def submit_model(
        model: str,
        revision: str,
        track: str,
        name: str,
        desc: str,
        link: str,
        cutoff: str | None = None,
        propose: bool = False,  # last, and optional: API clients written before it still work
        request: gr.Request = None,  # type: ignore[assignment]
        profile: Profile = None,
    ) -> Any:
        options = {"revision": revision, "track": track, "name": name, "description": desc, "link": link}
        options["cutoff"], options["propose"] = cutoff or "", bool(propose)

        def send(who: str) -> SubmitOutcome:
            return with_proposal(page, lambda: models.submit(model, identity=who, **options), model, bool(propose))

        return page.signed(request, profile, board, send, what="model")

    return submit_model
