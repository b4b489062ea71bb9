"""The app's watched region: `hayai watch …`, the tray's "Watch a region…", pause and stop.

One region at a time, read by a `RegionWatcher` (app/reading/watch.py) whenever its content
settles. Its reads go through the app's read lifecycle (app/flows/reads.py) in the background: they
never push out a read of the user's, and the overlay shows their text only while no read of the
user's is pending. Each command answers what it did ("Watching 780×100 at 1060,730", "Nothing is
being watched"), which `hayai watch` prints (app/platform/single_instance.py).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QImage

from app.capture.region import Region
from app.platform.single_instance import Answer
from app.ui.views import own_windows

if TYPE_CHECKING:
    from app.flows.capture import CaptureFlow, CaptureRoute
    from app.flows.reads import Reads
    from app.reading.watch import RegionWatcher
    from app.settings import Settings
    from app.ui.overlay import Overlay

log = logging.getLogger(__name__)

NOTHING_WATCHED = "Nothing is being watched"


def where(region: Region) -> str:
    """The region in the words of `hayai watch --region` (virtual-desktop physical pixels)."""
    x, y, w, h = region.box_desktop_px
    return f"{w}×{h} at {x},{y}"


class WatchControl(QObject):
    notice = Signal(str, str, bool)  # title, message, error: for the user
    # the watcher's: "watching", "paused", "stopped" (the views' entries)
    state_changed = Signal(str)
    note_changed = Signal(str)  # why the watched region is not read now, or ""

    def __init__(
        self,
        settings: Settings,
        overlay: Overlay,
        route: CaptureRoute,
        capture: CaptureFlow,
        reads: Reads,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.overlay = overlay  # the one window of ours that may stay over the region
        self.route = route  # whether this desktop can watch; the region's pixels
        self.capture = capture  # boxes the region to watch; the last region boxed
        self.reads = reads  # the watched reads go through the read lifecycle
        self.watcher: RegionWatcher | None = None

    def command(self, rest: str) -> Answer:
        """`watch [--region X,Y,W,H | --last] [--interval MS]` from a second `hayai` (or the tray:
        no options, box a region now)."""
        from app.reading.cli import parse_message

        try:
            options = parse_message(rest)
        except ValueError as exc:
            return self._refuse("Cannot watch", str(exc))
        interval = options["interval_ms"] or self.settings.get("reading/watch_interval_ms")
        if options["region"] is not None:
            from app.capture import qt_screens
            from app.reading.watch import locate

            try:
                name, box, logical = locate(options["region"], qt_screens())
            except ValueError as exc:
                return self._refuse("Cannot watch that region", str(exc))
            return self.watch(Region(name, box, tuple(options["region"]), logical), interval)
        if options["last"]:
            region = self.capture.last_region or self._kept_region()
            if region is None:
                return self._refuse(
                    "Nothing to watch",
                    "No region has been boxed yet, so there is no last region to watch. "
                    "“Watch a region…” boxes one and watches it.",
                )
            return self.watch(region, interval)
        refused = self._refused()
        if refused:
            return refused
        # box it now, its region watched, not read: started once this has answered (the grab
        # may take a while, and `hayai watch` waits for the answer)
        QTimer.singleShot(0, self, lambda: self.capture.start(watch_interval=interval))
        return Answer("Box the region to watch on the screen (Esc cancels)")

    def _kept_region(self) -> Region | None:
        """The last region boxed before a restart, on today's screens (None: none, or off them)."""
        from app.capture import qt_screens
        from app.reading.last_region import load_last_region
        from app.reading.watch import locate

        box = load_last_region()
        if box is None:
            return None
        try:
            name, image_box, logical = locate(box, qt_screens())
        except ValueError as exc:  # the screens changed since
            log.info("the kept last region is not on a screen now: %s", exc)
            return None
        return Region(name, image_box, box, logical)

    def _refuse(self, title: str, message: str) -> Answer:
        """The user told why a watch command is not done, and the command's answer saying it."""
        self.notice.emit(title, message, True)
        return Answer(f"{title}: {message}", ok=False)

    def _refused(self) -> Answer | None:
        """The refusal, the user told why, when this desktop's capture cannot watch a region."""
        problem = self.route.watch_problem()
        if not problem:
            return None
        log.warning("not watching: %s", problem)
        return self._refuse("Watching is not available here", problem)

    def watch(self, region: Region, interval_ms: int | None = None) -> Answer:
        """Watch `region` (replacing any watched one): read it whenever its content settles."""
        from app.reading.watch import RegionWatcher, app_windows_over, move_out_of

        refused = self._refused()
        if refused:
            return refused
        self.stop()
        # Our own windows never in the region: moved beside it where there is room (else the
        # frame and the entries say which one covers it, and its ticks wait).
        move_out_of(region.logical_rect, own_windows(exclude=(self.overlay,)))
        self.capture.remember(region)
        route = self.route
        watcher = RegionWatcher(
            region,
            interval_ms or self.settings.get("reading/watch_interval_ms"),
            grab=lambda: route.box(region),
            covered=lambda: app_windows_over(region.logical_rect),
        )
        watcher.read_due.connect(lambda image: self._read(watcher, image))
        watcher.state_changed.connect(self.state_changed)
        watcher.covered_changed.connect(self.note_changed)
        self.watcher = watcher
        watcher.start()
        return Answer(f"Watching {where(region)}")

    def _read(self, watcher: RegionWatcher, image: QImage) -> None:
        reads = self.reads
        if reads.user_read_pending():
            # The worker keeps one waiting crop: a watched one must never push out the user's.
            watcher.read_failed()  # that picture is read at the next tick
            return
        reads.submit(
            image,
            watcher.region,
            time.perf_counter(),
            source="watch",
            done=lambda result: self.new_text(watcher, result.text),
            failed=lambda message: self.read_failed(watcher, message),
        )

    def new_text(self, origin: RegionWatcher, text: str) -> bool:
        """A watched read came back: True when it is the watched region's and its text is new."""
        new = origin is self.watcher and self.watcher is not None and self.watcher.read_done(text)
        if new:
            log.info("watched region: new text %r", text[:40])
        else:
            log.debug("watched region: no new text")
        return new

    def read_failed(self, origin: RegionWatcher, message: str = "") -> None:
        """A watched read failed (`message`) or was dropped (""): its picture is read again at the
        next tick."""
        if message:
            log.warning("reading the watched region failed: %s", message)
        if origin is self.watcher and self.watcher is not None:
            self.watcher.read_failed()

    def set_interval(self, interval_ms: int) -> None:
        if self.watcher is not None:
            self.watcher.set_interval(interval_ms)

    def toggle(self) -> Answer:
        if self.watcher is None:
            self.notice.emit(
                NOTHING_WATCHED, "Watch a region first (tray menu or `hayai watch`).", False
            )
            return Answer(NOTHING_WATCHED)
        self.watcher.toggle()
        paused = self.watcher.state == "paused"
        return Answer(f"{'Paused watching' if paused else 'Watching'} {where(self.watcher.region)}")

    def stop(self) -> Answer:
        watcher, self.watcher = self.watcher, None
        if watcher is None:
            return Answer(NOTHING_WATCHED)
        watcher.stop()
        watcher.deleteLater()
        return Answer(f"Stopped watching {where(watcher.region)}")
