"""The shape of the `leaderboard` package, read from its source: no import cycle (at run time or at type-check
time), no module reaching for another's private names, shared code that knows the tracks only through the
registries, one file name per module.

The import graph is built from the AST: every `import` and `from ... import` wherever it stands (module level,
inside functions, under `if TYPE_CHECKING:`), plus the package each module lives in (Python imports it first).
So a package's `__init__` importing one of its own modules counts as a cycle: the rooms' and the tracks' `__init__`
files hold a docstring (and the tracks' the names they declare), and import nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "leaderboard"
TRACKS = "leaderboard.tracks"
# The one place each kind of thing the tracks provide is gathered: the kinds of systems the store accepts, the
# worker's job kinds, the page's tabs. No other shared module imports a track.
REGISTRIES = ("leaderboard.store.schema", "leaderboard.worker.jobs", "leaderboard.page.tabs")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imported(path: Path, name: str) -> set[str]:
    """Every module name an import statement of `path` names (and for `from P import x`, `P.x` too)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the package, up `level - 1` packages
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, *([node.module] if node.module else [])])
            found |= {base} | {f"{base}.{alias.name}" for alias in node.names}
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (and the packages those live in, and its own package)."""
    known = modules()
    graph = {}
    for name, path in known.items():
        targets = {t for m in imported(path, name) for t in (m, *parents(m)) if t in known}
        graph[name] = (targets | {p for p in parents(name) if p in known}) - {name}
    return graph


def find_cycle(graph: Mapping[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` as its path (first module repeated at the end), or None."""
    state: dict[str, str] = {}  # "open" while on the current path, "done" after
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_names_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


@pytest.mark.slow
def test_the_graph_counts_every_import_wherever_it_stands():
    graph = import_graph()
    assert set(graph) == set(modules()) and len(graph) > 40
    assert "leaderboard.page.app" in graph["leaderboard.cli.serve_board"]  # imported inside `run()`
    assert "leaderboard.tracks.retrieval.tables.table_columns" in graph["leaderboard.tracks.retrieval.views.published"]
    assert "leaderboard.tracks.answers" in graph["leaderboard.store.schema"]  # the track's declared kinds


@pytest.mark.slow
def test_the_leaderboard_package_has_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


@pytest.mark.slow
def test_no_module_imports_another_modules_private_names():
    known = modules()
    private = []
    for name, path in known.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("leaderboard"):
                private += [f"{name} imports {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert private == []


@pytest.mark.slow
def test_shared_code_imports_no_track_but_through_the_registries():
    graph = import_graph()
    shared = [name for name in graph if name != TRACKS and not name.startswith(TRACKS + ".")]
    reaching = {name: sorted(t for t in graph[name] if t.startswith(TRACKS + ".")) for name in shared}
    assert {name: found for name, found in reaching.items() if found and name not in REGISTRIES} == {}
    assert all(reaching[name] for name in REGISTRIES)  # each registry gathers what the tracks declare


@pytest.mark.slow
def test_the_library_never_imports_the_leaderboard():
    library = ROOT / "freshstack_hf"
    reaching = [
        path.relative_to(ROOT).as_posix()
        for path in sorted(library.rglob("*.py"))
        if any(m == "leaderboard" or m.startswith("leaderboard.") for m in imported(path, module_name(path)))
    ]
    assert reaching == []


def test_the_page_is_assembled_and_each_file_name_is_one_module():
    sizes = {name: len(path.read_text(encoding="utf-8").splitlines()) for name, path in modules().items()}
    assert sizes["leaderboard.page.app"] < 120  # the page is assembled from the tabs' own modules
    files = [p.name for p in PACKAGE.rglob("*.py") if p.name != "__init__.py"]
    assert sorted(f for f in set(files) if files.count(f) > 1) == []


def test_the_retrieval_tracks_lower_rooms_never_read_its_tabs():
    """The retrieval track's layers point one way: the tabs read the tables, views, jobs and submissions, never
    the other way (a view that needs what the page lists is handed it by its tab)."""
    graph = import_graph()
    track = f"{TRACKS}.retrieval"
    lower = [f"{track}.{room}" for room in ("tables", "views", "jobs", "submissions")]
    reaching = {
        name: sorted(t for t in found if t.startswith(f"{track}.tabs"))
        for name, found in graph.items()
        if any(name == room or name.startswith(room + ".") for room in lower)
    }
    assert {name: tabs for name, tabs in reaching.items() if tabs} == {}
    assert any(name.startswith(f"{track}.views.") for name in reaching)  # the rooms were read
