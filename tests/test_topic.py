import pytest

from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.repo.reader import load_topic
from freshstack_hf.repo.tables import nuggets_table, official_queries_table, query_side_from_official, with_importance
from freshstack_hf.repo.writer import write_topics
from freshstack_hf.samples.synth import synth_topics
from freshstack_hf.topic import Topic, canonical_order


def _topic() -> Topic:
    return Topic(
        "t",
        queries=[Query("1", "T1", "B1", answer_text="a"), Query("2", "T2", "B2", answer_text="a")],
        nuggets=[Nugget("1_0", "1", "n"), Nugget("1_1", "1", "n"), Nugget("2_0", "2", "n")],
        docs=[Doc("r/a.md_0_5", "x"), Doc("r/b.md_0_5", "y"), Doc("r/c.md_0_5", "z")],
        judgments=[
            NuggetJudgment("1", "1_0", "r/a.md_0_5", 1),
            NuggetJudgment("1", "1_1", "r/a.md_0_5", 1),
            NuggetJudgment("1", "1_1", "r/b.md_0_5", 0),
            NuggetJudgment("2", "2_0", "r/c.md_0_5", 1),
        ],
    )


def test_a_topic_name_is_fixed_once_checked():
    """It names folders and splits: the writer trusts it because it cannot change after the check."""
    t = _topic()
    with pytest.raises(AttributeError):
        t.name = "../elsewhere"
    assert t.name == "t"


def test_query_text_is_title_space_body():
    assert Query("1", "How to x?", "body").text == "How to x? body"


def test_query_level_qrels_count_supported_nuggets_and_keep_zeros():
    assert _topic().qrels == {"1": {"r/a.md_0_5": 2, "r/b.md_0_5": 0}, "2": {"r/c.md_0_5": 1}}


def test_query_nuggets_and_nugget_qrels():
    t = _topic()
    assert t.query_nuggets == {"1": ["1_0", "1_1"], "2": ["2_0"]}
    assert t.nugget_qrels["1_1"] == {"r/a.md_0_5": 1, "r/b.md_0_5": 0}


def test_prefix_query_ids_do_not_capture_each_others_nuggets():
    # The official loader matches nuggets by string prefix, so query "1" would take "12_0"; we must not.
    t = Topic(
        "t",
        queries=[Query("1", "a", "b"), Query("12", "a", "b")],
        nuggets=[Nugget("1_0", "1", "n"), Nugget("12_0", "12", "n")],
        judgments=[NuggetJudgment("1", "1_0", "d1", 1), NuggetJudgment("12", "12_0", "d2", 1)],
    )
    assert t.query_nuggets == {"1": ["1_0"], "12": ["12_0"]}
    assert t.qrels == {"1": {"d1": 1}, "12": {"d2": 1}}


def test_lazy_topic_reads_nothing_until_used():
    calls = []

    def query_side():
        calls.append("q")
        return [Query("1", "a", "b")], [], []

    def docs():
        calls.append("d")
        return [Doc("r/x_0_1", "x")]

    t = Topic.lazy("lazy", query_side, docs)
    assert calls == []
    assert [q.query_id for q in t.queries] == ["1"]
    assert calls == ["q"]
    _ = t.nuggets, t.judgments
    assert calls == ["q"]  # one read serves all query-side records
    assert len(t.docs) == 1 and calls == ["q", "d"]


def test_judgment_converts_to_ir_measures_qrel_with_nugget_as_iteration():
    q = NuggetJudgment("1", "1_0", "d", 1).to_ir_measures()
    assert (q.query_id, q.doc_id, q.relevance, q.iteration) == ("1", "d", 1, "1_0")


def _shuffled() -> Topic:
    """Records in no particular order: nuggets of the second query first, a non-relevant judgment before a
    relevant one, a relevance of 2, a graded nugget, a nugget of no query and a judgment of no nugget."""
    return Topic(
        "t",
        queries=[Query("1", "T1", "B1"), Query("2", "T2", "B2")],
        nuggets=[
            Nugget("2_0", "2", "n20"),
            Nugget("1_1", "1", "n11", "vital"),
            Nugget("9_0", "9", "orphan"),
            Nugget("1_0", "1", "n10"),
        ],
        docs=[Doc("r/a.md_0_5", "x")],
        judgments=[
            NuggetJudgment("1", "1_1", "r/b.md_0_5", 0),
            NuggetJudgment("2", "2_0", "r/c.md_0_5", 2),
            NuggetJudgment("1", "1_1", "r/a.md_0_5", 1),
            NuggetJudgment("1", "1_7", "r/a.md_0_5", 1),
            NuggetJudgment("1", "1_0", "r/a.md_0_5", 0),
        ],
    )


def test_canonical_order_is_the_order_a_reader_rebuilds(tmp_path):
    t = canonical_order(_shuffled())
    assert [n.nugget_id for n in t.nuggets] == ["1_1", "1_0", "2_0"]
    assert [n.importance for n in t.nuggets] == ["vital", "", ""]
    assert [(j.nugget_id, j.doc_id, j.relevance) for j in t.judgments] == [
        ("1_1", "r/a.md_0_5", 1),
        ("1_1", "r/b.md_0_5", 0),
        ("1_0", "r/a.md_0_5", 0),
        ("2_0", "r/c.md_0_5", 1),
    ]
    assert t.queries == _shuffled().queries and t.docs == _shuffled().docs
    # the same records as the official config's round trip, and what the repo reads back
    for topic in [_shuffled(), _topic(), *synth_topics(["alpha"], 12, 80)]:
        ordered = canonical_order(topic)
        table = official_queries_table(topic)

        side = with_importance(query_side_from_official(table), nuggets_table(topic))
        assert (ordered.queries, ordered.nuggets, ordered.judgments) == side
        assert canonical_order(ordered).judgments == ordered.judgments  # a fixed point
    write_topics(tmp_path / "repo", [_shuffled()])
    back = load_topic(tmp_path / "repo", "t")
    assert (back.nuggets, back.judgments) == (
        canonical_order(_shuffled()).nuggets,
        canonical_order(_shuffled()).judgments,
    )
