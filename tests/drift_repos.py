"""Two small snapshots of one topic, written by the project's writer, whose differences the tests list themselves.

`CHANGES` is the test's own list: for every judged document of the old snapshot, its fate on the new one and its
new id. The new corpus is *derived* from that list (kept, edited, shifted within its file, moved to another file or
repository, removed), so the drift report must find exactly it. Support follows the text: a judged document whose
text survived keeps its support under its new id; an edited or deleted one loses it.

Baselines are candidate lists designed to swap places: BM25 is perfect on the old snapshot and finds nothing on the
new one, dense the other way round, the hybrid in between on both; so the ranks change and tau is negative.
"""

from __future__ import annotations

from pathlib import Path

from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.repo.tables import candidates_table
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.topic import Topic

TOPIC = "drifty"
OLD_COMMITS = {"lib": "a" * 40, "docs": "b" * 40}
NEW_COMMITS = {"lib": "c" * 40, "manual": "d" * 40}

# old id -> (fate, new id or None); every judged document of the old snapshot is here.
CHANGES: dict[str, tuple[str, str | None]] = {
    "lib/a.py_0_50": ("unchanged", "lib/a.py_0_50"),
    "lib/e.py_0_50": ("unchanged", "lib/e.py_0_50"),
    "lib/e.py_50_100": ("unchanged", "lib/e.py_50_100"),
    "lib/a.py_50_100": ("changed", "lib/a.py_50_100"),  # same id, text edited
    "lib/b.py_0_50": ("changed", "lib/b.py_7_57"),  # same text, same file, offsets shifted
    "lib/a.py_100_150": ("changed", None),  # its file is still there, its text is not
    "lib/c.py_0_50": ("moved", "lib/src/c.py_0_50"),  # same repo, other path
    "docs/guide.md_0_50": ("moved", "manual/guide.md_0_50"),  # other repository
    "lib/d.py_0_50": ("deleted", None),  # file gone
    "docs/faq.md_0_50": ("deleted", None),  # repository gone
}
DISTRACTORS = ["lib/z.py_0_50", "lib/z.py_50_100", "lib/y.py_0_50"]

# nugget -> the old documents supporting it (every other judged doc of the query is judged 0 for it)
SUPPORT = {
    "q1_0": ["lib/a.py_0_50", "lib/a.py_50_100"],
    "q1_1": ["lib/b.py_0_50"],
    "q2_0": ["lib/c.py_0_50"],
    "q2_1": ["docs/guide.md_0_50"],
    "q3_0": ["lib/d.py_0_50"],
    "q3_1": ["docs/faq.md_0_50"],
    "q4_0": ["lib/a.py_100_150"],
    "q4_1": ["lib/e.py_0_50"],
}
JUDGED_ZERO = {"q4": ["lib/e.py_50_100"]}
QUERIES = ["q1", "q2", "q3", "q4"]
# On the new snapshot: q1, q2 fully supported, q3 not at all, q4 half (its edited document lost its support).
EXPECTED_SUPPORT = {"q1": 2, "q2": 2, "q3": 0, "q4": 1}


def _file(doc_id: str) -> tuple[str, str]:
    stem = doc_id.rsplit("_", 2)[0]
    repo, _, path = stem.partition("/")
    return repo, path


def _doc(doc_id: str, text: str, commits: dict[str, str]) -> Doc:
    repo, path = _file(doc_id)
    return Doc(doc_id=doc_id, text=text, repo=repo, path=path, commit=commits[repo])


def _text(doc_id: str) -> str:
    return f"content of {doc_id} with words about the topic"


def old_docs() -> list[Doc]:
    return [_doc(d, _text(d), OLD_COMMITS) for d in [*CHANGES, *DISTRACTORS]]


def new_docs() -> list[Doc]:
    docs = []
    for old_id, (fate, new_id) in CHANGES.items():
        if fate in ("unchanged", "moved") or (fate == "changed" and new_id and new_id != old_id):
            docs.append(_doc(new_id, _text(old_id), NEW_COMMITS))  # the old text under its (maybe new) id
        elif fate == "changed" and new_id == old_id:
            docs.append(_doc(old_id, _text(old_id) + " (edited)", NEW_COMMITS))
        elif fate == "changed":
            repo, path = _file(old_id)
            docs.append(_doc(f"{repo}/{path}_100_170", "a rewritten section of the file", NEW_COMMITS))
    docs += [_doc(d, _text(d), NEW_COMMITS) for d in DISTRACTORS]
    return docs


def _survivor(old_id: str) -> str | None:
    """The new id under which an old document's text (and so its support) survives."""
    fate, new_id = CHANGES[old_id]
    if fate in ("unchanged", "moved") or (fate == "changed" and new_id not in (None, old_id)):
        return new_id
    return None


def _topic(queries: list[str], support: dict[str, list[str]], docs: list[Doc], zero: dict[str, list[str]]) -> Topic:
    qs = [Query(q, f"question {q}", f"how do I do {q}?", answer_id=f"a{q}", answer_text=f"do {q}") for q in queries]
    nuggets = [Nugget(f"{q}_{k}", q, f"fact {k} of {q}") for q in queries for k in range(2)]
    judgments = []
    for q in queries:
        judged = sorted({d for k in range(2) for d in support.get(f"{q}_{k}", [])} | set(zero.get(q, [])))
        judged = judged or ["lib/z.py_0_50"]  # a question whose documents all went is still judged (all 0s)
        for k in range(2):
            nid = f"{q}_{k}"
            judgments += [NuggetJudgment(q, nid, d, int(d in support.get(nid, []))) for d in judged]
    return Topic(TOPIC, queries=qs, nuggets=nuggets, docs=docs, judgments=judgments)


def old_topic() -> Topic:
    return _topic(QUERIES, SUPPORT, old_docs(), JUDGED_ZERO)


def new_topic() -> Topic:
    support = {n: [s for s in (_survivor(d) for d in docs) if s] for n, docs in SUPPORT.items()}
    support["q5_0"] = ["lib/z.py_0_50"]  # a question only the new snapshot has
    support["q5_1"] = ["lib/y.py_0_50"]
    zero = {"q4": ["lib/e.py_50_100"]}
    return _topic([*QUERIES, "q5"], support, new_docs(), zero)


def _relevant(topic: Topic) -> dict[str, list[str]]:
    return {q: sorted(d for d, v in docs.items() if v > 0) for q, docs in topic.qrels.items()}


def _lists(topic: Topic, keep: float) -> dict[str, list[str]]:
    """Per query the first `keep` share of its relevant documents, then the distractors."""
    rel = _relevant(topic)
    out = {}
    for q in topic.query_ids:
        docs = rel.get(q, [])
        out[q] = docs[: round(len(docs) * keep)] + [d for d in DISTRACTORS if d not in docs]
    return out


def write_snapshot(folder: Path, topic: Topic, quality: dict[str, float], extra: dict | None = None) -> Path:
    """`topic` with its three candidate configs, each keeping `quality[stem]` of the relevant documents."""
    tables = {stem: candidates_table(_lists(topic, keep)) for stem, keep in quality.items()}
    write_topics(folder, [topic], extra_tables={TOPIC: tables}, extra_manifest={TOPIC: extra} if extra else None)
    return folder


OLD_QUALITY = {"bm25": 1.0, "dense": 0.5, "top_ranked": 0.0}
NEW_QUALITY = {"bm25": 0.0, "dense": 1.0, "top_ranked": 0.5}


def make_snapshots(root: Path, new_extra: dict | None = None) -> tuple[Path, Path]:
    """`root/freshstack@2024-10-31` and `root/freshstack@2025-10-31`, the old and the new snapshot."""
    old = write_snapshot(root / "freshstack@2024-10-31", old_topic(), OLD_QUALITY, {"snapshot": _snap("2024-10-31")})
    new_fields = {"snapshot": _snap("2025-10-31", NEW_COMMITS), **(new_extra or {})}
    new = write_snapshot(root / "freshstack@2025-10-31", new_topic(), NEW_QUALITY, new_fields)
    return old, new


def _snap(date: str, commits: dict[str, str] = OLD_COMMITS) -> dict:
    return {"date": date, "commits": dict(commits)}
