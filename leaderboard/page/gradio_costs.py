"""What Gradio does per visitor that the board does not need, taken off the server's one event loop.

Fifty visitors arriving at once each open a session and ask for the table through Gradio's queue. On a Space's
two vCPUs, Gradio's own work on the event loop made every visitor wait for all the others
(`benchmarks/bench_visitors.py`, profiled with py-spy; the first two were 44% of the loop's time):

* **A new session computes the config of every block of the page** (`SessionState.__init__`: `get_config` of
  about 150 components, 20 to 30 ms) so that a deep link could later rebuild the page; the board has no deep-link
  button, and an event touches two or three blocks. `LazySessionState` computes a block's config the first time
  the session's config is read for it (each block's default once for all sessions), and all of them whenever the
  whole is read, so what any caller reads is what Gradio would have computed.
* **Every output value is walked for files to move into Gradio's cache** (`async_move_files_to_cache`, an
  `await` per element: a table page of 50 rows x 25 columns, with its shown text and styles, is 4,000 awaits,
  done twice per event), and again for file URLs (`add_root_url`). A value that holds no file dict (`holds_file`,
  one C pass) is returned as it is; one that may hold a file goes through Gradio's own walk unchanged.
* **A table update makes a new component** and Gradio derives its API schema from the data model three times
  (`Component.api_info`, pydantic's JSON schema); `api_info` keeps it per data model.
* **Matplotlib** is imported twice around every event, a failed search of the whole path where it is not
  installed; `NoMatplotlib` does what Gradio's manager does when the import fails: nothing.
* **The queue summarises every event it ever ran** after each one (`queue` has it do so every thousand).

`install()` puts them in place for the process (every Gradio app in it behaves the same as before, only cheaper);
the board calls it before serving. `tests/test_gradio_costs.py` checks each against Gradio's own, so a Gradio
release that changes one breaks a test rather than the board.
"""

from __future__ import annotations

import importlib.util
import os
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import gradio as gr
import gradio.processing_utils as processing_utils
import gradio.state_holder as state_holder
import gradio.utils as gradio_utils
import orjson
from gradio.components.base import Component
from gradio.data_classes import GradioModel, GradioRootModel

FILE_MARK = b"gradio.FileData"  # the `meta._type` of every file dict (`gradio_client.utils.is_file_obj_with_meta`)
_gradio_move = processing_utils.async_move_files_to_cache
_gradio_root_url = processing_utils.add_root_url
_GradioSession = state_holder.SessionState


class LazyConfigs(dict):
    """A session's block configs, each computed by `compute(block id)` when first read. Every block id counts as
    present from the start (as in Gradio's eagerly filled dict); reading the whole computes what is missing and
    gives the blocks in Gradio's order."""

    def __init__(self, ids: Iterable[int], compute: Callable[[int], dict[str, Any]]) -> None:
        super().__init__()
        self._order = list(ids)
        self._pending = dict.fromkeys(self._order)
        self._compute = compute

    def __missing__(self, key: int) -> dict[str, Any]:
        if key not in self._pending:
            raise KeyError(key)
        del self._pending[key]
        value = self._compute(key)
        super().__setitem__(key, value)
        return value

    def _fill(self) -> None:
        if not self._pending:
            return
        for key in list(self._pending):
            self.__missing__(key)
        ordered = {k: dict.__getitem__(self, k) for k in self._order if dict.__contains__(self, k)}
        later = {k: v for k, v in dict.items(self) if k not in ordered}
        dict.clear(self)
        dict.update(self, ordered)
        dict.update(self, later)

    def __setitem__(self, key: int, value: dict[str, Any]) -> None:
        self._pending.pop(key, None)
        super().__setitem__(key, value)

    def __contains__(self, key: object) -> bool:
        return key in self._pending or super().__contains__(key)

    def __len__(self) -> int:
        return super().__len__() + len(self._pending)

    def __iter__(self) -> Iterator[int]:
        self._fill()
        return super().__iter__()

    def get(self, key: int, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 (dict.get would not compute a pending one)

    def keys(self) -> Any:
        self._fill()
        return super().keys()

    def values(self) -> Any:
        self._fill()
        return super().values()

    def items(self) -> Any:
        self._fill()
        return super().items()


class _WithoutBlocks:
    """What `SessionState.__init__` reads of an app, with no block to compute a config for: the session is made
    as Gradio makes it, and `LazySessionState` then gives it the configs to compute on demand."""

    def __init__(self, blocks: Any) -> None:
        self.default_config = blocks.default_config
        self.blocks: dict[int, Any] = {}


class LazySessionState(_GradioSession):
    """Gradio's session state, its block configs computed when first read (`LazyConfigs`): the config of a block
    as the app built it is computed once for all sessions (`default_config`) and each session gets its own copy."""

    def __init__(self, blocks: Any) -> None:
        super().__init__(_WithoutBlocks(blocks))
        config = self.blocks_config
        ids = [k for k in config.blocks if k in blocks.blocks]
        self.config_values = LazyConfigs(ids, lambda k: default_config(config, k, config.blocks[k]))


_DEFAULTS: weakref.WeakKeyDictionary[Any, dict[str, Any]] = weakref.WeakKeyDictionary()  # block -> its config


def default_config(config: Any, key: int, block: Any) -> dict[str, Any]:
    """`config.config_for_block(key, [], block)`, computed once per block object (a block's config depends on the
    block alone, and the app's blocks do not change once it serves); each caller gets its own dict and `props`,
    the parts a session writes to."""
    made = _DEFAULTS.get(block)
    if made is None:
        made = _DEFAULTS[block] = config.config_for_block(key, [], block)
    return {**made, "props": dict(made["props"])} if "props" in made else dict(made)


def holds_file(value: Any) -> bool:
    """Whether `value` may hold a file dict Gradio would move into its cache or give a URL: one is marked by the
    string "gradio.FileData" (`is_file_obj_with_meta`), so a value whose JSON (orjson's, in C: a page of the
    table in a fraction of a millisecond) has no such string holds none. Anything orjson cannot write, or a
    model Gradio would dump first, counts as maybe holding one: Gradio's own walk then decides."""
    if isinstance(value, (GradioModel, GradioRootModel)):
        return True
    try:
        written = orjson.dumps(value, default=_maybe_file, option=orjson.OPT_NON_STR_KEYS)
    except Exception:  # whatever orjson refuses, Gradio's own walk handles as before
        return True
    return FILE_MARK in written


def _maybe_file(_value: Any) -> str:
    return FILE_MARK.decode()


async def move_files_to_cache(data: Any, block: Any, *args: Any, **kwargs: Any) -> Any:
    """Gradio's `async_move_files_to_cache`, skipped for a value that holds no file (returned as it is)."""
    if not holds_file(data):
        return data
    return await _gradio_move(data, block, *args, **kwargs)


def add_root_url(data: Any, root_url: str, previous_root_url: str | None) -> Any:
    """Gradio's `add_root_url` (the file URLs of an event's output made absolute), skipped for a value that
    holds no file."""
    if not holds_file(data):
        return data
    return _gradio_root_url(data, root_url, previous_root_url)


class NoMatplotlib:
    """Gradio's `MatplotlibBackendMananger` where matplotlib is not installed: Gradio's tries to import it twice
    around every event (two searches of the whole path that fail, on the event loop); this does nothing, which is
    what Gradio's does when the import fails."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_SCHEMAS: dict[type, dict[str, Any]] = {}  # data model class -> the API schema Gradio derives from it
_gradio_api_info = Component.api_info


def api_info(self: Component) -> dict[str, Any]:
    """Gradio's `Component.api_info`, whose schema it derives from the component's data model (pydantic's JSON
    schema generation, about a millisecond) and keeps per component: kept per data model here, since a table
    update makes a new component each time (`Blocks.postprocess_data`) and asked for it three times on the event
    loop."""
    model = None if self._api_info_cache is not None else self.data_model
    if not isinstance(model, type):
        return _gradio_api_info(self)
    if model not in _SCHEMAS:
        _SCHEMAS[model] = _gradio_api_info(self)
    self._api_info_cache = _SCHEMAS[model]
    return self._api_info_cache


ANALYTICS_EVERY_ENV = "GRADIO_ANALYTICS_CACHE_FREQUENCY"  # read by Gradio's queue when it is made


def queue(demo: gr.Blocks, **options: Any) -> None:
    """`demo.queue(**options)`, its events summarised every thousand (unless the operator set it): Gradio's queue
    summarises every event it has ever run (a pandas frame of all of them, grouped, percentiles) after each event
    by default, for a monitoring page the board does not serve, a cost on every table request that grows with the
    board's age."""
    os.environ.setdefault(ANALYTICS_EVERY_ENV, "1000")
    demo.queue(**options)


def install() -> None:
    """Put them in place for this process (idempotent), and pay now what the first table event would import."""
    processing_utils.async_move_files_to_cache = move_files_to_cache
    processing_utils.add_root_url = add_root_url
    Component.api_info = api_info  # type: ignore[method-assign]
    if importlib.util.find_spec("matplotlib") is None:
        gradio_utils.MatplotlibBackendMananger = NoMatplotlib  # type: ignore[misc]
    state_holder.SessionState = LazySessionState
    # Gradio's `Dataframe.postprocess` imports polars, where it is installed, on its first call: 0.3 s on the event
    # loop, which the first fifty visitors all waited for.
    gr.Dataframe(render=False).postprocess({"headers": ["a"], "data": [[1]]})
