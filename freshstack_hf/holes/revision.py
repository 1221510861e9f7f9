"""The filled qrels revision: a new sibling folder `NAME@REV`, made from the base revision, never rewriting it.

Only the query side of the filled topic changes: the official config `T` (which embeds each nugget's relevant and
non-relevant ids), `T-qrels` and `T-nugget-qrels` are written again from one `Topic`, so the three agree exactly as
a build's do; the corpus, queries, nuggets and candidate configs stay hard links to the base's files. The
manifest keeps every fill that led to the revision (`fills`), each with its base, judge, date and asking system.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.records import NuggetJudgment
from freshstack_hf.repo.revisions import check_revision, list_revisions, revision_folder, revision_of
from freshstack_hf.repo.tables import nugget_qrels_table, official_queries_table, qrels_table
from freshstack_hf.repo.writer import derive
from freshstack_hf.split_stats import stats_to_dict, topic_stats
from freshstack_hf.topic import Topic, canonical_order

FILL_SUFFIX = re.compile(r"\.fill(\d+)$")


def base_name(folder: str | Path) -> str:
    """The revision a folder holds, `main` for the working repo (the Hub's name for it)."""
    return revision_of(folder) or "main"


def next_fill_name(folder: str | Path) -> str:
    """`<base>.fillN` with the smallest N above every fill of that base written so far (`main.fill1`, then
    `main.fill2`; a fill of `main.fill1` is `main.fill2` too: fills of one base share one counter)."""

    stem = FILL_SUFFIX.sub("", base_name(folder))
    taken = [int(m.group(1)) for r in list_revisions(folder) if (m := FILL_SUFFIX.search(r)) and r.startswith(stem)]
    return f"{stem}.fill{max(taken, default=0) + 1}"


def target_folder(folder: str | Path, name: str) -> Path:
    """Where revision `name` of `folder`'s repo goes; refused when it exists (a revision is written once)."""
    check_revision(name, "--name")
    target = revision_folder(folder, name)
    if target.exists():
        raise FreshStackError(
            f"--name: revision {name!r} exists already ({target}); a revision is never rewritten, choose another name"
        )
    return target


def filled_topic(topic: Topic, added: list[NuggetJudgment]) -> Topic:
    """`topic` with `added` judgments, the records in the order a reader rebuilds them from the official config
    (relevant ids, then non-relevant, per nugget), so every derived config matches what is read back."""
    merged = Topic(topic.name, queries=topic.queries, nuggets=topic.nuggets, docs=topic.docs,
                   judgments=[*topic.judgments, *added])  # fmt: skip
    return canonical_order(merged)


def write_filled_revision(
    base: str | Path, target: str | Path, topic: Topic, added: list[NuggetJudgment], provenance: dict[str, Any]
) -> Path:
    """Write `target` = `base` with `added` judgments in `topic`, atomically; `base` stays byte-identical."""
    new = filled_topic(topic, added)
    with derive(base, target) as st:
        entry = st.manifest["topics"].get(topic.name)
        if entry is None:
            raise FreshStackError(f"{base}: topic {topic.name!r} is not in its manifest; rebuild or re-import it")
        st.write_table(topic.name, "queries_official", official_queries_table(new))
        st.write_table(topic.name, "qrels", qrels_table(new))
        st.write_table(topic.name, "nugget_qrels", nugget_qrels_table(new))
        entry["stats"] = stats_to_dict(topic_stats(new))
        st.manifest.setdefault("fills", []).append(provenance)
    return Path(target)
