#!/usr/bin/env python
"""Thin entry: write synthetic topics into a dataset repo (same as `freshstack-hf synth`).

Example:
  python scripts/synth_topics.py out/freshstack --topics langchain,yolo --queries 50 --docs 5000
"""

import sys

from freshstack_hf.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["synth", *sys.argv[1:]]))
