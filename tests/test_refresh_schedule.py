"""`refresh ... --write-workflow`: the GitHub Actions workflow that runs a refresh on a schedule, and `--date today`.

No runner is at hand, so the file is checked for what a runner would do with it: it parses as YAML; its run step,
executed by bash with the step's environment as GitHub would evaluate it for a scheduled and for a dispatched run,
hands `freshstack-hf` arguments that the CLI's own parser accepts; and those arguments, run for real (as a dry run,
against the tests' fake Hub), plan the snapshot at the run's UTC date. Its cache step keeps the folder a refresh
really writes its work to, and its secrets are the variables the library really reads.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from docs_pages import all_blocks
from docs_pages import blocks as page_blocks
from snapshot_topic import make_history, write_definition
from test_refresh import FakeHub

from freshstack_hf.cli.main import build_parser, main
from freshstack_hf.pipeline.choose import ENV_BASE_URL, ENV_MODEL
from freshstack_hf.pipeline.refresh.workflow import INSTALL, Schedule
from freshstack_hf.pipeline.snapshots import check_date
from freshstack_hf.pipeline.work_folder import default_work_dir

WORKFLOW = ".github/workflows/freshstack-refresh.yml"
SCHEDULE_PAGE = Path(__file__).resolve().parents[1] / "docs" / "refresh.md"
LLM = {  # an endpoint nothing calls (the tests only plan), with its key in a variable of its own
    "base_url": "http://127.0.0.1:9/v1",
    "model": "test-model",
    "api_key_env": "MY_LLM_KEY",
    "input_price_per_million": 2.5,
    "output_price_per_million": 10.0,
}


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def utc_today() -> str:
    return datetime.now(UTC).date().isoformat()


def tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*")}


def step(workflow: dict[str, Any], name: str) -> dict[str, Any]:
    steps = workflow["jobs"]["refresh"]["steps"]
    found = [s for s in steps if s.get("name") == name or s.get("uses", "").startswith(name)]
    assert len(found) == 1, f"one step {name!r} expected in {steps}"
    return found[0]


def evaluate(value: str, inputs: dict[str, str], secrets: dict[str, str], variables: dict[str, str]) -> str:
    """GitHub's `${{ ... }}` for the forms the workflow uses: `inputs.X || 'default'`, `secrets.X`, `vars.X` (an
    input or a variable not set is empty, as on a scheduled run)."""

    def one(m: re.Match[str]) -> str:
        expr = m[1].strip()
        if found := re.fullmatch(r"inputs\.(\w+) \|\| '([^']*)'", expr):
            return inputs.get(found[1]) or found[2]
        if found := re.fullmatch(r"(secrets|vars)\.(\w+)", expr):
            return (secrets if found[1] == "secrets" else variables).get(found[2], "")
        raise AssertionError(f"an expression this test does not know: {expr}")

    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


def run_step_argv(workflow: dict[str, Any], root: Path, inputs: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """The `freshstack-hf` arguments the Refresh step's script passes, run by bash with the step's environment
    (a stand-in `freshstack-hf` first on PATH records them), and that environment."""
    refresh = step(workflow, "Refresh")
    secrets = {"HF_TOKEN": "hf_secret", "MY_LLM_KEY": "sk-secret"}
    variables = {ENV_MODEL: "other-model"}
    env = {k: evaluate(str(v), inputs, secrets, variables) for k, v in refresh["env"].items()}
    shim = root / "shim"
    shim.mkdir(exist_ok=True)
    record = shim / "argv.json"
    (shim / "freshstack-hf").write_text(
        '#!/usr/bin/env python3\nimport json, sys\njson.dump(sys.argv[1:], open(sys.argv[0] + ".json", "w"))\n',
        encoding="utf-8",
    )
    (shim / "freshstack-hf").chmod(0o755)
    done = subprocess.run(
        ["bash", "-e", "-c", refresh["run"]],
        cwd=root,
        env={"PATH": f"{shim}:{os.environ['PATH']}", **env},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    os.replace(shim / "freshstack-hf.json", record)
    return json.loads(record.read_text(encoding="utf-8")), env


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository holding the tests' topic (an online definition whose key is MY_LLM_KEY), as the cwd."""
    make_history(tmp_path)
    write_definition(tmp_path, llm=LLM)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(*extra: str) -> tuple[int, str, str]:
    return run_cli("refresh", "laravel.yaml", "--repo", "me/freshstack", "--budget-usd", "40", *extra)


# ---- the file --------------------------------------------------------------------------------------------------


def test_the_workflow_parses_and_runs_a_refresh_the_cli_accepts(project):
    code, out, err = write("--write-workflow", WORKFLOW)
    assert code == 0, err
    assert f"wrote {WORKFLOW}" in out
    workflow = yaml.safe_load((project / WORKFLOW).read_text(encoding="utf-8"))

    # `"on"` is quoted: a YAML 1.1 reader would take it for True; the refresh's schedule, then the keep-cache one
    refresh_cron, keep_cron = (s["cron"] for s in workflow["on"]["schedule"])
    assert (refresh_cron, keep_cron) == ("0 6 1 * *", "0 5 * * 1")
    assert set(workflow["on"]["workflow_dispatch"]["inputs"]) == {"date", "budget_usd"}
    job = workflow["jobs"]["refresh"]
    assert job["concurrency"] == {"group": "freshstack-refresh-me/freshstack", "cancel-in-progress": False}
    assert job["runs-on"] == "ubuntu-latest" and job["timeout-minutes"] < 360  # the save step runs after a stop
    # a run tells its job by the schedule that started it: the refresh on its own and on a dispatch, else keep-cache
    assert job["if"] == f"github.event.schedule != '{keep_cron}'"
    assert workflow["jobs"]["keep-cache"]["if"] == f"github.event.schedule == '{keep_cron}'"
    assert step(workflow, "actions/checkout")["uses"] == "actions/checkout@v4"

    # pip installs this package, at the version that wrote the file
    install = shlex.split(step(workflow, "Install freshstack-hf")["run"])
    assert install == ["python", "-m", "pip", "install", INSTALL]
    from packaging.requirements import Requirement

    from freshstack_hf._version import __version__

    requirement = Requirement(install[-1])
    assert requirement.name == "freshstack-hf" and str(requirement.specifier) == f"=={__version__}"
    assert {"build", "llm", "bm25", "dense"} <= requirement.extras

    # the cache keeps the folder a refresh of this Hub repo really works in, and is saved even after a failure
    work = default_work_dir(Path("freshstack"), "refresh@x").parent.as_posix()
    restore, save = step(workflow, "Restore the work folder"), step(workflow, "Save the work folder")
    assert restore["uses"] == "actions/cache/restore@v4" and save["uses"] == "actions/cache/save@v4"
    assert restore["with"]["path"] == save["with"]["path"] == work == "freshstack-work"
    assert save["if"] == "always()" and restore["with"]["key"] == save["with"]["key"]
    assert restore["with"]["key"].startswith(restore["with"]["restore-keys"])
    assert "${{ github.run_id }}" in save["with"]["key"]  # a cache is immutable: each run saves its own
    # the weekly job only restores the same cache, so GitHub (which evicts a cache unused for 7 days) keeps it
    (keep,) = workflow["jobs"]["keep-cache"]["steps"]
    assert keep["uses"] == "actions/cache/restore@v4" and keep["with"] == restore["with"]

    # a scheduled run: no inputs, so today (UTC) and the budget written into the file
    argv, env = run_step_argv(workflow, project, inputs={})
    assert argv[0] == "refresh"
    args = build_parser().parse_args(argv)
    assert (args.definitions, args.repo, args.budget_usd, args.date) == ("laravel.yaml", "me/freshstack", 40.0, "today")
    assert args.quiet and not args.dry_run and args.write_workflow is None
    # the secrets the library reads, from the environment: HF_TOKEN, the topic's key variable, the LLM overrides
    assert env["HF_TOKEN"] == "hf_secret" and env["MY_LLM_KEY"] == "sk-secret"
    assert env[ENV_MODEL] == "other-model" and env[ENV_BASE_URL] == ""  # unset: the YAML's base_url stays
    assert "OPENAI_API_KEY" not in env  # only the key the topic names
    assert "sk-secret" not in (project / WORKFLOW).read_text(encoding="utf-8")

    # a dispatched run resuming a stopped one: its date and a larger budget
    argv, _ = run_step_argv(workflow, project, inputs={"date": "2024-08-31", "budget_usd": "60"})
    args = build_parser().parse_args(argv)
    assert (args.date, args.budget_usd) == ("2024-08-31", 60.0)


def test_the_run_step_plans_the_snapshot_at_the_runs_utc_date(project, monkeypatch):
    """The run step's own arguments, run for real as a dry run against the fake Hub: a plan at today (UTC)."""
    assert write("--write-workflow", WORKFLOW, "--cron", "30 4 * * 1", "--resamples", "200")[0] == 0
    workflow = yaml.safe_load((project / WORKFLOW).read_text(encoding="utf-8"))
    assert [s["cron"] for s in workflow["on"]["schedule"]] == ["30 4 * * 1", "0 5 * * 1"]
    argv, env = run_step_argv(workflow, project, inputs={})
    assert argv[argv.index("--resamples") + 1] == "200"  # options given beside the schedule travel with it
    FakeHub(project / "hub").install(monkeypatch)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    before = utc_today()
    code, out, err = run_cli(*argv, "--dry-run")
    assert code == 0, err
    assert re.search(r"--date today: (\S+) \(UTC\)", out)[1] in {before, utc_today()}
    assert "topic laravel (" in out and "dry run: nothing was built" in out
    assert "within --budget-usd 40" in out


def test_date_today_is_the_utc_date_wherever_the_machine_is():
    import time

    zone = os.environ.get("TZ")
    try:
        for offset in ("Etc/GMT+12", "Etc/GMT-14"):  # a day behind UTC, and (part of the day) a day ahead
            os.environ["TZ"] = offset
            time.tzset()
            before = utc_today()
            assert check_date("today") in {before, utc_today()}
            assert check_date(" Today ") in {before, utc_today()}
    finally:
        if zone is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = zone
        time.tzset()


# ---- refusals --------------------------------------------------------------------------------------------------


def test_an_existing_workflow_is_kept_unless_forced(project):
    path = project / WORKFLOW
    path.parent.mkdir(parents=True)
    path.write_text("# mine\n", encoding="utf-8")
    code, _, err = write("--write-workflow", WORKFLOW)
    assert code == 2 and f"{WORKFLOW}: exists already (pass --force" in err
    assert path.read_text(encoding="utf-8") == "# mine\n"
    code, _, err = write("--write-workflow", WORKFLOW, "--force", "--cron", "0  5 * *  1")  # the keep-cache time
    assert code == 0, err
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert [s["cron"] for s in workflow["on"]["schedule"]] == ["0 5 * * 1", "0 4 * * 1"]  # still told apart
    assert workflow["jobs"]["keep-cache"]["if"] == "github.event.schedule == '0 4 * * 1'"


def test_a_workflow_that_could_not_run_is_refused_naming_every_reason(project, tmp_path_factory):
    before = tree(project)
    code, _, err = run_cli(
        "refresh", "laravel.yaml", "--repo", "./freshstack", "--budget-usd", "0", "--date", "2024-08-31",
        "--cron", "every month", "--write-workflow", "workflows/refresh.yml",
    )  # fmt: skip
    assert code == 2
    assert "refused; nothing was written: 5 problems" in err
    for piece in (
        "GitHub runs only the .yml/.yaml files in .github/workflows/",
        "--date 2024-08-31: a schedule at a fixed date publishes once",
        "--cron 'every month': not a cron expression of five fields",
        "--budget-usd 0: leaves nothing to spend",
        "--repo ./freshstack: is a local folder, and a GitHub-hosted runner keeps nothing",
    ):
        assert piece in err, err

    elsewhere = tmp_path_factory.mktemp("elsewhere")  # a definition the runner's checkout would not hold
    write_definition(elsewhere, llm=LLM)
    code, _, err = run_cli(
        "refresh", str(elsewhere / "laravel.yaml"), "--repo", "me/freshstack", "--budget-usd", "40",
        "--write-workflow", WORKFLOW,
    )  # fmt: skip
    assert code == 2 and f"TOPICS.yaml {elsewhere / 'laravel.yaml'}: is outside {project}" in err

    code, _, err = write("--write-workflow", WORKFLOW, "--dry-run")
    assert code == 2 and "--dry-run with --write-workflow" in err
    assert tree(project) == before  # nothing written by any of them


def test_schedule_options_and_a_missing_date_without_a_workflow_are_refused(project):
    code, _, err = write("--date", "2024-08-31", "--cron", "0 6 1 * *", "--force")
    assert code == 2 and "--cron, --force: only with --write-workflow FILE" in err
    code, _, err = write()
    assert code == 2 and "--date is required" in err


# ---- the docs' schedule page -------------------------------------------------------------------------------------


def test_the_schedule_pages_refresh_commands_are_accepted_by_the_cli():
    """Every `freshstack-hf refresh` line of the docs' "Refresh on a schedule" page (its crontab lines included)
    parses, and its --write-workflow example names no --date (each run takes its own)."""
    section = SCHEDULE_PAGE.read_text(encoding="utf-8")
    outputs = {block.output_line for block in page_blocks(SCHEDULE_PAGE)}  # what a command printed: not commands
    blocks = [
        source for lang, source, line in all_blocks(SCHEDULE_PAGE) if lang in ("bash", "text") and line not in outputs
    ]
    commands = [
        line.split("freshstack-hf ", 1)[1].split(" >>", 1)[0]
        for block in blocks
        for line in block.replace("\\\n", " ").splitlines()
        if "freshstack-hf refresh " in line
    ]
    assert len(commands) >= 4, commands
    parser = build_parser()
    written = []
    for command in commands:
        args = parser.parse_args(shlex.split(command, comments=True))
        assert args.command == "refresh" and args.budget_usd > 0
        assert args.date or args.write_workflow, command
        written += [args] if args.write_workflow else []
    assert written and all(a.write_workflow.startswith(".github/workflows/") and not a.date for a in written)
    # the run step the section quotes is the one such a workflow has
    (example,) = written
    schedule = Schedule(example.definitions, example.repo, example.budget_usd)
    assert f"`{schedule.command()}`" in " ".join(section.split())
