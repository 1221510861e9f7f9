"""Compare two snapshots of a dataset repo: answerability, document fates and rank agreement, per shared topic.

OLD and NEW are two dataset repo folders, typically two dated revisions of one repo (`freshstack@2024-10-31`,
`freshstack@2025-10-31`, see `build --snapshot`). For every topic both hold:

* answerability: how many old questions have a supported nugget on the new snapshot (the new build's
  `carryover` record when its manifest has one, else the new repo's own judgments);
* every judged document of OLD: unchanged (same id and text), changed (same file, other id or text), moved (the
  same text in another file or repository), deleted (file and text gone), with the commits it came from;
* every system scored on both (each snapshot's BM25 / dense / RRF-hybrid candidate lists, or the registered
  retrieval methods --methods names, and run files given with --run): its score and rank on each snapshot per
  headline measure, and Kendall's tau-b of the two rankings with a 95% paired bootstrap interval over the
  queries both snapshots judge.

Nothing is written unless the whole report was computed. Systems stored on a leaderboard are added by the
leaderboard's own command, `freshstack-hf drift-board OLD NEW --store URL` (same options), and
`freshstack-hf leaderboard ... --drift REPORT.json` shows a report in the Drift tab.

Example:
  freshstack-hf drift out/freshstack@2024-10-31 out/freshstack@2025-10-31 --out drift/
  freshstack-hf drift old/freshstack new/freshstack --topic langchain --run mine runs/old.trec runs/new.trec \\
      --run bm25-2024 runs/bm25.trec --json drift.json --report drift.md
"""

from __future__ import annotations

import argparse
from pathlib import Path

from freshstack_hf.atomic import atomic_path
from freshstack_hf.baselines.registry import runnable
from freshstack_hf.cli.common import add_resampling_arguments, require_repo_folder, split_list, write_json
from freshstack_hf.drift import drift_report
from freshstack_hf.drift.markdown import markdown
from freshstack_hf.drift.svg import drift_svg
from freshstack_hf.errors import FreshStackError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("old", metavar="OLD", help="the old snapshot's dataset repo folder (e.g. freshstack@2024-10-31)")
    p.add_argument("new", metavar="NEW", help="the new snapshot's dataset repo folder (e.g. freshstack@2025-10-31)")
    p.add_argument("--topic", help="topic(s), comma-separated (default: every topic both snapshots hold)")
    p.add_argument(
        "--run",
        nargs="+",
        action="append",
        default=[],
        metavar="ARG",
        help="NAME RUN (one run file scored on both snapshots) or NAME OLD_RUN NEW_RUN; repeatable",
    )

    systems = p.add_mutually_exclusive_group()
    systems.add_argument("--no-baselines", action="store_true", help="leave out the candidate-list baselines")
    systems.add_argument(
        "--methods",
        metavar="LIST",
        help=f"the baselines, comma-separated registered retrieval methods, of {', '.join(runnable())} (default: "
        "those whose candidate lists both snapshots store); one a snapshot stores no list of is run on it",
    )
    p.add_argument("--json", metavar="PATH", help="the full report as JSON ('-' for stdout), full precision")
    p.add_argument("--report", metavar="PATH", help="the Markdown report (its plot is written beside it, .svg)")
    p.add_argument("--out", metavar="DIR", help="write drift.json, drift.md and drift.svg into DIR")
    add_resampling_arguments(p)


def run(args: argparse.Namespace, extra=None) -> int:
    """`extra() -> [SystemPair]` adds systems from elsewhere (the leaderboard's stored ones,
    `freshstack-hf drift-board`), scored like the baselines and --run files."""

    old, new = require_repo_folder(args.old), require_repo_folder(args.new)
    if args.resamples < 0:
        raise FreshStackError("--resamples must be >= 0 (0 leaves the intervals out)")
    for spec in args.run:
        if len(spec) not in (2, 3):
            raise FreshStackError(f"--run {' '.join(spec)}: give NAME RUN or NAME OLD_RUN NEW_RUN")
    topics = split_list(args.topic, "topic") if args.topic else None
    report = drift_report(
        old,
        new,
        topics=topics,
        runs=args.run,
        extra=extra() if extra else (),
        baselines=not args.no_baselines,
        methods=split_list(args.methods, "methods") if args.methods else None,
        resamples=args.resamples,
        seed=args.seed,
    )
    targets: list[tuple[Path, str]] = []  # (path, text) of the Markdown and SVG files, written after the JSON
    json_path = args.json
    if args.out:
        out = Path(args.out)
        json_path = json_path or str(out / "drift.json")
        targets += [(out / "drift.md", markdown(report, "drift.svg")), (out / "drift.svg", drift_svg(report))]
    if args.report:
        md = Path(args.report)
        svg = md.with_suffix(".svg")
        targets += [(md, markdown(report, svg.name)), (svg, drift_svg(report))]
    if json_path != "-":
        print(summary(report))
    if json_path:
        write_json(report, json_path)
    for path, text in targets:
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
    written = [p for p, _ in targets] + ([json_path] if json_path and json_path != "-" else [])
    if written and json_path != "-":
        print("wrote " + ", ".join(str(p) for p in written))
    return 0


def summary(report: dict) -> str:
    """A few lines per topic for the terminal: answerable share, fate counts, tau per measure."""
    lines = [f"drift {report['old']['path']} -> {report['new']['path']}"]
    for name, t in report["topics"].items():
        a, counts = t["answerability"], t["documents"]["counts"]
        fates = ", ".join(f"{k} {v}" for k, v in counts.items())
        lines.append(
            f"  {name}: {a['answerable']}/{a['old_questions']} old questions answerable ({a['source']}); "
            f"judged documents: {fates}"
        )
        for measure, agree in t["agreement"].items():
            tau, (low, high) = agree["kendall_tau"], agree["ci95"]
            shown = "n/a" if tau is None else f"{tau:.3f}"
            interval = "" if low is None else f" [{low:.3f}, {high:.3f}]"
            lines.append(f"    {measure:<14} Kendall tau {shown}{interval} over {len(agree['ranks'])} systems")
    return "\n".join(lines)
