"""A drift report (the dict `drift.compare.drift_report` returns) as Markdown, for a person and for the leaderboard.

Tables show 3 decimals (the project's convention; the JSON keeps full precision). The per-document list can run to
thousands of rows on a real topic, so the Markdown shows the documents that did not stay unchanged, up to a cap,
and points to the JSON for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshstack_hf.drift.fate import CLASSES, UNKNOWN
from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.card_build import embargo_sentence

DOC_ROWS = 200  # per-document rows shown in the Markdown (all of them are in the JSON)
MEASURE_NAMES = {m.id: m.name for m in HEADLINE}


def _f(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _short(commit: str | None) -> str:
    return commit[:10] if commit else "-"


def markdown(report: Mapping[str, Any], plot: str | None = None) -> str:
    """The whole report; `plot` is the SVG's path relative to the Markdown file (embedded when given)."""
    old, new = report["old"], report["new"]
    settings = report["settings"]
    lines = [
        f"# Drift: {_label(old)} -> {_label(new)}",
        "",
        f"Old snapshot `{old['path']}` (data revision `{old['data_revision']}`), new snapshot `{new['path']}` "
        f"(data revision `{new['data_revision']}`). Topics compared: {', '.join(report['topics'])}.",
        f"Intervals: 95% paired bootstrap over the queries both snapshots judge, {settings['resamples']:,} "
        f"resamples, seed {settings['seed']}.",
        "",
    ]
    if plot:
        lines += [f"![Each system's score on the old snapshot (x) against the new one (y)]({plot})", ""]
    for name, topic in report["topics"].items():
        lines += topic_markdown(name, topic)
    return "\n".join(lines).rstrip() + "\n"


def _label(side: Mapping[str, Any]) -> str:
    return side.get("revision") or side["path"]


def topic_markdown(name: str, topic: Mapping[str, Any]) -> list[str]:
    """One topic's sections: snapshots, answerability, judged documents, systems and their agreement."""
    lines = [f"## {name}", ""]
    lines += _snapshots(topic["snapshot"])
    lines += embargo_lines(topic.get("embargo"))
    lines += _answerability(topic["answerability"])
    lines += _documents(topic["documents"])
    lines += _systems(topic)
    return lines


def _snapshots(snap: Mapping[str, Any]) -> list[str]:
    rows = []
    for side in ("old", "new"):
        info = snap.get(side)
        if info:
            commits = ", ".join(f"{k} `{_short(v)}`" for k, v in sorted((info.get("commits") or {}).items()))
            rows.append(
                f"- {side}: snapshot of {info.get('date', 'unknown date')}" + (f"; {commits}" if commits else "")
            )
    return (["### Snapshots", "", *rows, ""]) if rows else []


def embargo_lines(embargo: Mapping[str, Any] | None) -> list[str]:
    """The embargo of the new snapshot, as counts and a date only: which questions is never said publicly."""
    if not embargo:
        return []
    return [embargo_sentence(embargo), ""]


def _answerability(a: Mapping[str, Any]) -> list[str]:
    lines = [
        "### Answerability",
        "",
        f"{a['answerable']} of {a['old_questions']} old questions are still answerable on the new snapshot "
        f"({_pct(a['answerable_share'])}); mean share of supported nuggets {_f(a['mean_supported_nugget_share'])}. "
        f"Source: {a['source']}" + (f" (previous revision {a['previous']})" if a.get("previous") else "") + ".",
    ]
    if a["unanswerable"]:
        lines.append(f"Unanswerable: {', '.join(a['unanswerable'])}.")
    if a["migrations"]:
        lines.append(f"{len(a['migrations'])} supporting documents migrated to new ids.")
    return [*lines, ""]


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{share * 100:.1f}%"


def _documents(d: Mapping[str, Any]) -> list[str]:
    counts = d["counts"]
    total = sum(counts.values())
    order = [*CLASSES, *([UNKNOWN] if counts.get(UNKNOWN) else [])]
    lines = [
        "### Judged documents",
        "",
        "unchanged = same id, same text; changed = same file, other id or text; moved = the same text in another "
        "file or repository; deleted = the file and the text are gone.",
        "",
        "| fate | documents | share |",
        "|---|---:|---:|",
        *(f"| {c} | {counts.get(c, 0)} | {_pct(counts.get(c, 0) / total if total else None)} |" for c in order),
        "",
        "| fate | repo | old commit | new repo | new commit | documents |",
        "|---|---|---|---|---|---:|",
    ]
    for fate in order:
        for row in d["commits"].get(fate, []):
            new_repo = row.get("new_repo") or "-"  # a version 1 report names no new repository
            lines.append(
                f"| {fate} | {row['repo'] or '-'} | {_short(row['old_commit'])} | {new_repo} "
                f"| {_short(row['new_commit'])} | {row['documents']} |"
            )
    moved = [doc for doc in d["docs"] if doc["fate"] != "unchanged"]
    if moved:
        lines += ["", f"<details><summary>{len(moved)} documents not unchanged</summary>", ""]
        lines += ["| old id | fate | new id | detail |", "|---|---|---|---|"]
        for doc in moved[:DOC_ROWS]:
            lines.append(f"| `{doc['doc_id']}` | {doc['fate']} | {_code(doc['new_id'])} | {doc['detail']} |")
        if len(moved) > DOC_ROWS:
            lines.append(f"| ... {len(moved) - DOC_ROWS} more in the JSON report | | | |")
        lines += ["", "</details>"]
    return [*lines, ""]


def _code(value: str | None) -> str:
    return f"`{value}`" if value else "-"


def _systems(topic: Mapping[str, Any]) -> list[str]:
    systems = topic["systems"]
    if not systems:
        return ["### Systems", "", "No system was scored on both snapshots.", ""]
    lines = ["### Systems", ""]
    for measure, agree in topic["agreement"].items():
        low, high = agree["ci95"]
        lines += [
            f"**{MEASURE_NAMES.get(measure, measure)}**: Kendall tau {_f(agree['kendall_tau'])} "
            f"[{_f(low)}, {_f(high)}] over {len(agree['ranks'])} systems "
            f"(tau on the {agree['common_queries']} queries both judge: {_f(agree['kendall_tau_common_queries'])})",
            "",
            "| system | old | new | change | rank old | rank new | rank change |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, r in sorted(agree["ranks"].items(), key=lambda kv: (kv[1]["new"], kv[0])):
            o, n = systems[name]["old"][measure], systems[name]["new"][measure]
            lines.append(f"| {name} | {_f(o)} | {_f(n)} | {n - o:+.3f} | {r['old']} | {r['new']} | {r['change']:+d} |")
        lines.append("")
    return lines


def system_rows(topic: Mapping[str, Any], measure: str) -> list[list[Any]]:
    """One measure's system table as rows (name, old, new, change, rank old, rank new, rank change), for a grid."""
    rows = []
    agree = topic["agreement"][measure]
    for name, r in sorted(agree["ranks"].items(), key=lambda kv: (kv[1]["new"], kv[0])):
        o, n = topic["systems"][name]["old"][measure], topic["systems"][name]["new"][measure]
        rows.append([name, round(o, 3), round(n, 3), round(n - o, 3), r["old"], r["new"], r["change"]])
    return rows
