"""Capture with mss: physical pixels of every monitor, fast (XGetImage / BitBlt / CoreGraphics).

mss knows monitors, Qt knows screens; they are matched by output name (when mss reports one and the
sizes agree) or by geometry: Qt keeps a screen's native top-left and divides only its size by the
scale factor, so a monitor matches when its top-left equals the screen's and its size is the
screen's logical size times its device pixel ratio (or the logical size, as mss reports on macOS).
"""

from __future__ import annotations

import sys

from app.capture.models import Capture, CaptureError, ScreenInfo
from app.platform.backends import session_type

INSTALL_HINT = "pip install mss (an X11 session, Windows or macOS is needed)"


def is_compatible() -> bool:
    # mss reads X11 through XGetImage: on Wayland (even with XWayland) it sees only black.
    return session_type() in ("x11", "windows", "macos")


def is_available() -> bool:
    try:
        import mss  # noqa: F401
    except ImportError:
        return False
    return True


def _open():
    import mss

    factory = getattr(mss, "MSS", None) or mss.mss  # mss >= 10 renamed the class
    return factory()


def _nearly_equal(size: int, expected: int) -> bool:
    return abs(size - expected) <= 2  # rounding of fractional scale factors


def match_monitor(screen: ScreenInfo, monitors: list[dict]) -> dict | None:
    """The mss monitor showing `screen`, or None."""
    _, _, lw, lh = screen.logical
    pw, ph = round(lw * screen.dpr), round(lh * screen.dpr)

    def size_fits(m: dict) -> bool:
        return (_nearly_equal(m["width"], pw) and _nearly_equal(m["height"], ph)) or (
            m["width"] == lw and m["height"] == lh
        )

    by_name = [m for m in monitors if m.get("output") == screen.name and size_fits(m)]
    if len(by_name) == 1:
        return by_name[0]
    x, y = screen.logical[:2]
    by_geometry = [m for m in monitors if (m["left"], m["top"]) == (x, y) and size_fits(m)]
    if by_geometry:
        return by_geometry[0]
    return None


def _to_qimage(shot):
    from app.platform.qt_images import bgra_to_qimage

    # mss gives BGRA rows, which is QImage's RGB32 layout on little-endian machines. `raw` is the
    # buffer itself (`bgra` would copy it once more).
    return bgra_to_qimage(shot.raw, shot.width, shot.height)


def grab(screens: list[ScreenInfo]) -> dict[str, Capture]:
    captures: dict[str, Capture] = {}
    with _open() as sct:
        monitors = list(sct.monitors[1:])  # [0] is the bounding box of all of them
        for screen in screens:
            monitor = match_monitor(screen, monitors)
            if monitor is None:
                raise CaptureError(
                    f"mss found no monitor for screen {screen.name!r} {screen.logical} "
                    f"(monitors: {[(m['left'], m['top'], m['width'], m['height']) for m in monitors]})"
                )
            image = _to_qimage(sct.grab(monitor))
            physical = (monitor["left"], monitor["top"], image.width(), image.height())
            if (
                sys.platform == "darwin"
            ):  # mss reports points there; root coordinates are points too
                physical = (monitor["left"], monitor["top"], monitor["width"], monitor["height"])
            info = ScreenInfo(screen.name, screen.logical, physical, screen.dpr)
            captures[screen.name] = Capture(info, image)
    return captures


_reader = None  # one mss instance for the GUI thread's repeated small grabs (a watched region)


def grab_box(box_desktop_px):
    """Just these virtual-desktop physical pixels (X11 root coordinates), as an RGB32 QImage."""
    global _reader
    if sys.platform == "darwin":
        raise CaptureError("grab_box: mss reports points on macOS; the screen is grabbed instead")
    if _reader is None:
        _reader = _open()
    x, y, w, h = box_desktop_px
    return _to_qimage(_reader.grab({"left": x, "top": y, "width": w, "height": h}))
