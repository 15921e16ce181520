"""MkDocs hook: anchor the griffe extensions listed in ``mkdocs.yml`` to its directory.

mkdocstrings resolves an extension's file path against the current directory; with this
hook ``mkdocs build -f path/to/mkdocs.yml`` works from anywhere.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def on_config(config: Any) -> Any:
    root = Path(config.config_file_path).parent
    options = config.plugins["mkdocstrings"].config["handlers"]["python"].setdefault("options", {})
    options["extensions"] = [
        str(root / ext) if isinstance(ext, str) and ext.endswith(".py") else ext
        for ext in options.get("extensions", [])
    ]
    return config
