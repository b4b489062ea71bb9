"""Images in from the clipboard: `ClipboardImages` reads an image a screenshot tool put on the
clipboard (the clipboard is never written here: only the app's auto-copy replaces it)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication, QImage

from app.qt_images import qimage_bgra
from app.reading.channels.image_decoder import ImageDecoder, open_image_bytes
from model.config import ImageCap

log = logging.getLogger(__name__)


def image_digest(image: QImage) -> str:
    return (
        hashlib.sha1(qimage_bgra(image).tobytes()).hexdigest() + f"{image.width()}x{image.height()}"
    )


# Encoded formats a screenshot tool offers, best first; the loader tells formats by their bytes.
CLIPBOARD_FORMATS = (
    "image/png",
    "image/bmp",
    "image/jpeg",
    "image/webp",
    "image/tiff",
    "image/gif",
)


class ClipboardImages(QObject):
    """Emits `image(QImage)` for each new image put on the clipboard (the same image once), and
    `failed(message)` for one that cannot be read. Encoded bytes (what other programs offer) go
    through model/images.py like every outside image: the header is checked here (a 49-megapixel
    PNG or a large RLE BMP is refused unread), the pixels are decoded on a worker thread.
    `image_cap()`: the cap of the model that reads them (`app.engines.image_cap`), asked per image;
    `failed`'s message says what is wrong, the app's title that it is the clipboard's image."""

    image = Signal(object)
    failed = Signal(str)

    def __init__(self, parent=None, image_cap: Callable[[], ImageCap] = ImageCap):
        super().__init__(parent)
        import model.images  # noqa: F401  (now, not on the first image: its import takes a while)

        self._image_cap = image_cap
        self._clipboard = QGuiApplication.clipboard()
        self._last = ""
        self._decoder = ImageDecoder(self)
        self._decoder.done.connect(self._on_decoded)
        self._clipboard.dataChanged.connect(self._on_changed)

    def close(self) -> None:
        try:
            self._clipboard.dataChanged.disconnect(self._on_changed)
        except (RuntimeError, TypeError):
            pass

    def _on_changed(self) -> None:
        mime = self._clipboard.mimeData()
        if mime is None:
            return
        fmt = next((f for f in CLIPBOARD_FORMATS if mime.hasFormat(f)), "")
        if not fmt and not mime.hasImage():
            return
        data = bytes(mime.data(fmt).data()) if fmt else b""
        if data:
            digest = hashlib.sha1(data).hexdigest()
            if digest == self._last:
                return
            self._last = digest
            from model.images import MAX_FILE_BYTES, ImageError, probe

            if len(data) > MAX_FILE_BYTES:  # the limit a file has
                self._refuse(
                    f"the clipboard image is {len(data) / 2**20:,.0f} MB; images larger than "
                    f"{MAX_FILE_BYTES / 2**20:,.0f} MB are not read"
                )
                return
            cap = self._image_cap()
            try:
                probe(data, cap)  # the header only: nothing is decoded on the GUI thread
            except ImageError as exc:
                self._refuse(str(exc))
                return
            self._decoder.decode(digest, lambda: open_image_bytes(data, cap))
            return
        # An image another part of this process put there: already pixels, nothing to decode.
        image = mime.imageData()
        if not isinstance(image, QImage) or image.isNull():
            return
        digest = image_digest(image)
        if digest == self._last:
            return
        self._last = digest
        from model.images import ImageError, check_pixels

        try:
            check_pixels(image.width(), image.height(), self._image_cap(), "the clipboard image")
        except ImageError as exc:
            self._refuse(str(exc))
            return
        self._on_decoded(digest, image, "")

    def _refuse(self, message: str) -> None:
        log.warning("clipboard: %s", message)
        self.failed.emit(message)

    def _on_decoded(self, _digest, image, error: str) -> None:
        if image is None:
            self._refuse(error)
            return
        log.info("clipboard image %dx%d", image.width(), image.height())
        self.image.emit(image)
