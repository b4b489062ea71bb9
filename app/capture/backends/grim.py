"""Capture with grim on wlroots compositors (Sway, Hyprland, river): wlr-screencopy, no dialog.

`grim -o OUTPUT` copies one output in its own physical pixels, whatever its scale (2, 1.5, ...), so
each Qt screen (named after its wl_output, like "DP-1") is grabbed on its own; the images come back
as PPM on stdout (nothing written to disk, nothing to decode but the header).
"""

from __future__ import annotations

import shutil
import subprocess

from app.capture.models import Capture, CaptureError, ScreenInfo
from app.platform.backends import session_type
from app.platform.wayland import SCREENCOPY, offers

INSTALL_HINT = (
    "install grim (apt-get install grim); it needs a wlroots compositor (Sway, Hyprland, river) "
    f"offering {SCREENCOPY}"
)
TIMEOUT_S = 10


def is_compatible() -> bool:
    return session_type() == "wayland"


def is_available() -> bool:
    return shutil.which("grim") is not None and offers(SCREENCOPY)


def grab_output(name: str):
    """One output as a QImage (Format_RGB32), in its physical pixels."""
    from PySide6.QtGui import QImage

    try:
        done = subprocess.run(
            ["grim", "-o", name, "-t", "ppm", "-"], capture_output=True, timeout=TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CaptureError(f"grim could not run: {error}") from error
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise CaptureError(f"grim could not capture output {name!r}: {message}")
    # PySide6's stubs say bytes for the format, but the call takes only a str (bytes: ValueError).
    image = QImage.fromData(done.stdout, "PPM")  # type: ignore[arg-type]
    if image.isNull():
        raise CaptureError(f"grim gave no readable image for output {name!r}")
    return image.convertToFormat(QImage.Format.Format_RGB32)


def grab(screens: list[ScreenInfo]) -> dict[str, Capture]:
    captures: dict[str, Capture] = {}
    for screen in screens:
        image = grab_output(screen.name)
        x, y = screen.logical[:2]  # Wayland has no global physical space: origins stay logical
        info = ScreenInfo(
            screen.name, screen.logical, (x, y, image.width(), image.height()), screen.dpr
        )
        captures[screen.name] = Capture(info, image)
    return captures
