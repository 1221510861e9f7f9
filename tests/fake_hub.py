"""A local fake of the one Hugging Face Hub endpoint Gradio's sign-in asks off a Space: `GET /api/whoami-v2`.

Off a Space, `--oauth` is Gradio's mock sign-in: at start Gradio asks the Hub (at `HF_ENDPOINT`) who the machine's
token belongs to, and whoever clicks "Sign in" becomes that user. Pointing `HF_ENDPOINT` here (with `HF_TOKEN`
set) runs that real code path with no network: the app's process talks to this loopback server only.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "hf_test_local_token"


class FakeHub:
    """`with FakeHub("alice") as hub:` then run the app with `hub.environment()`; `hub.asked` counts whoami calls."""

    def __init__(self, username: str, fullname: str = "") -> None:
        self.username, self.fullname = username, fullname or username.title()
        self.asked = 0
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path.split("?")[0] != "/api/whoami-v2":
                    self._send(404, {"error": "not found"})
                elif self.headers.get("authorization") != f"Bearer {TOKEN}":
                    self._send(401, {"error": "Invalid credentials in Authorization header"})
                else:
                    hub.asked += 1
                    self._send(200, hub.user())

            def _send(self, status: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"

    def user(self) -> dict[str, Any]:
        return {
            "type": "user",
            "name": self.username,
            "fullname": self.fullname,
            "avatarUrl": f"{self.url}/avatars/{self.username}.png",
            "orgs": [],
            "auth": {"type": "access_token", "accessToken": {"displayName": "test", "role": "read"}},
        }

    def environment(self) -> dict[str, str]:
        """Variables that point a process's Hugging Face client here, with the token this fake accepts."""
        return {"HF_ENDPOINT": self.url, "HF_TOKEN": TOKEN, "HF_HUB_OFFLINE": "0"}

    def __enter__(self) -> FakeHub:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
