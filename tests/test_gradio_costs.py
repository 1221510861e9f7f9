"""What the board does instead of Gradio's per-visitor work (`leaderboard.page.gradio_costs`, issue 38), checked
against Gradio's own on the real app: a session's block configs computed when read are the ones Gradio computes
up front; an output without a file is left as Gradio's walk would give it back, one with a file goes through
Gradio's walk; a component's API schema kept per data model is the one Gradio derives; the page of the table
sent as it is (`as_sent`) is what Gradio's postprocess sends. And the frame's change marker read outside its lock:
renders asking together share one read."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import gradio as gr
import pandas as pd
import pytest
from gradio import processing_utils

from leaderboard.page import gradio_costs
from leaderboard.page.app import build_app
from leaderboard.page.display import display
from leaderboard.page.store_frame import StoreFrame
from leaderboard.store.store import Store
from leaderboard.tracks.retrieval.tabs.snapshot_tables import as_sent


@pytest.fixture(scope="module")
def demo(lb_dataset, tmp_path_factory):
    store = Store(f"sqlite:///{tmp_path_factory.mktemp('costs') / 'board.db'}")
    app = build_app(lb_dataset, store)
    yield app
    store.close()


def _eager(demo: gr.Blocks) -> Any:
    return gradio_costs._GradioSession(demo)


@pytest.mark.slow
def test_a_sessions_configs_computed_when_read_are_the_ones_gradio_computes_up_front(demo):
    eager, lazy = _eager(demo), gradio_costs.LazySessionState(demo)
    ids = list(eager.config_values)
    assert len(ids) > 50 and len(lazy.config_values) == len(ids)  # every block counts from the start
    some = ids[len(ids) // 2]
    assert some in lazy.config_values and lazy.config_values[some] == eager.config_values[some]
    assert dict(lazy.config_values.items()) == eager.config_values  # the whole, as a deep link would read it
    assert list(lazy.components) == list(eager.components)
    # A session writes a value into its copy: no other session (nor the defaults kept for all) sees it.
    other = gradio_costs.LazySessionState(demo)
    lazy._update_value_in_config(some, "changed")
    if "props" in lazy.config_values[some]:
        assert lazy.config_values[some]["props"]["value"] == "changed"
        assert other.config_values[some]["props"].get("value") != "changed"
    assert gradio_costs.LazySessionState(demo).config_values[some] == eager.config_values[some]


def test_an_output_without_a_file_is_left_as_gradios_walk_gives_it_back_and_one_with_a_file_is_walked(demo):
    frame = pd.DataFrame({"system": ["a", "b"], "value": [0.5, None], "link": ["[x](https://x.org)", ""]})
    page = display(frame, rows=2)
    table = gr.Dataframe(render=False)
    assert not gradio_costs.holds_file(page)
    ours = asyncio.run(gradio_costs.move_files_to_cache(page, table, postprocess=True))
    assert ours == asyncio.run(gradio_costs._gradio_move(page, table, postprocess=True))
    assert gradio_costs.add_root_url(page, "http://h", None) == gradio_costs._gradio_root_url(page, "http://h", None)
    file = {
        "path": "https://example.org/a.csv",
        "url": "https://example.org/a.csv",
        "meta": {"_type": "gradio.FileData"},
    }
    nested = {"rows": [[1, 2], [file]]}
    assert gradio_costs.holds_file(nested) and gradio_costs.holds_file(object())  # unknown: Gradio decides
    assert gradio_costs.add_root_url(nested, "http://h", None) == gradio_costs._gradio_root_url(
        nested, "http://h", None
    )
    moved = asyncio.run(gradio_costs.move_files_to_cache(nested, table, postprocess=True))
    assert moved == asyncio.run(gradio_costs._gradio_move(nested, table, postprocess=True))


def test_api_schema_kept_per_data_model_is_gradios_and_install_puts_every_part_in_place(demo):
    made = [gr.Dataframe(render=False, label=f"table {i}") for i in range(3)]
    ours = [gradio_costs.api_info(component) for component in made]
    theirs = gradio_costs._gradio_api_info(gr.Dataframe(render=False))
    assert ours == [theirs] * 3
    assert gr.Number.api_info is not gr.components.Component.api_info  # a component with its own keeps it
    gradio_costs.install()
    assert processing_utils.async_move_files_to_cache is gradio_costs.move_files_to_cache
    assert processing_utils.add_root_url is gradio_costs.add_root_url
    assert gr.components.Component.api_info is gradio_costs.api_info
    assert gradio_costs.state_holder.SessionState is gradio_costs.LazySessionState


def test_a_page_sent_as_it_is_equals_gradios_postprocess_of_it():
    frame = pd.DataFrame({"system": ["a", "b", "c"], "average α-nDCG@10": [0.5, 0.25, None], "size": [1e8, 2e9, None]})
    value = display(frame, rows=3)
    sent = as_sent(value)
    assert sent == gr.Dataframe(render=False).postprocess(value).model_dump()
    assert gr.Dataframe(render=False).postprocess(sent).model_dump() == sent  # a second postprocess changes nothing
    assert sent["data"][0][0] == "a" and sent["metadata"]["display_value"][1][1] == "0.250"


class _SlowMarkerStore:
    """A store whose change marker takes a while to read, counting the reads."""

    def __init__(self) -> None:
        self.reads = 0
        self.gate = threading.Event()

    def change_marker(self) -> int:
        self.reads += 1
        self.gate.wait(30)
        return 1

    def build(self, _store: Any) -> pd.DataFrame:
        return pd.DataFrame({"id": ["1"]})


def test_renders_asking_together_share_the_marker_read_instead_of_queueing_behind_the_frames_lock():
    from leaderboard.store.database import SharedRead

    store = _SlowMarkerStore()
    shared = SharedRead(store.change_marker)  # what `Store.change_marker` is
    source = StoreFrame(type("S", (), {"change_marker": staticmethod(shared)})(), store.build)
    got: list[int] = []
    threads = [threading.Thread(target=lambda: got.append(len(source.frame()))) for _ in range(20)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)  # all twenty asked while the first read is held
    store.gate.set()
    for thread in threads:
        thread.join(30)
    assert got == [1] * 20 and store.reads <= 2  # under the lock, each would have read in turn: 20 reads


@pytest.mark.slow
def test_the_queue_summarises_its_events_every_thousand_not_after_each_one(demo, lb_dataset, tmp_path, monkeypatch):
    assert demo._queue.ANAYLTICS_CACHE_FREQUENCY == 1000  # a pandas frame of every event ever run, otherwise
    monkeypatch.setenv("GRADIO_ANALYTICS_CACHE_FREQUENCY", "7")  # an operator's own setting wins
    with Store(f"sqlite:///{tmp_path / 'other.db'}") as store:
        assert build_app(lb_dataset, store)._queue.ANAYLTICS_CACHE_FREQUENCY == 7
