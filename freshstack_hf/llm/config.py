"""How to reach a model: the `llm:` section of a topic YAML, and what the answer judge and generator are given.

It lives with the client rather than with the topic definition because the build and the answer track both
call models with it; the topic reader (`freshstack_hf.pipeline.config.topic`) only validates the YAML into it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LLMConfig:
    """An OpenAI-compatible endpoint. No `base_url` (and no env override) means the offline heuristic backend."""

    base_url: str = ""
    model: str = "gpt-4o"
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.1
    max_concurrency: int = 8
    max_retries: int = 6
    timeout: float = 120.0
    batch: bool = False  # OpenAI Batch API: half price, results within a day
    input_price_per_million: float = 0.0
    output_price_per_million: float = 0.0
    max_output_tokens: int = 2048

    @property
    def offline(self) -> bool:
        return not self.base_url
