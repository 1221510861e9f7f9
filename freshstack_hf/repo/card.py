"""The dataset card (`README.md`): YAML `configs:` that `datasets` reads, then what a researcher needs to know.

The card is regenerated from the manifest on every write, never edited in place, so it cannot drift from the
files it describes. Its text is `freshstack_hf/templates/dataset_card.md` (and `dataset_card_nano.md`); this
module computes what varies: the front matter, the tables and which sections a repo has.
"""

from __future__ import annotations

from typing import Any

import yaml

from freshstack_hf.repo import layout
from freshstack_hf.repo.card_build import build_lines
from freshstack_hf.repo.eval_results import tasks
from freshstack_hf.templates import load_template, snippet


def present_configs(manifest: dict[str, Any]) -> dict[str, list[str]]:
    """topic -> file stems present, as the manifest records them (core configs always, candidates once built)."""
    return {t: list(entry.get("files", [])) for t, entry in sorted(manifest.get("topics", {}).items())}


def configs_yaml(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-topic configs first (in topic order), then the cross-topic views with one split per topic."""
    present = present_configs(manifest)
    configs: list[dict[str, Any]] = []
    for topic, stems in present.items():
        for spec in layout.CONFIGS:
            if spec.stem in stems:
                configs.append(
                    {
                        "config_name": spec.config_name(topic),
                        "data_files": [{"split": spec.split, "path": layout.relative_path(topic, spec.stem)}],
                    }
                )
    for spec in layout.CONFIGS:
        if spec.view is None:
            continue
        files = [
            {"split": topic, "path": layout.relative_path(topic, spec.stem)}
            for topic, stems in present.items()
            if spec.stem in stems
        ]
        if files:
            configs.append({"config_name": spec.view, "data_files": files})
    return configs


def dataset_info_yaml(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows and file bytes of every split, per config.

    Besides documenting sizes, this matters for correctness: `datasets` caches a local folder under a key
    derived from the card's `dataset_info` and its file patterns (not the files' contents), so without it a
    rebuilt repo, or another repo with the same layout, would be served from a stale cache.
    """
    infos: dict[str, dict[str, Any]] = {}
    for topic, entry in sorted(manifest.get("topics", {}).items()):
        stats = entry.get("file_stats", {})
        for spec in layout.CONFIGS:
            if spec.stem not in stats:
                continue
            rows, size = stats[spec.stem]["rows"], stats[spec.stem]["bytes"]
            for name, split in ((spec.config_name(topic), spec.split), (spec.view, topic)):
                if name is None:
                    continue
                info = infos.setdefault(name, {"config_name": name, "splits": [], "download_size": 0})
                info["splits"].append({"name": split, "num_bytes": size, "num_examples": rows})
                info["download_size"] += size
    for info in infos.values():
        info["dataset_size"] = info["download_size"]
    order = [c["config_name"] for c in configs_yaml(manifest)]
    return [infos[name] for name in order if name in infos]


def render_card(manifest: dict[str, Any], repo_id: str = layout.DEFAULT_REPO_NAME) -> str:
    """The card (`templates/dataset_card.md`): its front matter, the configs' table and the statistics from the
    manifest, then the sections only some repos have (candidate-list quality, how each topic was built, Nano)."""
    topics = sorted(manifest.get("topics", {}))
    return load_template("dataset_card.md").substitute(
        front=yaml.safe_dump(_front_matter(manifest), sort_keys=False, allow_unicode=True, width=1000).rstrip(),
        topics=", ".join(f"`{t}`" for t in topics) or "(none)",
        repo_id=repo_id,
        first_topic=topics[0] if topics else "TOPIC",
        config_rows="\n".join(
            f"| `T{spec.suffix}` | `{spec.split}` | {', '.join(f'`{f.name}`' for f in spec.schema)} |"
            for spec in layout.CONFIGS
        ),
        views=", ".join(f"`{s.view}`" for s in layout.CONFIGS if s.view),
        stats=stats_table(manifest),
        sections="".join(f"\n\n{section}" for section in _optional_sections(manifest)),
        eval_tasks="\n".join(
            f"| {task.label} | `{task.id}` | `{reranked.id}` |"
            for task, reranked in zip(tasks(topics), tasks(topics, reranking=True), strict=True)
        ),
    )


def _front_matter(manifest: dict[str, Any]) -> dict[str, Any]:
    """The YAML `datasets` and the Hub read: the card's metadata, every split's size and the configs."""
    return {
        "pretty_name": "FreshStack",
        "license": "cc-by-sa-4.0",
        "language": ["en"],
        "task_categories": ["text-retrieval"],
        "task_ids": ["document-retrieval"],
        "tags": ["freshstack", "nuggets", "code-retrieval", "rag", "stack-overflow"],
        "dataset_info": dataset_info_yaml(manifest),
        "configs": configs_yaml(manifest),
    }


def _optional_sections(manifest: dict[str, Any]) -> list[str]:
    """The sections a repo has only when its manifest records their subject, in the card's order."""
    sections = []
    quality = quality_table(manifest)
    if quality:
        sections.append(f"## Candidate lists\n\n{quality}")
    sources = sources_lines(manifest)
    if sources:
        sections.append("## How each topic was built\n\n" + "\n".join(sources))
    built = build_lines(manifest)
    if built:
        sections.append("\n".join(built))
    if any(e.get("source", {}).get("kind") == "nano" for e in manifest.get("topics", {}).values()):
        sections.append(snippet("dataset_card_nano.md"))
    return sections


def stats_table(manifest: dict[str, Any]) -> str:
    head = (
        "| topic | queries | corpus | nuggets | nuggets/query | judgments | relevant | rel. docs/query "
        "| rel. docs/nugget | query len avg/p50/p75 | doc len avg/p50/p75 |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
    )
    rows = []
    for topic, entry in sorted(manifest.get("topics", {}).items()):
        s = entry.get("stats", {})
        ql, dl = s.get("query_length", {}), s.get("doc_length", {})
        rows.append(
            f"| {topic} | {s.get('queries', 0):,} | {s.get('corpus', 0):,} | {s.get('nuggets', 0):,} "
            f"| {s.get('nuggets_per_query', 0)} | {s.get('judgments', 0):,} | {s.get('relevant_judgments', 0):,} "
            f"| {s.get('relevant_docs_per_query', 0)} | {s.get('relevant_docs_per_nugget', 0)} "
            f"| {_len(ql)} | {_len(dl)} |"
        )
    return "\n".join([head, *rows])


def quality_table(manifest: dict[str, Any]) -> str:
    """Candidate-list quality per topic, when `candidates` recorded it in the manifest."""
    rows = []
    for topic, entry in sorted(manifest.get("topics", {}).items()):
        for name, metrics in (entry.get("candidates", {}).get("quality") or {}).items():
            cells = " | ".join(f"{metrics.get(m, float('nan')):.3f}" for m in QUALITY_COLUMNS)
            rows.append(f"| {topic} | {name} | {cells} |")
    if not rows:
        return ""
    head = "| topic | list | " + " | ".join(QUALITY_COLUMNS) + " |\n|---|---|" + "---:|" * len(QUALITY_COLUMNS)
    return "\n".join([head, *rows])


QUALITY_COLUMNS = ("alpha_ndcg@10", "coverage@20", "recall@50", "ndcg@10", "recall@100")


def sources_lines(manifest: dict[str, Any]) -> list[str]:
    lines = []
    for topic, entry in sorted(manifest.get("topics", {}).items()):
        src = entry.get("source", {})
        kind = src.get("kind", "unknown")
        detail = ", ".join(f"{k}={v}" for k, v in src.items() if k != "kind")
        lines.append(f"- `{topic}`: {kind}" + (f" ({detail})" if detail else ""))
    return lines


def _len(s: dict) -> str:
    return f"{s.get('avg', 0)}/{s.get('p50', 0):g}/{s.get('p75', 0):g}"
