"""A local fake of the Hugging Face Hub's repository, pull-request and dataset-leaderboard API, as `huggingface_hub`
sends it, on a loopback `ThreadingHTTPServer`: the real `HfApi` (and `hf_hub_download`) talk to it over HTTP when
`HF_ENDPOINT` points here, so what a test proves is what the client really sent and read.

It answers, for model repos held in memory (path -> bytes on `main`, and each pull request's files):

* `GET /api/whoami-v2` (the bearer token `TOKEN`, else 401);
* `GET /api/models/ORG/NAME[/revision/REV]` (the commit a revision names, as `HfApi.model_info` reads it);
* `POST /api/models/ORG/NAME/preupload/REV` (every file "regular") and `POST .../commit/REV` (the NDJSON commit;
  with `create_pr=1` a pull request `refs/pr/N` holding `main`'s files and the commit's);
* `GET /api/models/ORG/NAME/discussions` (filtered by `type`, `status`, `author`; one page);
* `HEAD`/`GET /ORG/NAME/resolve/REV/PATH` (`main` or `refs/pr/N`; a missing file is `EntryNotFound`, a missing
  repo `RepoNotFound`);
* `GET /api/datasets/ORG/NAME/leaderboard` (the entries the test set, as the Hub's JSON).

A commit to a repo named in `refuse` (repo -> status, e.g. 403 or 429) is answered with that status, as the Hub
answers a token without rights or past its rate limit (at the commit, the request that opens the pull request: the
client retries a refused preupload for half a minute first); `merge` merges a pull request as a repo's owner would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

TOKEN = "hf_test_write_token"
USER = "freshstack-board"


@dataclass
class PullRequest:
    num: int
    title: str
    author: str
    description: str
    files: dict[str, bytes]  # the repo's files as the pull request's head holds them
    status: str = "open"
    created_at: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z"))

    @property
    def ref(self) -> str:
        return f"refs/pr/{self.num}"


@dataclass
class Repo:
    files: dict[str, bytes] = field(default_factory=dict)  # main
    pulls: list[PullRequest] = field(default_factory=list)
    commits: int = 0


def _oid(*parts: Any) -> str:
    return hashlib.sha1(json.dumps(parts, default=str).encode()).hexdigest()


class FakeHubRepos:
    """`with FakeHubRepos() as hub:` then point the client at `hub.url` (`hub.environment()`), with `hub.repos`
    (model repo id -> `Repo`), `hub.leaderboards` (dataset id -> the entries its leaderboard answers), `hub.refuse`
    (repo id -> the status its writes get) and `hub.requests` (every (method, path) asked, in order)."""

    def __init__(self, user: str = USER) -> None:
        self.user = user
        self.repos: dict[str, Repo] = {}
        self.leaderboards: dict[str, list[dict[str, Any]]] = {}
        self.refuse: dict[str, int] = {}
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                hub._answer(self, "GET")

            def do_HEAD(self) -> None:
                hub._answer(self, "HEAD")

            def do_POST(self) -> None:
                hub._answer(self, "POST")

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    # ---- what a test sets and reads ---------------------------------------------------------------------------
    def add_repo(self, repo_id: str, files: dict[str, bytes] | None = None) -> Repo:
        self.repos[repo_id] = Repo(dict(files or {}))
        return self.repos[repo_id]

    def pulls(self, repo_id: str) -> list[PullRequest]:
        return list(self.repos[repo_id].pulls)

    def merge(self, repo_id: str, num: int) -> None:
        """Merge pull request `num` as the repo's owner would: `main` becomes its files."""
        repo = self.repos[repo_id]
        pull = next(p for p in repo.pulls if p.num == num)
        repo.files, pull.status = dict(pull.files), "merged"
        repo.commits += 1

    def environment(self) -> dict[str, str]:
        """Variables that point a process's Hugging Face client here, with the token this fake accepts."""
        return {"HF_ENDPOINT": self.url, "HF_TOKEN": TOKEN, "HF_HUB_OFFLINE": "0"}

    def point_here(self, monkeypatch: Any, token: str | None = TOKEN) -> None:
        """This process's Hugging Face client pointed here, as `environment()` points a new process's:
        `huggingface_hub` read `HF_ENDPOINT` and `HF_HUB_OFFLINE` when it was imported, so the values it kept then
        are set too. `token` None: no token at all (nor a saved one)."""
        from huggingface_hub import constants

        monkeypatch.setattr(constants, "ENDPOINT", self.url)
        monkeypatch.setattr(
            constants, "HUGGINGFACE_CO_URL_TEMPLATE", self.url + "/{repo_id}/resolve/{revision}/{filename}"
        )
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        if token is None:
            monkeypatch.delenv("HF_TOKEN", raising=False)
            monkeypatch.setattr(constants, "HF_TOKEN_PATH", "/nonexistent/token")
            monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", "/nonexistent/stored_tokens")
        else:
            monkeypatch.setenv("HF_TOKEN", token)

    def __enter__(self) -> FakeHubRepos:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    # ---- the API ------------------------------------------------------------------------------------------------
    def _answer(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        path, query = unquote(parts.path), {k: v[-1] for k, v in parse_qs(parts.query).items()}
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length) if length else b""
        with self.lock:
            self.requests.append((method, path))
            status, headers, payload = self._route(method, path, query, body, handler.headers.get("authorization"))
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        handler.send_response(status)
        headers = {"content-type": "application/json", **headers, "content-length": str(len(data))}
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        if method != "HEAD":
            handler.wfile.write(data)

    def _route(
        self, method: str, path: str, query: dict[str, str], body: bytes, auth: str | None
    ) -> tuple[int, dict[str, str], Any]:
        signed = auth == f"Bearer {TOKEN}"
        if path == "/api/whoami-v2":
            if not signed:
                return 401, {"X-Error-Message": "Invalid credentials in Authorization header"}, {"error": "401"}
            return 200, {}, {"type": "user", "name": self.user, "fullname": "Board", "orgs": []}
        segments = path.strip("/").split("/")
        if segments[:2] == ["api", "datasets"] and segments[-1] == "leaderboard":
            dataset = "/".join(segments[2:-1])
            if dataset not in self.leaderboards:
                return 404, {"X-Error-Code": "RepoNotFound"}, {"error": "Repository not found"}
            return 200, {}, self.leaderboards[dataset]
        if segments[:2] == ["api", "models"] and (len(segments) == 4 or segments[4:5] == ["revision"]):
            repo_id, asked = "/".join(segments[2:4]), "/".join(segments[5:]) or "main"
            if repo_id not in self.repos:
                return 404, {"X-Error-Code": "RepoNotFound"}, {"error": "Repository not found"}
            sha = asked if len(asked) == 40 else _oid(repo_id, self.repos[repo_id].commits)
            return 200, {}, {"id": repo_id, "modelId": repo_id, "sha": sha, "private": False}
        if segments[:2] == ["api", "models"] and len(segments) >= 5:
            repo_id, action = "/".join(segments[2:4]), segments[4]
            repo = self.repos.get(repo_id)
            if repo is None:
                return 404, {"X-Error-Code": "RepoNotFound"}, {"error": "Repository not found"}
            if action == "discussions" and method == "GET":
                return 200, {}, self._discussions(repo_id, repo, query)
            if method == "POST" and action in ("preupload", "commit"):
                if not signed:
                    return 401, {"X-Error-Message": "Invalid credentials in Authorization header"}, {"error": "401"}
                if action == "commit" and repo_id in self.refuse:
                    status = self.refuse[repo_id]
                    return status, {}, {"error": f"refused ({status})"}
                if action == "preupload":
                    files = json.loads(body)["files"]
                    return (
                        200,
                        {},
                        {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]},
                    )
                return self._commit(repo_id, repo, body, query)
        if len(segments) >= 5 and segments[2] == "resolve":
            return self._resolve(segments)
        return 404, {}, {"error": f"no route {method} {path}"}

    def _discussions(self, repo_id: str, repo: Repo, query: dict[str, str]) -> dict[str, Any]:
        found = [
            p
            for p in repo.pulls
            if query.get("type") in (None, "all", "pull_request")
            and query.get("status") in (None, "all", p.status)
            and query.get("author") in (None, p.author)
        ]
        rows = [
            {
                "title": p.title,
                "num": p.num,
                "author": {"name": p.author},
                "createdAt": p.created_at,
                "status": p.status,
                "repo": {"name": repo_id, "type": "model"},
                "isPullRequest": True,
            }
            for p in sorted(found, key=lambda p: -p.num)
        ]
        return {"count": len(rows), "start": 0, "discussions": rows}

    def _commit(self, repo_id: str, repo: Repo, body: bytes, query: dict[str, str]) -> tuple[int, dict, Any]:
        lines = [json.loads(line) for line in body.decode().splitlines() if line.strip()]
        header = next(line["value"] for line in lines if line["key"] == "header")
        files = {
            line["value"]["path"]: base64.b64decode(line["value"]["content"]) for line in lines if line["key"] == "file"
        }
        repo.commits += 1
        oid = _oid(repo_id, repo.commits)
        if query.get("create_pr") == "1":
            num = len(repo.pulls) + 1
            pull = PullRequest(
                num, header["summary"], self.user, header.get("description", ""), {**repo.files, **files}
            )
            repo.pulls.append(pull)
            where = f"{self.url}/{repo_id}/discussions/{num}"
            return (
                200,
                {},
                {"commitUrl": f"{self.url}/{repo_id}/commit/{oid}", "commitOid": oid, "pullRequestUrl": where},
            )
        repo.files.update(files)
        return 200, {}, {"commitUrl": f"{self.url}/{repo_id}/commit/{oid}", "commitOid": oid}

    def _resolve(self, segments: list[str]) -> tuple[int, dict[str, str], Any]:
        repo_id, rest = "/".join(segments[:2]), segments[3:]
        repo = self.repos.get(repo_id)
        if repo is None:
            return 404, {"X-Error-Code": "RepoNotFound"}, {"error": "Repository not found"}
        if rest[:2] == ["refs", "pr"]:
            pull = next((p for p in repo.pulls if str(p.num) == rest[2]), None)
            if pull is None:
                return 404, {"X-Error-Code": "RevisionNotFound"}, {"error": "Revision not found"}
            files, revision, name = pull.files, _oid(repo_id, "pr", pull.num, sorted(pull.files)), "/".join(rest[3:])
        elif rest[0] == "main":
            files, revision, name = repo.files, _oid(repo_id, repo.commits), "/".join(rest[1:])
        else:
            return 404, {"X-Error-Code": "RevisionNotFound"}, {"error": "Revision not found"}
        if name not in files:
            return 404, {"X-Error-Code": "EntryNotFound"}, {"error": "Entry not found"}
        content = files[name]
        etag = hashlib.sha1(content).hexdigest()
        return 200, {"X-Repo-Commit": revision, "ETag": f'"{etag}"', "content-type": "text/plain"}, content
