"""The answers track (RAG): generated answers scored against the nuggets, by citation at once and by a judge
later; the Answers tab, and the extractive and LLM answer baselines.

Declares the kind of system this track stores and the kinds of jobs it queues (they run no submitted code, they
only send text to the operator's endpoint, `leaderboard.worker.judge_endpoint`; none is a side job: each one's
state shows on its system's row); imports nothing.
"""

SYSTEM_KIND = "answers"
SYSTEM_KINDS = (SYSTEM_KIND,)
MEASURED_KINDS: tuple[str, ...] = ()  # no efficiency is measured: answers are scored as uploaded or generated
ANSWERS_BLOB = "answers"  # role and media of the checked answers file (TREC RAG JSONL) kept with its system
JUDGE_JOB_KIND = "answers_judge"  # All/Vital of stored answers, judged at the endpoint the app named
GENERATE_JOB_KIND = "answers_generate"  # the LLM answer baseline: generated, then scored and judged
BASELINE_JOB_KIND = "answers_baseline"  # the extractive answer baseline: retrieved, written, scored by citation
SIDE_JOB_KINDS: tuple[str, ...] = ()
