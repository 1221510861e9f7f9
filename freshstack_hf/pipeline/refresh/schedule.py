"""The GitHub Actions workflow that runs `refresh` on a schedule: `refresh ... --write-workflow FILE`.

A benchmark stays fresh only if its next snapshot is made without anyone remembering to, and the tools people
already run for that are a scheduler they trust (GitHub's, or cron), not a daemon of ours. So `refresh` writes the
workflow file of the refresh it was given, instead of scheduling anything itself: the file's run step is that same
command (checked by the same argument parser), with the date left to the run (`--date today`, the UTC date, which
is the zone GitHub's schedules use).

What the workflow does, and why each part is there:

- *installs* this package at the version that wrote the file (or the `--install` spec), so a schedule runs the
  code the maintainer tried;
- *restores and saves the work folder* (`NAME-work`: the LLM response cache, the spend ledger, clones and memos)
  with `actions/cache`, the save step under `if: always()`: a run stopped at the budget cap, by the job's time
  limit or by a failure leaves what it paid for, and the next run (or a manual re-run with the stopped run's date
  and a larger budget, the dispatch inputs) goes on from there paying no call twice;
- keeps that cache alive: GitHub evicts a cache unused for 7 days, and a refresh without its work folder pays
  for every call of the snapshot again, as one built from scratch does, though the previous snapshot is on the
  Hub (`make bench`, `python -m benchmarks refresh`), so a second, weekly schedule runs a job that only restores
  the cache (a restore is a use), and a monthly refresh finds its work folder;
- with an embargo, keeps nothing embargoed in the cache: the work folder holds every embargoed question's text,
  answer, nuggets and judgments, and GitHub lets a workflow run on another branch of the repository restore a cache
  made on its default branch. So the cache holds the folder only packed (`tar`) and encrypted (`openssl enc
  -aes-256-cbc -pbkdf2`, the key a repository secret named by `--cache-key-secret`): a step after the restore
  decrypts it, a step before the save encrypts it, and no plaintext file is in a cached path. A run whose secret is
  empty stops before the refresh (an empty key would encrypt with no key at all). A definition with an embargo is
  refused without that secret, and so is a local `private_repo` (a hosted runner keeps nothing but its cache);
- runs the refresh job in one `concurrency:` group with `cancel-in-progress: false`, so two refreshes never
  overlap (a second waits; a running one, which is spending money, is never cancelled);
- reads every secret from the environment the step is given: `HF_TOKEN`, each topic's `llm.api_key_env`, and the
  `FRESHSTACK_LLM_BASE_URL` / `FRESHSTACK_LLM_MODEL` overrides (`pipeline.choose`) from the repository's Actions
  variables.

The file is refused, before anything is written, when it would not work on a runner: a local `--repo` (a hosted
runner keeps nothing but its cache, so the revisions must go to the Hub), a fixed `--date` (every run after the
first would find it published and do nothing), a definitions file outside the repository the file sits in (the
runner checks out that repository only), a path outside `.github/workflows/` (GitHub reads workflows only there),
or an existing file (unless `force`).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from freshstack_hf._version import __version__
from freshstack_hf.atomic import atomic_path
from freshstack_hf.errors import FreshStackError, Problem, ValidationError
from freshstack_hf.pipeline.config.topic import TopicConfig, is_hub_id, load_definitions
from freshstack_hf.pipeline.snapshots import TODAY
from freshstack_hf.repo.targets import open_target

DEFAULT_CRON = "0 6 1 * *"  # 06:00 UTC on the 1st of every month
KEEP_CACHE_CRONS = ("0 5 * * 1", "0 4 * * 1")  # weekly, under GitHub's 7 days; the second if the refresh took the first
# What a refresh needs (question sources and chunker, BM25, the dense model, the LLM client), at this version.
INSTALL = f"freshstack-hf[bm25,build,dense,llm]=={__version__}"
PYTHON = "3.11"
TIMEOUT_MINUTES = 350  # under the 360 a GitHub-hosted job may run, so the save step still runs after a stop
DATE_ENV, BUDGET_ENV = "REFRESH_DATE", "REFRESH_BUDGET_USD"
CRON_FIELD = re.compile(r"^[0-9A-Za-z*,/-]+$")
SECRET_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")  # GitHub's rule for a secret's name (and not GITHUB_...)
CACHE_KEY_ENV = "FRESHSTACK_CACHE_KEY"  # the variable the encrypt and decrypt steps read the key from
# AES-256 in CBC mode with a key derived from the secret by PBKDF2 (SHA-256, many rounds) and a random salt; the
# digest and the rounds are named so that another OpenSSL version derives the same key.
CIPHER = "-aes-256-cbc -pbkdf2 -iter 200000 -md sha256"


@dataclass(frozen=True)
class Schedule:
    """One scheduled refresh: the arguments of its run step (paths relative to the repository root, where a
    runner's steps start) and how the job around it is set up."""

    definitions: str
    repo: str
    budget_usd: float
    cron: str = DEFAULT_CRON
    out: str = ""
    install: str = INSTALL
    key_envs: tuple[str, ...] = ("OPENAI_API_KEY",)
    extra: tuple[str, ...] = ()  # further refresh options, as given (`--resamples N`, `--seed S`)
    notes: tuple[str, ...] = ()  # what the maintainer should know and is allowed (an embargo outlasting a run)
    cache_key_secret: str = ""  # the secret whose key encrypts the cached work folder ("": cached as it is)

    @property
    def keep_cache_cron(self) -> str:
        """The weekly schedule of the job that only restores the cache; never the refresh's own, since a run
        tells the two apart by `github.event.schedule`."""
        return next(c for c in KEEP_CACHE_CRONS if c != self.cron)

    @property
    def work(self) -> str:
        """The work folder the cache keeps: `NAME-work` beside the local mirror, as `work_folder.default_work_dir`."""
        mirror = Path(self.out or self.repo.split("/", 1)[1])
        return (mirror.parent / f"{mirror.name}-work").as_posix()

    @property
    def cached(self) -> str:
        """What the cache keeps: the work folder, or with `cache_key_secret` its encrypted pack beside it."""
        return f"{self.work}.tar.enc" if self.cache_key_secret else self.work

    def argv(self) -> list[str]:
        """The run step's `freshstack-hf` arguments, the date and budget left to the step's environment."""
        args = ["refresh", self.definitions, "--date", f"${DATE_ENV}", "--repo", self.repo]
        args += ["--budget-usd", f"${BUDGET_ENV}"]
        if self.out:
            args += ["--out", self.out]
        return [*args, *self.extra, "--quiet"]

    def command(self) -> str:
        """The run step as a shell line: every argument quoted, the two variables expanded by the shell."""
        return "freshstack-hf " + " ".join(_quote(a) for a in self.argv())

    def workflow(self) -> str:
        """The workflow file's text (YAML; `"on"` quoted so YAML 1.1 readers do not take it for `true`); with
        `cache_key_secret`, the steps that keep the work folder encrypted in the cache (`PackSteps`)."""
        pack = PackSteps.of(self)
        budget = f"{self.budget_usd:g}"
        key = f"freshstack-refresh-{re.sub(r'[^A-Za-z0-9._-]+', '-', self.cached)}-"
        q = json.dumps  # a JSON string is a YAML double-quoted scalar
        secrets = "\n".join(f"          {name}: ${{{{ secrets.{name} }}}}" for name in ("HF_TOKEN", *self.key_envs))
        keys = f"#   secrets:   HF_TOKEN (write access to {self.repo})" + "".join(f", {n}" for n in self.key_envs)
        keys += " (the LLM endpoint's key)\n" + pack.secret
        keys += "#   variables: FRESHSTACK_LLM_BASE_URL, FRESHSTACK_LLM_MODEL (optional; they replace the topic YAML's "
        keys += "llm: values)\n"
        return f"""\
# Written by `freshstack-hf refresh --write-workflow` (freshstack-hf {__version__}). Each run makes the next dated
# snapshot of the topics in {self.definitions} at the run's UTC date, within the LLM budget, and publishes it
# to the Hub dataset {self.repo} as a tag named by the date (a date already published: nothing to do).
#
# Set in Settings > Secrets and variables > Actions:
{keys}# Each topic's questions.source (a Stack Exchange dump or saved API pages, newer than the last snapshot) must be
# on the runner: commit it, or add a step before "Refresh" that downloads it.
#
# The cache keeps {self.work}/ (LLM response cache, spend ledger, clones, memos) even when a run stops at the
# budget cap or the time limit: run the workflow by hand (Actions > Run workflow) with the stopped run's date and
# a larger budget and it goes on where it stopped, paying no call twice. Without that folder a refresh pays for
# every call again, so the weekly keep-cache job restores it: GitHub evicts a cache unused for 7 days.
{pack.comment}name: freshstack refresh
"on":
  schedule:
    - cron: {q(self.cron)}  # the refresh (UTC)
    - cron: {q(self.keep_cache_cron)}  # keep-cache only
  workflow_dispatch:
    inputs:
      date:
        description: "Snapshot date, YYYY-MM-DD (empty: today, UTC). A stopped run's date resumes it."
        required: false
        default: ""
      budget_usd:
        description: "LLM budget in USD (empty: {budget})"
        required: false
        default: ""
permissions:
  contents: read
jobs:
  keep-cache:
    if: github.event.schedule == '{self.keep_cache_cron}'
    runs-on: ubuntu-latest
    steps:
      - name: Restore the work folder  # a restore is a use: the cache outlives GitHub's 7 days
        uses: actions/cache/restore@v4
        with:
          path: {q(self.cached)}
          key: {q(key + "${{ github.run_id }}-${{ github.run_attempt }}")}
          restore-keys: {q(key)}
  refresh:
    if: github.event.schedule != '{self.keep_cache_cron}'
    concurrency:  # one refresh at a time (a keep-cache run never waits for one); a running one is never cancelled
      group: {q("freshstack-refresh-" + self.repo)}
      cancel-in-progress: false
    runs-on: ubuntu-latest
    timeout-minutes: {TIMEOUT_MINUTES}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: {q(PYTHON)}
      - name: Install freshstack-hf
        run: |
          python -m pip install {shlex.quote(self.install)}
{pack.check}      - name: Restore the work folder
        uses: actions/cache/restore@v4
        with:
          path: {q(self.cached)}
          key: {q(key + "${{ github.run_id }}-${{ github.run_attempt }}")}
          restore-keys: {q(key)}
{pack.decrypt}      - name: Refresh
        env:
          {DATE_ENV}: ${{{{ inputs.date || 'today' }}}}
          {BUDGET_ENV}: ${{{{ inputs.budget_usd || '{budget}' }}}}
{secrets}
          FRESHSTACK_LLM_BASE_URL: ${{{{ vars.FRESHSTACK_LLM_BASE_URL }}}}
          FRESHSTACK_LLM_MODEL: ${{{{ vars.FRESHSTACK_LLM_MODEL }}}}
        run: |
          {self.command()}
{pack.encrypt}      - name: Save the work folder
        if: always()  # above all when the refresh stopped: what it paid for is in there
        uses: actions/cache/save@v4
        with:
          path: {q(self.cached)}
          key: {q(key + "${{ github.run_id }}-${{ github.run_attempt }}")}
"""


@dataclass(frozen=True)
class PackSteps:
    """The parts of a workflow whose cache keeps the work folder encrypted (all empty for one that keeps it as it
    is): the secret's line in the header, a comment, and the steps that check the key, decrypt after the restore
    and encrypt before the save. The plaintext folder is never in the cached path: only its pack is."""

    secret: str = ""
    comment: str = ""
    check: str = ""
    decrypt: str = ""
    encrypt: str = ""

    @staticmethod
    def of(schedule: Schedule) -> PackSteps:
        name = schedule.cache_key_secret
        if not name:
            return PackSteps()
        work, pack = Path(schedule.work), schedule.cached
        folder, parent, restoring = (shlex.quote(str(p)) for p in (work, work.parent, f"{work}.restoring"))
        pack_q = shlex.quote(pack)
        env = f"        env:\n          {CACHE_KEY_ENV}: ${{{{ secrets.{name} }}}}\n"
        missing = (
            f'test -n "${CACHE_KEY_ENV}" || {{ echo "::error::the repository secret {name} is not set: the work '
            "folder holds embargoed questions and is cached only encrypted with it (set it to a long random key: "
            'openssl rand -base64 48)"; exit 1; }'
        )
        return PackSteps(
            secret=f"#              {name} (a long random key: the cached work folder is encrypted with it)\n",
            comment=(
                "# With an embargo that folder holds the embargoed questions, so the cache keeps only its encrypted\n"
                f"# pack {pack} (AES-256, the key derived from the secret {name}):\n"
                "# decrypted after the restore, encrypted again before the save; without the secret a run stops.\n"
            ),
            check=_step("Check the cache key  # before anything is paid for", env, [missing]),
            decrypt=_step(
                "Decrypt the work folder",
                env,
                [
                    "set -o pipefail",
                    "umask 077",
                    f"if [ -f {pack_q} ]; then",
                    f"  rm -rf {restoring} && mkdir -p {restoring} {parent}",
                    f"  openssl enc -d {CIPHER} -pass env:{CACHE_KEY_ENV} -in {pack_q} | tar -x -f - -C {restoring}",
                    f"  rm -rf {folder} && mv {restoring}/{shlex.quote(work.name)} {folder}",
                    f"  rm -rf {restoring} {pack_q}",
                    "fi",
                ],
            ),
            encrypt=_step(
                "Encrypt the work folder",
                "        if: always()  # as the save: what a stopped run paid for is in there\n" + env,
                [
                    "set -o pipefail",
                    "umask 077",
                    f"if [ -d {folder} ]; then",
                    f"  {missing}",
                    f"  tar -c -f - -C {parent} {shlex.quote(work.name)} | openssl enc -e {CIPHER} -salt "
                    f"-pass env:{CACHE_KEY_ENV} -out {pack_q}",
                    "fi",
                ],
            ),
        )


def _step(name: str, head: str, lines: list[str]) -> str:
    """A step of the refresh job running `lines` in bash, `head` (its `if:` and `env:`) before its script."""
    return f"      - name: {name}\n{head}        run: |\n" + "".join(f"          {line}\n" for line in lines)


def _quote(arg: str) -> str:
    """Shell quoting that leaves `$VAR` to the shell: a variable goes in double quotes, anything else through
    `shlex.quote`."""
    if re.fullmatch(r"\$[A-Z_]+", arg):
        return f'"{arg}"'
    return shlex.quote(arg)


def plan_schedule(
    definitions: str | Path,
    repo: str,
    budget_usd: float,
    path: str | Path,
    *,
    date: str | None = None,
    out: str | None = None,
    cron: str = DEFAULT_CRON,
    install: str = INSTALL,
    extra: tuple[str, ...] = (),
    force: bool = False,
    cache_key_secret: str = "",
) -> Schedule:
    """The schedule `refresh ... --write-workflow PATH` writes, checked as far as this machine can: raises
    `ValidationError` (exit 2) naming every reason the workflow would not run, before anything is written."""
    path = Path(path)
    problems: list[Problem] = []
    root = _check_workflow_file(path, force, problems)
    _check_run(repo, out, date, cron, budget_usd, problems)
    configs = []
    try:
        configs = load_definitions(definitions)
    except FreshStackError as exc:
        problems.append(Problem(str(definitions), str(exc)))
    relative = _inside(root, definitions, "TOPICS.yaml", problems)
    for config in configs:
        if Path(config.path).resolve() != Path(definitions).resolve():
            _inside(root, config.path, f"topic {config.topic!r}:", problems)
    mirror = ""
    if out:
        mirror = out if Path(out).is_absolute() else _inside(root, out, "--out", problems)
    _check_embargo(configs, cache_key_secret, problems)
    if problems:
        raise ValidationError(problems, f"--write-workflow {path} refused; nothing was written")
    return Schedule(
        notes=tuple(embargo_notes(configs, cron)),
        definitions=relative,
        repo=repo,
        budget_usd=budget_usd,
        cron=" ".join(cron.split()),
        out=mirror,
        install=install,
        key_envs=tuple(sorted({c.llm.api_key_env for c in configs})) or ("OPENAI_API_KEY",),
        extra=extra,
        cache_key_secret=cache_key_secret,
    )


def _check_embargo(configs: list[TopicConfig], secret: str, problems: list[Problem]) -> None:
    """Where a topic with an embargo keeps its private parts on a hosted runner: its private revisions in a private
    Hub dataset (a local folder is gone with the runner), its work folder only encrypted in the cache (the cache
    of the default branch is restored by a run on any branch), with the key in a repository secret."""
    if secret and (not SECRET_NAME.match(secret) or secret.upper().startswith("GITHUB_")):
        problems.append(
            Problem(
                f"--cache-key-secret {secret}",
                "is not a name GitHub gives a secret",
                fix="letters, digits and _, not starting with a digit nor with GITHUB_ (e.g. FRESHSTACK_CACHE_KEY)",
            )
        )
    for config in configs:
        if config.embargo_days <= 0:
            continue
        if not is_hub_id(config.private_repo):
            problems.append(
                Problem(
                    f"topic {config.topic!r}: private_repo {config.private_repo}",
                    "is a local folder, and a GitHub-hosted runner keeps nothing of a run but its cache",
                    fix="name a private Hub dataset (private_repo: ORG/NAME), or refresh from cron on a machine that "
                    "keeps the folder",
                )
            )
        if not secret:
            problems.append(
                Problem(
                    f"topic {config.topic!r}: embargo_days {config.embargo_days}",
                    "the work folder the workflow caches would hold every embargoed question (text, answer, nuggets, "
                    "judgments) in plaintext, and a run on any branch can restore that cache",
                    fix="pass --cache-key-secret NAME and set the repository secret NAME to a long random key, e.g. "
                    "`openssl rand -base64 48`: the cache then keeps the folder only encrypted with it",
                )
            )


def interval_days(cron: str) -> int | None:
    """The fewest days between two runs of a plain daily, weekly or monthly cron line; None for anything else."""
    fields = cron.split()
    if len(fields) != 5:
        return None
    _, hour, dom, month, dow = fields
    if month != "*" or not hour.isdigit():
        return None
    if dom.isdigit() and dow == "*":
        return 28
    if dom == "*" and dow.isdigit():
        return 7
    if dom == "*" and dow == "*":
        return 1
    return None


def embargo_notes(configs: list[TopicConfig], cron: str) -> list[str]:
    """A topic whose embargo is longer than the time between two scheduled refreshes: allowed (its questions stay
    private across more than one refresh), and said, since a reader of the schedule may expect each run to release
    what the one before held."""
    days = interval_days(cron)
    return [
        f"topic {c.topic!r}: the embargo ({c.embargo_days} days) is longer than the {days} days or more between two "
        "scheduled refreshes: allowed: questions stay private across more than one refresh"
        for c in configs
        if days is not None and c.embargo_days > days
    ]


def _check_workflow_file(path: Path, force: bool, problems: list[Problem]) -> Path:
    """Where GitHub would find the file, and whether it may be written; returns the repository root it sits in."""
    if path.exists() and not force:
        problems.append(Problem(str(path), "exists already", fix="pass --force to replace it, or choose another file"))
    workflows = path.resolve().parent
    if workflows.name != "workflows" or workflows.parent.name != ".github" or path.suffix not in (".yml", ".yaml"):
        problems.append(
            Problem(
                f"--write-workflow {path}",
                "GitHub runs only the .yml/.yaml files in .github/workflows/ at a repository's root",
                fix="write it as .github/workflows/NAME.yml in the repository that holds the topic definitions",
            )
        )
    return workflows.parent.parent


def _check_run(
    repo: str, out: str | None, date: str | None, cron: str, budget_usd: float, problems: list[Problem]
) -> None:
    """The run's own arguments: a date left to each run, a cron line, a budget, and a Hub repo to publish to."""
    if date is not None and date.strip().lower() != TODAY:
        problems.append(
            Problem(
                f"--date {date}",
                "a schedule at a fixed date publishes once, then finds that revision published at every later run",
                fix="leave --date out (or give --date today): each run takes its own UTC date",
            )
        )
    fields = cron.split()
    if len(fields) != 5 or not all(CRON_FIELD.match(f) for f in fields):
        problems.append(
            Problem(f"--cron {cron!r}", "not a cron expression of five fields", fix='e.g. --cron "0 6 1 * *" (UTC)')
        )
    if not (budget_usd > 0):
        problems.append(
            Problem(
                f"--budget-usd {budget_usd:g}", "leaves nothing to spend", fix="give the most one run may spend, in USD"
            )
        )
    try:
        local = open_target(repo, out).local
    except FreshStackError as exc:
        problems.append(Problem(f"--repo {repo}", str(exc)))
        local = False
    if local:
        problems.append(
            Problem(
                f"--repo {repo}",
                "is a local folder, and a GitHub-hosted runner keeps nothing of a run but its cache",
                fix="publish to a Hub dataset (--repo ORG/NAME), or run the refresh from cron on a machine that keeps "
                "the folder (see the cron line in docs/refresh.md)",
            )
        )


def _inside(root: Path, value: str | Path, what: str, problems: list[Problem]) -> str:
    """`value` relative to the repository `root` (a runner checks out nothing else), or a problem naming it."""
    try:
        return Path(value).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        problems.append(
            Problem(
                f"{what} {value}",
                f"is outside {root}, the repository the workflow runs in (a runner checks out nothing else)",
                fix="keep the topic definitions in that repository",
            )
        )
        return str(value)


def write_workflow(schedule: Schedule, path: str | Path) -> Path:
    """Write the workflow file whole (a half-written workflow would be a broken schedule), its folders made."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(schedule.workflow(), encoding="utf-8")
    return path
