"""Code-aware tokenization for BM25 over StackOverflow answers and GitHub code chunks.

FreshStack queries and documents mix prose with identifiers (`getUserName`, `HTTPServer`, `user_name`,
`os.path.join`). A prose analyzer keeps `getUserName` whole, so a question that says "get the user name" never
matches it; a splitter alone loses the exact identifier, which is the strongest signal when both sides quote it.
The default therefore emits both: the identifier lowercased whole (`getusername`, rare, so high idf) and its parts
(`get`, `user`, `name`). Dotted paths and punctuation are separators, digits are kept as their own tokens, nothing is
stemmed and no stopword is dropped: code words such as `this`, `for` or `not` carry meaning.

The `lucene-english` preset approximates Pyserini's default analyzer, which the official FreshStack BM25 baseline
used (Lucene's StandardTokenizer, possessive filter, lowercasing, Lucene's 33 English stopwords, Porter stemming).
It only approximates StandardTokenizer's Unicode word-break rules, and needs PyStemmer for the stemming.

Speed: each distinct raw word is analysed once and cached, so a corpus costs one regex scan plus one dict lookup per
word (117,000 documents of a few hundred words take seconds).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

from freshstack_hf.errors import FreshStackError

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET, the set Pyserini's default analyzer removes.
# fmt: off
LUCENE_ENGLISH_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
    "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
    "will", "with",
})
# fmt: on

PRESETS: dict[str, dict[str, Any]] = {
    "code": {"split_identifiers": True, "keep_compound": True, "stopwords": None, "stemmer": None},
    "lucene-english": {
        "split_identifiers": False,
        "keep_compound": False,
        "stopwords": "lucene-english",
        "stemmer": "porter",
    },
}

# An identifier-like run: letters, digits and underscores (Unicode-aware).
_CODE_WORD = re.compile(r"\w+")
# StandardTokenizer joins letters/digits across `.` and apostrophes inside a word (`e.g`, `don't`, `3.14`).
_STANDARD_WORD = re.compile(r"\w+(?:[.'’]\w+)*")
# Pieces of an identifier: an acronym followed by a capitalised word (`HTTP` in `HTTPServer`), a capitalised or
# lower-case word (non-ASCII letters count as lower case), a trailing acronym, a number.
_PIECE = re.compile(r"[A-Z]+(?=[A-Z][^\W\d_A-Z])|[A-Z]?[^\W\d_A-Z]+|[A-Z]+|\d+")
_POSSESSIVE = re.compile(r"['’][sS]$")
_MAX_CACHE = 2_000_000


class _WordCache(dict[str, tuple[str, ...]]):
    """word -> its tokens; `__missing__` analyses a new word, so lookups stay in C for every repeat."""

    def __init__(self, analyse: Any) -> None:
        super().__init__()
        self._analyse = analyse

    def __missing__(self, word: str) -> tuple[str, ...]:
        if len(self) >= _MAX_CACHE:
            self.clear()
        tokens = self[word] = self._analyse(word)
        return tokens


def _load_stemmer(name: str) -> Any:
    try:
        import Stemmer  # PyStemmer
    except ImportError:
        raise FreshStackError(
            f"stemming ({name!r}) needs the PyStemmer package: pip install PyStemmer "
            "(or build the tokenizer with stemmer=None)"
        ) from None
    try:
        return Stemmer.Stemmer(name)
    except KeyError:
        raise FreshStackError(f"PyStemmer has no {name!r} stemmer; try 'porter' or 'english'") from None


class Tokenizer:
    """Turns text into BM25 tokens; callable on one text, `tokenize_many` for a corpus.

    `split_identifiers` splits camelCase, PascalCase (acronyms included), snake_case and digits; `keep_compound`
    also keeps the whole identifier. `stopwords` is None, "lucene-english" or a collection of lower-case words.
    `stemmer` is None, "porter" (Lucene's PorterStemFilter) or another PyStemmer algorithm such as "english".
    """

    def __init__(
        self,
        *,
        split_identifiers: bool = True,
        keep_compound: bool = True,
        stopwords: str | Iterable[str] | None = None,
        stemmer: str | None = None,
    ) -> None:
        self.split_identifiers = split_identifiers
        self.keep_compound = keep_compound
        if stopwords == "lucene-english":
            self._stopwords_name: str | list[str] | None = "lucene-english"
            self.stopwords = LUCENE_ENGLISH_STOPWORDS
        elif stopwords is None:
            self._stopwords_name = None
            self.stopwords = frozenset()
        elif isinstance(stopwords, str):
            raise FreshStackError(f"unknown stopword list {stopwords!r}; use 'lucene-english' or a list of words")
        else:
            self.stopwords = frozenset(w.lower() for w in stopwords)
            self._stopwords_name = sorted(self.stopwords)
        self.stemmer = stemmer
        self._stem = _load_stemmer(stemmer).stemWord if stemmer else None
        self._word_re = _CODE_WORD if split_identifiers else _STANDARD_WORD
        self._cache = _WordCache(self._analyse)

    @classmethod
    def preset(cls, name: str) -> Tokenizer:
        """`code` (the default: identifiers split and kept whole) or `lucene-english` (Pyserini-like)."""
        if name not in PRESETS:
            raise FreshStackError(f"unknown tokenizer preset {name!r}; choose one of {', '.join(PRESETS)}")
        return cls(**PRESETS[name])

    def to_config(self) -> dict[str, Any]:
        """JSON-safe settings, saved with an index so that queries are analysed the same way after loading."""
        return {
            "split_identifiers": self.split_identifiers,
            "keep_compound": self.keep_compound,
            "stopwords": self._stopwords_name,
            "stemmer": self.stemmer,
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Tokenizer:
        return cls(**config)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.to_config().items() if not isinstance(v, list))
        return f"Tokenizer({args})"

    def _analyse(self, word: str) -> tuple[str, ...]:
        if self.split_identifiers:
            whole = word.lower()
            pieces = [p.lower() for p in _PIECE.findall(word)]
            if not pieces:  # only underscores
                return ()
            if self.keep_compound and (len(pieces) > 1 or pieces[0] != whole):
                pieces.insert(0, whole)
        else:
            pieces = [_POSSESSIVE.sub("", word).lower()]
        if self.stopwords:
            pieces = [p for p in pieces if p not in self.stopwords]
        if self._stem is not None:
            pieces = [self._stem(p) for p in pieces]
        return tuple(pieces)

    def __call__(self, text: str) -> list[str]:
        return list(chain.from_iterable(map(self._cache.__getitem__, self._word_re.findall(text))))

    def tokenize_many(self, texts: Sequence[str] | Iterable[str], *, show_progress: bool = False) -> list[list[str]]:
        """Tokenize a corpus; the word cache is shared across texts, which is where the speed comes from."""
        if show_progress:
            from tqdm.auto import tqdm

            texts = tqdm(texts, desc="tokenize", unit="doc")
        return [self(text) for text in texts]
