"""The detail view of one system: intervals, per-query scores, holes, missed nuggets and paired tests.

Everything is derived from what the store keeps per result row (per-query values, intervals, parameters)
and from the archived run for the nuggets; the statistics are the library's (`bootstrap_ci`, `paired_test`,
`uncovered_nuggets`). Paired tests align the two systems' per-query values by query id, topic by topic,
and the all-topics test is stratified by topic like the average it tests. Text from submitters is escaped
here, where it is put into Markdown; identities (client addresses) are never shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.metrics import HEADLINE, bootstrap_ci, paired_test, parse_measure, topic_average, uncovered_nuggets
from freshstack_hf.metrics.rank_uncertainty import RankInterval
from freshstack_hf.repo.dataset import Dataset
from leaderboard.sanitize import escape_markdown
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.tables.table_columns import AVERAGE, TYPES, column

JUDGED = parse_measure("judged@10")
COVERAGE = next(m for m in HEADLINE if m.family == "coverage")
PER_QUERY = [*HEADLINE, JUDGED]
Scores = dict[str, dict[str, dict[str, Any]]]  # topic -> measure id -> stored result row
COUNTS = {"queries", "queries with holes"}  # whole numbers, even where pandas made them floats
HINT = "Pick a system: click its row in the **Leaderboard** tab, or choose it in the list above."
RANKS_HELP = (
    "**Rank intervals** (the Leaderboard's *rank (95% CI)* column, for the measure the table is sorted by): "
    "a paired bootstrap over queries. Each resample draws, per topic, as many queries as the topic has, with "
    "replacement, and scores every system on those same queries (a query a system did not answer counts 0); "
    "the average ranks the mean over topics of each topic's resampled mean. A rank is 1 + the number of systems "
    "strictly better (equal scores share the better rank); the interval runs from the 2.5th to the 97.5th "
    "percentile of a system's ranks over the resamples (1,000, seeded, recomputed when the board changes). "
    "**≈1** marks the systems statistically tied with the leader: those whose interval reaches rank 1, i.e. that "
    "rank first in at least 2.5% of the resamples, whenever two or more do (the leader among them). A system "
    "ahead of every other on every query ranks 1 in every resample: its interval is 1–1. Rows without stored "
    "per-query scores on every topic of the ranking (e.g. published figures) have no interval."
)


@dataclass
class Detail:
    header: str
    metrics: pd.DataFrame
    per_query: pd.DataFrame = field(default_factory=pd.DataFrame)
    holes: pd.DataFrame = field(default_factory=pd.DataFrame)
    uncovered: pd.DataFrame = field(default_factory=pd.DataFrame)
    tests: pd.DataFrame = field(default_factory=pd.DataFrame)
    parameters: dict[str, Any] = field(default_factory=dict)

    def tables(self) -> list[pd.DataFrame]:
        """The tables in the order of the `/detail` API's outputs (after the header)."""
        return [self.metrics, self.per_query, self.holes, self.uncovered, self.tests]


def cell_text(column: str, value: Any) -> str:
    """One cell as shown: measures with 3 decimals, p-values below 0.001 as `<0.001`, counts whole, yes/no."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if column in COUNTS or isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return "<0.001" if column == "p" and value < 0.001 else f"{value:.3f}"
    return str(value)


def shown(frame: pd.DataFrame) -> dict[str, Any]:
    """The `gr.Dataframe` value of a detail table: raw cells (sorting, the API) and the text shown (`cell_text`).

    Full-precision numbers stay in `data`; the page shows `display_value`, so no cell reads `0.55` or `1`
    next to `0.462`.
    """
    headers = [str(c) for c in frame.columns]
    raw = [[v.item() if isinstance(v, np.generic) else v for v in row] for row in frame.itertuples(False, None)]
    raw = [[None if isinstance(v, float) and v != v else v for v in row] for row in raw]
    text = [[cell_text(c, v) for c, v in zip(headers, row, strict=True)] for row in raw]
    return {"headers": headers, "data": raw, "metadata": {"display_value": text} if raw else None}


def rank_line(interval: RankInterval | None) -> str:
    """The header's line on the system's board rank (average α-nDCG@10), or nothing without an interval."""
    if interval is None:
        return ""
    tied = "; statistically tied with the leader (≈1)" if interval.tied else ""
    return (
        f"\n\nrank on {column(AVERAGE, HEADLINE[0])}: {interval.rank}, 95% interval {interval.low} to "
        f"{interval.high} (first in {interval.first_share:.1%} of the resamples){tied}"
    )


def choices(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """(label, key) for a dropdown, in table order; keys are store ids (the published figures have no detail)."""
    return [(f"{name} (#{key})", key) for key, name in zip(frame["id"], frame["system"], strict=True)]


def _grouped(rows: Sequence[dict[str, Any]]) -> Scores:
    out: Scores = {}
    for row in rows:
        out.setdefault(row["topic"], {})[row["measure"]] = row
    return out


def _interval(row: dict[str, Any], resamples: int) -> tuple[float, float]:
    if row.get("ci_low") is not None:
        return row["ci_low"], row["ci_high"]
    values = list((row.get("per_query") or {}).values())
    if not values:
        return float("nan"), float("nan")
    iv = bootstrap_ci(values, resamples=resamples)
    return iv.low, iv.high


def metrics_table(scores: Scores, topics: Sequence[str], resamples: int = RESAMPLES) -> pd.DataFrame:
    """Per topic and measure: value, 95% interval, queries; then the average with a stratified interval."""
    rows = []
    for topic in [t for t in topics if t in scores]:
        for measure, row in scores[topic].items():
            low, high = _interval(row, resamples)
            name = parse_measure(measure).name
            rows.append([topic, name, row["value"], low, high, len(row.get("per_query") or {})])
    if all(t in scores for t in topics):
        for m in HEADLINE:
            groups = [list((scores[t].get(m.id, {}).get("per_query") or {}).values()) for t in topics]
            if all(groups):
                iv = bootstrap_ci(groups, resamples=resamples)
                value = topic_average({t: scores[t][m.id]["value"] for t in topics}, topics)
                rows.append([AVERAGE, m.name, value, iv.low, iv.high, sum(map(len, groups))])
    return pd.DataFrame(rows, columns=["topic", "measure", "value", "95% low", "95% high", "queries"])


def per_query_table(scores: Scores) -> pd.DataFrame:
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for topic, by_measure in scores.items():
        for m in PER_QUERY:
            for qid, value in (by_measure.get(m.id, {}).get("per_query") or {}).items():
                records.setdefault((topic, qid), {"topic": topic, "query": qid})[m.name] = value
    return pd.DataFrame(list(records.values()), columns=["topic", "query", *(m.name for m in PER_QUERY)])


def holes_table(scores: Scores) -> pd.DataFrame:
    """judged@10 per topic: the share of top-10 docs with a judgment; the rest are holes scored as misses."""
    rows = []
    for topic, by_measure in scores.items():
        row = by_measure.get(JUDGED.id)
        if row is None:
            continue
        per_query = np.array(list((row.get("per_query") or {}).values()), dtype=float)
        rows.append([topic, row["value"], 1.0 - row["value"], int((per_query < 1.0).sum()), len(per_query)])
    return pd.DataFrame(rows, columns=["topic", JUDGED.name, "unjudged share", "queries with holes", "queries"])


def uncovered_table(dataset: Dataset, runs: dict[str, Any] | None) -> pd.DataFrame:
    """Nuggets the archived run never covers in its top k (k of the headline Coverage), per topic."""
    rows = []
    for topic, run in (runs or {}).items():
        if topic not in dataset.topics:
            continue
        texts = {n.nugget_id: n.text for n in dataset.topic(topic).nuggets}
        for item in uncovered_nuggets(dataset.qrels(topic), {"run": run}, k=COVERAGE.k):
            text = texts.get(item.nugget_id, "")
            rows.append([topic, item.query_id, item.nugget_id, item.supported, text[:200]])
    return pd.DataFrame(rows, columns=["topic", "query", "nugget", "supported by a judged doc", "nugget text"])


def _aligned(a: dict[str, Any], b: dict[str, Any], measure: str) -> tuple[list[float], list[float]]:
    pa, pb = (a.get(measure, {}).get("per_query") or {}), (b.get(measure, {}).get("per_query") or {})
    qids = sorted(pa.keys() & pb.keys())
    return [pa[q] for q in qids], [pb[q] for q in qids]


def tests_table(
    mine: Scores, others: Sequence[tuple[str, Scores]], topics: Sequence[str], resamples: int = RESAMPLES
) -> pd.DataFrame:
    """Paired randomization tests of this system (B) against each other system (A), per topic and overall."""
    rows = []
    for label, theirs in others:
        shared = [t for t in topics if t in mine and t in theirs]
        for m in HEADLINE:
            pairs = {t: _aligned(theirs[t], mine[t], m.id) for t in shared}
            pairs = {t: p for t, p in pairs.items() if p[0]}
            scopes = [(t, [p[0]], [p[1]]) for t, p in pairs.items()]
            if pairs and len(pairs) == len(topics):
                scopes.append((AVERAGE, [p[0] for p in pairs.values()], [p[1] for p in pairs.values()]))
            for scope, a, b in scopes:
                t = paired_test(a, b, resamples=resamples)
                rows.append([label, scope, m.name, t.mean_b, t.mean_a, t.diff, t.low, t.high, t.p_value])
    columns = ["versus", "topic", "measure", "this", "other", "difference", "95% low", "95% high", "p"]
    return pd.DataFrame(rows, columns=columns)


def opponents(frame: pd.DataFrame, key: str) -> list[tuple[str, str]]:
    """(label, id) of the current leader (by average α-nDCG@10) and every baseline, excluding `key`."""
    ranked = frame[frame[column(AVERAGE, HEADLINE[0])].notna()].sort_values(
        column(AVERAGE, HEADLINE[0]), ascending=False, kind="stable"
    )
    out = []
    if len(ranked):
        leads = ranked.iloc[0]["id"] == key
        others = ranked.iloc[1:] if leads else ranked  # when this system leads, it is tested against the next
        if len(others):
            pick = others.iloc[0]
            role = "runner-up (this system leads)" if leads else "leader"
            out.append((f"{role}: {pick['system']} (#{pick['id']})", pick["id"]))
    for _, row in frame[(frame["_kind"] == "baseline") & (frame["id"] != key)].iterrows():
        if all(row["id"] != other for _, other in out):
            out.append((f"baseline: {row['system']} (#{row['id']})", row["id"]))
    return out


def system_detail(
    key: str,
    frame: pd.DataFrame,
    *,
    store: Store,
    dataset: Dataset,
    resamples: int = RESAMPLES,
) -> Detail:
    """The whole detail view of the stored system `key`; `frame` = the full board (published figures have none)."""
    system = store.get_system(int(key)) if str(key).isdigit() else None
    if system is None or not system.listed:  # a hidden or deleted system has no detail either
        return Detail(f"no system {escape_markdown(str(key)[:40])}", pd.DataFrame())
    stored = store.results_for(system.id)
    scores = _grouped(stored)
    lines = [
        f"### {escape_markdown(system.name)} (#{system.id})",
        f"type: {TYPES.get(system.kind, system.kind)}; status: {system.status}",
    ]
    if system.error:
        lines.append(f"error: {escape_markdown(system.error[:500])}")
    if system.description:
        lines.append(escape_markdown(system.description))
    if system.link:
        lines.append(f"link: {escape_markdown(system.link)}")
    params: dict[str, Any] = {}
    if stored:
        first = stored[0]
        params = {
            "dataset_revision": first["dataset_revision"],
            "evaluator_version": first["evaluator_version"],
            "schema_version": first["schema_version"],
            **(first.get("parameters") or {}),
        }
    runs = store.blobs.ranking_of(system.id)
    if stored and runs is None:
        lines.append("Nuggets never covered: not available, the store keeps no ranking behind this row.")
    uncovered = uncovered_table(dataset, runs)
    if runs is not None and uncovered.empty:  # the page hides empty tables: say why this one is absent
        lines.append(f"Nuggets never covered in the top {COVERAGE.k}: none.")
    others = [(label, _grouped(store.results_for(int(i)))) for label, i in opponents(frame, str(system.id))]
    return Detail(
        header="\n\n".join(lines),
        metrics=metrics_table(scores, dataset.topics, resamples),
        per_query=per_query_table(scores),
        holes=holes_table(scores),
        uncovered=uncovered,
        tests=tests_table(scores, others, dataset.topics, resamples) if scores else pd.DataFrame(),
        parameters=params,
    )
