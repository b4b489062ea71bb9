"""Files shipped with Hayai Desktop: icons, sample crops, the desktop entry template.

    from resources import path
    path("icons/hayai.svg")                    # -> Path
    path("samples/sample_ja_horizontal.png")

Found through importlib.resources, so it works from a checkout, an installed wheel and a
PyInstaller bundle alike. No Qt and no torch here: the CLI, the engine and the app all use it.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

ICON = "icons/hayai.svg"
ICON_BUSY = "icons/hayai-busy.svg"
ICON_PNG = "icons/hayai-256.png"  # a 256 px bitmap of ICON, for places that cannot take SVG
DESKTOP_ENTRY = "hayai.desktop"
SAMPLE_HORIZONTAL = "samples/sample_ja_horizontal.png"
SAMPLE_VERTICAL = "samples/sample_ja_vertical.png"


def root() -> Path:
    """The folder holding the resources (a real folder: wheels and bundles are unpacked on disk)."""
    return Path(str(files(__name__)))


def path(name: str) -> Path:
    """The file `name` (a '/'-separated path relative to this package), or FileNotFoundError."""
    found = root().joinpath(*name.split("/"))
    if not found.is_file():
        raise FileNotFoundError(
            f"resource {name!r} is missing (looked in {root()}); reinstall hayai-desktop"
        )
    return found


__all__ = [
    "path",
    "root",
    "ICON",
    "ICON_BUSY",
    "ICON_PNG",
    "DESKTOP_ENTRY",
    "SAMPLE_HORIZONTAL",
    "SAMPLE_VERTICAL",
]
