"""Make the next dated snapshot of every topic and publish it: plan, build within a budget, validate, publish, drift.

For each topic of TOPICS.yaml the snapshot at DATE takes the questions asked since the last published snapshot plus
the carried ones, and every repository at its last commit on or before DATE (pins in the definition and its
`questions.until` are replaced by DATE). The plan is printed with its estimated LLM calls, tokens and cost; when the
estimate is over --budget-usd the refresh is refused (exit 2) and nothing is written (only caches are refreshed: a
kept clone is fetched, a Hub repo's previous snapshot downloaded into --out). Otherwise each topic is built
(resumable: a killed refresh goes on where it stopped and pays no call twice), the drift report against the
previous snapshot is written into the revision (drift/PREVIOUS/drift.md), the revision is validated, and published
as DATE: the folder REPO@DATE beside a local repo, or a Hub commit tagged DATE. A refresh at a date already published
does nothing. The LLM spend really made is recorded in the manifest (`refresh`) and never passes --budget-usd: the
run stops at the cap, and the same command with a larger budget goes on from there.

TOPICS.yaml is a topic definition (scripts/topics/laravel.yaml) or a list of them, paths relative to the file:

  topics:
    - laravel.yaml
    - langchain.yaml

The LLM calls are priced from each definition's `llm.input_price_per_million` / `llm.output_price_per_million`
(both required for an endpoint; the offline backend costs nothing). Work files, the response cache and the ledger
of paid calls live in REPO-work/ beside the repo (beside --out for a Hub repo). --repo ORG/NAME is a Hub id unless a
folder ORG exists here; start a local path with ./ or / to be sure.

--date today is the UTC date when the command runs, for a schedule. With --write-workflow FILE nothing is refreshed:
the GitHub Actions workflow that runs this refresh on a schedule (--cron, UTC, default monthly) is written to FILE
(in .github/workflows/), --date left to each run (`today`; a dispatch input to resume a stopped run at its date),
the work folder kept by actions/cache so a stopped run resumes (a weekly job restores it, or GitHub evicts it
after 7 days), one run at a time, secrets from the environment
(HF_TOKEN, the topics' llm.api_key_env, FRESHSTACK_LLM_BASE_URL/MODEL). It needs a Hub --repo; an existing file
is kept unless --force. A topic with an embargo needs --cache-key-secret NAME (a repository secret holding a long
random key): its work folder holds the embargoed questions, so the cache keeps it only encrypted with that key; and
its private_repo must be a Hub dataset. On a machine of your own, a cron line does the same (see docs/refresh.md).

Example:
  freshstack-hf refresh scripts/topics/laravel.yaml --date 2025-10-31 --repo freshstack --budget-usd 40 --dry-run
  freshstack-hf refresh topics.yaml --date 2025-10-31 --repo ./out/freshstack --budget-usd 40
  HF_TOKEN=hf_... freshstack-hf refresh topics.yaml --date 2025-10-31 --repo me/freshstack --budget-usd 40 --out mirror
  freshstack-hf refresh topics.yaml --repo me/freshstack --budget-usd 40 \
      --write-workflow .github/workflows/freshstack-refresh.yml --cron "0 6 1 * *"
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re

from freshstack_hf.cli.common import add_resampling_arguments, write_json
from freshstack_hf.cli.drift import summary
from freshstack_hf.cli.main import main
from freshstack_hf.defaults import RESAMPLES, SEED
from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.refresh.run import refresh
from freshstack_hf.pipeline.refresh.schedule import plan_schedule
from freshstack_hf.pipeline.refresh.workflow import DEFAULT_CRON, INSTALL, write_workflow


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("definitions", metavar="TOPICS.yaml", help="a topic definition, or `topics:` listing several")
    p.add_argument(
        "--date",
        help="the snapshot's date, YYYY-MM-DD (today or earlier), or `today` (the UTC date when it runs); "
        "required unless --write-workflow",
    )
    p.add_argument(
        "--repo",
        required=True,
        help="dataset repo: a local folder (revisions REPO@DATE beside it) or a Hub id ORG/NAME",
    )
    p.add_argument(
        "--budget-usd", type=float, required=True, help="most the LLM calls of this refresh may cost, in USD"
    )
    p.add_argument("--out", help="local mirror of a Hub --repo (default: ./NAME)")
    p.add_argument(
        "--dry-run", action="store_true", help="print the plan and whether it fits the budget; write nothing"
    )
    add_resampling_arguments(p)
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    schedule = p.add_argument_group("a schedule (refreshes nothing now)")
    schedule.add_argument(
        "--write-workflow",
        metavar="FILE",
        help="write the GitHub Actions workflow that runs this refresh on a schedule, --date today each run",
    )
    schedule.add_argument("--cron", help="the workflow's schedule, UTC (default: 0 6 1 * *, monthly)")
    schedule.add_argument(
        "--install",
        help="the pip spec the workflow installs (default: this version from PyPI; `.[bm25,build,"
        "dense,llm]` for a workflow in this project's own repository)",
    )
    schedule.add_argument(
        "--cache-key-secret",
        metavar="NAME",
        help="the repository secret holding the key the workflow encrypts its cached work folder with (openssl, "
        "AES-256); required when a topic has an embargo, since that folder holds the embargoed questions",
    )
    schedule.add_argument("--force", action="store_true", help="replace an existing workflow file")
    p.add_argument(
        "--store",
        metavar="URL",
        nargs="?",
        const="",
        help="a leaderboard's store: once DATE is published (or found published), every system it holds and the "
        "board's baselines are queued on DATE for its workers (`freshstack-hf remeasure --baselines`, installed "
        "with the leaderboard). `--store` without a URL tells the board's default store, as `remeasure` and the "
        "board read it: $FRESHSTACK_STORE, else the SQLite file in the data dir. Without --store no board is told, "
        "even with $FRESHSTACK_STORE set",
    )
    p.add_argument(
        "--live-per-week",
        type=int,
        metavar="N",
        help="with --store: the board's live quota (its `leaderboard --live-per-week`), which each model queued "
        "again on DATE counts against for its owner (`remeasure --live-per-week`; default: the leaderboard's)",
    )
    p.add_argument("--json", action="store_true", help="print the result (plans, spend, drift reports) as JSON")


def run(args: argparse.Namespace) -> int:
    if args.resamples < 0:
        raise FreshStackError("--resamples must be >= 0 (0 leaves the drift intervals out)")
    if args.write_workflow:
        return _write_workflow(args)
    schedule_only = (
        ("--cron", args.cron),
        ("--install", args.install),
        ("--cache-key-secret", args.cache_key_secret),
        ("--force", args.force),
    )
    unused = [flag for flag, value in schedule_only if value]
    if unused:
        raise FreshStackError(f"{', '.join(unused)}: only with --write-workflow FILE")
    if args.live_per_week is not None and (args.store is None or args.live_per_week < 0):
        raise FreshStackError(
            "--live-per-week N: only with --store, and N >= 0 (0: nothing re-measured is scored live)"
        )
    if not args.date:
        raise FreshStackError("--date is required: the snapshot's date, YYYY-MM-DD, or `today`")
    echo = (lambda _line: None) if args.json else print
    result = refresh(
        args.definitions,
        args.date,
        args.repo,
        args.budget_usd,
        out=args.out,
        dry_run=args.dry_run,
        resamples=args.resamples,
        seed=args.seed,
        show_progress=not (args.quiet or args.json),
        echo=echo,
    )
    if args.store is not None and result.status != "planned":
        _tell_the_board(args.store, args.repo, result.date, quiet=args.json, live_per_week=args.live_per_week)
    if args.json:
        write_json(result.as_json(), "-")
        return 0
    if result.drift_reports:
        for report in result.drift_reports:
            print(summary(report))
    return 0


def _tell_the_board(store: str, repo: str, date: str, *, quiet: bool, live_per_week: int | None = None) -> None:
    """Queue every system of the leaderboard store `store` on revision `date` of `repo`, and the board's baseline
    rows of it, through the leaderboard's `remeasure` command (a plug-in command: the library never imports the
    leaderboard). An empty `store` (`--store` alone) leaves the URL to `remeasure`'s default, the one the board's
    commands share, and `remeasure` says on stderr which store it used; `live_per_week` None leaves the live quota
    the re-measured models count against to `remeasure`'s default, the leaderboard's."""
    where = ["--store", store] if store else []
    quota = ["--live-per-week", str(live_per_week)] if live_per_week is not None else []
    command = ["remeasure", *where, "--dataset", repo, "--revision", date, "--baselines", *quota]
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out) if quiet else contextlib.nullcontext():
            code = main(command)
    except SystemExit as exc:  # argparse: no such command, the leaderboard is not installed
        code = exc.code if isinstance(exc.code, int) else 2
    if code != 0:
        raise FreshStackError(
            f"revision {date} is published, but the board's store could not be told (`freshstack-hf "
            f"{' '.join(_hide_password(a) for a in command)}` ended with {code}; its error is above): install the "
            "leaderboard (pip install 'freshstack-hf[leaderboard]') or fix the store, and run that command"
        )


def _hide_password(arg: str) -> str:
    """A command-line word as an error shows it: a URL's password replaced by ***."""
    return re.sub(r"^([a-z][a-z0-9+.-]*://[^/@]*?:)[^/@]*@", r"\1***@", arg)


def _write_workflow(args: argparse.Namespace) -> int:
    """`--write-workflow`: the schedule of the refresh these arguments describe, written instead of run."""
    if args.dry_run:
        raise FreshStackError("--dry-run with --write-workflow: a schedule of plans would spend and publish nothing")
    extra = [("--resamples", args.resamples, RESAMPLES), ("--seed", args.seed, SEED)]
    schedule = plan_schedule(
        args.definitions,
        args.repo,
        args.budget_usd,
        args.write_workflow,
        date=args.date,
        out=args.out,
        cron=args.cron or DEFAULT_CRON,
        install=args.install or INSTALL,
        extra=tuple(a for flag, value, default in extra if value != default for a in (flag, str(value))),
        force=args.force,
        cache_key_secret=args.cache_key_secret or "",
    )
    path = write_workflow(schedule, args.write_workflow)
    if args.json:
        workflow = {"workflow": str(path), "cron": schedule.cron, "run": schedule.command(), "cache": schedule.cached}
        write_json({**workflow, "notes": list(schedule.notes)}, "-")
        return 0
    print(f"wrote {path}: runs `{schedule.command()}` at cron {schedule.cron!r} (UTC)")
    if schedule.cache_key_secret:
        print(
            f"  caches {schedule.work}/ between runs, encrypted ({schedule.cached}); set the secrets HF_TOKEN, "
            f"{', '.join(schedule.key_envs)}, {schedule.cache_key_secret} (a long random key)"
        )
    else:
        print(f"  caches {schedule.work}/ between runs; set the secrets HF_TOKEN, {', '.join(schedule.key_envs)}")
    for note in schedule.notes:
        print(f"  note: {note}")
    return 0
