"""The widget group every submit form shares (the Submit, Reranking and Answers tabs' five forms): the row's name,
description and link, the form's own fields after them (a cutoff, the proposal opt-in), then its button
(`submit_group`); and the outcome a tab's forms answer in (`submit_outcome`).

The labels, elem_ids and order are the ones the browser tests select by and the submit APIs take their arguments
in: a form's inputs are whatever comes before the group, then `SubmitGroup.inputs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr


@dataclass(frozen=True)
class SubmitGroup:
    """A form's shared widgets as laid out, its own fields (`extras`) between the link and the button."""

    name: gr.Textbox
    description: gr.Textbox
    link: gr.Textbox
    extras: list[Any]
    button: gr.Button

    @property
    def inputs(self) -> list[Any]:
        """The group's inputs, in the order of the form's API arguments after its first ones."""
        return [self.name, self.description, self.link, *self.extras]


def submit_group(
    button: str,
    *,
    name_label: str = "Name",
    name_id: str | None = None,
    button_id: str | None = None,
    extras: Callable[[], list[Any]] = list,
) -> SubmitGroup:
    """Lay out a form's name, description and link, then `extras()` (the form's own fields), then its primary
    `button`; returns the components."""
    name = gr.Textbox(label=name_label, elem_id=name_id)
    description = gr.Textbox(label="Description", lines=2)
    link = gr.Textbox(label="Link (http/https)")
    laid_out = extras()
    return SubmitGroup(name, description, link, laid_out, gr.Button(button, variant="primary", elem_id=button_id))


def submit_outcome(elem_id: str) -> list[Any]:
    """Where a tab's forms answer: the outcome as Markdown, and in full precision as JSON for API clients only."""
    return [gr.Markdown(elem_id=elem_id), gr.JSON(visible=False)]
