"""What the retrieval track accepts: run files, checked strictly and scored at once (`run_submit`), and
sentence-transformers models, checked at the door and queued for a worker (`model_submit`); and a system's cutoff
date, as a submitter types it or a model card gives it (`cutoff`). The reranking track's submitters build on these.
"""
