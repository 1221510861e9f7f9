"""Drift between two dated snapshots of a dataset repo (issue 18, "a living FreshStack").

`drift_report(old, new)` compares them per shared topic: how many old questions are still answerable, what happened
to every judged document (`fate`), and whether systems keep their order (`rank_agreement`: Kendall tau-b with a paired
bootstrap interval); `markdown.markdown` and `svg.drift_svg` render it. The CLI is `freshstack-hf drift OLD NEW`.
"""

from freshstack_hf.drift.compare import drift_report, shared_topics
from freshstack_hf.drift.fate import CLASSES, DocFate, FateReport, document_fates
from freshstack_hf.drift.rank_agreement import Agreement, agreement, kendall_tau_b, ranks

__all__ = [
    "CLASSES",
    "Agreement",
    "DocFate",
    "FateReport",
    "agreement",
    "document_fates",
    "drift_report",
    "kendall_tau_b",
    "ranks",
    "shared_topics",
]
