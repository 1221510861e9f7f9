"""Nugget-aware retrieval metrics (alpha-nDCG, Coverage, Recall, nDCG, Judged) matching the official evaluator.

Typical use::

    from freshstack_hf.metrics import evaluate, qrels_from_topic

    qrels = qrels_from_topic(topic)  # or NuggetQrels.from_judgments(judgments, nuggets=nuggets)
    result = evaluate(qrels, {"q1": {"doc-a": 3.2, "doc-b": 1.0}}, ["alpha_ndcg@10", "coverage@20"])
    result.metrics["alpha_ndcg@10"], result.per_query["q1"]

Only numpy is imported: no pyndeval, pytrec_eval or pandas, so importing this package stays cheap.
"""

from freshstack_hf.metrics.engine import (
    DEFAULT_ALPHA,
    NuggetCoverage,
    TopicResult,
    average_topics,
    covered_nuggets,
    evaluate,
    nugget_report,
    topic_average,
    topic_averages,
    uncovered_nuggets,
)
from freshstack_hf.metrics.measures import (
    FAMILIES,
    HEADLINE,
    MEASURES,
    Family,
    Measure,
    RankedJudgments,
    measures_at,
    parse_measure,
    parse_measures,
    register_family,
    unregister_family,
    with_params,
)
from freshstack_hf.metrics.qrels import NuggetQrels, qrels_from_topic
from freshstack_hf.metrics.score_table import AVERAGE, ScoreTable, compare_tables
from freshstack_hf.metrics.scoring import RunScores, compare_runs, score_run, score_topics
from freshstack_hf.metrics.uncertainty import Interval, PairedTest, bootstrap_ci, paired_test

__all__ = [
    "AVERAGE",
    "DEFAULT_ALPHA",
    "FAMILIES",
    "HEADLINE",
    "MEASURES",
    "Family",
    "Interval",
    "Measure",
    "NuggetCoverage",
    "NuggetQrels",
    "PairedTest",
    "RankedJudgments",
    "RunScores",
    "ScoreTable",
    "TopicResult",
    "average_topics",
    "bootstrap_ci",
    "compare_runs",
    "compare_tables",
    "covered_nuggets",
    "evaluate",
    "measures_at",
    "nugget_report",
    "paired_test",
    "parse_measure",
    "parse_measures",
    "qrels_from_topic",
    "register_family",
    "score_run",
    "score_topics",
    "topic_average",
    "topic_averages",
    "uncovered_nuggets",
    "unregister_family",
    "with_params",
]
