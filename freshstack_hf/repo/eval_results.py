"""The benchmark's scores in the Hub's `.eval_results` convention: the task ids, the entries and their files.

A model repo keeps its evaluation results as YAML entries under `.eval_results/` (benchmark dataset id, task id,
dataset revision, value, date, source); the Hub shows them on the model page and gathers them into the benchmark
dataset's leaderboard. Entries of this benchmark name one of the task ids below, declared here once and used by the
dataset card (which lists them, so an entry written by hand uses the same ids), the board's verified entries and the
board's reading of the Hub's reports:

* the all-topics average of a headline measure: its id with `_` for `@` (`alpha_ndcg_10`, `coverage_20`,
  `recall_50`, the keys of the official FreshStack leaderboard's figures);
* one topic's value: the topic, `-`, then that id (`langchain-alpha_ndcg_10`);
* either of them scored on each query's candidates (`T-top_ranked`, a reranker's task, or a model's on the Nano
  track) rather than the whole corpus: the same id and `-reranking` (`alpha_ndcg_10-reranking`), since a value over a
  hundred candidates is not comparable with one over the corpus.

A topic name never holds `-`, so an id reads back one way.

Values are the measures' own scale (0 to 1, full precision), the average the plain mean of the snapshot's topics
(`metrics.topic_average`, the board's rule). One file per snapshot scored (`results_path`), since a model measured on
two snapshots has two sets of values of the same tasks. Files are written and read with `huggingface_hub`'s own
types (`EvalResultEntry`, `eval_result_entries_to_yaml`, `parse_eval_result_entries`), imported where used.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from freshstack_hf.errors import FreshStackError
from freshstack_hf.metrics.engine import topic_average
from freshstack_hf.metrics.measures import HEADLINE, Measure
from freshstack_hf.topic import TOPIC_NAME_RE

if TYPE_CHECKING:
    from huggingface_hub import EvalResultEntry

FOLDER = ".eval_results"
PREFIX = "freshstack"  # every file of this benchmark: `.eval_results/freshstack-SNAPSHOT.yaml`
SEPARATOR = "-"  # between a topic and a measure's key (a topic name is letters, digits and `_` only)
RERANKING = "reranking"  # the last part of a reranking task's id
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_SNAPSHOT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
SHORT_COMMIT = 12  # a file named after a commit (a snapshot with no dated name) keeps this many of its digits


def measure_key(measure: Measure) -> str:
    """`alpha_ndcg@10` -> `alpha_ndcg_10`: the task id of its average."""
    return measure.id.replace("@", "_")


@dataclass(frozen=True, slots=True)
class Task:
    """One task id: a headline measure's all-topics average (`topic` None) or its value on one topic, over the whole
    corpus or (`reranking`) over each query's candidates."""

    measure: Measure
    topic: str | None = None
    reranking: bool = False

    @property
    def id(self) -> str:
        parts = [
            *([self.topic] if self.topic else []),
            measure_key(self.measure),
            *([RERANKING] if self.reranking else []),
        ]
        return SEPARATOR.join(parts)

    @property
    def label(self) -> str:
        """What the task scores, as the card and the board name it."""
        scope = f"{self.measure.name} on `{self.topic}`" if self.topic else f"{self.measure.name}, mean of the topics"
        return scope + (", reranking the candidates" if self.reranking else "")


def tasks(topics: Iterable[str], reranking: bool = False) -> list[Task]:
    """Every task of a dataset of `topics` (of retrieval, or of reranking): the three averages, then each topic's
    three values."""
    return [Task(m, None, reranking) for m in HEADLINE] + [Task(m, t, reranking) for t in topics for m in HEADLINE]


def parse_task_id(text: str) -> Task:
    """The task a task id names (any topic name is accepted: the dataset decides which it has); refused, naming the
    ids this benchmark uses, when it names none."""
    raw = str(text).strip()
    parts = raw.split(SEPARATOR)
    reranking = len(parts) > 1 and parts[-1] == RERANKING
    parts = parts[:-1] if reranking else parts
    measure = next((m for m in HEADLINE if measure_key(m) == parts[-1]), None)
    topic = parts[0] if len(parts) == 2 else None
    if measure is None or len(parts) > 2 or (len(parts) == 2 and not TOPIC_NAME_RE.match(parts[0])):
        known = ", ".join(measure_key(m) for m in HEADLINE)
        example = f"langchain{SEPARATOR}{measure_key(HEADLINE[0])}"
        raise FreshStackError(
            f"task id {raw[:60]!r} is not one of this benchmark's: {known} (the all-topics averages) or "
            f"TOPIC{SEPARATOR}MEASURE (e.g. {example}), each followed by {SEPARATOR}{RERANKING} when scored on the "
            "candidates"
        )
    return Task(measure, topic, reranking)


def results_path(snapshot: str) -> str:
    """Where a model repo keeps its results on one snapshot: `.eval_results/freshstack-2025-10-31.yaml` (a snapshot
    named by its commit: that commit's first 12 digits)."""
    name = snapshot[:SHORT_COMMIT] if _COMMIT.match(snapshot) else snapshot
    if not _SNAPSHOT.match(name) or ".." in name:
        raise FreshStackError(f"snapshot {snapshot[:60]!r} cannot name a file: letters, digits, '.', '_', '-' only")
    return f"{FOLDER}/{PREFIX}-{name}.yaml"


def entries_for(
    values: Mapping[str, Mapping[str, float]],
    topics: Sequence[str],
    *,
    reranking: bool = False,
    dataset_id: str,
    dataset_revision: str,
    date: str | None = None,
    source_url: str | None = None,
    source_name: str | None = None,
    notes: str | None = None,
) -> list[EvalResultEntry]:
    """The entries of one system on one snapshot: `values` (topic -> measure id -> value) of the headline measures,
    each topic's as given and, when every one of `topics` (the snapshot's, in its order) has one, their average, as
    the tasks of retrieval or (`reranking`) of reranking; the rest of an entry is the same for all. A value that is
    no finite number is refused (the Hub would show it)."""
    from huggingface_hub import EvalResultEntry

    shared = {
        "dataset_id": dataset_id,
        "dataset_revision": dataset_revision,
        "date": date,
        "source_url": source_url,
        "source_name": source_name,
        "notes": notes,
    }
    found: list[tuple[Task, float]] = []
    for m in HEADLINE:
        average = topic_average({t: v for t in topics if (v := values.get(t, {}).get(m.id)) is not None}, topics)
        if average is not None:
            found.append((Task(m, None, reranking), average))
    found += [(Task(m, t, reranking), values[t][m.id]) for t in topics for m in HEADLINE if m.id in values.get(t, {})]
    entries = []
    for task, value in found:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise FreshStackError(f"{task.id}: {value!r} is not a finite number; no entry can hold it")
        entries.append(EvalResultEntry(task_id=task.id, value=float(value), **shared))
    return entries


def entries_yaml(entries: Sequence[EvalResultEntry]) -> str:
    """The text of a `.eval_results` file: `huggingface_hub`'s own form of the entries, floats written so they read
    back exactly (YAML writes a float's shortest round-trip form)."""
    from huggingface_hub import eval_result_entries_to_yaml

    return yaml.safe_dump(eval_result_entries_to_yaml(list(entries)), sort_keys=False, allow_unicode=True, width=1000)


def read_entries(text: str | bytes, where: str) -> list[EvalResultEntry]:
    """The entries of a `.eval_results` file's text (`huggingface_hub.parse_eval_result_entries`); a file that is no
    list of entries is refused, naming `where`."""
    from huggingface_hub import parse_eval_result_entries

    try:
        data: Any = yaml.safe_load(text)
        if not isinstance(data, list):
            raise TypeError(f"a list of entries, not {type(data).__name__}")
        return parse_eval_result_entries(data)
    except (yaml.YAMLError, TypeError, KeyError, AttributeError, ValueError) as exc:
        raise FreshStackError(f"{where}: not a readable .eval_results file ({type(exc).__name__}: {exc})") from None


def values_of(entries: Iterable[EvalResultEntry]) -> frozenset[tuple[str, str, str | None, Any]]:
    """What two files must share to hold "the same values": each entry's dataset, task, dataset revision and value
    (a date or a note reworded by the model's owner changes nothing)."""
    return frozenset((e.dataset_id, e.task_id, e.dataset_revision, e.value) for e in entries)
