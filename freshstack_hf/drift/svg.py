"""The drift plot as a small hand-written SVG: per topic and headline measure, each system's old score (x) against its
new score (y), with the diagonal y = x.

A point on the diagonal scored the same on both snapshots; the order of points along each axis is the ranking whose
agreement tau measures. No plotting library is a dependency of the project, and an SVG is a few lines of text that
a Markdown viewer and the leaderboard both show as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from freshstack_hf.drift.markdown import MEASURE_NAMES

PANEL, MARGIN, GAP = 240, 44, 24
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f")


def drift_svg(report: Mapping[str, Any]) -> str:
    """One row of panels per topic, one panel per measure; a legend maps colors to systems."""
    topics = list(report["topics"].items())
    measures = list(report["settings"]["measures"])
    systems = sorted({s for _, t in topics for s in t["systems"]})
    color = {s: COLORS[i % len(COLORS)] for i, s in enumerate(systems)}
    width = MARGIN + len(measures) * (PANEL + GAP + MARGIN) + 160
    height = 30 + len(topics) * (PANEL + GAP + MARGIN)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{MARGIN}" y="18" font-size="13">old snapshot score (x) against new snapshot score (y)</text>',
    ]
    for row, (name, topic) in enumerate(topics):
        for col, measure in enumerate(measures):
            x0 = MARGIN + col * (PANEL + GAP + MARGIN)
            y0 = 30 + row * (PANEL + GAP + MARGIN) + 16
            parts += _panel(x0, y0, f"{name}: {MEASURE_NAMES.get(measure, measure)}", topic, measure, color)
    legend_x = MARGIN + len(measures) * (PANEL + GAP + MARGIN)
    for i, s in enumerate(systems):
        y = 50 + 16 * i
        parts.append(f'<circle cx="{legend_x + 5}" cy="{y - 4}" r="4" fill="{color[s]}"/>')
        parts.append(f'<text x="{legend_x + 14}" y="{y}">{escape(s)}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _panel(
    x0: float, y0: float, title: str, topic: Mapping[str, Any], measure: str, color: Mapping[str, str]
) -> list[str]:
    points = [(s, v["old"][measure], v["new"][measure]) for s, v in sorted(topic["systems"].items())]
    top = max([1.0, *(max(o, n) for _, o, n in points)])  # alpha-nDCG may pass 1 (greedy ideal): widen the axes

    def px(v: float) -> float:
        return round(x0 + v / top * PANEL, 2)

    def py(v: float) -> float:
        return round(y0 + PANEL - v / top * PANEL, 2)

    tau = topic["agreement"].get(measure, {}).get("kendall_tau")
    out = [
        f'<text x="{x0}" y="{y0 - 6}" font-size="12">{escape(title)}'
        + (f" (tau {tau:.3f})" if tau is not None else "")
        + "</text>",
        f'<rect x="{x0}" y="{y0}" width="{PANEL}" height="{PANEL}" fill="none" stroke="#888"/>',
        f'<line x1="{px(0)}" y1="{py(0)}" x2="{px(top)}" y2="{py(top)}" stroke="#bbb" stroke-dasharray="4 3"/>',
        f'<text x="{x0}" y="{y0 + PANEL + 14}">0</text>',
        f'<text x="{x0 + PANEL - 20}" y="{y0 + PANEL + 14}">{top:.2f}</text>',
        f'<text x="{x0 - 26}" y="{y0 + 10}">{top:.2f}</text>',
        f'<text x="{x0 + PANEL / 2 - 10}" y="{y0 + PANEL + 28}">old</text>',
        f'<text x="{x0 - 30}" y="{y0 + PANEL / 2}">new</text>',
    ]
    for s, o, n in points:
        out.append(
            f'<circle cx="{px(o)}" cy="{py(n)}" r="4" fill="{color[s]}">'
            f"<title>{escape(s)}: old {o:.3f}, new {n:.3f}</title></circle>"
        )
    return out
