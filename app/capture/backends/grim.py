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
    return _run(["grim", "-o", name, "-t", "ppm", "-"], f"output {name!r}")


def _run(argv: list[str], what: str):
    from PySide6.QtGui import QImage

    try:
        done = subprocess.run(argv, capture_output=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise CaptureError(f"grim could not run: {error}") from error
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        raise CaptureError(f"grim could not capture {what}: {message}")
    # PySide6's stubs say bytes for the format, but the call takes only a str (bytes: ValueError).
    image = QImage.fromData(done.stdout, "PPM")  # type: ignore[arg-type]
    if image.isNull():
        raise CaptureError(f"grim gave no readable image for {what}")
    return image.convertToFormat(QImage.Format.Format_RGB32)


def grab_box(box_desktop_px):
    """Only the box (desktop px: app/capture/screens.py's `qt_screens`), through `grim -g` at
    its screen's scale: a few hundred pixels for Hover to read's every look, not the whole output.
    The logical box around it is grabbed, then cut to it. A box across screens, or on a
    fractional scale, raises CaptureError: the caller grabs the screen instead."""
    import math

    from app.capture.screens import crop, qt_screens

    x, y, w, h = box_desktop_px
    screen = next(
        (
            s
            for s in qt_screens()
            if s.physical[0] <= x and x + w <= s.physical[0] + s.physical[2]
            and s.physical[1] <= y and y + h <= s.physical[1] + s.physical[3]
        ),
        None,
    )  # fmt: skip
    if screen is None or screen.dpr != int(screen.dpr):
        raise CaptureError("the box is not on one screen of a whole-number scale")
    scale = int(screen.dpr)
    ix, iy = x - screen.physical[0], y - screen.physical[1]  # in the screen's image
    lx0, ly0 = ix // scale, iy // scale
    lx1, ly1 = math.ceil((ix + w) / scale), math.ceil((iy + h) / scale)
    ox, oy = screen.logical[:2]
    geometry = f"{ox + lx0},{oy + ly0} {lx1 - lx0}x{ly1 - ly0}"
    image = _run(["grim", "-g", geometry, "-s", str(scale), "-t", "ppm", "-"], geometry)
    if (image.width(), image.height()) != ((lx1 - lx0) * scale, (ly1 - ly0) * scale):
        raise CaptureError(f"grim gave {image.width()}x{image.height()} px for {geometry}")
    return crop(image, (ix - lx0 * scale, iy - ly0 * scale, w, h))


def grab(screens: list[ScreenInfo]) -> dict[str, Capture]:
    captures: dict[str, Capture] = {}
    for screen in screens:
        image = grab_output(screen.name)
        x, y = screen.physical[:2]  # no global physical space on Wayland: qt_screens' origins
        info = ScreenInfo(
            screen.name, screen.logical, (x, y, image.width(), image.height()), screen.dpr
        )
        captures[screen.name] = Capture(info, image)
    return captures
