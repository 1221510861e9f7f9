"""The retrieval track: ranked runs and sentence-transformers models scored against the nuggets (α-nDCG, Coverage,
Recall), the Leaderboard table with its Detail, Plots and Submit tabs, the published figures' Reference tab and the
baseline rows (BM25, dense, RRF hybrid, reranked).

Declares the kinds of systems this track stores and the job kind its submissions queue; imports nothing.
"""

SYSTEM_KINDS = ("baseline", "run", "model")  # the project's baselines, submitted run files, submitted models
MODEL_JOB_KIND = "model"  # a submitted model, retrieved and scored by a worker
FILL_JOB_KIND = "fill"  # a stored system's holes judged into a new qrels revision (a side job: no scores)
BASELINE_JOB_KIND = "baseline"  # a project baseline row (BM25, dense, hybrid, reranked), computed and scored
