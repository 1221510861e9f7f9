"""Entry point of `freshstack-hf`: builds the parser from the subcommand modules and maps errors to exit codes.

Each subcommand lives in its own module under `freshstack_hf.cli` exposing `NAME`, `HELP`, `add_arguments(parser)`
and `run(args) -> int`; modules are imported only when listed, and heavy libraries only inside `run`.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import logging
import os
import sys

from freshstack_hf._version import __version__
from freshstack_hf.errors import FreshStackError

# Order here is the order in `--help`.
SUBCOMMANDS = (
    "demo",
    "build",
    "refresh",
    "synth",
    "validate",
    "stats",
    "import_official",
    "export_official",
    "publish",
    "evaluate",
    "evaluate_answers",
    "judge_agreement",
    "drift",
    "fill_holes",
    "pin_commits",
    "retrieve",
    "candidates",
    "rerank",
    "nano",
)

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


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with `only` (a built-in subcommand's module name) that subcommand alone: what
    running it needs, without importing every other subcommand and the installed plug-ins (a tenth of a second
    of every command's start)."""
    parser = argparse.ArgumentParser(
        prog="freshstack-hf",
        description="Build, publish, load and score FreshStack topics (nugget-aware retrieval benchmark).",
        epilog="Run `freshstack-hf COMMAND --help` for a command's options and an example. The docs are the "
        "project's docs/ folder, as a site with `make docs-serve` (http://127.0.0.1:8000/).",
    )
    parser.add_argument("--version", action="version", version=f"freshstack-hf {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    modules = [_load(only)] if only is not None else [_load(name) for name in SUBCOMMANDS] + _plugins()
    for module in modules:
        p = sub.add_parser(
            module.NAME,
            help=module.HELP,
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
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
    parser = build_parser(first if first in SUBCOMMANDS else None)
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
