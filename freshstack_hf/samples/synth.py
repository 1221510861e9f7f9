"""Deterministic synthetic topics with FreshStack's shapes, for tests and benchmarks.

Shapes copied from the real data (facts from the paper, no text): long questions with code blocks, 2 to 8
nuggets per question, several relevant and judged non-relevant chunks per nugget, a large distractor corpus of
doc and code chunks with repo-like ids `{repo}/{path}_{start}_{end}`. Relevant chunks carry the nugget's key
terms, judged negatives carry other terms of the same question (hard negatives), so lexical and dense
retrievers find signal without finding everything.

Speed matters (120,000 documents in well under a minute): words are sampled as integer arrays in bulk with
numpy and joined once per document.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.topic import Topic, check_topic_name

_ONSETS = [
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "ch",
    "cl",
    "dr",
    "fl",
    "gr",
    "pl",
    "pr",
    "sh",
    "st",
    "th",
    "tr",
]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"]
_CODAS = ["", "", "n", "r", "s", "t", "x", "ck", "ll", "nd", "rt", "sh"]
_LANGS = ["python", "typescript", "php", "gdscript", "javascript"]


@dataclass(frozen=True)
class SynthConfig:
    """Sizes of one synthetic topic. Defaults give a small, fast topic for tests."""

    queries: int = 20
    docs: int = 2000
    seed: int = 0
    vocab: int = 20000
    doc_words: float = 100.0  # median document length in words (lognormal spread, as real chunks have)
    min_nuggets: int = 2
    max_nuggets: int = 8


def synth_topics(names: list[str], queries: int, docs: int, seed: int = 0) -> list[Topic]:
    return [synth_topic(n, SynthConfig(queries=queries, docs=docs, seed=seed)) for n in names]


def synth_topic(name: str, cfg: SynthConfig | None = None) -> Topic:
    cfg = cfg or SynthConfig()
    check_topic_name(name)
    rng = np.random.default_rng([cfg.seed, zlib.crc32(name.encode())])
    vocab = _vocabulary(rng, cfg.vocab)
    probs = 1.0 / np.arange(1, len(vocab) + 1) ** 1.07
    probs /= probs.sum()
    cdf = np.cumsum(probs)

    def sample(n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(cdf, rng.random(n)), len(vocab) - 1)

    n_docs = max(cfg.docs, 1)
    lengths = np.clip(rng.lognormal(np.log(cfg.doc_words), 0.7, n_docs).astype(int), 12, 700)
    words = sample(int(lengths.sum()))
    bounds = np.concatenate([[0], np.cumsum(lengths)])

    # Key terms come from the mid-frequency band: rare enough to discriminate, common enough to recur.
    band = np.arange(len(vocab) // 20, len(vocab) // 2)
    queries, nuggets, judged, extra = _query_side(rng, name, cfg, vocab, band, n_docs)

    repos = [name, f"{name}-docs", f"{name}-examples"]
    docs = _docs(rng, name, repos, vocab, words, bounds, extra)
    judgments = [NuggetJudgment(q, nid, docs[d].doc_id, rel) for q, nid, d, rel in judged]
    return Topic(name, queries=queries, nuggets=nuggets, docs=docs, judgments=judgments)


def _vocabulary(rng: np.random.Generator, size: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < size:
        syl = rng.integers(1, 4)
        word = (
            "".join(_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))] for _ in range(syl))
            + _CODAS[rng.integers(len(_CODAS))]
        )
        if word not in seen:
            seen.add(word)
            out.append(word)
    return out


def _query_side(rng, name, cfg, vocab, band, n_docs):
    queries: list[Query] = []
    nuggets: list[Nugget] = []
    judged: list[tuple[str, str, int, int]] = []  # (query, nugget, doc index, relevance)
    extra: dict[int, list[str]] = {}  # doc index -> words injected into it
    doc_pool = rng.permutation(n_docs)
    cursor = 0
    ids = 60_000_000 + np.sort(rng.choice(19_000_000, size=cfg.queries, replace=False))
    for qi, qid_num in enumerate(ids):
        qid = str(int(qid_num))
        lang = _LANGS[qi % len(_LANGS)]
        keys, ident, title, body = _question(rng, name, vocab, band, lang)
        n_nug = int(rng.integers(cfg.min_nuggets, cfg.max_nuggets + 1))
        facts = []
        qdocs: list[int] = []
        for k in range(n_nug):
            nkeys = [keys[(2 * k + j) % len(keys)] for j in range(3)]
            nid = f"{qid}_{k}"
            fact = f"Use {nkeys[0]} {nkeys[1]} so that {ident} handles {nkeys[2]}."
            facts.append(fact)
            nuggets.append(Nugget(nid, qid, fact))
            n_rel = int(rng.integers(1, 5))
            rel: list[int] = []
            for _ in range(n_rel):
                # A third of relevant docs are shared with an earlier nugget: docs supporting several nuggets.
                if qdocs and rng.random() < 0.33:
                    d = qdocs[int(rng.integers(len(qdocs)))]
                else:
                    d = int(doc_pool[cursor % n_docs])
                    cursor += 1
                    qdocs.append(d)
                if d not in rel:
                    rel.append(d)
                    # Supporting docs share only part of the nugget's wording, as real chunks do.
                    said = [nkeys[i] for i in rng.choice(3, size=int(rng.integers(1, 3)), replace=False)]
                    extra.setdefault(d, []).extend(said + ([ident] if rng.random() < 0.4 else []))
            neg = []
            for _ in range(int(rng.integers(2, 7))):
                d = int(doc_pool[cursor % n_docs])
                cursor += 1
                if d not in rel and d not in neg:
                    neg.append(d)
                    hard = [keys[int(rng.integers(len(keys)))] for _ in range(int(rng.integers(2, 5)))]
                    extra.setdefault(d, []).extend(hard + ([ident] if rng.random() < 0.5 else []))
            judged.extend((qid, nid, d, 1) for d in rel)
            judged.extend((qid, nid, d, 0) for d in neg)
        # Unjudged docs that mention the question's terms: what makes first-stage retrieval hard.
        for d in rng.integers(n_docs, size=12 + len(keys)).tolist():
            extra.setdefault(int(d), []).extend(keys[int(rng.integers(len(keys)))] for _ in range(2))
        answer = " ".join(facts) + f"\n```{lang}\n{ident}({keys[0]})\n```"
        queries.append(_asked(rng, int(qid_num), title, body, answer, (name, keys[0], lang)))
    return queries, nuggets, judged, extra


def _asked(rng, qid_num: int, title: str, body: str, answer: str, tags: tuple[str, ...]) -> Query:
    """The question's record, with its accepted answer's id and the day it was asked drawn from `rng`."""
    year = 2023 + int(rng.integers(2))
    return Query(
        query_id=str(qid_num),
        title=title,
        body=body,
        answer_id=str(qid_num + 1 + int(rng.integers(1000))),
        answer_text=answer,
        date=f"{year}-{int(rng.integers(1, 13)):02d}-{int(rng.integers(1, 29)):02d}",
        tags=tags,
    )


def _question(rng, name: str, vocab: list[str], band: np.ndarray, lang: str) -> tuple[list[str], str, str, str]:
    """(key terms, code identifier, title, body with a code block) of one question. The random draws keep their
    order, so a seed makes the same topic as before this was a function of its own."""
    keys = [vocab[i] for i in rng.choice(band, size=int(rng.integers(10, 18)), replace=False)]
    ident = _identifier(rng, keys)
    title = f"How to {keys[0]} {keys[1]} with {ident} in {name}?"
    body_words = [vocab[i] for i in rng.choice(len(vocab) // 4, size=int(rng.integers(60, 260)))]
    for k in keys:
        body_words.insert(int(rng.integers(len(body_words) + 1)), k)
    code = "\n".join(
        f"{ident}({keys[(i + 2) % len(keys)]}_{keys[(i + 3) % len(keys)]}) # {vocab[int(rng.integers(500))]}"
        for i in range(int(rng.integers(2, 8)))
    )
    body = (
        " ".join(body_words[: len(body_words) // 2])
        + f"\n```{lang}\n{code}\n```\n"
        + " ".join(body_words[len(body_words) // 2 :])
    )
    return keys, ident, title, body


def _identifier(rng, keys: list[str]) -> str:
    a, b = keys[int(rng.integers(len(keys)))], keys[int(rng.integers(len(keys)))]
    return f"{a}{b.capitalize()}" if rng.random() < 0.5 else f"{a}_{b}"


def _docs(rng, name, repos, vocab, words, bounds, extra) -> list[Doc]:
    n = len(bounds) - 1
    vocab_arr = np.array(vocab, dtype=object)
    texts: list[str] = []
    is_code = rng.random(n) < 0.35
    for i in range(n):
        toks = vocab_arr[words[bounds[i] : bounds[i + 1]]].tolist()
        add = extra.get(i)
        if add:
            for w in add:
                toks.insert(int(rng.integers(len(toks) + 1)), w)
        if is_code[i]:
            step = 8
            lines = [" ".join(toks[j : j + step]) for j in range(0, len(toks), step)]
            texts.append(
                "\n".join(f"    {ln}" if k % 3 else f"def {ln.replace(' ', '_', 1)}:" for k, ln in enumerate(lines))
            )
        else:
            texts.append(" ".join(toks))
    # Files of 1 to 12 chunks; byte offsets run on within a file, as the official chunker's do.
    docs: list[Doc] = []
    i = 0
    file_no = 0
    while i < n:
        size = int(rng.integers(1, 13))
        repo = repos[file_no % len(repos)]
        code = bool(is_code[i])
        folder = vocab[int(rng.integers(2000))]
        path = (
            f"src/{folder}/{vocab[int(rng.integers(5000))]}_{file_no}.py"
            if code
            else f"docs/{folder}/{vocab[int(rng.integers(5000))]}_{file_no}.md"
        )
        start = 0
        for j in range(i, min(i + size, n)):
            end = start + len(texts[j].encode())
            doc_id = f"{repo}/{path}_{start}_{end}"
            docs.append(
                Doc(
                    doc_id,
                    texts[j],
                    url=f"https://github.com/{name}/{repo}/blob/main/{path}",
                    repo=repo,
                    path=path,
                    start_byte=start,
                    end_byte=end,
                    commit="0" * 40,
                )
            )
            start = end
        i += size
        file_no += 1
    return docs
