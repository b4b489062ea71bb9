"""Capture through the XDG desktop portal's Screenshot interface (GNOME, KDE Plasma, wlroots).

The one route GNOME and KDE offer on Wayland. The desktop may ask the user once whether Hayai may
take screenshots (the app says so before its first portal capture). The portal writes one image
of the whole desktop to a file and returns its URI; it is read and deleted at once.

That image spans every output's logical layout at one scale (the largest output scale, as GNOME,
KDE and grim all do): each Qt screen is its logical rectangle times that factor. A screen with a
lower scale than the image's is resampled down to its own physical size, so every capture still
holds the screen's physical pixels (exact where all outputs share a scale; grim, on wlroots, is
exact on mixed scales too).
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from app.backends import session_type
from app.capture.models import Capture, CaptureError, ScreenInfo
from app.portal import INSTALL_HINT as PORTAL_HINT
from app.portal import Portal, PortalCancelled, PortalError, has_interface

INTERFACE = "org.freedesktop.portal.Screenshot"
INSTALL_HINT = PORTAL_HINT
TIMEOUT_S = 120  # the first use may wait on the user's answer to the permission dialog
# A watched region is grabbed every half second: through this portal each grab is a whole-desktop
# screenshot the desktop itself takes (GNOME flashes the screen and plays its shutter sound).
WATCH_PROBLEM = (
    "Watching a region needs a capture that does not ask the desktop for a screenshot every half "
    "second, and this desktop only offers its screenshot portal. On Sway, Hyprland or river "
    "install grim; on GNOME or KDE, watch regions in an X11 session for now."
)
FIRST_USE_NOTE = (
    "Your desktop may ask once whether Hayai may take screenshots: allow it (and let it "
    "remember the answer) so captures work from now on."
)


def is_compatible() -> bool:
    return session_type() == "wayland"


def is_available() -> bool:
    return has_interface(INTERFACE)


def screenshot_image():
    """The portal's screenshot of the whole desktop, as a QImage; the file is deleted."""
    from PySide6.QtGui import QImage

    try:
        with Portal() as portal:
            results = portal.request(
                INTERFACE,
                "Screenshot",
                "sa{sv}",
                ("", {"interactive": ("b", False), "modal": ("b", False)}),
                timeout_s=TIMEOUT_S,
            )
    except PortalCancelled as error:
        raise CaptureError("the screenshot was cancelled in the desktop's dialog") from error
    except PortalError as error:
        raise CaptureError(
            f"the desktop portal gave no screenshot: {error}. If you denied Hayai screenshots, "
            "allow it in your desktop's privacy settings (GNOME: Settings → Apps → Hayai)."
        ) from error
    uri = results.get("uri", "")
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise CaptureError(f"the desktop portal returned no file ({uri!r})")
    path = Path(unquote(parsed.path))
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CaptureError(f"cannot read the portal's screenshot {path}: {error}") from error
    finally:
        path.unlink(missing_ok=True)  # written for us alone; never leave captures behind
    image = QImage.fromData(data)
    if image.isNull():
        raise CaptureError(f"the portal's screenshot {path.name} is not a readable image")
    return image.convertToFormat(QImage.Format.Format_RGB32)


def layout_bounds(screens: list[ScreenInfo]) -> tuple[int, int, int, int]:
    left = min(s.logical[0] for s in screens)
    top = min(s.logical[1] for s in screens)
    right = max(s.logical[0] + s.logical[2] for s in screens)
    bottom = max(s.logical[1] + s.logical[3] for s in screens)
    return left, top, right - left, bottom - top


def split(image, screens: list[ScreenInfo]) -> dict[str, Capture]:
    """Cut the desktop image into one capture per screen, each in that screen's physical pixels."""
    from PySide6.QtCore import QRect, Qt

    left, top, width, height = layout_bounds(screens)
    fx, fy = image.width() / width, image.height() / height
    captures: dict[str, Capture] = {}
    for screen in screens:
        x, y, w, h = screen.logical
        rect = QRect(round((x - left) * fx), round((y - top) * fy), round(w * fx), round(h * fy))
        part = image.copy(rect)
        target = (round(w * screen.dpr), round(h * screen.dpr))
        if (part.width(), part.height()) != target and target[0] < part.width():
            part = part.scaled(
                *target,
                Qt.AspectRatioMode.IgnoreAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )
        info = ScreenInfo(
            screen.name, screen.logical, (x, y, part.width(), part.height()), screen.dpr
        )
        captures[screen.name] = Capture(info, part)
    return captures


def grab(screens: list[ScreenInfo]) -> dict[str, Capture]:
    return split(screenshot_image(), screens)
