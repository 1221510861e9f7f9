"""The column reader of plain TREC runs (`clean_trec_columns`) against the line reader (`stream_entries` +
`check_entries`): on every file, plain or tricky, `load_run` gives what the line reader gives (the same run in
the same order, the same tag, warnings and problems, or the same error), and the column reader really takes the
plain files, so a fast path that silently never runs would fail here too."""

from __future__ import annotations

import gzip
import random

import pyarrow as pa
import pytest

from freshstack_hf.errors import FreshStackError
from freshstack_hf.runs import IdColumn, columns, load_run
from freshstack_hf.runs.check import check_entries
from freshstack_hf.runs.columns import clean_trec_columns
from freshstack_hf.runs.parse import stream_entries

QUERIES = frozenset({"q1", "q2", "q3"})
DOCS = frozenset({"d1", "d2", "d3", "d4", "a b"})

PLAIN = "q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1e-3 bm25\nq2 Q0 d3 1 -0.5 bm25\nq2 Q0 d1 2 -7 bm25\n"
TAKEN = {  # files the column reader reads itself
    "plain": PLAIN,
    "no final newline": PLAIN.rstrip("\n"),
    "windows line ends": PLAIN.replace("\n", "\r\n"),
    "queries interleaved": "q1 Q0 d1 1 3 t\nq2 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq3 Q0 d4 1 0.5 t\nq2 Q0 d3 2 1 t\n",
    "scores Python reads": "q1 Q0 d1 1 1_000 t\nq1 Q0 d2 2 .5 t\nq1 Q0 d3 3 +2. t\nq1 Q0 d4 -4 1.00000000000000005 t\n",
    "ranks the line reader reads": "q1 Q0 d1 --1 2 t\nq1 Q0 d2 0002 1 t\n",
    "negative ranks one after another": "q1 Q0 d1 7 3 t\nq1 Q0 d2 -1 2 t\nq1 Q0 d3 -22 1 t\n",
}
DECLINED = {  # files it leaves to the line reader, which may accept, repair or refuse them
    "blank lines": PLAIN.replace("\n", "\n\n", 2),
    "tab separated": PLAIN.replace(" ", "\t"),
    "double space": PLAIN.replace("Q0 d1", "Q0  d1"),
    "trailing space": PLAIN.replace("bm25\n", "bm25 \n", 1),
    "doc id with a space": "q1 Q0 a b 1 2.5 t\nq1 Q0 d1 2 1.0 t\n",
    "non-ASCII id": "q1 Q0 dé 1 2.5 t\n",
    "non-breaking space": "q1\xa0Q0 d1 1 2.5 t\nq1 Q0 d2 2 1.0 t\n",
    "unit separator": "q1 Q0 d1\x1f 1 2.5 t\n",
    "byte-order mark": "\ufeff" + PLAIN,
    "nan score": "q1 Q0 d1 1 nan t\n",
    "word score": "q1 Q0 d1 1 high t\n",
    "rank not an integer": "q1 Q0 d1 1.5 2.5 t\n",
    "hexadecimal rank": "q1 Q0 d1 0x5 2.5 t\n",
    "signed rank": "q1 Q0 d1 +5 2.5 t\n",
    "minus inside a rank": "q1 Q0 d1 1 3 t\nq1 Q0 d2 2-1 2.5 t\n",
    "minus after a rank": "q1 Q0 d1 1- 2.5 t\n",
    "rank of minus signs only": "q1 Q0 d1 -- 2.5 t\n",
    "delete character": "q1 Q0 d1 1 2.5 t\x7f\n",
    "five columns": "q1 Q0 d1 1 2.5\n",
    "JSON text": '{"q1": {"d1": 1.0}}\n',
    "empty": "",
}
UNKNOWN_QUERIES = {  # taken, and in lenient mode dropped with check_entries' own warning and problems
    "unknown queries": "q9 Q0 d1 1 2.5 a\nq1 Q0 d1 1 1.0 b\nq8 Q0 d2 1 1.0 c\nq9 Q0 d2 2 1.0 a\nq2 Q0 d3 1 2 b\n",
    "only unknown queries": "q9 Q0 d1 1 2.5 a\nq8 Q0 d2 1 1.0 c\n",
}
NOT_CLEAN = {  # well formed, but check_entries has something to say: the column reader's run is not used
    "repeated doc": "q1 Q0 d1 1 2.5 t\nq1 Q0 d1 2 1.0 t\n",
    "unknown doc": "q1 Q0 d9 1 2.5 t\n",
    "too deep": "".join(f"q1 Q0 d{i} {i} {5 - i} t\n" for i in range(1, 5)),
}


def line_reader(path, **limits):
    entries, malformed, fmt = stream_entries(path)
    return check_entries(entries, source=str(path), malformed=malformed, fmt=fmt, **limits)


def outcome(fn):
    """What a reader gives: the loaded run with the order of its queries and docs, or the error's text."""
    try:
        loaded = fn()
    except FreshStackError as exc:
        return ("error", type(exc).__name__, str(exc))
    order = [(q, list(docs)) for q, docs in loaded.run.items()]
    return (loaded, order)


@pytest.mark.parametrize("case", [*TAKEN, *DECLINED, *UNKNOWN_QUERIES, *NOT_CLEAN])
@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("gzipped", [False, True])
@pytest.mark.parametrize("corpus", ["set", "column"])
@pytest.mark.parametrize("keep", [None, 1])
def test_load_run_equals_the_line_reader(tmp_path, case, strict, gzipped, corpus, keep):
    text = {**TAKEN, **DECLINED, **UNKNOWN_QUERIES, **NOT_CLEAN}[case]
    path = tmp_path / ("run.trec.gz" if gzipped else "run.trec")
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    docs = DOCS if corpus == "set" else IdColumn(pa.array(sorted(DOCS)))
    limits = {"query_ids": QUERIES, "doc_ids": docs, "max_depth": 3, "strict": strict, "keep": keep}
    assert outcome(lambda: load_run(path, **limits)) == outcome(lambda: line_reader(path, **limits))
    taken = clean_trec_columns(path) is not None
    assert taken == (case not in DECLINED), case
    if case in UNKNOWN_QUERIES and not strict:  # the column reader's own run, not a fallback, gave it
        loaded = load_run(path, **limits)
        assert loaded.warnings and loaded.problems and all(p.row for p in loaded.problems)


@pytest.mark.slow
@pytest.mark.parametrize("where", [0, 70_000])  # in the first block, or in a later one after plain lines
def test_bytes_that_are_not_utf8_are_left_to_the_line_reader(tmp_path, where):
    """Arrow's reader does not validate UTF-8 (the plain check declines every byte past ASCII): a run with a byte
    that is not UTF-8 is still refused by the line reader, with its own message."""
    plain = "".join(f"q1 Q0 d{i} {i} {1 / i:.6f} t\n" for i in range(1, where + 1)).encode()
    path = tmp_path / "run.trec"
    path.write_bytes(plain + b"q2 Q0 d\xff\xfe 1 2.5 t\n")
    assert clean_trec_columns(path) is None
    limits = {"query_ids": QUERIES, "doc_ids": None, "max_depth": None}
    fast, slow = outcome(lambda: load_run(path, **limits)), outcome(lambda: line_reader(path, **limits))
    assert fast == slow and fast[0] == "error" and "utf-8" in fast[2].lower()


def test_a_shuffled_release_shaped_run_is_taken_and_equal(tmp_path):
    """Several of the reader's 1 MB blocks (read on threads), queries interleaved across them."""
    rng = random.Random(7)
    lines = [f"q{q} Q0 repo/src/file_{rng.randrange(10**6)}.py_{d}_{d + 9} {d} {rng.random():.6f} run\n"
             for q in range(40) for d in range(1000)]  # fmt: skip
    rng.shuffle(lines)
    path = tmp_path / "run.trec"
    path.write_text("".join(lines), encoding="utf-8")
    assert clean_trec_columns(path) is not None
    fast, slow = outcome(lambda: load_run(path, keep=50)), outcome(lambda: line_reader(path, keep=50))
    assert fast == slow and all(len(docs) == 50 for docs in fast[0].run.values())


def test_ties_across_the_kept_depth_follow_the_tie_rule(tmp_path):
    """Where the docs tied at a query's cut straddle it, the doc ids decide (descending), as `top_docs` says; a
    query whose tied docs all fit is cut in bulk: both give what the line reader gives, scores and order."""
    lines = [f"q1 Q0 d{i} {i} {3 if i < 3 else 2} t\n" for i in range(1, 7)]  # d3..d6 tied at the cut of 4
    lines += [f"q2 Q0 e{i} {i} {10 - i} t\n" for i in range(1, 7)] + [f"q3 Q0 f{i} {i} 1.5 t\n" for i in range(1, 4)]
    path = tmp_path / "run.trec"
    path.write_text("".join(lines))
    corpus = IdColumn(pa.array([f"{p}{i}" for p in "def" for i in range(1, 7)]))
    limits = {"query_ids": QUERIES, "doc_ids": corpus, "keep": 4}
    fast, slow = outcome(lambda: load_run(path, **limits)), outcome(lambda: line_reader(path, **limits))
    assert fast == slow
    assert fast[1] == [("q1", ["d2", "d1", "d6", "d5"]), ("q2", ["e1", "e2", "e3", "e4"]), ("q3", ["f1", "f2", "f3"])]


def test_arrow_reads_every_score_as_python_float_does():
    """The column reader parses scores with Arrow and the line reader with `float`: on the forms runs carry (many
    digits, exponents, signs, leading and trailing dots, halfway cases), they must be the same double."""
    import numpy as np
    import pyarrow.compute as pc

    rng = random.Random(3)
    texts = []
    for _ in range(20_000):
        value = rng.uniform(-1, 1) * 10 ** rng.randint(-30, 30)
        form = rng.choice(["{!r}", "{:.6f}", "{:.17g}", "{:e}", "{:.25f}", "{:+.3E}", "{:.0f}."])
        texts.append(form.format(value))
    texts += ["0.1", ".5", "5.", "-0", "+7", "1e-320", "9007199254740993", "2.2250738585072011e-308", "1E5"]
    values = columns._block_scores(pa.array(texts))
    assert np.array_equal(values, np.array([float(t) for t in texts]))
    assert pc.cast(pa.array(["1_000"]), pa.string()).to_pylist() == ["1_000"]
    assert columns._block_scores(pa.array(["1_000", "2"])).tolist() == [1000.0, 2.0]  # Python's forms, read by it


def test_a_gzip_past_its_limit_is_refused_the_same_way(tmp_path):
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(PLAIN.encode() * 1000))
    with pytest.raises(FreshStackError, match="expands past 1,000 bytes once decompressed"):
        load_run(path, max_bytes=1000)
    assert clean_trec_columns(path, max_bytes=1000) is None
    plain = tmp_path / "run.trec"
    plain.write_text(PLAIN * 1000)
    assert clean_trec_columns(plain, max_bytes=1000) is None
    with pytest.raises(FreshStackError, match="expands past 1,000 bytes"):
        load_run(plain, max_bytes=1000)


def test_reading_a_run_by_columns_imports_no_pandas(tmp_path):
    """pyarrow imports pandas (a quarter of a second) as soon as it converts a Python or NumPy object: the column
    reader and the checks on its columns (corpus ids, repeats, the kept depth) never do, so `evaluate` starts
    without it."""
    import subprocess
    import sys

    import pyarrow.parquet as pq

    path, corpus = tmp_path / "run.trec", tmp_path / "corpus.parquet"
    path.write_text(TAKEN["queries interleaved"])
    pq.write_table(pa.table({"_id": sorted(DOCS)}), corpus)  # a corpus' ids as the dataset reads them
    code = (
        "import sys; from freshstack_hf.runs import load_run; "
        "from freshstack_hf.runs import IdColumn; from freshstack_hf.repo.reader import read_table; "
        f"ids = IdColumn(read_table({str(corpus)!r}, columns=['_id']).column('_id')); "
        f"loaded = load_run({str(path)!r}, query_ids={set(QUERIES)!r}, doc_ids=ids, keep=1); "
        "assert loaded.run['q1'] == {'d1': 3.0}; print('pandas' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert clean_trec_columns(path) is not None
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("ends", ["\n", "\r\n"])
def test_a_gzip_at_its_cap_is_judged_as_the_line_reader_judges_it(tmp_path, ends):
    """The column reader counts a gzip file's text from its fields (the line ends it cannot see); at every cap
    around the file's true size, `load_run` accepts or refuses exactly as the line reader does."""
    text = (PLAIN * 20).replace("\n", ends)
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(text.encode()))
    size, lines = len(text.encode()), text.count("\n")
    for cap in sorted({size - lines - 1, size - 2, size - 1, size, size + 1, size + lines, size + lines + 1}):
        fast = outcome(lambda cap=cap: load_run(path, max_bytes=cap))
        slow = outcome(lambda cap=cap: line_reader_capped(path, cap))
        assert fast == slow, cap
        assert (fast[0] == "error") == (cap < size), cap
    assert clean_trec_columns(path, max_bytes=size + lines) is not None  # well under its cap: read by columns
    assert clean_trec_columns(path, max_bytes=size - 1) is None


def line_reader_capped(path, cap):
    entries, malformed, fmt = stream_entries(path, max_bytes=cap)
    return check_entries(entries, source=str(path), malformed=malformed, fmt=fmt)


def test_a_gzip_cut_short_is_named_with_its_fix(tmp_path):
    path = tmp_path / "run.trec.gz"
    path.write_bytes(gzip.compress(PLAIN.encode() * 50)[:-12])  # the end-of-stream marker lost
    assert clean_trec_columns(path) is None
    with pytest.raises(FreshStackError, match=r"run\.trec\.gz is not a readable gzip file .*compress it again"):
        load_run(path)
