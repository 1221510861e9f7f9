"""The Space deployment (`freshstack-hf space`): the folder's front matter, pins and app entry; an existing folder
left alone without --force; the Space's settings turned into `leaderboard` arguments; and the generated app.py
launched as a Space would run it (offline, on a local dataset), its table found over HTTP and in headless
Chromium (that part skips, saying why, where /usr/bin/chromium is absent)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import httpx
import pytest
import yaml
from browser_checks import assert_reads_well, headless_chromium, require_chromium
from ports import free_port

from freshstack_hf.errors import FreshStackError
from leaderboard.space import SpaceSpec, pinned_requirements, write_space
from leaderboard.space_app import leaderboard_argv, space_environment

CHECKOUT = Path(__file__).resolve().parents[1]
SPEC = SpaceSpec(dataset="org/freshstack", revision="v1")


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
    assert "leaderboard.space_app" in (target / "app.py").read_text()
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
    assert "--store" not in argv and "--worker" in argv and "--oauth" in argv  # SQLite: nobody else claims jobs
    assert "--no-baseline-worker" not in argv  # and the in-Space worker computes the baselines too
    assert "--oauth" not in leaderboard_argv("org/freshstack", "v1", {})  # off a Space Gradio's login is a mock

    pg = {"FRESHSTACK_STORE": "postgresql://lb@db/freshstack", "FRESHSTACK_OAUTH": "0", "FRESHSTACK_BASELINES": "none"}
    argv = leaderboard_argv("org/freshstack", "v1", pg)
    assert argv[argv.index("--store") + 1] == pg["FRESHSTACK_STORE"]
    assert "--worker" not in argv and "--oauth" not in argv and "--no-baselines" in argv  # GPU workers claim
    assert "--no-baseline-worker" in argv  # nor do the baselines: they are the GPU workers' too

    local = leaderboard_argv("org/freshstack", "v1", {"FRESHSTACK_DATASET": str(tmp_path)})
    assert local[:2] == ["--dataset", str(tmp_path)] and "--revision" not in local  # the pin is the Hub's

    data = tmp_path / "data"
    assert space_environment({}, data) == {}  # no persistent storage: nothing moved
    data.mkdir()
    moved = space_environment({"HF_HOME": "/elsewhere"}, data)
    assert moved == {"FRESHSTACK_DATA_DIR": str(data), "FRESHSTACK_CACHE": str(data / "cache")}


@pytest.fixture(scope="module")
def space_url(tmp_path_factory, lb_dataset) -> Iterator[str]:
    """The generated app.py run as a Space runs it, on the local test dataset, offline, on a free port."""
    root = tmp_path_factory.mktemp("space")
    folder = write_space(root / "space", SPEC)
    port = free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "GRADIO_ANALYTICS_ENABLED": "False",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(CHECKOUT), os.environ.get("PYTHONPATH")])),
        "FRESHSTACK_DATASET": str(lb_dataset.folder),
        "FRESHSTACK_STORE": f"sqlite:///{root / 'lb.db'}",
        "FRESHSTACK_DATA_DIR": str(root / "data"),
        "FRESHSTACK_BASELINES": "bm25",
        "FRESHSTACK_SPACE_WORKER": "0",
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
    }
    log = (root / "app.log").open("w")
    proc = subprocess.Popen([sys.executable, "app.py"], cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(f"app.py exited with {proc.returncode}:\n{(root / 'app.log').read_text()[-3000:]}")
            try:
                if httpx.get(url, timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.3)
        else:
            pytest.fail(f"app.py did not answer within 120 s:\n{(root / 'app.log').read_text()[-3000:]}")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


@pytest.mark.slow
def test_the_generated_app_serves_the_table(space_url):
    page = httpx.get(space_url, timeout=30).text
    assert "first-paint.json" in page  # the top rows are drawn before Gradio's scripts start
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
