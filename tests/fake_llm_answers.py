"""What the local fake OpenAI server (tests/llm_server.py) answers: a valid reply to each prompt of the build
(`freshstack_hf.pipeline.build_prompts`) and of the answer track (`freshstack_hf.answers.rag_prompts`), recognised
by its system message and made from word overlap, so a whole build or an answer judgment can run against it."""

from __future__ import annotations

import json
import re
from typing import Any

from freshstack_hf.answers import rag_prompts
from freshstack_hf.pipeline import build_prompts

STOP = {"the", "and", "for", "with", "that", "this", "you", "are", "use", "can", "not", "from", "your", "have"}


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_]{3,}", text.lower()) if w not in STOP}


def _between(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return m.group(1) if m else ""


def task_responder(messages: list[dict[str, str]], body: dict[str, Any]) -> str:
    """A valid answer to each prompt of the build and the answer track (recognised by its system message), from
    word overlap."""
    system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
    user = next(m["content"] for m in messages if m["role"] == "user")
    question = _between(user, "question")
    if system == build_prompts.NUGGETS_SYSTEM:
        sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", _between(user, "answer")) if len(s.split()) > 2]
        sentences = sentences[:5] or [question.splitlines()[0] if question else "the answer"]
        items = [{"text": s, "importance": "vital" if i < 2 else "okay"} for i, s in enumerate(sentences)]
        return json.dumps({"nuggets": items})
    if system == build_prompts.SUBQUESTIONS_SYSTEM:
        title = question.splitlines()[0] if question else "the problem"
        return json.dumps([f"What causes {title}?", f"How do I fix {title}?"])
    if system == build_prompts.CLOSED_BOOK_SYSTEM:
        return "From memory: " + " ".join(question.split()[:40])
    if system == rag_prompts.ASSIGN_SYSTEM:
        return json.dumps({"labels": assign_labels(user)})
    if system == rag_prompts.GENERATE_SYSTEM:  # the first sentence of each document, citing it
        docs = re.findall(r'<document id="(\d+)">\n(.*?)\n</document>', user, re.S)
        sentences = [{"text": re.split(r"(?<=[.!?])\s+", t.strip())[0], "citations": [int(i)]} for i, t in docs]
        return json.dumps({"answer": sentences})
    if system == build_prompts.JUDGE_SYSTEM:
        nuggets = re.findall(r"^(\d+)\. (.*)$", _between(user, "nuggets"), re.M)
        docs = re.findall(r'<document id="(\d+)">\n(.*?)\n</document>', user, re.S)
        judgments = []
        for doc_id, text in docs:
            dw = words(text)
            supported = [int(j) for j, n in nuggets if (nw := words(n)) and len(nw & dw) >= max(1, len(nw) // 2)]
            judgments.append({"doc": int(doc_id), "supported_nuggets": supported})
        return "Each document was compared with each nugget by shared words.\n" + json.dumps({"judgments": judgments})
    return "ok"


def assign_labels(user: str) -> list[str]:
    """The fake answer judge: a nugget whose words all appear in the answer is supported, half of them partly."""
    nuggets = re.findall(r"^\d+\. (.*)$", _between(user, "nuggets"), re.M)
    answer = words(_between(user, "answer"))
    labels = []
    for nugget in nuggets:
        nw = words(nugget)
        shared = len(nw & answer)
        full, half = bool(nw) and shared == len(nw), bool(nw) and 2 * shared >= len(nw)
        labels.append("support" if full else "partial_support" if half else "not_support")
    return labels
