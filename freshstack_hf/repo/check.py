"""Whole-repo validation: card, manifest, schemas, each topic's records, and the derived configs' agreement.

The derived query-side configs (`T-queries`, `T-nuggets`, `T-qrels`, `T-nugget-qrels`) are redundant with the
official-schema config `T`; a hand edit to one of them is caught here and reported at the row that differs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import yaml

from freshstack_hf.errors import Problem
from freshstack_hf.repo import layout, tables
from freshstack_hf.repo.card import configs_yaml, dataset_info_yaml
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.reader import load_topic, read_table
from freshstack_hf.topic import Topic
from freshstack_hf.topic_check import validate_topic

DERIVED: dict[str, Callable[[Topic], pa.Table]] = {
    "queries": tables.queries_table,
    "nuggets": tables.nuggets_table,
    "qrels": tables.qrels_table,
    "nugget_qrels": tables.nugget_qrels_table,
}


def validate_repo(repo: Path, topics: list[str] | None = None) -> list[Problem]:
    repo = Path(repo)
    problems: list[Problem] = []
    manifest = read_manifest(repo)
    problems += _check_card(repo, manifest)
    names = topics or sorted(manifest.get("topics", {}))
    if not names:
        fix = "write one with `freshstack-hf build TOPIC.yaml` or `freshstack-hf synth`"
        problems.append(Problem(str(repo), "no topics found", fix=fix))
    for name in names:
        entry = manifest.get("topics", {}).get(name)
        if entry is None:
            problems.append(Problem(layout.MANIFEST, f"topic {name!r} is not in the manifest"))
            continue
        problems += _check_topic(repo, name, entry.get("files", []))
    return problems


def _check_card(repo: Path, manifest: dict) -> list[Problem]:
    card = repo / layout.CARD
    if not card.exists():
        return [Problem(layout.CARD, "missing dataset card", fix="rewrite the repo with freshstack-hf")]
    text = card.read_text(encoding="utf-8")
    try:
        front = yaml.safe_load(text.split("---", 2)[1]) if text.startswith("---") else None
    except yaml.YAMLError as exc:
        return [Problem(layout.CARD, f"YAML header does not parse: {exc}")]
    if not isinstance(front, dict) or "configs" not in front:
        return [Problem(layout.CARD, "YAML header has no `configs:` block", fix="regenerate the card")]
    if front["configs"] != configs_yaml(manifest):
        return [
            Problem(
                layout.CARD,
                "`configs:` block does not match the files in the manifest",
                fix="regenerate the card (rewrite the repo)",
            )
        ]
    problems = []
    if front.get("dataset_info") != dataset_info_yaml(manifest):
        problems.append(
            Problem(layout.CARD, "`dataset_info:` block does not match the manifest", fix="regenerate the card")
        )
    for topic, entry in sorted(manifest.get("topics", {}).items()):
        for stem, recorded in entry.get("file_stats", {}).items():
            path = layout.config_path(repo, topic, stem)
            spec = layout.CONFIG_BY_STEM.get(stem)
            if spec is None or not path.exists() or path.stat().st_size == recorded["bytes"]:
                continue
            problems.append(
                Problem(
                    spec.config_name(topic),
                    f"file {path.relative_to(repo)} changed after it was written ({path.stat().st_size:,} bytes, "
                    f"manifest says {recorded['bytes']:,}); `datasets` may serve a stale cached copy",
                    fix="rewrite the topic with freshstack-hf, which also refreshes the card",
                )
            )
    return problems


def _check_topic(repo: Path, name: str, stems: list[str]) -> list[Problem]:
    problems: list[Problem] = []
    for stem in ("queries_official", "corpus", *DERIVED):
        if stem not in stems:
            problems.append(Problem(layout.MANIFEST, f"topic {name!r} lacks core config {stem!r}"))
    tables_read: dict[str, pa.Table] = {}
    for stem in stems:
        spec = layout.CONFIG_BY_STEM.get(stem)
        path = layout.config_path(repo, name, stem)
        if spec is None:
            problems.append(Problem(layout.MANIFEST, f"unknown config file {stem!r} for topic {name!r}"))
            continue
        if not path.exists():
            problems.append(Problem(spec.config_name(name), f"file {path.relative_to(repo)} is missing"))
            continue
        table = read_table(path)
        missing = [f.name for f in spec.schema if f.name not in table.column_names]
        if missing:
            problems.append(Problem(spec.config_name(name), f"missing columns {missing}"))
            continue
        tables_read[stem] = table
    if "queries_official" not in tables_read or "corpus" not in tables_read:
        return problems
    topic = load_topic(repo, name)
    problems += validate_topic(topic)
    for stem, make in DERIVED.items():
        if stem in tables_read:
            problems += _compare(f"{name}{layout.CONFIG_BY_STEM[stem].suffix}", tables_read[stem], make(topic), name)
    for stem in stems:
        spec = layout.CONFIG_BY_STEM.get(stem)
        if spec is not None and spec.kind == "candidates" and stem in tables_read:
            problems += _check_candidates(spec.config_name(name), tables_read[stem], topic)
    return problems


def _compare(config: str, actual: pa.Table, expected: pa.Table, topic: str) -> list[Problem]:
    """Row-by-row agreement of a derived config with what the official config implies."""
    cols = expected.column_names
    got = actual.select(cols).to_pylist()
    want = expected.to_pylist()
    problems = []
    if len(got) != len(want):
        problems.append(
            Problem(
                config,
                f"has {len(got)} rows, but config {topic!r} implies {len(want)}",
                fix="rewrite the repo with freshstack-hf",
            )
        )
    for row, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            diff = ", ".join(f"{c}={g[c]!r} (expected {w[c]!r})" for c in cols if g[c] != w[c])
            problems.append(
                Problem(
                    config,
                    f"differs from config {topic!r}: {diff}",
                    row,
                    "fix the value or rewrite the repo with freshstack-hf",
                )
            )
    return problems


def _check_candidates(config: str, table: pa.Table, topic: Topic) -> list[Problem]:
    known_q, known_d = set(topic.query_ids), topic.doc_ids
    problems = []
    for row, (qid, ids) in enumerate(
        zip(table.column("query-id").to_pylist(), table.column("corpus-ids").to_pylist(), strict=True)
    ):
        if qid not in known_q:
            problems.append(Problem(config, f"unknown query-id {qid!r}", row))
        unknown = [d for d in ids if d not in known_d]
        if unknown:
            problems.append(Problem(config, f"{len(unknown)} corpus id(s) not in the corpus, e.g. {unknown[0]!r}", row))
        if len(set(ids)) != len(ids):
            problems.append(Problem(config, f"query {qid!r} lists a corpus id twice", row))
    return problems
