"""Which files are code to the official chunker: pygments' lexer for a file name, as the official asks it, but fast.

The official asks `get_lexer_for_filename` once per file, which tries all ~1,500 filename patterns; a 50,000-file
repository made that the chunker's second cost. The index below answers the same question from a suffix table.
"""

from __future__ import annotations

import re


class _LexerIndex:
    """pygments' `get_lexer_for_filename(name).name` without trying all ~1,500 patterns on every name.

    pygments fnmatch-es the base name against every lexer's filename patterns and keeps the best rated match
    (the lexer's priority, +0.5 for a pattern without `*`, then the class name). Here patterns of the form
    `*.suffix` are looked up by the name's suffixes and only the others are matched one by one; the rating is
    pygments' own. Where plugin lexers are installed, pygments itself is asked.
    """

    def __init__(self) -> None:
        import fnmatch

        from pygments.lexers import find_plugin_lexers
        from pygments.lexers._mapping import LEXERS

        self.plugins = any(True for _ in find_plugin_lexers())
        self.by_suffix: dict[str, list[tuple[str, str]]] = {}
        self.others: list[tuple[re.Pattern, str, str]] = []
        for _module, lexer, _aliases, patterns, _mimes in LEXERS.values():
            for pattern in patterns:
                rest = pattern[1:]
                if pattern.startswith("*") and not any(ch in rest for ch in "*?["):
                    self.by_suffix.setdefault(rest, []).append((lexer, pattern))
                else:
                    self.others.append((re.compile(fnmatch.translate(pattern)), lexer, pattern))

    def name(self, base: str) -> str | None:
        from pygments.lexers import find_lexer_class

        if self.plugins:
            from pygments.lexers import get_lexer_for_filename
            from pygments.util import ClassNotFound

            try:
                return get_lexer_for_filename(base).name
            except ClassNotFound:
                return None
        matches = [m for i in range(len(base)) for m in self.by_suffix.get(base[i:], ())]
        matches += [(lexer, pattern) for regex, lexer, pattern in self.others if regex.match(base)]
        if not matches:
            return None
        rated = []
        for lexer, pattern in matches:
            cls = find_lexer_class(lexer)
            rated.append(((cls.priority + (0.5 if "*" not in pattern else 0), cls.__name__), cls))
        rated.sort(key=lambda item: item[0])
        return rated[-1][1].name


_LEXERS: list[_LexerIndex] = []


def lexer_name(base: str) -> str | None:
    """The pygments lexer name for a file's base name (None when pygments knows none)."""
    if not _LEXERS:
        _LEXERS.append(_LexerIndex())
    return _LEXERS[0].name(base)
