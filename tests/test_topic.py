from freshstack_hf.records import Doc, Nugget, NuggetJudgment, Query
from freshstack_hf.topic import Topic


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
