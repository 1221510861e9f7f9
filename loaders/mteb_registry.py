"""Registering the FreshStack tasks with mteb 2.x, which has no plugin hook for tasks defined elsewhere.

`mteb run -t NAME` looks the name up in `mteb.get_tasks._TASKS_REGISTRY`, a private dict built from mteb's
own task modules. `register()` adds `FreshStack` and `FreshStackReranking` to it (by name only: they are not
added to the task list that filters like `--task-types Retrieval` walk, so no other run starts reading
FreshStack) and lets `mteb.get_model` / `-m` take a local model directory (see `loaders.mteb_models`).

Because the dict is private, every assumption is checked first and a changed mteb fails with one message
naming its version, instead of an AttributeError deep inside a run. The import hook
(`loaders.import_hook`) imports this module right after `import mteb`, so the installed project needs no
import of its own; without the hook, `import loaders.mteb_registry` does the same.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

from freshstack_hf.errors import FreshStackError
from loaders.mteb_models import load_local_model, local_model_dir

TESTED_MTEB = "2.26.24"


def _mteb_internals() -> tuple[Any, dict[str, Any]]:
    """The mteb module and its task registry, or an error saying which mteb broke which assumption."""
    import mteb

    version = getattr(mteb, "__version__", "unknown")
    module = sys.modules.get("mteb.get_tasks")
    registry = getattr(module, "_TASKS_REGISTRY", None)
    problems = []
    if not str(version).startswith("2."):
        problems.append("its major version is not 2")
    if not isinstance(registry, dict):
        problems.append("mteb.get_tasks._TASKS_REGISTRY is not a dict")
    if not callable(getattr(mteb, "get_model", None)):
        problems.append("mteb.get_model is missing")
    if problems:
        raise FreshStackError(
            f"cannot register the FreshStack tasks with mteb {version}: {'; '.join(problems)} (tested with mteb "
            f"{TESTED_MTEB}). Pin mteb>=2.26,<3, or skip the registry: "
            "mteb.evaluate(model, [loaders.mteb_tasks.FreshStack()])"
        )
    return mteb, registry


def register() -> None:
    """Make `mteb.get_task("FreshStack")` and `mteb run -t FreshStack[Reranking]` work; safe to call again."""
    mteb, registry = _mteb_internals()
    from loaders.mteb_tasks import FreshStack, FreshStackReranking

    for cls in (FreshStack, FreshStackReranking):
        name = cls.metadata.name
        current = registry.get(name)
        if current is not None and current is not cls and current.__module__ != cls.__module__:
            raise FreshStackError(
                f"mteb {mteb.__version__} already has a task named {name!r} ({current.__module__}); "
                "not replacing it. Use mteb.evaluate(model, [loaders.mteb_tasks.FreshStack()]) instead"
            )
        registry[name] = cls
    _accept_model_directories(mteb)


def _accept_model_directories(mteb: Any) -> None:
    """Wrap `mteb.get_model` (what `mteb run -m` calls) so a local directory loads instead of failing."""
    original = mteb.get_model
    if getattr(original, "_freshstack_hf", False):
        return

    @functools.wraps(original)
    def get_model(model_name: str, revision: str | None = None, device: str | None = None, **kwargs: Any) -> Any:
        model_dir = local_model_dir(model_name)
        if model_dir is None:
            return original(model_name, revision, device, **kwargs)
        return load_local_model(model_dir, device=device, **kwargs)

    get_model._freshstack_hf = True  # type: ignore[attr-defined]
    mteb.get_model = get_model


# Importing this module is registering (as ir_datasets' dataset modules do): the import hook and users who
# do without it both just `import loaders.mteb_registry`.
register()
