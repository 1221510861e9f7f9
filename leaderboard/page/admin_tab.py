"""The Admin tab: hide, unhide or delete a system, see what is hidden or deleted, and read the latest audit rows,
for the Hugging Face users named with `leaderboard --admin` (signed in with `--oauth`) and nobody else.

The tab is laid out hidden and shows itself when an admin's page loads. Hiding it is not the guard: every call
of every event here checks the caller's signed-in profile (`Page.is_admin`) before it reads or changes
anything, since a hidden tab's events can still be called. The actions are the store's (`leaderboard.store.moderation`)
and the CLI's (`freshstack-hf admin`): one transaction each, with its audit row, as `user:<name>`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr
import pandas as pd

from freshstack_hf.errors import FreshStackError
from leaderboard.page.page import READ, REFRESH, WRITE, Page, PageTab, Profile
from leaderboard.sanitize import escape_markdown
from leaderboard.store.audit import short_hash
from leaderboard.submission.upload import identity_of

LOG_ROWS = 100  # the newest audit rows the tab shows (`freshstack-hf admin log` prints them all)
ACTIONS = ("hide", "unhide", "delete")
NOT_ADMIN = "Only this board's admins can moderate: sign in as one of them."
MODERATED_COLUMNS = ["id", "system", "state", "reason", "by", "when (UTC)"]
LOG_COLUMNS = ["when (UTC)", "who", "kind", "outcome", "system", "detail", "content hash"]


def moderate(page: Page, action: str, system_id: float | int | None, reason: str, by: str) -> str:
    """Run one moderation action; the message says what happened or why nothing did."""
    if action not in ACTIONS:
        raise ValueError(f"unknown moderation action {action!r}")
    if system_id is None or int(system_id) != system_id or system_id < 1:
        return "Give the system's id (the table's id column)."
    key = int(system_id)
    try:
        if action == "hide":
            system = page.store.moderation.hide_system(key, reason=reason, by=by)
            return f"System #{key} '{escape_markdown(system.name)}' is hidden: it left every view of the board."
        if action == "unhide":
            system = page.store.moderation.unhide_system(key, by=by)
            return f"System #{key} '{escape_markdown(system.name)}' is back on the board."
        deleted = page.store.moderation.delete_system(key, reason=reason, by=by)
        name = escape_markdown(deleted.system.name)
        return f"System #{key} '{name}' is deleted: its results, jobs and {len(deleted.blobs)} stored blob(s) removed."
    except FreshStackError as exc:
        return f"Not done: {escape_markdown(str(exc))}"


def moderated_frame(store: Any) -> pd.DataFrame:
    """Every hidden or deleted system, most recent first."""
    rows = [
        [
            str(s.id),
            s.name,
            s.moderation,
            s.moderation_reason or "",
            s.moderated_by or "",
            s.moderated_at.strftime("%Y-%m-%d %H:%M") if s.moderated_at else "",
        ]
        for s in store.moderation.moderated_systems()
    ]
    return pd.DataFrame(rows, columns=MODERATED_COLUMNS)


def log_frame(store: Any, last: int = LOG_ROWS) -> pd.DataFrame:
    """The newest audit rows, newest first."""
    rows = [
        [
            r.at.strftime("%Y-%m-%d %H:%M:%S"),
            r.identity,
            r.kind,
            r.outcome,
            "" if r.system_id is None else f"#{r.system_id}",
            r.detail,
            short_hash(r.content_hash),
        ]
        for r in reversed(store.audit.rows(last=last))
    ]
    return pd.DataFrame(rows, columns=LOG_COLUMNS)


def admin_view(page: Page, profile: gr.OAuthProfile | None) -> tuple[bool, pd.DataFrame | None, pd.DataFrame | None]:
    """(tab shown, moderated systems, audit rows) for the caller: all three for an admin, nothing for anyone
    else (the tables are never sent to a page that is not an admin's)."""
    if not page.is_admin(profile):
        return False, None, None
    return True, moderated_frame(page.store), log_frame(page.store)


def admin_action(
    page: Page, action: str, system_id: float | int | None, reason: str, profile: gr.OAuthProfile | None
) -> tuple[str, pd.DataFrame | None, pd.DataFrame | None]:
    """(message, moderated systems, audit rows) after the caller's action; refused unless they are an admin."""
    if not page.is_admin(profile):
        return NOT_ADMIN, None, None
    assert profile is not None
    message = moderate(page, action, system_id, reason or "", identity_of(profile.username, None))
    return message, moderated_frame(page.store), log_frame(page.store)


def _kept(frame: pd.DataFrame | None) -> Any:
    """A table's new value, or no change at all (never an empty table sent in place of a refusal)."""
    return gr.update() if frame is None else frame


class AdminTab(PageTab):
    label, id, private = "Admin", "admin", True

    def shown(self, page: Page) -> bool:
        return page.settings.oauth and bool(page.settings.admins)

    def layout(self, page: Page) -> None:
        gr.Markdown(
            "**Hide** takes a system off every view of the board (table, exports, plots, paired tests, ranks) and "
            "keeps it, with your reason, for **Unhide**. **Delete** removes its results, jobs and archived files "
            "for good; the same content submitted again is refused, naming your reason. Every action is logged."
        )
        with gr.Row():
            system = gr.Number(label="System id (the table's id column)", precision=0, elem_id="admin-system")
            reason = gr.Textbox(label="Reason (hide, delete)", elem_id="admin-reason")
        with gr.Row():
            buttons = {
                "hide": gr.Button("Hide", elem_id="admin-hide"),
                "unhide": gr.Button("Unhide", elem_id="admin-unhide"),
                "delete": gr.Button("Delete", variant="stop", elem_id="admin-delete"),
            }
        outcome = gr.Markdown(elem_id="admin-outcome")
        moderated = gr.Dataframe(label="Hidden and deleted systems", interactive=False, elem_id="admin-moderated")
        log = gr.Dataframe(label=f"Audit log (newest {LOG_ROWS} rows)", interactive=False, elem_id="admin-log")
        self.parts = system, reason, buttons, outcome, moderated, log

    def wire(self, page: Page) -> None:
        system, reason, buttons, outcome, moderated, log = self.parts
        item = page.part(f"tab.{self.id}")

        def view(profile: Profile) -> Any:
            shown, systems, rows = admin_view(page, profile)
            return gr.update(visible=shown), _kept(systems), _kept(rows)

        def action(name: str) -> Callable[..., Any]:
            def act(key: float | None, why: str, profile: Profile) -> Any:
                message, systems, rows = admin_action(page, name, key, why, profile)
                return message, _kept(systems), _kept(rows)

            return act

        page.demo.load(view, None, [item, moderated, log], api_name=False, **READ)
        refresh = page.part(REFRESH)  # the Leaderboard table follows at once
        for name, button in buttons.items():
            button.click(action(name), [system, reason], [outcome, moderated, log], api_name=False, **WRITE).then(
                *refresh, api_name=False, **READ
            )
