"""Where the real external data lies (`../shared/data`, beside the project); tests skip cleanly without it."""

from __future__ import annotations

from pathlib import Path

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
OFFICIAL_LEADERBOARD = SHARED_DATA / "reference" / "freshstack-official-leaderboard.json"
