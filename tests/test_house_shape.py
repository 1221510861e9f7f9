"""The shape of the whole product, read from its source (`freshstack_hf`, `loaders`, `leaderboard`): the rules a
contributor keeps so that the next feature lands in one room (Contributing, "The map of rooms").

The import graph counts every import statement wherever it stands (module level or inside a function: a
function-local import hides a circle from Python, not from a reader), except under `if TYPE_CHECKING:`, which never
runs. `tests/test_leaderboard_imports.py` holds `leaderboard`'s stricter rules (TYPE_CHECKING counted, the tracks
reached only through the registries).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from test_leaderboard_imports import find_cycle

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("freshstack_hf", "loaders", "leaderboard")
# The rules' limits (issue 47): one folder may hold more modules than a reader takes in at a glance, the command
# line's, because it is a registry of one module per command.
MAX_MODULES_IN_A_FOLDER = 15
FOLDERS_OF_ONE_MODULE_PER_ITEM = {"freshstack_hf/cli"}
MAX_MODULE_LINES = 400
LONG_FUNCTION_LINES = 60
MAX_LONG_FUNCTIONS = 8
MAX_LOCAL_IMPORTS = 60


@dataclass
class Module:
    name: str
    path: Path
    imports: set[str] = field(default_factory=set)  # the project's modules it imports (TYPE_CHECKING aside)
    local_imports: list[int] = field(default_factory=list)  # lines of project imports inside a function


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_type_checking(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def named(node: ast.Import | ast.ImportFrom, package: str, known: set[str]) -> list[str]:
    """The project modules an import statement names: for `from P import x`, `P.x` when it is a module, else `P`."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    else:
        base = node.module or ""
        if node.level:
            up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join([*up, *([node.module] if node.module else [])])
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
    found = []
    for target in targets:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target:
            found.append(target)
    return found


def read_modules() -> dict[str, Module]:
    paths = {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}
    known = set(paths)
    modules = {}
    for name, path in paths.items():
        module = modules[name] = Module(name, path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]

        def visit(node: ast.AST, in_function: bool, module: Module = module, package: str = package) -> None:
            for child in ast.iter_child_nodes(node):
                if is_type_checking(child):
                    continue
                if isinstance(child, ast.Import | ast.ImportFrom):
                    targets = set(named(child, package, known)) - {module.name}
                    module.imports |= targets
                    if in_function and targets:
                        module.local_imports.append(child.lineno)
                inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                visit(child, inside)

        visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return modules


@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    return read_modules()


def test_the_reader_counts_imports_inside_functions_and_skips_type_checking(tmp_path, monkeypatch):
    package = tmp_path / "freshstack_hf"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from freshstack_hf import b\n"
        "def f():\n    from freshstack_hf.b import g\n    return g\n"
    )
    (package / "b.py").write_text("from . import a\ndef g():\n    pass\n")
    monkeypatch.setattr(__import__(__name__), "ROOT", tmp_path)
    found = read_modules()
    assert found["freshstack_hf.a"].imports == {"freshstack_hf.b"}
    assert found["freshstack_hf.a"].local_imports == [5]
    assert found["freshstack_hf.b"].imports == {"freshstack_hf.a"}
    assert find_cycle({m.name: m.imports for m in found.values()}) is not None


def test_no_import_circle_anywhere(modules):
    cycle = find_cycle({m.name: m.imports for m in modules.values()})
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_project_imports_stand_at_the_top_of_the_module(modules):
    """A function-local import of the project's own code is kept only where a heavy optional dependency or a
    plug-in registry needs it; every other one moved up, where a reader of the module's head sees it."""
    local = [f"{m.path.relative_to(ROOT)}:{line}" for m in modules.values() for line in m.local_imports]
    assert len(local) <= MAX_LOCAL_IMPORTS, f"{len(local)} function-local project imports:\n" + "\n".join(local)


def test_no_folder_hides_its_layers(modules):
    folders: dict[str, int] = {}
    for m in modules.values():
        folder = str(m.path.parent.relative_to(ROOT))
        folders[folder] = folders.get(folder, 0) + 1
    crowded = {f: n for f, n in folders.items() if n > MAX_MODULES_IN_A_FOLDER}
    assert set(crowded) <= FOLDERS_OF_ONE_MODULE_PER_ITEM, f"folders over {MAX_MODULES_IN_A_FOLDER}: {crowded}"


def test_one_idea_a_module(modules):
    lines = {
        str(m.path.relative_to(ROOT)): len(m.path.read_text(encoding="utf-8").splitlines()) for m in modules.values()
    }
    assert {p: n for p, n in lines.items() if n > MAX_MODULE_LINES} == {}


def test_few_long_functions(modules):
    long = []
    for m in modules.values():
        for node in ast.walk(ast.parse(m.path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > LONG_FUNCTION_LINES:
                    long.append(f"{m.path.relative_to(ROOT)}:{node.name} ({length} lines)")
    assert len(long) <= MAX_LONG_FUNCTIONS, "\n".join(sorted(long))
