"""The Space deployment (`freshstack-hf space`): the folder's front matter, pins and app entry; its README and
WORKER.md saying where each part of the board's state lives; an existing folder left alone without --force; the
Space's settings turned into `leaderboard` arguments; a Space whose store a restart would lose refused (exit 2,
nothing written) unless FRESHSTACK_EPHEMERAL=1, and then every page saying so; and the generated app.py
launched as a Space would run it (offline, on a local dataset), its table found over HTTP and in headless
Chromium (that part skips, saying why, where /usr/bin/chromium is absent).

A Space's persistent storage is simulated with FRESHSTACK_TEST_SPACE_DATA, a folder standing for /data."""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import httpx
import pytest
import yaml
from browser_checks import assert_reads_well, headless_chromium, require_chromium
from ports import free_port

from freshstack_hf.errors import FreshStackError
from leaderboard.cli import serve_board
from leaderboard.cli.serve_board import EPHEMERAL_NOTICE
from leaderboard.deploy.space import SpaceSpec, pinned_requirements, write_space
from leaderboard.deploy.space_app import check_space_store, leaderboard_argv, lost_store, space_environment

CHECKOUT = Path(__file__).resolve().parents[1]
SPEC = SpaceSpec(dataset="org/freshstack", revision="v1")
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")])),
}
# What the Hub sets in a Space, less sign-in (a Space's OAuth app is the Hub's; the tests serve no sign-in).
ON_SPACE = {"SYSTEM": "spaces", "FRESHSTACK_OAUTH": "0"}


def _front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def test_the_folder_is_a_gradio_space_with_sign_in_pinned_to_this_environment(tmp_path):
    folder = write_space(tmp_path / "space", SPEC)
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "WORKER.md", "app.py", "requirements.txt"]
    meta = _front_matter(folder / "README.md")
    assert meta["sdk"] == "gradio" and meta["sdk_version"] == metadata.version("gradio")
    assert meta["app_file"] == "app.py" and meta["hf_oauth"] is True and meta["pinned"] is False
    assert meta["title"] and meta["emoji"] and 0 < len(meta["short_description"]) <= 60

    pins = dict(line.split("==", 1) for line in (folder / "requirements.txt").read_text().splitlines())
    version = metadata.version("freshstack-hf")
    assert pins["freshstack-hf[leaderboard,bm25,dense,llm]"] == version
    for name in ("datasets", "pyarrow", "sqlalchemy", "sentence-transformers"):
        assert pins[name] == metadata.version(name), name
    assert pins["gradio[oauth]"] == metadata.version("gradio")  # hf_oauth's sign-in needs the extra
    assert pins["psycopg[binary]"] == metadata.version("psycopg")
    assert pins["torch"] == "2.13.0"  # the public release, whatever local build (+cpu) is installed here
    assert all("+" not in v and ">" not in v and "<" not in v for v in pins.values())

    app = (folder / "app.py").read_text()
    compile(app, "app.py", "exec")
    assert 'DATASET = "org/freshstack"' in app and 'REVISION = "v1"' in app
    worker = (folder / "WORKER.md").read_text()
    assert 'freshstack-hf worker --store "$FRESHSTACK_STORE" --dataset org/freshstack --device cuda' in worker


def _state_table(readme: str) -> dict[str, tuple[str, str]]:
    """{state: (where, after a restart)} from the README's table of where the state lives."""
    lines = [line for line in readme.splitlines() if line.startswith("| ")]
    assert lines and lines[0] == "| state | where | after a restart |", lines
    cells = [[cell.strip() for cell in line.strip().strip("|").split(" | ")] for line in lines[1:]]
    return {what: (where, restart) for what, where, restart in cells}


def test_the_readme_says_where_each_part_of_the_state_lives(tmp_path):
    folder = write_space(tmp_path / "space", SPEC)
    readme = (folder / "README.md").read_text()
    table = _state_table(readme)
    [stored] = [what for what in table if "audit log" in what]
    for part in ("systems", "results with per-query scores", "archived rankings", "answers files", "hole-fill"):
        assert part in stored, part
    assert "job queue" in stored
    where, restart = table[stored]
    assert "`FRESHSTACK_STORE` secret (a PostgreSQL URL)" in where and "`/data/leaderboard.db`" in where
    assert restart == "kept"
    assert table["the dataset"][0] == "the Hub: `org/freshstack`, pinned to revision `v1`"
    assert table["runs cache, embedding cache, Hub download cache"][1] == "rebuilt when needed"
    assert len(table) == 3  # every part of the state is in one of the three rows

    # What happens with neither, and the backup.
    assert "the app refuses to start" in readme and "`FRESHSTACK_EPHEMERAL=1`" in readme
    assert "every page of such a board then warns its visitors" in readme
    assert "`freshstack-hf admin export DIR --store URL`" in readme

    # A worker shares nothing with the Space but the store: no runs folder to share any more.
    worker = (folder / "WORKER.md").read_text()
    assert "needs only the store URL and the dataset id" in worker
    assert "--runs-dir" not in worker and "folder shared" not in worker and "needs that folder" not in worker


def test_a_project_requirement_line_replaces_the_pypi_pin():
    line = "freshstack-hf[leaderboard] @ git+https://github.com/org/freshstack-hf@v0.1.0"
    assert pinned_requirements(line)[0] == line


def test_an_existing_folder_is_left_alone_without_force(tmp_path):
    target = tmp_path / "space"
    target.mkdir()
    (target / "mine.txt").write_text("keep me")
    with pytest.raises(FreshStackError, match="already exists; pass --force"):
        write_space(target, SPEC)
    assert [p.name for p in target.iterdir()] == ["mine.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["space"]  # no temporary folder left behind

    (target / "app.py").write_text("stale")
    (target / ".git").mkdir()  # a clone of the Space: regenerating it must leave it a clone
    (target / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    write_space(target, SPEC, force=True)
    names = sorted(p.name for p in target.iterdir())
    assert names == [".git", "README.md", "WORKER.md", "app.py", "mine.txt", "requirements.txt"]
    assert (target / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert "leaderboard.deploy.space_app" in (target / "app.py").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["space"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (SpaceSpec(dataset="/abs/freshstack", revision="v1"), "give the Hub id"),
        (SpaceSpec(dataset="org/freshstack", revision="v 1"), "--revision"),
        (SpaceSpec(dataset="org/freshstack", revision="v1", short_description="x" * 61), "at most 60"),
    ],
)
def test_what_a_space_could_not_serve_is_refused_before_writing(tmp_path, spec, message):
    with pytest.raises(FreshStackError, match=message):
        write_space(tmp_path / "space", spec)
    assert not (tmp_path / "space").exists()


def test_the_cli_refuses_an_existing_folder_with_exit_2(tmp_path, capsys):
    from freshstack_hf.cli.main import main

    if not [ep for ep in metadata.entry_points(group="freshstack_hf.commands") if ep.name == "space"]:
        pytest.skip("the `space` entry point is not installed in this environment (pip install -e .)")
    target = tmp_path / "space"
    assert main(["space", str(target), "--dataset", "org/freshstack", "--revision", "v1"]) == 0
    before = (target / "app.py").read_text()
    assert main(["space", str(target), "--dataset", "org/other", "--revision", "v2"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (target / "app.py").read_text() == before


def test_space_settings_become_leaderboard_arguments(tmp_path):
    argv = leaderboard_argv("org/freshstack", "v1", {"SYSTEM": "spaces"})  # what a Space sets
    assert argv[:4] == ["--dataset", "org/freshstack", "--revision", "v1"]
    assert argv[4:8] == ["--host", "0.0.0.0", "--port", "7860"]
    assert "--store" not in argv and "--oauth" in argv  # SQLite: nobody else claims jobs,
    assert "--no-worker" not in argv  # so the board's own worker scores models and computes the baselines
    assert "--oauth" not in leaderboard_argv("org/freshstack", "v1", {})  # off a Space Gradio's login is a mock

    pg = {"FRESHSTACK_STORE": "postgresql://lb@db/freshstack", "FRESHSTACK_OAUTH": "0", "FRESHSTACK_BASELINES": "none"}
    argv = leaderboard_argv("org/freshstack", "v1", pg)
    assert argv[argv.index("--store") + 1] == pg["FRESHSTACK_STORE"]
    assert "--oauth" not in argv and "--no-baselines" in argv
    assert "--no-worker" in argv  # GPU workers claim every job: the Space scores no model, encodes no corpus
    parser = argparse.ArgumentParser()
    serve_board.add_arguments(parser)
    assert parser.parse_args(argv).no_worker  # what the command reads
    assert not parser.parse_args(leaderboard_argv("org/freshstack", "v1", {"SYSTEM": "spaces"})).no_worker

    local = leaderboard_argv("org/freshstack", "v1", {"FRESHSTACK_DATASET": str(tmp_path)})
    assert local[:2] == ["--dataset", str(tmp_path)] and "--revision" not in local  # the pin is the Hub's

    data = tmp_path / "data"
    assert space_environment({}, data) == {}  # no persistent storage: nothing moved
    data.mkdir()
    moved = space_environment({"HF_HOME": "/elsewhere"}, data)
    assert moved == {"FRESHSTACK_DATA_DIR": str(data), "FRESHSTACK_CACHE": str(data / "cache")}


def _run_app(folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "app.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=120)


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.slow
@pytest.mark.parametrize("store", ["none", "sqlite-off-data"])
def test_a_space_whose_store_a_restart_loses_is_refused_and_writes_nothing(tmp_path, lb_dataset, store):
    """No PostgreSQL secret, and no persistent storage (or a SQLite secret beside it): exit 2, one line naming the
    three fixes, and no store file nor data folder created."""
    folder = write_space(tmp_path / "space", SPEC)
    space_data, data_dir = tmp_path / "space-data", tmp_path / "data"
    env = {
        **_bare_env(tmp_path),
        **ON_SPACE,
        "FRESHSTACK_DATASET": str(lb_dataset.folder),
        "FRESHSTACK_TEST_SPACE_DATA": str(space_data),
        "FRESHSTACK_DATA_DIR": str(data_dir),
    }
    if store == "sqlite-off-data":  # persistent storage is there, but the secret puts the store elsewhere
        space_data.mkdir()
        env["FRESHSTACK_STORE"] = f"sqlite:///{tmp_path / 'elsewhere' / 'lb.db'}"
    before = _files(tmp_path)
    done = _run_app(folder, env)
    assert done.returncode == 2, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: this Space's store would be lost on every restart"), lines
    line = lines[0]
    assert "FRESHSTACK_STORE secret with a PostgreSQL URL" in line
    assert "enable persistent storage in the Space's settings" in line and str(space_data) in line
    assert "FRESHSTACK_EPHEMERAL=1" in line
    where = str(tmp_path / "elsewhere" / "lb.db") if store == "sqlite-off-data" else str(data_dir)
    assert f"({where})" in line  # the store it would have used
    assert _files(tmp_path) == before  # no store file, no data folder, no cache: nothing written
    assert "leaderboard:" not in done.stdout  # never got as far as serving


def test_a_store_kept_across_restarts_passes_the_check(tmp_path):
    data = tmp_path / "space-data"
    bare = {"SYSTEM": "spaces", "FRESHSTACK_DATA_DIR": str(tmp_path / "container")}
    assert lost_store(bare, data) == str(tmp_path / "container")

    data.mkdir()  # persistent storage: the data folder, and with it the default SQLite store, moves onto it
    env = {"SYSTEM": "spaces", **space_environment({"SYSTEM": "spaces"}, data)}
    assert env["FRESHSTACK_DATA_DIR"] == str(data) and lost_store(env, data) is None
    assert check_space_store(env, data) is False  # kept: no notice
    on_data = {"SYSTEM": "spaces", "FRESHSTACK_STORE": f"sqlite:///{data / 'boards' / 'lb.db'}"}
    assert check_space_store(on_data, data) is False
    assert "--ephemeral" not in leaderboard_argv("org/freshstack", "v1", env)

    # PostgreSQL keeps the store on its server, with or without persistent storage, accepted loss or not.
    for pg in ("postgresql://lb@db/freshstack", "postgresql+psycopg://lb:pw@db:5432/freshstack"):
        env = {"SYSTEM": "spaces", "FRESHSTACK_STORE": pg}
        assert check_space_store(env, tmp_path / "absent") is False
        assert check_space_store({**env, "FRESHSTACK_EPHEMERAL": "1"}, tmp_path / "absent") is False

    # Off a Space the store is the user's: nothing is checked, whatever it is.
    assert check_space_store({"FRESHSTACK_DATA_DIR": str(tmp_path / "mine")}, tmp_path / "absent") is False


def test_an_accepted_loss_is_passed_on_as_ephemeral(tmp_path):
    env = {"SYSTEM": "spaces", "FRESHSTACK_DATA_DIR": str(tmp_path / "container")}
    with pytest.raises(FreshStackError, match="FRESHSTACK_EPHEMERAL=1 to run anyway"):
        check_space_store(env, tmp_path / "absent")
    with pytest.raises(FreshStackError, match="would be lost"):
        check_space_store({**env, "FRESHSTACK_EPHEMERAL": "0"}, tmp_path / "absent")
    assert check_space_store({**env, "FRESHSTACK_EPHEMERAL": "1"}, tmp_path / "absent") is True
    argv = leaderboard_argv("org/freshstack", "v1", env, ephemeral=True)
    assert argv[-1] == "--ephemeral"


def _bare_env(root: Path) -> dict[str, str]:
    """This process's environment, offline, with no store, data folder or Space setting of its own."""
    own = ("FRESHSTACK_STORE", "FRESHSTACK_DATA_DIR", "FRESHSTACK_EPHEMERAL", "SYSTEM", "SPACE_ID")
    env = {key: value for key, value in os.environ.items() if key not in own}
    return {**env, **OFFLINE, "XDG_DATA_HOME": str(root / "xdg")}


@contextmanager
def served_space(root: Path, dataset: Path, settings: dict[str, str]) -> Iterator[str]:
    """The generated app.py run as a Space runs it (`settings`: its variables), on the local test dataset,
    offline, on a free port; yields the address once `/` answers."""
    folder = write_space(root / "space", SPEC)
    port = free_port()
    env = {
        **_bare_env(root),
        "FRESHSTACK_DATASET": str(dataset),
        "FRESHSTACK_BASELINES": "bm25",
        "FRESHSTACK_SPACE_WORKER": "0",
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        **settings,
    }
    log_path = root / "app.log"
    log = log_path.open("w")
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"app.py exited with {proc.returncode}:\n{log_path.read_text()[-3000:]}")
            try:  # ready once the first paint is installed: Gradio answers a few moments before that
                if httpx.get(f"{url}first-paint.json", timeout=30).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            time.sleep(0.3)
        else:
            pytest.fail(f"app.py did not serve its first paint within 120 s:\n{log_path.read_text()[-3000:]}")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def space_url(tmp_path_factory, lb_dataset) -> Iterator[str]:
    """The generated app.py run off a Space (a local try-out), on a SQLite store the test names."""
    root = tmp_path_factory.mktemp("space")
    settings = {"FRESHSTACK_STORE": f"sqlite:///{root / 'lb.db'}", "FRESHSTACK_DATA_DIR": str(root / "data")}
    with served_space(root, lb_dataset.folder, settings) as url:
        yield url


@pytest.mark.slow
def test_the_generated_app_serves_the_table(space_url):
    page = httpx.get(space_url, timeout=30).text
    assert "first-paint.json" in page  # the top rows are drawn before Gradio's scripts start
    assert "board-notice" not in page and "ephemeral" not in page  # off a Space, no notice: the store is the user's
    rows = httpx.get(f"{space_url}first-paint.json", timeout=30).json()["rows"]
    assert any("BM25" in str(row) for row in rows), rows
    info = httpx.get(f"{space_url}gradio_api/info", timeout=30).json()
    assert "/table" in info["named_endpoints"]  # the table's API, as gradio_client users call it


@pytest.mark.slow
def test_the_generated_app_draws_the_table_in_chromium(space_url):
    require_chromium()
    from playwright.sync_api import expect

    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(space_url)
        table = page.locator("#leaderboard-table")
        expect(table.get_by_text("BM25", exact=True).first).to_be_attached(timeout=60_000)
        expect(page.get_by_role("tab", name="Leaderboard")).to_be_visible()
        assert_reads_well(page, "the Space's page")


@pytest.fixture(scope="module")
def ephemeral_space(tmp_path_factory, lb_dataset) -> Iterator[tuple[str, Path]]:
    """(address, folder) of the generated app.py on a Space with no store secret and no persistent storage, run
    with FRESHSTACK_EPHEMERAL=1: its store is a SQLite file in the container (`folder`/container)."""
    root = tmp_path_factory.mktemp("ephemeral")
    settings = {
        **ON_SPACE,
        "FRESHSTACK_EPHEMERAL": "1",
        "FRESHSTACK_TEST_SPACE_DATA": str(root / "no-persistent-storage"),
        "FRESHSTACK_DATA_DIR": str(root / "container"),
    }
    with served_space(root, lb_dataset.folder, settings) as url:
        yield url, root


def _plain_notice(page: str) -> str:
    found = re.search(r'<body\b[^>]*>\s*<div id="board-notice-first" role="note" style="[^"]*">([^<]*)</div>', page)
    assert found, "the served HTML does not open its body with the notice"
    return html.unescape(found[1])


@pytest.mark.slow
def test_an_accepted_ephemeral_space_starts_and_its_html_says_so(ephemeral_space):
    url, root = ephemeral_space
    for address in ("", "?topic=beta&sort=coverage@20&page=2"):  # the plain address and a deep link
        page = httpx.get(url + address, timeout=30).text
        assert _plain_notice(page) == EPHEMERAL_NOTICE, address
    assert "submission and result is lost" in EPHEMERAL_NOTICE and "FRESHSTACK_STORE" in EPHEMERAL_NOTICE
    info = httpx.get(f"{url}gradio_api/info", timeout=30).json()
    assert "/table" in info["named_endpoints"]  # the board itself serves as usual
    assert (root / "container" / "leaderboard.db").is_file()  # on the container's store
    assert not (root / "no-persistent-storage").exists()
    assert "FRESHSTACK_EPHEMERAL=1: the store is lost on restart" in (root / "app.log").read_text()


@pytest.mark.slow
def test_a_space_on_persistent_storage_starts_with_its_store_there(tmp_path, lb_dataset):
    data = tmp_path / "space-data"
    data.mkdir()
    settings = {**ON_SPACE, "FRESHSTACK_TEST_SPACE_DATA": str(data)}
    with served_space(tmp_path, lb_dataset.folder, settings) as url:
        page = httpx.get(url, timeout=30).text
        assert (data / "leaderboard.db").is_file()  # the default store went to persistent storage
    assert "board-notice" not in page  # a kept store: no notice
    assert "store: " in (tmp_path / "app.log").read_text() and "ephemeral" not in (tmp_path / "app.log").read_text()


@pytest.mark.slow
def test_every_page_of_an_ephemeral_space_shows_the_notice_in_chromium(ephemeral_space):
    """Before Gradio's scripts run (held back), the plain notice and the plain table's copy; then the page's own,
    above the tabs, on the default tab, on another tab, and on a deep link."""
    require_chromium()
    from playwright.sync_api import expect

    ephemeral_url = ephemeral_space[0]

    def notice_of(page):
        return page.locator("#board-notice").get_by_text(EPHEMERAL_NOTICE, exact=True)

    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        held, released, scripts = [], [], re.compile(r"\.m?js(\?.*)?$")

        def hold(route) -> None:
            route.continue_() if released else held.append(route)

        page.route(scripts, hold)
        page.goto(ephemeral_url, wait_until="commit")
        plain = page.locator("#board-notice-first")
        expect(plain).to_have_text(EPHEMERAL_NOTICE, timeout=30_000)
        expect(plain).to_be_visible()
        box = page.locator("#first-paint")
        expect(box.get_by_text("BM25", exact=True)).to_be_visible(timeout=30_000)  # queued, but a row
        expect(box.get_by_role("note")).to_have_text(EPHEMERAL_NOTICE)  # the plain table covers the page: it says it
        assert held, "Gradio's scripts were not held back, so this proves nothing"
        released.append(True)
        for route in held:
            route.continue_()

        expect(notice_of(page)).to_be_visible(timeout=60_000)
        expect(plain).to_have_count(0)  # the plain copy gave way: the notice is shown once
        tabs = page.get_by_role("tab", name="Leaderboard")
        expect(tabs).to_be_visible()
        above = page.locator("#board-notice").bounding_box()
        assert above["y"] + above["height"] <= tabs.bounding_box()["y"]  # above the tabs
        page.get_by_role("tab", name="Submit").click()
        expect(page.locator("#leaderboard-table")).to_be_hidden()
        expect(notice_of(page)).to_be_visible()
        assert_reads_well(page, "an ephemeral Space's Submit tab")
        page.close()

        deep = browser.new_page(viewport={"width": 1400, "height": 900})
        deep.goto(f"{ephemeral_url}?topic=beta&sort=coverage@20")
        expect(deep.locator("#leaderboard-table").get_by_text("beta Coverage@20").first).to_be_attached(timeout=60_000)
        expect(notice_of(deep)).to_be_visible()
        assert_reads_well(deep, "an ephemeral Space's deep link")
        deep.close()
