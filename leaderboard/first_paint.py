"""A plain first paint of the leaderboard's top rows, drawn before Gradio's JavaScript has started.

On a modest machine Gradio needs about a second to load and start its scripts before any component, the
table included, can show a row (a blank Gradio page measures 0.9 to 1.0 s here). The page's served HTML
therefore carries a small script that asks `ROUTE` for the top rows of the view the address asks for
(`?topic=&sort=&order=`, read by the same `parse_view` as the app) and draws them as a plain table
over the page. It removes itself as soon as the interactive table holds rows, so what the visitor reads first
is the same ranking, with the same three-decimal cells, as what follows.

Nothing from the store becomes markup: cells are set with `textContent`. The script is put into the HTML by
wrapping the ASGI app of Gradio's index route, so Gradio's own handler (and its dependencies, OAuth
included) still produces the page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from leaderboard.display import display

ROUTE = "/first-paint.json"
ELEMENT_ID = "first-paint"

SCRIPT = """<script>(function () {
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


def script() -> bytes:
    return (SCRIPT % {"route": ROUTE, "id": ELEMENT_ID}).encode()


def payload(shown: Any, total: int, limit: int) -> dict[str, Any]:
    """Headers, shown text of the top `limit` rows (as the table formats them) and a caption, for the script."""
    drawn = display(shown, rows=limit)
    rows = drawn["metadata"]["display_value"] if drawn["metadata"] else []
    link = drawn["headers"].index("link") if "link" in drawn["headers"] else None
    if link is not None:  # a Markdown link cell reads as its host name in plain text
        rows = [[*r[:link], str(r[link]).split("](", 1)[0].lstrip("["), *r[link + 1 :]] for r in rows]
    rows = [["" if v is None else str(v) for v in r] for r in rows]
    caption = f"Top {min(limit, len(shown))} of {total} systems; the interactive table is loading…"
    return {"headers": drawn["headers"], "rows": rows, "caption": caption}


def _with_script(asgi: Callable[..., Any], snippet: bytes) -> Callable[..., Any]:
    """The index route's ASGI app, with `snippet` put before `</head>` of its HTML answers."""

    async def app(scope: Mapping[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope.get("type") != "http" or scope.get("method") != "GET":
            await asgi(scope, receive, send)
            return
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

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
                body = body.replace(b"</head>", snippet + b"</head>", 1)
            await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})

        await asgi(scope, receive, capture)

    return app


def install(server_app: Any, rows: Callable[[Mapping[str, str]], dict[str, Any]]) -> bool:
    """Add `ROUTE` (answered by `rows(query params)`) and the script to the index page of a started Gradio app.

    Returns False, changing nothing, when the app has no index route of the expected kind (a Gradio release
    that serves its page otherwise): the page then simply has no first paint.
    """
    routes = server_app.router.routes
    index = next((r for r in routes if getattr(r, "path", None) == "/" and "GET" in (r.methods or ())), None)
    if index is None or not hasattr(index, "app"):
        return False

    async def endpoint(request: Request) -> JSONResponse:
        return JSONResponse(rows(dict(request.query_params)))  # plain strings and numbers already

    index.app = _with_script(index.app, script())
    routes.insert(0, Route(ROUTE, endpoint, methods=["GET"]))
    return True
