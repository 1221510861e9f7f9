"""A Hugging Face Space folder that serves the leaderboard (`freshstack-hf space DIR`).

The folder is what a Space needs and nothing more: a README whose YAML front matter makes it a Gradio Space
with Hugging Face sign-in, a few-line `app.py` that hands over to `leaderboard.deploy.space_app` (so the Space runs
the project's own code, not a copy that drifts from it), `requirements.txt` pinned to the versions installed
here (the versions the tests passed on), and `WORKER.md`, the command GPU machines run against the same
PostgreSQL store. The folder is written beside its destination and renamed into place, so an interrupted
write leaves no half folder, and an existing folder is replaced only when asked (`force`).
"""

from __future__ import annotations

import json
import re
import shutil
import uuid
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from freshstack_hf.errors import FreshStackError

PROJECT = "freshstack-hf"
# The extras the Space's app uses: the page and its store, the baselines its in-Space worker computes (BM25 and
# dense), and the answers track's judge client.
EXTRAS = ("leaderboard", "bm25", "dense", "llm")
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
# `hf_oauth: true` needs Gradio's OAuth extra (authlib, itsdangerous); the `leaderboard` extra lists them too, and
# naming the extra keeps the Space's requirements right whatever Gradio's OAuth needs in a later release.
ADDED_EXTRAS = {"gradio": {"oauth"}}
SHORT_DESCRIPTION_MAX = 60  # the Hub refuses a longer `short_description`


@dataclass(frozen=True)
class SpaceSpec:
    """What a Space deployment is made of: the dataset it serves, pinned, and how it presents itself."""

    dataset: str
    revision: str
    title: str = "FreshStack leaderboard"
    emoji: str = "📊"
    short_description: str = "Nugget-aware retrieval leaderboard on FreshStack"
    project_requirement: str | None = None  # default: `freshstack-hf[extras]==<installed version>`

    def check(self) -> None:
        """Refuse what the Space could not serve: it downloads the dataset, so a local folder will not do."""
        if not HUB_ID.match(self.dataset):
            raise FreshStackError(
                f"--dataset {self.dataset!r}: give the Hub id the Space downloads (ORG/freshstack); a local folder "
                "is not on the Space (test one locally with FRESHSTACK_DATASET=FOLDER python app.py)"
            )
        if not self.revision.strip() or any(c.isspace() or c in "\"'\\" for c in self.revision):
            raise FreshStackError(f"--revision {self.revision!r}: give a Hub tag, branch or commit (e.g. v1)")
        if len(self.short_description) > SHORT_DESCRIPTION_MAX:
            raise FreshStackError(
                f"--short-description is {len(self.short_description)} characters; the Hub takes at most "
                f"{SHORT_DESCRIPTION_MAX}"
            )


def installed_version(name: str) -> str:
    """The installed version of a distribution; a missing one is a user error, since its pin cannot be known."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError as exc:
        hint = f"{name} is not installed here, so its version cannot be pinned: pip install {name}"
        raise FreshStackError(hint) from exc


def pinned_requirements(project_requirement: str | None = None) -> list[str]:
    """The project line, then every dependency of the project and of `EXTRAS` pinned to its installed version.

    Pins come from the installed environment rather than from pyproject's ranges: a Space rebuilt next month
    then installs what was tested here, not whatever release came out since.
    """
    from packaging.requirements import Requirement

    version = installed_version(PROJECT)
    lines = [project_requirement or f"{PROJECT}[{','.join(EXTRAS)}]=={version}"]
    seen: set[str] = set()
    for text in metadata.requires(PROJECT) or []:
        req = Requirement(text)
        if req.marker is not None and not any(req.marker.evaluate({"extra": extra}) for extra in EXTRAS):
            continue
        if req.name == PROJECT or req.name.lower() in seen:
            continue
        seen.add(req.name.lower())
        wanted = set(req.extras) | ADDED_EXTRAS.get(req.name.lower(), set())
        extras = f"[{','.join(sorted(wanted))}]" if wanted else ""
        public = installed_version(req.name).split("+")[0]  # `2.13.0+cpu` is a local build: PyPI has `2.13.0`
        lines.append(f"{req.name}{extras}=={public}")
    return lines


def front_matter(spec: SpaceSpec) -> str:
    """The Space's YAML configuration block: a Gradio Space on the installed Gradio, with Hugging Face sign-in."""
    fields = {
        "title": spec.title,
        "emoji": spec.emoji,
        "colorFrom": "blue",
        "colorTo": "green",
        "sdk": "gradio",
        "sdk_version": installed_version("gradio"),
        "app_file": "app.py",
        "hf_oauth": True,
        "pinned": False,
        "short_description": spec.short_description,
        "startup_duration_timeout": "1h",  # the first start installs and fetches the dataset (baselines come after)
    }
    import yaml

    return "---\n" + yaml.safe_dump(fields, sort_keys=False, allow_unicode=True) + "---\n"


def readme(spec: SpaceSpec) -> str:
    """The Space's README: its configuration block, then what an operator must know: where each part of the board's
    state lives, what a restart loses, and the variables."""
    return front_matter(spec) + (
        f"\n# {spec.title}\n\n"
        f"Serves the FreshStack leaderboard for the dataset `{spec.dataset}` at revision `{spec.revision}` "
        f"(written by `{PROJECT} space`).\n\n"
        "**Where the state lives.** The store holds everything the board depends on; the rest is the dataset, "
        "pinned on the Hub, and caches that are rebuilt when lost:\n\n"
        "| state | where | after a restart |\n"
        "|---|---|---|\n"
        "| systems, results with per-query scores, the archived rankings behind rows, uploaded answers files, "
        "hole-fill judgments, the job queue, the audit log | the store: the `FRESHSTACK_STORE` secret (a "
        "PostgreSQL URL), else a SQLite file on the Space's persistent storage (`/data/leaderboard.db`) | kept |\n"
        f"| the dataset | the Hub: `{spec.dataset}`, pinned to revision `{spec.revision}` | downloaded again "
        "when the Hub cache is gone |\n"
        "| runs cache, embedding cache, Hub download cache | local folders (on `/data` with persistent storage) | "
        "rebuilt when needed |\n\n"
        "With neither a `FRESHSTACK_STORE` PostgreSQL secret nor persistent storage (or with a SQLite "
        "`FRESHSTACK_STORE` outside `/data`) the store would be lost on every restart, so the app refuses to start "
        "and its log says how to fix it: add the secret, enable persistent storage in the Space's settings, or set "
        "the variable `FRESHSTACK_EPHEMERAL=1` to accept losing submissions (a demo); every page of such a board "
        "then warns its visitors. Back the store up with `freshstack-hf admin export DIR --store URL`.\n\n"
        "**Workers.** With PostgreSQL, GPU workers share the store's job queue (see `WORKER.md`) and the Space "
        "computes nothing itself; with SQLite, one worker runs inside the Space and scores the baselines and every "
        "submitted model on its CPU (slow for large models: use PostgreSQL and GPU workers). The page serves at once; "
        "the baseline rows are queued on first start and computed by a worker, and a line over the table says which "
        "are still being computed.\n\n"
        "**Variables.** `FRESHSTACK_DATASET` / `FRESHSTACK_REVISION` override the dataset (a local folder for a "
        "test run); `FRESHSTACK_BASELINES` picks the baseline rows queued on first start (`bm25,dense,hybrid`; "
        "`none` for none); `FRESHSTACK_SPACE_WORKER=0|1` turns the in-Space worker off or on; "
        "`FRESHSTACK_EPHEMERAL=1` runs on a store that a restart loses; "
        "`FRESHSTACK_OAUTH=0` accepts submissions without sign-in (off a Space, e.g. `FRESHSTACK_DATASET=FOLDER "
        "python app.py` on your machine, sign-in is off unless `FRESHSTACK_OAUTH=1`, and the store is not checked).\n"
    )


def app_py(spec: SpaceSpec) -> str:
    return f'''"""The FreshStack leaderboard on a Hugging Face Space (written by `{PROJECT} space`; see README.md).

Everything but the dataset pin lives in the project (`leaderboard.deploy.space_app`), installed by requirements.txt.
"""

import os

from leaderboard.deploy.space_app import serve

DATASET = {json.dumps(spec.dataset)}
REVISION = {json.dumps(spec.revision)}

if __name__ == "__main__":
    raise SystemExit(serve(DATASET, REVISION, os.environ))
'''


def worker_md(spec: SpaceSpec) -> str:
    """WORKER.md: how a GPU machine joins the Space's PostgreSQL store, and that it needs nothing else shared."""
    return (
        "# Evaluation workers\n\n"
        "Model submissions and the baseline rows are queued in the store. With `FRESHSTACK_STORE` set to a "
        "PostgreSQL URL (a Space secret), run workers on GPU machines against the same database; each job is "
        "claimed by one worker under a lease, so a killed worker's job returns to the queue:\n\n"
        "```bash\n"
        f"pip install '{PROJECT}[{','.join(EXTRAS)}]'   # or: pip install -r requirements.txt\n"
        "export FRESHSTACK_STORE='postgresql://user:password@db-host/freshstack'   # the Space's secret\n"
        f'freshstack-hf worker --store "$FRESHSTACK_STORE" --dataset {spec.dataset} --device cuda\n'
        "```\n\n"
        "A worker needs only the store URL and the dataset id. Everything it produces (scores with their "
        "per-query values, the rankings behind them, hole-fill judgments) goes into the store, where the Space "
        "reads it, the Detail tab's per-nugget view included. Jobs name the dataset revision the Space serves "
        f"(`{spec.revision}`); "
        "the worker downloads it from the Hub. Its runs, embedding and Hub download caches are its own local "
        "folders, rebuilt when lost; nothing is shared with the Space but the database.\n"
    )


def space_files(spec: SpaceSpec) -> dict[str, str]:
    """{file name: text} of the Space folder."""
    spec.check()
    requirements = "\n".join(pinned_requirements(spec.project_requirement)) + "\n"
    return {
        "README.md": readme(spec),
        "app.py": app_py(spec),
        "requirements.txt": requirements,
        "WORKER.md": worker_md(spec),
    }


def write_space(folder: str | Path, spec: SpaceSpec, *, force: bool = False) -> Path:
    """Write the Space folder at `folder`, atomically; an existing path is replaced only with `force`.

    A replaced folder keeps what this command does not write (a `.git` cloned from the Space, the Hub's
    `.gitattributes`): regenerating a clone of the Space must leave it a clone, ready to push.
    """
    target = Path(folder).expanduser()
    if (target.exists() or target.is_symlink()) and not force:
        raise FreshStackError(f"{target} already exists; pass --force to replace it, or give a new folder")
    if target.exists() and not target.is_dir():
        raise FreshStackError(f"{target} is a file, not a Space folder; remove it or give another path")
    files = space_files(spec)  # every check and pin before anything is written
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.tmp")
    old = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.old")
    kept: list[str] = []
    try:
        tmp.mkdir()
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
        if target.exists():
            for entry in sorted(target.iterdir()):
                if entry.name not in files:
                    entry.rename(tmp / entry.name)
                    kept.append(entry.name)
            target.rename(old)  # kept until the new folder is in place
        tmp.rename(target)
    except BaseException:
        if old.exists() and not target.exists():
            old.rename(target)
        for name in kept if tmp.exists() else []:
            (tmp / name).rename(target / name)
        raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return target
