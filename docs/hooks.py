"""MkDocs hook: the reference pages' generated parts, made from the code at build time so that they cannot drift.

A page holds a marker comment, `<!-- generated: NAME -->`, on a line of its own; this hook replaces it with
Markdown made from the code:

* `cli`: `freshstack-hf --help` and every command's `--help`, the leaderboard's plug-in commands included, from
  the parser the console script builds (`freshstack_hf.cli.main.build_parser`);
* `store-schema`: the leaderboard store's tables, columns, keys and checks, from the SQLAlchemy declarations
  (`leaderboard.store.schema.Base.metadata`, every table the store composes);
* `dataset-configs`: a dataset repo's configs, their splits, files and columns, from `freshstack_hf.repo.layout`.

An unknown marker, a command declared in pyproject.toml but not installed, or a config without a note below fails
the build rather than rendering a page that says less than the code.

Figures are generated too: every measured figure a page quotes is a placeholder, rendered from the bench's own
records in `docs/figures/<section>.json` (written by `make bench`, copied by `make figures`; see
`benchmarks/figures.py`), never typed, so no two pages can quote two values of one figure:

* `{{ figure: SECTION.KEY }}`: the figure as the bench printed it (`0.74 s`, `8,936 tokens`, `1.40x`);
* `{{ goal: SECTION.KEY }}`: the goal judged on that figure and its verdict, `< 1 s: ok` or `< 1 s: **MISSED**`;
* `{{ verdicts: SECTION }}`: every goal of the section's run in a few words, `all 8 met` or what was MISSED;
* `{{ measured: SECTION }}` (or `SECTION.KEY`): the run that measured it, its command, date, machine and commit.

A placeholder naming a record, figure or goal that does not exist fails the build.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- generated: ([a-z-]+) -->$", re.M)
HELP_COLUMNS = "100"  # argparse wraps help at $COLUMNS: fixed, so the page is the same on every terminal
FIGURES = ROOT / "docs" / "figures"
PLACEHOLDER = re.compile(r"\{\{ (figure|goal|verdicts|measured): ([a-z0-9_]+)(?:\.([a-z0-9_]+))? \}\}")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    def render(match: re.Match[str]) -> str:
        name = match[1]
        if name not in GENERATORS:
            raise PluginError(f"{page.file.src_path}: unknown generated block {name!r} (known: {sorted(GENERATORS)})")
        return GENERATORS[name]()

    return render_figures(MARKER.sub(render, markdown), page.file.src_path)


# ---- figures -----------------------------------------------------------------------------------------------------


def records(folder: Path = FIGURES) -> dict[str, dict[str, Any]]:
    """Every section's last record, by section."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(folder.glob("*.json"))}


def _provenance(run: dict[str, Any]) -> str:
    commit = str(run.get("commit", "unknown"))
    short = commit if commit == "unknown" else commit[:10] + commit[40:]  # the hash, short, and "+ changes"
    machine = f", {run['machine']}" if "machine" in run else ""
    return f"`{run['command']}`, {str(run['date'])[:10]}{machine}, commit `{short}`"


def _verdicts(run: dict[str, Any]) -> str:
    missed = [g for g in run["goals"] if not g["ok"]]
    if not missed:
        return f"all {len(run['goals'])} met"
    return "; ".join(f"**MISSED**: {g['what']} ({g['measured']}; goal {g['goal']})" for g in missed)


def render_figures(markdown: str, where: str, found: dict[str, dict[str, Any]] | None = None) -> str:
    """The page with every figure placeholder replaced from the records (`found`, else docs/figures/)."""
    found = records() if found is None else found

    def render(match: re.Match[str]) -> str:
        kind, section, key = match[1], match[2], match[3]
        if section not in found:
            raise PluginError(f"{where}: {match[0]} names no record (docs/figures/ holds {sorted(found)})")
        run = found[section]
        if kind == "measured":
            if key is None:
                return _provenance(run)
            figure = run["figures"].get(key)
            if figure is None:
                raise PluginError(f"{where}: {match[0]}: the {section} record has no figure {key!r}")
            return _provenance({**run, **figure.get("measured", {})})
        if kind == "verdicts":
            return _verdicts(run)
        if key is None:
            raise PluginError(f"{where}: {match[0]} needs SECTION.KEY")
        if kind == "figure":
            if key not in run["figures"]:
                raise PluginError(
                    f"{where}: {match[0]}: the {section} record has no figure {key!r} (it has "
                    f"{', '.join(sorted(run['figures']))}); run `make bench` and `make figures`, or fix the key"
                )
            return run["figures"][key]["text"]
        goals = [g for g in run["goals"] if g.get("key") == key]
        if not goals:
            raise PluginError(f"{where}: {match[0]}: the {section} record judged no goal on {key!r}")
        return "; ".join(f"{g['goal']}: {'ok' if g['ok'] else '**MISSED**'}" for g in goals)

    return PLACEHOLDER.sub(render, markdown)


# ---- cli ---------------------------------------------------------------------------------------------------------


def _fence(text: str) -> str:
    return f"```text\n{text.rstrip()}\n```\n"


def cli_reference() -> str:
    from freshstack_hf.cli.main import PLUGIN_GROUP, build_parser

    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_COLUMNS
    try:
        parser = build_parser()
        commands: dict[str, argparse.ArgumentParser] = next(
            a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
        ).choices
        declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
        missing = sorted(set(declared[PLUGIN_GROUP]) - set(commands))
        if missing:
            raise PluginError(
                f"commands declared in pyproject.toml but not installed: {', '.join(missing)}; "
                "reinstall the project (pip install -e .) so that their help can be rendered"
            )
        parts = ["## freshstack-hf\n", _fence(parser.format_help())]
        for name, sub in commands.items():
            parts += [f"## {name}\n", _fence(sub.format_help())]
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before
    return "\n".join(parts)


# ---- store-schema ------------------------------------------------------------------------------------------------


def _doc(table: Any, classes: dict[str, type]) -> str:
    cls = classes.get(table.name)
    text = (cls.__doc__ or "").strip() if cls is not None else ""
    return " ".join(text.split())


def _column_row(column: Any) -> str:
    notes = []
    if column.primary_key:
        notes.append("primary key")
    notes += [f"→ `{fk.target_fullname}`" for fk in column.foreign_keys]
    if column.unique:
        notes.append("unique")
    if column.index:
        notes.append("indexed")
    if column.default is not None and not callable(getattr(column.default, "arg", None)):
        notes.append(f"default `{column.default.arg!r}`")
    null = "yes" if column.nullable and not column.primary_key else "no"
    return f"| `{column.name}` | `{column.type}` | {null} | {', '.join(notes)} |"


def store_schema() -> str:
    import leaderboard.store.store  # noqa: F401  (imports every part of the store, so every table is declared)
    from leaderboard.store.schema import STORE_SCHEMA, Base

    classes = {m.class_.__tablename__: m.class_ for m in Base.registry.mappers}
    parts = [f"Store layout version (`STORE_SCHEMA`): **{STORE_SCHEMA}**.\n"]
    for table in Base.metadata.sorted_tables:
        parts.append(f"## `{table.name}`\n")
        if doc := _doc(table, classes):
            parts.append(f"{doc}\n")
        parts.append("| column | type | null | notes |\n|---|---|---|---|")
        parts += [_column_row(c) for c in table.columns]
        extra = []
        for constraint in sorted(table.constraints, key=lambda c: str(c.name)):
            sql = getattr(constraint, "sqltext", None)
            if sql is not None:
                extra.append(f"- check `{constraint.name}`: `{sql}`")
            elif type(constraint).__name__ == "UniqueConstraint" and len(constraint.columns) > 1:
                extra.append(f"- unique `{constraint.name}`: ({', '.join(c.name for c in constraint.columns)})")
        extra += [
            f"- index `{ix.name}`: ({', '.join(c.name for c in ix.columns)})"
            for ix in sorted(table.indexes, key=lambda i: str(i.name))
            if len(ix.columns) > 1
        ]
        parts.append("")
        if extra:
            parts += [*extra, ""]
    return "\n".join(parts)


# ---- dataset-configs ---------------------------------------------------------------------------------------------

# What each config holds beyond its columns (DESIGN.md); keyed by file stem. A config added to layout.CONFIGS
# needs its line here, or the build fails.
CONFIG_NOTES = {
    "queries_official": "drop-in for the official `freshstack/queries-oct-2024` config `T`: each query with its "
    "answer and nested nuggets",
    "corpus": "the full topic corpus, distractors included; ids `{repo_keyword}/{path}_{start}_{end}`",
    "queries": '`text` = `query_title + " " + query_text` (the official convention)',
    "nuggets": "nugget id = `{query_id}_{k}`, k 0-based",
    "qrels": "score = the number of the query's nuggets the document supports; judged non-relevant documents kept "
    "with 0",
    "nugget_qrels": "binary support judgments, 0 rows included: the nugget-aware measures' input",
    "bm25": "BM25 top-500 candidate list (Lucene BM25, k1 0.9, b 0.4)",
    "dense": "dense top-500 candidate list (the packaged MiniLM unless the build names another model)",
    "top_ranked": "RRF hybrid top-100 (+ safeguard at rank 101): the reranking candidates (MTEB's name)",
}


def _arrow_type(field: Any) -> str:
    return str(field.type).replace("<item: ", "<").replace("element: ", "")


def dataset_configs() -> str:
    from freshstack_hf.repo.layout import CONFIGS, DATA_DIR

    missing = [c.stem for c in CONFIGS if c.stem not in CONFIG_NOTES]
    if missing:
        raise PluginError(f"docs/hooks.py: CONFIG_NOTES has no note for the config(s) {missing}")
    rows = [
        "| config | split | file | columns | cross-topic view | written by | notes |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in CONFIGS:
        columns = "<br>".join(f"`{f.name}`: `{_arrow_type(f)}`" for f in c.schema)
        view = f"`{c.view}`" if c.view else "—"
        writer = "every build" if c.kind == "core" else "`candidates`"
        file, note = f"`{DATA_DIR}/T/{c.stem}.parquet`", CONFIG_NOTES[c.stem]
        rows.append(f"| `T{c.suffix}` | `{c.split}` | {file} | {columns} | {view} | {writer} | {note} |")
    return "\n".join(rows) + "\n"


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli_reference,
    "store-schema": store_schema,
    "dataset-configs": dataset_configs,
}
