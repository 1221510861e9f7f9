"""`python -m loaders.install_hooks [--uninstall | --status]`: place the import hook's .pth by hand.

The build installs `freshstack_hf_hooks.pth` at the top of site-packages (setup.py); this is for the cases it
cannot reach, such as a source checkout put on PYTHONPATH, and for checking what the interpreter has.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import sysconfig
from pathlib import Path

from loaders.import_hook import PTH_NAME, installed

SOURCE = Path(__file__).with_name(PTH_NAME)


def target() -> Path:
    """Where `site` looks for .pth files of this interpreter's installed packages."""
    return Path(sysconfig.get_paths()["purelib"]) / PTH_NAME


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m loaders.install_hooks",
        description=__doc__,
        epilog="example: python -m loaders.install_hooks && mteb run -t FreshStack -m MODEL_DIR",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--uninstall", action="store_true", help="remove the .pth")
    group.add_argument("--status", action="store_true", help="say whether the .pth is there and active")
    args = parser.parse_args(argv)
    path = target()
    if args.status:
        same = path.is_file() and path.read_bytes() == SOURCE.read_bytes()
        print(f"{path}: {'present' if same else 'missing or different'}; hook active here: {installed()}")
        return 0 if same else 1
    if args.uninstall:
        path.unlink(missing_ok=True)
        print(f"removed {path}")
        return 0
    shutil.copyfile(SOURCE, path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
