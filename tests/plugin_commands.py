"""The subcommands pyproject.toml declares, visible to `freshstack-hf`'s dispatcher even before a reinstall.

`freshstack_hf.cli.main` finds the leaderboard's subcommands through entry points, read from the installed
package's metadata. A subcommand declared since the last `pip install -e .` is missing there until the next one;
`declare_missing_commands` writes the missing ones into a throw-away distribution on `sys.path`, so tests run
them through the real dispatcher (`main([...])`) exactly as an installed console script would. Where the
metadata already has them, it adds nothing.
"""

from __future__ import annotations

import sys
import tomllib
from importlib import metadata
from pathlib import Path

from freshstack_hf.cli.main import PLUGIN_GROUP

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def declared_commands() -> dict[str, str]:
    """{subcommand: module} of pyproject.toml's plugin group."""
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    return dict(project["entry-points"][PLUGIN_GROUP])


def declare_missing_commands(folder: Path) -> list[str]:
    """Make every declared subcommand discoverable; returns the names that had to be added."""
    installed = {ep.name for ep in metadata.entry_points(group=PLUGIN_GROUP)}
    missing = {name: module for name, module in declared_commands().items() if name not in installed}
    if not missing:
        return []
    dist = folder / "freshstack_hf_declared_commands-0.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: freshstack-hf-declared-commands\nVersion: 0\n")
    lines = [f"[{PLUGIN_GROUP}]", *(f"{name} = {module}" for name, module in sorted(missing.items()))]
    (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
    if str(folder) not in sys.path:
        sys.path.append(str(folder))
    return sorted(missing)
