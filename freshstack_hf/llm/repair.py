"""What an unusable answer is, and the local fix tried before asking the model again.

Kept apart from the client because the prompt parsers of the build (`freshstack_hf.pipeline.build_prompts`) and of
the answer track (`freshstack_hf.answers.rag_prompts`) raise `ParseError` and read replies with `load_json` too, and
they need neither the endpoint nor the retry policy: a parser only says what is wrong with a reply, the client
decides whether to repair it, re-ask, or (for `_Garbage`, a body that is no completion at all) retry it like a 5xx.
"""

from __future__ import annotations

import json
import re
from typing import Any


class ParseError(ValueError):
    """An answer that does not have the shape a prompt asked for; the message is quoted back to the model."""


class _Garbage(Exception):
    """A 200 response that is not a usable completion (not JSON, no choices): retried like a 5xx."""


def repair_json(text: str) -> str:
    """Best-effort fix of a JSON answer: drop code fences and surrounding prose, keep the outermost object or
    array, remove trailing commas. Returns the text unchanged when nothing JSON-like is found."""
    body = re.sub(r"```[A-Za-z0-9_-]*", "", text).strip()
    body = re.sub(r",\s*([}\]])", r"\1", body)
    decoder = json.JSONDecoder()
    best: tuple[int, int] | None = None
    tries = 0
    for i, ch in enumerate(body):
        if ch not in "{[":
            continue
        if best is not None and i < best[1]:
            continue  # inside a value already found: only an outer or later one can be larger
        tries += 1
        if tries > 500:
            break
        try:
            _, end = decoder.raw_decode(body, i)
        except ValueError:
            continue
        if best is None or end - i > best[1] - best[0]:
            best = (i, end)
    return body[best[0] : best[1]] if best else text


def load_json(text: str) -> Any:
    """Parse JSON strictly, then once more after local repair (fences, prose around it, trailing commas)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return json.loads(repair_json(text))
    except json.JSONDecodeError as exc:
        raise ParseError(f"no JSON value found in the reply ({exc.msg})") from None
