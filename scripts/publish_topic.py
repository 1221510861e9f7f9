#!/usr/bin/env python
"""Thin entry: validate and publish a dataset repo folder (same as `freshstack-hf publish`).

Example:
  python scripts/publish_topic.py out/freshstack --repo-id me/freshstack --dry-run
"""

import sys

from freshstack_hf.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["publish", *sys.argv[1:]]))
