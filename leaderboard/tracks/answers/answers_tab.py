"""The Answers tab: the RAG track's table (`answers_table`) and its upload (`answer_submit`): an answer file scored
by citation at once, and judged (All/Vital) by a worker when this server names a judge endpoint."""

from __future__ import annotations

import os
from typing import Any

import gradio as gr

from leaderboard.page.page import READ, SCORING, Page, PageTab, Path_, Profile
from leaderboard.page.submit_form import submit_group, submit_outcome
from leaderboard.tracks.answers.answer_submit import AnswerSubmitter
from leaderboard.tracks.answers.answers_table import AnswersSource, legend
from leaderboard.worker.judge_endpoint import JudgeEndpoint


class AnswersTab(PageTab):
    label, id = "Answers", "answers"

    def layout(self, page: Page) -> None:
        board = AnswersSource(page.store, page.dataset.topics, page.dataset.revision)
        submitter = AnswerSubmitter(
            page.store,
            page.dataset,
            judge=JudgeEndpoint.from_env(),  # FRESHSTACK_JUDGE_BASE_URL / _MODEL; the key stays with the workers
            **page.submitter_options(),
        )
        judged_by = (
            f"All/Vital by the judge {submitter.judge.name} (blank until a worker has judged)"
            if submitter.judge
            else "All/Vital stay blank: this server has no judge endpoint configured"
        )
        gr.Markdown(
            "Generated answers (RAG) scored against the nuggets: citations exactly, from the judgments; "
            f"{judged_by}. {legend()}. Bold: best of each column."
        )
        table = gr.Dataframe(interactive=False, elem_id="answers-table", max_height=480, wrap=False)
        with gr.Row():
            file = gr.File(label="Answers (TREC RAG JSONL or JSON)", type="filepath", elem_id="answers-file")
            with gr.Column():
                group = submit_group("Submit answers", name_id="answers-name", button_id="answers-submit")
        outcome, status = submit_outcome("answers-outcome")

        def answers_table() -> Any:
            return gr.update(value=board.display(), datatype=board.datatypes())

        def submit_answers(file: Path_, name: str, desc: str, link: str, request: gr.Request, profile: Profile) -> Any:
            shown = os.path.basename(file) if file else None
            options = {"name": name, "description": desc, "link": link, "display_name": shown}
            return page.signed(
                request,
                profile,
                board,
                lambda who: submitter.submit(file, identity=who, **options),
                what="answers",
            )

        self.parts = table, group.button, [file, *group.inputs], [outcome, status]
        self.events = answers_table, submit_answers

    def wire(self, page: Page) -> None:
        table, button, inputs, outputs = self.parts
        refresh, submit_answers = self.events
        page.demo.load(refresh, None, table, api_name="answers_table", **READ)  # beside the load chain, not after it
        button.click(submit_answers, inputs, outputs, api_name="submit_answers", **SCORING).then(
            refresh, None, table, api_name=False, **READ
        )
