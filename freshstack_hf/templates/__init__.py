"""The text of the cards the project writes, as `string.Template` files shipped as package data.

A card's prose is read and reviewed as the Markdown it becomes, not as Python string literals; the code that
renders a card computes only the parts that vary (tables, counts, names) and substitutes them. Each package keeps
its templates in its own `templates/` folder (the library's here, the leaderboard's in `leaderboard/templates/`).
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from string import Template


@cache
def load_template(name: str, package: str = "freshstack_hf") -> Template:
    """`package`'s template `templates/NAME`, read once per process."""
    return Template(files(package).joinpath("templates", name).read_text(encoding="utf-8"))


def snippet(name: str, package: str = "freshstack_hf", **values: object) -> str:
    """A template that is part of a card (a paragraph), filled in, without the file's final newline."""
    return load_template(name, package).substitute(values).removesuffix("\n")
