"""A board export folder: a leaderboard's store written as a dataset repo (`freshstack-hf admin export`).

The leaderboard writes it and reads it back (`leaderboard.export.board_export`), and `freshstack-hf publish` uploads it;
both check it here, in the library, because the library never imports the leaderboard. `board.json` says what
the folder is (this format and its version, whether it is a public export, the store schema it came from) and
lists every config's parquet file with its row count; the dataset card's `configs:` declares the same files, so
`load_dataset(DIR, CONFIG)` reads what the counts say. A config without rows keeps its file (its schema is part of
the backup) but is left out of the card's `configs:`: `datasets` cannot load a parquet file without rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.repo import layout

BOARD_FILE = "board.json"
FORMAT = "freshstack-hf board export"
FORMAT_VERSION = 3  # bump when a config, a column or a column's meaning changes; readers refuse newer ones
SPLIT = "train"  # the one split of every config
WRITTEN_BY = "a folder written by `freshstack-hf admin export DIR --store URL`"


def data_path(config: str) -> str:
    """Where config `config`'s parquet file lives inside the folder (POSIX, as the card and board.json name it)."""
    return f"{layout.DATA_DIR}/{config}.parquet"


def is_board_folder(folder: str | Path) -> bool:
    """Whether `folder` says it is a board export (it holds `board.json`); `read_board_folder` checks the rest."""
    return (Path(folder) / BOARD_FILE).is_file()


def card_configs(folder: Path) -> dict[str, list[str]] | None:
    """{config name: [data file paths]} of the card's YAML front matter, or None when there is no readable one."""
    import yaml

    try:
        text = (folder / layout.CARD).read_text(encoding="utf-8")
        if not text.startswith("---"):
            return None
        front = yaml.safe_load(text.split("---", 2)[1])
        return {
            c["config_name"]: [f["path"] for f in c.get("data_files", [])] for c in (front or {}).get("configs", [])
        }
    except (OSError, UnicodeDecodeError, yaml.YAMLError, IndexError, KeyError, TypeError, AttributeError):
        return None


def _board_json(folder: Path) -> dict[str, Any]:
    where = folder / BOARD_FILE
    again = "export the board again (freshstack-hf admin export DIR --force --store URL)"
    try:
        board = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise FreshStackError(f"{where} is not readable JSON ({exc}): {again}") from None
    if not isinstance(board, dict) or board.get("format") != FORMAT:
        raise FreshStackError(f'{where} does not describe a board export (no "format": {FORMAT!r}): {again}')
    version = board.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise FreshStackError(f"{where}: format_version {version!r} is not a positive integer: {again}")
    if version > FORMAT_VERSION:
        raise FreshStackError(
            f"{where}: written by a newer freshstack-hf (export format {version}; this release reads up to "
            f"{FORMAT_VERSION}). Upgrade freshstack-hf (pip install -U 'freshstack-hf[leaderboard]') to read it"
        )
    if not isinstance(board.get("configs"), dict) or not isinstance(board.get("public"), bool):
        raise FreshStackError(f'{where} lacks its "configs" or "public" entry: {again}')
    return board


def read_board_folder(folder: str | Path) -> dict[str, Any]:
    """`board.json` of the export at `folder`, refused unless every file it lists is there with the row count it
    says and the card declares the files with rows. Reads only parquet footers, so it is cheap on any size."""
    import pyarrow.parquet as pq

    root = Path(folder).expanduser()
    if not root.is_dir():
        raise FreshStackError(f"{folder}: no such folder; give {WRITTEN_BY}")
    if not is_board_folder(root):
        raise FreshStackError(f"{folder} is not a board export (it holds no {BOARD_FILE}); give {WRITTEN_BY}")
    board = _board_json(root)
    fix = "export the board again (freshstack-hf admin export DIR --force --store URL)"
    problems: list[Problem] = []
    declared = card_configs(root)
    if declared is None:
        problems.append(Problem(layout.CARD, "missing, or no YAML front matter declaring `configs:`", fix=fix))
    for name, entry in board["configs"].items():
        path, rows = (entry.get("path"), entry.get("rows")) if isinstance(entry, dict) else (None, None)
        if path != data_path(name) or not isinstance(rows, int) or rows < 0:
            problems.append(
                Problem(BOARD_FILE, f"config {name!r} has no path {data_path(name)} and row count", fix=fix)
            )
            continue
        try:
            found = pq.read_metadata(root / path).num_rows
        except FileNotFoundError:
            problems.append(Problem(path, f"missing (config {name!r})", fix=fix))
            continue
        except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... on a damaged file
            problems.append(Problem(path, f"not a readable parquet file ({exc})", fix=fix))
            continue
        if found != rows:
            problems.append(Problem(path, f"holds {found:,} rows where {BOARD_FILE} says {rows:,}", fix=fix))
        if declared is not None and declared.get(name) != ([path] if rows else None):
            want = f"declare `{name}` with data_files {path}" if rows else f"leave the empty `{name}` out"
            problems.append(Problem(layout.CARD, f"its configs: do not match {BOARD_FILE}", fix=f"{want}; {fix}"))
    if declared is not None:
        for name in sorted(set(declared) - set(board["configs"])):
            problems.append(
                Problem(layout.CARD, f"declares config {name!r}, which {BOARD_FILE} does not list", fix=fix)
            )
    if problems:
        raise ValidationError(problems, f"{folder} is not a complete board export")
    return board
