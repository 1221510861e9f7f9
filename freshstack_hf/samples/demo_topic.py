"""The demo's sample topic: questions the project wrote, answered from the libraries installed beside it.

`make demo` must show the real product offline, so its "GitHub repositories" are the source folders of five
libraries the environment already holds (datasets, huggingface_hub, gradio, pandas, sentence_transformers), each
recorded at its installed version, and its questions are 44 Stack-Overflow-style questions about those versions,
stored in the real Stack Exchange dump format (`demo_data/Posts.xml`, with a few posts the question stage must
drop). Only the modules the questions are about, and their neighbours as distractors, are chunked, which keeps
the first run within minutes on two CPU cores.

The demo also writes dated snapshots of the topic beside the repo (`REPO@2025-10-31`, `REPO@2026-04-30`, as `build
--snapshot` and `refresh` write them): the questions asked up to each date. A snapshot cuts every repository at
its date, which needs a history that an installed folder has not, so each library's corpus files are committed once
into a git checkout of their own (`library_histories`), dated at the start of the questions' window: every snapshot
reads the installed versions, and only the questions differ.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from freshstack_hf.errors import FreshStackError
from freshstack_hf.pipeline.config.topic import TopicConfig, parse_topic
from freshstack_hf.pipeline.corpus.file_selection import walk_files
from freshstack_hf.pipeline.corpus.repos import git

TOPIC = "pylibs"
POSTS = Path(__file__).resolve().parent / "demo_data" / "Posts.xml"
DEFINITION = "freshstack_hf/demo_topic.py"  # how a build names the demo's definition (manifest, card)
TAGS = ("huggingface-datasets", "huggingface-hub", "gradio", "pandas", "sentence-transformers")
# The dated snapshots: 15 of the 44 questions are asked by the first date, 34 by the second (the repo holds all).
SNAPSHOTS = ("2025-10-31", "2026-04-30")
HISTORY_DATE = "2025-01-01T00:00:00+00:00"  # the libraries' one commit: the questions' window opens on it

# package -> (distribution, files chunked, relative to the package folder)
LIBRARIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "datasets": (
        "datasets",
        (
            "arrow_dataset.py",
            "load.py",
            "iterable_dataset.py",
            "config.py",
            "fingerprint.py",
            "dataset_dict.py",
            "features/*.py",
        ),
    ),
    "huggingface_hub": (
        "huggingface-hub",
        (
            "file_download.py",
            "_snapshot_download.py",
            "_local_folder.py",
            "constants.py",
            "errors.py",
            "repocard.py",
            "_login.py",
            "utils/_http.py",
            "utils/_auth.py",
            "utils/_cache_manager.py",
            "utils/_validators.py",
            "utils/_headers.py",
            "cli/cache.py",
            "cli/download.py",
        ),
    ),
    "gradio": (
        "gradio",
        (
            "blocks.py",
            "events.py",
            "exceptions.py",
            "helpers.py",
            "processing_utils.py",
            "utils.py",
            "interface.py",
            "routes.py",
            "components/chatbot.py",
            "components/dataframe.py",
            "components/file.py",
            "components/image.py",
            "components/textbox.py",
        ),
    ),
    "pandas": (
        "pandas",
        (
            "core/frame.py",
            "core/series.py",
            "core/config_init.py",
            "core/groupby/groupby.py",
            "core/reshape/concat.py",
            "core/reshape/merge.py",
            "core/tools/datetimes.py",
            "core/arrays/string_*.py",
            "errors/*.py",
            "io/parsers/readers.py",
        ),
    ),
    "sentence_transformers": (
        "sentence-transformers",
        (
            "base/model.py",
            "cross_encoder/model.py",
            "sentence_transformer/model.py",
            "sparse_encoder/model.py",
            "util/*.py",
            "losses/MultipleNegativesRankingLoss.py",
        ),
    ),
}


def library_repositories() -> list[dict[str, Any]]:
    """Each library's installed folder as a corpus repository, its version as the commit (nothing imported)."""
    repos = []
    for package, (dist, include) in LIBRARIES.items():
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise FreshStackError(
                f"the demo reads the installed {package!r} package, which is missing: "
                "run `make demo` (it installs everything) or pip install -e '.[all]'"
            )
        folder = Path(next(iter(spec.submodule_search_locations)))
        version = importlib.metadata.version(dist)
        repos.append(
            {
                "source": str(folder),
                "keyword": package,
                "url": f"https://pypi.org/project/{dist}/{version}",
                "commit": f"{dist}=={version}",
                "include": list(include),
            }
        )
    return repos


def demo_definition() -> dict[str, Any]:
    return {
        "topic": TOPIC,
        "description": "Python data and ML libraries as installed beside freshstack-hf (the demo topic)",
        "questions": {"source": str(POSTS), "tags": list(TAGS), "since": "2025-01-01", "until": "2026-10-31"},
        "corpus": {"max_tokens": 1536, "repositories": library_repositories()},
        "pooling": {"depth": 10},
    }


def demo_config() -> TopicConfig:
    # The label is stored in the manifest and the card: it keeps the module's former path, so a demo built now
    # writes the same files as before the move to `samples/`.
    return parse_topic(demo_definition(), f"{DEFINITION} ({TOPIC})", POSTS.parent)


def library_histories(root: Path) -> dict[str, Path]:
    """keyword -> a git checkout under `root` holding the files the corpus reads of the installed library, in one
    commit dated `HISTORY_DATE`: made once per installed version, whole or not at all (a killed run leaves none)."""

    rules = "sections" if demo_config().corpus.chunker == "sections" else "release"  # as the corpus stage walks
    made = {}
    for repo in library_repositories():
        target = root / repo["commit"]
        if not (target / ".git").is_dir():
            partial = target.with_name(f".{target.name}.partial")
            shutil.rmtree(partial, ignore_errors=True)
            files, _ = walk_files(Path(repo["source"]), include=tuple(repo["include"]), rules=rules)
            for rel, path in files:
                (partial / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, partial / rel)
            _commit_all(partial, f"{repo['commit']} as installed")
            partial.rename(target)
        made[repo["keyword"]] = target
    return made


def _commit_all(folder: Path, message: str) -> None:
    """Every file of `folder` in one commit of a new repository, with a fixed date and author (the same sha on
    every machine holding the same files)."""

    who = {"NAME": "freshstack-hf demo", "EMAIL": "demo@freshstack-hf.invalid", "DATE": HISTORY_DATE}
    env = {f"GIT_{role}_{key}": value for role in ("AUTHOR", "COMMITTER") for key, value in who.items()}
    env["GIT_CONFIG_GLOBAL"] = env["GIT_CONFIG_SYSTEM"] = "/dev/null"  # no signing or hook of the user's applies
    for args in (("init", "-q", "-b", "main"), ("add", "-A"), ("commit", "-q", "-m", message)):
        git(None, "-C", str(folder), *args, env=env)


def snapshot_config(histories: Mapping[str, Path]) -> TopicConfig:
    """The sample topic as its snapshots read it: each library from its history checkout (`library_histories`),
    unpinned, so `build --snapshot`'s machinery cuts it at each date."""
    definition = demo_definition()
    for repo in definition["corpus"]["repositories"]:
        repo["source"] = str(Path(histories[repo["keyword"]]).resolve())  # a relative one would read from POSTS's
        del repo["commit"]
    return parse_topic(definition, f"{DEFINITION} ({TOPIC}, snapshots)", POSTS.parent)
