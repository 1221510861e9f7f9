"""The registry of retrieval methods (`METHODS`) every consumer reads, and what a method is (`Method`).

One place decides what each method is made of, needs, is configured and named by, so the candidate lists, the
build's pooling retrievers, `freshstack-hf retrieve`, drift's systems, the leaderboard's baseline rows and its
answer rows cannot drift apart. Adding a method (a learned sparse model, a second dense model) is one module
calling `register_method`: every one of them then offers it. The built-in methods register in `builtin.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from freshstack_hf.baselines.retrievers import BaselineRun, CorpusMemo, Searched
from freshstack_hf.defaults import dense_retriever
from freshstack_hf.errors import FreshStackError

DENSE_MODEL, CROSS_ENCODER = "dense model", "cross-encoder"  # what a method may need its setup to name


@dataclass(frozen=True)
class Setup:
    """What the methods are configured with, known before anything is computed: each model as asked (a name or a
    folder; None for the packaged dense model) and, where a caller fingerprinted it, its id and file fingerprint
    (the leaderboard's dedupe keys hash those)."""

    dense_model: str | Path | None = None
    dense_id: str | None = None
    dense_files: str | None = None
    cross_encoder: str | Path | None = None
    cross_encoder_id: str | None = None
    cross_encoder_files: str | None = None


@dataclass
class Resources:
    """What computing runs shares across topics and methods: the setup, one dense retriever loaded on first use,
    and the caller's settings (embedding cache, devices, progress bars)."""

    setup: Setup = field(default_factory=Setup)
    cache_dir: str | Path | None = None
    device: str | None = None
    devices: list[str] | None = None
    show_progress: bool = False
    say: Callable[[str], None] = lambda _msg: None
    retriever: Any = None
    corpus: CorpusMemo | None = None  # set: BM25's index and the dense vectors are made once per corpus (`CorpusMemo`)
    _holding: ExitStack | None = field(default=None, init=False, repr=False)

    @contextmanager
    def pooled(self) -> Iterator[Resources]:
        """A block in which the dense retriever, made before or during it, keeps one encoding pool (several GPUs)
        for every topic and method: a pool costs seconds to start, a topic's queries far less to encode."""
        if self._holding is not None:  # an outer block holds it already
            yield self
            return
        with ExitStack() as stack:
            self._holding = stack
            try:
                self._hold_pool()
                yield self
            finally:
                self._holding = None

    def dense_retriever(self) -> Any:
        if self.retriever is None:
            settings = {"show_progress": self.show_progress, "device": self.device, "devices": self.devices}
            self.retriever = dense_retriever(self.setup.dense_model, cache_dir=self.cache_dir, **settings)
            self._hold_pool()
        return self.retriever

    def _hold_pool(self) -> None:
        pooled = getattr(self.retriever, "pooled", None)  # an endpoint's retriever has no processes to keep
        if self._holding is not None and pooled is not None:
            self._holding.enter_context(pooled())


@dataclass(frozen=True)
class Method:
    """A retrieval method run as a baseline: what it is made from, what it needs, how it is configured and named,
    and how it runs. The CLI's `retrieve`, the leaderboard's baseline rows, the Answers tab's answer rows, the
    build's pooling retrievers (`pooling.retrievers`) and drift's systems all read `METHODS`, so a new method is
    one module that calls `register_method`.

    * `inputs`: the methods whose runs this one is computed from (a fusion, a reranker), run first on each topic;
    * `needs`: what the setup must name (`DENSE_MODEL`, `CROSS_ENCODER`); a method needing a cross-encoder is a
      board row only when one is given;
    * `config(setup, inputs)`: everything that decides its run, given its inputs' configs (a board row's dedupe
      key hashes it, so it must not change for an existing method);
    * `label(setup)`: its board row's name; `title`: its short name in other rows' names (answer rows);
    * `run(topic, inputs, resources, k)`: its run on one topic (any `Searched`: the build pools with it before a
      topic has judgments), from its inputs' runs (k: depth, None = its own);
    * `answer_part(setup)`: what an answer row retrieving with it records of it (merged over its inputs too);
    * `board`: a default board row; `answers`: its rank as the answer rows' retrieval (lower first; None: not used);
    * `stored`: the candidate config a dataset repo keeps its run in (`top_ranked` holds the hybrid's, safeguard
      appended), which drift scores rather than running the method again; None: the repo keeps none.
    """

    name: str
    title: str
    config: Callable[[Setup, Mapping[str, dict[str, Any]]], dict[str, Any]]
    label: Callable[[Setup], str]
    run: Callable[[Searched, Mapping[str, BaselineRun], Resources, int | None], BaselineRun]
    answer_part: Callable[[Setup], dict[str, Any]] = lambda _setup: {}
    inputs: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    board: bool = True
    answers: int | None = None
    stored: str | None = None


METHODS: dict[str, Method] = {}


def register_method(method: Method) -> Method:
    """Add `method` (after its inputs); refused when the name is taken or an input is unknown."""
    if method.name in METHODS:
        raise FreshStackError(f"a retrieval method named {method.name!r} exists already")
    missing = [m for m in method.inputs if m not in METHODS]
    if missing:
        raise FreshStackError(f"method {method.name!r}: register its inputs {missing} first")
    METHODS[method.name] = method
    return method


def unregister_method(name: str) -> None:
    """Take a method off the registry (a test's toy method); an input of another method stays."""
    if any(name in m.inputs for m in METHODS.values()):
        raise FreshStackError(f"method {name!r} is an input of another method")
    METHODS.pop(name, None)


def method(name: str) -> Method:
    if name not in METHODS:
        raise FreshStackError(f"unknown retrieval method {name!r}: choose one of {', '.join(METHODS)}")
    return METHODS[name]


def runnable(setup: Setup | None = None) -> list[str]:
    """The methods `setup` can run, in registry order: one needing a cross-encoder only where the setup names one
    (a build's pooling and drift name none)."""
    setup = setup or Setup()
    return [name for name in METHODS if setup.cross_encoder or CROSS_ENCODER not in needs([name])]


def with_inputs(names: Iterable[str]) -> list[str]:
    """`names` and every method they are computed from, in the order they can be computed (registry order)."""
    wanted: set[str] = set()

    def add(name: str) -> None:
        if name not in wanted:
            wanted.add(name)
            for parent in method(name).inputs:
                add(parent)

    for name in names:
        add(name)
    return [m for m in METHODS if m in wanted]


def needs(names: Iterable[str]) -> set[str]:
    """What the setup must name for `names` and their inputs (`DENSE_MODEL`, `CROSS_ENCODER`)."""
    return {need for m in with_inputs(names) for need in METHODS[m].needs}


def configs(names: Iterable[str], setup: Setup) -> dict[str, dict[str, Any]]:
    """The config of each of `names` and of their inputs."""
    out: dict[str, dict[str, Any]] = {}
    for name in with_inputs(names):
        out[name] = METHODS[name].config(setup, {m: out[m] for m in METHODS[name].inputs})
    return out


def compute(
    topic: Searched, names: Iterable[str], resources: Resources, k: Mapping[str, int | None] | None = None
) -> dict[str, BaselineRun]:
    """The runs of `names` and of their inputs on `topic` ({method: run}); `k` gives some a depth of their own."""
    made: dict[str, BaselineRun] = {}
    with resources.pooled():
        for name in with_inputs(names):
            m = METHODS[name]
            made[name] = m.run(topic, {i: made[i] for i in m.inputs}, resources, (k or {}).get(name))
    return made


def run_method(topic: Searched, name: str, *, model: str = "", k: int | None = None, **settings: Any) -> BaselineRun:
    """One method's run on `topic` (`freshstack-hf retrieve`); its inputs run at their own depths."""
    resources = Resources(Setup(dense_model=model or None), **settings)
    return compute(topic, [method(name).name], resources, {name: k})[name]


def board_methods() -> list[str]:
    """The methods a board computes by default (`leaderboard --baselines`'s default)."""
    return [name for name, m in METHODS.items() if m.board]


def answer_retrieval(names: Iterable[str]) -> str:
    """The method the answer rows retrieve with among `names` (the lowest `answers` rank), else BM25."""
    usable = [METHODS[n] for n in names if n in METHODS and METHODS[n].answers is not None]
    return min(usable, key=lambda m: m.answers).name if usable else "bm25"
