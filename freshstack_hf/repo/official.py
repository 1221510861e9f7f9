"""Import and export of the official release schema (`freshstack/queries-oct-2024`, `freshstack/corpus-oct-2024`).

Import is lossless for the official columns: the input's exact Arrow schemas are kept in the manifest, and
export casts back to them, so `import` then `export` reproduces the input tables (same columns, types, order).
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError, ValidationError
from freshstack_hf.records import Doc
from freshstack_hf.repo.manifest import read_manifest
from freshstack_hf.repo.reader import load_topic
from freshstack_hf.repo.tables import docs_from_corpus, official_queries_table, query_side_from_official
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.topic import Topic
from freshstack_hf.topic_check import validate_topic

DOC_ID_RE = re.compile(r"^(?P<repo>[^/]+)/(?P<path>.+)_(?P<start>\d+)_(?P<end>\d+)$")
REQUIRED_QUERY_COLUMNS = ("query_id", "query_title", "query_text", "nuggets")
REQUIRED_CORPUS_COLUMNS = ("_id", "text")


def read_source(source: str, topic: str, split: str | None, what: str, revision: str | None = None) -> pa.Table:
    """A local parquet file or folder of parquet files, else a Hub dataset id read with `datasets`."""
    path = Path(source).expanduser()
    if path.is_file():
        return _read_parquet(path)
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        files = [f for f in files if topic in f.parts or f.stem.startswith(topic)] or files
        if not files:
            raise FreshStackError(f"{path}: no parquet files for {what}; give a .parquet file or a Hub id")
        return pa.concat_tables([_read_parquet(f) for f in files], promote_options="permissive")
    if "/" not in source:
        raise FreshStackError(f"{what} source {source!r} is neither a file, a folder nor a Hub id (ORG/NAME)")
    import datasets

    try:
        ds = datasets.load_dataset(source, topic, split=split, revision=revision)
    except Exception as exc:
        raise FreshStackError(f"could not load {what} {source!r} config {topic!r} split {split!r}: {exc}") from exc
    return ds.data.table


def _read_parquet(path: Path) -> pa.Table:
    try:
        return pq.read_table(path)
    except Exception as exc:
        raise FreshStackError(f"{path}: not a readable parquet file ({exc})") from exc


def topic_from_official(topic: str, queries: pa.Table, corpus: pa.Table) -> Topic:
    for cols, table, what in (
        (REQUIRED_QUERY_COLUMNS, queries, "queries"),
        (REQUIRED_CORPUS_COLUMNS, corpus, "corpus"),
    ):
        missing = [c for c in cols if c not in table.column_names]
        if missing:
            raise FreshStackError(
                f"official {what} table lacks column(s) {missing}; columns found: {table.column_names}"
            )
    qs, nuggets, judgments = query_side_from_official(queries)
    docs = [_with_location(d) for d in docs_from_corpus(corpus)]
    return Topic(topic, queries=qs, nuggets=nuggets, docs=docs, judgments=judgments)


def _with_location(doc: Doc) -> Doc:
    """Repo and path are implied by the official id form; fill them when the metadata lacks them."""
    m = DOC_ID_RE.match(doc.doc_id)
    if not m or (doc.repo and doc.path):
        return doc
    from dataclasses import replace

    return replace(doc, repo=doc.repo or m["repo"], path=doc.path or m["path"])


def import_official(
    queries_source: str,
    corpus_source: str,
    topic: str,
    out: str | Path,
    *,
    queries_split: str = "test",
    corpus_split: str = "train",
    revision: str | None = None,
    strict: bool = False,
) -> Topic:
    """Read, convert and write one topic; returns it (check it with `validate_topic` for data problems).

    The import is lossless, so problems in the source data (a nugget without a relevant document, a judged id
    missing from the corpus) are written as given. `strict=True` checks first and raises `ValidationError`
    with every problem, writing nothing. Unreadable sources and missing columns always raise before writing.
    """
    queries = read_source(queries_source, topic, queries_split, "queries", revision)
    corpus = read_source(corpus_source, topic, corpus_split, "corpus", revision)
    t = topic_from_official(topic, queries, corpus)
    if strict:
        problems = validate_topic(t)
        if problems:
            raise ValidationError(problems, f"official topic {topic} not imported (nothing written)")
    source = {
        "kind": "official",
        "queries": str(queries_source),
        "corpus": str(corpus_source),
        "revision": revision or "",
    }
    schemas = {"official_schema": {"queries": _encode(queries.schema), "corpus": _encode(corpus.schema)}}
    write_topics(out, [t], source=source, extra_manifest={topic: schemas})
    return t


def export_official(repo: str | Path, topic: str, out_dir: str | Path) -> tuple[Path, Path]:
    """Write `queries.parquet` and `corpus.parquet` in the official schema (the imported one when known)."""
    repo, out_dir = Path(repo), Path(out_dir)
    t = load_topic(repo, topic)
    schemas = read_manifest(repo)["topics"].get(topic, {}).get("official_schema", {})
    queries = official_queries_table(t)
    corpus = _official_corpus(t.docs, _decode(schemas["corpus"]) if "corpus" in schemas else None)
    if "queries" in schemas:
        queries = _conform(queries, _decode(schemas["queries"]))
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = out_dir / "queries.parquet", out_dir / "corpus.parquet"
    for table, path in zip((queries, corpus), paths, strict=True):
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp)
    return paths


def _official_corpus(docs: list[Doc], schema: pa.Schema | None) -> pa.Table:
    meta_fields = {
        "url": lambda d: d.url,
        "start_byte": lambda d: d.start_byte,
        "end_byte": lambda d: d.end_byte,
        "commit_id": lambda d: d.commit,
        "commit": lambda d: d.commit,
        "repo": lambda d: d.repo,
        "path": lambda d: d.path,
    }
    if schema is None:
        return pa.table(
            {
                "_id": [d.doc_id for d in docs],
                "text": [d.text for d in docs],
                "metadata": [{"url": d.url, "start_byte": d.start_byte, "end_byte": d.end_byte} for d in docs],
            }
        )
    columns = {}
    for f in schema:
        if f.name == "_id":
            columns[f.name] = [d.doc_id for d in docs]
        elif f.name == "text":
            columns[f.name] = [d.text for d in docs]
        elif f.name == "title":
            columns[f.name] = [d.title for d in docs]
        elif f.name == "metadata" and pa.types.is_struct(f.type):
            names = [sub.name for sub in f.type if sub.name in meta_fields]
            columns[f.name] = [{n: meta_fields[n](d) for n in names} for d in docs]
    return _conform(pa.table(columns), schema)


def _conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    keep = [f for f in schema if f.name in table.column_names]
    target = pa.schema(keep, metadata=schema.metadata)
    try:
        return table.select([f.name for f in keep]).cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise FreshStackError(f"cannot convert back to the imported official schema: {exc}") from exc


def _encode(schema: pa.Schema) -> str:
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def _decode(text: str) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))
