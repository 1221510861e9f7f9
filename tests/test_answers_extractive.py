"""The answer baselines on hand-made docs: the extractive one (which sentences it copies, what they cite, its
limits) and the LLM one through the real `openai` client against the local chat-completions server."""

from __future__ import annotations

import pytest

from freshstack_hf.answers import extractive_answers, parse_answers, to_trec_rag
from freshstack_hf.records import Doc, Query
from freshstack_hf.topic import Topic

DOCS = [
    Doc("d/queues.md_0_1", "Queues let you defer work. Run the queue worker with artisan. Workers poll Redis."),
    Doc("d/cache.md_0_1", "Caching is fast. Clear the config cache after a deploy. Nothing else here matters."),
    Doc("d/code.md_0_1", "```bash\nphp artisan queue:work --tries=3\n```"),
    Doc("d/other.md_0_1", "An unrelated page about mail sending."),
]
TOPIC = Topic(
    "tiny",
    queries=[
        Query("1", "How do I run the queue worker?", "My queued jobs never run; I use artisan and redis."),
        Query("2", "Unanswerable", "No doc ranked."),
    ],
    docs=DOCS,
)


def test_copies_the_best_matching_sentences_in_doc_order_each_citing_its_doc():
    ranked = {"1": ["d/queues.md_0_1", "d/code.md_0_1", "d/cache.md_0_1", "d/other.md_0_1"], "2": ["missing"]}
    answers = extractive_answers(TOPIC, ranked, docs_per_answer=3, sentences_per_doc=2)
    assert list(answers.answers) == ["1"]  # query 2's only ranked doc is not in the corpus: no answer
    answer = answers.answers["1"]
    assert answer.references == ("d/queues.md_0_1", "d/code.md_0_1", "d/cache.md_0_1")  # top 3 only
    assert [(s.text, s.citations) for s in answer.sentences] == [
        # queues doc: "Run the queue worker with artisan." (queue, worker, run, artisan) and "Workers poll Redis."
        # (worker, redis) beat "Queues let you defer work." (queue), and keep the doc's order
        ("Run the queue worker with artisan.", ("d/queues.md_0_1",)),
        ("Workers poll Redis.", ("d/queues.md_0_1",)),
        # a code-only doc gives a one-line summary of its code, citing it
        ("Run: php artisan queue:work --tries=3", ("d/code.md_0_1",)),
        # no cache sentence matches the question: the two first (ties keep the doc's order)
        ("Caching is fast.", ("d/cache.md_0_1",)),
        ("Clear the config cache after a deploy.", ("d/cache.md_0_1",)),
    ]
    assert answers.run_id == "extractive-top3"
    # the file it writes is a valid TREC RAG answer file for the topic
    checked = parse_answers(to_trec_rag(answers), query_ids={"1", "2"}, doc_ids={d.doc_id for d in DOCS})
    assert checked.answers["1"].cited == ("d/queues.md_0_1", "d/code.md_0_1", "d/cache.md_0_1")


def test_the_word_cap_stops_the_answer_before_it_is_exceeded():
    ranked = {"1": ["d/queues.md_0_1", "d/cache.md_0_1"]}
    answer = extractive_answers(TOPIC, ranked, sentences_per_doc=2, max_words=9).answers["1"]
    assert [s.text for s in answer.sentences] == ["Run the queue worker with artisan.", "Workers poll Redis."]
    assert answer.words == 9


@pytest.mark.slow
def test_llm_answers_cite_the_documents_given_and_a_rerun_makes_no_request(tmp_path, llm_server):
    from freshstack_hf.answers.baseline_answers import llm_answers

    ranked = {"1": ["d/queues.md_0_1", "d/cache.md_0_1", "d/other.md_0_1", "d/code.md_0_1"]}
    options = {"base_url": llm_server.base_url, "model": "gen-model", "cache_path": tmp_path / "gen.sqlite"}
    answers = llm_answers(TOPIC, ranked, **options)
    assert llm_server.requests == 1  # query 2 has no ranked doc: nothing asked
    (answer,) = answers.answers.values()
    # the fake model answers with each document's first sentence, citing that document's number
    assert [(s.text, s.citations) for s in answer.sentences] == [
        ("Queues let you defer work.", ("d/queues.md_0_1",)),
        ("Caching is fast.", ("d/cache.md_0_1",)),
        ("An unrelated page about mail sending.", ("d/other.md_0_1",)),
    ]
    assert answers.run_id == "llm-top3:gen-model" and answer.references == tuple(ranked["1"][:3])
    assert llm_answers(TOPIC, ranked, **options).answers == answers.answers
    assert llm_server.requests == 1  # from the cache
    capped = llm_answers(TOPIC, ranked, **options, max_words=10).answers["1"]
    assert [s.text for s in capped.sentences] == ["Queues let you defer work.", "Caching is fast."]


def test_generated_answers_citing_a_document_not_given_are_refused():
    from freshstack_hf.answers.rag_prompts import answer_messages, parse_answer
    from freshstack_hf.llm.repair import ParseError

    user = answer_messages("Q?", ["first doc", "second doc"])[1]["content"]
    assert '<document id="2">\nsecond doc\n</document>' in user
    reply = '{"answer": [{"text": "A  b.", "citations": [2, 2, 1]}, {"text": "C.", "citations": []}]}'
    assert parse_answer(reply, 2) == [("A b.", [1, 0]), ("C.", [])]
    with pytest.raises(ParseError, match="cites document 3, but documents are numbered 1 to 2"):
        parse_answer('{"answer": [{"text": "x", "citations": [3]}]}', 2)
    with pytest.raises(ParseError, match="at least one sentence"):
        parse_answer('{"answer": []}', 2)
