"""Read the whole screen: the screen under the pointer frozen, every text block on it read in the
OCR worker (app/page/read.py), shown as boxes over it (app/ui/page_view.py): hover for the dictionary,
click for the overlay, which shows a block's text as it shows any read."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QRect

from app.capture.nearby import Nearby
from app.capture.region import Region

if TYPE_CHECKING:
    from app.engines.worker import OcrWorker
    from app.flows.capture import CaptureFlow
    from app.flows.dictionary_hook import DictionaryHook
    from app.flows.model_status import ModelStatus
    from app.flows.reads import Reads
    from app.ui.page_view import PageView

log = logging.getLogger(__name__)


class PageFlow:
    def __init__(
        self,
        worker: OcrWorker,
        capture: CaptureFlow,
        reads: Reads,
        status: ModelStatus,
        hook: DictionaryHook,
    ):
        self.worker = worker
        self.capture = capture  # the screen frozen as for a capture; a clicked block remembered
        self.reads = reads  # a clicked block's text shown as any read
        self.status = status  # a failed read in words
        self.hook = hook  # the popup dictionary over the blocks
        self.view: PageView | None = None  # while it shows
        self._request: int | None = None
        w = worker
        w.page_progress.connect(self._on_progress)
        w.page_finished.connect(self._on_finished)
        w.failed.connect(self._on_failed)

    def start(self) -> None:
        if self.view is not None:
            self.view.raise_()
            return
        if self.capture.busy():
            log.debug("a selection is open; whole-screen read ignored")
            return
        self.capture.freeze(self._open)

    def _open(self, captures) -> None:
        if not captures:
            return
        from PySide6.QtGui import QCursor

        from app.ui.page_view import PageView

        cursor = QCursor.pos()
        capture = next(
            (c for c in captures.values() if QRect(*c.screen.logical).contains(cursor)),
            next(iter(captures.values())),
        )
        view = self.view = PageView(capture)
        view.block_chosen.connect(lambda block, rect, c=capture: self._show_block(c, block, rect))
        view.closed.connect(self._on_closed)
        self.hook.hook(view)
        view.show_on_screen()
        self._request = self.worker.submit_page(capture.image)

    def _on_closed(self) -> None:
        self.view = None
        self._request = None

    def _on_progress(self, request_id: int, done: int, total: int) -> None:
        if self.view is not None and request_id == self._request:
            self.view.set_progress(done, total)

    def _on_finished(self, request_id: int, record: dict) -> None:
        if self.view is not None and request_id == self._request:
            self.view.set_record(record)

    def _on_failed(self, request_id: int, message: str) -> None:
        if self.view is not None and request_id == self._request:
            log.warning("reading the whole screen failed: %s", message)
            self.view.set_failed(self.status.page_failure(message))

    def _show_block(self, capture, block: dict, logical: QRect) -> None:
        """A block of the page clicked: the overlay shows its text as it shows any read (copy,
        edit, Anki, history), beside the block."""
        from app.engines.worker import OcrResult
        from app.platform.qt_images import qimage_to_pil

        x0, y0, x1, y1 = block["box"]
        box = (x0, y0, x1 - x0, y1 - y0)
        px, py = capture.screen.physical[:2]
        region = Region(
            capture.screen.name,
            box,
            (px + x0, py + y0, x1 - x0, y1 - y0),
            (logical.x(), logical.y(), logical.width(), logical.height()),
            Nearby(vertical=block.get("vertical")),  # the read opens in the block's direction
        )
        rec = self.worker.recognizer
        crop = capture.image.copy(QRect(*box))
        result = OcrResult(
            text=block["text"],
            token_ids=[],
            timings={},
            ocr_ms=float(block["ms"]),
            device=rec.device if rec is not None else "",
            variant=rec.variant if rec is not None else "",
            precision=rec.precision if rec is not None else "",
            image=qimage_to_pil(crop),
        )
        self.capture.remember(region)
        self.reads.show_read(region, result)
