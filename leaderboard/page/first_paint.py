"""A plain first paint of the leaderboard's top rows, drawn before Gradio's JavaScript has started.

On a modest machine Gradio needs about a second to load and start its scripts before any component, the
table included, can show a row (a blank Gradio page measures 0.9 to 1.0 s here). The page's served HTML
therefore carries a small script that asks `ROUTE` for the rows of the view and page the address asks for
(`?topic=&sort=&order=&page=`, read by the same `parse_view` as the app) and draws them as a plain table
over the page. It removes itself as soon as the interactive table holds rows, so what the visitor reads first
is the same ranking, with the same three-decimal cells, as what follows.

A board with a notice (`build_app(notice=...)`, e.g. that its store is lost on restart) says it before any
script runs too: the served HTML carries the notice as plain markup at the top of its body, which gives way to
the page's own copy (`NOTICE_ID`, above the tabs) once Gradio has drawn it, and the plain table drawn over the
page repeats it, so no address of the board is ever shown without it.

Nothing from the store becomes markup: cells are set with `textContent`, and the notice is escaped. The script
is put into the HTML by wrapping the ASGI app of Gradio's index route, so Gradio's own handler (and its
dependencies, OAuth included) still produces the page. The same wrapper keeps the table's `?page=` away from
that handler, which would read it as the page of a multipage Gradio app (this app has one page) and fail on
`?page=2`.

The wrapper also keeps the finished page (`PageCache`): Gradio builds it anew for every request (its whole
config, 230 kB for this app, copied and rewritten: 20 ms of the interpreter), which fifty visitors arriving at
once paid one after another before any of them could ask for the first paint's rows. The page holds no row of
the store, only the app's layout, so one answer serves every request that Gradio would answer alike: the same
address, host and proxy headers, cookies and credentials.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from leaderboard.defaults import VIEW_CACHE_ENTRIES
from leaderboard.page.display import display

logger = logging.getLogger(__name__)
ROUTE = "/first-paint.json"
ELEMENT_ID = "first-paint"
NOTICE_ID = "board-notice"  # the page's notice above the tabs (`leaderboard.page.app`)
PLAIN_NOTICE_ID = "board-notice-first"  # its plain copy in the served HTML, until the page's own is drawn
OWN_PARAMS = ("page",)  # the table's query parameters that Gradio's index route also reads (its multipage page)
NOTICE_STYLE = (
    "margin:0;padding:10px 16px;background:#fff4e5;color:#5c3b00;border-bottom:2px solid #e8a33d;"
    "font-family:system-ui,sans-serif;font-size:15px;line-height:1.4"
)
BODY = re.compile(rb"<body\b[^>]*>")
# What Gradio's index route reads of a request besides its address: the root URL it writes into the page comes
# from the host and proxy headers, the signed-in user from the cookies or credentials.
PAGE_HEADERS = frozenset(
    {b"host", b"cookie", b"authorization", b"forwarded", b"x-forwarded-host", b"x-forwarded-proto",
     b"x-forwarded-port", b"x-forwarded-prefix"}
)  # fmt: skip

SCRIPT = """<script>(function () {
  var notice = %(notice)s;
  var data = fetch("%(route)s" + location.search).then(function (r) { return r.ok ? r.json() : null; });
  function ready() {
    var grid = document.querySelector("#leaderboard-table [role=grid]");
    return grid !== null && Number(grid.getAttribute("aria-rowcount")) > 1;
  }
  function cell(tag, text) { var c = document.createElement(tag); c.textContent = text; return c; }
  function draw(d) {
    if (!d || !d.rows.length || ready()) return;
    var box = document.createElement("div");
    box.id = "%(id)s";
    box.setAttribute("style", "position:fixed;inset:0;z-index:1000;overflow:auto;background:#fff;" +
      "padding:16px;font-family:system-ui,sans-serif;font-size:14px");
    if (notice) {
      var note = cell("p", notice);
      note.setAttribute("role", "note");
      note.setAttribute("style", "%(style)s");
      box.appendChild(note);
    }
    box.appendChild(cell("p", d.caption));
    var table = document.createElement("table"), thead = document.createElement("thead");
    var head = document.createElement("tr"), body = document.createElement("tbody");
    table.setAttribute("style", "border-collapse:collapse");
    d.headers.forEach(function (h) { head.appendChild(cell("th", h)); });
    thead.appendChild(head);
    table.appendChild(thead);
    d.rows.forEach(function (row) {
      var tr = document.createElement("tr");
      row.forEach(function (v) {
        var td = cell("td", v);
        td.setAttribute("style", "padding:2px 8px;white-space:nowrap");
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    box.appendChild(table);
    document.body.appendChild(box);
    var watch = new MutationObserver(function () { if (ready()) { watch.disconnect(); box.remove(); } });
    var what = {childList: true, subtree: true, attributes: true, attributeFilter: ["aria-rowcount"]};
    watch.observe(document.body, what);
  }
  (function wait() { if (document.body) { data.then(draw); } else { setTimeout(wait, 5); } })();
})();</script>"""


# The plain notice, put right after `<body>`: removed once Gradio has drawn the page's own (`NOTICE_ID`).
PLAIN_NOTICE = """<div id="%(id)s" role="note" style="%(style)s">%(text)s</div><script>(function () {
  var plain = document.getElementById("%(id)s");
  function drawn() { return document.getElementById("%(page_id)s") !== null; }
  var watch = new MutationObserver(function () { if (drawn()) { watch.disconnect(); plain.remove(); } });
  watch.observe(document.body, {childList: true, subtree: true});
})();</script>"""


def _js_string(text: str) -> str:
    """`text` as a JavaScript string literal that cannot close the `<script>` holding it."""
    return json.dumps(text).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def script(notice: str = "") -> bytes:
    """The first paint's script; the table it draws over the page opens with `notice`, when there is one."""
    return (SCRIPT % {"route": ROUTE, "id": ELEMENT_ID, "notice": _js_string(notice), "style": NOTICE_STYLE}).encode()


def notice_markup(notice: str) -> str:
    """The notice as one escaped paragraph, in the look the page's own copy and the plain one share."""
    return f'<p role="note" style="{NOTICE_STYLE}">{html.escape(notice)}</p>'


def plain_notice(notice: str) -> bytes:
    """The notice's plain copy for the served HTML (see `PLAIN_NOTICE`)."""
    values = {"id": PLAIN_NOTICE_ID, "page_id": NOTICE_ID, "style": NOTICE_STYLE, "text": html.escape(notice)}
    return (PLAIN_NOTICE % values).encode()


def payload(shown: Any, total: int, limit: int, start: int = 0) -> dict[str, Any]:
    """Headers, shown text of `limit` rows from `start` (one page, as the table formats it) and a caption."""
    drawn = display(shown, rows=limit, start=start)
    rows = drawn["metadata"]["display_value"] if drawn["metadata"] else []
    link = drawn["headers"].index("link") if "link" in drawn["headers"] else None
    if link is not None:  # a Markdown link cell reads as its host name in plain text
        rows = [[*r[:link], str(r[link]).split("](", 1)[0].lstrip("["), *r[link + 1 :]] for r in rows]
    rows = [["" if v is None else str(v) for v in r] for r in rows]
    stop = min(start + limit, len(shown))
    where = f"Top {stop}" if not start else f"Rows {start + 1:,}–{stop:,}"
    caption = f"{where} of {total:,} systems; the interactive table is loading…"
    return {"headers": drawn["headers"], "rows": rows, "caption": caption}


def _without(scope: Mapping[str, Any], names: tuple[str, ...]) -> Mapping[str, Any]:
    """The request `scope` with the query parameters `names` taken out (the browser's address keeps them)."""
    query = scope.get("query_string", b"").decode("latin-1")
    pairs = parse_qsl(query, keep_blank_values=True)
    if not any(key in names for key, _ in pairs):
        return scope
    kept = urlencode([(key, value) for key, value in pairs if key not in names])
    return {**scope, "query_string": kept.encode("latin-1")}


Answer = tuple[dict[str, Any], bytes]  # a finished page: its `http.response.start` message and its body


class PageCache:
    """Finished index pages by what Gradio's handler reads of a request (`key`), the `size` latest kept. Only a
    plain HTML answer (status 200, no cookie set) is kept. Requests for a page being built wait for it rather
    than build it again; all of it runs on the server's event loop, one coroutine at a time, so it needs no lock.
    """

    def __init__(self, size: int = VIEW_CACHE_ENTRIES) -> None:
        self.size = size
        self._pages: OrderedDict[tuple[Any, ...], asyncio.Future[Answer | None]] = OrderedDict()

    @staticmethod
    def key(scope: Mapping[str, Any]) -> tuple[Any, ...]:
        headers = sorted((k.lower(), v) for k, v in scope.get("headers", []) if k.lower() in PAGE_HEADERS)
        where = (scope.get("scheme"), scope.get("server"), scope.get("root_path", ""), scope.get("path"))
        return (*where, scope.get("query_string", b""), tuple(headers))

    async def answer(self, scope: Mapping[str, Any], build: Callable[[], Awaitable[Answer | None]]) -> Answer | None:
        """The page for `scope`: kept, being built, or built now by `build()` (None: not a page to keep)."""
        key = self.key(scope)
        found = self._pages.get(key)
        if found is not None:
            self._pages.move_to_end(key)
            answer = await asyncio.shield(found)
            if answer is not None:
                return answer
        mine: asyncio.Future[Answer | None] = asyncio.get_running_loop().create_future()
        if self.size:
            self._pages[key] = mine
            while len(self._pages) > self.size:
                self._pages.popitem(last=False)
        answer = None
        try:
            answer = await build()
        finally:
            kept = answer is not None and answer[0].get("status") == 200
            kept = kept and not any(k.lower() == b"set-cookie" for k, _ in answer[0].get("headers", []))
            mine.set_result(answer if kept else None)
            if not kept and self._pages.get(key) is mine:
                del self._pages[key]
        return answer


def _with_script(
    asgi: Callable[..., Any],
    snippet: bytes,
    own: tuple[str, ...] = OWN_PARAMS,
    warm: Callable[[Mapping[str, str]], Any] | None = None,
    top: bytes = b"",
    pages: PageCache | None = None,
) -> Callable[..., Any]:
    """The index route's ASGI app, with `snippet` put before `</head>` of its HTML answers (and `top`, when
    given, right after `<body ...>`), and without the table's own query parameters (`own`) in what Gradio's
    handler reads. With `warm`, once a page is sent,
    `warm(query params)` starts in a worker thread (nobody waits for it): the rows the page's script will ask for
    are then being computed while the browser is still reading the HTML. Not before the page is sent: the
    computation holds the interpreter, and Gradio builds the page in Python too. With `pages`, a page already
    built for an identical request is sent again (`PageCache`)."""

    async def app(scope: Mapping[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        page = scope.get("type") == "http" and scope.get("method") == "GET"
        params = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"))) if page else {}
        scope = _without(scope, own) if scope.get("type") == "http" else scope
        if not page:
            await asgi(scope, receive, send)
            return

        async def build() -> Answer | None:
            """Gradio's answer with the script put in; sent on as it comes when it is not an HTML page."""
            start: dict[str, Any] = {}
            chunks: list[bytes] = []
            finished: list[Answer] = []

            async def capture(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    start.update(message)
                    return
                if message["type"] != "http.response.body":
                    await send(message)
                    return
                chunks.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                body = b"".join(chunks)
                headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
                if any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers):
                    finished.append(({**start, "headers": headers}, _with_snippet(body, snippet, top)))
                else:
                    await _send(send, ({**start, "headers": headers}, body))

            await asgi(scope, receive, capture)
            return finished[0] if finished else None

        answer = await (pages.answer(scope, build) if pages is not None else build())
        if answer is not None:
            await _send(send, answer)
        if warm is not None:
            _started.add(asyncio.ensure_future(run_in_threadpool(_quietly, warm, params)))
            _started.difference_update([task for task in _started if task.done()])

    return app


def _with_snippet(page: bytes, snippet: bytes, top: bytes) -> bytes:
    """An HTML page with `snippet` put before `</head>` and `top`, when given, right after `<body ...>`."""
    page = page.replace(b"</head>", snippet + b"</head>", 1)
    return BODY.sub(lambda found: found.group() + top, page, count=1) if top else page


async def _send(send: Callable[..., Any], answer: Answer) -> None:
    start, body = answer
    await send({**start, "headers": [*start["headers"], (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


_started: set[asyncio.Future[Any]] = set()  # warm-ups under way (a task nobody holds may be collected early)


def _quietly(warm: Callable[[Mapping[str, str]], Any], params: Mapping[str, str]) -> None:
    """A warm-up's failure is the first-paint request's to report (it computes the same rows), not the page's."""
    try:
        warm(params)
    except Exception:  # logged here; the first-paint request that follows raises it again
        logger.debug("first-paint warm-up failed", exc_info=True)


def install(server_app: Any, rows: Callable[[Mapping[str, str]], dict[str, Any]], notice: str = "") -> bool:
    """Add `ROUTE` (answered by `rows(query params)`) and the script to the index page of a started Gradio app;
    once a page is sent, its rows are computed before the script asks for them (`_with_script`'s `warm`). With
    a `notice`, the page's HTML carries it as plain markup and the plain table opens with it.

    Returns False, changing nothing, when the app has no index route of the expected kind (a Gradio release
    that serves its page otherwise): the page then simply has no first paint.
    """
    routes = server_app.router.routes
    index = next((r for r in routes if getattr(r, "path", None) == "/" and "GET" in (r.methods or ())), None)
    if index is None or not hasattr(index, "app"):
        return False

    async def endpoint(request: Request) -> JSONResponse:
        # In a worker thread: after a write the rows take a store read and the rank bootstrap, and on the server's
        # event loop they would hold back Gradio's scripts, which the browser is fetching at the same moment.
        answer = await run_in_threadpool(rows, dict(request.query_params))
        return JSONResponse(answer)  # plain strings and numbers already

    top = plain_notice(notice) if notice else b""
    index.app = _with_script(index.app, script(notice), warm=rows, top=top, pages=PageCache())
    routes.insert(0, Route(ROUTE, endpoint, methods=["GET"]))
    return True
