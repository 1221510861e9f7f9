"""First-stage retrieval: the BM25 engine (`bm25`, `tokenize`, `lucene`) and, beside it, dense retrieval and fusion.

Nothing is imported here so that `import freshstack_hf.retrieval` stays free; import the submodule you need,
e.g. `from freshstack_hf.retrieval.bm25 import BM25Index`.
"""
