"""The FreshStack leaderboard: shared infrastructure at the top level, one folder per track under `tracks/`.

Shared: the store (`store`, `store_engine`, `queue`, `schema`, `kinds_migration`; the blobs behind rows: `blobs`,
`blob_store`, `ranking_blob`; opening a store and importing an older runs folder: `archive`; backups:
`store_backup`, `board_export`, `board_import`), the evaluation worker (`worker`, `job_process`) and its job-kind
registry (`jobs`, `job_contract`), what every baseline row shares (`baseline_key`; `holds`, test-only holds),
scoring through the library
(`scoring`), model vetting, text sanitising, submissions' common checks (`submission`), table display (`display`,
`store_frame`), the "Computing" line (`computing`), the page (`app` assembles the tabs listed in `tabs`, which share
a `page.Page`) and the two commands (`cli_app`, `cli_worker`). Tracks: `tracks.retrieval` (runs, models, baselines,
the Leaderboard, Detail, Plots, Submit and Reference tabs) and `tracks.answers` (the RAG track, the Answers tab).
Nothing is imported here; the library (`freshstack_hf`) never imports this package.
"""
