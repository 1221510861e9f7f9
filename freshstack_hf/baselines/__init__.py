"""The baselines: retrieval methods run on a topic, their registry, and the candidate lists a dataset repo keeps.

Rooms:

* `retrievers.py`: BM25, dense and their RRF hybrid as runs (`BaselineRun`), and the baseline parameters;
* `registry.py`: what a method is (`Method`), the registry every consumer reads (`METHODS`, `register_method`);
* `builtin.py`: the built-in methods, registered when this package is imported, so `METHODS` always holds them;
* `candidates.py`: the Nano-style candidate lists (BM25, dense, hybrid) written into a dataset repo.

`BaselineRun`, `Method` and `register_method` are the public API (`docs/reference/api.md`), importable here.
"""

from freshstack_hf.baselines import builtin as _builtin  # noqa: F401  (registers the built-in methods)
from freshstack_hf.baselines.registry import Method, register_method
from freshstack_hf.baselines.retrievers import BaselineRun

__all__ = ["BaselineRun", "Method", "register_method"]
