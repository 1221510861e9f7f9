"""Hole filling: judge the unjudged documents a system ranks, into a new qrels revision (issue 18).

Pooled judgments age: a new system that retrieves documents nobody judged is scored as if they were
irrelevant. `find_holes` lists a run's top-k documents no judgment of the query covers, `judge_holes` sends them
through the build's own judge (prompts, client, cache), and `fill_holes` writes the result as a NEW revision
folder (`NAME@REV`) with provenance, never touching the revision it started from, so every number published
from that one stays reproducible.

from freshstack_hf.holes import fill_holes
record = fill_holes("freshstack", "langchain", run, system="my-system", backend=backend)
record.after["judged@10"], record.revision_folder
"""

from freshstack_hf.holes.fill import FillRecord, fill_holes
from freshstack_hf.holes.find import Holes, find_holes
from freshstack_hf.holes.judge import JudgeSetup, judge_holes, judge_setup
from freshstack_hf.holes.revision import next_fill_name, write_filled_revision

__all__ = [
    "FillRecord",
    "Holes",
    "JudgeSetup",
    "fill_holes",
    "find_holes",
    "judge_holes",
    "judge_setup",
    "next_fill_name",
    "write_filled_revision",
]
