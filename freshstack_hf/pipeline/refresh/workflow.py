"""The GitHub Actions workflow file of a scheduled refresh: its text (`Schedule.workflow`) and its writing.

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

Which refreshes may be scheduled, and the checks before a file is written, are `refresh.schedule`'s.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from freshstack_hf._version import __version__
from freshstack_hf.atomic import atomic_path

DEFAULT_CRON = "0 6 1 * *"  # 06:00 UTC on the 1st of every month
KEEP_CACHE_CRONS = ("0 5 * * 1", "0 4 * * 1")  # weekly, under GitHub's 7 days; the second if the refresh took the first
# What a refresh needs (question sources and chunker, BM25, the dense model, the LLM client), at this version.
INSTALL = f"freshstack-hf[bm25,build,dense,llm]=={__version__}"
PYTHON = "3.11"
TIMEOUT_MINUTES = 350  # under the 360 a GitHub-hosted job may run, so the save step still runs after a stop
DATE_ENV, BUDGET_ENV = "REFRESH_DATE", "REFRESH_BUDGET_USD"
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
        key = f"freshstack-refresh-{re.sub(r'[^A-Za-z0-9._-]+', '-', self.cached)}-"
        return self._header(pack) + self._triggers(key) + self._refresh_job(pack, key)

    def _header(self, pack: PackSteps) -> str:
        """The comment a maintainer reads first: what each run does, the secrets and variables to set, the cache."""
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
{pack.comment}"""

    def _triggers(self, key: str) -> str:
        """The two schedules and the manual run, and the keep-cache job that only restores the cache."""
        budget = f"{self.budget_usd:g}"
        q = json.dumps  # a JSON string is a YAML double-quoted scalar
        return f"""\
name: freshstack refresh
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
"""

    def _refresh_job(self, pack: PackSteps, key: str) -> str:
        """The refresh job: install, restore (and decrypt), refresh, (encrypt and) save, one run at a time."""
        budget = f"{self.budget_usd:g}"
        q = json.dumps  # a JSON string is a YAML double-quoted scalar
        secrets = "\n".join(f"          {name}: ${{{{ secrets.{name} }}}}" for name in ("HF_TOKEN", *self.key_envs))
        return f"""\
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


def write_workflow(schedule: Schedule, path: str | Path) -> Path:
    """Write the workflow file whole (a half-written workflow would be a broken schedule), its folders made."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        tmp.write_text(schedule.workflow(), encoding="utf-8")
    return path
