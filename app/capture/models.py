"""Value types of the capture capability: where a screen is, and what it showed.

Geometry is kept apart from pixels: `logical` is in Qt's global logical coordinates (what widgets
use), `physical` in virtual-desktop physical pixels (X11 root coordinates, what xdotool and mss use).
Captures are keyed by Qt screen name everywhere, never by list position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from PySide6.QtGui import QImage

Rect = tuple[int, int, int, int]  # x, y, width, height


class CaptureError(RuntimeError):
    """The screen could not be read; the message says why and what to try."""


class CaptureCancelled(CaptureError):
    """The user cancelled a capture that was waiting (for the desktop portal); nothing to say."""


@dataclass(frozen=True)
class ScreenInfo:
    name: str
    logical: Rect  # global logical coordinates (Qt)
    physical: Rect  # virtual-desktop physical pixels (X11 root coordinates)
    dpr: float  # what Qt reports; for logs only, scales are measured from sizes at the point of use


@dataclass(frozen=True)
class Capture:
    screen: ScreenInfo
    image: QImage  # the whole screen in physical pixels, Format_RGB32


class CaptureBackend(Protocol):
    """What a module in app/capture/backends/ provides (app/platform/backends.py explains the first three).

    A backend that may wait on the desktop (the portal) also has `grab_cancellable(screens,
    cancelled, on_state)`, which the app runs off the GUI thread (main.BackgroundGrab), and
    `WAITING_FIRST`, what its waiting window says before `on_state` has said anything."""

    INSTALL_HINT: str

    def is_compatible(self) -> bool: ...

    def is_available(self) -> bool: ...

    def grab(self, screens: list[ScreenInfo]) -> dict[str, Capture]: ...
