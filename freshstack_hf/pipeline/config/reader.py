"""Reading a topic YAML mapping while collecting problems, so one run names every bad key with its dotted path.

Kept apart from `config.py` (which says what a topic definition holds) because this is how it is checked: type
coercion, `${VAR}` expansion, date parsing, did-you-mean hints for typos and relative path resolution.
"""

from __future__ import annotations

import os
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any

from freshstack_hf.errors import Problem

ENV_RE = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}")


class YamlReader:
    """Walks the YAML mapping, collecting problems with dotted keys instead of failing at the first."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[Problem] = []

    def problem(self, key: str, message: str, fix: str = "") -> None:
        self.problems.append(Problem(f"{self.path}: {key}", message, fix=fix))

    def section(self, data: dict, key: str, prefix: str, required: bool = True) -> dict:
        value = data.get(key)
        if value is None:
            if required:
                self.problem(f"{prefix}{key}", "missing section", f"add a `{key}:` mapping")
            return {}
        if not isinstance(value, dict):
            self.problem(f"{prefix}{key}", f"expected a mapping, got {type(value).__name__}")
            return {}
        return value

    def unknown(self, data: dict, allowed: set[str], prefix: str) -> None:
        for key in data:
            if key not in allowed:
                close = sorted(allowed, key=lambda a: _distance(str(key), a))[:1]
                hint = f"did you mean `{close[0]}`?" if close else ""
                self.problem(f"{prefix}{key}", "unknown key", hint + f" allowed: {', '.join(sorted(allowed))}")

    def get(self, data: dict, key: str, kind: type | tuple, prefix: str, default: Any = None, required=False):
        if key not in data or data[key] is None:
            if required:
                self.problem(f"{prefix}{key}", "missing key", "this key is required")
            return default
        value = data[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if isinstance(value, bool) and bool not in kinds:
            self.problem(f"{prefix}{key}", f"expected {_names(kinds)}, got a boolean")
            return default
        if not isinstance(value, kinds):
            self.problem(f"{prefix}{key}", f"expected {_names(kinds)}, got {type(value).__name__} {value!r}")
            return default
        if isinstance(value, str):
            value = self.expand(value, f"{prefix}{key}")
        return value

    def strings(self, data: dict, key: str, prefix: str, required: bool = False) -> tuple[str, ...]:
        value = data.get(key)
        if value is None:
            if required:
                self.problem(f"{prefix}{key}", "missing key", "give a list of strings")
            return ()
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.problem(f"{prefix}{key}", f"expected a list of non-empty strings, got {value!r}")
            return ()
        if required and not value:
            self.problem(f"{prefix}{key}", "empty list", "give at least one value")
        return tuple(v.strip() for v in value)

    def expand(self, value: str, key: str) -> str:
        def sub(m: re.Match) -> str:
            name, default = m["name"], m["default"]
            if name in os.environ:
                return os.environ[name]
            if default is not None:
                return default
            self.problem(key, f"environment variable {name} is not set", f"export {name}=... or write ${{{name}:-x}}")
            return ""

        return ENV_RE.sub(sub, value)

    def date(self, data: dict, key: str, prefix: str) -> str:
        value = data.get(key)
        if value is None or value == "":
            return ""
        if isinstance(value, datetime):
            return value.date().isoformat()
        if isinstance(value, date):
            return value.isoformat()
        if isinstance(value, str):
            try:
                return date.fromisoformat(value.strip()).isoformat()
            except ValueError:
                pass
        self.problem(f"{prefix}{key}", f"not a date: {value!r}", "write it as YYYY-MM-DD")
        return ""

    def positive(self, value: Any, key: str, allow_none: bool = False) -> None:
        if value is None and allow_none:
            return
        if isinstance(value, int | float) and value <= 0:
            self.problem(key, f"must be positive, got {value}")


def _names(kinds: tuple) -> str:
    return " or ".join(
        {"str": "a string", "int": "an integer", "float": "a number", "bool": "true/false"}.get(k.__name__, k.__name__)
        for k in kinds
    )


def _distance(a: str, b: str) -> int:
    """Edit distance, to suggest the key a typo meant."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def resolve_path(base: Path, value: str) -> str:
    """Paths are relative to the YAML's folder; URLs stay as they are."""
    if not value or "://" in value or value.startswith("git@"):
        return value
    p = Path(value).expanduser()
    return str(p if p.is_absolute() else (base / p).resolve())


def section_dataclass(r: YamlReader, data: dict, key: str, cls: type) -> Any:
    section = r.section(data, key, "", required=False)
    fields = cls.__dataclass_fields__
    r.unknown(section, set(fields), f"{key}.")
    kwargs: dict[str, Any] = {}
    defaults = cls()
    for name in fields:
        if name not in section:
            continue
        default = getattr(defaults, name)
        if isinstance(default, tuple):
            kwargs[name] = r.strings(section, name, f"{key}.")
        elif default is None:
            kwargs[name] = r.get(section, name, int, f"{key}.")
        else:
            kind = (float,) if isinstance(default, float) else (type(default),)
            kwargs[name] = r.get(section, name, kind, f"{key}.", default)
    return cls(**kwargs)
