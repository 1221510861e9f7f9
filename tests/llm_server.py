"""A local fake of the OpenAI HTTP API, so the real `openai` client is tested with no network and no key.

It speaks just enough of the protocol for the build: chat completions, embeddings, file upload/download and
the Batch API. Answers come from a `responder(messages, body) -> str`, by default `task_responder`
(tests/fake_llm_answers.py), which answers each prompt of the build and the answer track validly from word
overlap, so a whole build can run against it. Faults queued with `fail(...)` hit
the next chat/embeddings requests: `429` (with Retry-After), `500`, `malformed` (a completion whose content is not
JSON), `garbage_body` (HTTP 200 whose body is not JSON), `timeout` (answers after the client gave up), `401`.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import json
import re
import threading
import time
from collections import Counter, deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from fake_llm_answers import task_responder, words

from freshstack_hf.cl100k import count

Responder = Callable[[list[dict[str, str]], dict[str, Any]], str]
FAULTS = ("429", "500", "malformed", "garbage_body", "timeout", "401")


def _embedding(text: str, dim: int = 16) -> list[float]:
    vec = [0.0] * dim
    for w in words(text) or {text}:
        h = int(hashlib.md5(w.encode()).hexdigest(), 16)
        vec[h % dim] += 1.0
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


# OpenAI's chat framing in cl100k (its cookbook's `num_tokens_from_messages` for gpt-4/gpt-4o): every message costs
# its role and content plus 3 tokens, and every reply is primed with 3 more.
TOKENS_PER_MESSAGE, REPLY_PRIMING = 3, 3


def _tokens(text: str) -> int:
    """cl100k_base tokens of `text`, the encoding gpt-4 and gpt-3.5 bill in, read offline (`freshstack_hf.cl100k`)."""
    return count(text)


def _usage(messages: list[dict[str, str]], content: str) -> dict[str, int]:
    """What an OpenAI endpoint bills: prompt and completion counted in cl100k tokens, the chat framing included."""
    p = sum(TOKENS_PER_MESSAGE + _tokens(m.get("role", "")) + _tokens(m.get("content", "")) for m in messages)
    p += REPLY_PRIMING
    c = _tokens(content)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


class FakeOpenAI:
    """The server: `with FakeOpenAI() as server: OpenAI(base_url=server.base_url, ...)`."""

    def __init__(
        self,
        responder: Responder = task_responder,
        *,
        batch_polls: int = 1,
        timeout_sleep: float = 1.0,
        retry_after: str = "0.01",
        latency: float = 0.0,
    ) -> None:
        self.responder = responder
        self.batch_polls = batch_polls  # GET /v1/batches/{id} answers "in_progress" this many times first
        self.timeout_sleep = timeout_sleep
        self.retry_after = retry_after
        self.latency = latency  # seconds each chat call takes, to make concurrency observable
        self.faults: deque[str] = deque()
        self.batch_fail_ids: set[str] = set()  # custom_ids answered with an error line in batch output
        self.requests = 0
        self.by_path: Counter[str] = Counter()
        self.by_fault: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.chat_bodies: list[dict[str, Any]] = []
        self.auth_headers: list[str] = []  # the Authorization header of each request ("" when none was sent)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # ---- control ---------------------------------------------------------------------------------------

    def fail(self, *faults: str) -> None:
        for f in faults:
            if f not in FAULTS:
                raise ValueError(f"unknown fault {f!r}; one of {FAULTS}")
        self.faults.extend(faults)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out without the 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_POST(self) -> None:
                fake._handle(self, "POST")

            def do_GET(self) -> None:
                fake._handle(self, "GET")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # ---- HTTP ---------------------------------------------------------------------------------------------

    def _handle(self, h: BaseHTTPRequestHandler, method: str) -> None:
        path = h.path.split("?", 1)[0]
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        with self._lock:
            self.requests += 1
            self.auth_headers.append(h.headers.get("Authorization") or "")
            self.by_path[f"{method} {re.sub(r'/(file|batch)-[0-9]+', r'/{id}', path)}"] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            fault = self.faults.popleft() if self.faults and path in ("/v1/chat/completions", "/v1/embeddings") else ""
            if fault:
                self.by_fault[fault] += 1
        try:
            self._route(h, method, path, raw, fault)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout fault)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _send(
        self,
        h: BaseHTTPRequestHandler,
        status: int,
        body: Any,
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        h.send_response(status)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)

    def _route(self, h: BaseHTTPRequestHandler, method: str, path: str, raw: bytes, fault: str) -> None:
        if fault == "429":
            return self._send(
                h, 429, {"error": {"message": "slow down", "type": "rate_limit"}}, {"Retry-After": self.retry_after}
            )
        if fault == "500":
            return self._send(h, 500, {"error": {"message": "boom", "type": "server_error"}})
        if fault == "401":
            return self._send(h, 401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
        if fault == "garbage_body":
            return self._send(h, 200, b"<html>upstream proxy error</html>")
        if fault == "timeout":
            time.sleep(self.timeout_sleep)
        if method == "POST" and path == "/v1/chat/completions":
            if self.latency:
                time.sleep(self.latency)
            body = json.loads(raw)
            return self._send(h, 200, self.completion(body, malformed=fault == "malformed"))
        if method == "POST" and path == "/v1/embeddings":
            body = json.loads(raw)
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [{"object": "embedding", "index": i, "embedding": _embedding(t)} for i, t in enumerate(inputs)]
            # words, not cl100k: whole documents are embedded, and encoding them would outlast a test's 0.5 s timeout
            n = sum(len(t.split()) for t in inputs)
            return self._send(
                h,
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body["model"],
                    "usage": {"prompt_tokens": n, "total_tokens": n},
                },
            )
        if method == "POST" and path == "/v1/files":
            return self._send(h, 200, self._upload(h, raw))
        if m := re.fullmatch(r"/v1/files/([\w-]+)/content", path):
            if m[1] not in self.files:
                return self._send(h, 404, {"error": {"message": "no such file"}})
            return self._send(h, 200, self.files[m[1]], content_type="application/octet-stream")
        if method == "POST" and path == "/v1/batches":
            return self._send(h, 200, self._create_batch(json.loads(raw)))
        if m := re.fullmatch(r"/v1/batches/([\w-]+)", path):
            if m[1] not in self.batches:
                return self._send(h, 404, {"error": {"message": "no such batch"}})
            return self._send(h, 200, self._poll_batch(m[1]))
        return self._send(h, 404, {"error": {"message": f"no route {method} {path}"}})

    def completion(self, body: dict[str, Any], malformed: bool = False) -> dict[str, Any]:
        with self._lock:
            self.chat_bodies.append(body)
        content = "Sure! Here you go: {nuggets: [oops" if malformed else self.responder(body["messages"], body)
        return {
            "id": f"chatcmpl-{len(self.chat_bodies)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": _usage(body["messages"], content),
        }

    # ---- files and batches ----------------------------------------------------------------------------------

    def _upload(self, h: BaseHTTPRequestHandler, raw: bytes) -> dict[str, Any]:
        head = f"Content-Type: {h.headers['Content-Type']}\r\n\r\n".encode()
        msg = email.parser.BytesParser(policy=email.policy.default).parsebytes(head + raw)
        fields = {part.get_param("name", header="content-disposition"): part for part in msg.iter_parts()}
        data = fields["file"].get_payload(decode=True)
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = data
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(data),
            "created_at": int(time.time()),
            "filename": fields["file"].get_filename() or "upload.jsonl",
            "purpose": fields["purpose"].get_content().strip(),
            "status": "processed",
        }

    def _create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            batch_id = f"batch-{len(self.batches) + 1}"
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body["endpoint"],
                "input_file_id": body["input_file_id"],
                "completion_window": body["completion_window"],
                "created_at": int(time.time()),
                "status": "validating",
                "polls": 0,
                "metadata": body.get("metadata"),
            }
            return {k: v for k, v in self.batches[batch_id].items() if k != "polls"}

    def _poll_batch(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        batch["polls"] += 1
        if batch["status"] != "completed" and batch["polls"] > self.batch_polls:
            lines = []
            for line in self.files[batch["input_file_id"]].decode().splitlines():
                item = json.loads(line)
                if item["custom_id"] in self.batch_fail_ids:
                    lines.append(
                        {
                            "id": "r",
                            "custom_id": item["custom_id"],
                            "response": None,
                            "error": {"code": "server_error", "message": "failed"},
                        }
                    )
                    continue
                resp = self.completion(item["body"])
                lines.append(
                    {
                        "id": "r",
                        "custom_id": item["custom_id"],
                        "error": None,
                        "response": {"status_code": 200, "request_id": "x", "body": resp},
                    }
                )
            with self._lock:
                out_id = f"file-{len(self.files) + 1}"
                self.files[out_id] = ("\n".join(json.dumps(x) for x in lines) + "\n").encode()
            batch.update(
                status="completed",
                output_file_id=out_id,
                completed_at=int(time.time()),
                request_counts={"total": len(lines), "completed": len(lines), "failed": 0},
            )
        elif batch["status"] == "validating":
            batch["status"] = "in_progress"
        return {k: v for k, v in batch.items() if k != "polls"}
