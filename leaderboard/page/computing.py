"""What the page says is still being computed: a status line over the Leaderboard table, and the `/computing` API.

The app serves before its baseline rows exist (`cli.serve_board` queues them for a worker), so a visitor may open a
table whose baselines are still queued or running. The line names every row a worker still has to compute (the
baselines, and submitted models waiting in the queue), running ones first: "Computing: Dense (all-MiniLM-L6-v2)
— running; RRF hybrid (BM25 + all-MiniLM-L6-v2) — queued". While it shows, the page checks the store every
`POLL_SECONDS` and, when a row has finished, renders the table again (through the store's change marker, so
only a real change rebuilds it); once nothing is left the line disappears and the checking stops. A submission that
queues a row starts it again (`WATCH`, the step the Submit tab chains): the visitor who submitted a model sees its
row go from queued to scored without reloading.

The plain functions (`in_progress`, `status_line`) are tested without Gradio; `StatusLine` only lays out and wires.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gradio as gr

from leaderboard.page.page import READ, Page
from leaderboard.sanitize import escape_markdown
from leaderboard.store.store import Store

POLL_SECONDS = 3.0  # how often an open page checks the store while rows are being computed
WATCH = "leaderboard.watch"  # published part: (fn, inputs, outputs) of the step that shows the line and starts checking
SHOWN = 6  # rows named on the line; the rest are counted
ELEMENT_ID = "computing"


def in_progress(store: Store) -> list[dict[str, Any]]:
    """Rows a worker still has to compute, running first: {system_id, name, kind, state} (the `/computing` API)."""
    return [
        {"system_id": s.id, "name": s.name, "kind": s.kind, "state": s.status}
        for s in store.queue.systems_in_progress()
    ]


def status_line(items: Sequence[dict[str, Any]], shown: int = SHOWN) -> str:
    """The line over the table ("" when nothing is being computed); names are escaped, they may be submitted."""
    if not items:
        return ""
    parts = [f"{escape_markdown(item['name'])} — {item['state']}" for item in items[:shown]]
    more = f"; and {len(items) - shown} more" if len(items) > shown else ""
    return "**Computing:** " + "; ".join(parts) + more + " (the table updates when they are done)"


def _marker(items: Sequence[dict[str, Any]]) -> list[tuple[int, str]]:
    """What changes when a row starts or finishes: the table is rendered again only then."""
    return [(item["system_id"], item["state"]) for item in items]


class StatusLine:
    """The status line of one page: laid out where it is made, wired to the table's render by `wire`."""

    def __init__(self) -> None:
        self.line = gr.Markdown(visible=False, elem_id=ELEMENT_ID)
        self.timer = gr.Timer(POLL_SECONDS, active=False)
        # The rows last seen computing, kept in the page. Not a `gr.State`: a page holding one keeps its event
        # stream open for as long as it is open (measured: the browser never sees the page settle).
        self.seen = gr.JSON([], visible=False)

    def wire(self, page: Page, render: Callable[..., Any], inputs: Sequence[Any], table: Any) -> None:
        """Show the line when the page loads (after the table), check again every `POLL_SECONDS` while it shows,
        and render the table (`table`: its output component, or several) through `render(*inputs)` whenever a row
        has started or finished."""
        store = page.store
        targets = list(table) if isinstance(table, (list, tuple)) else [table]

        def show(items: list[dict[str, Any]]) -> tuple[Any, Any]:
            text = status_line(items)
            return gr.update(value=text, visible=bool(text)), gr.Timer(active=bool(items))

        def on_load() -> tuple[Any, Any, Any]:
            items = in_progress(store)
            return (*show(items), _marker(items))

        def tick(seen: list[Any], *values: Any) -> tuple[Any, ...]:
            items = in_progress(store)
            marker = _marker(items)
            if [tuple(x) for x in seen] == marker:
                return (*show(items), marker, *[gr.skip()] * len(targets))
            rendered = render(*values)
            return (*show(items), marker, *(rendered if len(targets) > 1 else [rendered]))

        page.on_load(on_load, None, [self.line, self.timer, self.seen], api_name=False)
        page.publish(WATCH, (on_load, None, [self.line, self.timer, self.seen]))
        outputs = [self.line, self.timer, self.seen, *targets]
        self.timer.tick(tick, [self.seen, *inputs], outputs, api_name=False, show_progress="hidden", **READ)

        def computing() -> list[dict[str, Any]]:
            return in_progress(store)

        gr.api(computing, api_name="computing", api_description=in_progress.__doc__, **READ)
