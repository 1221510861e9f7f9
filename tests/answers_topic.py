"""A tiny hand-made topic and two answer files whose citation and nugget scores are worked out by hand.

Topic `handmade` (nuggets graded vital/okay; `101_*` about queue workers, `102_*` about the cache):

    nugget                                                      grade   judged docs (1 = supports)
    101_0 Run php artisan queue:work to process jobs            vital   d1=1, d2=0
    101_1 Set QUEUE_CONNECTION to redis in the env file         vital   d2=1, d3=0
    101_2 Use supervisor to keep the worker running             okay    d4=1
    102_0 Call cache clear with php artisan cache:clear         okay    d5=1, d6=0
    102_1 Delete the bootstrap cache folder                     okay    d5=1
    query 103 has no nugget (not scored); d7 and d8 are never judged.

Answers A (TREC RAG JSONL): 101 cites d1, d3, d7 (d4 is listed in references but never cited); 102 cites d5, d6;
103 cites d8. Answers B (JSON): 101 cites d2, d4; 102 unanswered.
"""

from __future__ import annotations

import json
from pathlib import Path

from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.topic import Topic

D = {i: f"docs/queues.md_{i * 100}_{i * 100 + 99}" for i in range(1, 9)}

NUGGETS = [
    ("101_0", "Run php artisan queue:work to process jobs", "vital"),
    ("101_1", "Set QUEUE_CONNECTION to redis in the env file", "vital"),
    ("101_2", "Use supervisor to keep the worker running", "okay"),
    ("102_0", "Call cache clear with php artisan cache:clear", "okay"),
    ("102_1", "Delete the bootstrap cache folder", "okay"),
]
JUDGED = [("101_0", 1, 1), ("101_0", 2, 0), ("101_1", 2, 1), ("101_1", 3, 0), ("101_2", 4, 1)]
JUDGED += [("102_0", 5, 1), ("102_0", 6, 0), ("102_1", 5, 1)]

A_101 = ["Run php artisan queue:work to process jobs from the queue.", "Point the env file at redis.", "Done."]
A_102 = "Clear the cache with php artisan cache:clear and then call it a day."


def handmade_topic(name: str = "handmade") -> Topic:
    queries = [
        Query("101", "Laravel jobs never run", "My queued jobs stay in the table. How do I run them?"),
        Query("102", "Stale config after deploy", "Old settings are still used after changing them."),
        Query("103", "Unrelated question", "Nothing was judged for this one."),
    ]
    nuggets = [Nugget(nid, nid.split("_")[0], text, grade) for nid, text, grade in NUGGETS]
    docs = [Doc(doc_id, f"documentation chunk number {i} about laravel") for i, doc_id in D.items()]
    judgments = [NuggetJudgment(nid.split("_")[0], nid, D[d], rel) for nid, d, rel in JUDGED]
    return Topic(name, queries=queries, nuggets=nuggets, docs=docs, judgments=judgments)


def answers_a() -> str:
    """TREC RAG 2024 JSONL, one line per query."""
    lines = [
        {
            "run_id": "extractive-a",
            "topic_id": "101",
            "references": [D[1], D[3], D[7], D[4]],
            "answer": [
                {"text": A_101[0], "citations": [0]},
                {"text": A_101[1], "citations": [1, 0]},
                {"text": A_101[2], "citations": [2]},
            ],
        },
        {
            "run_id": "extractive-a",
            "topic_id": "102",
            "references": [D[5], D[6]],
            "answer": [{"text": A_102, "citations": [0, 1]}],
        },
        {
            "run_id": "extractive-a",
            "topic_id": "103",
            "references": [D[8]],
            "answer": [{"text": "No idea.", "citations": [0]}],
        },
    ]
    return "".join(json.dumps(line) + "\n" for line in lines)


def answers_b() -> str:
    """The JSON form {query_id: {text, citations}}."""
    return json.dumps({"101": {"text": "Use redis and supervisor.", "citations": [D[2], D[4]]}}, indent=2) + "\n"


def write_repo(root: Path) -> Path:
    from freshstack_hf.repo.writer import write_topics

    return write_topics(root / "freshstack", [handmade_topic()], source={"kind": "records"})
