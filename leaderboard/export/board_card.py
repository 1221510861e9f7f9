"""The dataset card of a board export (`README.md`): the YAML `configs:` and sizes `datasets` reads, then what a
reader needs: whether it is a backup or the public results, the row counts, what each config holds and its
columns, the measures and how to load them. Written anew with every export, never edited in place. Its text is
`leaderboard/templates/board_card*.md`; this module computes the counts, sizes and tables it shows.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from freshstack_hf.answers.measures import BY_ID
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import parse_measure
from freshstack_hf.repo.board_folder import BOARD_FILE, SPLIT, data_path
from freshstack_hf.templates import load_template, snippet
from leaderboard.export.board_format import CONFIGS, REDACTED


def measure_label(measure: str) -> tuple[str, str]:
    """(pretty name, description) of a stored measure id, from the library's one table of each kind of measure: a
    retrieval measure's id as the library spells it, an answer measure's prefixed by its track
    (`answers:citation_recall`)."""
    track, prefixed, answer_measure = measure.partition(":")
    if prefixed and answer_measure in BY_ID:
        found = BY_ID[answer_measure]
        return f"{found.name} ({track})", found.description
    try:
        parsed = parse_measure(measure)
    except FreshStackError:
        return measure, ""
    return parsed.name, parsed.description


def render_card(board: dict[str, Any], sizes: dict[str, int], measures: Counter[str], exported_at: datetime) -> str:
    """The dataset card (`leaderboard/templates/board_card.md`): `configs:` of every config with rows, their sizes
    (`datasets` keys its cache of a local folder on them), then the mode, counts, what each config holds, the
    measures and how to load it."""
    import yaml

    counts = {name: entry["rows"] for name, entry in board["configs"].items()}
    empty = ", ".join(f"`{c.name}`" for c in CONFIGS if not counts[c.name])
    mode = "public" if board["public"] else "backup"
    title = "FreshStack leaderboard" + (" results" if board["public"] else " backup")
    return load_template("board_card.md", "leaderboard").substitute(
        front=yaml.safe_dump(
            _front_matter(title, sizes, counts), sort_keys=False, allow_unicode=True, width=1000
        ).rstrip(),
        title=title,
        when=exported_at.strftime("%Y-%m-%d %H:%M UTC"),
        written_by=board["written_by"],
        store_schema=board["store_schema"],
        format_version=board["format_version"],
        board_file=BOARD_FILE,
        mode=snippet(f"board_card_{mode}.md", "leaderboard", redacted=REDACTED, left_out=left_out(board)),
        config_rows="\n".join(f"| `{c.name}` | {counts[c.name]:,} | {c.holds} |" for c in CONFIGS),
        empty=f"\n\n{snippet('board_card_empty.md', 'leaderboard', configs=empty)}" if empty else "",
        columns="\n".join(f"- `{c.name}`: {', '.join(f'`{f.name}` ({f.type})' for f in c.schema)}" for c in CONFIGS),
        measure_rows=_measure_rows(measures),
    )


def left_out(board: dict[str, Any]) -> str:
    """How many systems a public export left out and why, never which (`board.json`'s `left_out`)."""
    n = int(board.get("left_out", 0))
    if n == 0:
        return "No system is hidden by moderation or deleted, so none is left out."
    if n == 1:
        return (
            "1 system hidden by moderation or deleted is left out, with its results, per-query scores, runs, jobs, "
            "blobs and the audit rows that name it."
        )
    return (
        f"{n:,} systems hidden by moderation or deleted are left out, with their results, per-query scores, runs, "
        "jobs, blobs and the audit rows that name them."
    )


def _front_matter(title: str, sizes: dict[str, int], counts: dict[str, int]) -> dict[str, Any]:
    """The YAML `datasets` reads: the configs with rows (an empty parquet file cannot be loaded) and their sizes."""
    filled = [c for c in CONFIGS if counts[c.name]]
    return {
        "pretty_name": title,
        "tags": ["freshstack", "leaderboard", "retrieval", "rag"],
        "dataset_info": [
            {
                "config_name": c.name,
                "splits": [{"name": SPLIT, "num_bytes": sizes[c.name], "num_examples": counts[c.name]}],
                "download_size": sizes[c.name],
                "dataset_size": sizes[c.name],
            }
            for c in filled
        ],
        "configs": [
            {"config_name": c.name, "data_files": [{"split": SPLIT, "path": data_path(c.name)}]} for c in filled
        ],
    }


def _measure_rows(measures: Counter[str]) -> str:
    rows = []
    for measure in sorted(measures):
        name, description = measure_label(measure)
        rows.append(f"| `{measure}` | {name} | {measures[measure]:,} | {description} |")
    return "\n".join(rows or ["| (none yet) | | 0 | |"])
