"""Images in from the clipboard: `ClipboardImages` reads an image a screenshot tool put on the
clipboard (the clipboard is never written here: only the app's auto-copy replaces it)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QGuiApplication, QImage

from app.platform.qt_images import qimage_bgra
from app.reading.channels.image_decoder import (
    CapReader,
    ImageDecoder,
    largest_cap,
    open_image_bytes,
)
from model.config import ImageCap

log = logging.getLogger(__name__)


def image_digest(image: QImage) -> str:
    return (
        hashlib.sha1(qimage_bgra(image).tobytes()).hexdigest() + f"{image.width()}x{image.height()}"
    )


def _within(image: QImage, cap: ImageCap) -> QImage:
    """Pixels already decoded, held to the model's cap as a file's are (ValueError: why not)."""
    from model.images import check_pixels

    check_pixels(image.width(), image.height(), cap, "the clipboard image")
    return image


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
    through model/images.py like every outside image, on a worker thread: the header is checked
    against the model's cap before any pixel is decoded (a 49-megapixel PNG or a large RLE BMP is
    refused unread). `image_cap()`: the model that reads each image, settled when it comes, as the
    `CapReader` the worker asks its cap; `failed`'s message says what is wrong, the app's title that
    it is the clipboard's image."""

    image = Signal(object)
    failed = Signal(str)

    def __init__(self, parent=None, image_cap: Callable[[], CapReader] = largest_cap):
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
            from model.images import MAX_FILE_BYTES

            if len(data) > MAX_FILE_BYTES:  # the limit a file has
                self._refuse(
                    f"the clipboard image is {len(data) / 2**20:,.0f} MB; images larger than "
                    f"{MAX_FILE_BYTES / 2**20:,.0f} MB are not read"
                )
                return
            cap = self._image_cap()  # which model: its cap is read on the decoder's thread
            self._decoder.decode(digest, lambda: open_image_bytes(data, cap()))
            return
        # An image another part of this process put there: already pixels, nothing to decode.
        image = mime.imageData()
        if not isinstance(image, QImage) or image.isNull():
            return
        digest = image_digest(image)
        if digest == self._last:
            return
        self._last = digest
        cap = self._image_cap()
        self._decoder.decode(digest, lambda: _within(image, cap()))

    def _refuse(self, message: str) -> None:
        log.warning("clipboard: %s", message)
        self.failed.emit(message)

    def _on_decoded(self, _digest, image, error: str) -> None:
        if image is None:
            self._refuse(error)
            return
        log.info("clipboard image %dx%d", image.width(), image.height())
        self.image.emit(image)
