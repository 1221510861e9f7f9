"""`freshstack-hf admin`: moderate the leaderboard's store, read its audit trail, back it up and restore it.

  hide ID --reason TEXT     take system ID off the board: the table, its CSV/JSON exports, the plots, paired
                            tests and rank intervals; it stays in the store with the reason, who and when
  unhide ID                 put a hidden system back, as it was
  delete ID --reason TEXT   remove its results, jobs and stored blobs; a tombstone (id, content hash, reason)
                            stays, so the same file or model submitted again is refused as deleted
  log [--since DATE]        the audit trail, oldest first: every submission (accepted, duplicate or refused, with
                            the reason), every job outcome and every moderation action; --json for JSON
  export DIR [--public]     write the whole board as a Hugging Face dataset folder (parquet per config, a card,
                            board.json; `runs` holds every archived ranking as rows): a backup, or with --public a
                            results dataset of only what the board shows (hidden and deleted systems left out and
                            counted on the card, IP identities redacted, blobs as hashes only); an existing DIR only
                            with --force
  import DIR                restore a (full) export into an empty store, ids kept, in one transaction (a SQLite
                            file that does not exist yet is created); logged as one admin:import row
  eval-results --dataset ORG/NAME --board-url URL (--out DIR | --dry-run | --open-prs)
                            the board's verified results of every Hub model and reranker it measured, as the
                            `.eval_results/freshstack-SNAPSHOT.yaml` files of the model's repo: written to DIR (one
                            folder per repo, what would be committed), listed (--dry-run: which repos would get a
                            pull request), or proposed (--open-prs: one pull request per repo, none where its main
                            branch or an open pull request of this account holds the same values; each opened is
                            logged as admin:model_page). The rows that get none are listed with why: a model folder,
                            a hidden row, a local revision no --dataset-revision REVISION=COMMIT maps to a Hub commit.
                            Exits 1 when the Hub refused a repo (each named with the fix; the others went on)

ID is the number in the table's id column. Actions run against the same store as the leaderboard (--store, before or
after the action, else $FRESHSTACK_STORE, else the SQLite file in the data folder) and are logged as
`local:<your user name>` unless --by says otherwise; on the page, the Admin tab does the same for the users named
with `leaderboard --admin`.

Example:
  freshstack-hf admin hide 7 --reason "trained on the test questions" --store sqlite:///lb/leaderboard.db
  freshstack-hf admin unhide 7 --store sqlite:///lb/leaderboard.db
  freshstack-hf admin delete 9 --reason "spam" --store sqlite:///lb/leaderboard.db
  freshstack-hf admin log --since 2026-01-01 --store sqlite:///lb/leaderboard.db --json
  freshstack-hf admin --store sqlite:///lb/leaderboard.db log
  freshstack-hf admin export backups/board-2026-05-01 --store sqlite:///lb/leaderboard.db
  freshstack-hf admin import backups/board-2026-05-01 --store sqlite:///lb/restored.db
  freshstack-hf admin export out/board-results --public --force --store sqlite:///lb/leaderboard.db
  freshstack-hf admin eval-results --dataset ORG/freshstack --board-url https://huggingface.co/spaces/ORG/board \
      --dry-run --store sqlite:///lb/leaderboard.db
  HF_TOKEN=hf_... freshstack-hf admin eval-results --dataset ORG/freshstack --board-url https://ORG-board.hf.space \
      --open-prs --store sqlite:///lb/leaderboard.db
"""

from __future__ import annotations

import argparse
import getpass
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy.exc import OperationalError

from freshstack_hf.errors import FreshStackError
from leaderboard.defaults import RUNS_DIR_HELP, default_store_url
from leaderboard.export.board_export import check_target, export_board
from leaderboard.export.board_import import import_board
from leaderboard.model_pages.pull_requests import FAILED, RepoOutcome, propose
from leaderboard.model_pages.verified import Plan, Target, plan
from leaderboard.store.archive import announce_store, open_store, unopenable
from leaderboard.store.audit import ADMIN, short_hash
from leaderboard.store.dialect import dialect_for, shown_url
from leaderboard.store.store import Store

NAME = "admin"
HELP = "moderate the leaderboard (hide, unhide, delete a system), print its audit log, export and import it"


STORE_HELP = "store URL (default: $FRESHSTACK_STORE, else a SQLite file in the data dir)"
BY_HELP = "who is acting, as the log records it (default: local:<your user name>)"


def add_arguments(p: argparse.ArgumentParser) -> None:
    # --store goes before the action or after it: the action's own option leaves the admin's value alone unless given
    p.add_argument("--store", help=STORE_HELP + "; before or after ACTION")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--store", default=argparse.SUPPRESS, help=STORE_HELP)
    common.add_argument("--runs-dir", help=RUNS_DIR_HELP)
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    _moderation_actions(actions, common)
    _backup_actions(actions, common)
    _eval_results_action(actions, common)


def _moderation_actions(actions: Any, common: argparse.ArgumentParser) -> None:
    """hide, unhide, delete and log: a moderator's actions and the trail they leave."""
    hide = actions.add_parser("hide", parents=[common], help="take a system off the board (restorable)")
    hide.add_argument("system", type=int, metavar="ID", help="the system's id (the table's id column)")
    hide.add_argument("--reason", required=True, help="why: kept with the system and in the log")
    hide.add_argument("--by", help=BY_HELP)

    unhide = actions.add_parser("unhide", parents=[common], help="put a hidden system back on the board")
    unhide.add_argument("system", type=int, metavar="ID", help="the system's id")
    unhide.add_argument("--by", help=BY_HELP)

    remove = actions.add_parser("delete", parents=[common], help="remove a system's results and files for good")
    remove.add_argument("system", type=int, metavar="ID", help="the system's id")
    remove.add_argument("--reason", required=True, help="why: kept in its tombstone, told to a resubmitter")
    remove.add_argument("--by", help=BY_HELP)

    log = actions.add_parser("log", parents=[common], help="print the audit trail, oldest first")
    log.add_argument("--since", metavar="DATE", help="rows at or after DATE (YYYY-MM-DD, or YYYY-MM-DDTHH:MM UTC)")
    log.add_argument("--json", action="store_true", help="print the rows as a JSON list")


def _backup_actions(actions: Any, common: argparse.ArgumentParser) -> None:
    """export and import: the whole board as a dataset folder, and back into an empty store."""
    export = actions.add_parser("export", parents=[common], help="write the board as a dataset folder (a backup)")
    export.add_argument("folder", metavar="DIR", help="the folder to write (refused if it exists, unless --force)")
    export.add_argument(
        "--public",
        action="store_true",
        help="a public results dataset of only what the board shows: hidden and deleted systems left out (the card "
        "counts them), IP identities redacted, blobs as hashes only",
    )
    export.add_argument("--force", action="store_true", help="replace DIR whole when it holds an earlier export")
    export.add_argument("--json", action="store_true", help="print what was written as JSON")

    restore = actions.add_parser("import", help="restore a full export into an empty store")
    restore.add_argument("folder", metavar="DIR", help="a folder written by `freshstack-hf admin export` (no --public)")
    restore.add_argument(
        "--store",
        default=argparse.SUPPRESS,
        help="the EMPTY store to restore into (default: $FRESHSTACK_STORE, else the SQLite file in the data dir)",
    )
    restore.add_argument("--by", help=BY_HELP)
    restore.add_argument("--json", action="store_true", help="print what was imported as JSON")


def _eval_results_action(actions: Any, common: argparse.ArgumentParser) -> None:
    """eval-results: the board's verified results as the .eval_results files of model repos."""
    results = actions.add_parser(
        "eval-results", parents=[common], help="the board's verified results as .eval_results files of model repos"
    )
    results.add_argument(
        "--dataset", required=True, metavar="ORG/NAME", help="the benchmark's Hub dataset id, which every entry names"
    )
    results.add_argument(
        "--board-url", required=True, metavar="URL", help="the board's public address: each entry links its row there"
    )
    results.add_argument(
        "--dataset-revision",
        action="append",
        default=[],
        metavar="REVISION=COMMIT",
        help="the Hub commit a local revision was published as (REVISION: a snapshot's name, or a stored local-… "
        "revision), for rows of a board that serves a folder (repeatable)",
    )
    mode = results.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", metavar="DIR", help="write each repo's files under DIR/ORG/NAME/ (nothing is sent)")
    mode.add_argument("--dry-run", action="store_true", help="list the pull requests --open-prs would open")
    mode.add_argument("--open-prs", action="store_true", help="open one pull request per model repo (needs a token)")
    results.add_argument("--by", help=BY_HELP)
    results.add_argument("--json", action="store_true", help="print what was done as JSON")


def parse_since(text: str) -> datetime:
    """A day or a time as naive UTC (the store's clock); a time with an offset is converted to UTC."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise FreshStackError(
            f"--since {text!r} is not a date: give a day (YYYY-MM-DD) or a UTC time (YYYY-MM-DDTHH:MM)"
        ) from None
    return when.astimezone(UTC).replace(tzinfo=None) if when.tzinfo else when


def default_moderator() -> str:
    try:
        return f"local:{getpass.getuser()}"
    except (OSError, KeyError):  # no user name in this environment (a container without one)
        return "local:unknown"


def log_lines(rows: list[Any]) -> list[str]:
    """One line per audit row: time (UTC), who, kind, outcome, system, content hash (shortened), detail."""
    lines = []
    for row in rows:
        digest = short_hash(row.content_hash)
        system = f"#{row.system_id}" if row.system_id is not None else "-"
        when = row.at.strftime("%Y-%m-%d %H:%M:%S")
        cells = [when, row.identity, row.kind, row.outcome, system, digest, row.detail.replace("\n", " ")]
        lines.append("  ".join(cells))
    return lines


def _open_store(url: str | None, runs_dir: str | None = None) -> Store:
    """The leaderboard's store, migrated like the app opens it; a SQLite file that does not exist is a wrong
    --store, not a new board."""
    url = url or default_store_url()
    dialect = dialect_for(url)
    if dialect.file is not None and not dialect.file.is_file():
        shown = dialect.url.database
        raise FreshStackError(f"no leaderboard store at {shown}: give --store, the URL the leaderboard uses")
    return open_store(url, runs_dir, announce=True)


def _counts(rows: dict[str, int]) -> str:
    return ", ".join(f"{name}: {n:,}" for name, n in rows.items())


def _export(args: argparse.Namespace) -> int:
    """Checks DIR before the store is opened, so a refused export neither migrates the store nor writes anything."""
    check_target(args.folder, args.force)
    with _open_store(args.store, args.runs_dir) as store:
        done = export_board(store, args.folder, public=args.public, force=args.force)
    if args.json:
        print(json.dumps(done.as_json(), indent=1))
    else:
        mode = "public results" if done.public else "backup"
        print(f"exported the board to {done.folder} ({mode}; rows: {_counts(done.counts)})")
    return 0


def _import(args: argparse.Namespace) -> int:
    """Not through `_open_store`: the store may not exist yet, and an older runs archive must not be mixed in."""
    url = args.store or default_store_url()
    announce_store(url)
    try:
        done = import_board(url, args.folder, by=args.by or default_moderator())
    except OperationalError as exc:  # the store cannot be reached (the import removed what it created)
        raise unopenable(url, exc.orig or exc) from None
    counts = done.counts()
    if args.json:
        print(json.dumps({"folder": str(done.folder), "store": shown_url(url), "rows": counts}, indent=1))
    else:
        print(f"imported {done.folder} into the empty store (rows: {_counts(counts)}); logged as admin:import")
    return 0


def revision_map(given: list[str]) -> dict[str, str]:
    """`--dataset-revision REVISION=COMMIT` pairs as a mapping; a pair without `=` is refused, naming it."""
    pairs = {}
    for item in given:
        name, sep, commit = item.partition("=")
        if not sep or not name.strip() or not commit.strip():
            raise FreshStackError(
                f"--dataset-revision {item!r}: give REVISION=COMMIT (e.g. 2025-10-31=<40 hex digits>)"
            )
        pairs[name.strip()] = commit.strip()
    return pairs


def _eval_results(args: argparse.Namespace) -> int:
    """The plan first (a wrong --dataset or --board-url is refused before the store is opened), then the files
    written, listed or proposed; the rows left out after."""
    target = Target(args.dataset, args.board_url, revision_map(args.dataset_revision))
    if args.out and Path(args.out).exists() and any(Path(args.out).iterdir()):
        raise FreshStackError(f"--out {args.out} is not empty: give a new folder (each repo's files go under it)")
    with _open_store(args.store, args.runs_dir) as store:
        planned = plan(store, target)
        outcomes: list[RepoOutcome] = []
        written: list[Path] = []
        if args.out:
            written = planned.write(args.out)
        else:
            by = args.by or default_moderator()
            outcomes = propose(store, planned, target, by=by, group=ADMIN, dry_run=args.dry_run)
    if args.json:
        print(json.dumps(_results_json(planned, outcomes, written), indent=1, ensure_ascii=False))
    else:
        print("\n".join(_results_lines(planned, outcomes, written, args.out)))
    return 1 if any(o.status == FAILED for o in outcomes) else 0


def _results_json(planned: Plan, outcomes: list[RepoOutcome], written: list[Path]) -> dict[str, Any]:
    files = [
        {"repo": f.repo_id, "path": f.path, "snapshot": f.snapshot, "systems": list(f.system_ids)}
        for files in planned.files.values()
        for f in files
    ]
    return {
        "files": files,
        "written": [str(p) for p in written],
        "repos": [o.as_json() for o in outcomes],
        "skipped": [{"system": s.system_id, "name": s.name, "why": s.why} for s in planned.skipped],
    }


def _results_lines(planned: Plan, outcomes: list[RepoOutcome], written: list[Path], out: str | None) -> list[str]:
    count = sum(len(files) for files in planned.files.values())
    lines = [f"{count} file(s) of verified results for {len(planned.files)} model repo(s)"]
    if out:
        lines.append(f"written under {out}:")
        lines += [f"  {p}" for p in written]
    lines += [f"  {o.line()}" for o in outcomes]
    if planned.skipped:
        lines.append(f"{len(planned.skipped)} row(s) get none:")
        lines += [f"  {s.line()}" for s in planned.skipped]
    return lines


def run(args: argparse.Namespace) -> int:
    if args.action == "eval-results":
        return _eval_results(args)
    if args.action == "export":
        return _export(args)
    if args.action == "import":
        return _import(args)
    with _open_store(args.store, args.runs_dir) as store:
        if args.action == "log":
            rows = store.audit.rows(since=parse_since(args.since) if args.since else None)
            if args.json:
                print(json.dumps([row.as_json() for row in rows], indent=1, ensure_ascii=False))
            else:
                print("\n".join(log_lines(rows)) if rows else "the audit log has no rows yet")
            return 0
        who = args.by or default_moderator()
        if args.action == "hide":
            system = store.moderation.hide_system(args.system, reason=args.reason, by=who)
            print(f"hidden: system #{system.id} '{system.name}' ({system.moderation_reason})")
        elif args.action == "unhide":
            system = store.moderation.unhide_system(args.system, by=who)
            print(f"back on the board: system #{system.id} '{system.name}'")
        else:
            deleted = store.moderation.delete_system(args.system, reason=args.reason, by=who)
            blobs = f"{len(deleted.blobs)} stored blob(s) removed" if deleted.blobs else "no stored blob to remove"
            print(f"deleted: system #{deleted.system.id} '{deleted.system.name}' (results and jobs removed; {blobs})")
    return 0
