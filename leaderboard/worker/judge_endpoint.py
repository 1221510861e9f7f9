"""The LLM endpoint the worker's jobs send text to: the answers track's judge (All/Vital) and its LLM answer
baseline's generator, and the judge of a stored system's holes (`leaderboard.fills`).

An OpenAI-compatible URL and a model, named by the operator's environment; never a key: the key stays with the
workers (`JUDGE_KEY_ENV`, the one secret those jobs' processes keep), which read it from their own environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.transport import endpoint_label

BASE_URL_ENV, MODEL_ENV = "FRESHSTACK_JUDGE_BASE_URL", "FRESHSTACK_JUDGE_MODEL"
ANSWER_MODEL_ENV = "FRESHSTACK_ANSWER_MODEL"  # the LLM answer baseline's model, on the judge's endpoint
JUDGE_KEY_ENV = "FRESHSTACK_JUDGE_API_KEY"  # read by the worker's job process, never stored nor queued


@dataclass(frozen=True, slots=True)
class JudgeEndpoint:
    """The judge the app queues All/Vital scoring for: an OpenAI-compatible URL and a model (no key here)."""

    base_url: str
    model: str

    @property
    def name(self) -> str:
        """The backend label stored with the scores (the library's one label of an endpoint)."""
        return endpoint_label(self.model, self.base_url)

    @classmethod
    def from_env(cls) -> JudgeEndpoint | None:
        """`FRESHSTACK_JUDGE_BASE_URL` and `FRESHSTACK_JUDGE_MODEL`, or None when no endpoint is named."""
        url, model = os.environ.get(BASE_URL_ENV, "").strip(), os.environ.get(MODEL_ENV, "").strip()
        if not url:
            return None
        if not model:
            raise FreshStackError(f"{BASE_URL_ENV} is set but {MODEL_ENV} is not: name the judge's model")
        return cls(url, model)

    @classmethod
    def generator_from_env(cls) -> JudgeEndpoint | None:
        """The LLM answer baseline's model, `FRESHSTACK_ANSWER_MODEL`, on the judge's endpoint (None: no row)."""
        judge, model = cls.from_env(), os.environ.get(ANSWER_MODEL_ENV, "").strip()
        return cls(judge.base_url, model) if judge is not None and model else None

    def as_payload(self) -> dict[str, str]:
        return {"base_url": self.base_url, "model": self.model}
