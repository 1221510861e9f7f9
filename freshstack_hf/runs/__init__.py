"""Runs: the one run type (`Run`, with conversions from ranked lists, id lists and fused results) and run files
(read and write TREC 6-column and JSON runs, check them strictly or leniently).

Rooms: `run` (the type), `parse` (the line reader of TREC and JSON files), `columns` (plain TREC files read by
columns, and the corpus' ids as one column), `check` (`load_run`: a file read and checked against a topic) and
`write` (TREC and JSON out).

from freshstack_hf.runs import from_ranked, top_docs
run = from_ranked({"q1": [("doc-a", 3.2), ("doc-b", 1.0)]})   # {"q1": {"doc-a": 3.2, "doc-b": 1.0}}

from freshstack_hf.runs import load_run, write_run

loaded = load_run("bm25.trec", query_ids=topic_query_ids, doc_ids=corpus_ids)   # lenient
loaded.run, loaded.warnings
load_run("bm25.trec", query_ids=..., doc_ids=..., strict=True)                   # leaderboard
"""

from freshstack_hf.runs.check import DEFAULT_MAX_DEPTH, LoadedRun, check_entries, check_run, load_run
from freshstack_hf.runs.columns import IdColumn
from freshstack_hf.runs.parse import Entry, RunEntry, detect_format, parse_json, parse_trec, read_entries
from freshstack_hf.runs.run import RankedList, Ranking, Run, cut, from_ids, from_ranked, top_docs
from freshstack_hf.runs.write import trec_lines, write_run

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "Entry",
    "IdColumn",
    "LoadedRun",
    "RankedList",
    "Ranking",
    "Run",
    "RunEntry",
    "check_entries",
    "check_run",
    "cut",
    "detect_format",
    "from_ids",
    "from_ranked",
    "load_run",
    "parse_json",
    "parse_trec",
    "read_entries",
    "top_docs",
    "trec_lines",
    "write_run",
]
