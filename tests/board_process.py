"""`freshstack-hf leaderboard` run as its own process on one store, as a Space's container runs it: started
(optionally held at a test-only pause point, `leaderboard.fault_points`), read through its API, and killed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
from app_client import table
from ports import free_port

EXE = str(Path(sys.executable).with_name("freshstack-hf"))


class Board:
    """`freshstack-hf leaderboard` on one store, started and killed as a Space's container is."""

    def __init__(self, url: str, dataset: Path, home: Path) -> None:
        self.url, self.dataset, self.home = url, dataset, home
        self.folders = [home / "runs", home / "data", home / "cache"]  # everything local the app writes
        self.proc: subprocess.Popen | None = None
        self.log: Path | None = None
        self.address = ""
        self.client = None

    def start(
        self,
        *extra: str,
        pause: str | None = None,
        env: dict[str, str] | None = None,
        log: Path | None = None,
        worker: bool = False,
    ) -> None:
        """Serve (`extra`: more command-line options; `pause`: `FRESHSTACK_TEST_PAUSE`; `env`: more variables;
        `log`: a file that gets everything the app prints, stdout and stderr, as an operator's console would;
        `worker`: the board's own worker, a board's default; without it `--no-worker`, so a test sees each job
        where it left it)."""
        for folder in self.folders:
            folder.mkdir(parents=True, exist_ok=True)
        port = free_port()
        variables = {
            **{k: v for k, v in os.environ.items() if not k.startswith("FRESHSTACK_")},
            "FRESHSTACK_DATA_DIR": str(self.home / "data"),
            "FRESHSTACK_CACHE": str(self.home / "cache"),
            "XDG_CACHE_HOME": str(self.home / "cache"),
            "HF_HUB_OFFLINE": "1",
            "GRADIO_ANALYTICS_ENABLED": "False",
            **({"FRESHSTACK_TEST_PAUSE": pause} if pause else {}),
            **(env or {}),
        }
        cmd = [EXE, "leaderboard", "--dataset", str(self.dataset), "--store", self.url, "--port", str(port)]
        cmd += ["--runs-dir", str(self.home / "runs"), "--no-baselines", "--rate-limit", "0", *extra]
        cmd += [] if worker else ["--no-worker"]
        self.log = log
        printed = log.open("a", encoding="utf-8") if log else None
        out, err = (printed, subprocess.STDOUT) if printed else (subprocess.DEVNULL, subprocess.PIPE)
        self.proc = subprocess.Popen(cmd, cwd=self.home, env=variables, stdout=out, stderr=err)
        if printed:
            printed.close()  # the app holds its own copy of the file
        address = f"http://127.0.0.1:{port}/"
        start = time.monotonic()
        while True:
            assert self.proc.poll() is None, self.printed()[-3000:]
            try:
                if httpx.get(address, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() - start < 240, "the app did not answer within 240 s"
            time.sleep(0.2)
        from gradio_client import Client

        self.address = address
        self.client = Client(address, verbose=False)

    def printed(self) -> str:
        """What the app printed: its log file, else (an exited app's) stderr."""
        assert self.proc is not None
        if self.log is not None:
            return self.log.read_text(encoding="utf-8", errors="replace")
        return self.proc.communicate(timeout=10)[1].decode(errors="replace")

    def kill_and_wipe(self) -> None:
        """SIGKILL, then delete every local folder the app used: only the store remains."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def seen(self) -> dict:
        """What a visitor sees: every row of the table, and each row's Detail view."""
        rows = table(self.client)
        details = {key: self.client.predict(key, api_name="/detail") for key in rows if key.isdigit()}
        return {"table": rows, "detail": details}


def wait_for(path: Path, proc: subprocess.Popen, limit: float = 300) -> None:
    start = time.monotonic()
    while not path.exists():
        assert proc.poll() is None, proc.communicate(timeout=10)[1][-3000:]
        assert time.monotonic() - start < limit, f"{path.name} never appeared"
        time.sleep(0.1)
