"""The Reranking table as plain pandas: reranked runs and CrossEncoders scored on the fixed hybrid candidates,
with the candidates themselves as the reference line.

A reranker can only reorder each query's `T-top_ranked` list, so its numbers are bounded by those candidates and
never comparable with full retrieval: these rows (the reranking kinds, `RERANK_KINDS`) live here only, and the
Leaderboard table never shows them. The first stage, the hybrid top-100 as it comes (its ids in rank order,
scored as a run by `leaderboard.scoring` like every row), is the line a reranker has to beat: it is computed from
the dataset, never stored, and labelled as the reference in its own type.

Columns are the Leaderboard's (`leaderboard_table`: the headline measures for the average and each topic, sizes,
dates, links), built by the same `build_frame`; best first by the average α-nDCG@10, shown through
`leaderboard.page.display` (3 decimals, best of each column in bold).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import pandas as pd

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo import layout
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.runs import from_ids
from leaderboard.live_release import LiveRelease
from leaderboard.page.display import datatypes, display, sort_frame
from leaderboard.page.store_frame import StoreFrame
from leaderboard.scoring import score_for_store
from leaderboard.store.records import LeaderboardRow
from leaderboard.tracks.reranking import SYSTEM_KINDS as RERANK_KINDS
from leaderboard.tracks.retrieval.tables.leaderboard_table import build_frame, row_record, score_cells
from leaderboard.tracks.retrieval.tables.table_columns import default_sort
from leaderboard.tracks.retrieval.tables.table_efficiency import EFFICIENCY_COLUMNS
from leaderboard.tracks.retrieval.tables.table_filters import view_frame

RERANK_TYPES = {"reranked_run": "reranked run", "reranker": "reranker (CrossEncoder)"}
REFERENCE_ID = "first stage"
REFERENCE_NAME = "RRF hybrid top-100: the candidates, not reranked"
REFERENCE_TYPE = "reference: first stage"


def first_stage_scores(dataset: Dataset) -> dict[str, dict[str, float]]:
    """{topic: {measure id: value}} of the candidates as they come (ids in rank order, scored as a run), for the
    topics that have them."""
    topics = [t for t in dataset.topics if layout.config_path(dataset.folder, t, "top_ranked").exists()]
    if not topics:
        return {}
    runs = {t: from_ids(dataset.candidates(t)) for t in topics}
    scored = score_for_store(dataset, runs, topics, by_topic=True, resamples=0)  # values only: no intervals shown
    return {t: dict(scored.results[t]["metrics"]) for t in topics}


def reference_record(scores: Mapping[str, Mapping[str, float]]) -> dict[str, Any]:
    """The reference line's row (no stored system: its id is a label, it has no size, date nor link)."""
    cells = score_cells(scores)
    return row_record(REFERENCE_ID, REFERENCE_NAME, "reference", REFERENCE_TYPE, cells, None, "", None)


def build_rerank_frame(
    rows: list[LeaderboardRow],
    topics: list[str],
    *,
    revision: str | None = None,
    reference: Mapping[str, Mapping[str, float]] | None = None,
    live: Mapping[int, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """Every reranker row, and the reference line when `reference` has scores; unsorted. `live`: the rerankers'
    live records (`Store.live_scores`), shown as on the Leaderboard."""
    extra = [reference_record(reference)] if reference else []
    return build_frame(rows, topics, revision=revision, types=RERANK_TYPES, extra=extra, live=live)


def sorted_view(frame: pd.DataFrame) -> pd.DataFrame:
    """The displayed columns, best first by the average α-nDCG@10 (rows without one last)."""
    shown = view_frame(frame).drop(columns=EFFICIENCY_COLUMNS)  # a reranker's costs are not measured
    return sort_frame(shown, default_sort(), descending=True)


def legend() -> str:
    """What the reference line is and what the measures mean, under the table (the tab's introduction says what
    the candidates are)."""
    measures = " · ".join(f"**{m.name}**: {m.description}" for m in HEADLINE)
    return f"**{REFERENCE_TYPE}**: the candidates unchanged, the line to beat. {measures}."


class RerankSource(StoreFrame):
    """The Reranking table from the store (rebuilt when the store changes), with the reference line, whose
    scores are computed once, when the table is first asked for."""

    def __init__(self, store: Any, dataset: Dataset, live: LiveRelease | None = None) -> None:
        self.dataset = dataset
        self._reference: dict[str, dict[str, float]] | None = None
        self._reference_lock = threading.Lock()
        measures = tuple(m.id for m in HEADLINE)

        def build(s: Any) -> pd.DataFrame:
            stored = s.leaderboard_rows(kinds=RERANK_KINDS, measures=measures)
            topics = list(dataset.topics)
            records = live.records(s, dataset.revision) if live is not None else None
            reference = self.reference()
            return build_rerank_frame(stored, topics, revision=dataset.revision, reference=reference, live=records)

        super().__init__(store, build, depends=live.marker if live is not None else None)

    def reference(self) -> dict[str, dict[str, float]]:
        with self._reference_lock:
            if self._reference is None:
                self._reference = first_stage_scores(self.dataset)
            return self._reference

    def display(self) -> dict[str, Any]:
        """The `gr.Dataframe` value: sorted, 3 decimals, best in bold (`leaderboard.page.display`); formatted
        once per store state, however many pages load at once."""
        return self.view("display", lambda frame: display(sorted_view(frame)))

    def datatypes(self) -> list[str]:
        return self.view("datatypes", lambda frame: datatypes(sorted_view(frame)))
