"""Capture through the XDG desktop portal's Screenshot interface (GNOME, KDE Plasma, wlroots).

The one route GNOME and KDE offer on Wayland. The desktop may ask the user once whether Hayai may
take screenshots (the app says so before its first portal capture), and xdg-desktop-portal may
still be starting: the app runs `grab_cancellable` on a thread of its own (app/capture/main.py,
BackgroundGrab), never on the GUI thread. The portal writes one image of the whole desktop to a
file and returns its URI; the file is unlinked as soon as it is open, then read.

That image spans every output's logical layout at one scale (the largest output scale, as GNOME,
KDE and grim all do): each Qt screen is its logical rectangle times that factor. A screen with a
lower scale than the image's is resampled down to its own physical size, so every capture still
holds the screen's physical pixels (exact where all outputs share a scale; grim, on wlroots, is
exact on mixed scales too).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

from app.capture.models import Capture, CaptureCancelled, CaptureError, ScreenInfo
from app.platform.backends import session_type
from app.platform.portal import INSTALL_HINT as PORTAL_HINT
from app.platform.portal import (
    Portal,
    PortalCancelled,
    PortalError,
    PortalNotAnswering,
    PortalRefused,
    is_installed,
)

INTERFACE = "org.freedesktop.portal.Screenshot"
INSTALL_HINT = PORTAL_HINT
TIMEOUT_S = 120  # the blocking `grab` only: the first use may wait on the permission dialog
# what the capture waits for, in the app's "waiting" window
STARTING = (
    "Waiting for the desktop portal to start. On a fresh login it can take half a minute; "
    "the selection opens as soon as it answers."
)
ASKING = (
    "Waiting for your desktop's answer. It may be asking whether Hayai may take screenshots: "
    "allow it in its dialog, and the selection opens."
)
WAITING_FIRST = STARTING  # said by a waiting window shown before the portal has answered
REFUSED = (
    "Your desktop refused the screenshot: Hayai is not allowed to take screenshots, or the "
    "desktop's screenshot portal failed. If you denied it, allow it again in your desktop's "
    "privacy settings (GNOME: Settings → Apps → Hayai)."
)
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
    # Asked of the bus itself, at once: xdg-desktop-portal may need half a minute to start on a
    # fresh login, and the capture waits for it (saying so) rather than call it missing.
    return is_installed()


def screenshot_data(
    cancelled: threading.Event | None = None,
    on_state: Callable[[str], None] | None = None,
    timeout_s: float | None = TIMEOUT_S,
) -> bytes:
    """The portal's screenshot of the whole desktop, as the image file's bytes; the file is gone.

    Runs wherever it is called: the app calls it on a thread of its own (`grab_cancellable`).
    `on_state` hears STARTING while the portal is not answering yet and ASKING once the
    request is with the desktop (which may be asking the user); `timeout_s` None waits for the
    desktop's answer until `cancelled` is set."""
    try:
        with Portal() as portal:
            portal.wait_until_up(
                INTERFACE, cancelled, on_retry=lambda _waited: on_state and on_state(STARTING)
            )
            if on_state is not None:
                on_state(ASKING)
            portal.timeout_s = 25.0  # the call itself is answered at once: the answer comes later
            results = portal.request(
                INTERFACE,
                "Screenshot",
                "sa{sv}",
                ("", {"interactive": ("b", False), "modal": ("b", False)}),
                timeout_s=timeout_s,
                cancelled=cancelled,
            )
    except PortalCancelled as error:
        if cancelled is not None and cancelled.is_set():
            raise CaptureCancelled("the capture was cancelled") from error
        raise CaptureError("You cancelled the screenshot in your desktop's dialog.") from error
    except PortalNotAnswering as error:
        raise CaptureError(f"No screenshot: {error}. Capture again in a moment.") from error
    except PortalRefused as error:
        raise CaptureError(REFUSED) from error
    except PortalError as error:
        raise CaptureError(f"No screenshot: {error}.") from error
    uri = results.get("uri", "")
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise CaptureError(f"the desktop portal returned no file ({uri!r})")
    return read_and_delete(Path(unquote(parsed.path)))


def read_and_delete(path: Path) -> bytes:
    """The file's bytes, its name removed first: xdg-desktop-portal-wlr writes every screenshot
    to /tmp/out.png, readable by every user, so it is unlinked the moment it is open (the open
    descriptor still reads it) and never lingers while it is read or decoded."""
    try:
        with open(path, "rb") as handle:
            path.unlink(missing_ok=True)
            return handle.read()
    except OSError as error:
        path.unlink(missing_ok=True)  # written for us alone; never leave captures behind
        raise CaptureError(f"cannot read the portal's screenshot {path}: {error}") from error


def decode(data: bytes):
    from PySide6.QtGui import QImage

    image = QImage.fromData(data)
    if image.isNull():
        raise CaptureError("the portal's screenshot is not a readable image")
    return image.convertToFormat(QImage.Format.Format_RGB32)


def screenshot_image():
    """The portal's screenshot of the whole desktop, as a QImage (blocking: scripts and bench)."""
    return decode(screenshot_data())


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
        px, py = screen.physical[:2]  # qt_screens' origins: screens of two scales never overlap
        info = ScreenInfo(
            screen.name, screen.logical, (px, py, part.width(), part.height()), screen.dpr
        )
        captures[screen.name] = Capture(info, part)
    return captures


def grab(screens: list[ScreenInfo]) -> dict[str, Capture]:
    """Blocking, up to TIMEOUT_S: for scripts and the bench. The app uses `grab_cancellable`."""
    return split(screenshot_image(), screens)


def grab_cancellable(
    screens: list[ScreenInfo], cancelled: threading.Event, on_state: Callable[[str], None]
) -> dict[str, Capture]:
    """What the app runs on a thread of its own (app/capture/main.py, BackgroundGrab): it waits
    for the desktop as long as the user lets it, and `cancelled` ends it."""
    return split(decode(screenshot_data(cancelled, on_state, timeout_s=None)), screens)
