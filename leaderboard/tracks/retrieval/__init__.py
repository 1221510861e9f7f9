"""The retrieval track: ranked runs and sentence-transformers models scored against the nuggets (α-nDCG, Coverage,
Recall), the Leaderboard table with its Detail, Plots and Submit tabs, the published figures' Reference tab and the
baseline rows (BM25, dense, RRF hybrid, reranked). Reranked runs and CrossEncoders are a track of their own
(`tracks.reranking`), which shares this track's submission and table code.

Its rooms, by layer: `submissions` (run files and models accepted), `jobs` (the worker's jobs and what queues them),
`tables` (the Leaderboard and After-cutoff tables as plain pandas), `views` (what the other tabs show, as plain
functions) and `tabs` (the Gradio tabs and what they share on one page, which wire widgets to the rest). The tabs
import the rest and the rest no tab, but for the Hub reports' view, which reads the page's shared snapshot list
(`tabs.retrieval_page`).

Declares the kinds of systems this track stores and the kinds of jobs it queues, and which of those are side jobs
(the store reads both through `leaderboard.store.schema`); imports nothing.
"""

SYSTEM_KINDS = ("baseline", "run", "model")  # the project's baselines, uploaded runs, submitted models
# Rows scored from an uploaded file: never run again (re-scored from the archive), never scored live.
UPLOADED_KINDS = ("run",)
# Rows whose results record what a worker or a corpus encoding measured (time, memory, index size): the only ones
# whose efficiency cells the board shows (a run file's parameters never put figures on the board).
MEASURED_KINDS = ("model", "baseline")
MODEL_JOB_KIND = "model"  # a submitted model, retrieved and scored by a worker
BASELINE_JOB_KIND = "baseline"  # a project baseline row (BM25, dense, hybrid, reranked), computed and scored
RESCORE_JOB_KIND = "rescore"  # a stored run's archived ranking scored as it is on a newer dataset revision
FILL_JOB_KIND = "fill"  # a stored system's holes judged into a new qrels revision (`leaderboard.fills`)
# Side jobs leave files beside the dataset, not scores: their state never shows on their system's row.
SIDE_JOB_KINDS = (FILL_JOB_KIND,)
# Systems whose job names a Hub model (`model`) at the commit the board pinned (`revision`): the rows whose verified
# results the board may propose to the model's own page (`leaderboard.model_pages`).
HUB_MODEL_KINDS = ("model",)
# The model tracks (`systems.track`) scored on each query's candidates (`T-top_ranked`) rather than the whole corpus,
# as the reranking track's systems are: their results are the reranking tasks'.
CANDIDATE_TRACKS = ("nano",)
