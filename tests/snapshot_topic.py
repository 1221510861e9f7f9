"""A topic with history for the snapshot tests: a git repository of Laravel-like docs changed between two dates,
and the project's Laravel dump fixture, whose questions fall on both sides of the first snapshot.

Every file is one small chunk holding a marker word (`mk-<name>`), so a test can tell from a judge prompt which
file a document came from. The second commit changes, moves, deletes and adds files; `CHANGES` is the test's
own list of what happened to each file of the first snapshot.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from corpus_stage import git

DUMP = Path(__file__).resolve().parent / "fixtures" / "laravel_dump" / "Posts.xml"
FIRST_COMMIT, SECOND_COMMIT = "2024-01-15T12:00:00+00:00", "2024-06-01T12:00:00+00:00"
OLD, NEW = "2024-02-29", "2024-08-31"  # snapshot dates: 4 questions by OLD, 8 by NEW
CARRIED = {"1005", "1013", "1007", "1009"}  # asked up to OLD (the dump's laravel-10/11 questions)

DOCS = {
    "storage.md": "Run php artisan storage:link to create the public/storage symbolic link so uploaded files "
    "stored on the public disk are served from the /storage URL.",
    "migrations.md": "Use php artisan migrate:rollback to roll back the last batch of migrations; pass --step to "
    "roll back a number of migrations.",
    "queues.md": "A queued job only runs when a worker is processing the queue: start php artisan queue:work and "
    "check the QUEUE_CONNECTION setting in your .env file.",
    "eloquent.md": "Mass assignment: add the attributes to the $fillable property of the model before calling "
    "create, or Eloquent throws a MassAssignmentException.",
    "configuration.md": "After php artisan config:cache the .env file is not loaded, so env() returns null outside "
    "config files; read values through config() instead.",
    "blade.md": "Blade templates compile to plain PHP and are cached until they change.",
    "old-helpers.md": "The str_slug helper was removed; use Str::slug from Illuminate Support.",
}
SECOND = {
    "queues.md": DOCS["queues.md"] + " Supervisor keeps queue:work running in production.",  # changed
    "middleware.md": "Register global middleware in bootstrap/app.php with the withMiddleware method in Laravel 11.",
    "scheduling.md": "Commands scheduled in routes/console.php run when the scheduler is invoked every minute "
    "by cron with php artisan schedule:run.",
    "rate-limiting.md": "Define rate limiters with RateLimiter::for in the boot method of AppServiceProvider and "
    "attach them to routes with the throttle middleware.",
}
MOVED = {"migrations.md": "guides/migrations.md"}  # the support of 1013, the question the offline build keeps
DELETED = ("old-helpers.md",)
CHANGES = {  # the first snapshot's files -> what the second commit did to them
    "storage.md": "unchanged",
    "eloquent.md": "unchanged",
    "configuration.md": "unchanged",
    "blade.md": "unchanged",
    "queues.md": "changed",
    "migrations.md": "moved",
    "old-helpers.md": "deleted",
}


def marked(name: str, text: str) -> str:
    return f"# {name}\n\nmk-{Path(name).stem} {text}\n"


def make_history(root: Path) -> Path:
    """The docs repository: the first commit on 2024-01-15, the changes on 2024-06-01."""
    repo = root / "docs"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for name, text in DOCS.items():
        (repo / name).write_text(marked(name, text), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs", date=FIRST_COMMIT)
    for name, text in SECOND.items():
        (repo / name).write_text(marked(name, text), encoding="utf-8")
    for old, new in MOVED.items():
        (repo / new).parent.mkdir(parents=True, exist_ok=True)
        git(repo, "mv", old, new)
    for name in DELETED:
        git(repo, "rm", "-q", name)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "changes", date=SECOND_COMMIT)
    return repo


def write_definition(root: Path, base_url: str = "", **extra) -> Path:
    """The topic YAML around the dump and the docs repository (offline when `base_url` is empty)."""
    data = {
        "topic": "laravel",
        "questions": {"source": str(DUMP), "tags": ["laravel-10", "laravel-11"], "since": "2023-01-01"},
        "corpus": {"repositories": [{"source": "docs", "keyword": "docs"}]},  # beside the YAML
        "pooling": {"depth": 10, "retrievers": ["bm25"]},
        **extra,
    }
    if base_url:
        data["llm"] = {"base_url": base_url, "model": "test-model", "max_concurrency": 2}
    path = root / "laravel.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


if __name__ == "__main__":  # `python tests/snapshot_topic.py DIR`: the topic for the README's "Keep it fresh"
    import sys

    target = Path(sys.argv[1] if len(sys.argv) > 1 else "fresh-demo")
    make_history(target)
    definition = write_definition(target)
    print(f"wrote {target / 'docs'} (a git repository, commits of 2024-01-15 and 2024-06-01) and {definition}")
