"""FreshStack as MTEB tasks: `FreshStack` (full-corpus retrieval) and `FreshStackReranking` (fixed candidates).

Both read a dataset repo through freshstack_hf (a local folder or a Hub id, see `loaders.source`), run the
model through mteb's own retrieval machinery, and score its ranking with freshstack_hf's evaluator, so the
numbers in mteb's result file equal `freshstack-hf evaluate` on the same ranking. To check that, or to keep
the ranking, each topic's ranking is written as a TREC run (`{task}_{topic}.trec`, scores at full precision,
by freshstack_hf.runs) into FRESHSTACK_SAVE_RUN and into mteb's `--prediction-folder` when either is given.

    import mteb
    from loaders.mteb_tasks import FreshStack

    mteb.evaluate(mteb.get_model("sentence-transformers/all-MiniLM-L6-v2"), [FreshStack()])
    mteb.evaluate(model, [FreshStack(source="out/freshstack", topics=["langchain"])])
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from datasets import Dataset as HFDataset
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.timing import TimingStack

from freshstack_hf.errors import FreshStackError
from freshstack_hf.repo.dataset import Dataset, open_dataset
from freshstack_hf.runs import write_run
from freshstack_hf.topic import Topic
from loaders.mteb_metadata import K_VALUES, NUGGET_MEASURES, metadata_fields, score_key
from loaders.source import PUBLISHED_DATASET, PUBLISHED_REVISION, PUBLISHED_TOPICS, DatasetSource, dataset_source

log = logging.getLogger(__name__)

ENV_SAVE_RUN = "FRESHSTACK_SAVE_RUN"
_PUBLISHED = DatasetSource(PUBLISHED_DATASET, PUBLISHED_REVISION)


class FreshStack(AbsTaskRetrieval):
    """FreshStack retrieval: each topic's queries against its full corpus, scored with nugget-aware measures.

    `source` / `revision` default to FRESHSTACK_DATASET / FRESHSTACK_REVISION (see `loaders.source`);
    `topics` restricts the subsets. The repo is only listed here (a manifest read); data loads in `load_data`.
    """

    # Class-level metadata describes the published repo, so mteb can list and filter the task without I/O.
    metadata = TaskMetadata(**metadata_fields("FreshStack", "Retrieval", _PUBLISHED, list(PUBLISHED_TOPICS)))
    k_values: Sequence[int] = K_VALUES
    task_type = "Retrieval"

    def __init__(
        self,
        source: str | os.PathLike[str] | None = None,
        revision: str | None = None,
        topics: Sequence[str] | None = None,
        **kwargs: Any,
    ) -> None:
        self.source: DatasetSource = dataset_source(source, revision)
        available = self.source.topics()
        if not available:
            raise FreshStackError(
                f"{self.source.location}: no topics found; point FRESHSTACK_DATASET at a dataset repo folder "
                "(e.g. one written by `freshstack-hf synth`) or a Hub id"
            )
        chosen = list(topics) if topics is not None else available
        unknown = sorted(set(chosen) - set(available)) or ([] if chosen else ["(none chosen)"])
        if unknown:
            raise FreshStackError(
                f"{self.source.location}: topics {', '.join(unknown)} not in this dataset repo "
                f"(it has: {', '.join(available)}); choose among those or set FRESHSTACK_DATASET"
            )
        fields = metadata_fields(type(self).metadata.name, self.task_type, self.source, chosen)
        self.metadata = TaskMetadata(**fields)
        self._data: Dataset | None = None  # the repo, opened in load_data
        self._run_folders: list[Path] = []
        self._run_tag = "run"
        super().__init__(**kwargs)

    # ---- data --------------------------------------------------------------------------------------
    def load_data(self, num_proc: int | None = None, *, timer: TimingStack | None = None, **kwargs: Any) -> None:
        """Read each wanted topic through freshstack_hf (one code path for folders and Hub ids)."""
        if self.data_loaded:
            return
        timer = timer or TimingStack()
        self.dataset = {}
        with timer("Data loading", log_message=f"Loading {self.metadata.name} from {self.source.location}..."):
            try:
                self._data = open_dataset(self.source.location, self.source.revision)
                for topic_name in self.hf_subsets:
                    self.dataset[topic_name] = {"test": self._split_data(self._data.topic(topic_name))}
            except FreshStackError as exc:
                raise FreshStackError(f"{exc} [{self.metadata.name} reads FRESHSTACK_DATASET]") from exc
        self.data_loaded = True

    def _split_data(self, topic: Topic) -> RetrievalSplitData:
        queries = _as_dataset((q.query_id, q.text) for q in topic.queries)
        corpus = _as_dataset((d.doc_id, d.text) for d in topic.docs)
        return RetrievalSplitData(corpus=corpus, queries=queries, relevant_docs=topic.qrels, top_ranked=None)

    def unload_data(self) -> None:
        """mteb drops instance metadata on unload (to restore the published one); this task's is its repo's."""
        metadata = self.metadata
        super().unload_data()
        self.metadata = metadata
        self._data = None

    # ---- scoring -----------------------------------------------------------------------------------
    def _evaluate_subset(self, model: Any, data_split: RetrievalSplitData, **kwargs: Any) -> dict[str, Any]:
        """Note where runs go and how to tag them; mteb passes neither to `task_specific_scores`."""
        self._run_folders = [Path(p) for p in (os.environ.get(ENV_SAVE_RUN), kwargs.get("prediction_folder")) if p]
        meta = getattr(model, "mteb_model_meta", None)
        self._run_tag = meta.model_name_as_path() if meta is not None and meta.name else "run"
        return super()._evaluate_subset(model, data_split, **kwargs)

    def task_specific_scores(
        self,
        scores: dict[str, dict[str, float]],
        qrels: Mapping[str, Mapping[str, int]],
        results: dict[str, dict[str, float]],
        hf_split: str,
        hf_subset: str,
    ) -> dict[str, float]:
        """alpha-nDCG, Coverage and Recall of mteb's ranking, from freshstack_hf (recall overrides mteb's)."""
        assert self._data is not None, "load_data runs before scoring"
        scores = self._data.score({hf_subset: results}, by_topic=True, measures=NUGGET_MEASURES, resamples=0)
        result = scores.topics[hf_subset]
        for folder in self._run_folders:
            path = write_run(results, folder / f"{self.metadata.name}_{hf_subset}.trec", tag=self._run_tag)
            log.info("wrote run %s", path)
        return {score_key(m): result.metrics[m.id] for m in NUGGET_MEASURES}


class FreshStackReranking(FreshStack):
    """FreshStack reranking: each query's hybrid candidates (`T-top_ranked`) reordered by the model."""

    metadata = TaskMetadata(**metadata_fields("FreshStackReranking", "Reranking", _PUBLISHED, list(PUBLISHED_TOPICS)))
    task_type = "Reranking"

    def _split_data(self, topic: Topic) -> RetrievalSplitData:
        """Corpus = the union of the topic's candidate lists; queries without candidates are left out."""
        assert self._data is not None, "load_data opens the repo first"
        candidates = self._data.candidates(topic.name)
        wanted = {doc_id for ids in candidates.values() for doc_id in ids}
        missing = wanted - topic.doc_ids
        if missing:
            raise FreshStackError(
                f"{self.source.location}: topic {topic.name!r} top_ranked lists {len(missing)} ids not in its "
                f"corpus (e.g. {sorted(missing)[0]!r}); rebuild the candidates with `freshstack-hf candidates`"
            )
        queries = _as_dataset((q.query_id, q.text) for q in topic.queries if candidates.get(q.query_id))
        corpus = _as_dataset((d.doc_id, d.text) for d in topic.docs if d.doc_id in wanted)
        top_ranked = {qid: list(ids) for qid, ids in candidates.items() if ids}
        # Keep every reordered candidate (lists run to 101 with the safeguard), not just mteb's top 100.
        self._top_k = max(self._top_k, *(len(ids) for ids in top_ranked.values()), 1)
        return RetrievalSplitData(corpus=corpus, queries=queries, relevant_docs=topic.qrels, top_ranked=top_ranked)


def _as_dataset(rows: Any) -> HFDataset:
    ids, texts = [], []
    for row_id, text in rows:
        ids.append(row_id)
        texts.append(text)
    return HFDataset.from_dict({"id": ids, "text": texts})
