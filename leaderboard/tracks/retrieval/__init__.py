"""The retrieval track: ranked runs and sentence-transformers models scored against the nuggets (α-nDCG, Coverage,
Recall), the Leaderboard table with its Detail, Plots and Submit tabs, the published figures' Reference tab and the
baseline rows (BM25, dense, RRF hybrid, reranked); and its reranking view: reranked runs and CrossEncoder models
scored on the fixed hybrid candidates (`T-top_ranked`), in the Reranking tab only.

Declares the kinds of systems this track stores and the kinds of jobs it queues, and which of those are side jobs
(the store reads both through `leaderboard.store.schema`); imports nothing.
"""

# Rows of the Reranking tab: limited to each query's candidates, so never ranked beside full retrieval rows.
RERANK_KINDS = ("reranked_run", "reranker")  # an uploaded reranked run, a submitted CrossEncoder
SYSTEM_KINDS = ("baseline", "run", "model", *RERANK_KINDS)  # also: the project's baselines, runs, models
# Rows scored from an uploaded file: never run again (re-scored from the archive), never scored live.
UPLOADED_KINDS = ("run", "reranked_run")
# Rows whose results record what a worker or a corpus encoding measured (time, memory, index size): the only ones
# whose efficiency cells the board shows (a run file's parameters never put figures on the board).
MEASURED_KINDS = ("model", "baseline")
MODEL_JOB_KIND = "model"  # a submitted model, retrieved and scored by a worker
RERANK_JOB_KIND = "reranker"  # a submitted CrossEncoder, reranking the candidates in a worker
BASELINE_JOB_KIND = "baseline"  # a project baseline row (BM25, dense, hybrid, reranked), computed and scored
RESCORE_JOB_KIND = "rescore"  # a stored run's archived ranking scored as it is on a newer dataset revision
FILL_JOB_KIND = "fill"  # a stored system's holes judged into a new qrels revision (`leaderboard.fills`)
# Side jobs leave files beside the dataset, not scores: their state never shows on their system's row.
SIDE_JOB_KINDS = (FILL_JOB_KIND,)
# Systems whose job names a Hub model (`model`) at the commit the board pinned (`revision`): the rows whose verified
# results the board may propose to the model's own page (`leaderboard.model_pages`).
HUB_MODEL_KINDS = ("model", "reranker")
# What is scored on each query's candidates (`T-top_ranked`) rather than the whole corpus: a reranker, and a model
# submitted on one of these tracks (`systems.track`); their results are the reranking tasks'.
CANDIDATE_TRACKS = ("nano",)
