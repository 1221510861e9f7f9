"""Write a Hugging Face Space folder that serves the leaderboard for a published dataset revision.

The folder holds README.md (front matter: `sdk: gradio` on the installed Gradio, `app_file: app.py`,
`hf_oauth: true`), a small app.py, requirements.txt pinned to the versions installed here, and WORKER.md, the
command GPU machines run against the same PostgreSQL store. The store is the `FRESHSTACK_STORE` secret (a
PostgreSQL URL), else a SQLite file on the Space's persistent storage (/data); with neither the app refuses to
start unless the Space sets FRESHSTACK_EPHEMERAL=1 (then every page says the board is ephemeral). An existing
folder is replaced only with --force. Upload the folder with `hf upload ORG/SPACE DIR . --repo-type space`.

Example:
  freshstack-hf space space-dir --dataset ORG/freshstack --revision v1
  freshstack-hf space space-dir --dataset ORG/freshstack --revision v1 --force --title "FreshStack (Oct 2024)"
  freshstack-hf space space-dir --dataset ORG/freshstack --revision v1 \\
      --project-requirement "freshstack-hf[leaderboard,bm25,dense,llm] @ git+https://github.com/ORG/freshstack-hf@v0.1.0"
"""

from __future__ import annotations

import argparse
import json

from leaderboard.deploy.space import SpaceSpec, write_space

NAME = "space"
HELP = "write a Hugging Face Space folder that serves the leaderboard"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("folder", metavar="DIR", help="the Space folder to write (refused if it exists, unless --force)")
    p.add_argument("--dataset", required=True, help="Hub id of the dataset repo the Space serves (ORG/freshstack)")
    p.add_argument("--revision", required=True, help="the dataset revision to pin: a Hub tag, branch or commit")
    p.add_argument("--title", default="FreshStack leaderboard", help="the Space's title (default: %(default)s)")
    p.add_argument("--emoji", default="📊", help="the Space's emoji (default: %(default)s)")
    p.add_argument(
        "--short-description",
        default="Nugget-aware retrieval leaderboard on FreshStack",
        help="the Space's one-line description, at most 60 characters (default: %(default)s)",
    )
    p.add_argument(
        "--project-requirement",
        metavar="LINE",
        help="requirements.txt line installing this project (default: freshstack-hf[extras]==<installed version>)",
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="replace the files of an existing folder (others, such as a .git clone, are kept)",
    )
    p.add_argument("--json", action="store_true", help="print the folder and its files as JSON")


def run(args: argparse.Namespace) -> int:
    spec = SpaceSpec(
        dataset=args.dataset,
        revision=args.revision,
        title=args.title,
        emoji=args.emoji,
        short_description=args.short_description,
        project_requirement=args.project_requirement,
    )
    folder = write_space(args.folder, spec, force=args.force)
    files = sorted(p.name for p in folder.iterdir())
    if args.json:
        print(json.dumps({"folder": str(folder), "files": files, "dataset": spec.dataset, "revision": spec.revision}))
    else:
        print(f"space: wrote {folder} ({', '.join(files)})")
        print(f"next: hf upload ORG/SPACE {folder} . --repo-type space   (README.md: the FRESHSTACK_STORE secret)")
    return 0
