"""What the retrieval track accepts: run files, checked strictly and scored at once (`run_submit`), and
sentence-transformers models, checked at the door and queued for a worker (`model_submit`); what every model
submission shares, the reranking track's CrossEncoders included: the order of its checks and its queueing
(`model_submitter`) and where a model comes from (`model_source`: a folder under the model roots, a Hub id pinned
to its commit); and a system's cutoff date, as a submitter types it or a model card gives it (`cutoff`). The
reranking track's submitters build on these.
"""
