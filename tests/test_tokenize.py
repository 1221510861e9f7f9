"""The code-aware tokenizer: identifier splitting, presets, options and the errors users see."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.retrieval.analyzer import LUCENE_ENGLISH_STOPWORDS, Tokenizer

HAS_STEMMER = importlib.util.find_spec("Stemmer") is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("getUserName", ["getusername", "get", "user", "name"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("parseHTTP2Request", ["parsehttp2request", "parse", "http", "2", "request"]),
        ("IOError", ["ioerror", "io", "error"]),
        ("user_name", ["user_name", "user", "name"]),
        ("MAX_RETRY_COUNT", ["max_retry_count", "max", "retry", "count"]),
        ("__init__", ["__init__", "init"]),
        ("os.path.join(a, b)", ["os", "path", "join", "a", "b"]),
        ("v2 2024", ["v2", "v", "2", "2024"]),
        ("The Angular router!", ["the", "angular", "router"]),
        ("naïveCafé", ["naïvecafé", "naïve", "café"]),
        ("x => y; /* */ ___", ["x", "y"]),
        ("", []),
    ],
)
def test_code_tokenizer_splits_identifiers_and_keeps_them_whole(text: str, expected: list[str]) -> None:
    assert Tokenizer()(text) == expected


def test_without_compound_only_parts_remain() -> None:
    assert Tokenizer(keep_compound=False)("getUserName user_name x") == ["get", "user", "name", "user", "name", "x"]


def test_without_splitting_identifiers_stay_whole() -> None:
    tok = Tokenizer(split_identifiers=False)
    assert tok("getUserName user_name e.g. don't John's 3.14") == [
        "getusername",
        "user_name",
        "e.g",
        "don't",
        "john",
        "3.14",
    ]


def test_stopwords_lucene_english_and_custom() -> None:
    assert len(LUCENE_ENGLISH_STOPWORDS) == 33
    assert Tokenizer(stopwords="lucene-english")("The value of this is not set") == ["value", "set"]
    assert Tokenizer(stopwords=["Foo"])("foo fooBar bar") == ["foobar", "bar", "bar"]
    with pytest.raises(FreshStackError, match="unknown stopword list 'french'"):
        Tokenizer(stopwords="french")


def test_repeated_words_hit_the_cache_and_give_equal_results() -> None:
    tok = Tokenizer()
    first = tok("fooBar fooBar")
    assert first == ["foobar", "foo", "bar"] * 2
    assert tok.tokenize_many(["fooBar", "fooBar"]) == [["foobar", "foo", "bar"]] * 2


def test_config_round_trip() -> None:
    tok = Tokenizer(keep_compound=False, stopwords=["b", "a"])
    config = tok.to_config()
    assert config == {"split_identifiers": True, "keep_compound": False, "stopwords": ["a", "b"], "stemmer": None}
    again = Tokenizer.from_config(config)
    assert again("A fooBar b") == tok("A fooBar b") == ["foo", "bar"]
    assert "keep_compound=False" in repr(tok)


def test_unknown_preset() -> None:
    with pytest.raises(FreshStackError, match="unknown tokenizer preset 'bert'; choose one of code, lucene-english"):
        Tokenizer.preset("bert")
    assert Tokenizer.preset("code")("getX") == ["getx", "get", "x"]


def test_stemming_without_pystemmer_names_the_package(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "Stemmer", None)  # makes `import Stemmer` fail as if not installed
    with pytest.raises(FreshStackError, match="needs the PyStemmer package: pip install PyStemmer"):
        Tokenizer(stemmer="porter")
    with pytest.raises(FreshStackError, match="PyStemmer"):
        Tokenizer.preset("lucene-english")


@pytest.mark.skipif(not HAS_STEMMER, reason="PyStemmer is not installed")
def test_lucene_english_preset_stems_like_pyserini() -> None:
    # Anserini's BagOfWordsQueryGeneratorTest: "sample query" -> sampl, queri; "Mary had a little lamb".
    tok = Tokenizer.preset("lucene-english")
    assert tok("sample query") == ["sampl", "queri"]
    assert tok("Mary had a little lamb") == ["mari", "had", "littl", "lamb"]


def test_tokenize_many_with_progress_bar() -> None:
    assert Tokenizer().tokenize_many(["a b", "c"], show_progress=True) == [["a", "b"], ["c"]]
