"""OpenAI Batch API mode (`llm.batch: true`): the uncached requests of a stage sent as one job at half price.

The requests become a JSONL file, uploaded and submitted; the job is polled until it ends, and every answer is
written to the response cache, so the normal path then finds them all there. The batch id and the keys it covers
are saved beside the cache *before* polling: a build killed while waiting (a batch may take hours) resumes
polling the same job instead of paying for it again. Lines that failed or never came back are left out of the
cache and so go through the normal synchronous path, with its retries.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.cache import request_key
from freshstack_hf.llm.retry import env_seconds

if TYPE_CHECKING:
    from freshstack_hf.llm.client import LLMClient

log = logging.getLogger(__name__)

POLL_ENV = "FRESHSTACK_LLM_BATCH_POLL"  # seconds between status polls (default 30)
TERMINAL = ("completed", "failed", "expired", "cancelled")
ENDPOINT = "/v1/chat/completions"
MAX_LINES = 50_000  # the API's limits per batch file: 50,000 requests and 200 MB
MAX_BYTES = 190_000_000


def load_state(path: Path) -> dict[str, dict[str, Any]]:
    """Submitted batches not yet collected: batch id -> {stage, keys, input_file_id, base_url, model}."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise FreshStackError(
            f"{path}: unreadable batch state ({exc}); delete it to forget submitted batches "
            f"(they would then be submitted, and paid for, again)"
        ) from exc
    return data if isinstance(data, dict) else {}


def save_state(path: Path, state: dict[str, dict[str, Any]]) -> None:
    with atomic_path(path, durable=True) as tmp:
        tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")


def run_batch(client: LLMClient, stage: str, requests: list[dict[str, Any]]) -> set[str]:
    """Fill the cache with answers to the uncached `requests` through the Batch API; returns the keys filled."""
    pending: dict[str, dict[str, Any]] = {}
    for request in requests:
        key = request_key(request)
        if key not in pending and key not in client.cache:
            pending[key] = request
    if not pending:
        return set()
    filled: set[str] = set()
    covered: set[str] = set()
    state = load_state(client.batches_path)
    for batch_id, entry in list(state.items()):
        if entry.get("base_url") != client.base_url or not pending.keys() & set(entry.get("keys", ())):
            continue
        log.info("stage `%s`: resuming batch %s submitted earlier", stage, batch_id)
        covered |= set(entry["keys"])
        filled |= _collect(client, stage, batch_id, pending)
    todo = {k: r for k, r in pending.items() if k not in covered}
    for chunk in _chunks(todo):
        batch_id = submit_batch(client, stage, chunk)
        filled |= _collect(client, stage, batch_id, pending)
    failed = len(pending) - len(filled & pending.keys())
    if failed:
        log.warning("stage `%s`: %d batch requests failed or were not answered; sending them one by one", stage, failed)
    return filled & pending.keys()


def _chunks(todo: dict[str, dict[str, Any]]) -> list[dict[str, dict[str, Any]]]:
    chunks: list[dict[str, dict[str, Any]]] = []
    current: dict[str, dict[str, Any]] = {}
    size = 0
    for key, request in todo.items():
        n = len(json.dumps(request)) + 200
        if current and (len(current) >= MAX_LINES or size + n > MAX_BYTES):
            chunks.append(current)
            current, size = {}, 0
        current[key] = request
        size += n
    if current:
        chunks.append(current)
    return chunks


def submit_batch(client: LLMClient, stage: str, requests: dict[str, dict[str, Any]]) -> str:
    """Upload the JSONL, create the batch, and record its id beside the cache before anything waits on it."""
    lines = [
        json.dumps(
            {
                "custom_id": key,
                "method": "POST",
                "url": ENDPOINT,
                "body": {k: v for k, v in request.items() if k != "endpoint"},
            },
            ensure_ascii=False,
        )
        for key, request in requests.items()
    ]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    uploaded = client.call_with_retries(
        stage,
        "batch upload",
        lambda: client.openai.files.create(
            file=(f"freshstack-{stage}.jsonl", data, "application/jsonl"), purpose="batch"
        ),
    )
    batch = client.call_with_retries(
        stage,
        "batch create",
        lambda: client.openai.batches.create(
            input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h", metadata={"stage": stage}
        ),
    )
    state = load_state(client.batches_path)
    state[batch.id] = {
        "stage": stage,
        "keys": sorted(requests),
        "input_file_id": uploaded.id,
        "base_url": client.base_url,
        "model": client.config.model,
        "submitted": time.time(),
    }
    save_state(client.batches_path, state)
    log.info("stage `%s`: submitted batch %s with %d requests", stage, batch.id, len(requests))
    return batch.id


def wait_for_batch(client: LLMClient, stage: str, batch_id: str) -> Any:
    """Poll until the batch reaches a terminal status; None when the endpoint no longer knows it."""
    import openai

    interval = env_seconds(POLL_ENV, 30.0)

    def retrieve() -> Any:
        try:
            return client.openai.batches.retrieve(batch_id)
        except openai.NotFoundError:
            return None

    while True:
        batch = client.call_with_retries(stage, f"batch {batch_id}", retrieve)
        if batch is None or batch.status in TERMINAL:
            return batch
        counts = getattr(batch, "request_counts", None)
        log.info("stage `%s`: batch %s is %s (%s)", stage, batch_id, batch.status, counts)
        time.sleep(interval)


def _collect(client: LLMClient, stage: str, batch_id: str, requests: dict[str, dict[str, Any]]) -> set[str]:
    """Wait for one batch, put each answered line whose request we know into the cache, forget the batch."""
    batch = wait_for_batch(client, stage, batch_id)
    filled: set[str] = set()
    if batch is None:
        log.warning(
            "stage `%s`: batch %s is unknown to %s; its requests go one by one", stage, batch_id, client.base_url
        )
    else:
        if batch.status != "completed":
            log.warning(
                "stage `%s`: batch %s ended %s; unanswered requests go one by one", stage, batch_id, batch.status
            )
        if batch.output_file_id:
            text = client.call_with_retries(
                stage, f"batch {batch_id} output", lambda: client.openai.files.content(batch.output_file_id).text
            )
            for line in text.splitlines():
                key = _store_line(client, line, requests)
                if key:
                    filled.add(key)
    state = load_state(client.batches_path)
    if state.pop(batch_id, None) is not None:
        save_state(client.batches_path, state)
    return filled


def _store_line(client: LLMClient, line: str, requests: dict[str, dict[str, Any]]) -> str | None:
    if not line.strip():
        return None
    try:
        item = json.loads(line)
    except json.JSONDecodeError:
        log.warning("unreadable batch output line: %.120s", line)
        return None
    key = item.get("custom_id")
    response = item.get("response") or {}
    body = response.get("body")
    if key not in requests or item.get("error") or response.get("status_code") != 200 or not isinstance(body, dict):
        return None
    if not body.get("choices"):
        return None
    client.cache.put(key, requests[key], body)
    return key
