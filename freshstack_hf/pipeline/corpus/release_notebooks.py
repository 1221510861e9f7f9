"""A notebook as the official chunker sees it: nbconvert's Python script.

Raw cells are left out, embedded media blanked and `pip` commented out (quirks included: every `pip` in the text is
commented, not only commands).
"""

from __future__ import annotations

import ast
import contextlib
import re
from typing import Any

_MEDIA_FIELD = re.compile(r'"(?:image\/png|image\/jpeg)":\s*"([^"]*)"')
_MEDIA_URI = re.compile(r'"data:(?:video/mp4|image/jpeg|image/png|audio/x-wav);base64,([^"]+)"')
_OFFICIAL_SUB_COUNT = 16  # the official passes re.DOTALL (16) where `re.sub` takes its count: 16 per pass


def blank_embedded_media(text: str, passes: int = 3) -> str:
    """Embedded images and media replaced by `""`, as the official's notebook cleaner does (16 per pass)."""
    if "image/png" in text or "image/jpeg" in text:
        for _ in range(passes):
            text = _MEDIA_FIELD.sub('""', text, count=_OFFICIAL_SUB_COUNT)
    uris = ("data:video/mp4;base64,", "data:image/jpeg;base64,", "data:image/png;base64,", "data:audio/x-wav;base64,")
    if any(uri in text for uri in uris):
        for _ in range(passes):
            text = _MEDIA_URI.sub('""', text, count=_OFFICIAL_SUB_COUNT)
    return text


class NotebookScript:
    """nbconvert's exporter, made once per chunker (it loads templates) and only when a notebook comes."""

    def __init__(self) -> None:
        self.exporter: Any = None

    def convert(self, raw: str) -> str:
        """The notebook's Python script as the official makes it (the JSON may arrive quoted as a literal)."""
        import nbformat

        if self.exporter is None:
            from nbconvert import ScriptExporter
            from traitlets.config import Config

            config = Config()
            config.TemplateExporter.exclude_raw = True
            self.exporter = ScriptExporter(config=config)
        stripped = raw.strip()
        if stripped.startswith(("'", '"')) and stripped.endswith(("'", '"')):
            with contextlib.suppress(Exception):  # not a quoted literal after all
                raw = ast.literal_eval(stripped)
        notebook = nbformat.reads(raw, as_version=nbformat.NO_CONVERT)
        script, _ = self.exporter.from_notebook_node(notebook)
        script = blank_embedded_media(script)
        return script.replace("%pip", "#%pip").replace("!pip", "#!pip").replace("pip", "#pip")
