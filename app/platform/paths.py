"""Where per-user state lives: the one place that reads `HAYAI_CONFIG_DIR` (no Qt here).

With `HAYAI_CONFIG_DIR` set, everything (settings, history, dictionary index, single-instance
socket) lives under that one folder, so tests and side-by-side installs never meet; otherwise each
kind goes to the platform's own folder for the app name "hayai" (platformdirs).
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "hayai"
ENV = "HAYAI_CONFIG_DIR"


def override_dir() -> Path | None:
    """`HAYAI_CONFIG_DIR` as a path, or None when it is not set."""
    value = os.environ.get(ENV)
    return Path(value).expanduser() if value else None


def user_dir(kind: str) -> Path:
    """The folder for `kind` ("config", "data" or "cache"), created private (0700) when missing and
    made private when it is not (StateDirError when a file is in its place)."""
    from app.platform.private_files import private_dir

    path = override_dir()
    if path is None:
        import platformdirs

        path = Path(getattr(platformdirs, f"user_{kind}_dir")(APP_NAME, appauthor=False))
    return private_dir(path)
