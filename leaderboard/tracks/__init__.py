"""The leaderboard's tracks, one folder each: `retrieval` (runs, models, baselines, the Leaderboard table and its
tabs), `reranking` (reranked runs and CrossEncoders scored on the fixed candidates, the Reranking tab) and `answers`
(RAG answers scored against the nuggets, the Answers tab).

A track holds its submissions, the worker's jobs for it, its tables and tabs, and its baselines. It plugs in
where the leaderboard lists what tracks provide: the kinds of systems the store accepts (`leaderboard.store.schema`),
the worker's job kinds (`leaderboard.worker.jobs`) and the page's tabs (`leaderboard.page.tabs`). Each track's
`__init__` declares only names (kinds, environment variables) and imports nothing, so the shared modules can read them.
"""
