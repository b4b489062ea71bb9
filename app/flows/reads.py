"""The read lifecycle: a crop in, its text out, and which read the overlay is for.

    Reads.submit(image, region, …) → OcrWorker.submit → finished / failed / superseded →
    the overlay (its text painted: latency) → history, auto-copy, the text outputs

One rule decides "newest wins": `Reads.is_current(request_id)`, the user's last read (a box, a
re-scan, an outside image, a clicked block of the whole screen). The worker only keeps one crop
waiting (a newer crop replaces it and the replaced one comes back as `superseded`); a result that
is not current is dropped here. Watched reads (app/flows/watch.py) never become current:
their text goes to the overlay only while no read of the user's is pending. Hover reads
(app/flows/hover.py) never become current either: their text goes to the popup dictionary, and they wait
while another read of the user's is pending (`hover_may_read`), so neither pushes out the other's
crop from the worker's one waiting slot; a watched read waits for them as for any read of the
user's. A watched or hover read comes with its asker's `done` and `failed`, which decide what
becomes of it: Reads knows neither asker.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QObject, QRect, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication, QImage, QImageWriter

from app.capture.region import Region
from app.platform.qt_images import pil_to_qimage
from app.ui.screens import screen_area

if TYPE_CHECKING:
    from app.diagnostics import DebugDir
    from app.engines.worker import OcrWorker
    from app.flows.model_status import ModelStatus
    from app.flows.windows import Windows
    from app.history import History
    from app.settings import Settings
    from app.ui.overlay import Overlay

log = logging.getLogger(__name__)

THUMBNAIL_SIDE = 160
PAINT_WAIT_MS = 500  # an overlay not painted by then (hidden, minimised): latency counted to then


@dataclass
class PendingRead:
    region: Region
    released_at: float  # perf_counter() at mouse release (or at the re-scan trigger)
    screen_image: QImage | None = None  # the whole frozen screen, kept for --debug-dir at -vv
    source: str = "box"  # how the read came in: one of app.history.SOURCES
    # a background read's asker (a watched region, Hover to read): done(result) → True when the
    # text goes on (history, outputs); failed(message), "" when another read pushed it out
    done: Callable[[Any], bool] | None = None
    failed: Callable[[str], None] | None = None
    result: Any = None
    edited: str | None = None  # the user's committed correction of the text, if any
    history_id: int | None = None  # its history row, once added
    submitted_at: float = 0.0  # perf_counter() when the crop went to the worker
    result_at: float = 0.0  # perf_counter() when the result reached the GUI thread

    @property
    def watched(self) -> bool:
        """A read of a watched region: in the background, never the user's current read."""
        return self.source == "watch"

    @property
    def hover(self) -> bool:
        """A read of Hover to read: its text goes to the popup, never to the overlay."""
        return self.source == "hover"


def latency_breakdown(pending: PendingRead, shown_at: float) -> str:
    """Where the app's share of the felt latency went, for the log."""
    hops = {
        "release→submit": (pending.submitted_at - pending.released_at) * 1000,
        **pending.result.hops_ms(pending.submitted_at, pending.result_at, shown_at),
    }
    return ", ".join(f"{name} {ms:.1f} ms" for name, ms in hops.items())


def png_bytes(image: QImage, max_side: int = THUMBNAIL_SIDE) -> bytes:
    if image.isNull():
        return b""
    if max(image.width(), image.height()) > max_side:
        image = image.scaled(
            max_side,
            max_side,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    QImageWriter(buffer, QByteArray(b"PNG")).write(image)  # what QImage.save(buffer, "PNG") runs
    return bytes(data.data())


class Reads(QObject):
    """Every read's way from the crop to the overlay, the history and the text outputs."""

    text_read = Signal(str, str)  # every new text read (text, source): the text outputs listen
    # an outside image's read: source, ok, message, superseded
    image_done = Signal(str, bool, str, bool)
    notice = Signal(str, str, bool)  # title, message, error: for the user

    def __init__(
        self,
        settings: Settings,
        worker: OcrWorker,
        overlay: Overlay,
        windows: Windows,
        status: ModelStatus,
        *,
        history: Callable[[], History | None],
        debug: DebugDir | None = None,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.settings = settings
        self.worker = worker
        self.overlay = overlay
        self.windows = windows  # the overlay back from aside, the history windows told of a row
        self.status = status  # a failed read in words
        self.history = history  # the history now (made or dropped when the setting changes)
        self.debug = debug  # --debug-dir: each read's record
        self.pending: dict[int, PendingRead] = {}
        self._current: int | None = None  # the user's newest read: the only one the overlay shows
        self._block_id = 0  # clicked blocks of the whole screen count down: never a worker id
        self._painted_request: int | None = None
        self.pending_paint: PendingRead | None = None
        self.shown: PendingRead | None = None  # the read on screen: its edits, its crop for Anki
        self.last_latency: dict | None = None  # {"latency_ms", "ocr_ms", "overhead_ms"}
        w = worker
        w.finished.connect(self.on_finished)
        w.failed.connect(self.on_failed)
        w.superseded.connect(self.on_superseded)
        overlay.text_painted.connect(self._on_text_painted)
        overlay.edit_committed.connect(self.keep_edit)

    def is_current(self, request_id: int) -> bool:
        """Newest wins: the one decision whether a result is still the one the user waits for."""
        return request_id == self._current

    def user_read_pending(self) -> bool:
        return any(not p.watched for p in self.pending.values())

    def hover_may_read(self) -> bool:
        """A hover read may go to the worker: no other read of the user's (a box, a re-scan) is
        pending, whose crop it would push out of the worker's waiting slot."""
        return not any(not (p.watched or p.hover) for p in self.pending.values())

    # --- in --------------------------------------------------------------------------------------

    def submit(
        self,
        image: QImage,
        region: Region,
        released_at: float,
        source: str = "box",
        screen_image=None,
        *,
        done: Callable[[Any], bool] | None = None,
        failed: Callable[[str], None] | None = None,
    ) -> None:
        # Submit first: the model starts at once, and the GUI work below overlaps with it.
        submitted_at = time.perf_counter()
        request_id = self.worker.submit(image)
        pending = PendingRead(
            region,
            released_at,
            source=source,
            done=done,
            failed=failed,
            screen_image=screen_image,
            submitted_at=submitted_at,
        )
        self.pending[request_id] = pending
        if pending.watched or pending.hover:  # no "reading…" card over the game each time
            return
        self._current = request_id
        self.place_overlay(region)
        self.overlay.show_reading()

    def read_image(self, image: QImage, source: str) -> None:
        """An image from outside the screen (clipboard, folder): the overlay at the top right."""
        area = screen_area()
        anchor = (area.right() - 24, area.top() + 24, 1, 1)  # the card goes left of this point
        size = (0, 0, image.width(), image.height())
        self.submit(image, Region("", size, size, anchor), time.perf_counter(), source)

    def show_read(self, region: Region, result) -> None:
        """A text read already (a clicked block of the whole screen): shown as any read is."""
        self._block_id -= 1
        request_id = self._block_id
        now = time.perf_counter()
        self.pending[request_id] = PendingRead(region, now, source="click", submitted_at=now)
        self._current = request_id
        self.place_overlay(region)
        self.on_finished(request_id, result)

    def place_overlay(self, region: Region) -> None:
        self.windows.overlay_back()  # a new read is shown where it belongs
        box = QRect(*region.logical_rect)
        self.overlay.set_anchor(box, screen_area(box.center()), region.nearby)

    # --- out -------------------------------------------------------------------------------------

    def on_finished(self, request_id: int, result) -> None:
        arrived = time.perf_counter()
        pending = self.pending.pop(request_id, None)
        self._image_done(pending, self.is_current(request_id), superseded=True)
        if pending is not None and pending.done is not None:  # a watched or hover read
            if not pending.done(result):  # its asker keeps nothing of it (no new text)
                return
        elif pending is None or not self.is_current(request_id):
            log.debug("dropped the stale result of request %d", request_id)
            return
        pending.result, pending.result_at = result, arrived
        if pending.hover or (pending.watched and self.user_read_pending()):
            # The overlay is the user's read's now (a hover's text is in the popup): the text
            # goes to the other outputs.
            self.add_to_history(pending)
        else:
            self._show(request_id, pending)
        QTimer.singleShot(
            PAINT_WAIT_MS, self, lambda rid=request_id: self._finish(rid, time.perf_counter())
        )
        # a hover's text is the popup's: the clipboard stays the user's while they point around
        if self.settings.get("output/auto_copy") and result.text and not pending.hover:
            QGuiApplication.clipboard().setText(result.text)
        if result.text:
            self.text_read.emit(result.text, pending.source)

    def _show(self, request_id: int, pending: PendingRead) -> None:
        result, overlay = pending.result, self.overlay
        status = f"{result.ocr_ms / 1000:.2f} s · {result.variant} · {result.device}"
        self._painted_request = request_id
        self.pending_paint = pending
        if pending.watched:
            self.place_overlay(pending.region)
            overlay.show_result(result.text, status, activate=False)
            if overlay.frameGeometry().intersects(QRect(*pending.region.logical_rect)):
                overlay.hide()  # no room beside the region: never cover (and read) it
        else:
            overlay.show_result(result.text, status)
        self.shown = pending  # the overlay's text is this read's now (edits, Anki)

    def on_failed(self, request_id: int, message: str) -> None:
        pending = self.pending.pop(request_id, None)
        self._image_done(pending, False, message)
        if pending is not None and pending.failed is not None:  # a watched or hover read
            pending.failed(message)
            return
        if pending is None or not self.is_current(request_id):
            return
        log.warning("reading failed: %s", message)
        message = self.status.read_failure(message)
        if self.overlay.isVisible():
            self.overlay.show_error(message)
        else:
            self.notice.emit("Reading failed", message, True)

    def on_superseded(self, request_id: int) -> None:
        pending = self.pending.pop(request_id, None)
        self._image_done(pending, False, superseded=True)
        if pending is not None and pending.failed is not None:
            pending.failed("")  # pushed out: read again when due

    def _image_done(self, pending, ok: bool, message: str = "", superseded: bool = False) -> None:
        """An image a channel sent was read or not (the watched folder then sends its next)."""
        if pending is not None and pending.source in ("folder", "clipboard"):
            self.image_done.emit(pending.source, ok, message, superseded)

    def _on_text_painted(self, painted_at: float) -> None:
        if self._painted_request is not None:
            self._finish(self._painted_request, painted_at)

    def _finish(self, request_id: int, shown_at: float) -> None:
        """Latency bookkeeping once the text is on screen: log, and the --debug-dir record."""
        pending = self.pending_paint
        if pending is None or request_id != self._painted_request:
            return
        self.pending_paint = None
        self._painted_request = None
        result = pending.result
        latency_ms = (shown_at - pending.released_at) * 1000
        overhead_ms = latency_ms - result.ocr_ms
        self.last_latency = {
            "latency_ms": latency_ms,
            "ocr_ms": result.ocr_ms,
            "overhead_ms": overhead_ms,
        }
        log.info(
            "text shown %.0f ms after mouse release (model %.0f ms + app %.1f ms: %s)",
            latency_ms,
            result.ocr_ms,
            overhead_ms,
            latency_breakdown(pending, shown_at),
        )
        self.shown = pending
        self.add_to_history(pending)
        debug = self.debug
        if debug is not None:
            path = debug.save(
                result.image if result.image is not None else QImage(),
                pending.region.box_desktop_px,
                pending.region.screen_name,
                result.text,
                result.ocr_ms,
                latency_ms,
                screen_image=pending.screen_image,
            )
            log.debug("debug record %s", path)

    def add_to_history(self, pending: PendingRead) -> None:
        """After the text is on screen: the SQLite write and the thumbnail never delay it."""
        result, history = pending.result, self.history()
        if history is None or not result.text:
            return
        thumb = png_bytes(pil_to_qimage(result.image)) if result.image is not None else b""
        entry = history.add(  # queued: the history thread saves it (app/history.py)
            result.text if pending.edited is None else pending.edited,
            pending.region.screen_name,
            pending.region.box_desktop_px,
            thumb or None,
            source=pending.source,
            ocr_text=result.text,
        )
        pending.history_id = entry.id
        self.windows.history_added(entry)

    def keep_edit(self, text: str) -> None:
        """A correction committed in the overlay (see Overlay.edit_committed): the history row and
        the reading log line get it (the model's own text stays in `ocr_text`), and the text
        outputs are sent it again, as source "edit"."""
        pending, history = self.shown, self.history()
        if pending is None or pending.result is None:
            return
        pending.edited = text
        if history is not None and pending.history_id is not None:
            history.update_text(pending.history_id, text)
            self.windows.history_edited(pending.history_id, text)
        if text.strip():
            self.text_read.emit(text, "edit")
