"""Post-import hooks: register FreshStack with mteb and ir_datasets the moment either is imported.

Neither library has a plugin mechanism, and `mteb run` is mteb's own console script, so nothing of ours runs
unless the interpreter is told to. The installed project ships a one-line `.pth` file (`PTH_NAME`, kept
beside this module; it does nothing if the project is gone) that calls `install()` at interpreter start.
`install()` imports nothing but `sys` (about 1 ms): it puts a finder first on `sys.meta_path` that does
nothing until `mteb` or `ir_datasets` is imported. Then it lets the normal finders locate the package, runs
the package's `__init__` unchanged, and afterwards imports the matching `loaders` module, whose import
registers the tasks or datasets (`HOOKS`). The module keeps its real loader, so nothing downstream can tell
the hook was there.

A failing registration (say, a future mteb whose internals moved) never breaks the import of the library
itself: it becomes a RuntimeWarning that says why, and `import loaders.mteb_registry` raises the full error.
"""

from __future__ import annotations

import sys

# Library -> the loaders module whose import registers FreshStack with it.
HOOKS = {"mteb": "loaders.mteb_registry", "ir_datasets": "loaders.irds"}

# The .pth shipped beside this module and installed at the top of site-packages by the build (setup.py).
PTH_NAME = "freshstack_hf_hooks.pth"


class _RegisteringLoader:
    """Runs the real loader, then the registration; every other attribute is the real loader's."""

    def __init__(self, loader: object, name: str) -> None:
        self._loader = loader
        self._name = name

    def __getattr__(self, attr: str) -> object:
        return getattr(self._loader, attr)

    def create_module(self, spec: object) -> object:
        return self._loader.create_module(spec)

    def exec_module(self, module: object) -> None:
        module.__loader__ = self._loader
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        run_hook(self._name)


class _PostImportFinder:
    """Finds nothing itself: for a hooked name it asks the other finders and wraps the loader they return."""

    def __init__(self) -> None:
        self._busy: set[str] = set()

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> object:
        if fullname not in HOOKS or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = None
            for finder in list(sys.meta_path):
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self._busy.discard(fullname)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _RegisteringLoader(spec.loader, fullname)
        return spec


def run_hook(library: str) -> None:
    """Import the registering module for `library`; a failure is a warning, never an import error."""
    try:
        __import__(HOOKS[library])
    except Exception as exc:
        import warnings

        warnings.warn(
            f"freshstack-hf: FreshStack is not registered with {library} ({type(exc).__name__}: {exc})",
            RuntimeWarning,
            stacklevel=2,
        )


def install() -> None:
    """Put the finder in place (once); libraries imported before this are registered right away."""
    if not any(isinstance(f, _PostImportFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _PostImportFinder())
    for library in HOOKS:
        if library in sys.modules:
            run_hook(library)


def installed() -> bool:
    """Whether this interpreter has the finder (i.e. the .pth ran, or `install()` was called)."""
    return any(type(f).__qualname__ == "_PostImportFinder" for f in sys.meta_path)
