"""The Hub as the model pages' code reads it: a file of a repo at a revision (`read_text`: its main branch, or a pull
request's `refs/pr/N`), and a Hub error told as what went wrong and what to do (`hub_problem`), for one repo, so a
command going through many says which one failed and goes on with the others.

Everything goes through `huggingface_hub`'s own client, at `HF_ENDPOINT` with the token it finds (`HF_TOKEN`, or
`hf auth login`); a file is downloaded to a folder of its own that is removed once read, so nothing of a model repo
stays in the board's cache.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from freshstack_hf.retrieval.models import hub_offline

TIMEOUT_SECONDS = 20.0  # one question to the Hub: a board's loop or a command must not hang on it
OFFLINE = "the Hub is offline here (HF_HUB_OFFLINE is set): unset it where the board may reach the Hub"


def read_text(api: Any, repo_id: str, path: str, revision: str | None = None) -> str | None:
    """The text of `path` in the model repo `repo_id` at `revision` (default: its main branch), read with `api` (an
    `HfApi`: its endpoint and token); None when the repo has no such file there. Any other Hub error is raised as
    the client raised it (`hub_problem` tells it)."""
    from huggingface_hub.errors import EntryNotFoundError

    with tempfile.TemporaryDirectory(prefix="freshstack-hub-") as folder:
        try:
            local = api.hf_hub_download(
                repo_id, path, revision=revision, cache_dir=folder, etag_timeout=TIMEOUT_SECONDS
            )
        except EntryNotFoundError:
            return None
        return Path(local).read_text(encoding="utf-8")


def hub_problem(repo_id: str, exc: BaseException) -> str:
    """What went wrong asking the Hub about `repo_id`, and the fix."""
    import httpx2
    from huggingface_hub.errors import (
        HfHubHTTPError,
        LocalTokenNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
    )

    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(exc, OfflineModeIsEnabled) or hub_offline():
        return f"{repo_id}: {OFFLINE}"
    if isinstance(exc, LocalTokenNotFoundError) or (status == 401 and not isinstance(exc, RepositoryNotFoundError)):
        return (
            f"{repo_id}: no Hugging Face token, or the Hub refused it: set HF_TOKEN (or run `hf auth login`) with a "
            "token of the account that opens the pull requests"
        )
    if isinstance(exc, RepositoryNotFoundError):
        return f"{repo_id}: not on the Hub, or not readable with this token (private or gated): check the id"
    if status == 403:
        return (
            f"{repo_id}: the Hub refused this token a pull request on it (no write or discussion right, or the "
            "repo's discussions are closed): use a token with write access, or ask the repo's owner"
        )
    if status == 429:
        return f"{repo_id}: the Hub's rate limit was reached: run it again later (nothing was opened on this repo)"
    if isinstance(exc, HfHubHTTPError):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"{repo_id}: the Hub answered {status or 'an error'} ({first[:300]}): run it again later"
    if isinstance(exc, httpx2.HTTPError | OSError | TimeoutError):
        return f"{repo_id}: the Hub could not be reached ({type(exc).__name__}: {str(exc)[:200]}): run it again later"
    return f"{repo_id}: {type(exc).__name__}: {str(exc)[:300]}"


def hub_errors() -> tuple[type[BaseException], ...]:
    """What a question to the Hub raises when the Hub, the network or the token is at fault (`hub_problem` tells
    each): the client's HTTP errors are `OSError`s, its transport's are `httpx2`'s, its id checks `ValueError`s."""
    import httpx2

    return (OSError, TimeoutError, ValueError, httpx2.HTTPError)


def client(token: str | bool | None = None) -> Any:
    """The Hub client the model pages use: `huggingface_hub.HfApi` at `HF_ENDPOINT`, with the local token."""
    from huggingface_hub import HfApi

    return HfApi(token=token)
