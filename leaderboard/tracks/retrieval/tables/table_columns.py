"""The Leaderboard table's columns by name: the row's identity (`INFO`), the headline measures of the average and
of each topic (`column`, `metric_columns`, named from the one measure table, `freshstack_hf.metrics.HEADLINE`), the
rank column (`RANK`), the tail (`TAIL`), the shown types of the rows' kinds (`TYPES`) and the default sort.

One module of names, below the table's other rooms (the frame, its live and efficiency columns, its filters), which
all spell their columns through it: the Detail, Plots, Over time and Reference views and the After-cutoff and
Reranking tables name the same columns the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from freshstack_hf.metrics import HEADLINE, Measure
from freshstack_hf.metrics.score_table import AVERAGE

TYPES = {"baseline": "baseline", "run": "submitted run", "model": "submitted model"}
TRACK_LABELS = {"nano": " · nano"}  # the type of a row scored on the candidate pools says so (`systems.track`)
INFO = ["id", "system", "type"]
TAIL = ["size", "date", "link"]
RANK = "rank (95% CI)"  # the page's rank column (`rank_column`), after `INFO`, for the sorted measure
TOPIC_ALL = "all topics"  # the topic filter's value for the average and every topic's columns


def column(scope: str, measure: Measure) -> str:
    return f"{scope} {measure.name}"


def metric_columns(topics: Sequence[str], scope: str | None = None) -> list[str]:
    """The average's columns then each topic's; with `scope`, only that topic's (or the average's)."""
    scopes = [scope] if scope else [AVERAGE, *topics]
    return [column(s, m) for s in scopes for m in HEADLINE]


def default_sort(topic: str | None = None) -> str:
    return column(topic or AVERAGE, HEADLINE[0])
