"""The reranking worker job: a submitted sentence-transformers CrossEncoder, vetted, reranking each query's fixed
hybrid candidates (`T-top_ranked`) exactly as MTEB's `FreshStackReranking` task does, then scored.

A reranker row must carry the numbers `mteb run -t FreshStackReranking -m MODEL` reports for the same model and
dataset, to the last digit. The evaluator breaks ties by the run alone (score, then doc id), so that holds as
soon as every (query, doc) pair gets the very float MTEB gets; this job feeds the model what MTEB feeds it
(mteb 2.x: the task's `RetrievalSplitData` through `SearchCrossEncoderWrapper` and `CrossEncoderWrapper`):

* queries: the topic's queries in their order, those with candidates (the task leaves the others out) and with
  judgments (mteb drops a query whose qrels are empty before searching);
* pairs: query after query, each query's candidates in their `T-top_ranked` order, all of them (no top-k cut);
* texts: the query's text as it is (title and body, `T-queries`); the document's text stripped of surrounding
  whitespace (mteb's corpus loader strips it; these documents have no title to prepend); no prefixes;
* calls: one `CrossEncoder.predict` per dataloader batch of consecutive pairs (32, mteb's default batch size),
  so each batch is sorted and padded exactly as MTEB's is; the model's own activation; float32 weights, which
  MTEB keeps (its float32 scoring head is then the same computation).

The run behind the row is archived by the worker, as for every row. Payload (JSON, written by `rerank_submit`):
{"model": "org/name" or a path, "revision", "topics", "batch_size", "dataset", "dataset_revision"}. Measures are
the leaderboard's (`MEASURES`), scored by `leaderboard.scoring` like every row.

The job opens as every model job does (`worker.model_opening`). Once the CrossEncoder is loaded and the public
dataset opened, the job seals its process (`worker.sandbox.seal_job`) before it reranks anything.

Live scores (`leaderboard.live_scores`): when the worker handed the job a folder of its snapshot's embargoed questions
(`worker.live_pass`: their texts, the documents and their candidates, `T-top_ranked` of the private revision, which
`build` makes as it makes the public ones; never a judgment) and the seal held, the same model reranks those
candidates in the same way, and the job returns the ranking for the worker to score. The folder holds only the
questions a score counts (those with judgments), so every one with candidates is reranked; a private revision
without candidate lists (one written before `build` made them) records "not measured" with that reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.defaults import RESAMPLES
from freshstack_hf.repo.dataset import Dataset
from freshstack_hf.retrieval.models import directory_fingerprint
from freshstack_hf.retrieval.rerank import load_cross_encoder, rerank
from freshstack_hf.runs import Run, from_ranked
from leaderboard.live_scores import rank_embargoed, require_candidates
from leaderboard.scoring import score_for_store
from leaderboard.store.records import ResultMeta
from leaderboard.tracks.reranking import RERANK_JOB_KIND
from leaderboard.tracks.retrieval.submissions.cutoff import card_cutoff
from leaderboard.worker.job_contract import LOADS_MODELS, JobKind, JobOptions, JobOutput
from leaderboard.worker.model_opening import open_model_job
from leaderboard.worker.sandbox import seal_job
from leaderboard.worker.vetting import check_cross_encoder_dir

RERANK_BATCH_SIZE = 32  # pairs per model call: MTEB's default batch (`mteb run` without --batch-size)

Inputs = tuple[dict[str, str], dict[str, list[str]], dict[str, str]]  # query texts, candidate lists, doc texts


def reranking_inputs(data: Dataset, topic_name: str, *, judged: bool = True) -> Inputs:
    """(query id -> text, query id -> candidates, doc id -> text) of one topic, in MTEB's order and form (see the
    module docstring): the dicts' order is the order the pairs go to the model. `judged=False` keeps every query
    with candidates: a live job's folder holds no judgment, only the questions that have some."""
    topic = data.topic(topic_name)
    candidates, qrels = data.candidates(topic_name), topic.qrels
    order = [q for q in topic.queries if candidates.get(q.query_id) and (not judged or qrels.get(q.query_id))]
    queries = {q.query_id: q.text for q in order}
    lists = {q.query_id: list(candidates[q.query_id]) for q in order}
    wanted = {doc_id for ids in lists.values() for doc_id in ids}
    texts = {d.doc_id: d.text.strip() for d in topic.docs if d.doc_id in wanted}
    return queries, lists, texts


def evaluate_reranker(payload: Mapping[str, Any], options: JobOptions) -> JobOutput:
    """Rerank every topic's candidates with the CrossEncoder as MTEB does, and score the reordered lists."""
    opened = open_model_job(payload, options, kind="reranker", needs="a CrossEncoder", vet=check_cross_encoder_dir)
    folder, params, data = opened.folder, opened.params, opened.data
    batch = int(payload.get("batch_size") or RERANK_BATCH_SIZE)
    model = load_cross_encoder(folder, device=options.device, precision="fp32")
    split = seal_job(opened.live_pass, read=[folder, data.folder])

    def rank(source: Dataset, name: str, judged: bool = True) -> tuple[Run, int]:
        queries, candidates, texts = reranking_inputs(source, name, judged=judged)
        ranked = rerank(
            model, queries, candidates, texts,
            top_k=None, batch_size=batch, pairs_per_call=batch, query_order=list(queries),
        )  # fmt: skip
        return from_ranked(ranked), sum(len(ids) for ids in candidates.values())

    def rank_live(handed: Dataset, name: str) -> Run:
        require_candidates(handed, name)
        return rank(handed, name, judged=False)[0]

    runs, pairs = {}, 0
    for name in data.topics:
        runs[name], count = rank(data, name)
        pairs += count
    resamples = int(payload.get("resamples", RESAMPLES))
    scored = score_for_store(data, runs, data.topics, by_topic=True, resamples=resamples)
    live_runs, live = rank_embargoed(split, data.topics, rank_live)
    meta = {
        "job": RERANK_JOB_KIND,
        "model": str(payload["model"]),
        "model_files": directory_fingerprint(folder)[:16],
        "parameters": params,
        "candidates": "top_ranked",
        "pairs": pairs,
        "batch_size": batch,
        "max_seq_length": getattr(model, "max_seq_length", None),
        "dtype": "float32",
        "dataset": data.source,
        "topics": data.topics,
        **scored.parameters,
    }
    meta["card_cutoff"] = card_cutoff(folder)
    if live is not None:  # why it reranked nothing; the worker writes the live record itself
        meta["live"] = live
    output = ResultMeta(data.revision, __version__, meta)
    return JobOutput(
        scored.results, output, size=params, runs=scored.archived, cutoff=meta["card_cutoff"], live_runs=live_runs
    )


# what the worker runs for reranking (`leaderboard.worker.jobs`); scored live when the worker reads the private split
JOB_KINDS = {RERANK_JOB_KIND: JobKind(evaluate_reranker, live=True, imports=LOADS_MODELS)}
