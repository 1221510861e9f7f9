"""Only what pyproject.toml cannot say: install the import hook's .pth at the top of site-packages.

`loaders/freshstack_hf_hooks.pth` lets `mteb run -t FreshStack` and `ir_datasets.load("freshstack/T")` find
FreshStack with no import of ours (see loaders/import_hook.py). A .pth only works at the top of
site-packages, which package data cannot reach: regular wheels get it from `build_py`, editable installs
(`pip install -e .`, what the Makefile does) from the editable wheel's strategy.
"""

import os

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.editable_wheel import editable_wheel

PTH = "freshstack_hf_hooks.pth"
PTH_SOURCE = os.path.join("loaders", PTH)


class BuildPyWithHook(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:
            self.copy_file(PTH_SOURCE, os.path.join(self.build_lib, PTH), preserve_mode=False)

    def get_outputs(self, include_bytecode=True):
        extra = [] if self.editable_mode else [os.path.join(self.build_lib, PTH)]
        return [*super().get_outputs(include_bytecode), *extra]


class _StrategyWithHook:
    """Wraps setuptools' editable strategy: same wheel, plus the hook's .pth."""

    def __init__(self, strategy):
        self._strategy = strategy

    def __call__(self, wheel, files, mapping):
        self._strategy(wheel, files, mapping)
        with open(PTH_SOURCE, encoding="utf-8") as source:
            wheel.writestr(PTH, source.read().encode())

    def __enter__(self):
        self._strategy.__enter__()
        return self

    def __exit__(self, *exc):
        return self._strategy.__exit__(*exc)


class EditableWheelWithHook(editable_wheel):
    def _select_strategy(self, *args, **kwargs):
        return _StrategyWithHook(super()._select_strategy(*args, **kwargs))


setup(cmdclass={"build_py": BuildPyWithHook, "editable_wheel": EditableWheelWithHook})
