"""Serve the FreshStack leaderboard (placeholder until the Gradio app lands).

Example:
  freshstack-hf leaderboard --dataset out/freshstack --port 7860
"""

from __future__ import annotations

import argparse

NAME = "leaderboard"
HELP = "serve the Gradio leaderboard"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", required=True, help="dataset repo folder or Hub id")


def run(args: argparse.Namespace) -> int:
    from freshstack_hf.errors import FreshStackError

    raise FreshStackError("the leaderboard app is not built yet")
