"""Answer scores as JSON (full precision) and as the CLI's plain-text table (3 decimals, 95% intervals).

Kept apart from the scoring so the CLI and the leaderboard worker render the same numbers the same way, and the
scoring module stays free of formatting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from freshstack_hf.answers.measures import BY_ID
from freshstack_hf.answers.scores import AnswerScores
from freshstack_hf.metrics.report import comparison_json
from freshstack_hf.metrics.score_table import AVERAGE
from freshstack_hf.metrics.uncertainty import Interval, PairedTest


def answers_json(scores: AnswerScores) -> dict[str, Any]:
    """`{"answers", "judge", "topics": {T: {metrics, ci95, per_query, assignments}}, "average": {...}}`."""
    topics = {
        name: {
            "metrics": t.metrics,
            "ci95": {m: [i.low, i.high] for m, i in scores.intervals.get(name, {}).items()},
            "per_query": t.per_query,
            **({"assignments": scores.assignments.get(name, {})} if scores.judge else {}),
        }
        for name, t in scores.topics.items()
    }
    average_ci = {m: [i.low, i.high] for m, i in scores.intervals.get(AVERAGE, {}).items()}
    average = {"metrics": scores.average, "ci95": average_ci}
    judge = {"name": scores.judge, **scores.judge_stats} if scores.judge else None
    return {
        "answers": {"name": scores.name, "path": scores.source},
        "judge": judge,
        "topics": topics,
        "average": average,
    }


def comparison_report(tests: Mapping[str, Mapping[str, PairedTest]]) -> dict[str, Any]:
    """The paired tests in the same JSON shape as `freshstack-hf evaluate`'s comparison."""
    return comparison_json(tests)


def _cell(value: float, interval: Interval | None) -> str:
    return f"{value:.3f} [{interval.low:.3f}, {interval.high:.3f}]" if interval else f"{value:.3f}"


def _p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _scopes(scores: AnswerScores) -> list[str]:
    return [*scores.topics, AVERAGE] if len(scores.topics) > 1 and scores.average else list(scores.topics)


def _value(scores: AnswerScores, scope: str, m: str) -> tuple[float, Interval | None] | None:
    values = scores.average if scope == AVERAGE else scores.topics[scope].metrics
    return (values[m], scores.intervals.get(scope, {}).get(m)) if m in values else None


def render_table(scores: Sequence[AnswerScores], tests: Mapping[str, Mapping[str, PairedTest]] | None = None) -> str:
    """One row per topic and measure: value [95% interval]; with two files, A, B, B-A and the paired p-value."""
    labels = [" A", " B"] if len(scores) == 2 else [""]
    lines = [f"answers{label}: {s.name} ({s.source})" for label, s in zip(labels, scores, strict=True)]
    first = scores[0]
    lines.append(f"judge: {describe_judge(first.judge)}")
    scopes = _scopes(first)
    width = max([len(s) for s in scopes] + [5])
    measures = first.measures()
    if len(scores) == 1:
        lines += ["", f"{'topic':<{width}}  {'size':>6}  {'measure':<14}  value [95% CI]"]
    else:
        lines += ["", f"{'topic':<{width}}  {'size':>6}  {'measure':<14}  {'A':<21}  {'B':<21}  {'B-A':>7}  {'p':>6}"]
    for scope in scopes:
        size = f"{len(first.topics)} t" if scope == AVERAGE else f"{len(first.topics[scope].per_query)} q"
        shown = False
        for m in measures:
            cells = [_value(s, scope, m) for s in scores]
            if cells[0] is None:
                continue
            head = f"{scope if not shown else '':<{width}}  {size if not shown else '':>6}  {BY_ID[m].name:<14}"
            shown = True
            if len(scores) == 1:
                lines.append(f"{head}  {_cell(*cells[0])}")
                continue
            b = _cell(*cells[1]) if cells[1] is not None else "-"
            test = (tests or {}).get(scope, {}).get(m)
            diff = f"{test.diff:>+7.3f}  {_p(test.p_value):>6}" if test else f"{'-':>7}  {'-':>6}"
            lines.append(f"{head}  {_cell(*cells[0]):<21}  {b:<21}  {diff}")
    return "\n".join(lines)


def describe_judge(name: str | None) -> str:
    """A plain line on who made the nugget scores, with a warning for the offline heuristic."""
    from freshstack_hf.answers.judge import OFFLINE_NAME

    if name is None:
        return "none (citation scores only)"
    if name == OFFLINE_NAME:
        return f"{name} (word overlap, no LLM: All and Vital are indicative only)"
    return name
