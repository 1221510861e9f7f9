"""A system's cutoff date: what a submitter types (Submit tab, submit API) or what a model card says.

A model card (the model folder's `README.md`) may give the date in its YAML front matter; the first of
`CARD_KEYS` holding a readable day (`2024-06-30`, or a YAML date) is taken, so a training or knowledge cutoff
wins over a release date (a model released later than its data ends would otherwise be scored on questions it
may have seen). A card whose date cannot be read gives no cutoff rather than failing a submission the submitter
cannot fix; a date the submitter typed is checked strictly instead (`freshstack_hf.windows.parse_day`).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from freshstack_hf.windows import parse_day, question_day

CARD_KEYS = ("training_cutoff", "knowledge_cutoff", "cutoff_date", "release_date")
CUTOFF_FIELD = "cutoff (YYYY-MM-DD)"  # how errors name the form field and the API argument


def submitted_cutoff(text: str | None) -> str | None:
    """The day a submitter typed, as YYYY-MM-DD; None when left empty; a FreshStackError naming the field when
    it is not a date."""
    if not text or not text.strip():
        return None
    return parse_day(text, CUTOFF_FIELD).isoformat()


def card_cutoff(folder: str | Path) -> str | None:
    """The cutoff a model folder's README.md front matter gives under one of `CARD_KEYS`, or None."""
    import yaml

    card = Path(folder) / "README.md"
    if not card.is_file():
        return None
    text = card.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return None
    head, sep, _ = text[3:].partition("\n---")
    if not sep:
        return None
    try:
        meta = yaml.safe_load(head)
    except yaml.YAMLError:
        return None
    if not isinstance(meta, dict):
        return None
    for key in CARD_KEYS:
        value = meta.get(key)
        if isinstance(value, dt.datetime):
            value = value.date()
        day = value if isinstance(value, dt.date) else question_day(str(value)) if isinstance(value, str) else None
        if day is not None:
            return day.isoformat()
    return None
