"""Which files of a repository are read, and the text of each, under one of two rule sets.

`release` (the default) is what `freshstack` 0.0.6 reads, so that a corpus reproduces the released one: every
file but symlinks, hidden paths and eight extensions (.png .gif .bin .jpg .jpeg .mp4 .csv .json), read in text
mode (UTF-8; `\r\n` and `\r` become `\n`, as Python's universal newlines make them) and skipped only when it is
not UTF-8 (a PDF becomes Markdown through pymupdf4llm where that package is installed, as in the official).
`sections` is the original chunker's: it also leaves out lock files, minified bundles, binary and data formats,
files over a byte cap, and renders notebooks as their cells' text. Every skipped file is counted by reason.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path


def extension(path: str) -> str:
    """The lowercased extension of a `/` path's file name (`.py`), or "" when it has none."""
    name = path.rsplit("/", 1)[-1].lower()
    return name[name.rfind(".") :] if "." in name else ""


# ---- notebooks --------------------------------------------------------------------------------------------------

_DATA_URI_RE = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s]{64,}")


def render_notebook(raw: str) -> str:
    """Markdown cells as text, code cells fenced, outputs (and embedded images) dropped; raises ValueError."""
    nb = json.loads(raw)
    if not isinstance(nb, dict):
        raise ValueError("not a notebook")
    cells = nb.get("cells") or [c for ws in nb.get("worksheets", []) for c in ws.get("cells", [])]
    meta = nb.get("metadata") or {}
    lang = (meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get("name") or "python"
    parts: list[str] = []
    for cell in cells:
        source = cell.get("source", cell.get("input", ""))
        source = "".join(source) if isinstance(source, list) else str(source)
        source = _DATA_URI_RE.sub("data:,", source).strip("\n")
        if not source.strip():
            continue
        if cell.get("cell_type") == "markdown":
            parts.append(source)
        elif cell.get("cell_type") == "code":
            parts.append(f"```{lang}\n{source}\n```")
    return "\n\n".join(parts) + "\n" if parts else ""


# ---- which files ------------------------------------------------------------------------------------------------

_SKIP_BY_EXTENSION = {
    "image": "png jpg jpeg gif bmp ico icns svg webp tif tiff psd avif heic eps ai xcf",
    "video": "mp4 m4v mov avi mkv webm wmv flv mpg mpeg 3gp",
    "audio": "mp3 wav ogg oga flac m4a aac opus wma mid midi aiff",
    "archive": "zip tar gz tgz bz2 xz 7z rar jar war whl egg zst lz4 gem nupkg deb rpm dmg iso apk",
    "font": "ttf otf woff woff2 eot fon pfb",
    "data": "bin csv tsv parquet feather arrow npy npz pkl pickle h5 hdf5 db sqlite sqlite3 json jsonl ndjson "
    "pt pth ckpt safetensors onnx pb tflite xls xlsx ods avro orc dat mat rds map",
    "binary": "pdf doc docx ppt pptx odt epub exe dll so dylib o a lib class pyc pyo wasm",
}
SKIP_EXTENSIONS = {f".{ext}": reason for reason, exts in _SKIP_BY_EXTENSION.items() for ext in exts.split()}
_LOCKS = """package-lock.json npm-shrinkwrap.json yarn.lock pnpm-lock.yaml bun.lockb poetry.lock uv.lock pipfile.lock
cargo.lock composer.lock gemfile.lock go.sum mix.lock pubspec.lock flake.lock packages.lock.json podfile.lock"""
LOCK_FILES = frozenset(_LOCKS.split())
VCS_DIRS = {".git", ".hg", ".svn"}


def glob_matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Glob patterns on a `/` path: `*` within a folder, `**` across folders; a pattern without `/` also matches
    the file name alone (as in .gitignore), so `*.md` means Markdown anywhere."""
    if not patterns:
        return lambda path: False
    regexes = []
    for pattern in patterns:
        out, i = "", 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out, i = out + "(?:.*/)?", i + 3
            elif pattern.startswith("**", i):
                out, i = out + ".*", i + 2
            else:
                out += {"*": "[^/]*", "?": "[^/]"}.get(pattern[i], re.escape(pattern[i]))
                i += 1
        regexes.append((re.compile(out + r"\Z"), "/" not in pattern.rstrip("/")))
    return lambda path: any(rx.match(path) or (base and rx.match(path.rsplit("/", 1)[-1])) for rx, base in regexes)


RELEASE_EXCLUDED = frozenset((".png", ".gif", ".bin", ".jpg", ".jpeg", ".mp4", ".csv", ".json"))  # freshstack 0.0.6


def walk_files(
    root: Path,
    subdir: str = "",
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    rules: str = "sections",
):
    """([(repo-relative path, file), ...] sorted by path, {skip reason: count}) for the files worth reading
    under `rules` (`release` or `sections`)."""
    included, excluded = glob_matcher(include), glob_matcher(exclude)
    skipped: dict[str, int] = {}
    files: list[tuple[str, Path]] = []
    top = root / subdir if subdir else root
    for folder, dirs, names in os.walk(top):
        dirs[:] = [d for d in dirs if d not in VCS_DIRS]
        rel_folder = Path(folder).relative_to(root).as_posix()
        for name in names:
            rel = name if rel_folder == "." else f"{rel_folder}/{name}"
            path = Path(folder, name)
            skip = _release_skip if rules == "release" else _skip_reason
            reason = skip(rel, path, included if include else None, excluded)
            if reason:
                skipped[reason] = skipped.get(reason, 0) + 1
            else:
                files.append((rel, path))
    files.sort()
    return files, skipped


def _release_skip(rel: str, path: Path, included, excluded) -> str:
    """The official walk's rules (extension by `os.path.splitext`, lowercased), then the topic's globs."""
    if (included is not None and not included(rel)) or excluded(rel):
        return "excluded"
    if path.is_symlink():
        return "symlink"
    if os.path.splitext(rel)[1].lower() in RELEASE_EXCLUDED:
        return "extension"
    if any(part.startswith(".") for part in rel.split("/")):
        return "hidden"
    return ""


def read_release_text(path: Path, rel: str, max_chars: int) -> tuple[str | None, str]:
    """(the file as the official reads it, "") or (None, skip reason).

    A file of `4 * max_chars` bytes or more has at least `max_chars` characters (UTF-8 spends at most four bytes
    on one), so it is dropped without being read, as the official drops it after reading.
    """
    try:
        if path.stat().st_size >= 4 * max_chars:
            return None, "over_max_chars"
        data = path.read_bytes()
    except OSError:
        return None, "unreadable"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        if not rel.endswith(".pdf"):
            return None, "not_utf8"
        return _pdf_markdown(path)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, ""


def _pdf_markdown(path: Path) -> tuple[str | None, str]:
    """The official converts an undecodable .pdf with pymupdf4llm; without that package it is skipped."""
    try:
        import pymupdf4llm  # type: ignore[import-not-found]
    except ImportError:
        return None, "pdf_needs_pymupdf4llm"
    try:
        return pymupdf4llm.to_markdown(str(path)), ""
    except Exception:  # a damaged PDF
        return None, "bad_pdf"


def _skip_reason(rel: str, path: Path, included, excluded) -> str:
    if (included is not None and not included(rel)) or excluded(rel):
        return "excluded"
    if included is None and any(part.startswith(".") for part in rel.split("/")):
        return "hidden"  # .github/, .env, .eslintrc: left out of the released corpus too; `include:` brings them back
    if path.is_symlink():
        return "symlink"
    name = rel.rsplit("/", 1)[-1].lower()
    if name in LOCK_FILES or name.endswith(".lock"):
        return "lock"
    if re.search(r"[.-]min\.(?:js|mjs|css)$", name):
        return "minified"
    return SKIP_EXTENSIONS.get(extension(name), "")


def load_text(path: Path, rel: str, max_file_bytes: int) -> tuple[str | None, str]:
    """(the text to chunk, "") or (None, skip reason); notebooks come back rendered (cells, no outputs)."""
    try:
        size = path.stat().st_size
        if size > max_file_bytes:
            return None, "too_large"
        if size == 0:
            return None, "empty"
        data = path.read_bytes()
    except OSError:
        return None, "unreadable"
    if b"\x00" in data[:8192]:
        return None, "binary"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not_utf8"
    ext = extension(rel)
    if ext == ".ipynb":
        try:
            text = render_notebook(text)
        except (ValueError, AttributeError, TypeError):
            return None, "bad_notebook"
    elif ext in (".js", ".mjs", ".cjs", ".css") and len(text) > 2000 and text.count("\n") < len(text) / 500:
        return None, "minified"  # mean line over 500 characters: bundled or generated
    if not text.strip():
        return None, "empty"
    return text, ""
