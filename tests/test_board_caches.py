"""What lets many visitors read the board at once without each paying for a render (issue 31), without a server:
the store's change marker read once for the callers asking together, yet never older than a caller's question
(`SharedRead`); a view of the board's frame computed once per store state and key, however many ask at once, and
again after a write (`StoreFrame.view`); the page's HTML built once for identical requests, never shared across
hosts or cookies, never kept when it is not a plain page (`first_paint.PageCache`)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pandas as pd
import pytest

from leaderboard.page import first_paint
from leaderboard.page.store_frame import StoreFrame
from leaderboard.store.database import SharedRead


def _threads(target: Any, n: int) -> list[threading.Thread]:
    threads = [threading.Thread(target=target) for _ in range(n)]
    for thread in threads:
        thread.start()
    return threads


def _wait_until(condition: Any, limit: float = 30.0) -> None:
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < limit, "never happened"
        time.sleep(0.005)


def test_callers_arriving_during_a_read_share_the_next_one_never_the_older():
    reads, started, release = [], threading.Event(), threading.Event()

    def read() -> int:
        reads.append(len(reads) + 1)
        started.set()
        release.wait(30)
        return reads[-1]

    shared = SharedRead(read)
    got: list[int] = []
    first = threading.Thread(target=lambda: got.append(shared()))
    first.start()
    assert started.wait(30)
    later = _threads(lambda: got.append(shared()), 8)  # they ask while read 1 runs: read 1 may miss a write of theirs
    time.sleep(0.2)
    assert reads == [1]  # they wait for read 1 to end, rather than each starting its own
    release.set()
    for thread in [first, *later]:
        thread.join(30)
    assert reads == [1, 2] and sorted(got) == [1] + [2] * 8


def test_a_shared_read_that_fails_fails_for_whoever_shares_it_and_the_next_caller_reads_again():
    calls = []

    def read() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("database is locked")
        return "marker"

    shared = SharedRead(read)
    with pytest.raises(OSError, match="locked"):
        shared()
    assert shared() == "marker" and len(calls) == 2


class _Store:
    """A store whose change marker the test moves."""

    def __init__(self) -> None:
        self.marker, self.builds = 1, 0

    def change_marker(self) -> int:
        return self.marker

    def build(self, _store: Any) -> pd.DataFrame:
        self.builds += 1
        return pd.DataFrame({"id": ["1", "2"], "value": [0.5, 0.25]})


def test_a_view_is_computed_once_for_all_who_ask_at_once_and_again_after_a_write():
    store = _Store()
    source = StoreFrame(store, store.build)
    computed, gate = [], threading.Event()

    def render(frame: pd.DataFrame) -> list[str]:
        computed.append(1)
        gate.wait(30)  # the others arrive while this one computes
        return frame["id"].tolist()

    got: list[list[str]] = []
    threads = _threads(lambda: got.append(source.view(("page", 1), render)), 20)
    _wait_until(lambda: computed)
    time.sleep(0.1)
    gate.set()
    for thread in threads:
        thread.join(30)
    assert len(computed) == 1 and got == [["1", "2"]] * 20 and store.builds == 1
    assert source.view(("page", 2), render) == ["1", "2"] and len(computed) == 2  # another key: its own render
    store.marker = 2  # a worker or another process wrote
    assert source.view(("page", 1), render) == ["1", "2"] and len(computed) == 3 and store.builds == 2
    source.invalidate()  # this app wrote
    source.view(("page", 1), render)
    assert len(computed) == 4 and store.builds == 3


def test_a_failed_view_is_not_kept_and_the_oldest_view_goes_first():
    store = _Store()
    source = StoreFrame(store, store.build, views=2)
    with pytest.raises(KeyError):
        source.view("broken", lambda frame: frame["missing"])
    assert source.view("broken", lambda frame: len(frame)) == 2  # computed again, not the kept failure
    counted = []
    for key in ("a", "b", "a", "c"):  # "b" is then the least recently used of three: dropped
        source.view(key, lambda frame, key=key: counted.append(key))
    source.view("a", lambda frame: counted.append("a again"))
    source.view("b", lambda frame: counted.append("b again"))
    assert counted == ["a", "b", "c", "b again"]


def test_without_kept_views_every_request_renders():
    store = _Store()
    source = StoreFrame(store, store.build, views=0)
    counted = []
    for _ in range(3):
        source.view("a", lambda frame: counted.append(1))
    assert len(counted) == 3


def _scope(host: bytes = b"board", cookie: bytes | None = None, query: bytes = b"") -> dict[str, Any]:
    headers = [(b"host", host), (b"user-agent", b"test")] + ([(b"cookie", cookie)] if cookie else [])
    return {"type": "http", "method": "GET", "scheme": "http", "path": "/", "query_string": query, "headers": headers}


def _gradio_page(builds: list[dict[str, Any]], status: int = 200, cookie: bool = False) -> Any:
    """An index route answering like Gradio's: its HTML names the host it was asked for."""

    async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
        builds.append(scope)
        await asyncio.sleep(0.01)  # other requests arrive meanwhile
        host = dict(scope["headers"])[b"host"]
        headers = [(b"content-type", b"text/html; charset=utf-8")] + ([(b"set-cookie", b"a=1")] if cookie else [])
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"<html><head></head><body>" + host + b"</body></html>"})

    return asgi


def _requests(app: Any, scopes: list[dict[str, Any]]) -> list[tuple[int, bytes]]:
    """(status, body) of each request, all sent together to the ASGI `app`."""

    async def one(scope: dict[str, Any]) -> tuple[int, bytes]:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        async def receive() -> dict[str, Any]:
            return {"type": "http.request"}

        await app(scope, receive, send)
        return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])

    async def together() -> list[tuple[int, bytes]]:
        return list(await asyncio.gather(*(one(s) for s in scopes)))

    return asyncio.run(together())


def _get(app: Any, scope: dict[str, Any]) -> tuple[int, bytes]:
    return _requests(app, [scope])[0]


def test_the_page_is_built_once_for_identical_requests_and_apart_for_other_hosts_and_cookies():
    builds: list[dict[str, Any]] = []
    app = first_paint._with_script(_gradio_page(builds), b"<script>s</script>", pages=first_paint.PageCache())
    bodies = [body for _, body in _requests(app, [_scope()] * 30)]
    assert len(builds) == 1 and len(set(bodies)) == 1 and b"<script>s</script></head>" in bodies[0]
    assert _get(app, _scope(query=b"page=3"))[1] == bodies[0] and len(builds) == 1  # the table's own parameter
    assert b"elsewhere" in _get(app, _scope(host=b"elsewhere"))[1] and len(builds) == 2
    _get(app, _scope(cookie=b"session=alice"))
    _get(app, _scope(cookie=b"session=bob"))
    _get(app, _scope(cookie=b"session=alice"))
    assert len(builds) == 4  # one page per signed-in visitor, never another's


@pytest.mark.parametrize("answer", [{"status": 401}, {"cookie": True}], ids=["not-200", "sets-a-cookie"])
def test_a_page_that_is_not_plain_is_never_kept(answer):
    builds: list[dict[str, Any]] = []
    app = first_paint._with_script(_gradio_page(builds, **answer), b"", pages=first_paint.PageCache())
    for _ in range(3):
        status, _body = _get(app, _scope())
        assert status == answer.get("status", 200)
    assert len(builds) == 3


@pytest.mark.parametrize(("raw", "expected"), [("", 64), ("8", 8), ("0", 64), ("eight", 64), ("-3", 64)])
def test_a_read_concurrency_from_the_environment_is_a_whole_number_else_the_default(monkeypatch, caplog, raw, expected):
    from leaderboard import defaults

    monkeypatch.setenv(defaults.READ_CONCURRENCY_ENV, raw)
    assert defaults._count_from_env(defaults.READ_CONCURRENCY_ENV, 64, least=1) == expected
    assert (defaults.READ_CONCURRENCY_ENV in caplog.text) == (raw not in ("", "8"))  # a typo is said, not obeyed
