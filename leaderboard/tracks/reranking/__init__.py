"""The reranking track: reranked runs and sentence-transformers CrossEncoders scored on the fixed hybrid candidates
(`T-top_ranked`), as MTEB's `FreshStackReranking` does; limited to each query's candidates, so never ranked beside
full retrieval rows, and shown in the Reranking tab only.

Its rooms: `rerank_submit` (a reranked run checked against the candidates and scored at once; a CrossEncoder vetted
and queued), `rerank_job` (the worker's reranker job), `rerank_table` (the reranking table with its first-stage
reference line) and `rerank_tab` (the Reranking tab and its two submit forms). It shares the retrieval track's run
and model submission, cutoffs and table columns.

Declares the kinds of systems this track stores and the kind of job it queues (the store reads them through
`leaderboard.store.schema`, the worker through `leaderboard.worker.jobs`); imports nothing.
"""

RERANKED_RUN_KIND = "reranked_run"  # an uploaded reranked run, scored from its file
RERANKER_KIND = "reranker"  # a submitted CrossEncoder, run by a worker
SYSTEM_KINDS = (RERANKED_RUN_KIND, RERANKER_KIND)
# Rows scored from an uploaded file: never run again (re-scored from the archive), never scored live.
UPLOADED_KINDS = (RERANKED_RUN_KIND,)
# Rows whose results record what a worker measured for the board's efficiency cells: none of this track's.
MEASURED_KINDS: tuple[str, ...] = ()
RERANK_JOB_KIND = "reranker"  # a submitted CrossEncoder, reranking the candidates in a worker
SIDE_JOB_KINDS: tuple[str, ...] = ()
# Systems whose job names a Hub model at the commit the board pinned (`leaderboard.model_pages`).
HUB_MODEL_KINDS = (RERANKER_KIND,)
