"""The dataset card's account of a built topic: sources and commits, who made each stage, what filtering kept.

A reader of the card must be able to tell a GPT-4o-judged topic from a heuristically judged one without opening
the manifest, so the offline backend's judgments are called heuristic in plain words, first. A public revision
with embargoed questions accounts for its public questions only (`pipeline.public_account`): the card shows the
counts its manifest keeps and says that the LLM usage, which no question tells apart, is the private revision's.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

LLM_STAGES = ("nuggets", "pools", "judgments")


def build_lines(manifest: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    for topic, entry in sorted(manifest.get("topics", {}).items()):
        build = entry.get("build")
        if not build:
            continue
        stages = build.get("stages", {})
        lines += [f"### `{topic}`", ""]
        if entry.get("source", {}).get("heuristic_judgments"):
            lines += [
                "> **Heuristic judgments.** This topic was built with the offline backend: its nuggets are sentences",
                "> of the accepted answers and its support judgments come from word overlap and MiniLM similarity,",
                "> not from an LLM. Use it to try the tools; do not compare its scores with LLM-judged topics.",
            ]
            judge = ((stages.get("judgments") or {}).get("usage") or {}).get("judgments") or {}
            if judge.get("agreement"):
                lines += [
                    ">",
                    f"> The offline judge's rule, `{judge.get('rule', '?')}`, measured {judge['agreement']}.",
                ]
            lines.append("")
        lines += _snapshot(entry)
        lines += _questions(stages.get("questions", {}))
        lines += _corpus(stages.get("corpus", {}))
        lines += _pools(stages.get("pools", {}), stages.get("judgments", {}))
        lines += _usage(stages, entry)
        f = stages.get("filter")
        if f:
            lines += [
                "",
                f"Filtering (the paper's section 4): {f.get('questions', 0)} questions with an accepted answer; "
                f"{f.get('with_nuggets', 0)} with nuggets; {f.get('after_no_support_filter', 0)} after dropping "
                f"questions with no supported nugget; {f.get('after_unsupported_nugget_filter', 0)} after dropping "
                "questions with any unsupported nugget.",
            ]
        lines.append("")
    return lines


def public_only(entry: Mapping[str, Any]) -> bool:
    """Whether a topic's account is its public questions' only: a public revision with embargoed questions."""
    embargo = entry.get("embargo") or {}
    return bool(embargo.get("questions")) and "ends" not in embargo


def _usage(stages: Mapping[str, Any], entry: Mapping[str, Any]) -> list[str]:
    """The LLM stages' calls, tokens and cost; for a public revision with embargoed questions, where they are."""
    if public_only(entry):
        return [
            "",
            "The counts above are those of this revision's questions. The LLM calls, tokens and cost of this snapshot "
            "also paid for its embargoed questions, so they are recorded with them, in the private revision.",
        ]
    lines = [
        "",
        "| stage | made by | calls | cache hits | input tokens | output tokens | cost (USD) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name in LLM_STAGES:
        record = stages.get(name)
        if record:
            u = _flat_usage(record.get("usage") or {})
            lines.append(
                f"| {name} | {record.get('backend', '?')} | {u['calls']:,} | {u['cache_hits']:,} "
                f"| {u['prompt_tokens']:,} | {u['completion_tokens']:,} | {u['cost']:.2f} |"
            )
    return lines


def _snapshot(entry: dict[str, Any]) -> list[str]:
    """A dated snapshot says what made it (commits, question window), what it reused and what carried over."""
    snap = entry.get("snapshot")
    if not snap:
        return []
    window = snap.get("questions_window", {})
    commits = ", ".join(f"`{k}` at `{v[:12]}`" for k, v in sorted(snap.get("commits", {}).items()))
    lines = [
        f"Snapshot **{snap['date']}** (revision `{snap['date']}`"
        + (f", after `{snap['previous']}`" if snap.get("previous") else "")
        + f"): repositories at their last commit on or before the date ({commits}); questions asked "
        f"{window.get('since') or 'any time'} to {window.get('until')}.",
    ]
    reuse = entry.get("reuse") or {}
    if reuse and public_only(entry):  # what was judged and called again counts the embargoed questions too
        lines[0] += f" Reused from earlier snapshots: the chunks of {reuse.get('files_reused', 0):,} unchanged files."
    elif reuse:
        lines[0] += (
            f" Reused from earlier snapshots: the chunks of {reuse.get('files_reused', 0):,} unchanged files, "
            f"{reuse.get('judgment_pairs_reused', 0):,} judged (nugget, document) pairs; "
            f"{reuse.get('calls_saved', 0):,} LLM calls saved, {reuse.get('calls_made', 0):,} made."
        )
    if entry.get("embargo"):
        lines[0] += " " + embargo_sentence(entry["embargo"])
    carried = entry.get("carryover")
    if carried:
        lines[0] += (
            f" Of the {carried['carried']} questions carried over from `{carried['previous']}`, "
            f"{carried['answerable']} are still answerable on this corpus ({len(carried['unanswerable'])} lost "
            f"every supporting document: {', '.join(carried['unanswerable']) or 'none'}); "
            f"{len(carried['migrations'])} supporting documents moved to another path or repository."
        )
    return [*lines, ""]


def _pools(p: dict[str, Any], j: dict[str, Any]) -> list[str]:
    if not p:
        return []
    text = (
        f"Pools: the fused top {p.get('depth', '?')} of each technique ({', '.join(p.get('techniques', []))}) "
        f"through {' + '.join(p.get('retrievers', []))} ({p.get('dense_model', '?')}); "
        f"{p.get('pooled_docs', 0):,} pooled documents."
    )
    if j:
        calls = f"{j['calls_planned']:,} calls" if "calls_planned" in j else "blocks"  # a public account has no calls
        text += (
            f" Judged in {calls} of at most {j.get('docs_per_call', '?')} documents "
            f"against all of a question's nuggets: {j.get('pairs', 0):,} judgments, "
            f"{j.get('supported_pairs', 0):,} supported."
        )
    return ["", text]


def _questions(q: dict[str, Any]) -> list[str]:
    if not q:
        return []
    source = Path(str(q.get("source", "?"))).name  # the file, not a path on the builder's machine
    fmt = q.get("format", "?")
    return [f"Questions: {source} ({fmt}); {q.get('kept', '?')} kept."]


def _corpus(c: dict[str, Any]) -> list[str]:
    repos = c.get("repositories") or []
    if not repos:
        return []
    out = [
        "",
        f"Corpus ({c.get('tokenizer', '?')} tokenizer, chunks of at most {c.get('max_tokens', '?')} tokens):",
        "",
    ]
    for r in repos:
        commit = r.get("commit") or "unknown commit"
        out.append(
            f"- `{r.get('keyword')}`: {r.get('url') or r.get('source')} at `{commit}` ({r.get('chunks', 0):,} chunks)"
        )
    return out


def _flat_usage(usage: dict[str, Any]) -> dict[str, float]:
    """Usage may be per sub-stage ({"nuggets": {...}}) or flat; sum the counters either way."""
    keys = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "cost")
    total = dict.fromkeys(keys, 0)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if k in total and isinstance(v, int | float) and not isinstance(v, bool):
                    total[k] += v
                else:
                    walk(v)

    walk(usage)
    return total


def embargo_sentence(embargo: Mapping[str, Any]) -> str:
    """One sentence for the card and the drift report: the embargo's length, how many questions, until when."""
    n, days = embargo["questions"], embargo["days"]
    if "ends" in embargo:  # the private repo's own entry (`stages.write`), which may say which
        return (
            f"Embargo: {days} days; this private revision holds the {n} questions of snapshot {embargo['snapshot']} "
            f"asked within {days} days before it, embargoed until {embargo['until']} (each until its own date, "
            f"`manifest.json`); the public revision {embargo['public_revision']} holds the others."
        )
    if not n:
        return f"Embargo: {days} days; no question of this snapshot is embargoed."
    return (
        f"Embargo: {days} days; {n} question{'s' if n != 1 else ''} asked within {days} days before this snapshot "
        f"{'are' if n != 1 else 'is'} embargoed until {embargo['until']} (held in a private repo, scored only "
        "there, and published by the first snapshot after the embargo ends); "
        + ("they are" if n != 1 else "it is")
        + " not in this revision."
    )
