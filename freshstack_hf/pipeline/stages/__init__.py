"""The build's stages, one module each, and the one order they run in.

A stage module declares `NAME`, `READS` (config sections and earlier stages its output depends on; they make its
fingerprint), `VERSION`, `OUTPUTS` (the `freshstack_hf.pipeline.inputs` files it writes), and three functions:
`run(ctx) -> record`, `plan(ctx) -> plan` (for `--dry-run`) and `summary(record) -> str` (the line a person
reads when it finishes). The runner follows `ORDER` and hands each stage the records of those before it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

ORDER = ("questions", "corpus", "nuggets", "pools", "judgments", "filter", "candidates", "write")
_MODULES = {"filter": "filtering"}  # a module named `filter` would shadow the builtin where it is imported


def stage_module(name: str) -> ModuleType:
    return importlib.import_module(f"{__name__}.{_MODULES.get(name, name)}")
