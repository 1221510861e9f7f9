"""The dataset card of a board export (`README.md`): the YAML `configs:` and sizes `datasets` reads, then what a
reader needs: whether it is a backup or the public results, the row counts, what each config holds and its
columns, the measures and how to load them. Written anew with every export, never edited in place.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

from freshstack_hf.answers.measures import BY_ID
from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics import parse_measure
from freshstack_hf.repo.board_folder import BOARD_FILE, SPLIT, data_path
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
    """The dataset card: `configs:` of every config with rows, their sizes (`datasets` keys its cache of a local
    folder on them), then the mode, counts, what each config holds, the measures and how to load it."""
    import yaml

    counts = {name: entry["rows"] for name, entry in board["configs"].items()}
    filled = [c for c in CONFIGS if counts[c.name]]
    front = {
        "pretty_name": "FreshStack leaderboard" + (" results" if board["public"] else " backup"),
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
    if board["public"]:
        mode = [
            "**Public results.** Identities that are IP addresses (`ip:...`, of anonymous submitters) read",
            f"`{REDACTED}`, blobs are listed by hash only (`data` is null), and a deleted system is only its",
            "tombstone (id, kind, content hash, moderation). This is not a backup: `freshstack-hf admin import`",
            "refuses it; make one with `freshstack-hf admin export DIR` (without `--public`).",
        ]
    else:
        mode = [
            "**Full backup.** Everything the store holds, ids included; restore it into an empty store with",
            "`freshstack-hf admin import DIR --store URL`. It names submitters as the store does (IP addresses of",
            "anonymous ones too): publish it privately, or export with `--public` for a public dataset.",
        ]
    when = exported_at.strftime("%Y-%m-%d %H:%M UTC")
    parts = [
        "---",
        yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000).rstrip(),
        "---",
        "",
        "# FreshStack leaderboard" + (" results" if board["public"] else " backup"),
        "",
        f"The store of a FreshStack leaderboard, exported {when} by freshstack-hf {board['written_by']}",
        f"(store schema {board['store_schema']}, export format {board['format_version']}; `{BOARD_FILE}` says the "
        "same, with the row count of every file).",
        "",
        *mode,
        "",
        "## Loading",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        'results = load_dataset("ORG/NAME", "results", split="train")  # or the local folder\'s path',
        'per_query = load_dataset("ORG/NAME", "per_query", split="train").to_pandas()',
        "```",
        "",
        "## Configs",
        "",
        "| config | rows | what it holds |",
        "|---|---:|---|",
    ]
    for c in CONFIGS:
        parts.append(f"| `{c.name}` | {counts[c.name]:,} | {c.holds} |")
    empty = [c.name for c in CONFIGS if not counts[c.name]]
    if empty:
        parts += [
            "",
            f"Without rows, and so not declared to `datasets` (which cannot load an empty parquet file): "
            f"{', '.join(f'`{n}`' for n in empty)}; the file is kept for the backup.",
        ]
    parts += ["", "Columns:", ""]
    for c in CONFIGS:
        columns = ", ".join(f"`{f.name}` ({f.type})" for f in c.schema)
        parts.append(f"- `{c.name}`: {columns}")
    parts += ["", "## Measures", "", "| measure | name | result rows | what it measures |", "|---|---|---:|---|"]
    for measure in sorted(measures):
        name, description = measure_label(measure)
        parts.append(f"| `{measure}` | {name} | {measures[measure]:,} | {description} |")
    if not measures:
        parts.append("| (none yet) | | 0 | |")
    parts += [
        "",
        "Times are UTC. Averages over topics are not stored: the board shows a system's average, the plain mean "
        "of its topics, only where it is scored on every topic of the dataset.",
        "",
    ]
    return "\n".join(parts)
