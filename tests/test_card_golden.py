"""The two cards, byte for byte: the dataset card of a fixed manifest and the board export's card of fixed counts.

The golden files were rendered before the cards' text moved into templates shipped as package data; a card that
differs by one character from them fails here. The manifest holds every part a card may show: a topic built offline
on a dated snapshot (build account, commits, carryover), synthetic topics with candidate-list quality and a hole-fill
revision, and a Nano subset. Regenerate a golden file only for a deliberate change of the card's text:
`python tests/test_card_golden.py`.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from freshstack_hf.repo.card import render_card

GOLDEN = Path(__file__).parent / "fixtures" / "cards"
MANIFEST = GOLDEN / "manifest.json"
EXPORTED_AT = datetime(2025, 3, 4, 5, 6, 7)


def dataset_cards() -> dict[str, str]:
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return {
        "dataset_card.md": render_card(manifest),
        "dataset_card_hub.md": render_card(manifest, "ORG/freshstack"),
        "dataset_card_empty.md": render_card({}),
    }


def board_cards() -> dict[str, str]:
    """A public results export with every config filled, and a backup with half of them empty and no measures."""
    from leaderboard.export.board_card import render_card as board_card
    from leaderboard.export.board_format import CONFIGS

    cards = {}
    for public, name in ((True, "board_card_public.md"), (False, "board_card_backup.md")):
        rows = {c.name: (10 * (i + 1) if public or i % 2 == 0 else 0) for i, c in enumerate(CONFIGS)}
        board = {
            "public": public,
            "left_out": 2 if public else 0,
            "written_by": "9.9.9",
            "store_schema": 12,
            "format_version": 3,
            "configs": {n: {"rows": r} for n, r in rows.items()},
        }
        sizes = {n: 1000 + 7 * r for n, r in rows.items()}
        measures = Counter(
            {"alpha_ndcg@10": 12, "recall@50": 1200, "answers:citation_recall": 3, "not_a_measure": 2} if public else {}
        )
        cards[name] = board_card(board, sizes, measures, EXPORTED_AT)
    return cards


@pytest.mark.parametrize("name", ["dataset_card.md", "dataset_card_hub.md", "dataset_card_empty.md"])
def test_dataset_card_is_the_golden_file(name):
    assert dataset_cards()[name] == (GOLDEN / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["board_card_public.md", "board_card_backup.md"])
def test_board_card_is_the_golden_file(name):
    assert board_cards()[name] == (GOLDEN / name).read_text(encoding="utf-8")


def test_every_card_template_ships_as_package_data():
    """An installed (non-editable) package holds only what `package-data` names: a template left out would make
    every card fail to render after `pip install`."""
    import tomllib

    root = Path(__file__).parent.parent
    data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-data"]
    for package in ("freshstack_hf", "leaderboard"):
        templates = sorted((root / package / "templates").glob("*.md"))
        assert templates and all(any(t.relative_to(root / package).match(g) for g in data[package]) for t in templates)


if __name__ == "__main__":  # regenerate the golden files (a deliberate change of a card's text only)
    for file_name, text in {**dataset_cards(), **board_cards()}.items():
        (GOLDEN / file_name).write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN / file_name}")
