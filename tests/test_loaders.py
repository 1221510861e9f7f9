"""The shared parts of `loaders/`: which repo they read, the HF datasets helpers, and the import hook.

`small_repo` is a two-topic synthetic repo with hybrid candidates (tests/synthetic_repo.py), its documents cut
short so that a real model encodes it in seconds on a CPU.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import textwrap
import warnings
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from synthetic_repo import TOPICS, build_small_repo

from freshstack_hf.errors import FreshStackError
from loaders import hf_datasets, import_hook, source
from loaders.source import PUBLISHED_DATASET, PUBLISHED_REVISION, PUBLISHED_TOPICS, dataset_source

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def small_repo(tmp_path_factory) -> Path:
    return build_small_repo(tmp_path_factory.mktemp("loaders") / "freshstack")


# ---- loaders.source ------------------------------------------------------------------------------------
def test_default_source_is_the_published_repo_at_its_pinned_revision(monkeypatch):
    monkeypatch.delenv("FRESHSTACK_DATASET", raising=False)
    monkeypatch.delenv("FRESHSTACK_REVISION", raising=False)
    src = dataset_source()
    assert (src.location, src.revision) == (PUBLISHED_DATASET, PUBLISHED_REVISION)
    assert src.is_published and not src.is_local
    assert src.topics() == list(PUBLISHED_TOPICS)  # known without any download
    assert src.metadata_revision() == PUBLISHED_REVISION


@pytest.mark.slow
def test_env_names_a_folder_or_another_hub_repo(monkeypatch, small_repo):
    monkeypatch.setenv("FRESHSTACK_DATASET", str(small_repo))
    src = dataset_source()
    assert src.location == str(small_repo.resolve()) and src.revision is None and src.is_local
    assert src.topics() == list(TOPICS)
    monkeypatch.setenv("FRESHSTACK_DATASET", "someone/freshstack")
    monkeypatch.setenv("FRESHSTACK_REVISION", "abc123")
    assert dataset_source() == source.DatasetSource("someone/freshstack", "abc123")
    monkeypatch.delenv("FRESHSTACK_REVISION")
    assert dataset_source().revision is None  # only the published repo gets a pin by default
    assert dataset_source(small_repo).location == str(small_repo.resolve())  # an argument beats the env


def test_local_revision_follows_the_data(tmp_path, small_repo):
    import shutil

    copy = tmp_path / "freshstack"
    shutil.copytree(small_repo, copy)
    before = dataset_source(copy).metadata_revision()
    assert before.startswith("local-") and before == dataset_source(small_repo).metadata_revision()
    (copy / "manifest.json").write_text((copy / "manifest.json").read_text() + " ")
    assert dataset_source(copy).metadata_revision() == before  # the data, not the manifest's timestamps
    nuggets = copy / "data" / "alpha" / "nuggets.parquet"
    pq.write_table(pq.read_table(nuggets).slice(1), nuggets)
    assert dataset_source(copy).metadata_revision() != before


# ---- loaders.hf_datasets -------------------------------------------------------------------------------
@pytest.mark.slow
def test_hf_datasets_helpers_read_every_config(monkeypatch, small_repo):
    monkeypatch.setenv("FRESHSTACK_DATASET", str(small_repo))
    topic = hf_datasets.load_topic_records("alpha")
    queries = hf_datasets.load_query_texts(None, "alpha")
    assert dict(zip(queries["_id"], queries["text"], strict=True)) == {q.query_id: q.text for q in topic.queries}
    assert len(hf_datasets.load_corpus(None, "alpha")) == len(topic.docs)
    assert len(hf_datasets.load_nuggets(str(small_repo), "alpha")) == len(topic.nuggets)
    candidates = hf_datasets.load_candidates(None, "alpha")
    assert set(candidates.column_names) == {"query-id", "corpus-ids"} and len(candidates) == len(topic.queries)
    assert source.dataset_source().location == str(small_repo.resolve())  # where `repo=None` read from
    judged = hf_datasets.load_nugget_qrels(None, "alpha")
    assert sorted(zip(judged["nugget-id"], judged["corpus-id"], judged["score"], strict=True)) == sorted(
        (j.nugget_id, j.doc_id, j.relevance) for j in topic.judgments
    )
    qrels_view = hf_datasets.load_view(None, "qrels", "alpha")  # the cross-topic view, split = topic
    assert qrels_view.to_list() == hf_datasets.load_qrels(None, "alpha").to_list()


# ---- loaders.import_hook -------------------------------------------------------------------------------
@pytest.fixture
def fake_library(tmp_path, monkeypatch):
    """A package `fslib_under_test` and a registering module that records when it ran."""
    (tmp_path / "fslib_under_test").mkdir()
    (tmp_path / "fslib_under_test" / "__init__.py").write_text("VALUE = 1\n")
    (tmp_path / "fslib_register.py").write_text("import fslib_under_test\nfslib_under_test.REGISTERED = True\n")
    (tmp_path / "fslib_broken.py").write_text("raise RuntimeError('internals moved')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(import_hook, "HOOKS", {**import_hook.HOOKS, "fslib_under_test": "fslib_register"})
    saved = list(sys.meta_path)
    # The installed .pth already put a finder in this interpreter; these tests start from none.
    sys.meta_path[:] = [f for f in saved if type(f).__qualname__ != "_PostImportFinder"]
    yield "fslib_under_test"
    sys.meta_path[:] = saved
    for name in ("fslib_under_test", "fslib_register", "fslib_broken"):
        sys.modules.pop(name, None)


def test_hook_registers_after_the_library_initialised_and_leaves_its_loader_alone(fake_library):
    import importlib

    import_hook.install()
    import_hook.install()  # idempotent: one finder
    assert sum(type(f).__qualname__ == "_PostImportFinder" for f in sys.meta_path) == 1
    module = importlib.import_module(fake_library)
    assert module.VALUE == 1 and module.REGISTERED is True
    assert type(module.__loader__).__name__ == "SourceFileLoader"
    assert module.__spec__.loader is module.__loader__


def test_a_failing_registration_warns_but_the_library_still_imports(fake_library, monkeypatch):
    import importlib

    monkeypatch.setitem(import_hook.HOOKS, fake_library, "fslib_broken")
    import_hook.install()
    with pytest.warns(RuntimeWarning, match=r"not registered with fslib_under_test \(RuntimeError: internals moved"):
        module = importlib.import_module(fake_library)
    assert module.VALUE == 1


def test_installing_after_the_library_was_imported_registers_at_once(fake_library):
    import importlib

    module = importlib.import_module(fake_library)
    assert not hasattr(module, "REGISTERED")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import_hook.install()
    assert module.REGISTERED is True


def _fresh_python(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True, cwd="/"
    )
    return out.stdout.strip()


def test_the_installed_pth_is_the_shipped_one_and_imports_nothing_heavy():
    pth = Path(sysconfig.get_paths()["purelib"]) / import_hook.PTH_NAME
    assert pth.is_file(), (
        f"{pth} missing: the build must ship loaders/{import_hook.PTH_NAME} at the top of site-packages "
        "(see setup.py); for a manual fix run `python -m loaders.install_hooks`"
    )
    assert pth.read_bytes() == (ROOT / "loaders" / import_hook.PTH_NAME).read_bytes()
    # A fresh interpreter has the finder, and neither library was imported to install it.
    state = _fresh_python(
        """
        import sys
        print(any(type(f).__qualname__ == "_PostImportFinder" for f in sys.meta_path),
              "mteb" in sys.modules, "ir_datasets" in sys.modules, "freshstack_hf" in sys.modules)
        """
    )
    assert state == "True False False False"


def test_install_hooks_command_reports_status():
    from loaders import install_hooks

    assert install_hooks.target().name == import_hook.PTH_NAME
    assert install_hooks.main(["--status"]) == 0


def test_source_errors_are_user_errors(tmp_path):
    from freshstack_hf import list_topics

    with pytest.raises(FreshStackError, match="not found"):
        list_topics(dataset_source(str(tmp_path / "nowhere")).location)
