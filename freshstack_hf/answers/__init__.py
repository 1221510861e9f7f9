"""Scoring generated answers (the RAG track) against a topic's nuggets: by citation, exactly, and by a judge.

Typical use::

    from freshstack_hf import load_topic
    from freshstack_hf.answers import make_judge, read_answers, score_answers

    topic = load_topic("out/freshstack", "langchain")
    answers = read_answers("answers.jsonl", query_ids=set(topic.query_ids), doc_ids=topic.doc_ids)
    scores = score_answers([topic], answers, make_judge())  # offline heuristic; pass base_url/model for an LLM
    scores.topics["langchain"].metrics["citation_recall"], scores.judge

Nothing heavy is imported here: the `openai` client loads only when an `LLMJudge` sends its first request.
"""

from freshstack_hf.answers.baseline_answers import extractive_answers, llm_answers
from freshstack_hf.answers.judge import AssignTask, LLMJudge, OfflineJudge, default_judge_cache, make_judge
from freshstack_hf.answers.measures import ANSWER_MEASURES, AnswerMeasure
from freshstack_hf.answers.parse import (
    DEFAULT_MAX_WORDS,
    Answer,
    AnswerSet,
    Sentence,
    parse_answers,
    read_answers,
    to_trec_rag,
)
from freshstack_hf.answers.scores import AnswerScores, citation_scores, compare_answers, nugget_scores, score_answers

__all__ = [
    "ANSWER_MEASURES",
    "DEFAULT_MAX_WORDS",
    "Answer",
    "AnswerMeasure",
    "AnswerScores",
    "AnswerSet",
    "AssignTask",
    "LLMJudge",
    "OfflineJudge",
    "Sentence",
    "citation_scores",
    "compare_answers",
    "default_judge_cache",
    "extractive_answers",
    "llm_answers",
    "make_judge",
    "nugget_scores",
    "parse_answers",
    "read_answers",
    "score_answers",
    "to_trec_rag",
]
