"""The baseline retrievers on a topic (BM25, dense, their RRF hybrid, the hybrid reranked), as runs the evaluator
reads, and the registry of retrieval methods (`METHODS`) every consumer reads.

One place decides the baseline parameters (the official BM25 baseline's k1/b, depths, fusion constant) and what
each method is made of, needs, is configured and named by, so the candidate lists, the build's pooling
retrievers, `freshstack-hf retrieve`, drift's systems, the leaderboard's baseline rows and its answer rows cannot
drift apart. Adding a method (a learned sparse model, a second dense model) is one module calling
`register_method`: every one of them then offers it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs.run import RankedList, from_ranked

BM25_K1, BM25_B = 0.9, 0.4  # Pyserini's defaults, which the official FreshStack BM25 baseline ran
FIRST_STAGE_DEPTH = 500
HYBRID_DEPTH = 100
RRF_K = 100


class Document(Protocol):
    @property
    def doc_id(self) -> str: ...

    @property
    def text(self) -> str: ...


class Question(Protocol):
    @property
    def query_id(self) -> str: ...

    @property
    def text(self) -> str: ...


class Searched(Protocol):
    """What a method retrieves over: a name, documents and queries, each with an id and a text. A `Topic` is one;
    so are the build's pooling queries over its chunks (`stages/pools.py`), which have no judgments yet, so a
    method reads nothing else of it."""

    @property
    def name(self) -> str: ...

    @property
    def docs(self) -> Sequence[Document]: ...

    @property
    def queries(self) -> Sequence[Question]: ...


@dataclass
class BaselineRun:
    """A run and what produced it: method, parameters and timings (for the manifest and the leaderboard)."""

    method: str
    run: dict[str, RankedList]  # query id -> ranked list, best first
    params: dict[str, Any] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def as_scores(self) -> dict[str, dict[str, float]]:
        """The evaluator's input form {query: {doc: score}}."""
        return from_ranked(self.run)


@dataclass
class CorpusMemo:
    """What methods make from a corpus alone (BM25's index, the dense document vectors), kept for one corpus, so a
    second set of questions over it (a snapshot's embargoed questions beside its public ones, in the `candidates`
    stage) searches what the first made instead of making it again. A corpus of other ids or texts empties it first:
    it never holds more than one corpus's."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    made: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, docs: Sequence[Document], make: Callable[[], Any]) -> tuple[Any, bool]:
        """(what `make` makes of `docs` under `key`, whether this call made it rather than reusing it)."""
        ids, texts = [d.doc_id for d in docs], [d.text for d in docs]
        if ids != self.ids or texts != self.texts:
            self.ids, self.texts, self.made = ids, texts, {}
        if key in self.made:
            return self.made[key], False
        self.made[key] = make()
        return self.made[key], True


def bm25(
    topic: Searched, k: int = FIRST_STAGE_DEPTH, *, show_progress: bool = False, memo: CorpusMemo | None = None
) -> BaselineRun:
    """BM25 top-k; with `memo`, the index of a corpus it holds is searched as is (its `index` seconds then time only
    the look-up)."""
    from freshstack_hf.retrieval.bm25 import BM25Index

    def build() -> BM25Index:
        ids, texts = [d.doc_id for d in topic.docs], [d.text for d in topic.docs]
        return BM25Index.build(ids, texts, k1=BM25_K1, b=BM25_B, show_progress=show_progress)

    start = time.perf_counter()
    index = memo.get("bm25", topic.docs, build)[0] if memo is not None else build()
    built = time.perf_counter()
    hits = index.search([q.text for q in topic.queries], k=k, show_progress=show_progress)
    done = time.perf_counter()
    run = {q.query_id: list(h) for q, h in zip(topic.queries, hits, strict=True)}
    return BaselineRun(
        "bm25", run, {"k": k, **index.params}, {"index": round(built - start, 3), "search": round(done - built, 3)}
    )


def dense(
    topic: Searched,
    model: str = "",
    k: int = FIRST_STAGE_DEPTH,
    *,
    cache_dir: str | Path | None = None,
    batch_size: int = 32,
    max_seq_length: int | None = None,
    show_progress: bool = False,
    retriever: Any = None,
    memo: CorpusMemo | None = None,
) -> BaselineRun:
    """Dense top-k; pass `retriever` to reuse one loaded model across topics, and `memo` to encode a corpus once for
    several sets of questions (a `DenseRetriever`'s vectors; the reused ones count as neither encoded nor cached)."""
    from freshstack_hf.defaults import dense_retriever
    from freshstack_hf.retrieval.encoding import EncodeStats

    retriever = retriever or dense_retriever(
        model, cache_dir=cache_dir, batch_size=batch_size, max_seq_length=max_seq_length, show_progress=show_progress
    )
    doc_ids, doc_texts = [d.doc_id for d in topic.docs], [d.text for d in topic.docs]
    settings: dict[str, Any] = {}
    if memo is not None:
        model = f"{retriever.dense.model_id}@{retriever.dense.revision}"
        key = f"dense {model} {retriever.max_seq_length} {retriever.doc_prompt!r}"  # what the vectors depend on
        (vectors, encoded), made = memo.get(key, topic.docs, lambda: retriever.encode(doc_texts))
        settings["doc_vectors"] = (vectors, encoded if made else EncodeStats(texts=len(doc_texts)))
    run, stats = retriever.retrieve(
        doc_ids, doc_texts, [q.query_id for q in topic.queries], [q.text for q in topic.queries], k=k, **settings
    )
    params = {
        "k": k,
        "model": retriever.dense.model_id,
        "revision": retriever.dense.revision,
        "max_seq_length": retriever.max_seq_length,
        "query_prompt": retriever.query_prompt,
        "doc_prompt": retriever.doc_prompt,
        "encoded": stats.encoded,
        "cached": stats.cached,
    }
    seconds = {"encode": round(stats.docs.seconds + stats.queries.seconds, 3), "search": round(stats.search_seconds, 3)}
    return BaselineRun("dense", run, params, seconds)


def hybrid(first: BaselineRun, second: BaselineRun, depth: int = HYBRID_DEPTH, rrf_k: int = RRF_K) -> BaselineRun:
    """RRF of two runs, top `depth` kept (no safeguard: that belongs to the candidate lists only)."""
    from freshstack_hf.retrieval.fusion import rrf

    start = time.perf_counter()
    fused = rrf([first.run, second.run], rrf_k=rrf_k, depth=depth)
    params = {"rrf_k": rrf_k, "depth": depth, "inputs": [first.method, second.method]}
    return BaselineRun("hybrid", fused, params, {"fuse": round(time.perf_counter() - start, 3)})


# ---- the methods: one registry that every consumer reads ----------------------------------------------------------
DENSE_MODEL, CROSS_ENCODER = "dense model", "cross-encoder"  # what a method may need its setup to name


@dataclass(frozen=True)
class Setup:
    """What the methods are configured with, known before anything is computed: each model as asked (a name or a
    folder; None for the packaged dense model) and, where a caller fingerprinted it, its id and file fingerprint
    (the leaderboard's dedupe keys hash those)."""

    dense_model: str | Path | None = None
    dense_id: str | None = None
    dense_files: str | None = None
    cross_encoder: str | Path | None = None
    cross_encoder_id: str | None = None
    cross_encoder_files: str | None = None


@dataclass
class Resources:
    """What computing runs shares across topics and methods: the setup, one dense retriever loaded on first use,
    and the caller's settings (embedding cache, devices, progress bars)."""

    setup: Setup = field(default_factory=Setup)
    cache_dir: str | Path | None = None
    device: str | None = None
    devices: list[str] | None = None
    show_progress: bool = False
    say: Callable[[str], None] = lambda _msg: None
    retriever: Any = None
    corpus: CorpusMemo | None = None  # set: BM25's index and the dense vectors are made once per corpus (`CorpusMemo`)

    def dense_retriever(self) -> Any:
        if self.retriever is None:
            from freshstack_hf.defaults import dense_retriever

            settings = {"show_progress": self.show_progress, "device": self.device, "devices": self.devices}
            self.retriever = dense_retriever(self.setup.dense_model, cache_dir=self.cache_dir, **settings)
        return self.retriever


@dataclass(frozen=True)
class Method:
    """A retrieval method run as a baseline: what it is made from, what it needs, how it is configured and named,
    and how it runs. The CLI's `retrieve`, the leaderboard's baseline rows, the Answers tab's answer rows, the
    build's pooling retrievers (`pooling.retrievers`) and drift's systems all read `METHODS`, so a new method is
    one module that calls `register_method`.

    * `inputs`: the methods whose runs this one is computed from (a fusion, a reranker), run first on each topic;
    * `needs`: what the setup must name (`DENSE_MODEL`, `CROSS_ENCODER`); a method needing a cross-encoder is a
      board row only when one is given;
    * `config(setup, inputs)`: everything that decides its run, given its inputs' configs (a board row's dedupe
      key hashes it, so it must not change for an existing method);
    * `label(setup)`: its board row's name; `title`: its short name in other rows' names (answer rows);
    * `run(topic, inputs, resources, k)`: its run on one topic (any `Searched`: the build pools with it before a
      topic has judgments), from its inputs' runs (k: depth, None = its own);
    * `answer_part(setup)`: what an answer row retrieving with it records of it (merged over its inputs too);
    * `board`: a default board row; `answers`: its rank as the answer rows' retrieval (lower first; None: not used);
    * `stored`: the candidate config a dataset repo keeps its run in (`top_ranked` holds the hybrid's, safeguard
      appended), which drift scores rather than running the method again; None: the repo keeps none.
    """

    name: str
    title: str
    config: Callable[[Setup, Mapping[str, dict[str, Any]]], dict[str, Any]]
    label: Callable[[Setup], str]
    run: Callable[[Searched, Mapping[str, BaselineRun], Resources, int | None], BaselineRun]
    answer_part: Callable[[Setup], dict[str, Any]] = lambda _setup: {}
    inputs: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    board: bool = True
    answers: int | None = None
    stored: str | None = None


METHODS: dict[str, Method] = {}


def register_method(method: Method) -> Method:
    """Add `method` (after its inputs); refused when the name is taken or an input is unknown."""
    if method.name in METHODS:
        raise FreshStackError(f"a retrieval method named {method.name!r} exists already")
    missing = [m for m in method.inputs if m not in METHODS]
    if missing:
        raise FreshStackError(f"method {method.name!r}: register its inputs {missing} first")
    METHODS[method.name] = method
    return method


def unregister_method(name: str) -> None:
    """Take a method off the registry (a test's toy method); an input of another method stays."""
    if any(name in m.inputs for m in METHODS.values()):
        raise FreshStackError(f"method {name!r} is an input of another method")
    METHODS.pop(name, None)


def method(name: str) -> Method:
    if name not in METHODS:
        raise FreshStackError(f"unknown retrieval method {name!r}: choose one of {', '.join(METHODS)}")
    return METHODS[name]


def runnable(setup: Setup | None = None) -> list[str]:
    """The methods `setup` can run, in registry order: one needing a cross-encoder only where the setup names one
    (a build's pooling and drift name none)."""
    setup = setup or Setup()
    return [name for name in METHODS if setup.cross_encoder or CROSS_ENCODER not in needs([name])]


def with_inputs(names: Iterable[str]) -> list[str]:
    """`names` and every method they are computed from, in the order they can be computed (registry order)."""
    wanted: set[str] = set()

    def add(name: str) -> None:
        if name not in wanted:
            wanted.add(name)
            for parent in method(name).inputs:
                add(parent)

    for name in names:
        add(name)
    return [m for m in METHODS if m in wanted]


def needs(names: Iterable[str]) -> set[str]:
    """What the setup must name for `names` and their inputs (`DENSE_MODEL`, `CROSS_ENCODER`)."""
    return {need for m in with_inputs(names) for need in METHODS[m].needs}


def configs(names: Iterable[str], setup: Setup) -> dict[str, dict[str, Any]]:
    """The config of each of `names` and of their inputs."""
    out: dict[str, dict[str, Any]] = {}
    for name in with_inputs(names):
        out[name] = METHODS[name].config(setup, {m: out[m] for m in METHODS[name].inputs})
    return out


def compute(
    topic: Searched, names: Iterable[str], resources: Resources, k: Mapping[str, int | None] | None = None
) -> dict[str, BaselineRun]:
    """The runs of `names` and of their inputs on `topic` ({method: run}); `k` gives some a depth of their own."""
    made: dict[str, BaselineRun] = {}
    for name in with_inputs(names):
        m = METHODS[name]
        made[name] = m.run(topic, {i: made[i] for i in m.inputs}, resources, (k or {}).get(name))
    return made


def run_method(topic: Searched, name: str, *, model: str = "", k: int | None = None, **settings: Any) -> BaselineRun:
    """One method's run on `topic` (`freshstack-hf retrieve`); its inputs run at their own depths."""
    resources = Resources(Setup(dense_model=model or None), **settings)
    return compute(topic, [method(name).name], resources, {name: k})[name]


def _short(model_id: str | None) -> str:
    """A model's short name for row labels: the last part of its id or path."""
    return str(model_id or "").rstrip("/").rsplit("/", 1)[-1]


def _bm25_config(_setup: Setup, _inputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {"method": "bm25", "k": FIRST_STAGE_DEPTH, "k1": BM25_K1, "b": BM25_B}


def _dense_config(setup: Setup, _inputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {"method": "dense", "k": FIRST_STAGE_DEPTH, "model": setup.dense_id, "files": setup.dense_files}


def _hybrid_config(_setup: Setup, inputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    return {"method": "hybrid", "rrf_k": RRF_K, "depth": HYBRID_DEPTH, "inputs": [inputs["bm25"], inputs["dense"]]}


def _rerank_config(setup: Setup, inputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
    from freshstack_hf.retrieval.rerank import RERANK_TOP_K

    files = setup.cross_encoder_files
    return {"method": "rerank", "top_k": RERANK_TOP_K, "model": setup.cross_encoder_id, "files": files,
            "input": inputs["hybrid"]}  # fmt: skip


def _rerank(topic: Searched, inputs: Mapping[str, BaselineRun], resources: Resources, _k: int | None) -> BaselineRun:
    from freshstack_hf.retrieval.rerank import RERANK_TOP_K, rerank

    setup = resources.setup
    if not setup.cross_encoder:
        raise FreshStackError("a rerank baseline needs a cross-encoder: pass --cross-encoder")
    ce_id = setup.cross_encoder_id or str(setup.cross_encoder)
    resources.say(f"baselines: {topic.name}: reranking the hybrid top {RERANK_TOP_K} with {ce_id}")
    ranked = rerank(
        setup.cross_encoder,
        {q.query_id: q.text for q in topic.queries},
        inputs["hybrid"].run,
        {d.doc_id: d.text for d in topic.docs},
        device=resources.device,
        show_progress=resources.show_progress,
    )
    return BaselineRun("rerank", ranked, {"model": ce_id})


def _bm25(topic: Searched, _inputs: Mapping[str, BaselineRun], resources: Resources, k: int | None) -> BaselineRun:
    resources.say(f"baselines: {topic.name}: BM25 over {len(topic.docs):,} docs")
    return bm25(topic, k or FIRST_STAGE_DEPTH, show_progress=resources.show_progress, memo=resources.corpus)


def _dense(topic: Searched, _inputs: Mapping[str, BaselineRun], resources: Resources, k: int | None) -> BaselineRun:
    retriever = resources.dense_retriever()
    model = resources.setup.dense_id or retriever.dense.model_id
    resources.say(f"baselines: {topic.name}: dense ({model}) over {len(topic.docs):,} docs")
    return dense(topic, k=k or FIRST_STAGE_DEPTH, retriever=retriever, memo=resources.corpus)


def _hybrid(_topic: Searched, inputs: Mapping[str, BaselineRun], _resources: Resources, k: int | None) -> BaselineRun:
    return hybrid(inputs["bm25"], inputs["dense"], depth=k or HYBRID_DEPTH)


register_method(Method(
    "bm25", "BM25", _bm25_config, lambda _s: "BM25", _bm25,
    answer_part=lambda _s: {"bm25": {"k1": BM25_K1, "b": BM25_B, "k": FIRST_STAGE_DEPTH}}, answers=1, stored="bm25",
))  # fmt: skip
register_method(Method(
    "dense", "dense", _dense_config, lambda s: f"Dense ({_short(s.dense_id)})", _dense,
    answer_part=lambda s: {"dense": {"model": s.dense_id, "files": s.dense_files}}, needs=(DENSE_MODEL,),
    stored="dense",
))  # fmt: skip
register_method(Method(
    "hybrid", "RRF hybrid", _hybrid_config, lambda s: f"RRF hybrid (BM25 + {_short(s.dense_id)})", _hybrid,
    answer_part=lambda _s: {"rrf_k": RRF_K}, inputs=("bm25", "dense"), answers=0, stored="top_ranked",
))  # fmt: skip
register_method(Method(
    "rerank", "reranked hybrid", _rerank_config, lambda s: f"Reranked hybrid ({_short(s.cross_encoder_id)})",
    _rerank, inputs=("hybrid",), needs=(CROSS_ENCODER,), board=False,
))  # fmt: skip


def board_methods() -> list[str]:
    """The methods a board computes by default (`leaderboard --baselines`'s default)."""
    return [name for name, m in METHODS.items() if m.board]


def answer_retrieval(names: Iterable[str]) -> str:
    """The method the answer rows retrieve with among `names` (the lowest `answers` rank), else BM25."""
    usable = [METHODS[n] for n in names if n in METHODS and METHODS[n].answers is not None]
    return min(usable, key=lambda m: m.answers).name if usable else "bm25"
