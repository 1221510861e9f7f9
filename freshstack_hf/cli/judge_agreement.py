"""Re-judge a repo's judged (nugget, document) pairs with a judge and report its agreement with the repo.

Works on any dataset repo with judgments, an imported official release included: the pairs are judged through the
build's own judging code (blocks of documents, all nuggets of a question per call, documents as written, the
response cache), then compared: Cohen's kappa, accuracy, precision and recall of support, and the candidate
lists' alpha-nDCG@10 and Coverage@20 under both sets of judgments with the Kendall tau of their orderings.

Example:
  freshstack-hf judge-agreement out/freshstack --topic langchain --offline
  OPENAI_API_KEY=... freshstack-hf judge-agreement out/freshstack --topic langchain \\
      --base-url https://api.openai.com/v1 --model gpt-4o --json agreement.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from freshstack_hf.cli.common import add_repo_argument, require_repo_folder, resolve_topics, write_json
from freshstack_hf.errors import FreshStackError
from freshstack_hf.llm.config import LLMConfig
from freshstack_hf.pipeline.judge_agreement import judge_agreement
from freshstack_hf.pipeline.offline.backend import OfflineBackend
from freshstack_hf.pipeline.online import OnlineBackend


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_repo_argument(p, topics="one")  # the repo holding the reference judgments, the topic re-judged
    judge = p.add_mutually_exclusive_group(required=True)
    judge.add_argument("--offline", action="store_true", help="the offline heuristic judge")
    judge.add_argument("--base-url", help="an OpenAI-compatible endpoint (key from --api-key-env)")
    p.add_argument("--model", default="gpt-4o", help="model name at the endpoint (default: gpt-4o)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key")
    p.add_argument("--docs-per-call", type=int, default=20, help="documents per judge call (default: 20)")
    p.add_argument("--max-doc-tokens", type=int, default=1024, help="cl100k tokens of a document shown (1024)")
    p.add_argument("--cache", help="LLM response cache (default: REPO-work/judge-agreement/llm-cache.sqlite)")
    p.add_argument("--json", metavar="OUT", help="also write the full report as JSON to OUT ('-' for stdout)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def run(args: argparse.Namespace) -> int:
    folder = require_repo_folder(args.repo)
    topics = resolve_topics(folder, args.topic)
    if len(topics) != 1:
        raise FreshStackError(f"--topic names one topic; {folder} holds {', '.join(topics)}")
    topic = topics[0]
    if not 1 <= args.docs_per_call <= 50 or args.max_doc_tokens < 1:
        raise FreshStackError("--docs-per-call must be 1..50 and --max-doc-tokens positive")
    progress = not args.quiet and args.json != "-"
    if args.offline:
        backend = OfflineBackend(show_progress=progress)
    else:
        cache = Path(args.cache) if args.cache else folder.parent / f"{folder.name}-work" / "judge-agreement"
        cache = cache if cache.suffix else cache / "llm-cache.sqlite"
        cache.parent.mkdir(parents=True, exist_ok=True)
        config = LLMConfig(base_url=args.base_url, model=args.model, api_key_env=args.api_key_env)
        backend = OnlineBackend(config, cache, show_progress=progress)
    report = judge_agreement(
        folder, topic, backend, docs_per_call=args.docs_per_call, max_doc_tokens=args.max_doc_tokens
    )
    report["judge"] = getattr(backend, "name", "offline-heuristic")
    report["topic"] = topic
    if args.json != "-":
        print(_table(report))
    if args.json:
        write_json(report, args.json)
    return 0


def _fmt(value) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _table(r: dict) -> str:
    lines = [
        f"judge {r['judge']} against {r['topic']}'s judgments: {r['pairs']:,} pairs "
        f"({r['skipped_pairs']:,} skipped: {r['skipped_docs_without_text']:,} documents without text), "
        f"{r['calls']:,} judge calls",
        f"  kappa {_fmt(r['kappa'])}  accuracy {_fmt(r['accuracy'])}  precision {_fmt(r['precision'])}  "
        f"recall {_fmt(r['recall'])}  (supports: reference {r.get('reference_supported', 0):,}, "
        f"judge {r.get('judge_supported', 0):,})",
    ]
    systems = r["effect"]["systems"]
    if systems:
        lines.append("  candidate lists       alpha-nDCG@10 ref -> rejudged   Coverage@20 ref -> rejudged")
        for name, s in systems.items():
            a, b = s["reference"], s["rejudged"]
            lines.append(
                f"  {name:<20}  {a['alpha_ndcg@10']:.3f} -> {b['alpha_ndcg@10']:.3f}"
                f"                 {a['coverage@20']:.3f} -> {b['coverage@20']:.3f}"
            )
        taus = r["effect"]["kendall_tau"]
        lines.append(
            f"  Kendall tau of the orderings: alpha-nDCG@10 {_fmt(taus['alpha_ndcg@10'])}, "
            f"Coverage@20 {_fmt(taus['coverage@20'])}"
        )
    return "\n".join(lines)
