"""From a trigger to a crop: freeze the screen, box a region (or re-scan the last one), then
hand the crop to the read lifecycle (app/flows/reads.py).

    capture: start() → our windows hidden → grab (or wait on the desktop portal) → SelectionSession
             → selected → crop_ready (Reads.submit)
    re-scan: rescan() → grab the remembered box → crop_ready

`CaptureRoute` is the one decision where grabs go: the stand-ins a test injects, else the backend
the `capture/backend` setting picks.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication

from app.capture.region import Region
from app.platform.backends import setting_override
from app.ui.views import own_windows

if TYPE_CHECKING:
    from app.ui.overlay import Overlay
    from app.ui.waiting import WaitingWindow

log = logging.getLogger(__name__)

# Our windows hidden before a grab: this long for the X server to unmap them and for the windows
# below to repaint what they covered (without a compositor nothing keeps those pixels). 0: grab at
# once (the tests' stand-in grabbers have nothing to wait for).
REPAINT_MS = 150
# A capture that waits on the desktop (its portal) shows the waiting window after this long: the
# portal answers in under a second when it neither starts up nor asks, and then nothing flashes.
WAITING_DELAY_MS = 1000


class CaptureRoute:
    """Where every grab goes. `grab_screens`, `grab_region`, `grab_box`: stand-ins (tests, the
    app bench); None: the capture backend that the `capture/backend` setting picks."""

    def __init__(self, settings, grab_screens=None, grab_region=None, grab_box=None):
        self.settings = settings
        self.grab_screens = grab_screens
        self.grab_region = grab_region
        self.grab_box = grab_box

    def _backend(self) -> str | None:
        return setting_override(self.settings, "capture/backend")

    def name(self) -> str:
        """The backend that captures here (raises BackendError when none can)."""
        from app.capture import REGISTRY
        from app.platform.backends import pick

        registry: Mapping[str, Any] = REGISTRY
        return pick(registry, self._backend(), capability="capture").name

    def background(self, for_region: bool = False):
        """A BackgroundGrab when the backend may wait on the desktop (the portal), else None."""
        if self.grab_screens is not None or (for_region and self.grab_region is not None):
            return None
        from app.capture import background_grab

        return background_grab(self._backend())

    def screens(self):
        if self.grab_screens is not None:
            return self.grab_screens()
        from app.capture import grab_screens

        return grab_screens(self._backend())

    def region(self, screen_name: str, box_image_px):
        if self.grab_region is not None:
            return self.grab_region(screen_name, box_image_px)
        from app.capture import grab_region

        return grab_region(screen_name, box_image_px, backend=self._backend())

    def box(self, region: Region):
        """A watched region's pixels now."""
        if self.grab_box is not None:
            return self.grab_box(region.screen_name, region.box_image_px, region.box_desktop_px)
        from app.capture import grab_box

        return grab_box(region.screen_name, region.box_image_px, region.box_desktop_px)

    def watch_problem(self) -> str:
        """Why this desktop's capture cannot watch a region ("" when it can)."""
        if self.grab_box is not None:
            return ""
        from app.capture import watch_problem

        try:
            return watch_problem(self._backend())
        except Exception as exc:  # no capture backend at all: the same message as a capture
            return str(exc)


class CaptureFlow(QObject):
    """The open selection, the grab that waits on the desktop, and re-scan. It sits below the other
    flows: what it has done it tells by its signals (application.py connects them)."""

    notice = Signal(str, str, bool)  # title, message, error: for the user
    rescan_enabled = Signal(bool)  # a region is remembered: re-scan can read it again
    clearing = Signal()  # a grab comes: the popup goes, the overlay no longer waits aside
    closed = Signal()  # the selection or the capture closed (a question kept back may be asked)
    watch_boxed = Signal(object, int)  # a Region boxed to be watched, the interval (ms)
    # a crop to read: QImage, Region, released_at, source, the whole frozen screen (or None)
    crop_ready = Signal(object, object, float, str, object)

    def __init__(
        self,
        route: CaptureRoute,
        overlay: Overlay,
        selection_factory=None,
        *,
        debug: bool = False,
        keep_screens: bool = False,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.route = route
        self.overlay = overlay
        self.debug = debug  # -vv: the selection draws its geometry
        self.keep_screens = keep_screens  # --debug-dir at -vv: a read keeps the frozen screen
        self._quitting = False
        self._selection_factory = selection_factory
        self.session = None  # the open SelectionSession, if any
        self._clearing_screen = False  # our windows are hidden, the grab follows in REPAINT_MS
        self.background = None  # the BackgroundGrab a capture waits on (the desktop portal)
        self.waiting: WaitingWindow | None = None  # its window, made when first needed
        self._hidden_while_waiting: list = []  # our windows hidden until the portal's picture comes
        self._captures: dict = {}  # the open session's screens, kept only for --debug-dir at -vv
        self._watch_interval: int | None = None  # the region being boxed is watched at this (ms)
        self.last_region: Region | None = None  # what re-scan reads again

    def remember(self, region: Region) -> None:
        """`region` is the one re-scan reads (and, kept on disk, `hayai watch --last`)."""
        self.last_region = region
        self.rescan_enabled.emit(True)
        if not region.screen_name:  # a clipboard or folder image: not a region of the screen
            return
        from app.reading.last_region import save_last_region

        try:
            save_last_region(region.box_desktop_px)
        except OSError as exc:  # StateDirError too: watching still works for this run
            log.warning("cannot keep the last region for `hayai watch --last`: %s", exc)

    def is_open(self) -> bool:
        """A selection or a capture is open: a question waits, a new trigger is ignored."""
        return self.background is not None or (self.session is not None and self.session.is_open)

    def busy(self) -> bool:
        return (self.session is not None and self.session.is_open) or self._clearing_screen

    def quit(self) -> None:
        self._quitting = True  # a grab still waiting on its repaint never opens a selection
        if self.session is not None:
            self.session.cancel()
        self.cancel_waiting()

    # --- capture ---------------------------------------------------------------------------------

    def start(self, watch_interval: int | None = None) -> None:
        """Freeze the screen and open the selection; the boxed region is read, or watched at
        `watch_interval` ms."""
        if self.busy():
            log.debug("a selection is already open; trigger ignored")
            return
        self._watch_interval = watch_interval
        self.freeze(self._open_selection)

    def freeze(self, then) -> None:
        """Freeze the screen, then `then(captures)`: a selection, or the whole-screen read."""
        if self.background is not None:  # still waiting on the desktop: show that again
            self._show_waiting(self.background)
            return
        if self._modal_dialog_up():
            return
        # Our windows are never part of the frozen screen: the overlay and the popup go (a new read
        # replaces them), every other one is hidden until the screen is grabbed, as snipping
        # tools do, and the windows below get a moment to repaint before the grab.
        self.overlay.hide()
        self.clearing.emit()
        hidden = self._hide_for_grab()
        if not hidden or not REPAINT_MS:
            self._freeze_screen(hidden, then)
            return
        QTimer.singleShot(REPAINT_MS, self, lambda: self._freeze_screen(hidden, then))

    def _freeze_screen(self, hidden: list, then) -> None:
        self._clearing_screen = False
        if self._quitting:
            return
        try:
            background = self.route.background()
            captures = self.route.screens() if background is None else None
        except Exception as exc:  # CaptureError, BackendError, X errors: a message, not a crash
            self._restore_own_windows(hidden)
            log.warning("screen capture failed: %s", exc)
            self.notice.emit("Screen capture failed", str(exc), True)
            return
        if background is not None:  # the desktop portal: the selection opens when it answers,
            self._hidden_while_waiting = hidden  # and our windows stay out of its picture till then
            self._wait_for(background, then, "Screen capture failed")
            return
        self._restore_own_windows(hidden)
        then(captures)

    def _open_selection(self, captures) -> None:
        if self._modal_dialog_up():
            return
        factory = self._selection_factory
        if factory is None:
            from app.ui.selection import SelectionSession as factory
        session = factory(captures, debug=True) if self.debug else factory(captures)
        self._captures = captures if self.keep_screens else {}
        session.selected.connect(self._on_selected)
        session.cancelled.connect(self._on_cancelled)
        self.session = session
        session.start()

    def _ended(self) -> bool:
        """The session whose signal runs now is the flow's (one that a newer one cancelled as it
        opened is not: its end changes nothing)."""
        return self.sender() is self.session

    def _on_selected(self, selection) -> None:
        if not self._ended():
            return
        self.session = None
        self.closed.emit()
        region = Region(
            selection.screen_name,
            tuple(selection.box_image_px),
            tuple(selection.box_desktop_px),
            tuple(selection.logical_rect),
            selection.nearby,
        )
        self.remember(region)
        capture = self._captures.get(selection.screen_name)
        self._captures = {}
        interval, self._watch_interval = self._watch_interval, None
        if interval is not None:
            self.watch_boxed.emit(region, interval)
            return
        self.crop_ready.emit(
            selection.image,
            region,
            selection.released_at,
            getattr(selection, "how", "box"),
            capture.image if capture is not None else None,
        )

    def _on_cancelled(self) -> None:
        if not self._ended():
            return
        self.session = None
        self.closed.emit()
        self._captures = {}
        self._watch_interval = None

    def _hide_for_grab(self, over: QRect | None = None) -> list:
        """`_hide_own_windows`, the flow busy from now until the grab is taken or waited for:
        hiding syncs with the window system, which runs Qt's queued events, a hotkey's next press
        among them (which would otherwise open a selection inside this one's start)."""
        self._clearing_screen = True
        try:
            return self._hide_own_windows(over)
        except BaseException:
            self._clearing_screen = False
            raise

    def _hide_own_windows(self, over: QRect | None = None) -> list:
        """Hide our visible windows (those overlapping `over`, if given); returns them."""
        hidden = [w for w in own_windows() if over is None or w.frameGeometry().intersects(over)]
        for window in hidden:
            window.hide()
        if hidden:
            QGuiApplication.sync()  # unmapped now, not at the next event loop pass
            log.debug("hid %d window(s) of ours for the capture", len(hidden))
        return hidden

    def _restore_own_windows(self, hidden: list) -> None:
        from PySide6.QtWidgets import QApplication, QMenu

        alive = QApplication.topLevelWidgets()  # a window deleted meanwhile is not
        for window in hidden:
            # a menu closed by the capture stays closed
            if window in alive and not isinstance(window, QMenu):
                window.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
                window.show()
                window.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, False)

    def _modal_dialog_up(self) -> bool:
        """True, with that dialog raised, while one of our modal dialogs is open: a fullscreen
        selection over it would get neither its drag nor Esc, and would hide the dialog."""
        from PySide6.QtWidgets import QApplication

        dialog = QApplication.activeModalWidget()
        if dialog is None:
            return False
        log.info("capture not started: the %r window is open", dialog.windowTitle())
        self._watch_interval = None  # "Watch a region…" asked for this selection: not now
        dialog.raise_()
        dialog.activateWindow()
        self.notice.emit(
            "Capture not started",
            f"Close the “{dialog.windowTitle()}” window first, then capture again.",
            False,
        )
        return True

    # --- waiting on the desktop (the portal) -----------------------------------------------------

    def _wait_for(self, background, then, failure_title: str, retake: bool = True) -> None:
        """Run `background` off the GUI thread; `then(captures)` when its picture arrives. Past
        WAITING_DELAY_MS the waiting window says what it waits for (Esc or Cancel cancels). A
        picture taken while that window was up shows it: it is then taken again, once, without."""
        self.background = background

        def arrived(captures) -> None:
            if self.background is not background:
                return
            if retake and own_windows():  # the waiting window, or one that opened meanwhile
                shown = self._hide_for_grab()
                log.info("%d window(s) of ours in the picture: taking it again without", len(shown))
                self._hidden_while_waiting += [w for w in shown if w is not self.waiting]
                try:
                    again = self.route.background()
                except Exception as exc:  # the backend went away meanwhile: keep this picture
                    log.debug("no second picture: %s", exc)
                    again = None
                finally:
                    self._clearing_screen = False
                if again is not None:
                    self._wait_for(again, then, failure_title, retake=False)
                    return
            self._end_waiting()
            then(captures)

        def failed(message: str) -> None:
            if self.background is not background:
                return
            self._end_waiting()
            log.warning("%s: %s", failure_title, message)
            self.notice.emit(failure_title, message, True)

        def show() -> None:
            if self.background is background:
                self._show_waiting(background)

        background.arrived.connect(arrived)
        background.failed.connect(failed)
        background.waiting.connect(lambda text: self._waiting_text(background, text))
        QTimer.singleShot(WAITING_DELAY_MS, self, show)
        background.start()

    def _waiting_window(self):
        if self.waiting is None:
            from app.ui.waiting import WaitingWindow

            self.waiting = WaitingWindow()
            self.waiting.rejected.connect(self.cancel_waiting)
        return self.waiting

    def _waiting_text(self, background, text: str) -> None:
        if self.background is background and self.waiting is not None:
            self.waiting.set_text(text)

    def _show_waiting(self, background) -> None:
        window = self._waiting_window()
        window.set_text(background.state)
        window.show()
        window.raise_()
        window.activateWindow()

    def cancel_waiting(self) -> None:
        """Esc or Cancel in the waiting window: the capture is dropped, the desktop's dialog closed."""
        background = self.background
        if background is None:
            return
        log.info("capture cancelled while waiting for the desktop")
        background.cancel()
        self._end_waiting()
        self._watch_interval = None

    def _end_waiting(self) -> None:
        self.background = None
        if self.waiting is not None:
            self.waiting.hide()
        hidden, self._hidden_while_waiting = self._hidden_while_waiting, []
        self._restore_own_windows(hidden)
        self.closed.emit()

    # --- re-scan ---------------------------------------------------------------------------------

    def rescan(self) -> None:
        """Read the last region again: grabbed now, no selection."""
        region = self.last_region
        if region is None:
            self.notice.emit(
                "Nothing to re-scan",
                "Capture a region first; re-scan reads that same box again.",
                False,
            )
            return
        if self.busy():
            log.debug("a selection is open; re-scan ignored")
            return
        if self.background is not None:  # still waiting on the desktop: show that again
            self._show_waiting(self.background)
            return
        started = time.perf_counter()
        try:
            background = self.route.background(for_region=True)
        except Exception as exc:  # BackendError, CaptureError: no backend can grab here
            log.warning("re-scan capture failed: %s", exc)
            self.notice.emit("Re-scan failed", str(exc), True)
            return
        self.overlay.hide()  # the new text replaces it; a window of ours over the box waits aside
        hidden = self._hide_for_grab(QRect(*region.logical_rect))
        if background is not None:  # the desktop portal: read the box once its picture arrives
            self._clearing_screen = False  # waiting on the desktop is its own state
            self._hidden_while_waiting = hidden
            read = lambda captures: self._rescan_read(captures, region, started)  # noqa: E731
            self._wait_for(background, read, "Re-scan failed")
        elif hidden:
            QTimer.singleShot(REPAINT_MS, self, lambda: self._rescan_grab(region, started, hidden))
        else:
            self._rescan_grab(region, started, hidden)

    def _rescan_grab(self, region: Region, started: float, hidden: list) -> None:
        self._clearing_screen = False
        try:
            image = self.route.region(region.screen_name, region.box_image_px)
        except Exception as exc:
            log.warning("re-scan capture failed: %s", exc)
            self.notice.emit("Re-scan failed", str(exc), True)
            return
        finally:
            self._restore_own_windows(hidden)
        self.crop_ready.emit(image, region, started, "box", None)

    def _rescan_read(self, captures, region: Region, started: float) -> None:
        from app.capture import crop

        capture = captures.get(region.screen_name)
        try:
            if capture is None:
                raise ValueError(
                    f"screen {region.screen_name!r} is gone (screens now: {sorted(captures)}); "
                    "select a region again"
                )
            image = crop(capture.image, region.box_image_px)
        except Exception as exc:
            self.notice.emit("Re-scan failed", str(exc), True)
            return
        self.overlay.hide()
        self.crop_ready.emit(image, region, started, "box", None)
