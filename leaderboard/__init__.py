"""The FreshStack leaderboard: shared infrastructure at the top level, one folder per track under `tracks/`.

Shared: the store (`store`, `queue`, `schema`), the evaluation worker (`worker`), the archive of what lies behind
rows (`archive`), scoring through the library (`scoring`), model vetting, text sanitising, submissions' common
checks (`submission`), table display (`display`), the page (`app`) and the two commands (`cli_app`,
`cli_worker`). Tracks: `tracks.retrieval` (runs, models, baselines, the Leaderboard table) and `tracks.answers`
(the RAG track). Nothing is imported here; the library (`freshstack_hf`) never imports this package.
"""
