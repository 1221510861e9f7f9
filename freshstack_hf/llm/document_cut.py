"""Documents and answers cut to a token budget before they go into a prompt, the same way for every prompt set.

The build's judge (`freshstack_hf.pipeline.build_prompts`) and the answer track's judge and generator
(`freshstack_hf.answers.rag_prompts`) both show a model long texts; one cut, counted in cl100k tokens (the
released corpus's tokenizer) and named in the prompt by its mark, keeps what each model saw comparable and
keeps code readable.
"""

from __future__ import annotations

from freshstack_hf.cl100k import load_encoding

CUT_MARK = "\n[... cut: the document continues]"


def cut_document(text: str, max_tokens: int) -> str:
    """`text` as written (line breaks, indentation) up to its first `max_tokens` cl100k tokens, then a marked cut.

    Judges get documents this way: a word-based cut that re-joins words with single spaces turns code into one
    line. The cut falls on a token boundary, moved back to a character boundary where a token ends mid-character.
    """
    if max_tokens <= 0 or len(text) <= max_tokens:  # every token holds at least one character
        return text
    tokens = load_encoding().encode_ordinary(text)
    if len(tokens) <= max_tokens:
        return text
    kept = load_encoding().decode_bytes(tokens[:max_tokens])
    return kept.decode("utf-8", errors="ignore").rstrip() + CUT_MARK
