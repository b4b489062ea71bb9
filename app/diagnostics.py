"""Diagnostics: the `-v` system-info block and the `--debug-dir` capture log."""

from __future__ import annotations

import json
import logging
import os
import platform
import re
import sys
from pathlib import Path

from app.platform.paths import override_dir

log = logging.getLogger(__name__)


def system_info(backends: dict[str, str] | None = None, device: str = "") -> dict:
    """One dict with what a bug report needs: Qt platform, screens, session, backends, device."""
    from PySide6 import __version__ as pyside_version
    from PySide6.QtCore import qVersion
    from PySide6.QtGui import QGuiApplication

    from app import __version__

    screens = []
    for screen in QGuiApplication.screens():
        geo = screen.geometry()
        dpr = screen.devicePixelRatio()
        screens.append(
            {
                "name": screen.name(),
                "logical": [geo.x(), geo.y(), geo.width(), geo.height()],
                "physical_size": [round(geo.width() * dpr), round(geo.height() * dpr)],
                "dpr": dpr,
                "primary": screen == QGuiApplication.primaryScreen(),
            }
        )
    torch = sys.modules.get("torch")  # never imported here: that would stall start-up
    return {
        "hayai": __version__,
        "python": platform.python_version(),
        "os": platform.platform(),
        "qt": qVersion(),
        "pyside": pyside_version,
        "qt_platform": QGuiApplication.platformName(),
        "session_type": os.environ.get("XDG_SESSION_TYPE", ""),
        "desktop": os.environ.get("XDG_CURRENT_DESKTOP", ""),
        "wayland_display": os.environ.get("WAYLAND_DISPLAY", ""),
        "x11_display": os.environ.get("DISPLAY", ""),
        "screens": screens,
        "backends": dict(backends or {}),
        "device": device or "not loaded yet",
        "torch": getattr(torch, "__version__", "not imported yet"),
        "config_dir": str(override_dir() or "(platform default)"),
    }


def format_info(info: dict) -> str:
    lines = ["system info:"]
    for key, value in info.items():
        if key == "screens":
            for screen in value:
                lines.append(
                    f"  screen {screen['name']}: logical {screen['logical']} physical "
                    f"{screen['physical_size']} dpr {screen['dpr']}{' (primary)' if screen['primary'] else ''}"
                )
        elif isinstance(value, dict):
            lines.append(f"  {key}: " + (", ".join(f"{k}={v}" for k, v in value.items()) or "-"))
        else:
            lines.append(f"  {key}: {value}")
    return "\n".join(lines)


class DebugDir:
    """`--debug-dir`: NNNN.png (the crop exactly as given to the model) + NNNN.json per capture."""

    def __init__(self, folder: str | Path):
        from app.platform.private_files import private_dir

        self.folder = Path(folder).expanduser()
        if not self.folder.is_dir():  # a new folder is private; one the user made keeps its mode
            private_dir(self.folder)
        numbers = [
            int(m.group(1))
            for p in self.folder.iterdir()
            if (m := re.fullmatch(r"(\d{4,})\.json", p.name))
        ]
        self._next = max(numbers, default=0) + 1

    def save(
        self,
        crop,
        box,
        screen: str,
        text: str,
        ocr_ms: float,
        latency_ms: float,
        screen_image=None,
    ) -> Path:
        """`crop` is a PIL image (what the worker fed the model) or a QImage; returns the JSON path.

        screen_image: the whole frozen screen (a QImage, `-vv`), saved as NNNN-screen.png."""
        stem = f"{self._next:04d}"
        self._next += 1
        png = self.folder / f"{stem}.png"
        if hasattr(crop, "save") and hasattr(crop, "mode"):  # PIL
            crop.save(png, format="PNG")
        elif not crop.save(str(png), "PNG"):
            log.warning("could not write %s", png)
        record = {
            "box": [int(v) for v in box],
            "screen": screen,
            "text": text,
            "ocr_ms": round(float(ocr_ms), 2),
            "latency_ms": round(float(latency_ms), 2),
        }
        if screen_image is not None and not screen_image.isNull():
            full = self.folder / f"{stem}-screen.png"
            if screen_image.save(str(full), "PNG"):
                record["screen_image"] = full.name
            else:
                log.warning("could not write %s", full)
        path = self.folder / f"{stem}.json"
        path.write_text(json.dumps(record, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        from app.platform.private_files import tighten_file

        for written in (png, path):  # the captures are the user's screen: for the user only
            tighten_file(written)
        return path
