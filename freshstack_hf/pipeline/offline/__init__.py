"""The offline heuristic LLM backend, room by job: every build stage finishes with no endpoint, deterministically.

`backend.OfflineBackend` answers the build's `Backend` protocol; `writing` makes nuggets, sub-questions and
closed-book answers from the question and its accepted answer; `support` scores (nugget, document) pairs by term
overlap and MiniLM cosine; `judge_rule` holds the decision rule calibrated on real released judgments and the
agreement measured there, which the card prints. None of this is an LLM's judgment, which is why the manifest
and card name the backend `offline-heuristic`.
"""
