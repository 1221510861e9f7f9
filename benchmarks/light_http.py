"""A light HTTP/1.1 client on asyncio streams, for benchmarks that play many visitors on the machine they measure.

Fifty visitors played with httpx cost this process more CPU than the board they visit spent serving them (3.5 s
against 2.9 s for one crowd, on a 2-core machine where both share the cores): what was timed was mostly the load
generator. Browsers on other machines cost the board nothing; this client comes close. Like a browser, a client
keeps its connection open between requests (HTTP/1.1 keep-alive) and reads an event stream on a connection of
its own, line by line as it arrives. Enough of HTTP for the board's own answers: a status line, headers, a body of
`Content-Length` bytes, chunked or up to the end; no TLS, no compression, no redirects.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def raise_for_status(self) -> None:
        if self.status >= 400:
            raise RuntimeError(f"HTTP {self.status}: {self.body[:200]!r}")


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class LightClient:
    """One visitor's requests to one server (`base`, an http:// URL ending in /), one at a time on one kept
    connection; `lines` opens another for an event stream. `close()` when done."""

    def __init__(self, base: str) -> None:
        where = urlsplit(base)
        self.host, self.port, self.root = where.hostname or "127.0.0.1", where.port or 80, where.path or "/"
        self._kept: Connection | None = None

    async def _send(
        self, method: str, path: str, body: bytes = b"", content_type: str = "", kept: Connection | None = None
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int, dict[str, str]]:
        reader, writer = kept or await asyncio.open_connection(self.host, self.port, limit=2**20)
        head = [f"{method} {self.root}{path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        if kept is None:
            head.append("Connection: close")
        if body or method == "POST":
            head.append(f"Content-Length: {len(body)}")
        if content_type:
            head.append(f"Content-Type: {content_type}")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await writer.drain()
        status_line = await reader.readline()
        if not status_line:
            writer.close()
            raise ConnectionError(f"{method} {path}: the server closed the connection without an answer")
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        return reader, writer, int(status_line.split()[1]), headers

    @staticmethod
    async def _chunks(reader: asyncio.StreamReader, headers: dict[str, str]) -> AsyncIterator[bytes]:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            while size := int((await reader.readline()).split(b";")[0].strip() or b"0", 16):
                yield await reader.readexactly(size)
                await reader.readline()  # the CRLF after each chunk
            return
        if "content-length" in headers:
            yield await reader.readexactly(int(headers["content-length"]))
            return
        while data := await reader.read(2**16):
            yield data

    async def request(self, method: str, path: str, body: bytes = b"", content_type: str = "") -> Answer:
        """One request on the kept connection (opened, or opened again if the server closed it while idle)."""
        for attempt in (1, 2):
            if self._kept is None:
                self._kept = await asyncio.open_connection(self.host, self.port, limit=2**20)
            try:
                reader, _, status, headers = await self._send(method, path, body, content_type, self._kept)
                break
            except ConnectionError:
                self.close()
                if attempt == 2:
                    raise
        try:
            parts = [chunk async for chunk in self._chunks(reader, headers)]
        except BaseException:
            self.close()
            raise
        delimited = "content-length" in headers or headers.get("transfer-encoding", "").lower() == "chunked"
        if not delimited or headers.get("connection", "").lower() == "close":
            self.close()
        return Answer(status, headers, b"".join(parts))

    def close(self) -> None:
        if self._kept is not None:
            self._kept[1].close()
            self._kept = None

    async def get(self, path: str, params: dict[str, str] | None = None) -> Answer:
        return await self.request("GET", path + (f"?{urlencode(params)}" if params else ""))

    async def post_json(self, path: str, payload: Any) -> Answer:
        return await self.request("POST", path, json.dumps(payload).encode(), "application/json")

    async def post_file(self, path: str, field: str, name: str, data: bytes) -> Answer:
        """A multipart/form-data POST of one file, as a browser's upload sends it."""
        boundary = uuid.uuid4().hex
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        body = head + data + f"\r\n--{boundary}--\r\n".encode()
        return await self.request("POST", path, body, f"multipart/form-data; boundary={boundary}")

    async def lines(self, path: str, params: dict[str, str] | None = None) -> AsyncIterator[str]:
        """The lines of a streamed GET answer (an event stream) as they arrive; the connection closes when the
        caller stops reading."""
        reader, writer, status, headers = await self._send("GET", path + (f"?{urlencode(params)}" if params else ""))
        try:
            if status >= 400:
                raise RuntimeError(f"HTTP {status} for {path}")
            pending = b""
            async for chunk in self._chunks(reader, headers):
                pending += chunk
                *complete, pending = pending.split(b"\n")
                for line in complete:
                    yield line.rstrip(b"\r").decode()
        finally:
            writer.close()
