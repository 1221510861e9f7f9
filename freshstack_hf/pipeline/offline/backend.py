"""The `Backend` protocol with no endpoint: the build's LLM stages answered by heuristics, deterministic and free.

Stage names and the shape of `stats()` match the online backend's, so the manifest, the card and the stage
summaries read the same whichever answered; heavy imports (torch, sentence-transformers) wait for the first
judgment, and without them the judge runs on overlap alone and says so in `stats()`.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from freshstack_hf.llm.transport import OFFLINE_LABEL
from freshstack_hf.pipeline.backends import QA, JudgeTask, NuggetText
from freshstack_hf.pipeline.offline.judge_rule import decide, default_setting, describe, measured_agreement
from freshstack_hf.pipeline.offline.support import SupportScorer
from freshstack_hf.pipeline.offline.writing import closed_book_of, nuggets_of, subquestions_of


class OfflineBackend:
    """Nuggets, pooling queries and support judgments with no model behind an endpoint."""

    name = OFFLINE_LABEL
    kind = "offline"

    def __init__(self, *, show_progress: bool = False, model: str = "", use_embeddings: bool = True) -> None:
        self.show_progress = show_progress
        self.setting = default_setting()
        self.scorer = SupportScorer(model=model, use_embeddings=use_embeddings)
        self._counts = {stage: Counter() for stage in ("nuggets", "subquestions", "closed_book", "judgments")}

    def nuggets(self, items: list[QA]) -> list[list[NuggetText]]:
        self._counts["nuggets"]["items"] += len(items)
        return [nuggets_of(qa) for qa in items]

    def subquestions(self, items: list[QA]) -> list[list[str]]:
        self._counts["subquestions"]["items"] += len(items)
        return [subquestions_of(qa) for qa in items]

    def closed_book(self, items: list[QA]) -> list[str]:
        self._counts["closed_book"]["items"] += len(items)
        return [closed_book_of(qa) for qa in items]

    def judge(self, tasks: list[JudgeTask]) -> list[list[list[bool]]]:
        from tqdm.auto import tqdm

        out = []
        for task in tqdm(tasks, desc="judge (offline)", unit="task", disable=not self.show_progress):
            shares, cosines = self.scores(task.nuggets, task.doc_texts, task.whole_docs or task.doc_texts)
            out.append(
                [
                    [decide(s, None if c is None else c[j], self.setting) for j, s in enumerate(row)]
                    for row, c in zip(shares, cosines or [None] * len(shares), strict=True)
                ]
            )
            self._counts["judgments"]["items"] += 1
            self._counts["judgments"]["pairs"] += len(task.nuggets) * len(task.doc_texts)
        return out

    def scores(
        self, nuggets: Any, docs: Any, embedded: Any = None
    ) -> tuple[list[list[float]], list[list[float]] | None]:
        """[doc][nugget] lexical shares and, when the model is available, cosines (what `decide` reads); `embedded`:
        the texts whose vectors stand for `docs` (see `SupportScorer.scores`)."""
        return self.scorer.scores(nuggets, docs, embedded)

    def stats(self) -> dict[str, Any]:
        """Per-stage counts (no calls, tokens or cost: nothing leaves the machine) and how the judge decided.

        The rules are strings on purpose: the manifest subtracts every number between two snapshots
        (`accounting.delta`), and a threshold is not a counter.
        """
        out: dict[str, Any] = {}
        for stage, counts in self._counts.items():
            out[stage] = {"items": counts["items"], "calls": 0, "cache_hits": 0, "retries": 0, "tokens": 0, "cost": 0.0}
        embedded = self.scorer.embedded
        out["judgments"].update(
            pairs=self._counts["judgments"]["pairs"],
            method="lexical+embedding" if embedded else "lexical",
            embeddings=embedded,
            embedding_note=self.scorer.model_error or ("" if embedded else "model not loaded yet"),
            rule=describe(self.setting, embedded),
            lexical_only_rule=describe(self.setting, False),
            agreement=measured_agreement(embedded),
        )
        return out
