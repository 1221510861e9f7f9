"""Entry point of `freshstack-hf`: builds the parser from the subcommand modules and maps errors to exit codes.

Each subcommand lives in its own module under `freshstack_hf.cli` exposing `add_arguments(parser)` and
`run(args) -> int`; its name (the module's, with dashes) and one-line help are listed here (`SUBCOMMANDS`), so
`freshstack-hf --help` imports no subcommand and a subcommand imports only its own module (`CommandParser`).
A command module imports what it uses at its top; heavy libraries (torch, datasets) only inside `run`.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import sys
from typing import Any

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError

# Order here is the order in `--help`: each built-in subcommand's module and its one-line help.
SUBCOMMANDS = {
    "demo": "build the sample topic with the real pipeline, score its baselines and serve the leaderboard",
    "build": "build a topic from a Stack Exchange dump, GitHub repositories and an LLM",
    "refresh": "make, check and publish the next dated snapshot of every topic, within an LLM budget",
    "synth": "write synthetic topics into a dataset repo",
    "validate": "check a dataset repo and report every problem",
    "stats": "print split statistics of a dataset repo",
    "import_official": "import the official FreshStack release schema into a dataset repo",
    "export_official": "export a topic in the official release schema",
    "publish": "publish a dataset repo to the Hugging Face Hub",
    "evaluate": "score runs with the nugget-aware metrics (with 95%% intervals and paired tests)",
    "evaluate_answers": "score RAG answers by citation and by nugget judge (All/Vital), with 95%% intervals",
    "judge_agreement": "agreement of a judge (offline or an endpoint) with a repo's judgments",
    "drift": "compare two snapshots of a dataset repo: answerability, document fates, rank agreement",
    "fill_holes": "judge a run's unjudged top-k documents into a new qrels revision",
    "pin_commits": "find the commits of a topic's repositories that reproduce released corpus ids",
    "retrieve": "run a BM25, dense or hybrid baseline (any registered method) and write a TREC run",
    "candidates": "write BM25, dense and hybrid candidate lists into a dataset repo",
    "rerank": "rerank the hybrid candidates with a CrossEncoder",
    "nano": "write a Nano subset (few queries and docs per topic) of a dataset repo",
}

EXIT_USER_ERROR = 2

# One-shot scoring commands: a process that reads, scores and exits within a second or so, where two things
# the interpreter and NumPy do for long-lived programs only cost:
# - OpenBLAS's worker threads: NumPy's work here is small arrays, and the workers cost their start (a few
#   hundredths of a second) and, after each call, spin waiting for more, taking a core from Arrow's reader
#   threads. Set only before NumPy is first imported (later it changes nothing here and would only reach child
#   processes); a value the user set wins. Not for `retrieve` and the like, whose matrix products use every core.
# - the cyclic garbage collector: the hundred thousand records, dicts and tuples read all live until the exit,
#   and the collector's passes over them (over every module's objects too, once) free nothing: 0.07 s of the
#   release-size `evaluate`. Re-enabled on the way out, for callers that run a command in their own process.
ONE_SHOT = frozenset({"evaluate"})

# Subcommands that live outside the library (the leaderboard's `leaderboard` and `worker`) register here as
# entry points, so `freshstack_hf` never imports those packages by name.
PLUGIN_GROUP = "freshstack_hf.commands"


def _load(name: str):
    return importlib.import_module(f"freshstack_hf.cli.{name}")


def _plugins() -> list:
    from importlib.metadata import entry_points

    return [ep.load() for ep in sorted(entry_points(group=PLUGIN_GROUP), key=lambda ep: ep.name)]


def run_plugin(name: str, argv: list[str]) -> int:
    """Run a plugin subcommand (e.g. `leaderboard`) from library code without importing its package by name."""
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group=PLUGIN_GROUP) if ep.name == name]
    if not found:
        raise FreshStackError(f"the `{name}` command is not installed: reinstall the project (pip install -e .)")
    module = found[0].load()
    parser = argparse.ArgumentParser(prog=f"freshstack-hf {name}")
    module.add_arguments(parser)
    return int(module.run(parser.parse_args(argv)) or 0)


class CommandParser(argparse.ArgumentParser):
    """A built-in subcommand's parser that imports its module (options, description, `run`) on first use: when the
    command is given, or when `load` is called. So the whole command line's `--help` (and a plug-in's start)
    imports none of the built-in commands, whatever each imports at its top."""

    def __init__(self, *args: Any, module: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.module, self.loaded = module, not module  # a plug-in's parser, or one nested in it, has its options

    def load(self) -> CommandParser:
        if not self.loaded:
            self.loaded = True
            module = _load(self.module)
            self.description = module.__doc__
            module.add_arguments(self)
            self.set_defaults(_run=module.run)
        return self

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.load()
        return super().parse_known_args(args, namespace)


def build_parser(only: str | None = None, *, lazy: bool = False) -> argparse.ArgumentParser:
    """The whole command line, or with `only` (a built-in subcommand's module name) that subcommand alone: what
    running it needs, without importing every other subcommand and the installed plug-ins (a tenth of a second
    of every command's start). `lazy`: each built-in subcommand's module is imported only if that command is
    given (`CommandParser`), as `main` parses; otherwise all of them are, for a caller that reads the parsers."""
    parser = argparse.ArgumentParser(
        prog="freshstack-hf",
        description="Build, publish, load and score FreshStack topics (nugget-aware retrieval benchmark).",
        epilog="Run `freshstack-hf COMMAND --help` for a command's options and an example. The docs are the "
        "project's docs/ folder, as a site with `make docs-serve` (http://127.0.0.1:8000/).",
    )
    parser.add_argument("--version", action="version", version=f"freshstack-hf {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    raw = argparse.RawDescriptionHelpFormatter
    for name in [only] if only is not None else SUBCOMMANDS:
        command = sub.add_parser(name.replace("_", "-"), help=SUBCOMMANDS[name], formatter_class=raw, module=name)
        if not lazy:
            command.load()
    for plugin in _plugins() if only is None else []:
        p = sub.add_parser(plugin.NAME, help=plugin.HELP, description=plugin.__doc__, formatter_class=raw)
        plugin.add_arguments(p)
        p.set_defaults(_run=plugin.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else argv
    first = given[0].replace("-", "_") if given and "_" not in given[0] else ""  # a command as typed: `fill-holes`
    if first not in ONE_SHOT:
        return _main(given, first)
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(given, first)
    finally:
        if collecting:
            gc.enable()


def _main(given: list[str], first: str) -> int:
    parser = build_parser(first if first in SUBCOMMANDS else None, lazy=True)
    args = parser.parse_args(given)
    if not getattr(args, "_run", None):
        parser.print_help()
        return EXIT_USER_ERROR
    if args.verbose:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        return int(args._run(args) or 0)
    except FreshStackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:  # `freshstack-hf ... | head` is normal use, not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
