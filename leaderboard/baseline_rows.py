"""The loaded dataset as the app sees it, runs turned into storable scores, and the project's baseline rows.

Baseline rows (BM25, dense, RRF hybrid, and a reranked hybrid when a cross-encoder is given) are computed
by the library (`freshstack_hf.baselines`) on the dataset the app serves and scored by the library's
evaluator, like any submission. Each row's dedupe key hashes its *configuration* (method, parameters, model
fingerprint, dataset revision), which is known before any work, so a restart finds every row stored and
loads no model; a new dataset revision or model gets rows of its own.

Runs behind stored rows are archived (top `ARCHIVE_DEPTH` per query, gzipped JSON named by the row's hash)
so the detail view can list nuggets no system covers; scores alone cannot say which nugget was missed.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import MEASURES, top_docs
from leaderboard.schema import SCHEMA_VERSION, ResultMeta
from leaderboard.store import Store

ARCHIVE_DEPTH = 100
Run = Mapping[str, Mapping[str, float]]


class DatasetContext:
    """One dataset repo (folder or Hub id) with its revision; topics, qrels and id sets loaded once, shared."""

    def __init__(self, source: str | Path, revision: str | None = None) -> None:
        from freshstack_hf.repo.reader import list_topics, resolve_repo
        from leaderboard.jobs import dataset_revision

        self.source = str(source)
        self.repo = resolve_repo(source, revision)
        self.revision = dataset_revision(self.repo, revision)
        self.topics = list_topics(self.repo)
        if not self.topics:
            raise FreshStackError(f"dataset {self.source}: no topics found (expected data/<topic>/ folders)")
        self._cache: dict[tuple[str, str], Any] = {}
        self._lock = threading.RLock()

    def _cached(self, kind: str, topic: str, make: Callable[[], Any]) -> Any:
        with self._lock:  # submissions arrive on many threads; each part is read once
            key = (kind, topic)
            if key not in self._cache:
                self._cache[key] = make()
            return self._cache[key]

    def topic(self, name: str) -> Any:
        from freshstack_hf.repo.reader import load_topic

        return self._cached("topic", name, lambda: load_topic(self.repo, name))

    def qrels(self, name: str) -> Any:
        from freshstack_hf.metrics import qrels_from_topic

        return self._cached("qrels", name, lambda: qrels_from_topic(self.topic(name)))

    def query_ids(self, topics: Iterable[str]) -> frozenset[str]:
        parts = [self._cached("qids", t, lambda t=t: frozenset(self.topic(t).query_ids)) for t in topics]
        return frozenset().union(*parts)

    def doc_ids(self, topics: Iterable[str]) -> frozenset[str]:
        parts = [self._cached("docs", t, lambda t=t: frozenset(self.topic(t).doc_ids)) for t in topics]
        return frozenset().union(*parts)

    def warm(self) -> None:
        """Read every topic now, so the first submission does not pay for it."""
        self.query_ids(self.topics), self.doc_ids(self.topics), [self.qrels(t) for t in self.topics]


class RunArchive:
    """Top-k runs of stored rows, one gzipped JSON file per content hash ({topic: {query: {doc: score}}})."""

    def __init__(self, root: str | Path, depth: int = ARCHIVE_DEPTH) -> None:
        self.root, self.depth = Path(root).expanduser(), depth

    def path(self, content_hash: str) -> Path:
        return self.root / f"{hashlib.sha256(content_hash.encode()).hexdigest()[:32]}.json.gz"

    def save(self, content_hash: str, runs: Mapping[str, Run]) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        target = self.path(content_hash)
        with atomic_path(target) as tmp, gzip.open(tmp, "wb") as fh:  # readers never see half a file
            fh.write(json.dumps(runs, separators=(",", ":")).encode())
        return target

    def load(self, content_hash: str) -> dict[str, dict[str, dict[str, float]]] | None:
        path = self.path(content_hash)
        if not path.is_file():
            return None
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)


def score_topics(
    dataset: DatasetContext, runs: Mapping[str, Run], *, resamples: int = 10_000
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, dict[str, float]]]]:
    """Score each topic's run with the library; returns (results for `Store.add_system`, runs to archive).

    A run may hold other topics' queries too (a whole-dataset file): the evaluator ignores them, and the
    archived copy keeps only the topic's own queries, cut to `ARCHIVE_DEPTH`.
    """
    from freshstack_hf.metrics.report import score_run

    results, kept = {}, {}
    for topic, run in runs.items():
        scores = score_run({topic: dataset.qrels(topic)}, run, MEASURES, resamples=resamples)
        result = scores.topics[topic]
        ci = {m: (iv.low, iv.high) for m, iv in scores.intervals.get(topic, {}).items()}
        results[topic] = {"metrics": result.metrics, "per_query": result.per_query, "ci": ci}
        own = dataset.query_ids([topic])
        kept[topic] = {q: {d: docs[d] for d in top_docs(docs, ARCHIVE_DEPTH)} for q, docs in run.items() if q in own}
    return results, kept


def model_fingerprint(name: str) -> tuple[str, Path, str]:
    """(model id, local folder, short hash of its file names and sizes): part of a baseline's dedupe key."""
    from freshstack_hf.retrieval.models import resolve_model_source

    model_id, local = resolve_model_source(name)
    if local is None:
        raise FreshStackError(f"model {name!r} is not available offline: give a local folder or a cached Hub id")
    files = sorted((p.relative_to(local).as_posix(), p.stat().st_size) for p in local.rglob("*") if p.is_file())
    return model_id, local, hashlib.sha256(json.dumps(files).encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class BaselineRow:
    method: str
    name: str
    system_id: int
    created: bool


def _hash(config: Mapping[str, Any], revision: str) -> str:
    blob = json.dumps({**config, "dataset_revision": revision, "schema": SCHEMA_VERSION}, sort_keys=True)
    return "baseline:" + hashlib.sha256(blob.encode()).hexdigest()[:48]


def compute_baselines(
    store: Store,
    dataset: DatasetContext,
    *,
    methods: Iterable[str] = ("bm25", "dense", "hybrid"),
    model: str | None = None,
    cross_encoder: str | None = None,
    cache_dir: str | Path | None = None,
    archive: RunArchive | None = None,
    say: Callable[[str], None] = lambda _msg: None,
    show_progress: bool = False,
    resamples: int = 10_000,
) -> list[BaselineRow]:
    """Store the baseline rows missing for this dataset revision; rows already stored are left alone."""
    from freshstack_hf import baselines
    from freshstack_hf.retrieval.models import DEFAULT_DENSE_MODEL

    wanted = list(dict.fromkeys(methods)) + (["rerank"] if cross_encoder else [])
    unknown = set(wanted) - {"bm25", "dense", "hybrid", "rerank"}
    if unknown:
        raise FreshStackError(f"unknown baseline method(s) {sorted(unknown)}: use bm25, dense, hybrid")
    configs: dict[str, dict[str, Any]] = {
        "bm25": {"method": "bm25", "k": baselines.FIRST_STAGE_DEPTH, "k1": baselines.BM25_K1, "b": baselines.BM25_B}
    }
    dense_id = dense_dir = ce_id = None
    if {"dense", "hybrid", "rerank"} & set(wanted):
        dense_id, dense_dir, print_ = model_fingerprint(model or DEFAULT_DENSE_MODEL)
        configs["dense"] = {"method": "dense", "k": baselines.FIRST_STAGE_DEPTH, "model": dense_id, "files": print_}
        configs["hybrid"] = {
            "method": "hybrid",
            "rrf_k": baselines.RRF_K,
            "depth": baselines.HYBRID_DEPTH,
            "inputs": [configs["bm25"], configs["dense"]],
        }
    if cross_encoder:
        from freshstack_hf.retrieval.rerank import RERANK_TOP_K

        ce_id, _, ce_print = model_fingerprint(cross_encoder)
        configs["rerank"] = {
            "method": "rerank",
            "top_k": RERANK_TOP_K,
            "model": ce_id,
            "files": ce_print,
            "input": configs["hybrid"],
        }
    hashes = {m: _hash(configs[m], dataset.revision) for m in wanted}
    done = {m: s for m in wanted if (s := store.find_system(hashes[m])) is not None and s.status == "scored"}
    todo = [m for m in wanted if m not in done]
    rows = [BaselineRow(m, s.name, s.id, False) for m, s in done.items()]
    if not todo:
        say(f"baselines: all {len(wanted)} rows already stored for dataset revision {dataset.revision}")
        return rows
    needs = set(todo) | ({"bm25", "dense"} if {"hybrid", "rerank"} & set(todo) else set())
    needs |= {"hybrid"} if "rerank" in todo else set()
    retriever = None
    if "dense" in needs:
        from freshstack_hf.retrieval.dense import DenseRetriever

        cache = baselines.default_cache_dir() if cache_dir is None else cache_dir
        retriever = DenseRetriever(str(dense_dir), cache_dir=cache, show_progress=show_progress)
    made: dict[str, dict[str, Any]] = {m: {} for m in needs}
    for topic_name in dataset.topics:
        topic = dataset.topic(topic_name)
        if "bm25" in needs:
            say(f"baselines: {topic_name}: BM25 over {len(topic.docs):,} docs")
            made["bm25"][topic_name] = baselines.bm25(topic, show_progress=show_progress)
        if "dense" in needs:
            say(f"baselines: {topic_name}: dense ({dense_id}) over {len(topic.docs):,} docs")
            made["dense"][topic_name] = baselines.dense(topic, retriever=retriever)
        if "hybrid" in needs:
            made["hybrid"][topic_name] = baselines.hybrid(made["bm25"][topic_name], made["dense"][topic_name])
        if "rerank" in needs:
            from freshstack_hf.retrieval.rerank import rerank

            say(f"baselines: {topic_name}: reranking the hybrid top {configs['rerank']['top_k']} with {ce_id}")
            ranked = rerank(
                cross_encoder,
                {q.query_id: q.text for q in topic.queries},
                made["hybrid"][topic_name].run,
                {d.doc_id: d.text for d in topic.docs},
                show_progress=show_progress,
            )
            made["rerank"][topic_name] = baselines.BaselineRun("rerank", ranked, {"model": ce_id})
    dense_name, ce_name = _short(dense_id), _short(ce_id)
    names = {
        "bm25": "BM25",
        "dense": f"Dense ({dense_name})",
        "hybrid": f"RRF hybrid (BM25 + {dense_name})",
        "rerank": f"Reranked hybrid ({ce_name})",
    }
    size = _parameters(dense_dir) if dense_dir else None
    for method in todo:
        results, runs = score_topics(dataset, {t: r.as_scores() for t, r in made[method].items()}, resamples=resamples)
        params = {
            "job": "baseline",
            "config": configs[method],
            "dataset": dataset.source,
            "resamples": resamples,
            "measures": [m.id for m in MEASURES],
            "run_params": {t: r.params for t, r in made[method].items()},
            "seconds": {t: r.seconds for t, r in made[method].items()},
        }
        description = f"computed by freshstack-hf {__version__} on this dataset: " + json.dumps(configs[method])
        system, created = store.add_system(
            name=names[method],
            kind="baseline",
            content_hash=hashes[method],
            description=description,
            size=None if method == "bm25" else size,
            results=results,
            meta=ResultMeta(dataset.revision, __version__, params),
        )
        if archive is not None:
            archive.save(hashes[method], runs)
        say(f"baselines: stored {names[method]} as system #{system.id}")
        rows.append(BaselineRow(method, system.name, system.id, created))
    return rows


def _short(model_id: str | None) -> str:
    return (model_id or "").rstrip("/").split("/")[-1]


def _parameters(model_dir: Path) -> int | None:
    from leaderboard.jobs import safetensors_parameters

    files = list(model_dir.rglob("*.safetensors"))
    return sum(safetensors_parameters(p) for p in files) or None
